"""When an outside fault (CPU contention or throttling, memory pressure, the link faults) runs in the unrecorded
iterations before the profiler records (lab/injectors/base.py outside_fault_on_unrecorded), and how the
iterations it ran in are counted (fault_on_steps). The baseline iterations stay clean; a persistent fault runs in
every iteration from FAULT_ON_FROM_ITER on; an intermittent one is off again in the last unrecorded iteration, so
the first recorded step, which it spares, does not start in its after-effect. No job is started.

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from injectors import base  # noqa: E402

UNRECORDED = 5  # lab/ddp_job.py: WAIT_STEPS + WARMUP_STEPS


class OutsideFaultSchedule(unittest.TestCase):
    def on(self, intermittent):
        return [it for it in range(UNRECORDED) if base.outside_fault_on_unrecorded(it, UNRECORDED, intermittent)]

    def test_the_baseline_iterations_are_never_faulted(self):
        for intermittent in (False, True):
            self.assertFalse(set(base.BASELINE_ITERS) & set(self.on(intermittent)))

    def test_a_persistent_fault_runs_up_to_the_recording(self):
        self.assertEqual(self.on(False), [3, 4])

    def test_an_intermittent_fault_settles_one_iteration_before_the_recording(self):
        self.assertEqual(self.on(True), [3])
        self.assertNotIn(UNRECORDED - 1, self.on(True))

    def test_the_iterations_it_ran_in_are_those_marked_affected(self):
        # As lab/ddp_job.py marks them: the unrecorded ones the schedule above switched on, then the recorded
        # ProfilerSteps the fault affects (every third).
        steps = []
        for it in range(UNRECORDED + 9):
            recorded = it >= UNRECORDED
            hit = (it - UNRECORDED + 4) % 3 == 0 if recorded else base.outside_fault_on_unrecorded(it, UNRECORDED, True)
            steps.append({"iter": it, "step": it - 1, "recorded": recorded, "affected": hit})
        self.assertEqual(base.fault_on_steps([{"steps": steps}], 0), 1 + 3)


if __name__ == "__main__":
    unittest.main()
