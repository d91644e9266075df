// A pipeline stage's excess over the other stages: the one statistic of `stage_imbalance` (issue 50 item 4),
// used by the op-table path (op_table_diagnosis: compute loads per dp rank and stage) and the grouped path
// (group_diagnosis: each rank's self time outside collectives), which only choose the work they measure.
//
// Definition, for one step, with work[s][k] the work of member k of stage s (ns):
//   - a stage's work is the mean of its members' (the work it holds per replica);
//   - the balanced level is the mean of the stages' works: what each stage would do with the work split evenly;
//   - a stage's excess is max(0, its work − the balanced level); a member's excess is max(0, the member's work −
//     the same level), so the part of a stage's excess that every member shows is its weakest member's.
// Over the steps, a stage's saving is the mean over the steps of its excess as a share of that step's time.
// Means, not the peers' median of peer_difference.h: this is not a rank against its peers but the work a
// stage holds beyond an even split, and balancing conserves the work: with two stages of 30 and 10 ms, moving
// work evens them at 20, saving 10 ms (the other stage's median, 10, would claim 20 ms, and on the OSDI'25
// SE table it ranked the long last stage above the sequence-length imbalance the table was made with).
// Invariants: every excess is >= 0; all are 0 when every stage does equal work; relabelling the stages permutes
// the excesses alike; a stage's excess never exceeds its lead over the fastest other stage nor its own work (a
// saving never exceeds the lateness it removes), and a stage's saving is at most 1 when its work fits in its step.
#pragma once

#include <cstddef>
#include <vector>

namespace strata::diagnosis {

/// One step's work (ns): [stage][member]. A stage without members does no work (0).
using StageWork = std::vector<std::vector<double>>;

/// One step's excesses (ns), as defined above: per stage, and per stage and member (shaped as the work).
struct StepStageExcess {
  std::vector<double> stage;
  std::vector<std::vector<double>> member;
};

/// The excesses of one step's stages. With fewer than two stages every excess is 0. O(S·M).
StepStageExcess MeasureStageExcess(const StageWork& work);

/// A stage's saving: the mean over the steps of excess_ns[i] / step_ns[i], a step without a positive time counting
/// as 0 (0 without steps). `excess_ns` and `step_ns` have one value per step.
double MeanShareOfStep(const std::vector<double>& excess_ns, const std::vector<double>& step_ns);

/// The part of a stage's excess that every member of it shows, the evidence that a stage and not one rank in it is
/// slow (stage_imbalance's confidence: ExplainedShare(weakest, strongest), cause_choice.h), in both paths: each
/// member's excess (above) summed over the steps, the smallest and the largest. Both 0 without members.
struct MemberSpread {
  double weakest = 0, strongest = 0;
};
MemberSpread SpreadOfMembers(const std::vector<double>& member_excess_sums);

}  // namespace strata::diagnosis
