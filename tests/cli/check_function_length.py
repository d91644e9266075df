#!/usr/bin/env python3
"""Fails when a function in src/ is longer than the limit (issue 14: "no function over ~120 lines").

A function here is a definition that starts at column 0 (namespace scope: the code is formatted with
clang-format, namespaces unindented) and ends at the next line starting with "}". Its length counts from
the first line of its signature to its closing brace. Class members defined inside a class body are not
measured (they are indented); one-line definitions are skipped.
usage: check_function_length.py SRC_DIR [LIMIT]
"""
import pathlib
import re
import sys

NOT_FUNCTION = re.compile(r"(namespace|struct|class|enum|union|extern|#|//|\}|template\s*<[^>]*>\s*(struct|class))")


def long_functions(path, limit):
    lines = path.read_text(errors="replace").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line and not line[0].isspace() and "(" in line and not NOT_FUNCTION.match(line) \
                and not line.rstrip().endswith(";"):
            k = i
            while k < len(lines) and k < i + 6 and not lines[k].rstrip().endswith(("{", ";", "}")):
                k += 1
            if k < len(lines) and lines[k].rstrip().endswith("{"):
                j = k + 1
                while j < len(lines) and not lines[j].startswith("}"):
                    j += 1
                if j - i + 1 > limit:
                    yield i + 1, j - i + 1, line.strip()[:90]
                i = j
        i += 1


def main():
    src = pathlib.Path(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    found = []
    for path in sorted(src.rglob("*")):
        if path.suffix in (".cc", ".h"):
            found += [(path, *f) for f in long_functions(path, limit)]
    for path, line, length, head in found:
        print(f"{path}:{line}: {length} lines (limit {limit}): {head}")
    if found:
        print(f"{len(found)} function(s) over {limit} lines: split them by step of the algorithm")
        return 1
    print(f"function length: every function in {src} is at most {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
