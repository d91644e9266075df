#!/usr/bin/env python3
"""Deep tracing on demand, for real (root, eBPF; issue 25 item 5, docs/agent.md "Deep tracing"): `strata agent`
raises its flight recorder's stack-sampling rate for a bounded window, by hand (POST /api/v1/deep) and when an
online detection names a rank, then returns to the always-on rate; control requests are answered from loopback
without a token, and only with the token when the agent was given one (--control-token FILE).

usage: test_deep.py STRATA_BINARY
Runs tests/agent/fault_job.py (2 gloo ranks, up to 360 s, stopped once the checks are done; rank 1 computes
40 ms more per step from 15 s on) under an agent with --deep-s 8 --deep-sample-hz 199. Checks, in order: the
detection opens a window (status, a recorder running with --sample-hz 199) whose 8 s count from when its deep
recorder is attached (the status's `began_unix` and `until_unix`, once `attaching` turns false), and which
closes by itself, not before its end (then only a recorder at the always-on 49 Hz runs); a POST of 10 s opens
another (status, metrics), which closes too; each deep chunk's own record says 199 Hz.
Timing on a loaded machine (one busy core beside the job, 2026-12-04): the always-on recorder that follows a
window took 16 s to attach, the deep one then wrote its handover, closed its file and let its probes go in a
child of its own (listed as a recorder until done): 30 s from the window's end until only the always-on
recorder was left. The checks allow 90 s for that, and the job runs long enough for both windows.
Then a second agent with a token file refuses requests without it or with a wrong one. Exits 77 (skipped) when
not root or without BTF (1 under CI=true: a skip fails CI).
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from checks import Checks, free_port, get, unmet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
DEEP_HZ, ALWAYS_HZ = 199, 49



def curl_post(port, path):
    """(HTTP status, JSON body) of the docs' `curl -s -X POST URL`: no body, no Content-Length (httplib answered
    such a POST 400 with an empty body until the route took a content reader)."""
    r = subprocess.run(["curl", "-s", "-X", "POST", "-w", "\n%{http_code}", f"http://127.0.0.1:{port}{path}"],
                       capture_output=True, text=True, timeout=10)
    body, _, code = r.stdout.rpartition("\n")
    return int(code or 0), json.loads(body or "{}")


def post(port, path, token=None):
    """(HTTP status, JSON body) of a POST."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=b"", method="POST")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read().decode() or "{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "{}")


def recorder_rates(strata):
    """The --sample-hz of every `strata record` process running now."""
    out = subprocess.run(["pgrep", "-af", f"{strata} record"], capture_output=True, text=True).stdout
    return sorted(int(m) for m in re.findall(r"--sample-hz (\d+)", out))


def wait_for(what, timeout, poll):
    """Polls poll() every 0.5 s until it returns something true (returned) or timeout (None)."""
    end = time.time() + timeout
    while time.time() < end:
        v = poll()
        if v:
            return v
        time.sleep(0.5)
    return None


