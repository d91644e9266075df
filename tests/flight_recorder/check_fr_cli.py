#!/usr/bin/env python3
"""`strata diagnose` of PyTorch Flight Recorder dumps from the command line (docs/flight-recorder.md): the text
verdict, the JSON contract's finding (cause, rank, process group, sequence number), the HTML page, --rank-map,
dumps beside the job's profiler traces and beside a recording (the difference said), and the errors: dumps
given to `summary`, a dump whose rank cannot be told.
Dumps are written by make_dumps.py beside this script.

usage: check_fr_cli.py STRATA_BINARY     Exits 1 listing every check that failed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(strata, *args):
    p = subprocess.run([strata, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def make(case, out):
    subprocess.run([sys.executable, os.path.join(HERE, "make_dumps.py"), case, out], check=True)


def main():
    strata = os.path.abspath(sys.argv[1])
    failures = []

    def check(name, ok, detail=""):
        print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail[:800]))
        if not ok:
            failures.append(name)

    work = tempfile.mkdtemp(prefix="strata_fr_cli_")
    try:
        hang = os.path.join(work, "hang")
        make("hang", hang)
        rc, out, err = run(strata, "diagnose", hang)
        check("text verdict names rank 1", rc == 0 and out.startswith("verdict: the job stopped: rank 1 ("), out + err)
        check("text says dumps, no steps", "Flight Recorder dumps of 4 ranks" in out, out)

        rc, out, err = run(strata, "diagnose", "--format", "json", hang)
        doc = json.loads(out) if rc == 0 else {}
        f = (doc.get("findings") or [{}])[0]
        ev = f.get("evidence", {})
        check("json hang finding", (doc.get("status"), f.get("cause"), f.get("rank"), ev.get("communicator"),
                                    ev.get("seq"), ev.get("missing_ranks")) == ("findings", "hang", 1, "0", 6, [1]),
              out + err)
        check("json inputs are flight-recorder with ranks",
              [(i.get("format"), i.get("rank")) for i in doc.get("inputs", [])] ==
              [("flight-recorder", r) for r in range(4)], out)

        page = os.path.join(work, "report.html")
        rc, out, err = run(strata, "diagnose", "--format", "html", "-o", page, hang)
        check("html page", rc == 0 and os.path.exists(page) and "hang" in open(page).read(), out + err)

        rc, out, err = run(strata, "diagnose", "--fail-on", "findings", hang)
        check("--fail-on findings exits 3", rc == 3, f"rc {rc} {err}")

        mismatch = os.path.join(work, "mismatch")
        make("dtype_mismatch", mismatch)
        rc, out, err = run(strata, "diagnose", "--format", "json", mismatch)
        f = (json.loads(out).get("findings") or [{}])[0] if rc == 0 else {}
        check("json mismatch finding", (f.get("cause"), f.get("rank"), f.get("evidence", {}).get("seq")) ==
              ("collective_mismatch", 3, 3), out + err)

        # --rank-map swaps ranks 1 and 3: rank 3 is then the one that never enqueued.
        rc, out, err = run(strata, "diagnose", "--format", "json", "--rank-map",
                           "nccl_trace_rank_1=3,nccl_trace_rank_3=1", hang)
        f = (json.loads(out).get("findings") or [{}])[0] if rc == 0 else {}
        check("--rank-map overrides the file name", f.get("rank") == 3, out + err)

        rc, out, err = run(strata, "summary", hang)
        check("summary of dumps is an error naming diagnose", rc == 6 and "strata diagnose" in err, f"rc {rc} {err}")

        # Beside the traces of the same (2-rank) job: the traces' diagnosis with the dumps' findings first.
        pair = os.path.join(work, "p2p")
        make("p2p_hang", pair)
        traces = os.path.join(ROOT, "tests/data/ddp/clean-2rank")
        rc, out, err = run(strata, "diagnose", "--format", "json", pair, traces)
        doc = json.loads(out) if rc == 0 else {}
        f = (doc.get("findings") or [{}])[0]
        check("dumps beside traces: the dumps' hang first",
              (f.get("cause"), f.get("rank"), f.get("evidence", {}).get("communicator"),
               f.get("evidence", {}).get("from")) == ("hang", 1, "0 p2p", "Flight Recorder dumps") and
              f.get("evidence", {}).get("seq") == 3, out + err)
        formats = [i.get("format") for i in doc.get("inputs", [])]
        check("dumps beside traces: both kinds of input", formats.count("flight-recorder") == 2 and len(formats) == 4,
              out)
        check("dumps beside traces: the traces diagnosed too", doc.get("job", {}).get("matched", 0) > 0, out)
        # Beside a recording (here one without a hang): the dumps' hang first, and the difference said.
        recording = os.path.join(ROOT, "examples/recorded-2rank-cpu-contention")
        rc, out, err = run(strata, "diagnose", "--format", "json", pair, recording)
        doc = json.loads(out) if rc == 0 else {}
        f = (doc.get("findings") or [{}])[0]
        check("dumps beside a recording: the dumps' hang first", (f.get("cause"), f.get("rank")) == ("hang", 1),
              out + err)
        check("dumps beside a recording: the difference said",
              "the recording and the Flight Recorder dumps differ: the recording names no rank as stopped, the "
              "dumps rank(s) 1" in doc.get("notes", []), out + err)

        nameless = os.path.join(work, "nameless")
        os.makedirs(nameless)
        shutil.copy(os.path.join(hang, "nccl_trace_rank_0"), os.path.join(nameless, "dump_a"))
        shutil.copy(os.path.join(hang, "nccl_trace_rank_2"), os.path.join(nameless, "dump_b"))
        rc, out, err = run(strata, "diagnose", nameless)
        check("a dump without a rank is an error naming --rank-map", rc == 5 and "--rank-map dump_a=RANK" in err,
              f"rc {rc} {err}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "flight recorder CLI: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
