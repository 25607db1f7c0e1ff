#!/usr/bin/env python3
"""The soak's verdict, from the witnesses' files, the nemesis' fault log and the
server's order of acquisitions.

  soak_report.py WITNESS_DIR FAULT_LOG HEAL_MS LEASE_MS [ACQUISITIONS]

FAULT_LOG lines: "<kind> <start wall ms> <end wall ms> [offset=<server clock
offset s>]". HEAL_MS is when the nemesis stopped and every fault was healed.
ACQUISITIONS is `chaostool.py acquisitions`' log: each fresh hold of the lock
in the order the server took them, with its owner and fencing token.

An overlap is attributed to a fault when it begins between the fault's start
and its end plus two leases (a holder that was paused or cut off may only
notice when its lease runs out); an overlap no fault explains is a bug.

The fencing token's promise is about the order in which the server grants the
lock: a holder that acquired later has a larger token. So:
* token order: each acquisition's token must be above every earlier one's. One
  that is not is a bug, unless the promise excludes it: the server lost its
  data (restart-empty between the two) and its clock went back (a clock-back
  before the newer acquisition), docs/safety.md.
* a stale write accepted is a write the resource accepted from a holder after
  a holder that acquired *later* had started (written). The order of the
  witnesses' STARTs is not the order of acquisition: a command may start late
  (a slow start, its lock lost at once to eviction or a clock jump), after the
  holder that came next; its writes are then the stale ones, and refused.
  For a holder the server's log missed (or without ACQUISITIONS) the tokens
  stand in when one counter gave both (no restart-empty near their STARTs: the
  smaller token was granted first), else the START order; the report says so.
Each stale write accepted and each token out of order is listed with the two
holders' tokens and the faults between them.
"""
import bisect
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import parse  # noqa: E402


def stamp(ms):
    return time.strftime("%H:%M:%S", time.gmtime(ms / 1000.0)) + ".%03d" % (int(ms) % 1000)


