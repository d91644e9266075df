#!/usr/bin/env bash
# Quick start: installs what the tool needs (scripts/setup.sh --tool: no test, lab or benchmark packages),
# builds the `strata` binary alone in Release (no tests, no Python module) and runs it on the bundled example
# (a 2-rank PyTorch DDP job recorded on CPU with the profiler; rank 1 does extra compute each step): strata
# names rank 1, the cause (slow_compute), the culprit op and the time fixing it would save. scripts/test.sh
# later installs the rest and builds everything in the same folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
started=$SECONDS
bash "$root/scripts/setup.sh" --tool
STRATA_TARGETS=strata bash "$root/scripts/build.sh" "$root/build" Release -DSTRATA_BUILD_TESTS=OFF -DSTRATA_PYTHON=OFF -DSTRATA_UNITY=ON
echo
"$root/build/strata" diagnose "$root/examples/ddp-2rank-slow-compute"
echo
echo "(quick start: $((SECONDS - started)) s; build/strata is the binary, docs/usage.md the commands)"
