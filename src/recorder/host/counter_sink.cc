// Series table, diagnostics and sink of the host-counter readers (see counter_sink.h).
#include "recorder/host/counter_sink.h"

#include <cstring>

namespace strata::recorder {

uint32_t SeriesTable::Intern(const SeriesKey& key) {
  scratch_.clear();
  scratch_.append(key.name);
  scratch_.push_back('\0');
  scratch_.append(reinterpret_cast<const char*>(&key.pid), sizeof(key.pid));
  scratch_.append(reinterpret_cast<const char*>(&key.index), sizeof(key.index));
  scratch_.append(key.label);
  const auto it = ids_.find(scratch_);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(series_.size());
  series_.push_back(CounterSeries{std::string(key.name), key.pid, key.index, std::string(key.label),
                                  std::string(key.unit), key.cumulative});
  last_.emplace_back();
  ids_.emplace(scratch_, id);
  return id;
}

double SeriesTable::Monotonic(uint32_t id, double raw, uint64_t* resets) {
  Last& last = last_[id];
  if (!last.valid) {
    last = Last{raw, raw, true};
  } else if (raw >= last.raw) {
    last.emitted += raw - last.raw;
    last.raw = raw;
  } else {
    ++*resets;
    last.raw = raw;
  }
  return last.emitted;
}

void Diagnostics::WarnOnce(std::string_view key, std::string message) {
  if (warned_.emplace(key).second) pending_.push_back(std::move(message));
}

std::vector<std::string> Diagnostics::Take() {
  std::vector<std::string> out;
  out.swap(pending_);
  return out;
}

void CounterSink::Emit(const SeriesKey& key, double value) {
  const uint32_t id = table_->Intern(key);
  if (table_->series()[id].cumulative) value = table_->Monotonic(id, value, &diag_->stats.counter_resets);
  out_->push_back(CounterSample{ts_ns_, id, value});
}

bool CounterSink::Read(FileReader* file, const std::string& path, bool warn_if_missing) {
  const ReadResult result = file->Read(path);
  if (result == ReadResult::kOk) return true;
  if (result == ReadResult::kMissing) {
    ++diag_->stats.files_missing;
    if (warn_if_missing) diag_->WarnOnce("missing:" + path, "host counters: " + path + " is missing; skipped");
  } else {
    ++diag_->stats.files_unreadable;
    diag_->WarnOnce("unreadable:" + path,
                    "host counters: cannot read " + path + ": " + std::strerror(file->error()) + "; skipped");
  }
  return false;
}

void CounterSink::Malformed(std::string_view where, std::string_view what) {
  ++diag_->stats.malformed;
  diag_->WarnOnce("malformed:" + std::string(where),
                  "host counters: malformed " + std::string(where) + " (" + std::string(what) + "); skipped");
}

}  // namespace strata::recorder
