#!/usr/bin/env python3
"""bench/diagnose_baseline compares against its recorded baseline as it says (issue 50 item 7): --record writes
every job's figures with the commit; a run against a baseline it is far slower than exits 1 naming the job, and
against one it is far faster than exits 0. Timing-free: the baselines are made 1e9 times off either way, on jobs
of 8 ranks.

usage: check_diagnose_baseline.py STRATA STRATA_BENCH_DIAGNOSE"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
strata, bench = sys.argv[1], sys.argv[2]
failures = []


def run(tmp, *extra):
    return subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "diagnose_baseline"), "--strata", strata,
                           "--bench", bench, "--ranks", "8", "--repeat", "1", "--jobs-dir", os.path.join(tmp, "jobs"),
                           "--baseline", os.path.join(tmp, "baseline.json"), *extra],
                          capture_output=True, text=True, timeout=600)


def scaled(tmp, factor):
    path = os.path.join(tmp, "baseline.json")
    with open(path) as f:
        doc = json.load(f)
    for job in doc["jobs"].values():
        job["diagnose_median_s"] *= factor
    with open(path, "w") as f:
        json.dump(doc, f)


with tempfile.TemporaryDirectory() as tmp:
    r = run(tmp, "--record")
    if r.returncode != 0:
        sys.exit(f"FAIL --record exited {r.returncode}: {r.stderr[-400:]}")
    with open(os.path.join(tmp, "baseline.json")) as f:
        doc = json.load(f)
    if sorted(doc["jobs"]) != ["healthy", "slow_compute"] or any(j["ranks"] != 8 for j in doc["jobs"].values()) \
            or not doc.get("commit") or doc.get("format") != "strata-diagnose-baseline/1":
        failures.append(f"the recorded baseline: {doc}")
    scaled(tmp, 1e-9)  # the baseline far faster: this run is a regression
    r = run(tmp)
    if r.returncode != 1 or "slower than 1.25x the baseline: healthy" not in r.stdout:
        failures.append(f"against a far faster baseline: exit {r.returncode}, {r.stdout[-400:]} {r.stderr[-200:]}")
    scaled(tmp, 1e18)  # the baseline far slower
    r = run(tmp)
    if r.returncode != 0 or "x); load" not in r.stdout:
        failures.append(f"against a far slower baseline: exit {r.returncode}, {r.stdout[-400:]} {r.stderr[-200:]}")
for f in failures:
    print("FAIL", f)
if not failures:
    print("ok   diagnose_baseline records, and exits 1 only above its limit")
sys.exit(1 if failures else 0)
