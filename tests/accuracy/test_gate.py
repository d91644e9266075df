"""The exit-status gate of bench/accuracy (bench/accuracy_lib/scoring.py gate()): a lab miss within the
tolerance passes, a synth miss or too many lab misses or a too-noisy machine fails, and so do implausibly many
false alarms among the clean lab jobs."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from accuracy_lib.scoring import binomial_cdf, binomial_lower_bound, gate  # noqa: E402


class GateTest(unittest.TestCase):
    def test_one_lab_miss_in_ten_judged_passes(self):
        ok, lines = gate(["pass"] * 9 + ["fail"] + ["noisy"] * 4, ["pass"] * 13)
        self.assertTrue(ok, lines)
        self.assertIn("9 of 10 judged", lines[0])

    def test_too_many_lab_misses_fail(self):
        ok, lines = gate(["pass"] * 7 + ["fail"] * 3, ["pass"] * 13)
        self.assertFalse(ok)
        self.assertIn("FAILED", lines[0])

    def test_lab_errors_count_as_misses(self):
        ok, _ = gate(["pass"] * 2 + ["error"], [])
        self.assertFalse(ok)

    def test_any_synth_miss_fails(self):
        ok, lines = gate(["pass"] * 10, ["pass"] * 12 + ["fail"])
        self.assertFalse(ok)
        self.assertIn("synth: 12 of 13", lines[-1])

    def test_mostly_noisy_lab_fails(self):
        ok, lines = gate(["pass"] * 3 + ["noisy"] * 4, ["pass"])
        self.assertFalse(ok)
        self.assertIn("too busy", lines[0])

    def test_clean_jobs_never_carry_the_faulted_shares(self):
        # The held-out run at 21aecc0: 49 of 64 judged passed pooled, 31 of 46 faulted alone (67.4 %); the caller
        # gives gate() the faulted jobs alone, so the same run fails on its faulted share.
        faulted = ["pass"] * 31 + ["fail"] * 15 + ["noisy"] * 53
        clean = ["pass"] * 18
        ok, lines = gate(faulted, [], clean=clean)
        self.assertFalse(ok, lines)
        self.assertTrue(any("lab faulted jobs: 53 of 99 too noisy" in line for line in lines), lines)
        self.assertTrue(any("lab faulted jobs: 31 of 46 judged passed" in line for line in lines), lines)
        self.assertTrue(gate(faulted + clean, [])[0])  # pooled, the same statuses met both bars (what issue 47 found)

    def test_the_reduced_run_is_also_tested_against_the_last_published_rate(self):
        # 18 or fewer of 24 judged: 57.8 % likely at a true 75 % (ok), 0.06 % at 95.5 %, the lower 95 % bound of a
        # published 196 of 200 (98 %): a regression
        statuses = ["pass"] * 18 + ["fail"] * 6
        ok, lines = gate(statuses, [], regression=True)
        self.assertTrue(ok, lines)
        ok, lines = gate(statuses, [], regression=True, published=(196, 200, "bench/results/x.json"))
        self.assertFalse(ok, lines)
        self.assertIn("the last published 196 of 200 (98.0%, bench/results/x.json)", lines[0])
        # a published rate under the bar never loosens the test
        ok, lines = gate(["pass"] * 4 + ["fail"] * 8, [], regression=True, published=(30, 100, "y"))
        self.assertFalse(ok, lines)
        self.assertIn("the 75% bar", lines[0])

    def test_the_published_rate_is_tested_at_the_lowest_rate_it_supports(self):
        # e3ba668's run, 83 of 88 (94.3 %): its lower 95 % bound is 88.4 %; 12 or fewer of 18 passes is 0.03 %
        # likely at 94.3 % (it failed against the point estimate) and 1.3 % at 88.4 %: no regression shown; 11 or
        # fewer of 18 is 0.28 % likely at 88.4 %: a regression
        self.assertAlmostEqual(binomial_lower_bound(83, 88), 0.8842, places=3)
        published = (83, 88, "bench/results/r.json")
        ok, lines = gate(["pass"] * 12 + ["fail"] * 6, [], regression=True, published=published)
        self.assertTrue(ok, lines)
        self.assertIn("88.4%, the lower 95% confidence bound", lines[0])
        self.assertFalse(gate(["pass"] * 11 + ["fail"] * 7, [], regression=True, published=published)[0])

    def test_the_lower_bound_is_a_bound(self):
        # at the bound, `passed` or more successes have a chance of 5 %; it rises with passes and with the count
        for passed, total in [(1, 1), (5, 10), (83, 88), (88, 88), (300, 400)]:
            lower = binomial_lower_bound(passed, total)
            self.assertLess(lower, passed / total + 1e-12)
            self.assertAlmostEqual(1 - binomial_cdf(passed - 1, total, lower), 0.05, places=6)
        self.assertEqual(binomial_lower_bound(0, 10), 0.0)
        self.assertLess(binomial_lower_bound(80, 88), binomial_lower_bound(83, 88))
        self.assertLess(binomial_lower_bound(83, 88), binomial_lower_bound(830, 880))

    def test_the_reduced_run_fails_on_implausibly_few_passes_only(self):
        # 12 judged: 7 passes (CI at 67618dd) is 10.5 % likely at a true 75 %: no regression shown; 4 is 0.3 %.
        ok, lines = gate(["pass"] * 7 + ["fail"] * 5 + ["noisy"] * 2, ["pass"] * 13, regression=True)
        self.assertTrue(ok, lines)
        self.assertIn("regression test", lines[0])
        ok, lines = gate(["pass"] * 4 + ["fail"] * 8, ["pass"] * 13, regression=True)
        self.assertFalse(ok, lines)
        self.assertIn("FAILED", lines[0])
        # 24 judged (two seeds): 13 passes pass, 12 fail
        self.assertTrue(gate(["pass"] * 13 + ["fail"] * 11, [], regression=True)[0])
        self.assertFalse(gate(["pass"] * 12 + ["fail"] * 12, [], regression=True)[0])
        # the synth cases and the noisy share are judged as before
        self.assertFalse(gate(["pass"] * 10, ["pass"] * 12 + ["fail"], regression=True)[0])
        self.assertFalse(gate(["pass"] * 3 + ["noisy"] * 4, [], regression=True)[0])

    def test_clean_jobs_are_gated_on_their_false_alarms(self):
        # CI at 6de8761: 16 of 25 judged lab cases passed (the pooled gate: ok) with 6 false alarms in 8 clean
        lab = ["pass"] * 16 + ["fail"] * 9
        clean = ["pass"] * 2 + ["fail"] * 6
        ok, lines = gate(lab, [], regression=True, clean=clean)
        self.assertFalse(ok, lines)
        self.assertIn("6 false alarm(s) in 8 judged", lines[0])
        self.assertTrue(gate(lab, [], regression=True)[0])  # the same run, pooled only
        # one false alarm in 8 is plausible at 20 %; noisy clean jobs are not judged
        ok, lines = gate(lab, [], regression=True, clean=["pass"] * 7 + ["fail"] + ["noisy"] * 3)
        self.assertTrue(ok, lines)
        self.assertIn("3 too noisy", lines[0])
        # full and held-out runs: the observed share, at most 20 %
        self.assertTrue(gate(["pass"] * 10, [], clean=["pass"] * 4 + ["fail"])[0])
        self.assertFalse(gate(["pass"] * 10, [], clean=["pass"] * 3 + ["fail"] * 2)[0])

    def test_binomial_tail(self):
        from accuracy_lib.scoring import binomial_cdf
        self.assertAlmostEqual(binomial_cdf(8, 12, 0.778), 0.2668, places=4)
        self.assertAlmostEqual(binomial_cdf(12, 12, 0.3), 1.0)
        self.assertAlmostEqual(binomial_cdf(0, 3, 0.5), 0.125)

    def test_half_noisy_is_allowed(self):
        ok, _ = gate(["pass"] * 2 + ["noisy"] * 2, [])
        self.assertTrue(ok)


if __name__ == "__main__":
    unittest.main()
