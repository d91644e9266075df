"""What every lab injector shares: the run's context, an undo stack, helper processes, and the protocol
between the launcher (which sets a fault up and tears it down) and the fault rank (which switches it on and
off at step boundaries).

An injector's life: setup() makes its machine changes, each registered on the run's undo stack at once
(so a failure half-way is undone too); the launcher asks it for each rank's command prefix (e.g. `ip netns
exec NS`) and environment, calls after_spawn(rank, pid) once a rank runs (e.g. to move it into a cgroup),
and hands the fault rank its toggle(): the actions that switch the fault on and off. The rank runs them at
step boundaries: off in the first unrecorded steps (the baseline it is measured against), on from the last
unrecorded steps, and in the recorded steps on in the affected ones only (every step, or every K-th for an
intermittent fault). measure() turns the ranks' per-step timings into the truth's measured effect. teardown
is the undo stack, run by the launcher on exit, Ctrl-C, SIGTERM or failure.

Actions (JSON lists, run by the rank): ["signal", pid, signum], ["write", path, text], ["run", argv],
["pipe", fifo, line] (a line to a command reader started with start_command_pipe: no process is started
inside the rank's step).
"""
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

PREFIX = "strata-lab-"  # every name the lab gives to namespaces, cgroups and helper processes starts with this
BASELINE_ITERS = (1, 2)  # unrecorded iterations with the fault off: the baseline (iteration 0 rebuilds buckets)
FAULT_ON_FROM_ITER = 3  # unrecorded iterations from here on run with the fault on (it settles before recording)


def outside_fault_on_unrecorded(it, unrecorded, intermittent):
    """Whether an outside fault runs in unrecorded iteration `it` of `unrecorded`: from FAULT_ON_FROM_ITER on, so
    that it has settled before recording. An intermittent fault stops one iteration before the recording starts,
    so that its first recorded step, which it spares, does not begin in its after-effect: on in the last
    unrecorded iteration, 4 2-rank intermittent CPU and network contention cases of two held-out runs (seeds
    21200+, 21400+) had their fault rank named late in that first step, which the truth counted as spared."""
    return FAULT_ON_FROM_ITER <= it < unrecorded - (1 if intermittent else 0)


def run_prefix(pid=None):
    return f"{PREFIX}{os.getpid() if pid is None else pid}"


class Undo:
    """A LIFO stack of (description, callable). run() calls them all, newest first, even when some fail, and
    returns the descriptions of those that failed."""

    def __init__(self):
        self.items = []

    def push(self, what, fn):
        self.items.append((what, fn))

    def run(self):
        failed = []
        while self.items:
            what, fn = self.items.pop()
            try:
                fn()
            except Exception as e:  # keep undoing the rest
                failed.append(f"{what}: {e}")
        return failed


def sh(argv, check=True, quiet=False):
    """Runs a command; raises with its stderr on failure (check)."""
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"`{' '.join(map(str, argv))}` failed: {r.stderr.strip() or r.stdout.strip()}")
    return r


def die_with_parent():
    """Runs in a child before exec: SIGKILL it if the launcher dies, so nothing is left behind."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def start_helper(ctx, argv, name, new_session=True):
    """Starts a helper process (spinner, traffic blaster) that dies with the launcher and is stopped by the
    undo stack. argv should carry the run's prefix somewhere (lab/cleanup.py finds leftovers by it)."""
    log = open(os.path.join(ctx.work, f"{name}.log"), "wb")
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         preexec_fn=die_with_parent, start_new_session=new_session)
    log.close()

    def stop():
        if p.poll() is None:
            try:
                os.kill(p.pid, signal.SIGCONT)  # a stopped process would not act on SIGTERM until continued
            except OSError:
                pass
            p.terminate()
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    ctx.undo.push(f"stop {name} (pid {p.pid})", stop)
    return p


