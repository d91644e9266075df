#!/usr/bin/env python3
"""`strata export` read back by Perfetto's own trace processor: what ui.perfetto.dev would show.

The Perfetto UI runs the same trace processor (as WebAssembly). This loads each exported timeline with a
`trace_processor_shell` and checks, from its tables, that nothing was lost or moved:
  - no import stat of severity error or data_loss;
  - one process per rank, named as the export names it, and every thread name;
  - as many slices as the export has complete ("X") and instant events, flows as flow starts, counter values
    as counter ("C") values;
  - every slice at the time and duration the export wrote (to the nanosecond rounding of microseconds);
  - the ranks aligned: the k-th all-reduce kernel of each rank ends, in Perfetto's timeline, within the
    export's own clock residual (+10 us) of the other ranks' k-th, where without the offsets it would not.
Inputs: the bundled example (2 ranks, Kineto), a synthetic 8-rank job with up to 1 ms of clock skew per rank
and counters, and, when given, any more export inputs (e.g. a `strata record` folder).
Not part of CI: Perfetto is neither a Debian nor an npm package; build it with the notes in
docs/perfetto.md and run this by hand.
usage: check_trace_processor.py TRACE_PROCESSOR_SHELL STRATA_BINARY [EXPORT_INPUT...]
Prints one line per check and "N passed, N failed" last; exit 1 on any failure.
"""
import collections
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

TP, STRATA = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
results = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + name + ("" if ok or not detail else ": " + detail), flush=True)


