#!/usr/bin/env python3
"""Two nodes, two serves, a Redis Cluster, a master and a serve killed (issue 49 item 4; root, eBPF).

The test starts two emulated nodes (network namespaces, lab/injectors/network.py) and, in the bridge's namespace,
a Redis Cluster of 3 masters and 3 replicas (no persistence, 3 s node timeout, tests/agent/redis_cluster.py: an
ACL user with a password, the default user off) and two `strata serve` (serve-a, serve-b, 3 s leases). One
`strata agent --same-netns` runs in each node's namespace; every strata program gets the user and password in its
--redis URL. Three 4-rank jobs (tests/agent/fault_job.py, --sleep-compute, ranks 0-1 on node 0 and 2-3 on
node 1), whose ids hash to the three masters, each have a slow rank (40 ms more per step from FAULT_AFTER s).
serve-b is handed jobs 0 and 2 and serve-a job 1 by writing their leases under those names before the serves
start (what a serve restarted under its name finds): left to race for free leases, one serve often took all
three. FAULT_AFTER + 3 s in, job 0's master is killed (SIGKILL); once its replica is promoted, the serve owning
job 0 is killed (SIGKILL: its leases must expire).

Checked: each agent watched only its node's two ranks of each job; while every server is up each serve's status
names an owner for every job (at some poll) and both serves own some (a renewal late on the loaded machine may
lapse a lease for a moment; the failover may move leases: a serve whose renewals wait on the dead master loses
them to the other); the promoted replica serves job 0's slot; the surviving
serve ends owning all three jobs, sees each job's four ranks, and names each job's slow rank after the other
serve's death, the rank the serves named in most polls (on a loaded 2-core machine running 12 ranks, 6 recorders
and 6 Redis servers, another rank is named now and then for a few seconds); each job's steps judged over all its
owners (status) equals its judged record in Redis; no summary judged twice: the summaries in those steps are at
most the distinct (rank, step) summaries the agents published, and the steps judged at most the steps published
(distinct step starts in the stream: a new owner that anchored a node anew split steps in two before the judged
record carried the anchoring, docs/agent.md). Printed: gaps, duplicates and Redis failures. The password is in no log, status or metrics. Prints how
long it took.

usage: test_cluster_fleet.py STRATA_BINARY
KEEP_TMP=1 keeps the temporary directory (logs, flight chunks, the servers' directories).
Exits 77 (skipped) when not root, without BTF, `ip`, curl or redis-server/redis-cli (1 under CI=true).
"""
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
sys.path.insert(0, os.path.join(ROOT, "lab"))
from injectors import base, network  # noqa: E402

from checks import Checks, get_json, in_ns, kill_in_namespaces, metric, unmet  # noqa: E402
from redis_cluster import PASSWORD, Cluster, slot  # noqa: E402

JOB_S, FAULT_AFTER, MASTER_KILL_AFTER_FAULT = 36, 10, 3
SLOW = [3, 1, 2]  # each job's slow rank
SERVES = {"serve-a": 9465, "serve-b": 9466}  # HTTP ports in the bridge's namespace
AGENT_PORT = 9464
REDIS_PORTS = list(range(7000, 7006))  # in the bridge's namespace, where nothing else listens


class Fleet:
    """The processes the test started (name -> Popen) and where they run; stop() ends them, kills whatever is
    left in the namespaces, stops the cluster and deletes the namespaces."""

    def __init__(self, ctx, topo, tmp):
        self.ctx, self.topo, self.tmp = ctx, topo, tmp
        self.procs, self.cluster = {}, None

    def start(self, name, argv):
        log = open(os.path.join(self.tmp, name + ".log"), "w")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        return self.procs[name]

    def status(self, name):
        if name in SERVES:
            return get_json(self.topo.br, f"http://127.0.0.1:{SERVES[name]}/api/v1/status")
        return get_json(self.topo.ns[int(name[-1])], f"http://127.0.0.1:{AGENT_PORT}/api/v1/status")

    def metrics(self, name):
        ns, port = (self.topo.br, SERVES[name]) if name in SERVES else (self.topo.ns[int(name[-1])], AGENT_PORT)
        r = subprocess.run(in_ns(ns, ["curl", "-sf", "--max-time", "3", f"http://127.0.0.1:{port}/metrics"]),
                           capture_output=True, text=True)
        return r.stdout

    def stop(self):
        for name, p in self.procs.items():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        kill_in_namespaces(self.topo.ns + [self.topo.br])
        if self.cluster:
            self.cluster.stop()
        failed = self.ctx.undo.run()
        if failed:
            print("cleanup failed: " + "; ".join(failed))


def job_of(status, job):
    for j in (status or {}).get("jobs", []):
        if j["job"] == job:
            return j
    return None


