// The recorder's segment file format (documented in docs/segment-format.md): an append-only file of
// independently compressed, checksummed blocks, each holding rows of one table in columnar order.
// Invariants: every block is self-describing (table, rows, sizes, checksum), so a reader can use every
// block that was completely written before a crash and stop cleanly at a torn one; table layouts are
// fixed per format version (adding a table or a trailing column is a new version).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::segments {

inline constexpr std::string_view kFileMagic = "STRATSEG";  // 8 bytes at offset 0
// 2 added the call_enter table (version-1 files read as before, without it).
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kBlockMagic = 0x4B4C4253;  // "SBLK" little-endian
inline constexpr std::string_view kFileSuffix = ".sseg";

// File header (little-endian, 32 bytes): magic[8], u32 version, u32 header_size,
// i64 created_unix_ns (wall clock at start), i64 realtime_minus_monotonic_ns (to place the CLOCK_MONOTONIC
// times of all tables on the wall clock).
struct FileHeader {
  uint32_t version = kFormatVersion;
  int64_t created_unix_ns = 0;
  int64_t realtime_minus_monotonic_ns = 0;
};
inline constexpr size_t kFileHeaderSize = 32;

// Block header (little-endian, 24 bytes), followed by `compressed_size` bytes of zstd data which
// decompress to `raw_size` bytes: u32 magic, u16 table, u16 reserved, u32 rows, u32 raw_size,
// u32 compressed_size, u32 crc32 of the compressed bytes.
inline constexpr size_t kBlockHeaderSize = 24;
inline constexpr uint32_t kMaxBlockRawSize = 64u << 20;

enum class Table : uint16_t {
  kMeta = 1,    // variable rows: u32 length + UTF-8 JSON object (processes, probes, series, stacks, stats)
  kOffCpu = 2,  // fixed columns, see kOffCpuColumns
  kSample = 3,
  kCall = 4,
  kGc = 5,
  kCounter = 6,
  kPySample = 7,   // the Python frames of a CPU stack sample (same ts_ns and tid as its `sample` row)
  kCallEnter = 8,  // a probed collective call entered (its `call` row, same tid/probe/start, when it returns)
};

// Column widths (bytes) of the fixed-layout tables, in stored order. Raw block = column 0 for all rows,
// then column 1 for all rows, ...
// off_cpu: tid u32, tgid u32, start_ns u64, end_ns u64, runq_ns u64, state u32, preempted_by u32,
//          ran_before u32, waker u32, cpu u32
inline constexpr std::array<uint8_t, 10> kOffCpuColumns = {4, 4, 8, 8, 8, 4, 4, 4, 4, 4};
// sample: ts_ns u64, tid u32, tgid u32, cpu u32, user_stack i32, kernel_stack i32
inline constexpr std::array<uint8_t, 6> kSampleColumns = {8, 4, 4, 4, 4, 4};
// call: tid u32, tgid u32, probe u32, start_ns u64, end_ns u64
inline constexpr std::array<uint8_t, 5> kCallColumns = {4, 4, 4, 8, 8};
// gc: tid u32, tgid u32, start_ns u64, end_ns u64, generation i32, collected i64
inline constexpr std::array<uint8_t, 6> kGcColumns = {4, 4, 8, 8, 4, 8};
// counter: ts_ns u64, series u32, value f64
inline constexpr std::array<uint8_t, 3> kCounterColumns = {8, 4, 8};
// py_sample: ts_ns u64, tid u32, tgid u32, py_stack i32
inline constexpr std::array<uint8_t, 4> kPySampleColumns = {8, 4, 4, 4};
// call_enter: tid u32, tgid u32, probe u32, ts_ns u64, comm u64, count u64. comm names the call's
// communicator: within the process for the recorder's probes (the first argument, a c10d process group's
// `this`), across ranks for the NCCL plugin (NCCL's commHash); count: elements, 0 when not known.
inline constexpr std::array<uint8_t, 6> kCallEnterColumns = {4, 4, 4, 8, 8, 8};

// Bytes per row of a fixed-layout table (0 for kMeta, which has variable rows).
size_t RowWidth(Table table);
std::string_view TableName(Table table);

}  // namespace strata::segments
