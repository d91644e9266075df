// Summary rendering (see summary_report.h). JSON: percentages rounded to 4 decimals, times whole µs for GPU
// metrics (HTA rounds to µs) and µs with 3 decimals for spans. Text: the job's min / median / max over ranks,
// then the outlier ranks (or every rank when few), scaled units with three significant digits.
#include "reports/summary_report.h"
#include "core/round.h"

#include <fmt/format.h>

#include "analysis/diagnosis/thresholds.h"
#include "core/text_escape.h"
#include "reports/skip_report.h"
#include "reports/text_format.h"

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <optional>
#include <type_traits>

namespace strata {

namespace {

nlohmann::ordered_json CountsJson(const std::map<std::string, uint64_t>& m) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

nlohmann::ordered_json CountsJson(const SkipCounts& counts) { return CountsJson(counts.ByKey()); }

// Microseconds: whole numbers print as integers (HTA's rounded values), others with 3 decimals.
nlohmann::ordered_json Us(double v) {
  if (std::abs(v) < 9e15 && v == std::floor(v)) return static_cast<int64_t>(v);
  return RoundTo(v, 3);
}

nlohmann::ordered_json GpuJson(const GpuBreakdown& g) {
  nlohmann::ordered_json j;
  j["events"] = g.gpu_events;
  j["rounded_to_us"] = g.rounded_to_us;
  j["temporal_breakdown"] = {{"kernel_time_us", Us(g.kernel_time_us)},
                             {"idle_us", Us(g.idle_us)},
                             {"compute_us", Us(g.compute_us)},
                             {"non_compute_us", Us(g.non_compute_us)},
                             {"idle_pct", RoundTo(g.idle_pct, 4)},
                             {"compute_pct", RoundTo(g.compute_pct, 4)},
                             {"non_compute_pct", RoundTo(g.non_compute_pct, 4)}};
  j["comm_comp_overlap_pct"] =
      g.comm_comp_overlap_pct ? nlohmann::ordered_json(RoundTo(*g.comm_comp_overlap_pct, 4)) : nlohmann::ordered_json();
  nlohmann::ordered_json types = nlohmann::ordered_json::object();
  double total = 0;
  for (double t : g.type_time_us) total += t;
  for (KernelType t : {KernelType::kCommunication, KernelType::kComputation, KernelType::kMemory}) {
    const auto i = static_cast<size_t>(t);
    if (g.type_count[i] == 0) continue;
    types[KernelTypeName(t)] = {{"count", g.type_count[i]},
                                {"time_us", Us(g.type_time_us[i])},
                                {"pct", total > 0 ? RoundTo(100.0 * g.type_time_us[i] / total, 4) : 0.0}};
  }
  j["kernel_types"] = types;
  // Device rows of no kernel type (e.g. Stream Sync): in kernel time and non-compute, in no type (as HTA).
  const auto other = static_cast<size_t>(KernelType::kOther);
  j["untyped_device_rows"] = {{"count", g.type_count[other]}, {"time_us", Us(g.type_time_us[other])}};
  nlohmann::ordered_json top = nlohmann::ordered_json::array();
  for (const KernelStat& k : g.top_kernels) {
    top.push_back({{"name", k.name},
                   {"type", KernelTypeName(k.type)},
                   {"count", k.count},
                   {"time_us", Us(k.time_us)},
                   {"mean_us", RoundTo(k.time_us / static_cast<double>(k.count), 3)},
                   {"min_us", Us(k.min_us)},
                   {"max_us", Us(k.max_us)}});
  }
  j["top_kernels"] = top;
  return j;
}

nlohmann::ordered_json IdleJson(const IdleTimeBreakdown& idle) {
  auto categories = [](const std::array<double, 3>& us) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    const double total = us[0] + us[1] + us[2];
    for (IdleCategory c : {IdleCategory::kHostWait, IdleCategory::kKernelWait, IdleCategory::kOther}) {
      const double v = us[static_cast<size_t>(c)];
      j[IdleCategoryName(c)] = {{"us", Us(v)}, {"ratio", total != 0 ? RoundTo(v / total, 4) : 0.0}};
    }
    return j;
  };
  nlohmann::ordered_json j = categories(idle.idle_us);
  nlohmann::ordered_json streams = nlohmann::ordered_json::array();
  for (const StreamIdleTime& s : idle.streams) {
    nlohmann::ordered_json row = {{"stream", s.stream}};
    row.update(categories(s.idle_us));
    row["gaps"] = {{"host_wait", s.gaps[0]}, {"kernel_wait", s.gaps[1]}, {"other", s.gaps[2]}};
    streams.push_back(std::move(row));
  }
  j["streams"] = std::move(streams);
  return j;
}

nlohmann::ordered_json DistributionJson(const LaunchDistribution& d) {
  return {{"mean_us", RoundTo(d.mean_us, 3)},
          {"median_us", Us(d.median_us)},
          {"p95_us", Us(d.p95_us)},
          {"max_us", Us(d.max_us)}};
}

nlohmann::ordered_json LaunchJson(const LaunchStats& l) {
  const LaunchStatsOptions cutoffs;
  return {{"launches", l.launches},
          {"cpu_duration", DistributionJson(l.cpu_duration)},
          {"gpu_duration", DistributionJson(l.gpu_duration)},
          {"launch_delay", DistributionJson(l.launch_delay)},
          {"short_kernels", l.short_kernels},
          {"runtime_outliers", {{"cutoff_us", Us(cutoffs.runtime_cutoff_us)}, {"count", l.runtime_outliers}}},
          {"launch_delay_outliers",
           {{"cutoff_us", Us(cutoffs.launch_delay_cutoff_us)}, {"count", l.launch_delay_outliers}}}};
}

// A series as [[µs, value], ...] (µs to the ns, values to 4 decimals).
template <typename Value>
nlohmann::ordered_json SeriesJson(const std::vector<std::pair<double, Value>>& series) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& [us, value] : series) {
    if constexpr (std::is_floating_point_v<Value>)
      j.push_back({RoundTo(us, 3), RoundTo(value, 4)});
    else
      j.push_back({RoundTo(us, 3), value});
  }
  return j;
}

