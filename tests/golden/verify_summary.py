#!/usr/bin/env python3
r"""Independent verifier for strata's per-rank HTA-compatible summary.

Pure Python 3 standard library.  Written from the metric definitions in
shared/DESIGN.md ("HTA-compatible metrics") and from Meta's Holistic Trace
Analysis (HTA) source as documented in docs/hta-semantics.md -- NOT from
strata's C++ code.  It is the reference the golden files are checked against.

Usage:
  verify_summary.py compute TRACE.json[.gz] [--include-last-step]
  verify_summary.py check EXPECTED.json TRACE... [--include-last-step]

Definitions (DESIGN mode, the default):
  * counted entries: traceEvents items that are JSON objects with a string
    "ph" other than "M" -> "events", "categories" (missing cat -> "(none)"),
    "steps" (N of names "ProfilerStep#N" whose cat does not start with
    "gpu_", sorted, unique).
  * metric events: entries with non-null "dur" and "cat", cat != "Trace".
  * rounding: if any traceEvents object has a fractional-typed (JSON float)
    "ts", every metric event becomes start = ceil(ts), end = floor(ts + dur).
    Arithmetic is IEEE double like HTA's pandas code (json floats); use
    --exact to do it in exact decimal arithmetic instead (diagnostic).
  * GPU event: args.stream >= 0 and args.correlation >= 0 (missing -> -1,
    non-integer strings such as "0x0" -> -1); every other event is CPU.
  * step filter (default): with >= 2 distinct ProfilerStep#N among CPU
    events, keep CPU events with start < start(last step) and GPU events whose
    correlation is that of a kept CPU event.  --include-last-step keeps CPU
    events with start <= max end of the step events instead.
  * kernel_time = max end - min start over GPU events; idle = kernel_time -
    |U(all)|; compute = |U(COMPUTATION)|; non_compute = kernel_time - compute
    - idle; overlap = 100 * |U(COMP) n U(COMM)| / |U(COMM)| (null if no COMM).
  * kernel type by name (COMMUNICATION, then MEMORY, then COMPUTATION, else
    none/"OTHER").  Untyped GPU events count in the unions and kernel_time,
    not in kernel_types, and not in top_kernels (HTA's kernel breakdown only
    analyses COMPUTATION, COMMUNICATION and MEMORY).

--mode hta switches to a closer imitation of HTA's pandas code (diagnostic,
see docs/hta-semantics.md): GPUKernelFilter also takes "Event Sync" and
"Context Sync" by name; the filter's inner merge duplicates a GPU row once per
matching CPU row; the breakdown uses every kept row with stream != -1; the
step count is the number of distinct names matching ^ProfilerStep#\d+;
--include-last-step keeps every CPU event (HTA compares shifted ts with an
unshifted "end" column); memory kernels without a stream that start inside a
ProfilerStep get stream = tid on MTIA traces (HTA's _fix_mtia_memory_kernels; not
on NVIDIA or AMD ones, where CPU-side hipMemcpyWithStream calls would match).
"""

import argparse
import gzip
import json
import math
import os
import re
import sys
from decimal import Decimal

COMM_RE = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
MEM_RE = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
NON_COMPUTE_RE = re.compile(
    r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|"
    r"(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|"
    r"(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)"
)
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
HTA_STEP_RE = re.compile(r"^ProfilerStep#(\d+)")  # HTA's ProfilerStepGroupingPattern (re.match)
TYPES = ("COMMUNICATION", "COMPUTATION", "MEMORY")
PCT_TOL = 0.01


def kernel_type(name):
    if COMM_RE.match(name):
        return "COMMUNICATION"
    if MEM_RE.match(name):
        return "MEMORY"
    if not NON_COMPUTE_RE.match(name):
        return "COMPUTATION"
    return None  # HTA's KernelType.OTHER


def as_int(v):
    """args.stream / args.correlation as HTA sees them; -1 when unusable."""
    if v is None or isinstance(v, bool):
        return -1
    if isinstance(v, int):
        return v
    if isinstance(v, (float, Decimal)):
        try:
            return int(v)
        except (ValueError, OverflowError, ArithmeticError):
            return -1
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return -1
    return -1


