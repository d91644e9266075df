#!/usr/bin/env bash
# The NCCL profiler plugin (libstrata_nccl_profiler.so) without a GPU: strata_nccl_harness loads it as NCCL
# does and drives its callbacks with constructed events (tests/nccl_profiler/drive_plugin.cc). Checks: it
# exports only the versioned tables; v5 device spans of a 4-rank job flow into `strata diagnose`, which names
# the rank whose kernels start late and claims no host cause it never saw; a clean job is healthy; v3 writes
# host-timed collectives; without STRATA_NCCL_PROFILER_DIR it asks for nothing; under `strata record`
# (which offers the plugin to the command) its segments fold into the recorder's; and the in-flight state of
# collectives (communicator records, collective_device_{enqueue,start,done} rows, read back with
# strata_nccl_segment_dump and checked by check_rows.py) of complete runs and of the scenarios hang, mismatch
# and kernel_not_started, whose rank processes are killed hung (their rows must reach the file unprompted).
# usage: check_plugin.sh STRATA HARNESS PLUGIN DUMP      Prints "N passed, N failed" last.
# STRATA_HANG_ANALYSIS=1 also runs diagnose_scenario (strata's hang analysis of the scenarios).
set -u
bin=$(realpath "$1") harness=$(realpath "$2") plugin=$(realpath "$3") dump=$(realpath "$4")
here=$(dirname "$(realpath "$0")")
comm_hash=0xC0FFEE0012345678 # > 2^63: the communicator records must carry it as an unsigned integer
at=3                         # the scenarios' collective #K
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
rows_check() {  # DIR RUN K RANKS HASH: check_rows.py's verdicts on the segments of DIR
  local dir=$1
  shift
  if ! "$dump" "$dir"/nccl-*.sseg > "$work/dump" 2> "$work/err"; then
    bad "$2: read the segments: $(head -3 "$work/err")"
    return
  fi
  while IFS= read -r line; do
    case $line in
      "ok   "*) ok "${line#ok   }" ;;
      *) bad "${line#FAIL }" ;;
    esac
  done < <(/usr/bin/python3 "$here/check_rows.py" "$work/dump" "$@")
}
run_scenario() {  # DIR RANKS SCENARIO: one process per rank at once; each must end killed (SIGKILL), hung
  local dir=$1 ranks=$2 scenario=$3 pids=() r status
  mkdir -p "$dir"
  for ((r = 0; r < ranks; r++)); do
    RANK=$r WORLD_SIZE=$ranks STRATA_NCCL_PROFILER_DIR=$dir "$harness" "$plugin" --rank $r --ranks "$ranks" \
      --scenario "$scenario" --at $at --comm-hash $comm_hash --hold-ms 7500 2> "$dir.err.$r" &
    pids+=($!)
  done
  for ((r = 0; r < ranks; r++)); do
    wait "${pids[$r]}"
    status=$?
    if [ $status -ne 137 ]; then
      echo "rank $r: exit $status: $(head -3 "$dir.err.$r")" >&2
      return 1
    fi
  done
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

rows_check "$work/v5" v5 24 4 42

check "v5 clean: driven" run_ranks "$work/clean" 3 --steps 12
check "v5 clean: diagnose" "$bin" diagnose --format json -o "$work/clean.json" "$work/clean"
json_check "v5 clean: healthy" "$work/clean.json" "d['status'] == 'healthy' and not d['stragglers']"

check "v3: driven" run_ranks "$work/v3" 1 --version 3 --steps 12
check "v3: inspect" sh -c '"$1" inspect --format json "$2"/nccl-*.sseg' sh "$bin" "$work/v3"
json_check "v3: 24 host-timed all_gathers" "$work/out" "d['processes'][0]['calls']['collective_device']['all_gather'] == 24"
rows_check "$work/v3" v3 24 1 42

# Hangs and mismatches: collectives #0..#K-1 complete everywhere, then each rank process stops at #K (holding
# 7.5 s without a callback, then SIGKILL): the rows in the files are what the flush thread wrote by itself.
check "hang: 4 ranks, rank 2 never enqueues #$at, killed hung" run_scenario "$work/hang" 4 hang
rows_check "$work/hang" hang $at 4 $comm_hash
check "mismatch: 3 ranks, rank 2 enqueues #$at with count 512, killed hung" run_scenario "$work/mismatch" 3 mismatch
rows_check "$work/mismatch" mismatch $at 3 $comm_hash
check "kernel_not_started: 3 ranks, rank 1's kernel of #$at never starts, killed hung" \
  run_scenario "$work/kernel_not_started" 3 kernel_not_started
rows_check "$work/kernel_not_started" kernel_not_started $at 3 $comm_hash

# ==== HANG ANALYSIS (strata diagnose over the scenarios above) ============================================
# diagnose_scenario DIR EXPECT_CAUSE EXPECT_RANK [STATE]: `strata diagnose --format json DIR` must name
# EXPECT_CAUSE at rank EXPECT_RANK, collective #$at of communicator $comm_hash, first among the findings
# (and, for a hang, the missing rank's state starting with STATE).
diagnose_scenario() {
  local dir=$1 cause=$2 rank=$3 state=${4:-} name
  name=$(basename "$dir")
  check "$name: diagnose" "$bin" diagnose --format json -o "$dir.json" "$dir"
  json_check "$name: first finding $cause at rank $rank, seq $at" "$dir.json" \
    "d['findings'][0]['cause'] == '$cause' and d['findings'][0]['rank'] == $rank
     and d['findings'][0]['evidence']['seq'] == $at"
  json_check "$name: communicator is NCCL's commHash" "$dir.json" \
    "int(d['findings'][0]['evidence']['communicator'], 16) == $comm_hash"
  if [ -n "$state" ]; then
    json_check "$name: rank $rank's state: $state" "$dir.json" \
      "d['findings'][0]['evidence']['missing'][0]['state'].startswith('$state')"
  fi
}
diagnose_scenario "$work/hang" hang 2
diagnose_scenario "$work/mismatch" collective_mismatch 2
json_check "mismatch: each side's count" "$work/mismatch.json" \
  "sorted((c['count'], c['ranks']) for c in d['findings'][0]['evidence']['calls']) == [(512, [2]), (1024, [0, 1])]"
diagnose_scenario "$work/kernel_not_started" hang 1 "kernel not started"
# ==== end of HANG ANALYSIS =================================================================================

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
