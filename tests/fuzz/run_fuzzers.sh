#!/usr/bin/env bash
# Runs every libFuzzer target of a STRATA_FUZZ build for SECONDS each (default 20) over a scratch copy of
# its seed corpus, and fails if any target crashes, leaks, hits a sanitizer report or breaks an invariant.
# Usage: tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS]
#   BUILD_DIR: configured with CC=clang CXX=clang++ cmake -DSTRATA_FUZZ=ON and fuzz_* built in it.
# Crash reproducers are kept in BUILD_DIR/fuzz-artifacts/. STRATA_FUZZ_JOBS (default 2) fuzzers run at a time.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [SECONDS]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
seconds=${2:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
artifacts="$build_dir/fuzz-artifacts"
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/strata-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# Two fuzzers at a time (CI's machine has two cores; each libFuzzer process uses one), each for SECONDS.
jobs=${STRATA_FUZZ_JOBS:-2}

fuzz_one() {  # fuzz_one TARGET: runs it, prints its stats or its log's tail; exit status 1 on a finding
  local target=$1 bin="$build_dir/fuzz_$1" corpus="$scratch/$1" log="$scratch/$1.log" dict=()
  [[ -f "$here/$target.dict" ]] && dict=(-dict="$here/$target.dict")
  # -rss_limit_mb guards against runaway memory; -timeout flags an input taking over 10 s as a hang.
  if "$bin" "$corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$artifacts/${target}-" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$log" | sed "s/^/  fuzz_$target: /" || true
  else
    { echo "run_fuzzers: fuzz_$target FAILED; last lines of its log:"; tail -n 40 "$log"
      echo "run_fuzzers: reproducers in $artifacts"; } >&2
    return 1
  fi
}

# The targets, as CMakeLists.txt names them (STRATA_FUZZ_TARGETS, written to BUILD_DIR/fuzz_targets.txt).
[[ -s "$build_dir/fuzz_targets.txt" ]] || { echo "run_fuzzers: $build_dir/fuzz_targets.txt not found (configure $build_dir with -DSTRATA_FUZZ=ON)" >&2; exit 2; }
mapfile -t targets < "$build_dir/fuzz_targets.txt"
for target in "${targets[@]}"; do
  if [[ ! -x "$build_dir/fuzz_$target" ]]; then
    echo "run_fuzzers: $build_dir/fuzz_$target not found (build it with ninja -C $build_dir fuzz_$target)" >&2
    exit 2
  fi
  mkdir -p "$scratch/$target"
  cp "$here/corpus/$target/"* "$scratch/$target/"
done

status=0
running=0
for target in "${targets[@]}"; do
  if (( running >= jobs )); then
    wait -n || status=1
    running=$((running - 1))
  fi
  echo "run_fuzzers: fuzz_$target for ${seconds}s"
  fuzz_one "$target" &
  running=$((running + 1))
done
while (( running > 0 )); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
