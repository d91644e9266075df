"""The per-case results of a bench/accuracy run in a small machine-readable form (issue 47 item 2): one record
per case with everything bench/accuracy_lib/report.py needs to recompute every figure it prints, and a header
with the commit, date, suite and the gate's thresholds. bench/accuracy writes it with --json FILE;
bench/accuracy_lib/recompute.py FILE prints the figures again from it alone.

The document: {"run": {...}, "cases": [{...}, ...]}. A case record (keys, in this order):
  case, source ("lab" | "synth"), counted (false: needs recorder data the run did not have; left out of every
  figure), recorded (diagnosed with a `strata record` recording), seed, world (ranks in the job),
  fault_kind (what was injected: the lab's fault name, e.g. intermittent_slow_compute; "none" for a clean job),
  expected_cause (the truth's cause class, truth.json "fault"), accepted_causes (the causes scoring.judge
  counts as right for it: scoring.accepted), truth_rank (truth.json "rank"), truth_ranks (the ranks judge
  accepts as the top straggler: scoring.truth_ranks; [] for faults of no single rank), injected_ms,
  status ("pass" | "fail" | "noisy" | "error"), verdict ("right" | "wrong": the judgement scoring.judge gives,
  for a set-aside (noisy) case too; null for an error: no diagnosis), problem (what judge found wrong, or why
  the case errored), set_aside (why a noisy case was not judged: recording_quality.recording_problem), rank
  and cause (strata's top straggler and first finding, scoring.predicted), note, attempts.
"""
import datetime
import json

from accuracy_lib import scoring

FORMAT = "strata-accuracy-results/1"


def gate_thresholds():
    """The GATE_* constants of scoring.py, by name."""
    return {k: v for k, v in sorted(vars(scoring).items()) if k.startswith("GATE_")}


def run_header(commit, mode, started=None, **extra):
    """The results file's "run" object: what was run (mode: reduced, full or held-out), at which commit, when it
    started (UTC), against which thresholds; extra: further keys (seeds, options, host)."""
    started = started or datetime.datetime.now(datetime.timezone.utc)
    head = {"format": FORMAT, "commit": commit,
            "date": started.astimezone(datetime.timezone.utc).isoformat(timespec="seconds"),
            "mode": mode, "thresholds": gate_thresholds()}
    head.update(extra)
    return head


def case_record(res, counted):
    """The record of one case from bench/accuracy's run_case result dict."""
    case, truth = res["case"], res.get("truth") or {}
    fault = truth.get("fault", case.fault)
    status = res["status"]
    if status == "error":
        verdict = None
    elif status == "noisy":
        verdict = "wrong" if res.get("problem") else "right"
    else:
        verdict = "right" if status == "pass" else "wrong"
    return {
        "case": case.name, "source": case.source, "counted": counted, "recorded": res["recorded"],
        "seed": case.seed, "world": res.get("world") or truth.get("world_size"),
        "fault_kind": truth.get("injector", fault), "expected_cause": fault,
        "accepted_causes": sorted(scoring.accepted(fault, res["recorded"])) if fault != "none" else [],
        "truth_rank": truth.get("rank"), "truth_ranks": scoring.truth_ranks(truth) if truth else [],
        "injected_ms": truth.get("injected_ms"),
        "status": status, "verdict": verdict, "problem": res.get("problem"), "set_aside": res.get("set_aside"),
        "rank": res.get("rank"), "cause": res.get("cause"), "note": res.get("note", ""),
        "attempts": res.get("attempts"),
    }


def write(path, run, cases):
    with open(path, "w") as f:
        json.dump({"run": run, "cases": cases}, f, indent=1)
        f.write("\n")


def load(path):
    """(run, cases) from a results file; fails plainly on the older list form (no header to recompute from)."""
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or "cases" not in doc or "run" not in doc:
        raise ValueError(f"{path}: not a bench/accuracy results document ({{\"run\": ..., \"cases\": [...]}}); "
                         "files written before issue 47 hold a bare list and lack the fields to recompute from")
    return doc["run"], doc["cases"]
