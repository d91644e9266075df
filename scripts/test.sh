#!/usr/bin/env bash
# Runs every test: installs dependencies, checks formatting, builds Release and runs the unit and golden
# tests (ctest), rebuilds with AddressSanitizer + UndefinedBehaviorSanitizer and runs them again, then
# runs each fuzzer briefly. Exits non-zero on the first failure. With CI=true (set by .ci/run) a skipped test
# fails the run.
# usage: scripts/test.sh [--quick]   (--quick: Release tests only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=${1:-}
bash "$root/scripts/setup.sh"

echo "== format check (clang-format)"
cd "$root"
mapfile -t sources < <(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 2>/dev/null || true)
if [ ${#sources[@]} -gt 0 ]; then
  clang-format --dry-run -Werror "${sources[@]}"
fi

echo "== Release build and tests"
bash "$root/scripts/build.sh" "$root/build" Release
(cd "$root/build" && ctest --output-on-failure -j2)

echo "== accuracy (reduced suite: lab DDP jobs and strata synth jobs against their injected faults)"
/usr/bin/python3 "$root/bench/accuracy" --strata "$root/build/strata" --with-recorder

if [ "$quick" = "--quick" ]; then exit 0; fi

echo "== ASan + UBSan build and tests"
bash "$root/scripts/build.sh" "$root/build-asan" Debug -DSTRATA_SANITIZE=ON
# Tests labelled `source` (CMakeLists.txt) run no compiled code: the Release pass ran them. Those labelled
# `cluster` (a Redis Cluster of real servers and real jobs, ~50 s each) run the code that the sanitized unit
# tests RedisClusterServer.* run against real clusters too: the Release pass runs them end to end.
(cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j2 --label-exclude 'source|cluster')

if [ -x "$root/tests/fuzz/run_fuzzers.sh" ]; then
  echo "== fuzzers (libFuzzer, brief)"
  CC=clang CXX=clang++ STRATA_TARGETS="fuzz_kineto fuzz_op_table fuzz_csv fuzz_segment fuzz_segment_records fuzz_pickle fuzz_flight_recorder fuzz_nsys" \
    bash "$root/scripts/build.sh" "$root/build-fuzz" RelWithDebInfo -DSTRATA_FUZZ=ON
  bash "$root/tests/fuzz/run_fuzzers.sh" "$root/build-fuzz" 20
fi
echo "all tests passed"
