// Kineto JSON writer for synthetic ranks (see kineto_writer.h).
#include "synth/kineto_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iterator>

namespace strata::synth {

namespace {

const char* Category(SynthEvent::Kind k) {
  switch (k) {
    case SynthEvent::Kind::kCpuOp:
      return "cpu_op";
    case SynthEvent::Kind::kUserAnnotation:
      return "user_annotation";
    case SynthEvent::Kind::kRuntime:
      return "cuda_runtime";
    case SynthEvent::Kind::kKernel:
      return "kernel";
    case SynthEvent::Kind::kMemcpy:
      return "gpu_memcpy";
    case SynthEvent::Kind::kMemset:
      return "gpu_memset";
    case SynthEvent::Kind::kCounter:
      return "counter";
  }
  return "";
}

}  // namespace

KinetoWriter::~KinetoWriter() {
  if (file_) std::fclose(file_);
  if (gz_) gzclose(gz_);
}

Status KinetoWriter::Open(const std::string& path, bool gzip, const RankHeader& header) {
  path_ = path;
  h_ = header;
  if (gzip) {
    gz_ = gzopen(path.c_str(), "wb3");
    if (gz_) gzbuffer(gz_, 1 << 17);
  } else {
    file_ = std::fopen(path.c_str(), "wb");
  }
  if (!file_ && !gz_) return Status::Resource(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  Write(fmt::format(
      "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {{\"id\": {}, \"name\": \"NVIDIA H100 80GB HBM3\", "
      "\"totalGlobalMem\": 85029158912, \"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
      "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": 49152, "
      "\"numSms\": 132}}\n  ],\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {}}},\n"
      "  \"record_shapes\": 0,\n  \"with_stack\": 0,\n  \"trace_id\": \"synth-{}\",\n"
      "  \"baseTimeNanoseconds\": {},\n  \"traceEvents\": [\n",
      h_.device, h_.rank, h_.world, h_.rank, kBaseTimeNs));
  Write(fmt::format(
      "  {{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"tid\": 0, \"args\": {{\"name\": \"python3\"}}}},\n"
      "  {{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, \"args\": {{\"name\": \"thread {} "
      "(python3)\"}}}},\n"
      "  {{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"tid\": 0, \"args\": {{\"name\": \"GPU {}\"}}}}",
      h_.pid, h_.pid, h_.pid, h_.pid, h_.device, h_.device));
  first_ = false;
  return error_.empty() ? Status::Ok() : Status::Resource(error_);
}

void KinetoWriter::Time(int64_t ns) {
  const int64_t t = ns + kOriginNs + h_.offset_ns;
  fmt::format_to(std::back_inserter(buf_), "{}.{:03}", t / 1000, t % 1000);
}

void KinetoWriter::Emit(const SynthEvent& e) {
  if (!error_.empty() || (!file_ && !gz_)) return;
  buf_ += first_ ? "  " : ",\n  ";
  first_ = false;
  const bool device =
      e.kind == SynthEvent::Kind::kKernel || e.kind == SynthEvent::Kind::kMemcpy || e.kind == SynthEvent::Kind::kMemset;
  if (e.kind == SynthEvent::Kind::kCounter) {
    fmt::format_to(std::back_inserter(buf_),
                   "{{\"ph\": \"C\", \"cat\": \"counter\", \"name\": \"{}\", \"pid\": {}, \"ts\": ", e.name, h_.pid);
    Time(e.ts_ns);
    fmt::format_to(std::back_inserter(buf_), ", \"args\": {{\"value\": {:.1f}}}}}", e.value);
  } else {
    const int64_t pid = device ? h_.device : h_.pid;
    const int64_t tid = device ? e.stream : h_.pid;
    fmt::format_to(std::back_inserter(buf_),
                   "{{\"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": {}, \"tid\": {}, \"ts\": ",
                   Category(e.kind), e.name, pid, tid);
    Time(e.ts_ns);
    fmt::format_to(std::back_inserter(buf_), ", \"dur\": {}.{:03}, \"args\": {{", e.dur_ns / 1000, e.dur_ns % 1000);
    switch (e.kind) {
      case SynthEvent::Kind::kCpuOp:
      case SynthEvent::Kind::kUserAnnotation:
        if (e.correlation >= 0) fmt::format_to(std::back_inserter(buf_), "\"External id\": {}", e.correlation);
        break;
      case SynthEvent::Kind::kRuntime:
        fmt::format_to(std::back_inserter(buf_), "\"External id\": {}, \"cbid\": {}, \"correlation\": {}",
                       e.correlation, e.flow ? 211 : 131, e.correlation);
        break;
      default:
        fmt::format_to(std::back_inserter(buf_),
                       "\"External id\": {}, \"queued\": 0, \"device\": {}, \"context\": 1, \"stream\": {}, "
                       "\"correlation\": {}",
                       e.correlation, h_.device, e.stream, e.correlation);
        if (e.kind == SynthEvent::Kind::kKernel)
          buf_ += ", \"registers per thread\": 96, \"grid\": [132, 1, 1], \"block\": [256, 1, 1]";
        if (e.coll) {
          const CollArgs& c = *e.coll;
          fmt::format_to(std::back_inserter(buf_),
                         ", \"Collective name\": \"{}\", \"In msg nelems\": {}, \"Out msg nelems\": {}, "
                         "\"Group size\": {}, \"dtype\": \"BFloat16\", \"In split size\": \"[]\", "
                         "\"Out split size\": \"[]\", \"Process Group Name\": \"{}\", "
                         "\"Process Group Description\": \"{}\", \"Process Group Ranks\": \"{}\"",
                         c.collective, c.nelems, c.nelems, c.group_size, c.group_id, c.group_desc, c.ranks);
        }
        break;
    }
    buf_ += "}}";
    if (e.kind == SynthEvent::Kind::kRuntime && e.flow) {
      fmt::format_to(std::back_inserter(buf_),
                     ",\n  {{\"ph\": \"s\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": ", e.correlation, h_.pid,
                     h_.pid);
      Time(e.ts_ns);
      buf_ += ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}";
    } else if (device) {
      fmt::format_to(std::back_inserter(buf_),
                     ",\n  {{\"ph\": \"f\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": ", e.correlation, h_.device,
                     e.stream);
      Time(e.ts_ns);
      buf_ += ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}";
    }
  }
  if (buf_.size() >= kFlushBytes) Flush();
}

