// Diagnosis rendering (see diagnosis_report.h).
#include "reports/diagnosis_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/diagnosis/impact.h"
#include "core/round.h"
#include "core/status.h"
#include "core/text_escape.h"
#include "reports/communication_report.h"
#include "reports/evidence_json.h"
#include "reports/skip_report.h"
#include "reports/text_format.h"

#include <algorithm>
#include <cmath>
#include <regex>

namespace strata {

namespace {

using nlohmann::ordered_json;

template <typename T>
ordered_json Optional(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json();
}

// An object from a map's entries, in the map's order. The keys are unique already, so they are appended
// without ordered_json's per-key search (linear in the object's size: quadratic for a by-rank map of
// 100,000 ranks).
template <typename K, typename V, typename KeyText>
ordered_json ObjectOfUnique(const std::map<K, V>& m, KeyText key_text) {
  ordered_json j = ordered_json::object();
  auto& entries =
      static_cast<std::vector<std::pair<const std::string, ordered_json>>&>(j.get_ref<ordered_json::object_t&>());
  entries.reserve(m.size());
  for (const auto& [k, v] : m) entries.emplace_back(key_text(k), v);
  return j;
}

ordered_json Map(const std::map<std::string, double>& m) {
  return ObjectOfUnique(m, [](const std::string& k) { return k; });
}

// Text report layout: at most this many stragglers and findings (JSON lists all), and each finding in
// at most 5 lines below its summary.
constexpr size_t kMaxStragglers = 4;
constexpr size_t kMaxFindings = 4;
constexpr const char* kLegend =
    "key: N× = step time / ideal step (every op at its typical time); confidence = share explained";

// "12.345 ms" inside analysis prose rescaled as the rest of the report ("12.3 ms", "23.0 s").
std::string ScaleMs(const std::string& s) {
  static const std::regex kMs(R"((-?\d+(?:\.\d+)?) ms\b)");
  std::string out;
  auto it = std::sregex_iterator(s.begin(), s.end(), kMs);
  size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    out += s.substr(last, it->position() - last);
    out += text::Duration(std::stod((*it)[1].str()));
    last = it->position() + it->length();
  }
  return out + s.substr(last);
}

std::string Label(std::string key) {
  std::replace(key.begin(), key.end(), '_', ' ');
  return key;
}

std::string SignedMs(double ms) { return (ms >= 0 ? "+" : "") + text::Duration(ms); }

// Steps compactly: "1-6", "4,6,9-12", or "16..1000 (gaps)" when there are more than 3 runs.
std::string StepSpan(const std::vector<int64_t>& steps) {
  const std::string ranges = text::IntRanges(steps, 3);
  if (ranges.find("...") == std::string::npos) return ranges;
  return fmt::format("{}..{}, with gaps", steps.front(), steps.back());
}

std::string JobLine(const diagnosis::DiagnosisResult& r, size_t width) {
  if (r.steps.empty())
    return text::Wrap(fmt::format("job: {}, no steps found: no step time to compare", text::Count(r.ranks, "rank")),
                      width, "", 5);
  const std::string times = r.step_time_median_ms > 0
                                ? fmt::format("step time median {}, p90 {}", text::Duration(r.step_time_median_ms),
                                              text::Duration(r.step_time_p90_ms))
                                : std::string("step time not measured (see the notes)");
  return text::Wrap(
      fmt::format("job: {}, {} ({}, from {}), {}", text::Count(r.ranks, "rank"), text::Count(r.steps.size(), "step"),
                  StepSpan(r.steps), model::StepSourceName(r.step_source), times),
      width, "", 5);
}

std::string StragglerLines(const diagnosis::DiagnosisResult& r, size_t width) {
  std::string out;
  for (size_t i = 0; i < r.stragglers.size() && i < kMaxStragglers; ++i) {
    const auto& s = r.stragglers[i];
    const size_t units = r.UnitCount();
    std::string when = diagnosis::UnitSpan(r.unit, s.steps.size(), units);
    if (s.steps.size() != units) when += fmt::format(" ({})", StepSpan(s.steps));
    const char* per = r.unit == diagnosis::CompareUnit::kStep ? "step" : "collective";
    out += text::Wrap(
        fmt::format("straggler: rank {} late {}/{} {}, {}; peers wait {} of {}", s.rank,
                    text::Duration(s.late_ms_per_step), per, when, s.persistent ? "persistent" : "intermittent",
                    text::Percent(100 * s.score), r.unit == diagnosis::CompareUnit::kStep ? "a step" : "the step"),
        width, "", 11);
  }
  if (r.stragglers.size() > kMaxStragglers)
    out +=
        fmt::format("  ... {} more stragglers (--format json lists them all)\n", r.stragglers.size() - kMaxStragglers);
  return out;
}

// "label: a +1.00 ms, b +2.00 ms": the largest items that fit the report's width; at least the first, its name
// shortened in the middle when it is too long for the line, its figure always whole.
std::string ItemLine(const std::string& label, std::vector<std::pair<std::string, std::string>> items, size_t width) {
  std::string line = "     " + label + ":";
  for (size_t i = 0; i < items.size() && i < 3; ++i) {
    const std::string figure = " " + items[i].second;
    const std::string lead = i ? ", " : " ";
    std::string name = TerminalSafe(items[i].first);
    if (i > 0 && text::Columns(line + lead + name + figure) > width) break;
    const size_t room = width - std::min(width, text::Columns(line + lead + figure));
    line += lead + text::ShortenMiddle(name, std::max<size_t>(room, 8)) + figure;
  }
  return line + "\n";
}

// The excess by class of a finding's evidence, as (class, ms rounded as in the JSON), in the contract's order.
std::vector<std::pair<std::string, double>> ExcessByClass(const diagnosis::FindingEvidence& e) {
  if (const auto* t = std::get_if<diagnosis::TraceRankEvidence>(&e.kind)) {
    const auto& x = t->excess_ms;
    return {{"compute", RoundTo(x.compute, 3)},
            {"data_loading", RoundTo(x.data_loading, 3)},
            {"host_gap", RoundTo(x.host_gap, 3)},
            {"device_busy", RoundTo(x.device_busy, 3)},
            {"device_idle", RoundTo(x.device_idle, 3)}};
  }
  if (const auto* g = std::get_if<diagnosis::GroupRankEvidence>(&e.kind); g && g->excess_ms) {
    const auto& x = *g->excess_ms;
    return {{"data_loading", RoundTo(x.data_loading, 3)},
            {"host_gap", RoundTo(x.host_gap, 3)},
            {"host_compute", RoundTo(x.host_compute, 3)},
            {"device_busy", RoundTo(x.device_busy, 3)},
            {"device_idle", RoundTo(x.device_idle, 3)}};
  }
  return {};
}

// The top ops over peers of a finding's evidence (nullptr when its kind lists none).
const std::vector<diagnosis::OpExcess>* TopOps(const diagnosis::FindingEvidence& e) {
  if (const auto* t = std::get_if<diagnosis::TraceRankEvidence>(&e.kind)) return &t->op_excess_per_step;
  if (const auto* g = std::get_if<diagnosis::GroupRankEvidence>(&e.kind); g && g->excess_ms)
    return &g->op_excess_per_step;
  if (const auto* s = std::get_if<diagnosis::StageExcessEvidence>(&e.kind)) return &s->op_excess_per_step;
  return nullptr;
}

// The 3-5 evidence lines of a finding: excess by class, top ops against peers, the windows, the blame chain,
// the recorded layers. Evidence a finding does not have prints nothing. Numbers as rounded in the JSON.
std::string EvidenceLines(const diagnosis::FindingEvidence& e, size_t width) {
  std::string out;
  if (const auto excess = ExcessByClass(e); !excess.empty()) {
    std::vector<std::pair<double, std::string>> v;
    double top = 0;
    for (const auto& [k, x] : excess) top = std::max(top, std::abs(x));
    for (const auto& [k, x] : excess)
      if (std::abs(x) >= 0.01 * top && x != 0) v.emplace_back(x, k);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return std::abs(a.first) > std::abs(b.first); });
    std::vector<std::pair<std::string, std::string>> items;
    for (const auto& [ms, k] : v) items.emplace_back(Label(k), SignedMs(ms));
    if (!items.empty()) out += ItemLine("excess over peers by class", items, width);
  }
  if (const auto* ops = TopOps(e)) {
    std::vector<std::pair<std::string, std::string>> items;
    for (const diagnosis::OpExcess& o : *ops) items.emplace_back(o.op, SignedMs(RoundTo(o.excess_ms, 3)));
    if (!items.empty()) out += ItemLine("top ops over peers, per step", items, width);
  }
  if (const auto* w = std::get_if<diagnosis::WorkerEvidence>(&e.kind))
    out += fmt::format("     compute {}× its stage peers', {} per step\n",
                       text::Sig3(RoundTo(w->compute_ratio_vs_stage_peers, 4)),
                       SignedMs(RoundTo(w->excess_ms_per_step, 3)));
  if (const auto* t = std::get_if<diagnosis::TraceRankEvidence>(&e.kind)) {
    std::string line = fmt::format("before the collective {} vs peers {}", text::Duration(RoundTo(t->window_ms, 3)),
                                   text::Duration(RoundTo(t->peer_window_ms, 3)));
    line += fmt::format("; in it {} vs peers {}", text::Duration(RoundTo(t->collective_ms, 3)),
                        text::Duration(RoundTo(t->peer_collective_ms, 3)));
    out += text::Wrap(line, width, "     ", 2);
    out += text::Wrap("blame: " + ScaleMs(TerminalSafe(t->blame)), width, "     ", 2);
  }
  if (e.cross_layer && e.cross_layer->explained) {
    const auto& c = *e.cross_layer;
    const double late = c.explained->late_share;
    const double explained = late > 0 ? RoundTo(100 * c.explained->best_excess / late, 1) : 0.0;
    // A share is at most all: layers whose excess outgrows the lateness (they overlap, or the rank also
    // caught up elsewhere) explain all of it.
    out += fmt::format("     recorded layers ({}): explain {} of its lateness ({} of the time)\n",
                       c.over_late_steps ? "late steps" : "training window",
                       explained >= 100 ? std::string("all") : text::Percent(explained),
                       text::Percent(RoundTo(100 * late, 2)));
  }
  return out;
}

