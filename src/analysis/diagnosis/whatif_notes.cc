// What-if consistency notes (see whatif_notes.h).
#include "analysis/diagnosis/whatif_notes.h"

#include <fmt/format.h>

#include <string>

#include "analysis/diagnosis/thresholds.h"

namespace strata::diagnosis {

namespace {

/// The by_rank key of a straggler: its rank (op tables too: by_rank restores one worker, keyed by its rank).
std::string ByRankKey(const Straggler& s) { return std::to_string(s.rank.value()); }

std::string Why(const DiagnosisResult& r) {
  if (r.whatif.model == WhatIfModel::kOpGraphReplay)
    return "for op tables by_rank restores one worker on the ideal, where its pipeline peers wait for it in "
           "a way the straggler's own stage may not; the finding's saving is the named worker's own";
  return "by_rank replays each rank's recorded compute between collectives with every rank starting each step "
         "together; that rank computes longer but started its steps earlier in the recorded job, so it made no "
         "one wait (a straggler that enters its steps late has its lateness removed with the launch delays); the "
         "findings' savings are measured on the recorded job";
}

}  // namespace

void ExplainWhatIf(DiagnosisResult* result) {
  DiagnosisResult& r = *result;
  if (!r.stragglers.empty() && !r.whatif.by_rank.empty()) {
    const Straggler& top = r.stragglers.front();
    if (const std::string key = ByRankKey(top); r.whatif.by_rank.count(key)) {
      const double own = r.whatif.by_rank.at(key);
      std::string above;
      double best = own;
      for (const auto& [k, v] : r.whatif.by_rank)
        if (k != key && v > best) best = v, above = k;
      if (!above.empty())
        r.notes.push_back(fmt::format("what-if by_rank puts {} {} ({:.4f}) above the straggler's {} ({:.4f}): {}",
                                      "rank", above, best, key, own, Why(r)));
    }
  }
  for (const auto& [rank, v] : r.whatif.by_rank)
    if (r.whatif.model == WhatIfModel::kPhaseReplay &&
        v > r.whatif.slowdown * (1.0 + thresholds::kNoteAboveSlowdownShare)) {
      r.notes.push_back(fmt::format(
          "what-if by_rank puts rank {} at {:.4f}, above S = {:.4f}: it restores that rank's recorded steps on "
          "the ideal, whose other ranks take each phase at its typical value in every step, above what they "
          "recorded in the steps where this rank's phase was short, so the replay loses what those steps "
          "gained",
          rank, v, r.whatif.slowdown));
      break;
    }
  if (r.whatif.model != WhatIfModel::kNone && r.whatif.slowdown < 1.0)
    r.notes.push_back(fmt::format(
        "what-if slowdown S = {:.4f} is below 1: the ideal replay takes each compute phase at its mean over all "
        "steps and ranks and each collective at its median transfer, and some recorded steps had faster "
        "transfers than that median; within that noise nothing is lost to stragglers",
        r.whatif.slowdown));
}

}  // namespace strata::diagnosis
