// Chrome trace-event JSON writer for the merged, clock-aligned job timeline (see perfetto_export.h).
#include "reports/perfetto_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/diagnosis/stall.h"
#include "analysis/job_summary.h"
#include "core/skip_reasons.h"
#include "core/text_escape.h"
#include "model/collective_progress.h"
#include "model/job_model.h"
#include "reports/skip_report.h"

namespace strata {
namespace {

/// A JSON string literal of `bytes` (invalid UTF-8 escaped by JsonSafe, controls as \u00NN).
std::string Quote(std::string_view bytes) {
  const std::string safe = JsonSafe(bytes);
  std::string out = "\"";
  for (const char c : safe) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// ns as µs with exactly three decimals (exact integer arithmetic, no double rounding).
std::string Us(int64_t ns) {
  const bool neg = ns < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", neg ? "-" : "", a / 1000, a % 1000);
}

/// Formats events into a buffer handed to the sink whenever it passes `piece_bytes` (so memory stays bounded
/// whatever the job's size); every event goes through here so that counts and commas stay right. After the
/// sink fails, nothing more is handed to it and Finish returns its error.
class Writer {
 public:
  Writer(int64_t origin, const PerfettoSink& sink, size_t piece_bytes)
      : origin_(origin), piece_bytes_(piece_bytes), sink_(sink) {
    out_ = "{\"traceEvents\": [\n";
  }
  int64_t origin() const { return origin_; }
  /// `fields` is the event's members after ph/pid/tid/ts (may be empty), already JSON.
  void Event(char ph, int64_t pid, int64_t tid, int64_t aligned_ns, std::string_view fields) {
    if (events_) out_ += ",\n";
    fmt::format_to(std::back_inserter(out_), "{{\"ph\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{}", ph, pid, tid,
                   Us(aligned_ns - origin_));
    if (!fields.empty()) {
      out_ += ',';
      out_ += fields;
    }
    out_ += '}';
    ++events_;
    if (out_.size() >= piece_bytes_) Flush();
  }
  void Meta(int64_t pid, int64_t tid, std::string_view name, std::string_view args) {
    Event('M', pid, tid, origin_, fmt::format("\"name\":\"{}\",\"args\":{}", name, args));
  }
  size_t events() const { return events_; }
  Status Finish(const std::string& other_data) {
    out_ += "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": " + other_data + "}\n";
    Flush();
    return status_;
  }

 private:
  void Flush() {
    if (status_.ok()) status_ = sink_(out_);
    out_.clear();
  }
  int64_t origin_ = 0;
  size_t piece_bytes_;
  const PerfettoSink& sink_;
  Status status_;
  std::string out_;
  size_t events_ = 0;
};

const char* TrackLabel(TrackKind kind) {
  switch (kind) {
    case TrackKind::kGpuStream:
      return "stream";
    case TrackKind::kCounter:
      return "counter";
    case TrackKind::kOpTable:
      return "lane";
    default:
      return "thread";
  }
}

/// Everything the writer needs per rank index: its pid (rank number) and the offset applied.
struct RankView {
  int64_t pid = 0;
  int64_t offset_ns = 0;  // aligned = rank time - offset
  std::string host;
};

std::vector<RankView> RankViews(const TraceStore& store, const RecordedRun& recorded,
                                const diagnosis::DiagnosisResult& result) {
  std::vector<RankView> out(store.ranks.size());
  for (size_t r = 0; r < store.ranks.size(); ++r) {
    const int32_t rank = store.ranks[r].rank;
    out[r].pid = rank >= 0 ? rank : static_cast<int64_t>(r);
    if (auto it = result.clock_offsets_us.find(rank); it != result.clock_offsets_us.end())
      out[r].offset_ns = std::llround(it->second * 1000.0);
    for (const RecordedSegment& seg : recorded.segments)
      for (const auto& [pid, p] : seg.processes)
        if (p.rank == rank && !seg.host.empty()) out[r].host = seg.host;
  }
  return out;
}

/// Each track's thread id: unique in the whole file (Perfetto, like the kernel, takes a tid to name one thread
/// whatever its pid: a tid reused by two ranks' processes lost one's name and moved its slices), numbered
/// 1, 2, ... with a rank's CPU tracks before its GPU streams. Recorder tracks are numbered after them.
std::vector<int64_t> TrackTids(const TraceStore& store) {
  std::vector<int64_t> tid(store.tracks.size());
  int64_t next = 1;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t t = 0; t < store.tracks.size(); ++t) {
      const bool gpu = store.tracks[t].kind == TrackKind::kGpuStream;
      if (gpu == (pass == 1)) tid[t] = next++;
    }
  return tid;
}

void WriteProcessesAndThreads(const TraceStore& store, const std::vector<RankView>& views,
                              const std::vector<int64_t>& tids, Writer& w) {
  for (size_t r = 0; r < views.size(); ++r) {
    const RankView& v = views[r];
    std::string name = fmt::format("rank {}", v.pid);
    if (!v.host.empty()) name += " (" + v.host + ")";
    w.Meta(v.pid, 0, "process_name",
           fmt::format("{{\"name\":{},\"clock_offset_us\":{}}}", Quote(name), Us(v.offset_ns)));
    w.Meta(v.pid, 0, "process_labels",
           fmt::format("{{\"labels\":{}}}", Quote(fmt::format("clock offset {} us applied", Us(v.offset_ns)))));
    w.Meta(v.pid, 0, "process_sort_index", fmt::format("{{\"sort_index\":{}}}", v.pid));
  }
  for (size_t t = 0; t < store.tracks.size(); ++t) {
    const Track& tr = store.tracks[t];
    std::string name(store.strings.view(tr.name));
    if (tr.kind == TrackKind::kGpuStream) {
      name = fmt::format("stream {}{}", tr.stream, name.empty() ? "" : " " + name);
    } else if (name.empty()) {
      name = fmt::format("{} {}", TrackLabel(tr.kind), tr.tid);
    }
    const int64_t pid = views[tr.rank].pid;
    w.Meta(pid, tids[t], "thread_name", fmt::format("{{\"name\":{}}}", Quote(name)));
    w.Meta(pid, tids[t], "thread_sort_index", fmt::format("{{\"sort_index\":{}}}", tids[t]));
  }
}

void WriteSlices(const TraceStore& store, const std::vector<RankView>& views, const std::vector<int64_t>& tids,
                 Writer& w) {
  const SliceTable& s = store.slices;
  std::string fields;
  for (size_t i = 0; i < s.size(); ++i) {
    const Track& tr = store.track(s.track[i]);
    const RankView& v = views[tr.rank];
    fields = "\"name\":" + Quote(store.strings.view(s.name[i]));
    if (s.flags[i] & kSliceHasCategory) fields += ",\"cat\":" + Quote(store.strings.view(s.category[i]));
    const bool instant = (s.flags[i] & kSliceInstant) || s.dur_ns[i] < 0;
    if (instant) {
      fields += ",\"s\":\"t\"";
    } else {
      fields += ",\"dur\":" + Us(s.dur_ns[i]);
    }
    if (s.step[i] >= 0 || s.correlation[i] != kNoCorrelation) {
      fields += ",\"args\":{";
      if (s.step[i] >= 0) fields += fmt::format("\"step\":{}", s.step[i]);
      if (s.correlation[i] != kNoCorrelation)
        fields += fmt::format("{}\"correlation\":{}", s.step[i] >= 0 ? "," : "", s.correlation[i]);
      fields += '}';
    }
    w.Event(instant ? 'I' : 'X', v.pid, tids[s.track[i].value], s.ts_ns[i] - v.offset_ns, fields);
  }
}

void WriteCounters(const TraceStore& store, const std::vector<RankView>& views, Writer& w) {
  const CounterTable& c = store.counters;
  for (size_t i = 0; i < c.size(); ++i) {
    const Track& tr = store.track(c.track[i]);
    if (!std::isfinite(c.value[i])) continue;
    const RankView& v = views[tr.rank];
    w.Event('C', v.pid, 0, c.ts_ns[i] - v.offset_ns,
            fmt::format("\"name\":{},\"args\":{{\"value\":{}}}", Quote(store.strings.view(tr.name)), c.value[i]));
  }
}

/// Per track, its slices as (start, end) sorted by start, with the running maximum end, to find whether a
/// slice of the track encloses a time; and per track, the tracks of the same rank and source pid/tid (an
/// importer keeps a thread's GPU streams apart from it: a flow event of the kernel's pid/tid lands on the
/// thread while the kernel lands on the stream).
class SliceIndex {
 public:
  explicit SliceIndex(const TraceStore& store) : spans_(store.tracks.size()), siblings_(store.tracks.size()) {
    for (size_t i = 0; i < store.slices.size(); ++i)
      spans_[store.slices.track[i].value].push_back(
          {store.slices.ts_ns[i], store.slices.ts_ns[i] + std::max<int64_t>(0, store.slices.dur_ns[i]), 0});
    for (auto& v : spans_) {
      std::sort(v.begin(), v.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
      int64_t most = std::numeric_limits<int64_t>::min();
      for (Span& x : v) x.max_end = most = std::max(most, x.end);
    }
    std::map<std::tuple<uint32_t, int64_t, int64_t>, std::vector<uint32_t>> by_thread;
    for (uint32_t t = 0; t < store.tracks.size(); ++t)
      if (store.tracks[t].kind != TrackKind::kCounter)
        by_thread[{store.tracks[t].rank, store.tracks[t].pid, store.tracks[t].tid}].push_back(t);
    for (const auto& [key, tracks] : by_thread)
      for (const uint32_t t : tracks) siblings_[t] = tracks;
  }
  /// Whether a slice of `track` encloses `ts` (start <= ts <= end).
  bool Encloses(uint32_t track, int64_t ts) const {
    const std::vector<Span>& v = spans_[track];
    auto it = std::upper_bound(v.begin(), v.end(), ts, [](int64_t t, const Span& x) { return t < x.start; });
    while (it != v.begin()) {
      --it;
      if (it->max_end < ts) return false;  // no earlier slice reaches ts
      if (it->end >= ts) return true;
    }
    return false;
  }
  /// `track` itself when a slice of it encloses `ts`, else the first sibling track with one, else none.
  std::optional<uint32_t> Bind(uint32_t track, int64_t ts) const {
    if (Encloses(track, ts)) return track;
    for (const uint32_t t : siblings_[track])
      if (t != track && Encloses(t, ts)) return t;
    return std::nullopt;
  }

 private:
  struct Span {
    int64_t start, end, max_end;
  };
  std::vector<std::vector<Span>> spans_;
  std::vector<std::vector<uint32_t>> siblings_;
};

/// The trace's own flows (e.g. ac2g launch -> kernel), written only as complete s/f pairs within a rank whose
/// ends both lie inside a slice of the thread they are written on (Perfetto binds a flow end to the slice
/// enclosing it on its thread and drops an end with none).
void WriteTraceFlows(const TraceStore& store, const std::vector<RankView>& views, const std::vector<int64_t>& tids,
                     const SliceIndex& slices, Writer& w, int64_t* next_id, SkipCounts* skipped) {
  const FlowTable& f = store.flows;
  std::map<std::tuple<uint32_t, StringId, int64_t>, std::pair<int64_t, int64_t>> ends;  // -> (s row, f row)
  for (size_t i = 0; i < f.size(); ++i) {
    if (f.phase[i] == 't') continue;
    auto& e = ends.try_emplace({store.track(f.track[i]).rank, f.category[i], f.id[i]}, -1, -1).first->second;
    (f.phase[i] == 's' ? e.first : e.second) = static_cast<int64_t>(i);
  }
  for (const auto& [key, e] : ends) {
    if (e.first < 0 || e.second < 0) {
      skipped->Add(SkipId::kExportFlowUnpaired);
      continue;
    }
    const std::optional<uint32_t> from = slices.Bind(f.track[e.first].value, f.ts_ns[e.first]);
    const std::optional<uint32_t> to = slices.Bind(f.track[e.second].value, f.ts_ns[e.second]);
    if (!from || !to) {
      skipped->Add(SkipId::kExportFlowEndOutsideSlice);
      continue;
    }
    const int64_t id = (*next_id)++;
    const std::string cat = Quote(store.strings.view(std::get<1>(key)));
    for (const auto& [row, track] : {std::pair{e.first, *from}, std::pair{e.second, *to}}) {
      const RankView& v = views[store.tracks[track].rank];
      const bool start = row == e.first;
      w.Event(start ? 's' : 'f', v.pid, tids[track], f.ts_ns[row] - v.offset_ns,
              fmt::format("\"name\":{},\"cat\":{},\"id\":{}{}", cat, cat, id, start ? "" : ",\"bp\":\"e\""));
    }
  }
}

// ---- findings and blame edges ----------------------------------------------------------------------

struct CallAt {
  SliceId slice;
  int64_t start = 0, end = 0;  // aligned
};

/// The call of rank index `r` (rank number `rank`) in `step` where the diagnosis found it arrived latest against
/// its peers' median arrival (DiagnosisResult::drawn, latest_arrival.h), with the peers' calls of the same
/// instance; false when the diagnosis names no such instance in the step.
bool LateInstance(const model::JobModel& job, const diagnosis::DiagnosisResult& result,
                  const std::vector<RankView>& views, size_t r, int64_t step, CallAt* own,
                  std::vector<std::pair<size_t, CallAt>>* peers) {
  const auto by_step = result.drawn.latest_arrival.find(static_cast<int32_t>(views[r].pid));
  if (by_step == result.drawn.latest_arrival.end()) return false;
  const auto at = by_step->second.find(step);
  if (at == by_step->second.end() || at->second >= job.collectives.matched.size()) return false;
  const model::MatchedCollective& m = job.collectives.matched[at->second];
  if (m.step != step || r >= m.call.size() || m.call[r] < 0) return false;
  peers->clear();
  for (size_t q = 0; q < m.call.size(); ++q) {
    if (m.call[q] < 0) continue;
    const model::CollectiveCall& c = job.collectives.calls[q][static_cast<size_t>(m.call[q])];
    const CallAt call{c.slice, c.start_ns - views[q].offset_ns, c.end_ns - views[q].offset_ns};
    if (q == r) {
      *own = call;
    } else {
      peers->emplace_back(q, call);
    }
  }
  return true;
}

std::vector<int64_t> LateSteps(const diagnosis::DiagnosisResult& result, const diagnosis::Finding& f) {
  std::vector<int64_t> steps;
  if (const std::vector<int64_t>* late = diagnosis::LateSteps(f.evidence)) steps = *late;
  if (steps.empty() && f.step) steps.push_back(*f.step);
  if (steps.empty())
    for (const diagnosis::Straggler& s : result.stragglers)
      if (f.rank && s.rank == *f.rank) steps = s.steps;
  return steps;
}

/// An event of a stopped job (hang, collective mismatch) on a rank index: an instant at `ts` on the rank's
/// process, or a slice from `ts` to `end` on its "stopped job" track. `finding`: its rank's finding of that
/// cause is drawn there (where the rank stopped, or called the odd collective), not at a late step.
struct StallMark {
  size_t rank = 0;
  int64_t ts = 0, end = 0;  // aligned
  bool slice = false;
  std::string name;
  nlohmann::ordered_json args;
  std::optional<diagnosis::Cause> finding;
};

/// The mark a finding of `cause` on rank index `rank` (any rank: none) is drawn at, or null.
const StallMark* FindingMark(const std::vector<StallMark>& marks, std::optional<size_t> rank, diagnosis::Cause cause) {
  for (const StallMark& m : marks)
    if (m.finding == cause && (!rank || m.rank == *rank)) return &m;
  return nullptr;
}

bool StopsTheJob(diagnosis::Cause c) {
  return c == diagnosis::Cause::kHang || c == diagnosis::Cause::kCollectiveMismatch;
}

void WriteFindings(const TraceStore& store, const model::JobModel& job, const std::vector<RankView>& views,
                   const std::vector<int64_t>& tids, const diagnosis::DiagnosisResult& result,
                   const std::vector<StallMark>& marks, const PerfettoExportOptions& options, Writer& w,
                   int64_t* next_id, PerfettoExportStats* stats, SkipCounts* skipped) {
  std::map<int64_t, size_t> index_of_pid;
  for (size_t r = 0; r < views.size(); ++r) index_of_pid[views[r].pid] = r;
  // Earliest aligned start per rank index, where an instant lands when no late step places it.
  std::vector<int64_t> first(views.size(), std::numeric_limits<int64_t>::max());
  for (size_t i = 0; i < store.slices.size(); ++i) {
    const uint32_t r = store.track(store.slices.track[i]).rank;
    first[r] = std::min(first[r], store.slices.ts_ns[i] - views[r].offset_ns);
  }
  for (const diagnosis::Finding& f : result.findings) {
    const auto at = f.rank ? index_of_pid.find(f.rank->value()) : index_of_pid.end();
    // A stopped job's finding has no late step: it is drawn where its rank stopped (stall marks).
    const bool stopped = StopsTheJob(f.cause);
    const std::vector<int64_t> steps = stopped ? std::vector<int64_t>{} : LateSteps(result, f);
    const std::string args = fmt::format(
        "\"args\":{{\"summary\":{},\"cause\":{},\"layer\":{},\"impact_pct\":{},\"confidence\":{},\"op\":{}}}",
        Quote(f.summary), Quote(std::string(diagnosis::CauseName(f.cause))),
        Quote(std::string(diagnosis::LayerName(f.layer))), f.impact_pct, f.confidence, Quote(f.op.value_or("")));
    const std::string name = Quote("finding: " + std::string(diagnosis::CauseName(f.cause)));
    if (at == index_of_pid.end()) {
      const StallMark* mark = stopped ? FindingMark(marks, std::nullopt, f.cause) : nullptr;
      const int64_t ts = mark ? mark->ts : views.empty() ? w.origin() : first[0];
      w.Event('I', views.empty() ? 0 : views[0].pid, 0, ts,
              "\"name\":" + name + ",\"cat\":\"strata.finding\",\"s\":\"g\"," + args);
      ++stats->findings;
      continue;
    }
    const size_t r = at->second;
    const StallMark* mark = stopped ? FindingMark(marks, r, f.cause) : nullptr;
    int64_t ts = mark ? mark->ts : first[r];
    size_t flows = 0;
    bool placed = false;
    for (const int64_t step : steps) {
      CallAt own;
      std::vector<std::pair<size_t, CallAt>> peers;
      if (!LateInstance(job, result, views, r, step, &own, &peers)) {
        skipped->Add(SkipId::kExportBlameStepUnshared);
        continue;
      }
      if (!placed) ts = own.start, placed = true;
      const std::string flow_name = Quote(fmt::format("blame: {} (step {})", diagnosis::CauseName(f.cause), step));
      for (const auto& [q, peer] : peers) {
        if (flows >= options.max_blame_flows_per_finding) {
          skipped->Add(SkipId::kExportBlameEdgeCapped);
          continue;
        }
        if (std::max(peer.start, peer.end - 1) < own.start) {  // the peer did not wait here: no arrow backwards
          skipped->Add(SkipId::kExportBlameNoWait);
          continue;
        }
        const int64_t id = (*next_id)++;
        const uint32_t own_track = store.slices.track[own.slice.value].value,
                       peer_track = store.slices.track[peer.slice.value].value;
        w.Event('s', views[r].pid, tids[own_track], own.start,
                fmt::format("\"name\":{},\"cat\":\"strata.blame\",\"id\":{}", flow_name, id));
        // The peer waited until the straggler arrived: the arrow lands there, inside the peer's call (never
        // before its start: viewers read a flow's ends in time order and drop an end that precedes its start).
        const int64_t land = std::clamp(own.start, peer.start, std::max(peer.start, peer.end - 1));
        w.Event('f', views[q].pid, tids[peer_track], land,
                fmt::format("\"name\":{},\"cat\":\"strata.blame\",\"id\":{},\"bp\":\"e\"", flow_name, id));
        ++flows;
      }
    }
    stats->blame_flows += flows;
    w.Event('I', views[r].pid, 0, ts, "\"name\":" + name + ",\"cat\":\"strata.finding\",\"s\":\"p\"," + args);
    ++stats->findings;
  }
}

// ---- recorder layers -------------------------------------------------------------------------------

const char* OffCpuState(uint32_t state) {
  switch (state) {
    case 0:
      return "preempted";
    case 1:
      return "sleeping";
    case 2:
      return "uninterruptible";
    default:
      return "off-CPU";
  }
}

/// Thread ids for recorder tracks: after the trace tracks' (`base`, see TrackTids), one per (rank, layer, tid),
/// named on first use; also the tracks of a stopped job's events (one per rank, see WriteStall).
class RecorderTracks {
 public:
  explicit RecorderTracks(int64_t base) : base_(base) {}
  int64_t Get(Writer& w, int64_t pid, const std::string& layer, uint32_t tid, const std::string& comm) {
    return Track(w, pid, layer, tid,
                 [&] { return fmt::format("{} · tid {}{}", layer, tid, comm.empty() ? "" : " (" + comm + ")"); });
  }
  /// The one track of process `pid` named `name` (no recorded thread behind it).
  int64_t Named(Writer& w, int64_t pid, const std::string& name) {
    return Track(w, pid, name, std::numeric_limits<uint32_t>::max(), [&] { return name; });
  }

