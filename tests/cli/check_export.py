#!/usr/bin/env python3
"""`strata export --format perfetto`: the merged timeline is well-formed Chrome trace-event JSON.

Exports the bundled example and a synthetic job with a known clock skew, injected fault and host counters, and
checks the structure Perfetto and chrome://tracing rely on: every event has ph/ts/pid/tid, B/E balanced per
thread, every flow start has exactly one finish (same id), X durations >= 0, a named process per rank sorted
by rank, the applied clock offsets equal to the synthetic truth (up to the estimate's error), findings as
instants on the straggler and the skipped counts in otherData. Also: -o is required, `-o -` writes to standard
output, and a failed export leaves an existing file untouched with no temporary behind.
usage: check_export.py STRATA_BINARY      Prints "N passed, N failed" last; exit 1 on any failure.
"""
import bisect
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile

BIN = os.path.realpath(sys.argv[1])
ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "ddp-2rank-slow-compute")
results = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


METADATA_ARGS = {"process_name": ("name", str), "process_labels": ("labels", str), "process_sort_index":
                 ("sort_index", int), "thread_name": ("name", str), "thread_sort_index": ("sort_index", int)}


class Enclosing:
    """Per (pid, tid), the "X" slices sorted by start with the running maximum end: whether one encloses a time,
    as Perfetto's JSON importer binds a flow end (the slice open at that time on that thread)."""

    def __init__(self, events):
        spans = collections.defaultdict(list)
        for ev in events:
            if ev.get("ph") == "X" and isinstance(ev.get("dur"), (int, float)):
                spans[(ev["pid"], ev["tid"])].append((ev["ts"], ev["ts"] + ev["dur"]))
        self.starts, self.spans = {}, {}
        for key, v in spans.items():
            v.sort()
            most, rows = float("-inf"), []
            for a, b in v:
                most = max(most, b)
                rows.append((a, b, most))
            self.starts[key], self.spans[key] = [a for a, _, _ in rows], rows

    def encloses(self, pid, tid, ts):
        rows = self.spans.get((pid, tid), [])
        i = bisect.bisect_right(self.starts.get((pid, tid), []), ts)
        while i > 0:
            i -= 1
            if rows[i][2] < ts:
                return False
            if rows[i][1] >= ts:
                return True
        return False


def structure_errors(trace):
    """What in `trace` Perfetto would reject or draw wrongly (empty list when none), by the trace-event format:
    the fields each phase needs, metadata events Perfetto reads, instants' scope, counters' numeric args, and
    flows (one "s" and one "f" per id, named and categorised alike, the "f" not before the "s", each end inside
    a slice of its own thread, which is what Perfetto binds an end to; an unbound end is dropped)."""
    errors = []
    events = trace.get("traceEvents")
    if not isinstance(events, list) or not events:
        return ["no traceEvents array"]
    depth = collections.Counter()
    flows = collections.defaultdict(list)
    named, pids = set(), set()
    slices = Enclosing(events)
    for ev in events:
        for key in ("ph", "ts", "pid", "tid"):
            if key not in ev:
                errors.append(f"event without {key}: {ev}")
        ph = ev.get("ph")
        if not isinstance(ev.get("ts"), (int, float)) or not isinstance(ev.get("pid"), int) or \
                not isinstance(ev.get("tid"), int):
            errors.append(f"ts, pid and tid must be numbers: {ev}")
            continue
        if ph in ("X", "I", "i", "C", "s", "f", "M") and not (isinstance(ev.get("name"), str) and ev["name"]):
            errors.append(f"{ph} event without a name: {ev}")
        pids.add(ev.get("pid"))
        if ph == "B":
            depth[(ev["pid"], ev["tid"])] += 1
        elif ph == "E":
            depth[(ev["pid"], ev["tid"])] -= 1
            if depth[(ev["pid"], ev["tid"])] < 0:
                errors.append(f"E without B on {ev['pid']}/{ev['tid']}")
        elif ph == "X":
            if not (isinstance(ev.get("dur"), (int, float)) and ev["dur"] >= 0):
                errors.append(f"X without dur >= 0: {ev}")
        elif ph in ("I", "i"):
            if ev.get("s", "t") not in ("g", "p", "t"):
                errors.append(f"instant with scope {ev.get('s')!r} (g, p or t): {ev}")
        elif ph == "C":
            values = ev.get("args")
            if not isinstance(values, dict) or not values or \
                    not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()):
                errors.append(f"counter without numeric args: {ev}")
        elif ph in ("s", "f"):
            if not isinstance(ev.get("id"), (int, str)) or not ev.get("cat"):
                errors.append(f"flow event without id or cat: {ev}")
                continue
            flows[(ev["cat"], ev["name"], ev["id"])].append(ev)
            bound = slices.encloses(ev["pid"], ev["tid"], ev["ts"]) if ph == "s" or ev.get("bp") == "e" else True
            if ph == "f" and ev.get("bp") != "e":
                errors.append(f"flow end without bp=e (it would bind to the next slice): {ev}")
            elif not bound:
                errors.append(f"flow {ph} inside no slice of its thread {ev['pid']}/{ev['tid']} (dropped): {ev}")
        elif ph == "M":
            need = METADATA_ARGS.get(ev["name"])
            args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
            if not need or not isinstance(args.get(need[0]), need[1]):
                errors.append(f"metadata event {ev['name']} without args.{need[0] if need else '?'}: {ev}")
            if ev["name"] == "process_name":
                named.add(ev["pid"])
        else:
            errors.append(f"unexpected phase {ph}")
    errors += [f"unbalanced B/E on {k}" for k, d in depth.items() if d]
    for key, evs in flows.items():
        phases = sorted(e["ph"] for e in evs)
        if phases != ["f", "s"]:
            errors.append(f"flow {key} has phases {phases} (one s and one f)")
        elif [e for e in evs if e["ph"] == "f"][0]["ts"] < [e for e in evs if e["ph"] == "s"][0]["ts"]:
            errors.append(f"flow {key} ends before it starts (Perfetto reads ends in time order and drops it)")
    errors += [f"process {p} has no name" for p in pids - named]
    other = trace.get("otherData", {})
    if "export_skipped" not in other or not all("skipped" in i for i in other.get("inputs", [{}])):
        errors.append("otherData lacks the skipped counts")
    return errors[:20] + ([f"... {len(errors) - 20} more"] if len(errors) > 20 else [])


