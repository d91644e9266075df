#!/usr/bin/env bash
# Command-line behaviour of `strata` that scripts and CI rely on: exit codes (0 ran, 2 usage error, 3/4 with
# --fail-on findings/inconclusive; an error by its kind, cli/exit_codes.h: 1 resource, 5 bad input, 6 unsupported
# or not a trace), the nearest subcommand suggested for a typo, the status line
# first in the text report. Uses the bundled example (a straggler) and jobs constructed here.
# usage: check_cli.sh STRATA_BINARY     Prints "N passed, N failed" last.
set -u
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
expect_rc() {  # NAME WANT_RC CMD...
  local name=$1 want=$2
  shift 2
  "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $rc, want $want; stderr: $(head -3 "$work/err")"
  fi
}
expect_text() {  # NAME FILE PATTERN
  if grep -q -- "$3" "$2"; then
    passed=$((passed + 1))
    echo "ok   $1"
  else
    failed=$((failed + 1))
    echo "FAIL $1: '$3' not in $2: $(head -3 "$2")"
  fi
}

# A single-rank trace: nothing can be compared (inconclusive).
/usr/bin/python3 - "$work" <<'PYEOF'
import json, os, sys
out = sys.argv[1]
ev = []
for s in range(3):
    t = 1000 + s * 60000
    ev.append({"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": t, "dur": 50000})
    ev.append({"ph": "X", "name": "ProfilerStep#%d" % s, "cat": "user_annotation", "pid": 1, "tid": 1, "ts": t, "dur": 55000})
json.dump({"traceEvents": ev}, open(os.path.join(out, "single.json"), "w"))
PYEOF

