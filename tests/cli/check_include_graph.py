#!/usr/bin/env python3
"""The include graph of src/ points down the flow only (issue 14): a file may include its own folder and the
folders below it, never one above.

  core -> store -> importers, segments -> model -> analysis -> reports -> recorder, synth -> agent -> cli

Analysis and the model build typed results; only reports render them as JSON, so no file under
src/analysis or src/model includes a JSON library (JSON_FREE below).

usage: check_include_graph.py SRC_DIR     Exits 1 listing every upward edge not in KNOWN (debt named below,
to be removed, never added to) and every JSON include in a JSON_FREE folder.
"""
import os
import re
import sys

LEVEL = {"core": 0, "store": 1, "importers": 2, "segments": 2, "model": 3, "analysis": 4, "reports": 5,
         "recorder": 6, "synth": 6, "agent": 7, "cli": 8}
# Upward edges that exist today, each to be removed (issue 14), not extended.
KNOWN = {("store/recorded_run.h", "segments")}  # RecordedRun holds segment rows: segments belongs below store
# Folders whose results are typed structs: a JSON library there would let analysis build output again.
JSON_FREE = {"analysis", "model"}
JSON_INCLUDE = re.compile(r'\s*#\s*include\s*[<"](nlohmann/|simdjson|json/|rapidjson/)')


def main():
    src = sys.argv[1]
    bad = []
    for base, _, files in os.walk(src):
        for name in files:
            if not name.endswith((".cc", ".h", ".c")):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, src)
            top = rel.split(os.sep)[0]
            if top not in LEVEL:
                continue
            with open(path, errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = re.match(r'\s*#include "([a-z_]+)/', line)
                    if m and m.group(1) in LEVEL and LEVEL[m.group(1)] > LEVEL[top] and (rel, m.group(1)) not in KNOWN:
                        bad.append(f"{rel}:{n}: {top} includes {m.group(1)}/ (above it in the flow)")
                    if top in JSON_FREE and JSON_INCLUDE.match(line):
                        bad.append(f"{rel}:{n}: {top} includes a JSON library (only reports render JSON)")
    for b in bad:
        print(b)
    print(f"{len(bad)} bad include(s)" if bad else
          "include graph: every edge points down the flow; analysis and model include no JSON library")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
