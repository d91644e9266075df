// Text, JSON and HTML renderings of a run diff (see diff_report.h).
#include "reports/diff_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/round.h"
#include "core/text_escape.h"
#include "reports/skip_report.h"
#include "reports/text_format.h"

namespace strata {

namespace {

// The columns of a top-changes row other than the name (change, times, counts, indentation): a name gets
// the rest of the width, at least kMinNameColumns (44 at the default 100 columns).
constexpr size_t kRowColumnsButName = 56;
constexpr size_t kMinNameColumns = 24;

using Json = nlohmann::ordered_json;

bool IsStepRow(const diff::Change& c) { return c.name.rfind("ProfilerStep", 0) == 0; }

Json ChangeJson(const diff::Change& c, bool with_kind) {
  Json j;
  j["name"] = JsonSafe(c.name);
  if (with_kind) j["kind"] = JsonSafe(c.kind);
  j["base_count"] = c.base_count;
  j["test_count"] = c.test_count;
  j["base_total_us"] = RoundTo(c.base_total_us, 3);
  j["test_total_us"] = RoundTo(c.test_total_us, 3);
  j["diff_count"] = c.diff_count();
  j["diff_total_us"] = RoundTo(c.diff_total_us(), 3);
  return j;
}

Json SideJson(const TraceStore& store, const std::string& label, const diff::SideSummary& side) {
  Json inputs = Json::array();
  for (const InputInfo& in : store.inputs)
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"format", InputFormatName(in.format)},
                      {"events", in.events},
                      {"skipped", in.skipped.ByKey()}});
  return {{"path", JsonSafe(label)},
          {"inputs", inputs},
          {"ranks", side.ranks},
          {"steps", side.steps},
          {"steps_in_input", side.all_steps},
          {"rows", side.rows},
          {"step_rows", side.step_rows},
          {"step_time_us", side.step_rows ? Json(RoundTo(side.step_time_us, 3)) : Json()},
          {"rounded_to_us", side.rounded_to_us},
          {"step_source", side.step_source}};
}

/// Skipped counts of both sides' inputs together, for the "skip_reasons" glossary and the text's last lines.
SkipCounts AllSkipped(const DiffSides& sides) {
  SkipCounts all;
  for (const TraceStore* store : {&sides.base, &sides.test})
    for (const InputInfo& in : store->inputs) all.Merge(in.skipped);
  return all;
}

std::string SignedUs(double us) { return (us > 0 ? "+" : "") + text::Duration(us / 1000.0); }

std::string StepLine(const diff::RunDiff& d) {
  const double b = d.base.step_time_us, t = d.test.step_time_us;
  if (d.base.step_rows == 0 || d.test.step_rows == 0) return "step time: not measured (no ProfilerStep row selected)";
  std::string line =
      fmt::format("step time: {} -> {} ({}", text::Duration(b / 1000.0), text::Duration(t / 1000.0), SignedUs(t - b));
  if (b > 0) line += fmt::format(", {}{}", t >= b ? "+" : "", text::Percent(100.0 * (t - b) / b));
  return line + ")";
}

std::string Ints(const std::vector<int32_t>& v) {
  std::vector<int64_t> w(v.begin(), v.end());
  return text::IntRanges(w);
}

/// "LABEL (rank 3, step 1009; 9812 events)": what was compared on one side; an op table left to the default,
/// "LABEL (every rank: 0-7, its median step by time: 23; ...)".
std::string SideDescription(const std::string& label, const diff::SideSummary& s) {
  const std::string which =
      s.whole_median_step
          ? fmt::format("every rank: {}, its median step by time: {}", Ints(s.ranks), text::IntRanges(s.steps))
          : fmt::format("rank{} {}, step{} {}", s.ranks.size() > 1 ? "s" : "", Ints(s.ranks),
                        s.steps.size() > 1 ? "s" : "", text::IntRanges(s.steps));
  return fmt::format("{} ({}; {}{}{})", label, which, text::Count(s.rows, "event"),
                     s.rounded_to_us ? ", rounded to whole µs as HTA does" : "",
                     s.step_source == "profiler-step" ? "" : "; no ProfilerStep, steps " + s.step_source);
}

std::string SideLine(const char* which, const std::string& label, const diff::SideSummary& s) {
  return fmt::format("  {}: {}\n", which, TerminalSafe(SideDescription(label, s)));
}

