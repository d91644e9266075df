#!/usr/bin/env python3
"""Removes what dead lab runs left behind: network namespaces, cgroups, helper processes and scratch
directories whose names start with strata-lab-<pid>- where <pid> (the launcher) no longer runs.

A launcher undoes its own changes on exit, Ctrl-C, SIGTERM and failure; only a SIGKILLed launcher (or a
crashed machine) leaves things behind. Live runs are never touched.

usage: lab/cleanup.py [--dry-run] [--cgroup-root /sys/fs/cgroup]
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from injectors.base import PREFIX  # noqa: E402

NAME = re.compile(re.escape(PREFIX) + r"(\d+)-")


def run_alive(pid):
    """True when pid is a running lab launcher (a reused pid running something else counts as dead)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"ddp_job.py" in f.read() and pid != os.getpid()
    except OSError:
        return False


def owner(name):
    m = NAME.search(name)
    return int(m.group(1)) if m else None


def netns_names():
    if shutil.which("ip") is None:
        return []
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in r.stdout.splitlines() if line.startswith(PREFIX)]


def cgroup_dirs(root):
    """Lab cgroup directories under a v1 root (one hierarchy per controller) or a v2 root."""
    out = []
    for base in [root] + sorted(glob.glob(os.path.join(root, "*"))):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        out += [os.path.join(base, n) for n in names if n.startswith(PREFIX) and os.path.isdir(os.path.join(base, n))]
    return sorted(set(out))


def marked_processes():
    """(pid, owner) of processes whose command line names a lab run (spinners, traffic blasters, ranks)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        o = owner(cmd)
        if o is not None and "cleanup.py" not in cmd:
            out.append((int(d), o))
    return out


def kill(pid, dry):
    if dry:
        return
    try:
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def remove_cgroup(d, dry):
    try:
        pids = [int(x) for x in open(os.path.join(d, "cgroup.procs")).read().split()]
    except OSError:
        pids = []
    for p in pids:
        kill(p, dry)
    if dry:
        return True
    for _ in range(100):
        try:
            os.rmdir(d)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.05)
    return False


def cleanup(cgroup_root="/sys/fs/cgroup", dry=False, log=print):
    """Removes leftovers of dead runs; returns the number of things it could not remove."""
    failed = 0
    for pid, o in marked_processes():
        if not run_alive(o):
            log(f"kill process {pid} (run {o})")
            kill(pid, dry)
    for ns in netns_names():
        o = owner(ns)
        if o is None or run_alive(o):
            continue
        r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for p in r.stdout.split():
            log(f"kill process {p} in netns {ns}")
            kill(int(p), dry)
        log(f"delete netns {ns}")
        if not dry and subprocess.run(["ip", "netns", "del", ns], capture_output=True).returncode != 0:
            log(f"  could not delete netns {ns}")
            failed += 1
    for d in cgroup_dirs(cgroup_root):
        o = owner(os.path.basename(d))
        if o is None or run_alive(o):
            continue
        log(f"remove cgroup {d}")
        if not remove_cgroup(d, dry):
            log(f"  could not remove {d}")
            failed += 1
    for d in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
        o = owner(os.path.basename(d) + "-")
        if o is not None and not run_alive(o):
            log(f"remove scratch directory {d}")
            if not dry:
                shutil.rmtree(d, ignore_errors=True)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    ap.add_argument("--cgroup-root", default="/sys/fs/cgroup")
    a = ap.parse_args()
    if os.geteuid() != 0 and not a.dry_run:
        print("cleanup.py: needs root to delete namespaces and cgroups (or use --dry-run)", file=sys.stderr)
        return 2
    n = [0]

    def log(msg):
        n[0] += 1
        print(msg)

    failed = cleanup(a.cgroup_root, a.dry_run, log)
    if n[0] == 0:
        print("cleanup.py: nothing left behind by dead lab runs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
