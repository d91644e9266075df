"""The tuned outside faults really tune in a job (issue 47): a short 2-rank job of each, and the truth shows the
knob corrected in its fault-on unrecorded steps (memory_pressure's cuts, cpu_throttling's quotas), each step's
measure in its stats (took by_step for every recorded step). The sizes themselves are timing and are checked on a
simulated kernel (test_memory_sizing, test_throttling_sizing); this checks the wiring in the rank's loop, which
once skipped the throttling baseline and left the first quota untuned. Starts real jobs (root, cgroups,
/usr/bin/python3 with torch); skipped otherwise (a skip fails CI, which runs as root)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

LAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, LAB)
import ddp_job  # noqa: E402

JOB = os.path.join(LAB, "ddp_job.py")


def can_run():
    return os.geteuid() == 0 and os.path.exists("/usr/bin/python3") and subprocess.run(
        ["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0


def run_job(fault, magnitude=0.3):
    out = tempfile.mkdtemp(prefix="strata-lab-tuning-")
    r = subprocess.run(["/usr/bin/python3", JOB, "--ranks", "2", "--steps", "2", "--fault", fault, "--fault-rank", "1",
                        "--magnitude", str(magnitude), "--host-ms", "10", "--core-wait", "0", "--out", out],
                       capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        raise AssertionError(f"{fault} job failed: {r.stderr[-1500:]}")
    with open(os.path.join(out, "truth.json")) as f:
        return json.load(f)


@unittest.skipUnless(can_run(), "needs root, cgroups and /usr/bin/python3 with torch")
class TunedFaultsTune(unittest.TestCase):
    fault_on_unrecorded = ddp_job.WAIT_STEPS + ddp_job.TUNING_STEPS + ddp_job.WARMUP_STEPS - 3  # on from iteration 3

    def check(self, truth, knobs):
        self.assertEqual(truth["unrecorded_fault_iters"], list(range(3, 3 + self.fault_on_unrecorded)))
        self.assertGreaterEqual(len(knobs), 3, f"the knob was corrected in the unrecorded steps: {knobs}")
        self.assertEqual(truth["took_measure"]["unit"], "ms")
        self.assertEqual(set(truth["took_measure"]["by_step"]), {str(s) for s in truth["steps"]})

    def test_memory_pressure_tunes_its_cut(self):
        truth = run_job("memory_pressure")
        self.check(truth, truth["memory_limit"]["cuts_mb"])

    def test_cpu_throttling_tunes_its_quota(self):
        # At 0.08 (2.9 ms on 2 ranks): at 0.3 (10.8 ms), tuned by its arrival lateness since 2026-12-06, a 2-rank
        # job's quota reaches the 2.5 ms period's least (1 ms) in a step or two and stays, so the truth lists two
        # quotas however the wiring works; at 0.08 the quota is corrected step by step.
        truth = run_job("cpu_throttling", 0.08)
        self.check(truth, truth["quotas_us"])


if __name__ == "__main__":
    unittest.main()