def start_command_pipe(ctx, argv, name):
    """Starts `argv + [FIFO]`, a reader of one command per line (e.g. `tc -force -batch FIFO`), and returns the
    FIFO for ["pipe", FIFO, line] actions. A fault rank that ran `tc` at a step boundary spent 10-17 ms of that
    step starting processes: a lateness of the injector's own that strata rightly saw in the recording (the
    toggle steps). The launcher holds the FIFO open for reading and writing for the whole run, so the reader
    never sees an end of file between the rank's lines and a rank's write never blocks; the undo stack closes
    it and stops the reader."""
    fifo = os.path.join(ctx.work, f"{name}.fifo")
    os.mkfifo(fifo, 0o600)
    held = os.open(fifo, os.O_RDWR)  # Linux: opens at once, and the reader's open does not wait for a writer
    ctx.undo.push(f"close {fifo}", lambda: os.close(held))
    p = start_helper(ctx, list(argv) + [fifo], name)
    time.sleep(0.2)
    if p.poll() is not None:
        with open(os.path.join(ctx.work, f"{name}.log")) as f:
            raise RuntimeError(f"`{' '.join(argv)}` exited at once: {f.read().strip()}")
    return fifo


def send_line(fifo, line):
    """The rank's side of a ["pipe", fifo, line] action: one write of a line (atomic under PIPE_BUF) that
    never blocks (the launcher holds the FIFO open for reading)."""
    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


class Context:
    """What the launcher knows about the run: arguments, prefix, cores, a scratch directory, the undo stack."""

    def __init__(self, args, work, cores, isolate=None):
        self.args, self.work, self.cores, self.isolate = args, work, cores, isolate
        self.prefix = run_prefix()
        self.undo = Undo()
        self.python = args.python if os.path.exists(args.python) else sys.executable
        self.helper_python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

    def core_of(self, rank):
        """A pinned rank's core: (rank + core shift) modulo the cores; with `isolate` (a rank) and two or more
        cores, that rank alone on the (isolate + shift)-th and the others over the rest."""
        shift = getattr(self.args, "core_shift", 0) or 0
        if self.isolate is None or len(self.cores) < 2:
            return self.cores[(rank + shift) % len(self.cores)]
        own = self.cores[(self.isolate + shift) % len(self.cores)]
        if rank == self.isolate:
            return own
        rest = [c for c in self.cores if c != own]
        return rest[(rank + shift) % len(rest)]


class Injector:
    """A fault injected from outside the rank's code. Subclasses set cause and needs_root."""

    cause = "none"
    needs_root = True

    def __init__(self, ctx):
        self.ctx, self.a = ctx, ctx.args
        self.facts = {}  # what was set up, for the truth's mechanism

    def setup(self):
        pass

    def rank_prefix(self, rank):
        return []

    def rank_env(self, rank):
        return {}

    def after_spawn(self, rank, pid):
        pass

    def toggle(self):
        """{"on": [actions], "off": [actions]} for the fault rank, or None (always on once set up)."""
        return None

    def mechanism(self):
        return self.cause

    def affected_ranks(self):
        """The ranks the fault reaches: the fault rank, unless the mechanism is shared (e.g. a core)."""
        return [self.a.fault_rank]

    def took(self, stats):
        """Whether the fault took, as the injector's side sees it: {"measure": what, "per_step": value per
        affected step, "unit": ..., and where the measure has one per step, "by_step": {step: value}}, from a
        quantity strata neither measures nor decides on (the kernel's counters for the rank, the cgroup's, the
        link's transfer time on the ranks' own clocks)."""
        return None

    def measure(self, stats):
        """Measured effect on the fault rank: dict merged into the truth (injected_ms, injected_ms_by_step,
        and whatever else says what happened)."""
        return lateness_effect(stats, self.a.fault_rank)


# ----------------------------------------------------------------------------------------------------------
# measuring what an outside fault did, from every rank's per-step timestamps (one machine: one clock)
# ----------------------------------------------------------------------------------------------------------
def _by_iter(stats):
    return [{s["iter"]: s for s in st["steps"]} for st in stats]


def device_ms_per_step(a):
    """The emulated device time of one step (forward, backward as twice the forward: 3 x layers x --layer-ms);
    every fault's --magnitude is a share of it."""
    return a.layers * 3 * a.layer_ms


def lateness_ms(stats, fault_rank, it):
    """How much later the fault rank reached the gradient all_reduce (its last gradient computed) than the
    median of its peers in iteration it. All ranks run on this machine: their monotonic clocks agree."""
    per = _by_iter(stats)
    mine = per[fault_rank][it]["t_ready"]
    peers = [p[it]["t_ready"] for r, p in enumerate(per) if r != fault_rank]
    return (mine - statistics.median(peers)) * 1e3


