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


def structure_errors(trace):
    """What in `trace` Perfetto would reject or draw wrongly (empty list when none)."""
    errors = []
    events = trace.get("traceEvents")
    if not isinstance(events, list) or not events:
        return ["no traceEvents array"]
    depth = collections.Counter()
    flows = collections.defaultdict(lambda: {"s": 0, "f": 0})
    named = set()
    pids = set()
    for ev in events:
        for key in ("ph", "ts", "pid", "tid"):
            if key not in ev:
                errors.append(f"event without {key}: {ev}")
        ph = ev.get("ph")
        pids.add(ev.get("pid"))
        if ph == "B":
            depth[(ev["pid"], ev["tid"])] += 1
        elif ph == "E":
            depth[(ev["pid"], ev["tid"])] -= 1
            if depth[(ev["pid"], ev["tid"])] < 0:
                errors.append(f"E without B on {ev['pid']}/{ev['tid']}")
        elif ph == "X" and not ev.get("dur", -1) >= 0:
            errors.append(f"X without dur >= 0: {ev}")
        elif ph in ("s", "f"):
            flows[(ev.get("cat"), ev["id"])][ph] += 1
        elif ph == "M" and ev.get("name") == "process_name":
            named.add(ev["pid"])
        elif ph not in ("X", "i", "C", "M"):
            errors.append(f"unexpected phase {ph}")
    errors += [f"unbalanced B/E on {k}" for k, d in depth.items() if d]
    errors += [f"flow {k} has {v}" for k, v in flows.items() if v != {"s": 1, "f": 1}]
    errors += [f"process {p} has no name" for p in pids - named]
    other = trace.get("otherData", {})
    if "export_skipped" not in other or not all("skipped" in i for i in other.get("inputs", [{}])):
        errors.append("otherData lacks the skipped counts")
    return errors


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
    finding = [e for e in events(trace, "i", "strata.finding")]
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
    finding = events(trace, "i", "strata.finding")
    check("findings drawn on the slow rank", finding and finding[0]["pid"] == 5, str(finding[:1]))
    check("blame arrows from the slow rank to its 7 peers",
          len({e["pid"] for e in events(trace, "f", "strata.blame")}) == 7, "")

print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
