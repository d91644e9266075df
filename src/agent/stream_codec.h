// What agents and `strata serve` exchange through Redis Streams (issue 13, item 4): the key names, and
// a step summary or a finding as the field/value pairs of one stream entry.
//  - `strata:job:{JOB}:steps`: one stream per job; entries `kind=summary` (a RankStepSummary plus the
//    publishing host) or `kind=finding` (an agent's own detection). The `{JOB}` hash tag puts every key of
//    a job in one Redis Cluster slot, so jobs spread over a cluster and a job's keys stay together.
//  - `strata:jobs`: a set of the job ids that have a stream (how serve discovers jobs without SCAN, which
//    a cluster would need per node).
// Invariants: numbers are written in a form that reads back exactly (%.17g); decoding never trusts the
// input: a missing or malformed field is an error naming it.
#pragma once

#include <string>
#include <utility>
#include <vector>

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

/// The value of field `kind` ("summary", "finding", or "" when absent).
std::string EntryKind(const StreamFields& fields);
Expected<online::RankStepSummary> DecodeSummary(const StreamFields& fields);
Expected<online::Detection> DecodeFinding(const StreamFields& fields);

}  // namespace strata::agent
