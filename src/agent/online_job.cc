// OnlineJob (see online_job.h).
#include "agent/online_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/online/gaussian_mixture.h"

namespace strata::agent {
namespace {

constexpr int64_t kKeptStarts = 64;  // judged steps whose starts stay known for anchoring

}  // namespace

// The job step whose start is nearest `s`'s, counted on by whole step times from it (the first rank seen
// keeps its own numbering).
int64_t OnlineJob::Anchor(const online::RankStepSummary& s) const {
  if (step_start_.empty()) return s.step;
  auto nearest = step_start_.begin();
  for (auto it = step_start_.begin(); it != step_start_.end(); ++it)
    if (std::abs(it->second - s.start_unix) < std::abs(nearest->second - s.start_unix)) nearest = it;
  const double apart = s.step_s > 0 ? (s.start_unix - nearest->second) / s.step_s : 0;
  return nearest->first + static_cast<int64_t>(std::llround(apart));
}

void OnlineJob::Seed(int64_t judged_through, double judged_start, const std::map<int32_t, int64_t>& offsets) {
  offset_ = offsets;
  view_.judged_through = judged_through;
  if (judged_start <= 0) return;
  view_.judged_through_start = judged_start;
  step_start_[judged_through] = judged_start;
}

int64_t OnlineJob::JobStep(const online::RankStepSummary& s) {
  if (s.start_unix <= 0) return s.step;
  auto offset = offset_.find(s.rank);
  if (offset != offset_.end()) {
    const int64_t step = s.step + offset->second;
    auto start = step_start_.find(step);
    if (start == step_start_.end() || std::abs(start->second - s.start_unix) <= options_.realign_steps * s.step_s) {
      step_start_.emplace(step, s.start_unix);
      return step;
    }
    ++view_.realigned;
  }
  const int64_t step = Anchor(s);
  offset_[s.rank] = step - s.step;
  step_start_.emplace(step, s.start_unix);
  return step;
}

bool OnlineJob::Add(online::RankStepSummary s) {
  s.step = JobStep(s);
  auto last = view_.last_step.find(s.rank);
  if (last != view_.last_step.end() && s.step <= last->second) {
    ++view_.duplicates;
    return false;
  }
  view_.last_step[s.rank] = s.step;
  view_.last_summary[s.rank] = s;
  ++view_.summaries;
  if (s.step <= view_.judged_through) {
    ++view_.late;
    return false;
  }
  pending_[s.step].ranks.push_back(s);
  max_step_ = std::max(max_step_, s.step);
  return true;
}

bool OnlineJob::Ready(int64_t step, const PendingStep& p, double now) const {
  if (p.ranks.size() >= view_.last_step.size()) return true;
  return max_step_ - step >= options_.max_lag && now - p.first_seen >= options_.max_wait_s;
}

std::vector<online::Detection> OnlineJob::Advance(double now) {
  std::vector<online::Detection> opened;
  bool judged_any = false;
  for (auto& [step, p] : pending_)
    if (p.first_seen < 0) p.first_seen = now;
  while (!pending_.empty() && Ready(pending_.begin()->first, pending_.begin()->second, now)) {
    auto node = pending_.extract(pending_.begin());
    const int64_t step = node.key();
    std::vector<online::RankStepSummary>& ranks = node.mapped().ranks;
    view_.gaps += view_.last_step.size() - std::min(view_.last_step.size(), ranks.size());
    for (auto& d : detector_.AddStep(step, ranks, now)) opened.push_back(std::move(d));
    if (ranks.size() < diagnosis::thresholds::kOnlinePeerMinRanks) ++view_.steps_self_judged;
    view_.judged_through = step;
    if (auto start = step_start_.find(step); start != step_start_.end()) view_.judged_through_start = start->second;
    ++view_.steps_judged;
    view_.summaries_judged += ranks.size();
    // Starts are kept for steps that may still be anchored to (a late node's first summaries).
    while (!step_start_.empty() && step_start_.begin()->first < step - kKeptStarts)
      step_start_.erase(step_start_.begin());
    judged_.push_back(std::move(ranks));
    while (judged_.size() > options_.mixture_steps) judged_.pop_front();
    judged_any = true;
  }
  if (judged_any) {
    FitMixture();
    for (const auto& [rank, last] : view_.last_step) {
      const auto offset = offset_.find(rank);
      view_.judged_own[rank] = view_.judged_through - (offset == offset_.end() ? 0 : offset->second);
    }
  }
  ShowDetections(opened, now);
  return opened;
}

// The view's detections: the open ones, and those closed within options_.closed_shown_s, each in its last state
// (the previous view's, or as it opened when it opened and closed within this call): a one-off pause often opens
// and closes within one agent round, and no poll of the status, serve or a scrape would ever see it.
void OnlineJob::ShowDetections(const std::vector<online::Detection>& opened, double now) {
  auto still_open = [&](const online::Detection& d) {
    const auto it = detector_.open().find(d.rank);
    return it != detector_.open().end() && it->second.step == d.step;
  };
  for (const online::Detection& d : last_open_)
    if (!still_open(d)) closed_.emplace_back(d, now + options_.closed_shown_s);
  for (const online::Detection& d : opened)
    if (!still_open(d)) closed_.emplace_back(d, now + options_.closed_shown_s);
  std::erase_if(closed_, [&](const auto& c) { return c.second < now; });
  view_.open.clear();
  view_.corroborated.clear();
  last_open_.clear();
  for (const auto& [rank, d] : detector_.open()) {
    view_.open.push_back(d);
    last_open_.push_back(d);
    view_.corroborated[rank] = view_.mixture_anomalies.count(rank) > 0;
  }
  for (const auto& [d, until] : closed_) {
    view_.open.push_back(d);
    view_.corroborated.emplace(d.rank, view_.mixture_anomalies.count(d.rank) > 0);
  }
}

void OnlineJob::FitMixture() {
  size_t n = 0;
  for (const auto& step : judged_) n += step.size();
  view_.mixture_points = n;
  view_.mixture_anomalies.clear();
  view_.mixture_k = 0;
  constexpr size_t kMinPoints = 16;
  if (n < kMinPoints || n > options_.mixture_max_points) return;
  // Features: own work, collective wait, and the classes (the summary's fields, step time left out as it is
  // the sum of the first two).
  Eigen::MatrixXd x(static_cast<Eigen::Index>(n), 2 + static_cast<Eigen::Index>(online::kSummaryClasses.size()));
  std::vector<int32_t> rank_of_row;
  Eigen::Index row = 0;
  for (const auto& step : judged_)
    for (const online::RankStepSummary& s : step) {
      x(row, 0) = s.own_work_s();
      x(row, 1) = s.wait_s;
      const auto classes = online::ClassValues(s);
      for (size_t c = 0; c < classes.size(); ++c) x(row, 2 + static_cast<Eigen::Index>(c)) = classes[c];
      rank_of_row.push_back(s.rank);
      ++row;
    }
  const online::MixtureAnomalies m = online::FindMixtureAnomalies(x);
  view_.mixture_k = m.fit.k;
  for (size_t i : m.anomalous) ++view_.mixture_anomalies[rank_of_row[i]];
}

diagnosis::Finding DetectionFinding(const online::Detection& d, bool corroborated) {
  diagnosis::Finding f;
  f.cause = d.cause;  // named by NameCause in the online detector (or decoded from a detection it named)
  f.rank = RankNumber(d.rank);
  f.step = d.step;
  f.layer = online::SummaryLayer(f.cause);
  f.impact_pct = d.step_s > 0 ? 100.0 * d.late_s / d.step_s : 0;
  f.confidence = f.cause == diagnosis::Cause::kUnknown ? 0 : d.confidence;
  const bool self = d.decided_by == online::DecidingScore::kSelf;
  const std::string reference = self ? "its own recent steps" : "its peers' median";
  f.summary = fmt::format(
      "rank {} works {:.1f} ms longer than {} per step since step {} ({}, {})", d.rank, d.late_s * 1e3, reference,
      d.onset_step >= 0 ? d.onset_step : d.first_step, online::PersistenceName(d.persistence),
      f.cause == diagnosis::Cause::kUnknown
          ? fmt::format("cause not explained by the step summary's classes: the largest excess covers {:.0f}%",
                        100 * d.explained)
          : fmt::format("{}: its time in that class {:.1f} ms beyond {}, {:.0f}% of the lateness",
                        diagnosis::CauseName(d.cause), d.excess_s * 1e3, self ? "its own usual" : reference,
                        100 * d.explained));
  diagnosis::DetectionEvidence e;
  e.first_step = d.first_step;
  e.late_ms = d.late_s * 1e3;
  e.group_step_ms = d.step_s * 1e3;
  e.mixture_corroborates = corroborated;
  e.excess_ms = d.excess_s * 1e3;
  e.explained_share = d.explained;
  e.score = d.decided_by;
  e.peers = d.peers;
  e.peer_late_ms = d.peer_late_s * 1e3;
  e.peer_z = d.peer_z;
  e.self_history = d.self_history;
  e.self_ready = d.self_history >= static_cast<int32_t>(diagnosis::thresholds::kOnlineSelfMinHistory);
  e.self_late_ms = d.self_late_s * 1e3;
  e.self_z = d.self_z;
  e.self_baseline_ms = d.self_baseline_s * 1e3;
  e.onset_step = d.onset_step;
  e.onset_unix = d.onset_unix;
  e.persistence = d.persistence;
  f.evidence.kind = std::move(e);
  return f;
}

}  // namespace strata::agent
