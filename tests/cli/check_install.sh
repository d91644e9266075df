#!/usr/bin/env bash
# Install and packaging (issue 14): `cmake --install` puts the binary, the NCCL profiler plugin, the man page
# (one section per subcommand the binary has), the bash completion and the agent's systemd unit (ExecStart
# naming the installed binary) and the Python module (importable by the system's python3) under the prefix;
# `cpack -G DEB` makes a .deb of the same files under /usr whose binary runs and whose module imports; the tool configures without gtest and Google Benchmark when tests are off.
# usage: check_install.sh SOURCE_DIR BUILD_DIR python|no-python
# (no-python: a build without the module, as the sanitizer build, where STRATA_PYTHON is off: the module must
# then be absent from the prefix and the .deb, not silently half-installed.)
set -euo pipefail
usage="usage: check_install.sh SOURCE_DIR BUILD_DIR python|no-python"
src=${1:?$usage}
build=${2:?$usage}
python=${3:?$usage}
[ "$python" = python ] || [ "$python" = no-python ] || { echo "$usage" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/strata lib/strata/libstrata_nccl_profiler.so share/man/man1/strata.1.gz \
         share/bash-completion/completions/strata lib/systemd/system/strata-agent.service \
         lib/systemd/system/strata-serve.service; do
  [ -s "$prefix/$f" ] || fail "cmake --install did not install $f"
done
# (Outputs are read whole before grep -q: with pipefail, a writer cut off by grep's early exit fails the pipe.)
version=$("$prefix/bin/strata" --version)
[[ $version == "strata "* ]] || fail "the installed binary does not run"
grep -qx "ExecStart=$prefix/bin/strata agent .*" <(grep '^ExecStart=' "$prefix/lib/systemd/system/strata-agent.service") \
  || fail "the unit's ExecStart does not name the installed binary"
grep -q "^ExecStart=$prefix/bin/strata serve" "$prefix/lib/systemd/system/strata-serve.service" \
  || fail "the serve unit's ExecStart does not name the installed binary"

# The Python module, where the system's python3 reads modules under this prefix (lib/python3.X/dist-packages;
# lib/python3/dist-packages under /usr), imports from there and diagnoses the bundled example.
check_python_module() {  # DIST_PACKAGES_DIR
  if [ "$python" = no-python ]; then
    [ ! -e "$1/strata" ] || fail "a build without the Python module installed $1/strata"
    return 0
  fi
  [ -s "$1/strata/__init__.py" ] && ls "$1"/strata/_strata*.so >/dev/null 2>&1 \
    || fail "no Python package strata (with _strata*.so) in $1"
  got=$(cd "$src" && PYTHONPATH="$1" /usr/bin/python3 -c 'import strata; print(strata.__file__); print(strata.diagnose("examples/ddp-2rank-slow-compute").stragglers["rank"].tolist())')
  [ "$got" = "$1/strata/__init__.py"$'\n'"[1]" ] || fail "the Python module in $1 gave: $got"
}
pyver=$(/usr/bin/python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
check_python_module "$prefix/lib/python$pyver/dist-packages"

# The man page has a section for every subcommand of the installed binary's --help.
subs=$("$prefix/bin/strata" --help | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1}')
[ -n "$subs" ] || fail "no subcommands in --help"
page=$(zcat "$prefix/share/man/man1/strata.1.gz")
for sub in $subs; do
  grep -qx ".SH \"strata $sub\"" <<<"$page" || fail "man page lacks strata $sub"
done
rendered=$(man -l "$prefix/share/man/man1/strata.1.gz" 2>/dev/null)
grep -q 'SYNOPSIS' <<<"$rendered" || fail "man cannot render the page"

# Completion: subcommands, then a subcommand's options, from the installed binary.
got=$(bash -c "source '$prefix/share/bash-completion/completions/strata'
  COMP_WORDS=('$prefix/bin/strata' dia); COMP_CWORD=1; _strata; echo \"\${COMPREPLY[*]}\"
  COMP_WORDS=('$prefix/bin/strata' diagnose --for); COMP_CWORD=2; _strata; echo \"\${COMPREPLY[*]}\"")
[ "$got" = $'diagnose\n--format' ] || fail "completion gave: $got"

# The .deb: the same files under /usr, a binary that runs, its unit naming /usr/bin/strata.
(cd "$build" && cpack -G DEB -B "$tmp/pkg" >/dev/null)
deb=$(ls "$tmp"/pkg/strata_*.deb)
[ "$(dpkg-deb -f "$deb" Package)" = strata ] || fail "the .deb is not named strata"
[[ $(dpkg-deb -f "$deb" Depends) == *libbpf* ]] || fail "the .deb's dependencies were not found (dpkg-shlibdeps)"
dpkg-deb -x "$deb" "$tmp/deb"
version=$("$tmp/deb/usr/bin/strata" --version)
[[ $version == "strata "* ]] || fail "the packaged binary does not run"
grep -q '^ExecStart=/usr/bin/strata agent' "$tmp/deb/usr/lib/systemd/system/strata-agent.service" \
  || fail "the packaged unit does not name /usr/bin/strata"
[ -s "$tmp/deb/usr/lib/strata/libstrata_nccl_profiler.so" ] || fail "the .deb lacks the NCCL profiler plugin"
check_python_module "$tmp/deb/usr/lib/python3/dist-packages"
if [ "$python" = python ]; then
  [[ $(dpkg-deb -f "$deb" Recommends) == *python3-pandas* ]] || fail "the .deb does not recommend python3-pandas"
fi

# Tests off: configures without gtest and Google Benchmark, and has no test targets.
cmake -S "$src" -B "$tmp/notests" -G Ninja -DSTRATA_BUILD_TESTS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON >/dev/null \
  || fail "configuring with -DSTRATA_BUILD_TESTS=OFF needs gtest or benchmark"
targets=$(ninja -C "$tmp/notests" -t targets all)
grep -q '^strata:' <<<"$targets" || fail "no strata target with tests off"
if grep -q '^strata_tests:' <<<"$targets"; then fail "strata_tests built with tests off"; fi
echo "install: ok (prefix, .deb, Python module: $python, man page with $(wc -w <<<"$subs") subcommands, completion, tests-off configure)"