std::string Header(const DiffSides& sides, const diff::RunDiff& d) {
  size_t both = 0, added = 0, gone = 0;
  for (const diff::Change& c : d.names) c.is_new() ? ++added : c.is_gone() ? ++gone : ++both;
  std::string out = "strata diff: " + StepLine(d) + "\n";
  out += SideLine("base", sides.base_label, d.base) + SideLine("test", sides.test_label, d.test);
  const char* rows = d.device == diff::DeviceFilter::kCpu   ? "CPU rows only"
                     : d.device == diff::DeviceFilter::kGpu ? "GPU rows only"
                                                            : "CPU and GPU rows";
  out += fmt::format("  names: {} in both, {} new in test, {} gone from test; {} (HTA TraceDiff rules)\n", both, added,
                     gone, rows);
  return out;
}

std::string CountsText(const diff::Change& c) { return fmt::format("{} -> {}", c.base_count, c.test_count); }

std::string Times(const diff::Change& c) {
  return text::Duration(c.base_total_us / 1000.0) + " -> " + text::Duration(c.test_total_us / 1000.0);
}

std::string KindsText(const diff::RunDiff& d) {
  text::Table t({"kind", ">count", ">total time", ">change"});
  for (const diff::Change& c : d.kinds)
    t.Add({TerminalSafe(c.name), CountsText(c), Times(c), SignedUs(c.diff_total_us())});
  return "\nchange by kind (CPU rows nest -- a ProfilerStep holds its whole step -- so CPU kinds overlap):\n" +
         t.Render("  ");
}

/// The names of `shown` as the table prints them: shortened in the middle to `columns`; a name that would then
/// read like another shown name is printed whole, so two different names never print alike.
std::vector<std::string> ShownNames(const std::vector<const diff::Change*>& shown, size_t columns) {
  std::vector<std::string> names;
  std::map<std::string, size_t> first;  // printed name -> its first row
  for (const diff::Change* c : shown) names.push_back(text::ShortenMiddle(TerminalSafe(c->name), columns));
  for (size_t i = 0; i < names.size(); ++i) {
    auto [it, inserted] = first.emplace(names[i], i);
    if (inserted) continue;
    names[it->second] = TerminalSafe(shown[it->second]->name);
    names[i] = TerminalSafe(shown[i]->name);
  }
  return names;
}

std::string TopText(const diff::RunDiff& d, size_t top, size_t width) {
  const size_t name_columns = std::max(kMinNameColumns, width - std::min(width, kRowColumnsButName));
  std::vector<const diff::Change*> shown;
  size_t left = 0;
  for (const diff::Change& c : d.names) {
    if (IsStepRow(c)) continue;
    if (shown.size() == top)
      ++left;
    else
      shown.push_back(&c);
  }
  const std::vector<std::string> names = ShownNames(shown, name_columns);
  text::Table t({">change", ">total time", ">count", "name"});
  for (size_t i = 0; i < shown.size(); ++i) {
    const diff::Change& c = *shown[i];
    const std::string mark = c.is_new() ? " [new]" : c.is_gone() ? " [gone]" : "";
    t.Add({SignedUs(c.diff_total_us()), Times(c), CountsText(c), names[i] + mark});
  }
  std::string out = "\ntop changes by total time:\n" + t.Render("  ");
  if (left) out += fmt::format("  ... {} more names (all of them: --format json)\n", left);
  return out;
}

/// The ranks whose change differs from the rest (at most 16 listed, with the measure they differ in), or that
/// none does.
std::string RanksText(const diff::RunDiff& d) {
  if (d.ranks.size() < 2) return "";
  std::vector<double> changes;
  std::vector<const diff::RankChange*> differ;
  for (const diff::RankChange& r : d.ranks) {
    changes.push_back(r.change_us());
    if (r.differs) differ.push_back(&r);
  }
  std::sort(changes.begin(), changes.end());
  const std::string range = SignedUs(changes.front()) == SignedUs(changes.back())
                                ? SignedUs(changes.front()) + " on every rank"
                                : fmt::format("from {} to {}", SignedUs(changes.front()), SignedUs(changes.back()));
  std::string out = fmt::format("\nranks in both runs: {}; step time change {}\n", d.ranks.size(), range);
  const bool two = d.ranks.size() == 2;  // compared name by name with the other rank (rank_changes.h)
  if (!two && d.ranks.size() < diff::kMinRanksToCompare) return out;
  if (differ.empty())
    return out + (two ? "  no op changed on one rank alone\n" : "  no rank's change differs from the rest\n");
  text::Table t({">rank", ">step time", "differs in", ">change", two ? ">other rank" : ">ranks' median"});
  for (size_t i = 0; i < differ.size() && i < 16; ++i) {
    const diff::RankChange& r = *differ[i];
    t.Add({std::to_string(r.rank),
           text::Duration(r.base_step_time_us / 1000.0) + " -> " + text::Duration(r.test_step_time_us / 1000.0),
           TerminalSafe(r.measure), SignedUs(r.measure_change_us), SignedUs(r.measure_median_us)});
  }
  out += two ? std::string("  an op changed on one rank only (the largest per rank):\n")
             : fmt::format("  {} rank{} whose change differs from the rest:\n", differ.size(),
                           differ.size() > 1 ? "s" : "");
  out += t.Render("  ");
  if (differ.size() > 16) out += fmt::format("  ... {} more (--format json)\n", differ.size() - 16);
  return out;
}

