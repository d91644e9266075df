// Diagnosis rendering (see diagnosis_report.h).
#include "reports/diagnosis_report.h"

#include <fmt/format.h>

#include "core/text_escape.h"

namespace strata {

namespace {

using nlohmann::ordered_json;

template <typename T>
ordered_json Optional(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json();
}

ordered_json Map(const std::map<std::string, double>& m) {
  ordered_json j = ordered_json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

std::string Steps(const std::vector<int64_t>& steps) {
  if (steps.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < steps.size() && i < 12; ++i) s += fmt::format("{}{}", i ? "," : "", steps[i]);
  if (steps.size() > 12) s += fmt::format(",... ({} steps)", steps.size());
  return s;
}

}  // namespace

ordered_json DiagnosisToJson(const diagnosis::DiagnosisResult& r) {
  ordered_json j;
  j["schema"] = "strata.diagnosis/1";
  j["status"] = r.status.empty() ? "inconclusive" : r.status;
  j["status_reasons"] = r.status_reasons;
  ordered_json inputs = ordered_json::array();
  for (const auto& in : r.inputs) {
    ordered_json skipped = ordered_json::object();
    for (const auto& [k, v] : in.skipped) skipped[k] = v;
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"rank", Optional(in.rank)},
                      {"format", in.format},
                      {"events", in.events},
                      {"skipped", skipped}});
  }
  for (const auto& in : r.left_out) {
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"rank", nullptr},
                      {"format", "unreadable"},
                      {"events", 0},
                      {"skipped", ordered_json::object()},
                      {"error", JsonSafe(in.reason)}});
  }
  j["inputs"] = inputs;
  ordered_json offsets = ordered_json::object();
  for (const auto& [rank, us] : r.clock_offsets_us) offsets[std::to_string(rank)] = us;
  j["job"] = {{"ranks", r.ranks},
              {"steps", r.steps},
              {"step_source", r.step_source},
              {"step_time_ms", {{"median", r.step_time_median_ms}, {"p90", r.step_time_p90_ms}}},
              {"layout", r.layout},
              {"clock_offsets_us", offsets},
              {"clock_residual_us", r.clock_residual_us},
              {"collective_source", r.collective_source},
              {"matched", r.matched}};
  ordered_json stragglers = ordered_json::array();
  for (const auto& s : r.stragglers) {
    stragglers.push_back({{"rank", s.rank},
                          {"score", s.score},
                          {"late_ms_per_step", s.late_ms_per_step},
                          {"steps", s.steps},
                          {"persistent", s.persistent},
                          {"evidence", s.evidence}});
  }
  j["stragglers"] = stragglers;
  ordered_json findings = ordered_json::array();
  for (const auto& f : r.findings) {
    findings.push_back({{"cause", f.cause},
                        {"rank", Optional(f.rank)},
                        {"ranks", f.ranks},
                        {"stage", Optional(f.stage)},
                        {"step", Optional(f.step)},
                        {"op", Optional(f.op)},
                        {"layer", f.layer.empty() ? ordered_json() : ordered_json(f.layer)},
                        {"impact_pct", f.impact_pct},
                        {"confidence", f.confidence},
                        {"summary", f.summary},
                        {"evidence", f.evidence}});
  }
  j["findings"] = findings;
  j["whatif"] = {{"slowdown", r.whatif.slowdown},
                 {"ideal_step_ms", r.whatif.ideal_step_ms},
                 {"model", r.whatif.model},
                 {"by_rank", Map(r.whatif.by_rank)},
                 {"by_stage", Map(r.whatif.by_stage)},
                 {"by_op_type", Map(r.whatif.by_op_type)}};
  j["notes"] = r.notes;
  return j;
}

