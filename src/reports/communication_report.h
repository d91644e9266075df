// Renders the communication table (analysis/communication.h): as the diagnosis JSON's "communication" array
// (one object per communicator and op, unknown quantities null) and as the text report's lines (the ops that
// took most time, each with its transfer, its wait for late peers, its bus bandwidth and who arrived last).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/communication.h"

namespace strata {

nlohmann::ordered_json CommunicationJson(const CommunicationTable& table);
/// At most kCommunicationTextOps lines, "" for an empty table.
std::string CommunicationLines(const CommunicationTable& table, size_t width);
inline constexpr size_t kCommunicationTextOps = 3;
/// "4 B", "1.5 KiB", "64 MiB", "2.0 GiB": a byte count as a person reads it.
std::string ByteText(double bytes);

}  // namespace strata
