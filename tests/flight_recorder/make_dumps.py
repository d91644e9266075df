#!/usr/bin/env python3
"""Writes PyTorch Flight Recorder dumps of a constructed job for strata's tests (issue 48 item 2).

usage: make_dumps.py CASE OUTDIR [--version V]

Each dump is one rank's, written the way torch writes it: a dict pickled at protocol 2 (pickle.dumps(d,
protocol=2)) to OUTDIR/nccl_trace_rank_<rank> (torch's default prefix, TORCH_NCCL_DEBUG_INFO_TEMP_FILE), or,
for the *json cases, its JSON form (keys sorted as nlohmann's json writes them, pg_status numbers as strings,
unseen times as 0, process_group as a list) to OUTDIR/fr_json_<rank> (no suffix: sniffed by content). The
keys and their meaning are docs/flight-recorder.md's; which version added which key is not pinned from
torch's history, so the builder drops keys by an assumed table (FIELDS_FROM) to exercise every optional one:
strata treats all but version, profiling_name and a sequence number as optional.

Cases (what each must diagnose is asserted by tests/unit/flight_recorder_test.cc):
  hang              4 ranks; ranks 0, 2, 3 wait in all_reduce #6 of pg 0; rank 1 stopped after #5
  missing_dump      the same, without rank 1's dump
  size_mismatch     4 ranks; at #4 rank 2 all_reduces [[512]] where the others all_reduce [[1024]]
  dtype_mismatch    4 ranks; at #3 rank 3 all_reduces BFloat16 where the others all_reduce Float
  p2p_hang          2 ranks; rank 0 sends 0->1 p2p #3; rank 1 received #1 and #2 and never enqueued #3
  p2p_ok            2 ranks; every send received
  p2p_subgroup      4 ranks; in pg 1 (pp) of ranks 2, 3 (names in group ranks) rank 2 sends 0->1 p2p #2, which
                    rank 3 never enqueued
  p2p_size_mismatch 2 ranks; rank 0 sends [[1024]] at p2p #1 where rank 1 receives [[512]]
  coalesced         3 ranks; coalesced groups of two all_reduces; rank 1 never enqueued the group #4
  coalesced_mismatch  3 ranks; in the coalesced group #3 rank 2's second all_reduce is [[256]]
  ring_wrapped      3 ranks, rings of 8; ranks 0, 2 hold #13..#20 (waiting in #13), rank 1 #5..#12 (all done)
  ring_unknown      2 ranks, rings of 8, no pg_status, nothing completed in either ring: cannot be judged
  wavefront         4 ranks, pg 0 of all and pg 1 (tp) of ranks 2, 3: ranks 0, 1 wait in pg 0 #6, rank 2 in
                    pg 1 #4, which rank 3 never enqueued (rank 3 is the culprit, rank 2 waits elsewhere)
  torchcomms        2 ranks, torchcomms' dialect (one counter for two groups); rank 1 never enqueued the
                    third all_gather of group 1 (global #5 on rank 0)
  hang_json         the hang case in the JSON form
"""
import json
import os
import pickle
import sys

T0 = 1_764_000_000_000_000_000  # ns, 2025-11-24
C10D = "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"

# Keys assumed absent before a version (minor of 2.x): the builder drops them from older dumps.
FIELDS_FROM = {
    "pg_status": 3, "input_dtypes": 4, "output_dtypes": 4, "timeout_ms": 4, "is_p2p": 4, "duration_ms": 5,
    "thread_id": 7, "thread_name": 7, "comm_lib_version": 8,
}


def frames(fn, line):
    return [{"name": "all_reduce", "filename": C10D, "line": 2501},
            {"name": fn, "filename": "/job/train.py", "line": line},
            {"name": "<module>", "filename": "/job/train.py", "line": 90}]