def is_num(v):
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def load_trace(path, exact):
    """(events, backend): the trace's events and its distributedInfo.backend (None when absent)."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        data = json.load(fh, parse_float=Decimal if exact else float)
    backend = None
    if isinstance(data, dict):
        events = data.get("traceEvents", [])
        info = data.get("distributedInfo")
        if isinstance(info, dict) and isinstance(info.get("backend"), str):
            backend = info["backend"]
    elif isinstance(data, list):
        events = data
    else:
        events = []
    return (events if isinstance(events, list) else []), backend


def is_mtia(backend, names):
    """HTA's infer_gpu_type (trace_parser.py) == "MTIA": the backend names mtia:hccl, or no CUDA/HIP launch
    but MTIA's job submission runs in the trace."""
    if backend is not None and "mtia:hccl" in backend:
        return True
    if "cudaLaunchKernel" in names or "hipLaunchKernel" in names:
        return False
    return "runFunction - job_prep_and_submit_for_execution" in names


def merge(intervals):
    """Union of [s, e) intervals -> sorted disjoint list (touching ones join)."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(merged):
    return sum(e - s for s, e in merged)


def intersect_length(a, b):
    i = j = 0
    total = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def plain(x):
    """JSON-friendly number (Decimal -> int/float; integral floats -> int)."""
    if isinstance(x, Decimal):
        return int(x) if x == x.to_integral_value() else float(x)
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def pct(x, total):
    if not total:
        return None
    return float(100 * x / total) if not isinstance(x, Decimal) else float(Decimal(100) * x / total)


def compute(path, include_last=False, exact=False, mode="design", kept_out=None):
    """The summary of one trace; `kept_out`, when a list, receives the kept metric rows (start, end, name,
    stream, correlation, is_gpu, tid, cat, pid) for the other HTA analyses (verify_hta_analyses.py)."""
    events, backend = load_trace(path, exact)
    hta = mode == "hta"
    names = {e.get("name") for e in events if isinstance(e, dict)}
    mtia = is_mtia(backend, names)
    del names

    n_events = 0
    cats = {}
    steps = set()
    rounding = False
    for e in events:
        if not isinstance(e, dict):
            continue
        if isinstance(e.get("ts"), (float, Decimal)):
            rounding = True
        ph = e.get("ph")
        if not isinstance(ph, str) or ph == "M":
            continue
        n_events += 1
        cat = e.get("cat")
        key = cat if isinstance(cat, str) else "(none)"
        cats[key] = cats.get(key, 0) + 1
        name = e.get("name")
        if isinstance(name, str) and not (isinstance(cat, str) and cat.startswith("gpu_")):
            m = STEP_RE.match(name)
            if m:
                steps.add(int(m.group(1)))

    # Metric rows: (start, end, name, stream, correlation, is_gpu, tid)
    rows = []
    for e in events:
        if not isinstance(e, dict):
            continue
        cat, dur, ts = e.get("cat"), e.get("dur"), e.get("ts")
        if cat is None or dur is None or cat == "Trace":
            continue
        if not is_num(dur) or not is_num(ts):
            continue
        if rounding:
            s = math.ceil(ts)
            en = math.floor(ts + dur)
        else:
            s, en = ts, ts + dur
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        stream = as_int(args.get("stream"))
        corr = as_int(args.get("correlation"))
        name = e.get("name")
        name = name if isinstance(name, str) else str(name)
        gpu = stream >= 0 and corr >= 0
        if hta and name in ("Event Sync", "Context Sync"):
            gpu = True
        bw = args.get("memory bandwidth (GB/s)")  # HTA's memory bandwidth counters (verify_hta_analyses.py)
        bw = bw if isinstance(bw, (int, float)) and not isinstance(bw, bool) and bw >= 0 else None
        rows.append((s, en, name, stream, corr, gpu, e.get("tid"), cat, e.get("pid"), bw))
    del events

    if hta and mtia:
        # HTA's _fix_mtia_memory_kernels, on MTIA traces only (trace.py calls it from
        # filter_mtia_kernels_for_one_rank): a memory kernel without a stream that
        # starts inside a ProfilerStep gets stream = tid (it then counts in the
        # breakdown, which takes every kept row with stream != -1).
        spans = [(r[0], r[1]) for r in rows if not r[5] and HTA_STEP_RE.match(r[2])]
        fixed = []
        for r in rows:
            if r[3] == -1 and MEM_RE.match(r[2]) and any(a <= r[0] <= b for a, b in spans):
                r = r[:3] + (as_int(r[6]),) + r[4:]
            fixed.append(r)
        rows = fixed

    # Step filter.
    cpu = [r for r in rows if not r[5]]
    if hta:
        step_rows = [r for r in cpu if HTA_STEP_RE.match(r[2])]
        n_steps = len({r[2] for r in rows if HTA_STEP_RE.match(r[2])})
    else:
        step_rows = [r for r in cpu if STEP_RE.match(r[2])]
        n_steps = len({r[2] for r in step_rows})
    filtered = n_steps >= 2 and bool(step_rows)
    if filtered:
        last_start = max(r[0] for r in step_rows)
        last_end = max(r[1] for r in step_rows)
        if include_last:
            kept_cpu = cpu if hta else [r for r in cpu if r[0] <= last_end]
        else:
            kept_cpu = [r for r in cpu if r[0] < last_start]
        mult = {}
        for r in kept_cpu:
            mult[r[4]] = mult.get(r[4], 0) + 1
        kept_gpu = []
        for r in rows:
            if r[5] and r[4] in mult:
                kept_gpu.extend([r] * (mult[r[4]] if hta else 1))
        kept = kept_gpu + kept_cpu
    else:
        kept = rows

    if kept_out is not None:
        kept_out.extend(kept)
    if hta:
        gpu_rows = [r for r in kept if r[3] != -1]
    else:
        gpu_rows = [r for r in kept if r[5]]

    result = {
        "events": n_events,
        "categories": dict(sorted(cats.items())),
        "steps": sorted(steps),
        "gpu": None,
        "include_last_step": bool(include_last),
    }
    if not gpu_rows:
        return result

    typed = [(r[0], r[1], r[2], kernel_type(r[2])) for r in gpu_rows]
    all_u = merge([(s, e) for s, e, _, _ in typed])
    comp_u = merge([(s, e) for s, e, _, t in typed if t == "COMPUTATION"])
    comm_u = merge([(s, e) for s, e, _, t in typed if t == "COMMUNICATION"])
    kernel_time = all_u[-1][1] - all_u[0][0]
    busy = length(all_u)
    idle = kernel_time - busy
    comp = length(comp_u)
    non_comp = kernel_time - comp - idle
    comm_len = length(comm_u)
    overlap = None
    if comm_len:
        overlap = pct(intersect_length(comp_u, comm_u), comm_len)

    ktypes = {}
    by_name = {}
    for s, e, name, t in typed:
        if t is None:
            continue
        d = e - s
        kt = ktypes.setdefault(t, {"count": 0, "time_us": 0})
        kt["count"] += 1
        kt["time_us"] += d
        bn = by_name.setdefault(name, {"name": name, "type": t, "count": 0, "time_us": 0})
        bn["count"] += 1
        bn["time_us"] += d
    for kt in ktypes.values():
        kt["time_us"] = plain(kt["time_us"])
    top = sorted(by_name.values(), key=lambda k: (-k["time_us"], k["name"]))[:10]
    for k in top:
        k["time_us"] = plain(k["time_us"])

    result["gpu"] = {
        "temporal_breakdown": {
            "kernel_time_us": plain(kernel_time),
            "idle_us": plain(idle),
            "compute_us": plain(comp),
            "non_compute_us": plain(non_comp),
            "idle_pct": pct(idle, kernel_time),
            "compute_pct": pct(comp, kernel_time),
            "non_compute_pct": pct(non_comp, kernel_time),
        },
        "comm_comp_overlap_pct": overlap,
        "kernel_types": {t: ktypes[t] for t in TYPES if t in ktypes},
        "top_kernels": top,
    }
    return result


# ---------------------------------------------------------------- check ----

def norm_kernel_types(kt):
    """Accept {"TYPE": {count,time_us}} or [{"type"/"kernel_type"/"name": ..., ...}]."""
    out = {}
    if isinstance(kt, dict):
        items = kt.items()
    elif isinstance(kt, list):
        items = []
        for x in kt:
            if isinstance(x, dict):
                key = x.get("type", x.get("kernel_type", x.get("name")))
                items.append((key, x))
    else:
        return out
    for key, v in items:
        if isinstance(v, dict):
            out[str(key)] = (v.get("count", 0), v.get("time_us", 0))
    return out


def num_equal(a, b):
    if not is_num(a) or not is_num(b):
        return a == b
    return float(a) == float(b)


def close(a, b, tol=PCT_TOL):
    if a is None or b is None:
        return a is None and b is None
    if not is_num(a) or not is_num(b):
        return False
    return abs(float(a) - float(b)) <= tol + 1e-9


def compare(label, want, got):
    """want = verifier result, got = strata rank entry. Returns mismatch lines."""
    bad = []

    def miss(what, w, g):
        bad.append(f"{label}: {what}: verifier={json.dumps(w)} strata={json.dumps(g)}")

    if got.get("events") != want["events"]:
        miss("events", want["events"], got.get("events"))
    gc = got.get("categories")
    if not isinstance(gc, dict) or dict(gc) != want["categories"]:
        miss("categories", want["categories"], gc)
    gs = got.get("steps")
    if not isinstance(gs, list) or [as_int(x) for x in gs] != want["steps"]:
        miss("steps", want["steps"], gs)

    wg, gg = want["gpu"], got.get("gpu")
    if wg is None or gg is None:
        if (wg is None) != (gg is None):
            miss("gpu", "null" if wg is None else "present", "null" if gg is None else "present")
        return bad
    if not isinstance(gg, dict):
        miss("gpu", "object", gg)
        return bad

    wt = wg["temporal_breakdown"]
    gt = gg.get("temporal_breakdown") if isinstance(gg.get("temporal_breakdown"), dict) else {}
    for k in ("kernel_time_us", "idle_us", "compute_us", "non_compute_us"):
        if not num_equal(wt[k], gt.get(k)):
            miss(f"temporal_breakdown.{k}", wt[k], gt.get(k))
    for k in ("idle_pct", "compute_pct", "non_compute_pct"):
        if not close(wt[k], gt.get(k)):
            miss(f"temporal_breakdown.{k}", wt[k], gt.get(k))
    if not close(wg["comm_comp_overlap_pct"], gg.get("comm_comp_overlap_pct")):
        miss("comm_comp_overlap_pct", wg["comm_comp_overlap_pct"], gg.get("comm_comp_overlap_pct"))

    wk = norm_kernel_types(wg["kernel_types"])
    gk = norm_kernel_types(gg.get("kernel_types"))
    for t in sorted(set(wk) | set(gk)):
        w = wk.get(t, (0, 0))
        g = gk.get(t, (0, 0))
        if not (num_equal(w[0], g[0]) and num_equal(w[1], g[1])):
            miss(f"kernel_types.{t}", {"count": w[0], "time_us": w[1]},
                 {"count": g[0], "time_us": g[1]})

    wtop = wg["top_kernels"]
    gtop = gg.get("top_kernels") if isinstance(gg.get("top_kernels"), list) else None
    if gtop is None:
        miss("top_kernels", len(wtop), None)
    else:
        if len(gtop) != len(wtop):
            miss("top_kernels.length", len(wtop), len(gtop))
        for i, (w, g) in enumerate(zip(wtop, gtop)):
            g = g if isinstance(g, dict) else {}
            if (w["name"] != g.get("name") or not num_equal(w["count"], g.get("count"))
                    or not num_equal(w["time_us"], g.get("time_us"))):
                miss(f"top_kernels[{i}]",
                     {k: w[k] for k in ("name", "count", "time_us")},
                     {k: g.get(k) for k in ("name", "count", "time_us")})
    return bad


def check(expected_path, traces, include_last, exact, mode):
    with open(expected_path, "rb") as fh:
        expected = json.load(fh)
    ranks = expected.get("ranks", []) if isinstance(expected, dict) else []
    by_base = {}
    for r in ranks:
        if isinstance(r, dict) and isinstance(r.get("path"), str):
            by_base.setdefault(os.path.basename(r["path"]), []).append(r)
    passed = failed = 0
    for t in traces:
        base = os.path.basename(t)
        cands = by_base.get(base, [])
        if len(cands) != 1:
            print(f"{t}: {'no' if not cands else 'ambiguous'} rank entry with path basename {base}")
            failed += 1
            continue
        try:
            want = compute(t, include_last, exact, mode)
        except Exception as exc:  # a trace the verifier cannot read is a failure
            print(f"{t}: cannot compute: {exc}")
            failed += 1
            continue
        bad = compare(t, want, cands[0])
        for line in bad:
            print(line)
        if bad:
            failed += 1
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--include-last-step", action="store_true",
                        help="keep the last ProfilerStep (HTA include_last_profiler_step=True)")
    common.add_argument("--exact", action="store_true",
                        help="round ns timestamps with exact decimal arithmetic instead of doubles")
    common.add_argument("--mode", choices=("design", "hta"), default="design",
                        help="design: DESIGN.md rules (default); hta: imitate HTA's pandas code")
    pc = sub.add_parser("compute", parents=[common], help="print the summary of one trace")
    pc.add_argument("trace")
    pk = sub.add_parser("check", parents=[common], help="compare strata output with the verifier")
    pk.add_argument("expected")
    pk.add_argument("traces", nargs="+")
    a = ap.parse_args(argv)
    if a.cmd == "compute":
        res = compute(a.trace, a.include_last_step, a.exact, a.mode)
        try:
            json.dump(res, sys.stdout, indent=1)
            sys.stdout.write("\n")
            sys.stdout.flush()
        except BrokenPipeError:
            sys.stderr.close()
        return 0
    return check(a.expected, a.traces, a.include_last_step, a.exact, a.mode)


if __name__ == "__main__":
    sys.exit(main())