std::string DiffSkippedText(const DiffSides& sides, size_t width) {
  const SkipCounts skipped = AllSkipped(sides);
  const uint64_t total = skipped.Total();
  if (total == 0) return "\nskipped events: none\n";
  return fmt::format("\nskipped events (both runs): {}:\n", total) + SkipReasonLines(skipped, "  ", width);
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : JsonSafe(s)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

constexpr const char* kHtmlStyle = R"(<style>
  :root { --fg:#1d2330; --muted:#5f6b7a; --line:#d8dde5; --panel:#f6f8fb; --bad:#d62728; --good:#2a9d55; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
  header { padding: 18px 24px 12px; border-bottom: 1px solid var(--line); }
  h1 { font-size: 20px; margin: 0 0 6px; } h2 { font-size: 16px; margin: 0 0 8px; }
  main { padding: 12px 24px 40px; display: grid; gap: 16px; }
  section { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 12px 14px; }
  .muted { color: var(--muted); }
  table { border-collapse: collapse; font-size: 13px; }
  th, td { border-bottom: 1px solid var(--line); padding: 2px 8px; text-align: left; vertical-align: top; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
  td.nowrap { white-space: nowrap; }
  svg text { font: 11px system-ui, sans-serif; fill: var(--fg); }
</style>)";

/// Horizontal bars of the top changes: slower in test to the right in red, faster to the left in green.
std::string BarsSvg(const std::vector<const diff::Change*>& rows) {
  double largest = 0;
  for (const diff::Change* c : rows) largest = std::max(largest, std::fabs(c->diff_total_us()));
  const int label_w = 360, half = 260, row_h = 18, width = label_w + 2 * half + 90;
  std::string svg = fmt::format(R"(<svg width="{}" height="{}" role="img" aria-label="top changes">)", width,
                                row_h * static_cast<int>(rows.size()) + 6);
  const int axis = label_w + half;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double d = rows[i]->diff_total_us();
    const int len = largest > 0 ? static_cast<int>(std::lround(half * std::fabs(d) / largest)) : 0;
    const int y = static_cast<int>(i) * row_h + 3;
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", label_w - 6, y + 12,
                       HtmlEscape(text::ShortenMiddle(rows[i]->name, 56)));
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {}</title></rect>)",
                       d >= 0 ? axis : axis - len, y + 2, std::max(len, 1), row_h - 6,
                       d >= 0 ? "var(--bad)" : "var(--good)", HtmlEscape(rows[i]->name), HtmlEscape(SignedUs(d)));
    svg += fmt::format(R"(<text x="{}" y="{}">{}</text>)", d >= 0 ? axis + len + 4 : axis + 4, y + 12,
                       HtmlEscape(SignedUs(d)));
  }
  svg += fmt::format(R"(<line x1="{0}" x2="{0}" y1="0" y2="{1}" stroke="#888"/></svg>)", axis,
                     row_h * static_cast<int>(rows.size()) + 6);
  return svg;
}

/// A table of changes; the first column is headed `first` ("name" or "kind"), a kind column follows names.
std::string HtmlTable(const std::vector<const diff::Change*>& rows, const char* first, bool with_kind) {
  std::string out = std::string("<table><tr><th>") + first + "</th>";
  if (with_kind) out += "<th>kind</th>";
  out += "<th>count base → test</th><th>total base → test</th><th>change</th></tr>";
  for (const diff::Change* c : rows) {
    out += "<tr><td>" + HtmlEscape(c->name) +
           (c->is_new()    ? " <b>new</b>"
            : c->is_gone() ? " <b>gone</b>"
                           : "") +
           "</td>";
    if (with_kind) out += "<td class=\"nowrap\">" + HtmlEscape(c->kind) + "</td>";
    out += fmt::format(R"(<td class="num">{}</td><td class="num">{}</td><td class="num">{}</td></tr>)",
                       HtmlEscape(CountsText(*c)), HtmlEscape(Times(*c)), HtmlEscape(SignedUs(c->diff_total_us())));
  }
  return out + "</table>";
}

}  // namespace