class Rank:
    """One rank's ring: entries appended oldest first; sequence numbers counted per group as torch does."""

    def __init__(self, rank, ring=2000):
        self.rank, self.ring = rank, ring
        self.entries, self.coll, self.p2p, self.op = [], {}, {}, {}
        self.status = {}

    def add(self, name, state, pg="0", desc="default_pg", pg_id=0, sizes=((1024,),), dtype="Float", p2p=False,
            fn="train_step", line=42, same_seq=False, t=None):
        counter = self.p2p if p2p else self.coll
        if not same_seq:
            counter[pg] = counter.get(pg, 0) + 1
        self.op[pg] = self.op.get(pg, 0) + 1
        seq = counter[pg]
        t = T0 + len(self.entries) * 1_000_000 if t is None else t
        e = {
            "record_id": len(self.entries), "pg_id": pg_id, "process_group": (pg, desc),
            "collective_seq_id": self.coll.get(pg, 0), "p2p_seq_id": self.p2p.get(pg, 0), "op_id": self.op[pg],
            "profiling_name": name, "time_created_ns": t,
            "input_sizes": [list(s) for s in sizes], "output_sizes": [list(s) for s in sizes],
            "input_dtypes": [dtype] * len(sizes), "output_dtypes": [dtype] * len(sizes),
            "state": state, "time_discovered_started_ns": t + 10 if state != "scheduled" else None,
            "time_discovered_completed_ns": t + 500 if state == "completed" else None,
            "retired": state == "completed", "timeout_ms": 600000, "is_p2p": p2p,
            "thread_id": "140000", "thread_name": "pt_main_thread", "frames": frames(fn, line),
        }
        if state == "completed":
            e["duration_ms"] = 0.4
        self.entries.append(e)
        if not p2p:
            st = self.status.setdefault(pg_id, [0, 0, 0])
            st[0] = max(st[0], seq)
            if state != "scheduled":
                st[1] = max(st[1], seq)
            if state == "completed":
                st[2] = max(st[2], seq)
        return e

    def dump(self, version="2.10", groups=None, with_status=True):
        minor = int(version.split(".")[1])
        entries = self.entries[-self.ring:]
        for e in entries:
            for key, since in FIELDS_FROM.items():
                if minor < since:
                    e.pop(key, None)
        d = {"version": version, "pg_config": groups or group("0", "default_pg", [0, 1, 2, 3]), "entries": entries}
        if with_status and minor >= FIELDS_FROM["pg_status"]:
            d["pg_status"] = {str(pg): {"last_enqueued_collective": s[0], "last_started_collective": s[1],
                                        "last_completed_collective": s[2]} for pg, s in self.status.items()}
        if minor >= FIELDS_FROM["comm_lib_version"]:
            d["comm_lib_version"] = "2.21.5"
        return d


def group(name, desc, ranks):
    return {name: {"name": name, "desc": desc, "ranks": str(list(ranks))}}


def all_reduces(ranks, n, state="completed"):
    for r in ranks:
        for _ in range(n):
            r.add("nccl:all_reduce", state)


def hang(world=4, stopped=1):
    ranks = [Rank(r) for r in range(world)]
    all_reduces(ranks, 5)
    for r in ranks:
        if r.rank != stopped:
            r.add("nccl:all_reduce", "started")
    return ranks


def mismatch(at, odd, **kwargs):
    ranks = [Rank(r) for r in range(4)]
    all_reduces(ranks, at - 1)
    for r in ranks:
        r.add("nccl:all_reduce", "started", **(kwargs if r.rank == odd else {}))
    return ranks


def p2p(hang_at):
    ranks = [Rank(0), Rank(1)]
    all_reduces(ranks, 1)
    for i in range(1, 4):
        last = i == 3 and hang_at
        ranks[0].add("nccl:send 0->1", "started" if last else "completed", p2p=True)
        if not last:
            ranks[1].add("nccl:recv 1<-0", "completed", p2p=True)
    return ranks


def p2p_subgroup():
    ranks = [Rank(r) for r in range(4)]
    all_reduces(ranks, 2)
    ranks[2].add("nccl:send 0->1", "completed", pg="1", desc="pp", pg_id=1, p2p=True)
    ranks[3].add("nccl:recv 1<-0", "completed", pg="1", desc="pp", pg_id=1, p2p=True)
    ranks[2].add("nccl:send 0->1", "started", pg="1", desc="pp", pg_id=1, p2p=True)
    return ranks


def p2p_size_mismatch():
    ranks = [Rank(0), Rank(1)]
    ranks[0].add("nccl:send 0->1", "started", p2p=True)
    ranks[1].add("nccl:recv 1<-0", "started", p2p=True, sizes=((512,),))
    return ranks


def coalesced_group(r, state, second=((1024,),)):
    r.add("nccl:all_reduce", "scheduled")
    r.add("nccl:all_reduce", "scheduled", same_seq=True, sizes=second)
    r.add("nccl:coalesced", state, same_seq=True, sizes=())


def coalesced(mismatched):
    ranks = [Rank(r) for r in range(3)]
    all_reduces(ranks, 2)
    for r in ranks:
        coalesced_group(r, "started" if mismatched else "completed",
                        ((256,),) if mismatched and r.rank == 2 else ((1024,),))
    if not mismatched:
        for r in ranks:
            if r.rank != 1:
                coalesced_group(r, "started")
    return ranks


def ring_wrapped():
    ranks = [Rank(r, ring=8) for r in range(3)]
    all_reduces(ranks, 12)
    for r in ranks:
        if r.rank != 1:
            r.add("nccl:all_reduce", "started")
            for _ in range(7):
                r.add("nccl:all_reduce", "scheduled")
    return ranks


def ring_unknown():
    ranks = [Rank(r, ring=8) for r in range(2)]
    all_reduces(ranks, 10)
    for r in ranks:
        for _ in range(10 if r.rank == 0 else 8):
            r.add("nccl:all_reduce", "started")
    return ranks  # rings: rank 0 #13..#20, rank 1 #11..#18, nothing completed in either


