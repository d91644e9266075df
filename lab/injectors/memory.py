"""memory_pressure: the fault rank in a cgroup of its own whose memory limit sits close to its working set
(v1 memory.limit_in_bytes, v2 memory.max), so the kernel reclaims the rank's pages while it runs.

Without swap (this machine has none) anonymous memory cannot be reclaimed; what the kernel takes back are
file-backed pages: the page cache and the mapped code and data of Python, libtorch and friends, which the rank
then faults in again (refaults), over and over, as long as its file working set does not fit. The limit is set
by the rank itself when it switches the fault on, from its cgroup's statistics at that moment: its anonymous
memory + --mem-headroom-mb + --mem-keep x its mapped file pages. Switching off writes an unlimited limit.
"""
from .base import Injector, fault_on_steps, need_root
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
        return {"on": [["memlimit", d, self.cg.version, int(self.a.mem_headroom_mb * 2**20), self.a.mem_keep]],
                "off": [["write", path, off]]}

    def mechanism(self):
        return (f"rank {self.a.fault_rank} in {self.cg.describe()} group {self.group.name}, memory limit = its "
                f"anonymous memory + {self.a.mem_headroom_mb:g} MB + {self.a.mem_keep:g} x its mapped file pages "
                f"(no swap: the kernel reclaims and the rank refaults file-backed pages)")

    def took(self, stats):
        # Not the rank's major page faults: a refault through readahead or the page cache is rarely one (9 in a
        # run whose cgroup refaulted 37776 file pages, measured here). The cgroup's refault count is the
        # mechanism's own: pages the limit made the kernel take back that the rank then needed again.
        try:
            ms = self.group.memory_stat()
        except OSError:
            return None
        pages = ms.get("workingset_refault_file", ms.get("workingset_refault", ms.get("total_workingset_refault", 0)))
        return {"measure": f"file pages the cgroup of rank {self.a.fault_rank} refaulted (memory.stat "
                           "workingset_refault), per step with the limit on",
                "per_step": round(pages / max(1, fault_on_steps(stats, self.a.fault_rank)), 1), "unit": "pages"}

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
