// Summary metrics, their spread and the outlier rule (see summary_metrics.h).
#include "analysis/summary_metrics.h"

#include <algorithm>
#include <cmath>

#include "analysis/diagnosis/thresholds.h"
#include "analysis/job_summary.h"
#include "core/robust_stats.h"

namespace strata {

using diagnosis::thresholds::kSummaryOutlierMads;
using diagnosis::thresholds::kSummaryOutlierMinPoints;
using diagnosis::thresholds::kSummaryOutlierMinRanks;
using diagnosis::thresholds::kSummaryOutlierMinShare;
using diagnosis::thresholds::kSummaryOutlierPairRatio;

const std::array<SummaryMetric, kNumSummaryMetrics> kSummaryMetrics = {{
    {SummaryMetricKind::kCount, "events", ">events", false},
    {SummaryMetricKind::kDuration, "span", ">span", false},
    {SummaryMetricKind::kDuration, "kernel time", ">kernel", false},
    {SummaryMetricKind::kPercent, "idle", ">idle", true},
    {SummaryMetricKind::kPercent, "compute", ">compute", false},
    {SummaryMetricKind::kPercent, "non-compute", ">non-comp", false},
    {SummaryMetricKind::kPercent, "comm overlap", ">overlap", false},
    {SummaryMetricKind::kDuration, "op compute/step", ">op compute", false},
    {SummaryMetricKind::kDuration, "host wait", ">host wait", true},          // HTA idle-time breakdown, all streams
    {SummaryMetricKind::kDuration, "launch delay p50", ">launch p50", true},  // HTA kernel launch statistics
    {SummaryMetricKind::kCount, "queue max", ">queue max", true},             // HTA queue length, any stream
    {SummaryMetricKind::kPercent, "run queue", ">run queue", true},           // a recording: of the training window
    {SummaryMetricKind::kPercent, "GC", ">GC", true},
    {SummaryMetricKind::kPercent, "D-state", ">D-state", true},
    {SummaryMetricKind::kDuration, "cpu compute/step", ">cpu compute", true},  // a CPU trace: outside collectives
}};

namespace {

std::vector<double> Present(const std::vector<SummaryMetricValues>& ranks, size_t metric) {
  std::vector<double> v;
  for (const auto& r : ranks)
    if (!std::isnan(r[metric])) v.push_back(r[metric]);
  return v;
}

bool Matters(size_t metric, double difference, double reference) {
  return kSummaryMetrics[metric].kind == SummaryMetricKind::kPercent
             ? difference >= kSummaryOutlierMinPoints
             : difference >= kSummaryOutlierMinShare * std::abs(reference);
}

// Two ranks with the metric: the worse of them, when it is kSummaryOutlierPairRatio times the other (score: the
// ratio).
void PairOutlier(const std::vector<SummaryMetricValues>& ranks, const std::vector<int32_t>& numbers, size_t k,
                 std::vector<SummaryOutlier>* found) {
  if (!kSummaryMetrics[k].higher_is_worse) return;
  std::vector<size_t> with;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (!std::isnan(ranks[i][k])) with.push_back(i);
  if (with.size() != 2) return;
  size_t hi = with[0], lo = with[1];
  if (ranks[lo][k] > ranks[hi][k]) std::swap(hi, lo);
  const double a = ranks[hi][k], b = ranks[lo][k];
  if (b < 0 || !Matters(k, a - b, b) || a < kSummaryOutlierPairRatio * b) return;
  const double score = b > 0 ? a / b : 1e9;
  SummaryOutlier& o = (*found)[hi];
  if (score <= o.score) return;
  o = SummaryOutlier{hi, score, k, a, b, numbers[lo]};
}

// kSummaryOutlierMinRanks or more ranks with the metric: each rank beyond kSummaryOutlierMads scaled MADs of their
// median.
void MadOutliers(const std::vector<SummaryMetricValues>& ranks, size_t k, std::vector<SummaryOutlier>* found) {
  const std::vector<double> v = Present(ranks, k);
  if (v.size() < kSummaryOutlierMinRanks) return;
  const double median = Median(v);
  const double mad = 1.4826 * Mad(v);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const double x = ranks[i][k];
    if (std::isnan(x)) continue;
    const double d = std::abs(x - median);
    if (!Matters(k, d, median)) continue;
    const double z = mad > 0 ? d / mad : 1e9;
    SummaryOutlier& o = (*found)[i];
    if (z < kSummaryOutlierMads || z <= o.score) continue;
    o = SummaryOutlier{i, z, k, x, median, std::nullopt};
  }
}

}  // namespace

