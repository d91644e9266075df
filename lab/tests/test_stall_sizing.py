"""dataloader_stall's size (issue 47): the Dataset's sleep per sample is the target per sample less the machine's
wake-up latency (the median oversleep per sample seen in the fault-on unrecorded steps), corrected once per step
(lab/ddp_job.py tune_stall). Set outright, one crowded step whose wake-ups overslept the whole target made the sleep
0, and with no sleep nothing was measured again (held-out run at c6f19db, 8 ranks at 0.08: 0.0 ms of 11.5). Checked
on a simulated loader: a sleep of s takes s plus an oversleep drawn around the machine's latency. No job is started.

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ddp_job  # noqa: E402


class StallTuning(unittest.TestCase):
    def test_one_wild_oversleep_never_stops_the_fault(self):
        target = 0.72e-3  # 11.5 ms over a batch of 16
        s = ddp_job.tune_stall(target, [1.5e-3], target)  # the whole target overslept, and more
        self.assertGreater(s, 0.0)
        self.assertAlmostEqual(s, target / 2, msg="halved, not zeroed: at most a factor 2 a step")
        for _ in range(20):
            s = ddp_job.tune_stall(s, [5e-3] * 3, target)
            self.assertGreaterEqual(s, ddp_job.STALL_MIN_SHARE * target - 1e-15, "never below the floor")

    def test_the_sleep_stays_within_its_bounds_and_moves_toward_the_target(self):
        target = 1e-3
        self.assertAlmostEqual(ddp_job.tune_stall(0.5e-3, [0.2e-3], target), 0.8e-3)
        self.assertAlmostEqual(ddp_job.tune_stall(0.9e-3, [-1e-3], target), target, msg="never above the target")
        self.assertAlmostEqual(ddp_job.tune_stall(0.1e-3, [0.0], target), 0.2e-3, msg="at most a factor 2 up")
        # the median of the oversleeps: one wild one among steady ones moves it little
        self.assertAlmostEqual(ddp_job.tune_stall(0.7e-3, [0.3e-3, 0.3e-3, 5e-3], target), 0.7e-3)

    def test_the_tuned_stall_lands_near_its_target_on_a_noisy_machine(self):
        # latency 0.1-1.2 ms per wake-up, against targets of 0.09-2.7 ms per sample (the lab's 2.9-43 ms a step
        # over 16 samples); a step's oversleep scatters by 3x either way, with a wild step now and then: within
        # 2x of the target (what "took" asks) after the 5 fault-on unrecorded steps in 9 of 10 jobs, and never zero.
        rng = random.Random(7)
        for latency in (0.1e-3, 0.4e-3, 1.2e-3):
            for target in (0.09e-3, 0.7e-3, 2.7e-3):
                close = 0
                for _ in range(10):
                    s, seen = target, []
                    for _ in range(5):
                        over = latency * math.exp(rng.uniform(-math.log(3), math.log(3))) * (8 if rng.random() < 0.1 else 1)
                        seen.append(over)
                        s = ddp_job.tune_stall(s, seen, target)
                        self.assertGreater(s, 0.0)
                    took = s + latency  # the wake-up latency is the oversleeps' median
                    close += (max(took, target) / min(took, target) <= 2) or latency > target
                self.assertGreaterEqual(close, 9, f"latency {latency}, target {target}")


if __name__ == "__main__":
    unittest.main()
