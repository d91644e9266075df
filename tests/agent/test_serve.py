#!/usr/bin/env python3
"""`strata serve` as a program (no root): against a redis-server the test starts (free port, no persistence),
8 ranks of one job publish step summaries from two "nodes" (hosts node-a, node-b) with redis-cli; rank 3
computes 15 ms more per step from step 8. serve's /api/v1/status must name rank 3 (source online, cause
slow_compute) and only it; /metrics must have strata_straggler for it. serve is then stopped (SIGTERM) and
restarted with the same consumer name while more steps arrive: the restarted serve counts exactly the
entries published after the stop (nothing re-processed, nothing lost) and leaves nothing pending.

usage: test_serve.py STRATA_BINARY
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

from checks import Checks, free_port, get



def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    strata = os.path.abspath(sys.argv[1])
    checks = Checks()
    expect = checks.expect

    rng = random.Random(3)
    job = "serve-test"
    key = "strata:job:{%s}:steps" % job

    with tempfile.TemporaryDirectory(prefix="strata-serve-") as tmp:
        rport = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no", "--dir", tmp, "--logfile", "redis.log"])

        def cli(commands):
            return subprocess.run(["redis-cli", "-p", str(rport)], input="\n".join(commands) + "\n",
                                  capture_output=True, text=True, check=True).stdout

        def publish(first, last):
            cmds = [f"SADD strata:jobs {job}"]
            for step in range(first, last):
                for rank in range(8):
                    work = 0.06 + rng.gauss(0, 0.0005) + (0.015 if rank == 3 and step >= 8 else 0)
                    host = "node-a" if rank < 4 else "node-b"
                    cmds.append(f"XADD {key} MAXLEN ~ 100000 * kind summary host {host} rank {rank} group 0 "
                                f"step {step} step_s 0.1 wait_s {0.1 - work:.9f} oncpu_s {work:.9f} runq_s 0 "
                                f"throttled_s 0 gc_s 0 io_s 0 offcpu_other_s 0")
            cli(cmds)

        def start_serve(port):
            return subprocess.Popen([strata, "serve", "--redis", f"redis://127.0.0.1:{rport}", "--listen",
                                     f"127.0.0.1:{port}", "--consumer", "test-serve", "-q"])

        def status(port):
            for _ in range(50):
                try:
                    return json.loads(get(port, "/api/v1/status"))
                except OSError:
                    time.sleep(0.1)
            raise AssertionError("serve does not answer on /api/v1/status")

        def wait_for(port, cond, seconds=10):
            deadline = time.time() + seconds
            jobs = []
            while time.time() < deadline:
                s = status(port)
                jobs = [j for j in s.get("jobs", []) if j["job"] == job]
                if jobs and cond(jobs[0]):
                    return jobs[0]
                time.sleep(0.2)
            return jobs[0] if jobs else None

        serve = None
        try:
            for _ in range(50):
                try:
                    if cli(["PING"]).strip() == "PONG":
                        break
                except subprocess.CalledProcessError:
                    pass
                time.sleep(0.1)
            port = free_port()
            serve = start_serve(port)
            publish(0, 8)
            j = wait_for(port, lambda j: j.get("online", {}).get("summaries") == 64)
            expect(j is not None and j["ranks"] == list(range(8)), "serve sees the 8 ranks of both nodes")
            expect(j is not None and not j["findings"], f"nothing raised on clean steps ({j and j['findings']})")
            publish(8, 18)  # 100 ms steps: clearly late in 7 of 10 (2 of 3 over a second) names the rank
            j = wait_for(port, lambda j: j.get("online", {}).get("summaries") == 144)
            ranks = sorted({f["rank"] for f in j["findings"]}) if j else None
            expect(ranks == [3], f"serve names rank 3 and only it (named {ranks})")
            if j and j["findings"]:
                f = j["findings"][0]
                expect(f["cause"] == "slow_compute" and f["source"] == "online" and f["step"] <= 14,
                       f"finding: cause {f['cause']}, source {f['source']}, step {f['step']} (fault from step 8)")
            metrics = get(port, "/metrics")
            expect(f'strata_straggler{{training_job="{job}",rank="3"}} 1' in metrics, "/metrics has strata_straggler for rank 3")
            serve.send_signal(signal.SIGTERM)
            expect(serve.wait(timeout=20) == 0, "serve stops on SIGTERM with exit 0")
            publish(18, 24)  # while serve is down
            port = free_port()
            serve = start_serve(port)
            publish(24, 26)
            j = wait_for(port, lambda j: j.get("online", {}).get("summaries") == 64)
            time.sleep(1)
            j = wait_for(port, lambda j: True)
            online = j.get("online", {}) if j else {}
            expect(online.get("summaries") == 64 and online.get("duplicates") == 0,
                   f"the restarted serve took steps 18..25 once each (summaries {online.get('summaries')}, "
                   f"duplicates {online.get('duplicates')})")
            expect(all(v == 25 for v in online.get("last_step", {}).values()), "every rank's last step is 25")
            pending = cli([f"XPENDING {key} strata-serve"]).split()
            expect(pending and pending[0] == "0", f"nothing left pending (XPENDING: {pending[:1]})")
        finally:
            if serve and serve.poll() is None:
                serve.send_signal(signal.SIGTERM)
                serve.wait(timeout=20)
            redis.terminate()
            redis.wait(timeout=20)
    return checks.result()


if __name__ == "__main__":
    sys.exit(main())
