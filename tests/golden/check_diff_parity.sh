#!/usr/bin/env bash
# Parity of `strata diff --format json` with HTA's TraceDiff.compare_traces, as the independent verifier
# tests/golden/verify_diff.py computes it (docs/hta-semantics.md §10): every per-name count and total time on
# HTA's own trace pairs (trace_diff/, trace_compare/), under the default selection and others, and on other HTA
# traces for what the pairs do not exercise: ns timestamps rounded to µs (ns_resolution_trace), several ranks
# (trace_filter), kernels on stream 0 and Triton launches (amd_trace, triton_example). The verifier's
# selftest first reproduces the figures HTA's tests/test_trace_diff.py asserts. Exit 77 (skipped) when
# ../shared/datasets is absent; under CI=true that is a failure.
# usage: check_diff_parity.sh STRATA_BINARY
set -u
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
hta=../shared/datasets/hta
if [ ! -d "$hta/trace_diff" ]; then
  echo "diff parity: SKIPPED: $hta/trace_diff is absent (clone the project with shared/ beside it)"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
"$py" tests/golden/verify_diff.py selftest "$hta" || failed=$((failed + 1))
control=$hta/trace_diff/control/control.json.gz
test=$hta/trace_diff/test/test.json.gz
# Each case: BASE TEST [options...]; the same options go to strata and to the verifier.
while read -r base target opts; do
  [ -z "$base" ] && continue
  echo "== strata diff $base $target $opts"
  # shellcheck disable=SC2086
  if ! "$bin" diff --format json "$base" "$target" $opts > "$out/diff.json" 2> "$out/err"; then
    echo "FAIL: strata exited non-zero: $(cat "$out/err")"
    failed=$((failed + 1))
    continue
  fi
  # shellcheck disable=SC2086
  "$py" tests/golden/verify_diff.py check "$out/diff.json" "$base" "$target" $opts || failed=$((failed + 1))
done <<CASES
$control $test
$control $test --base-step 1012 --test-step 1010
$control $test --all-steps
$control $test --device gpu
$test $control --device cpu --base-step 1014 --test-step 1009
$hta/trace_compare/base/base.json.gz $hta/trace_compare/test/test.json.gz --base-step 1010 --test-step 1010
$hta/ns_resolution_trace $hta/ns_resolution_trace --base-step 101 --test-step 103
$hta/trace_filter $hta/trace_filter --all-ranks --all-steps
$hta/trace_filter $hta/trace_filter --base-rank 1 --test-rank 0
$hta/amd_trace $hta/triton_example
CASES
if [ "$failed" -ne 0 ]; then
  echo "diff parity: $failed check(s) failed"
  exit 1
fi
echo "diff parity: all checks passed"
