#!/usr/bin/env python3
"""The README quotes its accuracy figures from docs/accuracy.md, one place (issue 23): the block between
<!-- headline ... --> and <!-- /headline --> is the same in both files, word for word, and names whether each
run met its gate."""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def block(path):
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    m = re.search(r"<!-- headline.*?<!-- /headline -->", text, re.S)
    if not m:
        sys.exit(f"FAIL {path}: no <!-- headline --> block")
    return m.group(0)


doc, readme = block("docs/accuracy.md"), block("README.md")
if doc != readme:
    sys.exit("FAIL README.md's accuracy block differs from docs/accuracy.md's: copy it from there")
runs = []  # each bullet with its continuation lines
for line in doc.splitlines():
    if line.startswith("- **"):
        runs.append(line)
    elif runs and line.startswith("  "):
        runs[-1] += " " + line.strip()
bad = [l for l in runs if "gate" not in l and "self-consistency" not in l]
if bad:
    sys.exit(f"FAIL runs quoted without saying whether they met the gate: {bad}")
print(f"ok   README quotes docs/accuracy.md's headline ({len(runs)} runs, each with its gate)")
