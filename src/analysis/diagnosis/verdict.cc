// The verdict (status) of a diagnosis (see verdict.h).
#include "analysis/diagnosis/verdict.h"

#include "core/skip_counts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace strata::diagnosis {

namespace {

/// The verdict's own checks of what was compared, in order; each adds an entry of the one table
/// (verdict_notes.h), after the paths' own entries, and the table's effect weighs it.
class Checks {
 public:
  Checks(const TraceStore& store, const DiagnosisResult& result, const StatusLimits& limits)
      : store_(store), result_(result), limits_(limits) {}

  std::vector<VerdictNote> Run() {
    InputProblems();
    RankCount();
    StepCount();
    Matched();
    WorldSize();
    TimeApart();
    LeftOut();
    Skipped();
    InputMembers();
    ClockResidual();
    Unmatched();
    UnexplainedSlowdown();
    return std::move(notes_);
  }

 private:
  void Add(NoteId id, std::vector<std::string> details = {}) { notes_.push_back({id, std::move(details)}); }

  // The path's verdict notes (verdict_notes.h).
  void InputProblems() {
    for (const VerdictNote& n : result_.verdict_notes) notes_.push_back(n);
  }

  // Never healthy while an op table's what-if loses much of the step and no finding says why. Op tables
  // only: the phase replay's ideal takes each phase at its mean while a step waits for the slowest rank, so
  // on a clean job its S grows with the rank count by jitter alone (1,024 generated clean ranks: S 1.50).
  void UnexplainedSlowdown() {
    if (result_.whatif.model != WhatIfModel::kOpGraphReplay || result_.whatif.slowdown <= 1.0) return;
    if (!result_.findings.empty() || !result_.stragglers.empty()) return;
    const double waste = 1.0 - 1.0 / result_.whatif.slowdown;
    if (waste <= limits_.unexplained_waste) return;
    Add(NoteId::kUnexplainedSlowdown,
        {fmt::format("{:.2f}", result_.whatif.slowdown), fmt::format("{:.0f}", 100.0 * waste)});
  }

  void RankCount() {
    if (result_.ranks < 2) Add(NoteId::kOneRankGiven, {std::to_string(result_.ranks)});
  }

  void StepCount() {
    if (result_.ranks < 2 || result_.steps.size() >= 2 || result_.unit == CompareUnit::kCollective) return;
    if (result_.steps.empty())
      Add(NoteId::kNoCommonStep);
    else
      Add(NoteId::kOneCommonStep, {std::to_string(result_.steps.size())});
  }

  void Matched() {
    if (result_.ranks < 2 || result_.matched > 0) return;
    Add(result_.collective_source == model::CollectiveSource::kOpTable ? NoteId::kNoReplayableStep
                                                                       : NoteId::kNoMatchedCollective);
  }

  void WorldSize() {
    std::map<int32_t, std::vector<int32_t>> ranks_by_world;  // world size -> ranks that state it
    for (const RankInfo& r : store_.ranks)
      if (r.world_size > 0) ranks_by_world[r.world_size].push_back(r.rank);
    if (ranks_by_world.size() > 1) {
      std::string says;
      for (const auto& [world, ranks] : ranks_by_world)
        says += fmt::format("{}{} says {}", says.empty() ? "" : ", ", RankList(ranks), world);
      Add(NoteId::kWorldSizesDisagree, {says});
      return;
    }
    if (ranks_by_world.empty()) return;
    const int32_t world = ranks_by_world.begin()->first;
    const auto given = static_cast<int32_t>(store_.ranks.size());
    std::vector<int32_t> outside;
    for (const RankInfo& r : store_.ranks)
      if (r.rank >= world) outside.push_back(r.rank);
    if (!outside.empty()) {
      Add(NoteId::kRanksOutsideWorld, {RankList(outside), std::to_string(world)});
    } else if (given < world) {
      Add(NoteId::kRanksNotGiven,
          {std::to_string(given), std::to_string(world), given == 1 ? "was" : "were",
           world - given == 1 ? std::string("the other one was") : fmt::format("the other {} were", world - given)});
    }
  }

