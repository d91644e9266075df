"""memory_pressure's size (issue 47): the limit's cut is corrected once per fault-on unrecorded step by how much
longer the rank's lookup-table reads took than with the fault off (lab/ddp_job.py tune_cut), and what took is
measured in time (injectors/memory.py), so that a machine delay is weighed against it as for every other fault.
The tuning is checked on a simulated kernel: refaults in proportion to the cut plus a floor (the cgroup's own
growth), each step's cost scattered by up to 2x either way, as measured on this VM (2026-12-05: 2-9 ms steps at a
fixed cut whose median was 5 ms). No job is started.

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import argparse
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ddp_job  # noqa: E402
from injectors import memory  # noqa: E402

TABLE_MB = 128.0


def tune(target_ms, ms_per_mb, floor_mb, first_cut, steps, rng):
    """The cut after `steps` corrections on a simulated kernel; its noise-free cost then."""
    cut, seen = first_cut, []
    for _ in range(steps):
        seen.append((cut, ms_per_mb * (cut + floor_mb) * rng.uniform(0.5, 2.0) ** rng.choice((-1, 1))))
        cut = ddp_job.tune_cut(seen, target_ms, TABLE_MB)
    return cut, ms_per_mb * (cut + floor_mb)


class CutTuning(unittest.TestCase):
    def test_the_cut_moves_toward_the_target_and_stays_in_its_bounds(self):
        tune = ddp_job.tune_cut
        self.assertGreater(tune([(4.0, 2.0)], 8.0, TABLE_MB), 4.0, "too little: cut more")
        self.assertLess(tune([(4.0, 16.0)], 8.0, TABLE_MB), 4.0, "too much: cut less")
        self.assertEqual(tune([(4.0, 8.0)], 8.0, TABLE_MB), 4.0, "on target: keep it")
        self.assertEqual(tune([(4.0, 0.0)], 8.0, TABLE_MB), 8.0, "nothing seen: double it")
        self.assertEqual(tune([(4.0, -3.0)], 8.0, TABLE_MB), 8.0, "faster than the baseline: nothing seen")
        self.assertEqual(tune([(4.0, 1e-6)], 8.0, TABLE_MB), 8.0, "at most a factor 2 a step")
        self.assertEqual(tune([(4.0, 1e6)], 8.0, TABLE_MB), 2.0, "at most a factor 2 a step")
        self.assertLessEqual(tune([(100.0, 0.0)], 8.0, TABLE_MB), ddp_job.CUT_MAX_SHARE * TABLE_MB)
        self.assertGreaterEqual(tune([(0.3, 1e6)], 8.0, TABLE_MB), ddp_job.CUT_MIN_SHARE * TABLE_MB)
        # one wild step among steady ones moves it little: the median cost per MB of all of them
        self.assertAlmostEqual(tune([(4.0, 8.0), (4.0, 8.2), (4.0, 40.0)], 8.0, TABLE_MB), 4.0 * 8.0 / 8.2)

    def test_the_tuned_fault_lands_near_its_target_on_a_noisy_kernel(self):
        # The lab's targets (2.9 ms at 0.08 on 2 ranks to 43 ms at 0.6 on 4) on kernels whose refaults cost
        # 0.5-8 ms per MB cut, with a floor of 0-1 MB the limit takes beyond the cut: within a factor 1.6 after
        # the unrecorded steps' corrections, in at least 9 of 10 jobs of each.
        rng = random.Random(47)
        steps = ddp_job.TUNING_STEPS + ddp_job.WAIT_STEPS + ddp_job.WARMUP_STEPS - 3  # fault on from 3
        for target in (2.9, 5.8, 11.5, 21.6, 43.2):
            for ms_per_mb in (0.5, 1.0, 2.0, 4.0, 8.0):
                for floor in (0.0, 0.5, 1.0):
                    if ms_per_mb * (floor + ddp_job.CUT_MIN_SHARE * TABLE_MB) > target / 1.6:
                        continue  # this kernel cannot make a fault so small: the floor alone exceeds it
                    near = 0
                    for _ in range(10):
                        _, cost = tune(target, ms_per_mb, floor, ddp_job.CUT_MB_PER_MS * target, steps, rng)
                        near += target / 1.6 <= cost <= 1.6 * target
                    self.assertGreaterEqual(near, 9, f"target {target} ms at {ms_per_mb} ms/MB, floor {floor} MB")

    def test_the_tuned_faults_have_steps_to_tune_in_and_the_other_faults_do_not_wait_for_them(self):
        for fault in ("memory_pressure", "cpu_throttling", "slow_communication", "network_contention",
                      "intermittent_network_contention"):
            self.assertEqual(ddp_job.wait_steps(argparse.Namespace(fault=fault)),
                             ddp_job.WAIT_STEPS + ddp_job.TUNING_STEPS, fault)
        for fault in ("cpu_contention", "slow_compute", "none"):
            self.assertEqual(ddp_job.wait_steps(argparse.Namespace(fault=fault)), ddp_job.WAIT_STEPS, fault)
        self.assertGreaterEqual(ddp_job.TUNING_STEPS, 4)


class FakeGroup:
    def __init__(self, refaults):
        self.refaults = refaults

    def memory_stat(self):
        if self.refaults is None:
            raise OSError("gone")
        return {"workingset_refault_file": self.refaults}


class MemoryTook(unittest.TestCase):
    def injector(self, refaults):
        inj = memory.MemoryPressure.__new__(memory.MemoryPressure)
        inj.a = argparse.Namespace(fault_rank=0)
        inj.group = FakeGroup(refaults)
        return inj

    def stats(self):
        # baseline iterations 1 and 2 read the table in 1.0 and 1.4 ms; the fault-on iterations 3-8 (recorded
        # from 4: ProfilerSteps 5-9) in 6.2 ms, but iteration 5 (step 6) in 1.2 ms: it did not take there
        table = [3.0, 1.0, 1.4, 6.2, 6.2, 1.2, 6.2, 6.2, 6.2]
        steps = [{"iter": i, "step": i + 1, "recorded": i >= 4, "affected": i >= 3, "table_ms": ms}
                 for i, ms in enumerate(table)]
        return [{"steps": steps}]

    def test_it_took_is_the_time_the_table_reads_lost_step_by_step(self):
        took = self.injector(600).took(self.stats())
        self.assertEqual(took["unit"], "ms")
        self.assertEqual(took["by_step"], {"5": 5.0, "6": 0.0, "7": 5.0, "8": 5.0, "9": 5.0})
        self.assertEqual(took["per_step"], 5.0)
        self.assertEqual(took["refault_pages_per_step"], 100.0, "600 refaults over the 6 fault-on iterations")

    def test_without_the_cgroups_statistics_the_time_is_still_measured(self):
        took = self.injector(None).took(self.stats())
        self.assertEqual(took["per_step"], 5.0)
        self.assertNotIn("refault_pages_per_step", took)


if __name__ == "__main__":
    unittest.main()
