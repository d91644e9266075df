// CollectiveTracker implementation: a collective or point-to-point event ("parent") is done once stopped, with
// no channel open and its announced channels all stopped; `live_` holds every event not yet freed, so a handle
// naming anything else (a parent already done, or never ours) is ignored or an orphan, never a use after free.
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
  static constexpr uint32_t kCollMagic = 0x434f4c4c, kP2pMagic = 0x50325020, kChanMagic = 0x4348414e;
  uint32_t magic = 0;
  // Collective or point-to-point (a parent)
  CompletedCollective record;
  bool stopped = false;  // NCCL stopped the event itself
  int expected_channels = 0, open_channels = 0, channels_started = 0, channels_done = 0;
  // Channel
  Event* parent = nullptr;
  bool time_stopped = false;  // ChannelStopped gave its stop time
};

CollectiveTracker::~CollectiveTracker() {
  for (const Event* e : live_) delete e;  // in flight at the end (a hang): no callback can come any more
}

CollectiveTracker::Event* CollectiveTracker::NewParentLocked(bool collective, uint64_t comm, int channels) {
  auto* e = new Event();
  e->magic = collective ? Event::kCollMagic : Event::kP2pMagic;
  e->expected_channels = std::max(channels, 0);
  e->record.comm = comm;
  CommCounters& counters = comms_[comm];
  e->record.seq = collective ? counters.collectives++ : counters.p2p++;
  live_.insert(e);
  return e;
}

void* CollectiveTracker::StartCollective(const CollectiveStart& s) {
  std::unique_lock<std::mutex> lock(mutex_);
  Event* e = NewParentLocked(true, s.comm, s.channels);
  CompletedCollective& r = e->record;
  r.op = SnakeCaseOp(s.func);
  r.nccl_seq = s.nccl_seq;
  r.count = s.count;
  r.tid = s.tid;
  r.host_start_ns = s.host_ns;
  r.device_clock = s.device_clock;
  ++stats_.started;
  const CompletedCollective copy = r;
  lock.unlock();  // NCCL has no handle yet: nothing can move the collective on before this returns
  Notify(CollectiveState::kEnqueued, copy);
  return e;
}

void* CollectiveTracker::StartP2p(uint64_t comm, int channels) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.p2p;
  return NewParentLocked(false, comm, channels);
}

void* CollectiveTracker::StartChannel(void* parent_handle, uint64_t start_ns) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto* parent = static_cast<Event*>(parent_handle);
  if (parent == nullptr || live_.count(parent) == 0 || parent->magic == Event::kChanMagic) {
    ++stats_.orphan_channels;
    return nullptr;
  }
  auto* ch = new Event();
  ch->magic = Event::kChanMagic;
  ch->parent = parent;
  live_.insert(ch);
  ++parent->open_channels;
  CompletedCollective& r = parent->record;
  if (start_ns != 0 && (r.start_ns == 0 || start_ns < r.start_ns)) r.start_ns = start_ns;
  const bool first = parent->channels_started++ == 0 && parent->magic == Event::kCollMagic;
  if (!first) return ch;
  const CompletedCollective copy = r;
  lock.unlock();  // the collective cannot be done before `ch`, not yet returned, is stopped
  Notify(CollectiveState::kKernelStarted, copy);
  return ch;
}

void CollectiveTracker::ChannelStopped(void* channel, uint64_t stop_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto* ch = static_cast<Event*>(channel);
  if (ch == nullptr || stop_ns == 0 || live_.count(ch) == 0 || ch->magic != Event::kChanMagic) return;
  ch->time_stopped = true;
  CompletedCollective& r = ch->parent->record;
  r.end_ns = std::max(r.end_ns, stop_ns);
}

void CollectiveTracker::Stop(void* handle, uint64_t host_stop_ns) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto* e = static_cast<Event*>(handle);
  if (e == nullptr || live_.count(e) == 0) return;
  if (e->magic == Event::kChanMagic) {
    StopChannelLocked(e, host_stop_ns, lock);
  } else if (!e->stopped) {  // stopped twice: the first stop counts
    e->stopped = true;
    MaybeDoneLocked(e, lock);
  }
}

void CollectiveTracker::StopChannelLocked(Event* ch, uint64_t host_stop_ns, std::unique_lock<std::mutex>& lock) {
  Event* parent = ch->parent;
  if (!ch->time_stopped && host_stop_ns != 0) parent->record.end_ns = std::max(parent->record.end_ns, host_stop_ns);
  live_.erase(ch);
  ch->magic = 0;
  delete ch;
  --parent->open_channels;
  ++parent->channels_done;
  MaybeDoneLocked(parent, lock);
}

void CollectiveTracker::MaybeDoneLocked(Event* e, std::unique_lock<std::mutex>& lock) {
  if (!e->stopped || e->open_channels > 0 || e->channels_done < e->expected_channels) return;
  live_.erase(e);
  const bool collective = e->magic == Event::kCollMagic;
  CompletedCollective record = std::move(e->record);
  e->magic = 0;
  delete e;
  if (!collective) return;
  const bool span = record.start_ns != 0 && record.end_ns >= record.start_ns;
  ++(span ? stats_.completed : stats_.without_device_time);
  lock.unlock();  // the sinks write to a file: not under the tracker's lock
  Notify(CollectiveState::kDone, record);
  if (span) sink_(record);
}

void CollectiveTracker::Notify(CollectiveState state, const CompletedCollective& record) const {
  if (state_sink_) state_sink_(state, record);
}

TrackerStats CollectiveTracker::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace strata::nccl_profiler