std::string FindingLines(size_t n, const diagnosis::Finding& f, size_t width) {
  std::string head = fmt::format("{}. [{}] {} (confidence {:.2f})", n, diagnosis::CauseName(f.cause),
                                 ScaleMs(TerminalSafe(f.summary)), f.confidence);
  // The summary usually says the saving; say it when it does not.
  if (f.summary.find("saves") == std::string::npos)
    head += fmt::format("; saves {} of step time", diagnosis::SavingPercent(f.impact_pct));
  return text::Wrap(head, width, "  ", 3) + EvidenceLines(f.evidence, width);
}

// "label: a 1.20×, b 1.10×, ..." largest first, as many as fit the report's width.
std::string TopParts(const std::string& label, const std::map<std::string, double>& m, size_t width) {
  std::vector<std::pair<std::string, double>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string line = label;
  size_t shown = 0;
  for (; shown < v.size(); ++shown) {
    const std::string item =
        fmt::format("{}{} {}×", shown ? ", " : "", TerminalSafe(v[shown].first), text::Sig3(v[shown].second));
    const std::string rest = shown + 1 < v.size() ? fmt::format(", ... ({} more)", v.size() - shown - 1) : "";
    if (shown > 0 && text::Columns(line + item + rest) > width) break;
    line += item;
  }
  if (shown < v.size()) line += fmt::format(", ... ({} more)", v.size() - shown);
  return text::ClipAtWord(line, width) + "\n";
}

