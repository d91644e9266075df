#!/usr/bin/env python3
"""The README's tour runs as written (issue 26, item 5): every command between <!-- tour --> and
<!-- /tour --> is run from the repository's root with `build/strata` replaced by the binary under test, must
exit 0, and each `# -> LINE` after a command must be a line of that command's standard output."""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tour_steps(readme):
    """[(command, [expected lines])] of the tour block, in order."""
    m = re.search(r"<!-- tour -->\s*```sh\n(.*?)```\s*<!-- /tour -->", readme, re.S)
    if not m:
        sys.exit("FAIL README.md has no <!-- tour --> block")
    steps = []
    for line in m.group(1).splitlines():
        if line.startswith("# -> "):
            steps[-1][1].append(line[len("# -> "):])
        elif line.strip() and not line.startswith("#"):
            command = line.split("  #", 1)[0].strip()  # a comment after two spaces is not part of it
            steps.append((command, []))
    return steps


def main():
    strata = os.path.abspath(sys.argv[1])
    steps = tour_steps(open(os.path.join(ROOT, "README.md"), encoding="utf-8").read())
    failures = 0
    for command, expected in steps:
        argv = [strata if a == "build/strata" else a for a in shlex.split(command)]
        p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
        lines = p.stdout.splitlines()
        missing = [e for e in expected if e not in lines]
        ok = p.returncode == 0 and not missing
        print(("ok   " if ok else "FAIL ") + command)
        if not ok:
            failures += 1
            print(f"  exit {p.returncode}; missing lines: {missing}\n  stdout: {p.stdout[:800]!r}\n"
                  f"  stderr: {p.stderr[:400]!r}")
    if len(steps) < 5:
        print(f"FAIL the tour has {len(steps)} commands; expected at least 5")
        failures += 1
    print(f"{len(steps) - failures} of {len(steps)} tour commands as written")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
