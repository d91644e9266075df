"""Everything a lab run changes is undone: after SIGINT, after SIGTERM, and (with lab/cleanup.py) after the
launcher was SIGKILLed. Starts real jobs (root, iproute2, /usr/bin/python3 with torch); skipped otherwise.

usage: python3 -m unittest discover -s lab/tests    (from the repository root; ~1 minute)
"""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
JOB = os.path.join(LAB, "ddp_job.py")


def can_run():
    return os.geteuid() == 0 and os.path.exists("/usr/bin/python3") and subprocess.run(
        ["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0


def leftovers(pid):
    """Namespaces, cgroup directories and processes that carry run pid's prefix."""
    prefix = f"strata-lab-{pid}-"
    ns = [x.split()[0] for x in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                               text=True).stdout.splitlines() if x.startswith(prefix)]
    cg = [d for d in glob.glob("/sys/fs/cgroup/*/" + prefix + "*") + glob.glob("/sys/fs/cgroup/" + prefix + "*")]
    procs = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if prefix.encode() in f.read():
                        procs.append(int(d))
            except OSError:
                pass
    tmp = glob.glob(os.path.join(tempfile.gettempdir(), prefix + "*"))
    return {"netns": ns, "cgroups": cg, "processes": procs, "scratch": tmp}


def nothing(d):
    return not any(d.values())


@unittest.skipUnless(can_run(), "needs root and /usr/bin/python3 with torch")
class Teardown(unittest.TestCase):
    def start(self, fault, out):
        p = subprocess.Popen([sys.executable, JOB, "--ranks", "2", "--steps", "5000", "--fault", fault,
                              "--fault-rank", "1", "--out", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        # wait until the machine is changed and the ranks run (their trace steps are under way)
        while time.monotonic() < deadline:
            d = leftovers(p.pid)
            if (d["netns"] or d["cgroups"] or d["processes"]) and self.ranks_running(p.pid):
                return p, d
            time.sleep(0.2)
        p.kill()
        self.fail(f"{fault}: the job did not get going: {p.stdout.read().decode()[-2000:]}")

    def ranks_running(self, pid):
        kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        return len(kids) >= 2

    def check_signal(self, fault, sig):
        with tempfile.TemporaryDirectory() as out:
            p, during = self.start(fault, out)
            time.sleep(3)  # the ranks import torch and start stepping
            p.send_signal(sig)
            text = p.communicate(timeout=60)[0].decode()
            self.assertEqual(p.returncode, 130, text)
            self.assertIn("the machine restored", text)
            after = leftovers(p.pid)
            self.assertTrue(nothing(after), f"{fault} after {sig.name}: left {after} (had {during})")

    def test_sigint_network(self):
        self.check_signal("network_contention", signal.SIGINT)

    def test_sigterm_cgroup_cpu_and_spinners(self):
        self.check_signal("cpu_throttling", signal.SIGTERM)
        self.check_signal("cpu_contention", signal.SIGINT)

    def test_sigterm_slow_link(self):  # its `tc -batch` readers too (injectors/base.py start_command_pipe)
        self.check_signal("slow_communication", signal.SIGTERM)

    def test_sigint_memory(self):
        self.check_signal("memory_pressure", signal.SIGINT)

    def test_sigkill_then_cleanup(self):
        with tempfile.TemporaryDirectory() as out:
            p, during = self.start("network_contention", out)
            time.sleep(2)
            p.kill()
            p.wait()
            time.sleep(1)  # the ranks and helpers die with the launcher (PR_SET_PDEATHSIG)
            left = leftovers(p.pid)
            self.assertTrue(left["netns"], "a SIGKILLed launcher cannot undo: namespaces should be left")
            r = subprocess.run([sys.executable, os.path.join(LAB, "cleanup.py")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertTrue(nothing(leftovers(p.pid)), leftovers(p.pid))


if __name__ == "__main__":
    unittest.main()
