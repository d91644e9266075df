#!/usr/bin/env python3
"""Every skipped-event reason in src/ comes from the one table, src/core/skip_reasons.h (issue 14).

Fails (exit 1, listing file:line) when code outside the table counts a reason by a free string, e.g.
`++in.skipped["x"]`, `skipped[fmt::format(...)]`, `Skip("x")`, `(*skipped)["x"]`; when a table key is
duplicated or is not lower snake case; when a table row is never used in src/ (a dead reason); or when a
reason key a test asserts (SkippedCount(store, "key"), skipped.at("key"), repaired.at("key")) is not a
table key (or a key-with-detail of one).

usage: check_skip_reasons.py SRC_DIR [TESTS_DIR]
"""
import os
import re
import sys

TABLE = os.path.join("core", "skip_reasons.h")
# A count map indexed by a literal, a formatted string or a constructed string; or Skip("...").
FREE = [
    re.compile(r'\b(skipped|repaired)\)?\s*\[\s*("|fmt::format|std::string\b)'),
    re.compile(r'\bSkip\s*\(\s*("|fmt::format|std::string\b)'),
]
ROW = re.compile(r'\{SkipId::(k\w+),\s*"([^"]*)",\s*SkipSeverity::k\w+,\s*SkipScope::k\w+,\s*(true|false),')
ASSERTED = re.compile(r'(?:SkippedCount\(\s*\w+\s*,\s*|(?:skipped|repaired)\.(?:at|count|find)\(\s*)"([^"]+)"')


def sources(root, exts):
    for base, _, files in os.walk(root):
        for name in sorted(files):
            if name.endswith(exts):
                yield os.path.join(base, name)


def main():
    src = sys.argv[1]
    tests = sys.argv[2] if len(sys.argv) > 2 else None
    errors = []
    with open(os.path.join(src, TABLE), encoding="utf-8") as f:
        rows = ROW.findall(f.read())
    if len(rows) < 10:
        errors.append(f"{TABLE}: found only {len(rows)} table rows: the pattern no longer matches the table")
    keys = {}
    for ident, key, detail in rows:
        if key in keys:
            errors.append(f"{TABLE}: key {key!r} appears twice")
        if not re.fullmatch(r"[a-z][a-z0-9_]*", key):
            errors.append(f"{TABLE}: key {key!r} is not lower snake case")
        keys[key] = detail == "true"
    used = set()
    for path in sources(src, (".cc", ".h", ".c")):
        rel = os.path.relpath(path, src)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if rel not in (TABLE, os.path.join("core", "skip_reasons.cc")):
            used.update(re.findall(r"SkipId::(k\w+)", text))
        for n, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in FREE):
                errors.append(f"src/{rel}:{n}: a skip reason as a free string (use a SkipId from {TABLE}): "
                              f"{line.strip()}")
    for ident, key, _ in rows:
        if ident not in used:
            errors.append(f"{TABLE}: {ident} ({key}) is never counted in src/: remove it or count it")

    def known(key):
        return keys.get(key) is False or any(
            d and key.startswith(k + "_") and len(key) > len(k) + 1 for k, d in keys.items())

    if tests:
        for path in sources(tests, (".cc", ".h")):
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    for key in ASSERTED.findall(line):
                        if not known(key):
                            errors.append(f"{os.path.relpath(path, os.path.dirname(tests))}:{n}: asserts reason "
                                          f"{key!r}, which is not in {TABLE}")
    for e in errors:
        print(e)
    print(f"check_skip_reasons: {len(rows)} reasons, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
