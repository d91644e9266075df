#!/usr/bin/env python3
r"""Independent check of strata's HTA idle-time breakdown, kernel launch statistics and queue length.

Pure Python 3 standard library.  Written from HTA's documented definitions (docs/hta-semantics.md §9,
HTA's docs/source/features/{idle_time_breakdown,cuda_kernel_launch_stats,augmented_counters}.rst), not
from strata's C++.  The rows are those verify_summary.py keeps (--mode hta: HTA's rounding and step rule).

Definitions:
  * device rows: kept rows with stream != -1 and cat != "gpu_user_annotation" (HTA's parser drops those);
  * the CPU row of a correlation: the first kept row with stream == -1 and that correlation (!= -1);
  * launch calls: CPU rows named cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel, cuLaunchKernelEx,
    cudaMemcpyAsync, cudaMemsetAsync, hipLaunchKernel, hipExtModuleLaunchKernel, hipMemcpyAsync,
    hipMemsetAsync, hipMemcpyWithStream; a launch pair is a device row and the launch call of its correlation;
  * idle time, per stream, rows sorted by (start, end): gap = start - previous end; host wait when the row's
    CPU row starts after the previous end, else kernel wait when gap < 30 (µs, the trace's unit), else other;
  * launch statistics over the pairs: cpu = call duration, gpu = row duration, delay = row start - call end;
    short kernel: cpu <= 50 and gpu < cpu; runtime outlier: cpu > 50; delay outlier: delay > 100;
    median = numpy's (the mean of the two middle values of an even count: strata's one median);
  * queue length, per stream of the device row: +1 at each call start, -1 at each row start, sorted by time
    with +1 first at equal times; max and mean over the running sums;
  * memory bandwidth (HTA's augmented counters): device rows whose name holds Memcpy or Memset (not nccl) and
    carry args["memory bandwidth (GB/s)"]; kind = "Memset" for names starting Memset, name[:11] for names
    starting Memcpy, else "Memcpy Unknown"; per kind +bw at the start and -bw at the end (a 0-length row lasts
    1), sorted by time with ends first at equal times, then row order; the running sums are the series; the
    summary is pandas describe() of the values above 0 (numpy's linear-interpolation quartiles, sample std);
  * kernel sequences of OP (--kernel-sequences OP): roots are the CPU rows whose name contains OP at the
    smallest nesting depth among them (depth = CPU rows of the same pid/tid enclosing the row); a root's
    kernels are the device rows whose CPU row is on the root's thread and starts within the root, by
    (start, end); pattern = root name | kernel names, kept with >= 3 kernels; counted, top 5 by (-count,
    pattern).

Usage: verify_hta_analyses.py STRATA_SUMMARY.json TRACE... [--include-last-step] [--kernel-sequences OP]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify_summary  # noqa: E402

LAUNCH_CALLS = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync",
    "cudaMemsetAsync", "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync",
    "hipMemcpyWithStream",
}
KERNEL_WAIT_BELOW = 30
RUNTIME_CUTOFF = 50
DELAY_CUTOFF = 100


def analyses(kept):
    """(idle by category, launch stats, queue by stream) of one rank's kept rows, or None without device rows."""
    device = [r for r in kept if r[3] != -1 and r[7] != "gpu_user_annotation"]
    if not device:
        return None
    cpu_of = {}
    for r in kept:
        if r[3] == -1 and r[4] != -1 and r[4] not in cpu_of:
            cpu_of[r[4]] = r
    idle = {"host_wait": 0, "kernel_wait": 0, "other": 0}
    by_stream = {}
    for r in device:
        by_stream.setdefault(r[3], []).append(r)
    for rows in by_stream.values():
        rows.sort(key=lambda r: (r[0], r[1]))
        for prev, cur in zip(rows, rows[1:]):
            gap = cur[0] - prev[1]
            call = cpu_of.get(cur[4]) if cur[4] != -1 else None
            if call is not None and call[0] > prev[1]:
                idle["host_wait"] += gap
            elif gap < KERNEL_WAIT_BELOW:
                idle["kernel_wait"] += gap
            else:
                idle["other"] += gap
    pairs = [(cpu_of[r[4]], r) for r in device if r[4] != -1 and r[4] in cpu_of and cpu_of[r[4]][2] in LAUNCH_CALLS]
    launches = None
    if pairs:
        delays = sorted(g[0] - c[1] for c, g in pairs)
        launches = {
            "launches": len(pairs),
            "short_kernels": sum(1 for c, g in pairs if c[1] - c[0] <= RUNTIME_CUTOFF and g[1] - g[0] < c[1] - c[0]),
            "runtime_outliers": sum(1 for c, g in pairs if c[1] - c[0] > RUNTIME_CUTOFF),
            "launch_delay_outliers": sum(1 for d in delays if d > DELAY_CUTOFF),
            "delay_median": (delays[(len(delays) - 1) // 2] + delays[len(delays) // 2]) / 2,
            "delay_max": delays[-1],
        }
    changes = {}
    for c, g in pairs:
        changes.setdefault(g[3], []).extend([(c[0], 1), (g[0], -1)])
    queues = {}
    for stream, ch in changes.items():
        ch.sort(key=lambda x: (x[0], -x[1]))
        run, values = 0, []
        for _, d in ch:
            run += d
            values.append(run)
        queues[stream] = {"max": max(values), "mean": sum(values) / len(values), "points": len(values)}
    return idle, launches, queues, memory_bandwidth(device)


def quartile(values, q):
    """numpy's default (linear) quantile of sorted values."""
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (pos - lo) * (values[hi] - values[lo])


def memory_bandwidth(device):
    """{kind: summary} of HTA's memory bandwidth counters over the device rows."""
    changes = {}
    for order, r in enumerate(r for r in device if r[9] is not None and ("Memcpy" in r[2] or "Memset" in r[2])
                              and "nccl" not in r[2]):
        name = r[2]
        kind = "Memset" if name.startswith("Memset") else name[:11] if name.startswith("Memcpy") else "Memcpy Unknown"
        end = r[0] + 1 if r[1] - r[0] == 0 else r[1]
        changes.setdefault(kind, []).extend([(r[0], 1, order, r[9]), (end, 0, order, -r[9])])
    out = {}
    for kind, ch in changes.items():
        ch.sort(key=lambda c: (c[0], c[1], c[2]))
        run, values = 0.0, []
        for c in ch:
            run += c[3]
            values.append(run)
        up = sorted(v for v in values if v > 0)
        s = {"changes": len(values), "points": len(up)}
        if up:
            mean = sum(up) / len(up)
            s.update(mean_gbps=mean, min_gbps=up[0], max_gbps=up[-1], p25_gbps=quartile(up, 0.25),
                     p50_gbps=quartile(up, 0.5), p75_gbps=quartile(up, 0.75),
                     std_gbps=(sum((v - mean) ** 2 for v in up) / (len(up) - 1)) ** 0.5 if len(up) > 1 else None)
        out[kind] = s
    return out


def sequences(kept, op):
    """The top 5 (pattern, count) of OP's kernel sequences."""
    cpu = [r for r in kept if r[3] == -1]
    threads = {}
    for i, r in enumerate(cpu):
        threads.setdefault((r[8], r[6]), []).append(i)
    depth = {}
    for idx in threads.values():
        idx.sort(key=lambda i: (cpu[i][0], -cpu[i][1]))
        ends = []
        for i in idx:
            while ends and ends[-1] <= cpu[i][0]:
                ends.pop()
            depth[i] = len(ends)
            ends.append(cpu[i][1])
    cands = [i for i in range(len(cpu)) if op in cpu[i][2]]
    if not cands:
        return []
    low = min(depth[i] for i in cands)
    cpu_of = {}
    for r in kept:
        if r[3] == -1 and r[4] != -1 and r[4] not in cpu_of:
            cpu_of[r[4]] = r
    device = [r for r in kept if r[3] != -1 and r[7] != "gpu_user_annotation" and r[4] in cpu_of]
    counts = {}
    for i in cands:
        if depth[i] != low:
            continue
        root = cpu[i]
        ks = sorted((k for k in device if (cpu_of[k[4]][8], cpu_of[k[4]][6]) == (root[8], root[6])
                     and root[0] <= cpu_of[k[4]][0] <= root[1]), key=lambda k: (k[0], k[1]))
        if len(ks) < 3:
            continue
        pattern = "|".join([root[2]] + [k[2] for k in ks])
        counts[pattern] = counts.get(pattern, 0) + 1
    return sorted(counts.items(), key=lambda pc: (-pc[1], pc[0]))[:5]


def close(a, b):
    return a is not None and b is not None and abs(float(a) - float(b)) <= 1e-3 + 1e-9 * abs(float(b))


def compare(label, want, rank):
    bad = []
    if want is None:
        if "idle_time_breakdown" in rank:
            bad.append(f"{label}: strata has an idle-time breakdown, the verifier finds no device row")
        return bad
    idle, launches, queues, bandwidth = want
    got_idle = rank.get("idle_time_breakdown") or {}
    for cat, v in idle.items():
        if not close(v, (got_idle.get(cat) or {}).get("us")):
            bad.append(f"{label}: idle {cat}: verifier {v}, strata {(got_idle.get(cat) or {}).get('us')}")
    got = rank.get("kernel_launches")
    if (launches is None) != (got is None):
        bad.append(f"{label}: kernel launches: verifier {launches}, strata {got}")
    elif launches is not None:
        pairs = [("launches", got.get("launches")), ("short_kernels", got.get("short_kernels")),
                 ("runtime_outliers", got["runtime_outliers"]["count"]),
                 ("launch_delay_outliers", got["launch_delay_outliers"]["count"]),
                 ("delay_median", got["launch_delay"]["median_us"]), ("delay_max", got["launch_delay"]["max_us"])]
        for key, g in pairs:
            if not close(launches[key], g):
                bad.append(f"{label}: launches {key}: verifier {launches[key]}, strata {g}")
    got_q = {q["stream"]: q for q in rank.get("queue_length") or []}
    if set(got_q) != set(queues):
        bad.append(f"{label}: queue streams: verifier {sorted(queues)}, strata {sorted(got_q)}")
    for stream, q in queues.items():
        g = got_q.get(stream)
        if g and not (g["max"] == q["max"] and g["points"] == q["points"] and abs(g["mean"] - q["mean"]) < 1e-3):
            bad.append(f"{label}: queue stream {stream}: verifier {q}, strata {g}")
    got_bw = {k["kind"]: k for k in rank.get("memory_bandwidth") or []}
    if set(got_bw) != set(bandwidth):
        bad.append(f"{label}: memory bandwidth kinds: verifier {sorted(bandwidth)}, strata {sorted(got_bw)}")
    for kind, want_k in bandwidth.items():
        g = got_bw.get(kind) or {}
        for key, v in want_k.items():
            if not (v is None and g.get(key) is None) and not close(v, g.get(key)):
                bad.append(f"{label}: memory bandwidth {kind} {key}: verifier {v}, strata {g.get(key)}")
    return bad


def main(argv):
    include_last = "--include-last-step" in argv
    args = [a for a in argv if a != "--include-last-step"]
    op = None
    if "--kernel-sequences" in args:
        at = args.index("--kernel-sequences")
        op = args[at + 1]
        del args[at:at + 2]
    if len(args) < 2:
        print(__doc__)
        return 2
    with open(args[0], "rb") as fh:
        summary = json.load(fh)
    by_base = {os.path.basename(r["path"]): r for r in summary.get("ranks", []) if isinstance(r.get("path"), str)}
    failed = 0
    for trace in args[1:]:
        kept = []
        verify_summary.compute(trace, include_last, False, "hta", kept_out=kept)
        rank = by_base.get(os.path.basename(trace))
        bad = ["no rank entry"] if rank is None else compare(os.path.basename(trace), analyses(kept), rank)
        if rank is not None and op is not None:
            want = sequences(kept, op)
            got = [(s["pattern"], s["count"]) for s in rank.get("kernel_sequences") or []]
            if want != got or not want:
                bad.append(f"{os.path.basename(trace)}: kernel sequences of {op}: verifier {want}, strata {got}")
        for line in bad:
            print(line)
        failed += bool(bad)
    print(f"{len(args) - 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
