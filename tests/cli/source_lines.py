"""The C/C++ source lines the project's source checkers read (check_cause_assignment, check_one_median,
check_unity_safety, check_reports_render): every file under a root with one of the given endings, in a fixed order, each line with its
string literals emptied and its // comment cut, so a pattern in text or a comment never counts as code.
(Block comments are not stripped: the checked patterns do not occur in them.)"""
import os
import re
import sys

COMMENT = re.compile(r"//.*$")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def code_lines(root, endings):
    """Yields (path relative to root with '/', 1-based line number, code, the line as written) for every line
    of every file under root whose name ends with one of endings."""
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(endings):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8", errors="replace") as f:
                for no, line in enumerate(f, 1):
                    yield rel, no, COMMENT.sub("", STRING.sub('""', line)), line


def run_checker(doc, violations, failure, success, argv=None):
    """The command line every source checker shares: `CHECKER DIR...` (each a folder, else the usage in `doc` and
    exit 2); prints each of violations(DIR)'s lines, then failure(count) and exits 1 when there are any, else
    success() and exits 0."""
    roots = (sys.argv if argv is None else argv)[1:]
    if not roots or not all(os.path.isdir(r) for r in roots):
        print(doc.strip(), file=sys.stderr)
        return 2
    found = [v for root in roots for v in violations(root)]
    for v in found:
        print(v)
    print(failure(len(found)) if found else success())
    return 1 if found else 0
