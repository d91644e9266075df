"""The accuracy suite waits for a quiet machine before each lab job (bench/accuracy_lib/quiet_machine.py): it
sees a process that burns a CPU, names it when the machine stays busy, and says nothing when it was quiet."""
import os
import subprocess
import sys
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from accuracy_lib import quiet_machine  # noqa: E402


class QuietMachineTest(unittest.TestCase):
    def test_a_spinning_process_is_seen_and_named(self):
        spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            share, busy = quiet_machine.sample(1.0, top_n=None)
            self.assertGreaterEqual(share, 0.2)  # one of the CPUs busy at least part of the second
            spun = [cpu for _, pid, cpu in busy if pid == spin.pid]
            self.assertTrue(spun and spun[0] >= 0.1, f"the spinner is not among the busy processes: {busy}")
            self.assertEqual([cpu for *_, cpu in busy], sorted((cpu for *_, cpu in busy), reverse=True))
            # The note names the busiest three (on a loaded machine, as under ctest -j2 beside a build, the
            # spinner need not be one of them: other cgroups' processes may take more).
            note = quiet_machine.wait(max_wait_s=1.5)
            self.assertIn("machine busy", note)
            self.assertRegex(note, r"\(pid [0-9]+\) [0-9]+% of a CPU")
        finally:
            spin.kill()
            spin.wait()

    def test_quiet_at_once_says_nothing(self):
        with mock.patch.object(quiet_machine, "sample", return_value=(0.01, [])):
            self.assertEqual(quiet_machine.wait(max_wait_s=5), "")

    def test_busy_then_quiet_says_how_long_it_waited(self):
        shares = iter([(0.9, [("cc1plus", 7, 0.9)]), (0.9, [("cc1plus", 7, 0.9)]), (0.02, [])])
        clock = iter([0.0, 1.0, 2.0, 3.0, 3.0])
        with mock.patch.object(quiet_machine, "sample", side_effect=lambda: next(shares)), \
                mock.patch.object(quiet_machine.time, "monotonic", side_effect=lambda: next(clock)):
            note = quiet_machine.wait(max_wait_s=60)
        self.assertEqual(note, "waited 3 s for a quiet machine")


if __name__ == "__main__":
    unittest.main()
