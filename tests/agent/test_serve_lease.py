#!/usr/bin/env python3
"""Several `strata serve` share the jobs (issue 49 item 2), as programs (no root): two serves (serve-a, serve-b,
--lease-s 2) on one redis-server the test starts, or with --cluster on a 3-master Redis Cluster with an ACL user
(tests/agent/redis_cluster.py's Cluster). Two 8-rank jobs publish 60 steps of step summaries in real time (about
7 steps a second); job-a's rank 5 and job-b's rank 2 compute 15 ms more per step from step 10. job-b is handed to
serve-b by writing its lease under serve-b's name before the serves start (what a serve restarted under that
name finds); serve-a starts first and takes job-a (free: SET NX). At step 30 serve-b is killed (SIGKILL: no release, its lease must expire).
Checked: before the kill each serve's /api/v1/status names the owner of both jobs (itself for one, the other
serve for the other); serve-a takes job-b over within 1.25 lease plus 1.5 s of the kill; at the end serve-a
owns both, names rank 5 of job-a and rank 2 of job-b (and only them), and each job's steps judged over all its
owners is 60 (each step once: none twice, none lost), in serve-a's status and in the job's judged record.

usage: test_serve_lease.py STRATA_BINARY [--cluster]
"""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

import redis_cluster
from checks import Checks, free_port, get, unmet

LEASE_S, STEPS, KILL_AT, FAULT_FROM = 2.0, 60, 30, 10
SLOW = {"job-a": 5, "job-b": 2}


class Resp:
    """A minimal RESP client for the test's own commands (independent of the C++ under test)."""

    def __init__(self, port, auth=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        if auth:
            self.call("AUTH", *auth)

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)

    def line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode()
        return [self.reply() for _ in range(int(rest))]

    def call(self, *args):
        self.send(*args)
        return self.reply()

    def pipeline(self, commands):
        for c in commands:
            self.send(*c)
        return [self.reply() for _ in commands]


def summary(job, rank, step, rng):
    work = 0.06 + rng.gauss(0, 0.0005) + (0.015 if rank == SLOW[job] and step >= FAULT_FROM else 0)
    return ["XADD", "strata:job:{%s}:steps" % job, "MAXLEN", "~", "100000", "*", "kind", "summary", "host",
            "node-%d" % (rank // 4), "rank", rank, "group", 0, "step", step, "step_s", 0.1, "wait_s",
            "%.9f" % (0.1 - work), "oncpu_s", "%.9f" % work, "runq_s", 0, "throttled_s", 0, "gc_s", 0, "io_s", 0,
            "offcpu_other_s", 0]


def status(port):
    try:
        return json.loads(get(port, "/api/v1/status"))
    except (OSError, ValueError):
        return None


def job_of(st, job):
    for j in (st or {}).get("jobs", []):
        if j["job"] == job:
            return j
    return None


def owner_of(st, job):
    j = job_of(st, job)
    return (j or {}).get("owner", {}).get("serve")


def named(j):
    return sorted({f["rank"] for f in (j or {}).get("findings", [])})


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--cluster"):
        print(__doc__)
        return 2
    strata, cluster_mode = os.path.abspath(sys.argv[1]), len(sys.argv) == 3
    stop = unmet(("redis-server", "redis-cli"), needs_root=False)
    if stop is not None:
        return stop
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="strata-lease-") as tmp:
        procs, cluster, redis = [], None, None
        try:
            if cluster_mode:
                cluster = redis_cluster.Cluster(tmp)
                cluster.start()
                url = cluster.url()
                admin = ("admin", redis_cluster.ADMIN_PASSWORD)
                conns = {job: Resp(cluster.owner(redis_cluster.slot(job)), admin) for job in SLOW}
                jobset = Resp(cluster.owner(redis_cluster.slot("strata:jobs")), admin)
                print(f"     cluster {cluster.ports}; job-a on {cluster.owner(redis_cluster.slot('job-a'))}, "
                      f"job-b on {cluster.owner(redis_cluster.slot('job-b'))}", flush=True)
            else:
                rport = free_port()
                redis = subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                                          "--appendonly", "no", "--dir", tmp, "--logfile", "redis.log"])
                for _ in range(100):
                    try:
                        Resp(rport).call("PING")
                        break
                    except OSError:
                        time.sleep(0.05)
                url = f"redis://127.0.0.1:{rport}"
                conns = {job: Resp(rport) for job in SLOW}
                jobset = conns["job-a"]
            run(strata, url, conns, jobset, procs, tmp, checks.expect)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait(timeout=20)
            if cluster:
                cluster.stop()
            if redis:
                redis.terminate()
                redis.wait(timeout=20)
    return checks.result()


