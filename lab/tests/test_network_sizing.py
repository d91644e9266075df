"""network_contention is sized like the lab's other faults (issue 47 item 4): every link is shaped to the rate at
which the blaster's half of the fault rank's link costs the gradient all_reduce --magnitude of the emulated device
time per step. At the 1000 Mbit/s links of the lab before 2026-12-04 the traffic cost -2 to +2 ms a step (the
fault did not take in 5 of 6 held-out cases at seeds 19000+). No job is started: the rule the launcher applies,
and the blaster's switch (a connection while on, reset at once when off) on loopback.

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ddp_job  # noqa: E402
from injectors import network  # noqa: E402


class ContentionRate(unittest.TestCase):
    def args(self, *extra):
        return ddp_job.parse_args(["--out", "/nonexistent", "--fault", "network_contention", *extra])

    def test_losing_half_the_link_costs_the_magnitude(self):
        for ranks in (2, 4, 8):
            for magnitude in (0.08, 0.15, 0.3, 0.6):
                a = self.args("--ranks", str(ranks), "--magnitude", str(magnitude), "--layer-ms", "3")
                rate = network.contention_rate_mbit(a, 1000)
                target_s = magnitude * a.layers * 3 * a.layer_ms / 1000.0
                if 10 < rate < 1000:  # within the bounds: the extra time at half the rate is the target
                    extra_s = network.wire_bits(a) / (rate / 2 * 1e6) - network.wire_bits(a) / (rate * 1e6)
                    self.assertAlmostEqual(extra_s, target_s, delta=0.02 * target_s, msg=(ranks, magnitude))

    def test_a_larger_fault_never_gets_a_faster_link(self):
        rates = [network.contention_rate_mbit(self.args("--magnitude", str(m)), 1000) for m in (0.08, 0.15, 0.3, 0.6)]
        self.assertEqual(rates, sorted(rates, reverse=True))
        self.assertLess(rates[-1], rates[0])

    def test_never_faster_than_the_link_nor_under_10_mbit(self):
        self.assertLessEqual(network.contention_rate_mbit(self.args("--magnitude", "0.0001"), 1000), 1000)
        self.assertEqual(network.contention_rate_mbit(self.args("--magnitude", "0.0001"), 0), 10000)
        self.assertEqual(network.contention_rate_mbit(self.args("--magnitude", "5", "--layer-ms", "1000"), 1000), 10)

    def test_sized_by_default_and_the_old_lab_on_request(self):
        self.assertEqual(self.args().contention_rate, "magnitude")
        self.assertTrue(network.sized_contention(self.args()))
        self.assertFalse(network.sized_contention(self.args("--contention-rate", "link")))

    def test_an_intermittent_fault_is_sized_too(self):
        # its traffic stops within the step it is switched off in (the blaster resets its connection: Blaster below)
        a = ddp_job.parse_args(["--out", "/nonexistent", "--fault", "intermittent_network_contention"])
        self.assertTrue(network.sized_contention(a))


class PaceTuning(unittest.TestCase):
    """The traffic's cap is tuned in the unrecorded fault-on steps (ddp_job.py tune_pace): uncapped, it took
    nearly all of the link and kept its queue full, and the all_reduce slowed 2-8x the magnitude (seeds 97920+).
    Checked on a simulated link: W Mbit·ms of all_reduce at R - p instead of R, each step scattered."""

    def test_the_cap_moves_toward_the_target_and_stays_in_its_bounds(self):
        tune, link = ddp_job.tune_pace, 200.0
        self.assertAlmostEqual(tune([(100.0, 10.0)], 10.0, link), 100.0, msg="on target: keep it")
        self.assertLess(tune([(100.0, 20.0)], 10.0, link), 100.0, "slowed too much: cap it lower")
        self.assertGreater(tune([(100.0, 5.0)], 10.0, link), 100.0, "slowed too little: let more through")
        self.assertAlmostEqual(tune([(50.0, 0.0)], 10.0, link), 100.0, msg="no effect seen: double it")
        self.assertAlmostEqual(tune([(50.0, -3.0)], 10.0, link), 100.0, msg="under the baseline: no effect")
        self.assertAlmostEqual(tune([(100.0, 1e6)], 10.0, link), 50.0, msg="at most a factor 2 a step")
        self.assertLessEqual(tune([(150.0, 1e-6)], 10.0, link), 0.95 * link)
        self.assertGreaterEqual(tune([(5.0, 1e6)], 10.0, link), 0.02 * link)
        # one wild step among steady ones moves it little: the median of the W the steps imply
        steady = tune([(100.0, 10.0), (100.0, 10.5), (100.0, 300.0)], 10.0, link)
        self.assertAlmostEqual(steady, tune([(100.0, 10.5)], 10.0, link))

    def test_a_larger_target_never_gets_a_higher_cap(self):
        # the same steps seen: asking for more slowdown lets more traffic through, never less (over many histories)
        rng = random.Random(7)
        for _ in range(500):
            link = rng.uniform(20, 1000)
            history = [(rng.uniform(0.05, 0.9) * link, rng.uniform(-2, 80)) for _ in range(rng.randint(1, 8))]
            caps = [ddp_job.tune_pace(history, t, link) for t in (2.9, 5.8, 10.8, 21.6, 64.8)]
            self.assertEqual(caps, sorted(caps), (link, history))

    def test_the_tuned_fault_lands_near_its_target_on_a_noisy_link(self):
        # The lab's targets (2.9 ms at 0.08 on 2 ranks to 65 ms at 0.6 on 4) on links whose model rate (half of
        # it for the traffic) is off by up to 4x either way: within a factor 1.5 after the fault-on unrecorded
        # steps, in at least 9 of 10 jobs of each.
        rng = random.Random(47)
        steps = ddp_job.TUNING_STEPS + ddp_job.WAIT_STEPS + ddp_job.WARMUP_STEPS - 4  # on from iteration 3
        for target in (2.9, 5.8, 10.8, 21.6, 64.8):
            for truth in (0.25, 0.5, 1.0, 2.0, 4.0):  # W as a multiple of what the model assumes
                link = 100.0
                w = truth * target / (1 / (link / 2) - 1 / link)
                near = 0
                for _ in range(10):
                    cap, seen = link / 2, []
                    for _ in range(steps):
                        slowed = w * (1 / (link - cap) - 1 / link) * rng.uniform(0.67, 1.5) ** rng.choice((-1, 1))
                        seen.append((cap, slowed))
                        cap = ddp_job.tune_pace(seen, target, link)
                    near += target / 1.5 <= w * (1 / (link - cap) - 1 / link) <= 1.5 * target
                self.assertGreaterEqual(near, 9, f"target {target} ms, W {truth}x the model's")


class LinkRateTuning(unittest.TestCase):
    """slow_communication's link rate is tuned in the unrecorded fault-on steps (ddp_job.py tune_link_rate): from
    the model alone it took -0.6 and -4.9 ms of 5.8 and 11.5 intended at 4 and 8 ranks and 0.08 (held-out run at
    32de737). Checked on a simulated link: W Mbit·ms of all_reduce at r instead of R, each step scattered."""

    def test_the_rate_moves_toward_the_target_and_stays_in_its_bounds(self):
        tune, link = ddp_job.tune_link_rate, 1000.0
        self.assertAlmostEqual(tune([(500.0, 10.0)], 10.0, link), 500.0, msg="on target: keep it")
        self.assertGreater(tune([(500.0, 20.0)], 10.0, link), 500.0, "slowed too much: a faster link")
        self.assertLess(tune([(500.0, 5.0)], 10.0, link), 500.0, "slowed too little: a slower link")
        self.assertAlmostEqual(tune([(500.0, 0.0)], 10.0, link), 250.0, msg="no effect seen: halve it")
        self.assertAlmostEqual(tune([(500.0, -3.0)], 10.0, link), 250.0, msg="under the baseline: no effect")
        self.assertAlmostEqual(tune([(400.0, 1e6)], 10.0, link), 800.0, msg="at most a factor 2 a step")
        self.assertLessEqual(tune([(900.0, 1e-6)], 10.0, link), link)
        self.assertGreaterEqual(tune([(10.0, 0.0)], 10.0, link), 0.01 * link)
        self.assertAlmostEqual(tune([(link, 3.0)], 10.0, link), 0.5 * link, msg="at the full rate nothing is implied")
        steady = tune([(500.0, 10.0), (500.0, 10.5), (500.0, 300.0)], 10.0, link)
        self.assertAlmostEqual(steady, tune([(500.0, 10.5)], 10.0, link), msg="one wild step moves it little")

    def test_a_larger_target_never_gets_a_faster_link(self):
        rng = random.Random(11)
        for _ in range(500):
            link = rng.uniform(20, 1000)
            history = [(rng.uniform(0.02, 0.99) * link, rng.uniform(-2, 80)) for _ in range(rng.randint(1, 8))]
            rates = [ddp_job.tune_link_rate(history, t, link) for t in (2.9, 5.8, 10.8, 21.6, 64.8)]
            self.assertEqual(rates, sorted(rates, reverse=True), (link, history))

    def test_the_tuned_fault_lands_near_its_target_on_a_noisy_link(self):
        # The lab's targets on a 1000 Mbit/s link, W as the model assumes or 2x off either way, each step scattered
        # by up to 1.5x: within a factor 1.5 after the fault-on unrecorded steps in at least 9 of 10 jobs of each.
        rng = random.Random(32)
        steps = ddp_job.TUNING_STEPS + ddp_job.WAIT_STEPS + ddp_job.WARMUP_STEPS - 4  # on from iteration 3
        link, w0 = 1000.0, 3200.0  # Mbit·ms: 3.2 ms at the full rate, the gradient of a 4-rank job
        for target in (2.9, 5.8, 11.5, 21.6):
            for truth in (0.5, 1.0, 2.0):
                w, near = truth * w0, 0
                for _ in range(10):
                    rate, seen = 1.0 / ((3.2 + target) / w0), []  # the model's rate (network.py SlowCommunication)
                    for _ in range(steps):
                        seen.append((rate, w * (1 / rate - 1 / link) * rng.uniform(0.67, 1.5) ** rng.choice((-1, 1))))
                        rate = ddp_job.tune_link_rate(seen, target, link)
                    near += target / 1.5 <= w * (1 / rate - 1 / link) <= 1.5 * target
                self.assertGreaterEqual(near, 9, f"target {target} ms, W {truth}x the model's")


def established(port):
    """Established TCP connections to `port` on this host (both ends' sockets), by `ss`."""
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( dport = :{port} or sport = :{port} )"],
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def wait_for(pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return False


class Blaster(unittest.TestCase):
    """The traffic of network_contention is switched by signals (helpers.py blast): on, a connection carries
    traffic; off, the connection is reset at once, so nothing its socket buffers held keeps the link busy."""

    def test_switched_on_and_off_by_signals(self):
        helpers = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "injectors", "helpers.py")
        with socket.socket() as probe:  # a free port on loopback
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        procs = []
        try:
            sink = subprocess.Popen([sys.executable, helpers, "sink", "strata-lab-test", "127.0.0.1", str(port)],
                                    stdout=subprocess.PIPE, text=True)
            procs.append(sink)
            self.assertEqual(sink.stdout.readline().strip(), "listening")
            blast = subprocess.Popen([sys.executable, helpers, "blast", "strata-lab-test", "127.0.0.1", str(port)],
                                     stdout=subprocess.PIPE, text=True)
            procs.append(blast)
            self.assertEqual(blast.stdout.readline().strip(), "connected")
            self.assertTrue(wait_for(lambda: not established(port)), "starts off: no connection")
            for _ in range(3):
                blast.send_signal(signal.SIGUSR2)
                self.assertTrue(wait_for(lambda: len(established(port)) == 2), "on: one connection, both ends")
                time.sleep(0.2)
                blast.send_signal(signal.SIGUSR1)
                # Gone once the blaster's handler runs (a reset, not a drain); the wait is long only because a
                # loaded machine (a build beside ctest) can keep the handler from running for over 0.5 s.
                self.assertTrue(wait_for(lambda: not established(port)), f"off: reset, left {established(port)}")
            self.assertIsNone(blast.poll(), "the blaster keeps running between fault steps")
        finally:
            for p in procs:
                p.terminate()
                p.wait(timeout=10)

HELPERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "injectors", "helpers.py")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@unittest.skipUnless(os.geteuid() == 0, "needs root (CAP_NET_ADMIN for SOCK_DESTROY; CI runs as root)")
class Cut(unittest.TestCase):
    """network_contention's off switch does not wait for the blaster (helpers.py cut, sockdiag.py): the blaster
    runs at the lowest priority on the fault rank's core, and its own reset waited for that core to be idle (the
    step after each fault step slowed too, seed 97901). Here the blaster is stopped outright (SIGSTOP): the
    cutter's abort still ends its connection, both ends, at once."""

    def test_the_connection_is_aborted_while_the_blaster_cannot_run(self):
        port, src_port = free_port(), free_port()
        procs, fifo_dir = [], tempfile.mkdtemp()
        fifo = os.path.join(fifo_dir, "cut.fifo")
        os.mkfifo(fifo)
        held = os.open(fifo, os.O_RDWR)
        try:
            sink = subprocess.Popen([sys.executable, HELPERS, "sink", "strata-lab-test", "127.0.0.1", str(port)],
                                    stdout=subprocess.PIPE, text=True)
            procs.append(sink)
            self.assertEqual(sink.stdout.readline().strip(), "listening")
            blast = subprocess.Popen([sys.executable, HELPERS, "blast", "strata-lab-test", "127.0.0.1", str(port),
                                      str(src_port)], stdout=subprocess.PIPE, text=True)
            procs.append(blast)
            self.assertEqual(blast.stdout.readline().strip(), "connected")
            procs.append(subprocess.Popen([sys.executable, HELPERS, "cut", "strata-lab-test", "127.0.0.1",
                                           str(src_port), "127.0.0.1", str(port), fifo]))
            for _ in range(2):
                blast.send_signal(signal.SIGUSR2)
                self.assertTrue(wait_for(lambda: len(established(port)) == 2), "on: one connection, both ends")
                blast.send_signal(signal.SIGSTOP)
                try:
                    os.write(held, b"cut\n")
                    self.assertTrue(wait_for(lambda: not established(port), 2.0),
                                    f"the cutter left {established(port)} while the blaster was stopped")
                finally:
                    blast.send_signal(signal.SIGCONT)
                blast.send_signal(signal.SIGUSR1)
                time.sleep(0.1)
                self.assertFalse(established(port), "off: the blaster does not connect again")
        finally:
            for p in procs:
                p.terminate()
                p.wait(timeout=10)
            os.close(held)
            shutil.rmtree(fifo_dir)