 private:
  template <typename NameFn>
  int64_t Track(Writer& w, int64_t pid, const std::string& layer, uint32_t tid, NameFn name) {
    auto [it, inserted] = ids_.try_emplace({pid, layer, tid}, base_ + static_cast<int64_t>(ids_.size()));
    if (inserted) {
      w.Meta(pid, it->second, "thread_name", fmt::format("{{\"name\":{}}}", Quote(name())));
      w.Meta(pid, it->second, "thread_sort_index", fmt::format("{{\"sort_index\":{}}}", it->second));
    }
    return it->second;
  }
  int64_t base_;
  std::map<std::tuple<int64_t, std::string, uint32_t>, int64_t> ids_;
};

/// Per segment, per rank: the shift from recorded to aligned time, or none (its events are left out).
using RecorderShifts = std::vector<std::map<int32_t, std::optional<int64_t>>>;

/// A recording that is the traces itself shares their clocks; another is on them by the diagnosis's alignment
/// (DiagnosisResult::recording_offsets_ns).
RecorderShifts ShiftsOfRecording(const TraceStore& store, const RecordedRun& recorded,
                                 const diagnosis::DiagnosisResult& result, const std::vector<RankView>& views) {
  bool recording_is_trace = !store.inputs.empty();
  for (const InputInfo& in : store.inputs) recording_is_trace &= in.recording();
  std::map<int32_t, size_t> index_of_rank;
  for (size_t r = 0; r < store.ranks.size(); ++r) index_of_rank[store.ranks[r].rank] = r;
  RecorderShifts out;
  for (size_t i = 0; i < recorded.segments.size(); ++i) {
    const RecordedSegment& seg = recorded.segments[i];
    std::map<int32_t, std::optional<int64_t>>& shift = out.emplace_back();
    for (const auto& [pid, p] : seg.processes) {
      if (!p.rank || shift.count(*p.rank)) continue;
      auto r = index_of_rank.find(*p.rank);
      std::optional<int64_t> s;
      if (r != index_of_rank.end()) {
        if (recording_is_trace) {
          s = -views[r->second].offset_ns;
        } else if (auto a = result.recording_offsets_ns.find({i, *p.rank}); a != result.recording_offsets_ns.end()) {
          s = a->second - views[r->second].offset_ns;
        }
      }
      shift[*p.rank] = s;
    }
  }
  return out;
}

/// Where a recorded process's events go: its rank and the shift to aligned time; none when left out (no
/// rank, or a rank whose recording could not be aligned).
struct Placement {
  int32_t rank = 0;
  int64_t shift_ns = 0;
  std::string_view comm;
};

std::optional<Placement> PlaceProcess(const RecordedSegment& seg,
                                      const std::map<int32_t, std::optional<int64_t>>& shift, int64_t tgid) {
  auto p = seg.processes.find(static_cast<int>(tgid));
  if (p == seg.processes.end() || !p->second.rank) return std::nullopt;
  auto s = shift.find(*p->second.rank);
  if (s == shift.end() || !s->second) return std::nullopt;
  return Placement{*p->second.rank, *s->second, p->second.comm};
}

/// The aligned time of a recorded event of process `tgid` (a series' pid; -1: host-wide, placed on the
/// segment's first rank), or none when it is left out.
std::optional<int64_t> PlacedTime(const RecordedSegment& seg, const std::map<int32_t, std::optional<int64_t>>& shift,
                                  int64_t tgid, uint64_t ts_ns) {
  if (tgid < 0) {
    if (shift.empty() || !shift.begin()->second) return std::nullopt;
    return static_cast<int64_t>(ts_ns) + *shift.begin()->second;
  }
  const auto place = PlaceProcess(seg, shift, tgid);
  if (!place) return std::nullopt;
  return static_cast<int64_t>(ts_ns) + place->shift_ns;
}

/// Smallest aligned time of the recorded events that are drawn (INT64_MAX when none).
int64_t RecordedOrigin(const RecordedRun& recorded, const RecorderShifts& shifts) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < recorded.segments.size() && i < shifts.size(); ++i) {
    const RecordedSegment& seg = recorded.segments[i];
    const auto consider = [&](int64_t tgid, uint64_t ts) {
      if (auto t = PlacedTime(seg, shifts[i], tgid, ts)) origin = std::min(origin, *t);
    };
    for (const auto& o : seg.data.off_cpu) consider(o.tgid, o.start_ns);
    for (const auto& g : seg.data.gcs) consider(g.tgid, g.start_ns);
    for (const auto& c : seg.data.calls) consider(c.tgid, c.start_ns);
    for (const auto& c : seg.data.counters)
      if (c.series < seg.series.size() && std::isfinite(c.value)) consider(seg.series[c.series].pid, c.ts_ns);
  }
  return origin;
}

