"""cgroup v1 and v2 behind one interface: make a group, move a process in, set a CPU quota or a memory limit,
read its statistics, remove it.

Detection (Cgroups.detect): a pure v2 host mounts the unified hierarchy at /sys/fs/cgroup (it has
cgroup.controllers there); a v1 (or hybrid) host mounts one hierarchy per controller (/sys/fs/cgroup/cpu,
/sys/fs/cgroup/memory). On a hybrid host whose unified hierarchy (/sys/fs/cgroup/unified) holds the
controllers we need, v2 is used; otherwise v1.

v1: /sys/fs/cgroup/<controller>/<name>/ with cpu.cfs_quota_us + cpu.cfs_period_us, memory.limit_in_bytes;
    a process joins by writing its pid to cgroup.procs of each controller's group.
v2: <root>/<name>/ with cpu.max ("<quota> <period>" or "max <period>") and memory.max ("max" or bytes); the
    parent must delegate the controllers (+cpu +memory in its cgroup.subtree_control), and a v2 group with
    processes cannot have controllers enabled for children, so groups are leaves right under the root.
Every group name carries the run's prefix (strata-lab-<pid>-...) so lab/cleanup.py can recognise leftovers.
"""
import os
import time

V1_ROOT = "/sys/fs/cgroup"


def _write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def _read(path):
    with open(path) as f:
        return f.read()


def read_memory_stat(memory_dir):
    """A memory group's memory.stat as {key: int} (a rank reads its own group's by directory, without a Group)."""
    out = {}
    for line in _read(os.path.join(memory_dir, "memory.stat")).splitlines():
        k, _, v = line.partition(" ")
        if v.strip().isdigit():
            out[k] = int(v)
    return out


def anon_and_file(stat, version):
    """(anonymous bytes, file-backed bytes) of a memory.stat: v2 names them anon and file, v1 rss and cache."""
    return (stat["anon"], stat["file"]) if version == 2 else (stat["rss"], stat["cache"])


def memory_limit_file(memory_dir, version):
    """The file that holds a memory group's limit."""
    return os.path.join(memory_dir, "memory.max" if version == 2 else "memory.limit_in_bytes")


