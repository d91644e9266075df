// Options shared by all importers.
#pragma once

#include <cmath>
#include <cstddef>
#include <map>
#include <string>

namespace strata {

/// An op table's time unit (--time-unit-ns, the module's time_unit_ns): a power of ten from 1 ns to 1e9 (s).
inline bool IsOpTableTimeUnit(double ns) {
  const double exponent = std::log10(ns);
  return std::isfinite(ns) && ns >= 1 && ns <= 1e9 && std::fabs(exponent - std::round(exponent)) <= 1e-9;
}

struct ImportOptions {
  size_t batch_bytes = 1 << 20;  // events parsed per batch (bounds memory for huge files)
  bool pipeline = false;         // read+split and parse a file on two threads (when cores are idle)
  // Column names of op-table CSVs, for timer logs whose headers differ from the defaults.
  struct OpTableColumns {
    std::string rank = "rank";
    std::string step = "step";
    std::string op = "optype";
    std::string start = "start_ts";
    std::string duration = "duration";
    std::string dp_rank = "dp_rank";
    std::string stage = "stage";
    std::string tp_rank = "tp_rank";
    std::string seq_id = "seq_id";
    std::string microbatch = "mb_id";
    std::string chunk = "mc";
    double time_unit_ns = 1e9;  // seconds
    // --op-map: op type names of the table -> the names the what-if knows ("fwd" -> "forward-compute"),
    // applied as rows are read, so every pass sees the mapped name.
    std::map<std::string, std::string, std::less<>> op_map;
  } op_table;
};

}  // namespace strata
