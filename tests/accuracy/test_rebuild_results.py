"""bench/rebuild_results reads a bench/accuracy log's case lines as the run printed them (status, top rank and
cause, with or without the injected time, an error's message) and refuses to write a results file that is not the
run's: a case missing from the log, or a logged case without its kept job, is named, and nothing is written. No strata binary is run here."""
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
_loader = importlib.machinery.SourceFileLoader("rebuild_results", os.path.join(ROOT, "bench", "rebuild_results"))
_spec = importlib.util.spec_from_loader("rebuild_results", _loader)
rebuild = importlib.util.module_from_spec(_spec)
_loader.exec_module(rebuild)

LOG = """bench/accuracy: held-out suite, 173 cases, strata /x/strata
ok    ho-lab-clean-2r-s23020 -> rank None, none [4 s]
FAIL  ho-lab-memory_pressure-2r-r1-m0.15 (injected 8.7 ms/step) -> rank 1, slow_compute [15 s]: cause slow_compute
NOISY ho-lab-gc_pause-2r-r0-m0.08 (injected 5.1 ms/step) -> rank 0, gc_pause [9 s]; recording noisy: rank 1 ...
ok    ho-synth-gc_pause-256r-r0-m0.06 -> rank 0, host_stall [9 s]
ERR   ho-synth-data_imbalance-256r [0 s]: strata synth failed: No space left on device
  memory_pressure          8      75.0 % (6/8)     100.0 % (8/8)  29.7 %      75.0 % (6/8)
"""


class LogLines(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp()
        with os.fdopen(fd, "w") as f:
            f.write(LOG)

    def tearDown(self):
        os.remove(self.path)

    def test_each_case_line_gives_its_status_rank_and_cause(self):
        got = rebuild.logged_lines(self.path)
        self.assertEqual(set(got), {"ho-lab-clean-2r-s23020", "ho-lab-memory_pressure-2r-r1-m0.15",
                                    "ho-lab-gc_pause-2r-r0-m0.08", "ho-synth-gc_pause-256r-r0-m0.06",
                                    "ho-synth-data_imbalance-256r"}, "table rows are not case lines")
        self.assertEqual(got["ho-lab-clean-2r-s23020"][:3], ("pass", "None", "none"))
        self.assertEqual(got["ho-lab-memory_pressure-2r-r1-m0.15"][:3], ("fail", "1", "slow_compute"))
        self.assertEqual(got["ho-lab-gc_pause-2r-r0-m0.08"][:3], ("noisy", "0", "gc_pause"))
        self.assertEqual(got["ho-synth-gc_pause-256r-r0-m0.06"][:3], ("pass", "0", "host_stall"))
        self.assertEqual(got["ho-synth-data_imbalance-256r"][:3], ("error", None, None))

    def test_a_log_without_every_case_or_a_case_without_its_job_writes_nothing(self):
        out = os.path.join(tempfile.mkdtemp(), "r.json")
        argv = sys.argv
        sys.argv = ["rebuild_results", "--strata", "/nonexistent", "--keep", "/nonexistent", "--log", self.path,
                    "--commit", "abc1234", "--started", "2026-12-05T18:03:20+00:00", "--why", "test",
                    "--seed-base", "23000", "--json", out]
        try:
            with open(os.devnull, "w") as null:
                stderr, sys.stderr = sys.stderr, null
                try:
                    rc = rebuild.main()
                finally:
                    sys.stderr = stderr
        finally:
            sys.argv = argv
        self.assertEqual(rc, 1)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
