#!/usr/bin/env bash
# CI's rule that a skipped test is not a passed test: with CI=true a skipping GoogleTest (the unit tests'
# main, tests/unit/test_main.cc) and a skipping Python unittest (tests/run_unittests.py) fail; without it
# they pass as skipped.   usage: check_ci_skip_rule.sh STRATA_TESTS_BINARY
set -u
tests_bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
check() {  # NAME WANT_RC CMD...
  local name=$1 want=$2
  shift 2
  "$@" > "$work/log" 2>&1
  local rc=$?
  if [ "$rc" -eq "$want" ]; then echo "ok   $name"; else echo "FAIL $name: exit $rc, want $want"; tail -5 "$work/log"; failed=1; fi
}
check "gtest skip, CI=true: fails" 1 env CI=true STRATA_TEST_SKIP=1 "$tests_bin" --gtest_filter='CiSkipRule.*'
check "gtest skip, no CI: passes" 0 env -u CI STRATA_TEST_SKIP=1 "$tests_bin" --gtest_filter='CiSkipRule.*'
check "gtest no skip, CI=true: passes" 0 env -u STRATA_TEST_SKIP CI=true "$tests_bin" --gtest_filter='CiSkipRule.*'
mkdir -p "$work/py"
cat > "$work/py/test_skip.py" <<'PY'
import unittest
class T(unittest.TestCase):
    def test_skipped(self):
        self.skipTest("no device")
PY
check "unittest skip, CI=true: fails" 1 env CI=true /usr/bin/python3 "$root/tests/run_unittests.py" "$work/py"
check "unittest skip, no CI: passes" 0 env -u CI /usr/bin/python3 "$root/tests/run_unittests.py" "$work/py"
exit $failed
