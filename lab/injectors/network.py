"""A network per run: each rank in a network namespace of its own, joined by a veth pair to a bridge that
lives in one more namespace (the root namespace is not touched), addresses 10.77.0.<rank+1>/24, the bridge
10.77.0.254. Every link is shaped like a NIC of --link-mbit (tbf on both ends of each veth: egress of the
rank's eth0 and of the bridge port toward the rank); gloo uses eth0 (GLOO_SOCKET_IFNAME), MASTER_ADDR is
rank 0's address. Deleting the namespaces deletes every interface and qdisc in them.

slow_communication: the fault rank's link shaped at a lower rate (both directions).
network_contention: a traffic blaster in the fault rank's namespace sends to and receives from a sink in the
bridge's namespace as fast as the fault rank's link lets it, so gloo's transfers queue behind it. For persistent
contention (sized_contention) every link is shaped to the rate at which losing about half of one link makes the
gradient all_reduce magnitude x the device time per step slower (contention_rate_mbit; --contention-rate link
keeps --link-mbit, the lab before 2026-12-04, when at 1000 Mbit/s the traffic cost the all_reduce -2 to +2 ms a
step: the fault did not take).
Names: <prefix>-br (bridge namespace), <prefix>-r<k> (rank k).
"""
import os
import signal

from .base import (Injector, comm_effect, device_ms_per_step, need_root, sh, start_command_pipe, start_helper,
                   wait_until, which)

HERE = os.path.dirname(os.path.abspath(__file__))
SUBNET = "10.77.0"
BRIDGE_ADDR = f"{SUBNET}.254"
SINK_PORT = 5201
BLAST_PORT = 5202  # the blaster's source port: the fault rank aborts its connection by address (sockdiag.py)


def tbf(rate_mbit, burst_kb):
    # latency bounds the queue (rate x latency bytes): a short queue, like a switch port's
    return ["tbf", "rate", f"{rate_mbit}mbit", "burst", f"{burst_kb}kb", "latency", "5ms"]


def grad_bytes(a):
    return 4 * (a.layers * (a.width * a.width + a.width) + a.width * 10 + 10)


def wire_bits(a):
    """Bits of the gradient all_reduce through each rank's link, each way (a ring: 2(n-1)/n of the gradient)."""
    n = a.ranks
    return 8 * 2 * (n - 1) / n * grad_bytes(a)


def sized_contention(a):
    """Whether every link is shaped for the magnitude (contention_rate_mbit): --contention-rate magnitude.
    Until 2026-12-05 not for intermittent_network_contention: the blaster was stopped (SIGSTOP) between fault
    steps, and on a link slowed to the sized rate what its socket buffers held took the next steps too (seeds
    20000+: every step of an 8-rank job's all_reduces slow for a fault of every third step). The blaster now
    resets its connection when switched off (helpers.py blast), which discards those buffers."""
    return a.contention_rate == "magnitude"


def contention_rate_mbit(a, link_mbit):
    """The rate every link is shaped to for network_contention. The blaster's TCP flows take about half of the
    fault rank's link while they run, so the all_reduce's bits through it take wire_bits / rate longer than at the
    full rate: the rate that makes that magnitude x the emulated device time per step, no faster than the link
    (--link-mbit; 0 = unshaped: 10 Gbit/s) and no slower than 10 Mbit/s."""
    target_s = a.magnitude * device_ms_per_step(a) / 1000.0
    ceiling = link_mbit or 10000
    if target_s <= 0:
        return ceiling
    return int(max(10, min(ceiling, wire_bits(a) / target_s / 1e6)))


def transfer_took(stats, fault_rank):
    """The link faults' took measure (Injector.took): the all_reduce's transfer time, less its baseline, per
    affected step and in each."""
    effect = comm_effect(stats, fault_rank)
    return {"measure": "gradient all_reduce time after the last rank arrived (the transfer, on the ranks' own "
                       "clocks), less its baseline", "per_step": effect["injected_ms"], "unit": "ms",
            "by_step": effect["injected_ms_by_step"]}


