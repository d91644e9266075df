// Which ranks changed unlike the rest between two runs (`strata diff --all-ranks`). Each rank selected in
// both runs (matched by rank number) is measured in both: its step time and its total time in each kind of
// row (GPU kernels by type, CPU rows by category, as the run diff groups them). For every measure, a rank's
// change (test − base) differs from the rest when it is more than kRankChangeZ scaled MADs (1.4826 · MAD, the σ
// of a normal sample) and more than kRankChangeShare of the median base step time away from the median change
// over the ranks: robust to the outlier itself, and deaf to differences too small to matter. A slow rank often
// shows in a kind, not in its step time: its peers wait for it inside collectives, so every step grows alike
// while the slow rank waits less.
// With exactly 2 ranks there is no robust rest: each op or kernel name is compared instead, and a rank differs
// in a name when its change there exceeds the same floor while the other rank's is at most kTwoRankOtherShare
// of it (waits in collectives and the step rows are left out: name_us holds neither).
// Invariants: ranks ascending; `differs` only with 2 or at least kMinRanksToCompare ranks; a differing rank
// names the measure it differs most in.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnosis/thresholds.h"

namespace strata::diff {

// Its thresholds live with every other in analysis/diagnosis/thresholds.h ("run diff").
using diagnosis::thresholds::kMinRanksToCompare;
using diagnosis::thresholds::kRankChangeShare;
using diagnosis::thresholds::kRankChangeZ;
using diagnosis::thresholds::kTwoRankOtherShare;

/// What one run's selection holds of one rank.
struct RankTotals {
  uint64_t step_rows = 0;
  double step_time_us = 0;                // mean duration of its selected ProfilerStep CPU rows
  std::map<std::string, double> kind_us;  // total time of its selected rows by kind
  std::map<std::string, double> name_us;  // by op/kernel name, waits left out (filled when 2 ranks are selected)
};

/// Rows whose time says nothing of what a rank itself did: collective calls and communication kernels (the
/// waiting rank's time grows there) and the ProfilerStep rows (each step's own name).
bool IsWaitOrStepRow(std::string_view name);
using RankTotalsByRank = std::map<int32_t, RankTotals>;  // by rank number

struct RankChange {
  int32_t rank = -1;
  double base_step_time_us = 0;
  double test_step_time_us = 0;
  double change_us() const { return test_step_time_us - base_step_time_us; }
  bool differs = false;
  std::string measure;           // when it differs: "step time" or the kind it differs most in
  double measure_change_us = 0;  // that measure's change on this rank
  double measure_median_us = 0;  // the median change of that measure over the ranks (2 ranks: the other's)
};

/// The ranks with a step time in both runs, each with its change and whether it differs from the rest.
std::vector<RankChange> CompareRanks(const RankTotalsByRank& base, const RankTotalsByRank& test);

}  // namespace strata::diff