// ---- a stopped job: hang and collective mismatch -------------------------------------------------------

/// Places a stopped job's events (Unix times of the recording, diagnosis/stall.h) on the ranks' aligned
/// clocks: Unix − the segment's realtime − monotonic difference is the recorded time, shifted as the rank's
/// recorder events are. An event of a rank with no aligned recording is left out and counted.
class StallPlacer {
 public:
  StallPlacer(const TraceStore& store, const RecordedRun& recorded, const RecorderShifts& shifts, SkipCounts* skipped)
      : recorded_(recorded), calls_(store.recorded_calls), shifts_(shifts), skipped_(skipped) {
    for (size_t r = 0; r < store.ranks.size(); ++r) index_of_rank_[store.ranks[r].rank] = r;
  }
  /// The recording's collective calls, as the store decoded them.
  const RecordedCollectiveCalls& calls() const { return calls_; }
  SkipCounts* skipped() const { return skipped_; }
  /// An instant (or, `slice`, a slice from `unix_ns` to `end_unix_ns`) on `rank`, through the rank's first
  /// segment with a known shift (or `segment`).
  void Add(int32_t rank, int64_t unix_ns, int64_t end_unix_ns, bool slice, std::string name,
           nlohmann::ordered_json args, std::optional<diagnosis::Cause> finding,
           std::optional<size_t> segment = std::nullopt) {
    const auto index = index_of_rank_.find(rank);
    const std::optional<int64_t> at = Aligned(rank, unix_ns, segment);
    if (index == index_of_rank_.end() || !at) {
      skipped_->Add(SkipId::kExportRecorderUnplaced, 1, "stall_event");
      return;
    }
    marks_.push_back({index->second, *at, *at + std::max<int64_t>(0, end_unix_ns - unix_ns), slice, std::move(name),
                      std::move(args), finding});
  }
  std::vector<StallMark> Take() { return std::move(marks_); }

