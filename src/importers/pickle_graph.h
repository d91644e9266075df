// PickleGraph: the values a pickle's opcodes create, as the unpickling machine (importers/pickle_reader.cc)
// builds them, and their expansion into the PickleValue tree the reader returns.
// Why a graph first: a pickle may store a container in its memo before filling it (Python's pickler puts a
// list in the memo, then appends to it) and push it again later (GET), so the machine needs one mutable node
// that every reference sees; only once the pickle is complete is it expanded into a tree, each reference
// into a copy.
// Invariants: child indices name nodes of the same graph (nodes are never removed; a child may be created
// after its container, or be the container itself); a dict node's children alternate key, value and its keys
// are scalar nodes; the expansion is bounded by PickleLimits (depth, values,
// string bytes, each copy counted) and refuses a container that contains itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "importers/pickle_reader.h"
#include "importers/pickle_value.h"

namespace strata {

/// One value a pickle created: a scalar, or a container whose children are node indices.
struct PickleNode {
  PickleValue::Kind kind = PickleValue::Kind::kNone;
  int64_t int_value = 0;  // bool and int
  double float_value = 0;
  std::string text;                // str (UTF-8) and bytes
  std::vector<uint32_t> children;  // list and tuple items; dict: key, value, key, value, ...
  size_t offset = 0;               // byte offset of the opcode that created it
};

/// Expands node `root` of `nodes` into a tree within `limits`. Errors name the container's byte offset:
/// nesting beyond max_depth, a container inside itself, more values or string bytes than allowed.
Expected<PickleValue> ExpandPickleGraph(const std::vector<PickleNode>& nodes, uint32_t root,
                                        const PickleLimits& limits);

}  // namespace strata
