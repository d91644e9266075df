#!/usr/bin/env python3
"""`strata export --format perfetto`: the merged timeline is well-formed Chrome trace-event JSON.

Exports the bundled example and a synthetic job with a known clock skew, injected fault and host counters, and
checks the structure Perfetto and chrome://tracing rely on: every event has ph/ts/pid/tid, B/E balanced per
thread, every flow start has exactly one finish (same id), X durations >= 0, a named process per rank sorted
by rank, the applied clock offsets equal to the synthetic truth (up to the estimate's error), findings as
instants on the straggler and the skipped counts in otherData. Also: -o is required, `-o -` writes to standard
output, and a failed export leaves an existing file untouched with no temporary behind.
structure_errors and stall_errors (how a stopped job is drawn: hang, collective mismatch) are also used by
tests/recorder/test_hangs.py on the export of a real hang (that needs root; here, a job that did not stop must
show no stall).
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

BIN = os.path.realpath(sys.argv[1]) if __name__ == "__main__" else None
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


def stall_errors(trace, diagnosis):
    """What is wrong with how `trace` shows the stopped job of `diagnosis` (its strata.diagnosis/1 result; an empty
    list when right). A hang: on each waiting rank an instant "waiting in OP (COMM #SEQ) for rank ..." at the start
    of a slice "stalled in OP" as long as the stall, on a thread of its own named "stopped job"; on each missing rank
    an instant "rank N stopped here: STATE in FRAME", where its hang finding is drawn too. A collective mismatch:
    on each rank an instant naming what it called. Every such event on its rank's named process, never before the
    time origin, a thread id on one process only; a job that did not stop has none."""
    errors = []
    stall = [e for e in trace["traceEvents"] if e.get("cat") == "strata.stall"]
    meta = events(trace, "M")
    named = {e["pid"] for e in meta if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    pids_of_tid = collections.defaultdict(set)
    for e in trace["traceEvents"]:
        if e["tid"] != 0:
            pids_of_tid[e["tid"]].add(e["pid"])
    instants, slices = collections.defaultdict(list), collections.defaultdict(list)
    for e in stall:
        if e["pid"] not in named or e["ts"] < 0:
            errors.append(f"stall event off its rank's process or before the origin: {e}")
        if e["ph"] == "I" and (e.get("s") != "p" or e["tid"] != 0):
            errors.append(f"stall instant not process-scoped: {e}")
        (instants if e["ph"] == "I" else slices)[e["pid"]].append(e)
    findings = diagnosis.get("findings", [])
    hang = next((f["evidence"] for f in findings if f["cause"] == "hang"), None)
    mismatch = next((f["evidence"] for f in findings if f["cause"] == "collective_mismatch"), None)
    if not hang and not mismatch:
        return errors + ([f"a job that did not stop has {len(stall)} stall events"] if stall else [])
    if hang:
        where = f"{hang['op']} ({hang['communicator']} #{hang['seq']})"
        for r in hang["waiting_ranks"]:
            wait = [e for e in instants[r] if e["name"].startswith("waiting in " + where)]
            held = [e for e in slices[r] if e["name"] == "stalled in " + hang["op"]]
            if len(wait) != 1 or len(held) != 1:
                errors.append(f"rank {r}: {len(wait)} 'waiting in {where}' instants, {len(held)} stall slices")
                continue
            if abs(wait[0]["ts"] - held[0]["ts"]) > 0.001:
                errors.append(f"rank {r}: the waiting instant is not at the stall's start: {wait[0]} {held[0]}")
            if abs(held[0]["dur"] - hang["stalled_for_s"] * 1e6) > 0.01e6:
                errors.append(f"rank {r}: stall slice of {held[0]['dur']} us, "
                              f"the stall lasted {hang['stalled_for_s']} s")
            if threads.get((r, held[0]["tid"])) != "stopped job" or len(pids_of_tid[held[0]["tid"]]) != 1:
                errors.append(f"rank {r}: the stall slice is not on a 'stopped job' thread of its own: {held[0]}")
        hang_findings = [e for e in events(trace, "I", "strata.finding") if e["args"]["cause"] == "hang"]
        for m in hang["missing"]:
            r = m["rank"]
            here = [e for e in instants[r] if e["name"].startswith(f"rank {r} stopped here: {m['state']}")]
            if len(here) != 1 or (m["frame"] and m["frame"] not in here[0]["name"]):
                errors.append(f"rank {r}: no one 'stopped here' instant naming {m['state']!r} and {m['frame']!r}: "
                              f"{instants[r]}")
                continue
            if not any(e["pid"] == r and e["ts"] == here[0]["ts"] for e in hang_findings):
                errors.append(f"rank {r}: its hang finding is not drawn where it stopped ({here[0]['ts']} us)")
    if mismatch:
        for c in mismatch["calls"]:
            for r in c["ranks"]:
                want = f"mismatch at {mismatch['communicator']} #{mismatch['seq']}: called {c['op']}"
                if len([e for e in instants[r] if e["name"].startswith(want)]) != 1:
                    errors.append(f"rank {r}: no one instant {want!r}: {instants[r]}")
    return errors


def events(trace, ph, cat=None):
    return [e for e in trace["traceEvents"] if e["ph"] == ph and (cat is None or e.get("cat") == cat)]


def process_args(trace):
    return {e["pid"]: e["args"] for e in events(trace, "M") if e["name"] == "process_name"}


def main():
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
        r = run("diagnose", "--format", "json", job)
        errs = stall_errors(trace, json.loads(r.stdout)) if r.returncode == 0 else [r.stderr]
        check("a job that did not stop shows no stall", not errs, "; ".join(errs[:3]))
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