nlohmann::ordered_json QueueJson(const std::vector<StreamQueueLength>& queues, bool series) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const StreamQueueLength& q : queues) {
    j.push_back({{"stream", q.stream},
                 {"points", q.series.size()},
                 {"mean", RoundTo(q.mean, 4)},
                 {"max", q.max},
                 {"full_queue_us", Us(q.full_us)}});
    if (series) j.back()["series"] = SeriesJson(q.series);
  }
  return j;
}

nlohmann::ordered_json MemoryBandwidthJson(const std::vector<MemoryBandwidthKind>& kinds, bool series) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const MemoryBandwidthKind& k : kinds) {
    j.push_back({{"kind", k.kind},
                 {"changes", k.series.size()},
                 {"points", k.points},
                 {"mean_gbps", RoundTo(k.mean, 4)},
                 {"std_gbps", k.std ? nlohmann::ordered_json(RoundTo(*k.std, 4)) : nlohmann::ordered_json()},
                 {"min_gbps", RoundTo(k.min, 4)},
                 {"p25_gbps", RoundTo(k.p25, 4)},
                 {"p50_gbps", RoundTo(k.p50, 4)},
                 {"p75_gbps", RoundTo(k.p75, 4)},
                 {"max_gbps", RoundTo(k.max, 4)}});
    if (series) j.back()["series"] = SeriesJson(k.series);
  }
  return j;
}

nlohmann::ordered_json SequencesJson(const std::vector<KernelSequence>& sequences) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const KernelSequence& s : sequences) {
    std::string pattern;
    for (const std::string& n : s.names) pattern += (pattern.empty() ? "" : "|") + n;
    j.push_back(
        {{"pattern", JsonSafe(pattern)}, {"count", s.count}, {"gpu_us", Us(s.gpu_us)}, {"cpu_us", Us(s.cpu_us)}});
  }
  return j;
}