class Topology:
    """Namespaces, bridge, veths and the NIC-like shaping of every link."""

    def __init__(self, ctx):
        self.ctx, self.a = ctx, ctx.args
        self.br = f"{ctx.prefix}-br"
        self.ns = [f"{ctx.prefix}-r{r}" for r in range(self.a.ranks)]
        self.rate = self.a.link_mbit
        self.burst_kb = 64

    def setup(self):
        need_root("running the ranks in network namespaces")
        which("ip")
        which("tc")
        undo = self.ctx.undo
        sh(["ip", "netns", "add", self.br])
        undo.push(f"delete netns {self.br}", lambda: sh(["ip", "netns", "del", self.br]))
        sh(["ip", "-n", self.br, "link", "set", "lo", "up"])
        sh(["ip", "-n", self.br, "link", "add", "br0", "type", "bridge"])
        sh(["ip", "-n", self.br, "addr", "add", f"{BRIDGE_ADDR}/24", "dev", "br0"])
        sh(["ip", "-n", self.br, "link", "set", "br0", "up"])
        for r, ns in enumerate(self.ns):
            sh(["ip", "netns", "add", ns])
            undo.push(f"delete netns {ns}", lambda ns=ns: sh(["ip", "netns", "del", ns]))
            sh(["ip", "-n", ns, "link", "set", "lo", "up"])
            sh(["ip", "-n", self.br, "link", "add", f"p{r}", "type", "veth", "peer", "name", "eth0", "netns", ns])
            sh(["ip", "-n", self.br, "link", "set", f"p{r}", "master", "br0"])
            sh(["ip", "-n", self.br, "link", "set", f"p{r}", "up"])
            sh(["ip", "-n", ns, "addr", "add", f"{self.addr(r)}/24", "dev", "eth0"])
            sh(["ip", "-n", ns, "link", "set", "eth0", "up"])
            if self.rate:
                self.shape(r, self.rate, "add")

    def addr(self, r):
        return f"{SUBNET}.{r + 1}"

    def shape_args(self, r, rate_mbit, verb):
        """[(namespace, tc arguments)]: both ends of rank r's link."""
        return [(self.ns[r], ["qdisc", verb, "dev", "eth0", "root"] + tbf(rate_mbit, self.burst_kb)),
                (self.br, ["qdisc", verb, "dev", f"p{r}", "root"] + tbf(rate_mbit, self.burst_kb))]

    def shape(self, r, rate_mbit, verb="change"):
        for ns, args in self.shape_args(r, rate_mbit, verb):
            sh(["tc", "-n", ns] + args)

    def rank_prefix(self, r):
        return ["ip", "netns", "exec", self.ns[r]]

    def rank_env(self, r):
        return {"MASTER_ADDR": self.addr(0), "GLOO_SOCKET_IFNAME": "eth0"}

    def describe(self):
        shaping = f"every link shaped to {self.rate} Mbit/s each way (tbf)" if self.rate else "links not shaped"
        return (f"each rank in a network namespace of its own ({self.ctx.prefix}-r<k>), veth to a bridge in "
                f"{self.br}, {SUBNET}.0/24; {shaping}")


class SlowCommunication(Injector):
    """The fault rank's link shaped at a lower rate than the others. The rate is chosen so that the gradient
    all_reduce's bytes through that link (2(n-1)/n of the gradient, each way) take about magnitude x the
    emulated device time per step longer; the rank switches it with `tc qdisc change` lines to a `tc -batch`
    of each namespace (start_command_pipe)."""

    cause = "slow_communication"

    def setup(self):
        topo = self.ctx.topology
        bits = wire_bits(self.a)
        base_s = bits / (topo.rate * 1e6) if topo.rate else 0.0
        target_s = self.a.magnitude * device_ms_per_step(self.a) / 1000.0
        self.slow = max(1, int(bits / (base_s + target_s) / 1e6))
        self.normal = topo.rate or 10000
        # One `tc -batch` per namespace, fed by the rank a line at a time (no process started in its steps).
        self.pipes = {ns: start_command_pipe(self.ctx, ["tc", "-n", ns, "-force", "-batch"], f"tc-{i}")
                      for i, (ns, _) in enumerate(topo.shape_args(self.a.fault_rank, self.slow, "change"))}

    def toggle(self):
        topo, r = self.ctx.topology, self.a.fault_rank

        def lines(rate):
            return [["pipe", self.pipes[ns], " ".join(args) + "\n"] for ns, args in topo.shape_args(r, rate, "change")]

        # The rank tunes the rate in the unrecorded fault-on steps (ddp_job.py tune_link_rate) and sends the "on"
        # lines again with it, `{rate}` filled in; it writes the rate it settled on to rate_file.
        template = [[self.pipes[ns], " ".join(args) + "\n"] for ns, args in topo.shape_args(r, "{rate}", "change")]
        return {"on": lines(self.slow), "off": lines(self.normal),
                "rate": {"mbit": self.slow, "link_mbit": self.normal, "on": template, "file": self.rate_file()}}

    def rate_file(self):
        return os.path.join(self.ctx.work, "slow-link-mbit")

    def mechanism(self):
        rate = f"{self.slow} Mbit/s"
        if os.path.exists(self.rate_file()):
            with open(self.rate_file()) as f:
                rate = f"{float(f.read()):.1f} Mbit/s (tuned in the unrecorded steps from {self.slow})"
        return (f"rank {self.a.fault_rank}'s link (veth eth0 <-> bridge port p{self.a.fault_rank}) shaped with tbf to "
                f"{rate} each way, the other links {self.ctx.topology.rate} Mbit/s; gradient "
                f"{grad_bytes(self.a)} bytes per step")

    def measure(self, stats):
        return comm_effect(stats, self.a.fault_rank)

    def took(self, stats):
        return transfer_took(stats, self.a.fault_rank)