std::string WhatIfLines(const diagnosis::DiagnosisResult& r, size_t width) {
  if (r.whatif.ideal_step_ms <= 0) return "\n" + text::Wrap("what-if: not run (no step to replay)", width, "", 2);
  std::string out = "\n" + text::Wrap(fmt::format("what-if ({} model): steps take {}× the ideal step of {}",
                                                  WhatIfModelName(r.whatif.model), text::Sig3(r.whatif.slowdown),
                                                  text::Duration(r.whatif.ideal_step_ms)),
                                      width, "", 2);
  const std::pair<const char*, const std::map<std::string, double>*> parts[] = {
      {"rank", &r.whatif.by_rank},
      {"data-parallel rank", &r.whatif.by_dp_rank},
      {"stage", &r.whatif.by_stage},
      {"op type", &r.whatif.by_op_type}};
  for (const auto& [name, m] : parts) {
    if (m->empty()) continue;
    // A part above the whole: replaying only it as recorded, the others at their typical time, is slower than
    // the job as recorded when the others ran faster than typical. Said on the same line.
    const bool above = std::any_of(m->begin(), m->end(), [&](const auto& p) {
      return text::Sig3(p.second) != text::Sig3(r.whatif.slowdown) && p.second > r.whatif.slowdown;
    });
    out += TopParts(fmt::format("  only this {} as recorded{}: ", name,
                                above ? " (above S: the others ran faster than their typical time)" : ""),
                    *m, width);
  }
  if (const std::string sentence = diagnosis::ImpactSentence(r); !sentence.empty())
    out += text::Wrap("  impact: " + ScaleMs(sentence), width, "    ", 0);
  return out;
}

