#!/usr/bin/env python3
"""Every Python benchmark in bench/ answers --help with its usage and exit 0 (bench/accuracy's --help once died
in argparse on a '%' in a help text, 2026-11-28): what a user types first must work."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
failed = 0
scripts = []
for name in sorted(os.listdir(BENCH)):
    path = os.path.join(BENCH, name)
    if os.path.isfile(path):
        with open(path, "rb") as f:
            if b"python" in f.readline():
                scripts.append(path)
if len(scripts) < 3:  # accuracy, record_overhead, perfetto_proto_size at least
    print(f"FAIL: found only {scripts} in {BENCH}")
    sys.exit(1)
for path in scripts:
    out = subprocess.run(["/usr/bin/python3", path, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0 or "usage" not in out.stdout.lower() or "Traceback" in out.stderr:
        failed += 1
        print(f"FAIL: {os.path.basename(path)} --help exited {out.returncode}: {out.stderr.strip()[-300:]}")
    else:
        print(f"ok   {os.path.basename(path)} --help")
sys.exit(1 if failed else 0)
