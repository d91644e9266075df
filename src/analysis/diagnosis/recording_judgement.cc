// The one step where a recording changes a result (see recording_judgement.h).
#include "analysis/diagnosis/recording_judgement.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "analysis/diagnosis/impact.h"
#include "core/round.h"

namespace strata::diagnosis {
namespace {

/// Puts `f` before the first finding of smaller impact.
void InsertByImpact(Finding f, std::vector<Finding>* findings) {
  auto at = std::find_if(findings->begin(), findings->end(),
                         [&](const Finding& other) { return other.impact_pct < f.impact_pct; });
  findings->insert(at, std::move(f));
}

/// The one lateness figure of a rank, as a share of the step: the straggler's (what its peers wait) when the
/// rank is one; else the recording's own measure (`recorded`).
double RankLateShare(const DiagnosisResult& result, RankNumber rank, double recorded) {
  for (const Straggler& s : result.stragglers)
    if (s.rank == rank && s.score > 0) return s.score;
  return recorded;
}

/// A second cause of the straggler's lateness beside the cause of its finding (`first`, in `findings`): a
/// finding of its own, with what fixing the rank saves (its first finding's saving, at most the rank's lateness
/// `late_share`: impact.h) split between the two in proportion to the share of the lateness each explains (a
/// named cause explains at least kMinExplainedShare, which a finding whose confidence was not measured is taken
/// to); both are placed anew by impact.
void AddSecondCause(RankNumber rank, const CauseChoice& second, double late_share, const Finding* first,
                    std::vector<Finding>* findings) {
  if (!second.names) return;
  const double weight = std::max(first->confidence, kMinExplainedShare) + second.explained;
  Finding primary = *first;
  findings->erase(findings->begin() + (first - findings->data()));
  Finding f;
  f.rank = rank;
  f.ranks = {rank};
  SetCause(second, &f);
  const double whole = std::min(primary.impact_pct, RoundTo(100 * late_share, 2));
  const double before = primary.impact_pct;
  primary.impact_pct = RoundTo(whole * (weight - second.explained) / weight, 2);  // rounded first: ties keep it first
  f.impact_pct = RoundTo(whole - primary.impact_pct, 2);
  primary.summary = RestateSaving(std::move(primary.summary), before, primary.impact_pct);
  f.summary = fmt::format("rank {}'s lateness has a second cause beside {}: {} ({:.0f} % of the lateness)", rank,
                          CauseName(primary.cause), second.why, 100 * second.explained);
  f.evidence.cross_layer = primary.evidence.cross_layer;
  InsertByImpact(std::move(primary), findings);
  InsertByImpact(std::move(f), findings);
}

/// Attaches the comparison to the finding about the straggler (made when the traces had none and the
/// recording names a cause) and, when the recording names a cause, sets it with the recording's reason.
void AttachEvidence(RecordingJudgement::StragglerEvidence e, DiagnosisResult* result) {
  Finding* finding = FindingOfRank(result->findings, e.rank);
  const bool seen_in_trace = finding != nullptr;
  if (!seen_in_trace) {
    if (!e.choice.names) return;
    Finding f;
    f.rank = e.rank;
    f.ranks = {e.rank};
    f.impact_pct = RoundTo(100 * e.late_share, 2);
    result->findings.push_back(std::move(f));
    finding = &result->findings.back();
  }
  finding->evidence.cross_layer = std::move(e.comparison);
  const double late_share = RankLateShare(*result, e.rank, e.late_share);
  if (!e.choice.names) return AddSecondCause(e.rank, e.second, late_share, finding, &result->findings);
  const std::string_view trace_cause = seen_in_trace ? CauseName(finding->cause) : "not seen";
  SetCause(e.choice, finding);
  finding->summary = fmt::format("rank {} is late by {:.1f} % of the step: {} ({} in the trace)", e.rank,
                                 100 * late_share, e.choice.why, trace_cause);
  AddSecondCause(e.rank, e.second, late_share, finding, &result->findings);
}

/// Ranks slowed alike first among the stragglers; data imbalance, the verdict for lateness that no rank
/// owns, is withdrawn: these ranks own it.
void AddCpuSlowed(RecordingJudgement::AddedStragglers added, DiagnosisResult* result) {
  result->stragglers.insert(result->stragglers.begin(), added.stragglers.begin(), added.stragglers.end());
  if (std::erase_if(result->findings, [](const Finding& f) { return f.cause == Cause::kDataImbalance; }) > 0)
    result->notes.push_back(
        "the traces' data_imbalance verdict (ranks late in turn) was withdrawn: the recording shows which ranks "
        "were slowed and why");
  InsertByImpact(std::move(added.finding), &result->findings);
}

/// A slow link's rank first. On a slow link every rank waits alike, so the same rank's arrival lateness is
/// only the part of the link's cost that fell on it: the link replaces that straggler and the findings
/// about its lateness.
void AddSlowLink(RecordingJudgement::AddedStragglers link, DiagnosisResult* result) {
  const RankNumber rank = link.stragglers.front().rank;
  if (!result->stragglers.empty() && result->stragglers.front().rank == rank) {
    static const std::set<Cause> kAboutLateness = {Cause::kSlowCompute,       Cause::kHostStall,
                                                   Cause::kUnknown,           Cause::kLaunchOverhead,
                                                   Cause::kSlowCommunication, Cause::kNetworkContention};
    result->stragglers.erase(result->stragglers.begin());
    std::erase_if(result->findings,
                  [&](const Finding& f) { return f.rank && *f.rank == rank && kAboutLateness.count(f.cause); });
  }
  result->stragglers.insert(result->stragglers.begin(), link.stragglers.begin(), link.stragglers.end());
  InsertByImpact(std::move(link.finding), &result->findings);
}

}  // namespace

void ApplyRecordingJudgement(RecordingJudgement judgement, DiagnosisResult* result) {
  for (std::string& note : judgement.notes) result->notes.push_back(std::move(note));
  for (RecordingJudgement::StragglerEvidence& e : judgement.evidence) AttachEvidence(std::move(e), result);
  if (judgement.cpu_slowed) AddCpuSlowed(std::move(*judgement.cpu_slowed), result);
  if (judgement.slow_link) AddSlowLink(std::move(*judgement.slow_link), result);
  result->recording_offsets_ns = std::move(judgement.recording_offsets_ns);
}

}  // namespace strata::diagnosis
