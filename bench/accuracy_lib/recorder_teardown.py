"""Waiting for a `strata record` run's probe teardown to end.

strata record returns when its command does and lets the probes go in a detached process (seconds: each
uprobe waits for the kernel). That process keeps the recording's folder on its command line. Shared by
bench/accuracy and tests/recorder/test_record.py, so one recording's teardown never overlaps the next job.
"""
import os
import time


def recorders_of(folder):
    """The pids of processes whose command line names FOLDER."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if folder.encode() in f.read():
                    pids.append(pid)
        except OSError:
            pass  # gone meanwhile
    return pids


def wait_recorders_gone(folder, seconds):
    """Waits up to SECONDS until no process names FOLDER; returns the pids still there (empty when done)."""
    deadline = time.time() + seconds
    while True:
        left = recorders_of(folder)
        if not left or time.time() >= deadline:
            return left
        time.sleep(0.2)
