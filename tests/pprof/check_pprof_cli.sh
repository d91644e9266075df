#!/usr/bin/env bash
# `strata export --format pprof` read back by `go tool pprof` (Debian's golang-go, offline): the hand-made
# 3-rank recording of recording_fixture.h (written by strata_pprof_fixture, no `strata record` run) exported
# for every rank, for one rank and as the straggler / peers' median pair; pprof's -top must show the
# expected functions and CPU times, its -tagfocus the rank labels. Then the errors: profiler traces (no stack
# samples), a recording without samples, a rank without samples, pprof's options with another format.
# usage: check_pprof_cli.sh STRATA STRATA_PPROF_FIXTURE
# Without go: skipped (exit 77) on a developer's machine, a failure under CI=true (scripts/setup.sh installs it).
set -euo pipefail
strata=$1
fixture=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v go >/dev/null 2>&1; then
  echo "go is not installed (Debian golang-go, scripts/setup.sh): cannot read the profiles back"
  [ "${CI:-}" = "true" ] && exit 1
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=${HOME:-$work} GOCACHE=$work/gocache
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# expect_in NAME FILE TEXT: FILE contains TEXT.
expect_in() { if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1: no '$3' in:"; cat "$2"; fi; }
# top FILE [pprof options...]: pprof's -top table of a profile.
top() { local f=$1; shift; go tool pprof -top "$@" "$f" 2>&1; }
# first_row TOPFILE: the function of the first row of a -top table (flat-sorted).
first_row() { awk '/^ +flat +flat%/ {getline; print $NF; exit}' "$1"; }

mkdir -p "$work/run"
"$fixture" "$work/run/record-node-a.sseg"

# Every rank: 88 samples of 10 ms; compute_kernel flat 60 samples (rank 0 10, rank 1 30, rank 2 20).
"$strata" export --format pprof -o "$work/all.pb.gz" "$work/run"
[ "$(head -c2 "$work/all.pb.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] && pass "gzip'd" || fail "not gzip"
top "$work/all.pb.gz" > "$work/top"
expect_in "all ranks: total CPU" "$work/top" "of 880ms total"
[ "$(first_row "$work/top")" = "compute_kernel" ] && pass "all ranks: compute_kernel on top" ||
  { fail "all ranks: first row is not compute_kernel"; cat "$work/top"; }
expect_in "all ranks: compute_kernel 600ms" "$work/top" "600ms"
expect_in "all ranks: Python frame" "$work/top" "Net.forward"
expect_in "all ranks: Python caller" "$work/top" "train_step"
expect_in "all ranks: gloo worker" "$work/top" "read_socket"
top "$work/all.pb.gz" -sample_index=samples > "$work/top_samples"
expect_in "all ranks: samples" "$work/top_samples" "of 88 total"
# String labels (Pyroscope and Parca read those): pprof takes a bare number for a numeric range, a regexp
# selects the string.
top "$work/all.pb.gz" '-tagfocus=rank=^1$' > "$work/top_rank1"
expect_in "label rank=1: its 39 samples" "$work/top_rank1" "Showing nodes accounting for 390ms"
go tool pprof -tags "$work/all.pb.gz" > "$work/tags" 2>&1
for tag in "job: " "rank: " "pid: " "tid: " "host: "; do expect_in "label ${tag% }" "$work/tags" "$tag"; done
expect_in "job label: the recording's folder" "$work/tags" "run"
top "$work/all.pb.gz" -lines > "$work/lines"
expect_in "file:line of a native frame" "$work/lines" "compute_kernel work.cc:42"
expect_in "file:line of a Python frame: the line it executes" "$work/lines" "Net.forward train.py:44"
expect_in "file:line of its caller: the line of its call" "$work/lines" "train_step train.py:12"

# One rank.
"$strata" export --format pprof --rank 2 --job myjob -o "$work/r2.pb.gz" "$work/run/record-node-a.sseg"
top "$work/r2.pb.gz" > "$work/top_r2"
expect_in "--rank 2: its 29 samples" "$work/top_r2" "of 290ms total"
go tool pprof -tags "$work/r2.pb.gz" > "$work/tags_r2" 2>&1
expect_in "--job names the job label" "$work/tags_r2" "myjob"

# The straggler against its peers' median: compute_kernel 300ms against median(100, 200) = 150ms.
"$strata" export --format pprof --diff-straggler --rank 1 --peers-output "$work/peers.pb.gz" \
  -o "$work/straggler.pb.gz" "$work/run" 2> "$work/diff_err"
expect_in "diff pair: says how to read it" "$work/diff_err" "go tool pprof -diff_base"
top "$work/straggler.pb.gz" -diff_base "$work/peers.pb.gz" > "$work/top_diff"
[ "$(first_row "$work/top_diff")" = "compute_kernel" ] && pass "diff: compute_kernel on top" ||
  { fail "diff: first row is not compute_kernel"; cat "$work/top_diff"; }
expect_in "diff: +150ms in compute_kernel" "$work/top_diff" "150ms"

# Without --rank, the straggler is the one the diagnosis names: rank 1, whose compute is 10 ms longer a step.
"$strata" export --format pprof --diff-straggler --peers-output "$work/peers2.pb.gz" \
  -o "$work/straggler2.pb.gz" "$work/run" 2> "$work/diff_err2"
expect_in "diff pair: the diagnosis' straggler" "$work/diff_err2" "rank 1 against its peers' median"
cmp -s "$work/straggler.pb.gz" "$work/straggler2.pb.gz" && pass "diff pair: the same profile as --rank 1" ||
  fail "diff pair: the diagnosed straggler's profile differs from --rank 1's"

# Errors: each names its cause; nothing is written.
rc=0
"$strata" export --format pprof -o "$work/trace.pb.gz" "$root/tests/data/ddp/clean-2rank" 2> "$work/err" || rc=$?
[ "$rc" = 6 ] && pass "traces: exit 6 (unsupported)" || fail "traces: exit $rc"
expect_in "traces: names the input" "$work/err" "rank-0.json.gz"
expect_in "traces: says a recording is needed" "$work/err" "strata record"
[ ! -e "$work/trace.pb.gz" ] && pass "traces: no file written" || fail "traces: a file was written"
rc=0
"$strata" export --format pprof -o "$work/none.pb.gz" "$root/tests/fuzz/corpus/segment/small.sseg" 2> "$work/err" || rc=$?
[ "$rc" = 6 ] && pass "recording without samples: exit 6 (unsupported)" || fail "recording without samples: exit $rc"
expect_in "recording without samples: names it" "$work/err" "small.sseg: the recording holds no CPU stack samples"
[ ! -e "$work/none.pb.gz" ] && pass "recording without samples: no file written" || fail "no samples: file written"
rc=0
"$strata" export --format pprof --rank 7 -o "$work/r7.pb.gz" "$work/run" 2> "$work/err" || rc=$?
[ "$rc" = 2 ] && pass "--rank 7: exit 2" || fail "--rank 7: exit $rc"
expect_in "--rank 7: names the ranks sampled" "$work/err" "ranks sampled: 0, 1, 2"
rc=0
"$strata" export --rank 1 -o "$work/x.json" "$work/run" 2> "$work/err" || rc=$?
[ "$rc" = 2 ] && pass "--rank with perfetto: exit 2" || fail "--rank with perfetto: exit $rc"
expect_in "--rank with perfetto: says so" "$work/err" "--rank applies to --format pprof only"
rc=0
"$strata" export --format pprof --diff-straggler -o "$work/y.pb.gz" "$work/run" 2> "$work/err" || rc=$?
[ "$rc" = 2 ] && pass "--diff-straggler without --peers-output: exit 2" || fail "--diff-straggler alone: exit $rc"

# --help tells of the format and its options.
"$strata" export --help > "$work/help"
for word in pprof --rank --diff-straggler --peers-output --job; do expect_in "--help: $word" "$work/help" "$word"; done

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all pprof export checks passed"