std::string Verdict(const diagnosis::DiagnosisResult& r) {
  if (r.status == "inconclusive") {
    return "inconclusive: " + (r.status_reasons.empty() ? std::string("the job could not be examined")
                                                        : TerminalSafe(r.status_reasons.front()));
  }
  if (r.findings.empty() && !r.stragglers.empty()) {
    const auto& s = r.stragglers.front();
    return fmt::format("straggler: rank {} arrives {:.1f} ms late per step (cause not determined)", s.rank,
                       s.late_ms_per_step);
  }
  if (r.findings.empty()) {
    return fmt::format(
        "healthy: no straggler and no finding above the minimum effect over {} ranks and {} steps "
        "(what-if slowdown {:.3f})",
        r.ranks, r.steps.size(), r.whatif.slowdown);
  }
  const auto& f = r.findings.front();
  std::string who = f.rank    ? fmt::format("rank {}", *f.rank)
                    : f.stage ? fmt::format("stage {}", *f.stage)
                              : fmt::format("{} ranks", f.ranks.size());
  return fmt::format("{}: {}{} costs {:.1f}% of step time", f.cause, who,
                     f.op ? fmt::format(" ({})", TerminalSafe(*f.op)) : "", f.impact_pct);
}

std::string SkippedLine(const diagnosis::DiagnosisResult& r) {
  std::map<std::string, uint64_t> by_reason;
  uint64_t total = 0, events = 0;
  for (const auto& in : r.inputs) {
    events += in.events;
    for (const auto& [reason, n] : in.skipped) {
      by_reason[reason] += n;
      total += n;
    }
  }
  std::string line = "skipped events: ";
  if (total == 0) return line + "none";
  line += fmt::format("{} of {} ({:.2f}%):", total, total + events,
                      100.0 * static_cast<double>(total) / static_cast<double>(total + events));
  for (const auto& [reason, n] : by_reason) line += fmt::format(" {} {}", reason, n);
  return line;
}

std::string DiagnosisToText(const diagnosis::DiagnosisResult& r) {
  std::string out = "verdict: " + Verdict(r) + "\n";
  // The verdict line already carries the first reason of an inconclusive result.
  const size_t first = r.status == "inconclusive" ? 1 : 0;
  for (size_t i = first; i < r.status_reasons.size(); ++i)
    out += fmt::format("  {}: {}\n", r.status == "inconclusive" ? "also" : "caveat", TerminalSafe(r.status_reasons[i]));
  out += fmt::format("job: {} ranks, steps {} (from {}), step time median {:.3f} ms, p90 {:.3f} ms\n", r.ranks,
                     Steps(r.steps), r.step_source, r.step_time_median_ms, r.step_time_p90_ms);
  out += SkippedLine(r) + "\n";
  for (const auto& in : r.left_out) out += fmt::format("left out: {}\n", TerminalSafe(in.reason));
  if (!r.stragglers.empty()) {
    out += "\nstragglers:\n";
    for (const auto& s : r.stragglers) {
      out += fmt::format("  rank {:<5} late {:.3f} ms/step  score {:.4f}  {} steps: {}\n", s.rank, s.late_ms_per_step,
                         s.score, s.persistent ? "persistent," : "intermittent,", Steps(s.steps));
    }
  }
  if (!r.findings.empty()) {
    out += "\nfindings (by time saved):\n";
    int i = 1;
    for (const auto& f : r.findings) {
      out += fmt::format("  {}. [{}] {} (saves {:.1f}%, confidence {:.2f})\n", i++, f.cause, TerminalSafe(f.summary),
                         f.impact_pct, f.confidence);
      out +=
          fmt::format("     evidence: {}\n", f.evidence.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  }
  out += fmt::format("\nwhat-if ({}): slowdown S = {:.4f}, ideal step {:.3f} ms\n", r.whatif.model, r.whatif.slowdown,
                     r.whatif.ideal_step_ms);
  auto list = [&](const char* title, const std::map<std::string, double>& m) {
    if (m.empty()) return;
    std::vector<std::pair<std::string, double>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    out += fmt::format("  {}:", title);
    for (size_t i = 0; i < v.size() && i < 8; ++i)
      out += fmt::format("  {}={:.4f}", TerminalSafe(v[i].first), v[i].second);
    if (v.size() > 8) out += fmt::format("  ... ({} more)", v.size() - 8);
    out += "\n";
  };
  list("by rank", r.whatif.by_rank);
  list("by stage", r.whatif.by_stage);
  list("by op type", r.whatif.by_op_type);
  out += fmt::format("\nclocks: aligned by {} (residual {:.3f} us)\n", r.collective_source, r.clock_residual_us);
  for (const auto& n : r.notes) out += "note: " + TerminalSafe(n) + "\n";
  return out;
}

}  // namespace strata