double RankSpanNs(const RankSummary& rs) {
  if (!rs.has_span) return 0;
  int64_t d;
  if (!__builtin_sub_overflow(rs.span_end_ns, rs.span_start_ns, &d)) return static_cast<double>(d);
  return static_cast<double>(rs.span_end_ns) - static_cast<double>(rs.span_start_ns);
}

SummaryMetricValues MeasureSummaryMetrics(const RankSummary& rs) {
  SummaryMetricValues m;
  m.fill(std::nan(""));
  m[0] = static_cast<double>(rs.events);
  if (rs.has_span) m[1] = RankSpanNs(rs) / 1e6;
  if (rs.gpu && rs.gpu->gpu_events > 0) {
    m[2] = rs.gpu->kernel_time_us / 1e3;
    m[3] = rs.gpu->idle_pct;
    m[4] = rs.gpu->compute_pct;
    m[5] = rs.gpu->non_compute_pct;
    if (rs.gpu->comm_comp_overlap_pct) m[6] = *rs.gpu->comm_comp_overlap_pct;
  }
  if (rs.op_compute_ms_per_step) m[7] = *rs.op_compute_ms_per_step;
  if (rs.idle) m[8] = rs.idle->idle_us[static_cast<size_t>(IdleCategory::kHostWait)] / 1e3;
  if (rs.launches) m[9] = rs.launches->launch_delay.median_us / 1e3;
  for (const StreamQueueLength& q : rs.queues) m[10] = std::isnan(m[10]) ? q.max : std::max(m[10], double(q.max));
  if (rs.recorded) {
    m[11] = 100.0 * rs.recorded->runq_share;
    m[12] = 100.0 * rs.recorded->gc_share;
    m[13] = 100.0 * rs.recorded->dstate_share;
  }
  if (rs.cpu_compute_ms_per_step) m[14] = *rs.cpu_compute_ms_per_step;
  return m;
}

std::array<std::optional<SummaryMetricSpread>, kNumSummaryMetrics> SpreadOverRanks(
    const std::vector<SummaryMetricValues>& ranks) {
  std::array<std::optional<SummaryMetricSpread>, kNumSummaryMetrics> out;
  for (size_t k = 0; k < kNumSummaryMetrics; ++k) {
    const std::vector<double> v = Present(ranks, k);
    if (v.empty()) continue;
    SummaryMetricSpread s;
    bool first = true;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const double x = ranks[i][k];
      if (std::isnan(x)) continue;
      if (first || x < ranks[s.min_at][k]) s.min_at = i;
      if (first || x > ranks[s.max_at][k]) s.max_at = i;
      first = false;
    }
    s.min = ranks[s.min_at][k];
    s.max = ranks[s.max_at][k];
    s.median = Median(v);
    out[k] = s;
  }
  return out;
}

std::vector<SummaryOutlier> FindSummaryOutliers(const std::vector<SummaryMetricValues>& ranks,
                                                const std::vector<int32_t>& rank_numbers) {
  std::vector<SummaryOutlier> found(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) found[i].index = i;
  for (size_t k = 0; k < kNumSummaryMetrics; ++k) {
    MadOutliers(ranks, k, &found);
    PairOutlier(ranks, rank_numbers, k, &found);
  }
  std::vector<SummaryOutlier> out;
  for (SummaryOutlier& o : found)
    if (o.score > 0) out.push_back(std::move(o));
  std::stable_sort(out.begin(), out.end(), [&](const SummaryOutlier& a, const SummaryOutlier& b) {
    if (a.score != b.score) return a.score > b.score;
    return rank_numbers[a.index] < rank_numbers[b.index];
  });
  return out;
}

}  // namespace strata