 private:
  std::optional<int64_t> Aligned(int32_t rank, int64_t unix_ns, std::optional<size_t> segment) const {
    for (size_t i = 0; i < recorded_.segments.size() && i < shifts_.size(); ++i) {
      if (segment && i != *segment) continue;
      const auto s = shifts_[i].find(rank);
      if (s == shifts_[i].end() || !s->second) continue;
      return unix_ns - recorded_.segments[i].data.header.realtime_minus_monotonic_ns + *s->second;
    }
    return std::nullopt;
  }
  const RecordedRun& recorded_;
  const RecordedCollectiveCalls& calls_;
  const RecorderShifts& shifts_;
  SkipCounts* skipped_;
  std::map<int32_t, size_t> index_of_rank_;
  std::vector<StallMark> marks_;
};

int64_t UnixNs(double unix_s) { return std::llround(unix_s * 1e9); }

std::string Ranks(const std::vector<int32_t>& ranks) {
  return fmt::format("rank{} {}", ranks.size() == 1 ? "" : "s", fmt::join(ranks, ", "));
}

/// A hang: on each waiting rank an instant where the stall began ("waiting in all_reduce (pg0 #185) for rank
/// 1") and a slice "stalled in all_reduce" as long as it lasted; on each missing rank an instant where it
/// stopped (its state's start, else the stall's), naming its state and frame.
void HangMarks(const diagnosis::StallEvidence& e, StallPlacer& p) {
  const std::string in = fmt::format("{} ({} #{})", e.op, e.communicator, e.seq);
  const int64_t since = UnixNs(e.stalled_since_unix), until = since + UnixNs(e.stalled_for_s);
  const nlohmann::ordered_json common = {{"collective", in},
                                         {"waiting_ranks", e.waiting_ranks},
                                         {"missing_ranks", e.missing_ranks},
                                         {"stalled_since_unix", e.stalled_since_unix},
                                         {"stalled_for_s", e.stalled_for_s},
                                         {"ongoing", e.ongoing}};
  const std::string whom = e.missing_ranks.empty() ? ": no rank completed it" : " for " + Ranks(e.missing_ranks);
  // Every rank inside and none completing: the job-wide finding is drawn at the first waiting rank's instant.
  const std::optional<diagnosis::Cause> job_wide =
      e.missing_ranks.empty() ? std::optional(diagnosis::Cause::kHang) : std::nullopt;
  for (const int32_t r : e.waiting_ranks) {
    p.Add(r, since, since, false, "waiting in " + in + whom, common, job_wide);
    p.Add(r, since, until, true, "stalled in " + e.op, common, std::nullopt);
  }
  for (const diagnosis::StalledRankState& m : e.missing) {
    nlohmann::ordered_json args = common;
    args["state"] = m.state;
    args["frame"] = m.frame;
    args["native_frame"] = m.native_frame;
    args["python_stack"] = m.python_stack;
    args["kernel_wait"] = m.kernel_wait;
    args["last_completed"] =
        m.last_completed_seq < 0 ? "none recorded" : fmt::format("{} #{}", m.last_completed_op, m.last_completed_seq);
    args["observed_by"] = m.observed_by;
    const int64_t at = m.since_unix_s > 0 ? UnixNs(m.since_unix_s) : since;
    p.Add(m.rank, at, at, false,
          fmt::format("rank {} stopped here: {}{}", m.rank, m.state, m.frame.empty() ? "" : " in " + m.frame),
          std::move(args), diagnosis::Cause::kHang);
  }
}