// The critical path as JSON: the step's aligned span, each rank's window, and the segments, their starts from
// the step's start (µs).
ordered_json CriticalPathJson(const CriticalPath& p) {
  const auto us = [](int64_t ns) { return RoundTo(static_cast<double>(ns) / 1e3, 3); };
  ordered_json windows = ordered_json::array();
  for (const auto& w : p.windows)
    windows.push_back(
        {{"rank", w.rank}, {"start_us", us(w.start_ns - p.start_ns)}, {"end_us", us(w.end_ns - p.start_ns)}});
  ordered_json segments = ordered_json::array();
  for (const PathSegment& s : p.segments) {
    ordered_json seg = {{"rank", s.rank},
                        {"kind", PathKindName(s.kind)},
                        {"name", JsonSafe(s.name)},
                        {"start_us", us(s.start_ns - p.start_ns)},
                        {"dur_us", us(s.dur_ns)}};
    if (!s.parts.empty()) {  // a merged run of tiny host segments of several kinds: its time by kind
      ordered_json parts = ordered_json::array();
      for (const PathPart& part : s.parts)
        parts.push_back(
            {{"kind", PathKindName(part.kind)}, {"name", JsonSafe(part.name)}, {"dur_us", us(part.dur_ns)}});
      seg["parts"] = std::move(parts);
    }
    segments.push_back(std::move(seg));
  }
  return {{"step", p.step},
          {"which", "median step"},
          {"start_us", us(p.start_ns)},
          {"duration_us", us(p.end_ns - p.start_ns)},
          {"rank_changes", p.rank_changes},
          {"windows", windows},
          {"segments", segments}};
}

// "critical path of step N: 62 % rank 3 kernel (top X), 30 % rank 0 collective (all_reduce), ..." as many
// contributors as fit four lines, largest first.
std::string CriticalPathLines(const CriticalPath& p, size_t width) {
  const std::vector<PathContributor> parts = PathContributors(p);
  std::string line = fmt::format("critical path of step {} ({}, {} rank changes): ", p.step,
                                 text::Duration(static_cast<double>(p.end_ns - p.start_ns) / 1e6), p.rank_changes);
  size_t shown = 0;
  for (; shown < parts.size() && shown < 6; ++shown) {
    const PathContributor& c = parts[shown];
    if (shown > 0 && c.share < 0.01) break;
    line +=
        fmt::format("{}{} % rank {} {}{}", shown ? ", " : "", text::Sig3(100 * c.share), c.rank, PathKindName(c.kind),
                    c.top_name.empty() ? "" : " (" + text::ShortenMiddle(TerminalSafe(c.top_name), 60) + ")");
  }
  if (shown < parts.size()) line += fmt::format(", ... ({} more)", parts.size() - shown);
  return text::Wrap(line, width, "  ", 4);
}

// How the ranks' clocks were put on one timeline: "host-clocks" (kept: CPU-side NCCL calls), "op-table"
// (one clock), "none" (no collective to align by), "collective-ends" (aligned by their common instants).
const char* ClockAlignmentName(const diagnosis::DiagnosisResult& r) {
  if (r.host_clocks) return "host-clocks";
  if (r.collective_source == model::CollectiveSource::kOpTable) return "op-table";
  if (r.collective_source == model::CollectiveSource::kNone) return "none";
  return "collective-ends";
}

