"""The last published accuracy figure, read from where it is published: the first bullet of docs/accuracy.md's
headline cites its per-case results (bench/results/NAME.json; tests/cli/check_accuracy_quote.py keeps the bullet
and the file in agreement), and the figures are recomputed from that file (report.figures). CI's reduced run
tests its own pass share against the lowest rate this run supports (the lower bound of its one-sided 95 %
confidence interval) as well as against the fixed bar (scoring.gate, issue 47 item 7).
"""
import json
import os
import re

from accuracy_lib import report

RESULTS_RE = re.compile(r"bench/results/[A-Za-z0-9_.+-]+\.json")


def headline_results(root):
    """The path of the results file the headline's latest run cites, or None."""
    try:
        with open(os.path.join(root, "docs", "accuracy.md"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"<!-- headline.*?<!-- /headline -->", text, re.S)
    cited = RESULTS_RE.search(m.group(0)) if m else None
    return os.path.join(root, cited.group(0)) if cited else None


def published_pass_rate(root):
    """(passed, judged, source): the judged faulted lab jobs of the last published run that passed, how many were
    judged, and the file they come from; None when the headline cites no results file or it has no judged
    faulted job."""
    path = headline_results(root)
    if not path or not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    f = report.figures(doc["cases"], doc["run"].get("thresholds"))["faulted"]
    if not f["judged"]:
        return None
    return f["passed"], f["judged"], os.path.relpath(path, root)