example=examples/ddp-2rank-slow-compute
expect_rc "diagnose runs: exit 0 with findings" 0 "$bin" diagnose "$example"
expect_text "text starts with the verdict" "$work/out" '^verdict: slow_compute: rank 1'
expect_screen() {  # NAME FILE: at most 40 lines of at most 100 columns (code points)
  local lines cols
  lines=$(wc -l < "$2")
  cols=$(LC_ALL=C.UTF-8 awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$2")
  if [ "$lines" -le 40 ] && [ "$cols" -le 100 ]; then
    passed=$((passed + 1))
    echo "ok   $1"
  else
    failed=$((failed + 1))
    echo "FAIL $1: $lines lines, $cols columns (want <= 40 x 100)"
  fi
}
expect_screen "the bundled example's report fits one screen" "$work/out"
expect_text "the straggler's lateness in scaled units" "$work/out" '^straggler: rank 1 late 1[0-9][0-9] ms/step in 5 of 6 steps (1-5), persistent'
expect_text "the finding's excess by class" "$work/out" '^     excess over peers by class: compute +2[0-9][0-9] ms'
expect_text "the finding's blame chain" "$work/out" '^     blame: late arrival at collectives'
if grep -q -e 'evidence: {' -e '(saves [0-9.]*%, confidence' "$work/out"; then
  failed=$((failed + 1)); echo "FAIL text report has a raw JSON evidence dump or a repeated saving"
else
  passed=$((passed + 1)); echo "ok   no raw JSON evidence, saving said once"
fi
expect_rc "--fail-on findings: exit 3 on findings" 3 "$bin" diagnose --fail-on findings "$example"
expect_rc "--fail-on inconclusive: exit 0 on findings" 0 "$bin" diagnose --fail-on inconclusive "$example"
expect_rc "single rank: exit 0 by default" 0 "$bin" diagnose "$work/single.json"
expect_text "single rank: inconclusive first" "$work/out" '^verdict: inconclusive: only 1 rank'
expect_rc "--fail-on inconclusive: exit 4" 4 "$bin" diagnose --fail-on inconclusive "$work/single.json"
expect_rc "--fail-on findings,inconclusive: exit 4" 4 "$bin" diagnose --fail-on findings,inconclusive "$work/single.json"
expect_rc "json status" 0 "$bin" diagnose --format json "$work/single.json"
expect_text "json says inconclusive" "$work/out" '"status": "inconclusive"'
expect_rc "--fail-on with a bad value: usage error" 2 "$bin" diagnose --fail-on never "$example"
# --format html: a page written to a file (atomically, by the same writer as -o), never to a terminal.
expect_rc "html without -o: usage error" 2 "$bin" diagnose --format html "$example"
expect_text "html without -o names -o" "$work/err" 'give the file to write with -o'
expect_rc "html -o FILE" 0 "$bin" diagnose --format html -o "$work/report.html" "$example"
expect_text "html page embeds the diagnosis" "$work/report.html" '"schema":"strata.diagnosis/1"'
expect_rc "html -o - into a pipe" 0 "$bin" diagnose --format html -o - "$example"
expect_text "html on stdout is the page" "$work/out" '^<!DOCTYPE html>'
# On a terminal (script(1) gives the command one): -o - and -o /dev/tty are refused.
expect_rc "html -o - on a terminal: usage error" 2 script -qec "$bin diagnose --format html -o - $example" /dev/null
expect_text "html on a terminal says so" "$work/out" 'standard output is a terminal'
expect_rc "html -o /dev/tty: usage error" 2 script -qec "$bin diagnose --format html -o /dev/tty $example" /dev/null
expect_text "html -o /dev/tty says so" "$work/out" 'that is a terminal'
expect_rc "unknown option: usage error" 2 "$bin" diagnose --no-such-option "$example"
expect_text "unknown option: in strata's words" "$work/err" '^strata: --no-such-option: not an option of strata diagnose$'
expect_text "unknown option: where the options are" "$work/err" '^strata: see strata diagnose --help'
expect_rc "mistyped option: usage error" 2 "$bin" diagnose --formt json "$example"
expect_text "mistyped option: nearest option suggested" "$work/err" '^strata: --formt: not an option of strata diagnose; did you mean --format?'
expect_rc "mistyped option=value: usage error" 2 "$bin" summary --thread=2 "$example"
expect_text "mistyped option=value: nearest option suggested" "$work/err" 'did you mean --threads?'
expect_rc "summary --series in text: usage error" 2 "$bin" summary --series "$example"
expect_text "summary --series in text: says JSON only" "$work/err" 'written in JSON only (add --format json)'
if grep -v '^strata: ' "$work/err" | grep -q .; then
  failed=$((failed + 1)); echo "FAIL usage errors: a line without 'strata: ': $(cat "$work/err")"
else
  passed=$((passed + 1)); echo "ok   usage errors: every line starts with 'strata: '"
fi
expect_rc "missing argument: usage error" 2 "$bin" diagnose
expect_text "missing argument: in strata's words" "$work/err" '^strata: missing PATHS... (usage: strata diagnose \[options\] PATHS...)$'
expect_rc "out of range: usage error" 2 "$bin" diagnose --min-effect 200 "$example"
expect_text "out of range: in strata's words" "$work/err" '^strata: --min-effect 200: must be a number from 0 to 100$'
expect_rc "a third argument to diff: usage error" 2 "$bin" diff a b c
expect_text "a third argument to diff: in strata's words" "$work/err" "^strata: unexpected argument 'c' (usage: strata diff \[options\] BASE TEST)$"
if grep -q -e 'not expected' -e 'not in range' -e 'is required' -e '0\.000000' "$work/err"; then
  failed=$((failed + 1)); echo "FAIL usage errors: CLI11's own wording: $(cat "$work/err")"
else
  passed=$((passed + 1)); echo "ok   usage errors: none of CLI11's own wording"
fi
# Two runs (HTA's trace_compare pair) given to diagnose: the error points to strata diff.
if [ -d ../shared/datasets/hta/trace_compare ]; then
  expect_rc "two runs given to diagnose: bad input" 5 "$bin" diagnose ../shared/datasets/hta/trace_compare/base ../shared/datasets/hta/trace_compare/test
  expect_text "two runs given to diagnose: points to strata diff" "$work/err" '`strata diff ../shared/datasets/hta/trace_compare/base ../shared/datasets/hta/trace_compare/test`'
fi
expect_rc "typo in subcommand: usage error" 2 "$bin" diagnos "$example"
expect_text "typo: nearest subcommand suggested" "$work/err" "did you mean 'diagnose'"
expect_rc "no subcommand: usage error" 2 "$bin"
expect_text "no subcommand: says where the commands are" "$work/err" '^strata: see strata --help for the commands'
expect_rc "--help: exit 0" 0 "$bin" --help
expect_rc "missing file: resource error" 1 "$bin" diagnose "$work/no-such-file.json"
expect_text "missing file named" "$work/err" "no-such-file.json"
: > "$work/empty.json"
expect_rc "empty file: bad input" 5 "$bin" diagnose "$work/empty.json"
expect_text "empty file says so" "$work/err" "empty.json: empty file"
expect_rc "same file twice: usage error" 2 "$bin" diagnose "$example" "$(dirname "$example")/./$(basename "$example")"
expect_text "same file twice says so" "$work/err" "the same file is given twice"
# Each kind of error its own exit code (docs/usage.md), the message unchanged.
printf '{"traceEvents": [{"ph": "X", "name": "a"} "b"]}' > "$work/malformed.json"
expect_rc "malformed JSON: bad input" 5 "$bin" diagnose "$work/malformed.json"
expect_text "malformed JSON: names the file and the byte" "$work/err" "malformed.json: invalid JSON at byte 42: "
printf 'rank,step,optype,start_ts,duration\n0,1,fwd,0,1\n0,1,"fwd,0,1\n' > "$work/unclosed.csv"
expect_rc "CSV with an unclosed quote: bad input" 5 "$bin" summary "$work/unclosed.csv"
expect_text "CSV with an unclosed quote: names the file and the line" "$work/err" "unclosed.csv: line 3: "
printf 'hello: this is no trace\n' > "$work/notes.json"
expect_rc "a file of no known format: not a trace" 6 "$bin" diagnose "$work/notes.json"
expect_text "a file of no known format: says so" "$work/err" "notes.json: unrecognised format"
printf 'SQLite format 3\000' | cat - "$work/notes.json" | gzip -c > "$work/packed.sqlite.gz"
expect_rc "a compressed SQLite file: unsupported" 6 "$bin" summary "$work/packed.sqlite.gz"
expect_text "a compressed SQLite file: says so" "$work/err" "decompress it first"
expect_rc "--op-map without =: usage error" 2 "$bin" summary --op-map fwd "$example"

# Numeric options are validated (NaN, inf and odd time units were accepted): usage errors naming the option.
for bad in nan inf -1 101; do
  expect_rc "--min-effect $bad: usage error" 2 "$bin" diagnose --min-effect "$bad" "$example"
done
expect_text "--min-effect nan: says why" "$work/err" "min-effect"
for bad in 0 1024 -1e9 nan 1e12; do
  expect_rc "--time-unit-ns $bad: usage error" 2 "$bin" diagnose --time-unit-ns "$bad" "$example"
done
expect_text "--time-unit-ns: says what is allowed" "$work/err" "power of ten"
expect_rc "--time-unit-ns 1e6: accepted" 0 "$bin" diagnose --time-unit-ns 1e6 "$example"
# An op table read in the wrong unit (times in ms, read as seconds): a warning naming --time-unit-ns and the unit.
printf 'rank,step,optype,start_ts,duration\n0,1,fwd,0,700\n1,1,fwd,0,750\n0,2,fwd,1500,700\n1,2,fwd,1500,750\n' \
  > "$work/ops_ms.csv"
expect_rc "op table in ms read as s: runs" 0 "$bin" summary "$work/ops_ms.csv"
expect_text "op table in ms read as s: warned" "$work/err" \
  "^strata: .*ops_ms.csv: implausible time unit: .* pass --time-unit-ns 1e6 if they are in milliseconds"
expect_rc "op table in ms read as s, --quiet: runs" 0 "$bin" summary --quiet "$work/ops_ms.csv"
if [ -s "$work/err" ]; then
  failed=$((failed + 1)); echo "FAIL --quiet: stderr not empty: $(head -3 "$work/err")"
else
  passed=$((passed + 1)); echo "ok   --quiet: no warning on stderr"
fi
expect_rc "--quiet: errors still printed" 1 "$bin" diagnose --quiet "$work/no-such-file.json"
expect_text "--quiet: the error names the file" "$work/err" "no-such-file.json"
expect_rc "op table in ms read as ms: runs" 0 "$bin" summary --time-unit-ns 1e6 "$work/ops_ms.csv"
if grep -q "implausible" "$work/err"; then
  failed=$((failed + 1)); echo "FAIL op table in ms read as ms: warned: $(head -3 "$work/err")"
else
  passed=$((passed + 1)); echo "ok   op table in ms read as ms: no warning"
fi
expect_rc "inspect /dev/zero: a quick error (not a segment)" 6 timeout 10 "$bin" inspect /dev/zero
expect_text "inspect /dev/zero: says why" "$work/err" "not a strata segment file"

# Text fits a terminal's width (COLUMNS, or the tty's); piped or written to a file it keeps the fixed 100.
COLUMNS=64 script -qec "$bin diagnose $example" /dev/null | tr -d '\r' > "$work/tty.txt"
widest=$(python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$work/tty.txt")
if [ "$widest" -le 64 ] && grep -q '^verdict: ' "$work/tty.txt"; then
  passed=$((passed + 1)); echo "ok   COLUMNS=64 on a terminal: lines fit ($widest columns)"
else
  failed=$((failed + 1)); echo "FAIL COLUMNS=64 on a terminal: widest line $widest columns"
fi
# Piped: COLUMNS when set (issue 51: it was ignored), else the fixed 100; --width wins over both; -o FILE keeps 100.
widest_of() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }
COLUMNS=64 "$bin" diagnose "$example" > "$work/piped.txt"
widest=$(widest_of "$work/piped.txt")
if [ "$widest" -le 64 ] && grep -q '^verdict: ' "$work/piped.txt"; then
  passed=$((passed + 1)); echo "ok   piped with COLUMNS=64: lines fit ($widest columns)"
else
  failed=$((failed + 1)); echo "FAIL piped with COLUMNS=64: widest line $widest columns"
fi
env -u COLUMNS "$bin" diagnose "$example" > "$work/piped.txt"
widest=$(widest_of "$work/piped.txt")
if [ "$widest" -gt 64 ] && [ "$widest" -le 100 ]; then
  passed=$((passed + 1)); echo "ok   piped without COLUMNS: the fixed width ($widest columns)"
else
  failed=$((failed + 1)); echo "FAIL piped without COLUMNS: widest line $widest columns (want 65..100)"
fi
COLUMNS=200 "$bin" diagnose --width 64 "$example" > "$work/piped.txt"
widest=$(widest_of "$work/piped.txt")
if [ "$widest" -le 64 ]; then
  passed=$((passed + 1)); echo "ok   --width 64 wins over COLUMNS ($widest columns)"
else
  failed=$((failed + 1)); echo "FAIL --width 64: widest line $widest columns"
fi
expect_rc "--width under the minimum: usage error" 2 "$bin" diagnose --width 20 "$example"
expect_text "--width 20: says what is allowed" "$work/err" '^strata: --width 20: must be a whole number from 60 to 10000$'

# The bundled recording (examples/recorded-2rank-cpu-contention) can be tried without root.
recorded_example="$(dirname "$example")/recorded-2rank-cpu-contention"
expect_rc "inspect the bundled recording" 0 "$bin" inspect "$recorded_example/record.sseg"
expect_text "inspect the bundled recording: its ranks' layers" "$work/out" "^ranks (share of each rank's training window):"
expect_rc "diagnose the bundled recording's folder (beside its truth.json)" 0 "$bin" diagnose "$recorded_example"
expect_text "diagnose the bundled recording: the hog's rank" "$work/out" "^verdict: cpu_contention: rank 1"

# --rank-map: repeatable, the comma form too; an entry that names no input is a usage error.
mkdir -p "$work/ranks" && cp "$example"/rank-*.json.gz "$work/ranks/"
expect_rc "--rank-map repeated" 0 "$bin" diagnose --rank-map rank-0.json.gz=1 --rank-map rank-1.json.gz=0 "$work/ranks"
expect_text "--rank-map swaps the ranks" "$work/out" '^verdict: slow_compute: rank 0'
expect_rc "--rank-map comma form" 0 "$bin" diagnose --rank-map rank-0.json.gz=1,rank-1.json.gz=0 "$work/ranks"
expect_text "--rank-map comma form swaps" "$work/out" '^verdict: slow_compute: rank 0'
expect_rc "--rank-map entry matching no input" 2 "$bin" diagnose --rank-map nosuch.json=3 "$work/ranks"
expect_text "--rank-map entry named" "$work/err" 'nosuch.json=3 names no input file'

# Each input is read once, front to back: standard input, pipes, process substitutions and named FIFOs
# work like files (they were opened two or three times for sniffing: a wrong error, or a hang).
expect_rc "summary of a file" 0 "$bin" summary "$example/rank-0.json.gz"
cp "$work/out" "$work/from-file"
expect_rc "summary -: standard input" 0 sh -c '"$1" summary - < "$2"' sh "$bin" "$example/rank-0.json.gz"
expect_text "summary -: same events as the file" "$work/out" "$(head -1 "$work/from-file")"
expect_rc "summary of a process substitution (gzip through a pipe)" 0 bash -c '"$1" summary <(cat "$2")' sh "$bin" \
  "$example/rank-0.json.gz"
expect_text "process substitution: same events as the file" "$work/out" "$(head -1 "$work/from-file")"
mkfifo "$work/fifo"
(cat "$example/rank-0.json.gz" > "$work/fifo" &)
expect_rc "summary of a named FIFO: no hang" 0 timeout 20 "$bin" summary "$work/fifo"
expect_text "named FIFO: same events as the file" "$work/out" "$(head -1 "$work/from-file")"
segment=tests/fuzz/corpus/segment/small.sseg
expect_rc "inspect -: a segment on standard input" 0 sh -c '"$1" inspect - < "$2"' sh "$bin" "$segment"
expect_text "inspect -: named <stdin>" "$work/out" '^<stdin>: 5 blocks'
# inspect prints tables, not JSON lines, and takes a folder (every .sseg under it).
expect_rc "inspect: tables" 0 "$bin" inspect "$segment"
expect_text "inspect: a process table" "$work/out" '^  *pid  *rank  *process  *calls'
if grep -q '{"' "$work/out"; then failed=$((failed + 1)); echo "FAIL inspect: JSON in the text output"; else passed=$((passed + 1)); echo "ok   inspect: no JSON in the text output"; fi
mkdir -p "$work/segs/chunk-1" "$work/segs/chunk-2"
cp "$segment" "$work/segs/chunk-1/a.sseg"
cp "$segment" "$work/segs/chunk-2/b.sseg"
expect_rc "inspect FOLDER: every segment under it" 0 "$bin" inspect "$work/segs"
expect_text "inspect FOLDER: the second segment too" "$work/out" "chunk-2/b.sseg: 5 blocks"
expect_rc "inspect FOLDER --format json: an array of both" 0 "$bin" inspect --format json "$work/segs"
cp "$work/out" "$work/inspect.json"
expect_rc "inspect FOLDER json: two objects" 0 python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if isinstance(d, list) and len(d) == 2 else 1)' "$work/inspect.json"
mkdir -p "$work/nosegs"
expect_rc "inspect of a folder without segments: not a trace" 6 "$bin" inspect "$work/nosegs"
expect_text "inspect empty folder: says why" "$work/err" "no .sseg segment files in it"
expect_rc "diagnose of a segment through a pipe" 0 bash -c '"$1" diagnose --format json <(cat "$2")' sh "$bin" "$segment"
expect_text "segment through a pipe: read as a recording" "$work/out" '"step_source"'
expect_rc "- named twice: usage error" 2 "$bin" summary - - < /dev/null
expect_text "- named twice: says why" "$work/err" "named twice"

