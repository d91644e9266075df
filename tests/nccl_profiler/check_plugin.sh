#!/usr/bin/env bash
# The NCCL profiler plugin (libstrata_nccl_profiler.so) without a GPU: strata_nccl_harness loads it as NCCL
# does and drives its callbacks with constructed events (tests/nccl_profiler/drive_plugin.cc). Checks: it
# exports only the versioned tables; v5 device spans of a 4-rank job flow into `strata diagnose`, which names
# the rank whose kernels start late and claims no host cause it never saw; a clean job is healthy; v3 writes
# host-timed collectives; without STRATA_NCCL_PROFILER_DIR it asks for nothing; and under `strata record`
# (which offers the plugin to the command) its segments fold into the recorder's.
# usage: check_plugin.sh STRATA HARNESS PLUGIN      Prints "N passed, N failed" last.
set -u
bin=$(realpath "$1") harness=$(realpath "$2") plugin=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
check() {  # NAME COMMAND...
  local name=$1
  shift
  if "$@" > "$work/out" 2> "$work/err"; then ok "$name"; else bad "$name: $(head -3 "$work/err")"; fi
}
json_check() {  # NAME FILE PYTHON-EXPRESSION-over-d
  if /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then
    ok "$1"
  else
    bad "$1: $(head -c 400 "$2")"
  fi
}
run_ranks() {  # DIR RANKS ARGS...
  local dir=$1 ranks=$2
  shift 2
  mkdir -p "$dir"
  local base
  base=$(date +%s%N)
  for ((r = 0; r < ranks; r++)); do
    HARNESS_BASE_NS=$base STRATA_NCCL_PROFILER_DIR=$dir RANK=$r "$harness" "$plugin" --rank $r --ranks "$ranks" "$@" ||
      return 1
  done
}

exported=$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$exported" = "ncclProfiler_v3 ncclProfiler_v5 " ] && ok "exports only ncclProfiler_v5 and _v3" ||
  bad "exported symbols: $exported"

check "v5: 4 ranks driven, every callback succeeds" run_ranks "$work/v5" 4 --steps 12 --straggler 2 --late-ms 30 --late-from 4
[ "$(ls "$work/v5"/nccl-*.sseg 2> /dev/null | wc -l)" -eq 4 ] && ok "v5: one segment per rank process" ||
  bad "v5: segments: $(ls "$work/v5")"
check "v5: diagnose the plugin's segments alone" "$bin" diagnose --format json -o "$work/v5.json" "$work/v5"
json_check "v5: rank 2 is the straggler" "$work/v5.json" "d['stragglers'][0]['rank'] == 2"
json_check "v5: 30 ms late per late step" "$work/v5.json" \
  "abs(d['findings'][0]['evidence']['late_ms_per_late_step'] - 30) < 1.5"
json_check "v5: no host cause claimed from device times alone" "$work/v5.json" "d['findings'][0]['cause'] == 'unknown'"
json_check "v5: evidence from the plugin" "$work/v5.json" \
  "'NCCL profiler plugin' in d['stragglers'][0]['evidence']['from']"

check "v5 clean: driven" run_ranks "$work/clean" 3 --steps 12
check "v5 clean: diagnose" "$bin" diagnose --format json -o "$work/clean.json" "$work/clean"
json_check "v5 clean: healthy" "$work/clean.json" "d['status'] == 'healthy' and not d['stragglers']"

check "v3: driven" run_ranks "$work/v3" 1 --version 3 --steps 12
check "v3: inspect" sh -c '"$1" inspect --format json "$2"/nccl-*.sseg' sh "$bin" "$work/v3"
json_check "v3: 24 host-timed all_gathers" "$work/out" "d['processes'][0]['calls']['collective_device']['all_gather'] == 24"

mkdir -p "$work/none"
RANK=0 "$harness" "$plugin" --rank 0 --ranks 1 > /dev/null 2>&1
[ $? -eq 3 ] && ok "no STRATA_NCCL_PROFILER_DIR: the plugin asks for no events" || bad "no dir: harness exit $?"

# Under strata record: the plugin is offered to the command, and its segments fold into the recording.
if [ "$(id -u)" -eq 0 ]; then
  base=$(date +%s%N)
  check "record: a 4-rank job under strata record" "$bin" record -q -o "$work/rec" -- sh -c '
    for r in 0 1 2 3; do
      HARNESS_BASE_NS='"$base"' RANK=$r "$1" "$NCCL_PROFILER_PLUGIN" --rank $r --ranks 4 --steps 12 --straggler 1 \
        --late-ms 20 --late-from 3 &
    done
    wait' sh "$harness"
  [ "$(ls "$work/rec"/nccl-*.sseg 2> /dev/null | wc -l)" -eq 4 ] && ok "record: the plugin wrote beside the recording" ||
    bad "record: $(ls "$work/rec")"
  check "record: diagnose the recording and the plugin's segments together" \
    "$bin" diagnose --format json -o "$work/rec.json" "$work/rec"
  json_check "record: rank 1 is the straggler" "$work/rec.json" "d['stragglers'][0]['rank'] == 1"
  json_check "record: one recording (the plugin's folded in)" "$work/rec.json" \
    "sum(1 for i in d['inputs'] if i.get('format') == 'strata-recording') == 1"
else
  bad "record: needs root (strata record)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
