#!/usr/bin/env python3
r"""Independent verifier for `strata diff`'s per-name table (HTA's TraceDiff.compare_traces).

Pure Python 3 standard library.  Written from the definitions of HTA's
hta/trace_diff.py and hta/common/trace.py (facebookresearch/HolisticTraceAnalysis
@ f4d0062) as written down in docs/hta-semantics.md ("Trace diff") -- NOT from
strata's C++ code.

Usage:
  verify_diff.py compute BASE TEST [selection]
  verify_diff.py check STRATA_DIFF.json BASE TEST [selection]
  verify_diff.py selftest SHARED_DATASETS_HTA_DIR

  BASE, TEST: a Kineto trace file (.json or .json.gz) or a folder of them (one
  file per rank).  selection: --base-rank R, --test-rank R, --base-step N,
  --test-step N (each repeatable), --all-ranks, --all-steps, --device
  cpu|gpu|all.

Definitions (HTA's LabeledTrace: Trace.parse_traces() only -- no rank
alignment and no last-step filter):
  * rows: traceEvents objects with a non-null "dur" and "cat", cat != "Trace".
  * rounding: when any traceEvents item has a JSON float "ts" or none at all
    (pandas' ts column is then float64), every row becomes ts = ceil(ts),
    end = floor(ts + dur), dur = end - ts, in IEEE double arithmetic.
  * stream = args.stream as a number (pd.to_numeric; not a number -> -1);
    correlation = args.correlation (missing -> -1).
  * steps: rows whose name starts with "ProfilerStep"; N from
    ProfilerStep\s*#\s*(\d+).  A row with stream < 0, or stream == 0 and
    cat == "cpu_op", is in step N when step.ts <= ts < step.ts + step.dur (the
    last such step in file order when several contain it), else in none (-1).
  * a row with stream > 0 is in the step of the CPU row its correlation links
    (transform_correlation_to_index): among rows with correlation != -1, GPU
    rows are (stream >= 0 and correlation >= 0) or named "Event Sync" /
    "Context Sync", CPU rows the others; a GPU row links to the last CPU row
    (file order) with its correlation, and only if that row's position in
    traceEvents is > 0; unlinked -> -1.  Any other row (stream == 0, not a
    cpu_op) is in no step at all.
  * rank: distributedInfo.rank (HTA reads the first '"rank": N' of the file),
    0 when absent.  A side's steps are the N of every ProfilerStep name of
    its kept rows, all ranks together.
  * selection: by default the side's smallest rank and smallest step;
    --all-ranks / --all-steps take every one.  A rank or step not on the side
    is an error.  --device cpu keeps stream == -1 rows, gpu stream != -1.
  * per name (cats merged): count of selected rows and sum of their dur (us);
    names on one side only have 0 on the other; diff = test - base.
"""

import argparse
import gzip
import json
import math
import os
import re
import sys

STEP_RE = re.compile(r"ProfilerStep\s*#\s*(\d+)")
GPU_BY_NAME = ("Event Sync", "Context Sync")


