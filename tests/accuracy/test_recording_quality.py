"""Which lab recordings the accuracy suite judges (bench/accuracy_lib/recording_quality.py): decided on the
injector's own measure, the ranks' run-queue wait and their cores' speed (the lab's core probe), never on a
rank's lateness (strata's own quantity); a clean job is always judged, the ranks the machine slowed being
accepted as named (scoring.judge); and the lab's per-step kernel counters reduce to the measure
(lab/injectors/base.py kernel_effect, kernel_effect_by_step, fault_on_steps)."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "lab"))
from accuracy_lib.recording_quality import (machine_slowed_fault_ranks, machine_slowed_ranks,  # noqa: E402
                                           recording_problem)
from accuracy_lib.scoring import judge, second_cause_right  # noqa: E402
from injectors.base import fault_on_steps, kernel_effect, kernel_effect_by_step  # noqa: E402


def truth(fault="slow_compute", rank=1, took=None, waits=None, **extra):
    t = {"fault": fault, "rank": rank if fault != "none" else None, "step_ms": {"fault_off": 50.0},
         "rq_wait_ms_by_rank": waits or {"0": 0.1, "1": 0.2}}
    if took is not None:
        t["took_measure"] = took
    t.update(extra)
    return t


class RecordingQualityTest(unittest.TestCase):
    def test_a_clean_job_is_judged_whatever_its_ranks_lateness(self):
        # The old rule dropped this as noisy (a rank 4 ms late); lateness is what strata judges, so it counts.
        self.assertIsNone(recording_problem(truth("none", noise_ms=4.0, jitter_ms=9.0)))

    def test_a_clean_job_on_a_busy_machine_is_judged_with_the_slowed_rank_accepted(self):
        t = truth("none", waits={"0": 0.1, "1": 2.5, "2": 0.2})
        self.assertIsNone(recording_problem(t))
        slowed = machine_slowed_ranks(t)
        self.assertEqual(list(slowed), [1])
        self.assertIn("run-queue wait", slowed[1])
        # the same machine under a faulty job: set aside, the fault at rank 0 not reaching rank 1
        self.assertIn("rank 1", recording_problem(dict(t, fault="slow_compute", rank=0)))

    def test_a_clean_job_names_only_what_the_machine_slowed(self):
        t = truth("none", probe_ms_by_rank={"0": 1.04, "1": 0.8}, cpu_ms_by_rank={"0": 16.0, "1": 16.0})

        def diag(rank, cause):
            return {"stragglers": [{"rank": rank, "steps": [1]}] if rank is not None else [],
                    "findings": [{"cause": cause, "impact_pct": 8.0}] if cause else [], "job": {"steps": [1]}}
        self.assertIsNone(judge(t, diag(None, None)))
        self.assertIsNone(judge(t, diag(0, "slow_compute")))  # rank 0's core is slow: it is really late
        self.assertIsNone(judge(t, diag(0, None)))  # named late, no cause above the minimum effect
        self.assertIn("false alarm", judge(t, diag(1, "slow_compute")))  # rank 1 is not
        self.assertIn("false alarm", judge(t, diag(0, "dataloader_stall")))  # not what a slow core looks like
        self.assertIn("false alarm", judge(truth("none"), diag(0, "slow_compute")))  # a quiet machine

    def test_ranks_sharing_cores_alike_are_not_noise(self):
        # 8 ranks on 2 cores each wait 2-4 ms per step: no rank is singled out
        waits = {str(r): w for r, w in enumerate((3.6, 2.5, 2.6, 3.8, 2.0, 2.4, 2.5, 2.8))}
        self.assertEqual(machine_slowed_ranks(truth("none", waits=waits, step_ms={"fault_off": 70.0})), {})

    def test_the_fault_ranks_own_wait_is_not_noise(self):
        took = {"measure": "run-queue wait", "per_step": 9.0, "unit": "ms"}
        self.assertIsNone(recording_problem(truth("cpu_contention", 1, took, waits={"0": 0.2, "1": 9.0})))
        # ranks the fault reaches (a shared core) are not noise either
        self.assertIsNone(recording_problem(truth("cpu_contention", 1, took, waits={"0": 9.0, "1": 9.0},
                                                  ranks=[0, 1])))

    def test_a_rank_on_a_slower_core_makes_the_machine_noisy(self):
        # rank 0's core ran the probe 30 % slower: 0.3 x 16 ms of CPU work = 4.8 ms late, over 2 % of 50 ms
        why = recording_problem(truth("slow_compute", 1, probe_ms_by_rank={"0": 1.04, "1": 0.8},
                                      cpu_ms_by_rank={"0": 16.0, "1": 16.0}))
        self.assertIn("rank 0", why)
        self.assertIn("core probe", why)
        # the probe's jitter (3 %: 0.5 ms of delay) is not noise
        self.assertIsNone(recording_problem(truth("slow_compute", 1, probe_ms_by_rank={"0": 0.824, "1": 0.8},
                                                  cpu_ms_by_rank={"0": 16.0, "1": 16.0})))

    def test_a_slowed_rank_is_noise_only_beside_a_fault_not_much_larger(self):
        # rank 0's core 30 % slower: 4.8 ms of delay per step (over 2 % of the 50 ms step)
        slow_core = {"probe_ms_by_rank": {"0": 1.04, "1": 0.8}, "cpu_ms_by_rank": {"0": 16.0, "1": 16.0}}
        big = {"measure": "time the injected code ran", "per_step": 20.0, "unit": "ms"}
        self.assertIsNone(recording_problem(truth(took=big, steps=[4, 5, 6], recorded_steps=3, **slow_core)))
        small = dict(big, per_step=9.0)  # 4.8 ms is over half of 9 ms
        why = recording_problem(truth(took=small, steps=[4, 5, 6], recorded_steps=3, **slow_core))
        self.assertIn("rank 0", why)
        self.assertIn("of the fault's 9.0 ms", why)
        # an intermittent fault of 20 ms in 3 of 9 steps is 6.7 ms per step: the slow core matters
        self.assertIn("rank 0", recording_problem(truth(took=big, steps=[6, 9, 12], recorded_steps=9, **slow_core)))
        # a measure that is not a time (pages refaulted): the absolute rule alone
        pages = {"measure": "file pages refaulted", "per_step": 5000, "unit": "pages"}
        self.assertIn("rank 0", recording_problem(truth("memory_pressure", 1, pages, steps=[4], **slow_core)))
        # the machine-slowed ranks of a clean job do not depend on any fault
        self.assertEqual(list(machine_slowed_ranks(truth("none", **slow_core))), [0])

    def test_the_fault_ranks_own_core_is_not_noise(self):
        took = {"measure": "time the injected code ran", "per_step": 9.0, "unit": "ms"}
        probes = {"0": 0.8, "1": 1.2}
        self.assertIsNone(recording_problem(truth(took=took, probe_ms_by_rank=probes,
                                                  cpu_ms_by_rank={"0": 16.0, "1": 25.0})))
        # but a slow core under a rank the fault does not reach is, measured against the fault rank's
        self.assertIn("rank 0", recording_problem(truth(took=took, probe_ms_by_rank={"0": 1.2, "1": 0.8},
                                                         cpu_ms_by_rank={"0": 16.0, "1": 25.0})))

    def test_the_fault_named_second_after_the_machines_cause_when_the_machine_slowed_its_rank_too(self):
        # rank 1 (the fault's) on a core 30 % slower: 0.3 x 16 ms = 4.8 ms a step, over 2 % of the 50 ms step
        slow = {"probe_ms_by_rank": {"0": 0.8, "1": 1.04}, "cpu_ms_by_rank": {"0": 16.0, "1": 16.0}}
        t = truth("memory_pressure", 1, **slow)
        self.assertEqual(list(machine_slowed_fault_ranks(t)), [1])
        self.assertIn("which the fault reaches too", machine_slowed_fault_ranks(t)[1])

        def diag(*findings):
            return {"stragglers": [{"rank": 1, "steps": [1]}], "job": {"steps": [1]},
                    "findings": [{"cause": c, "rank": r, "impact_pct": 8.0} for r, c in findings]}
        two = diag((1, "slow_compute"), (1, "memory_pressure"))
        self.assertIsNone(judge(t, two, recorded=True))
        self.assertIn("finding 2", second_cause_right(t, two, recorded=True))
        self.assertIsNone(judge(t, diag((1, "memory_pressure"), (1, "slow_compute")), recorded=True))
        # the machine's cause alone, a cause the machine does not give first, or another rank's finding between
        self.assertIn("cause slow_compute", judge(t, diag((1, "slow_compute")), recorded=True))
        self.assertIn("cause gc_pause", judge(t, diag((1, "gc_pause"), (1, "memory_pressure")), recorded=True))
        self.assertIn("cause slow_compute",
                      judge(t, diag((1, "slow_compute"), (0, "cpu_contention"), (1, "memory_pressure")), recorded=True))
        # a quiet core under the fault rank: the first finding alone counts, as before
        quiet = truth("memory_pressure", 1, probe_ms_by_rank={"0": 0.8, "1": 0.81}, cpu_ms_by_rank=slow["cpu_ms_by_rank"])
        self.assertEqual(machine_slowed_fault_ranks(quiet), {})
        self.assertIn("cause slow_compute", judge(quiet, two, recorded=True))
        # a fault that works on the rank's own core: its slower probe is the fault's, not the machine's
        self.assertEqual(machine_slowed_fault_ranks(truth("cpu_contention", 1, **slow)), {})
        self.assertEqual(machine_slowed_fault_ranks(truth("network_contention", 1, **slow)), {})
        # and the fault rank's slow core never sets the job aside (it is not noise)
        self.assertIsNone(recording_problem(t))

    def test_took_by_the_injectors_measure_not_the_lateness(self):
        small = {"measure": "time the injected code ran", "per_step": 0.5, "unit": "ms", "intended_ms": 3.0}
        why = recording_problem(truth(took=small, effect_on_ms=20.0))
        self.assertTrue(why.startswith("did not take"), why)
        big = dict(small, per_step=2.0)
        self.assertIsNone(recording_problem(truth(took=big, effect_on_ms=0.0, injected_ms=0.0)))

    def test_memory_pressure_took_by_the_pages_its_cgroup_refaulted(self):
        pages = {"measure": "file pages the cgroup refaulted", "per_step": 30, "unit": "pages"}
        self.assertIn("refaulted", recording_problem(truth("memory_pressure", took=pages)))
        self.assertIsNone(recording_problem(truth("memory_pressure", took=dict(pages, per_step=4000))))

    def test_the_lab_counters_reduce_to_the_measure(self):
        # As lab/ddp_job.py writes them: each iteration with its ProfilerStep number (`step`) beside `iter`.
        steps = [{"iter": i, "step": i + 10, "recorded": i >= 5, "affected": i >= 3,
                  "rq_wait_ms": 1.0 if i >= 3 else 0.2} for i in range(10)]
        stats = [{"steps": steps}]
        self.assertAlmostEqual(kernel_effect(stats, 0, "rq_wait_ms"), 0.8)
        self.assertEqual(kernel_effect_by_step(stats, 0, "rq_wait_ms"), {str(s): 0.8 for s in range(15, 20)})
        self.assertEqual(fault_on_steps(stats, 0), 7)  # iterations 3 and 4 (tuning) and 5-9


if __name__ == "__main__":
    unittest.main()
