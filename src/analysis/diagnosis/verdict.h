// The verdict of a diagnosis, its `status`: what the result means and why (DESIGN.md "Output contract").
// (Not core/status.h, which is the one error type.)
//  - "findings": at least one straggler or finding;
//  - "healthy": nothing reached the minimum effect AND the job was examined: at least 2 ranks and 2 steps
//    compared, collectives (or the op table's dependencies) matched, and nothing below makes the comparison
//    doubtful;
//  - "inconclusive": everything else that found nothing.
// Each check below yields a reason (a sentence a user can act on). A *blocking* reason means the job was
// not (fully) examined: it turns a result without findings into "inconclusive", and stands as a caveat
// beside findings. Checks, in the order they are reported:
//   problems found in the inputs while modelling them (duplicated or out-of-order step markers);
//   one rank; fewer than 2 steps common to every rank; nothing matched across ranks; inputs that disagree
//   on the world size; ranks of the world missing (or more inputs than the world size); inputs recorded
//   far apart in time (different runs); inputs left out by the loader; a large share of skipped events in an
//   input; clock alignment residuals large against the step; many collective calls without counterparts.
// Invariant: status is never "healthy" while a blocking reason exists; status_reasons is empty only when
// there is nothing to say.
#pragma once

#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/thresholds.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

/// Thresholds of the checks (shares are fractions, not percent); the defaults are in thresholds.h.
struct StatusLimits {
  double skipped_share = thresholds::kMaxSkippedShare;             // skipped events / all events of an input
  double unmatched_share = thresholds::kMaxUnmatchedShare;         // calls without counterpart / all calls
  double residual_step_share = thresholds::kMaxResidualStepShare;  // clock residual / median step time
  double apart_ns = thresholds::kRunsApartNs;                   // gap between two ranks' epoch spans meaning two runs
  double epoch_floor_ns = thresholds::kEpochFloorNs;            // timestamps at or above this are Unix-epoch based
  double unexplained_waste = thresholds::kMaxUnexplainedWaste;  // what-if loss no finding explains
};

/// Sets result->status and result->status_reasons from the store and the finished result.
void AssessStatus(const TraceStore& store, DiagnosisResult* result, const StatusLimits& limits = {});

/// The status of a diagnosis of Flight Recorder dumps alone (flight_recorder_findings.h): `findings` when it
/// has any, else `inconclusive` (the dumps tell hangs and mismatches, not stragglers: never `healthy`); the
/// reasons are its input problems, the inputs left out and its caveats, in that order.
void AssessFlightRecorderStatus(DiagnosisResult* result);

}  // namespace strata::diagnosis
