"""Runs named recorder tests, each in a fresh sticky temporary folder, and prints one line per test and the
closing "N passed, N failed" line. Shared by test_record.py and test_hangs.py. With STRATA_KEEP_FAILED=DIR, a
failed test's folder (its recordings, the agent's flight chunks) is copied to DIR/NAME-TIME for a look afterwards.
"""
import os
import shutil
import tempfile
import time


def run_tests(names, tests, prefix):
    """Calls tests[f"test_{name}"](tmp) for each name; returns the exit code (1 when any failed)."""
    failed = 0
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"{prefix}-{name}-") as tmp:
            os.chmod(tmp, 0o1777)  # writable by the unprivileged tests; sticky, as the recorder requires
            started = time.time()
            try:
                tests[f"test_{name}"](tmp)
                print(f"ok   {name} ({time.time() - started:.1f} s)", flush=True)
            except Exception as e:  # noqa: BLE001 - report every failure and go on
                failed += 1
                print(f"FAIL {name}: {e}", flush=True)
                keep = os.environ.get("STRATA_KEEP_FAILED")
                if keep:
                    dest = os.path.join(keep, f"{name}-{int(started)}")
                    shutil.copytree(tmp, dest, symlinks=True, ignore_dangling_symlinks=True, dirs_exist_ok=True)
                    print(f"     kept in {dest}", flush=True)
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0