def wavefront():
    ranks = [Rank(r) for r in range(4)]
    all_reduces(ranks, 5)
    for r in ranks[2:]:
        for _ in range(3):
            r.add("nccl:all_gather", "completed", pg="1", desc="tp", pg_id=1)
    for r in ranks[:2]:
        r.add("nccl:all_reduce", "started")
    ranks[2].add("nccl:all_gather", "started", pg="1", desc="tp", pg_id=1)
    return ranks


def torchcomms_dumps():
    """torchcomms: one counter (collective_seq_id = op_id = global index) for groups 0 and 1, p2p_seq_id 0."""
    out = {}
    for rank, n in ((0, 6), (1, 5)):
        entries = []
        for i in range(n):
            pg = str(i % 2)
            name = "nccl:all_reduce" if pg == "0" else "nccl:all_gather"
            state = "started" if (rank == 0 and i == 5) else "completed"
            t = T0 + i * 1_000_000
            entries.append({
                "record_id": i, "pg_id": int(pg), "process_group": (pg, "default_pg" if pg == "0" else "tp"),
                "thread_name": "pt_main_thread", "thread_id": "140000", "collective_seq_id": i, "p2p_seq_id": 0,
                "op_id": i, "profiling_name": name, "time_created_ns": t, "input_sizes": [[4096]],
                "input_dtypes": ["Float"], "output_sizes": [[4096]], "output_dtypes": ["Float"], "state": state,
                "time_discovered_started_ns": t + 10, "time_discovered_completed_ns": t + 500 if state == "completed"
                else None, "retired": state == "completed", "timeout_ms": 600000, "is_p2p": False,
                "frames": frames("train_step", 42 + i)})
        groups = dict(group("0", "default_pg", [0, 1]), **group("1", "tp", [0, 1]))
        out[rank] = {"version": "2.10", "comm_lib_version": "2.27.5", "pg_config": groups,
                     "pg_status": {"0": {"last_enqueued_collective": 9, "last_started_collective": 9,
                                         "last_completed_collective": 9}},
                     "entries": entries}
    return out


def as_json(d):
    """The JSON form: pg_status numbers as strings, unseen times as 0, tuples as lists, keys sorted."""
    d = json.loads(json.dumps(d))
    for s in d.get("pg_status", {}).values():
        for k in s:
            s[k] = str(s[k])
    for e in d.get("entries", []):
        for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            if k in e and e[k] is None:
                e[k] = 0
    return json.dumps(d, sort_keys=True)


def main():
    case, out = sys.argv[1], sys.argv[2]
    version = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--version" else "2.10"
    os.makedirs(out, exist_ok=True)
    quad = group("0", "default_pg", [0, 1, 2, 3])
    builders = {
        "hang": lambda: (hang(), quad), "missing_dump": lambda: (hang(), quad), "hang_json": lambda: (hang(), quad),
        "size_mismatch": lambda: (mismatch(4, 2, sizes=((512,),)), quad),
        "dtype_mismatch": lambda: (mismatch(3, 3, dtype="BFloat16"), quad),
        "p2p_hang": lambda: (p2p(True), group("0", "default_pg", [0, 1])),
        "p2p_ok": lambda: (p2p(False), group("0", "default_pg", [0, 1])),
        "p2p_subgroup": lambda: (p2p_subgroup(), dict(quad, **group("1", "pp", [2, 3]))),
        "p2p_size_mismatch": lambda: (p2p_size_mismatch(), group("0", "default_pg", [0, 1])),
        "coalesced": lambda: (coalesced(False), group("0", "default_pg", [0, 1, 2])),
        "coalesced_mismatch": lambda: (coalesced(True), group("0", "default_pg", [0, 1, 2])),
        "ring_wrapped": lambda: (ring_wrapped(), group("0", "default_pg", [0, 1, 2])),
        "ring_unknown": lambda: (ring_unknown(), group("0", "default_pg", [0, 1])),
        "wavefront": lambda: (wavefront(), dict(quad, **group("1", "tp", [2, 3]))),
    }
    if case == "torchcomms":
        dumps = torchcomms_dumps()
    elif case in builders:
        ranks, groups = builders[case]()
        dumps = {r.rank: r.dump(version, groups, with_status=case != "ring_unknown") for r in ranks}
    else:
        sys.exit(f"make_dumps.py: unknown case {case}")
    for rank, d in dumps.items():
        if case == "missing_dump" and rank == 1:
            continue
        if case.endswith("json"):
            with open(os.path.join(out, f"fr_json_{rank}"), "w") as f:
                f.write(as_json(d))
        else:
            with open(os.path.join(out, f"nccl_trace_rank_{rank}"), "wb") as f:
                f.write(pickle.dumps(d, protocol=2))


if __name__ == "__main__":
    main()
