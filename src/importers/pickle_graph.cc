// Expansion of a pickle's value graph into a PickleValue tree (see pickle_graph.h): depth first from the
// root, every reference copied, each copy counted against the limits; a node met again on the path from the
// root is a container inside itself.
#include "importers/pickle_graph.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace strata {
namespace {

using Kind = PickleValue::Kind;

/// What makes two dict keys equal in Python, as a string; nullopt for NaN (equal to nothing). bool, int and
/// integral floats compare as numbers (1 == 1.0 == True), str and bytes never equal each other.
std::optional<std::string> KeyIdentity(const PickleValue& key) {
  switch (key.kind()) {
    case Kind::kNone:
      return std::string("n");
    case Kind::kBool:
    case Kind::kInt:
      return "i" + std::to_string(key.as_int());
    case Kind::kFloat: {
      const double d = key.as_float();
      if (std::isnan(d)) return std::nullopt;
      if (d == std::trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        return "i" + std::to_string(static_cast<int64_t>(d));
      }
      uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      return "f" + std::to_string(bits);
    }
    case Kind::kString:
      return "s" + key.as_string();
    case Kind::kBytes:
      return "b" + key.as_string();
    default:
      return std::nullopt;  // not reached: the machine admits scalar keys only
  }
}

/// One expansion: budgets spent so far and the containers on the path from the root.
class Expander {
 public:
  Expander(const std::vector<PickleNode>& nodes, const PickleLimits& limits)
      : nodes_(nodes), limits_(limits), on_path_(nodes.size(), 0) {}

  Status Expand(uint32_t index, size_t depth, PickleValue* out) {
    const PickleNode& node = nodes_[index];
    if (++items_ > limits_.max_items) {
      return Fail(node, fmt::format("more than {} values in all (PickleLimits::max_items; each copy of a shared "
                                    "value counts)",
                                    limits_.max_items));
    }
    if (node.kind < Kind::kList) return Scalar(node, out);
    if (on_path_[index]) {
      return Fail(node, "contains itself (a recursive structure; strata reads trees only)");
    }
    if (depth + 1 > limits_.max_depth) {
      return Fail(node, fmt::format("nests deeper than {} containers (PickleLimits::max_depth)", limits_.max_depth));
    }
    on_path_[index] = 1;
    Status st = node.kind == Kind::kDict ? Dict(node, depth + 1, out) : Sequence(node, depth + 1, out);
    on_path_[index] = 0;
    return st;
  }

 private:
  Status Fail(const PickleNode& node, const std::string& why) const {
    return Status::BadInput(fmt::format("pickle: byte offset {}: the {} created here {}", node.offset,
                                        PickleValue::KindName(node.kind), why),
                            ErrorPlace::AtOffset("", node.offset));
  }

  Status Scalar(const PickleNode& node, PickleValue* out) {
    switch (node.kind) {
      case Kind::kBool:
        *out = PickleValue::Bool(node.int_value != 0);
        return Status::Ok();
      case Kind::kInt:
        *out = PickleValue::Int(node.int_value);
        return Status::Ok();
      case Kind::kFloat:
        *out = PickleValue::Float(node.float_value);
        return Status::Ok();
      case Kind::kString:
      case Kind::kBytes:
        string_bytes_ += node.text.size();
        if (string_bytes_ > limits_.max_total_string_bytes) {
          return Fail(node, fmt::format("brings the str and bytes values over {} bytes in all "
                                        "(PickleLimits::max_total_string_bytes; each copy counts)",
                                        limits_.max_total_string_bytes));
        }
        *out = node.kind == Kind::kString ? PickleValue::String(node.text) : PickleValue::Bytes(node.text);
        return Status::Ok();
      default:
        *out = PickleValue();
        return Status::Ok();
    }
  }

  Status Sequence(const PickleNode& node, size_t depth, PickleValue* out) {
    PickleValue::Items items(node.children.size());
    for (size_t i = 0; i < items.size(); ++i) {
      if (Status st = Expand(node.children[i], depth, &items[i]); !st.ok()) return st;
    }
    *out = node.kind == Kind::kList ? PickleValue::List(std::move(items)) : PickleValue::Tuple(std::move(items));
    return Status::Ok();
  }

  // Python's dict: a repeated key keeps its first position and key, and takes the last value.
  Status Dict(const PickleNode& node, size_t depth, PickleValue* out) {
    PickleValue::Entries entries;
    entries.reserve(node.children.size() / 2);
    std::unordered_map<std::string, size_t> position;
    for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
      PickleValue key, value;
      if (Status st = Expand(node.children[i], depth, &key); !st.ok()) return st;
      if (!key.is_scalar()) return Fail(nodes_[node.children[i]], "is a dict key; strata reads scalar keys only");
      if (Status st = Expand(node.children[i + 1], depth, &value); !st.ok()) return st;
      const std::optional<std::string> identity = KeyIdentity(key);
      if (identity) {
        const auto [it, fresh] = position.emplace(*identity, entries.size());
        if (!fresh) {
          entries[it->second].second = std::move(value);
          continue;
        }
      }
      entries.emplace_back(std::move(key), std::move(value));
    }
    *out = PickleValue::Dict(std::move(entries));
    return Status::Ok();
  }

  const std::vector<PickleNode>& nodes_;
  const PickleLimits& limits_;
  std::vector<uint8_t> on_path_;
  size_t items_ = 0;
  size_t string_bytes_ = 0;
};

}  // namespace

Expected<PickleValue> ExpandPickleGraph(const std::vector<PickleNode>& nodes, uint32_t root,
                                        const PickleLimits& limits) {
  Expander expander(nodes, limits);
  PickleValue out;
  if (Status st = expander.Expand(root, 0, &out); !st.ok()) return st;
  return out;
}

}  // namespace strata
