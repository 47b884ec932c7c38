# Oracle for DateBuilder rules: python-dateutil's rrule expands the local times, zoneinfo maps them
# to instants with the default DST policy (gap: fire at the transition; overlap: first instant).
# Input lines:  <zone>|<DTSTART yyyymmddThhmmss>|<RRULE>|<after epoch>|<limit>
# Output lines: <epoch> <epoch> ... | <next epoch after `after`, or none>
import os
import sys
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_zones  # noqa: E402
from oracle_zones import local  # noqa: E402
from dateutil.rrule import rrulestr  # noqa: E402


def instant(zone, wall):
    return oracle_zones.instant(wall, ZoneInfo(zone))


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    zone, start, rule, after, limit = line.split("|")
    after, limit = int(after), int(limit)
    r = rrulestr("DTSTART:%s\nRRULE:%s" % (start, rule))
    firsts = []
    for wall in r:
        firsts.append(str(instant(zone, wall)))
        if len(firsts) >= limit:
            break
    nxt = "none"
    begin = local(after, ZoneInfo(zone)) - timedelta(days=3)
    for wall in r.xafter(begin, inc=True):
        t = instant(zone, wall)
        if t > after:
            nxt = str(t)
            break
    print(" ".join(firsts) + " | " + nxt)
