// The bytes each gloo algorithm of a recording was given (see gloo_buffer_bytes.h).
#include "importers/gloo_buffer_bytes.h"

#include <utility>

namespace strata {

std::map<CallEntryKey, uint64_t> GlooAlgorithmBytes(const RecordedSegment& seg,
                                                    const std::vector<const CallEnterRow*>& enters,
                                                    const std::map<CallEntryKey, uint64_t>& returns) {
  struct ThreadState {
    const CallEnterRow* last = nullptr;                  // its latest algorithm
    std::vector<std::pair<uint64_t, uint64_t>> buffers;  // (ts, bytes) since then, outside it
  };
  std::map<uint32_t, ThreadState> threads;
  std::map<CallEntryKey, uint64_t> bytes_of;
  const auto inside = [&](const ThreadState& t, uint64_t ts) {
    if (t.last == nullptr) return false;
    auto it = returns.find({t.last->tid, t.last->probe, t.last->ts_ns});
    return it == returns.end() || ts <= it->second;  // not completed (yet): still inside
  };
  for (const CallEnterRow* e : enters) {
    if (e->probe >= seg.probes.size()) continue;
    const ProbeKind kind = seg.probes[e->probe].kind;
    ThreadState& t = threads[e->tid];
    if (kind == ProbeKind::kCollectiveBuffer && !inside(t, e->ts_ns)) {
      t.buffers.push_back({e->ts_ns, e->count});
    } else if (kind == ProbeKind::kCollective) {
      uint64_t bytes = 0;
      for (const auto& [ts, b] : t.buffers)
        if (ts + kGlooBufferLeadNs >= e->ts_ns) bytes += b;
      bytes_of[{e->tid, e->probe, e->ts_ns}] = t.last == nullptr ? 0 : bytes;
      t.last = e;
      t.buffers.clear();
    }
  }
  return bytes_of;
}

}  // namespace strata
