#!/usr/bin/env python3
"""bench/record_overhead reports noise as noise (issue 23): its verdict on constructed pair ratios. A figure
is printed only when the adjacent pairs' ratios spread within the target's margin; a spread beyond it, too
few pairs, or a ratio below 0.99 are reported as noise; a resolved ratio above 1.01 says FAILS."""
import os
import sys
from importlib.machinery import SourceFileLoader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
bench = SourceFileLoader("record_overhead", os.path.join(ROOT, "bench", "record_overhead")).load_module()

CASES = [
    ([1.002, 1.004, 0.998, 1.001, 1.003, 1.0], "ratio with/without: 1.0015"),
    ([1.002, 1.004, 0.998, 1.001, 1.003, 1.0], "meets target"),
    ([0.934, 1.0, 1.05, 0.95], "noise: the pairs' ratios spread"),  # two machine states (issue 23)
    ([0.97, 0.975, 0.972], "noise: median ratio 0.9720 < 0.99"),
    ([1.02, 1.025, 1.022], "FAILS target"),
    ([1.0, 1.0], "noise: 2 pair(s)"),
]
failed = 0
for ratios, want in CASES:
    got = bench.verdict(ratios)
    ok = want in got
    failed += not ok
    print(("ok   " if ok else "FAIL ") + f"{ratios} -> {got}")
sys.exit(1 if failed else 0)
