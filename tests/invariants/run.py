#!/usr/bin/env python3
"""The invariant suite (issue 46 item 7): runs strata over a corpus of inputs and checks every output against
the invariants (rules.py) and every pair of related outputs against the metamorphic relations
(relations.py); writes a report (report.json, report.txt) listing each violation with a command that
reproduces it. docs/invariants.md describes the rules and relations.

usage: run.py --fast|--full --strata BINARY [--work DIR] [--jobs N] [--reuse] [--allow FILE]

  --fast   a fixed small corpus (the ctest invariants_fast); first runs the checkers' own tests
           (test_checkers.py), so that the suite cannot pass with blind checkers.
  --full   the sweep (a benchmark): prints the cases, the outputs checked and the violations by rule.
  --work   where generated inputs, strata's outputs and the report go (default: a temporary folder for
           --fast, removed when the run passes; /tmp/invariants-full for --full).
  --reuse  keep inputs and outputs already in --work (re-check without re-running strata).
  --allow  known limits (default: known_limits.json beside this file): violations listed there, each with a
           reason, are reported but do not fail the run.

Exit status: 0 when every violation is a known limit, 1 otherwise (or when strata could not be run on an
input the suite made), 77 when ../shared is absent (a skip; under CI=true a failure).

Invariants: the verdict depends only on strata's outputs (never on timing); every violation carries its
reproducing shell lines; a rule or relation that checked nothing in a run is listed as such (never silently
passing).
"""
import argparse
import concurrent.futures as futures
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report as report_mod  # noqa: E402
import suite  # noqa: E402
from corpus import Corpus  # noqa: E402
from jsonnum import load  # noqa: E402
from relations import RELATIONS  # noqa: E402
from rules import RULES, Output, check_output  # noqa: E402

SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))


def parse_args(argv):
    p = argparse.ArgumentParser(description="strata's invariants and metamorphic relations")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--fast", action="store_true")
    mode.add_argument("--full", action="store_true")
    p.add_argument("--strata", required=True)
    p.add_argument("--work")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--reuse", action="store_true")
    p.add_argument("--allow", default=os.path.join(HERE, "known_limits.json"))
    p.add_argument("--shared", default=os.path.join(os.path.dirname(SOURCE_DIR), "shared"))
    p.add_argument("--timeout", type=float, default=None, help="seconds per strata run (default 300 fast, 1800 full)")
    return p.parse_args(argv)


def self_test():
    """The checkers' own tests (test_checkers.py): a rule that cannot see a planted fault fails the suite."""
    suite_ = unittest.defaultTestLoader.loadTestsFromName("test_checkers")
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite_)
    return result.wasSuccessful()


# ---- making inputs and running strata ---------------------------------------------------------------------

def make_sources(c, pool, reuse, log):
    """Makes every generated source, dependencies first; returns {key: error} for those that failed."""
    failed, done = {}, set()
    pending = dict(c.sources)
    while pending:
        ready = [k for k, s in pending.items() if all(d in done or d in failed for d in s.deps)]
        jobs = {}
        for k in ready:
            s = pending.pop(k)
            if any(d in failed for d in s.deps):
                failed[k] = "a source it derives from could not be made"
            elif s.make is None or (reuse and os.path.exists(marker(s))):
                done.add(k)
            else:
                jobs[pool.submit(make_one, c, k)] = k
        for f in futures.as_completed(jobs):
            k, err = jobs[f], f.result()
            (failed.__setitem__(k, err) if err else done.add(k))
        log(f"inputs: {len(done) + len(failed)} of {len(c.sources)} ready")
    return failed


def marker(s):
    base = s.paths[0] if os.path.isdir(s.paths[0]) else os.path.dirname(s.paths[0])
    return os.path.join(base, ".made")


def make_one(c, key):
    err = c.make(key)
    if not err:
        with open(marker(c.sources[key]), "w") as f:
            f.write("\n".join(c.recipe_for(key)) + "\n")
    return err


