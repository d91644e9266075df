#!/usr/bin/env python3
"""Checks a `strata summary --format json` of an Nsight Systems export against SQL over the export itself.

Independent of strata's code: Python's sqlite3 reads the file, ranks are its (process, GPU) pairs with GPU work
in (pid, device) order, and each rank's kernel time by HTA type is summed by SQL (COMMUNICATION: a demangled
name that starts with "nccl" or holds "ncclKernel"; MEMORY: memcpy and memset rows; COMPUTATION: the other
kernels, none of whose names in these exports hits HTA's other exclusions). Counts must be equal and times
equal to the ns (the summary prints µs with three decimals).
usage: verify_nsys_summary.py SUMMARY.json EXPORT.sqlite
"""
import json
import sqlite3
import sys

COMM = "(s.value GLOB 'nccl*' OR s.value GLOB '*ncclKernel*')"


def has_table(db, name):
    return db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0] > 0


def expected(db):
    tables = ["CUPTI_ACTIVITY_KIND_KERNEL"] + [t for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
                                              if has_table(db, t)]
    union = " UNION ".join(f"SELECT globalPid, deviceId FROM {t}" for t in tables)
    ranks = db.execute(f"SELECT globalPid, deviceId FROM ({union}) ORDER BY (globalPid >> 24) & 16777215, deviceId")
    out = []
    for gpid, dev in ranks.fetchall():
        where = f"globalPid = {gpid} AND deviceId = {dev}"
        kernels = f"FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName WHERE {where}"
        types = {}
        for name, cond in (("COMMUNICATION", COMM), ("COMPUTATION", f"NOT {COMM}")):
            n, ns = db.execute(f"SELECT COUNT(*), TOTAL(end - start) {kernels} AND {cond}").fetchone()
            if n:
                types[name] = (n, int(ns))
        n_mem, ns_mem = 0, 0
        for t in tables[1:]:
            n, ns = db.execute(f"SELECT COUNT(*), TOTAL(end - start) FROM {t} WHERE {where}").fetchone()
            n_mem, ns_mem = n_mem + n, ns_mem + int(ns)
        if n_mem:
            types["MEMORY"] = (n_mem, ns_mem)
        out.append(types)
    return out


def main():
    summary = json.load(open(sys.argv[1]))
    db = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
    want = expected(db)
    errors = []
    if len(summary["ranks"]) != len(want):
        errors.append(f"{len(summary['ranks'])} ranks in the summary, {len(want)} (process, GPU) pairs in the file")
    for i, (rank, types) in enumerate(zip(summary["ranks"], want)):
        got = rank["gpu"]["kernel_types"]
        for name, (n, ns) in types.items():
            g = got.get(name)
            if g is None or g["count"] != n or round(g["time_us"] * 1000) != ns:
                errors.append(f"rank {i} {name}: summary {g}, SQL {n} rows {ns / 1000:.3f} µs")
        for name in got:
            if name not in types:
                errors.append(f"rank {i}: {name} in the summary, not in SQL")
        print(f"rank {i}: " + ", ".join(f"{k} {n} rows {ns / 1e6:.3f} ms" for k, (n, ns) in sorted(types.items())))
    for e in errors:
        print("FAIL " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
