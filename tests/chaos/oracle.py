#!/usr/bin/env python3
"""Reads what the witnesses of one scenario left in DIR and prints a verdict.

  oracle.py DIR [--since WALL_MS] [--details]

Prints key=value lines (for the shell scenarios to check):
  starts ends terms       critical sections begun / finished / told to stop
  overlaps                witnesses that found the critical section busy (flock -n)
  overlap_max_ms          longest overlap (from OVERLAP to OVERLAP_END, or to the
                          overlapping witness's own end when the other outlived it)
  counter lost_updates    the read-sleep-write counter, and ENDs - counter
  fence_violations        consecutive START pairs (in START order) whose fences do
                          not strictly increase
  accepted stale_rejected writes the fenced resource accepted / refused
  stale_accepted          writes accepted from a holder after a later holder had
                          STARTed (i.e. written): the resource let an old token in
"""
import argparse
import os
import sys


def parse(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 2:
                    continue
                rec = {"kind": parts[0], "t": float(parts[1])}
                for kv in parts[2:]:
                    k, _, v = kv.partition("=")
                    rec[k] = v
                out.append(rec)
    except FileNotFoundError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--since", type=float, default=0.0)
    ap.add_argument("--details", action="store_true")
    a = ap.parse_args()
    events = [e for e in parse(os.path.join(a.dir, "events")) if e["t"] >= a.since]
    writes = [w for w in parse(os.path.join(a.dir, "resource.log")) if w["t"] >= a.since]
    events.sort(key=lambda e: e["t"])
    writes.sort(key=lambda w: w["t"])

    by_pid = {}
    for e in events:
        by_pid.setdefault(e["pid"], []).append(e)
    starts = [e for e in events if e["kind"] == "START"]
    ends = [e for e in events if e["kind"] == "END"]
    terms = [e for e in events if e["kind"] == "TERM"]
    overlap_events = [e for e in events if e["kind"] == "OVERLAP"]

    details = []
    overlap_lengths = []
    for o in overlap_events:
        mine = by_pid.get(o["pid"], [])
        stop = None
        for e in mine:
            if e["t"] >= o["t"] and e["kind"] in ("OVERLAP_END", "END", "TERM"):
                stop = e
                break
        if stop is None:
            stop = mine[-1] if mine else o
        length = stop["t"] - o["t"]
        overlap_lengths.append(length)
        # who was inside: started before o, not ended (END) before o
        inside = []
        for s in starts:
            if s["t"] < o["t"] and s["pid"] != o["pid"]:
                ended = [e for e in by_pid.get(s["pid"], []) if e["kind"] == "END" and e["t"] <= o["t"]]
                if not ended:
                    inside.append("%s(fence %s)" % (s.get("tag"), s.get("fence")))
        details.append("overlap: %s (fence %s) at %.3f found the section busy (inside: %s); %.0fms, until %s"
                       % (o.get("tag"), o.get("fence"), o["t"], ", ".join(inside[-3:]) or "?", length, stop["kind"]))

    fence_violations = 0
    prev = None
    for s in starts:
        f = int(s.get("fence", "-1"))
        if f < 0:
            continue
        if prev is not None and f <= prev[0]:
            fence_violations += 1
            details.append("fence order: %s started with fence %d after %s with fence %d"
                           % (s.get("tag"), f, prev[1], prev[0]))
        prev = (f, s.get("tag"))

    start_of = {s["pid"]: s["t"] for s in starts}
    first_seen = {}
    for e in events:
        first_seen.setdefault(e["pid"], e["t"])
    start_times = sorted(start_of.values())
    accepted = [w for w in writes if w["kind"] == "ACCEPT"]
    stale_rejected = [w for w in writes if w["kind"] == "STALE"]
    stale_accepted = 0
    import bisect
    for w in accepted:
        mine = start_of.get(w["pid"], first_seen.get(w["pid"]))
        if mine is None:
            continue
        # a START strictly after mine and before this write
        i = bisect.bisect_right(start_times, mine)
        if i < len(start_times) and start_times[i] < w["t"]:
            stale_accepted += 1
            details.append("stale write accepted: tag %s fence %s at %.3f (%s) after a later holder started at %.3f"
                           % (w.get("tag"), w.get("fence"), w["t"], w.get("what"), start_times[i]))

    try:
        with open(os.path.join(a.dir, "counter")) as f:
            counter = int(f.read().strip() or "0")
    except FileNotFoundError:
        counter = 0

    print("starts=%d" % len(starts))
    print("ends=%d" % len(ends))
    print("terms=%d" % len(terms))
    print("overlaps=%d" % len(overlap_events))
    print("overlap_max_ms=%d" % (max(overlap_lengths) if overlap_lengths else 0))
    print("counter=%d" % counter)
    print("lost_updates=%d" % (len(ends) - counter))
    print("fence_violations=%d" % fence_violations)
    print("accepted=%d" % len(accepted))
    print("stale_rejected=%d" % len(stale_rejected))
    print("stale_accepted=%d" % stale_accepted)
    if a.details:
        for d in details:
            print("# " + d)


if __name__ == "__main__":
    sys.exit(main())
