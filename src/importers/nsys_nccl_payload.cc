// Reading NCCL's NVTX payload from an Nsight Systems export's jsonText (see nsys_nccl_payload.h).
#include "importers/nsys_nccl_payload.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <utility>

namespace strata::nsys {
namespace {

using PayloadJson = nlohmann::json;

// The first of `keys` the object has (NCCL's field name, then its NVTX schema label), or nullptr.
const PayloadJson* PayloadField(const PayloadJson& object, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys)
    if (auto it = object.find(key); it != object.end() && !it->is_null()) return &*it;
  return nullptr;
}

// An unsigned integer written as a JSON number or as text (decimal, or hexadecimal after 0x, as NCCL logs hashes).
std::optional<uint64_t> PayloadUnsigned(const PayloadJson* value) {
  if (value == nullptr) return std::nullopt;
  if (value->is_number_unsigned()) return value->get<uint64_t>();
  if (value->is_number_integer()) {
    const int64_t v = value->get<int64_t>();
    return v >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(v)) : std::nullopt;
  }
  if (!value->is_string()) return std::nullopt;
  std::string_view text = value->get_ref<const std::string&>();
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2), base = 16;
  uint64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// A count, size or sequence number: a non-negative integer that fits int64, else -1.
int64_t PayloadCount(const PayloadJson* value) {
  const std::optional<uint64_t> v = PayloadUnsigned(value);
  return v && *v <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(*v) : -1;
}

// NCCL's data types (ncclDataType_t, by name or by value 0..11) as communication.cc's byte sizes name them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kNcclTypes = {{
    {"ncclInt8", "int8"},
    {"ncclChar", "int8"},
    {"ncclUint8", "uint8"},
    {"ncclInt32", "int32"},
    {"ncclInt", "int32"},
    {"ncclUint32", "int32"},
    {"ncclInt64", "int64"},
    {"ncclUint64", "int64"},
    {"ncclFloat16", "float16"},
    {"ncclHalf", "float16"},
    {"ncclFloat32", "float32"},
    {"ncclFloat", "float32"},
    {"ncclFloat64", "float64"},
    {"ncclDouble", "float64"},
    {"ncclBfloat16", "bfloat16"},
    {"ncclFloat8e4m3", "float8e4m3fn"},
    {"ncclFloat8e5m2", "float8e5m2"},
}};
constexpr std::array<std::string_view, 12> kNcclTypeValues = {"int8",    "uint8",    "int32",        "int32",
                                                              "int64",   "int64",    "float16",      "float32",
                                                              "float64", "bfloat16", "float8e4m3fn", "float8e5m2"};

std::string PayloadDataType(const PayloadJson* value) {
  if (value == nullptr) return {};
  if (value->is_number_integer()) {
    const int64_t v = value->get<int64_t>();
    return v >= 0 && v < static_cast<int64_t>(kNcclTypeValues.size()) ? std::string(kNcclTypeValues[v]) : "";
  }
  if (!value->is_string()) return {};
  const std::string& name = value->get_ref<const std::string&>();
  for (const auto& [nccl, ours] : kNcclTypes)
    if (name == nccl) return std::string(ours);
  return name;  // a name strata may know as it is ("float32")
}

std::string PayloadText(const PayloadJson* value) {
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace

std::optional<NcclPayload> ParseNcclPayload(std::string_view json_text) {
  const PayloadJson object =
      PayloadJson::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return std::nullopt;
  NcclPayload p;
  p.comm = PayloadUnsigned(PayloadField(object, {"commHash", "NCCL communicator ID", "comm"}));
  p.seq = PayloadCount(PayloadField(object, {"seqNumber", "Sequence number", "seq"}));
  p.op = PayloadText(PayloadField(object, {"func", "Collective"}));
  p.count = PayloadCount(PayloadField(object, {"count", "Count"}));
  p.dtype = PayloadDataType(PayloadField(object, {"datatype", "Datatype"}));
  p.bytes = PayloadCount(PayloadField(object, {"Message size [bytes]", "bytes", "msgSize"}));
  if (!p.comm && p.seq < 0 && p.op.empty() && p.count < 0 && p.bytes < 0) return std::nullopt;
  return p;
}

std::string CommunicatorGroupName(uint64_t comm) { return fmt::format("nccl comm {:#x}", comm); }

}  // namespace strata::nsys
