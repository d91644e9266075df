// libFuzzer target for the Flight Recorder dump decoder (importers/flight_recorder_decoder) and the findings
// drawn from dumps (analysis/diagnosis/flight_recorder_findings). The input is a dump's bytes: a pickle
// (0x80 first) or JSON. Never crashes, hangs or exceeds its limits; every error starts with the file's path;
// a decoded dump holds no more entries than the limits allow values; and judging it (as rank 0, beside a copy
// of it as rank 1, so that groups have peers) names only ranks of the dumps or their groups.
#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "analysis/diagnosis/flight_recorder_findings.h"
#include "fuzz_common.h"
#include "importers/flight_recorder_decoder.h"

namespace {

strata::PickleLimits FuzzLimits() {
  strata::PickleLimits limits;
  limits.max_depth = 64;
  limits.max_items = 200000;
  limits.max_string_bytes = 1 << 16;
  limits.max_total_string_bytes = 1 << 22;
  return limits;
}

// The ranks a finding may name: the dumps', their groups', and, for a group pg_config does not list, the peers
// its P2P entries' names give (the digits after "->" or "<-").
std::set<int32_t> Named(const strata::FlightRecorderDumps& dumps) {
  std::set<int32_t> out;
  for (const strata::FlightRecorderDump& d : dumps.dumps) {
    out.insert(d.rank);
    for (const auto& [name, group] : d.pg_config) out.insert(group.ranks.begin(), group.ranks.end());
    for (const strata::FrEntry& e : d.entries) {
      auto g = d.pg_config.find(e.pg_name);
      if (g != d.pg_config.end() && !g->second.ranks.empty()) continue;
      for (const char* arrow : {"->", "<-"}) {
        const size_t at = e.profiling_name.rfind(arrow);
        if (at == std::string::npos) continue;
        size_t end = at + 2;
        while (end < e.profiling_name.size() && end - at < 11 &&
               std::isdigit(static_cast<unsigned char>(e.profiling_name[end])))
          ++end;
        if (end > at + 2) out.insert(static_cast<int32_t>(std::stoll(e.profiling_name.substr(at + 2, end - at - 2))));
      }
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = "fuzz/nccl_trace_rank_0";
  auto dump =
      strata::DecodeFlightRecorderDump(std::string_view(reinterpret_cast<const char*>(data), size), path, FuzzLimits());
  if (!dump.ok()) {
    FUZZ_CHECK(dump.error().rfind(path + ": ", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(dump.value().entries.size() <= FuzzLimits().max_items);
  strata::FlightRecorderDumps dumps;
  dumps.dumps.push_back(dump.value());
  dumps.dumps[0].rank = 0;
  dumps.dumps.push_back(dump.value());
  dumps.dumps[1].rank = 1;
  const std::set<int32_t> named = Named(dumps);
  const auto judgement = strata::diagnosis::JudgeFlightRecorder(dumps);
  for (const auto& f : judgement.findings) {
    if (f.rank) FUZZ_CHECK(named.count(f.rank->value()));
    for (strata::RankNumber r : f.ranks) FUZZ_CHECK(named.count(r.value()));
    FUZZ_CHECK(f.cause == strata::diagnosis::Cause::kHang || f.cause == strata::diagnosis::Cause::kCollectiveMismatch);
  }
  return 0;
}