/// A collective mismatch: on each rank, where it called its side of the (communicator, seq), an instant
/// naming what it called and what the others called.
void MismatchMarks(const diagnosis::StallEvidence& e, StallPlacer& p) {
  const model::CollectiveProgress progress = model::BuildCollectiveProgress(p.calls());
  const auto called = diagnosis::CalledText;
  nlohmann::ordered_json calls = nlohmann::ordered_json::array();
  for (const auto& c : e.calls)
    calls.push_back({{"op", c.op}, {"count", c.count}, {"bytes", c.bytes}, {"ranks", c.ranks}});
  for (const auto& c : e.calls) {
    std::vector<std::string> others;
    for (const auto& o : e.calls)
      if (&o != &c) others.push_back(fmt::format("{} called {}", Ranks(o.ranks), called(o)));
    const std::string name =
        fmt::format("mismatch at {} #{}: called {}; {}", e.communicator, e.seq, called(c), fmt::join(others, "; "));
    for (const int32_t r : c.ranks) {
      const auto rp = progress.ranks.find(r);
      const model::RankCollective* call = nullptr;
      if (rp != progress.ranks.end())
        for (const model::RankCollective& k : rp->second.calls)
          if (!k.p2p && k.comm == e.communicator && k.seq == e.seq) call = &k;
      if (!call) {
        p.skipped()->Add(SkipId::kExportRecorderUnplaced, 1, "stall_event");
        continue;
      }
      p.Add(r, call->enter_unix_ns, call->enter_unix_ns, false, name,
            {{"communicator", e.communicator}, {"seq", e.seq}, {"calls", calls}}, diagnosis::Cause::kCollectiveMismatch,
            rp->second.segment);
    }
  }
}

