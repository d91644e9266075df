#!/usr/bin/env python3
"""The README quotes its accuracy figures from docs/accuracy.md, one place (issue 23): the block between
<!-- headline ... --> and <!-- /headline --> is the same in both files, word for word, and names whether each
run met its gate. Every figure is re-derivable (issue 47 item 2): the latest run (the first bullet) cites its
per-case results (bench/results/NAME.json), and each bullet that cites one quotes the figures recomputed from it
(bench/accuracy_lib/report.py headline_phrases) word for word; a bullet whose run was measured before a later
change to src/analysis, src/importers or src/model says "stale" (git history decides; a commit whose change there
is only blank lines added or removed changes nothing a diagnosis is made of, and does not count)."""
import json
import os
import re
import subprocess
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench"))
from accuracy_lib import report  # noqa: E402
MODEL_PATHS = ("src/analysis", "src/importers", "src/model")


def block(path):
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    m = re.search(r"<!-- headline.*?<!-- /headline -->", text, re.S)
    if not m:
        sys.exit(f"FAIL {path}: no <!-- headline --> block")
    return m.group(0)


def bullets(doc):
    """Each bullet of the headline block with its continuation lines joined."""
    runs = []
    for line in doc.splitlines():
        if line.startswith("- **"):
            runs.append(line)
        elif runs and line.startswith("  "):
            runs[-1] += " " + line.strip()
    return runs


def changed_since(commit, root=None):
    """Commits after `commit` that touch what the diagnosis is made of, or None when git cannot tell. A commit
    whose change there is blank lines only (git diff --ignore-blank-lines: a formatter's removal of an extra
    blank line) is left out; any other change, whitespace inside a line included, counts."""
    root = root or ROOT
    commit = commit.split("+")[0].split()[0]
    r = subprocess.run(["git", "-C", root, "rev-list", f"{commit}..HEAD", "--", *MODEL_PATHS], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None
    out = []
    for c in r.stdout.split():
        # (the output, not --quiet's status: git 2.39 reports a blank-line-only change as a difference there)
        d = subprocess.run(["git", "-C", root, "diff", "--ignore-blank-lines", f"{c}^", c, "--", *MODEL_PATHS],
                           capture_output=True, text=True)
        if d.returncode != 0 or d.stdout.strip():
            out.append(c)
    return out


def check_cited(bullet):
    """The failures of one bullet against the results file it cites (none when it cites none)."""
    m = re.search(r"bench/results/[A-Za-z0-9_.+-]+\.json", bullet)
    if not m:
        return []
    path = os.path.join(ROOT, m.group(0))
    if not os.path.exists(path):
        return [f"{m.group(0)} is cited but not in the repository"]
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    fig = report.figures(doc["cases"], doc["run"].get("thresholds"))
    text = " ".join(bullet.split())
    bad = [f"{m.group(0)}: the bullet lacks {p!r}" for p in report.headline_phrases(fig) if p not in text]
    later = changed_since(doc["run"]["commit"])
    if later is None:
        bad.append(f"{m.group(0)}: git cannot tell what changed since {doc['run']['commit']}")
    elif later and "stale" not in text.lower():
        bad.append(f"{m.group(0)}: measured at {doc['run']['commit']}, and {len(later)} later commit(s) changed "
                   f"{', '.join(MODEL_PATHS)}: the bullet must say it is stale")
    return bad


def main():
    doc, readme = block("docs/accuracy.md"), block("README.md")
    if doc != readme:
        sys.exit("FAIL README.md's accuracy block differs from docs/accuracy.md's: copy it from there")
    runs = bullets(doc)
    bad = [l for l in runs if "gate" not in l and "self-consistency" not in l]
    if bad:
        sys.exit(f"FAIL runs quoted without saying whether they met the gate: {bad}")
    measured = [l for l in runs if "self-consistency" not in l.split(":")[0]]
    if not measured or not re.search(r"bench/results/[A-Za-z0-9_.+-]+\.json", measured[0]):
        sys.exit("FAIL the latest run (the headline's first bullet) cites no per-case results (bench/results/*.json)")
    failures = [f for l in runs for f in check_cited(l)]
    if failures:
        sys.exit("FAIL " + "\nFAIL ".join(failures))
    print(f"ok   README quotes docs/accuracy.md's headline ({len(runs)} runs, each with its gate; the cited results "
          "recompute to the figures quoted)")


if __name__ == "__main__":
    main()
