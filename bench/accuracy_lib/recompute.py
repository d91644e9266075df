#!/usr/bin/env python3
"""Prints a bench/accuracy run's figures again from its results file alone (issue 47 item 2): the block
bench/accuracy prints at the end of a run (bench/accuracy_lib/report.py, the same function), from the per-case
records `bench/accuracy --json FILE` wrote, with the faulted-alone gate judged against the thresholds the file
records.

usage: bench/accuracy_lib/recompute.py RESULTS.json [--figures-json]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from accuracy_lib import report, results  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", metavar="RESULTS.json", help="a file written by bench/accuracy --json")
    ap.add_argument("--figures-json", action="store_true", help="print the figures as JSON instead of the block")
    args = ap.parse_args(argv)
    try:
        run, cases = results.load(args.results)
    except (OSError, ValueError) as e:
        print(f"recompute: {e}", file=sys.stderr)
        return 2
    fig = report.figures(cases, run.get("thresholds"))
    if args.figures_json:
        print(json.dumps(fig, indent=1, sort_keys=True))
        return 0
    print(f"{args.results}: {run.get('mode', '?')} suite at commit {run.get('commit', '?')}, {run.get('date', '?')}, "
          f"{len(cases)} case records")
    for line in report.render(fig):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
