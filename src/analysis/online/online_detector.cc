// Online straggler detection per step (see online_detector.h).
#include "analysis/online/online_detector.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/peer_difference.h"
#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"

namespace strata::online {
namespace {

namespace th = diagnosis::thresholds;

// Groups up to this size compare each rank with the median of the others; larger ones with the group's
// median (the rank's own value moves it by at most one position).
constexpr size_t kExactPeersUpTo = 64;

// The ranks `self` is compared with: the group without it up to kExactPeersUpTo ranks, else the whole group.
std::vector<const RankStepSummary*> PeersOf(const std::vector<const RankStepSummary*>& group,
                                            const RankStepSummary* self) {
  if (group.size() > kExactPeersUpTo) return group;
  std::vector<const RankStepSummary*> peers;
  peers.reserve(group.size());
  for (const RankStepSummary* p : group)
    if (p != self) peers.push_back(p);
  return peers;
}

// NameCause (cause_choice.h) over the late run's classes: each class's excess over its reference, summed
// over the run's late steps, is a candidate for its cause against the run's summed lateness; the largest is
// named when it covers kMinExplainedShare of it, and the confidence is the share it covers. Sets d's cause,
// late_s, excess_s (both per late step of the run), explained and confidence.
void ChooseCauseOf(const LateRun& run, Detection* d) {
  std::vector<diagnosis::CauseCandidate> candidates;
  for (size_t c = 0; c < kSummaryClasses.size(); ++c)
    candidates.push_back({kSummaryCauses[c].cause, kSummaryCauses[c].layer, run.excess_s[c]});
  const diagnosis::CauseChoice choice = diagnosis::NameCause(diagnosis::ProfileEvidence{candidates, run.late_s});
  const double steps = std::max<double>(1, static_cast<double>(run.steps));
  d->cause = choice.cause;
  d->late_s = run.late_s / steps;
  d->excess_s = std::max(0.0, choice.excess) / steps;
  d->explained = choice.explained;
  d->confidence = choice.confidence;
}

}  // namespace

// The peers' median of each class in one step (a rank's reference when the peer score decides): without the
// rank for groups up to kExactPeersUpTo, else the group's, taken once per step however many ranks are late
// (O(ranks) per step, not per late rank).
class OnlineDetector::PeerClasses {
 public:
  explicit PeerClasses(const std::vector<const RankStepSummary*>& group) : group_(group) {}
  std::array<double, 6> Of(const RankStepSummary& r) {
    if (group_.size() <= kExactPeersUpTo) return Medians(PeersOf(group_, &r));
    if (!whole_) whole_ = Medians(group_);
    return *whole_;
  }

