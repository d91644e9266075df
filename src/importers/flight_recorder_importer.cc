// ImportFlightRecorder (see flight_recorder_importer.h).
#include "importers/flight_recorder_importer.h"

#include <fmt/format.h>

#include <string>

#include "importers/flight_recorder_decoder.h"

namespace strata {

bool LooksLikeFlightRecorderDump(std::string_view head) {
  return LooksLikeFlightRecorderPickle(head) || LooksLikeFlightRecorderJson(head);
}

Expected<TraceStore> ImportFlightRecorder(ByteSource& source, const PickleLimits& limits) {
  std::string content;
  constexpr size_t kChunk = size_t{1} << 20;
  for (;;) {
    const size_t old = content.size();
    content.resize(old + kChunk);
    auto got = source.Read(content.data() + old, kChunk);
    if (!got.ok()) return got.status();
    content.resize(old + got.value());
    if (got.value() == 0) break;
    if (content.size() > limits.max_input_bytes)
      return Status::Resource(
          fmt::format("{}: Flight Recorder dump larger than {} bytes", source.path(), limits.max_input_bytes));
  }
  auto dump = DecodeFlightRecorderDump(content, source.path(), limits);
  if (!dump.ok()) return dump.status();
  TraceStore store;
  InputInfo in;
  in.path = source.path();
  in.format = InputFormat::kFlightRecorder;
  in.events = dump.value().entries.size();
  store.inputs.push_back(std::move(in));
  store.flight_recorder.dumps.push_back(std::move(dump).value());
  return store;
}

}  // namespace strata