def comm_ms(stats, it):
    """Time the gradient all_reduce took after the last rank arrived (transfer, no waiting)."""
    per = _by_iter(stats)
    last = max(p[it]["t_ready"] for p in per)
    return statistics.median(p[it]["t_bwd"] - last for p in per) * 1e3


def step_ms(stats, it):
    return statistics.median(p[it]["wall_ms"] for p in _by_iter(stats))


def _effect(stats, fault_rank, metric, what):
    steps = stats[fault_rank]["steps"]
    base = [metric(s["iter"]) for s in steps if s["iter"] in BASELINE_ITERS]
    hit = [(s["step"], metric(s["iter"])) for s in steps if s["recorded"] and s["affected"]]
    calm = [metric(s["iter"]) for s in steps if s["recorded"] and not s["affected"]]
    b = statistics.median(base) if base else 0.0
    out = {
        "injected_ms": round(statistics.median(v for _, v in hit) - b, 3) if hit else 0.0,
        "injected_ms_by_step": {str(k): round(v - b, 3) for k, v in hit},
        "effect_metric": what,
        "effect_on_ms": round(statistics.median(v for _, v in hit), 3) if hit else 0.0,  # not less the baseline
        "baseline_ms": round(b, 3),
        "baseline_by_iter_ms": [round(x, 3) for x in base],
    }
    if calm:
        out["unaffected_steps_ms"] = round(statistics.median(calm), 3)
    hit_steps = [s["iter"] for s in steps if s["recorded"] and s["affected"]]
    if hit_steps:
        out["step_ms"] = {"fault_off": round(statistics.median(step_ms(stats, i) for i in BASELINE_ITERS), 3),
                          "fault_on": round(statistics.median(step_ms(stats, i) for i in hit_steps), 3)}
    return out


def _kernel_deltas(stats, fault_rank, key):
    """[(ProfilerStep number, the rank's kernel counter `key` in that affected recorded step less its median over
    the baseline iterations)], unrounded: what kernel_effect and kernel_effect_by_step report."""
    steps = stats[fault_rank]["steps"]
    base = [s.get(key, 0) for s in steps if s["iter"] in BASELINE_ITERS]
    b = statistics.median(base) if base else 0.0
    return [(s["step"], s.get(key, 0) - b) for s in steps if s["recorded"] and s["affected"]]


def kernel_effect_by_step(stats, fault_rank, key):
    """{"<ProfilerStep number>": the rank's kernel counter `key` in that affected recorded step, minus its median
    over the baseline iterations}: whether the fault took in each of its steps, by the injector's measure."""
    return {str(step): round(v, 3) for step, v in _kernel_deltas(stats, fault_rank, key)}


def kernel_effect(stats, fault_rank, key):
    """The median of the rank's per-step measure `key` (the kernel's rq_wait_ms, majflt; the table reads' table_ms:
    lab/ddp_job.py) over its affected recorded steps, minus its median over the baseline iterations (fault off)."""
    deltas = [v for _, v in _kernel_deltas(stats, fault_rank, key)]
    return round(statistics.median(deltas), 3) if deltas else 0.0


def fault_on_steps(stats, fault_rank):
    """How many iterations ran with an outside fault switched on (the tuning ones and the affected recorded): the
    job marks every iteration it ran the fault in as affected, recorded or not."""
    return sum(1 for s in stats[fault_rank]["steps"] if s["affected"])


def lateness_effect(stats, fault_rank):
    return _effect(stats, fault_rank, lambda it: lateness_ms(stats, fault_rank, it),
                   "lateness of the fault rank at the gradient all_reduce vs its peers' median, "
                   "minus the same with the fault off (unrecorded iterations 1-2)")


def comm_effect(stats, fault_rank):
    return _effect(stats, fault_rank, lambda it: comm_ms(stats, it),
                   "gradient all_reduce time after the last rank arrived, minus the same with the fault off "
                   "(unrecorded iterations 1-2)")


def need_root(what):
    if os.geteuid() != 0:
        raise PermissionError(f"{what} needs root (network namespaces, cgroups, tc): run the lab as root, "
                              f"e.g. `sudo {sys.executable} {' '.join(sys.argv)}`")


def which(tool):
    if shutil.which(tool) is None:
        raise RuntimeError(f"`{tool}` is missing: run scripts/setup.sh (Debian: iproute2 / procps)")


def wait_until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)
