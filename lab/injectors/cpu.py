"""CPU faults from outside the rank: a competing busy process on its core, or a cgroup CPU quota."""
import os
import signal

from .base import Injector, kernel_effect, kernel_effect_by_step, need_root, start_helper
from .cgroup import Cgroups

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_QUOTA_US = 1000  # the kernel's least CFS quota (cpu.cfs_quota_us, cpu.max)


def share_and_quota(share, period_us):
    """(share, quota us) for a wanted share of a period: the share raised to the kernel's least quota, and that
    quota in whole microseconds (never below MIN_QUOTA_US). The one rule for a quota, the injector's first and the
    rank's tuned ones alike."""
    share = max(share, MIN_QUOTA_US / period_us)
    return share, max(MIN_QUOTA_US, int(share * period_us))


class CpuContention(Injector):
    """Busy processes (spinning, no sleep) pinned to the fault rank's core and sharing a CPU cgroup with the fault
    rank alone (v1 cpu or v2 cpu controller, weighted as one autogroup of the ranks' niceness): a stray process
    in the rank's own container. The scheduler splits the core between groups first, so the spinners take their
    time from the fault rank only; another rank on that core competes with the group as with one more rank, which
    wakes and runs as before. The rank stops/continues them (SIGSTOP/SIGCONT) at step boundaries. --magnitude sets
    how many: 1 + round(magnitude / 0.3) (two at the lab's default 0.3).

    Until 2026-12-05 each spinner ran in an autogroup of its own, so every rank on the core was slowed alike and
    the truth accepted any of them; with the ranks kept off a measurably slower core (ddp_job.py), 4- and 8-rank
    jobs on this VM put every rank on one core, and the fault would have reached all of them.

    A rank that needs less than its fair share of the core (the lab's ranks mostly wait for the emulated device)
    is hardly slowed by one spinner: the scheduler runs it as soon as it wakes. Two or more spinners push its
    share below its demand; give the ranks real host work (--host-ms 10) so there is CPU demand to stretch.
    Measured here with a spinner autogroup each (2 ranks, --host-ms 10): 1 spinner about +0 ms per step,
    2 spinners about +11 ms (single steps 0-21 ms), 5 spinners about +16 ms (1-39 ms)."""

    cause = "cpu_contention"

    def setup(self):
        need_root("cpu_contention (a CPU cgroup shared by the rank and the busy processes)")
        self.core = self.ctx.core_of(self.a.fault_rank)
        self.n = 1 + max(1, round(self.a.magnitude / 0.3))
        self.cg = Cgroups.detect(need=("cpu",))
        self.group = self.cg.create(f"{self.ctx.prefix}-spin-r{self.a.fault_rank}", ["cpu"])
        self.ctx.undo.push(f"remove cgroup {self.group.name}", lambda: self.group.remove())
        self.group.set_cpu_weight(self.a.nice)
        self.procs = [start_helper(self.ctx, [self.ctx.helper_python, os.path.join(HERE, "helpers.py"), "spin",
                                              f"{self.ctx.prefix}-spin{i}", str(self.core), str(self.a.nice)],
                                   f"spin{i}") for i in range(self.n)]
        for p in self.procs:
            os.kill(p.pid, signal.SIGSTOP)  # off until the rank switches it on
            self.group.add(p.pid)

    def after_spawn(self, rank, pid):
        if rank == self.a.fault_rank:
            self.group.add(pid)

    def toggle(self):
        return {"on": [["signal", p.pid, int(signal.SIGCONT)] for p in self.procs],
                "off": [["signal", p.pid, int(signal.SIGSTOP)] for p in self.procs]}

    def took(self, stats):
        return {"measure": f"run-queue wait of rank {self.a.fault_rank}'s main thread (runnable while another task "
                           "held its core; /proc/thread-self/schedstat), less its baseline",
                "per_step": kernel_effect(stats, self.a.fault_rank, "rq_wait_ms"), "unit": "ms",
                "by_step": kernel_effect_by_step(stats, self.a.fault_rank, "rq_wait_ms")}

    def mechanism(self):
        return (f"{self.n} busy process(es) (a Python spin loop) pinned to cpu {self.core}, the core of rank "
                f"{self.a.fault_rank}, with the ranks' niceness ({self.a.nice}), in {self.cg.describe()} group "
                f"{self.group.name} with rank {self.a.fault_rank} alone (weighted as one autogroup of that niceness)")