class Group:
    """One group (a directory per v1 controller, or one v2 directory)."""

    def __init__(self, cg, name, controllers):
        self.cg, self.name, self.controllers = cg, name, tuple(controllers)

    # -- paths -------------------------------------------------------------------------------------------
    def dir(self, controller):
        if self.cg.version == 2:
            return os.path.join(self.cg.root, self.name)
        return os.path.join(self.cg.root, controller, self.name)

    def dirs(self):
        return sorted({self.dir(c) for c in self.controllers})

    # -- membership --------------------------------------------------------------------------------------
    def add(self, pid):
        for d in self.dirs():
            _write(os.path.join(d, "cgroup.procs"), pid)

    def pids(self):
        out = set()
        for d in self.dirs():
            try:
                out.update(int(x) for x in _read(os.path.join(d, "cgroup.procs")).split())
            except OSError:
                pass
        return sorted(out)

    # -- cpu ---------------------------------------------------------------------------------------------
    def cpu_quota_knob(self, quota_us, period_us):
        """(path, value when limited, value when unlimited): a worker toggles a quota by writing these."""
        if self.cg.version == 2:
            return (os.path.join(self.dir("cpu"), "cpu.max"), f"{quota_us} {period_us}", f"max {period_us}")
        return (os.path.join(self.dir("cpu"), "cpu.cfs_quota_us"), str(quota_us), "-1")

    def set_cpu_quota(self, quota_us, period_us):
        """quota_us None: unlimited."""
        if self.cg.version == 2:
            _write(os.path.join(self.dir("cpu"), "cpu.max"),
                   f"max {period_us}" if quota_us is None else f"{quota_us} {period_us}")
        else:
            d = self.dir("cpu")
            _write(os.path.join(d, "cpu.cfs_quota_us"), -1)  # period may only change while unlimited
            _write(os.path.join(d, "cpu.cfs_period_us"), period_us)
            if quota_us is not None:
                _write(os.path.join(d, "cpu.cfs_quota_us"), quota_us)

    def set_cpu_weight(self, nice):
        """The group's CPU weight, as the scheduler weighs one task (or one autogroup) of niceness `nice`
        against the other groups and autogroups at its level (v1 cpu.shares, 1024 = nice 0; v2 cpu.weight,
        100 = nice 0)."""
        weight = 1024 * 1.25 ** (-nice)  # the kernel's sched_prio_to_weight table, to within 2 %
        if self.cg.version == 2:
            _write(os.path.join(self.dir("cpu"), "cpu.weight"), max(1, min(10000, round(weight * 100 / 1024))))
        else:
            _write(os.path.join(self.dir("cpu"), "cpu.shares"), max(2, round(weight)))

    def cpu_stat(self):
        """{"nr_periods", "nr_throttled", "throttled_us", "usage_us"} (what the kernel reports)."""
        out = {}
        for line in _read(os.path.join(self.dir("cpu"), "cpu.stat")).splitlines():
            k, _, v = line.partition(" ")
            if v.strip().lstrip("-").isdigit():
                out[k] = int(v)
        if self.cg.version == 2:
            return {"nr_periods": out.get("nr_periods", 0), "nr_throttled": out.get("nr_throttled", 0),
                    "throttled_us": out.get("throttled_usec", 0), "usage_us": out.get("usage_usec", 0)}
        usage = 0
        try:  # v1 keeps usage in cpuacct; a group made in cpu only has none: report 0
            usage = int(_read(os.path.join(self.dir("cpu"), "cpuacct.usage"))) // 1000
        except OSError:
            pass
        return {"nr_periods": out.get("nr_periods", 0), "nr_throttled": out.get("nr_throttled", 0),
                "throttled_us": out.get("throttled_time", 0) // 1000, "usage_us": usage}

    # -- memory ------------------------------------------------------------------------------------------
    def memory_limit_knob(self, limit_bytes):
        """(path, value when limited, value when unlimited): a worker sets or lifts the limit by writing these."""
        return (memory_limit_file(self.dir("memory"), self.cg.version), str(limit_bytes),
                "max" if self.cg.version == 2 else "-1")

    def set_memory_limit(self, limit_bytes):
        """limit_bytes None: unlimited."""
        path, on, off = self.memory_limit_knob(limit_bytes or 0)
        _write(path, off if limit_bytes is None else on)

    def memory_usage(self):
        name = "memory.current" if self.cg.version == 2 else "memory.usage_in_bytes"
        return int(_read(os.path.join(self.dir("memory"), name)))

    def memory_stat(self):
        return read_memory_stat(self.dir("memory"))

    # -- removal -----------------------------------------------------------------------------------------
    def remove(self, kill=True, timeout=5.0):
        """Kill what is left inside (kill=True) or move it to the root group, then rmdir. Returns the
        directories that could not be removed."""
        deadline = time.monotonic() + timeout
        left = []
        for d in self.dirs():
            if not os.path.isdir(d):
                continue
            while True:
                try:
                    pids = [int(x) for x in _read(os.path.join(d, "cgroup.procs")).split()]
                except OSError:
                    pids = []
                for p in pids:
                    try:
                        if kill:
                            os.kill(p, 9)
                        else:
                            _write(os.path.join(os.path.dirname(d), "cgroup.procs"), p)
                    except OSError:
                        pass
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        left.append(d)
                        break
                    time.sleep(0.05)
        return left


class Cgroups:
    """A mounted cgroup hierarchy: version 1 (root holds one directory per controller) or 2 (root is the
    unified hierarchy)."""

    def __init__(self, version, root):
        self.version, self.root = version, root

    @staticmethod
    def detect(base=V1_ROOT, need=("cpu", "memory")):
        if os.path.exists(os.path.join(base, "cgroup.controllers")):
            return Cgroups(2, base)
        unified = os.path.join(base, "unified")
        if os.path.exists(os.path.join(unified, "cgroup.controllers")):
            have = _read(os.path.join(unified, "cgroup.controllers")).split()
            if all(c in have for c in need):
                return Cgroups(2, unified)
        if all(os.path.isdir(os.path.join(base, c)) for c in need):
            return Cgroups(1, base)
        raise RuntimeError(f"no cgroup hierarchy with the {'+'.join(need)} controllers under {base}")

    def describe(self):
        return f"cgroup v{self.version} at {self.root}"

    def create(self, name, controllers):
        if self.version == 2:
            have = _read(os.path.join(self.root, "cgroup.controllers")).split()
            missing = [c for c in controllers if c not in have]
            if missing:
                raise RuntimeError(f"the cgroup v2 root {self.root} lacks the {'+'.join(missing)} controller(s)")
            enabled = _read(os.path.join(self.root, "cgroup.subtree_control")).split()
            for c in controllers:
                if c not in enabled:
                    _write(os.path.join(self.root, "cgroup.subtree_control"), f"+{c}")
            os.mkdir(os.path.join(self.root, name))
        else:
            for c in controllers:
                os.mkdir(os.path.join(self.root, c, name))
        return Group(self, name, controllers)

    def groups_with_prefix(self, prefix):
        """Names of existing groups (any controller) starting with prefix."""
        names = set()
        bases = [self.root] if self.version == 2 else [os.path.join(self.root, c) for c in ("cpu", "memory")]
        for b in bases:
            try:
                names.update(n for n in os.listdir(b) if n.startswith(prefix) and os.path.isdir(os.path.join(b, n)))
            except OSError:
                pass
        return sorted(names)

    def group(self, name):
        """A Group for an existing name, with whichever controllers hold it."""
        if self.version == 2:
            return Group(self, name, ("cpu", "memory"))
        return Group(self, name, [c for c in ("cpu", "memory") if os.path.isdir(os.path.join(self.root, c, name))])
