# Independent computation of the examples in docs/rule-phrases.md: each phrase is restated by hand
# as a python-dateutil rrule (or plain arithmetic for intervals), expanded in local time and mapped to
# instants with zoneinfo under the default DST policy (gap: the transition instant; overlap: the first).
# Prints one markdown example line per phrase, in the document's format.
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_zones  # noqa: E402
from dateutil.rrule import rrule, rruleset, DAILY, WEEKLY, MONTHLY, YEARLY, MO, TU, WE, TH, FR, SA, SU

ZONE = "Europe/Berlin"
Z = ZoneInfo(ZONE)
NOW = datetime(2026, 11, 22, 0, 0, 0, tzinfo=Z)
NOW_T = int(NOW.timestamp())
SHOWN = 3


def local(t, zone=Z):
    return oracle_zones.local(t, zone)


def instant(wall, zone=Z):
    return oracle_zones.instant(wall, zone)


def iso(t):
    return datetime.fromtimestamp(t, Z).isoformat()


def line(phrase, instants, finite):
    """instants: every occurrence strictly after NOW (a prefix when not finite)."""
    instants = [t for t in instants if t > NOW_T]
    if not finite:
        values = ", ".join(iso(t) for t in instants[:SHOWN]) + ", …"
    elif len(instants) <= SHOWN + 1:
        values = ", ".join(iso(t) for t in instants)
    else:
        values = ", ".join(iso(t) for t in instants[:SHOWN]) + ", …, %s (%d in all)" % (iso(instants[-1]), len(instants))
    print("- `%s` → %s" % (phrase, values))


def walls(rule, limit=400, zone=Z):
    out = []
    for wall in rule:
        out.append(instant(wall, zone))
        if len(out) >= limit:
            break
    return out


def d(*a):
    return datetime(*a)


def random_time(phrase, low, high, day):
    """The documented draw: FNV-1a of the lower-cased phrase as seed, SplitMix64 finaliser."""
    M = (1 << 64) - 1
    h = 0xCBF29CE484222325
    for byte in phrase.lower().encode():
        h = ((h ^ byte) * 0x100000001B3) & M
    days = (day - datetime(1970, 1, 1)).days
    z = (h + (days & M) * 0x9E3779B97F4A7C15) & M
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    z = z ^ (z >> 31)
    return low + z % (high - low)


today = d(2026, 11, 22)
line("every month on the first friday at 20:15", walls(rrule(MONTHLY, byweekday=FR(1), dtstart=d(2026, 11, 1, 20, 15))), False)
line("every day at 9:00 for 50 days", walls(rrule(DAILY, count=50, dtstart=d(2026, 11, 22, 9))), True)
line("every month on the last day at 23:50", walls(rrule(MONTHLY, bymonthday=-1, dtstart=d(2026, 11, 1, 23, 50))), False)
line("every week on the weekend start day at 9:00", walls(rrule(WEEKLY, byweekday=SA, dtstart=d(2026, 11, 16, 9))), False)
line("tomorrow at 20:15", [instant(d(2026, 11, 23, 20, 15))], True)
line("every 2 hours", [NOW_T + 7200 * k for k in range(1, 10)], False)
line("every 2 seconds", [NOW_T + 2 * k for k in range(1, 10)], False)
line("in 10 minutes", [NOW_T + 600], True)
phrase = "every day at a random time between 15:00 and 19:00"
line(phrase, [instant(today + timedelta(days=k, seconds=random_time(phrase, 15 * 3600, 19 * 3600, today + timedelta(days=k)))) for k in range(5)], False)
line("today at 18:30", [instant(d(2026, 11, 22, 18, 30))], True)
line("on 2026-12-01 at 9:00", [instant(d(2026, 12, 1, 9))], True)
line("every monday, wednesday and friday at 8:15am", walls(rrule(WEEKLY, byweekday=(MO, WE, FR), dtstart=d(2026, 11, 16, 8, 15))), False)
line("every weekday at 9:00", walls(rrule(WEEKLY, byweekday=(MO, TU, WE, TH, FR), dtstart=d(2026, 11, 16, 9))), False)
line("every year on the last day at 23:59", walls(rrule(YEARLY, bymonth=12, bymonthday=31, dtstart=d(2026, 1, 1, 23, 59))), False)
line("every 3 days at 7:30", walls(rrule(DAILY, interval=3, dtstart=d(2026, 11, 22, 7, 30))), False)
line("every 2 weeks on tuesday at 7pm", walls(rrule(WEEKLY, interval=2, byweekday=TU, wkst=MO, dtstart=d(2026, 11, 16, 19))), False)
line("every 2 months on the 15th at 9:00", walls(rrule(MONTHLY, interval=2, bymonthday=15, dtstart=d(2026, 11, 1, 9))), False)
line("every month on the third friday at noon until 2027-02-28",
     walls(rrule(MONTHLY, byweekday=FR(3), dtstart=d(2026, 11, 1, 12), until=d(2027, 2, 28, 23, 59, 59))), True)
