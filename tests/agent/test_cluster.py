#!/usr/bin/env python3
"""strata on a Redis Cluster (issue 49 item 1; root, eBPF): the test starts a 3-master cluster on free loopback
ports (no persistence, no replicas), an ACL user with a password on every node (its keys and strata's commands
only) and the default user off, then one `strata agent` and `strata serve`, both given two of the three nodes
as seeds with the user and password in the URL. Two 3-rank jobs (tests/agent/fault_job.py, --sleep-compute) run together under the agent;
their ids are picked so that their steps streams hash to slots of different masters. Rank 2 of the first and
rank 1 of the second compute 40 ms more per step from 8 s on. Checks: each stream is on the master the slot
map gives it; serve judges both jobs with their three ranks and names each job's slow rank (and only it);
serve's log has no MOVED, ASK or CROSSSLOT and its strata_serve_redis_failures_total and the agent's
strata_redis_failures_total stay 0; the password is in no output (serve's and the agent's logs, status and
metrics). The agent runs with --deep-s 0: a detection's deep-tracing switch is not what this tests, and on a loaded
2-core machine its recorders attaching as the test stops outlived the agent by ~20 s. Every server the test
starts is stopped on the way out, failed or not. Prints how long it took (50 s here, under load).

usage: test_cluster.py STRATA_BINARY [--failover]
With --failover (issue 49 item 3): 3 masters and 3 replicas (3 s node timeout); the first job's master is
killed 4 s after the fault begins. Serve must still name both slow ranks, judge the first job's steps well past
the kill (its ranks 30 steps further), find its stream on the promoted replica, and stop counting Redis
failures once it is promoted; failures during the promotion, duplicates and gaps are printed.
Exits 77 (skipped) when not root, without BTF or without redis-server/redis-cli (1 under CI=true).
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

from checks import Checks, free_port, get, unmet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
USER, PASSWORD = "strata", "pw-%d-cluster-secret" % os.getpid()
# What strata's user may do (docs/agent.md): its keys, and the commands it sends.
STRATA_ACL = ["~strata:*", "resetchannels", "-@all", "+xadd", "+sadd", "+smembers", "+get", "+set", "+xgroup|create",
              "+xautoclaim", "+xreadgroup", "+xack", "+xread", "+xrevrange", "+cluster|slots", "+asking",
              "+xrange", "+hgetall", "+eval", "+pexpire", "+hset", "+del"]  # serve's leases (job_lease.h)
ADMIN_PASSWORD = "admin-%d" % os.getpid()  # the test's own redis-cli
JOB_SECONDS, FAULT_AFTER = 24, 8


def crc16(data):
    """CRC16-XMODEM, as Redis Cluster hashes keys (independent of the C++ under test)."""
    crc = 0
    for b in data.encode():
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def free_cluster_port():
    """A free loopback port whose cluster bus port (+10000) is free too."""
    while True:
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
                return port
            except OSError:
                pass


def slot(job):
    return crc16(job) % 16384  # a steps key hashes its {JOB} tag


class Cluster:
    """Three cluster-enabled masters (and `replicas` replicas each, with a 3 s node timeout) on free ports in
    `tmp`; stop() kills them all."""

    def __init__(self, tmp, replicas=0):
        self.replicas = replicas
        self.ports = [free_cluster_port() for _ in range(3 * (1 + replicas))]
        self.procs = []
        self.auth = []
        for p in self.ports:  # a directory each: a replica's full sync writes dump.rdb there
            os.makedirs(os.path.join(tmp, f"redis-{p}"))
            self.procs.append(subprocess.Popen(
                ["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no",
                 "--daemonize", "no", "--dir", os.path.join(tmp, f"redis-{p}"), "--logfile", "redis.log"]
                + (["--cluster-node-timeout", "3000"] if replicas else [])))

    def cli(self, port, *args, check=True):
        return subprocess.run(["redis-cli", "-p", str(port), *self.auth, *args], capture_output=True, text=True,
                              check=check, timeout=30).stdout

    def start(self):
        for p in self.ports:
            for _ in range(100):
                if subprocess.run(["redis-cli", "-p", str(p), "PING"], capture_output=True, text=True).stdout.strip() \
                        == "PONG":
                    break
                time.sleep(0.05)
        subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in self.ports],
                        "--cluster-replicas", str(self.replicas), "--cluster-yes"], capture_output=True, text=True, check=True,
                       timeout=60)
        for _ in range(200):
            if all("cluster_state:ok" in self.cli(p, "CLUSTER", "INFO") and self.linked(p) for p in self.ports):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the cluster never reached cluster_state:ok")
        for p in self.ports:  # ACLs are per node: the same users on each, the default user off
            self.cli(p, "ACL", "SETUSER", USER, "on", ">" + PASSWORD, *STRATA_ACL)
            self.cli(p, "ACL", "SETUSER", "admin", "on", ">" + ADMIN_PASSWORD, "~*", "&*", "+@all")
            self.cli(p, "ACL", "SETUSER", "default", "off")
        self.auth = ["--user", "admin", "--pass", ADMIN_PASSWORD, "--no-auth-warning"]

    def linked(self, port):
        """A master, or a replica whose link to its master is up."""
        info = self.cli(port, "INFO", "replication")
        return "role:slave" not in info or "master_link_status:up" in info

    def kill(self, port):
        self.procs[self.ports.index(port)].kill()

    def owner(self, s, fresh=False):
        """The port of the master serving slot s (the map read once, or again when `fresh`)."""
        if fresh or not hasattr(self, "slots"):
            live = [p for p, proc in zip(self.ports, self.procs) if proc.poll() is None]
            self.slots = json.loads(self.cli(live[0], "--json", "CLUSTER", "SLOTS"))
        for first, last, master, *_ in self.slots:
            if first <= s <= last:
                return int(master[1])
        return None

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait(timeout=20)


def pick_jobs(cluster):
    """Two job ids whose slots belong to different masters."""
    jobs, owners = [], []
    for n in range(1000):
        job = f"cluster-{os.getpid()}-{n}"
        owner = cluster.owner(slot(job)) if len(jobs) < 2 else None
        if owner is not None and owner not in owners:
            jobs.append(job)
            owners.append(owner)
        if len(jobs) == 2:
            return jobs, owners
    raise AssertionError("no two jobs on different masters")


def recorders_of(tmp):
    """Pids of the processes whose command line names `tmp` (the agent's recorders write under it)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if tmp.encode() in fh.read() and int(pid) != os.getpid():
                    pids.append(int(pid))
        except OSError:
            pass
    return pids


def wait_recorders(tmp, seconds=30):
    """The agent's recorders stop by themselves soon after it; any left after `seconds` are killed."""
    deadline = time.time() + seconds
    while recorders_of(tmp) and time.time() < deadline:
        time.sleep(0.5)
    for pid in recorders_of(tmp):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def metric(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--failover"]):
        print(__doc__)
        return 2
    failover = sys.argv[2:] == ["--failover"]
    stop = unmet(("redis-server", "redis-cli"))
    if stop is not None:
        return stop
    strata = os.path.abspath(sys.argv[1])
    checks = Checks()
    expect = checks.expect
    began = time.time()
    with tempfile.TemporaryDirectory(prefix="strata-cluster-") as tmp:
        os.chmod(tmp, 0o755)
        cluster = Cluster(tmp, replicas=1 if failover else 0)
        procs = []
        try:
            run(strata, tmp, cluster, procs, expect, failover)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            cluster.stop()
            wait_recorders(tmp)
    print(f"     took {time.time() - began:.1f} s", flush=True)
    return checks.result()


def run(strata, tmp, cluster, procs, expect, failover):
    cluster.start()
    jobs, owners = pick_jobs(cluster)
    faulty = {jobs[0]: 2, jobs[1]: 1}
    url = f"redis://{USER}:{PASSWORD}@127.0.0.1:{cluster.ports[0]},127.0.0.1:{cluster.ports[1]}"
    serve_port, agent_port = free_port(), free_port()
    serve_log = open(os.path.join(tmp, "serve.log"), "w")
    agent_log = open(os.path.join(tmp, "agent.log"), "w")
    procs.append(subprocess.Popen([strata, "serve", "--redis", url, "--listen", f"127.0.0.1:{serve_port}"],
                                  stdout=serve_log, stderr=subprocess.STDOUT))
    procs.append(subprocess.Popen([strata, "agent", "--listen", f"127.0.0.1:{agent_port}", "--dir",
                                   os.path.join(tmp, "flight"), "--interval-s", "1", "--window-s", "8",
                                   "--deep-s", "0", "--redis", url], stdout=agent_log, stderr=subprocess.STDOUT))
    for _ in range(100):
        try:
            get(agent_port, "/api/v1/status")
            get(serve_port, "/api/v1/status")
            break
        except OSError:
            time.sleep(0.2)
    job_procs = []
    for job in jobs:
        out = os.path.join(tmp, job)
        job_procs.append(subprocess.Popen(
            [PY, os.path.join(ROOT, "tests", "agent", "fault_job.py"), out, "--seconds", str(JOB_SECONDS),
             "--fault-after", str(FAULT_AFTER), "--extra-ms", "40", "--job", job, "--ranks", "3", "--fault-rank",
             str(faulty[job]), "--sleep-compute"]))
    procs.extend(job_procs)
    outputs, named = [], {job: set() for job in jobs}
    started, killed_at = time.time(), None  # killed_at: job 0's last steps in serve when its master was killed
    while any(p.poll() is None for p in job_procs):
        time.sleep(1)
        status = get(serve_port, "/api/v1/status")
        outputs.append(status)
        for j in json.loads(status)["jobs"]:
            if j["job"] in named:
                named[j["job"]] |= {f["rank"] for f in j["findings"] if f.get("source") == "online"}
            if failover and killed_at is None and j["job"] == jobs[0] and time.time() - started >= FAULT_AFTER + 4:
                killed_at = dict(j.get("online", {}).get("last_step", {}))
                cluster.kill(owners[0])
                print(f"     killed {jobs[0]}'s master (port {owners[0]}) at serve's steps {killed_at}", flush=True)
    serve_failures_before = metric(get(serve_port, "/metrics"), "strata_serve_redis_failures_total")
    time.sleep(3)  # the last steps judged
    serve_status = json.loads(get(serve_port, "/api/v1/status"))
    serve_metrics, agent_metrics = get(serve_port, "/metrics"), get(agent_port, "/metrics")
    agent_status = get(agent_port, "/api/v1/status")
    outputs += [json.dumps(serve_status), serve_metrics, agent_metrics, agent_status]
    if failover:
        promoted = cluster.owner(slot(jobs[0]), fresh=True)
        expect(promoted not in (None, owners[0]), f"{jobs[0]}'s slot has a new master ({owners[0]} -> {promoted})")
        owners = [promoted, owners[1]]
    for job, port in zip(jobs, owners):
        key = "strata:job:{%s}:steps" % job
        length = cluster.cli(port, "XLEN", key).strip()
        expect(length.isdigit() and int(length) > 0,
               f"{job}'s stream (slot {slot(job)}) is on the master at port {port} ({length} entries)")
    expect(owners[0] != owners[1], f"the two jobs' streams are on different masters ({owners})")
    for job in jobs:
        served = [j for j in serve_status["jobs"] if j["job"] == job]
        online = served[0].get("online", {}) if served else {}
        expect(bool(served) and served[0]["ranks"] == [0, 1, 2], f"serve sees {job}'s three ranks "
               f"({served[0]['ranks'] if served else None}, last steps {online.get('last_step')})")
        expect(named[job] == {faulty[job]}, f"serve names rank {faulty[job]} of {job} and only it "
               f"(named {sorted(named[job])})")
        if failover and job == jobs[0]:
            last = online.get("last_step", {})
            print(f"     {job} after the failover: duplicates {online.get('duplicates')}, gaps {online.get('gaps')}, "
                  f"last steps {last}", flush=True)
            expect(killed_at is not None and last and all(last.get(r, -1) >= s + 30 for r, s in killed_at.items()),
                   f"serve judged {job}'s steps past the failover (at the kill {killed_at}, at the end {last})")
    procs[0].send_signal(signal.SIGTERM)
    procs[0].wait(timeout=20)
    procs[1].send_signal(signal.SIGTERM)
    procs[1].wait(timeout=20)
    serve_log.close()
    agent_log.close()
    logs = {n: open(os.path.join(tmp, n)).read() for n in ("serve.log", "agent.log")}
    bad = [line for line in logs["serve.log"].splitlines() if re.search(r"MOVED|ASK |CROSSSLOT", line)]
    expect(not bad, f"serve's log has no MOVED, ASK or CROSSSLOT ({bad[:3]})")
    failures = (metric(serve_metrics, "strata_serve_redis_failures_total"),
                metric(agent_metrics, "strata_redis_failures_total"))
    if failover:  # failures while the replica is promoted; none once it is
        print(f"     Redis failures counted (serve, agent): {failures}", flush=True)
        expect(failures[0] == serve_failures_before, f"serve's failures stopped climbing after the failover "
               f"({serve_failures_before} -> {failures[0]} in the last 3 s)")
    else:
        expect(failures == (0, 0), f"serve's strata_serve_redis_failures_total and the agent's "
               f"strata_redis_failures_total are 0 ({failures})")
    expect((metric(agent_metrics, "strata_redis_published_total") or 0) > 0, "the agent published to the cluster")
    leaked = [n for n, text in list(logs.items()) + [(f"output {i}", o) for i, o in enumerate(outputs)]
              if PASSWORD in text]
    expect(not leaked, f"the password is in no log, status or metrics ({leaked})")
    print(f"     serve's log: {logs['serve.log'].strip()[:400]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