def events(trace, ph, cat=None):
    return [e for e in trace["traceEvents"] if e["ph"] == ph and (cat is None or e.get("cat") == cat)]


def process_args(trace):
    return {e["pid"]: e["args"] for e in events(trace, "M") if e["name"] == "process_name"}


with tempfile.TemporaryDirectory() as work:
    out = os.path.join(work, "merged.json")
    r = run("export", "--format", "perfetto", EXAMPLE, "-o", out)
    check("example exports", r.returncode == 0 and os.path.exists(out), r.stderr)
    trace = json.load(open(out))
    errs = structure_errors(trace)
    check("example is well-formed", not errs, "; ".join(errs[:5]))
    names = {p: a["name"] for p, a in process_args(trace).items()}
    check("a process per rank", names == {0: "rank 0", 1: "rank 1"}, str(names))
    finding = [e for e in events(trace, "I", "strata.finding")]
    check("the finding is an instant on rank 1", len(finding) == 1 and finding[0]["pid"] == 1, str(finding))
    blame = events(trace, "s", "strata.blame")
    check("blame arrows leave rank 1", blame and all(e["pid"] == 1 for e in blame), str(blame[:2]))

    r = run("export", EXAMPLE, "-o", "-")
    check("-o - writes to standard output", r.returncode == 0 and not structure_errors(json.loads(r.stdout)),
          r.stderr)
    with gzip.open(os.path.join(EXAMPLE, "rank-0.json.gz"), "rt") as f:
        r = subprocess.run([BIN, "export", "-", "-o", "-"], input=f.read(), capture_output=True, text=True)
    check("- reads standard input", r.returncode == 0 and not structure_errors(json.loads(r.stdout)), r.stderr)
    r = run("export", EXAMPLE)
    check("-o is required", r.returncode == 2 and "output" in r.stderr, f"{r.returncode} {r.stderr}")
    r = run("export", "--help")
    check("--help", r.returncode == 0 and "perfetto" in r.stdout, r.stderr)

    # A failed export leaves the existing file as it was, and no temporary.
    with open(out, "w") as f:
        f.write("keep")
    r = run("export", os.path.join(work, "missing.json"), "-o", out)
    check("unreadable input: exit 1 naming it", r.returncode == 1 and "missing.json" in r.stderr, r.stderr)
    check("unreadable input: output untouched", open(out).read() == "keep" and os.listdir(work) == ["merged.json"],
          str(os.listdir(work)))
    r = run("export", EXAMPLE, "-o", os.path.join(work, "no-such-dir", "x.json"))
    check("unwritable output: exit 1", r.returncode == 1 and "no-such-dir" in r.stderr, r.stderr)

    # Synthetic job: known clock skew, a slow rank, host counters.
    job = os.path.join(work, "synth")
    r = run("synth", "-o", job, "--ranks", "8", "--fault", "slow_compute", "--fault-rank", "5", "--counters",
            "--clock-skew-us", "50000", "--no-progress")
    check("synth job written", r.returncode == 0, r.stderr)
    r = run("export", job, "-o", out)
    check("synth job exports", r.returncode == 0, r.stderr)
    trace = json.load(open(out))
    errs = structure_errors(trace)
    check("synth export is well-formed", not errs, "; ".join(errs[:5]))
    truth = json.load(open(os.path.join(job, "truth.json")))
    want = {int(k): v for k, v in truth["clock_offsets_us"].items()}
    got = {p: a["clock_offset_us"] for p, a in process_args(trace).items()}
    # Offsets are estimated relative to the ranks' median: compare differences to rank 0.
    worst = max(abs((got[r] - got[0]) - (want[r] - want[0])) for r in want)
    check("applied offsets equal the injected skew (within 20 us)", sorted(got) == sorted(want) and worst < 20,
          f"worst error {worst} us; got {got}, truth {want}")
    check("host counters are counter tracks", len(events(trace, "C")) > 0)
    finding = events(trace, "I", "strata.finding")
    check("findings drawn on the slow rank", finding and finding[0]["pid"] == 5, str(finding[:1]))
    check("blame arrows from the slow rank to its 7 peers",
          len({e["pid"] for e in events(trace, "f", "strata.blame")}) == 7, "")

print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
