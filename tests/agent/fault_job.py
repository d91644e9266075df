#!/usr/bin/env python3
"""A 2-rank gloo DDP-like job whose straggler appears mid-run, for the agent tests.

usage: fault_job.py OUT_DIR [--seconds S] [--fault-after S [--fault-when FILE]] [--fault-rank R] [--extra-ms MS] [--job ID]
                   [--ranks N] [--netns PREFIX [--ranks-per-node K]] [--sleep-compute]
                   [--fault-kind gc|hang|contention|pause] [--schedule FILE]
Launches its ranks itself with the environment torchrun would set (RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID). Each step: `compute` (Python arithmetic, ~60 ms), then an
all_reduce. From --fault-after seconds on (and, with --fault-when FILE, once FILE exists), rank --fault-rank also runs `extra_compute` (--extra-ms) per step
(with --extra-ms 0: a clean job); with --fault-kind gc the extra time is a full garbage collection instead
(gc.collect() over a graph of live objects sized at start-up so that it takes about --extra-ms); with
--fault-kind hang the fault rank blocks on a lock forever instead (its peers wait in their next collective
until the process group's --pg-timeout); with --fault-kind contention every rank computes the same fixed amount of
work per step (what took rank 0 60 ms at start-up) and from the fault on the fault rank shares its CPU with a
busy process pinned beside it (both on the last CPU it may use), so it waits in the run queue about as long as it runs;
with --fault-kind pause the fault rank sleeps once, for --extra-ms, in the first step from the fault on (one pause,
off the CPU: persistence one_off), and runs clean before and after. Writes OUT_DIR/fault.json: {"fault_start_unix": ..., "rank": ...} at the
moment the first slow step starts, and OUT_DIR/done-<rank> at the end.
With --schedule FILE (bench/online_accuracy, issue 47 item 6) the fault comes and goes instead: FILE is
{"rank": R, "episodes": [{"start_s", "duration_s", "extra_ms"}, ...]} on rank 0's clock from the job's start, and
rank R computes an episode's extra_ms more per step (CPU work, as the default kind) in every step that begins
inside it (--fault-after, --fault-rank, --extra-ms and --fault-kind are then unused). The fault rank writes the
truth as it happens, OUT_DIR/schedule_truth.json (replaced whole at each episode's first and last slow step):
{"rank": R, "intervals": [{"rank", "kind": "compute", "start_unix" (the first slow step's extra work begins),
"end_unix" (the last one's ends; null while under way), "extra_ms", "slow_steps", "planned_start_s",
"planned_duration_s"}]}. With --netns PREFIX, rank r runs in
the network namespace PREFIX-r<n> of the lab's topology (lab/injectors/network.py: namespace n at
10.77.0.<n+1>, gloo on eth0) with n = r // K, as if each K ranks were a node of their own.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time


def busy(ms):
    end = time.perf_counter() + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def compute(sleep=False):
    if sleep:  # --sleep-compute: the ranks leave the CPU to others (more ranks than cores)
        time.sleep(0.06)
        return 0
    return busy(60)


def extra_compute(ms):
    return busy(ms)


def work(iterations):
    """A fixed amount of CPU work (slower when the CPU is shared, unlike busy(), which ends on the clock)."""
    x = 0
    while x < iterations:
        x += 1
    return x


def work_for(ms):
    """The iterations of work() that take about `ms` on this CPU alone (the median of three timings)."""
    n = 100_000
    t0 = time.perf_counter()
    work(n)
    n = int(n * ms / 1e3 / max(time.perf_counter() - t0, 1e-6))
    took = []
    for _ in range(3):
        t0 = time.perf_counter()
        work(n)
        took.append(time.perf_counter() - t0)
    return int(n * ms / 1e3 / sorted(took)[1])


def start_contention(seconds):
    """Pins the calling thread to the last CPU it may use and starts a busy process pinned there for `seconds`."""
    cpu = max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    burner = (f"import os, time\nos.sched_setaffinity(0, {{{cpu}}})\nend = time.time() + {seconds}\n"
              "while time.time() < end:\n    pass\n")
    return subprocess.Popen([sys.executable, "-c", burner])


def gc_graph(ms):
    """Live container objects enough for one full collection to take about `ms` (each collection traverses
    every tracked object; nothing is allocated per step, so the step's extra time is the collector's)."""
    import gc
    keep, n = [], 50_000
    while True:
        keep.extend([] for _ in range(n - len(keep)))
        t0 = time.perf_counter()
        gc.collect()
        took = (time.perf_counter() - t0) * 1e3
        if took >= 0.8 * ms or n >= 20_000_000:
            return keep
        n = int(n * min(8.0, max(1.2, ms / max(took, 0.01))))


class ScheduleTruth:
    """The fault rank's record of the schedule's episodes as they happen (--schedule), written at each change."""

    def __init__(self, out, rank):
        self.path, self.rank, self.intervals, self.current = os.path.join(out, "schedule_truth.json"), rank, [], None

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"rank": self.rank, "intervals": self.intervals}, f, indent=1)
        os.replace(tmp, self.path)

    def slow_step(self, index, episode, begun, ended):
        """A slow step of episode `index` whose extra work ran from `begun` to `ended` (unix)."""
        if self.current is None or self.current["index"] != index:
            self.finish()
            self.current = {"index": index, "rank": self.rank, "kind": "compute", "start_unix": begun,
                            "end_unix": None, "extra_ms": episode["extra_ms"], "slow_steps": 0,
                            "planned_start_s": episode["start_s"], "planned_duration_s": episode["duration_s"]}
            self.intervals.append(self.current)
            self.write()
        self.current["slow_steps"] += 1
        self.current["last_end"] = ended

    def finish(self):
        """The episode under way is over: its end is its last slow step's."""
        if self.current is not None:
            self.current["end_unix"] = self.current.pop("last_end")
            self.current = None
            self.write()


