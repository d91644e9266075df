// What agents and `strata serve` exchange through Redis Streams (issue 13, item 4): the key names, and
// a step summary or a finding as the field/value pairs of one stream entry.
//  - `strata:job:{JOB}:steps`: one stream per job; entries `kind=summary` (a RankStepSummary plus the
//    publishing host) or `kind=finding` (an agent's own detection). The `{JOB}` hash tag puts every key of
//    a job in one Redis Cluster slot, so jobs spread over a cluster and a job's keys stay together.
//    `kind=inflight`: a rank's collective state each round (which collective it is inside, or where it is),
//    for judging a stall across nodes.
//  - `strata:job:{JOB}:requests`: serve asks the agents holding a suspect's ranks for their flight-recorder
//    window's findings (`kind=window_request`); they answer on the steps stream (`kind=window_finding`).
//  - `strata:jobs`: a set of the job ids that have a stream (how serve discovers jobs without SCAN, which
//    a cluster would need per node).
// Invariants: numbers are written in a form that reads back exactly (%.17g); decoding never trusts the
// input: a missing or malformed field is an error naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/diagnosis/stall.h"
#include "analysis/online/online_detector.h"
#include "analysis/online/step_summary.h"
#include "core/status.h"

namespace strata::agent {

using StreamFields = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kJobSetKey = "strata:jobs";
std::string StepsStreamKey(const std::string& job);
std::string RequestsStreamKey(const std::string& job);

StreamFields EncodeSummary(const online::RankStepSummary& s, const std::string& host);
StreamFields EncodeFinding(const online::Detection& d, const std::string& host);

/// serve -> agents (`strata:job:{JOB}:requests`): diagnose your flight-recorder window for these ranks.
struct WindowRequest {
  std::vector<int32_t> ranks;  // the suspect first, then a few peers
  int64_t step = -1;           // the step serve detected it at
  double requested_at = 0;     // Unix seconds
};
StreamFields EncodeWindowRequest(const WindowRequest& r);
Expected<WindowRequest> DecodeWindowRequest(const StreamFields& fields);

/// agent -> serve (`kind=window_finding` on the steps stream): a finding of the agent's window diagnosis
/// for a requested rank, in the `strata diagnose` contract's terms.
struct WindowFinding {
  int32_t rank = -1;
  std::string cause, summary, host;
  double impact_pct = 0, confidence = 0, detected_at = 0;
};
StreamFields EncodeWindowFinding(const WindowFinding& f);
Expected<WindowFinding> DecodeWindowFinding(const StreamFields& fields);

/// agent -> serve (`kind=inflight` on the steps stream), each round for each rank of the node: its collective
/// state now (analysis/diagnosis/stall.h), from which serve judges a stall across nodes. Where a rank idle past
/// the threshold is goes as its state's kind (`state_kind`, the kind's key, analysis/diagnosis/rank_state.h;
/// "" when not looked up), particulars (`state_detail`, `state_context`) and sentence (`state`, which serves
/// before the kind read, and which keeps a kind this version does not know as kUnrecognized).
StreamFields EncodeInflight(const diagnosis::RankInflight& r, const std::string& host, double at_unix);
struct InflightEntry {
  diagnosis::RankInflight inflight;
  std::string host;
  double at_unix = 0;
};
Expected<InflightEntry> DecodeInflight(const StreamFields& fields);
/// Compatibility: agents before `state_kind` (issue 50 item 2) sent a rank's state as its sentence only; its
/// kind and particulars are read back from the words, here and nowhere else ("": no state).
std::optional<diagnosis::RankState> StateOfOldAgent(const std::string& sentence);

/// The value of field `kind` ("summary", "finding", or "" when absent).
std::string EntryKind(const StreamFields& fields);
Expected<online::RankStepSummary> DecodeSummary(const StreamFields& fields);
Expected<online::Detection> DecodeFinding(const StreamFields& fields);

}  // namespace strata::agent
