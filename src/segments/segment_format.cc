// Row widths and names of the segment tables.
#include "segments/segment_format.h"

#include <numeric>

namespace strata::segments {
namespace {
template <size_t N>
size_t Sum(const std::array<uint8_t, N>& widths) {
  return std::accumulate(widths.begin(), widths.end(), size_t{0});
}
}  // namespace

size_t RowWidth(Table table) {
  switch (table) {
    case Table::kMeta:
      return 0;
    case Table::kOffCpu:
      return Sum(kOffCpuColumns);
    case Table::kSample:
      return Sum(kSampleColumns);
    case Table::kCall:
      return Sum(kCallColumns);
    case Table::kGc:
      return Sum(kGcColumns);
    case Table::kCounter:
      return Sum(kCounterColumns);
    case Table::kPySample:
      return Sum(kPySampleColumns);
    case Table::kCallEnter:
      return Sum(kCallEnterColumns);
  }
  return 0;
}

std::string_view TableName(Table table) {
  switch (table) {
    case Table::kMeta:
      return "meta";
    case Table::kOffCpu:
      return "off_cpu";
    case Table::kSample:
      return "sample";
    case Table::kCall:
      return "call";
    case Table::kGc:
      return "gc";
    case Table::kCounter:
      return "counter";
    case Table::kPySample:
      return "py_sample";
    case Table::kCallEnter:
      return "call_enter";
  }
  return "unknown";
}

}  // namespace strata::segments