/// A left-out input's error kind ("error_kind": "bad_input", ... core/status.h) and, when the loader knew it, where
/// the error was found ("error_at": {"file", and "offset" in bytes or "line"}): fields the contract's inputs allow
/// beside its own, for tools that branch on them rather than read the message.
void AddErrorKindAndPlace(const Status& error, ordered_json* input) {
  (*input)["error_kind"] = ErrorKindName(error.kind());
  const ErrorPlace* place = error.where();
  if (place == nullptr) return;
  ordered_json at = {{"file", JsonSafe(place->file)}};
  if (place->offset) at["offset"] = *place->offset;
  if (place->line) at["line"] = *place->line;
  (*input)["error_at"] = at;
}

}  // namespace

ordered_json DiagnosisToJson(const diagnosis::DiagnosisResult& r) {
  ordered_json j;
  j["schema"] = "strata.diagnosis/1";
  j["status"] = diagnosis::VerdictName(r.status);
  j["status_reasons"] = r.status_reasons;
  ordered_json inputs = ordered_json::array();
  for (const auto& in : r.inputs) {
    ordered_json skipped = ordered_json::object();
    for (const SkipCounts::Entry& e : in.skipped.Entries()) skipped[e.key] = e.n;
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"rank", Optional(in.rank)},
                      {"format", InputFormatName(in.format)},
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
    if (!in.error.ok()) AddErrorKindAndPlace(in.error, &inputs.back());
  }
  j["inputs"] = inputs;
  // What each skip reason means and how much it matters, once for the whole output (only when some input
  // skipped events; the per-input maps keep the contract's plain reason -> count form).
  SkipCounts seen;
  for (const auto& in : r.inputs) seen.Merge(in.skipped);
  if (!seen.Empty()) j["skip_reasons"] = SkipReasonsJson(seen);
  const ordered_json offsets = ObjectOfUnique(r.clock_offsets_us, [](auto rank) { return std::to_string(rank); });
  j["job"] = {{"ranks", r.ranks},
              {"steps", r.steps},
              {"unit", diagnosis::CompareUnitName(r.unit)},
              {"units", r.UnitCount()},
              {"step_source", model::StepSourceName(r.step_source)},
              {"step_time_ms", {{"median", r.step_time_median_ms}, {"p90", r.step_time_p90_ms}}},
              {"layout", LayoutJson(r.layout)},
              {"clock_offsets_us", offsets},
              {"clock_residual_us", r.clock_residual_us},
              {"clock_alignment", ClockAlignmentName(r)},
              {"collective_source", model::CollectiveSourceName(r.collective_source)},
              {"matched", r.matched}};
  ordered_json stragglers = ordered_json::array();
  for (const auto& s : r.stragglers) {
    stragglers.push_back({{"rank", s.rank},
                          {"score", s.score},
                          {"late_ms_per_step", s.late_ms_per_step},
                          {"steps", s.steps},
                          {"persistent", s.persistent},
                          {"evidence", StragglerEvidenceJson(s.evidence)}});
  }
  j["stragglers"] = stragglers;
  ordered_json findings = ordered_json::array();
  for (const auto& f : r.findings) {
    findings.push_back(
        {{"cause", diagnosis::CauseName(f.cause)},
         {"rank", Optional(f.rank)},
         {"ranks", f.ranks},
         {"stage", Optional(f.stage)},
         {"step", Optional(f.step)},
         {"op", Optional(f.op)},
         {"layer", f.layer == diagnosis::Layer::kNone ? ordered_json() : ordered_json(diagnosis::LayerName(f.layer))},
         {"impact_pct", f.impact_pct},
         {"confidence", f.confidence},
         {"summary", f.summary},
         {"evidence", FindingEvidenceJson(f.evidence)}});
  }
  j["findings"] = findings;
  j["whatif"] = {{"slowdown", r.whatif.slowdown},
                 {"ideal_step_ms", r.whatif.ideal_step_ms},
                 {"model", WhatIfModelName(r.whatif.model)},
                 {"by_rank", Map(r.whatif.by_rank)},
                 {"by_stage", Map(r.whatif.by_stage)},
                 {"by_op_type", Map(r.whatif.by_op_type)}};
  if (!r.whatif.by_dp_rank.empty()) j["whatif"]["by_dp_rank"] = Map(r.whatif.by_dp_rank);
  if (r.critical_path) j["critical_path"] = CriticalPathJson(*r.critical_path);
  if (!r.communication.ops.empty()) j["communication"] = CommunicationJson(r.communication);
  j["notes"] = r.notes;
  return j;
}

