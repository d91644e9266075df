// JSON and text of the communication table (communication_report.h).
#include "reports/communication_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/round.h"
#include "core/text_escape.h"
#include "reports/text_format.h"

namespace strata {
namespace {

using nlohmann::ordered_json;

ordered_json Known(double v, int digits) { return v >= 0 ? ordered_json(RoundTo(v, digits)) : ordered_json(); }

// "rank 3 arrived last in 80 % of calls" for the rank that did most often, "" when none did.
std::string LastArrivalText(const CommunicationOp& op) {
  if (op.last_arrivals.empty() || op.calls == 0) return "";
  const auto top = std::max_element(op.last_arrivals.begin(), op.last_arrivals.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  return fmt::format("; rank {} arrived last in {} % of calls", top->first,
                     text::Sig3(100.0 * static_cast<double>(top->second) / static_cast<double>(op.calls)));
}

std::string OpLine(const CommunicationOp& op, size_t width) {
  std::string line = fmt::format(
      "{} on {} ({}{}): {}", op.op,
      op.group.empty() ? std::string("the default group") : "group " + TerminalSafe(op.group),
      text::Count(op.members, "rank"), op.algorithm.empty() ? "" : ", " + op.algorithm, text::Count(op.calls, "call"));
  if (op.bytes >= 0) line += " of " + ByteText(op.bytes);
  line += ", " + text::Duration(op.time_ms) + " each";
  if (op.split && op.time_ms > 0) {
    line += fmt::format(": transfer {}, waiting for the last to arrive {} ({} %)", text::Duration(op.transfer_ms),
                        text::Duration(op.wait_ms), text::Sig3(100.0 * op.wait_ms / op.time_ms));
    if (op.busbw_gbps >= 0) line += fmt::format("; busbw {} GB/s", text::Sig3(op.busbw_gbps));
    line += LastArrivalText(op);
  } else if (!op.split) {
    line += " (the calls return at launch: transfer and wait not told apart)";
  }
  return text::Wrap(line, width, "  ", 4);
}

}  // namespace

std::string ByteText(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{} {}", text::Sig3(bytes), kUnits[unit]);
}

ordered_json CommunicationJson(const CommunicationTable& table) {
  ordered_json ops = ordered_json::array();
  for (const CommunicationOp& op : table.ops) {
    ordered_json last = ordered_json::object(), wait = ordered_json::object();
    for (const auto& [rank, n] : op.last_arrivals) last[std::to_string(rank)] = n;
    for (const auto& [rank, ms] : op.wait_ms_by_rank) wait[std::to_string(rank)] = RoundTo(ms, 3);
    ops.push_back({{"group", JsonSafe(op.group)},
                   {"op", JsonSafe(op.op)},
                   {"name", JsonSafe(op.name)},
                   {"algorithm", op.algorithm.empty() ? ordered_json() : ordered_json(op.algorithm)},
                   {"members", op.members},
                   {"calls", op.calls},
                   {"bytes", Known(op.bytes, 0)},
                   {"time_ms", RoundTo(op.time_ms, 3)},
                   {"transfer_ms", Known(op.transfer_ms, 3)},
                   {"wait_ms", Known(op.wait_ms, 3)},
                   {"algbw_gbps", Known(op.algbw_gbps, 3)},
                   {"busbw_gbps", Known(op.busbw_gbps, 3)},
                   {"last_arrivals", last},
                   {"wait_ms_by_rank", wait}});
  }
  return ops;
}

std::string CommunicationLines(const CommunicationTable& table, size_t width) {
  if (table.ops.empty()) return "";
  std::string out = text::Wrap(
      "communication (mean per call: time in it = the transfer + the wait for the last to arrive):", width, "", 2);
  for (size_t i = 0; i < table.ops.size() && i < kCommunicationTextOps; ++i) out += OpLine(table.ops[i], width);
  if (table.ops.size() > kCommunicationTextOps)
    out += fmt::format("  ... {} more (--format json lists them all)\n", table.ops.size() - kCommunicationTextOps);
  return out;
}

}  // namespace strata
