#!/usr/bin/env python3
"""A build's compile commands name no path of this clone inside their text (issue 50 item 7, CI's time): CI
builds a fresh clone and reuses this machine's ccache, which makes the paths on a command line relative
(base_dir) but cannot see into a -D value or into a generated file. So: no -D value names the source or build
folder (the tests' paths live in build/generated/test_paths.cc), and every unity batch (CMakeLists.txt,
strata_unity_build) includes its files by their path from the source root, not an absolute one.

usage: check_relocatable_build.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import shlex
import sys

ALLOWED_DEFINES = {"STRATA_VERSION"}  # values that hold no path


def define_problems(commands, roots):
    out = []
    for entry in commands:
        for arg in shlex.split(entry["command"]):
            m = re.match(r"-D(\w+)=(.*)", arg)
            if m and m.group(1) not in ALLOWED_DEFINES and any(root in m.group(2) for root in roots):
                out.append(f"{os.path.basename(entry['file'])}: -D{m.group(1)} names a path of this clone")
    return sorted(set(out))


def unity_problems(commands, build):
    """Every unity batch compiled (ours, build/unity/TARGET/unity_N.cc, or a CMake UNITY_BUILD batch, whose
    includes are absolute: it must not come back) includes its files by their path from the source root."""
    out = []
    units = sorted({e["file"] for e in commands if re.search(r"/[Uu]nity/unity_[^/]*$", e["file"])})
    for unit in units:
        for line in open(unit, encoding="utf-8", errors="replace"):
            if line.startswith("#include") and not re.match(r'#include "src/[^"]+\.cc"', line):
                out.append(f"{os.path.relpath(unit, build)}: {line.strip()} (not a path from the source root)")
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, source = (os.path.realpath(a) for a in argv[1:])
    try:
        commands = json.load(open(os.path.join(build, "compile_commands.json"), encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"FAIL {build}: no readable compile_commands.json ({e})")
        return 1
    problems = define_problems(commands, (source, build)) + unity_problems(commands, build)
    for p in problems:
        print(f"FAIL {p}")
    if problems:
        return 1
    print(f"relocatable: {len(commands)} compile commands name no path of this clone in a -D value or a unity batch")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