/// A job that stopped says so first: who stopped, where, and what the others wait in.
std::string StoppedVerdict(const diagnosis::Finding& f) {
  const auto* e = std::get_if<diagnosis::StallEvidence>(&f.evidence.kind);
  if (f.cause == diagnosis::Cause::kCollectiveMismatch || !e) return TerminalSafe(f.summary);
  const std::string in = fmt::format("{} ({} #{})", e->op, e->communicator, e->seq);
  if (e->missing.empty())
    return fmt::format("the job stopped: every rank is inside {} and none completed it for {}", in,
                       text::Duration(e->stalled_for_s * 1e3));
  std::vector<std::string> who;
  for (const diagnosis::StalledRankState& m : e->missing)
    who.push_back(
        fmt::format("rank {} ({}{})", m.rank, diagnosis::StateText(m.state), m.frame.empty() ? "" : " in " + m.frame));
  const bool came_back = std::all_of(e->missing.begin(), e->missing.end(),
                                     [](const diagnosis::StalledRankState& m) { return m.came_back_unix_s > 0; });
  // Every rank entered, the missing ones only after the others had waited the threshold in it (stall.h): after
  // they gave up, or as they were giving up (a stop about as long as the timeout).
  const double gave_up_unix = e->stalled_since_unix + e->stalled_for_s;
  const bool after_they_left = std::all_of(e->missing.begin(), e->missing.end(),
                                           [&](const auto& m) { return m.came_back_unix_s >= gave_up_unix; });
  if (came_back)
    return TerminalSafe(fmt::format("the job stopped: {} joined {} only after rank(s) {} had waited {} in it{}",
                                    fmt::join(who, "; "), in, fmt::join(e->waiting_ranks, ", "),
                                    text::Duration(e->stalled_for_s * 1e3),
                                    after_they_left ? " and given up" : " (they gave up as it came)"));
  return TerminalSafe(fmt::format("the job stopped: {} never joined {}; rank(s) {} waited {} in it",
                                  fmt::join(who, "; "), in, fmt::join(e->waiting_ranks, ", "),
                                  text::Duration(e->stalled_for_s * 1e3)));
}

std::string Verdict(const diagnosis::DiagnosisResult& r) {
  if (r.status == diagnosis::Verdict::kInconclusive) {
    return "inconclusive: " + (r.status_reasons.empty() ? std::string("the job could not be examined")
                                                        : TerminalSafe(r.status_reasons.front()));
  }
  if (r.findings.empty() && !r.stragglers.empty()) {
    const auto& s = r.stragglers.front();
    return fmt::format("straggler: rank {} arrives {} late per step (cause not determined)", s.rank,
                       text::Duration(s.late_ms_per_step));
  }
  if (r.findings.empty()) {
    return fmt::format(
        "healthy: no straggler and no finding above the minimum effect over {} and {} "
        "(what-if slowdown {}×)",
        text::Count(r.ranks, "rank"), text::Count(r.steps.size(), "step"), text::Sig3(r.whatif.slowdown));
  }
  const auto& f = r.findings.front();
  if (f.cause == diagnosis::Cause::kHang || f.cause == diagnosis::Cause::kCollectiveMismatch) return StoppedVerdict(f);
  // A finding about several ranks (slowed alike) names them all: its saving is fixing all of them, not its
  // first rank alone.
  constexpr size_t kNamedRanks = 4;
  std::string who =
      f.rank && f.ranks.size() > kNamedRanks
          ? fmt::format("ranks {}, ... ({} ranks)",
                        fmt::join(f.ranks.begin(), f.ranks.begin() + static_cast<std::ptrdiff_t>(kNamedRanks), ", "),
                        f.ranks.size())
      : f.rank && f.ranks.size() > 1 ? fmt::format("ranks {}", fmt::join(f.ranks, ", "))
      : f.rank                       ? fmt::format("rank {}", *f.rank)
      : f.stage                      ? fmt::format("stage {}", *f.stage)
                                     : text::Count(f.ranks.size(), "rank");
  const bool several = who.rfind("ranks", 0) == 0 || (!f.rank && !f.stage && f.ranks.size() != 1);
  return fmt::format("{}: {}{} {} {} of step time", diagnosis::CauseName(f.cause), who,
                     f.op ? fmt::format(" ({})", TerminalSafe(*f.op)) : "", several ? "cost" : "costs",
                     text::Percent(f.impact_pct));
}

