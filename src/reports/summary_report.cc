// Summary rendering (see summary_report.h). Percentages are rounded to 4 decimals, times are whole µs
// for GPU metrics (HTA rounds to µs) and µs with 3 decimals for spans.
#include "reports/summary_report.h"
#include "core/round.h"

#include <fmt/format.h>

#include "core/text_escape.h"

#include <cmath>
#include <filesystem>

namespace strata {

namespace {

nlohmann::ordered_json Counts(const std::map<std::string, uint64_t>& m) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

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

}  // namespace

nlohmann::ordered_json SummaryToJson(const TraceStore& store, const JobSummary& summary) {
  nlohmann::ordered_json j;
  j["schema"] = "strata.summary/1";
  j["include_last_step"] = summary.include_last_step;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const InputInfo& in : store.inputs) {
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"format", in.format},
                      {"events", in.events},
                      {"skipped", Counts(in.skipped)},
                      {"repaired", Counts(in.repaired)}});
  }
  j["inputs"] = inputs;
  SkipCounts skipped;
  for (const InputInfo& in : store.inputs)
    for (const auto& [k, v] : in.skipped) skipped[k] += v;
  j["job"] = {{"ranks", summary.ranks.size()},
              {"events", summary.events},
              {"skipped", Counts(skipped)},
              {"steps", summary.steps}};
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
    r["step_source"] = rs.step_source;
    if (rs.has_span) {
      r["span_us"] = {{"start", RoundTo(rs.span_start_ns / 1000.0, 3)},
                      {"end", RoundTo(rs.span_end_ns / 1000.0, 3)},
                      {"duration", RoundTo(SpanNs(rs.span_start_ns, rs.span_end_ns) / 1000.0, 3)}};
    } else {
      r["span_us"] = nullptr;
    }
    if (rs.gpu) {
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

std::string SummaryToText(const TraceStore& store, const JobSummary& summary) {
  std::string out;
  uint64_t skipped_total = 0;
  SkipCounts skipped, repaired;
  for (const InputInfo& in : store.inputs) {
    for (const auto& [k, v] : in.skipped) {
      skipped[k] += v;
      skipped_total += v;
    }
    for (const auto& [k, v] : in.repaired) repaired[k] += v;
  }
  out += fmt::format("strata summary: {} rank{}, {} events, steps {}{}\n", summary.ranks.size(),
                     summary.ranks.size() == 1 ? "" : "s", summary.events, StepsText(summary.steps),
                     summary.include_last_step ? " (last step included)" : "");
  if (skipped_total == 0) {
    out += "skipped events: none\n";
  } else {
    out += fmt::format("skipped events: {}", skipped_total);
    for (const auto& [k, v] : skipped) out += fmt::format("  {}={}", k, v);
    out += "\n";
  }
  for (const auto& [k, v] : repaired) out += fmt::format("repaired events: {}={}\n", k, v);

  out += "\n";
  out += fmt::format("{:>6}  {:<28} {:>10}  {:>12}  {:>12}  {:>11}  {:>7}  {:>8}  {:>9}  {:>8}\n", "rank", "input",
                     "events", "steps", "span ms", "kernel ms", "idle %", "compute%", "non-comp%", "overlap%");
  for (const RankSummary& rs : summary.ranks) {
    const RankInfo& info = store.ranks[rs.rank_index];
    std::string input = Base(store.inputs[info.input].path);
    if (input.size() > 28) input = input.substr(0, 25) + "...";
    const double span_ms = rs.has_span ? SpanNs(rs.span_start_ns, rs.span_end_ns) / 1e6 : 0.0;
    if (rs.gpu && rs.gpu->gpu_events > 0) {
      const GpuBreakdown& g = *rs.gpu;
      out += fmt::format("{:>6}  {:<28} {:>10}  {:>12}  {:>12.3f}  {:>11.3f}  {:>7.2f}  {:>8.2f}  {:>9.2f}  {:>8}\n",
                         info.rank, input, rs.events, StepsText(rs.steps), span_ms, g.kernel_time_us / 1e3, g.idle_pct,
                         g.compute_pct, g.non_compute_pct,
                         g.comm_comp_overlap_pct ? fmt::format("{:.2f}", *g.comm_comp_overlap_pct) : "-");
    } else {
      out += fmt::format("{:>6}  {:<28} {:>10}  {:>12}  {:>12.3f}  {:>11}  {:>7}  {:>8}  {:>9}  {:>8}\n", info.rank,
                         input, rs.events, StepsText(rs.steps), span_ms, "-", "-", "-", "-", "-");
    }
  }

  for (const RankSummary& rs : summary.ranks) {
    const RankInfo& info = store.ranks[rs.rank_index];
    const InputInfo& in = store.inputs[info.input];
    out += fmt::format("\nrank {} ({}, {}, rank from {}", info.rank, Base(in.path), in.format, info.rank_source);
    if (info.world_size > 0) out += fmt::format(", world size {}", info.world_size);
    if (!info.backend.empty()) out += fmt::format(", {}", TerminalSafe(info.backend));
    if (!info.devices.empty()) out += fmt::format(", {}", TerminalSafe(info.devices[0]));
    out += ")\n  events by category:";
    for (const auto& [cat, n] : info.categories) out += fmt::format(" {}={}", TerminalSafe(cat), n);
    out += "\n";
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
        g.kernel_time_us / 1e3, g.idle_us / 1e3, g.idle_pct, g.compute_us / 1e3, g.compute_pct, g.non_compute_us / 1e3,
        g.non_compute_pct, g.last_step_dropped ? "; last ProfilerStep dropped as HTA does" : "");
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
      out += fmt::format("    {:>10.3f}  {:>7}  {:<13}  {}\n", k.time_us / 1e3, k.count, KernelTypeName(k.type), name);
    }
  }
  return out;
}

}  // namespace strata
