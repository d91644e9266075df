"""Core rotation: the lab's answer to a host that slows one vCPU for a while (issue 47, item 4).

This VM's host runs one of its two vCPUs 60-90 % slower for seconds to whole runs, and the slowdown comes back
during a job after the cores were timed even before it (held-out run at 6446e41: 15 of 99 faulted cases set aside
for a rank the fault does not reach on the slower core; the lab had waited 261 s in all for even cores). A rank
pinned, or left by the scheduler, on that core is late by the machine alone. Leaving the core out for the whole
job crowds 4 and 8 ranks on one core, where the fault rank's extra CPU work slows every rank alike.

So every `period_s` a thread of the launcher moves every process of the job that is pinned to exactly one of
the ranks' cores to the next of those cores (a cyclic shift: with two cores, a swap). Over a step each rank, and
each helper with it, spends about the same time on every core, and a core the host slows slows every rank alike
(a uniform slowdown and some jitter, not a straggler). Which processes share a core at any instant does not
change: the fault rank keeps its spinners (cpu_contention), its core of its own (network contention), and ranks
that share a core keep sharing it.

Invariants: only processes descended from the launcher whose main thread's affinity is one core of `cores` are
moved, every thread of such a process to that process's core; at every instant a process is on the core its
layout gave it shifted by the number of shifts made (so a rank that pins itself late joins its peers' phase); a
floating process (affinity of several cores) is never touched; a process or thread that exits between listing and moving is skipped; stop() waits for the
thread, and after it returns nothing is moved again. The moves made are counted (`moves`, `ticks`) for the
truth's record of what the lab did.
"""
import os
import threading
import time

# How often the processes change core. The ranks' CPU work comes in bursts of 0.4-3 ms within steps of 45-200 ms
# (2-8 ranks): every 10 ms gives 4-20 changes a step, so each rank's share of time on each core evens out within
# a few steps, while each change costs one sched_setaffinity per thread: the rotation's thread took 1.2, 1.8 and
# 3.3 % of a core for 2, 4 and 11 processes of 3 threads (a lab rank has about 3), 2026-12-05; the launcher
# floats, so that cost falls on both cores alike.
DEFAULT_PERIOD_S = 0.010
# How often the processes and threads are listed again (new threads and helpers).
LIST_PERIOD_S = 0.2


def descendants(root):
    """The pids of `root`'s descendants (not root), by /proc/<pid>/task/<tid>/children; [] when unreadable."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


def threads(pid):
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


class CoreRotation:
    """A thread that shifts the job's pinned processes over `cores` every `period_s` (see the module's
    docstring). `root` is the launcher's pid; `getaffinity`/`setaffinity`/`list_pids`/`list_threads` are
    os.sched_getaffinity, os.sched_setaffinity, descendants and threads unless a test gives its own."""

    def __init__(self, root, cores, period_s=DEFAULT_PERIOD_S, getaffinity=os.sched_getaffinity,
                 setaffinity=os.sched_setaffinity, list_pids=descendants, list_threads=threads,
                 clock=time.monotonic):
        self.root, self.cores, self.period_s = root, sorted(cores), period_s
        self.getaffinity, self.setaffinity = getaffinity, setaffinity
        self.list_pids, self.list_threads, self.clock = list_pids, list_threads, clock
        self.home = {}  # pid -> index in cores of the core it is on now
        self.tids = {}  # pid -> its threads, as last listed
        self.ticks = 0
        self.moves = 0
        self._stop = threading.Event()
        self._thread = None

    def enabled(self):
        return len(self.cores) >= 2 and self.period_s > 0

    def discover(self):
        """Lists the job's processes again. A process seen before keeps the core the rotation gave it; a gone one
        is dropped; a new one pinned to one of the cores joins where that core of the layout is now (shifted as
        many times as the others were; it moves at the next shift). A new process is pinned in the layout's
        terms: the ranks pin themselves (LAB_CPU) and the helpers are pinned by the launcher (Context.core_of),
        never by inheriting a rotated process's affinity."""
        seen = {}
        for pid in self.list_pids(self.root):
            if pid in self.home:
                seen[pid] = self.home[pid]
                continue
            try:
                mask = self.getaffinity(pid)
            except OSError:
                continue
            if len(mask) == 1 and next(iter(mask)) in self.cores:  # the layout's core: where it is now
                seen[pid] = (self.cores.index(next(iter(mask))) + self.ticks) % len(self.cores)
        self.home = seen
        self.tids = {pid: self.list_threads(pid) for pid in seen}

    def shift(self):
        """Moves every listed process (all its threads) to the next core."""
        n = len(self.cores)
        for pid in list(self.home):
            self.home[pid] = (self.home[pid] + 1) % n
            target = {self.cores[self.home[pid]]}
            for tid in self.tids.get(pid, ()):
                try:
                    self.setaffinity(tid, target)
                    self.moves += 1
                except OSError:  # the thread exited
                    pass
        self.ticks += 1

    def run(self):
        listed = float("-inf")
        next_tick = self.clock()
        while not self._stop.is_set():
            now = self.clock()
            if now - listed >= LIST_PERIOD_S:
                self.discover()
                listed = now
            self.shift()
            next_tick += self.period_s
            self._stop.wait(max(0.0, next_tick - self.clock()))

    def start(self):
        if self.enabled():
            self._thread = threading.Thread(target=self.run, name="core-rotation", daemon=True)
            self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def describe(self):
        if not self.enabled():
            return "no core rotation"
        return (f"every {self.period_s * 1000:g} ms the job's pinned processes moved to the next of cores "
                f"{self.cores} ({self.ticks} shifts, {self.moves} thread moves)")
