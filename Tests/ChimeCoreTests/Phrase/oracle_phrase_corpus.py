# An independent oracle for the phrase corpus: phrasings drawn from the documented recurring-date
# syntax of reminder and to-do apps (Todoist's "recurring due dates", TickTick's smart date parsing,
# Google Calendar quick add, Apple Reminders' Siri requests, Microsoft To Do's repeat options) and of
# Remind, each section naming its sources, each phrasing restated by hand as a
# python-dateutil rrule (or plain arithmetic for intervals), expanded in local time and mapped to
# instants with zoneinfo under the default DST policy (gap: the end of the gap; overlap: the first).
#
# The evaluation instant is local midnight of 2027-03-10 (a Wednesday) in the system zone of each
# line; the week containing it starts on Monday 2027-03-08. A phrase without a time fires at the
# documented default 09:00; morning, afternoon, evening and night are 09:00, 14:00, 18:00 and 21:00.
#
# Output, one line per phrase: <phrase>|<system zone>|<epoch> <epoch> … (the first SHOWN occurrences
# strictly after the evaluation instant, fewer when the rule ends).
import os
import sys
from datetime import datetime
from zoneinfo import ZoneInfo
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_zones  # noqa: E402
from dateutil.rrule import rrule, rruleset, DAILY, WEEKLY, MONTHLY, YEARLY, MO, TU, WE, TH, FR, SA, SU

SHOWN = 12
NY, BER, KOL, AKL, UTC = "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Pacific/Auckland", "UTC"
WEEKDAYS = (MO, TU, WE, TH, FR)


def instant(wall, zone):
    return oracle_zones.instant(wall, ZoneInfo(zone))


def now(zone):
    return instant(datetime(2027, 3, 10), zone)


def d(*a):
    return datetime(*a)


TODAY = (2027, 3, 10)
MONDAY = (2027, 3, 8)
MONTH = (2027, 3, 1)
YEAR = (2027, 1, 1)


def show(phrase, system, rule, zone=None):
    """rule: a dateutil rrule on the wall clock of `zone` (default: the system zone)."""
    zone = zone or system
    after = now(system)
    out = []
    for wall in rule:
        t = instant(wall, zone)
        if t > after:
            out.append(t)
        if len(out) >= SHOWN:
            break
    print("%s|%s|%s" % (phrase, system, " ".join(str(t) for t in out)))


def several(*rules):
    """One set of several rules (times a day whose minutes differ)."""
    rs = rruleset()
    for r in rules:
        rs.rrule(r)
    return rs


def interval(phrase, system, seconds):
    after = now(system)
    print("%s|%s|%s" % (phrase, system, " ".join(str(after + seconds * k) for k in range(1, SHOWN + 1))))