nlohmann::ordered_json DiffToJson(const DiffSides& sides, const diff::RunDiff& d) {
  Json j;
  j["schema"] = "strata.diff/1";
  j["rules"] = "HTA TraceDiff.compare_traces (docs/hta-semantics.md section 10)";
  j["device"] = diff::DeviceFilterName(d.device);
  j["base"] = SideJson(sides.base, sides.base_label, d.base);
  j["test"] = SideJson(sides.test, sides.test_label, d.test);
  const bool measured = d.base.step_rows && d.test.step_rows;
  j["step_time_change_us"] = measured ? Json(RoundTo(d.test.step_time_us - d.base.step_time_us, 3)) : Json();
  j["ranks"] = Json::array();
  for (const diff::RankChange& r : d.ranks) {
    Json rank = {{"rank", r.rank},
                 {"base_step_time_us", RoundTo(r.base_step_time_us, 3)},
                 {"test_step_time_us", RoundTo(r.test_step_time_us, 3)},
                 {"change_us", RoundTo(r.change_us(), 3)},
                 {"differs", r.differs}};
    if (r.differs)
      rank["differs_in"] = {{"measure", JsonSafe(r.measure)},
                            {"change_us", RoundTo(r.measure_change_us, 3)},
                            {"ranks_median_change_us", RoundTo(r.measure_median_us, 3)}};
    j["ranks"].push_back(rank);
  }
  j["kinds"] = Json::array();
  for (const diff::Change& c : d.kinds) j["kinds"].push_back(ChangeJson(c, false));
  j["new"] = Json::array();
  j["gone"] = Json::array();
  for (const diff::Change& c : d.names) {
    if (c.is_new()) j["new"].push_back(JsonSafe(c.name));
    if (c.is_gone()) j["gone"].push_back(JsonSafe(c.name));
  }
  j["names"] = Json::array();
  for (const diff::Change& c : d.names) j["names"].push_back(ChangeJson(c, true));
  const SkipCounts skipped = AllSkipped(sides);
  if (!skipped.Empty()) j["skip_reasons"] = SkipReasonsJson(skipped);
  return j;
}

std::string DiffToText(const DiffSides& sides, const diff::RunDiff& d, size_t top, size_t width) {
  width = std::max(width, kMinTextWidth);
  return Header(sides, d) + RanksText(d) + KindsText(d) + TopText(d, top, width) + DiffSkippedText(sides, width);
}

std::string DiffToHtml(const DiffSides& sides, const diff::RunDiff& d, size_t top) {
  std::vector<const diff::Change*> shown, kinds;
  for (const diff::Change& c : d.names)
    if (!IsStepRow(c) && shown.size() < top) shown.push_back(&c);
  for (const diff::Change& c : d.kinds) kinds.push_back(&c);
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>strata diff</title>";
  page += kHtmlStyle;
  page += "</head><body><header><h1>strata diff</h1><div>" + HtmlEscape(StepLine(d)) + "</div>";
  page += "<div class=\"muted\">base: " + HtmlEscape(SideDescription(sides.base_label, d.base)) +
          "<br>test: " + HtmlEscape(SideDescription(sides.test_label, d.test)) + "</div></header><main>";
  const std::string ranks = RanksText(d);
  if (!ranks.empty()) page += "<section><h2>Ranks</h2><pre>" + HtmlEscape(ranks.substr(1)) + "</pre></section>";
  page += fmt::format("<section><h2>Top {} changes by total time</h2>", shown.size());
  page += "<div class=\"muted\">red: more time in test; green: less (ProfilerStep rows left out)</div>";
  page += BarsSvg(shown) + "</section>";
  page +=
      "<section><h2>Change by kind</h2><div class=\"muted\">CPU rows nest (a ProfilerStep holds its whole "
      "step), so CPU kinds overlap.</div>" +
      HtmlTable(kinds, "kind", false) + "</section>";
  page += "<section><h2>Top changes</h2>" + HtmlTable(shown, "name", true) +
          "<div class=\"muted\">every name: <code>strata diff --format json</code></div></section>";
  return page + "</main></body></html>\n";
}

}  // namespace strata
