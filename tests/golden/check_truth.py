#!/usr/bin/env python3
"""Scores `strata diagnose --format json` against the injected fault of recorded jobs (truth.json), with the
rules of bench/accuracy_lib/scoring.py (a case dir holding *.sseg recorder segments is judged as recorded).

usage: check_truth.py STRATA_BINARY CASE_DIR...
Prints one line per case and a final "N passed, N failed"; exits 1 on any failure.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from accuracy_lib.scoring import diagnose, judge  # noqa: E402


def check(binary, case):
    with open(os.path.join(case, "truth.json")) as f:
        truth = json.load(f)
    d, err = diagnose(binary, case)
    recorded = bool(glob.glob(os.path.join(case, "*.sseg")))
    return err or judge(truth, d, recorded)


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
