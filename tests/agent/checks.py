"""What the agent tests share: their check list (`expect`, printed as ok/FAIL, summed up by `result`), the
requirement check that skips (77) or, under CI=true, fails (1), a free loopback port, and a GET on it."""
import os
import shutil
import socket
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
