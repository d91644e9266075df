#!/usr/bin/env bash
# Golden "diff tests": runs each case of cases.txt from the repo root, compares the whole JSON output of
# `strata summary|diagnose` with tests/golden/SUBCOMMAND/NAME.json, and checks every summary of an HTA
# trace against the independent computations in verify_summary.py and verify_hta_analyses.py, and of an
# Nsight Systems export against SQL over the export (verify_nsys_summary.py). Exit 77 (skipped) when
# ../shared/datasets is absent.
# usage: run_golden.sh STRATA_BINARY [--update]
set -u
bin=$(realpath "$1")
update=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
if [ ! -d ../shared/datasets ]; then
  echo "golden: SKIPPED: ../shared/datasets is absent (clone the project with shared/ beside it)"
  # A skip is not a pass: under CI=true it fails the run.
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
passed=0
failed=0
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
while IFS='|' read -r name sub args; do
  name="${name//[[:space:]]/}"
  sub="${sub//[[:space:]]/}"
  [ -z "$name" ] && continue
  case "$name" in \#*) continue ;; esac
  mkdir -p "tests/golden/$sub"
  expected="tests/golden/$sub/$name.json"
  actual="$out_dir/$name.json"
  # shellcheck disable=SC2086
  if ! "$bin" "$sub" --format json $args > "$actual" 2> "$out_dir/$name.err"; then
    echo "FAIL $name: strata exited non-zero: $(cat "$out_dir/$name.err")"
    failed=$((failed + 1))
    continue
  fi
  if [ "$update" = "--update" ]; then
    cp "$actual" "$expected"
  fi
  if ! diff -u "$expected" "$actual" > "$out_dir/$name.diff" 2>&1; then
    echo "FAIL $name: output differs from $expected:"
    head -40 "$out_dir/$name.diff"
    failed=$((failed + 1))
    continue
  fi
  # Independent check of the HTA metrics on Kineto inputs (op tables have no GPU metrics).
  case "$sub:$args" in
    summary:*datasets/hta*)
      flag=""
      case "$args" in *--include-last-step*) flag="--include-last-step" ;; esac
      sequences=""
      case "$args" in *--kernel-sequences*) sequences=$(echo "$args" | sed 's/.*--kernel-sequences \([^ ]*\).*/\1/') ;; esac
      traces=""
      for t in $(echo "$args" | sed 's/--include-last-step//; s/--kernel-sequences [^ ]*//'); do
        if [ -d "$t" ]; then traces="$traces $(find "$t" -name '*.json*' | sort | tr '\n' ' ')"; else traces="$traces $t"; fi
      done
      # shellcheck disable=SC2086
      if ! "$py" tests/golden/verify_summary.py check --mode hta "$expected" $traces $flag > "$out_dir/$name.verify" 2>&1; then
        echo "FAIL $name: independent HTA computation disagrees:"
        cat "$out_dir/$name.verify"
        failed=$((failed + 1))
        continue
      fi
      # HTA's idle-time breakdown, launch statistics and queue length from their documented definitions.
      # shellcheck disable=SC2086
      if ! "$py" tests/golden/verify_hta_analyses.py "$expected" $traces $flag ${sequences:+--kernel-sequences "$sequences"} \
        > "$out_dir/$name.verify" 2>&1; then
        echo "FAIL $name: independent HTA analyses disagree:"
        cat "$out_dir/$name.verify"
        failed=$((failed + 1))
        continue
      fi
      ;;
    summary:*datasets/nsys/*.sqlite)
      # Each rank's kernel time by type against SQL over the export (Python's sqlite3, not strata's code).
      if ! "$py" tests/golden/verify_nsys_summary.py "$expected" $args > "$out_dir/$name.verify" 2>&1; then
        echo "FAIL $name: SQL over the export disagrees:"
        cat "$out_dir/$name.verify"
        failed=$((failed + 1))
        continue
      fi
      ;;
  esac
  echo "ok   $name"
  passed=$((passed + 1))
done < tests/golden/cases.txt
echo "golden: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