def read_json(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return json.loads(f.read())


def as_number(v, default):
    """pd.to_numeric(errors='coerce') then astype(int), as HTA normalizes stream."""
    if isinstance(v, bool) or v is None:
        return default
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if math.isfinite(v) else default
    if isinstance(v, str):
        try:
            x = float(v)
        except ValueError:
            return default
        return int(x) if math.isfinite(x) else default
    return default


def load_rows(path):
    """(rank, rows) of one trace; a row is a dict with pos, name, cat, ts, dur, stream, corr."""
    trace = read_json(path)
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    rank = 0
    info = trace.get("distributedInfo") if isinstance(trace, dict) else None
    if isinstance(info, dict) and isinstance(info.get("rank"), int):
        rank = info["rank"]
    rounding = any(isinstance(e, dict) and (isinstance(e.get("ts"), float) or "ts" not in e) for e in events)
    rows = []
    for pos, e in enumerate(events):
        if not isinstance(e, dict) or e.get("dur") is None or e.get("cat") is None or e["cat"] == "Trace":
            continue
        ts, dur = e["ts"], e["dur"]
        if rounding:
            end = float(ts) + float(dur)
            ts = math.ceil(float(ts))
            dur = math.floor(end) - ts
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        rows.append({"pos": pos, "name": e.get("name"), "cat": e["cat"], "ts": ts, "dur": dur,
                     "stream": as_number(args.get("stream"), -1), "corr": as_number(args.get("correlation"), -1)})
    assign_steps(rows)
    return rank, rows


def assign_steps(rows):
    steps = []
    for r in rows:
        name = r["name"]
        if isinstance(name, str) and name.startswith("ProfilerStep"):
            m = STEP_RE.match(name)
            if m:
                steps.append((r["ts"], r["dur"], int(m.group(1))))

    def step_at(ts):
        found = -1
        for start, dur, n in steps:
            if start <= ts < start + dur:
                found = n
        return found

    for r in rows:
        r["step"] = None  # in no step at all (HTA: NaN)
        if r["stream"] < 0 or (r["stream"] == 0 and r["cat"] == "cpu_op"):
            r["step"] = step_at(r["ts"])
    # GPU row -> last CPU row with its correlation.
    cpu_by_corr = {}
    for r in rows:
        if r["corr"] == -1:
            continue
        if not ((r["stream"] >= 0 and r["corr"] >= 0) or r["name"] in GPU_BY_NAME):
            cpu_by_corr[r["corr"]] = r
    for r in rows:
        if r["stream"] > 0:
            # A stream > 0 row is a GPU row of the link when its correlation is >= 0 (or it is a sync event
            # with one); otherwise it links to no CPU row.
            gpu_side = r["corr"] != -1 and (r["corr"] >= 0 or r["name"] in GPU_BY_NAME)
            c = cpu_by_corr.get(r["corr"]) if gpu_side else None
            r["step"] = c["step"] if c is not None and c["pos"] > 0 else -1


def trace_files(path):
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".gz") or f.endswith(".json"))
    return [path]


def load_side(path):
    ranks = {}
    for f in trace_files(path):
        rank, rows = load_rows(f)
        ranks[rank] = rows  # HTA: a later file with the same rank replaces the earlier one
    steps = set()
    for rows in ranks.values():
        for r in rows:
            name = r["name"]
            if isinstance(name, str) and name.startswith("ProfilerStep"):
                steps.add(int(name.replace("ProfilerStep#", "")))
    return ranks, sorted(steps)


def select(side, label, ranks_arg, steps_arg, all_ranks, all_steps, device):
    ranks, steps = side
    if not ranks:
        raise SystemExit(f"{label}: no rank")
    if not steps:
        raise SystemExit(f"{label}: no ProfilerStep")
    chosen_ranks = sorted(ranks) if all_ranks else (ranks_arg or sorted(ranks)[:1])
    chosen_steps = steps if all_steps else (steps_arg or steps[:1])
    for r in chosen_ranks:
        if r not in ranks:
            raise SystemExit(f"{label}: rank {r} not present")
    for s in chosen_steps:
        if s not in steps:
            raise SystemExit(f"{label}: step {s} not present")
    table = {}
    for r in chosen_ranks:
        for row in ranks[r]:
            if row["step"] is None or row["step"] not in chosen_steps:
                continue
            if device == "cpu" and row["stream"] != -1 or device == "gpu" and row["stream"] == -1:
                continue
            count, total = table.get(row["name"], (0, 0))
            table[row["name"]] = (count + 1, total + row["dur"])
    return table


def compare(base, test):
    out = {}
    for name in set(base) | set(test):
        bc, bt = base.get(name, (0, 0))
        tc, tt = test.get(name, (0, 0))
        out[name] = {"base_count": bc, "test_count": tc, "base_total_us": bt, "test_total_us": tt,
                     "diff_count": tc - bc, "diff_total_us": tt - bt}
    return out


def compute(args):
    base = select(load_side(args.base), "base", args.base_rank, args.base_step, args.all_ranks, args.all_steps,
                  args.device)
    test = select(load_side(args.test), "test", args.test_rank, args.test_step, args.all_ranks, args.all_steps,
                  args.device)
    return compare(base, test)