# Nsight Systems exports (docs/nsys.md): read by SQLite from their path; a pipe, a non-nsys SQLite file and a file
# cut short are errors that say so (exit 6 unsupported, 6 not a trace, 5 bad input), never a crash.
nsys_export=../shared/datasets/nsys/mfu_2gpu_before.sqlite
if [ -f "$nsys_export" ]; then
  expect_rc "summary of an nsys export" 0 "$bin" summary "$nsys_export"
  expect_text "nsys export: two ranks" "$work/out" '^strata summary: 2 ranks, 31883 events'
  expect_rc "nsys export on standard input: unsupported" 6 sh -c '"$1" summary - < "$2"' sh "$bin" "$nsys_export"
  expect_text "nsys export on standard input: says why" "$work/err" "must be given as a file on disk"
  head -c 100000 "$nsys_export" > "$work/cut.sqlite"
  expect_rc "nsys export cut short: bad input" 5 "$bin" summary "$work/cut.sqlite"
  expect_text "nsys export cut short: says so" "$work/err" "cut short"
fi
sqlite3 "$work/other.sqlite" "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);"
expect_rc "SQLite file that is no nsys export: not a trace" 6 "$bin" summary "$work/other.sqlite"
expect_text "no nsys export: says so" "$work/err" "not an Nsight Systems export"

