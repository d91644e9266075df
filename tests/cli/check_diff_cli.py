#!/usr/bin/env python3
"""`strata diff` from the command line on small traces written here: the text headline, the JSON table, the
HTML page, --help, and every bad argument or input as a clear error with the documented exit code (1 an input
that cannot be read, 2 a usage error, 5 a malformed input) and a message naming the argument or file.
usage: check_diff_cli.py STRATA_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile


def trace(rank, step_dur, ops, steps=True, world=2):
    events = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "python"}}]
    if steps:
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1,
                       "ts": 1000, "dur": step_dur})
    t = 1010
    for name, dur in ops:
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t, "dur": dur})
        t += dur + 1
    return {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": world}, "traceEvents": events}


def main():
    strata = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, doc in {"base": trace(0, 100, [("aten::mm", 10), ("aten::mm", 10), ("aten::copy_", 5)]),
                          "test": trace(0, 140, [("aten::mm", 30), ("aten::relu", 4)]),
                          "nosteps": trace(0, 0, [("aten::mm", 10)], steps=False),
                          "other_run": trace(1, 100, [("aten::mm", 10)], world=4)}.items():
            paths[name] = os.path.join(tmp, name + ".json")
            with open(paths[name], "w") as f:
                json.dump(doc, f)

        def run(*args):
            return subprocess.run([strata, *args], capture_output=True, text=True, cwd=tmp)

        def expect(what, proc, code, out=None, err=None):
            ok = proc.returncode == code and (out is None or out in proc.stdout) and (err is None or err in proc.stderr)
            print(("ok   " if ok else "FAIL ") + what)
            if not ok:
                failures.append(what)
                print(f"  exit {proc.returncode} (want {code})\n  stdout: {proc.stdout[:600]!r}\n"
                      f"  stderr: {proc.stderr[:600]!r}")

        b, t = paths["base"], paths["test"]
        p = run("diff", b, t)
        expect("text: the step time before -> after first", p, 0, out="strata diff: step time: 100 µs -> 140 µs")
        expect("text: the largest change and the new and gone names", p, 0, out="aten::relu [new]")
        p = run("diff", "--format", "json", b, t)
        expect("json", p, 0)
        if p.returncode == 0:
            doc = json.loads(p.stdout)
            mm = [n for n in doc["names"] if n["name"] == "aten::mm"]
            good = (doc["schema"] == "strata.diff/1" and doc["new"] == ["aten::relu"] and doc["gone"] == ["aten::copy_"]
                    and mm == [{"name": "aten::mm", "kind": "CPU cpu_op", "base_count": 2, "test_count": 1,
                                "base_total_us": 20.0, "test_total_us": 30.0, "diff_count": -1,
                                "diff_total_us": 10.0}])
            print(("ok   " if good else "FAIL ") + "json: per-name rows, new, gone")
            if not good:
                failures.append("json rows")
                print(p.stdout[:2000])
        page = os.path.join(tmp, "diff.html")
        p = run("diff", "--format", "html", "-o", page, b, t)
        expect("html page written", p, 0)
        with open(page) if os.path.exists(page) else open(os.devnull) as f:
            html = f.read()
        good = html.startswith("<!DOCTYPE html>") and "<svg" in html and "aten::mm" in html and "<script" not in html
        print(("ok   " if good else "FAIL ") + "html: self-contained page with the bar chart")
        if not good:
            failures.append("html page")
        expect("html needs -o", run("diff", "--format", "html", b, t), 2)
        expect("missing BASE names the argument and file", run("diff", "/nonexistent/base.json", t), 1,
               err="strata: BASE /nonexistent/base.json")
        expect("rank not present", run("diff", "--base-rank", "4", b, t), 2,
               err=f"strata: --base-rank 4: BASE {b} has no rank 4 (its ranks: 0)")
        expect("step not present", run("diff", "--test-step", "7", b, t), 2,
               err=f"strata: --test-step 7: TEST {t} has no ProfilerStep#7 (its steps: 3)")
        expect("a run without steps", run("diff", b, paths["nosteps"]), 5, err="no ProfilerStep#N in it")
        expect("--all-ranks excludes --base-rank", run("diff", "--all-ranks", "--base-rank", "0", b, t), 2)
        expect("one run is not enough", run("diff", b), 2)
        expect("bad --device", run("diff", "--device", "tpu", b, t), 2)
        expect("diagnose on two runs points to strata diff", run("diagnose", b, paths["other_run"]), 0,
               out="to compare two runs: strata diff BASE TEST")
        # A run without ProfilerSteps (as a recording is): the model's steps, from the collective calls.
        synth, nosteps = os.path.join(tmp, "synth"), os.path.join(tmp, "synth-nosteps")
        subprocess.run([strata, "synth", "-o", synth, "--ranks", "3", "--steps", "3", "--layers", "2"],
                       check=True, capture_output=True)
        os.mkdir(nosteps)
        for name in sorted(os.listdir(synth)):
            if name.startswith("rank-"):
                with open(os.path.join(synth, name)) as f:
                    doc = json.load(f)
                doc["traceEvents"] = [e for e in doc["traceEvents"]
                                      if not str(e.get("name", "")).startswith("ProfilerStep")]
                with open(os.path.join(nosteps, name), "w") as f:
                    json.dump(doc, f)
        p = run("diff", "--format", "json", "--all-ranks", "--test-step", "2", nosteps, nosteps)
        expect("a run without ProfilerSteps is compared by the model's steps", p, 0)
        if p.returncode == 0:
            doc = json.loads(p.stdout)
            good = (doc["base"]["step_source"] not in ("profiler-step", "none") and doc["test"]["steps"] == [2]
                    and doc["base"]["ranks"] == [0, 1, 2] and doc["base"]["step_time_us"] > 0 and doc["names"])
            print(("ok   " if good else "FAIL ") + "json: steps from the model, all ranks, a step time")
            if not good:
                failures.append("model steps")
                print(json.dumps(doc["base"])[:1000])
        expect("a step the model did not find", run("diff", "--base-step", "99", nosteps, nosteps), 2,
               err="has no step 99 (its steps:")
        p = run("diff", "--help")
        expect("--help lists the selection", p, 0, out="--base-rank")
        for opt in ("--test-rank", "--base-step", "--test-step", "--all-ranks", "--all-steps", "--device", "--format"):
            if opt not in p.stdout:
                failures.append("--help " + opt)
                print("FAIL --help lacks " + opt)
        expect("strata --help lists diff", run("--help"), 0, out="diff")
        # Two real 2-rank lab runs (tests/data/ddp): clean, then rank 1 with extra compute. With 2 ranks the op
        # that changed on one rank only names it; rank 0's longer wait in gloo:all_reduce does not name rank 0.
        data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "ddp")
        p = run("diff", "--format", "json", "--all-ranks", os.path.join(data, "clean-2rank"),
                os.path.join(data, "slow-compute-rank1"))
        expect("2 ranks: json", p, 0)
        if p.returncode == 0:
            ranks = {r["rank"]: r for r in json.loads(p.stdout)["ranks"]}
            good = (not ranks[0]["differs"] and ranks[1]["differs"]
                    and ranks[1]["differs_in"]["measure"] == "DistributedDataParallel.forward"
                    and ranks[1]["differs_in"]["change_us"] > 10000)
            print(("ok   " if good else "FAIL ") + "2 ranks: rank 1 alone changed, in DistributedDataParallel.forward")
            if not good:
                failures.append("2 ranks")
                print(json.dumps(ranks)[:1000])
        p = run("diff", "--all-ranks", os.path.join(data, "clean-2rank"), os.path.join(data, "slow-compute-rank1"))
        expect("2 ranks: text says which op changed on one rank only", p, 0,
               out="an op changed on one rank only (the largest per rank):")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
