"""The lab fits the machine (issue 47 item 4): by default the ranks are pinned and rotated over every core
(core_rotation.py, tested in test_core_rotation.py); without the rotation they float over the cores unless their
fault pins helpers to a core, and then only over the cores not measurably slower than the fastest (timed before
the job); the emulated
device time and cpu_throttling's quota are made for the cores the ranks share; the launcher's per-core timing
leaves its own affinity as it found it. No job is started: these are the rules the launcher applies.

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

    def test_ranks_are_pinned_for_the_rotation_up_to_two_a_core(self):
        cores = len(os.sched_getaffinity(0))
        for ranks in range(2, 9):
            for fault in ddp_job.FAULTS:
                a = self.parse("--fault", fault, "--ranks", str(ranks), "--fault-rank", "1")
                rotated = ddp_job.ranks_per_core(ranks, cores, ddp_job.isolated(a)) <= 2
                want = "pinned" if rotated or fault in ddp_job.PINNED_FAULTS else "float"
                self.assertEqual(a.placement, want, (fault, ranks))
                self.assertEqual(a.rotate_ms, ddp_job.ROTATE_PERIOD_S * 1000)
        if cores == 2:
            self.assertEqual(self.parse("--ranks", "4").placement, "pinned")
            self.assertEqual(self.parse("--ranks", "8").placement, "float", "4 a core: they would queue")
            self.assertEqual(self.parse("--ranks", "8", "--fault", "cpu_contention").placement, "pinned")
        with self.assertRaises(SystemExit):
            self.parse("--rotate-ms", "-1")

    def test_without_rotation_in_rank_and_cgroup_faults_float(self):
        for fault in ("none", "slow_compute", "dataloader_stall", "gc_pause", "cpu_throttling", "memory_pressure",
                      "slow_communication"):
            self.assertEqual(self.parse("--fault", fault, "--rotate-ms", "0").placement, "float", fault)

    def test_without_rotation_faults_with_pinned_helpers_pin_their_ranks(self):
        for fault in ddp_job.PINNED_FAULTS:
            self.assertEqual(self.parse("--fault", fault, "--rotate-ms", "0").placement, "pinned", fault)

    def test_the_probe_figure_is_a_trimmed_mean(self):
        # under the rotation a rank's probes mix two cores' speeds; the mean follows the mix, a median would
        # jump to whichever core drew more probes
        mixed_a = [1.0] * 11 + [1.7] * 9
        mixed_b = [1.0] * 9 + [1.7] * 11
        self.assertLess(abs(ddp_job.trimmed_mean(mixed_a, 0.1) - ddp_job.trimmed_mean(mixed_b, 0.1)), 0.2)
        self.assertAlmostEqual(ddp_job.trimmed_mean([1.0] * 9 + [50.0], 0.1), 1.0, msg="one outlier is cut")
        self.assertAlmostEqual(ddp_job.trimmed_mean([2.0, 4.0], 0.1), 3.0)
        self.assertAlmostEqual(ddp_job.trimmed_mean([3.0], 0.5), 3.0, msg="never empty")

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

    def test_floating_ranks_keep_off_a_measurably_slower_core(self):
        self.assertEqual(ddp_job.fast_cores({"0": 10.0, "1": 18.0}), [0], "60-100 % slower: left out")
        self.assertEqual(ddp_job.fast_cores({"0": 17.0, "1": 10.0}), [1])
        self.assertEqual(ddp_job.fast_cores({"0": 10.0, "1": 11.0}), [0, 1], "10 % apart: noise, both kept")
        self.assertEqual(ddp_job.fast_cores({"0": 10.0, "1": 18.0}, ratio=0), [0, 1], "ratio 0: every core")
        self.assertEqual(ddp_job.fast_cores({"0": 10.0, "1": 30.0, "2": 10.5, "3": 12.4}), [0, 2, 3])
        for timed in ({"0": 5.0}, {"0": 3.0, "1": 3.0}, {"0": 9.0, "1": 1.0, "2": 50.0}):
            fast = ddp_job.fast_cores(timed)
            self.assertIn(min(timed, key=timed.get), [str(c) for c in fast], "the fastest core is always kept")

    def test_a_slower_core_is_timed_again_until_it_is_fast_or_the_wait_is_over(self):
        class Machine:  # timings handed out in turn; a fake clock the sleeps advance
            def __init__(self, timings):
                self.timings, self.now, self.calls = list(timings), 0.0, 0

            def measure(self, cores):
                self.calls += 1
                return self.timings.pop(0) if len(self.timings) > 1 else self.timings[0]

            def sleep(self, s):
                self.now += s

        def wait(machine, wait_s):
            return ddp_job.wait_for_even_cores(machine.measure, [0, 1], ddp_job.SLOW_CORE_RATIO, wait_s, 0.5,
                                               clock=lambda: machine.now, sleep=machine.sleep)

        slow, even = {"0": 5.0, "1": 2.8}, {"0": 2.9, "1": 2.8}
        m = Machine([even])
        self.assertEqual(wait(m, 15), (even, 0.0), "even cores: no wait")
        self.assertEqual(m.calls, 1)
        m = Machine([slow, slow, slow, even, slow])
        self.assertEqual(wait(m, 15), (even, 1.5), "the slow episode ends: every core used")
        m = Machine([slow])
        timed, waited = wait(m, 15)
        self.assertEqual(timed, slow, "it stays slow: the last timing, which leaves the core out")
        self.assertLessEqual(waited, 15)
        self.assertGreaterEqual(waited, 14.5)
        self.assertEqual(ddp_job.fast_cores(timed), [1])
        m = Machine([slow, even])
        self.assertEqual(wait(m, 0), (slow, 0.0), "--core-wait 0: timed once")
        self.assertEqual(m.calls, 1)
        with self.assertRaises(SystemExit):
            self.parse("--core-wait", "-1")

    def test_the_shared_cores_set_the_defaults_and_given_values_stay(self):
        a = self.parse("--ranks", "8", "--fault", "cpu_throttling")
        ddp_job.refit_to_cores(a, 1)
        self.assertEqual(a.layer_ms, ddp_job.default_layer_ms(8, 1))
        self.assertAlmostEqual(a.quota, ddp_job.default_quota(8, 1, a.magnitude))
        self.assertLess(a.quota, ddp_job.default_quota(8, 2, a.magnitude), "8 ranks on one core: a smaller share")
        given = self.parse("--ranks", "8", "--layer-ms", "5", "--quota", "0.2")
        ddp_job.refit_to_cores(given, 1)
        self.assertEqual((given.layer_ms, given.quota), (5.0, 0.2))

    def test_each_rank_is_told_its_cores(self):
        class Ctx:
            cores = [0, 1]

            def core_of(self, rank):
                return self.cores[rank % 2]

        floating, pinned = self.parse("--rotate-ms", "0"), self.parse("--fault", "cpu_contention")
        self.assertEqual(ddp_job.rank_cpus(floating, Ctx(), 3, [1]), "1")
        self.assertEqual(ddp_job.rank_cpus(floating, Ctx(), 3, [0, 1]), "0,1")
        self.assertEqual(ddp_job.rank_cpus(pinned, Ctx(), 3, [0, 1]), "1", "pinned: its own core")

    def test_network_contention_gives_the_fault_rank_a_core_of_its_own(self):
        # the traffic's kernel work is charged to whatever runs on its core: only the fault rank may run there
        import injectors
        for ranks, fault_rank, shift in ((4, 0, 0), (4, 3, 1), (8, 7, 5), (8, 2, 2), (2, 1, 3)):
            a = self.parse("--ranks", str(ranks), "--fault", "network_contention", "--fault-rank", str(fault_rank),
                           "--core-shift", str(shift))
            ctx = injectors.Context(a, "/nonexistent", [0, 1], isolate=a.fault_rank)
            own = ctx.core_of(fault_rank)
            others = [ctx.core_of(r) for r in range(ranks) if r != fault_rank]
            self.assertNotIn(own, others, (ranks, fault_rank, shift))
            self.assertEqual(set(others), {1 - own})
            one = injectors.Context(a, "/nonexistent", [1], isolate=a.fault_rank)  # one usable core: all share it
            self.assertEqual({one.core_of(r) for r in range(ranks)}, {1})
        self.assertEqual(ddp_job.ranks_per_core(8, 2, isolate=True), 7)
        self.assertEqual(ddp_job.ranks_per_core(4, 2, isolate=True), 3)
        self.assertEqual(ddp_job.ranks_per_core(8, 1, isolate=True), 8)
        self.assertEqual(ddp_job.ranks_per_core(8, 2), 4)
        cores = len(os.sched_getaffinity(0))
        a = self.parse("--ranks", "8", "--fault", "intermittent_network_contention")
        self.assertEqual(a.layer_ms, ddp_job.default_layer_ms(8, cores, isolate=True), "device time for 7 a core")
        self.assertFalse(ddp_job.isolated(self.parse("--fault", "cpu_contention")))

    def test_core_timing_covers_every_core_and_restores_the_affinity(self):
        before = os.sched_getaffinity(0)
        timed = ddp_job.measure_cores(sorted(before), reps=1)
        self.assertEqual(set(timed), {str(c) for c in before})
        self.assertTrue(all(v > 0 for v in timed.values()), timed)
        self.assertEqual(os.sched_getaffinity(0), before)


if __name__ == "__main__":
    unittest.main()