# --- Shorthand words (Todoist: "daily", "weekly", "monthly", "yearly", "hourly"; "every day") ---------
show("daily", BER, rrule(DAILY, dtstart=d(*TODAY, 9)))
show("every day", NY, rrule(DAILY, dtstart=d(*TODAY, 9)))
show("everyday", KOL, rrule(DAILY, dtstart=d(*TODAY, 9)))
show("daily at 9:00", AKL, rrule(DAILY, dtstart=d(*TODAY, 9)))
show("daily at 7pm", UTC, rrule(DAILY, dtstart=d(*TODAY, 19)))
show("every day at 9am", BER, rrule(DAILY, dtstart=d(*TODAY, 9)))
# weekly, monthly and yearly fall on the first day of the week (Monday), month and year.
show("weekly", NY, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every week", BER, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("weekly on friday", KOL, rrule(WEEKLY, byweekday=FR, dtstart=d(*MONDAY, 9)))
show("every week on monday at 10:00", AKL, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 10)))
show("weekly on monday and friday at 7:30", UTC, rrule(WEEKLY, byweekday=(MO, FR), dtstart=d(*MONDAY, 7, 30)))
show("monthly", BER, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every month", NY, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 9)))
show("monthly on the 15th", KOL, rrule(MONTHLY, bymonthday=15, dtstart=d(*MONTH, 9)))
show("monthly on the last day at 18:00", AKL, rrule(MONTHLY, bymonthday=-1, dtstart=d(*MONTH, 18)))
show("yearly", BER, rrule(YEARLY, bymonth=1, bymonthday=1, dtstart=d(*YEAR, 9)))
show("every year", NY, rrule(YEARLY, bymonth=1, bymonthday=1, dtstart=d(*YEAR, 9)))
show("annually", UTC, rrule(YEARLY, bymonth=1, bymonthday=1, dtstart=d(*YEAR, 9)))
show("yearly on december 24", KOL, rrule(YEARLY, bymonth=12, bymonthday=24, dtstart=d(*YEAR, 9)))
interval("hourly", BER, 3600)
interval("every hour", NY, 3600)
interval("every 2 hours", KOL, 7200)
interval("every 30 minutes", AKL, 1800)
interval("every 90 minutes", UTC, 5400)

# --- Times of day by name (Todoist: "every morning", "every evening", "every weekday morning") ----------
show("every morning", BER, rrule(DAILY, dtstart=d(*TODAY, 9)))
show("every afternoon", NY, rrule(DAILY, dtstart=d(*TODAY, 14)))
show("every evening", KOL, rrule(DAILY, dtstart=d(*TODAY, 18)))
show("every night", AKL, rrule(DAILY, dtstart=d(*TODAY, 21)))
show("every morning at 7:00", UTC, rrule(DAILY, dtstart=d(*TODAY, 7)))
show("every monday morning", BER, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every friday evening", NY, rrule(WEEKLY, byweekday=FR, dtstart=d(*MONDAY, 18)))
show("every weekday morning", KOL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("every sunday night", AKL, rrule(WEEKLY, byweekday=SU, dtstart=d(*MONDAY, 21)))
show("every day in the evening", UTC, rrule(DAILY, dtstart=d(*TODAY, 18)))
show("every saturday at night", BER, rrule(WEEKLY, byweekday=SA, dtstart=d(*MONDAY, 21)))
show("every 15th in the afternoon", NY, rrule(MONTHLY, bymonthday=15, dtstart=d(*MONTH, 14)))

# --- Weekdays, workdays, weekends (Todoist: "every weekday", "every workday"; Remind: REM Mon Tue …) ---
show("every weekday", BER, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("every workday", NY, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("every workday at 8:30", KOL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 8, 30)))
show("every weekday at 9:00", AKL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("every weekend", UTC, rrule(WEEKLY, byweekday=(SA, SU), dtstart=d(*MONDAY, 9)))
show("every weekend day", NY, rrule(WEEKLY, byweekday=(SA, SU), dtstart=d(*MONDAY, 9)))
show("every other weekday", KOL, rrule(WEEKLY, interval=2, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("every weekend at 10:00", BER, rrule(WEEKLY, byweekday=(SA, SU), dtstart=d(*MONDAY, 10)))

# --- Weekdays and lists (Todoist: "every monday", "every mon, fri", "every tue, thu at 8pm") ---------------
show("every monday", NY, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every mon", KOL, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every fri at 17:00", AKL, rrule(WEEKLY, byweekday=FR, dtstart=d(*MONDAY, 17)))
show("every mon, wed, fri", UTC, rrule(WEEKLY, byweekday=(MO, WE, FR), dtstart=d(*MONDAY, 9)))
show("every mon, wed, fri at 8:15am", BER, rrule(WEEKLY, byweekday=(MO, WE, FR), dtstart=d(*MONDAY, 8, 15)))
show("every monday and thursday at 19:00", NY, rrule(WEEKLY, byweekday=(MO, TH), dtstart=d(*MONDAY, 19)))
show("every tue, thu at 8pm", KOL, rrule(WEEKLY, byweekday=(TU, TH), dtstart=d(*MONDAY, 20)))
show("every sat, sun at 10:00", AKL, rrule(WEEKLY, byweekday=(SA, SU), dtstart=d(*MONDAY, 10)))
show("every mon, tues, wed, and fri", KOL, rrule(WEEKLY, byweekday=(MO, TU, WE, FR), dtstart=d(*MONDAY, 9)))
show("every day 19:30", AKL, rrule(DAILY, dtstart=d(*TODAY, 19, 30)))
show("every sat and sun", UTC, rrule(WEEKLY, byweekday=(SA, SU), dtstart=d(*MONDAY, 9)))
show("every tuesday at noon", BER, rrule(WEEKLY, byweekday=TU, dtstart=d(*MONDAY, 12)))
show("every wednesday at midnight", NY, rrule(WEEKLY, byweekday=WE, dtstart=d(*MONDAY, 0)))

# --- Every other / every N (Todoist: "every other day", "every 3 days", "every other friday") ----------
show("every other day", BER, rrule(DAILY, interval=2, dtstart=d(*TODAY, 9)))
show("every other day at 7:00", NY, rrule(DAILY, interval=2, dtstart=d(*TODAY, 7)))
show("every 3 days", KOL, rrule(DAILY, interval=3, dtstart=d(*TODAY, 9)))
show("every 3 days at 17:00", AKL, rrule(DAILY, interval=3, dtstart=d(*TODAY, 17)))
show("every 14 days 7am", BER, rrule(DAILY, interval=14, dtstart=d(*TODAY, 7)))
show("every other tues 7am", NY, rrule(WEEKLY, interval=2, byweekday=TU, dtstart=d(*MONDAY, 7)))
show("every other week", UTC, rrule(WEEKLY, interval=2, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every other week on tuesday", BER, rrule(WEEKLY, interval=2, byweekday=TU, dtstart=d(*MONDAY, 9)))
show("every 2 weeks on friday at 16:00", NY, rrule(WEEKLY, interval=2, byweekday=FR, dtstart=d(*MONDAY, 16)))
show("every other friday", KOL, rrule(WEEKLY, interval=2, byweekday=FR, dtstart=d(*MONDAY, 9)))
show("every other monday at 9:00", AKL, rrule(WEEKLY, interval=2, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every other month", UTC, rrule(MONTHLY, interval=2, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every 3 months", BER, rrule(MONTHLY, interval=3, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every 3 months on the 14th", NY, rrule(MONTHLY, interval=3, bymonthday=14, dtstart=d(*MONTH, 9)))
show("every 6 months on the 1st at 8:00", KOL, rrule(MONTHLY, interval=6, bymonthday=1, dtstart=d(*MONTH, 8)))
show("every other year", AKL, rrule(YEARLY, interval=2, bymonth=1, bymonthday=1, dtstart=d(*YEAR, 9)))
show("every 2 years on july 4", UTC, rrule(YEARLY, interval=2, bymonth=7, bymonthday=4, dtstart=d(*YEAR, 9)))
show("every other 15th", BER, rrule(MONTHLY, interval=2, bymonthday=15, dtstart=d(*MONTH, 9)))

# --- Ordinal weekdays of the month (Todoist: "every 3rd friday", "every last friday";
#     Remind: REM Fri 1 = the first friday) -------------------------------------------------------------
show("every 3rd friday", NY, rrule(MONTHLY, byweekday=FR(3), dtstart=d(*MONTH, 9)))
show("every 3rd friday at 17:00", KOL, rrule(MONTHLY, byweekday=FR(3), dtstart=d(*MONTH, 17)))
show("every last friday", AKL, rrule(MONTHLY, byweekday=FR(-1), dtstart=d(*MONTH, 9)))
show("every last friday of the month at 17:00", UTC, rrule(MONTHLY, byweekday=FR(-1), dtstart=d(*MONTH, 17)))
show("every first monday of the month", BER, rrule(MONTHLY, byweekday=MO(1), dtstart=d(*MONTH, 9)))
show("every first monday", NY, rrule(MONTHLY, byweekday=MO(1), dtstart=d(*MONTH, 9)))
show("every second tuesday", KOL, rrule(MONTHLY, byweekday=TU(2), dtstart=d(*MONTH, 9)))
show("every 2nd tuesday", AKL, rrule(MONTHLY, byweekday=TU(2), dtstart=d(*MONTH, 9)))
show("every fourth thursday", UTC, rrule(MONTHLY, byweekday=TH(4), dtstart=d(*MONTH, 9)))
show("every fifth friday", BER, rrule(MONTHLY, byweekday=FR(5), dtstart=d(*MONTH, 9)))
show("every 2nd and 4th tuesday", NY, rrule(MONTHLY, byweekday=(TU(2), TU(4)), dtstart=d(*MONTH, 9)))
show("every first and third monday at 18:00", KOL, rrule(MONTHLY, byweekday=(MO(1), MO(3)), dtstart=d(*MONTH, 18)))
show("every last sunday of the month", AKL, rrule(MONTHLY, byweekday=SU(-1), dtstart=d(*MONTH, 9)))
show("every first friday of every month", UTC, rrule(MONTHLY, byweekday=FR(1), dtstart=d(*MONTH, 9)))
show("every 4th thursday of november", BER, rrule(YEARLY, bymonth=11, byweekday=TH(4), dtstart=d(*YEAR, 9)))
show("every last monday of may", NY, rrule(YEARLY, bymonth=5, byweekday=MO(-1), dtstart=d(*YEAR, 9)))
show("every 2 months on the first monday", KOL, rrule(MONTHLY, interval=2, byweekday=MO(1), dtstart=d(*MONTH, 9)))
show("every other last friday", AKL, rrule(MONTHLY, interval=2, byweekday=FR(-1), dtstart=d(*MONTH, 9)))

# --- Days of the month (Todoist: "every 27th", "every 1st and 15th", "every last day";
#     Remind: REM 1 AT 12:00) ----------------------------------------------------------------------------
show("every 27th", UTC, rrule(MONTHLY, bymonthday=27, dtstart=d(*MONTH, 9)))
show("every 27th at 9:00", BER, rrule(MONTHLY, bymonthday=27, dtstart=d(*MONTH, 9)))
show("every 1st", NY, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every 1st at 12:00", KOL, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 12)))
show("every 1st and 15th", AKL, rrule(MONTHLY, bymonthday=(1, 15), dtstart=d(*MONTH, 9)))
show("every 1st, 15th at 12:00", UTC, rrule(MONTHLY, bymonthday=(1, 15), dtstart=d(*MONTH, 12)))
show("every 10th, 20th and 30th", BER, rrule(MONTHLY, bymonthday=(10, 20, 30), dtstart=d(*MONTH, 9)))
show("every 15th of the month", NY, rrule(MONTHLY, bymonthday=15, dtstart=d(*MONTH, 9)))
show("every 15th of every month", KOL, rrule(MONTHLY, bymonthday=15, dtstart=d(*MONTH, 9)))
show("every last day", AKL, rrule(MONTHLY, bymonthday=-1, dtstart=d(*MONTH, 9)))
show("every last day of the month at 18:00", UTC, rrule(MONTHLY, bymonthday=-1, dtstart=d(*MONTH, 18)))
show("every first day of the month", BER, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every 1st and last day", NY, rrule(MONTHLY, bymonthday=(1, -1), dtstart=d(*MONTH, 9)))
show("every 31st", KOL, rrule(MONTHLY, bymonthday=31, dtstart=d(*MONTH, 9)))
show("every 30th at 10:00", AKL, rrule(MONTHLY, bymonthday=30, dtstart=d(*MONTH, 10)))
show("every 27", BER, rrule(MONTHLY, bymonthday=27, dtstart=d(*MONTH, 9)))
show("every 1 and 15 at 12:00", NY, rrule(MONTHLY, bymonthday=(1, 15), dtstart=d(*MONTH, 12)))
show("every 29th", UTC, rrule(MONTHLY, bymonthday=29, dtstart=d(*MONTH, 9)))

# --- Dates of the year (Todoist: "every jan 27th", "every 14 jan"; Remind: REM Dec 25) -------------------
show("every jan 27th", BER, rrule(YEARLY, bymonth=1, bymonthday=27, dtstart=d(*YEAR, 9)))
show("every jan 27th at 10:00", NY, rrule(YEARLY, bymonth=1, bymonthday=27, dtstart=d(*YEAR, 10)))
show("every january 27", KOL, rrule(YEARLY, bymonth=1, bymonthday=27, dtstart=d(*YEAR, 9)))
show("every 24 december", AKL, rrule(YEARLY, bymonth=12, bymonthday=24, dtstart=d(*YEAR, 9)))
show("every 24 dec at 18:00", UTC, rrule(YEARLY, bymonth=12, bymonthday=24, dtstart=d(*YEAR, 18)))
show("every 24th december", BER, rrule(YEARLY, bymonth=12, bymonthday=24, dtstart=d(*YEAR, 9)))
show("every 27th of january", NY, rrule(YEARLY, bymonth=1, bymonthday=27, dtstart=d(*YEAR, 9)))
show("every 14 feb", KOL, rrule(YEARLY, bymonth=2, bymonthday=14, dtstart=d(*YEAR, 9)))
show("every feb 29", AKL, rrule(YEARLY, bymonth=2, bymonthday=29, dtstart=d(*YEAR, 9)))
show("every march 1st", UTC, rrule(YEARLY, bymonth=3, bymonthday=1, dtstart=d(*YEAR, 9)))
show("every dec 25 at 8:00", BER, rrule(YEARLY, bymonth=12, bymonthday=25, dtstart=d(*YEAR, 8)))
show("every last day of the year", NY, rrule(YEARLY, bymonth=12, bymonthday=31, dtstart=d(*YEAR, 9)))
show("every first day of the year", KOL, rrule(YEARLY, bymonth=1, bymonthday=1, dtstart=d(*YEAR, 9)))
show("every last day of february", AKL, rrule(YEARLY, bymonth=2, bymonthday=-1, dtstart=d(*YEAR, 9)))
show("every year on december 24 at 18:00", UTC, rrule(YEARLY, bymonth=12, bymonthday=24, dtstart=d(*YEAR, 18)))
show("every other jan 27th", BER, rrule(YEARLY, interval=2, bymonth=1, bymonthday=27, dtstart=d(*YEAR, 9)))

# --- Ends and starts (Todoist: "every day for 10 days", "every day until …", "every … starting …") ---
show("every day at 9:00 for 10 days", NY, rrule(DAILY, count=10, dtstart=d(*TODAY, 9)))
show("every day until 2027-03-20", KOL, rrule(DAILY, until=d(2027, 3, 20, 23, 59, 59), dtstart=d(*TODAY, 9)))
show("every weekday starting 2027-03-15", AKL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(2027, 3, 15, 9)))
show("every monday starting 2027-04-01", UTC, rrule(WEEKLY, byweekday=MO, dtstart=d(2027, 4, 1, 9)))
show("every last friday for 6 months", BER, rrule(MONTHLY, count=6, byweekday=FR(-1), dtstart=d(*MONTH, 9)))
show("every 27th until 2027-12-31", NY, rrule(MONTHLY, bymonthday=27, until=d(2027, 12, 31, 23), dtstart=d(*MONTH, 9)))
show("daily starting 2027-04-01 until 2027-04-05", KOL, rrule(DAILY, until=d(2027, 4, 5, 23), dtstart=d(2027, 4, 1, 9)))

# --- Daylight saving time (New York springs forward on 2027-03-14, Berlin on 2027-03-28, Auckland falls
#     back on 2027-04-04) ---------------------------------------------------------------------------------
show("every day at 2:30", NY, rrule(DAILY, dtstart=d(*TODAY, 2, 30)))
show("every sunday at 2:30", NY, rrule(WEEKLY, byweekday=SU, dtstart=d(*MONDAY, 2, 30)))
show("every day at 2:30 starting 2027-03-26", BER, rrule(DAILY, dtstart=d(2027, 3, 26, 2, 30)))
show("every day at 2:30 starting 2027-04-01", AKL, rrule(DAILY, dtstart=d(2027, 4, 1, 2, 30)))

# --- A phrase's own zone wins over the system zone -------------------------------------------------------
show("every weekday at 9:00 in America/New_York", BER, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)), NY)
show("every day at 9:00 in America/New_York", KOL, rrule(DAILY, dtstart=d(*TODAY, 9)), NY)
show("every day at 9:00 in Asia/Kolkata", NY, rrule(DAILY, dtstart=d(*TODAY, 9)), KOL)
show("every weekday at 9:00 in Europe/Berlin", AKL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)), BER)
show("every 3rd friday at 17:00 in Pacific/Auckland", BER, rrule(MONTHLY, byweekday=FR(3), dtstart=d(*MONTH, 17)), AKL)
show("every morning in Europe/Berlin", NY, rrule(DAILY, dtstart=d(*TODAY, 9)), BER)
show("daily at 2:30 in America/New_York", UTC, rrule(DAILY, dtstart=d(*TODAY, 2, 30)), NY)


# === Phrasings as people type them (issue 34). Sources: the documented syntax of Todoist ("Recurring
# due dates"), TickTick ("Smart date parsing"), Google Calendar quick add, Apple Reminders (Siri
# requests), Microsoft To Do (repeat suggestions) and Remind (REM … AT …). =================================
HOURS = dict(byminute=0, bysecond=0)

# --- A bare hour after "at" (Todoist: "every monday at 9"; Apple Reminders: "every day at 7 in the
#     morning"; Google Calendar: "at 9") ---------------------------------------------------------------------
show("every monday at 9", BER, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every day at 21", NY, rrule(DAILY, dtstart=d(*TODAY, 21)))
show("every day at 0", KOL, rrule(DAILY, dtstart=d(*TODAY, 0)))
show("every morning at 6", AKL, rrule(DAILY, dtstart=d(*TODAY, 6)))
show("every day at 7 in the morning", UTC, rrule(DAILY, dtstart=d(*TODAY, 7)))
show("every day at 7 in the evening", BER, rrule(DAILY, dtstart=d(*TODAY, 19)))
show("every evening at 7", NY, rrule(DAILY, dtstart=d(*TODAY, 19)))
show("every afternoon at 3", KOL, rrule(DAILY, dtstart=d(*TODAY, 15)))
show("every night at 11", AKL, rrule(DAILY, dtstart=d(*TODAY, 23)))
show("every day at 10 at night", UTC, rrule(DAILY, dtstart=d(*TODAY, 22)))
show("every friday at 17", BER, rrule(WEEKLY, byweekday=FR, dtstart=d(*MONDAY, 17)))
show("every weekday at 8", NY, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 8)))
show("every 15th at 12", KOL, rrule(MONTHLY, bymonthday=15, dtstart=d(*MONTH, 12)))
show("every jan 1 at 0", AKL, rrule(YEARLY, bymonth=1, bymonthday=1, dtstart=d(*YEAR, 0)))
show("every sunday morning at 8", UTC, rrule(WEEKLY, byweekday=SU, dtstart=d(*MONDAY, 8)))
show("every friday evening at 6", BER, rrule(WEEKLY, byweekday=FR, dtstart=d(*MONDAY, 18)))
show("daily at 9", NY, rrule(DAILY, dtstart=d(*TODAY, 9)))
show("weekly on monday at 10", KOL, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 10)))
show("monthly on the 1st at 8", AKL, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 8)))
show("every day at 6 in the afternoon", UTC, rrule(DAILY, dtstart=d(*TODAY, 18)))

# --- Several times a day, one rule (Todoist: "every day at 9am and 5pm"; TickTick: "every day at 8,
#     12, 18"; Microsoft To Do users: "twice a day") -------------------------------------------------------------
show("every day at 9am and 5pm", BER, rrule(DAILY, byhour=(9, 17), **HOURS, dtstart=d(*TODAY, 9)))
show("every day at 6am, 12pm and 6pm", NY, rrule(DAILY, byhour=(6, 12, 18), **HOURS, dtstart=d(*TODAY, 6)))
show("twice a day at 9 and 21", KOL, rrule(DAILY, byhour=(9, 21), **HOURS, dtstart=d(*TODAY, 9)))
show("3 times a day at 8, 14 and 20", AKL, rrule(DAILY, byhour=(8, 14, 20), **HOURS, dtstart=d(*TODAY, 8)))
show("thrice a day at 7, 13, 19", UTC, rrule(DAILY, byhour=(7, 13, 19), **HOURS, dtstart=d(*TODAY, 7)))
show("every weekday at 9 and 17", BER, rrule(WEEKLY, byweekday=WEEKDAYS, byhour=(9, 17), **HOURS, dtstart=d(*MONDAY, 9)))
show("every monday at 8:30 and 16:30", NY, rrule(WEEKLY, byweekday=MO, byhour=(8, 16), byminute=30, bysecond=0, dtstart=d(*MONDAY, 8, 30)))
show("every day at 9:15 and 17:40", KOL, several(
    rrule(DAILY, byhour=9, byminute=15, bysecond=0, dtstart=d(*TODAY, 9, 15)),
    rrule(DAILY, byhour=17, byminute=40, bysecond=0, dtstart=d(*TODAY, 9, 15))))
show("every day at 17 and 9", AKL, rrule(DAILY, byhour=(9, 17), **HOURS, dtstart=d(*TODAY, 9)))
show("every day at 9 and 17 for 3 days", UTC, rrule(DAILY, byhour=(9, 17), **HOURS, until=d(2027, 3, 12, 17), dtstart=d(*TODAY, 9)))
show("every 1st and 15th at 9 and 18", BER, rrule(MONTHLY, bymonthday=(1, 15), byhour=(9, 18), **HOURS, dtstart=d(*MONTH, 9)))
show("every day at noon and midnight", NY, rrule(DAILY, byhour=(0, 12), **HOURS, dtstart=d(*TODAY, 0)))
show("every day at 8am, 1pm, and 9pm", KOL, rrule(DAILY, byhour=(8, 13, 21), **HOURS, dtstart=d(*TODAY, 8)))
show("every sat and sun at 10 and 16", AKL, rrule(WEEKLY, byweekday=(SA, SU), byhour=(10, 16), **HOURS, dtstart=d(*MONDAY, 10)))
show("every day at 2:30 and 14:30", NY, rrule(DAILY, byhour=(2, 14), byminute=30, bysecond=0, dtstart=d(*TODAY, 2, 30)))
show("once a day at 9", UTC, rrule(DAILY, dtstart=d(*TODAY, 9)))

# --- No leading "every" (Google Calendar quick add: "at 8am every day"; Todoist: "weekdays at 7:15",
#     "the first monday of every month"; Apple Reminders: "on the 1st of every month at 9") ------------------------
show("at 8am every day", BER, rrule(DAILY, dtstart=d(*TODAY, 8)))
show("at 9 every monday", NY, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("at 7:30 every weekday", KOL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 7, 30)))
show("at 9 and 17 every day", AKL, rrule(DAILY, byhour=(9, 17), **HOURS, dtstart=d(*TODAY, 9)))
show("at 6pm daily", UTC, rrule(DAILY, dtstart=d(*TODAY, 18)))
show("weekdays at 7:15", BER, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 7, 15)))
show("weekdays", NY, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("weekends at 10", KOL, rrule(WEEKLY, byweekday=(SA, SU), dtstart=d(*MONDAY, 10)))
show("workdays at 8:30", AKL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 8, 30)))
show("mondays at 9", UTC, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("mondays and thursdays at 18:00", BER, rrule(WEEKLY, byweekday=(MO, TH), dtstart=d(*MONDAY, 18)))
show("fridays at 5pm", NY, rrule(WEEKLY, byweekday=FR, dtstart=d(*MONDAY, 17)))
show("on weekdays at 8", KOL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 8)))
show("on mondays", AKL, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("the first monday of every month", UTC, rrule(MONTHLY, byweekday=MO(1), dtstart=d(*MONTH, 9)))
show("the last friday of each month at 16:00", BER, rrule(MONTHLY, byweekday=FR(-1), dtstart=d(*MONTH, 16)))
show("the 15th of every month", NY, rrule(MONTHLY, bymonthday=15, dtstart=d(*MONTH, 9)))
show("on the 1st of every month at 9", KOL, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 9)))
show("on the last day of every month", AKL, rrule(MONTHLY, bymonthday=-1, dtstart=d(*MONTH, 9)))
show("1st of every month", UTC, rrule(MONTHLY, bymonthday=1, dtstart=d(*MONTH, 9)))
show("biweekly on thursday at 15:00", BER, rrule(WEEKLY, interval=2, byweekday=TH, dtstart=d(*MONDAY, 15)))
show("biweekly", NY, rrule(WEEKLY, interval=2, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("fortnightly on friday", KOL, rrule(WEEKLY, interval=2, byweekday=FR, dtstart=d(*MONDAY, 9)))
show("once a week on monday", AKL, rrule(WEEKLY, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("once a month on the 10th", UTC, rrule(MONTHLY, bymonthday=10, dtstart=d(*MONTH, 9)))
show("once a year on june 1", BER, rrule(YEARLY, bymonth=6, bymonthday=1, dtstart=d(*YEAR, 9)))

# --- Dates in words after until and starting: the next such day (Todoist: "every day until november
#     28", "every monday starting dec 6"; TickTick: "every day until 3/31" is not taken) -----------------------
show("every day until november 28", NY, rrule(DAILY, until=d(2027, 11, 28, 23, 59, 59), dtstart=d(*TODAY, 9)))
show("every day until march 12", KOL, rrule(DAILY, until=d(2027, 3, 12, 23, 59, 59), dtstart=d(*TODAY, 9)))
show("every day until march 1", AKL, rrule(DAILY, until=d(2028, 3, 1, 23, 59, 59), dtstart=d(*TODAY, 9)))
show("every day starting dec 6", UTC, rrule(DAILY, dtstart=d(2027, 12, 6, 9)))
show("every monday starting april 5th", BER, rrule(WEEKLY, byweekday=MO, dtstart=d(2027, 4, 5, 9)))
show("every weekday until 20 march", NY, rrule(WEEKLY, byweekday=WEEKDAYS, until=d(2027, 3, 20, 23, 59, 59), dtstart=d(*MONDAY, 9)))
show("every day until the 14th of march", KOL, rrule(DAILY, until=d(2027, 3, 14, 23, 59, 59), dtstart=d(*TODAY, 9)))
show("every day at 8 until april 3 2027", AKL, rrule(DAILY, until=d(2027, 4, 3, 23, 59, 59), dtstart=d(*TODAY, 8)))
show("every day from mar 15 until mar 19", UTC, rrule(DAILY, until=d(2027, 3, 19, 23, 59, 59), dtstart=d(2027, 3, 15, 9)))
show("every friday until jun 30", BER, rrule(WEEKLY, byweekday=FR, until=d(2027, 6, 30, 23, 59, 59), dtstart=d(*MONDAY, 9)))

# --- Units and words (Todoist: "every 3 hrs", "every 2nd day", "every quarter"; TickTick: "every half
#     hour"; Remind users: "every 2nd week") ---------------------------------------------------------------------
interval("every 3 hrs", BER, 10800)
interval("every hr", NY, 3600)
interval("every half hour", KOL, 1800)
interval("every half an hour", AKL, 1800)
interval("every quarter hour", UTC, 900)
interval("every 45 mins", BER, 2700)
interval("every 10 min", NY, 600)
show("every quarter on the 1st", KOL, rrule(MONTHLY, interval=3, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every quarter", AKL, rrule(MONTHLY, interval=3, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every 2nd day", UTC, rrule(DAILY, interval=2, dtstart=d(*TODAY, 9)))
show("every third day at 8", BER, rrule(DAILY, interval=3, dtstart=d(*TODAY, 8)))
show("every second week on friday", NY, rrule(WEEKLY, interval=2, byweekday=FR, dtstart=d(*MONDAY, 9)))
show("every 3rd month on the 15th", KOL, rrule(MONTHLY, interval=3, bymonthday=15, dtstart=d(*MONTH, 9)))
show("every 2nd year on march 20", AKL, rrule(YEARLY, interval=2, bymonth=3, bymonthday=20, dtstart=d(*YEAR, 9)))
show("every 2 wks on monday", UTC, rrule(WEEKLY, interval=2, byweekday=MO, dtstart=d(*MONDAY, 9)))
show("every 6 mos", BER, rrule(MONTHLY, interval=6, bymonthday=1, dtstart=d(*MONTH, 9)))
show("every 2 yrs", NY, rrule(YEARLY, interval=2, bymonth=1, bymonthday=1, dtstart=d(*YEAR, 9)))

# --- Day ranges and lists (Todoist: "every mon-fri", "every monday to friday"; TickTick: "every monday
#     wednesday friday") ---------------------------------------------------------------------------------------------
show("every mon-fri at 7:00", KOL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 7)))
show("every monday to friday at 7:30", AKL, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 7, 30)))
show("every monday through friday", UTC, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("every tue-thu at 10", BER, rrule(WEEKLY, byweekday=(TU, WE, TH), dtstart=d(*MONDAY, 10)))
show("every fri-mon at 10", NY, rrule(WEEKLY, byweekday=(FR, SA, SU, MO), dtstart=d(*MONDAY, 10)))
show("every monday wednesday friday at 7am", KOL, rrule(WEEKLY, byweekday=(MO, WE, FR), dtstart=d(*MONDAY, 7)))
show("every tue thu", AKL, rrule(WEEKLY, byweekday=(TU, TH), dtstart=d(*MONDAY, 9)))
show("every mon-wed and fri", UTC, rrule(WEEKLY, byweekday=(MO, TU, WE, FR), dtstart=d(*MONDAY, 9)))
show("weekly on mon-fri at 6", BER, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 6)))
show("every other mon-fri", NY, rrule(WEEKLY, interval=2, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 9)))
show("every saturday thru sunday at 11", KOL, rrule(WEEKLY, byweekday=(SA, SU), dtstart=d(*MONDAY, 11)))

