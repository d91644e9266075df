// A CPU trace's compute per step: what a rank did in its training steps besides waiting in collectives, so
// that `strata summary` can tell the ranks of a CPU-only job apart (their steps last alike: the collectives
// make the fast ranks wait for the slow one). For a rank with ProfilerStep#N slices on the CPU:
//   compute/step = mean over its steps of (step length - |union of its CPU collective ops inside the step|),
// the collective ops being model::IsCpuCollective's (gloo:, nccl:, mpi:, ucc:), which on a CPU backend block
// until every rank has arrived. A step of a GPU job ends with NCCL's enqueue-only calls, where this measures
// nothing useful: the summary uses it for ranks without GPU rows only.
// Invariant: 0 <= compute/step <= the mean step length.
#pragma once

#include <optional>

#include "store/trace_store.h"

namespace strata {

/// The rank's compute per step in ms, nullopt without ProfilerStep slices on the CPU.
std::optional<double> CpuComputePerStepMs(const TraceStore& store, const SliceRows& rows);

}  // namespace strata
