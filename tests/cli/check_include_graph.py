#!/usr/bin/env python3
"""The include graph of src/ points down the flow only (issue 14): a file may include, directly or through
any chain of headers, its own folder and the folders below it, never one above it or beside it.

  core -> store -> segments -> importers | recorder | synth -> model -> analysis -> reports -> agent -> cli | python

(`|`: folders of one level, independent of each other.) The levels follow the data flow of the design brief
(/work/shared/DESIGN.md, "Architecture") as the tree implements it: store/ holds the TraceStore and the
RecordedRun that indexes a recording, with the recording's row types of its own (store/recorded_rows.h) and
nothing of the file format; segments/ is the recorder's file format (writer, reader, live tail), which reads
and writes the store's rows; the sources fill the store: importers/ (profiler traces, op tables, and recorded
segments made store tables by importers/segment_index), recorder/ (eBPF, host counters in recorder/host, the
NCCL profiler plugin in recorder/nccl_profiler: writes segments) and synth/ (writes synthetic traces); model/,
analysis/ and reports/ as in the brief; agent/ (always-on: agent and serve) uses all of them; cli/ is the
program and python/ the Python module beside it (neither includes the other). docs/architecture.md draws the
same levels (ctest architecture_levels compares its table with LEVEL).

Analysis and the model build typed results; only reports render them as JSON, so no file under src/analysis or
src/model includes a JSON library, directly or through a header (JSON_FREE below), nor names one.

Analysis and the model read a recording only as the store's decoded tables (RecordedLayers,
RecordedCollectiveCalls, RecordedThreads, decoded once by importers/), so no file under src/analysis or src/model
reaches the recording's raw index (store/recorded_run.h) or its rows (store/recorded_rows.h, segments/),
directly or through a header (RAW_RECORDING below).

Includes are followed transitively: `"dir/x.h"` is resolved from SRC_DIR, `"x.h"` beside the including file;
headers that are not in SRC_DIR (generated, system) end a chain, a missing `"dir/x.h"` still counting as
an include of dir/. Every violation is reported once per including file and offending folder, with the
chain of includes that reaches it.

usage: check_include_graph.py SRC_DIR     Exits 1 listing every violation not excused below (debt named
there, to be removed, never added to), and every folder of SRC_DIR missing from LEVEL.
"""
import collections
import os
import re
import sys

LEVEL = {"core": 0, "store": 1, "segments": 2, "importers": 3, "recorder": 3, "synth": 3, "model": 4,
         "analysis": 5, "reports": 6, "agent": 7, "cli": 8,
         "python": 8}
# Include edges (file, folder) excused today, each to be removed (issue 14), not extended. An excused edge is
# not followed.
KNOWN = set()
# Folders whose results are typed structs: a JSON library there would let analysis build output again.
JSON_FREE = {"analysis", "model"}
JSON_INCLUDE = re.compile(r'\s*#\s*include\s*[<"](nlohmann/|simdjson|json/|rapidjson/)')
JSON_NAME = re.compile(r"\b(nlohmann|simdjson|rapidjson)::")
# Headers through which a JSON library reaches JSON_FREE folders today (debt, to be removed, never added to):
# header -> why. A chain through one of them is not reported.
JSON_DEBT = {}
# What analysis and the model may not reach: the recording's raw index and its row types (issue 24).
RAW_RECORDING_FREE = {"analysis", "model"}
RAW_RECORDING = ("store/recorded_run.h", "store/recorded_rows.h", "segments/")
# The agent reads the model's and analysis' public products only (issue 50 item 4): of model/ and analysis/ a
# file of agent/ includes these headers alone (header -> the product), each a result, a rule's public judge or a
# threshold; every other header of those folders is a pass's internals (cross_layer.h, window_profile.h, ...). A
# header is listed because the agent reads it as a product, never to reach a pass's helpers: what the agent
# needs of a pass moves into a product of analysis instead (the step summaries did, analysis/online).
PRODUCT_READERS = {"agent"}
PRODUCT_FOLDERS = ("analysis/", "model/")
PUBLIC_PRODUCTS = {
    "analysis/diagnosis/diagnose.h": "the offline diagnosis, run on a chunk",
    "analysis/diagnosis/result.h": "the diagnosis' result and its findings",
    "analysis/diagnosis/evidence.h": "a finding's typed evidence",
    "analysis/diagnosis/stall.h": "the stall rule's live judges (InflightByRank, JudgeInflight)",
    "analysis/diagnosis/thresholds.h": "every threshold",
    "analysis/online/step_summary.h": "a rank's step as the online detector reads it",
    "analysis/online/step_summaries.h": "a window's new steps reduced to step summaries",
    "analysis/online/online_detector.h": "the online detector and its detections",
    "analysis/online/gaussian_mixture.h": "the anomaly model over step summaries",
}
INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')
SOURCE = (".cc", ".h", ".c", ".inc")


