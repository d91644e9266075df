#!/usr/bin/env python3
"""Checks the rows and meta records the NCCL profiler plugin wrote for one harness run (check_plugin.sh).

Input: the output of strata_nccl_segment_dump over every segment of the run (one JSON object per rank process).
For each rank (the "process" record's rank) it checks the "communicator" record of the communicator HASH
(comm, nranks, rank, pid, name) and the collective_device_{enqueue,start,done} call_enter rows of that
communicator: how many of each (what the scenario left in flight at collective #K), that every row carries the
communicator, the collective's count and the process's pid, that the j-th enqueue, start and done rows come in
that order in time, that every done collective has its collective_device call row, and that point-to-point
operations wrote no row. Prints one "ok NAME" or "FAIL NAME: why" line per check; exit 0 either way.
usage: check_rows.py DUMP RUN K RANKS HASH     RUN: hang | mismatch | kernel_not_started | v5 | v3
"""
import json
import sys

KINDS = ("collective_device_enqueue", "collective_device_start", "collective_device_done")


def expected(run, k, rank):
    """(enqueue rows, start rows, done rows, count of collective #k or None, op, count of the others)."""
    if run == "hang":
        return (k + (rank != 2), k + (rank != 2), k, 1024, "all_reduce", 1024)
    if run == "mismatch":
        return (k + 1, k + 1, k, 512 if rank == 2 else 1024, "all_reduce", 1024)
    if run == "kernel_not_started":
        return (k + 1, k + (rank != 1), k, 1024, "all_reduce", 1024)
    if run == "v5":
        return (k, k, k, None, "all_reduce", 1 << 20)
    return (k, k, k, None, "all_gather", 4096)  # v3


class Checks:
    def __init__(self, prefix):
        self.prefix = prefix

    def __call__(self, name, condition, why=""):
        name = f"{self.prefix}: {name}"
        print(f"ok   {name}" if condition else f"FAIL {name}: {why}")


def rank_rows(seg, comm):
    """The rank, pid, communicator record of `comm` and its state rows {kind: [(op, row)...]}, call rows by op."""
    process = next(m for m in seg["meta"] if m.get("type") == "process")
    probes = {m["id"]: m for m in seg["meta"] if m.get("type") == "probe"}
    comms = [m for m in seg["meta"] if m.get("type") == "communicator" and m.get("comm") == comm]
    rows = {kind: [] for kind in KINDS}
    for row in seg["call_enter"]:
        probe = probes.get(row[2], {})
        if row[4] == comm and probe.get("kind") in rows:
            rows[probe["kind"]].append((probe.get("op"), row))
    calls = [probes.get(r[2], {}).get("op") for r in seg["calls"]]
    return process["rank"], process["pid"], comms, rows, calls, probes


def check_rank(check, run, k, nranks, comm, seg):
    rank, pid, comms, rows, calls, probes = rank_rows(seg, comm)
    n_enq, n_start, n_done, count_k, op, count = expected(run, k, rank)
    check = Checks(f"{check.prefix} rank {rank}")
    name = "world"
    want = {"type": "communicator", "comm": comm, "nranks": 0 if run == "v3" else nranks, "rank": rank,
            "pid": pid, "name": name}
    check("one communicator record", len(comms) == 1 and comms[0] == want, f"{comms} != {want}")
    got = tuple(len(rows[kind]) for kind in KINDS)
    check(f"{n_enq} enqueued, {n_start} started, {n_done} done", got == (n_enq, n_start, n_done), f"{got}")
    every = [r for kind in KINDS for _, r in rows[kind]]
    check("rows: op, pid", all(o == op for kind in KINDS for o, _ in rows[kind]) and all(r[1] == pid for r in every))
    counts = [r[5] for _, r in rows["collective_device_enqueue"]]
    want_counts = [count] * min(n_enq, k) + ([count_k] if n_enq > k else [])
    check("enqueued counts", counts == want_counts, f"{counts} != {want_counts}")
    ordered = all(
        rows[KINDS[a]][j][1][3] <= rows[KINDS[a + 1]][j][1][3] for a in range(2) for j in range(len(rows[KINDS[a + 1]])))
    check("enqueue <= start <= done in time, collective by collective", ordered)
    check("a collective_device call row per done collective", calls.count(op) == n_done, f"{calls.count(op)}")
    check("no row for point-to-point", not any(p.get("op") in ("send", "recv") for p in probes.values()))
    return rank


def check_side(check, k, comm, seg):
    """hang: the second communicator (hash + 1) completed its k all_gathers of 256 on every rank."""
    rank, _, comms, rows, _, _ = rank_rows(seg, comm)
    got = tuple(len(rows[kind]) for kind in KINDS)
    ok = got == (k, k, k) and all(r[5] == 256 and o == "all_gather" for kind in KINDS for o, r in rows[kind])
    check(f"rank {rank}: communicator 'side' complete ({k} all_gathers of 256)", ok and len(comms) == 1, f"{got}")


def main():
    dump, run, k, nranks, comm = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5], 0)
    segs = [json.loads(line) for line in open(dump) if line.strip()]
    check = Checks(run)
    check(f"{nranks} segments, none damaged", len(segs) == nranks and not any(s["problems"] for s in segs),
          f"{len(segs)} segments")
    ranks = sorted(check_rank(check, run, k, nranks, comm, seg) for seg in segs)
    check("one segment per rank", ranks == list(range(nranks)), f"{ranks}")
    if run == "hang":
        for seg in segs:
            check_side(check, k, comm + 1, seg)


if __name__ == "__main__":
    main()