def owner_of(status, job):
    return ((job_of(status, job) or {}).get("owner") or {}).get("serve")


def published(cluster, port, job, tmp):
    """What the agents published of the job: (steps, summaries). Steps: summaries' step starts (every rank's),
    grouped where they lie within a third of a step of each other (a job's ranks start a step together, after the
    last collective); summaries: distinct (rank, its own step) pairs (an agent may publish one twice after a lost
    reply)."""
    raw = cluster.cli(port, "--json", "XRANGE", "strata:job:{%s}:steps" % job, "-", "+")
    with open(os.path.join(tmp, f"stream-{job}.json"), "w") as fh:  # for a post-mortem (KEEP_TMP=1)
        fh.write(raw)
    starts, steps, summaries = [], [], set()
    for _, fields in json.loads(raw or "[]"):
        f = dict(zip(fields[::2], fields[1::2]))
        if f.get("kind") == "summary":
            starts.append(float(f["start_unix"]))
            steps.append(float(f["step_s"]))
            summaries.add((f["rank"], f["step"]))
    if not starts:
        return 0, 0
    starts.sort()
    tol = sorted(steps)[len(steps) // 2] / 3
    return 1 + sum(1 for a, b in zip(starts, starts[1:]) if b - a > tol), len(summaries)


def start_all(strata, fleet):
    """The cluster; three jobs on its three masters, their leases written for serve-b, serve-a, serve-b; the two
    serves and an agent per node. Returns the jobs once every program answers."""
    topo, tmp = fleet.topo, fleet.tmp
    fleet.cluster = cluster = Cluster(tmp, replicas=1, host=network.BRIDGE_ADDR, prefix=in_ns(topo.br, []),
                                      ports=REDIS_PORTS)
    cluster.start()
    jobs, _ = cluster.jobs_on_masters(f"fleet-{os.getpid()}", 3)
    url = cluster.url()
    for job, serve in zip(jobs, ("serve-b", "serve-a", "serve-b")):
        # long enough for the serve to find the job (its ranks import torch first); renewed, a lease lasts 3 s
        cluster.cli(cluster.owner(slot(job)), "SET", "strata:job:{%s}:lease" % job, serve, "PX", "600000")
    for name, port in SERVES.items():
        fleet.start(name, in_ns(topo.br, [strata, "serve", "--redis", url, "--listen", f"127.0.0.1:{port}",
                                          "--consumer", name]))
    for r in range(2):
        fleet.start(f"agent{r}", in_ns(topo.ns[r], [
            strata, "agent", "--same-netns", "--listen", f"127.0.0.1:{AGENT_PORT}", "--dir",
            os.path.join(tmp, f"flight{r}"), "--interval-s", "1", "--window-s", "8", "--deep-s", "0", "--redis", url]))
    for _ in range(100):
        if all(fleet.status(n) for n in ("serve-a", "serve-b", "agent0", "agent1")):
            return jobs
        time.sleep(0.2)
    raise AssertionError("the serves and agents do not answer on /api/v1/status")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    stop = unmet(("ip", "curl", "redis-server", "redis-cli"))
    if stop is not None:
        return stop
    strata = os.path.abspath(sys.argv[1])
    checks = Checks()
    began = time.time()
    ctx = SimpleNamespace(prefix=base.run_prefix(), args=SimpleNamespace(ranks=2, link_mbit=0), undo=base.Undo())
    topo = network.Topology(ctx)
    tmp = tempfile.mkdtemp(prefix="strata-fleet-")
    os.chmod(tmp, 0o755)
    fleet = Fleet(ctx, topo, tmp)
    try:
        topo.setup()
        run(strata, fleet, checks.expect)
        if checks.failures:
            for name in fleet.procs:
                with open(os.path.join(tmp, name + ".log"), errors="replace") as fh:
                    print(f"--- {name}.log (last lines)\n" + "".join(fh.readlines()[-6:]), end="")
    finally:
        fleet.stop()
        if not os.environ.get("KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"     took {time.time() - began:.1f} s", flush=True)
    return checks.result()


def run(strata, fleet, expect):
    jobs = start_all(strata, fleet)
    owners = [fleet.cluster.owner(slot(j)) for j in jobs]
    print(f"     jobs {jobs} on masters {owners}", flush=True)
    for i, job in enumerate(jobs):
        fleet.start(f"job{i}", [PY, os.path.join(ROOT, "tests", "agent", "fault_job.py"), os.path.join(fleet.tmp, job),
                                "--seconds", str(JOB_S), "--fault-after", str(FAULT_AFTER), "--extra-ms", "40", "--job",
                                job, "--ranks", "4", "--fault-rank", str(SLOW[i]), "--netns", fleet.ctx.prefix,
                                "--ranks-per-node", "2", "--sleep-compute"])
    w = watch(fleet, jobs, owners)
    time.sleep(3)  # the last steps judged and committed
    check(fleet, jobs, owners, w, expect)


def fault_began(fleet, job):
    """When the job's slow rank began its first slow step (unix time), or None before."""
    try:
        with open(os.path.join(fleet.tmp, job, "fault.json")) as fh:
            return json.load(fh)["fault_start_unix"]
    except (OSError, ValueError):
        return None


def watch(fleet, jobs, owners):
    """Polls every program's status each second while the jobs run: the ranks each agent sees, the ranks each
    serve names; kills job 0's master MASTER_KILL_AFTER_FAULT s after its fault began (and once both serves list
    every job: a job's ranks may start seconds after another's on a loaded machine), and once its replica is
    promoted, the serve owning job 0."""
    w = SimpleNamespace(agent_ranks=[{j: set() for j in jobs} for _ in range(2)], named=[], outputs=[], last={},
                        master_killed=None, promoted=None, promoted_at=None, victim=None, killed_at=None,
                        polls=open(os.path.join(fleet.tmp, "polls.jsonl"), "w"),  # serves' statuses, for KEEP_TMP=1
                        listed={n: set() for n in SERVES}, owned={n: set() for n in SERVES})
    cluster = fleet.cluster
    while any(fleet.procs[f"job{i}"].poll() is None for i in range(len(jobs))):
        time.sleep(1)
        now = time.time()
        for r in range(2):
            st = fleet.status(f"agent{r}") or {}
            w.outputs.append(json.dumps(st))
            for j in st.get("jobs", []):
                if j["job"] in jobs:
                    w.agent_ranks[r][j["job"]] |= set(j["ranks"])
        for name in SERVES:
            if fleet.procs[name].poll() is not None:
                continue
            st = fleet.status(name)
            w.outputs.append(json.dumps(st))
            w.polls.write(json.dumps({"t": now, "serve": name, "status": st}) + "\n")
            w.last[name] = st or w.last.get(name)
            if w.master_killed is None:  # ownership while every server is up
                for j in (st or {}).get("jobs", []):
                    owner = j.get("owner") or {}
                    if owner.get("serve"):
                        w.listed[name].add(j["job"])
                    if owner.get("this_serve"):
                        w.owned[name].add(j["job"])
            for j in (st or {}).get("jobs", []):
                w.named += [(name, now, j["job"], f["rank"]) for f in j.get("findings", [])
                            if f.get("source") == "online"]
        fault = fault_began(fleet, jobs[0])
        every_job_listed = all(len(w.listed[n] & set(jobs)) == len(jobs) for n in SERVES)  # each job's agents publish
        if w.master_killed is None and fault and now - fault >= MASTER_KILL_AFTER_FAULT and every_job_listed:
            cluster.kill(owners[0])
            w.master_killed = now
            print(f"     killed job 0's master (port {owners[0]}) {now - fault:.1f} s after its fault began",
                  flush=True)
        elif w.master_killed and w.promoted is None:
            port = cluster.owner(slot(jobs[0]), fresh=True)
            if port not in (None, owners[0]):
                w.promoted, w.promoted_at = port, now
                print(f"     replica {port} promoted {now - w.master_killed:.1f} s after the kill", flush=True)
        elif w.promoted and w.victim is None and now - w.promoted_at >= 1:
            victim = owner_of(w.last.get("serve-a"), jobs[0])
            if victim in SERVES:
                fleet.procs[victim].send_signal(signal.SIGKILL)
                fleet.procs[victim].wait(timeout=10)
                w.victim, w.killed_at = victim, time.time()
                print(f"     killed {victim} (SIGKILL), owner of job 0, "
                      f"{w.killed_at - w.master_killed:.1f} s after the master", flush=True)
    w.polls.close()
    return w


def check(fleet, jobs, owners, w, expect):
    cluster = fleet.cluster
    for i, job in enumerate(jobs):
        expect(w.agent_ranks[0][job] == {0, 1} and w.agent_ranks[1][job] == {2, 3},
               f"job {i}: each agent watched its node's ranks only (node 0: {sorted(w.agent_ranks[0][job])}, "
               f"node 1: {sorted(w.agent_ranks[1][job])})")
    listed = {n: sorted(jobs.index(j) for j in w.listed[n] if j in jobs) for n in SERVES}
    owned = {n: sorted(jobs.index(j) for j in w.owned[n] if j in jobs) for n in SERVES}
    expect(all(v == [0, 1, 2] for v in listed.values()) and all(owned.values()),
           f"before the master died, each serve's status named an owner for every job, and both serves owned some "
           f"(jobs listed with an owner: {listed}; owned: {owned})")
    expect(w.promoted not in (None, owners[0]), f"job 0's slot moved to the promoted replica ({owners[0]} -> "
           f"{w.promoted})")
    expect(w.victim is not None, f"a serve owning job 0 was killed ({w.victim})")
    if w.victim is None:
        return
    survivor = "serve-b" if w.victim == "serve-a" else "serve-a"
    for _ in range(40):  # a renewal late on a loaded machine lapses a lease for a moment; the survivor retakes it
        final = fleet.status(survivor)
        if all((owner_of(final, j), ((job_of(final, j) or {}).get("owner") or {}).get("this_serve")) == (survivor, True)
               for j in jobs):
            break
        time.sleep(0.5)
    w.outputs.append(json.dumps(final))
    w.tmp = fleet.tmp
    with open(os.path.join(fleet.tmp, "final-status.json"), "w") as fh:
        json.dump(final, fh)
    for i, job in enumerate(jobs):
        check_job(cluster, i, job, final, survivor, w, expect)
    for i, job in enumerate(jobs):
        polls = collections.Counter(r for _, _, jb, r in w.named if jb == job)
        others = max((c for r, c in polls.items() if r != SLOW[i]), default=0)
        expect(polls[SLOW[i]] > others, f"job {i}: rank {SLOW[i]} is the rank the serves named most (polls naming "
               f"each rank: {dict(sorted(polls.items()))})")
    check_outputs(fleet, survivor, w, expect)


def check_job(cluster, i, job, final, survivor, w, expect):
    """The survivor owns the job, sees its four ranks, named its slow rank after the other serve died, and
    counted no step twice."""
    j = job_of(final, job) or {}
    owner, online = j.get("owner") or {}, j.get("online") or {}
    expect(owner.get("serve") == survivor and owner.get("this_serve"), f"job {i}: {survivor} owns it ({owner})")
    expect(j.get("ranks") == [0, 1, 2, 3], f"job {i}: {survivor} sees its four ranks ({j.get('ranks')})")
    after = sorted({r for n, t, jb, r in w.named if n == survivor and jb == job and t > w.killed_at})
    expect(SLOW[i] in after, f"job {i}: {survivor} named rank {SLOW[i]} after {w.victim} died (named {after})")
    port = cluster.owner(slot(job), fresh=True)
    record = cluster.cli(port, "HGET", "strata:job:{%s}:judged" % job, "steps_judged").strip()
    steps, summaries = published(cluster, port, job, w.tmp)
    total, judged = owner.get("steps_judged_total"), owner.get("summaries_judged_total")
    print(f"     job {i}: over all owners {total} steps judged (record {record}) of {steps} published, {judged} "
          f"summaries judged of {summaries}; {survivor}: gaps {online.get('gaps')}, duplicates "
          f"{online.get('duplicates')}, skipped as judged {owner.get('skipped_judged')}, realigned "
          f"{online.get('realigned')}", flush=True)
    expect(total is not None and total <= steps, f"job {i}: no step judged twice over all owners ({total} judged, "
           f"{steps} published; a step split in two when a new owner anchored a node anew, fixed 2026-12-04)")
    expect(total is not None and str(total) == record, f"job {i}: steps judged in the status ({total}) = its judged "
           f"record in Redis ({record})")
    expect(judged is not None and summaries / 2 < judged <= summaries,
           f"job {i}: no summary judged twice over all owners ({judged} judged, {summaries} published)")


def check_outputs(fleet, survivor, w, expect):
    """The password in no log, status or metrics; Redis failures printed."""
    texts = {n: fleet.metrics(n) for n in (survivor, "agent0", "agent1")}
    print("     Redis failures counted: " + ", ".join(
        f"{n} {metric(t, 'strata_serve_redis_failures_total' if n in SERVES else 'strata_redis_failures_total')}"
        for n, t in texts.items()), flush=True)
    for n in (survivor, "agent0", "agent1"):
        p = fleet.procs[n]
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)
    logs = {}
    for n in ("serve-a", "serve-b", "agent0", "agent1"):
        with open(os.path.join(fleet.tmp, n + ".log"), errors="replace") as fh:
            logs[n + ".log"] = fh.read()
    leaked = [n for n, t in list(logs.items()) + list(texts.items()) if PASSWORD in t]
    leaked += [f"status {k}" for k, t in enumerate(w.outputs) if PASSWORD in t]
    expect(not leaked, f"the password is in no log, status or metrics ({leaked[:5]})")
    expect(all((metric(texts[a], "strata_redis_published_total") or 0) > 0 for a in ("agent0", "agent1")),
           "both agents published to the cluster")


if __name__ == "__main__":
    sys.exit(main())
