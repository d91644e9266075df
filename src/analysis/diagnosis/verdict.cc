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

/// Ends every reason that says the inputs are of different runs: comparing runs is `strata diff`'s job.
constexpr const char* kCompareRunsHint = " (to compare two runs: strata diff BASE TEST)";

/// How much a reason weighs: a caveat beside any verdict; blocking: never healthy; void: the comparison
/// itself cannot be trusted (inputs of different runs, timelines that do not line up, a replay of too little
/// of the job), so inconclusive even beside findings.
enum class Weight { kCaveat, kBlocking, kVoid };

Weight WeightOf(NoteEffect effect) {
  switch (effect) {
    case NoteEffect::kVoidsComparison:
      return Weight::kVoid;
    case NoteEffect::kBlocksHealthy:
      return Weight::kBlocking;
    case NoteEffect::kCaveatOnly:
      return Weight::kCaveat;
  }
  return Weight::kBlocking;
}

struct Reason {
  Weight weight = Weight::kCaveat;
  std::string text;
  bool blocking() const { return weight != Weight::kCaveat; }
};

class Checks {
 public:
  Checks(const TraceStore& store, const DiagnosisResult& result, const StatusLimits& limits)
      : store_(store), result_(result), limits_(limits) {}

  std::vector<Reason> Run() {
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
    return std::move(reasons_);
  }

 private:
  void Add(bool blocking, std::string text) {
    reasons_.push_back({blocking ? Weight::kBlocking : Weight::kCaveat, std::move(text)});
  }
  void Void(std::string text) { reasons_.push_back({Weight::kVoid, std::move(text)}); }

  // The path's verdict notes, each weighed as the table says (verdict_notes.h).
  void InputProblems() {
    for (const VerdictNote& n : result_.verdict_notes) reasons_.push_back({WeightOf(n.effect()), NoteText(n)});
  }

  // Never healthy while an op table's what-if loses much of the step and no finding says why. Op tables
  // only: the phase replay's ideal takes each phase at its mean while a step waits for the slowest rank, so
  // on a clean job its S grows with the rank count by jitter alone (1,024 generated clean ranks: S 1.50).
  void UnexplainedSlowdown() {
    if (result_.whatif.model != WhatIfModel::kOpGraphReplay || result_.whatif.slowdown <= 1.0) return;
    if (!result_.findings.empty() || !result_.stragglers.empty()) return;
    const double waste = 1.0 - 1.0 / result_.whatif.slowdown;
    if (waste <= limits_.unexplained_waste) return;
    Add(true, fmt::format("the what-if says steps take {:.2f}x the ideal step ({:.0f}% of each step lost) but no "
                          "finding explains it: nothing was late by the minimum effect on its own",
                          result_.whatif.slowdown, 100.0 * waste));
  }

  void RankCount() {
    if (result_.ranks < 2)
      Add(true, fmt::format("only {} rank was given: a straggler is found by comparing ranks with each other; "
                            "give the traces of at least 2 ranks of the job",
                            result_.ranks));
  }

  void StepCount() {
    if (result_.ranks < 2 || result_.steps.size() >= 2 || result_.unit == CompareUnit::kCollective) return;
    if (result_.steps.empty()) {
      Add(true,
          "no step is present on every rank: the ranks' traces cover different steps (or none), so nothing was "
          "compared; trace the same steps on every rank");
    } else {
      Add(true, fmt::format("only {} step is common to every rank: at least 2 are needed to tell a straggler from "
                            "noise; trace more steps",
                            result_.steps.size()));
    }
  }

  void Matched() {
    if (result_.ranks < 2 || result_.matched > 0) return;
    if (result_.collective_source == model::CollectiveSource::kOpTable)
      Add(true,
          "no step of the op table could be replayed through its dependency model, so the ranks were not "
          "compared (see the notes)");
    else
      Add(true,
          "no collective operation was matched across ranks, so the ranks could not be aligned or compared by "
          "arrival (a CPU-only trace without gloo:/nccl: ops, or traces of different jobs)");
  }

  void WorldSize() {
    std::map<int32_t, std::vector<int32_t>> ranks_by_world;  // world size -> ranks that state it
    for (const RankInfo& r : store_.ranks)
      if (r.world_size > 0) ranks_by_world[r.world_size].push_back(r.rank);
    if (ranks_by_world.size() > 1) {
      std::string says;
      for (const auto& [world, ranks] : ranks_by_world)
        says += fmt::format("{}{} says {}", says.empty() ? "" : ", ", RankList(ranks), world);
      Void(
          fmt::format("the inputs disagree on the world size ({}): they come from different runs, or files "
                      "of an earlier run are mixed in; give the files of one run{}",
                      says, kCompareRunsHint));
      return;
    }
    if (ranks_by_world.empty()) return;
    const int32_t world = ranks_by_world.begin()->first;
    const auto given = static_cast<int32_t>(store_.ranks.size());
    std::vector<int32_t> outside;
    for (const RankInfo& r : store_.ranks)
      if (r.rank >= world) outside.push_back(r.rank);
    if (!outside.empty()) {
      Void(fmt::format("{} outside the world size {} the traces state: the inputs are not of one run{}",
                       RankList(outside), world, kCompareRunsHint));
    } else if (given < world) {
      Add(true, fmt::format("{} of the job's {} ranks {} given (world size from the traces): {} not examined "
                            "and may hold the straggler",
                            given, world, given == 1 ? "was" : "were",
                            world - given == 1 ? std::string("the other one was")
                                               : fmt::format("the other {} were", world - given)));
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
    Void(
        fmt::format("the inputs were recorded at different times: rank {} ends {} before rank {} starts, so "
                    "they are not one run; give the files of one run{}",
                    store_.ranks[first_end].rank, Duration(gap), store_.ranks[last_start].rank, kCompareRunsHint));
  }

  void LeftOut() {
    for (const LeftOutInput& in : result_.left_out)
      Add(true, fmt::format("{} was left out ({}): its rank was not examined", in.path, in.reason));
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
      Add(true, fmt::format("{} of {} events of {} ({:.1f}%) were skipped (most: {} x{}): the result misses their "
                            "work; see the input's skipped counts",
                            skipped, skipped + in.events, in.path, 100.0 * static_cast<double>(skipped) / all,
                            top.first, top.second));
    }
  }