 private:
  // The peer comparison's rule (diagnosis::PeerMedians, peer_difference.h) over `peers`.
  static std::array<double, 6> Medians(const std::vector<const RankStepSummary*>& peers) {
    return diagnosis::PeerMedians<6>(peers, [](const RankStepSummary* p) { return ClassValues(*p); });
  }
  const std::vector<const RankStepSummary*>& group_;
  std::optional<std::array<double, 6>> whole_;
};

namespace {

// Consecutive on-time steps that close a detection of this persistence (thresholds.h, "Hysteresis").
size_t CloseAfter(Persistence p) {
  switch (p) {
    case Persistence::kOneOff:
      return th::kOnlineOneOffHold;
    case Persistence::kRecurring:
      return th::kOnlineRecurringWindow;
    case Persistence::kLasting:
      break;
  }
  return th::kOnlineWindow;
}

// A persistence rule over the last `steps` steps (`persist` of them marked in `bits`), stretched to span
// `min_s` seconds of `usual_step_s` (at most the steps a history's bits keep) with the same share marked.
bool Persists(uint32_t bits, size_t persist, size_t steps, double min_s, double usual_step_s) {
  constexpr size_t kKept = std::numeric_limits<uint32_t>::digits;
  size_t n = steps;
  if (usual_step_s > 0) n = std::max(n, static_cast<size_t>(std::ceil(min_s / usual_step_s)));
  n = std::min(n, kKept);
  const size_t needed = (persist * n + steps - 1) / steps;  // the same share, rounded up
  const uint32_t mask = n == kKept ? ~0u : (1u << n) - 1;
  return static_cast<size_t>(std::popcount(bits & mask)) >= needed;
}

// Whether the rank paused in one of the steps `first` through `last` (the last recorded).
bool RunHeldAPause(const RankHistory& h, int64_t last, int64_t first) {
  const int64_t steps = std::clamp<int64_t>(last - first + 1, 1, std::numeric_limits<uint32_t>::digits);
  const uint32_t mask = steps == std::numeric_limits<uint32_t>::digits ? ~0u : (1u << steps) - 1;
  return (h.pause_bits() & mask) != 0;
}

}  // namespace

// One rank in one step: both scores and the deciding one's verdict.
struct OnlineDetector::Scored {
  const RankStepSummary* r = nullptr;
  RankState* state = nullptr;  // the rank's, looked up once per step
  int32_t peers = 0;
  double peer_late_s = 0, peer_z = 0, peer_spread_s = 0;
  SelfScore self;
  DecidingScore by = DecidingScore::kPeers;
  double late_s = 0, z = 0;  // by the deciding score (z: what the CUSUM reads)
  bool late = false, clear = false, pause = false;
};

OnlineDetector::OnlineDetector(OnlineOptions options) : options_(options) {}

std::vector<Detection> OnlineDetector::AddStep(int64_t step, const std::vector<RankStepSummary>& ranks, double now) {
  std::map<int32_t, std::vector<const RankStepSummary*>> groups;
  for (const RankStepSummary& r : ranks)
    if (r.step == step && r.rank >= 0) groups[r.group].push_back(&r);
  std::vector<Detection> opened;
  for (const auto& [group, members] : groups) Judge(members, step, now, &opened);
  return opened;
}

void OnlineDetector::Judge(const std::vector<const RankStepSummary*>& group, int64_t step, double now,
                           std::vector<Detection>* opened) {
  std::vector<double> work, steps;
  for (const RankStepSummary* r : group) {
    work.push_back(r->own_work_s());
    steps.push_back(r->step_s);
  }
  const double step_median = Median(std::move(steps));
  const double median = Median(work);
  for (double& w : work) w = std::abs(w - median);
  const double mad = std::max(Median(std::move(work)), th::kOnlineMadFloorShare * step_median);
  const bool small = group.size() <= kExactPeersUpTo;
  std::vector<Scored> scored(group.size());
  for (size_t i = 0; i < group.size(); ++i) {
    const RankStepSummary* r = group[i];
    Scored& s = scored[i];
    s.r = r;
    s.state = &state_[r->rank];
    s.self = s.state->history.Score(*r);
    if (group.size() < 2) continue;
    s.peers = static_cast<int32_t>(group.size() - 1);
    const double reference =
        small ? diagnosis::PeerMedian(PeersOf(group, r), [](const RankStepSummary* p) { return p->own_work_s(); })
              : median;
    s.peer_late_s = r->own_work_s() - reference;
    s.peer_spread_s = mad;
    if (small) {  // the peers' own spread: the rank under test must not widen its own yardstick
      std::vector<double> dev;
      for (const RankStepSummary* p : group)
        if (p != r) dev.push_back(std::abs(p->own_work_s() - reference));
      s.peer_spread_s = std::max(Median(std::move(dev)), th::kOnlineMadFloorShare * step_median);
    }
    s.peer_z = s.peer_spread_s > 0 ? 0.6745 * s.peer_late_s / s.peer_spread_s : 0;
  }
  Decide(group, step_median, &scored);
  PeerClasses peer_classes(group);
  for (const Scored& s : scored) Update(s, &peer_classes, step, step_median, now, opened);
}

// The deciding score per rank (see the header): the peers' from kOnlinePeerMinRanks ranks, else the self
// score beyond what the peers show against themselves.
void OnlineDetector::Decide(const std::vector<const RankStepSummary*>& group, double step_median,
                            std::vector<Scored>* scored) const {
  const double min_effect = options_.min_effect;
  const double clear_effect = th::kOnlineClearFactor * min_effect;
  for (Scored& s : *scored) {
    if (group.size() >= th::kOnlinePeerMinRanks) {
      s.by = DecidingScore::kPeers;
      s.late_s = s.peer_late_s;
      s.z = s.peer_z;
      s.late = s.peer_spread_s > 0 && s.late_s >= min_effect * step_median && s.z >= th::kOnlineMinZ;
      s.clear = s.late && s.late_s >= clear_effect * step_median;
    } else {
      std::vector<double> others_late;  // the peers against themselves (0 without a baseline)
      for (const Scored& o : *scored)
        if (&o != &s) others_late.push_back(o.self.late_s);
      // Its lateness against itself beyond the peers', in its own spread's units: what decides and what the
      // CUSUM reads (a change the peers share, learned at the same pace by every rank, stays near 0).
      const double own_late = s.self.late_s - Median(std::move(others_late)), usual = s.self.usual_step_s;
      s.by = DecidingScore::kSelf;
      s.late_s = s.self.late_s;
      s.z = s.self.ready ? 0.6745 * own_late / s.self.spread_s : 0;
      s.late = s.self.ready && s.late_s >= min_effect * usual && own_late >= min_effect * usual &&
               s.self.z >= th::kOnlineMinZ && s.z >= th::kOnlineMinZ;
      s.clear = s.late && s.late_s >= clear_effect * usual && own_late >= clear_effect * usual;
    }
    s.pause = s.late && s.self.ready && s.late_s >= th::kOnlinePauseSteps * s.self.usual_step_s;
  }
}

// Adds a late step to the rank's run (a new run from its first late step): each class's excess over the
// deciding score's reference (its own learned means for the self score, the peers' medians otherwise).
void OnlineDetector::AddToRun(const Scored& s, PeerClasses* peer_classes, int64_t step, RankState* st) {
  if (st->first_late < 0) {
    st->first_late = step;
    st->run = {};
  }
  const std::array<double, 6> reference =
      s.by == DecidingScore::kSelf ? st->history.ClassBaseline() : peer_classes->Of(*s.r);
  const std::array<double, 6> values = ClassValues(*s.r);
  for (size_t c = 0; c < values.size(); ++c) st->run.excess_s[c] += values[c] - reference[c];
  st->run.late_s += s.late_s;
  ++st->run.steps;
}

// Records the step in the rank's history, re-reads an open detection's persistence and closes it after its
// hold, or opens one by the rules of the header.
void OnlineDetector::Update(const Scored& s, PeerClasses* peer_classes, int64_t step, double step_median, double now,
                            std::vector<Detection>* opened) {
  const RankStepSummary& r = *s.r;
  RankState& st = *s.state;
  RankHistory& h = st.history;
  if (s.late) AddToRun(s, peer_classes, step, &st);
  h.Record(r, s.late, s.clear, s.pause, s.z, /*learn=*/!s.late);
  const uint32_t window_mask = (1u << th::kOnlineWindow) - 1;
  if ((h.late_bits() & window_mask) == 0) st.first_late = -1;
  if (auto it = open_.find(r.rank); it != open_.end()) {
    Detection& d = it->second;
    if (d.persistence != Persistence::kRecurring) d.persistence = h.PersistenceSince(d.onset_step, d.pause);
    if (h.OnTimeRun() >= CloseAfter(d.persistence)) open_.erase(it);
    return;
  }
  if (!s.late) return;
  const double usual_s = s.by == DecidingScore::kSelf && s.self.ready ? s.self.usual_step_s : step_median;
  const bool persists =
      Persists(h.clear_bits(), th::kOnlinePersist, th::kOnlineWindow, th::kOnlinePersistMinS, usual_s) ||
      Persists(h.late_bits(), th::kOnlineLongPersist, th::kOnlineLongWindow, th::kOnlineLongPersistMinS, usual_s);
  const int64_t recurring = h.RecurringOnset();
  if (!persists && !s.pause && recurring < 0) return;
  Detection d;
  d.rank = r.rank;
  d.step = step;
  d.first_step = st.first_late;
  d.detected_at = now;
  d.step_s = step_median;
  d.decided_by = s.by;
  d.peers = s.peers;
  d.peer_late_s = s.peer_late_s;
  d.peer_z = s.peer_z;
  d.self_history = static_cast<int32_t>(s.self.history);
  if (s.self.ready) {
    d.self_late_s = s.self.late_s;
    d.self_z = s.self.z;
  }
  d.self_baseline_s = s.self.baseline_s;
  // Onset: where the CUSUM last rose from 0 when that is earlier than the run's first late step (a change
  // that crept in under the late threshold), the first run of a recurring pattern.
  d.onset_step = st.first_late;
  if (const int64_t change = h.ChangeStart(); change >= 0 && change < d.onset_step) d.onset_step = change;
  if (recurring >= 0) d.onset_step = std::min(d.onset_step, recurring);
  d.onset_unix = h.StartOf(d.onset_step);
  if (d.onset_unix == 0 && r.start_unix > 0)  // older than the kept starts: counted back by usual steps
    d.onset_unix = r.start_unix - static_cast<double>(step - d.onset_step) *
                                      (s.self.usual_step_s > 0 ? s.self.usual_step_s : step_median);
  d.pause = RunHeldAPause(h, step, st.first_late);
  d.persistence = h.PersistenceSince(d.onset_step, d.pause);
  ChooseCauseOf(st.run, &d);
  open_[r.rank] = d;
  opened->push_back(d);
}

}  // namespace strata::online
