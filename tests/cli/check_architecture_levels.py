#!/usr/bin/env python3
"""docs/architecture.md draws the levels the include check enforces (issue 50 items 4 and 6): its level table
(the rows `| N | `folder/`, ... | ... |` under the heading "### Levels") and its flow line (the line of the
section that starts with `core →`) must both say what LEVEL in check_include_graph.py (beside this script)
says, folder by folder, and so must that checker's own docstring (its line starting with `core ->`). A level
moved in one place only fails here, so the map and the check cannot drift apart.

usage: check_architecture_levels.py DOCS_DIR    (reads DOCS_DIR/architecture.md) Exits 1 listing each folder
whose level differs between the table, the flow line, the docstring and LEVEL, or that one of them lacks.
"""
import importlib.util
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
HEADING = "### Levels"
ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|")
FOLDER = re.compile(r"`([a-z_]+)/`")


def include_check():
    spec = importlib.util.spec_from_file_location("check_include_graph", HERE / "check_include_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table_levels(lines):
    """{folder: level} from the table under HEADING (up to the next heading); None without the heading."""
    try:
        start = lines.index(HEADING)
    except ValueError:
        return None
    out = {}
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        m = ROW.match(line)
        if m:
            for folder in FOLDER.findall(m.group(2)):
                out[folder] = int(m.group(1))
    return out


def flow_levels(text, arrow):
    """{folder: position} from the first line that starts (after spaces and a backtick) with `core <arrow>`:
    folders separated by `arrow`, those of one level by `|`. None when there is no such line."""
    for line in text.splitlines():
        line = line.strip().rstrip(".").strip("`").strip()
        if line.startswith(f"core {arrow}"):
            return {folder.strip().strip("`").rstrip("/"): level
                    for level, part in enumerate(line.split(arrow)) for folder in part.split("|")}
    return None


def compare(name, found, level):
    if found is None:
        return [f"{name}: not found"]
    bad = []
    for folder in sorted(set(level) | set(found)):
        if folder not in found:
            bad.append(f"{name}: {folder}/ is missing (level {level[folder]} in LEVEL)")
        elif folder not in level:
            bad.append(f"{name}: {folder}/ has no level in LEVEL")
        elif found[folder] != level[folder]:
            bad.append(f"{name}: {folder}/ is at level {found[folder]}, LEVEL says {level[folder]}")
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    doc = pathlib.Path(sys.argv[1]) / "architecture.md"
    text = doc.read_text()
    checker = include_check()
    level = checker.LEVEL
    bad = compare(f"{doc.name}'s level table ({HEADING})", table_levels(text.splitlines()), level)
    bad += compare(f"{doc.name}'s flow line (core → ...)", flow_levels(text, "→"), level)
    bad += compare("check_include_graph.py's docstring (core -> ...)", flow_levels(checker.__doc__, "->"), level)
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} difference(s) between docs/architecture.md and the include check's LEVEL")
        return 1
    print(f"architecture levels: {doc.name}'s table and flow line and the include check's docstring say LEVEL's "
          f"{len(set(level.values()))} levels of {len(level)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
