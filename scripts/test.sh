#!/usr/bin/env bash
# Runs every test: installs dependencies, checks formatting, builds Release and runs the unit and golden
# tests (ctest), rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer and runs them again, then
# runs each fuzzer briefly. The sanitizer and fuzzer builds run beside the test phase before them, at idle
# priority (build_beside). Exits non-zero on the first failure. With CI=true (set by .ci/run) a skipped test
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
  [ ${#beside[@]} -eq 0 ] || { echo "== builds beside the tests (within the phases above)"; printf '  %s\n' "${beside[@]}"; }
  printf '  %5d s  total (%s)\n' $((SECONDS - run_started)) "$([ $status -eq 0 ] && echo passed || echo "failed, exit $status")"
}
# Builds that run beside a test phase (below), each in its own process group: killed if the run ends early.
background=()
beside=()
on_exit() {
  local status=$?
  for pid in "${background[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  (exit $status)
  print_times
}
trap on_exit EXIT
# build_beside LOG COMMAND...: starts a build in the background at idle CPU and I/O priority (SCHED_IDLE: it
# runs only on a core no test wants, so it does not slow or perturb the timing-heavy tests beside it). Most
# test time is tests waiting (for a process group's timeout, a live agent, a job's steps) with a core idle;
# a build that ccache cannot serve (a header every file includes changed) compiles in that time.
build_beside() {
  local log=$1
  shift
  setsid chrt --idle 0 ionice -c 3 "$@" >"$log" 2>&1 &
  background+=($!)
  beside_start=$SECONDS
}
# await_build NAME LOG: waits for the last build started beside; on failure prints its log's tail and fails.
await_build() {
  local pid=${background[-1]}
  if ! wait "$pid"; then
    tail -n 80 "$2"
    echo "== $1 failed (its log: $2)" >&2
    exit 1
  fi
  unset 'background[-1]'
  beside+=("$(printf '%5d s  %s, from its start beside the tests to its end' $((SECONDS - beside_start)) "$1")")
}

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
phase "Release tests (ctest), the ASan + UBSan build beside them at idle priority"
# The sanitizers' build: unity batches here too (the sanitizers' cost is per instruction, not per translation
# unit): a third of the compile. The fuzzer build below compiles the library one file at a time, so a missing
# include still fails CI. Under g++ (the sanitizers' pass has run under g++ since it began; the Release build and
# the quick start use clang, the fuzzers clang's libFuzzer): two compilers' warnings and instrumentation over the
# same code.
if [ "$quick" != "--quick" ]; then
  build_beside "$root/build-asan.log" env CC=gcc CXX=g++ \
    bash "$root/scripts/build.sh" "$root/build-asan" Debug -DSTRATA_SANITIZE=ON -DSTRATA_UNITY=ON
fi
# Tests labelled `long` repeat, at length, what a shorter test checks: benchmarks (docs/benchmarks.md), not CI's.
(cd "$root/build" && ctest --output-on-failure -j2 --label-exclude long)

if [ "$quick" != "--quick" ]; then
  # Before the accuracy suite, whose jobs' timing is what it judges: nothing runs beside it.
  phase "ASan + UBSan build (what was left of it)"
  await_build "ASan + UBSan build" "$root/build-asan.log"
fi

phase "accuracy (reduced suite: lab DDP jobs and strata synth jobs against their injected faults)"
/usr/bin/python3 "$root/bench/accuracy" --strata "$root/build/strata" --with-recorder

if [ "$quick" = "--quick" ]; then exit 0; fi

fuzz=0
[ -x "$root/tests/fuzz/run_fuzzers.sh" ] && fuzz=1
phase "ASan + UBSan tests (ctest)$([ $fuzz = 1 ] && echo ', the fuzzer build beside them at idle priority')"
if [ $fuzz = 1 ]; then
  build_beside "$root/build-fuzz.log" env CC=clang CXX=clang++ \
    STRATA_TARGETS="fuzz_kineto fuzz_op_table fuzz_csv fuzz_segment fuzz_segment_records fuzz_pickle fuzz_flight_recorder fuzz_nsys" \
    bash "$root/scripts/build.sh" "$root/build-fuzz" RelWithDebInfo -DSTRATA_FUZZ=ON
fi
# Tests labelled `source` (CMakeLists.txt) run no compiled code: the Release pass ran them. Those labelled
# `cluster` (a Redis Cluster of real servers and real jobs, ~50 s each) run the code that the sanitized unit
# tests RedisClusterServer.* run against real clusters too: the Release pass runs them end to end.
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j2 --label-exclude 'source|cluster|long')

if [ $fuzz = 1 ]; then
  phase "fuzzer build (clang, libFuzzer; what was left of it)"
  await_build "fuzzer build" "$root/build-fuzz.log"
  phase "fuzzers (libFuzzer, brief)"
  bash "$root/tests/fuzz/run_fuzzers.sh" "$root/build-fuzz" 20
fi
phase ""
echo "all tests passed"