def find_key(doc, key):
    """Every value of `key` anywhere in a JSON document."""
    if isinstance(doc, dict):
        return ([doc[key]] if key in doc else []) + [v for x in doc.values() for v in find_key(x, key)]
    if isinstance(doc, list):
        return [v for x in doc for v in find_key(x, key)]
    return []


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    strata = os.path.abspath(sys.argv[1])
    stop = unmet(("curl",))
    if stop is not None:
        return stop
    checks = Checks()
    expect = checks.expect
    with tempfile.TemporaryDirectory(prefix="strata-deep-") as tmp:
        os.chmod(tmp, 0o755)
        port = free_port()
        flight = os.path.join(tmp, "flight")
        # A detection's window of 15 s: CI's run of 8972ac3 (the machine loaded) saw an 8 s window open and end
        # with no deep chunk written and the job's ranks not yet listed again: the switch to a new recorder
        # (its probes attached anew) can take most of 8 s there. Locally it passes with 8 s (3 of 3).
        agent = subprocess.Popen([strata, "agent", "--listen", f"127.0.0.1:{port}", "--dir", flight, "--interval-s",
                                  "1", "--window-s", "8", "--deep-s", "8", "--deep-sample-hz", str(DEEP_HZ)])
        job = None
        try:
            expect(wait_for("the agent", 10, lambda: _answers(port)) is not None, "the agent answers on /api/v1/status")
            job_id = f"deep-test-{os.getpid()}"
            code, body = post(port, f"/api/v1/deep?job={job_id}&seconds=5")
            expect(code == 404, f"a job the agent does not watch: 404 (got {code} {body})")
            out = os.path.join(tmp, "job")
            job = subprocess.Popen([PY, os.path.join(ROOT, "tests", "agent", "fault_job.py"), out, "--seconds", "360",
                                    "--fault-after", "15", "--extra-ms", "40", "--job", job_id],
                                   start_new_session=True)

            def deep_state():
                jobs = [j for j in json.loads(get(port, "/api/v1/status"))["jobs"] if j["job"] == job_id]
                return jobs[0]["deep"] if jobs and jobs[0]["ranks"] == [0, 1] else None

            def window_closes(what, within_s):
                closed = wait_for(what, within_s, lambda: not (deep_state() or {"active": True})["active"])
                expect(closed is not None, f"{what}: the window closed by itself")
                back = wait_for(what, 90, lambda: recorder_rates(strata) == [ALWAYS_HZ])
                expect(back is not None, f"{what}: then only an always-on recorder runs ({recorder_rates(strata)})")

            first = wait_for("the job", 15, deep_state)
            expect(first is not None and not first["active"] and first["windows"] == 0,
                   f"the agent found the job, not in a deep window ({first})")
            expect(wait_for("a recorder", 10, lambda: recorder_rates(strata) == [ALWAYS_HZ]) is not None,
                   f"the always-on recorder samples at {ALWAYS_HZ} Hz ({recorder_rates(strata)})")
            code, body = post(port, f"/api/v1/deep?job={job_id}&seconds=abc")
            expect(code == 400, f"seconds that are not a number: 400 (got {code})")
            # 1. The detection of the slow rank opens a window of --deep-s.
            detected = wait_for("the detection's window", 40, lambda: (
                (deep_state() or {}).get("reason", "").startswith("detection") and deep_state()["active"]
                and deep_state()))
            expect(bool(detected) and detected["requested"] and detected["windows"] == 1 and
                   detected["sample_hz"] == DEEP_HZ, f"a detection opened a window ({detected})")
            if detected and not detected["reason"].startswith("detection: rank 1"):
                print(f"note: the window's detection is not the injected rank 1's: {detected['reason']}", flush=True)
            expect(wait_for("a deep recorder", 10, lambda: DEEP_HZ in recorder_rates(strata)) is not None,
                   f"a recorder samples at {DEEP_HZ} Hz in the window ({recorder_rates(strata)})")
            # Its seconds count from the deep recorder's attaching (a switch took most of an 8 s window on a
            # loaded machine when they counted from the detection: CI of 8972ac3). The status says when they
            # began and end: seen from outside, a round's publication lags by a round (seconds under load).
            attached = wait_for("the deep recorder attached", 30, lambda: (
                (deep_state() or {}).get("requested") and not deep_state()["attaching"] and deep_state()))
            expect(attached is not None and attached["began_unix"] is not None,
                   f"the window's deep recorder attached (status: attaching false, began_unix set: {attached})")
            span = None if not attached or attached["began_unix"] is None else \
                attached["until_unix"] - attached["began_unix"]
            expect(span is not None and abs(span - 8) < 0.01,
                   f"the window lasts its 8 s from the attaching (until_unix - began_unix: {span})")
            ended = wait_for("the window's end", 30, lambda: not (deep_state() or {"requested": True})["requested"]
                             and time.time())
            expect(attached is not None and ended is not None and ended >= attached["until_unix"] - 0.5,
                   f"the window did not close before its end (seen closed at {ended}, until_unix "
                   f"{attached and attached['until_unix']})")
            window_closes("the detection's window", 20)
            # 2. By hand: a POST opens one (detections would not: their refractory time runs).
            # (The job runs long enough for this under CI's load: the first CI run of this test posted it as
            # a 60 s job ended, and no recorder could start.)
            code, body = curl_post(port, f"/api/v1/deep?job={job_id}&seconds=10")
            expect(code == 202 and body.get("seconds") == 10,
                   f"POST /api/v1/deep from loopback as docs/agent.md writes it (curl -X POST, no body): 202 ({code} {body})")
            opened = wait_for("the window", 10, lambda: (deep_state() or {}).get("active") and deep_state())
            expect(bool(opened) and opened["reason"] == "requested over HTTP" and opened["sample_hz"] == DEEP_HZ
                   and opened["windows"] == 2, f"the status shows the window ({opened})")
            metrics = get(port, "/metrics")
            expect(re.search(r'^strata_deep_tracing\{training_job="%s"\} 1$' % re.escape(job_id), metrics, re.M)
                   is not None and re.search(r'^strata_deep_windows_total\{training_job="%s"\} 2$'
                                             % re.escape(job_id), metrics, re.M) is not None,
                   "/metrics: strata_deep_tracing 1 and strata_deep_windows_total 2 in the window")
            expect(wait_for("a deep recorder", 10, lambda: DEEP_HZ in recorder_rates(strata)) is not None,
                   f"a recorder samples at {DEEP_HZ} Hz in the window ({recorder_rates(strata)})")
            # Its 10 s count from its attaching, which may take up to kDeepAttachWaitS (30 s) on a loaded machine.
            window_closes("the requested window", 10 + 30 + 10)
        finally:
            if job is not None and job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)  # the launcher and its ranks
                job.wait(timeout=30)
            agent.send_signal(signal.SIGTERM)
            try:
                rc = agent.wait(timeout=20)
            except subprocess.TimeoutExpired:
                agent.kill()
                rc = None
        expect(rc == 0, f"the agent stops on SIGTERM with exit 0 (got {rc})")
        rates = _chunk_rates(strata, flight)
        expect(bool(rates) and rates[0] == ALWAYS_HZ and rates.count(DEEP_HZ) >= 2,
               f"the chunks' own records: always-on first, deep for both windows (sample_hz by chunk: {rates})")

        # With a token: no token, a wrong one, then the right one (on a job it does not watch: 404, past the check).
        token = os.path.join(tmp, "token")
        with open(token, "w") as fh:
            fh.write("t0k-%d\n" % os.getpid())
        port = free_port()
        agent = subprocess.Popen([strata, "agent", "--listen", f"127.0.0.1:{port}", "--dir", flight, "--control-token",
                                  token, "-q"])
        try:
            expect(wait_for("the agent", 10, lambda: _answers(port)) is not None, "the agent with a token answers")
            code, _ = post(port, "/api/v1/deep?job=x&seconds=5")
            expect(code == 401, f"no token: 401 (got {code})")
            code, _ = post(port, "/api/v1/deep?job=x&seconds=5", token="wrong")
            expect(code == 401, f"a wrong token: 401 (got {code})")
            code, _ = post(port, "/api/v1/deep?job=x&seconds=5", token="t0k-%d" % os.getpid())
            expect(code == 404, f"the token: past the check, and no job x (404, got {code})")
        finally:
            agent.send_signal(signal.SIGTERM)
            agent.wait(timeout=20)
        bad = subprocess.run([strata, "agent", "--control-token", os.path.join(tmp, "none"), "--run-s", "1"],
                             capture_output=True, text=True)
        expect(bad.returncode != 0 and "none" in bad.stderr, f"a missing token file is an error naming it "
               f"(exit {bad.returncode}: {bad.stderr.strip()})")
    return checks.result()


def _answers(port):
    try:
        return json.loads(get(port, "/api/v1/status"))
    except (OSError, ValueError):
        return None


def _chunk_rates(strata, flight):
    """The sample_hz each finished chunk's recording says it ran at, in chunk order."""
    rates = []
    for base, dirs, files in sorted(os.walk(flight)):
        for name in sorted(files):
            if name.endswith(".sseg") and os.path.basename(base).startswith("chunk-"):
                out = subprocess.run([strata, "inspect", "--format", "json", os.path.join(base, name)],
                                     capture_output=True, text=True)
                try:
                    found = find_key(json.loads(out.stdout), "sample_hz")
                except ValueError:
                    found = []
                rates += found[:1]
    return rates


if __name__ == "__main__":
    sys.exit(main())