def main():
    wd, fault_log, heal_ms, lease_ms = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    acq_log = sys.argv[5] if len(sys.argv) > 5 else None
    faults = []
    with open(fault_log) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3:
                extra = dict(kv.partition("=")[::2] for kv in p[3:])
                faults.append((p[0], float(p[1]), float(p[2]), extra))
    events = sorted(parse(os.path.join(wd, "events")), key=lambda e: e["t"])
    writes = sorted(parse(os.path.join(wd, "resource.log")), key=lambda w: w["t"])
    acqs = [a for a in parse(acq_log) if a["kind"] == "ACQUIRED"] if acq_log else []
    by_pid = {}
    for e in events:
        by_pid.setdefault(e["pid"], []).append(e)

    def blame(t):
        hits = [k for k, s, e, _ in faults if s - 100 <= t <= e + 2 * lease_ms]
        return hits[-1] if hits else None

    def between(t0, t1):
        """The faults active at some moment of [t0, t1] (or just before: a fault's effect lasts two leases)."""
        return ["%s@%s" % (k, stamp(s)) for k, s, e, _ in faults if s <= t1 and e + 2 * lease_ms >= t0]

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

    # The server's order of acquisitions, and the token order along it. One run may
    # take the lock twice: its first acquisition's answer lost (a silent or slow
    # link), the lease ran out before its resend, which found the lock taken and
    # waited for a fresh one. Its command holds the last: the one with its token.
    by_owner = {}  # owner -> [(index, wall ms, fence, server run)]
    for i, a in enumerate(acqs):
        by_owner.setdefault(a.get("owner"), []).append((i, a["t"], int(a.get("fence") or -1), a.get("server")))

    def excused(older, newer):
        """A token out of order that the promise excludes, said as " [...]": data lost (a
        restart-empty between the two) and the clock back (a clock-back before the newer);
        "" when not."""
        restart = [s for k, s, e, _ in faults if k == "restart-empty" and older[1] - 100 <= s <= newer[1]]
        back = [s for k, s, e, _ in faults if k == "clock-back" and s <= newer[1]]
        if not restart or not back:
            return ""
        return " [excluded by the promise: data lost (restart-empty@%s) and the clock back (clock-back@%s)]" % (
            stamp(restart[-1]), stamp(back[-1]))

    regressions, top = [], None
    for i, a in enumerate(acqs):
        fence = int(a.get("fence") or -1)
        if top is not None and fence <= top[2]:
            regressions.append((top, (i, a["t"], fence, a.get("server"), a.get("owner"))))
        if top is None or fence > top[2]:
            top = (i, a["t"], fence, a.get("server"), a.get("owner"))

    starts = [e for e in events if e["kind"] == "START"]
    start_times = [e["t"] for e in starts]
    start_of = {e["pid"]: e for e in starts}
    tag_of = {e.get("owner"): e.get("tag") for e in starts}
    order = {}  # owner -> the acquisition its command holds: (index, wall ms, fence, server run)
    for e in starts:
        taken = by_owner.get(e.get("owner"), [])
        mine = [a for a in taken if str(a[2]) == e.get("fence")] or [a for a in taken if a[1] <= e["t"]]
        if mine:
            order[e.get("owner")] = mine[-1]
    window = 30000.0  # how far apart two holders' STARTs are compared (a command starts within seconds)

    def near(t0, t1):
        return starts[bisect.bisect_left(start_times, t0):bisect.bisect_left(start_times, t1)]

    def newer_than(me, o):
        """How holder o is newer than holder me (or None): by the server's order; where the
        server's log missed one of them, by their tokens when one counter gave both (no
        restart-empty near their STARTs: the smaller was granted first), else by START order."""
        if o.get("owner") == me.get("owner"):
            return None
        mine, theirs = order.get(me.get("owner")), order.get(o.get("owner"))
        if mine and theirs:
            return "acquired" if theirs[0] > mine[0] else None
        if o["t"] <= me["t"]:
            return None
        lo, hi = min(me["t"], o["t"]) - 5000, max(me["t"], o["t"])
        if not any(k == "restart-empty" and lo <= s <= hi for k, s, e, _ in faults):
            return "token above (acquisition not seen)" if int(o.get("fence", -1)) > int(me.get("fence", -1)) else None
        return "started (acquisition not seen)"

    late_starts = 0  # holders whose command started after a later acquisition's command
    for e in starts:
        mine = order.get(e.get("owner"))
        if mine and any(order.get(o.get("owner"), (-1,))[0] > mine[0] for o in near(e["t"] - window, e["t"])):
            late_starts += 1

    stale = {}  # (older owner, newer owner, how) -> [writes]
    for w in (w for w in writes if w["kind"] == "ACCEPT"):
        me = start_of.get(w["pid"])
        if me is None:
            continue
        for o in near(me["t"] - window, w["t"]):
            how = newer_than(me, o)
            if how:
                stale.setdefault((me.get("owner"), o.get("owner"), how), []).append(w)
                break

    # The reading before issue 47, for comparison: a write accepted after any later
    # START, whichever acquired first.
    by_start, by_start_acquired_later = 0, 0
    for w in (w for w in writes if w["kind"] == "ACCEPT"):
        me = start_of.get(w["pid"])
        if me is None:
            continue
        i = bisect.bisect_right(start_times, me["t"])
        if i < len(starts) and starts[i]["t"] < w["t"]:
            by_start += 1
            mine, theirs = order.get(me.get("owner")), order.get(starts[i].get("owner"))
            if mine and theirs and mine[0] > theirs[0]:
                by_start_acquired_later += 1

    def holder(owner, start):
        acq = order.get(owner)
        got = ("acquired %s (#%d, server run %s)" % (stamp(acq[1]), acq[0] + 1, acq[3])) if acq else "acquisition not seen"
        return "%s fence %s, %s, started %s" % (tag_of.get(owner, "?"), start.get("fence"), got, stamp(start["t"]))

    stale_lines, stale_count, stale_excused = [], 0, 0
    for (old, new, how), ws in stale.items():
        o_start = next(e for e in starts if e.get("owner") == old)
        n_start = next(e for e in starts if e.get("owner") == new)
        ok = excused(order[old], order[new]) if order.get(old) and order.get(new) else ""
        if ok:
            stale_excused += len(ws)
        else:
            stale_count += len(ws)
        t0 = min(o_start["t"], order[old][1]) if order.get(old) else o_start["t"]
        stale_lines.append("  %d write(s) %s-%s accepted from the older holder %s; the newer holder (%s) %s; "
                           "faults between: %s%s" % (
                               len(ws), stamp(ws[0]["t"]), stamp(ws[-1]["t"]), holder(old, o_start), how,
                               holder(new, n_start), ", ".join(between(t0, ws[-1]["t"])) or "none",
                               ok))

    reg_lines, reg_bad = [], 0
    for older, newer in regressions:
        ok = excused(older, newer)
        reg_bad += 0 if ok else 1
        reg_lines.append("  #%d %s fence %d (server run %s) came after #%d %s fence %d (server run %s) at %s; "
                         "faults between: %s%s" % (
                             newer[0] + 1, tag_of.get(newer[4], newer[4]), newer[2], newer[3], older[0] + 1,
                             tag_of.get(older[4], older[4]), older[2], older[3], stamp(older[1]),
                             ", ".join(between(older[1], newer[1])) or "none",
                             ok))

    refused = sum(1 for w in writes if w["kind"] == "STALE")
    ends = [e for e in events if e["kind"] == "END"]
    after_heal = [e for e in ends if e["t"] >= heal_ms]
    kinds = {}
    for k, _, _, _ in faults:
        kinds[k] = kinds.get(k, 0) + 1

    print("faults injected: %d (%s)" % (len(faults), ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
    print("critical sections: %d started, %d finished" % (len(starts), len(ends)))
    print("overlaps: %d, all attributed to faults: %s" % (len(overlaps), "yes" if not unexplained else "NO"))
    for k, n in sorted(per_fault.items()):
        print("  during/after %-18s %d" % (k, n))
    if unexplained:
        print("  unexplained: " + "; ".join(unexplained[:10]))
    print("maximum overlap: %.0f ms" % (max(overlaps) if overlaps else 0))
    if acq_log:
        servers = len({a.get("server") for a in acqs})
        print("acquisitions the server made: %d (over %d server runs), witnesses without one: %d" % (
            len(acqs), servers, sum(1 for e in starts if e.get("owner") not in order)))
        print("tokens not above every earlier acquisition's: %d (%d excluded by the promise)" % (
            len(regressions), len(regressions) - reg_bad))
        for line in reg_lines[:20]:
            print(line)
        print("commands started after a later acquisition's command had started: %d" % late_starts)
        print("writes accepted after a later START (the reading before issue 47): %d, of them %d from a holder "
              "that acquired after that START's holder (not stale)" % (by_start, by_start_acquired_later))
    print("stale writes refused by the fenced resource: %d" % refused)
    print("stale writes accepted: %d%s" % (stale_count, " (and %d excluded by the promise)" % stale_excused
                                           if stale_excused else ""))
    for line in stale_lines[:20]:
        print(line)
    print("liveness after healing: %d critical sections finished after the faults stopped" % len(after_heal))
    ok = not unexplained and stale_count == 0 and reg_bad == 0
    print("verdict=%s" % ("ok" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
