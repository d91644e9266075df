#!/bin/sh
# Generates one small synthetic job per fault class (plus clean runs) with `strata synth` and scores
# `strata diagnose` on them against their truth.json with check_truth.py.
# usage: run_synth_truth.sh STRATA_BINARY
set -eu
strata="$1"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/tmp}/strata_synth_truth_XXXXXX")"
trap 'rm -rf "$dir"' EXIT INT TERM
gen() {  # NAME STEPS SYNTH-ARGS...
  name="$1"
  steps="$2"
  shift 2
  if ! "$strata" synth -o "$dir/$name" --no-progress --steps "$steps" --seed 7 "$@" 2>"$dir/synth.err"; then
    echo "FAIL $name: strata synth $*: $(cat "$dir/synth.err")"
    exit 1
  fi
}
gen clean-dp4 4 --ranks 4
gen clean-pp2-tp2 4 --ranks 8 --pp 2 --tp 2 --counters
gen slow-compute-dp4 4 --ranks 4 --fault slow_compute --fault-rank 2
gen slow-compute-every3 6 --ranks 8 --pp 2 --tp 2 --fault slow_compute --fault-rank 2 --every 3
gen thermal-throttling 4 --ranks 8 --pp 2 --tp 2 --counters --fault thermal_throttling --fault-rank 5
# A 6 % clock deficit that accounts for the rank's device slowdown (thresholds.h kSmClockMinDeficit), and a
# slow kernel beside normal clocks, which stays slow_compute.
gen thermal-throttling-mild 4 --ranks 8 --counters --fault thermal_throttling --fault-rank 0 --magnitude 0.06
gen thermal-throttling-mild-pp 4 --ranks 8 --pp 2 --counters --fault thermal_throttling --fault-rank 5 --magnitude 0.06
gen slow-compute-counters 4 --ranks 8 --counters --fault slow_compute --fault-rank 3 --magnitude 0.06
gen pcie-pressure 4 --ranks 8 --tp 2 --counters --fault pcie_pressure --fault-rank 3
gen launch-overhead 4 --ranks 8 --pp 2 --tp 2 --fault launch_overhead --fault-rank 6
gen dataloader-stall-dp4 4 --ranks 4 --fault dataloader_stall --fault-rank 0
gen gc-pause 4 --ranks 8 --pp 2 --tp 2 --fault gc_pause --fault-rank 1
gen slow-communication 4 --ranks 8 --pp 2 --tp 2 --fault slow_communication --fault-rank 4
gen network-contention 4 --ranks 16 --dp 2 --pp 4 --tp 2 --counters --fault network_contention --fault-rank 9
gen stage-imbalance 4 --ranks 8 --pp 2 --tp 2 --fault stage_imbalance --fault-stage 0
gen data-imbalance 6 --ranks 8 --tp 2 --fault data_imbalance
rm -f "$dir/synth.err"
python3 "$here/check_truth.py" "$strata" "$dir"/*/
