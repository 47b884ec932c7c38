# Oracle for WallClock tests: python's zoneinfo (system tzdata), independent of Foundation.
# Input lines:  R <zone> <YYYY-MM-DDTHH:MM:SS>   -> "gap <epoch>" | "<epoch> [<epoch>]"
#               L <zone> <epoch>                 -> "<YYYY-MM-DDTHH:MM:SS> <offset seconds>"
import sys
from datetime import datetime
from zoneinfo import ZoneInfo


def local(t, z):
    return datetime.fromtimestamp(t, z).replace(tzinfo=None)


def resolve(zone, wall):
    z = ZoneInfo(zone)
    found = set()
    for fold in (0, 1):
        t = int(wall.replace(tzinfo=z, fold=fold).timestamp())
        if local(t, z) == wall:
            found.add(t)
    if found:
        return " ".join(str(t) for t in sorted(found))
    a = int(wall.replace(tzinfo=z, fold=0).timestamp())
    b = int(wall.replace(tzinfo=z, fold=1).timestamp())
    lo, hi = min(a, b), max(a, b)
    while hi - lo > 1:  # first second whose wall clock reads later than `wall`
        mid = (lo + hi) // 2
        if local(mid, z) > wall:
            hi = mid
        else:
            lo = mid
    return "gap %d" % hi


for line in sys.stdin:
    parts = line.split()
    if not parts:
        continue
    if parts[0] == "R":
        print(resolve(parts[1], datetime.fromisoformat(parts[2])))
    else:
        z = ZoneInfo(parts[1])
        d = datetime.fromtimestamp(int(parts[2]), z)
        print(d.replace(tzinfo=None).isoformat(), int(d.utcoffset().total_seconds()))
