# Wall-clock helpers shared by the Python oracles: zoneinfo (system tzdata), independent of Foundation.
from datetime import datetime


def local(t, zone):
    """The wall clock in `zone` (a ZoneInfo) at epoch second `t`, without its zone."""
    return datetime.fromtimestamp(t, zone).replace(tzinfo=None)


def instant(wall, zone):
    """The epoch second at which `zone` shows `wall`: the first of an overlap; in a gap, the end of the gap."""
    found = [int(wall.replace(tzinfo=zone, fold=f).timestamp()) for f in (0, 1)]
    found = [t for t in found if local(t, zone) == wall]
    if found:
        return min(found)
    a, b = (int(wall.replace(tzinfo=zone, fold=f).timestamp()) for f in (0, 1))
    lo, hi = min(a, b), max(a, b)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if local(mid, zone) > wall:
            hi = mid
        else:
            lo = mid
    return hi
