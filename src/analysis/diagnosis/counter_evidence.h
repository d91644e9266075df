// Counter evidence (DESIGN.md, Diagnosis 8, from the trace's own counter tracks): refines the cause of a
// rank's finding by comparing that rank's host counters with its peers' over the finding's late steps. This
// file measures (each counter's mean on the rank and its peers' median); the rule that names the cause from
// those means is NameCause(CounterEvidence) in cause_choice.h:
//   - slow_compute / unknown + SM clock < 92 % of the peers' median         → thermal_throttling, and
//     one at least 3 % below it when that deficit accounts for half of the rank's device slowdown or more
//   - slow_compute / unknown + PCIe bytes > 1.5 x the peers' median          → pcie_pressure
//   - slow_communication / unknown + NIC bytes > 1.3 x the peers' median     → network_contention (foreign
//     traffic on its NIC; without it the slow link stays slow_communication)
// Counters are recognised by name (case-insensitive): "sm_clock"/"sm clock"/"clocks.sm" (SM clock),
// "pcie" (PCIe throughput), "nic"/"rdma"/"infiniband"/"net_" (network throughput). The mean of a rank's
// samples inside its step windows is compared; counters absent on the rank or all peers leave the cause
// as it is. The evidence (rank and peer means) is added to the finding.
// Judging and applying are apart, as for a recording (recording_judgement.h): JudgeWithCounters reads the
// findings and changes nothing; ApplyCounterJudgement is the one step where counters change a finding.
// Invariant: only findings with a rank, a "late_steps" evidence list and one of the causes above change;
// a cause is refined at most once; a judgement is applied to the findings it was judged from, once.
#pragma once

#include <cstddef>
#include <vector>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/result.h"
#include "model/step_windows.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

/// What the counters say about one finding: the rank's counters against its peers' and, when the rule names
/// a cause from them, that cause.
struct CounterRefinement {
  size_t finding = 0;  // its index among the findings judged
  std::vector<CounterComparison> counters;
  CauseChoice choice;  // names == false: the counters were compared and leave the cause as it is
};

/// One refinement per finding whose rank's counters could be compared with its peers', in finding order.
std::vector<CounterRefinement> JudgeWithCounters(const TraceStore& store, const model::StepModel& steps,
                                                 const std::vector<Finding>& findings);

/// Attaches each refinement's counters to its finding and, where it names a cause, sets it (keeping the cause
/// before in the evidence and the reason in the summary).
void ApplyCounterJudgement(std::vector<CounterRefinement> refinements, std::vector<Finding>* findings);

}  // namespace strata::diagnosis
