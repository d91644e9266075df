// Cross-layer evidence from recorder data (see cross_layer.h).
#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/lateness_rule.h"
#include "analysis/diagnosis/peer_difference.h"
#include "analysis/diagnosis/thresholds.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/robust_stats.h"
#include "core/round.h"
#include "model/recording_alignment.h"

namespace strata::diagnosis {

namespace {

using thresholds::kMinRecordedExcess;
using thresholds::kSlowerLinkRatio;

// The time a rank's metrics are measured over: one span (its training window) or its late steps.
struct Window {
  std::vector<RecordedSpan> spans;
  uint64_t Length() const {
    uint64_t n = 0;
    for (const auto& s : spans) n += s.end > s.start ? s.end - s.start : 0;
    return n;
  }
  bool valid() const { return Length() > 0; }
  uint64_t Overlap(uint64_t a, uint64_t b) const {
    uint64_t n = 0;
    for (const auto& s : spans) {
      const uint64_t lo = std::max(a, s.start), hi = std::min(b, s.end);
      n += hi > lo ? hi - lo : 0;
    }
    return n;
  }
};

// A cumulative series' value at `t`, linearly interpolated between its samples (sorted by time), so that
// spans shorter than the sampling period still get their share.
double ValueAt(const std::vector<std::pair<uint64_t, double>>& samples, uint64_t t) {
  auto after = std::lower_bound(samples.begin(), samples.end(), t,
                                [](const std::pair<uint64_t, double>& s, uint64_t v) { return s.first < v; });
  if (after == samples.begin()) return samples.front().second;
  if (after == samples.end()) return samples.back().second;
  const auto& [t1, v1] = *after;
  const auto& [t0, v0] = *std::prev(after);
  if (t1 == t0) return v1;
  return v0 + (v1 - v0) * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
}

// Growth of a cumulative counter series over one span.
double SpanDelta(const std::vector<std::pair<uint64_t, double>>& samples, const RecordedSpan& w) {
  if (samples.empty()) return 0;
  return std::max(0.0, ValueAt(samples, w.end) - ValueAt(samples, w.start));
}

double SeriesDelta(const std::vector<std::pair<uint64_t, double>>& samples, const Window& w) {
  double sum = 0;
  for (const auto& span : w.spans) sum += SpanDelta(samples, span);
  return sum;
}

// A gauge's mean over the samples inside the window (its last value before it when none are).
double GaugeMean(const std::vector<std::pair<uint64_t, double>>& samples, const Window& w) {
  double sum = 0;
  size_t n = 0;
  for (const auto& [t, v] : samples)
    if (w.Overlap(t, t + 1)) {
      sum += v;
      ++n;
    }
  if (n) return sum / static_cast<double>(n);
  if (samples.empty() || w.spans.empty()) return 0;
  return ValueAt(samples, w.spans.front().start);
}

// MeasureSegment's steps: each rank's window, then its scheduler, GC, counter and network totals over it as
// shares of the window and rates per second.

/// Each rank's window: the chooser's spans (the late steps), else its training window.
Window WindowOf(const RankLayers& layers, size_t segment, int32_t rank, const SpanChooser& chooser) {
  auto chosen = chooser ? chooser(segment, rank) : std::nullopt;
  return Window{chosen ? *chosen : std::vector<RecordedSpan>{layers.training}};
}

/// Nanoseconds within the window (and counts) of each scheduler and GC measure of one rank.
struct SchedulerTotals {
  double runq = 0, runq_foreign = 0, runq_idle = 0, runq_after_dstate = 0, dstate = 0, gc = 0;
  uint64_t gc_count = 0;
  std::map<uint32_t, double> foreign_by_pid;
};

SchedulerTotals MeasureScheduler(const RankLayers& layers, const Window& w) {
  SchedulerTotals t;
  for (const RunQueueWait& q : layers.runq) {
    const double ns = static_cast<double>(w.Overlap(q.start, q.end));
    t.runq += ns;
    if (q.after_uninterruptible) t.runq_after_dstate += ns;
    if (q.other_pid != 0) {
      t.runq_foreign += ns;
      t.foreign_by_pid[q.other_pid] += ns;
    } else if (q.idle_cpu) {
      t.runq_idle += ns;
    }
  }
  for (const RecordedSpan& d : layers.dstate) t.dstate += static_cast<double>(w.Overlap(d.start, d.end));
  for (const RecordedSpan& g : layers.gcs) {
    const uint64_t overlap = w.Overlap(g.start, g.end);
    t.gc += static_cast<double>(overlap);
    if (overlap) ++t.gc_count;
  }
  return t;
}

/// Each process counter's increase over the window: a cgroup is shared by a rank's processes, so its
/// counters take the largest; per-process counters are summed.
struct CounterTotals {
  double throttled = 0, majflt = 0, memfail = 0, sys = 0;
};

CounterTotals MeasureCounters(const RankLayers& layers, const Window& w) {
  CounterTotals t;
  for (const RankCounterSeries& s : layers.counters) {
    const double delta = SeriesDelta(s.points, w);
    switch (s.counter) {
      case RankCounter::kCgroupThrottledNs:
        t.throttled = std::max(t.throttled, delta);
        break;
      case RankCounter::kMemoryCgroupFails:
        t.memfail = std::max(t.memfail, delta);
        break;
      case RankCounter::kMajorFaults:
        t.majflt += delta;
        break;
      case RankCounter::kSystemNs:
        t.sys += delta;
        break;
    }
  }
  return t;
}

/// The rank's network figures over the window: bytes per second on its own namespace's interfaces, and its
/// busiest link's share of its capacity.
void FillNetwork(const RankLayers& layers, const Window& w, RankLayerMetrics* m) {
  struct LinkUse {
    double rx = 0, tx = 0, capacity_bps = 0;
  };
  std::map<std::string, LinkUse> links;
  double bytes = 0;
  for (const LinkSeries& s : layers.links) {
    LinkUse& link = links[s.interface];
    if (s.kind == LinkSeries::Kind::kCapacityBps) {
      link.capacity_bps = GaugeMean(s.points, w);
      continue;
    }
    const double delta = SeriesDelta(s.points, w);
    bytes += delta;
    (s.kind == LinkSeries::Kind::kRxBytes ? link.rx : link.tx) += delta;
  }
  m->net_bytes_per_s = bytes / m->window_s;
  for (const auto& [label, link] : links) {
    if (link.capacity_bps <= 0) continue;
    const double busy = 8 * std::max(link.rx, link.tx) / link.capacity_bps / m->window_s;
    if (busy > m->link_busy_share) {
      m->link_busy_share = busy;
      m->link_capacity_bps = link.capacity_bps;
    }
  }
}

/// The process that kept the rank waiting longest in the run queue, as "comm (pid N)".
std::string TopForeign(const RecordedLayerSegment& seg, const std::map<uint32_t, double>& by_pid) {
  auto top =
      std::max_element(by_pid.begin(), by_pid.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top == by_pid.end()) return {};
  auto name = seg.process_names.find(top->first);
  return fmt::format("{} (pid {})", name != seg.process_names.end() ? name->second : "?", top->first);
}

void MeasureSegment(const RecordedLayerSegment& seg, size_t index, const SpanChooser& chooser,
                    std::map<int32_t, RankLayerMetrics>* out) {
  for (const auto& [rank, layers] : seg.ranks) {
    const Window w = WindowOf(layers, index, rank, chooser);
    if (!w.valid()) continue;
    const SchedulerTotals sched = MeasureScheduler(layers, w);
    const CounterTotals counters = MeasureCounters(layers, w);
    const double ns = static_cast<double>(w.Length());
    RankLayerMetrics& m = (*out)[rank];
    m.window_s = ns / 1e9;
    m.runq_share = sched.runq / ns;
    m.runq_foreign_share = sched.runq_foreign / ns;
    m.runq_idle_share = sched.runq_idle / ns;
    m.runq_after_dstate_share = sched.runq_after_dstate / ns;
    m.throttled_share = counters.throttled / ns;
    m.gc_share = sched.gc / ns;
    m.dstate_share = sched.dstate / ns;
    m.sys_share = counters.sys / ns;
    m.majflt_per_s = counters.majflt / m.window_s;
    m.memcg_fail_per_s = counters.memfail / m.window_s;
    m.gc_count = sched.gc_count;
    if (seg.own_namespaces) FillNetwork(layers, w, &m);
    if (std::string top = TopForeign(seg, sched.foreign_by_pid); !top.empty()) m.top_foreign = std::move(top);
  }
}

// One layer metric's reference for `rank`: the one peer comparison (PeerMedian, peer_difference.h) over every
// other rank the recording measured (0 without any).
double OtherRanksMedian(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank,
                        double RankLayerMetrics::*field) {
  std::vector<const RankLayerMetrics*> peers;
  for (const auto& [other, m] : metrics)
    if (other != rank) peers.push_back(&m);
  return PeerMedian(peers, [field](const RankLayerMetrics* p) { return p->*field; });
}

}  // namespace

RankLayerMetrics PeersMedianMetrics(const std::vector<std::pair<int32_t, RankLayerMetrics>>& peers) {
  RankLayerMetrics out;
  for (double RankLayerMetrics::*field :
       {&RankLayerMetrics::window_s, &RankLayerMetrics::runq_share, &RankLayerMetrics::runq_foreign_share,
        &RankLayerMetrics::runq_idle_share, &RankLayerMetrics::throttled_share, &RankLayerMetrics::gc_share,
        &RankLayerMetrics::dstate_share, &RankLayerMetrics::sys_share, &RankLayerMetrics::majflt_per_s,
        &RankLayerMetrics::memcg_fail_per_s, &RankLayerMetrics::net_bytes_per_s, &RankLayerMetrics::link_busy_share,
        &RankLayerMetrics::link_capacity_bps, &RankLayerMetrics::runq_after_dstate_share})
    out.*field = PeerMedian(peers, [field](const auto& p) { return p.second.*field; });
  out.gc_count = static_cast<uint64_t>(
      std::llround(PeerMedian(peers, [](const auto& p) { return static_cast<double>(p.second.gc_count); })));
  return out;
}

namespace {

// The rank's wait for a CPU on waking from an uninterruptible sleep beyond its peers' median, never below 0:
// the sleep's cost (memory_pressure, io_stall count it with the sleep), not the displaced threads'
// (cpu_contention leaves it out).
double WakingFromSleepExcess(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  return std::max(0.0, metrics.at(rank).runq_after_dstate_share -
                           OtherRanksMedian(metrics, rank, &RankLayerMetrics::runq_after_dstate_share));
}

// The bytes per second on the rank's own link and its peers' median, with the capacity of its busiest link (0
// when the recording did not measure it); nullopt without per-rank namespaces: network_contention's evidence
// (TrafficEvidence, cause_choice.h).
std::optional<LinkLoad> LinkLoadOf(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  const RankLayerMetrics& m = metrics.at(rank);
  if (m.net_bytes_per_s < 0) return std::nullopt;
  return LinkLoad{{m.net_bytes_per_s, OtherRanksMedian(metrics, rank, &RankLayerMetrics::net_bytes_per_s)},
                  std::max(m.link_capacity_bps, 0.0)};
}

// Far more bytes on the rank's own link than its peers move for the same collectives: someone else's
// traffic, by network_contention's one rule (LinkCarriesForeignTraffic, cause_choice.h).
bool ForeignTraffic(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  const std::optional<LinkLoad> link = LinkLoadOf(metrics, rank);
  return link && LinkCarriesForeignTraffic(TrafficSource::kRecording, *link);
}

// How much longer the rank's link was busy than its peers' (share of the time) when it was at least
// kSlowerLinkRatio times theirs, else nullopt (also without link capacities).
std::optional<double> SlowerLinkExcess(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  const RankLayerMetrics& m = metrics.at(rank);
  const double peers = OtherRanksMedian(metrics, rank, &RankLayerMetrics::link_busy_share);
  if (m.link_busy_share < 0 || peers < 0 || m.link_busy_share < kSlowerLinkRatio * peers) return std::nullopt;
  return m.link_busy_share - peers;
}

// "its link (N Mbit/s) was busy X % of the time against Y % on its peers' (N Mbit/s)".
std::string LinkWhat(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  const RankLayerMetrics& m = metrics.at(rank);
  return fmt::format(
      "its link ({:.0f} Mbit/s) was busy {:.1f} % of the time against {:.1f} % on its peers' "
      "({:.0f} Mbit/s) for the same collectives: a slower link",
      m.link_capacity_bps / 1e6, 100 * m.link_busy_share,
      100 * OtherRanksMedian(metrics, rank, &RankLayerMetrics::link_busy_share),
      OtherRanksMedian(metrics, rank, &RankLayerMetrics::link_capacity_bps) / 1e6);
}

CrossLayerComparison CrossLayerEvidence(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank,
                                        bool late_steps) {
  CrossLayerComparison evidence;
  evidence.over_late_steps = late_steps;
  evidence.straggler = metrics.at(rank);
  for (const auto& [r, pm] : metrics)
    if (r != rank) evidence.peers.emplace_back(r, pm);
  return evidence;
}

// How late the traces show a rank against its peers' median arrival (RankTraceTimeline), by
// the persistence rule of the traces' own stragglers (lateness_rule.h) with twice kMinRecordedExcess of the
// step as the least lateness that counts (arrival against a median jitters by a few ms on a busy machine),
// every such step counting toward a cluster: persistent (late_ms = its mean lateness per step), or an
// intermittent cluster of clearly late steps (late_ms = their lateness spread over all steps); else nullopt.
// Each rank's traced lateness by step, for the ranks whose traces measured it (none: the traces did not).
using TraceLatenessByRank = std::map<int32_t, std::map<int64_t, double>>;
TraceLatenessByRank TracedLateness(const std::map<int32_t, RankTraceTimeline>& timelines) {
  TraceLatenessByRank out;
  for (const auto& [rank, tl] : timelines)
    if (!tl.lateness_vs_peers_ms.empty()) out[rank] = tl.lateness_vs_peers_ms;
  return out;
}

struct TraceLateness {
  std::vector<int64_t> steps;
  double late_ms = 0;
  bool persistent = false;
};
// The largest traced lateness of any rank but `rank` in any step: the job's noise (lateness_rule.h).
double PeersWorstMs(const TraceLatenessByRank& traced, int32_t rank) {
  double worst = 0;
  for (const auto& [r, by_step] : traced)
    if (r != rank)
      for (const auto& [step, ms] : by_step) worst = std::max(worst, ms);
  return worst;
}

// Lateness by step judged by the confirmation rule (late by kConfirmedLatenessMultiple x the least recorded
// excess of a step; a cluster of any such steps above the noise). `numbers` receives the step numbers of the
// judgement's indices. peers_worst: the job's noise the lateness is weighed against (lateness_rule.h), unset
// for ranks slowed alike (their peers include the others slowed with them).
RankLateness JudgeConfirmation(const std::map<int64_t, double>& by_step, double step_ms,
                               std::optional<double> peers_worst, std::vector<int64_t>* numbers) {
  std::vector<double> lateness;
  for (const auto& [step, ms] : by_step) {
    numbers->push_back(step);
    lateness.push_back(ms);
  }
  const LatenessRule rule{.late_share = thresholds::kConfirmedLatenessMultiple * kMinRecordedExcess,
                          .well_late_multiple = 1,
                          .very_late_multiple = LatenessRule::kUnused,
                          .peers_worst = peers_worst,
                          .clear_above_noise = true};
  return JudgeRankLateness(lateness, std::vector<double>(lateness.size(), step_ms), rule);
}

// The lateness the confirmation rule finds persistent (its late steps) or a cluster (its clearly late steps);
// none otherwise.
std::optional<TraceLateness> ConfirmedLateness(const std::map<int64_t, double>& by_step, double step_ms,
                                               std::optional<double> peers_worst) {
  if (by_step.empty()) return std::nullopt;
  std::vector<int64_t> numbers;
  const RankLateness judged = JudgeConfirmation(by_step, step_ms, peers_worst, &numbers);
  const double n = static_cast<double>(by_step.size());
  TraceLateness out;
  out.persistent = judged.persistent;
  if (!judged.persistent && !judged.cluster) return std::nullopt;
  for (size_t i : judged.persistent ? judged.late : judged.clear) out.steps.push_back(numbers[i]);
  out.late_ms = (judged.persistent ? judged.total : judged.clear_sum) / n;
  return out;
}

// A rank's link excess over its peers' median in each step (ms), from the recording's link counters; empty
// when the steps cannot be placed on the recording.
using LinkExcessBySteps = std::function<std::map<int64_t, double>(int32_t rank)>;

// The steps a link's own excess, step by step, gives it (ConfirmedLateness's rule): its late steps when it is
// persistent, its clearly late steps when they form a cluster, else every late step, however few. Unlike blame,
// the measure is the link's own, so two busy steps are two steps of the link's, not noise spread over all of
// them (a generated job with traffic in steps 4 and 7 only was named "in every step, persistent", and one with
// traffic in 7 of 9 steps was given all 9: CrossLayer.LinkRulesPermuteWithTheRanksAndNeverLoseAStepToMoreTraffic).
// None when no step is late (an excess spread thinly over every step).
struct LinkSteps {
  std::vector<int64_t> steps;
  bool persistent = false;
  double late_ms = 0;  // the steps' excess spread over all steps (ms per step)
};
std::optional<LinkSteps> LinkStepsOf(const std::map<int64_t, double>& by_step, double step_ms) {
  std::vector<int64_t> numbers;
  const RankLateness judged = JudgeConfirmation(by_step, step_ms, std::nullopt, &numbers);
  if (judged.late.empty()) return std::nullopt;
  LinkSteps out;
  out.persistent = judged.persistent;
  for (size_t i : judged.cluster && !judged.persistent ? judged.clear : judged.late) {
    out.steps.push_back(numbers[i]);
    out.late_ms += by_step.at(numbers[i]) / static_cast<double>(by_step.size());
  }
  return out;
}

// The collectives' transfer time of a step, on average over the steps (ms; model::TransferMsByStep).
double MeanTransferMs(const std::map<int64_t, double>& transfer_ms_by_step) {
  std::vector<double> values;
  for (const auto& [step, ms] : transfer_ms_by_step) values.push_back(ms);
  return Mean(values);
}

// Each step's collective transfer time beyond the median step's (ms; model::TransferMsByStep) where it stands out
// (a robust z above thresholds::kOutlierRobustZ, the one outlier rule), else 0: what a link slowed in some steps
// only adds to them. Transfers that merely vary (a link busy all along, TCP's bursts) stand out in no step, and
// fewer than half the steps can: this never makes a link persistent. Empty with fewer than 3 steps.
std::map<int64_t, double> TransferExcess(const std::map<int64_t, double>& transfer_ms_by_step) {
  std::map<int64_t, double> out;
  if (transfer_ms_by_step.size() < 3) return out;
  std::vector<double> values;
  for (const auto& [step, ms] : transfer_ms_by_step) values.push_back(ms);
  const double typical = Median(values);
  const std::vector<double> z = RobustZ(values, 1e-6);
  size_t i = 0;
  for (const auto& [step, ms] : transfer_ms_by_step)
    out[step] = z[i++] > thresholds::kOutlierRobustZ ? ms - typical : 0.0;
  return out;
}

// A named link's steps and what it costs them (a share of the step). Its busy share beyond its peers' (`excess`),
// but never more than the collectives' transfers take in a step on average (fixing the link removes at most
// all of them). Its steps, by the first rule that finds some only:
// - a link busy in some steps only slows the collectives' transfers of those steps, whoever arrived last: the
//   steps whose traces' transfer time stands out (TransferExcess) and is late by the confirmation rule, when
//   they are a few and the link's busy time fits in them (thresholds::kLinkBusyInItsStepsMultiple); what
//   the link costs is then at most those transfers' excess over a typical step, spread over all steps (the
//   busy share counts the other traffic's time, not the collectives' delay, and the recorder's 10 Hz counters
//   blur a step's traffic into its neighbours);
// - traffic on a rank's link also makes the rank itself late (its TCP work takes its CPU): when the traces
//   show it late in some steps only, the contention came and went, and those are its steps;
// - else the link's own excess step by step, by the same rule: a link busy beyond its peers' in some steps
//   only is a link problem of those steps, and one busy in most is persistent, with its late steps (as a trace
//   straggler has).
struct LinkCost {
  std::vector<int64_t> steps;
  bool persistent = true;
  double share = 0;
};
LinkCost LinkStepsAndCost(int32_t rank, double excess, const TraceLatenessByRank& traced,
                          const std::map<int64_t, double>& transfer_ms_by_step, const LinkExcessBySteps& link_by_step,
                          const PathResult& traces) {
  const double step_ms = traces.step_time_median_ms;
  LinkCost out{traces.steps, true, excess};
  if (!transfer_ms_by_step.empty()) out.share = std::min(out.share, MeanTransferMs(transfer_ms_by_step) / step_ms);
  if (auto slow = LinkStepsOf(TransferExcess(transfer_ms_by_step), step_ms);
      slow && !slow->persistent && slow->steps.size() >= thresholds::kMinTransferSlowSteps &&
      excess * static_cast<double>(traces.steps.size()) <=
          thresholds::kLinkBusyInItsStepsMultiple * static_cast<double>(slow->steps.size())) {
    out.steps = slow->steps;
    out.persistent = false;
    out.share = std::min(out.share, slow->late_ms / step_ms);
    return out;
  }
  if (auto it = traced.find(rank); it != traced.end())
    if (auto late = ConfirmedLateness(it->second, step_ms, PeersWorstMs(traced, rank)); late && !late->persistent) {
      out.steps = late->steps;
      out.persistent = false;
      return out;
    }
  if (link_by_step)
    if (auto own = LinkStepsOf(link_by_step(rank), step_ms)) {
      out.steps = std::move(own->steps);
      out.persistent = own->persistent;
    }
  return out;
}

// A link that holds up every rank of its collectives alike (see the header): reported as the top
// straggler when it costs more than what the top straggler does (`top`: the traces', or the ranks slowed
// alike on the CPU when those come first; none when there is none).
std::optional<RecordingJudgement::AddedStragglers> SlowLink(const std::map<int32_t, RankLayerMetrics>& metrics,
                                                            const TraceLatenessByRank& traced,
                                                            const std::map<int64_t, double>& transfer_ms_by_step,
                                                            const LinkExcessBySteps& link_by_step,
                                                            const PathResult& traces, const Straggler* top) {
  std::optional<int32_t> busiest;
  size_t known = 0;
  for (const auto& [rank, m] : metrics) {
    if (m.link_busy_share < 0) continue;
    ++known;
    if (!busiest || m.link_busy_share > metrics.at(*busiest).link_busy_share) busiest = rank;
  }
  const double step_ms = traces.step_time_median_ms;
  if (!busiest || known < 2 || known != metrics.size() || step_ms <= 0) return std::nullopt;
  const int32_t rank = *busiest;
  const RankLayerMetrics& m = metrics.at(rank);
  const std::optional<double> slower = SlowerLinkExcess(metrics, rank);
  if (!slower || *slower < kMinRecordedExcess) return std::nullopt;
  const double excess = *slower, peers = m.link_busy_share - excess;
  const LinkCost cost = LinkStepsAndCost(rank, excess, traced, transfer_ms_by_step, link_by_step, traces);
  const double cost_share = cost.share;
  if (top && top->late_ms_per_step >= cost_share * step_ms) return std::nullopt;
  // (The same rank as the top straggler, late by less than its link costs: on a slow link every rank waits
  // alike, so its arrival lateness is only the part of the link's cost that fell on it, often a step or two;
  // applying the judgement replaces it with the link.)
  RecordingJudgement::AddedStragglers link;
  const std::optional<LinkLoad> load = LinkLoadOf(metrics, rank);  // the link's bytes, once for every use below
  const bool foreign_traffic = load && LinkCarriesForeignTraffic(TrafficSource::kRecording, *load);

  Straggler s;
  s.rank = RankNumber(rank);
  s.steps = cost.steps;
  s.persistent = cost.persistent;
  s.score = RoundTo(cost_share, 4);
  s.late_ms_per_step = RoundTo(cost_share * step_ms, 3);
  s.evidence.kind = RecordedLinkEvidence{m.link_busy_share, peers};
  s.evidence.from = EvidenceSource::kRecorderLink;
  link.stragglers.push_back(s);

  Finding& f = link.finding;
  // Effect: the time its link is busy; evidence: the part of it beyond its peers' (cause_choice.h).
  SetCause(foreign_traffic ? NameCause(TrafficEvidence{TrafficSource::kRecording, *load, excess, m.link_busy_share})
                           : NameCause(PatternEvidence{
                                 .pattern = Pattern::kSlowerLink, .explained = excess, .effect = m.link_busy_share}),
           &f);
  f.rank = s.rank;
  if (!s.persistent) f.step = s.steps.front();
  f.ranks = {s.rank};
  f.impact_pct = RoundTo(100 * cost_share, 2);
  f.outside_whatif = true;  // every rank waits alike: the traces' ideal step carries it too
  const std::string what =
      foreign_traffic ? fmt::format(
                            "its network interfaces moved {:.1f} MB/s against {:.1f} MB/s on its peers': "
                            "other traffic shares its link, busy {:.1f} % of the time",
                            load->bytes_per_s.own / 1e6, load->bytes_per_s.peers / 1e6, 100 * m.link_busy_share)
                      : LinkWhat(metrics, rank);
  f.summary = fmt::format(
      "rank {}'s link holds up the collectives of every rank by about {:.1f} % of the step: {} "
      "(not seen in the traces: every rank waits alike)",
      rank, 100 * cost_share, what);
  f.evidence.cross_layer = CrossLayerEvidence(metrics, rank, false);
  return link;
}

// The CPU layer's excess of a rank over its peers' median when it is at least twice theirs: time waiting
// for a CPU another process held (cpu_contention) or throttled by its cgroup (cpu_throttling), the larger.
struct CpuExcess {
  std::optional<Pattern> pattern;
  double excess = 0;  // share of the window
};
CpuExcess CpuLayerExcess(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  CpuExcess out;
  auto consider = [&](Pattern pattern, double RankLayerMetrics::*field) {
    const double own = metrics.at(rank).*field, peers = OtherRanksMedian(metrics, rank, field);
    if (own >= thresholds::kRecordedOwnMultiple * peers && own - peers > out.excess) out = {pattern, own - peers};
  };
  consider(Pattern::kCpuTakenByOthers, &RankLayerMetrics::runq_foreign_share);
  consider(Pattern::kCgroupThrottled, &RankLayerMetrics::throttled_share);
  return out;
}

// Ranks slowed alike (several ranks on a core that other processes also use, each in the same throttled
// cgroup) hide each other in last-arrival blame, so the traces may name none of them. A rank whose CPU
// layer shows an excess of kMinRecordedExcess or more is reported as a straggler from the recording when
// the traces confirm its lateness (ConfirmedLateness; without that measure, the excess stands for the
// lateness in every step). Every such rank with the same cause is listed, the latest first, unless the
// traces' top straggler is one of them or costs more (applying them withdraws a data_imbalance verdict of
// the traces: lateness no rank owns). When one of them also carries far more traffic on its own link than
// its peers (ForeignTraffic), that traffic is the cause (the CPU it takes is the TCP work on its core):
// network_contention, that rank first.
std::optional<RecordingJudgement::AddedStragglers> CpuSlowed(const std::map<int32_t, RankLayerMetrics>& metrics,
                                                             const TraceLatenessByRank& traced,
                                                             const PathResult& traces) {
  const double step_ms = traces.step_time_median_ms;
  if (metrics.size() < 2 || step_ms <= 0) return std::nullopt;
  struct Slowed {
    int32_t rank;
    CpuExcess cpu;
    TraceLateness late;
  };
  std::vector<Slowed> slowed;
  for (const auto& [rank, m] : metrics) {
    const CpuExcess cpu = CpuLayerExcess(metrics, rank);
    if (!cpu.pattern || cpu.excess < kMinRecordedExcess) continue;
    TraceLateness late{traces.steps, cpu.excess * step_ms, true};
    if (!traced.empty()) {
      auto it = traced.find(rank);
      if (it == traced.end()) continue;
      auto confirmed = ConfirmedLateness(it->second, step_ms, std::nullopt);
      if (!confirmed) continue;
      late = std::move(*confirmed);
    }
    slowed.push_back({rank, cpu, std::move(late)});
  }
  if (slowed.empty()) return std::nullopt;
  std::sort(slowed.begin(), slowed.end(),
            [](const Slowed& a, const Slowed& b) { return a.late.late_ms > b.late.late_ms; });
  Pattern pattern = *slowed.front().cpu.pattern;
  slowed.erase(std::remove_if(slowed.begin(), slowed.end(), [&](const Slowed& s) { return s.cpu.pattern != pattern; }),
               slowed.end());
  auto traffic =
      std::find_if(slowed.begin(), slowed.end(), [&](const Slowed& s) { return ForeignTraffic(metrics, s.rank); });
  const bool shared_link = traffic != slowed.end();
  if (shared_link) std::rotate(slowed.begin(), traffic, traffic + 1);
  if (!traces.stragglers.empty()) {
    const Straggler& top = traces.stragglers.front();
    const bool named =
        std::any_of(slowed.begin(), slowed.end(), [&](const Slowed& s) { return s.rank == top.rank.value(); });
    if (named || top.late_ms_per_step >= slowed.front().late.late_ms) return std::nullopt;
  }
  RecordingJudgement::AddedStragglers added;
  std::vector<RankNumber> ranks;
  std::vector<Straggler>& found = added.stragglers;
  for (const Slowed& sl : slowed) {
    const RankLayerMetrics& m = metrics.at(sl.rank);
    Straggler s;
    s.rank = RankNumber(sl.rank);
    s.score = RoundTo(sl.late.late_ms / step_ms, 4);
    s.late_ms_per_step = RoundTo(sl.late.late_ms, 3);
    s.steps = sl.late.steps;
    s.persistent = sl.late.persistent;
    s.evidence.kind = RecordedCpuEvidence{sl.cpu.excess, m.runq_foreign_share, m.throttled_share};
    s.evidence.from = EvidenceSource::kRecorderCpu;
    found.push_back(std::move(s));
    ranks.emplace_back(sl.rank);
  }

  const Slowed& top = slowed.front();
  const RankLayerMetrics& m = metrics.at(top.rank);
  Finding& f = added.finding;
  const double explained = top.cpu.excess * step_ms;
  SetCause(shared_link
               ? NameCause(TrafficEvidence{TrafficSource::kRecording, *LinkLoadOf(metrics, top.rank), explained,
                                           top.late.late_ms})
               : NameCause(PatternEvidence{.pattern = pattern, .explained = explained, .effect = top.late.late_ms}),
           &f);
  f.rank = RankNumber(top.rank);
  f.ranks = ranks;
  if (!top.late.persistent && !top.late.steps.empty()) f.step = top.late.steps.front();
  f.impact_pct = RoundTo(100 * top.late.late_ms / step_ms, 2);
  std::string what;
  if (shared_link)
    what = fmt::format(
        "its network interfaces moved {:.1f} MB/s against {:.1f} MB/s on its peers': other traffic shares its "
        "link, and its TCP work takes the CPU (waited for a CPU {:.1f} % of the time while {} ran)",
        m.net_bytes_per_s / 1e6, OtherRanksMedian(metrics, top.rank, &RankLayerMetrics::net_bytes_per_s) / 1e6,
        100 * m.runq_foreign_share, m.top_foreign.empty() ? "another process" : m.top_foreign);
  else if (pattern == Pattern::kCpuTakenByOthers)
    what = fmt::format("waited for a CPU {:.1f} % of the time while {} ran (peers: {:.1f} %)",
                       100 * m.runq_foreign_share, m.top_foreign.empty() ? "another process" : m.top_foreign,
                       100 * OtherRanksMedian(metrics, top.rank, &RankLayerMetrics::runq_foreign_share));
  else
    what = fmt::format("its cgroup throttled it {:.1f} % of the time (peers: {:.1f} %)", 100 * m.throttled_share,
                       100 * OtherRanksMedian(metrics, top.rank, &RankLayerMetrics::throttled_share));
  const std::string when =
      top.late.persistent ? std::string() : fmt::format(" in steps {}", fmt::join(top.late.steps, ", "));
  f.summary =
      fmt::format("{} {} late by {:.1f} ms per step at collectives against their peers{}: rank {} {}{}",
                  ranks.size() > 1 ? "ranks" : "rank", fmt::join(ranks, ", "), top.late.late_ms, when, top.rank, what,
                  ranks.size() > 1 ? " (slowed alike, they hide each other from last-arrival blame in the "
                                     "traces)"
                                   : "");
  f.evidence.cross_layer = CrossLayerEvidence(metrics, top.rank, false);
  return added;
}

// Each recorded rank's clock offset to its trace, (segment, rank) -> trace time - recorded time, by
// matching collectives (recording_alignment.h); ranks_recorded counts every (segment, rank) recorded.
struct RecordingOffsets {
  std::map<std::pair<size_t, int32_t>, int64_t> offsets;
  size_t ranks_recorded = 0;
  bool aligned() const { return !offsets.empty() && offsets.size() == ranks_recorded; }
};
RecordingOffsets AlignSegments(const RecordedLayers& layers, const std::map<int32_t, RankTraceTimeline>& timelines) {
  RecordingOffsets out;
  for (const RecordedLayerSegment& seg : layers.segments) out.ranks_recorded += seg.ranks.size();
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> collectives;
  for (const auto& [rank, tl] : timelines) collectives[rank] = tl.collectives;
  out.offsets = model::AlignRecordedRanks(layers, collectives);
  return out;
}

// The offsets of `al` of the segments of `matching` (MatchingSegments: those of its layers not `left_out`,
// numbered from 1), renumbered as `matching` numbers them: its alignment, without aligning again.
RecordingOffsets MatchingOffsets(const RecordingOffsets& al, const RecordedLayers& matching,
                                 const std::vector<size_t>& left_out) {
  RecordingOffsets out;
  for (const RecordedLayerSegment& seg : matching.segments) out.ranks_recorded += seg.ranks.size();
  size_t kept = 0;
  for (size_t i = 0; kept < matching.segments.size(); ++i) {
    if (std::find(left_out.begin(), left_out.end(), i + 1) != left_out.end()) continue;
    for (const auto& [key, offset] : al.offsets)
      if (key.first == i) out.offsets[{kept, key.second}] = offset;
    ++kept;
  }
  return out;
}

// The segments some of whose ranks match the traces, and the 1-based numbers of those left out.
std::pair<RecordedLayers, std::vector<size_t>> MatchingSegments(const RecordedLayers& layers,
                                                                const RecordingOffsets& al) {
  RecordedLayers matching;
  std::vector<size_t> left_out;
  for (size_t i = 0; i < layers.segments.size(); ++i) {
    const bool any =
        std::any_of(al.offsets.begin(), al.offsets.end(), [&](const auto& o) { return o.first.first == i; });
    if (any)
      matching.segments.push_back(layers.segments[i]);
    else
      left_out.push_back(i + 1);
  }
  return {std::move(matching), std::move(left_out)};
}

// The given steps on each rank's recording clock (nullopt for a rank that cannot be placed). `steps` must
// outlive the chooser.
SpanChooser StepSpans(const RecordingOffsets& al, const std::map<int32_t, RankTraceTimeline>& timelines,
                      const std::vector<int64_t>& steps) {
  return [&al, &timelines, &steps](size_t segment, int32_t rank) -> std::optional<std::vector<RecordedSpan>> {
    auto off = al.offsets.find({segment, rank});
    auto tl = timelines.find(rank);
    if (off == al.offsets.end() || tl == timelines.end()) return std::nullopt;
    std::vector<RecordedSpan> spans;
    for (int64_t step : steps) {
      auto w = tl->second.steps.find(step);
      if (w == tl->second.steps.end()) continue;
      const int64_t start = w->second.first - off->second, end = w->second.second - off->second;
      if (end > start && start > 0) spans.push_back({static_cast<uint64_t>(start), static_cast<uint64_t>(end)});
    }
    if (spans.empty()) return std::nullopt;
    return spans;
  };
}

// The metrics over the traces' steps, when every rank can be placed on them; else nullopt. A link is judged
// there (SlowLink): what it costs a step is its excess during the steps the traces diagnose, not over the
// whole training window, which also holds set-up and iterations the traces do not (the lab turns its fault on
// just before the recorded steps: a slow link's excess over the window was 2.7 % of the time, under the
// minimum effect, for a cost of 8 % of each recorded step; held-out run of 2026-12-04, 4-rank job).
std::optional<std::map<int32_t, RankLayerMetrics>> MetricsOverTheSteps(
    const RecordedLayers& layers, const std::map<int32_t, RankTraceTimeline>& timelines, const PathResult& traces,
    const RecordingOffsets& al, size_t ranks) {
  if (!al.aligned() || traces.steps.empty()) return std::nullopt;
  std::map<int32_t, RankLayerMetrics> metrics = MeasureRankLayers(layers, StepSpans(al, timelines, traces.steps));
  if (metrics.size() != ranks) return std::nullopt;
  return metrics;
}

// Each step's link excess (LinkExcessBySteps) from the link counters alone: per step and rank, the busiest
// link's share of the step (FillNetwork), the rank's less its peers' median, times the step's length. Ranks
// whose step cannot be placed are left out of that step. Costs one pass over the link samples per step.
LinkExcessBySteps LinkExcessOfSteps(const RecordedLayers& layers, const std::map<int32_t, RankTraceTimeline>& timelines,
                                    const PathResult& traces, const RecordingOffsets& al) {
  if (!al.aligned() || traces.steps.empty()) return {};
  return [&layers, &timelines, &traces, &al](int32_t rank) {
    std::map<int64_t, double> out;
    for (int64_t step : traces.steps) {
      const std::vector<int64_t> one{step};
      const SpanChooser chooser = StepSpans(al, timelines, one);
      std::map<int32_t, RankLayerMetrics> metrics;
      for (size_t i = 0; i < layers.segments.size(); ++i) {
        const RecordedLayerSegment& seg = layers.segments[i];
        if (!seg.own_namespaces) continue;
        for (const auto& [r, rank_layers] : seg.ranks) {
          const std::optional<std::vector<RecordedSpan>> spans = chooser(i, r);
          if (!spans) continue;
          const Window w{*spans};
          RankLayerMetrics& m = metrics[r];
          m.window_s = static_cast<double>(w.Length()) / 1e9;
          if (m.window_s > 0) FillNetwork(rank_layers, w, &m);
        }
      }
      auto own = metrics.find(rank);
      if (own == metrics.end() || own->second.link_busy_share < 0 || metrics.size() < 2) continue;
      const double peers = OtherRanksMedian(metrics, rank, &RankLayerMetrics::link_busy_share);
      out[step] = (own->second.link_busy_share - peers) * own->second.window_s * 1000;
    }
    return out;
  };
}

// CPU contention's share of a rank's window beyond its peers: the wait behind other processes, or the whole
// wait that is not on an idle CPU when other processes visibly hold a fair part of it (they displaced the
// rank's own threads onto its core: thresholds::kForeignShareOfDisplacedWait). The waits on waking from an
// uninterruptible sleep are that sleep's cost (MemoryCandidate), not the displaced threads'.
RecordedCandidate ContentionCandidate(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  const RankLayerMetrics& m = metrics.at(rank);
  auto excess = [&](double RankLayerMetrics::*field) { return m.*field - OtherRanksMedian(metrics, rank, field); };
  const double foreign = excess(&RankLayerMetrics::runq_foreign_share);
  const double displaced = excess(&RankLayerMetrics::runq_share) - excess(&RankLayerMetrics::runq_idle_share) -
                           WakingFromSleepExcess(metrics, rank);
  const std::string who = m.top_foreign.empty() ? "another process" : m.top_foreign;
  if (foreign <= 0 || displaced <= foreign || foreign < thresholds::kForeignShareOfDisplacedWait * displaced)
    return RecordedCandidate{
        Cause::kCpuContention, Layer::kCpu, foreign,
        fmt::format("waited for a CPU {:.1f} % of the time while {} ran", 100 * m.runq_foreign_share, who),
        std::max(0.0, foreign - WakingFromSleepExcess(metrics, rank))};
  const double own = m.runq_share - m.runq_foreign_share - m.runq_idle_share;
  return RecordedCandidate{
      Cause::kCpuContention, Layer::kCpu, displaced,
      fmt::format("waited for a CPU {:.1f} % of the time: {:.1f} % while {} ran, {:.1f} % behind its own threads "
                  "(its peers {:.1f} % in all: {} displaced them onto its core)",
                  100 * m.runq_share, 100 * m.runq_foreign_share, who, 100 * own,
                  100 * OtherRanksMedian(metrics, rank, &RankLayerMetrics::runq_share), who)};
}

// Whether the rank's cgroup quota is its own: throttled by kMinRecordedExcess of the time beyond its peers and
// kRecordedOwnMultiple times theirs.
bool OwnQuota(const std::map<int32_t, RankLayerMetrics>& metrics, int32_t rank) {
  const double own = metrics.at(rank).throttled_share;
  const double peers = OtherRanksMedian(metrics, rank, &RankLayerMetrics::throttled_share);
  return own - peers >= kMinRecordedExcess && own >= thresholds::kRecordedOwnMultiple * peers;
}

// CPU throttling's share of a rank's window beyond its peers: its cgroup's throttled time, or its wait on an
// idle CPU when it was throttled at all; and, when the quota is its own (OwnQuota, over the late steps or else
// over the training window `all_metrics`: the cgroup's counters are sampled a few times a second, and a few
// late steps may hold no sample), its whole run-queue wait beyond theirs. A throttled group's threads stay
// runnable while its quota is spent and queue, once it is refilled, behind what ran meanwhile: on a busy
// machine that wait shows as a wait behind other processes, which alone would name cpu_contention (the lab's
// throttled rank, tuning seed 90252: throttled 4.2 % of its window, 33.6 % of it behind a compiler against its
// peer's 3.1 %; the lab's own measure, +18 ms of run-queue wait per step with the quota on).
RecordedCandidate ThrottleCandidate(const std::map<int32_t, RankLayerMetrics>& metrics,
                                    const std::map<int32_t, RankLayerMetrics>* all_metrics, int32_t rank) {
  const RankLayerMetrics& m = metrics.at(rank);
  auto excess = [&](double RankLayerMetrics::*field) { return m.*field - OtherRanksMedian(metrics, rank, field); };
  const bool own_quota =
      OwnQuota(metrics, rank) || (all_metrics && all_metrics->count(rank) && OwnQuota(*all_metrics, rank));
  double share = std::max(excess(&RankLayerMetrics::throttled_share),
                          m.throttled_share > 0 ? excess(&RankLayerMetrics::runq_idle_share) : 0.0);
  if (own_quota) share = std::max(share, excess(&RankLayerMetrics::runq_share));
  return RecordedCandidate{
      Cause::kCpuThrottling, Layer::kCpu, share,
      fmt::format("cgroup CPU throttling: throttled {:.1f} % of the time, runnable on an idle CPU {:.1f} %{}",
                  100 * m.throttled_share, 100 * m.runq_idle_share,
                  own_quota ? fmt::format(", waiting for a CPU {:.1f} % in all (its peers {:.1f} %: the quota is "
                                          "its own, so is the wait)",
                                          100 * m.runq_share,
                                          100 * OtherRanksMedian(metrics, rank, &RankLayerMetrics::runq_share))
                            : std::string())};
}

// The recording's candidate causes of a rank's lateness, each with its excess over the peers' median
// (share of the window). all_metrics (over the training window) judges a link the late steps cannot.
std::vector<RecordedCandidate> RecordedCandidates(const std::map<int32_t, RankLayerMetrics>& metrics,
                                                  const std::map<int32_t, RankLayerMetrics>* all_metrics,
                                                  int32_t rank) {
  const RankLayerMetrics& m = metrics.at(rank);
  auto excess = [&](double RankLayerMetrics::*field) { return m.*field - OtherRanksMedian(metrics, rank, field); };
  std::vector<RecordedCandidate> candidates;
  candidates.push_back(ThrottleCandidate(metrics, all_metrics, rank));
  candidates.push_back(ContentionCandidate(metrics, rank));
  candidates.push_back(RecordedCandidate{
      Cause::kGcPause, Layer::kPython, excess(&RankLayerMetrics::gc_share),
      fmt::format("{} Python garbage collections took {:.1f} % of the time", m.gc_count, 100 * m.gc_share)});
  // An uninterruptible sleep costs the sleep and the wait for a CPU on waking from it: on a core other threads
  // want, the latter can outweigh the former (the lab's memory pressure at 4 and 8 ranks on 2 cores, seeds
  // 31000+: 1.5-3x; at 2 ranks 0.1-0.2x).
  const double dstate = excess(&RankLayerMetrics::dstate_share) + WakingFromSleepExcess(metrics, rank);
  const bool memory_signal = excess(&RankLayerMetrics::majflt_per_s) > thresholds::kMemoryFaultsPerS ||
                             excess(&RankLayerMetrics::memcg_fail_per_s) > 0;
  // Under memory pressure the time goes to blocking on faults (uninterruptible sleep) and to fault handling
  // and direct reclaim on the CPU, in the kernel: both count. Without a memory signal, only blocking (I/O).
  const double memory = dstate + std::max(0.0, excess(&RankLayerMetrics::sys_share));
  candidates.push_back(RecordedCandidate{
      memory_signal ? Cause::kMemoryPressure : Cause::kIoStall, Layer::kOs, memory_signal ? memory : dstate,
      fmt::format("in uninterruptible sleep {:.1f} % of the time, waiting for a CPU on waking from it {:.1f} %, "
                  "in the kernel {:.1f} % ({:.0f} major faults/s, {:.1f} memory-cgroup limit hits/s)",
                  100 * m.dstate_share, 100 * m.runq_after_dstate_share, 100 * m.sys_share, m.majflt_per_s,
                  m.memcg_fail_per_s)});
  // A link's capacity and traffic are counters sampled a few times a second: a few late steps may hold
  // no sample of them, so without a verdict there the link is judged over the training window.
  if (auto slower = SlowerLinkExcess(metrics, rank))
    candidates.push_back(RecordedCandidate{Cause::kSlowCommunication, Layer::kComm, *slower, LinkWhat(metrics, rank)});
  else if (all_metrics && all_metrics->count(rank))
    if (auto over_window = SlowerLinkExcess(*all_metrics, rank))
      candidates.push_back(RecordedCandidate{Cause::kSlowCommunication, Layer::kComm, *over_window,
                                             LinkWhat(*all_metrics, rank) + " (over the training window)"});
  return candidates;
}

}  // namespace

std::map<int32_t, RankLayerMetrics> MeasureRankLayers(const RecordedLayers& layers, const SpanChooser& spans) {
  std::map<int32_t, RankLayerMetrics> metrics;
  for (size_t i = 0; i < layers.segments.size(); ++i) MeasureSegment(layers.segments[i], i, spans, &metrics);
  return metrics;
}

namespace {

// The cause a straggler's finding names once the recording's choice is applied: the recording's when it names
// one, else the traces' (nullopt without a finding, or for `unknown`: a second cause needs a first).
std::optional<Cause> FirstCause(const CauseChoice& recorded, const Finding* traced) {
  if (recorded.names) return recorded.cause;
  if (traced && traced->cause != Cause::kUnknown) return traced->cause;
  return std::nullopt;
}

// JudgeWithRecording over `layers` aligned as `al` says.
RecordingJudgement JudgeAligned(const RecordedLayers& layers, const std::map<int32_t, RankTraceTimeline>& timelines,
                                const PathResult& traces, const std::map<int64_t, double>& transfer_ms_by_step,
                                const RecordingOffsets& al) {
  RecordingJudgement judgement;
  if (layers.empty()) return judgement;
  const auto all_metrics = MeasureRankLayers(layers);
  if (all_metrics.size() < 2) {
    judgement.notes.push_back(
        fmt::format("recorder data covers {} rank(s): cross-layer comparison needs the straggler and at least one peer",
                    all_metrics.size()));
    return judgement;
  }
  // Segments none of whose ranks match the traces (e.g. an older recording left in the directory) while
  // others match: left out, so that they do not stand in for the job's ranks.
  if (!al.offsets.empty() && al.offsets.size() < al.ranks_recorded) {
    auto [matching, left_out] = MatchingSegments(layers, al);
    if (!left_out.empty()) {
      RecordingJudgement of_matching =
          JudgeAligned(matching, timelines, traces, transfer_ms_by_step, MatchingOffsets(al, matching, left_out));
      of_matching.notes.insert(
          of_matching.notes.begin(),
          fmt::format("{} of {} recorder segments match none of the traces' collectives (another layers's recording?) "
                      "and were left out (segments {})",
                      left_out.size(), layers.segments.size(), fmt::join(left_out, ", ")));
      return of_matching;
    }
  }
  if (!al.aligned())
    judgement.notes.push_back(fmt::format(
        "the recording could be put on the traces' clock for {} of {} recorded ranks (by matching collectives): "
        "cross-layer metrics cover each rank's whole training window instead of the late steps",
        al.offsets.size(), al.ranks_recorded));

  for (const Straggler& straggler : traces.stragglers) {
    const bool by_late_steps = al.aligned() && !straggler.steps.empty();
    const auto metrics =
        by_late_steps ? MeasureRankLayers(layers, StepSpans(al, timelines, straggler.steps)) : all_metrics;
    const int32_t rank = straggler.rank.value();  // the recording's metrics are by rank number
    if (!metrics.count(rank)) {
      judgement.notes.push_back(fmt::format("no recorder data for straggler rank {}", straggler.rank));
      continue;
    }
    const double late_share =
        traces.step_time_median_ms > 0 ? straggler.late_ms_per_step / traces.step_time_median_ms : 0.0;
    const Finding* traced = FindingOfRank(traces.findings, straggler.rank);
    RecordingJudgement::StragglerEvidence e;
    e.rank = straggler.rank;
    e.late_share = late_share;
    const RecordingEvidence evidence{
        .named = traced ? std::optional<Cause>(traced->cause) : std::nullopt,
        .candidates = RecordedCandidates(metrics, by_late_steps ? &all_metrics : nullptr, rank),
        .link = LinkLoadOf(metrics, rank),
        .late_share = late_share};
    e.choice = NameCause(evidence);
    e.second = NameSecondCause(evidence, FirstCause(e.choice, traced));
    e.comparison = CrossLayerEvidence(metrics, rank, by_late_steps);
    e.comparison.explained = CrossLayerComparison::Explained{late_share, e.choice.excess};
    judgement.evidence.push_back(std::move(e));
  }
  const TraceLatenessByRank traced = TracedLateness(timelines);
  judgement.cpu_slowed = CpuSlowed(all_metrics, traced, traces);
  const Straggler* top = judgement.cpu_slowed        ? &judgement.cpu_slowed->stragglers.front()
                         : traces.stragglers.empty() ? nullptr
                                                     : &traces.stragglers.front();
  const auto over_steps = MetricsOverTheSteps(layers, timelines, traces, al, all_metrics.size());
  judgement.slow_link = SlowLink(over_steps ? *over_steps : all_metrics, traced, transfer_ms_by_step,
                                 LinkExcessOfSteps(layers, timelines, traces, al), traces, top);
  return judgement;
}

}  // namespace

RecordingJudgement JudgeWithRecording(const RecordedLayers& layers,
                                      const std::map<int32_t, RankTraceTimeline>& timelines, const PathResult& traces,
                                      const std::map<int64_t, double>& transfer_ms_by_step) {
  const RecordingOffsets al = AlignSegments(layers, timelines);
  RecordingJudgement judgement = JudgeAligned(layers, timelines, traces, transfer_ms_by_step, al);
  judgement.recording_offsets_ns = al.offsets;
  return judgement;
}

void ApplyCrossLayerEvidence(const RecordedLayers& layers, const std::map<int32_t, RankTraceTimeline>& timelines,
                             DiagnosisResult* result, const std::map<int64_t, double>& transfer_ms_by_step) {
  ApplyRecordingJudgement(JudgeWithRecording(layers, timelines, *result, transfer_ms_by_step), result);
}

}  // namespace strata::diagnosis
