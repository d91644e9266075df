#!/usr/bin/env bash
# What strata guarantees about its output and inputs when run as root on a shared machine (docs/security.md),
# checked for real: as root, with files planted by an unprivileged user (setpriv --reuid=nobody) in a
# world-writable sticky directory, on temporary files and device nodes made here (never the machine's own).
#   usage: check_output_safety.sh STRATA_BINARY      (exit 77 = skipped: not root; 1 under CI=true)
set -u
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
  echo "output safety: SKIPPED: needs root and setpriv"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 1777 "$work"
example="$root/examples/ddp-2rank-slow-compute"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

# 1. A symlink planted at the output name by another user: replaced by the report, its target untouched.
echo "root's secret" > "$work/secret" && chmod 600 "$work/secret"
as_nobody ln -s "$work/secret" "$work/report.json"
"$bin" diagnose --format json -o "$work/report.json" "$example" > /dev/null 2>&1
check "planted symlink: its target is untouched" '[ "$(cat "$work/secret")" = "root'"'"'s secret" ]'
check "planted symlink: replaced by a regular report" '[ -f "$work/report.json" ] && [ ! -L "$work/report.json" ] && grep -q strata.diagnosis "$work/report.json"'

# 2. A device node as the output (our own /dev/null twin): written, never replaced by a file.
mknod "$work/null" c 1 3 && chmod 666 "$work/null"
"$bin" diagnose -o "$work/null" "$example" > /dev/null 2>&1
check "-o a device: still a character device" '[ -c "$work/null" ]'

# 3. Another user's symlink to a device in a shared directory: refused.
as_nobody ln -s "$work/null" "$work/to-device"
"$bin" diagnose -o "$work/to-device" "$example" > /dev/null 2> "$work/err"
rc=$?
check "another user's symlink to a device: refused" '[ "$rc" -eq 1 ] && grep -q "owned by another user" "$work/err"'

# 4. A FIFO: the reader gets the report.
mkfifo "$work/fifo"
cat "$work/fifo" > "$work/from-fifo" &
reader=$!
timeout 60 "$bin" diagnose -o "$work/fifo" "$example" > /dev/null 2>&1
wait "$reader"
check "-o a FIFO: the reader gets the report" 'grep -q "^verdict:" "$work/from-fifo"'

# 5. An existing 0600 report stays 0600.
echo old > "$work/private.txt" && chmod 600 "$work/private.txt"
"$bin" diagnose -o "$work/private.txt" "$example" > /dev/null 2>&1
check "existing output keeps its mode" '[ "$(stat -c %a "$work/private.txt")" = 600 ] && grep -q "^verdict:" "$work/private.txt"'

# 6. -o naming one of the inputs: refused, the input intact.
mkdir "$work/job" && cp "$example"/rank-*.json.gz "$work/job/"
before=$(md5sum "$work/job/rank-0.json.gz")
"$bin" diagnose -o "$work/job/rank-0.json.gz" "$work/job" > /dev/null 2> "$work/err"
rc=$?
check "-o an input: refused (a usage error)" '[ "$rc" -eq 2 ] && grep -q "that is one of the inputs" "$work/err"'
check "-o an input: the input is intact" '[ "$(md5sum "$work/job/rank-0.json.gz")" = "$before" ]'

# 7. Write errors are errors: standard output on a full device.
"$bin" summary "$example" > /dev/full 2> "$work/err"
rc=$?
check "stdout on /dev/full: exit 1 with a message" '[ "$rc" -eq 1 ] && grep -q "cannot write to standard output" "$work/err"'

# 8. No temporary is left behind.
check "no temporary files left" '[ -z "$(find "$work" -name ".*.strata-*")" ]'

# 9. A subdirectory the user cannot list is named, not silently skipped; --skip-unreadable lists it.
mkdir -p "$work/run/hidden" && cp "$example"/rank-*.json.gz "$work/run/" && chmod 000 "$work/run/hidden"
chmod 755 "$work/run"
as_nobody "$bin" diagnose "$work/run" > /dev/null 2> "$work/err"
rc=$?
check "unlistable subdirectory: an error naming it" '[ "$rc" -eq 1 ] && grep -q "run/hidden: cannot list directory" "$work/err"'
as_nobody "$bin" diagnose --skip-unreadable --format json "$work/run" > "$work/out.json" 2> /dev/null
check "--skip-unreadable: listed among the inputs, not healthy" \
  'grep -q "\"format\": \"unreadable\"" "$work/out.json" && ! grep -q "\"status\": \"healthy\"" "$work/out.json"'

# 10. Invalid UTF-8 and control characters in paths: JSON stays valid, text stays inert.
bad_dir="$work/$(printf 'bad\xff\x1b[2Kdir')"
mkdir "$bad_dir" && cp "$example"/rank-*.json.gz "$bad_dir/"
"$bin" diagnose --format json "$bad_dir" > "$work/bad.json" 2> "$work/err"
rc=$?
check "invalid UTF-8 path: JSON output" '[ "$rc" -eq 0 ] && /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$work/bad.json"'
"$bin" summary "$bad_dir" > "$work/bad.txt" 2>&1
check "control characters in a path: no ESC in the text output" '! grep -q "$(printf "\x1b")" "$work/bad.txt"'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