/// "skipped events: N of M (x%):" then one line per reason with its severity and description.
std::string SkippedLines(const diagnosis::DiagnosisResult& r, size_t width) {
  SkipCounts by_reason;
  uint64_t events = 0;
  for (const auto& in : r.inputs) {
    events += in.events;
    by_reason.Merge(in.skipped);
  }
  const uint64_t total = by_reason.Total();
  std::string line = "skipped events: ";
  if (total == 0) return line + "none\n";
  line += fmt::format("{} of {} ({:.2f}%):", total, total + events,
                      100.0 * static_cast<double>(total) / static_cast<double>(total + events));
  return line + "\n" + SkipReasonLines(by_reason, "  ", width);
}

// How the ranks' clocks were put on one timeline, or why they were not: one rank has nothing to align, no
// collective leaves nothing to align by; a residual under 1 µs is said in ns, none as "exactly".
std::string ClocksLine(const diagnosis::DiagnosisResult& r) {
  if (r.host_clocks)
    return "clocks: the traces' own (epoch) clocks: NCCL calls return at launch, no common instant to align by";
  if (r.ranks < 2) return "clocks: one rank, nothing to align";
  if (r.collective_source == model::CollectiveSource::kOpTable) return "clocks: one clock, the op table's";
  if (r.collective_source == model::CollectiveSource::kNone)
    return "clocks: not aligned (no collective call common to the ranks to align by)";
  const double us = r.clock_residual_us;
  const std::string within = us <= 0  ? std::string("exactly")
                             : us < 1 ? "to within " + text::Sig3(us * 1e3) + " ns"
                                      : "to within " + text::Duration(us / 1e3);
  return fmt::format("clocks: aligned by {} {}", model::CollectiveSourceName(r.collective_source), within);
}

std::string DiagnosisToText(const diagnosis::DiagnosisResult& r, size_t width) {
  width = std::max(width, kMinTextWidth);
  std::string out = text::Wrap("verdict: " + Verdict(r), width, "", 9);
  // The verdict line already carries the first reason of an inconclusive result.
  const size_t first = r.status == diagnosis::Verdict::kInconclusive ? 1 : 0;
  for (size_t i = first; i < r.status_reasons.size(); ++i)
    out += text::Wrap(fmt::format("{}: {}", r.status == diagnosis::Verdict::kInconclusive ? "also" : "caveat",
                                  TerminalSafe(r.status_reasons[i])),
                      width, "  ", 2);
  // Flight Recorder dumps alone: no steps, timings or clocks to show.
  const bool dumps =
      !r.inputs.empty() && std::all_of(r.inputs.begin(), r.inputs.end(), [](const diagnosis::InputSummary& in) {
        return in.format == InputFormat::kFlightRecorder;
      });
  out += dumps ? text::Wrap(fmt::format("job: the Flight Recorder dumps of {} ranks (hangs and collective mismatches: "
                                        "no steps or timings)",
                                        r.ranks),
                            width, "", 2)
               : JobLine(r, width);
  out += StragglerLines(r, width);
  if (!r.findings.empty()) {
    out += "\nfindings (by time saved):\n";
    for (size_t i = 0; i < r.findings.size() && i < kMaxFindings; ++i) out += FindingLines(i + 1, r.findings[i], width);
    if (r.findings.size() > kMaxFindings)
      out += fmt::format("  ... {} more findings (--format json lists them all)\n", r.findings.size() - kMaxFindings);
  }
  if (dumps) {
    for (const auto& in : r.left_out) out += text::Wrap("left out: " + TerminalSafe(in.reason), width, "", 2);
    for (const auto& n : r.notes) out += text::Wrap("note: " + TerminalSafe(n), width, "", 2);
    return out;
  }
  out += WhatIfLines(r, width);
  if (r.critical_path) out += CriticalPathLines(*r.critical_path, width);
  out += CommunicationLines(r.communication, width);
  out += text::Wrap(ClocksLine(r), width, "", 2);
  for (const auto& in : r.left_out) out += text::Wrap("left out: " + TerminalSafe(in.reason), width, "", 2);
  out += SkippedLines(r, width);
  for (const auto& n : r.notes) out += text::Wrap("note: " + TerminalSafe(n), width, "", 2);
  out += text::Wrap(kLegend, width, "", 5);
  return out;
}

}  // namespace strata
