// libFuzzer target for the bounded pickle reader (importers/pickle_reader). The input is a pickle's bytes.
// Never crashes, hangs or exceeds its limits; every error starts "pickle: byte offset N"; what it reads is a
// tree within the limits (depth, values, string bytes), its str values are UTF-8 (surrogates let through) and
// its dict keys are scalars; and it round-trips: the value written back as a pickle (protocol 2 and 3
// opcodes) reads again as the same value.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "importers/pickle_reader.h"
#include "importers/pickle_text.h"

namespace {

using strata::PickleValue;
using Kind = PickleValue::Kind;

strata::PickleLimits FuzzLimits() {
  strata::PickleLimits limits;
  limits.max_depth = 64;
  limits.max_items = 200000;
  limits.max_string_bytes = 1 << 16;
  limits.max_total_string_bytes = 1 << 22;
  return limits;
}

struct Tally {
  size_t items = 0;
  size_t string_bytes = 0;
};

void Check(const PickleValue& v, size_t depth, const strata::PickleLimits& limits, Tally* tally) {
  ++tally->items;
  switch (v.kind()) {
    case Kind::kString:
      FUZZ_CHECK(strata::pickle_text::FindInvalidUtf8(v.as_string()) == std::string_view::npos);
      [[fallthrough]];
    case Kind::kBytes:
      FUZZ_CHECK(v.as_string().size() <= limits.max_string_bytes);
      tally->string_bytes += v.as_string().size();
      return;
    case Kind::kList:
    case Kind::kTuple:
      FUZZ_CHECK(depth + 1 <= limits.max_depth);
      for (const PickleValue& item : v.items()) Check(item, depth + 1, limits, tally);
      return;
    case Kind::kDict:
      FUZZ_CHECK(depth + 1 <= limits.max_depth);
      for (const auto& [key, value] : v.entries()) {
        FUZZ_CHECK(key.is_scalar());
        Check(key, depth + 1, limits, tally);
        Check(value, depth + 1, limits, tally);
      }
      return;
    default:
      return;
  }
}

std::string Le(uint64_t value, size_t width) {
  std::string out;
  for (size_t i = 0; i < width; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

void Write(const PickleValue& v, std::string* out) {
  switch (v.kind()) {
    case Kind::kNone:
      *out += 'N';
      return;
    case Kind::kBool:
      *out += v.as_bool() ? '\x88' : '\x89';
      return;
    case Kind::kInt:
      *out += "\x8a\x08" + Le(static_cast<uint64_t>(v.as_int()), 8);
      return;
    case Kind::kFloat: {
      uint64_t bits = 0;
      const double d = v.as_float();
      std::memcpy(&bits, &d, sizeof bits);
      *out += 'G';
      for (int i = 7; i >= 0; --i) *out += static_cast<char>((bits >> (8 * i)) & 0xff);
      return;
    }
    case Kind::kString:
    case Kind::kBytes:
      *out += (v.kind() == Kind::kString ? "X" : "B") + Le(v.as_string().size(), 4) + v.as_string();
      return;
    case Kind::kList:
    case Kind::kTuple:
      *out += v.kind() == Kind::kList ? "](" : "(";
      for (const PickleValue& item : v.items()) Write(item, out);
      *out += v.kind() == Kind::kList ? 'e' : 't';
      return;
    case Kind::kDict:
      *out += "}(";
      for (const auto& [key, value] : v.entries()) {
        Write(key, out);
        Write(value, out);
      }
      *out += 'u';
      return;
  }
}

/// Equality with floats compared by their bits (NaN equals the same NaN).
bool Same(const PickleValue& a, const PickleValue& b) {
  if (a.kind() != b.kind()) return false;
  if (a.kind() == Kind::kFloat) {
    const double x = a.as_float(), y = b.as_float();
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  if (a.kind() == Kind::kDict) {
    if (a.entries().size() != b.entries().size()) return false;
    for (size_t i = 0; i < a.entries().size(); ++i) {
      if (!Same(a.entries()[i].first, b.entries()[i].first) || !Same(a.entries()[i].second, b.entries()[i].second))
        return false;
    }
    return true;
  }
  if (a.kind() == Kind::kList || a.kind() == Kind::kTuple) {
    if (a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i) {
      if (!Same(a.items()[i], b.items()[i])) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const strata::PickleLimits limits = FuzzLimits();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto r = strata::ParsePickle(input, limits);
  if (!r.ok()) {
    FUZZ_CHECK(r.error().rfind("pickle: byte offset ", 0) == 0);
    return 0;
  }
  Tally tally;
  Check(r.value(), 0, limits, &tally);
  FUZZ_CHECK(tally.items <= limits.max_items);
  FUZZ_CHECK(tally.string_bytes <= limits.max_total_string_bytes);
  std::string again = "\x80\x02";
  Write(r.value(), &again);
  again += '.';
  auto back = strata::ParsePickle(again, limits);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(Same(back.value(), r.value()));
  return 0;
}