/// The stopped job's events of `result` (its first hang and first mismatch), placed on the aligned clocks.
std::vector<StallMark> StallMarks(const TraceStore& store, const RecordedRun& recorded, const RecorderShifts& shifts,
                                  const diagnosis::DiagnosisResult& result, SkipCounts* skipped) {
  StallPlacer placer(store, recorded, shifts, skipped);
  if (const diagnosis::StallEvidence* hang = diagnosis::JobStall(result)) HangMarks(*hang, placer);
  for (const diagnosis::Finding& f : result.findings) {
    const auto* e = std::get_if<diagnosis::StallEvidence>(&f.evidence.kind);
    if (f.cause == diagnosis::Cause::kCollectiveMismatch && e) {
      MismatchMarks(*e, placer);
      break;
    }
  }
  return placer.Take();
}

/// The marks: instants on the rank's process (process-scoped, as findings), slices on its "stopped job" track.
void WriteStall(const std::vector<StallMark>& marks, const std::vector<RankView>& views, RecorderTracks& tracks,
                Writer& w, PerfettoExportStats* stats) {
  for (const StallMark& m : marks) {
    const int64_t pid = views[m.rank].pid;
    const std::string args = m.args.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    if (m.slice) {
      w.Event('X', pid, tracks.Named(w, pid, "stopped job"), m.ts,
              fmt::format("\"name\":{},\"cat\":\"strata.stall\",\"dur\":{},\"args\":{}", Quote(m.name),
                          Us(m.end - m.ts), args));
    } else {
      w.Event('I', pid, 0, m.ts,
              fmt::format("\"name\":{},\"cat\":\"strata.stall\",\"s\":\"p\",\"args\":{}", Quote(m.name), args));
    }
    ++stats->stall_events;
  }
}