# --- Exceptions and windows (Todoist: "every weekday except friday"; Google Calendar users: "every hour
#     from 9am to 5pm"; Microsoft To Do users: "every 30 minutes between 9 and 17") -------------------------------
show("every weekday except friday at 8", AKL, rrule(WEEKLY, byweekday=(MO, TU, WE, TH), dtstart=d(*MONDAY, 8)))
show("every day except sunday", UTC, rrule(WEEKLY, byweekday=(MO, TU, WE, TH, FR, SA), dtstart=d(*MONDAY, 9)))
show("every day except saturday and sunday at 7", BER, rrule(WEEKLY, byweekday=WEEKDAYS, dtstart=d(*MONDAY, 7)))
show("every day at 6 except mon-wed", NY, rrule(WEEKLY, byweekday=(TH, FR, SA, SU), dtstart=d(*MONDAY, 6)))
show("every mon, wed, fri excluding wed", KOL, rrule(WEEKLY, byweekday=(MO, FR), dtstart=d(*MONDAY, 9)))
show("every hour from 9am to 5pm", AKL, rrule(DAILY, byhour=range(9, 18), **HOURS, dtstart=d(*TODAY, 9)))
show("every hour between 9 and 17", UTC, rrule(DAILY, byhour=range(9, 18), **HOURS, dtstart=d(*TODAY, 9)))
show("every 2 hours from 8 to 20 on weekdays", BER, rrule(WEEKLY, byweekday=WEEKDAYS, byhour=range(8, 21, 2), **HOURS, dtstart=d(*MONDAY, 8)))
show("every 30 minutes from 9 to 12", NY, several(
    rrule(DAILY, byhour=(9, 10, 11, 12), byminute=0, bysecond=0, dtstart=d(*TODAY, 9)),
    rrule(DAILY, byhour=(9, 10, 11), byminute=30, bysecond=0, dtstart=d(*TODAY, 9))))
