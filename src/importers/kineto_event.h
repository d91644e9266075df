// One Kineto / Chrome-trace event read from JSON (simdjson On-Demand) into a RawEvent: the fields the importer
// uses, as views into the parser's buffers, before any validation (kineto_store_builder.h validates them and
// appends them to the store). The hot loop of the importer: keys are matched by length and bytes, values kept as
// raw tokens, and a field's value is read by reference (see ReadKinetoEvent).
// Invariants: a RawEvent's views live as long as the parser's current document; ReadKinetoEvent resets the
// event before reading, so nothing of the previous event survives.
#pragma once

#include <simdjson.h>

#include <string_view>
#include <utility>
#include <vector>

#include "store/trace_store.h"

namespace strata::kineto {

/// One event's fields as read from JSON, before validation. Views point into the parser's buffers.
struct RawEvent {
  std::string_view ph, name, cat, ts, dur, id, bp;
  bool has_name = false, has_cat = false, id_is_string = false;
  bool pid_is_string = false, tid_is_string = false;
  std::string_view pid_text, tid_text;  // raw token (number) or unescaped text (string)
  int64_t stream = -1, correlation = kNoCorrelation;
  double memory_bandwidth_gbps = -1;  // args["memory bandwidth (GB/s)"]; -1 when absent or not a number
  std::string_view meta_name;         // args.name of ph M events
  CollectiveArgs coll;
  std::string_view coll_name, group, group_desc, group_ranks, dtype;
  bool has_coll = false;
  std::vector<std::pair<std::string_view, double>> counter_values;
};

/// Reads the event `value` into *ev. *is_object is false (and *ev untouched) when the value is not a JSON
/// object; an error code when its JSON is malformed (the caller counts it as invalid_json).
simdjson::error_code ReadKinetoEvent(simdjson::ondemand::value& value, RawEvent* ev, bool* is_object);

}  // namespace strata::kineto
