"""cpu_throttling's size (issue 47): the quota, as a share of its period, starts from the rank's own CPU time per
step with the fault off and is corrected once per fault-on unrecorded step by how much later the rank arrived than
its latest peer (lab/ddp_job.py first_share, tune_share, arrival_lateness_ms; by its wait for its core, which
overstated what the rank made its peers wait, until 2026-12-06). A fixed quota of 0.09 / magnitude made
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


class ArrivalLateness(unittest.TestCase):
    """The measure the share is tuned by (ddp_job.ARRIVAL_TUNED): the rank's lateness behind its latest peer."""

    def test_it_is_the_gap_to_the_latest_peer_in_ms_negative_when_early(self):
        self.assertAlmostEqual(ddp_job.arrival_lateness_ms([10.000, 10.003], 1), 3.0)
        self.assertAlmostEqual(ddp_job.arrival_lateness_ms([10.000, 10.003], 0), -3.0,
                               msg="early: a lead the fault must first take away (the baseline is subtracted)")
        self.assertAlmostEqual(ddp_job.arrival_lateness_ms([10.001, 10.0045, 10.002, 10.000], 1), 2.5,
                               msg="behind the latest peer, not the median")
        self.assertAlmostEqual(ddp_job.arrival_lateness_ms([10.002, 10.002], 0), 0.0, msg="arriving together")

    def test_relabelling_the_ranks_moves_the_lateness_with_them(self):
        rng = random.Random(4747)
        for _ in range(200):
            ready = [rng.uniform(0, 0.05) for _ in range(rng.randint(2, 8))]
            order = list(range(len(ready)))
            rng.shuffle(order)
            moved = [ready[i] for i in order]
            for new_rank, old_rank in enumerate(order):
                self.assertAlmostEqual(ddp_job.arrival_lateness_ms(moved, new_rank),
                                       ddp_job.arrival_lateness_ms(ready, old_rank))
            self.assertLessEqual(sum(ddp_job.arrival_lateness_ms(ready, r) > 0 for r in range(len(ready))), 1,
                                 "only the last to arrive is late")


    def test_the_tuning_reads_the_lateness_beyond_the_baselines_median(self):
        # A measure that swings both ways (a rank 4 ms ahead of its latest peer in one baseline step, 2 ms behind
        # in the other): a fault-on step 3 ms late is 4 ms beyond their median, but would read 7 ms beyond the
        # least value (the rank's largest lead), and the tuning would throttle too little; the memory and link
        # faults keep the least value.
        base_iters = sorted(ddp_job.injectors.base.BASELINE_ITERS)
        feedback = ddp_job.WarmupFeedback(reference=ddp_job.statistics.median)
        for it, value in zip(base_iters, (-4.0, 2.0)):
            self.assertFalse(feedback.observe(it, False, None, value))
        self.assertTrue(feedback.observe(max(base_iters) + 1, True, 0.5, 3.0))
        self.assertEqual(feedback.seen, [(0.5, 4.0)])
        least = ddp_job.WarmupFeedback()
        for it, value in zip(base_iters, (-4.0, 2.0)):
            least.observe(it, False, None, value)
        least.observe(max(base_iters) + 1, True, 0.5, 3.0)
        self.assertEqual(least.seen, [(0.5, 7.0)])


class Period(unittest.TestCase):
    def test_ranks_with_a_core_of_their_own_get_the_fine_period_and_ranks_that_share_one_the_coarse(self):
        # At 10 ms a 2-rank job's wait jumped between nothing and 3x the target (seeds 98411-98417); ranks that
        # share a core need shares of 0.1-0.2, below the fine period's least quota (1 ms of 2.5 = 0.4).
        self.assertEqual(ddp_job.default_period_us(2, 2), ddp_job.FINE_PERIOD_US)
        self.assertEqual(ddp_job.default_period_us(1, 4), ddp_job.FINE_PERIOD_US)
        self.assertEqual(ddp_job.default_period_us(4, 2), ddp_job.COARSE_PERIOD_US)
        self.assertEqual(ddp_job.default_period_us(3, 2), ddp_job.COARSE_PERIOD_US)
        self.assertEqual(ddp_job.default_period_us(2, 1), ddp_job.COARSE_PERIOD_US)
        # a fixed quota the fine period cannot give (1 ms of 2.5 is 0.4) keeps the coarse one
        self.assertEqual(ddp_job.default_period_us(2, 2, 0.2), ddp_job.COARSE_PERIOD_US)
        self.assertEqual(ddp_job.default_period_us(2, 2, 0.5), ddp_job.FINE_PERIOD_US)

    def test_a_quota_the_given_period_cannot_give_is_refused_by_name(self):
        with self.assertRaises(SystemExit):
            ddp_job.parse_args(["--fault", "cpu_throttling", "--out", "/tmp/x", "--quota", "0.2", "--period-us", "2500"])
        with self.assertRaises(SystemExit):
            ddp_job.parse_args(["--fault", "cpu_throttling", "--out", "/tmp/x", "--period-us", "500"])
        a = ddp_job.parse_args(["--fault", "cpu_throttling", "--out", "/tmp/x", "--quota", "0.2"])
        self.assertEqual(a.period_us, ddp_job.COARSE_PERIOD_US, "an explicit quota of 0.2 keeps 10 ms")

    def test_the_period_is_refitted_to_the_cores_the_ranks_get_unless_given(self):
        a = ddp_job.parse_args(["--ranks", "2", "--fault", "cpu_throttling", "--out", "/tmp/x"])
        ddp_job.refit_to_cores(a, 2)
        self.assertEqual(a.period_us, ddp_job.FINE_PERIOD_US)
        ddp_job.refit_to_cores(a, 1)
        self.assertEqual(a.period_us, ddp_job.COARSE_PERIOD_US, "one core left for two ranks: they share it")
        a = ddp_job.parse_args(["--ranks", "2", "--fault", "cpu_throttling", "--out", "/tmp/x", "--period-us", "7000"])
        ddp_job.refit_to_cores(a, 2)
        self.assertEqual(a.period_us, 7000, "a period given on the command line is kept")

    def test_a_share_below_the_kernels_least_quota_is_raised_to_it_and_recorded_so(self):
        # The tuning's history must hold the share the rank had: a share of 0.1 at 2.5 ms is a 1 ms quota, 0.4.
        self.assertEqual(ddp_job.share_and_quota(0.1, 2500), (0.4, 1000))
        self.assertEqual(ddp_job.share_and_quota(0.5, 2500), (0.5, 1250))
        self.assertEqual(ddp_job.share_and_quota(0.1, 10000), (0.1, 1000))
        for period in (1000, 2500, 5000, 10000, 20000):
            for share in (0.0, 0.01, 0.1, 0.33, 0.5, 0.99, 1.0):
                s, q = ddp_job.share_and_quota(share, period)
                self.assertGreaterEqual(q, ddp_job.MIN_QUOTA_US)
                self.assertGreaterEqual(s, share)
                self.assertLessEqual(abs(q - s * period), 1.0)


if __name__ == "__main__":
    unittest.main()
