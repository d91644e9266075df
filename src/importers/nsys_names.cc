// Naming of Nsight Systems rows after Kineto's names (see nsys_names.h).
#include "importers/nsys_names.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <optional>
#include <utility>

#include "core/decimal.h"
#include "store/slice_names.h"

namespace strata::nsys {
namespace {

// ENUM_CUDA_MEMCPY_OPER ids 0..13 as Kineto abbreviates them (the unified-memory kinds as their plain kind).
constexpr std::array<std::string_view, 14> kCopyKinds = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                                         "DtoA",    "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD"};
// ENUM_CUDA_MEM_KIND ids 0..7.
constexpr std::array<std::string_view, 8> kMemKinds = {"Pageable", "Pinned",        "Device",         "Array",
                                                       "Managed",  "Device Static", "Managed Static", "Unknown"};

template <size_t N>
std::string_view KindName(const std::array<std::string_view, N>& names, int64_t id) {
  return id >= 0 && static_cast<size_t>(id) < N ? names[static_cast<size_t>(id)] : std::string_view("Unknown");
}

// NCCL's API functions that are collective or point-to-point calls, and the op Kineto's CPU-side name gives.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kNcclCalls = {{
    {"ncclAllReduce", "all_reduce"},
    {"ncclAllGather", "all_gather"},
    {"ncclReduceScatter", "reduce_scatter"},
    {"ncclBroadcast", "broadcast"},
    {"ncclBcast", "broadcast"},
    {"ncclReduce", "reduce"},
    {"ncclSend", "send"},
    {"ncclRecv", "recv"},
    {"ncclAlltoAll", "all_to_all"},
    {"ncclAllToAll", "all_to_all"},  // as NCCL's payloads spell the function ("AllToAll")
}};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// N of a step range: a step word, separators (space, '_', '#', ':', '-'), then only digits.
std::optional<int64_t> StepNumber(std::string_view text) {
  const std::string lower = Lower(text);
  for (std::string_view word : {"profilerstep", "train_step", "training_step", "step", "iteration", "iter"}) {
    if (!std::string_view(lower).starts_with(word)) continue;
    size_t i = word.size();
    while (i < lower.size() &&
           (lower[i] == ' ' || lower[i] == '_' || lower[i] == '#' || lower[i] == ':' || lower[i] == '-'))
      ++i;
    int64_t n = 0;
    if (i < lower.size() && ParseInt64(std::string_view(lower).substr(i), &n) == NumberParse::kOk && n >= 0 &&
        std::isdigit(static_cast<unsigned char>(lower[i])))
      return n;
    return std::nullopt;
  }
  return std::nullopt;
}

// The op of an emit_nvtx range, "aten::add, op_id = 12, sizes = [[2]]" -> "aten::add"; nullopt when the text
// has none of its suffixes.
std::optional<std::string_view> EmitNvtxOp(std::string_view text) {
  for (size_t comma = text.find(", "); comma != std::string_view::npos; comma = text.find(", ", comma + 2)) {
    const std::string_view rest = text.substr(comma + 2);
    if (rest.starts_with("op_id = ") || rest.starts_with("seq = ") || rest.starts_with("sizes = "))
      return text.substr(0, comma);
  }
  return std::nullopt;
}

}  // namespace

std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind) {
  return fmt::format("Memcpy {} ({} -> {})", KindName(kCopyKinds, copy_kind), KindName(kMemKinds, src_kind),
                     KindName(kMemKinds, dst_kind));
}

std::string MemsetName(int64_t mem_kind) { return fmt::format("Memset ({})", KindName(kMemKinds, mem_kind)); }

std::string_view RuntimeName(std::string_view nsys_name) {
  const size_t v = nsys_name.rfind("_v");
  if (v == std::string_view::npos || v == 0 || v + 2 == nsys_name.size()) return nsys_name;
  for (size_t i = v + 2; i < nsys_name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(nsys_name[i]))) return nsys_name;
  return nsys_name.substr(0, v);
}

NvtxRange NvtxRangeName(std::string_view text) {
  for (const auto& [call, op] : kNcclCalls)
    if (text == call) return {fmt::format("nccl:{}", op), "cpu_op"};
  if (auto op = EmitNvtxOp(text)) return {std::string(*op), "cpu_op"};
  if (auto n = StepNumber(text)) return {fmt::format("{}{}", kProfilerStepPrefix, *n), "user_annotation"};
  return {std::string(text), "user_annotation"};
}

}  // namespace strata::nsys