void WriteRecorder(const TraceStore& store, const RecordedRun& recorded, const RecorderShifts& shifts,
                   const std::vector<RankView>& views, RecorderTracks& tracks, Writer& w, PerfettoExportStats* stats,
                   SkipCounts* skipped) {
  if (recorded.empty()) return;
  std::map<int32_t, size_t> index_of_rank;
  for (size_t r = 0; r < store.ranks.size(); ++r) index_of_rank[store.ranks[r].rank] = r;
  for (size_t seg_index = 0; seg_index < recorded.segments.size() && seg_index < shifts.size(); ++seg_index) {
    const RecordedSegment& seg = recorded.segments[seg_index];
    const std::map<int32_t, std::optional<int64_t>>& shift = shifts[seg_index];
    auto place = [&](uint32_t tgid, int64_t* pid, int64_t* delta, std::string* comm) {
      const auto at = PlaceProcess(seg, shift, tgid);
      if (!at) return false;
      *pid = views[index_of_rank.at(at->rank)].pid;
      *delta = at->shift_ns;
      *comm = std::string(at->comm);
      return true;
    };
    const auto count_left_out = [&](const char* what) { skipped->Add(SkipId::kExportRecorderUnplaced, 1, what); };
    int64_t pid = 0, delta = 0;
    std::string comm;
    for (const OffCpuRow& o : seg.data.off_cpu) {
      if (!place(o.tgid, &pid, &delta, &comm)) {
        count_left_out("off_cpu_interval");
        continue;
      }
      const int64_t start = static_cast<int64_t>(o.start_ns) + delta, end = static_cast<int64_t>(o.end_ns) + delta;
      w.Event('X', pid, tracks.Get(w, pid, "off-CPU", o.tid, comm), start,
              fmt::format("\"name\":\"{}\",\"cat\":\"strata.recorder\",\"dur\":{},\"args\":{{\"runq_us\":{}}}",
                          OffCpuState(o.state), Us(end - start), Us(static_cast<int64_t>(o.runq_ns))));
      ++stats->recorder_events;
      if (o.runq_ns > 0) {
        // The runnable part follows the wakeup, so it is drawn at the end of the interval.
        const int64_t runq = std::min<int64_t>(static_cast<int64_t>(o.runq_ns), end - start);
        w.Event('X', pid, tracks.Get(w, pid, "run-queue wait", o.tid, comm), end - runq,
                fmt::format("\"name\":\"run-queue wait\",\"cat\":\"strata.recorder\",\"dur\":{}", Us(runq)));
        ++stats->recorder_events;
      }
    }
    for (const GcRow& g : seg.data.gcs) {
      if (!place(g.tgid, &pid, &delta, &comm)) {
        count_left_out("gc_pause");
        continue;
      }
      w.Event('X', pid, tracks.Get(w, pid, "GC", g.tid, comm), static_cast<int64_t>(g.start_ns) + delta,
              fmt::format("\"name\":\"GC gen {}\",\"cat\":\"strata.recorder\",\"dur\":{},\"args\":{{\"collected\":{}}}",
                          g.generation, Us(static_cast<int64_t>(g.end_ns - g.start_ns)), g.collected));
      ++stats->recorder_events;
    }
    for (const CallRow& c : seg.data.calls) {
      if (!place(c.tgid, &pid, &delta, &comm)) {
        count_left_out("call");
        continue;
      }
      const std::string op = c.probe < seg.probes.size() ? (seg.probes[c.probe].op.empty() ? seg.probes[c.probe].symbol
                                                                                           : seg.probes[c.probe].op)
                                                         : "call";
      w.Event('X', pid, tracks.Get(w, pid, "calls", c.tid, comm), static_cast<int64_t>(c.start_ns) + delta,
              fmt::format("\"name\":{},\"cat\":\"strata.recorder\",\"dur\":{}", Quote(op),
                          Us(static_cast<int64_t>(c.end_ns - c.start_ns))));
      ++stats->recorder_events;
    }
    for (const CounterRow& c : seg.data.counters) {
      const RecordedSeries* series = c.series < seg.series.size() ? &seg.series[c.series] : nullptr;
      if (!series || series->pid < 0 || !std::isfinite(c.value) ||
          !place(static_cast<uint32_t>(series->pid), &pid, &delta, &comm)) {
        // Host-wide series (pid -1) are drawn once, on the segment's first aligned rank (not repeated per rank).
        if (series && series->pid < 0 && std::isfinite(c.value) && !shift.empty() && shift.begin()->second) {
          const size_t r = index_of_rank.at(shift.begin()->first);
          w.Event('C', views[r].pid, 0, static_cast<int64_t>(c.ts_ns) + *shift.begin()->second,
                  fmt::format(
                      "\"name\":{},\"cat\":\"strata.recorder\",\"args\":{{\"value\":{}}}",
                      Quote(fmt::format("host {}{}", series->name, series->label.empty() ? "" : " " + series->label)),
                      c.value));
          ++stats->recorder_events;
          continue;
        }
        count_left_out("counter_sample");
        continue;
      }
      w.Event('C', pid, 0, static_cast<int64_t>(c.ts_ns) + delta,
              fmt::format("\"name\":{},\"cat\":\"strata.recorder\",\"args\":{{\"value\":{}}}",
                          Quote(fmt::format("{}{}", series->name, series->label.empty() ? "" : " " + series->label)),
                          c.value));
      ++stats->recorder_events;
    }
  }
}

