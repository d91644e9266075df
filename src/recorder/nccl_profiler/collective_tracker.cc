// CollectiveTracker implementation: reference-counted events (the collective holds one reference for
// itself and one per open channel).
#include "recorder/nccl_profiler/collective_tracker.h"

#include <algorithm>
#include <cctype>

namespace strata::nccl_profiler {

std::string SnakeCaseOp(std::string_view func) {
  std::string out;
  for (char c : func) {
    if (!std::isalnum(static_cast<unsigned char>(c))) continue;
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (!out.empty()) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out.empty() ? std::string("unknown") : out;
}

struct CollectiveTracker::Event {
  static constexpr uint32_t kCollMagic = 0x434f4c4c, kChanMagic = 0x4348414e;
  uint32_t magic = 0;
  // Collective
  CompletedCollective record;
  int refs = 0;
  // Channel
  Event* parent = nullptr;
  uint64_t start_ns = 0;
  bool stopped = false;
};

void* CollectiveTracker::StartCollective(std::string_view func, uint64_t seq, uint64_t count, uint32_t tid,
                                         uint64_t host_ns, bool device_clock) {
  auto* e = new Event();
  e->magic = Event::kCollMagic;
  e->record.op = SnakeCaseOp(func);
  e->record.seq = seq;
  e->record.count = count;
  e->record.tid = tid;
  e->record.host_start_ns = host_ns;
  e->record.device_clock = device_clock;
  e->refs = 1;
  return e;
}

void* CollectiveTracker::StartChannel(void* parent, uint64_t start_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto* coll = static_cast<Event*>(parent);
  if (coll == nullptr || coll->magic != Event::kCollMagic) {
    ++stats_.orphan_channels;
    return nullptr;
  }
  auto* ch = new Event();
  ch->magic = Event::kChanMagic;
  ch->parent = coll;
  ch->start_ns = start_ns;
  ++coll->refs;
  if (start_ns != 0 && (coll->record.start_ns == 0 || start_ns < coll->record.start_ns))
    coll->record.start_ns = start_ns;
  return ch;
}

void CollectiveTracker::ChannelStopped(void* channel, uint64_t stop_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto* ch = static_cast<Event*>(channel);
  if (ch == nullptr || ch->magic != Event::kChanMagic || stop_ns == 0) return;
  ch->stopped = true;
  CompletedCollective& r = ch->parent->record;
  r.end_ns = std::max(r.end_ns, stop_ns);
}

void CollectiveTracker::Stop(void* handle, uint64_t host_stop_ns) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto* e = static_cast<Event*>(handle);
  if (e == nullptr) return;
  if (e->magic == Event::kChanMagic) {
    Event* coll = e->parent;
    if (!e->stopped && host_stop_ns != 0) coll->record.end_ns = std::max(coll->record.end_ns, host_stop_ns);
    e->magic = 0;
    delete e;
    ReleaseLocked(coll, lock);
  } else if (e->magic == Event::kCollMagic) {
    ReleaseLocked(e, lock);
  }
}

void CollectiveTracker::ReleaseLocked(Event* coll, std::unique_lock<std::mutex>& lock) {
  if (--coll->refs > 0) return;
  CompletedCollective record = std::move(coll->record);
  coll->magic = 0;
  delete coll;
  if (record.start_ns == 0 || record.end_ns < record.start_ns) {
    ++stats_.without_device_time;
    return;
  }
  ++stats_.completed;
  lock.unlock();  // the sink writes to a file: not under the tracker's lock
  sink_(record);
}

TrackerStats CollectiveTracker::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace strata::nccl_profiler
