#!/usr/bin/env bash
# Configures and builds strata. usage: scripts/build.sh [BUILD_DIR] [CMAKE_BUILD_TYPE] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
type=${2:-Release}
shift $(( $# > 2 ? 2 : $# ))
# The compiler: clang for C and C++ unless CC/CXX name another. The tool needs clang anyway (its BPF program), so
# the quick start installs one compiler, not two; and it compiles this tree faster: the `strata` target cold in
# 143 s wall against g++ 12's 180 s (Release, unity, 2 cores, the same quiet machine, 2026-12-05). Given to
# CMake by full path on every run, so that a folder configured with another compiler is configured anew (below)
# rather than silently keeping the old one.
CC=$(command -v "${CC:-clang}") || { echo "build.sh: no C compiler '${CC:-clang}' (scripts/setup.sh installs clang)" >&2; exit 1; }
CXX=$(command -v "${CXX:-clang++}") || { echo "build.sh: no C++ compiler '${CXX:-clang++}' (scripts/setup.sh installs clang)" >&2; exit 1; }
export CC CXX
compilers=(-DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX")
# ccache (when installed; scripts/setup.sh installs it) keeps every object compiled on this machine, so a build
# of the same sources in another clone or build folder (CI's fresh clone, the three configurations below)
# compiles only what changed. Paths are hashed relative to the source root, not the folder, for that.
launcher=()
if command -v ccache >/dev/null 2>&1 && [ "${STRATA_CCACHE:-1}" != 0 ]; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-12G}"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# One build of a folder at a time: a second build of the same folder (another shell, a test) waits for the
# first instead of racing it over the same objects.
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
# A folder configured with another compiler starts afresh: CMake would drop its cache itself, but then configure
# without this run's -D options (a unity build would come out per file).
cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt" 2>/dev/null || true)
if [ -n "$cached" ] && [ "$cached" != "$CXX" ]; then
  echo "build.sh: $dir was configured with $cached; configuring it anew for $CXX"
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
fi
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "${compilers[@]}" "${launcher[@]}" "$@" > "$dir.cmake.log" 2>&1 || { cat "$dir.cmake.log"; exit 1; }
# As many compilers at once as the machine has cores (STRATA_JOBS overrides), not Ninja's default of cores + 2:
# the tool's unity units are large, and four of them on this project's 2-core machine took 11-17 % more CPU
# and 10-27 s more wall time than two (cold `strata` target, three alternating pairs: docs/benchmarks.md).
jobs=${STRATA_JOBS:-$(nproc)}
# STRATA_TARGETS: build only these targets (default: all).
# shellcheck disable=SC2086
ninja -j "$jobs" -C "$dir" ${STRATA_TARGETS:-}
