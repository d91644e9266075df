#!/usr/bin/env python3
"""Sources safe for unity builds (STRATA_UNITY, CMakeLists.txt): the quick start and CI's Release build compile
up to 16 .cc files of a library as one unit, so what a file declares at namespace scope reaches the files after it
in its batch. A name that clashes outright fails to compile there; a `using namespace` at namespace scope does not:
it silently lets the later files' unqualified names resolve into that namespace (an overload they never meant to
call). This check fails on every `using namespace` outside a function body in a .cc or .h file (a function's own,
indented, is fine); comments and string literals are ignored.

usage: check_unity_safety.py DIR...    Exits 1 listing each (file:line), 0 when there is none.
"""
import re
import sys

from source_lines import code_lines

USING = re.compile(r"^(?:namespace\s+\w*\s*\{\s*)?using\s+namespace\b")  # at column 0: namespace scope


def violations(root):
    return [f"{rel}:{no}: `using namespace` at namespace scope "
            "(reaches the next files of a unity batch: name what you use one by one)"
            for rel, no, code, _ in code_lines(root, (".cc", ".h", ".cpp")) if USING.match(code)]


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = [v for root in argv[1:] for v in violations(root)]
    for v in found:
        print(v)
    print(f"unity_safety: {len(found)} namespace-scope `using namespace`" if found else "unity_safety: ok")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
