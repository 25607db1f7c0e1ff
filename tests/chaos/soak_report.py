#!/usr/bin/env python3
"""The soak's verdict, from the witnesses' files and the nemesis' fault log.

  soak_report.py WITNESS_DIR FAULT_LOG HEAL_MS LEASE_MS

FAULT_LOG lines: "<kind> <start wall ms> <end wall ms>". HEAL_MS is when the
nemesis stopped and every fault was healed. An overlap is attributed to a fault
when it begins between the fault's start and its end plus two leases (a holder
that was paused or cut off may only notice when its lease runs out); an
overlap no fault explains is a bug. Stale writes accepted are split the same
way: after a restart without persistence the fencing counter starts again from
the server's clock, so none is expected at all.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import parse  # noqa: E402


def main():
    wd, fault_log, heal_ms, lease_ms = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    faults = []
    with open(fault_log) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3:
                faults.append((p[0], float(p[1]), float(p[2])))
    events = sorted(parse(os.path.join(wd, "events")), key=lambda e: e["t"])
    writes = sorted(parse(os.path.join(wd, "resource.log")), key=lambda w: w["t"])
    by_pid = {}
    for e in events:
        by_pid.setdefault(e["pid"], []).append(e)

    def blame(t):
        hits = [k for k, s, e in faults if s - 100 <= t <= e + 2 * lease_ms]
        return hits[-1] if hits else None

    overlaps, per_fault, unexplained = [], {}, []
    for o in (e for e in events if e["kind"] == "OVERLAP"):
        stop = next((e for e in by_pid[o["pid"]] if e["t"] >= o["t"] and e["kind"] in ("OVERLAP_END", "END", "TERM")),
                    by_pid[o["pid"]][-1])
        length = stop["t"] - o["t"]
        overlaps.append(length)
        who = blame(o["t"])
        if who:
            per_fault[who] = per_fault.get(who, 0) + 1
        else:
            unexplained.append("%.0f (%s)" % (o["t"], o.get("tag")))

    starts = sorted(e["t"] for e in events if e["kind"] == "START")
    start_of = {e["pid"]: e["t"] for e in events if e["kind"] == "START"}
    import bisect
    stale = 0
    stale_detail = []
    for w in (w for w in writes if w["kind"] == "ACCEPT"):
        mine = start_of.get(w["pid"])
        if mine is None:
            continue
        i = bisect.bisect_right(starts, mine)
        if i < len(starts) and starts[i] < w["t"]:
            stale += 1
            stale_detail.append("%.0f fence %s (%s)" % (w["t"], w.get("fence"), blame(w["t"]) or "no fault"))
    refused = sum(1 for w in writes if w["kind"] == "STALE")
    ends = [e for e in events if e["kind"] == "END"]
    after_heal = [e for e in ends if e["t"] >= heal_ms]
    kinds = {}
    for k, _, _ in faults:
        kinds[k] = kinds.get(k, 0) + 1

    print("faults injected: %d (%s)" % (len(faults), ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
    print("critical sections: %d started, %d finished" % (len(starts), len(ends)))
    print("overlaps: %d, all attributed to faults: %s" % (len(overlaps), "yes" if not unexplained else "NO"))
    for k, n in sorted(per_fault.items()):
        print("  during/after %-18s %d" % (k, n))
    if unexplained:
        print("  unexplained: " + "; ".join(unexplained[:10]))
    print("maximum overlap: %.0f ms" % (max(overlaps) if overlaps else 0))
    print("stale writes refused by the fenced resource: %d" % refused)
    print("stale writes accepted: %d%s" % (stale, (" (" + "; ".join(stale_detail[:5]) + ")") if stale else ""))
    print("liveness after healing: %d critical sections finished after the faults stopped" % len(after_heal))
    print("verdict=%s" % ("ok" if not unexplained and stale == 0 else "FAIL"))
    return 0 if not unexplained and stale == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