def run_one(c, run, out_dir, timeout, reuse):
    """Runs strata once; returns (rc, seconds). Output in out_dir/KEY, stderr in KEY.err, rc in KEY.rc."""
    path = os.path.join(out_dir, run.key)
    if reuse and os.path.exists(path + ".rc"):
        with open(path + ".rc") as f:
            rc, secs = f.read().split()
        return int(rc), float(secs)
    t0 = time.monotonic()
    with open(path, "wb") as out, open(path + ".err", "wb") as err:
        try:
            rc = subprocess.run(c.argv(run), stdout=out, stderr=err, timeout=timeout, cwd=SOURCE_DIR).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    secs = time.monotonic() - t0
    with open(path + ".rc", "w") as f:
        f.write(f"{rc} {secs:.3f}")
    return (rc if rc != "timeout" else -999), secs


def run_all(c, pool, out_dir, timeout, reuse, skip, log):
    todo = [r for r in c.runs.values() if r.source not in skip and r.other not in skip]
    results, jobs = {}, {pool.submit(run_one, c, r, out_dir, timeout, reuse): r for r in todo}
    t0 = time.monotonic()
    for i, f in enumerate(futures.as_completed(jobs), 1):
        results[jobs[f].key] = f.result()
        if i % 50 == 0 or i == len(jobs):
            log(f"runs: {i} of {len(jobs)} ({time.monotonic() - t0:.0f} s)")
    return results


# ---- checking --------------------------------------------------------------------------------------------

class Checker:
    """Applies the rules to every output and the relations to every pair; collects violations and counts."""

    def __init__(self, c, out_dir, results, schema):
        self.c, self.out_dir, self.results, self.schema = c, out_dir, results, schema
        self.violations = []
        self.checked = {name: 0 for name in list(RULES) + list(RELATIONS)}
        self.vacuous = {name: 0 for name in RELATIONS}
        self.outputs = 0
        self._cache = {}

    def output(self, key):
        if key not in self._cache:
            with open(os.path.join(self.out_dir, key), encoding="utf-8", errors="replace") as f:
                raw = f.read()
            out = Output(json=load(raw) if self.c.runs[key].fmt == "json" else None, schema=self.schema)
            out.raw = raw
            self._cache[key] = out
        return self._cache[key]

    def label(self, key):
        """A run as a case name: its source and its options."""
        run = self.c.runs[key]
        return run.source + (" " + " ".join(run.options) if run.options else "")

    def ok(self, key):
        return key in self.results and self.results[key][0] == 0

    def add(self, rule, keys, message, case):
        self.violations.append({"rule": rule, "case": case, "message": message, "repro": self.c.repro(keys)})

    def check_runs(self):
        for key, run in self.c.runs.items():
            if key not in self.results:
                continue
            self.checked["exits_cleanly"] += 1
            rc = self.results[key][0]
            if rc != 0:
                with open(os.path.join(self.out_dir, key + ".err"), errors="replace") as f:
                    err = f.read().strip().splitlines()
                self.add("exits_cleanly", [key], f"exit {rc if rc != -999 else 'timeout'}: "
                                                 f"{(err[-1] if err else '')[:200]}", self.label(key))
                continue
            self.outputs += 1
            if run.fmt == "json":
                self.check_json(key, run)

    def check_json(self, key, run):
        out = self.output(key)
        text_key = next((k for k, r in self.c.runs.items() if r.fmt == "text" and r.source == run.source
                         and r.sub == run.sub and r.options == run.options and self.ok(k)), None)
        if text_key:
            out.text = self.output(text_key).raw
        case = self.label(key)
        applied = set()
        broken = check_output(run.sub, out, applied=applied)
        for name in applied:
            self.checked[name] += 1
        for rule, messages in broken.items():
            uses_text = text_key and RULES[rule].reads_text
            self.add(rule, [key] + ([text_key] if uses_text else []), join(messages), case)

    def check_pairs(self):
        for p in self.c.pairs:
            if not (self.ok(p.a) and self.ok(p.b)):
                continue
            rel = RELATIONS[p.relation]
            verdict = rel.check(self.output(p.a), self.output(p.b), p.context)
            self.checked[p.relation] += 1
            if verdict is None:
                self.vacuous[p.relation] += 1
                continue
            if verdict:
                case = f"{self.label(p.a)} vs {self.label(p.b)}"
                self.add(p.relation, [p.a, p.b], join(verdict), case)