show("every hour from 22 to 23:30", KOL, rrule(DAILY, byhour=(22, 23), **HOURS, dtstart=d(*TODAY, 22)))
show("every 3 hours from 6am to 9pm on saturday and sunday", AKL, rrule(WEEKLY, byweekday=(SA, SU), byhour=(6, 9, 12, 15, 18, 21), **HOURS, dtstart=d(*MONDAY, 6)))
show("hourly from 9 to 12", UTC, rrule(DAILY, byhour=(9, 10, 11, 12), **HOURS, dtstart=d(*TODAY, 9)))

# --- Weekdays of the month and days from its end (Todoist: "every last workday", "every first workday";
#     Remind: OMIT weekends, REM 1 +… ; Microsoft To Do users: "second to last day of the month") --------------
BUSINESS = dict(byweekday=WEEKDAYS)
show("every last weekday of the month", BER, rrule(MONTHLY, bysetpos=-1, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every first weekday of the month", NY, rrule(MONTHLY, bysetpos=1, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every 3rd weekday", KOL, rrule(MONTHLY, bysetpos=3, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every last workday at 17", AKL, rrule(MONTHLY, bysetpos=-1, **BUSINESS, dtstart=d(*MONTH, 17)))
show("every 10th weekday of the month", UTC, rrule(MONTHLY, bysetpos=10, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every month on the first weekday", BER, rrule(MONTHLY, bysetpos=1, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every second to last weekday", NY, rrule(MONTHLY, bysetpos=-2, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every month on the second to last day", KOL, rrule(MONTHLY, bymonthday=-2, dtstart=d(*MONTH, 9)))
show("every 3rd to last day of the month", AKL, rrule(MONTHLY, bymonthday=-3, dtstart=d(*MONTH, 9)))
show("every penultimate day of the month", UTC, rrule(MONTHLY, bymonthday=-2, dtstart=d(*MONTH, 9)))
show("every month on the second-to-last day at 18", BER, rrule(MONTHLY, bymonthday=-2, dtstart=d(*MONTH, 18)))
show("the last weekday of every month", NY, rrule(MONTHLY, bysetpos=-1, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every 2 months on the last weekday", KOL, rrule(MONTHLY, interval=2, bysetpos=-1, **BUSINESS, dtstart=d(*MONTH, 9)))
show("every last weekday of december", AKL, rrule(YEARLY, bymonth=12, bysetpos=-1, **BUSINESS, dtstart=d(*YEAR, 9)))
