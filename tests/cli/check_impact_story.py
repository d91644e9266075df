#!/usr/bin/env python3
"""One impact story (docs/impact.md, src/analysis/diagnosis/impact.h): on the bundled example, the recorded
DDP cases of tests/data and the public op tables, every figure about a finding's saving agrees with every
other: no finding saves more than the what-if's 1 - 1/S, their savings together neither; each summary's
"saves N%" is its impact_pct; the text verdict's "costs N%" and the "impact:" sentence repeat them; a
straggler's score ("peers wait N% of a step") is its lateness over the step; a named cause has confidence
>= 0.5. Fails naming the case and the two numbers that disagree.

usage: check_impact_story.py STRATA SOURCE_DIR SHARED_DIR"""
import json
import os
import re
import subprocess
import sys

CAUSE_FREE = {"unknown"}
STALL = {"hang", "collective_mismatch"}


def cases(source, shared):
    out = [os.path.join(source, "examples", "ddp-2rank-slow-compute")]
    ddp = os.path.join(source, "tests", "data", "ddp")
    out += sorted(os.path.join(ddp, d) for d in os.listdir(ddp) if os.path.isdir(os.path.join(ddp, d)))
    table = os.path.join(shared, "datasets", "straggler-whatif")
    out += [os.path.join(table, f"trace-{n}.csv.gz") for n in ("AR", "SE", "ST")]
    return out


def run(strata, path, fmt):
    r = subprocess.run([strata, "diagnose", "--format", fmt, path], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"FAIL {path}: strata exited {r.returncode}: {r.stderr[:400]}")
    return r.stdout


def check(strata, path):
    errors = []
    j = json.loads(run(strata, path, "json"))
    text = run(strata, path, "text")
    S = j["whatif"]["slowdown"]
    modelled = j["whatif"]["model"] != "none"
    waste = 100.0 * (1.0 - 1.0 / S) if modelled and S > 1 else 0.0
    findings = [f for f in j["findings"] if f["cause"] not in STALL]
    total = 0.0
    for f in findings:
        total += f["impact_pct"]
        if modelled and f["impact_pct"] > waste + 0.02:
            errors.append(f"finding {f['cause']} saves {f['impact_pct']}% > 1 - 1/S = {waste:.2f}% (S {S})")
        m = re.search(r"saves (?:about )?(\d+(?:\.\d+)?)%", f["summary"])
        if m and abs(float(m.group(1)) - f["impact_pct"]) > 0.051:
            errors.append(f"summary says saves {m.group(1)}% but impact_pct is {f['impact_pct']}")
        if f["cause"] not in CAUSE_FREE and f["confidence"] < 0.5:
            errors.append(f"cause {f['cause']} named at confidence {f['confidence']} < 0.5")
    if modelled and findings and total > waste + 0.05:
        errors.append(f"findings save {total:.2f}% together > 1 - 1/S = {waste:.2f}%")
    if findings:
        top = max(findings, key=lambda f: f["impact_pct"])
        m = re.search(r"costs (\d+(?:\.\d+)?)% of step time", text.splitlines()[0])
        if m and abs(float(m.group(1)) - top["impact_pct"]) > 0.051:
            errors.append(f"verdict says costs {m.group(1)}% but the top finding saves {top['impact_pct']}%")
        flat = " ".join(text.split())
        m = re.search(r"impact: .*?saves (\d+(?:\.\d+)?)% of step time; the what-if's S = (\d+\.\d+) allows at most "
                      r"1 - 1/S = (\d+(?:\.\d+)?)%", flat)
        if modelled and not m:
            errors.append("the text report has no impact sentence relating the saving and S")
        elif m:
            if abs(float(m.group(1)) - top["impact_pct"]) > 0.051:
                errors.append(f"impact sentence says {m.group(1)}% but the top finding saves {top['impact_pct']}%")
            if abs(float(m.group(3)) - waste) > 0.051:
                errors.append(f"impact sentence says 1 - 1/S = {m.group(3)}% but S = {S} gives {waste:.2f}%")
    median = j["job"]["step_time_ms"]["median"] or 0
    for s in j["stragglers"]:
        if median > 0 and s.get("late_ms_per_step") is not None:
            share = s["late_ms_per_step"] / median
            if abs(s["score"] - share) > 0.1 * share + 0.02:
                errors.append(f"straggler {s['rank']}: score {s['score']} but late {s['late_ms_per_step']} ms of a "
                              f"{median} ms step is {share:.4f}")
    return errors


def main():
    strata, source, shared = sys.argv[1:4]
    failed = 0
    for path in cases(source, shared):
        if not os.path.exists(path):
            print(f"FAIL {path}: missing")
            failed += 1
            continue
        errors = check(strata, path)
        print(("FAIL " if errors else "ok   ") + os.path.relpath(path, source))
        for e in errors:
            print("     " + e)
        failed += bool(errors)
    print(f"impact story: {failed} case(s) disagree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
