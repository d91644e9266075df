"""Whether a fault took in each of its steps, by the injector's own measure (issue 47): the truth's took_measure
carries, besides the median over the affected steps, each affected step's value ("by_step"), so that a step in
which an intermittent fault did not take can be told from the injector's side, never from strata's lateness.
Built on hand-made per-step statistics as lab/ddp_job.py's ranks write them; no job is started.

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import statistics
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from injectors import base, network  # noqa: E402


def rank_stats(rq_wait_by_iter, ready_by_iter, done_by_iter, affected_iters, first_recorded=3):
    """One rank's per-iteration statistics: iteration i is ProfilerStep i + 1 when recorded."""
    steps = []
    for i, rq in enumerate(rq_wait_by_iter):
        steps.append({"iter": i, "step": i + 1, "recorded": i >= first_recorded, "affected": i in affected_iters,
                      "rq_wait_ms": rq, "t_ready": ready_by_iter[i], "t_bwd": done_by_iter[i], "wall_ms": 50.0})
    return {"steps": steps}


class TookByStep(unittest.TestCase):
    def test_each_affected_step_is_its_counter_less_the_baseline(self):
        rq = [9.0, 2.0, 4.0, 3.0, 30.0, 3.5, 3.0, 2.5, 3.0, 25.0]  # baseline iterations 1, 2: median 3.0
        st = rank_stats(rq, [0.0] * 10, [0.0] * 10, affected_iters={4, 7, 9})
        by_step = base.kernel_effect_by_step([st], 0, "rq_wait_ms")
        self.assertEqual(by_step, {"5": 27.0, "8": -0.5, "10": 22.0}, "a step where it did not take shows as such")
        self.assertEqual(base.kernel_effect([st], 0, "rq_wait_ms"), statistics.median(by_step.values()),
                         "the per-step values and the median the truth already had agree")

    def test_the_link_faults_measure_the_transfer_in_each_step(self):
        # Two ranks arrive together; the transfer after the last arrival takes 5 ms, 40 ms in iterations 4 and 9.
        ready = [float(i) for i in range(10)]
        done = [r + (0.040 if i in (4, 9) else 0.005) for i, r in enumerate(ready)]
        stats = [rank_stats([0.0] * 10, ready, done, {4, 9}), rank_stats([0.0] * 10, ready, done, {4, 9})]
        took = network.transfer_took(stats, 1)
        self.assertEqual(set(took["by_step"]), {"5", "10"})
        for v in took["by_step"].values():
            self.assertAlmostEqual(v, 35.0, places=3)
        self.assertAlmostEqual(took["per_step"], 35.0, places=3)


if __name__ == "__main__":
    unittest.main()