nlohmann::ordered_json RecordedJson(const diagnosis::RankLayerMetrics& m) {
  return {{"window_s", RoundTo(m.window_s, 3)},
          {"run_queue_pct", RoundTo(100 * m.runq_share, 4)},
          {"gc_pct", RoundTo(100 * m.gc_share, 4)},
          {"dstate_pct", RoundTo(100 * m.dstate_share, 4)},
          {"cgroup_throttled_pct", RoundTo(100 * m.throttled_share, 4)}};
}

std::string StepsText(const std::vector<int64_t>& steps) {
  if (steps.empty()) return "-";
  if (steps.size() == 1) return fmt::format("{}", steps[0]);
  const bool contiguous = steps.back() - steps.front() + 1 == static_cast<int64_t>(steps.size());
  return contiguous ? fmt::format("{}-{}", steps.front(), steps.back())
                    : fmt::format("{} ({}..{})", steps.size(), steps.front(), steps.back());
}

std::string Base(const std::string& path) { return TerminalSafe(std::filesystem::path(path).filename().string()); }

// Text layout: up to this many ranks every rank gets a row; above, only the outlier ranks (--per-rank: all).
constexpr size_t kAllRowsUpTo = 8;
// One rank's row of the text report: its metrics (JobSummary::metrics, NaN where absent) and how it is named.
struct RankMetrics {
  int32_t rank = 0;
  std::string input, steps;
  SummaryMetricValues values;
};

std::vector<RankMetrics> RankRows(const TraceStore& store, const JobSummary& summary) {
  std::vector<RankMetrics> out;
  for (size_t i = 0; i < summary.ranks.size(); ++i) {
    const RankInfo& info = store.ranks[summary.ranks[i].rank_index];
    out.push_back(
        {info.rank, Base(store.inputs[info.input].path), StepsText(summary.ranks[i].steps), summary.metrics[i]});
  }
  return out;
}

std::string Value(size_t metric, double v) {
  if (std::isnan(v)) return "-";
  switch (kSummaryMetrics[metric].kind) {
    case SummaryMetricKind::kCount:
      return fmt::format("{}", static_cast<int64_t>(v));
    case SummaryMetricKind::kPercent:
      return text::Percent(v);
    case SummaryMetricKind::kDuration:
      return text::Duration(v);
  }
  return "-";
}

// What an outlier stands out on, for the rank table.
std::string Why(const SummaryOutlier& o) {
  const size_t k = o.metric;
  if (o.other_rank)
    return fmt::format("{} {} vs rank {}'s {}", kSummaryMetrics[k].name, Value(k, o.value), *o.other_rank,
                       Value(k, o.against));
  return fmt::format("{} {} vs median {}", kSummaryMetrics[k].name, Value(k, o.value), Value(k, o.against));
}

nlohmann::ordered_json OutliersJson(const std::vector<RankMetrics>& ranks,
                                    const std::vector<SummaryOutlier>& outliers) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const SummaryOutlier& o : outliers)
    j.push_back({{"rank", ranks[o.index].rank},
                 {"metric", kSummaryMetrics[o.metric].name},
                 {"value", RoundTo(o.value, 4)},
                 {o.other_rank ? "other_rank_value" : "median", RoundTo(o.against, 4)},
                 {"score", RoundTo(std::min(o.score, 1e9), 3)}});
  return j;
}

// The job over its ranks: min / median / max of every metric and the ranks holding the extremes.
std::string JobTable(const std::vector<RankMetrics>& ranks, const JobSummary& summary) {
  text::Table t({"metric", ">min", ">median", ">max", "min rank", "max rank"});
  for (size_t k = 0; k < kNumSummaryMetrics; ++k) {
    if (!summary.spread[k]) continue;
    const SummaryMetricSpread& s = *summary.spread[k];
    t.Add({kSummaryMetrics[k].name, Value(k, s.min), Value(k, s.median), Value(k, s.max),
           fmt::format("{}", ranks[s.min_at].rank), fmt::format("{}", ranks[s.max_at].rank)});
  }
  return "job over ranks:\n" + t.Render("  ");
}

