"""The core rotation (lab/core_rotation.py, issue 47 item 4): every period the job's pinned processes move to the
next core together, so a core the host slows slows every rank alike. Checked on a fake machine (which processes
share a core at every instant, floating processes untouched, a late joiner in phase, a vanished thread skipped)
and on real processes of this machine (their affinity changes, two pinned apart stay apart).

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import random
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import core_rotation  # noqa: E402
from core_rotation import CoreRotation  # noqa: E402


class FakeMachine:
    """Processes (pid -> affinity of each thread) under a root; set/get affinity as the kernel would."""

    def __init__(self, procs, cores=(0, 1)):
        self.cores = list(cores)
        self.threads = {pid: {pid * 10 + i: set(mask) for i in range(n)} for pid, (mask, n) in procs.items()}
        self.gone = set()  # tids that exit before they are moved

    def rotation(self, cores=None):
        return CoreRotation(1, cores or self.cores, 0.01, getaffinity=self.get, setaffinity=self.set,
                            list_pids=lambda root: list(self.threads), list_threads=lambda pid: list(self.threads[pid]))

    def pid_of(self, tid):
        return next(pid for pid, ts in self.threads.items() if tid in ts)

    def get(self, pid):
        return set(self.threads[pid][pid * 10])

    def set(self, tid, mask):
        if tid in self.gone:
            raise ProcessLookupError(tid)
        self.threads[self.pid_of(tid)][tid] = set(mask)

    def core(self, pid):
        masks = {frozenset(m) for m in self.threads[pid].values()}
        self.assert_one(masks)
        return next(iter(next(iter(masks))))

    @staticmethod
    def assert_one(masks):
        assert len(masks) == 1, masks


class Rotation(unittest.TestCase):
    def test_pinned_processes_swap_cores_together_and_floating_ones_stay(self):
        # 4 ranks two to a core, a spinner with rank 1, a floating process
        m = FakeMachine({2: ({0}, 3), 3: ({1}, 3), 4: ({0}, 2), 5: ({1}, 2), 6: ({1}, 1), 7: ({0, 1}, 2)})
        r = m.rotation()
        r.discover()
        layout = {pid: m.core(pid) for pid in (2, 3, 4, 5, 6)}
        for tick in range(1, 6):
            r.shift()
            for pid, core in layout.items():
                self.assertEqual(m.core(pid), (core + tick) % 2, (pid, tick))
            self.assertEqual(m.core(3), m.core(6), "the spinner stays with its rank")
            self.assertNotEqual(m.core(2), m.core(3))
            self.assertEqual(m.threads[7], {70: {0, 1}, 71: {0, 1}}, "a floating process is never moved")
        self.assertEqual(r.ticks, 5)
        self.assertEqual(r.moves, 5 * (3 + 3 + 2 + 2 + 1))

    def test_a_process_that_pins_itself_late_joins_its_peers_phase(self):
        m = FakeMachine({2: ({0}, 1), 3: ({1}, 1), 4: ({0, 1}, 1)})  # rank 4 has not pinned itself yet
        r = m.rotation()
        r.discover()
        r.shift()
        r.shift()
        r.shift()
        m.threads[4] = {40: {0}}  # it pins itself to its layout core, 0, as rank 2's layout core
        r.discover()
        r.shift()
        self.assertEqual(m.core(4), m.core(2), "a late joiner shares the core of the rank with its layout core")
        self.assertNotEqual(m.core(4), m.core(3))

    def test_three_cores_shift_cyclically_and_other_cores_are_left_alone(self):
        m = FakeMachine({2: ({0}, 1), 3: ({1}, 1), 4: ({2}, 1), 5: ({3}, 1)}, cores=(0, 1, 2, 3))
        r = m.rotation(cores=[0, 1, 2])
        r.discover()
        r.shift()
        self.assertEqual([m.core(p) for p in (2, 3, 4, 5)], [1, 2, 0, 3], "core 3 is not one of the ranks' cores")

    def test_a_thread_that_exits_is_skipped(self):
        m = FakeMachine({2: ({0}, 3)})
        m.gone = {21}
        r = m.rotation()
        r.discover()
        r.shift()
        self.assertEqual((m.threads[2][20], m.threads[2][22]), ({1}, {1}))
        self.assertEqual(r.moves, 2)

    def test_every_process_is_on_its_layout_core_shifted_by_the_shifts_made_over_many_layouts(self):
        # random machines (2-4 cores of up to 5), processes pinned in or out of the ranks' cores or floating, some
        # pinning themselves late, the processes listed again now and then: after each shift every listed
        # process (every thread) is on its layout core shifted by the shifts made, and nothing else moved
        rng = random.Random(4711)
        for case in range(300):
            machine_cores = list(range(rng.randint(2, 5)))
            cores = sorted(rng.sample(machine_cores, rng.randint(2, min(4, len(machine_cores)))))
            layout = {}  # pid -> its own pinning (a core) or the machine's cores (floating)
            late = {}  # pid -> the shift after which it pins itself
            procs = {}
            for pid in range(2, 2 + rng.randint(1, 9)):
                kind = rng.random()
                layout[pid] = {rng.choice(cores)} if kind < 0.7 else (
                    {rng.choice(machine_cores)} if kind < 0.85 else set(machine_cores))
                if kind < 0.7 and rng.random() < 0.3:
                    late[pid] = rng.randint(1, 6)
                procs[pid] = (set(machine_cores) if pid in late else layout[pid], rng.randint(1, 4))
            m = FakeMachine(procs, cores=machine_cores)
            r = m.rotation(cores=cores)
            listed = set()
            for tick in range(12):
                for pid, at in late.items():
                    if at == tick:  # it pins itself now, in the layout's terms
                        m.threads[pid] = {t: set(layout[pid]) for t in m.threads[pid]}
                if tick % 3 == 0 or rng.random() < 0.2:
                    r.discover()
                    listed |= {p for p, c in layout.items() if len(c) == 1 and next(iter(c)) in cores
                               and late.get(p, -1) <= tick}
                r.shift()
                for pid in layout:
                    masks = {frozenset(mk) for mk in m.threads[pid].values()}
                    self.assertEqual(len(masks), 1, (case, pid))
                    if pid in listed:
                        want = cores[(cores.index(next(iter(layout[pid]))) + r.ticks) % len(cores)]
                        self.assertEqual(masks, {frozenset({want})}, (case, pid, tick))
                    elif pid not in late or late[pid] > tick:
                        self.assertEqual(masks, {frozenset(procs[pid][0])}, (case, pid, tick, "never moved"))

    def test_one_core_or_no_period_is_no_rotation(self):
        self.assertFalse(CoreRotation(1, [0], 0.01).enabled())
        self.assertFalse(CoreRotation(1, [0, 1], 0).enabled())
        r = CoreRotation(1, [0], 0.01).start()
        r.stop()
        self.assertIsNone(r._thread)
        self.assertEqual(r.describe(), "no core rotation")


@unittest.skipIf(len(os.sched_getaffinity(0)) < 2, "needs two cores")
class RealProcesses(unittest.TestCase):
    def test_children_pinned_apart_are_moved_and_stay_apart(self):
        cores = sorted(os.sched_getaffinity(0))[:2]
        code = "import os, sys, time; os.sched_setaffinity(0, {int(sys.argv[1])}); time.sleep(30)"
        kids = [subprocess.Popen([sys.executable, "-c", code, str(c)]) for c in cores]
        try:
            deadline = time.monotonic() + 10
            while any(os.sched_getaffinity(k.pid) != {c} for k, c in zip(kids, cores)):
                self.assertLess(time.monotonic(), deadline, "the children did not pin themselves")
                time.sleep(0.01)
            self.assertEqual(sorted(core_rotation.descendants(os.getpid())), sorted(k.pid for k in kids))
            r = CoreRotation(os.getpid(), cores, 0.005).start()
            seen = {k.pid: set() for k in kids}
            every = {frozenset({c}) for c in cores}
            try:
                end = time.monotonic() + 5  # a loaded machine may run the rotation's thread late
                while time.monotonic() < end and any(masks != every for masks in seen.values()):
                    for k in kids:
                        seen[k.pid].add(frozenset(os.sched_getaffinity(k.pid)))
                    time.sleep(0.001)
            finally:
                r.stop()
            ticks = r.ticks
            time.sleep(0.05)
            self.assertEqual(r.ticks, ticks, "nothing moves after stop()")
            for pid, masks in seen.items():
                self.assertEqual(masks, {frozenset({c}) for c in cores}, f"pid {pid} was on every core")
            self.assertGreaterEqual(ticks, 1)
            final = [os.sched_getaffinity(k.pid) for k in kids]
            self.assertNotEqual(final[0], final[1], "pinned apart, they stay apart")
        finally:
            for k in kids:
                k.kill()
                k.wait()


if __name__ == "__main__":
    unittest.main()
