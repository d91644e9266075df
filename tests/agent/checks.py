"""What the agent tests share: their check list (`expect`, printed as ok/FAIL, summed up by `result`), the
requirement check that skips (77) or, under CI=true, fails (1), a free loopback port, a GET on it, one
unlabelled Prometheus sample read from an exposition, and for emulated nodes (network namespaces) a command
run in one, a JSON GET from inside one and the end of every process left in some."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import urllib.request


class Checks:
    """Each expectation is printed as it is checked; result() is the exit code (1 when any failed)."""

    def __init__(self):
        self.failures = []

    def expect(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            self.failures.append(what)

    def result(self):
        print(f"{'FAILED' if self.failures else 'passed'}: {len(self.failures)} failure(s)")
        return 1 if self.failures else 0


def unmet(tools, needs_root=True):
    """None when root, kernel BTF and every tool are here; else the exit code after saying what is missing
    (77: skipped; 1 under CI=true, where a skip fails the run)."""
    skip = 1 if os.environ.get("CI") == "true" else 77
    missing = [t for t in tools if shutil.which(t) is None]
    if needs_root and os.geteuid() != 0:
        missing.append("root")
    if needs_root and not os.path.exists("/sys/kernel/btf/vmlinux"):
        missing.append("kernel BTF")
    if not missing:
        return None
    print(f"{'FAIL' if skip == 1 else 'SKIP'}: missing {', '.join(missing)} (scripts/setup.sh installs the tools)")
    return skip


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    """The body of GET http://127.0.0.1:PORT/PATH (raises OSError when it does not answer)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.read().decode()


def metric(text, name):
    """The value of the unlabelled sample `name` in a Prometheus exposition, or None when it has none."""
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def in_ns(ns, argv):
    return ["ip", "netns", "exec", ns] + argv


def get_json(ns, url):
    """GET `url` from inside the network namespace `ns`, parsed; None when it does not answer."""
    r = subprocess.run(in_ns(ns, ["curl", "-sf", "--max-time", "3", url]), capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 and r.stdout else None


def kill_in_namespaces(namespaces):
    """SIGKILL to every process still in one of `namespaces` (what a killed agent's recorders leave behind)."""
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