def episode_at(schedule, elapsed):
    """(index, episode) of the schedule's episode under way at `elapsed` s, or (None, None)."""
    for i, e in enumerate(schedule["episodes"]):
        if e["start_s"] <= elapsed < e["start_s"] + e["duration_s"]:
            return i, e
    return None, None


def rank_main(a):
    import torch
    import torch.distributed as dist
    rank = int(os.environ["RANK"])
    if a.fault_kind == "hang":
        import datetime
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=a.pg_timeout))
    else:
        dist.init_process_group("gloo")
    t = torch.ones(1 << 14)
    graph = gc_graph(a.extra_ms) if a.fault_kind == "gc" and rank == a.fault_rank and a.extra_ms > 0 else None
    fixed = None  # contention: every rank does the same fixed work, rank 0's 60 ms (broadcast)
    if a.fault_kind == "contention":
        n = torch.tensor([float(work_for(60)) if rank == 0 else 0.0], dtype=torch.float64)
        dist.broadcast(n, 0)
        fixed = int(n[0])
    burner = None
    schedule = None
    if a.schedule:
        with open(a.schedule) as f:
            schedule = json.load(f)
        if rank == schedule["rank"]:
            truth = ScheduleTruth(a.out, rank)
            truth.write()  # no episode yet: an empty list, so the bench knows the file is the injector's
    start = time.time()
    fault_written = False
    paused = False  # pause: the one sleep happened

    def mark_fault():  # fault.json: the moment the fault's effect begins, once
        nonlocal fault_written
        if not fault_written:
            with open(os.path.join(a.out, "fault.json"), "w") as f:
                json.dump({"fault_start_unix": time.time(), "rank": rank}, f)
            fault_written = True

    while True:
        # Every rank agrees on when to stop and when the fault starts (rank 0's clock, broadcast).
        # With --fault-when, the fault waits for its file too (rank 0 looks, 1 = there).
        gate = 1.0 if rank == 0 and (a.fault_when is None or os.path.exists(a.fault_when)) else 0.0
        flag = torch.tensor([time.time() - start if rank == 0 else 0.0, gate])
        dist.broadcast(flag, 0)
        elapsed, gate_open = float(flag[0]), bool(flag[1])
        if elapsed >= a.seconds:
            break
        if schedule is not None:
            compute(a.sleep_compute)
            index, episode = episode_at(schedule, elapsed)
            if rank == schedule["rank"]:
                if episode is not None:
                    begun = time.time()
                    extra_compute(episode["extra_ms"])
                    truth.slow_step(index, episode, begun, time.time())
                else:
                    truth.finish()
            dist.all_reduce(t)
            continue
        faulty = rank == a.fault_rank and elapsed >= a.fault_after and gate_open and a.extra_ms > 0
        if a.fault_kind == "pause":
            faulty, paused = faulty and not paused, paused or faulty
        if faulty and a.fault_kind == "contention" and burner is None:
            mark_fault()
            burner = start_contention(a.seconds - elapsed + 5)
        if fixed is not None:
            work(fixed)
        else:
            compute(a.sleep_compute)
        if faulty and a.fault_kind != "contention":
            mark_fault()
            if a.fault_kind == "hang":
                import threading
                lock = threading.Lock()
                lock.acquire()
                lock.acquire()  # blocks forever: the rank stopped
            if graph is not None:
                import gc
                gc.collect()
            elif a.fault_kind == "pause":
                time.sleep(a.extra_ms / 1e3)
            else:
                extra_compute(a.extra_ms)
        dist.all_reduce(t)
    if schedule is not None and rank == schedule["rank"]:
        truth.finish()
    if burner is not None:
        burner.kill()
        burner.wait()
    dist.barrier()
    dist.destroy_process_group()
    open(os.path.join(a.out, f"done-{rank}"), "w").close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--fault-after", type=float, default=12)
    ap.add_argument("--fault-rank", type=int, default=1)
    ap.add_argument("--extra-ms", type=float, default=40)
    ap.add_argument("--job", default=None)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--netns", default=None, help="run rank r in the network namespace NETNS-r<r // K> (root)")
    ap.add_argument("--ranks-per-node", type=int, default=1, help="K: ranks per namespace with --netns")
    ap.add_argument("--sleep-compute", action="store_true",
                    help="each step's 60 ms of compute is a sleep (the fault's extra compute still burns CPU)")
    ap.add_argument("--fault-kind", choices=("compute", "gc", "hang", "contention", "pause"), default="compute",
                    help="the fault's extra time: CPU work (default), a full garbage collection, or a busy "
                    "process sharing the rank's CPU; or a hang; or one sleep of --extra-ms (pause)")
    ap.add_argument("--fault-when", default=None, metavar="FILE",
                    help="the fault also waits until FILE exists (a test that must watch the clean part first)")
    ap.add_argument("--pg-timeout", type=float, default=60, help="hang: the process group's timeout (s)")
    ap.add_argument("--schedule", default=None, metavar="FILE",
                    help="fault episodes on one rank, {\"rank\", \"episodes\": [{\"start_s\", \"duration_s\", "
                    "\"extra_ms\"}]}: extra CPU work per step inside each (truth: OUT/schedule_truth.json)")
    ap.add_argument("--rank-worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.schedule and not a.rank_worker:
        try:
            with open(a.schedule) as f:
                sched = json.load(f)
            if not 0 <= int(sched["rank"]) < a.ranks:
                ap.error(f"--schedule: rank {sched['rank']} is not one of the job's {a.ranks} ranks")
            for e in sched["episodes"]:
                if not (float(e["duration_s"]) > 0 and float(e["start_s"]) >= 0 and float(e["extra_ms"]) > 0):
                    ap.error(f"--schedule: an episode needs start_s >= 0, duration_s > 0, extra_ms > 0: {e}")
        except (OSError, ValueError, KeyError, TypeError) as err:
            ap.error(f"--schedule {a.schedule}: {err!r}")
    if a.rank_worker:
        return rank_main(a)
    os.makedirs(a.out, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(a.ranks):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(a.ranks), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), TORCHELASTIC_RUN_ID=a.job or f"agent-test-{os.getpid()}",
                   OMP_NUM_THREADS="1")
        prefix = []
        if a.netns:
            env.update(MASTER_ADDR="10.77.0.1", GLOO_SOCKET_IFNAME="eth0")
            prefix = ["ip", "netns", "exec", f"{a.netns}-r{r // a.ranks_per_node}"]
        procs.append(subprocess.Popen(prefix + [sys.executable, __file__, *sys.argv[1:], "--rank-worker"], env=env))
    return max(p.wait() for p in procs)


if __name__ == "__main__":
    sys.exit(main())