line("every month on the last friday at 17:00 for 3 months",
     walls(rrule(MONTHLY, byweekday=FR(-1), dtstart=d(2026, 11, 1, 17), until=d(2027, 1, 31, 23, 59, 59))), True)
line("every sunday at 8pm for 2 weeks", walls(rrule(WEEKLY, byweekday=SU, dtstart=d(2026, 11, 16, 20), until=d(2026, 11, 29, 23, 59, 59))), True)
line("every year on december 24 at 18:00", walls(rrule(YEARLY, bymonth=12, bymonthday=24, dtstart=d(2026, 1, 1, 18))), False)
line("every year on the first friday of march at 9:00", walls(rrule(YEARLY, bymonth=3, byweekday=FR(1), dtstart=d(2026, 1, 1, 9))), False)
line("every year on february 29 at 12:00", walls(rrule(YEARLY, bymonth=2, bymonthday=29, dtstart=d(2026, 1, 1, 12))), False)
line("every day at 2:30 starting 2027-03-27", walls(rrule(DAILY, dtstart=d(2027, 3, 27, 2, 30))), False)
ny = ZoneInfo("America/New_York")
line("every day at 9:00 in America/New_York", [instant(w, ny) for w in rrule(DAILY, count=5, dtstart=d(2026, 11, 22, 9))], False)
line("every day at 8:15am starting next week", walls(rrule(DAILY, dtstart=d(2026, 11, 23, 8, 15))), False)
line("every other day at 6:00 for 1 week", walls(rrule(DAILY, interval=2, count=4, dtstart=d(2026, 11, 22, 6))), True)
line("every 15 minutes for 1 hour", [NOW_T + 900 * k for k in range(1, 5)], True)
line("in 2 days", [instant(d(2026, 11, 24))], True)
line("every month on the 31st at 10:00", walls(rrule(MONTHLY, bymonthday=31, dtstart=d(2026, 11, 1, 10))), False)
line("every month on the first day and the 15th at 9:00", walls(rrule(MONTHLY, bymonthday=(1, 15), dtstart=d(2026, 11, 1, 9))), False)
line("every week on the first day at 9:00", walls(rrule(WEEKLY, byweekday=MO, dtstart=d(2026, 11, 16, 9))), False)
line("every 2 hours until 2026-11-22", [NOW_T + 7200 * k for k in range(1, 12)], True)
line("tomorrow at 8 pm", [instant(d(2026, 11, 23, 20))], True)
line("every day at 12am for 3 days", walls(rrule(DAILY, count=3, dtstart=d(2026, 11, 22, 0))), True)
line("daily at 9:00", walls(rrule(DAILY, dtstart=d(2026, 11, 22, 9))), False)
line("every morning", walls(rrule(DAILY, dtstart=d(2026, 11, 22, 9))), False)
line("every friday evening", walls(rrule(WEEKLY, byweekday=FR, dtstart=d(2026, 11, 16, 18))), False)
line("every workday at 8:30", walls(rrule(WEEKLY, byweekday=(MO, TU, WE, TH, FR), dtstart=d(2026, 11, 16, 8, 30))), False)
line("every weekday", walls(rrule(WEEKLY, byweekday=(MO, TU, WE, TH, FR), dtstart=d(2026, 11, 16, 9))), False)
line("weekly", walls(rrule(WEEKLY, byweekday=MO, dtstart=d(2026, 11, 16, 9))), False)
line("monthly", walls(rrule(MONTHLY, bymonthday=1, dtstart=d(2026, 11, 1, 9))), False)
line("yearly", walls(rrule(YEARLY, bymonth=1, bymonthday=1, dtstart=d(2026, 1, 1, 9))), False)
line("hourly", [NOW_T + 3600 * k for k in range(1, 10)], False)
line("every mon, wed, fri", walls(rrule(WEEKLY, byweekday=(MO, WE, FR), dtstart=d(2026, 11, 16, 9))), False)
line("every other friday at 16:00", walls(rrule(WEEKLY, interval=2, byweekday=FR, dtstart=d(2026, 11, 16, 16))), False)
line("every 3rd friday at 17:00", walls(rrule(MONTHLY, byweekday=FR(3), dtstart=d(2026, 11, 1, 17))), False)
line("every last friday of the month at 17:00", walls(rrule(MONTHLY, byweekday=FR(-1), dtstart=d(2026, 11, 1, 17))), False)
line("every first monday of the month", walls(rrule(MONTHLY, byweekday=MO(1), dtstart=d(2026, 11, 1, 9))), False)
line("every 2nd and 4th tuesday", walls(rrule(MONTHLY, byweekday=(TU(2), TU(4)), dtstart=d(2026, 11, 1, 9))), False)
line("every 27th at 9:00", walls(rrule(MONTHLY, bymonthday=27, dtstart=d(2026, 11, 1, 9))), False)
line("every 1st and 15th", walls(rrule(MONTHLY, bymonthday=(1, 15), dtstart=d(2026, 11, 1, 9))), False)
line("every last day", walls(rrule(MONTHLY, bymonthday=-1, dtstart=d(2026, 11, 1, 9))), False)
line("every jan 27th", walls(rrule(YEARLY, bymonth=1, bymonthday=27, dtstart=d(2026, 1, 1, 9))), False)
line("every 24 december at 18:00", walls(rrule(YEARLY, bymonth=12, bymonthday=24, dtstart=d(2026, 1, 1, 18))), False)
line("every 4th thursday of november", walls(rrule(YEARLY, bymonth=11, byweekday=TH(4), dtstart=d(2026, 1, 1, 9))), False)
line("every weekday at 9:00 in America/New_York", [instant(w, ny) for w in rrule(WEEKLY, byweekday=(MO, TU, WE, TH, FR), count=8, dtstart=d(2026, 11, 16, 9))], False)
line("tomorrow evening", [instant(d(2026, 11, 23, 18))], True)