# --max-memory: past it, an error naming the file being read (was: std::bad_alloc, abort, exit 134). The
# address-space limit stops the import (an allocation fails) or, under a sanitizer where it is not set, the
# loader's count of the events kept (about 22 MiB for this job) does.
"$bin" synth -o "$work/big" --ranks 8 --steps 40 --layers 24 --no-progress > /dev/null 2>&1
expect_rc "--max-memory 20M on a larger job: error" 1 "$bin" diagnose --max-memory 20M "$work/big"
expect_text "--max-memory: names the file and the limit" "$work/err" 'rank-[0-9].json: .*--max-memory 20 MiB'
expect_rc "--max-memory 1G: the same job runs" 0 "$bin" diagnose --max-memory 1G "$work/big"
expect_rc "--max-memory without a unit under 16M: usage error" 2 "$bin" diagnose --max-memory 4096 "$example"
expect_text "--max-memory: says a bare number is bytes" "$work/err" "without a unit is bytes"
# One event larger than any real one is refused, not buffered without bound.
/usr/bin/python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("{\"traceEvents\": [{\"name\": \"")
    for _ in range(260): f.write("a" * (1 << 20))
    f.write("\"}]}")' "$work/huge-event.json"
expect_rc "a 260 MiB event: bad input" 5 "$bin" summary "$work/huge-event.json"
expect_text "a 260 MiB event: says why" "$work/err" 'huge-event.json: invalid JSON at byte .*spans more than 256 MiB'
rm -f "$work/huge-event.json"