class CpuThrottling(Injector):
    """The fault rank in a cgroup of its own whose CPU quota is a fraction of one core per period (CFS
    bandwidth control): v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max. The rank switches the quota on
    and off by writing the knob at step boundaries. The fraction is --quota when given; by default the rank
    sets it from its own CPU time per step with the fault off and corrects it in each fault-on unrecorded step
    by how long it waited for its core (lab/ddp_job.py first_share, tune_share), toward --magnitude of the device
    time. The period is --period-us (default: lab/ddp_job.py default_period_us, 2.5 ms when every rank has a core
    of its own, else 10 ms; finer than the rank's bursts of host work, so the wait grows smoothly as the share
    shrinks: at 20 ms a burst either fit a period's quota or waited out the period's rest, and the wait jumped
    between 0 and 80 ms as the tuning moved the quota)."""

    cause = "cpu_throttling"

    def setup(self):
        need_root("cpu_throttling (a cgroup CPU quota)")
        self.cg = Cgroups.detect(need=("cpu",))
        self.period = self.a.period_us
        self.quota = share_and_quota(self.a.quota, self.period)[1]
        self.group = self.cg.create(f"{self.ctx.prefix}-cpu-r{self.a.fault_rank}", ["cpu"])
        self.ctx.undo.push(f"remove cgroup {self.group.name}", lambda: self.group.remove())
        self.group.set_cpu_quota(None, self.period)  # off until the rank switches it on
        self.knob = self.group.cpu_quota_knob(self.quota, self.period)

    def after_spawn(self, rank, pid):
        if rank == self.a.fault_rank:
            self.group.add(pid)

    def toggle(self):
        # "quota": the rank writes the quota it has tuned so far (lab/ddp_job.py tune_share); this one when --quota
        # was given
        path, on, off = self.knob
        text = f"{{quota}} {self.period}" if self.cg.version == 2 else "{quota}"
        return {"on": [["quota", path, text, self.quota, self.period]], "off": [["write", path, off]]}

    def mechanism(self):
        tuned = getattr(self.a, "defaulted", {}).get("quota")
        quota = "tuned in the unrecorded steps (truth quotas_us)" if tuned else (
            f"of {self.quota} us ({self.quota / self.period:.0%} of one core)")
        return (f"rank {self.a.fault_rank} in {self.cg.describe()} group {self.group.name} with a CPU quota "
                f"{quota} per {self.period} us period")

    def took(self, stats):
        # Not the cgroup's throttled time: it counts the rest of every period whose quota ran out, also while
        # the rank would have slept anyway (it mostly waits for the emulated device); measured here 73 ms per
        # step throttled for a run-queue wait of 9 ms. The wait is what the quota cost the rank.
        return {"measure": f"run-queue wait of rank {self.a.fault_rank}'s main thread (runnable while its cgroup's "
                           "quota was spent; /proc/thread-self/schedstat), less its baseline",
                "per_step": kernel_effect(stats, self.a.fault_rank, "rq_wait_ms"), "unit": "ms",
                "by_step": kernel_effect_by_step(stats, self.a.fault_rank, "rq_wait_ms")}

    def measure(self, stats):
        out = super().measure(stats)
        if stats[self.a.fault_rank].get("quotas_us"):
            out["quotas_us"] = stats[self.a.fault_rank]["quotas_us"]  # the first, then each tuned one
        try:
            out["cgroup_cpu_stat"] = self.group.cpu_stat()
        except OSError:
            pass
        return out