  void TimeApart() {
    // Each rank's span on its own clock; only Unix-epoch clocks can be compared across files.
    std::vector<std::pair<int64_t, int64_t>> span(
        store_.ranks.size(), {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
    const SliceTable& s = store_.slices;
    for (size_t row = 0; row < s.size(); ++row) {
      auto& [lo, hi] = span[store_.track(s.track[row]).rank];
      lo = std::min(lo, s.ts_ns[row]);
      hi = std::max(hi, s.ts_ns[row] + std::max<int64_t>(0, s.dur_ns[row]));
    }
    size_t first_end = SIZE_MAX, last_start = SIZE_MAX;
    for (size_t r = 0; r < span.size(); ++r) {
      if (span[r].first > span[r].second) continue;
      if (static_cast<double>(span[r].first) < limits_.epoch_floor_ns) return;
      if (first_end == SIZE_MAX || span[r].second < span[first_end].second) first_end = r;
      if (last_start == SIZE_MAX || span[r].first > span[last_start].first) last_start = r;
    }
    if (first_end == SIZE_MAX) return;
    const double gap = static_cast<double>(span[last_start].first) - static_cast<double>(span[first_end].second);
    if (gap <= limits_.apart_ns) return;
    Add(NoteId::kRecordedApart,
        {std::to_string(store_.ranks[first_end].rank), Duration(gap), std::to_string(store_.ranks[last_start].rank)});
  }

  void LeftOut() {
    for (const LeftOutInput& in : result_.left_out) Add(NoteId::kInputLeftOut, {in.path, in.reason});
  }

  void Skipped() {
    for (const InputInfo& in : store_.inputs) {
      uint64_t skipped = 0;
      std::pair<std::string, uint64_t> top{"", 0};
      for (const SkipCounts::Entry& e : in.skipped.Entries()) {
        // Expected, harmless skips (info in the skip-reason table: an event kind strata does not use, a
        // duplicated row) miss no work; only counts of events compare with the input's events.
        const SkipReason& row = strata::Reason(e.id);
        if (row.severity == SkipSeverity::kInfo || row.scope != SkipScope::kEvent) continue;
        skipped += e.n;
        if (e.n > top.second) top = {e.key, e.n};
      }
      const double all = static_cast<double>(skipped + in.events);
      if (skipped == 0 || static_cast<double>(skipped) <= limits_.skipped_share * all) continue;
      Add(NoteId::kEventsSkipped,
          {std::to_string(skipped), std::to_string(skipped + in.events), in.path,
           fmt::format("{:.1f}", 100.0 * static_cast<double>(skipped) / all), top.first, std::to_string(top.second)});
    }
  }

  // A part of an input read with reservations (a top-level member ignored, an export schema strata was not
  // tested on): a caveat naming the input, whatever else the result says.
  void InputMembers() {
    for (const InputInfo& in : store_.inputs)
      for (const SkipCounts::Entry& e : in.skipped.Entries())
        if (strata::Reason(e.id).scope == SkipScope::kInputMember)
          Add(NoteId::kInputMemberIgnored, {in.path, std::string(strata::Reason(e.id).description), e.key});
  }

  void ClockResidual() {
    const double step_us = result_.step_time_median_ms * 1000.0;
    if (step_us <= 0 || result_.clock_residual_us <= limits_.residual_step_share * step_us) return;
    Add(NoteId::kClocksDoNotLineUp, {fmt::format("{:.3f}", result_.clock_residual_us / 1000.0),
                                     fmt::format("{:.0f}", 100.0 * result_.clock_residual_us / step_us)});
  }

  void Unmatched() {
    const size_t unmatched = result_.unmatched_collective_calls;
    if (unmatched == 0) return;
    size_t calls = unmatched;
    // Matched instances hold about one call per rank.
    calls += result_.matched * static_cast<size_t>(std::max(1, result_.ranks));
    const double share = static_cast<double>(unmatched) / static_cast<double>(calls);
    Add(share > limits_.unmatched_share ? NoteId::kManyUnmatchedCollectives : NoteId::kUnmatchedCollectives,
        {std::to_string(unmatched), fmt::format("{:.0f}", 100.0 * share)});
  }

  static std::string RankList(const std::vector<int32_t>& ranks) {
    std::string s = ranks.size() == 1 ? "rank " : "ranks ";
    for (size_t i = 0; i < ranks.size() && i < 8; ++i) s += fmt::format("{}{}", i ? "," : "", ranks[i]);
    if (ranks.size() > 8) s += fmt::format(",... ({} ranks)", ranks.size());
    return s;
  }

  static std::string Duration(double ns) {
    const double s = ns / 1e9;
    if (s >= 86400) return fmt::format("{:.1f} days", s / 86400);
    if (s >= 3600) return fmt::format("{:.1f} hours", s / 3600);
    if (s >= 60) return fmt::format("{:.1f} minutes", s / 60);
    return fmt::format("{:.1f} s", s);
  }

  const TraceStore& store_;
  const DiagnosisResult& result_;
  const StatusLimits& limits_;
  std::vector<VerdictNote> notes_;
};

}  // namespace

void AssessStatus(const TraceStore& store, DiagnosisResult* result, const StatusLimits& limits) {
  std::vector<VerdictNote> notes = Checks(store, *result, limits).Run();
  auto any = [&](NoteEffect effect) {
    return std::any_of(notes.begin(), notes.end(), [&](const VerdictNote& n) { return n.effect() == effect; });
  };
  const bool voided = any(NoteEffect::kVoidsComparison);
  const bool blocked = voided || any(NoteEffect::kBlocksHealthy);
  const bool found = !result->stragglers.empty() || !result->findings.empty() || result->findings_hidden > 0;
  result->status = voided    ? Verdict::kInconclusive
                   : found   ? Verdict::kFindings
                   : blocked ? Verdict::kInconclusive
                             : Verdict::kHealthy;
  // Stragglers without a finding: none could be made (a named straggler's own finding is never hidden by
  // --min-effect, shown_findings.h). Said, so that "findings" with none listed is clear.
  if (result->findings.empty() && !result->stragglers.empty())
    notes.push_back(
        {NoteId::kStragglersWithoutFinding,
         {std::to_string(result->stragglers.size()), std::to_string(result->stragglers.front().rank.value())}});
  result->status_reasons.clear();
  for (const NoteEffect effect : {NoteEffect::kVoidsComparison, NoteEffect::kBlocksHealthy, NoteEffect::kCaveatOnly})
    for (std::string& text : NoteTexts(notes, effect)) result->status_reasons.push_back(std::move(text));
}

void AssessFlightRecorderStatus(DiagnosisResult* result) {
  result->status = result->findings.empty() ? Verdict::kInconclusive : Verdict::kFindings;
  result->status_reasons.clear();
  std::vector<VerdictNote> problems;
  for (const NoteEffect effect : {NoteEffect::kVoidsComparison, NoteEffect::kBlocksHealthy})
    for (const VerdictNote& n : result->verdict_notes)
      if (n.effect() == effect) problems.push_back(n);
  if (result->findings.empty())
    problems.insert(problems.begin(), {problems.empty() ? NoteId::kDumpsShowNoStop : NoteId::kDumpsPartlyJudged, {}});
  for (const LeftOutInput& in : result->left_out) problems.push_back({NoteId::kInputLeftOut, {in.path, in.reason}});
  for (const VerdictNote& n : result->verdict_notes)
    if (n.effect() == NoteEffect::kCaveatOnly) problems.push_back(n);
  for (const VerdictNote& n : problems) result->status_reasons.push_back(NoteText(n));
}

}  // namespace strata::diagnosis