# `summary` on many ranks: the job's min / median / max, then the outlier ranks first (rank 7 takes twice
# as long per step as the other 9); --per-rank lists every rank.
/usr/bin/python3 - "$work/many" <<'PYEOF'
import json, os, sys
out = sys.argv[1]
os.makedirs(out)
for r in range(10):
    ev, step = [], 120000 if r == 7 else 60000
    for s in range(4):
        t = 1000 + s * step
        ev.append({"ph": "X", "name": "aten::mm", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": t, "dur": step - 10000})
        ev.append({"ph": "X", "name": "ProfilerStep#%d" % s, "cat": "user_annotation", "pid": 1, "tid": 1, "ts": t, "dur": step - 5000})
    json.dump({"traceEvents": ev, "distributedInfo": {"rank": r, "world_size": 10}}, open(os.path.join(out, "rank-%d.json" % r), "w"))
PYEOF
expect_rc "summary of 10 ranks" 0 "$bin" summary "$work/many"
expect_text "summary: job min / median / max of the span" "$work/out" '^  span  *235 ms  *235 ms  *475 ms  0  *7$'
expect_text "summary: the outlier rank is named" "$work/out" '^outlier ranks (1 of 10'
expect_text "summary: the outlier's row and why" "$work/out" '^     7  rank-7.json .*span 475 ms vs median 235 ms$'
if [ "$(grep -c 'rank-[0-9].json' "$work/out")" -eq 1 ]; then
  passed=$((passed + 1)); echo "ok   summary: only the outlier rank gets a row"
else
  failed=$((failed + 1)); echo "FAIL summary: want 1 rank row, got $(grep -c 'rank-[0-9].json' "$work/out")"
fi
expect_rc "summary --per-rank" 0 "$bin" summary --per-rank "$work/many"
if [ "$(grep -c '^  *[0-9]  rank-[0-9].json' "$work/out")" -eq 10 ] && grep -A1 '^ranks (outliers first):' "$work/out" | grep -q '^  *rank' \
   && [ "$(grep -m1 '^  *[0-9]  rank-' "$work/out" | awk '{print $1}')" = 7 ]; then
  passed=$((passed + 1)); echo "ok   summary --per-rank: every rank's row, the outlier first"
else
  failed=$((failed + 1)); echo "FAIL summary --per-rank: $(head -20 "$work/out")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