class NetworkContention(Injector):
    """Background traffic on the fault rank's link: a blaster in its namespace and a sink in the bridge's,
    TCP both ways as fast as the shaped link lets it. The rank switches the blaster on and off at step
    boundaries (SIGUSR2/SIGUSR1: a new connection, a reset one)."""

    cause = "network_contention"

    def setup(self):
        topo, r = self.ctx.topology, self.a.fault_rank
        helper = os.path.join(HERE, "helpers.py")
        py = self.ctx.helper_python
        # Both ends run on the fault rank's core, at the lowest priority (SCHED_IDLE, helpers.py): the traffic's
        # CPU cost (TCP over veth is processed by the sending CPU) stays on the fault rank's host, as on a
        # cluster, and the other ranks' cores stay quiet; a rank that wakes on that core (with 4 or 8 ranks on
        # 2 cores, not only the fault rank) preempts them at once. At normal priority they made the ranks
        # sharing the core wait in the run queue (up to 17 ms a step, seeds 13000), which set the jobs aside
        # as noisy.
        if sized_contention(self.a):
            verb = "change" if topo.rate else "add"  # links without a qdisc yet (--link-mbit 0) get one
            topo.rate = contention_rate_mbit(self.a, topo.rate)
            for k in range(self.a.ranks):
                topo.shape(k, topo.rate, verb)
        core = str(self.ctx.core_of(r))
        # Each end caps its sending at the rate the pace file holds (read again when it changes): half the link at
        # first, what the model above assumes the traffic takes, then what the rank's tuning finds (tune_pace).
        # Uncapped, the traffic took nearly all of the link and kept its queue full: the all_reduce slowed 2-8x the
        # magnitude (seeds 97920+: 0.08 of the device time at 4 ranks, 8.6 ms intended, took 66 ms).
        self.pace_file = os.path.join(self.ctx.work, "pace-mbit")
        self.first_pace = topo.rate / 2 if (sized_contention(self.a) and topo.rate) else 0.0
        with open(self.pace_file, "w") as f:
            f.write(str(self.first_pace))
        self.sink = start_helper(self.ctx, ["ip", "netns", "exec", topo.br, "taskset", "-c", core, py, helper, "sink",
                                            f"{self.ctx.prefix}-sink", BRIDGE_ADDR, str(SINK_PORT), self.pace_file],
                                 "sink")
        log = os.path.join(self.ctx.work, "sink.log")
        wait_until(lambda: "listening" in open(log).read(), 10, "the traffic sink")
        self.blaster = start_helper(self.ctx, ["ip", "netns", "exec", topo.ns[r], "taskset", "-c", core, py, helper, "blast",
                                               f"{self.ctx.prefix}-blast", BRIDGE_ADDR, str(SINK_PORT),
                                               str(BLAST_PORT), self.pace_file], "blast")
        self.cut = start_command_pipe(self.ctx, ["ip", "netns", "exec", topo.ns[r], py, helper, "cut",
                                                 f"{self.ctx.prefix}-cut", topo.addr(r), str(BLAST_PORT), BRIDGE_ADDR,
                                                 str(SINK_PORT)], "cut")
        log = os.path.join(self.ctx.work, "blast.log")
        wait_until(lambda: "connected" in open(log).read(), 10, "the traffic blaster")  # it starts off

    def toggle(self):
        # On: the blaster connects and sends. Off: the blaster is told to stay off (SIGUSR1) and the cutter, in
        # its namespace, aborts its connection (helpers.py cut): the kernel discards both ends' socket buffers at
        # once. The blaster's own reset waited for its core to be idle (SCHED_IDLE): the step after each fault
        # step was slowed too (seed 97901: 18 ms against 10-12 ms of gradient all_reduce).
        pid = self.blaster.pid
        toggle = {"on": [["signal", pid, int(signal.SIGUSR2)]],
                  "off": [["signal", pid, int(signal.SIGUSR1)], ["pipe", self.cut, "cut\n"]]}
        if self.first_pace:  # the rank tunes the traffic's rate (ddp_job.py tune_pace)
            toggle["pace"] = {"file": self.pace_file, "mbit": self.first_pace, "link_mbit": self.ctx.topology.rate}
        return toggle

    def mechanism(self):
        sized = " (every link shaped to it for the magnitude: --contention-rate magnitude)"
        if not sized_contention(self.a):
            sized = ""
        rate = f"as fast as its {self.ctx.topology.rate} Mbit/s link lets it"
        if self.first_pace:
            with open(self.pace_file) as f:
                rate = (f"each way capped at {float(f.read()):.1f} Mbit/s (tuned in the unrecorded steps from "
                        f"{self.first_pace:.1f}) on its {self.ctx.topology.rate} Mbit/s link")
        return (f"TCP traffic both ways between rank {self.a.fault_rank}'s namespace and the bridge's "
                f"({BRIDGE_ADDR}:{SINK_PORT}), {rate}{sized}")

    def measure(self, stats):
        return comm_effect(stats, self.a.fault_rank)

    def took(self, stats):
        return transfer_took(stats, self.a.fault_rank)