void KinetoWriter::Write(std::string_view s) {
  buf_ += s;
  if (buf_.size() >= kFlushBytes) Flush();
}

void KinetoWriter::Flush() {
  if (buf_.empty() || !error_.empty()) {
    buf_.clear();
    return;
  }
  bool ok;
  if (gz_) {
    ok = gzwrite(gz_, buf_.data(), static_cast<unsigned>(buf_.size())) == static_cast<int>(buf_.size());
  } else {
    ok = std::fwrite(buf_.data(), 1, buf_.size(), file_) == buf_.size();
  }
  if (!ok) error_ = fmt::format("cannot write {}: {}", path_, std::strerror(errno));
  bytes_ += buf_.size();
  buf_.clear();
}

Status KinetoWriter::Finish() {
  if (!file_ && !gz_) return error_.empty() ? Status::Ok() : Status::Resource(error_);
  Write(fmt::format("\n  ],\n  \"traceName\": \"rank-{}\",\n  \"displayTimeUnit\": \"ms\"\n}}\n", h_.rank));
  Flush();
  if (gz_) {
    if (gzclose(gz_) != Z_OK && error_.empty()) error_ = fmt::format("cannot write {}", path_);
    gz_ = nullptr;
  }
  if (file_) {
    if (std::fclose(file_) != 0 && error_.empty())
      error_ = fmt::format("cannot write {}: {}", path_, std::strerror(errno));
    file_ = nullptr;
  }
  return error_.empty() ? Status::Ok() : Status::Resource(error_);
}

}  // namespace strata::synth
