"""The lab fits the machine (issue 47 item 4): ranks float over the cores unless their fault pins helpers to a
core, the emulated device time grows with the ranks per core, and the launcher's per-core timing leaves its
own affinity as it found it. No job is started: these are the rules the launcher applies.

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ddp_job  # noqa: E402


class Placement(unittest.TestCase):
    def parse(self, *extra):
        return ddp_job.parse_args(["--out", "/nonexistent", *extra])

    def test_in_rank_and_cgroup_faults_float(self):
        for fault in ("none", "slow_compute", "dataloader_stall", "gc_pause", "cpu_throttling", "memory_pressure",
                      "slow_communication"):
            self.assertEqual(self.parse("--fault", fault).placement, "float", fault)

    def test_faults_with_pinned_helpers_pin_their_ranks(self):
        for fault in ddp_job.PINNED_FAULTS:
            self.assertEqual(self.parse("--fault", fault).placement, "pinned", fault)

    def test_an_explicit_placement_wins(self):
        self.assertEqual(self.parse("--fault", "cpu_contention", "--placement", "float").placement, "float")
        self.assertEqual(self.parse("--placement", "pinned").placement, "pinned")

    def test_device_time_grows_with_the_ranks_per_core(self):
        self.assertEqual(ddp_job.default_layer_ms(2, 2), ddp_job.BASE_LAYER_MS)
        self.assertEqual(ddp_job.default_layer_ms(3, 2), 2 * ddp_job.BASE_LAYER_MS)
        self.assertEqual(ddp_job.default_layer_ms(4, 2), 2 * ddp_job.BASE_LAYER_MS)
        self.assertEqual(ddp_job.default_layer_ms(8, 2), 4 * ddp_job.BASE_LAYER_MS)
        self.assertEqual(ddp_job.default_layer_ms(8, 8), ddp_job.BASE_LAYER_MS)
        self.assertEqual(ddp_job.default_layer_ms(2, 1), 2 * ddp_job.BASE_LAYER_MS)
        cores = len(os.sched_getaffinity(0))
        self.assertEqual(self.parse("--ranks", "8").layer_ms, ddp_job.default_layer_ms(8, cores))
        self.assertEqual(self.parse("--ranks", "8", "--layer-ms", "5").layer_ms, 5.0)

    def test_core_timing_covers_every_core_and_restores_the_affinity(self):
        before = os.sched_getaffinity(0)
        timed = ddp_job.measure_cores(sorted(before), reps=1)
        self.assertEqual(set(timed), {str(c) for c in before})
        self.assertTrue(all(v > 0 for v in timed.values()), timed)
        self.assertEqual(os.sched_getaffinity(0), before)


if __name__ == "__main__":
    unittest.main()
