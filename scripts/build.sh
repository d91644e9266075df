#!/usr/bin/env bash
# Configures and builds strata. usage: scripts/build.sh [BUILD_DIR] [CMAKE_BUILD_TYPE] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
type=${2:-Release}
shift $(( $# > 2 ? 2 : $# ))
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@" > "$dir.cmake.log" 2>&1 || { cat "$dir.cmake.log"; exit 1; }
# STRATA_TARGETS: build only these targets (default: all).
# shellcheck disable=SC2086
ninja -C "$dir" ${STRATA_TARGETS:-}
