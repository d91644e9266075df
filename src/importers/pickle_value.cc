// PickleValue's constructors, dict lookup and equality (see pickle_value.h).
#include "importers/pickle_value.h"

namespace strata {

PickleValue PickleValue::Bool(bool value) {
  PickleValue v;
  v.kind_ = Kind::kBool;
  v.int_ = value ? 1 : 0;
  return v;
}

PickleValue PickleValue::Int(int64_t value) {
  PickleValue v;
  v.kind_ = Kind::kInt;
  v.int_ = value;
  return v;
}

PickleValue PickleValue::Float(double value) {
  PickleValue v;
  v.kind_ = Kind::kFloat;
  v.float_ = value;
  return v;
}

PickleValue PickleValue::String(std::string utf8) {
  PickleValue v;
  v.kind_ = Kind::kString;
  v.text_ = std::move(utf8);
  return v;
}

PickleValue PickleValue::Bytes(std::string bytes) {
  PickleValue v;
  v.kind_ = Kind::kBytes;
  v.text_ = std::move(bytes);
  return v;
}

PickleValue PickleValue::List(Items items) {
  PickleValue v;
  v.kind_ = Kind::kList;
  v.items_ = std::move(items);
  return v;
}

PickleValue PickleValue::Tuple(Items items) {
  PickleValue v;
  v.kind_ = Kind::kTuple;
  v.items_ = std::move(items);
  return v;
}

PickleValue PickleValue::Dict(Entries entries) {
  PickleValue v;
  v.kind_ = Kind::kDict;
  v.entries_ = std::move(entries);
  return v;
}

const PickleValue* PickleValue::Find(std::string_view key) const {
  for (const auto& [k, value] : entries_) {
    if (k.kind_ == Kind::kString && k.text_ == key) return &value;
  }
  return nullptr;
}

const char* PickleValue::KindName(Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "list";
    case Kind::kTuple:
      return "tuple";
    case Kind::kDict:
      return "dict";
  }
  return "?";
}

bool operator==(const PickleValue& a, const PickleValue& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case PickleValue::Kind::kNone:
      return true;
    case PickleValue::Kind::kBool:
    case PickleValue::Kind::kInt:
      return a.int_ == b.int_;
    case PickleValue::Kind::kFloat:
      return a.float_ == b.float_;
    case PickleValue::Kind::kString:
    case PickleValue::Kind::kBytes:
      return a.text_ == b.text_;
    case PickleValue::Kind::kList:
    case PickleValue::Kind::kTuple:
      return a.items_ == b.items_;
    case PickleValue::Kind::kDict:
      return a.entries_ == b.entries_;
  }
  return false;
}

}  // namespace strata
