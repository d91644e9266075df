#!/usr/bin/env bash
# Quick start: installs the dependencies, builds strata in Release and runs it on the bundled example
# (a 2-rank PyTorch DDP job recorded on CPU with the profiler; rank 1 does extra compute each step):
# strata names rank 1, the cause (slow_compute), the culprit op and the time fixing it would save.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" "$root/build" Release
echo
"$root/build/strata" diagnose "$root/examples/ddp-2rank-slow-compute"