# Phrasings as people type them.
WD = (MO, TU, WE, TH, FR)
H = dict(byminute=0, bysecond=0)
line("every monday at 9", walls(rrule(WEEKLY, byweekday=MO, dtstart=d(2026, 11, 16, 9))), False)
line("every evening at 7", walls(rrule(DAILY, dtstart=d(2026, 11, 22, 19))), False)
line("every day at 7 in the morning", walls(rrule(DAILY, dtstart=d(2026, 11, 22, 7))), False)
line("every day at 9am and 5pm", walls(rrule(DAILY, byhour=(9, 17), **H, dtstart=d(2026, 11, 22, 9))), False)
line("twice a day at 9 and 21", walls(rrule(DAILY, byhour=(9, 21), **H, dtstart=d(2026, 11, 22, 9))), False)
both = rruleset()
both.rrule(rrule(DAILY, byhour=9, byminute=15, bysecond=0, dtstart=d(2026, 11, 22, 9, 15)))
both.rrule(rrule(DAILY, byhour=17, byminute=40, bysecond=0, dtstart=d(2026, 11, 22, 9, 15)))
line("every day at 9:15 and 17:40", walls(both), False)
line("at 8am every day", walls(rrule(DAILY, dtstart=d(2026, 11, 22, 8))), False)
line("weekdays at 7:15", walls(rrule(WEEKLY, byweekday=WD, dtstart=d(2026, 11, 16, 7, 15))), False)
line("the first monday of every month", walls(rrule(MONTHLY, byweekday=MO(1), dtstart=d(2026, 11, 1, 9))), False)
line("on the 1st of every month at 9", walls(rrule(MONTHLY, bymonthday=1, dtstart=d(2026, 11, 1, 9))), False)
line("biweekly on thursday at 15:00", walls(rrule(WEEKLY, interval=2, byweekday=TH, dtstart=d(2026, 11, 16, 15))), False)
line("every day until november 28", walls(rrule(DAILY, until=d(2026, 11, 28, 23, 59, 59), dtstart=d(2026, 11, 22, 9))), True)
line("every monday starting dec 7", walls(rrule(WEEKLY, byweekday=MO, dtstart=d(2026, 12, 7, 9))), False)
line("every 3 hrs", [NOW_T + 10800 * k for k in range(1, 10)], False)
line("every half hour", [NOW_T + 1800 * k for k in range(1, 10)], False)
line("every quarter on the 1st", walls(rrule(MONTHLY, interval=3, bymonthday=1, dtstart=d(2026, 11, 1, 9))), False)
line("every 2nd day", walls(rrule(DAILY, interval=2, dtstart=d(2026, 11, 22, 9))), False)
line("every mon-fri at 7:00", walls(rrule(WEEKLY, byweekday=WD, dtstart=d(2026, 11, 16, 7))), False)
line("every monday to friday at 7:30", walls(rrule(WEEKLY, byweekday=WD, dtstart=d(2026, 11, 16, 7, 30))), False)
line("every monday wednesday friday at 7am", walls(rrule(WEEKLY, byweekday=(MO, WE, FR), dtstart=d(2026, 11, 16, 7))), False)
line("every weekday except friday at 8", walls(rrule(WEEKLY, byweekday=(MO, TU, WE, TH), dtstart=d(2026, 11, 16, 8))), False)
line("every hour from 9am to 5pm", walls(rrule(DAILY, byhour=range(9, 18), **H, dtstart=d(2026, 11, 22, 9))), False)
line("every last weekday of the month", walls(rrule(MONTHLY, byweekday=WD, bysetpos=-1, dtstart=d(2026, 11, 1, 9))), False)
line("every first weekday of the month", walls(rrule(MONTHLY, byweekday=WD, bysetpos=1, dtstart=d(2026, 11, 1, 9))), False)
line("every 3rd weekday", walls(rrule(MONTHLY, byweekday=WD, bysetpos=3, dtstart=d(2026, 11, 1, 9))), False)
line("every month on the second to last day", walls(rrule(MONTHLY, bymonthday=-2, dtstart=d(2026, 11, 1, 9))), False)
