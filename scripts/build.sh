#!/usr/bin/env bash
# Configures and builds strata. usage: scripts/build.sh [BUILD_DIR] [CMAKE_BUILD_TYPE] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
type=${2:-Release}
shift $(( $# > 2 ? 2 : $# ))
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
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "${launcher[@]}" "$@" > "$dir.cmake.log" 2>&1 || { cat "$dir.cmake.log"; exit 1; }
# STRATA_TARGETS: build only these targets (default: all).
# shellcheck disable=SC2086
ninja -C "$dir" ${STRATA_TARGETS:-}
