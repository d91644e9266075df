// Rank inference from file names ("rank-3", "rank3", "rank_3", "worker3", ...) and user rank maps.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace strata {

/// The rank a file name states, if any: the digits after "rank" or "worker" (case-insensitive,
/// optionally followed by '-', '_' or '.'), where the word does not continue a longer word.
std::optional<int> RankFromFileName(std::string_view path);

/// The number that ends a file name's stem, before its extensions ("report_3.sqlite", "prof-12.sqlite",
/// "7.sqlite" -> 3, 12, 7), where no digit precedes it: what `nsys profile -o NAME_%q{RANK}` writes. Weaker than
/// RankFromFileName (a name may end in a number that is no rank): the loader uses it for Nsight Systems exports.
std::optional<int> RankFromTrailingNumber(std::string_view path);

/// The process id in a name written by PyTorch's tensorboard_trace_handler, HOST_PID.TIMESTAMP.pt.trace.json
/// (optionally .gz): such names carry no rank, but a recording of the same run knows which rank the pid was.
std::optional<int64_t> PidFromTensorboardName(std::string_view path);

/// Parses a --rank-map value "FILE=RANK[,FILE=RANK...]"; FILE matches a full path or a base name.
Status ParseRankMap(std::string_view spec, std::map<std::string, int>* out);

/// Looks `path` up in a rank map by full path, then by base name.
std::optional<int> LookupRankMap(const std::map<std::string, int>& map, const std::string& path);

}  // namespace strata
