"""Waits for a quiet machine before a lab job: on a 2-core machine a build, a test suite or a stray process
beside a lab job delays its ranks unevenly, and a clean 2-rank job then shows one rank late (CI's reduced suite
on 2026-11-27: the clean hostwork and netns jobs named a rank in runs made beside other work, never when
the machine was idle). Measured from the kernel's CPU accounting only (/proc/stat and each process's
/proc/PID/stat), never from anything strata measures or decides on, so waiting chooses no case by its verdict.

Invariant: wait() returns within max_wait_s plus one sample; it never fails a case, it says why it waited
and, when the machine stayed busy, which processes kept it so (the case's line carries that note).
"""
import os
import time

# The machine is quiet when processes other than the suite used under this share of all CPUs over a sample.
QUIET_MAX_BUSY_SHARE = 0.15
# How long one sample of CPU use lasts, and how long to wait for quiet at most before running anyway.
SAMPLE_S = 1.0
MAX_WAIT_S = 120.0


def _cpu_jiffies():
    """(busy, total) jiffies over all CPUs from /proc/stat's first line."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _process_jiffies():
    """{pid: (name, utime + stime)} of every process that can be read."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        name = raw[raw.find("(") + 1:raw.rfind(")")]
        rest = raw[raw.rfind(")") + 2:].split()
        out[int(pid)] = (name, int(rest[11]) + int(rest[12]))  # fields 14 and 15 of proc(5)
    return out


def sample(seconds=SAMPLE_S, top_n=3):
    """(busy share of all CPUs, [(name, pid, share of one CPU)] of the `top_n` busiest processes using at least
    5 % of a CPU, busiest first; every such process with top_n None) over `seconds`."""
    b0, t0 = _cpu_jiffies()
    p0 = _process_jiffies()
    time.sleep(seconds)
    b1, t1 = _cpu_jiffies()
    p1 = _process_jiffies()
    share = (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0
    hz = os.sysconf("SC_CLK_TCK")
    top = sorted(((name, pid, (j - p0[pid][1]) / hz / seconds) for pid, (name, j) in p1.items() if pid in p0),
                 key=lambda x: -x[2])
    return share, [t for t in (top if top_n is None else top[:top_n]) if t[2] >= 0.05]


def wait(max_wait_s=MAX_WAIT_S):
    """Waits until the machine is quiet (or max_wait_s passed). Returns '' when it was quiet at once, else a
    note saying how long it waited and, if it stayed busy, what kept it busy."""
    start = time.monotonic()
    share, top = sample()
    while share >= QUIET_MAX_BUSY_SHARE and time.monotonic() - start < max_wait_s:
        share, top = sample()
    waited = time.monotonic() - start
    if waited < 2 * SAMPLE_S:
        return ""
    if share < QUIET_MAX_BUSY_SHARE:
        return f"waited {waited:.0f} s for a quiet machine"
    who = ", ".join(f"{name} (pid {pid}) {cpu:.0%} of a CPU" for name, pid, cpu in top) or "no single process"
    return (f"machine busy after {waited:.0f} s of waiting: {share:.0%} of all CPUs in use "
            f"({QUIET_MAX_BUSY_SHARE:.0%} is quiet); busiest: {who}")
