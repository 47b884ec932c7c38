#!/usr/bin/python3
"""Oracle for ChimeCore's RRULE tests: python-dateutil's rrulestr, driven by JSON.

stdin: a JSON list of cases {"id": int, "text": str, "dtstart": "YYYY-MM-DDTHH:MM:SS" | null,
       "after": "YYYY-MM-DDTHH:MM:SS" | null, "inc": bool, "n": int}
stdout: a JSON list of {"id": int, "error": str | null, "occ": [iso strings], "timeout": bool}

"occ" holds the first n occurrences (after "after", or from the start when it is null), computed with
rrulestr(text, dtstart=...).xafter(after, count=n, inc=inc).

dateutil scans to year 9999 when a rule never fires (again), which takes seconds. So each case has a
horizon year (the case's "horizon"): a hook on dateutil's per-year table rebuild (which `_iter` calls
whenever its iteration reaches a new year) aborts the scan once it passes that year, without changing
anything the iteration computes. The answer then says "horizon": true; for a single rule (`"single"`)
"occ" is then complete for every occurrence before January 1 of horizon + 1, for a set it is a correct
prefix. A case running longer than the time limit reports what it had and "timeout": true.
"""
import json
import signal
import sys
import warnings
from datetime import datetime

from dateutil import rrule as rrule_module
from dateutil.rrule import rrulestr

warnings.simplefilter("ignore")
LIMIT_SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


signal.signal(signal.SIGALRM, on_alarm)
# Foundation.Process may start us with signals blocked; the time limit needs SIGALRM.
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGALRM])


class HorizonReached(Exception):
    pass


HORIZON = [9999]
original_rebuild = rrule_module._iterinfo.rebuild


def guarded_rebuild(self, year, month):
    if year > HORIZON[0]:
        raise HorizonReached()
    return original_rebuild(self, year, month)


rrule_module._iterinfo.rebuild = guarded_rebuild


def parse_iso(text):
    return None if text is None else datetime.strptime(text, "%Y-%m-%dT%H:%M:%S")


def run(case):
    out = {"id": case["id"], "error": None, "occ": [], "timeout": False, "horizon": False, "single": False}
    HORIZON[0] = case.get("horizon") or 9999
    signal.setitimer(signal.ITIMER_REAL, LIMIT_SECONDS)
    try:
        kwargs = {}
        if case.get("dtstart"):
            kwargs["dtstart"] = parse_iso(case["dtstart"])
        rule = rrulestr(case["text"], **kwargs)
        out["single"] = isinstance(rule, rrule_module.rrule)
        after = parse_iso(case.get("after"))
        if after is None:
            source = iter(rule)
        else:
            source = rule.xafter(after, count=case["n"], inc=case.get("inc", False))
        for value in source:
            out["occ"].append(value.replace(tzinfo=None).isoformat())
            if len(out["occ"]) >= case["n"]:
                break
    except Timeout:
        out["timeout"] = True
    except HorizonReached:
        out["horizon"] = True
    except Exception as error:  # dateutil raises ValueError, TypeError, IndexError, KeyError...
        out["error"] = "%s: %s" % (type(error).__name__, error)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return out


def main():
    cases = json.load(sys.stdin)
    json.dump([run(case) for case in cases], sys.stdout)


main()