  // A part of an input read with reservations (a top-level member ignored, an export schema strata was not
  // tested on): a caveat naming the input, whatever else the result says.
  void InputMembers() {
    for (const InputInfo& in : store_.inputs)
      for (const SkipCounts::Entry& e : in.skipped.Entries())
        if (strata::Reason(e.id).scope == SkipScope::kInputMember)
          Add(false, fmt::format("{}: {} ({})", in.path, strata::Reason(e.id).description, e.key));
  }

  void ClockResidual() {
    const double step_us = result_.step_time_median_ms * 1000.0;
    if (step_us <= 0 || result_.clock_residual_us <= limits_.residual_step_share * step_us) return;
    Void(
        fmt::format("after clock alignment the ranks' collective completions still differ by {:.3f} ms "
                    "({:.0f}% of a step): the ranks' timelines do not line up (traces of different runs, "
                    "or collectives matched wrongly), so lateness cannot be trusted",
                    result_.clock_residual_us / 1000.0, 100.0 * result_.clock_residual_us / step_us));
  }

  void Unmatched() {
    const size_t unmatched = result_.unmatched_collective_calls;
    if (unmatched == 0) return;
    size_t calls = unmatched;
    // Matched instances hold about one call per rank.
    calls += result_.matched * static_cast<size_t>(std::max(1, result_.ranks));
    const double share = static_cast<double>(unmatched) / static_cast<double>(calls);
    Add(share > limits_.unmatched_share,
        fmt::format("{} collective calls ({:.0f}%) have no counterpart on some rank and were not compared", unmatched,
                    100.0 * share));
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
  std::vector<Reason> reasons_;
};

}  // namespace

void AssessStatus(const TraceStore& store, DiagnosisResult* result, const StatusLimits& limits) {
  const std::vector<Reason> reasons = Checks(store, *result, limits).Run();
  const bool blocked = std::any_of(reasons.begin(), reasons.end(), [](const Reason& r) { return r.blocking(); });
  const bool voided =
      std::any_of(reasons.begin(), reasons.end(), [](const Reason& r) { return r.weight == Weight::kVoid; });
  const bool found = !result->stragglers.empty() || !result->findings.empty() || result->findings_hidden > 0;
  result->status = voided    ? Verdict::kInconclusive
                   : found   ? Verdict::kFindings
                   : blocked ? Verdict::kInconclusive
                             : Verdict::kHealthy;
  result->status_reasons.clear();
  for (const Reason& r : reasons)
    if (r.weight == Weight::kVoid) result->status_reasons.push_back(r.text);
  for (const Reason& r : reasons)
    if (r.weight == Weight::kBlocking) result->status_reasons.push_back(r.text);
  for (const Reason& r : reasons)
    if (!r.blocking()) result->status_reasons.push_back(r.text);
  // Stragglers without a finding: none could be made (a named straggler's own finding is never hidden by
  // --min-effect, shown_findings.h). Said, so that "findings" with none listed is clear.
  if (result->findings.empty() && !result->stragglers.empty())
    result->status_reasons.push_back(
        fmt::format("{} straggler(s) (rank {} first) were late by the minimum effect in some steps, but no "
                    "finding could be made about them (cause not determined)",
                    result->stragglers.size(), result->stragglers.front().rank));
}

void AssessFlightRecorderStatus(DiagnosisResult* result) {
  result->status = result->findings.empty() ? Verdict::kInconclusive : Verdict::kFindings;
  result->status_reasons.clear();
  std::vector<std::string> problems = NoteTexts(result->verdict_notes, NoteEffect::kVoidsComparison);
  for (std::string& p : NoteTexts(result->verdict_notes, NoteEffect::kBlocksHealthy)) problems.push_back(std::move(p));
  if (result->findings.empty())
    result->status_reasons.push_back(
        problems.empty()
            ? "the Flight Recorder dumps show no hang and no mismatch: every operation they hold was completed by "
              "every rank of its group (dumps tell only those: give profiler traces or a recording to find "
              "stragglers)"
            : "the Flight Recorder dumps show no hang and no mismatch in what could be judged; the rest could not "
              "be judged:");
  for (std::string& p : problems) result->status_reasons.push_back(std::move(p));
  for (const LeftOutInput& in : result->left_out)
    result->status_reasons.push_back(
        fmt::format("{} was left out ({}): its rank was not examined", in.path, in.reason));
  for (std::string& c : NoteTexts(result->verdict_notes, NoteEffect::kCaveatOnly))
    result->status_reasons.push_back(std::move(c));
}

}  // namespace strata::diagnosis
