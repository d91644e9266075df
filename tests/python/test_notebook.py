#!/usr/bin/env python3
"""examples/notebook.py (the README's tour in Python) runs and prints what the tour's commands print: each
`# ->` line after a `strata diagnose` of the README's tour block verbatim, and the figures of the `strata diff`
line (rank 1's step times, the op that changed on it alone, its change and the other rank's) in its rank's
line. A change of the README's lines, of the module's results or of the notebook fails here; so does a README
"Python" section whose code block no longer runs.

Run by ctest `python_module` with PYTHONPATH naming the build's python/ folder (see test_module.py).
"""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tour_expectations():
    """[(command, expected line)] of the README's tour block: each `# ->` line with the command above it."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    block = text.split("<!-- tour -->", 1)[1].split("<!-- /tour -->", 1)[0]
    pairs, command = [], None
    for line in block.splitlines():
        if line.startswith("# -> "):
            pairs.append((command, line[len("# -> "):].strip()))
        elif line.startswith("build/strata "):
            command = line.split("#", 1)[0].split()[1]  # the subcommand
    return pairs


class Notebook(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        run = subprocess.run([sys.executable, "examples/notebook.py"], cwd=ROOT, capture_output=True, text=True,
                             timeout=300)
        if run.returncode != 0:
            raise AssertionError(f"examples/notebook.py failed:\n{run.stderr}")
        cls.lines = [line.strip() for line in run.stdout.splitlines()]

    def test_tour_has_lines_to_check(self):
        commands = [c for c, _ in tour_expectations()]
        self.assertEqual(commands.count("diagnose"), 2, commands)
        self.assertEqual(commands.count("diff"), 1, commands)

    def test_verdicts_as_the_tour(self):
        for command, expected in tour_expectations():
            if command == "diagnose":
                self.assertIn(expected, self.lines)

    def test_diff_line_figures_as_the_tour(self):
        for command, expected in tour_expectations():
            if command != "diff":
                continue
            rank, *figures = re.split(r"\s{2,}", expected)
            line = next((l for l in self.lines if l.startswith(f"rank {rank}:")), None)
            self.assertIsNotNone(line, f"no line for rank {rank} in the notebook's output")
            for figure in figures:
                self.assertIn(figure, line)


class ReadmeSection(unittest.TestCase):
    def test_python_block_runs(self):
        # The README's "Python" section's code block, run as written from the repository's root.
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            section = f.read().split("### Python\n", 1)[1]
        code = section.split("```python\n", 1)[1].split("```", 1)[0]
        run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)


if __name__ == "__main__":
    unittest.main()
