#!/usr/bin/env python3
"""Runs a folder's Python unittest tests (discovery, as `python3 -m unittest discover -s DIR` does), with the
project's CI rule: under CI=true a skipped test fails the run.

usage: run_unittests.py DIR
"""
import os
import sys
import unittest


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    suite = unittest.defaultTestLoader.discover(sys.argv[1], top_level_dir=sys.argv[1])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.skipped and os.environ.get("CI") == "true":
        for test, why in result.skipped:
            print(f"CI=true: {test} was skipped ({why}), which fails the run", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
