// The per-rank quantities `strata summary` compares across ranks, their spread over the job, and the one rule
// that names a rank an outlier on them (thresholds::kSummaryOutlier*). Computed once here, when the summary is
// made (job_summary.cc); reports/summary_report.cc renders these values and computes none of them.
// Invariants: a metric a rank lacks (no GPU rows, no recording, no span) is NaN and takes part in nothing;
// an outlier's `index` is into JobSummary::ranks; outliers are ordered most different first, then by rank.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace strata {

struct RankSummary;

enum class SummaryMetricKind : uint8_t { kCount, kDuration, kPercent };

struct SummaryMetric {
  SummaryMetricKind kind;
  const char* name;    // in the text and the JSON's outliers
  const char* header;  // of the text's rank table
  // The larger value is the worse one (time lost), so that of two ranks the larger can be named the outlier.
  bool higher_is_worse;
};

inline constexpr size_t kNumSummaryMetrics = 15;
/// The metrics, in the order of SummaryMetricValues: counts, durations in ms, percentages in percent.
extern const std::array<SummaryMetric, kNumSummaryMetrics> kSummaryMetrics;

/// One rank's metrics, by kSummaryMetrics; NaN where absent.
using SummaryMetricValues = std::array<double, kNumSummaryMetrics>;

/// A rank's span (its first event's start to its last event's end) in ns, exact while it fits in int64 (a span
/// across wild timestamps would overflow the subtraction); 0 without events.
double RankSpanNs(const RankSummary& rank);

/// A rank's metrics from its summary.
SummaryMetricValues MeasureSummaryMetrics(const RankSummary& rank);

/// A metric over the ranks that have it: min / median / max and the positions (into the ranks) of the extremes
/// (the first of equal values).
struct SummaryMetricSpread {
  double min = 0, median = 0, max = 0;
  size_t min_at = 0, max_at = 0;
};

/// Per metric, its spread, or nullopt when no rank has it.
std::array<std::optional<SummaryMetricSpread>, kNumSummaryMetrics> SpreadOverRanks(
    const std::vector<SummaryMetricValues>& ranks);

struct SummaryOutlier {
  size_t index = 0;                   // into the ranks
  double score = 0;                   // largest robust z over the metrics (1e9 when the MAD is 0), or a pair's ratio
  size_t metric = 0;                  // of that score
  double value = 0;                   // the rank's
  double against = 0;                 // the ranks' median, or the other rank's value (pair)
  std::optional<int32_t> other_rank;  // pair: the rank number compared with
};

/// Ranks whose metrics stand out from the other ranks': beyond kSummaryOutlierMads scaled MADs of the median
/// with kSummaryOutlierMinRanks or more ranks having the metric, or, with exactly two and a higher-is-worse
/// metric, the worse at kSummaryOutlierPairRatio times the other; each rank with the metric it stands out
/// most on. `rank_numbers[i]` is the rank number of ranks[i] (ties are ordered by it).
std::vector<SummaryOutlier> FindSummaryOutliers(const std::vector<SummaryMetricValues>& ranks,
                                                const std::vector<int32_t>& rank_numbers);

}  // namespace strata