// One row per rank in `order`; metric columns no listed rank has are left out, as is the outlier column
// when no listed rank is an outlier.
std::string SummaryRankTable(const std::vector<RankMetrics>& ranks, const std::vector<size_t>& order,
                             const std::vector<SummaryOutlier>& outliers) {
  std::vector<size_t> shown;
  for (size_t k = 0; k < kNumSummaryMetrics; ++k)
    if (std::any_of(order.begin(), order.end(), [&](size_t i) { return !std::isnan(ranks[i].values[k]); }))
      shown.push_back(k);
  const bool any_outlier = std::any_of(order.begin(), order.end(), [&](size_t i) {
    return std::any_of(outliers.begin(), outliers.end(), [&](const SummaryOutlier& o) { return o.index == i; });
  });
  std::vector<std::string> headers = {">rank", "input", ">steps"};
  for (size_t k : shown) headers.push_back(kSummaryMetrics[k].header);
  if (any_outlier) headers.push_back("outlier on");
  text::Table t(headers);
  for (size_t i : order) {
    const RankMetrics& m = ranks[i];
    std::vector<std::string> row = {fmt::format("{}", m.rank), text::Clip(m.input, 28), m.steps};
    for (size_t k : shown) row.push_back(Value(k, m.values[k]));
    for (const SummaryOutlier& o : outliers)
      if (o.index == i) row.push_back(Why(o));
    t.Add(std::move(row));
  }
  return t.Render("  ");
}

// Events by category; an input that records none (a PyTorch 1.x profile, a recording) says so.
std::string CategoriesText(const std::map<std::string, uint64_t>& categories) {
  if (categories.size() == 1 && categories.begin()->first == "(none)")
    return fmt::format("  events: {}, none with a category (the input records none)\n", categories.begin()->second);
  std::string out = "  events by category:";
  for (const auto& [cat, n] : categories) out += fmt::format(" {}={}", TerminalSafe(cat), n);
  return out + "\n";
}

std::string RecordedText(const diagnosis::RankLayerMetrics& m) {
  return fmt::format("  recording, over {:.3f} s of training: run queue {}, GC {}, D-state {}, cgroup throttled {}\n",
                     m.window_s, text::Percent(100 * m.runq_share), text::Percent(100 * m.gc_share),
                     text::Percent(100 * m.dstate_share), text::Percent(100 * m.throttled_share));
}

// HTA's idle-time breakdown, launch statistics and queue length of one rank (its detail block).
std::string HtaAnalysesText(const RankSummary& rs) {
  std::string out;
  if (rs.idle) {
    const IdleTimeBreakdown& i = *rs.idle;
    const double total = i.total_us();
    auto part = [&](IdleCategory c) {
      const double v = i.idle_us[static_cast<size_t>(c)];
      return fmt::format("{} {:.3f} ms ({:.1f}%)", IdleCategoryName(c), v / 1e3, total != 0 ? 100 * v / total : 0.0);
    };
    out += fmt::format("  idle time between kernels, {} stream{}: {:.3f} ms = {} + {} + {}\n", i.streams.size(),
                       i.streams.size() == 1 ? "" : "s", total / 1e3, part(IdleCategory::kHostWait),
                       part(IdleCategory::kKernelWait), part(IdleCategory::kOther));
  }
  if (rs.launches) {
    const LaunchStats& l = *rs.launches;
    const LaunchStatsOptions cutoffs;
    out += fmt::format(
        "  kernel launches: {}, launch delay median {} (p95 {}, max {}); short kernels {}, launch calls > {} {}, "
        "delays > {} {}\n",
        l.launches, text::Duration(l.launch_delay.median_us / 1e3), text::Duration(l.launch_delay.p95_us / 1e3),
        text::Duration(l.launch_delay.max_us / 1e3), l.short_kernels, text::Duration(cutoffs.runtime_cutoff_us / 1e3),
        l.runtime_outliers, text::Duration(cutoffs.launch_delay_cutoff_us / 1e3), l.launch_delay_outliers);
  } else if (rs.gpu && rs.gpu->gpu_events > 0) {
    out += "  kernel launches: no device row has a runtime launch call with its correlation\n";
  }
  for (const KernelSequence& s : rs.sequences) {
    std::string kernels;
    for (size_t i = 1; i < s.names.size() && i <= 3; ++i)
      kernels += (i > 1 ? " | " : "") + text::Clip(TerminalSafe(s.names[i]), 40);
    if (s.names.size() > 4) kernels += fmt::format(" | ... {} more (--format json lists all)", s.names.size() - 4);
    out += fmt::format("  kernel sequence x{} of {} ({} kernels, GPU {}): {}\n", s.count, TerminalSafe(s.names[0]),
                       s.names.size() - 1, text::Duration(s.gpu_us / 1e3), kernels);
  }
  for (const StreamQueueLength& q : rs.queues)
    out += fmt::format("  queue length, stream {}: max {}, mean {:.2f} over {} changes{}\n", q.stream, q.max, q.mean,
                       q.series.size(),
                       q.full_us > 0 ? fmt::format(", full ({}+) for {}", kFullQueue, text::Duration(q.full_us / 1e3))
                                     : std::string());
  for (const MemoryBandwidthKind& k : rs.memory_bandwidth)
    out += fmt::format("  memory bandwidth, {}: mean {:.3g} GB/s, median {:.3g}, max {:.3g} over {} points in use\n",
                       TerminalSafe(k.kind), k.mean, k.p50, k.max, k.points);
  return out;
}