def read_sources(src):
    """{relative path: [(line number, include text, is_json_include)]} and {relative path: [json names]}."""
    includes, json_names = {}, {}
    for base, _, files in os.walk(src):
        for name in files:
            if not name.endswith(SOURCE):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            found, names = [], []
            with open(path, errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if JSON_INCLUDE.match(line):
                        found.append((n, line.strip(), True))
                    elif m:
                        found.append((n, m.group(1), False))
                    code = line.split("//", 1)[0]
                    if JSON_NAME.search(code):
                        names.append((n, JSON_NAME.search(code).group(1)))
            includes[rel], json_names[rel] = found, names
    return includes, json_names


def resolve(rel, text, files):
    """The file of SRC_DIR that `#include "text"` in rel names; text itself when it names a folder of LEVEL
    but no file of SRC_DIR (a generated header: its folder counts, its own includes are unknown); else None."""
    here = os.path.dirname(rel)
    for cand in (text, os.path.normpath(os.path.join(here, text)).replace(os.sep, "/")):
        if cand in files:
            return cand
    return text if "/" in text and top(text) in LEVEL else None


def top(rel):
    return rel.split("/")[0]


def allowed(src_top, dst_top):
    return dst_top == src_top or LEVEL[dst_top] < LEVEL[src_top]


def chain_text(parents, node, last):
    steps = [last]
    while node is not None:
        steps.append(node)
        node = parents[node]
    return " -> ".join(reversed(steps))


def walk(rel, graph, enter):
    """Breadth-first over rel's includes, entering a header only when enter(node, target): yields (node,
    line, include text, target or None, is_json, parents) for each include line met, parents giving the
    shortest chain from rel to node."""
    parents = {rel: None}
    queue = collections.deque([rel])
    while queue:
        node = queue.popleft()
        for n, text, target, is_json in graph.get(node, []):
            yield node, n, text, target, is_json, parents
            if target is not None and target not in parents and enter(node, target):
                parents[target] = node
                queue.append(target)


def check_levels(rel, graph, bad):
    """The shortest chain from rel to each folder it may not include (excused edges not followed)."""
    mine = top(rel)
    reported = set()
    for node, n, text, target, is_json, parents in walk(rel, graph, lambda node, t: (node, top(t)) not in KNOWN):
        if target is None or (node, top(target)) in KNOWN:
            continue
        dst = top(target)
        if not allowed(mine, dst) and dst not in reported:
            reported.add(dst)
            side = "beside it" if LEVEL[dst] == LEVEL[mine] else "above it"
            how = "includes" if node == rel else "reaches"
            bad.append(f"{rel}: {mine} {how} {dst}/ ({side} in the flow): "
                       f"{chain_text(parents, node, target)} ({node}:{n})")


def check_json(rel, graph, bad):
    """The shortest chain from rel (in a JSON_FREE folder) to a JSON library, not through JSON_DEBT headers."""
    for node, n, text, target, is_json, parents in walk(rel, graph, lambda node, t: t not in JSON_DEBT):
        if is_json:
            bad.append(f"{rel}: {top(rel)} reaches a JSON library (only reports render JSON): "
                       f"{chain_text(parents, node, text)} ({node}:{n})")
            return


def check_raw_recording(rel, graph, bad):
    """The shortest chain from rel (in a RAW_RECORDING_FREE folder) to the recording's raw index or rows."""
    for node, n, text, target, is_json, parents in walk(rel, graph, lambda node, t: True):
        if target is not None and any(target == r or (r.endswith("/") and target.startswith(r))
                                      for r in RAW_RECORDING):
            bad.append(f"{rel}: {top(rel)} reaches the recording's raw rows (read the store's decoded tables): "
                       f"{chain_text(parents, node, target)} ({node}:{n})")
            return


def check_public_products(rel, graph, bad):
    """Each direct include by rel (in a PRODUCT_READERS folder) of a model or analysis header not listed in
    PUBLIC_PRODUCTS. A public header may include internals; its reader may not."""
    for n, text, target, is_json in graph.get(rel, []):
        if target is not None and target.startswith(PRODUCT_FOLDERS) and target not in PUBLIC_PRODUCTS:
            bad.append(f"{rel}:{n}: {top(rel)} includes {target}, internals of {top(target)}/ (read its public "
                       f"products, PUBLIC_PRODUCTS)")


def main():
    src = sys.argv[1]
    includes, json_names = read_sources(src)
    files = set(includes)
    bad = []
    for folder in sorted({top(rel) for rel in files if "/" in rel} - set(LEVEL)):
        bad.append(f"{folder}/: a folder with no level in LEVEL: place it in the flow")
    graph = {rel: [(n, text, None if is_json else resolve(rel, text, files), is_json)
                   for n, text, is_json in found] for rel, found in includes.items()}
    for rel in sorted(files):
        if "/" not in rel or top(rel) not in LEVEL:
            continue
        check_levels(rel, graph, bad)
        if top(rel) in PRODUCT_READERS:
            check_public_products(rel, graph, bad)
        if top(rel) in RAW_RECORDING_FREE:
            check_raw_recording(rel, graph, bad)
        if top(rel) in JSON_FREE:
            check_json(rel, graph, bad)
            for n, lib in json_names[rel]:
                bad.append(f"{rel}:{n}: {top(rel)} uses {lib}:: (only reports render JSON)")
    for b in bad:
        print(b)
    print(f"{len(bad)} bad include(s)" if bad else
          f"include graph: every chain of includes in {len(files)} files points down the flow; analysis and "
          f"model reach no JSON library but through the {len(JSON_DEBT)} header(s) of JSON_DEBT, and none of "
          f"the recording's raw rows; the agent reads {len(PUBLIC_PRODUCTS)} public headers of model and analysis")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
