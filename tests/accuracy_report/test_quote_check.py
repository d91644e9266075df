"""The headline check (tests/cli/check_accuracy_quote.py, ctest accuracy_quote) goes blind on nothing: the
published first bullet passes against its results file, and the same bullet with one figure changed, or
without its stale mark, fails."""
import importlib.util
import os
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("check_accuracy_quote",
                                              os.path.join(ROOT, "tests", "cli", "check_accuracy_quote.py"))
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)
check.ROOT = ROOT


class QuoteCheck(unittest.TestCase):
    def setUp(self):
        self.first = check.bullets(check.block("docs/accuracy.md"))[0]
        self.assertRegex(self.first, r"bench/results/\S+\.json")

    def test_the_published_bullet_agrees_with_its_results(self):
        self.assertEqual(check.check_cited(self.first), [])

    def test_a_changed_figure_fails(self):
        import re
        m = re.search(r"faulted jobs: (\d+) of", self.first)
        changed = self.first.replace(m.group(0), f"faulted jobs: {int(m.group(1)) + 1} of", 1)
        self.assertTrue(any("lacks" in f for f in check.check_cited(changed)), check.check_cited(changed))

    def test_a_bullet_measured_before_a_model_change_must_say_stale(self):
        unmarked = self.first.replace("**Stale**", "").replace("stale", "").replace("Stale", "")
        real = check.changed_since
        try:
            check.changed_since = lambda commit: ["0123abc"]  # a later commit changed the model
            self.assertTrue(any("must say it is stale" in f for f in check.check_cited(unmarked)))
            self.assertFalse(any("stale" in f for f in check.check_cited(unmarked + " Stale: x.")))
            check.changed_since = lambda commit: []  # nothing changed since the run
            self.assertEqual(check.check_cited(unmarked), [])
        finally:
            check.changed_since = real

    def test_a_missing_results_file_fails(self):
        self.assertTrue(check.check_cited("- **x** bench/results/no-such-run.json gate"))


if __name__ == "__main__":
    unittest.main()
