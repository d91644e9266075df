#!/usr/bin/env python3
"""Behaviour tests in the manner of Perfetto's diff tests: each case is a folder under tests/behaviour/
holding a tiny input (a Kineto JSON or an op-table CSV, a few lines) and `case.txt`, which names the command
and the facts its output must show. The whole output is not compared (the goldens do that end to end):
each case asserts one behaviour, so a new output field never breaks it and a broken behaviour always does.

case.txt, one directive a line ('#' starts a comment):
  run: summary|diagnose|export [ARGS...]    the strata subcommand; the case's other files are appended as
                                           inputs (sorted by name); --format json is added unless ARGS
                                           give --format
  expect: POINTER OP VALUE                 POINTER is a JSON pointer into the JSON output ("" = the whole
                                           output; "text" with --format text), OP one of == != >= <= contains
                                           lacks, VALUE a JSON value
  exit: N                                  the expected exit status (default 0)
  stderr: TEXT                             standard error contains TEXT

usage: run_behaviour.py STRATA_BINARY [CASE_DIR...]     (default: every folder beside this script)
Exits 1 naming each failed case and fact; fewer than 8 cases is a failure too (a lost folder is not a pass).
"""
import json
import os
import subprocess
import sys

OPS = ("==", "!=", ">=", "<=", "contains", "lacks")
MIN_CASES = 8


def resolve(doc, pointer):
    if pointer in ("", "/"):
        return doc
    for part in pointer.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, list):
            doc = doc[int(part)]
        elif isinstance(doc, dict):
            doc = doc[part]
        else:
            raise KeyError(part)
    return doc


def check(got, op, want):
    if op == "==":
        return got == want
    if op == "!=":
        return got != want
    if op == ">=":
        return got >= want
    if op == "<=":
        return got <= want
    if op == "contains":
        return want in got
    if op == "lacks":
        return want not in got
    raise ValueError(op)


def parse_case(path):
    spec = {"run": None, "expect": [], "exit": 0, "stderr": []}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            key, _, rest = line.partition(":")
            rest = rest.strip()
            if key == "run":
                spec["run"] = rest.split()
            elif key == "expect":
                parts = rest.split(None, 2)
                if len(parts) == 3 and parts[1] in OPS:
                    pointer, op, value = parts
                elif len(parts) >= 2 and parts[0] in OPS:  # empty pointer: the whole output
                    pointer, op, value = "", parts[0], rest.split(None, 1)[1]
                else:
                    raise ValueError(f"{path}:{n}: expect: POINTER OP VALUE, got {rest!r}")
                spec["expect"].append((n, pointer, op, json.loads(value)))
            elif key == "exit":
                spec["exit"] = int(rest)
            elif key == "stderr":
                spec["stderr"].append(rest)
            else:
                raise ValueError(f"{path}:{n}: unknown directive {key!r}")
    if not spec["run"]:
        raise ValueError(f"{path}: no run: line")
    if not spec["expect"] and not spec["stderr"]:
        raise ValueError(f"{path}: asserts nothing")
    return spec


def run_case(strata, case_dir):
    spec = parse_case(os.path.join(case_dir, "case.txt"))
    inputs = sorted(os.path.join(case_dir, f) for f in os.listdir(case_dir) if f != "case.txt")
    args = list(spec["run"])
    text = "--format" in args and args[args.index("--format") + 1] == "text"
    if "--format" not in args:
        args += ["--format", "json"]
    proc = subprocess.run([strata] + args + inputs, capture_output=True, text=True, timeout=60)
    errors = []
    if proc.returncode != spec["exit"]:
        errors.append(f"exit status {proc.returncode}, expected {spec['exit']}; stderr: {proc.stderr.strip()[:300]}")
    for want in spec["stderr"]:
        if want not in proc.stderr:
            errors.append(f"stderr lacks {want!r}: {proc.stderr.strip()[:300]}")
    if spec["expect"]:
        try:
            doc = proc.stdout if text else json.loads(proc.stdout)
        except json.JSONDecodeError as e:
            return errors + [f"output is not JSON ({e}): {proc.stdout[:200]!r}"]
        for n, pointer, op, want in spec["expect"]:
            try:
                got = doc if text else resolve(doc, pointer)
                ok = check(got, op, want)
            except (KeyError, IndexError, ValueError, TypeError) as e:
                got, ok = f"<no {pointer}: {e!r}>", False
            if not ok:
                shown = json.dumps(got)[:300] if not isinstance(got, str) or not text else got[:300]
                errors.append(f"case.txt:{n}: {pointer or '(output)'} {op} {json.dumps(want)}: got {shown}")
    return errors


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    strata = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    cases = sys.argv[2:] or sorted(
        os.path.join(here, d) for d in os.listdir(here) if os.path.isfile(os.path.join(here, d, "case.txt")))
    failed = 0
    for case in cases:
        try:
            errors = run_case(strata, case)
        except (ValueError, OSError, subprocess.TimeoutExpired) as e:
            errors = [str(e)]
        name = os.path.basename(case.rstrip("/"))
        print(f"{'ok  ' if not errors else 'FAIL'} {name}")
        for e in errors:
            print(f"     {e}")
        failed += bool(errors)
    if len(sys.argv) == 2 and len(cases) < MIN_CASES:
        print(f"only {len(cases)} cases found under {here}: expected at least {MIN_CASES}")
        return 1
    print(f"behaviour: {len(cases) - failed} of {len(cases)} cases pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