class Pace(unittest.TestCase):
    """Each end of the traffic caps what it sends at the rate its pace file holds, read again when the file
    changes (helpers.py pace, pump_out): the tuning's knob, turned while the traffic runs. On loopback, which is
    otherwise far faster, the sink's stream comes in at about the cap, and at the new cap once the file changes."""

    def stream_rate(self, conn, seconds):
        got, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < seconds:
            got += len(conn.recv(1 << 16))
        return got / (time.monotonic() - t0)

    def test_the_sink_sends_at_the_cap(self):
        port, work = free_port(), tempfile.mkdtemp()
        pace_file = os.path.join(work, "pace-mbit")
        with open(pace_file, "w") as f:
            f.write("16")  # 2 MB/s
        sink = subprocess.Popen([sys.executable, HELPERS, "sink", "strata-lab-test", "127.0.0.1", str(port), pace_file],
                                stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(sink.stdout.readline().strip(), "listening")
            with socket.create_connection(("127.0.0.1", port)) as c:
                c.settimeout(5)
                rate = self.stream_rate(c, 1.5)
                self.assertLess(rate, 1.5 * 2e6, "faster than its cap")
                self.assertGreater(rate, 0.4 * 2e6, "far under its cap")
                with open(pace_file + ".tmp", "w") as f:
                    f.write("64")  # 8 MB/s, replaced as the rank's tuning does
                os.replace(pace_file + ".tmp", pace_file)
                self.stream_rate(c, 0.3)  # what was queued at the old cap
                rate = self.stream_rate(c, 1.5)
                self.assertLess(rate, 1.5 * 8e6, "faster than its new cap")
                self.assertGreater(rate, 1.5 * 2e6, "still at the old cap: the change was not read")
        finally:
            sink.terminate()
            sink.wait(timeout=10)
            shutil.rmtree(work)


if __name__ == "__main__":
    unittest.main()
