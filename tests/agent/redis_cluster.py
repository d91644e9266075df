"""A Redis Cluster of real servers for the cluster tests (issue 49): the key-slot function, the ACL user strata
runs as and the test's own admin user, and `Cluster`, three masters (and replicas) started on loopback or on an
address inside a network namespace, with no persistence. Shared by test_cluster.py, test_serve_lease.py and
test_cluster_fleet.py.

Invariants: every server a Cluster starts is killed by stop(); once start() returned, every node has the same
users (`USER` with strata's commands only, `admin` with all) and the default user is off, so each later
redis-cli call authenticates as admin; owner() answers from the map read last unless asked for a fresh one.
"""
import json
import os
import socket
import subprocess
import time

from checks import free_port

USER, PASSWORD = "strata", "pw-%d-cluster-secret" % os.getpid()
# What strata's user may do (docs/agent.md): its keys, and the commands it sends.
STRATA_ACL = ["~strata:*", "resetchannels", "-@all", "+xadd", "+sadd", "+smembers", "+get", "+set", "+xgroup|create",
              "+xautoclaim", "+xreadgroup", "+xack", "+xread", "+xrevrange", "+cluster|slots", "+asking",
              "+xrange", "+hgetall", "+eval", "+pexpire", "+hset", "+del"]  # serve's leases (job_lease.h)
ADMIN_PASSWORD = "admin-%d" % os.getpid()  # the test's own redis-cli


def crc16(data):
    """CRC16-XMODEM, as Redis Cluster hashes keys (independent of the C++ under test)."""
    crc = 0
    for b in data.encode():
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def slot(job):
    return crc16(job) % 16384  # a job's keys hash its {JOB} tag


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


class Cluster:
    """Three cluster-enabled masters (and `replicas` replicas each, with a 3 s node timeout) in `tmp`; stop()
    kills them all. By default on free loopback ports; with `prefix` (a command prefix such as
    `ip netns exec NS`) every server and redis-cli runs under it, bound to `host` on `ports` (a fresh namespace
    has them all free)."""

    def __init__(self, tmp, replicas=0, host="127.0.0.1", prefix=(), ports=None):
        self.replicas, self.host, self.prefix = replicas, host, list(prefix)
        self.ports = list(ports) if ports else [free_cluster_port() for _ in range(3 * (1 + replicas))]
        self.procs = []
        self.auth = []
        for p in self.ports:  # a directory each: a replica's full sync writes dump.rdb there
            os.makedirs(os.path.join(tmp, f"redis-{p}"))
            self.procs.append(subprocess.Popen(
                self.prefix + ["redis-server", "--port", str(p), "--bind", host, "--cluster-enabled", "yes",
                               "--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no",
                               "--daemonize", "no", "--dir", os.path.join(tmp, f"redis-{p}"), "--logfile", "redis.log"]
                + (["--cluster-node-timeout", "3000"] if replicas else [])
                # off loopback the default user would be refused until start() switches it off (a private namespace)
                + (["--protected-mode", "no"] if host != "127.0.0.1" else [])))

    def cli(self, port, *args, check=True):
        return subprocess.run(self.prefix + ["redis-cli", "-h", self.host, "-p", str(port), *self.auth, *args],
                              capture_output=True, text=True, check=check, timeout=30).stdout

    def url(self, seeds=2):
        """strata's --redis: the ACL user and password, the first `seeds` nodes."""
        return "redis://%s:%s@%s" % (USER, PASSWORD, ",".join(f"{self.host}:{p}" for p in self.ports[:seeds]))

    def start(self):
        for p in self.ports:
            for _ in range(100):
                if self.cli(p, "PING", check=False).strip() == "PONG":
                    break
                time.sleep(0.05)
        made = subprocess.run(self.prefix + ["redis-cli", "--cluster", "create",
                                             *[f"{self.host}:{p}" for p in self.ports],
                                             "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                              capture_output=True, text=True, timeout=60)
        if made.returncode != 0:
            raise AssertionError(f"redis-cli --cluster create failed: {made.stdout[-400:]} {made.stderr[-400:]}")
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

    def jobs_on_masters(self, prefix, count):
        """`count` job ids PREFIX-N whose slots belong to `count` different masters, and those masters' ports."""
        jobs, owners = [], []
        for n in range(5000):
            job = f"{prefix}-{n}"
            owner = self.owner(slot(job))
            if owner is not None and owner not in owners:
                jobs.append(job)
                owners.append(owner)
            if len(jobs) == count:
                return jobs, owners
        raise AssertionError(f"no {count} jobs on different masters")

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait(timeout=20)
