"""cpu_throttling's size (issue 47): the quota, as a share of its period, starts from the rank's own CPU time per
step with the fault off and is corrected once per fault-on unrecorded step by how much longer the rank waited for
its core than in its baseline (lab/ddp_job.py first_share, tune_share). A fixed quota of 0.09 / magnitude made
the fault rank wait under 2 ms a step in 6 of 18 throttling cases of two held-out runs (magnitudes 0.08 and
0.15) and 130-220 ms at 0.6 (target 43 ms). Checked on a simulated rank: a rank needing D ms of CPU a step at a
share s waits D (1/s - 1) more, each step scattered by up to 2x either way. No job is started.

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ddp_job  # noqa: E402


class ShareTuning(unittest.TestCase):
    def test_the_first_share_is_the_one_whose_wait_is_the_target_for_the_ranks_cpu_time(self):
        self.assertAlmostEqual(ddp_job.first_share(20.0, 20.0), 0.5)
        self.assertAlmostEqual(ddp_job.first_share(20.0, 5.0), 0.8)
        self.assertAlmostEqual(ddp_job.first_share(20.0, 180.0), 0.25, msg="within a factor 2 of 1/2: tuned after")

    def test_the_share_moves_toward_the_target_and_stays_in_its_bounds(self):
        tune = ddp_job.tune_share
        self.assertLess(tune([(0.5, 10.0)], 20.0), 0.5, "waited too little: throttle harder")
        self.assertGreater(tune([(0.5, 40.0)], 20.0), 0.5, "waited too much: throttle less")
        self.assertAlmostEqual(tune([(0.5, 20.0)], 20.0), 0.5, msg="on target: keep it")
        self.assertAlmostEqual(tune([(0.5, 0.0)], 20.0), 0.25, msg="no wait: halve it")
        self.assertAlmostEqual(tune([(0.5, -4.0)], 20.0), 0.25, msg="less than the baseline: no wait")
        self.assertAlmostEqual(tune([(0.4, 1e6)], 20.0), 0.8, msg="at most a factor 2 a step")
        self.assertLessEqual(tune([(0.9, 1e6)], 20.0), 1.0)
        self.assertGreaterEqual(tune([(0.1, 0.0)], 20.0), ddp_job.MIN_SHARE)
        # one wild step among steady ones moves it little: the median of the CPU times the steps imply
        self.assertAlmostEqual(tune([(0.5, 20.0), (0.5, 21.0), (0.5, 200.0)], 20.0), 21.0 / 41.0)

    def test_the_tuned_fault_lands_near_its_target_on_a_noisy_rank(self):
        # The lab's targets (2.9 ms at 0.08 on 2 ranks to 43 ms at 0.6 on 4) for ranks of 5-40 ms of CPU a step:
        # within a factor 1.6 after the fault-on unrecorded steps, in at least 9 of 10 jobs of each.
        rng = random.Random(47)
        steps = ddp_job.TUNING_STEPS + ddp_job.WAIT_STEPS + ddp_job.WARMUP_STEPS - 3  # fault on from iteration 3
        for target in (2.9, 5.8, 11.5, 21.6, 43.2):
            for cpu in (5.0, 10.0, 20.0, 40.0):
                if cpu * (1 / ddp_job.MIN_SHARE - 1) < 1.6 * target:
                    continue  # the least share cannot make this rank wait so long
                near = 0
                for _ in range(10):
                    share, seen = ddp_job.first_share(cpu, target), []
                    for _ in range(steps):
                        wait = cpu * (1 / share - 1) * rng.uniform(0.5, 2.0) ** rng.choice((-1, 1))
                        seen.append((share, wait))
                        share = ddp_job.tune_share(seen, target)
                    near += target / 1.6 <= cpu * (1 / share - 1) <= 1.6 * target
                self.assertGreaterEqual(near, 9, f"target {target} ms, {cpu} ms of CPU a step")


if __name__ == "__main__":
    unittest.main()
