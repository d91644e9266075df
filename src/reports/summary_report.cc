// Summary rendering (see summary_report.h). JSON: percentages rounded to 4 decimals, times whole µs for GPU
// metrics (HTA rounds to µs) and µs with 3 decimals for spans. Text: the job's min / median / max over ranks,
// then the outlier ranks (or every rank when few), scaled units with three significant digits.
#include "reports/summary_report.h"
#include "core/round.h"

#include <fmt/format.h>

#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"
#include "core/text_escape.h"
#include "reports/skip_report.h"
#include "reports/text_format.h"

#include <algorithm>

#include <cmath>
#include <filesystem>

namespace strata {

namespace {

nlohmann::ordered_json Counts(const std::map<std::string, uint64_t>& m) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

nlohmann::ordered_json Counts(const SkipCounts& counts) { return Counts(counts.ByKey()); }

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

std::string StepsText(const std::vector<int64_t>& steps) {
  if (steps.empty()) return "-";
  if (steps.size() == 1) return fmt::format("{}", steps[0]);
  const bool contiguous = steps.back() - steps.front() + 1 == static_cast<int64_t>(steps.size());
  return contiguous ? fmt::format("{}-{}", steps.front(), steps.back())
                    : fmt::format("{} ({}..{})", steps.size(), steps.front(), steps.back());
}

/// end - start in ns: exact in int64 when it fits, else in double (crafted timestamps near the int64 limits
/// would overflow the subtraction).
double SpanNs(int64_t start, int64_t end) {
  int64_t d;
  if (!__builtin_sub_overflow(end, start, &d)) return static_cast<double>(d);
  return static_cast<double>(end) - static_cast<double>(start);
}

std::string Base(const std::string& path) { return TerminalSafe(std::filesystem::path(path).filename().string()); }

// Text layout: up to this many ranks every rank gets a row; above, only the outlier ranks (--per-rank: all).
constexpr size_t kAllRowsUpTo = 8;
// The outlier rule's thresholds (analysis/diagnosis/thresholds.h).
using diagnosis::thresholds::kSummaryOutlierMads;
using diagnosis::thresholds::kSummaryOutlierMinPoints;
using diagnosis::thresholds::kSummaryOutlierMinRanks;
using diagnosis::thresholds::kSummaryOutlierMinShare;

// One rank's row of the text report; NaN where the metric is absent (no GPU events, no span).
struct RankMetrics {
  int32_t rank = 0;
  std::string input, steps;
  double values[8];  // by kMetrics
};

struct Metric {
  const char* name;
  bool percent;
};
constexpr Metric kMetrics[] = {{"events", false},      {"span", false},           {"kernel time", false},
                               {"idle", true},         {"compute", true},         {"non-compute", true},
                               {"comm overlap", true}, {"op compute/step", false}};
constexpr size_t kNumMetrics = sizeof(kMetrics) / sizeof(kMetrics[0]);

struct Outlier {
  size_t index;     // into the RankMetrics
  double score;     // largest robust z over the metrics (1e9 when the MAD is 0)
  std::string why;  // the metric of that z against the median
};

std::vector<RankMetrics> MeasureRanks(const TraceStore& store, const JobSummary& summary) {
  std::vector<RankMetrics> out;
  const double nan = std::nan("");
  for (const RankSummary& rs : summary.ranks) {
    const RankInfo& info = store.ranks[rs.rank_index];
    RankMetrics m;
    m.rank = info.rank;
    m.input = Base(store.inputs[info.input].path);
    m.steps = StepsText(rs.steps);
    m.values[0] = static_cast<double>(rs.events);
    m.values[1] = rs.has_span ? SpanNs(rs.span_start_ns, rs.span_end_ns) / 1e6 : nan;
    const bool gpu = rs.gpu && rs.gpu->gpu_events > 0;
    m.values[2] = gpu ? rs.gpu->kernel_time_us / 1e3 : nan;
    m.values[3] = gpu ? rs.gpu->idle_pct : nan;
    m.values[4] = gpu ? rs.gpu->compute_pct : nan;
    m.values[5] = gpu ? rs.gpu->non_compute_pct : nan;
    m.values[6] = gpu && rs.gpu->comm_comp_overlap_pct ? *rs.gpu->comm_comp_overlap_pct : nan;
    m.values[7] = rs.op_compute_ms_per_step.value_or(nan);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<double> Present(const std::vector<RankMetrics>& ranks, size_t metric) {
  std::vector<double> v;
  for (const auto& r : ranks)
    if (!std::isnan(r.values[metric])) v.push_back(r.values[metric]);
  return v;
}

std::string Value(size_t metric, double v) {
  if (std::isnan(v)) return "-";
  if (metric == 0) return fmt::format("{}", static_cast<uint64_t>(v));
  return kMetrics[metric].percent ? text::Percent(v) : text::Duration(v);
}

// Ranks whose metrics stand out from the other ranks' (at least 3 ranks), most different first.
std::vector<Outlier> FindOutliers(const std::vector<RankMetrics>& ranks) {
  std::vector<Outlier> out;
  if (ranks.size() < kSummaryOutlierMinRanks) return out;
  double median[kNumMetrics], mad[kNumMetrics];
  bool usable[kNumMetrics];
  for (size_t k = 0; k < kNumMetrics; ++k) {
    const std::vector<double> v = Present(ranks, k);
    usable[k] = v.size() >= kSummaryOutlierMinRanks;
    if (!usable[k]) continue;
    median[k] = Median(v);
    mad[k] = 1.4826 * Mad(v);
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    Outlier o{i, 0, ""};
    for (size_t k = 0; k < kNumMetrics; ++k) {
      const double x = ranks[i].values[k];
      if (!usable[k] || std::isnan(x)) continue;
      const double d = std::abs(x - median[k]);
      const bool matters =
          kMetrics[k].percent ? d >= kSummaryOutlierMinPoints : d >= kSummaryOutlierMinShare * std::abs(median[k]);
      if (!matters) continue;
      const double z = mad[k] > 0 ? d / mad[k] : 1e9;
      if (z < kSummaryOutlierMads || z <= o.score) continue;
      o.score = z;
      o.why = fmt::format("{} {} vs median {}", kMetrics[k].name, Value(k, x), Value(k, median[k]));
    }
    if (o.score > 0) out.push_back(o);
  }
  std::stable_sort(out.begin(), out.end(), [&](const Outlier& a, const Outlier& b) {
    if (a.score != b.score) return a.score > b.score;
    return ranks[a.index].rank < ranks[b.index].rank;
  });
  return out;
}

// The job over its ranks: min / median / max of every metric and the ranks holding the extremes.
std::string JobTable(const std::vector<RankMetrics>& ranks) {
  text::Table t({"metric", ">min", ">median", ">max", "min rank", "max rank"});
  for (size_t k = 0; k < kNumMetrics; ++k) {
    const std::vector<double> v = Present(ranks, k);
    if (v.empty()) continue;
    size_t lo = 0, hi = 0;
    bool first = true;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const double x = ranks[i].values[k];
      if (std::isnan(x)) continue;
      if (first || x < ranks[lo].values[k]) lo = i;
      if (first || x > ranks[hi].values[k]) hi = i;
      first = false;
    }
    t.Add({kMetrics[k].name, Value(k, ranks[lo].values[k]), Value(k, Median(v)), Value(k, ranks[hi].values[k]),
           fmt::format("{}", ranks[lo].rank), fmt::format("{}", ranks[hi].rank)});
  }
  return "job over ranks:\n" + t.Render("  ");
}

// One row per rank in `order`; metric columns no listed rank has are left out, as is the outlier column
// when no listed rank is an outlier.
std::string RankTable(const std::vector<RankMetrics>& ranks, const std::vector<size_t>& order,
                      const std::vector<Outlier>& outliers) {
  static const char* kHeaders[kNumMetrics] = {">events",  ">span",     ">kernel",  ">idle",
                                              ">compute", ">non-comp", ">overlap", ">op compute"};
  std::vector<size_t> shown;
  for (size_t k = 0; k < kNumMetrics; ++k)
    if (std::any_of(order.begin(), order.end(), [&](size_t i) { return !std::isnan(ranks[i].values[k]); }))
      shown.push_back(k);
  const bool any_outlier = std::any_of(order.begin(), order.end(), [&](size_t i) {
    return std::any_of(outliers.begin(), outliers.end(), [&](const Outlier& o) { return o.index == i; });
  });
  std::vector<std::string> headers = {">rank", "input", ">steps"};
  for (size_t k : shown) headers.push_back(kHeaders[k]);
  if (any_outlier) headers.push_back("outlier on");
  text::Table t(headers);
  for (size_t i : order) {
    const RankMetrics& m = ranks[i];
    std::vector<std::string> row = {fmt::format("{}", m.rank), text::Clip(m.input, 28), m.steps};
    for (size_t k : shown) row.push_back(Value(k, m.values[k]));
    for (const Outlier& o : outliers)
      if (o.index == i) row.push_back(o.why);
    t.Add(std::move(row));
  }
  return t.Render("  ");
}

/// The skipped and repaired counts, one line per reason with its severity and description.
std::string SkippedText(uint64_t total, const SkipCounts& skipped, const SkipCounts& repaired, size_t width) {
  std::string out = total == 0 ? "\nskipped events: none\n" : fmt::format("\nskipped events: {}:\n", total);
  out += SkipReasonLines(skipped, "  ", width);
  if (!repaired.Empty()) out += "repaired events (kept):\n" + SkipReasonLines(repaired, "  ", width);
  return out;
}

}  // namespace

nlohmann::ordered_json SummaryToJson(const TraceStore& store, const JobSummary& summary) {
  nlohmann::ordered_json j;
  j["schema"] = "strata.summary/1";
  j["include_last_step"] = summary.include_last_step;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const InputInfo& in : store.inputs) {
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"format", InputFormatName(in.format)},
                      {"events", in.events},
                      {"skipped", Counts(in.skipped)},
                      {"repaired", Counts(in.repaired)}});
  }
  j["inputs"] = inputs;
  SkipCounts skipped;
  for (const InputInfo& in : store.inputs) skipped.Merge(in.skipped);
  j["job"] = {{"ranks", summary.ranks.size()},
              {"events", summary.events},
              {"skipped", Counts(skipped)},
              {"steps", summary.steps}};
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
    r["categories"] = Counts(info.categories);
    r["steps"] = rs.steps;
    r["step_source"] = model::StepSourceName(rs.step_source);
    if (rs.has_span) {
      r["span_us"] = {{"start", RoundTo(rs.span_start_ns / 1000.0, 3)},
                      {"end", RoundTo(rs.span_end_ns / 1000.0, 3)},
                      {"duration", RoundTo(SpanNs(rs.span_start_ns, rs.span_end_ns) / 1000.0, 3)}};
    } else {
      r["span_us"] = nullptr;
    }
    if (rs.op_compute_ms_per_step) {
      r["gpu"] = nullptr;
      r["op_table"] = {{"compute_ms_per_step", RoundTo(*rs.op_compute_ms_per_step, 3)},
                       {"comm_ms_per_step", RoundTo(rs.op_comm_ms_per_step.value_or(0), 3)}};
    } else if (rs.gpu) {
      r["gpu"] = GpuJson(*rs.gpu);
    } else {
      r["gpu"] = nullptr;
      r["gpu_note"] = "no GPU events (no event with args.stream): GPU metrics absent";
    }
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
  out += fmt::format("strata summary: {} rank{}, {} events, steps {}{}\n", summary.ranks.size(),
                     summary.ranks.size() == 1 ? "" : "s", summary.events, StepsText(summary.steps),
                     summary.include_last_step ? " (last step included)" : "");

  const std::vector<RankMetrics> metrics = MeasureRanks(store, summary);
  const std::vector<Outlier> outliers = FindOutliers(metrics);
  if (metrics.size() > 1) out += "\n" + JobTable(metrics);
  const bool all_rows = options.per_rank || metrics.size() <= kAllRowsUpTo;
  if (!all_rows && !outliers.empty()) {
    out += fmt::format("\noutlier ranks ({} of {}, most different first; --per-rank lists every rank):\n",
                       outliers.size(), metrics.size());
    std::vector<size_t> order;
    for (const Outlier& o : outliers) order.push_back(o.index);
    out += RankTable(metrics, order, outliers);
  } else if (!all_rows) {
    out += fmt::format("\nno outlier rank (every metric within {} MADs of the median; --per-rank lists every rank)\n",
                       kSummaryOutlierMads);
  } else {
    std::vector<size_t> order;
    for (const Outlier& o : outliers) order.push_back(o.index);
    for (size_t i = 0; i < metrics.size(); ++i)
      if (std::none_of(outliers.begin(), outliers.end(), [&](const Outlier& o) { return o.index == i; }))
        order.push_back(i);
    out += fmt::format("\nranks{}:\n", outliers.empty() ? "" : " (outliers first)");
    out += RankTable(metrics, order, outliers);
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
      out += ")\n  events by category:";
      for (const auto& [cat, n] : info.categories) out += fmt::format(" {}={}", TerminalSafe(cat), n);
      out += "\n";
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
    }
  }
  out += SkippedText(skipped_total, skipped, repaired, std::max(options.width, kMinTextWidth));
  return out;
}

}  // namespace strata