def check(args):
    expected = compute(args)
    with open(args.actual) as f:
        actual_rows = json.load(f)["names"]
    actual = {}
    failed = 0
    for row in actual_rows:
        if row["name"] in actual:
            print(f"MISMATCH {row['name']!r}: listed twice")
            failed += 1
        actual[row["name"]] = row
    matched = 0
    for name in sorted(set(expected) | set(actual), key=str):
        e, a = expected.get(name), actual.get(name)
        if e is None or a is None:
            print(f"MISMATCH {name!r}: {'only strata' if e is None else 'missing from strata'}")
            failed += 1
            continue
        # Durations are whole us here (integer traces, or rounded ones); 1e-6 only absorbs a decimal printed
        # by strata for a trace whose dur had fractions.
        bad = [k for k in e if abs(e[k] - a[k]) > 1e-6]
        if bad:
            print(f"MISMATCH {name!r}: " + ", ".join(f"{k} verifier {e[k]} strata {a[k]}" for k in bad))
            failed += 1
        else:
            matched += 1
    print(f"{len(expected)} names in the verifier's table, {len(actual)} in strata's: "
          f"{matched} matched, {failed} failed")
    return 1 if failed else 0


def selftest(hta_dir):
    """The figures HTA's own tests/test_trace_diff.py asserts on trace_compare/ (base rank 1, step 1010)."""
    failures = 0
    base = load_side(os.path.join(hta_dir, "trace_compare", "base"))
    test = load_side(os.path.join(hta_dir, "trace_compare", "test"))

    def expect(what, got, want):
        nonlocal failures
        ok = got == want
        failures += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {got}" + ("" if ok else f" (HTA's test: {want})"))

    expect("base ranks", sorted(base[0]), [1])
    expect("base steps", base[1], [1009, 1010])
    cpu = select(base, "base", [1], [1010], False, False, "cpu")
    gpu = select(base, "base", [1], [1010], False, False, "gpu")
    expect("base rank 1 step 1010 CPU events", sum(c for c, _ in cpu.values()), 6)
    expect("base rank 1 step 1010 GPU events", sum(c for c, _ in gpu.values()), 1)
    expect("base CPU counts", {n: c for n, (c, _) in cpu.items()},
           {"ProfilerStep#1010": 1, "aten::as_strided": 1, "aten::empty": 1, "cudaEventQuery": 1,
            "cudaLaunchKernel": 1, "nccl:all_reduce": 1})
    expect("base CPU total_duration", {n: t for n, (_, t) in cpu.items()},
           {"ProfilerStep#1010": 122149, "aten::as_strided": 0, "aten::empty": 0, "cudaEventQuery": 4,
            "cudaLaunchKernel": 4, "nccl:all_reduce": 67})
    diff = compare(cpu, select(test, "test", [1], [1010], False, False, "cpu"))
    added = sorted(n for n, d in diff.items() if d["base_count"] == 0 and d["test_count"] > 0)
    deleted = sorted(n for n, d in diff.items() if d["base_count"] > 0 and d["test_count"] == 0)
    unchanged = sorted(n for n, d in diff.items() if d["test_count"] > 0 and d["diff_count"] == 0)
    expect("ops_diff added", added, ["AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"])
    expect("ops_diff deleted", deleted, ["nccl:all_reduce"])
    expect("ops_diff unchanged", unchanged, ["ProfilerStep#1010", "aten::as_strided", "aten::empty",
                                             "cudaEventQuery", "cudaLaunchKernel"])
    print(f"selftest: {failures} failed")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("compute", "check"):
        s = sub.add_parser(name)
        if name == "check":
            s.add_argument("actual")
        s.add_argument("base")
        s.add_argument("test")
        s.add_argument("--base-rank", type=int, action="append")
        s.add_argument("--test-rank", type=int, action="append")
        s.add_argument("--base-step", type=int, action="append")
        s.add_argument("--test-step", type=int, action="append")
        s.add_argument("--all-ranks", action="store_true")
        s.add_argument("--all-steps", action="store_true")
        s.add_argument("--device", choices=("cpu", "gpu", "all"), default="all")
    st = sub.add_parser("selftest")
    st.add_argument("hta_dir")
    args = p.parse_args()
    if args.cmd == "selftest":
        return selftest(args.hta_dir)
    if args.cmd == "check":
        return check(args)
    rows = compute(args)
    names = [dict(name=n, **rows[n]) for n in sorted(rows, key=lambda n: (-abs(rows[n]["diff_total_us"]), str(n)))]
    json.dump({"names": names}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
