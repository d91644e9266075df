"""Runs named recorder tests, each in a fresh sticky temporary folder, and prints one line per test and the
closing "N passed, N failed" line. Shared by test_record.py and test_hangs.py. With STRATA_KEEP_FAILED=DIR, a
failed test's folder (its recordings, the agent's flight chunks) is copied to DIR/NAME-TIME for a look afterwards.
With jobs > 1, up to that many tests run at once in threads (each in its own folder, with its own job and
recorder: the tests share no state but the read-only globals of their module); the tests named in `alone` run
afterwards, one at a time (those that time what they measure, such as a live detection's latency).
"""
import concurrent.futures
import os
import shutil
import tempfile
import time


def run_one(name, tests, prefix):
    """Runs tests[f"test_{name}"] in a fresh folder; prints its line; returns True when it passed."""
    with tempfile.TemporaryDirectory(prefix=f"{prefix}-{name}-") as tmp:
        os.chmod(tmp, 0o1777)  # writable by the unprivileged tests; sticky, as the recorder requires
        started = time.time()
        try:
            tests[f"test_{name}"](tmp)
            print(f"ok   {name} ({time.time() - started:.1f} s)", flush=True)
            return True
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            print(f"FAIL {name}: {e}", flush=True)
            keep = os.environ.get("STRATA_KEEP_FAILED")
            if keep:
                dest = os.path.join(keep, f"{name}-{int(started)}")
                shutil.copytree(tmp, dest, symlinks=True, ignore_dangling_symlinks=True, dirs_exist_ok=True)
                print(f"     kept in {dest}", flush=True)
            return False


def run_tests(names, tests, prefix, jobs=1, alone=()):
    """Calls tests[f"test_{name}"](tmp) for each name; returns the exit code (1 when any failed)."""
    together = [n for n in names if n not in alone]
    apart = [n for n in names if n in alone]
    passed = 0
    if jobs > 1 and len(together) > 1:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            passed += sum(pool.map(lambda n: run_one(n, tests, prefix), together))
    else:
        passed += sum(run_one(n, tests, prefix) for n in together)
    passed += sum(run_one(n, tests, prefix) for n in apart)
    failed = len(names) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