def join(messages, shown=3):
    """One violation's message from a check's messages: the first few, and how many more."""
    more = f" (+{len(messages) - shown} more)" if len(messages) > shown else ""
    return "; ".join(messages[:shown]) + more


def load_allow(path):
    """The known limits of known_limits.json (its `limits`), each checked to carry a reason."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        entries = json.load(f)["limits"]
    for e in entries:
        if not e.get("reason"):
            raise SystemExit(f"{path}: every known limit needs a reason: {e}")
    return entries


def mark_known(violations, allow):
    import fnmatch
    used = [0] * len(allow)
    for v in violations:
        for i, e in enumerate(allow):
            if e["rule"] == v["rule"] and fnmatch.fnmatchcase(v["case"], e.get("case", "*")) and \
                    re.search(e.get("message", ""), v["message"]):
                v["known"] = e["reason"]
                used[i] += 1
                break
    return [e for e, n in zip(allow, used) if n == 0]


def commit_of(source_dir):
    r = subprocess.run(["git", "-C", source_dir, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def main(argv=None):
    a = parse_args(argv)
    mode = "fast" if a.fast else "full"
    log = lambda m: print(f"invariants: {m}", file=sys.stderr, flush=True)  # noqa: E731
    if a.fast and not self_test():
        print("invariants: FAIL: the checkers' own tests fail (test_checkers.py)")
        return 1
    if not os.path.isdir(os.path.join(a.shared, "datasets")):
        print(f"invariants: SKIPPED: {a.shared}/datasets is absent")
        return 1 if os.environ.get("CI") == "true" else 77
    work = a.work or (tempfile.mkdtemp(prefix="strata-invariants-") if a.fast else "/tmp/invariants-full")
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir, exist_ok=True)
    strata = os.path.abspath(a.strata)
    c = Corpus(work, strata)
    suite.build(c, mode, SOURCE_DIR, a.shared)
    log(f"{mode}: {len(c.sources)} inputs, {len(c.runs)} runs, {len(c.pairs)} pairs; work in {work}")
    t0 = time.monotonic()
    with futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        failed = make_sources(c, pool, a.reuse, log)
        results = run_all(c, pool, out_dir, a.timeout or (300 if a.fast else 1800), a.reuse, failed, log)
    schema_path = os.path.join(a.shared, "spec", "diagnosis.schema.json")
    schema = json.load(open(schema_path)) if os.path.exists(schema_path) else None
    ck = Checker(c, out_dir, results, schema)
    ck.check_runs()
    ck.check_pairs()
    allow = load_allow(a.allow)
    unused = mark_known(ck.violations, allow)
    summary = {
        "mode": mode, "date": datetime.date.today().isoformat(), "commit": commit_of(SOURCE_DIR),
        "strata": strata, "seconds": round(time.monotonic() - t0, 1), "inputs": len(c.sources),
        "inputs_failed": failed, "runs": len(results), "outputs_checked": ck.outputs, "pairs": len(c.pairs),
        "checked": ck.checked, "vacuous": ck.vacuous, "unused_known_limits": unused,
        "rules": {n: r.doc for n, r in RULES.items()}, "relations": {n: r.doc for n, r in RELATIONS.items()},
    }
    report_mod.write(work, summary, ck.violations)
    print(report_mod.headline(summary, ck.violations))
    new = [v for v in ck.violations if not v.get("known")]
    if a.fast and not a.work and not new and not failed:
        shutil.rmtree(work)  # a passing ctest leaves nothing behind; a failing one keeps its inputs and report
    else:
        print(f"invariants: report in {os.path.join(work, 'report.txt')} and report.json")
    return 1 if new or failed else 0


if __name__ == "__main__":
    sys.exit(main())
