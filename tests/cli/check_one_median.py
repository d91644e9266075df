#!/usr/bin/env python3
"""strata has one median (issue 50): src/core/robust_stats.h takes every median, by one definition and one
named variant (EvenCount). No other file of the given trees computes one itself: no std::nth_element (the
selection a median or quantile is made of), no element read at the middle of a list (`v[v.size() / 2]`,
`v[n / 2]`, `v[(n - 1) / 2]`), no lower middle (`n / 2 - 1`, the other half of a mean of the two middle
values). Comments and string literals are ignored.

usage: check_one_median.py DIR...    Exits 1 listing every median computed outside the one home (file:line).
"""
import os
import re
import sys

from source_lines import code_lines, run_checker

HOME = "core/robust_stats"  # .h and .cc
PATTERNS = [
    (re.compile(r"\bnth_element\b"), "selects with std::nth_element"),
    (re.compile(r"\[[^\[\]]*/\s*2\s*\]"), "reads the middle element"),
    (re.compile(r"/\s*2\s*-\s*1\b"), "reads the lower middle"),
]


def violations(root):
    out = []
    for rel, no, code, line in code_lines(root, (".cc", ".h", ".c", ".cpp")):
        if os.path.splitext(rel)[0] == HOME:
            continue
        what = next((what for pattern, what in PATTERNS if pattern.search(code)), None)
        if what:
            out.append(f"{rel}:{no}: {what}: {line.strip()}")
    return out


def main():
    return run_checker(
        __doc__, violations,
        lambda n: f"{n} median(s) computed outside {HOME}.h: call Median (or MedianOfSorted for values "
        "already in order), with EvenCount::kUpperMiddle where the median must be one of the values",
        lambda: f"one median: only {HOME}.h computes one")


if __name__ == "__main__":
    sys.exit(main())
