# Oracle for DateBuilder rules: python-dateutil's rrule expands the local times, zoneinfo maps them
# to instants with the default DST policy (gap: fire at the transition; overlap: first instant).
# Input lines:  <zone>|<DTSTART yyyymmddThhmmss>|<RRULE>|<after epoch>|<limit>
# Output lines: <epoch> <epoch> ... | <next epoch after `after`, or none>
import sys
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo
from dateutil.rrule import rrulestr


def local(t, z):
    return datetime.fromtimestamp(t, z).replace(tzinfo=None)


def instant(zone, wall):
    z = ZoneInfo(zone)
    found = []
    for fold in (0, 1):
        t = int(wall.replace(tzinfo=z, fold=fold).timestamp())
        if local(t, z) == wall:
            found.append(t)
    if found:
        return min(found)
    a = int(wall.replace(tzinfo=z, fold=0).timestamp())
    b = int(wall.replace(tzinfo=z, fold=1).timestamp())
    lo, hi = min(a, b), max(a, b)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if local(mid, z) > wall:
            hi = mid
        else:
            lo = mid
    return hi


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