/// Smallest aligned time of the store's slices and counters and of the recorded events drawn
/// (`recorded_origin`): the written timeline starts at 0 there, no event before it. (Perfetto's JSON reader
/// misreads negative decimals: -5.25 us became -4.75.)
int64_t Origin(const TraceStore& store, const std::vector<RankView>& views, int64_t recorded_origin) {
  int64_t origin = recorded_origin;
  for (size_t i = 0; i < store.slices.size(); ++i)
    origin = std::min(origin, store.slices.ts_ns[i] - views[store.track(store.slices.track[i]).rank].offset_ns);
  for (size_t i = 0; i < store.counters.size(); ++i)
    origin = std::min(origin, store.counters.ts_ns[i] - views[store.track(store.counters.track[i]).rank].offset_ns);
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

std::string OtherData(const TraceStore& store, const diagnosis::DiagnosisResult& result,
                      const SkipCounts& export_skipped, int64_t origin) {
  nlohmann::ordered_json j;
  j["generator"] = "strata export --format perfetto";
  j["time_origin_ns"] = origin;
  j["status"] = diagnosis::VerdictName(result.status);
  nlohmann::ordered_json offsets = nlohmann::ordered_json::object();
  for (const auto& [rank, us] : result.clock_offsets_us) offsets[std::to_string(rank)] = us;
  j["clock_offsets_us"] = offsets;
  j["clock_residual_us"] = result.clock_residual_us;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const InputInfo& in : store.inputs)
    inputs.push_back({{"path", JsonSafe(in.path)},
                      {"format", InputFormatName(in.format)},
                      {"events", in.events},
                      {"skipped", in.skipped.ByKey()}});
  j["inputs"] = inputs;
  j["export_skipped"] = export_skipped.ByKey();
  SkipCounts seen = export_skipped;  // every reason above, with its severity and description
  for (const InputInfo& in : store.inputs) seen.Merge(in.skipped);
  j["skip_reasons"] = SkipReasonsJson(seen);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

Status WritePerfettoJson(const TraceStore& store, const RecordedRun& recorded, const diagnosis::DiagnosisResult& result,
                         const PerfettoSink& sink, const PerfettoExportOptions& options, PerfettoExportStats* stats) {
  PerfettoExportStats local;
  if (!stats) stats = &local;
  const std::vector<RankView> views = RankViews(store, recorded, result);
  const std::vector<int64_t> tids = TrackTids(store);
  const model::JobModel job = model::BuildJobModel(store, SlicesByRank(store));
  SkipCounts skipped;
  const RecorderShifts shifts = ShiftsOfRecording(store, recorded, result, views);
  const std::vector<StallMark> marks = StallMarks(store, recorded, shifts, result, &skipped);
  int64_t drawn_origin = RecordedOrigin(recorded, shifts);
  for (const StallMark& m : marks) drawn_origin = std::min(drawn_origin, m.ts);
  Writer w(Origin(store, views, drawn_origin), sink, options.piece_bytes);
  RecorderTracks tracks(static_cast<int64_t>(store.tracks.size()) + 1);
  int64_t next_id = 1;
  WriteProcessesAndThreads(store, views, tids, w);
  WriteSlices(store, views, tids, w);
  WriteCounters(store, views, w);
  WriteTraceFlows(store, views, tids, SliceIndex(store), w, &next_id, &skipped);
  WriteFindings(store, job, views, tids, result, marks, options, w, &next_id, stats, &skipped);
  WriteRecorder(store, recorded, shifts, views, tracks, w, stats, &skipped);
  WriteStall(marks, views, tracks, w, stats);
  stats->events = w.events();
  return w.Finish(OtherData(store, result, skipped, w.origin()));
}

std::string ExportPerfettoJson(const TraceStore& store, const RecordedRun& recorded,
                               const diagnosis::DiagnosisResult& result, const PerfettoExportOptions& options,
                               PerfettoExportStats* stats) {
  std::string text;
  const PerfettoSink append = [&text](std::string_view bytes) {
    text.append(bytes);
    return Status::Ok();
  };
  (void)WritePerfettoJson(store, recorded, result, append, options, stats);  // appending cannot fail
  return text;
}

}  // namespace strata
