// The CPU stack samples of a recording as a pprof profile (see pprof_export.h).
#include "reports/pprof_export.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "core/robust_stats.h"
#include "pprof_profile.pb.h"
#include "store/stack_frames.h"

namespace strata {
namespace {

constexpr const char* kNoUserStack = "[no user stack]";                 // the sample has none
constexpr const char* kStackNotRecorded = "[user stack not recorded]";  // its id has no "stack" record

// One frame of a merged stack, native or Python (module "" for Python): the key of a pprof location. The
// start line (the function's first line) is known for Python frames only.
struct Frame {
  std::string function, file, module;
  int line = 0;
  int start_line = 0;
  auto Tie() const { return std::tie(function, file, module, line, start_line); }
  bool operator<(const Frame& o) const { return Tie() < o.Tie(); }
};
using Stack = std::vector<Frame>;  // leaf first
using Labels = std::vector<std::pair<std::string, std::string>>;

std::string BaseName(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

Frame NativeFrame(const StackFrame& f) {
  const bool unnamed = f.function.empty() || f.function == "?";
  return {unnamed ? "[" + BaseName(f.module) + "]" : f.function, f.file, f.module, f.line};
}

Frame PythonFrame(const PythonFrameRef& f) {
  return {f.function.empty() ? "?" : f.function, f.file, "", f.line, f.first_line};
}

// The native frames up to the first interpreter frame, the Python frames, then the native frames below the
// last interpreter frame (pprof_export.h); the Python frames at the root end when no native frame is the
// interpreter's. `empty`: the one frame of a sample that has neither.
Stack MergedStack(const std::vector<StackFrame>* native, const std::vector<PythonFrameRef>* python, const char* empty) {
  Stack out;
  const size_t n = native ? native->size() : 0;
  size_t first = n, last = n;
  for (size_t i = 0; i < n; ++i)
    if ((*native)[i].interpreter) {
      if (first == n) first = i;
      last = i;
    }
  const bool py = python != nullptr && !python->empty();
  const auto add_python = [&] {
    for (const PythonFrameRef& f : *python) out.push_back(PythonFrame(f));
  };
  for (size_t i = 0; i < n; ++i) {
    if (py && i == first) add_python();
    if (py && first < n && i >= first && i <= last) continue;
    out.push_back(NativeFrame((*native)[i]));
  }
  if (py && first == n) add_python();
  if (out.empty()) out.push_back({empty, "", "", 0});
  return out;
}

// One sample row of a rank, with its merged stack and where it came from.
struct RankSample {
  const RecordedSegment* seg = nullptr;
  const SampleRow* row = nullptr;
  int32_t rank = 0;
  const Stack* stack = nullptr;
};

// The merged stacks of one segment, made once per (pid, user stack id, Python stack id).
class SegmentStacks {
 public:
  explicit SegmentStacks(const RecordedSegment& seg) : seg_(seg), py_of_sample_(seg.PythonStackOfSamples()) {}

  const Stack& Of(const SampleRow& s) {
    const auto py = py_of_sample_.find({s.tid, s.ts_ns});
    const int32_t py_id = py == py_of_sample_.end() ? -1 : py->second;
    auto [it, inserted] = stacks_.try_emplace({s.tgid, s.user_stack, py_id});
    if (!inserted) return it->second;
    const auto native = s.user_stack >= 0 ? seg_.user_stacks.find({s.tgid, s.user_stack}) : seg_.user_stacks.end();
    const auto python = seg_.python_stacks.find({s.tgid, py_id});
    it->second = MergedStack(native == seg_.user_stacks.end() ? nullptr : &native->second,
                             python == seg_.python_stacks.end() ? nullptr : &python->second,
                             s.user_stack < 0 ? kNoUserStack : kStackNotRecorded);
    return it->second;
  }

 private:
  const RecordedSegment& seg_;
  std::map<std::pair<uint32_t, uint64_t>, int32_t> py_of_sample_;  // (tid, ts) -> py_stack id
  std::map<std::tuple<uint32_t, int32_t, int32_t>, Stack> stacks_;
};

// Calls `visit(const RankSample&)` for every sample row of a process with a rank (of `only`, when set).
template <typename Visit>
void ForEachSample(const RecordedRun& run, std::optional<int32_t> only, Visit&& visit) {
  for (const RecordedSegment& seg : run.segments) {
    SegmentStacks stacks(seg);
    for (const SampleRow& s : seg.data.samples) {
      const std::optional<int> rank = seg.RankOf(s.tgid);
      if (!rank || (only && *rank != *only)) continue;
      visit(RankSample{&seg, &s, *rank, &stacks.Of(s)});
    }
  }
}

double PeriodNs(const RecordedSegment& seg) { return seg.sample_hz > 0 ? 1e9 / seg.sample_hz : 0; }

std::string JobName(const RecordedRun& run, const std::string& given) {
  if (!given.empty()) return given;
  if (run.segments.empty()) return "job";
  const std::string dir = std::filesystem::path(run.segments[0].data.path).parent_path().filename().string();
  return dir.empty() || dir == "." ? std::string("job") : dir;
}

std::string SegmentNames(const RecordedRun& run) {
  std::string names;
  for (const RecordedSegment& seg : run.segments) names += (names.empty() ? "" : ", ") + seg.data.path;
  return names.empty() ? std::string("(no segment)") : names;
}

Expected<std::string> Gzip(const std::string& raw) {
  if (raw.size() > std::numeric_limits<uInt>::max()) return Status::Resource("pprof profile too large to compress");
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return Status::Resource("gzip: cannot initialise zlib");
  std::string out(deflateBound(&z, static_cast<uLong>(raw.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Internal(fmt::format("gzip: zlib failed ({})", rc));
  return out;
}

// Builds one profile.proto message: interns strings, functions, mappings and locations, and sums the values
// of samples with the same stack and labels. `cpu` false: the sampling rate is not known, samples/count only.
class ProfileBuilder {
 public:
  ProfileBuilder(bool cpu, double period_ns) : cpu_(cpu) {
    String("");
    AddValueType(profile_.add_sample_type(), "samples", "count");
    if (cpu_) {
      AddValueType(profile_.add_sample_type(), "cpu", "nanoseconds");
      AddValueType(profile_.mutable_period_type(), "cpu", "nanoseconds");
      profile_.set_period(std::llround(period_ns));
      profile_.set_default_sample_type(String("cpu"));
    } else {
      AddValueType(profile_.mutable_period_type(), "samples", "count");
      profile_.set_period(1);
      profile_.add_comment(String("the recording does not say its sampling rate: samples only, no CPU time"));
    }
  }

  void Add(const Stack& stack, const Labels& labels, double samples, double cpu_ns) {
    std::vector<uint64_t> ids;
    ids.reserve(stack.size());
    for (const Frame& f : stack) ids.push_back(LocationOf(f));
    auto [it, inserted] = samples_.try_emplace({std::move(ids), labels}, values_.size());
    if (inserted) {
      keys_.push_back(&it->first);
      values_.push_back({0, 0});
    }
    values_[it->second].first += samples;
    values_[it->second].second += cpu_ns;
  }

  void AddComment(const std::string& text) { profile_.add_comment(String(text)); }

  Expected<std::string> Gzipped(int64_t time_ns, int64_t duration_ns) {
    for (size_t i = 0; i < keys_.size(); ++i) WriteSample(keys_[i]->first, keys_[i]->second, values_[i]);
    profile_.set_time_nanos(time_ns);
    profile_.set_duration_nanos(duration_ns);
    std::string raw;
    if (!profile_.SerializeToString(&raw)) return Status::Internal("pprof: the profile could not be serialized");
    return Gzip(raw);
  }

 private:
  int64_t String(const std::string& s) {
    auto [it, inserted] = strings_.try_emplace(s, profile_.string_table_size());
    if (inserted) profile_.add_string_table(s);
    return it->second;
  }

  void AddValueType(pprof::ValueType* v, const std::string& type, const std::string& unit) {
    v->set_type(String(type));
    v->set_unit(String(unit));
  }

  uint64_t MappingOf(const std::string& module) {
    if (module.empty()) return 0;
    auto [it, inserted] = mappings_.try_emplace(module, mappings_.size() + 1);
    if (inserted) {
      pprof::Mapping* m = profile_.add_mapping();
      m->set_id(it->second);
      m->set_filename(String(module));
      m->set_has_functions(true);
    }
    return it->second;
  }

  uint64_t FunctionOf(const Frame& f) {
    // A Python function is also told apart by its first line (two lambdas of one file share their name).
    auto [it, inserted] =
        functions_.try_emplace(std::tie(f.function, f.file, f.module, f.start_line), functions_.size() + 1);
    if (inserted) {
      pprof::Function* fn = profile_.add_function();
      fn->set_id(it->second);
      fn->set_name(String(f.function));
      fn->set_system_name(String(f.function));
      fn->set_filename(String(f.file));
      if (f.module.empty()) fn->set_start_line(f.start_line);  // Python: the function's first line
    }
    return it->second;
  }

  uint64_t LocationOf(const Frame& f) {
    auto [it, inserted] = locations_.try_emplace(f, locations_.size() + 1);
    if (inserted) {
      pprof::Location* loc = profile_.add_location();
      loc->set_id(it->second);
      loc->set_mapping_id(MappingOf(f.module));
      pprof::Line* line = loc->add_line();
      line->set_function_id(FunctionOf(f));
      line->set_line(f.line);
    }
    return it->second;
  }

  void WriteSample(const std::vector<uint64_t>& ids, const Labels& labels, std::pair<double, double> values) {
    pprof::Sample* s = profile_.add_sample();
    for (uint64_t id : ids) s->add_location_id(id);
    s->add_value(std::llround(values.first));
    if (cpu_) s->add_value(std::llround(values.second));
    for (const auto& [key, value] : labels) {
      pprof::Label* l = s->add_label();
      l->set_key(String(key));
      l->set_str(String(value));
    }
  }

  bool cpu_;
  pprof::Profile profile_;
  std::map<std::string, int64_t> strings_;
  std::map<std::tuple<std::string, std::string, std::string, int>, uint64_t> functions_;
  std::map<std::string, uint64_t> mappings_;
  std::map<Frame, uint64_t> locations_;
  using SampleKey = std::pair<std::vector<uint64_t>, Labels>;  // location ids, labels
  std::map<SampleKey, size_t> samples_;                        // -> index in keys_ and values_
  std::vector<const SampleKey*> keys_;                         // in order of first use
  std::vector<std::pair<double, double>> values_;              // samples, cpu ns
};

// Whether every segment with selected samples says its rate, the profile's period (the first such
// segment's), and the time span of the samples on the Unix clock.
struct SampleSpan {
  bool rates_known = true;
  double period_ns = 0;
  int64_t first_ns = std::numeric_limits<int64_t>::max(), last_ns = std::numeric_limits<int64_t>::min();
  size_t rows = 0;

  void Add(const RankSample& s) {
    const double period = PeriodNs(*s.seg);
    rates_known &= period > 0;
    if (period_ns == 0) period_ns = period;
    const int64_t at = s.seg->UnixNs(s.row->ts_ns);
    first_ns = std::min(first_ns, at);
    last_ns = std::max(last_ns, at);
    ++rows;
  }
  int64_t duration_ns() const { return rows == 0 ? 0 : last_ns - first_ns; }
};

Labels SampleLabels(const std::string& job, const RankSample& s) {
  Labels labels = {{"job", job},
                   {"rank", std::to_string(s.rank)},
                   {"pid", std::to_string(s.row->tgid)},
                   {"tid", std::to_string(s.row->tid)}};
  if (!s.seg->host.empty()) labels.emplace_back("host", s.seg->host);
  return labels;
}

Status NoSamples(const RecordedRun& run, std::optional<int32_t> rank) {
  if (rank)
    return Status::Usage(
        fmt::format("{}: rank {} has no CPU stack samples in the recording", SegmentNames(run), *rank));
  return Status::Unsupported(
      fmt::format("{}: the recording holds no CPU stack samples of a rank's process (recorded with --sample-hz 0, "
                  "or no process with a rank ran on a CPU): no pprof profile to write",
                  SegmentNames(run)));
}

}  // namespace

std::set<int32_t> RanksWithSamples(const RecordedRun& run) {
  std::set<int32_t> ranks;
  for (const RecordedSegment& seg : run.segments)
    for (const SampleRow& s : seg.data.samples)
      if (const std::optional<int> rank = seg.RankOf(s.tgid)) ranks.insert(*rank);
  return ranks;
}

Expected<std::string> PprofProfile(const RecordedRun& run, const PprofOptions& options) {
  SampleSpan span;  // first pass: the sample types depend on every segment's rate
  ForEachSample(run, options.rank, [&](const RankSample& s) { span.Add(s); });
  if (span.rows == 0) return NoSamples(run, options.rank);
  const std::string job = JobName(run, options.job);
  ProfileBuilder builder(span.rates_known, span.period_ns);
  ForEachSample(run, options.rank,
                [&](const RankSample& s) { builder.Add(*s.stack, SampleLabels(job, s), 1, PeriodNs(*s.seg)); });
  return builder.Gzipped(span.first_ns, span.duration_ns());
}

Expected<std::string> PprofPeersMedian(const RecordedRun& run, int32_t straggler, const std::string& job_name) {
  std::map<int32_t, std::map<Stack, std::pair<double, double>>> by_rank;  // peer -> stack -> samples, cpu ns
  SampleSpan span;
  bool straggler_sampled = false;
  ForEachSample(run, std::nullopt, [&](const RankSample& s) {
    if (s.rank == straggler) {
      straggler_sampled = true;
      return;
    }
    span.Add(s);
    auto& v = by_rank[s.rank][*s.stack];
    v.first += 1;
    v.second += PeriodNs(*s.seg);
  });
  if (!straggler_sampled) return NoSamples(run, straggler);
  if (by_rank.empty())
    return Status::Unsupported(fmt::format("{}: no rank but {} has CPU stack samples: no peers to compare it with",
                                           SegmentNames(run), straggler));
  std::set<Stack> stacks;
  std::string peers;
  for (const auto& [rank, counts] : by_rank) {
    peers += (peers.empty() ? "" : ", ") + std::to_string(rank);
    for (const auto& entry : counts) stacks.insert(entry.first);
  }
  const std::string job = JobName(run, job_name);
  const Labels labels = {{"job", job}, {"peers", "median of ranks " + peers}};
  ProfileBuilder builder(span.rates_known, span.period_ns);
  builder.AddComment(
      fmt::format("the median over ranks {} of each stack's samples: the peers of rank {}", peers, straggler));
  for (const Stack& stack : stacks) {
    std::vector<double> samples, cpu;
    for (const auto& [rank, counts] : by_rank) {
      const auto it = counts.find(stack);
      samples.push_back(it == counts.end() ? 0 : it->second.first);
      cpu.push_back(it == counts.end() ? 0 : it->second.second);
    }
    const double median = Median(samples);
    if (median > 0) builder.Add(stack, labels, median, Median(cpu));
  }
  return builder.Gzipped(span.first_ns, span.duration_ns());
}

}  // namespace strata
