"""memory_pressure: the fault rank in a cgroup of its own whose memory limit sits close to its working set
(v1 memory.limit_in_bytes, v2 memory.max), so the kernel reclaims the rank's pages while it runs.

Without swap (this machine has none) anonymous memory cannot be reclaimed; what the kernel takes back are
file-backed pages: the page cache and the mapped code and data of Python, libtorch and friends, which the rank
then faults in again (refaults), over and over, as long as its file working set does not fit. The limit is set
by the rank itself (lab/ddp_job.py set_memory_limit) at each step it runs with the fault on: its anonymous memory
then + its file pages at the first switch-on - a cut, which the rank tunes in its fault-on unrecorded steps (one
correction a step, tune_cut) until its lookup table's reads (one row of a random 1/16 of the table's pages each step)
take the fault's target longer than with the fault off. Switching off writes an unlimited limit.
"""
from .base import Injector, fault_on_steps, kernel_effect, kernel_effect_by_step, need_root
from .cgroup import Cgroups


class MemoryPressure(Injector):
    cause = "memory_pressure"

    def setup(self):
        need_root("memory_pressure (a cgroup memory limit)")
        self.cg = Cgroups.detect(need=("memory",))
        self.group = self.cg.create(f"{self.ctx.prefix}-mem-r{self.a.fault_rank}", ["memory"])
        self.ctx.undo.push(f"remove cgroup {self.group.name}", lambda: self.group.remove())
        self.group.set_memory_limit(None)

    def after_spawn(self, rank, pid):
        if rank == self.a.fault_rank:
            self.group.add(pid)

    def toggle(self):
        path, _, off = self.group.memory_limit_knob(0)
        d = self.group.dir("memory")
        return {"on": [["memlimit", d, self.cg.version]],
                "off": [["write", path, off]]}

    def mechanism(self):
        return (f"rank {self.a.fault_rank} in {self.cg.describe()} group {self.group.name}, memory limit = its "
                f"anonymous memory + its file pages at the first switch-on - a cut tuned in the unrecorded steps "
                f"(no swap: the kernel reclaims and the rank refaults file-backed pages)")

    def took(self, stats):
        # The time the limit cost the rank's table reads (the lookup the refaults fall on, timed around it in the
        # rank), less its baseline: a time, so that a machine delay elsewhere is weighed against it as for the
        # other faults (until 2026-12-05 the measure was the refault count, against which no delay could be
        # weighed: 6 of the 7 memory cases set aside in the held-out run at 8e3f826 were set aside for delays of
        # 1.9-11 ms). The refault count beside it is the mechanism's own (pages the limit made the kernel take
        # back that the rank then needed again); not the rank's major page faults: a refault through readahead or
        # the page cache is rarely one (9 in a run whose cgroup refaulted 37776 file pages, measured here).
        out = {"measure": f"time rank {self.a.fault_rank}'s lookup table reads took (timed around them in the "
                          "rank), less its baseline",
               "per_step": kernel_effect(stats, self.a.fault_rank, "table_ms"), "unit": "ms",
               "by_step": kernel_effect_by_step(stats, self.a.fault_rank, "table_ms")}
        try:
            ms = self.group.memory_stat()
        except OSError:
            return out
        pages = ms.get("workingset_refault_file", ms.get("workingset_refault", ms.get("total_workingset_refault", 0)))
        out["refault_pages_per_step"] = round(pages / max(1, fault_on_steps(stats, self.a.fault_rank)), 1)
        return out

    def measure(self, stats):
        out = super().measure(stats)
        st = stats[self.a.fault_rank]
        if st.get("memlimit"):
            out["memory_limit"] = st["memlimit"]
        try:
            ms = self.group.memory_stat()
            keys = ("pgmajfault", "pgfault", "total_pgmajfault", "workingset_refault", "workingset_refault_file",
                    "failcnt")
            out["cgroup_memory_stat"] = {k: ms[k] for k in keys if k in ms}
            if self.cg.version == 1:
                out["cgroup_memory_stat"]["failcnt"] = int(open(f"{self.group.dir('memory')}/memory.failcnt").read())
        except OSError:
            pass
        return out