def run(strata, url, conns, jobset, procs, tmp, expect):
    rng = random.Random(5)
    # job-b to serve-b: its lease under serve-b's name (as a serve restarted under that name would find it),
    # long enough for serve-b to start; serve-a starts first and takes job-a, free, with SET NX.
    conns["job-b"].call("SET", "strata:job:{job-b}:lease", "serve-b", "PX", "15000")
    ports = {"serve-a": free_port(), "serve-b": free_port()}

    def start(name):
        log = open(os.path.join(tmp, f"{name}.log"), "w")
        procs.append(subprocess.Popen([strata, "serve", "--redis", url, "--listen", f"127.0.0.1:{ports[name]}",
                                       "--consumer", name, "--lease-s", str(LEASE_S)], stdout=log,
                                      stderr=subprocess.STDOUT))

    def wait_owner(name, job):
        for _ in range(100):
            j = job_of(status(ports[name]), job)
            if j and j["owner"]["this_serve"]:
                return
            time.sleep(0.1)

    start("serve-a")
    jobset.call("SADD", "strata:jobs", "job-a", "job-b")
    wait_owner("serve-a", "job-a")
    start("serve-b")
    wait_owner("serve-b", "job-b")
    serve_b = procs[1]
    before, killed_at, taken_after = {}, None, None
    started = time.time()
    for step in range(STEPS):
        for job, conn in conns.items():
            conn.pipeline([summary(job, r, step, rng) for r in range(8)])
        if step == KILL_AT - 1:
            time.sleep(0.5)  # both serves judge what was published
            before = {name: status(port) for name, port in ports.items()}
            serve_b.send_signal(signal.SIGKILL)
            serve_b.wait(timeout=10)
            killed_at = time.time()
            print(f"     serve-b killed at step {KILL_AT}, {killed_at - started:.1f} s in", flush=True)
        if killed_at and taken_after is None and owner_of(status(ports["serve-a"]), "job-b") == "serve-a":
            taken_after = time.time() - killed_at
        time.sleep(0.15)
    deadline = time.time() + 15
    while time.time() < deadline:
        st = status(ports["serve-a"])
        if taken_after is None and owner_of(st, "job-b") == "serve-a":
            taken_after = time.time() - killed_at
        if all((job_of(st, j) or {}).get("owner", {}).get("steps_judged_total") == STEPS for j in SLOW):
            break
        time.sleep(0.2)
    final = status(ports["serve-a"])
    check(before, final, taken_after, conns, expect)


def check(before, final, taken_after, conns, expect):
    for name, other in (("serve-a", "serve-b"), ("serve-b", "serve-a")):
        st = before.get(name)
        mine = "job-a" if name == "serve-a" else "job-b"
        theirs = "job-b" if name == "serve-a" else "job-a"
        ja, jt = job_of(st, mine), job_of(st, theirs)
        expect(ja is not None and ja["owner"]["serve"] == name and ja["owner"]["this_serve"],
               f"before the kill, {name}'s status: {mine} owned by {name} ({ja and ja.get('owner')})")
        expect(jt is not None and jt["owner"]["serve"] == other and not jt["owner"]["this_serve"],
               f"before the kill, {name}'s status: {theirs} owned by {other} ({jt and jt.get('owner')})")
    limit = 1.25 * LEASE_S + 1.5
    expect(taken_after is not None and taken_after <= limit,
           f"serve-a took job-b over {taken_after if taken_after is None else round(taken_after, 2)} s after "
           f"serve-b died (at most {limit} s)")
    for job, rank in SLOW.items():
        j = job_of(final, job)
        owner = (j or {}).get("owner", {})
        online = (j or {}).get("online", {})
        expect(owner.get("serve") == "serve-a" and owner.get("this_serve"), f"serve-a's status: serve-a owns {job}")
        expect(owner.get("steps_judged_total") == STEPS,
               f"{job}: {owner.get('steps_judged_total')} steps judged over all its owners, {STEPS} published "
               f"(none twice, none lost; serve-a judged {online.get('steps_judged')})")
        expect(online.get("duplicates") == 0, f"{job}: no summary taken twice by serve-a ({online.get('duplicates')})")
        expect(named(j) == [rank], f"{job}: serve-a names rank {rank} and only it ({named(j)})")
        record = conns[job].call("HGET", "strata:job:{%s}:judged" % job, "steps_judged")
        expect(record == str(STEPS), f"{job}'s judged record says {record} steps judged")
    jb = (job_of(final, "job-b") or {}).get("online", {})
    expect(0 < (jb.get("steps_judged") or 0) < STEPS,
           f"job-b was judged in part by each serve (serve-a: {jb.get('steps_judged')} of {STEPS})")


if __name__ == "__main__":
    sys.exit(main())
