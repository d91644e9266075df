// Columnar encoding of the segment tables' rows: a table's raw block is each member column in turn,
// little-endian, fixed width. The member lists below are the stored layouts of segment_format.h
// (static_asserts keep the two in step).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "segments/segment_format.h"
#include "segments/segment_tables.h"

namespace strata::segments {

inline constexpr auto kOffCpuMembers = std::make_tuple(
    &OffCpuRow::tid, &OffCpuRow::tgid, &OffCpuRow::start_ns, &OffCpuRow::end_ns, &OffCpuRow::runq_ns, &OffCpuRow::state,
    &OffCpuRow::preempted_by, &OffCpuRow::ran_before, &OffCpuRow::waker, &OffCpuRow::cpu);
inline constexpr auto kSampleMembers =
    std::make_tuple(&SampleRow::ts_ns, &SampleRow::tid, &SampleRow::tgid, &SampleRow::cpu, &SampleRow::user_stack,
                    &SampleRow::kernel_stack);
inline constexpr auto kCallMembers =
    std::make_tuple(&CallRow::tid, &CallRow::tgid, &CallRow::probe, &CallRow::start_ns, &CallRow::end_ns);
inline constexpr auto kGcMembers =
    std::make_tuple(&GcRow::tid, &GcRow::tgid, &GcRow::start_ns, &GcRow::end_ns, &GcRow::generation, &GcRow::collected);
inline constexpr auto kCounterMembers = std::make_tuple(&CounterRow::ts_ns, &CounterRow::series, &CounterRow::value);
inline constexpr auto kPySampleMembers =
    std::make_tuple(&PySampleRow::ts_ns, &PySampleRow::tid, &PySampleRow::tgid, &PySampleRow::py_stack);
inline constexpr auto kCallEnterMembers =
    std::make_tuple(&CallEnterRow::tid, &CallEnterRow::tgid, &CallEnterRow::probe, &CallEnterRow::ts_ns,
                    &CallEnterRow::comm, &CallEnterRow::count);

namespace detail {
template <typename Row, typename T>
constexpr size_t MemberWidth(T Row::*) {
  return sizeof(T);
}
template <typename Tuple, size_t N, size_t... I>
constexpr bool WidthsMatch(const Tuple& members, const std::array<uint8_t, N>& widths, std::index_sequence<I...>) {
  return sizeof...(I) == N && ((MemberWidth(std::get<I>(members)) == widths[I]) && ...);
}
template <typename Tuple, size_t N>
constexpr bool WidthsMatch(const Tuple& members, const std::array<uint8_t, N>& widths) {
  return WidthsMatch(members, widths, std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}
}  // namespace detail

static_assert(detail::WidthsMatch(kOffCpuMembers, kOffCpuColumns));
static_assert(detail::WidthsMatch(kSampleMembers, kSampleColumns));
static_assert(detail::WidthsMatch(kCallMembers, kCallColumns));
static_assert(detail::WidthsMatch(kGcMembers, kGcColumns));
static_assert(detail::WidthsMatch(kCounterMembers, kCounterColumns));
static_assert(detail::WidthsMatch(kPySampleMembers, kPySampleColumns));
static_assert(detail::WidthsMatch(kCallEnterMembers, kCallEnterColumns));

// Appends the rows' columns to `raw` (the machine is little-endian, as the format).
template <typename Row, typename Tuple>
void EncodeColumns(const std::vector<Row>& rows, const Tuple& members, std::string* raw) {
  std::apply(
      [&](auto... member) {
        (
            [&] {
              for (const Row& row : rows) {
                const auto& value = row.*member;
                raw->append(reinterpret_cast<const char*>(&value), sizeof(value));
              }
            }(),
            ...);
      },
      members);
}

// Decodes `rows` rows from a raw block whose size the caller checked (rows × row width) and appends them.
template <typename Row, typename Tuple>
void DecodeColumns(const char* raw, size_t rows, const Tuple& members, std::vector<Row>* out) {
  const size_t first = out->size();
  out->resize(first + rows);
  size_t offset = 0;
  std::apply(
      [&](auto... member) {
        (
            [&] {
              for (size_t i = 0; i < rows; ++i) {
                auto& value = (*out)[first + i].*member;
                std::memcpy(&value, raw + offset, sizeof(value));
                offset += sizeof(value);
              }
            }(),
            ...);
      },
      members);
}

}  // namespace strata::segments
