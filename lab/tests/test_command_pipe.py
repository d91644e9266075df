"""A fault rank switches a command-driven fault (the slow link's `tc qdisc change`) by writing a line to a
reader the launcher started (injectors/base.py start_command_pipe, send_line), not by starting a process
inside its step: lines sent one open at a time all reach the reader (it never sees an end of file between
them), a send does not block, and the undo stack stops the reader. (A slow-link run stopped by SIGTERM,
its tc readers included, is test_teardown's.)

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import subprocess
import sys
import tempfile
import time
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from injectors.base import Undo, send_line, start_command_pipe  # noqa: E402


def wait_for(fn, timeout=5):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if fn():
            return True
        time.sleep(0.05)
    return False


class CommandPipe(unittest.TestCase):
    def test_lines_reach_the_reader_and_undo_stops_it(self):
        with tempfile.TemporaryDirectory() as work:
            ctx = types.SimpleNamespace(work=work, undo=Undo())
            out = os.path.join(work, "got.txt")
            # The FIFO comes last: $0 of the script.
            reader = ["sh", "-c", 'while IFS= read -r l; do echo "got $l" >> "%s"; done < "$0"' % out]
            fifo = start_command_pipe(ctx, reader, "echo")
            t0 = time.monotonic()
            send_line(fifo, "qdisc change one\n")
            send_line(fifo, "qdisc change two\n")  # a second open and close: no end of file between them
            self.assertLess(time.monotonic() - t0, 1.0, "a send waited for the reader")
            self.assertTrue(wait_for(lambda: os.path.exists(out) and len(open(out).read().splitlines()) == 2),
                            open(out).read() if os.path.exists(out) else "nothing read")
            self.assertEqual(open(out).read().splitlines(), ["got qdisc change one", "got qdisc change two"])
            pids = subprocess.run(["pgrep", "-f", fifo], capture_output=True, text=True).stdout.split()
            self.assertTrue(pids, "the reader is not running")
            self.assertEqual(ctx.undo.run(), [])
            self.assertTrue(wait_for(lambda: not subprocess.run(["pgrep", "-f", fifo], capture_output=True).stdout),
                            "the reader outlived the undo stack")

    def test_a_reader_that_exits_at_once_is_an_error_naming_it(self):
        with tempfile.TemporaryDirectory() as work:
            ctx = types.SimpleNamespace(work=work, undo=Undo())
            with self.assertRaisesRegex(RuntimeError, "exited at once: no such thing"):
                start_command_pipe(ctx, ["sh", "-c", "echo no such thing; exit 3"], "bad")
            ctx.undo.run()


if __name__ == "__main__":
    unittest.main()