/// The skipped and repaired counts, one line per reason with its severity and description.
std::string SummarySkippedText(uint64_t total, const SkipCounts& skipped, const SkipCounts& repaired, size_t width) {
  std::string out = total == 0 ? "\nskipped events: none\n" : fmt::format("\nskipped events: {}:\n", total);
  out += SkipReasonLines(skipped, "  ", width);
  if (!repaired.Empty()) out += "repaired events (kept):\n" + SkipReasonLines(repaired, "  ", width);
  return out;
}

}  // namespace

nlohmann::ordered_json SummaryToJson(const TraceStore& store, const JobSummary& summary,
                                     const SummaryJsonOptions& options) {
  nlohmann::ordered_json j;
  j["schema"] = "strata.summary/1";
  j["include_last_step"] = summary.include_last_step;
  if (!summary.sequences_operator.empty()) j["kernel_sequences_of"] = JsonSafe(summary.sequences_operator);
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const InputInfo& in : store.inputs) {
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"format", InputFormatName(in.format)},
                      {"events", in.events},
                      {"skipped", CountsJson(in.skipped)},
                      {"repaired", CountsJson(in.repaired)}});
  }
  j["inputs"] = inputs;
  SkipCounts skipped;
  for (const InputInfo& in : store.inputs) skipped.Merge(in.skipped);
  j["job"] = {{"ranks", summary.ranks.size()},
              {"events", summary.events},
              {"skipped", CountsJson(skipped)},
              {"steps", summary.steps},
              {"outliers", OutliersJson(RankRows(store, summary), summary.outliers)}};
  // What each skip or repair reason means and how much it matters (only when there is one).
  SkipCounts seen = skipped;
  for (const InputInfo& in : store.inputs) seen.Merge(in.repaired);
  if (!seen.Empty()) j["skip_reasons"] = SkipReasonsJson(seen);
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const RankSummary& rs : summary.ranks) {
    const RankInfo& info = store.ranks[rs.rank_index];
    nlohmann::ordered_json r;
    r["rank"] = info.rank;
    r["rank_source"] = info.rank_source;
    r["path"] = JsonSafe(store.inputs[info.input].path);
    r["world_size"] = info.world_size >= 0 ? nlohmann::ordered_json(info.world_size) : nlohmann::ordered_json();
    r["backend"] = info.backend.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(info.backend);
    r["devices"] = info.devices;
    if (info.dp_rank >= 0 || info.pp_stage >= 0) {
      r["layout"] = {{"dp_rank", info.dp_rank}, {"stage", info.pp_stage}};
    }
    r["events"] = rs.events;
    r["categories"] = CountsJson(info.categories);
    r["steps"] = rs.steps;
    r["step_source"] = model::StepSourceName(rs.step_source);
    if (rs.has_span) {
      r["span_us"] = {{"start", RoundTo(rs.span_start_ns / 1000.0, 3)},
                      {"end", RoundTo(rs.span_end_ns / 1000.0, 3)},
                      {"duration", RoundTo(RankSpanNs(rs) / 1000.0, 3)}};
    } else {
      r["span_us"] = nullptr;
    }
    if (rs.op_compute_ms_per_step) {
      r["gpu"] = nullptr;
      r["op_table"] = {{"compute_ms_per_step", RoundTo(*rs.op_compute_ms_per_step, 3)},
                       {"comm_ms_per_step", RoundTo(rs.op_comm_ms_per_step.value_or(0), 3)}};
    } else if (rs.gpu) {
      r["gpu"] = GpuJson(*rs.gpu);
      if (rs.idle) r["idle_time_breakdown"] = IdleJson(*rs.idle);
      if (rs.gpu->gpu_events > 0)
        r["kernel_launches"] = rs.launches ? LaunchJson(*rs.launches) : nlohmann::ordered_json();
      if (rs.gpu->gpu_events > 0) r["queue_length"] = QueueJson(rs.queues, options.series);
      if (rs.gpu->gpu_events > 0) r["memory_bandwidth"] = MemoryBandwidthJson(rs.memory_bandwidth, options.series);
      if (!summary.sequences_operator.empty()) r["kernel_sequences"] = SequencesJson(rs.sequences);
    } else {
      r["gpu"] = nullptr;
      r["gpu_note"] = "no GPU events (no event with args.stream): GPU metrics absent";
    }
    if (rs.cpu_compute_ms_per_step) r["cpu_compute_ms_per_step"] = RoundTo(*rs.cpu_compute_ms_per_step, 3);
    if (rs.recorded) r["recorded"] = RecordedJson(*rs.recorded);
    ranks.push_back(r);
  }
  j["ranks"] = ranks;
  return j;
}

