"""The headline check (tests/cli/check_accuracy_quote.py, ctest accuracy_quote) goes blind on nothing: the
published first bullet passes against its results file, and the same bullet with one figure changed, or
without its stale mark, fails; a later commit that only adds or removes blank lines in the model does not stale a
run, and any other change does."""
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

    def test_only_a_blank_line_change_to_the_model_leaves_a_run_current(self):
        import subprocess
        import tempfile
        repo = tempfile.mkdtemp()

        def git(*args):
            subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                           capture_output=True)

        def commit(text, msg):
            os.makedirs(os.path.join(repo, "src", "analysis"), exist_ok=True)
            with open(os.path.join(repo, "src", "analysis", "rule.cc"), "w") as f:
                f.write(text)
            git("add", "-A")
            git("commit", "-qm", msg)
            return subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True,
                                  text=True).stdout.strip()

        git("init", "-q")
        run = commit("int a = 1;\n\n\nint b = 2;\n", "the run's commit")
        commit("int a = 1;\n\nint b = 2;\n", "a formatter removes a blank line")
        self.assertEqual(check.changed_since(run, repo), [])
        inline = commit("int a  = 1;\n\nint b = 2;\n", "whitespace inside a line (in a string it would show)")
        real = commit("int a = 1;\n\nint b = 3;\n", "a rule changes")
        self.assertEqual(check.changed_since(run, repo), [real, inline])

    def test_a_missing_results_file_fails(self):
        self.assertTrue(check.check_cited("- **x** bench/results/no-such-run.json gate"))


if __name__ == "__main__":
    unittest.main()
