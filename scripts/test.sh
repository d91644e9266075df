#!/usr/bin/env bash
# Runs every test: installs dependencies, checks formatting, builds Release and runs the unit and golden
# tests (ctest), rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer and runs them again, then
# runs each fuzzer briefly. Exits non-zero on the first failure. With CI=true (set by .ci/run) a skipped test
# fails the run.
# usage: scripts/test.sh [--quick]   (--quick: Release tests only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=${1:-}
# Each phase's wall time, printed at the end (also when a phase fails): CI's budget is 45 minutes of its 90.
phases=()
phase_start=$SECONDS
run_started=$SECONDS
phase() {  # phase "NAME": ends the running phase, starts NAME
  if [ -n "${phase_name:-}" ]; then phases+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase_name")"); fi
  phase_name=$1
  phase_start=$SECONDS
  [ -z "$phase_name" ] || echo "== $phase_name"
}
print_times() {
  local status=$?
  phase ""
  echo "== time per phase"
  printf '  %s\n' "${phases[@]}"
  printf '  %5d s  total (%s)\n' $((SECONDS - run_started)) "$([ $status -eq 0 ] && echo passed || echo "failed, exit $status")"
}
trap print_times EXIT

phase "setup (Debian packages)"
bash "$root/scripts/setup.sh"

phase "format check (clang-format)"
cd "$root"
mapfile -t sources < <(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 2>/dev/null || true)
if [ ${#sources[@]} -gt 0 ]; then
  clang-format --dry-run -Werror "${sources[@]}"
fi

phase "Release build"
# The tests and the Python module are asked for by name: the quick start configures the same folder without them.
# Unity batches as the quick start builds them (CMakeLists.txt, STRATA_UNITY): the tests below run the binary the
# quick start gives, and its objects are reused.
bash "$root/scripts/build.sh" "$root/build" Release -DSTRATA_BUILD_TESTS=ON -DSTRATA_PYTHON=ON -DSTRATA_UNITY=ON
phase "Release tests (ctest)"
# Tests labelled `long` repeat, at length, what a shorter test checks: benchmarks (docs/benchmarks.md), not CI's.
(cd "$root/build" && ctest --output-on-failure -j2 --label-exclude long)

phase "accuracy (reduced suite: lab DDP jobs and strata synth jobs against their injected faults)"
/usr/bin/python3 "$root/bench/accuracy" --strata "$root/build/strata" --with-recorder

if [ "$quick" = "--quick" ]; then exit 0; fi

phase "ASan + UBSan build"
# Unity batches here too (the sanitizers' cost is per instruction, not per translation unit): a third of the
# compile. The fuzzer build below compiles the library one file at a time, so a missing include still fails CI.
# Under g++ (the sanitizers' pass has run under g++ since it began; the Release build and the quick start use clang,
# the fuzzers clang's libFuzzer): two compilers' warnings and instrumentation over the same code.
CC=gcc CXX=g++ bash "$root/scripts/build.sh" "$root/build-asan" Debug -DSTRATA_SANITIZE=ON -DSTRATA_UNITY=ON
phase "ASan + UBSan tests (ctest)"
# Tests labelled `source` (CMakeLists.txt) run no compiled code: the Release pass ran them. Those labelled
# `cluster` (a Redis Cluster of real servers and real jobs, ~50 s each) run the code that the sanitized unit
# tests RedisClusterServer.* run against real clusters too: the Release pass runs them end to end.
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j2 --label-exclude 'source|cluster|long')

if [ -x "$root/tests/fuzz/run_fuzzers.sh" ]; then
  phase "fuzzer build (clang, libFuzzer)"
  CC=clang CXX=clang++ STRATA_TARGETS=fuzzers \
    bash "$root/scripts/build.sh" "$root/build-fuzz" RelWithDebInfo -DSTRATA_FUZZ=ON
  phase "fuzzers (libFuzzer, brief)"
  bash "$root/tests/fuzz/run_fuzzers.sh" "$root/build-fuzz" 20
fi
phase ""
echo "all tests passed"