std::string SummaryToText(const TraceStore& store, const JobSummary& summary, const SummaryTextOptions& options) {
  std::string out;
  SkipCounts skipped, repaired;
  for (const InputInfo& in : store.inputs) {
    skipped.Merge(in.skipped);
    repaired.Merge(in.repaired);
  }
  const uint64_t skipped_total = skipped.Total();
  std::string detected;  // steps found from the collectives' timing, not marked in the input: said so
  for (const RankSummary& rs : summary.ranks)
    if (rs.step_source == model::StepSource::kDetectedPeriod || rs.step_source == model::StepSource::kDetectedRhythm)
      detected = fmt::format(" (from {})", model::StepSourceName(rs.step_source));
  out += fmt::format("strata summary: {} rank{}, {} events, steps {}{}{}\n", summary.ranks.size(),
                     summary.ranks.size() == 1 ? "" : "s", summary.events, StepsText(summary.steps), detected,
                     summary.include_last_step ? " (last step included)" : "");

  const std::vector<RankMetrics> metrics = RankRows(store, summary);
  const std::vector<SummaryOutlier>& outliers = summary.outliers;
  if (metrics.size() > 1) out += "\n" + JobTable(metrics, summary);
  const bool all_rows = options.per_rank || metrics.size() <= kAllRowsUpTo;
  if (!all_rows && !outliers.empty()) {
    out += fmt::format("\noutlier ranks ({} of {}, most different first; --per-rank lists every rank):\n",
                       outliers.size(), metrics.size());
    std::vector<size_t> order;
    for (const SummaryOutlier& o : outliers) order.push_back(o.index);
    out += SummaryRankTable(metrics, order, outliers);
  } else if (!all_rows) {
    out += fmt::format("\nno outlier rank (every metric within {} MADs of the median; --per-rank lists every rank)\n",
                       diagnosis::thresholds::kSummaryOutlierMads);
  } else {
    std::vector<size_t> order;
    for (const SummaryOutlier& o : outliers) order.push_back(o.index);
    for (size_t i = 0; i < metrics.size(); ++i)
      if (std::none_of(outliers.begin(), outliers.end(), [&](const SummaryOutlier& o) { return o.index == i; }))
        order.push_back(i);
    out += fmt::format("\nranks{}:\n", outliers.empty() ? "" : " (outliers first)");
    out += SummaryRankTable(metrics, order, outliers);
  }
  if (options.per_rank || metrics.size() == 1) {
    for (const RankSummary& rs : summary.ranks) {
      const RankInfo& info = store.ranks[rs.rank_index];
      const InputInfo& in = store.inputs[info.input];
      out += fmt::format("\nrank {} ({}, {}, rank from {}", info.rank, Base(in.path), InputFormatName(in.format),
                         info.rank_source);
      if (info.world_size > 0) out += fmt::format(", world size {}", info.world_size);
      if (!info.backend.empty()) out += fmt::format(", {}", TerminalSafe(info.backend));
      if (!info.devices.empty()) out += fmt::format(", {}", TerminalSafe(info.devices[0]));
      out += ")\n" + CategoriesText(info.categories);
      if (rs.recorded) out += RecordedText(*rs.recorded);
      if (rs.op_compute_ms_per_step) {
        out += fmt::format(
            "  op table: compute {} and communication {} per step (an op table has no kernel timeline: HTA's "
            "GPU breakdown does not apply)\n",
            text::Duration(*rs.op_compute_ms_per_step), text::Duration(rs.op_comm_ms_per_step.value_or(0)));
        continue;
      }
      if (!rs.gpu) {
        out += "  GPU metrics absent: this trace has no GPU events (CPU-only or PyTorch 1.x profile)\n";
        continue;
      }
      const GpuBreakdown& g = *rs.gpu;
      if (g.gpu_events == 0) {
        out +=
            "  GPU metrics absent: no GPU events remain after dropping the last ProfilerStep "
            "(use --include-last-step)\n";
        continue;
      }
      out += fmt::format(
          "  GPU time: kernel {:.3f} ms = idle {:.3f} ms ({:.2f}%) + compute {:.3f} ms ({:.2f}%) + "
          "non-compute {:.3f} ms ({:.2f}%){}\n",
          g.kernel_time_us / 1e3, g.idle_us / 1e3, g.idle_pct, g.compute_us / 1e3, g.compute_pct,
          g.non_compute_us / 1e3, g.non_compute_pct,
          g.last_step_dropped ? "; last ProfilerStep dropped as HTA does" : "");
      out += fmt::format("  communication overlapped by computation: {}\n",
                         g.comm_comp_overlap_pct ? fmt::format("{:.2f}%", *g.comm_comp_overlap_pct)
                                                 : std::string("no communication kernels"));
      double total = 0;
      for (double t : g.type_time_us) total += t;
      out += "  kernel time by type:";
      for (KernelType t :
           {KernelType::kCommunication, KernelType::kComputation, KernelType::kMemory, KernelType::kOther}) {
        const auto i = static_cast<size_t>(t);
        if (g.type_count[i] == 0) continue;
        out += fmt::format("  {} {:.3f} ms ({:.1f}%, {} rows)", KernelTypeName(t), g.type_time_us[i] / 1e3,
                           total > 0 ? 100.0 * g.type_time_us[i] / total : 0.0, g.type_count[i]);
      }
      out += "\n  top kernels:\n";
      out += fmt::format("    {:>10}  {:>7}  {:<13}  {}\n", "time ms", "count", "type", "name");
      for (const KernelStat& k : g.top_kernels) {
        std::string name = TerminalSafe(k.name);
        if (name.size() > 90) name = name.substr(0, 87) + "...";
        out +=
            fmt::format("    {:>10.3f}  {:>7}  {:<13}  {}\n", k.time_us / 1e3, k.count, KernelTypeName(k.type), name);
      }
      out += HtaAnalysesText(rs);
    }
  }
  out += SummarySkippedText(skipped_total, skipped, repaired, std::max(options.width, kMinTextWidth));
  return out;
}

}  // namespace strata