def query(trace, sql):
    """Rows (dicts) of one SQL query over TRACE in the trace processor."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as q:
        q.write(sql)
        q.flush()
        r = subprocess.run([TP, "-q", q.name, trace], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"trace_processor_shell failed on {trace}: {r.stderr[-500:]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def export(inputs, out, *extra):
    r = subprocess.run([STRATA, "export", "-o", out, *extra, *inputs], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"strata export {' '.join(inputs)} failed: {r.stderr}")
    with open(out) as f:
        return json.load(f)


def expected(doc):
    """What the export wrote: process and thread names, slices, flows and counter values."""
    procs, threads, slices = {}, set(), []
    flows = counters = 0
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif ph == "M" and e.get("name") == "thread_name":
            threads.add((e["pid"], e["tid"], e["args"]["name"]))
        elif ph == "X":
            slices.append((e["pid"], round(e["ts"] * 1000), round(e["dur"] * 1000), e["name"]))
        elif ph in ("I", "i"):
            slices.append((e["pid"], round(e["ts"] * 1000), 0, e["name"]))
        elif ph == "s":
            flows += 1
        elif ph == "C":
            counters += sum(1 for v in e.get("args", {}).values() if isinstance(v, (int, float)))
    return procs, threads, slices, flows, counters


def median_spread_ns(ends_by_pid):
    """Median over k of the spread of the k-th end across ranks ({pid: [end ns]}), and how many k."""
    n = min(len(v) for v in ends_by_pid.values())
    spreads = sorted(max(v[k] for v in ends_by_pid.values()) - min(v[k] for v in ends_by_pid.values())
                     for k in range(n))
    return (spreads[len(spreads) // 2] if spreads else None), n


def slices_moved(want, got):
    """Slices of WANT (pid, ts ns, dur ns, name) that GOT does not have within 1 ns (Perfetto reads the
    microsecond decimals as floating point and truncates: 32.102 us becomes 32101 ns)."""
    theirs_by, ours_by = collections.defaultdict(list), collections.defaultdict(list)
    for pid, ts, dur, name in got:
        theirs_by[(pid, name)].append((ts, dur))
    for pid, ts, dur, name in want:
        ours_by[(pid, name)].append((ts, dur))
    moved = []
    for key, ours in ours_by.items():
        theirs, ours = sorted(theirs_by.get(key, [])), sorted(ours)
        if len(theirs) != len(ours) or any(abs(a[0] - b[0]) > 1 or abs(a[1] - b[1]) > 1 for a, b in zip(ours, theirs)):
            moved.append((key, ours[:2], theirs[:2]))
    return moved


def check_one(label, doc, path):
    stats = query(path, "select name, severity, value from stats where value > 0 and severity in "
                        "('error', 'data_loss')")
    check(f"{label}: no import errors or data loss", not stats, str(stats))
    procs, threads, slices, flows, counters = expected(doc)
    got = {int(r["pid"]): r["name"] for r in query(path, "select pid, name from process where pid is not null")
           if r["name"]}
    check(f"{label}: one process per rank, named ({len(procs)})", all(got.get(p) == n for p, n in procs.items()),
          f"export {procs}, perfetto {got}")
    got_threads = {(int(r["pid"]), int(r["tid"]), r["name"]) for r in query(
        path, "select p.pid as pid, t.tid as tid, t.name as name from thread t join process p using(upid) "
              "where t.name is not null")}
    check(f"{label}: every thread named ({len(threads)})", threads <= got_threads,
          f"missing {sorted(threads - got_threads)[:5]}")
    rows = query(path, "select p.pid as pid, s.ts as ts, s.dur as dur, s.name as name from slice s "
                       "left join thread_track tt on s.track_id = tt.id left join thread t using(utid) "
                       "left join process_track pt on s.track_id = pt.id "
                       "left join process p on p.upid = coalesce(t.upid, pt.upid)")
    moved = slices_moved(slices, [(int(r["pid"]) if r["pid"] else -1, int(r["ts"]), int(r["dur"]), r["name"])
                                  for r in rows])
    check(f"{label}: every slice at its time and duration ({len(slices)})", len(rows) == len(slices) and not moved,
          f"perfetto has {len(rows)} slices, export {len(slices)}; moved or missing: {moved[:3]}")
    n_flows = int(query(path, "select count(*) as n from flow")[0]["n"])
    check(f"{label}: every flow arrow ({flows})", n_flows == flows, f"perfetto {n_flows}")
    n_counters = int(query(path, "select count(*) as n from counter")[0]["n"])
    check(f"{label}: every counter value ({counters})", n_counters == counters, f"perfetto {n_counters}")
    return rows


def check_alignment(label, doc, rows, slack_us):
    """The all-reduce kernels end together on the GPUs of all ranks: in Perfetto's timeline their ends must
    agree within the export's clock residual (plus SLACK_US), where without the applied offsets they would not."""
    offsets = doc.get("otherData", {}).get("clock_offsets_us", {})
    kernels = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        if r["pid"] and r["name"].startswith("nccl") and "Kernel" in r["name"] and "AllReduce" in r["name"]:
            kernels[r["name"]][int(r["pid"])].append(int(r["ts"]) + int(r["dur"]))
    for name, by_pid in kernels.items():
        for v in by_pid.values():
            v.sort()
        aligned, n = median_spread_ns(by_pid)
        unaligned, _ = median_spread_ns({p: [e + round(1000 * offsets.get(str(p), 0)) for e in v]
                                         for p, v in by_pid.items()})
        residual = float(doc.get("otherData", {}).get("clock_residual_us") or 0)
        check(f"{label}: ranks aligned ({len(by_pid)} ranks x {n} {name[:24]}...: ends within {aligned} ns in "
              f"Perfetto, {unaligned} ns without the applied offsets)",
              len(by_pid) > 1 and aligned <= (residual + slack_us) * 1000 < unaligned,
              f"residual {residual} us + slack {slack_us} us")
    check(f"{label}: all-reduce kernels found to check the alignment on", bool(kernels))


def main():
    with tempfile.TemporaryDirectory(prefix="strata-tp-") as tmp:
        example = os.path.join(tmp, "example.json")
        doc = export([os.path.join(ROOT, "examples", "ddp-2rank-slow-compute")], example)
        check_one("example", doc, example)  # gloo on the CPU: no kernel that ends together to align on
        job = os.path.join(tmp, "synth")
        subprocess.run([STRATA, "synth", "-o", job, "--ranks", "8", "--steps", "4", "--counters", "--fault",
                        "slow_compute", "--fault-rank", "3", "--clock-skew-us", "1000", "--seed", "11"],
                       check=True, capture_output=True)
        synth = os.path.join(tmp, "synth.json")
        doc = export([job], synth)
        check_alignment("synth 8 ranks, 1 ms skew", doc, check_one("synth 8 ranks, 1 ms skew", doc, synth), 10)
        for i, extra in enumerate(sys.argv[3:]):
            out = os.path.join(tmp, f"extra-{i}.json")
            doc = export([extra], out)
            check_one(os.path.basename(extra.rstrip("/")), doc, out)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
