#!/usr/bin/env bash
# Validates `strata diagnose --format json` against ../shared/spec/diagnosis.schema.json (JSON Schema
# Draft 2020-12, with /usr/bin/python3 and Debian's python3-jsonschema) on several inputs: the bundled DDP
# example, the shared op-table jobs (AR, ST, SE), the shared two-rank NCCL trace, and jobs constructed here
# (a clean two-rank DDP trace, a single-rank trace without collectives, a job without ProfilerStep, Flight
# Recorder dumps of tests/flight_recorder/make_dumps.py).
# Exit 77 (skipped) when ../shared is absent. Prints "N passed, N failed" last.
# usage: check_diagnosis_schema.sh STRATA_BINARY
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 STRATA_BINARY" >&2
  exit 2
fi
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
schema=../shared/spec/diagnosis.schema.json
if [ ! -f "$schema" ]; then
  echo "diagnosis schema: SKIPPED: $schema is absent (clone the project with shared/ beside it)"
  # A skip is not a pass: under CI=true it fails the run.
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'from jsonschema import Draft202012Validator' 2>/dev/null; then
  echo "diagnosis schema: FAIL: $py cannot import jsonschema.Draft202012Validator (install python3-jsonschema: scripts/setup.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Constructed jobs. clean: 2 ranks x 5 steps, equal compute, a blocking gloo:all_reduce per step.
# single: one rank, no collectives. nosteps: 2 ranks, collectives but no ProfilerStep (period detection).
"$py" - "$work" <<'PYEOF'
import json, os, sys
out = sys.argv[1]

def ev(name, cat, ts_us, dur_us, tid=1, pid=100):
    return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts_us, "dur": dur_us, "args": {}}

def job(path, ranks, steps, collectives=True, profiler_steps=True):
    os.makedirs(path, exist_ok=True)
    for r in range(ranks):
        events, t = [], 5_000_000_000.0 + 1234.5 * r  # per-rank clock offset
        for s in range(steps):
            start = t
            events.append(ev("aten::mm", "cpu_op", t, 40_000.0 + 10 * ((r + s) % 3)))
            t = start + 40_030.0
            if collectives:
                events.append(ev("gloo:all_reduce", "cpu_op", t - 30 + 10 * ((r + s) % 3), 10_000.0, tid=2))
                t += 10_000.0
            events.append(ev("Optimizer.step#SGD.step", "cpu_op", t, 5_000.0))
            t += 5_000.0
            if profiler_steps:
                events.append(ev("ProfilerStep#%d" % (s + 1), "user_annotation", start, t - start))
            t += 100.0
        doc = {"schemaVersion": 1, "distributedInfo": {"backend": "gloo", "rank": r, "world_size": ranks},
               "traceEvents": events}
        with open(os.path.join(path, "rank-%d.json" % r), "w") as f:
            json.dump(doc, f)

job(os.path.join(out, "clean"), 2, 5)
job(os.path.join(out, "single"), 1, 3, collectives=False)
job(os.path.join(out, "nosteps"), 2, 4, profiler_steps=False)
PYEOF

cat > "$work/validate.py" <<'PYEOF'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
doc = json.load(open(sys.argv[2]))
errors = sorted(Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
for e in errors[:20]:
    print("  at /%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message[:300]))
sys.exit(1 if errors else 0)
PYEOF

# PyTorch Flight Recorder dumps (docs/flight-recorder.md): a hang, a rank without a dump, a size mismatch, and
# rings that cannot be judged (inconclusive).
for fr in hang missing_dump size_mismatch ring_unknown; do
  "$py" tests/flight_recorder/make_dumps.py "$fr" "$work/fr_$fr" || exit 1
done

cases=(
  "ddp-example|examples/ddp-2rank-slow-compute"
  "flight-recorder-hang|$work/fr_hang"
  "flight-recorder-missing-dump|$work/fr_missing_dump"
  "flight-recorder-size-mismatch|$work/fr_size_mismatch"
  "flight-recorder-inconclusive|$work/fr_ring_unknown"
  "whatif-AR|../shared/datasets/straggler-whatif/trace-AR.csv.gz"
  "whatif-ST|../shared/datasets/straggler-whatif/trace-ST.csv.gz"
  "whatif-SE|../shared/datasets/straggler-whatif/trace-SE.csv.gz"
  "hta-trace-filter|../shared/datasets/hta/trace_filter"
  "constructed-clean|$work/clean"
  "constructed-single-rank|$work/single"
  "constructed-no-profiler-steps|$work/nosteps"
)
passed=0
failed=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  input=${c#*|}
  if [ ! -e "$input" ]; then
    echo "FAIL $name: input $input is missing"
    failed=$((failed + 1))
    continue
  fi
  if ! "$bin" diagnose --format json "$input" > "$work/$name.json" 2> "$work/$name.err"; then
    echo "FAIL $name: strata diagnose exited non-zero: $(head -5 "$work/$name.err")"
    failed=$((failed + 1))
    continue
  fi
  if ! "$py" "$work/validate.py" "$schema" "$work/$name.json" > "$work/$name.val" 2>&1; then
    echo "FAIL $name: output does not validate against $schema:"
    cat "$work/$name.val"
    failed=$((failed + 1))
    continue
  fi
  echo "ok   $name"
  passed=$((passed + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
