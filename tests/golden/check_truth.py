#!/usr/bin/env python3
"""Scores `strata diagnose --format json` against the injected fault of recorded jobs (truth.json).

usage: check_truth.py STRATA_BINARY CASE_DIR...
A case passes when: a clean run (fault "none") has no straggler and no finding with impact >= 3 %;
a faulty run names the fault's rank as the top straggler, the fault's steps (when only some steps were
affected), and the fault's cause as the first finding. gc_pause is accepted as host_stall, because
without the recorder's GC data a collection is an unannotated gap in the trace.
Prints one line per case and a final "N passed, N failed"; exits 1 on any failure.
"""
import json
import subprocess
import sys

ACCEPTED = {"gc_pause": {"gc_pause", "host_stall"}}


def diagnose(binary, case, extra=()):
    """(the diagnosis as a dict, None) or (None, why strata failed)."""
    out = subprocess.run([binary, "diagnose", "--format", "json", *extra, case], capture_output=True, text=True)
    if out.returncode != 0:
        return None, f"strata failed: {out.stderr.strip()}"
    return json.loads(out.stdout), None


def check(binary, case):
    with open(f"{case}/truth.json") as f:
        truth = json.load(f)
    d, err = diagnose(binary, case)
    return err or judge(truth, d)


def judge(truth, d):
    """None when the diagnosis d matches the truth, else what is wrong. Faults of no single rank (truth rank
    null, e.g. data_imbalance) are judged on the cause only; a truth "ranks" list accepts any of them as the
    top straggler (e.g. the ranks of a slow pipeline stage)."""
    if truth["fault"] == "none":
        if d["stragglers"]:
            return f"false alarm: stragglers {[s['rank'] for s in d['stragglers']]}"
        big = [f for f in d["findings"] if f["impact_pct"] >= 3.0]
        if big:
            return f"false alarm: finding {big[0]['cause']} {big[0]['impact_pct']} %"
        return None
    ranks = truth.get("ranks") or ([truth["rank"]] if truth.get("rank") is not None else [])
    if ranks:
        if not d["stragglers"]:
            return "no straggler found"
        top = d["stragglers"][0]
        if top["rank"] not in ranks:
            return f"top straggler is rank {top['rank']}, expected {truth['rank'] if len(ranks) == 1 else ranks}"
        all_steps = set(d["job"]["steps"])
        truth_steps = [s for s in truth.get("steps", []) if s in all_steps]
        if truth_steps and len(truth_steps) < len(all_steps) and sorted(top["steps"]) != sorted(truth_steps):
            return f"straggler steps {top['steps']}, expected {truth_steps}"
    if not d["findings"]:
        return "no finding"
    cause = d["findings"][0]["cause"]
    if cause not in ACCEPTED.get(truth["fault"], {truth["fault"]}):
        return f"cause {cause}, expected {truth['fault']}"
    return None


def main():
    binary, cases = sys.argv[1], sys.argv[2:]
    passed = failed = 0
    for case in cases:
        problem = check(binary, case)
        if problem:
            failed += 1
            print(f"FAIL {case}: {problem}")
        else:
            passed += 1
            print(f"ok   {case}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
