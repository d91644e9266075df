// PickleValue: the tree that importers/pickle_reader decodes a Python pickle into -- None, bool, int (64-bit),
// float (double), str (UTF-8), bytes, list, tuple and dict, and nothing else (no objects, no sets).
// Invariants: a value is a tree (no sharing, no cycles: the reader expands shared references into copies);
// a dict keeps its entries in the order the pickle inserted them, its keys are scalars (never a list, tuple
// or dict) and no two keys are equal as Python compares them (the reader keeps the first key and the last
// value, as Python's dict does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

/// One decoded pickle value. Accessors of another kind return an empty or zero value: callers check kind().
class PickleValue {
 public:
  enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kString, kBytes, kList, kTuple, kDict };
  using Items = std::vector<PickleValue>;
  using Entries = std::vector<std::pair<PickleValue, PickleValue>>;

  PickleValue() = default;  // None
  static PickleValue Bool(bool value);
  static PickleValue Int(int64_t value);
  static PickleValue Float(double value);
  static PickleValue String(std::string utf8);
  static PickleValue Bytes(std::string bytes);
  static PickleValue List(Items items = {});
  static PickleValue Tuple(Items items = {});
  static PickleValue Dict(Entries entries = {});

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_scalar() const { return kind_ < Kind::kList; }
  /// The bool's value, or an int's value != 0.
  bool as_bool() const { return int_ != 0; }
  /// The int's value (a bool: 0 or 1).
  int64_t as_int() const { return int_; }
  double as_float() const { return float_; }
  /// A str's UTF-8 bytes or a bytes value's bytes.
  const std::string& as_string() const { return text_; }
  /// A list's or a tuple's items.
  const Items& items() const { return items_; }
  Items& mutable_items() { return items_; }
  /// A dict's entries, in insertion order.
  const Entries& entries() const { return entries_; }
  Entries& mutable_entries() { return entries_; }

  /// The value of a dict's str key, or nullptr (not a dict, or no such key).
  const PickleValue* Find(std::string_view key) const;

  /// Python's name of a kind: "NoneType", "bool", "int", "float", "str", "bytes", "list", "tuple", "dict".
  static const char* KindName(Kind kind);

  /// Structural equality: same kind and value all the way down (floats by ==, so NaN differs from itself).
  friend bool operator==(const PickleValue& a, const PickleValue& b);
  friend bool operator!=(const PickleValue& a, const PickleValue& b) { return !(a == b); }

 private:
  Kind kind_ = Kind::kNone;
  int64_t int_ = 0;
  double float_ = 0;
  std::string text_;
  Items items_;
  Entries entries_;
};

}  // namespace strata
