// JobLoader implementation: a pool of worker threads pulls file indices; results are merged in order.
#include "importers/job_loader.h"
#include "importers/recording_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "core/memory_limit.h"
#include "importers/byte_source.h"
#include "importers/flight_recorder_importer.h"
#include "importers/kineto_importer.h"
#include "importers/nsys_importer.h"
#include "importers/op_table_importer.h"
#include "importers/rank_inference.h"
#include "importers/recording_tables.h"
#include "importers/segment_index.h"
#include "importers/sniff.h"
#include "importers/time_unit_check.h"
#include "segments/segment_reader.h"

namespace strata {

namespace fs = std::filesystem;

namespace {

bool LooksLikeTraceName(const std::string& name) {
  return name.find(".json") != std::string::npos || name.find(".csv") != std::string::npos ||
         name.ends_with(".sqlite") || name.ends_with(segments::kFileSuffix);
}

// A file of a directory whose name says nothing (torch names a Flight Recorder dump PREFIX + rank, no suffix)
// but whose first bytes, once decompressed when gzip, are a dump's (a pickle, or a JSON object whose first key
// is a dump's): a dump to read. At most 256 bytes of content are read.
bool StartsLikeDump(const fs::path& path) {
  auto source = ByteSource::Open(path.string());
  if (!source.ok()) return false;
  auto head = source.value()->Peek(256);
  return head.ok() && LooksLikeFlightRecorderDump(head.value());
}

// Reads the rest of a source whose first bytes were sniffed as a segment (segments are never compressed).
Expected<segments::SegmentData> ReadSegmentFromSource(ByteSource& source) {
  std::string content;
  for (;;) {
    const size_t old = content.size();
    content.resize(old + (1 << 20));
    auto got = source.Read(content.data() + old, 1 << 20);
    if (!got.ok()) return got.status();
    content.resize(old + got.value());
    if (got.value() == 0) break;
    if (content.size() > segments::kMaxSegmentBytes)
      return Status::BadInput(fmt::format("{}: larger than {} bytes: not a segment strata record writes", source.path(),
                                          segments::kMaxSegmentBytes));
  }
  return segments::ParseSegment(content, source.path());
}

// What sniffing a file the user named found: a segment (read whole), or a trace to import. A trace that
// is standard input or not a regular file (a pipe, FIFO, process substitution) keeps its open source, so
// that it is read once; a regular file is closed and reopened by the worker that imports it.
struct Sniffed {
  std::optional<Expected<segments::SegmentData>> segment;
  std::unique_ptr<ByteSource> source;
};

Expected<Sniffed> SniffNamedInput(const InputFile& file) {
  Sniffed sniffed;
  if (file.path.ends_with(segments::kFileSuffix)) {
    sniffed.segment = segments::ReadSegment(file.path);
    return sniffed;
  }
  if (file.from_directory) return sniffed;
  auto src = ByteSource::Open(file.path);
  if (!src.ok()) return src.status();
  auto head = src.value()->PeekRaw(8);
  if (!head.ok()) return head.status();
  if (segments::LooksLikeSegment(head.value())) {
    sniffed.segment = ReadSegmentFromSource(*src.value());
  } else if (!src.value()->regular_file() || file.path == ByteSource::kStdinPath) {
    sniffed.source = std::move(src).value();
  }
  return sniffed;
}

struct FileResult {
  std::optional<TraceStore> store;
  Status error;  // why `store` is empty
  // An importer found the file readable but no trace (a truth.json beside traces): passed over in a folder. Not
  // set for bytes no importer recognises (kNotATrace too, but an error even in a folder, as it always was).
  bool not_a_trace = false;
  bool out_of_memory = false;  // the file crossed --max-memory: the files after it were not read
  uint64_t input_bytes = 0;
  uint64_t content_bytes = 0;
};

FileResult ImportSource(const std::string& path, std::unique_ptr<ByteSource> opened, const ImportOptions& options);

FileResult OutOfMemory(const std::string& path, const std::exception& e) {
  FileResult result;
  result.out_of_memory = true;
  result.error = Status::Resource(fmt::format(
      "{}: out of memory while reading it ({}): the job needs more than {} allows (raise --max-memory, or give "
      "fewer ranks or steps)",
      path == ByteSource::kStdinPath ? ByteSource::kStdinName : path, e.what(), DescribeMemoryLimit()));
  return result;
}

// Imports one trace file from `opened` when sniffing kept it open, else opens `path`. Running out of
// memory (the --max-memory limit: an allocation, or a parser thread's stack) is an error naming the file,
// not an abort.
FileResult ImportOne(const std::string& path, std::unique_ptr<ByteSource> opened, const ImportOptions& options) {
  try {
    return ImportSource(path, std::move(opened), options);
  } catch (const std::bad_alloc& e) {
    return OutOfMemory(path, e);
  } catch (const std::system_error& e) {
    return OutOfMemory(path, e);
  }
}

// An SQLite file (an Nsight Systems export) is read by SQLite from its path: it must be a regular file as
// written, not compressed nor a pipe.
Expected<TraceStore> ImportSqlite(ByteSource& source, const ImportOptions& options) {
  if (source.compressed())
    return Status::Unsupported(
        fmt::format("{}: a compressed SQLite file: decompress it first (SQLite reads the file itself)", source.path()));
  if (!source.regular_file() || source.path() == ByteSource::kStdinName)
    return Status::Unsupported(
        fmt::format("{}: an SQLite file must be given as a file on disk, not a pipe", source.path()));
  return ImportNsysSqlite(source.path(), options);
}

FileResult ImportSource(const std::string& path, std::unique_ptr<ByteSource> opened, const ImportOptions& options) {
  FileResult result;
  if (!opened) {
    auto src = ByteSource::Open(path);
    if (!src.ok()) {
      result.error = src.status();
      return result;
    }
    opened = std::move(src).value();
  }
  ByteSource& source = *opened;
  auto head = source.Peek(4096);
  if (!head.ok()) {
    result.error = head.status();
    return result;
  }
  if (head.value().empty()) {
    result.error = Status::BadInput(
        fmt::format("{}: empty file{}", source.path(), source.compressed() ? " (once decompressed)" : ""),
        ErrorPlace{source.path()});
    return result;
  }
  Expected<TraceStore> store = Status::Internal("no format was sniffed");
  switch (SniffFormat(head.value())) {
    case SniffedFormat::kFlightRecorderDump:
      store = ImportFlightRecorder(source);
      break;
    case SniffedFormat::kChromeJson:
      store = ImportKineto(source, options);
      break;
    case SniffedFormat::kOpTableCsv:
      store = ImportOpTable(source, options);
      break;
    case SniffedFormat::kSqlite:
      store = ImportSqlite(source, options);
      break;
    case SniffedFormat::kUnknown: {
      std::string shown;
      for (char c : head.value().substr(0, 16)) shown += (c >= 32 && c < 127) ? c : '.';
      result.error = Status::NotATrace(
          fmt::format("{}: unrecognised format (not Kineto/Chrome JSON, an op-table CSV nor an Nsight Systems SQLite "
                      "export; first bytes: \"{}\")",
                      source.path(), shown),
          ErrorPlace{source.path()});
      return result;
    }
  }
  result.input_bytes = source.compressed() ? source.compressed_bytes_read() : source.bytes_produced();
  result.content_bytes = source.bytes_produced();
  if (store.ok() && !store.value().inputs.empty() && store.value().inputs[0].format == InputFormat::kNsysSqlite) {
    std::error_code ec;  // SQLite read the file itself: its size is what was read
    result.input_bytes = result.content_bytes = fs::file_size(source.path(), ec);
  }
  if (!store.ok()) {
    result.error = store.status();
    result.not_a_trace = store.status().kind() == ErrorKind::kNotATrace;
    return result;
  }
  result.store = std::move(store).value();
  return result;
}

/// Adds the trace files under `dir` (hidden entries skipped). A subdirectory that cannot be listed, or a
/// symbolic link to a directory (not followed: links can loop), is added with `left_out` saying why, so that
/// nothing under a given directory is left out without the result saying so.
Status ListDirectory(const fs::path& dir, int depth, std::vector<InputFile>* out) {
  constexpr int kMaxDepth = 64;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Status::Resource(fmt::format("{}: cannot list directory: {}", dir.string(), ec.message()));
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return Status::Resource(fmt::format("{}: cannot list directory: {}", dir.string(), ec.message()));
    const fs::path path = it->path();
    const std::string name = path.filename().string();
    if (!name.empty() && name[0] == '.') continue;
    std::error_code sec;
    const bool link = it->is_symlink(sec);
    const bool is_dir = it->is_directory(sec);
    if (is_dir && link) {
      out->push_back(
          InputFile{path.string(), true, "a symbolic link to a directory (not followed: give it as an input)"});
    } else if (is_dir) {
      std::error_code lec;
      fs::directory_iterator probe(path, lec);
      if (lec) {
        out->push_back(InputFile{path.string(), true, "cannot list directory: " + lec.message()});
      } else if (depth >= kMaxDepth) {
        out->push_back(InputFile{path.string(), true, "directories nest too deep"});
      } else if (Status st = ListDirectory(path, depth + 1, out); !st.ok()) {
        out->push_back(InputFile{path.string(), true, st.message()});
      }
    } else if (it->is_regular_file(sec) && (LooksLikeTraceName(name) || StartsLikeDump(path))) {
      out->push_back(InputFile{path.string(), true, ""});
    }
  }
  return Status::Ok();
}

}  // namespace

namespace {

// An error when one file is named twice (the same path, or another name of it: a link, a folder holding it):
// read twice, its ranks would be claimed twice. Standard input is checked by ExpandInputs.
Status NoFileTwice(const std::vector<InputFile>& files) {
  std::map<std::string, std::string> first;  // canonical path -> as first named
  for (const InputFile& f : files) {
    if (f.path == ByteSource::kStdinPath) continue;
    std::error_code ec;
    const std::string key = fs::weakly_canonical(f.path, ec).string();
    if (ec) continue;
    auto [it, inserted] = first.emplace(key, f.path);
    if (inserted) continue;
    if (it->second == f.path) return Status::Usage(fmt::format("{}: the same file is given twice", f.path));
    return Status::Usage(fmt::format("{}: the same file is given twice (also as {})", f.path, it->second));
  }
  return Status::Ok();
}

}  // namespace

Expected<std::vector<InputFile>> ExpandInputs(const std::vector<std::string>& paths) {
  std::vector<InputFile> files;
  bool stdin_named = false;
  for (const auto& p : paths) {
    if (p == ByteSource::kStdinPath) {
      if (stdin_named) return Status::Usage("standard input (-) is named twice: it can be read only once");
      stdin_named = true;
      files.push_back(InputFile{p, false});
      continue;
    }
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status)) return Status::Resource(fmt::format("{}: no such file or directory", p));
    if (fs::is_directory(status)) {
      std::vector<InputFile> found;
      if (Status st = ListDirectory(p, 0, &found); !st.ok()) return st;
      if (found.empty()) {
        return Status::NotATrace(
            fmt::format("{}: directory holds no trace files (*.json, *.json.gz, *.csv, *.csv.gz, *.sqlite, *.sseg, "
                        "Flight Recorder dumps)",
                        p),
            ErrorPlace{p});
      }
      std::sort(found.begin(), found.end(), [](const InputFile& a, const InputFile& b) { return a.path < b.path; });
      for (auto& f : found) files.push_back(std::move(f));
    } else {
      files.push_back(InputFile{p, false});
    }
  }
  if (Status st = NoFileTwice(files); !st.ok()) return st;
  return files;
}

/// A file's rank from a recording of the same run: the pid in a tensorboard_trace_handler name, else the
/// pids of the trace's CPU threads, looked up among the recorded processes (one rank, or none).
std::optional<std::pair<int, std::string>> RankFromRecording(const RecordedRun& recorded, const TraceStore& store,
                                                             const std::string& path) {
  if (recorded.empty()) return std::nullopt;
  if (auto pid = PidFromTensorboardName(path))
    if (auto rank = recorded.RankOfPid(*pid)) return std::make_pair(*rank, std::string("recording (pid in file name)"));
  std::set<int> ranks;
  for (const Track& t : store.tracks)
    if (t.kind == TrackKind::kCpuThread && t.stream < 0)
      if (auto rank = recorded.RankOfPid(t.pid)) ranks.insert(*rank);
  if (ranks.size() == 1) return std::make_pair(*ranks.begin(), std::string("recording (trace pid)"));
  return std::nullopt;
}

// The inputs sorted by kind: trace files (with their sniffed, still open sources) and the recorder's
// segments, indexed; what was left out and the notes about the segments.
struct SortedInputs {
  std::vector<std::string> files;
  std::vector<InputFile> trace_inputs;
  std::vector<std::unique_ptr<ByteSource>> opened;  // per trace file: kept open by sniffing, or null
  RecordedRun recorded;
  std::vector<std::string> segment_notes;
  std::vector<UnreadableInput> unlisted;
};

Expected<SortedInputs> SortInputs(const std::vector<InputFile>& expanded, const LoadOptions& options) {
  SortedInputs in;
  for (const InputFile& f : expanded) {
    if (!f.left_out.empty()) {
      if (!options.skip_unreadable)
        return Status::Resource(
            fmt::format("{}: {} (--skip-unreadable leaves it out, and says so)", f.path, f.left_out));
      in.unlisted.push_back({f.path, f.path + ": " + f.left_out, Status::Resource(f.path + ": " + f.left_out)});
      continue;
    }
    auto sniffed = SniffNamedInput(f);
    if (!sniffed.ok()) {
      if (!options.skip_unreadable) return sniffed.status();
      in.unlisted.push_back({f.path, sniffed.error(), sniffed.status()});
      continue;
    }
    if (!sniffed.value().segment) {
      in.files.push_back(f.path);
      in.trace_inputs.push_back(f);
      in.opened.push_back(std::move(sniffed.value().source));
      continue;
    }
    auto& segment = *sniffed.value().segment;
    if (!segment.ok()) {
      if (!options.skip_unreadable) return segment.status();
      in.segment_notes.push_back(segment.error());
      continue;
    }
    for (const std::string& problem : segment.value().problems) in.segment_notes.push_back(f.path + ": " + problem);
    in.recorded.segments.push_back(IndexSegment(std::move(segment).value()));
    for (const std::string& gap : in.recorded.segments.back().gaps) in.segment_notes.push_back(f.path + ": " + gap);
    if (!in.recorded.segments.back().finished)
      in.segment_notes.push_back(f.path +
                                 ": cut short (no closing record: the recorder was killed or could not "
                                 "write); its data ends at the last complete block");
  }
  MergePluginSegments(&in.recorded);
  if (in.recorded.segments.size() == 1)
    if (const std::optional<int> root = TakeRootAsRankZero(&in.recorded.segments[0]))
      in.segment_notes.push_back(fmt::format(
          "{}: no recorded process has a rank variable (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK): "
          "the recorded command (pid {}) is rank 0, one rank with nothing to compare it with",
          in.recorded.segments[0].data.path, *root));
  return in;
}

// The threads a load uses: --threads, else one per core.
unsigned LoadThreads(const LoadOptions& options) {
  return options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
}

// Imports every trace file on a pool of threads (with fewer files than cores, each file gets a second thread:
// read/split vs parse). The events kept by all files read so far count against --max-memory: past it, the
// file that crossed it is an error naming it and the files not yet started are not read (over_budget).
std::vector<FileResult> ImportAll(SortedInputs& in, const LoadOptions& options, bool* over_budget_out) {
  const std::vector<std::string>& files = in.files;
  unsigned threads = LoadThreads(options);
  ImportOptions import_options = options.import;
  import_options.pipeline = files.size() < threads;
  threads = std::min<unsigned>(threads, static_cast<unsigned>(files.size()));
  std::vector<FileResult> results(files.size());
  std::atomic<size_t> next{0}, finished{0};
  std::mutex progress_mutex;
  const auto started = std::chrono::steady_clock::now();
  auto last_report = started;
  std::atomic<uint64_t> kept_bytes{0};
  std::atomic<bool> over_budget{false};
  auto worker = [&]() {
    for (size_t i = next++; i < files.size(); i = next++) {
      if (over_budget) {
        results[i].error = Status::Resource(
            fmt::format("{}: not read: the files before it already filled {}", files[i], DescribeMemoryLimit()));
        continue;
      }
      results[i] = ImportOne(files[i], std::move(in.opened[i]), import_options);
      if (results[i].out_of_memory) over_budget = true;
      if (results[i].store && options.max_memory_bytes > 0) {
        const uint64_t total = kept_bytes += results[i].store->memory_bytes();
        if (total > options.max_memory_bytes) {
          over_budget = true;
          results[i].out_of_memory = true;
          results[i].store.reset();
          results[i].error = Status::Resource(
              fmt::format("{}: the job's events take {} MiB once this file is read, more than {} allows (raise "
                          "--max-memory, or give fewer ranks or steps)",
                          files[i], total >> 20, DescribeMemoryLimit()));
        }
      }
      const size_t done = ++finished;
      if (options.on_progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::milliseconds(500) || done == files.size()) {
          last_report = now;
          options.on_progress(fmt::format("read {}/{} files ({:.1f} s)", done, files.size(),
                                          std::chrono::duration<double>(now - started).count()));
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // no memory for another thread's stack (a low --max-memory): fewer threads do the same work
    }
  }
  worker();
  ReleaseImportScratch();  // the pool's threads free theirs as they exit
  for (auto& t : pool) t.join();
  *over_budget_out = over_budget;
  return results;
}

// Gives each rank of one imported file its number: --rank-map, the file's own distributedInfo, the file
// name, the recording, or rank 0 for a lone file; a rank two files claim is an error.
bool NsysExport(const TraceStore& store) {
  return !store.inputs.empty() && store.inputs[0].format == InputFormat::kNsysSqlite;
}

// A file that holds several ranks without numbers of their own (an Nsight Systems export of several processes or
// GPUs: one rank per process and GPU, in (pid, device) order) is numbered 0, 1, ... in that order, alone or beside
// other inputs (which add their own ranks; a rank two inputs claim is the usual error, AssignRanks). Any other file
// is left as it is.
void NumberRanksInFileOrder(TraceStore& store) {
  if (store.ranks.size() < 2) return;
  for (const RankInfo& rank : store.ranks)
    if (rank.rank >= 0) return;
  for (size_t i = 0; i < store.ranks.size(); ++i) {
    store.ranks[i].rank = static_cast<int32_t>(i);
    store.ranks[i].rank_source = "process and GPU order";
  }
}

// The error for a rank two trace files claim. Files of two folders are likely two runs of one job (a
// before and after, as HTA's trace_compare): the error says to compare them with `strata diff` then.
std::string RankClaimedTwice(int rank, const std::string& first, const std::string& second) {
  const fs::path a = fs::path(first).parent_path(), b = fs::path(second).parent_path();
  if (a == b)
    return fmt::format("rank {} is claimed by two inputs: {} and {} (use --rank-map to say which file is which rank)",
                       rank, first, second);
  return fmt::format(
      "rank {} is claimed by two inputs: {} and {}; if the two folders are two runs of the job, compare them with "
      "`strata diff {} {}`; if they are one run, use --rank-map to say which file is which rank",
      rank, first, second, a.empty() ? "." : a.string(), b.empty() ? "." : b.string());
}

void AssignRanks(TraceStore& store, const std::string& file, size_t file_count, const LoadOptions& options,
                 const RecordedRun& recorded, std::map<int, std::string>* owner, std::vector<Status>* errors) {
  NumberRanksInFileOrder(store);
  for (RankInfo& rank : store.ranks) {
    if (auto mapped = LookupRankMap(options.rank_map, file)) {
      if (store.ranks.size() > 1) {
        errors->push_back(Status::Usage(
            fmt::format("{}: --rank-map cannot set the rank of a file that holds {} ranks", file, store.ranks.size())));
        return;
      }
      rank.rank = *mapped;
      rank.rank_source = "rank map";
    } else if (rank.rank < 0) {
      if (auto from_name = RankFromFileName(file)) {
        rank.rank = *from_name;
        rank.rank_source = "file name";
      } else if (auto trailing = NsysExport(store) ? RankFromTrailingNumber(file) : std::nullopt) {
        rank.rank = *trailing;
        rank.rank_source = "file name (its last number)";
      } else if (auto from_recording = RankFromRecording(recorded, store, file)) {
        rank.rank = from_recording->first;
        rank.rank_source = from_recording->second;
      } else if (file_count == 1) {
        rank.rank = 0;
        rank.rank_source = "only file";
      } else {
        const auto pid = PidFromTensorboardName(file);
        errors->push_back(Status::BadInput(fmt::format(
            "{}: cannot tell which rank this file is: it has no distributedInfo.rank and its name has no rank "
            "number (like rank-3 or worker3){}; give --rank-map {}=RANK",
            file,
            pid ? fmt::format(" and its process {} is in no recording given (add the run's strata record segments)",
                              *pid)
                : std::string(),
            fs::path(file).filename().string())));
        continue;
      }
    }
    auto [it, inserted] = owner->emplace(rank.rank, file);
    if (!inserted) errors->push_back(Status::BadInput(RankClaimedTwice(rank.rank, it->second, file)));
  }
}

// A Flight Recorder dump's rank: --rank-map, else the dump's own `rank` key or its file name (the decoder's), else
// an error; a rank two dumps claim is an error. Dumps are numbered apart from traces (they are not mixed).
void AssignDumpRank(TraceStore& store, const std::string& file, const LoadOptions& options,
                    std::map<int, std::string>* owner, std::vector<Status>* errors) {
  for (FlightRecorderDump& dump : store.flight_recorder.dumps) {
    if (auto mapped = LookupRankMap(options.rank_map, file)) {
      dump.rank = *mapped;
      dump.rank_source = "rank map";
    } else if (dump.rank < 0) {
      errors->push_back(Status::BadInput(fmt::format(
          "{}: cannot tell which rank this Flight Recorder dump is: it has no rank key and its name does not end "
          "in the rank (torch writes PREFIX + rank); give --rank-map {}=RANK",
          file, fs::path(file).filename().string())));
      continue;
    }
    auto [it, inserted] = owner->emplace(dump.rank, file);
    if (!inserted)
      errors->push_back(
          Status::BadInput(fmt::format("rank {} is claimed by two Flight Recorder dumps: {} and {} (use --rank-map to "
                                       "say which file is which rank)",
                                       dump.rank, it->second, file)));
  }
}

// Flight Recorder dumps are read alone, beside profiler traces or beside a recording of the same job; beside an
// op table (a job's every rank on a clock of its own), an error naming one of each (not done).
Status NoDumpsBesideOthers(const std::vector<FileResult>& results, const std::vector<std::string>& files) {
  std::optional<size_t> dump, table;
  for (size_t i = 0; i < results.size() && i < files.size(); ++i) {
    if (!results[i].store || results[i].store->inputs.empty()) continue;
    const InputFormat f = results[i].store->inputs[0].format;
    if (f == InputFormat::kFlightRecorder && !dump) dump = i;
    if (f == InputFormat::kOpTable && !table) table = i;
  }
  if (!dump || !table) return Status::Ok();
  return Status::Unsupported(fmt::format(
      "{} is a Flight Recorder dump and {} an op table: dumps are read alone or beside profiler traces or a "
      "recording (not beside an op table); give the dumps alone",
      files[*dump], files[*table]));
}

// Whether every part is a Flight Recorder dump (then a recording given too is the job's trace).
bool DumpsOnly(const std::vector<TraceStore>& parts) {
  return std::all_of(parts.begin(), parts.end(), [](const TraceStore& part) {
    return std::all_of(part.inputs.begin(), part.inputs.end(),
                       [](const InputInfo& in) { return in.format == InputFormat::kFlightRecorder; });
  });
}

// An op table holds every rank of its job, and its times are on one clock of its own: beside profiler traces
// its ranks would be claimed twice or mixed with another clock. An error naming one of each.
Status NoOpTableBesideTraces(const std::vector<FileResult>& results, const std::vector<std::string>& files) {
  std::optional<size_t> table, trace;
  for (size_t i = 0; i < results.size() && i < files.size(); ++i) {
    if (!results[i].store || results[i].store->inputs.empty()) continue;
    const InputFormat f = results[i].store->inputs[0].format;
    if (f == InputFormat::kOpTable && !table) table = i;
    if (f != InputFormat::kOpTable && f != InputFormat::kRecording && !trace) trace = i;
  }
  if (!table || !trace) return Status::Ok();
  return Status::Unsupported(fmt::format(
      "{} is an op table and {} a profiler trace: they cannot be diagnosed together (an op table holds every "
      "rank of its job on a clock of its own); give the op table alone, or the traces alone",
      files[*table], files[*trace]));
}

// Past --max-memory the job cannot be analysed whole (not even with --skip-unreadable): one error naming
// the file that crossed the limit, and how many were not read.
Status OverBudgetError(const std::vector<FileResult>& results) {
  size_t first = 0, not_read = 0;
  while (!results[first].out_of_memory) ++first;
  for (const FileResult& r : results) not_read += !r.store && !r.out_of_memory;
  const Status& first_error = results[first].error;
  return first_error.Reworded(first_error.message() +
                              (not_read ? fmt::format("; {} other files were not read", not_read) : std::string()));
}

// An op table's steps of implausible length (time_unit_check.h): a warning naming --time-unit-ns. Op tables
// are never mixed with traces (NoOpTableBesideTraces), so an op-table input means the whole store is tables.
std::optional<std::string> OpTableUnitWarning(const TraceStore& store, double time_unit_ns) {
  std::string paths;
  for (const auto& in : store.inputs)
    if (in.format == InputFormat::kOpTable) paths += (paths.empty() ? "" : ", ") + in.path;
  if (paths.empty()) return std::nullopt;
  const std::optional<double> median = MedianOpTableStepNs(store);
  if (!median) return std::nullopt;
  return TimeUnitWarning(paths, *median, time_unit_ns);
}

// Nsight Systems exports count time from their session's start (RankInfo::base_time_ns, its UTC time): the files
// of one job are put on one clock, the earliest session's, each file's rows shifted by its start's distance from
// that one. Times stay small, so HTA's µs doubles keep ns precision (as for Kineto's). A file without a session
// start, or one over a year from the earliest (no file of the same job), keeps its own clock.
void ShareSessionClocks(std::vector<FileResult>* results) {
  constexpr int64_t kMaxShiftNs = 366LL * 24 * 3600 * 1'000'000'000;
  auto base_of = [](const TraceStore& s) -> int64_t {
    if (s.inputs.empty() || s.inputs[0].format != InputFormat::kNsysSqlite || s.ranks.empty()) return 0;
    return s.ranks[0].base_time_ns;
  };
  int64_t earliest = INT64_MAX;
  for (const FileResult& r : *results)
    if (r.store && base_of(*r.store) > 0) earliest = std::min(earliest, base_of(*r.store));
  for (FileResult& r : *results) {
    if (!r.store || base_of(*r.store) <= 0) continue;
    const int64_t shift = base_of(*r.store) - earliest;
    if (shift == 0 || shift > kMaxShiftNs) continue;
    for (int64_t& ts : r.store->slices.ts_ns) ts += shift;
    for (int64_t& ts : r.store->counters.ts_ns) ts += shift;
    for (int64_t& ts : r.store->flows.ts_ns) ts += shift;
    for (RankInfo& rank : r.store->ranks) rank.base_time_ns = earliest;
  }
}

// The recording alone as the job: its collective calls and threads become the traces.
Status TakeRecordingAlone(SortedInputs& in, LoadedJob* job) {
  auto store = TraceStoreFromRecording(in.recorded);
  if (!store.ok()) return store.status();
  job->store = std::move(store).value();
  job->recorded = std::move(in.recorded);
  job->notes = std::move(in.segment_notes);
  return Status::Ok();
}

// The loader's steps: sort the inputs, read a recording alone as a job of its own, else import the traces,
// number their ranks, and merge them in rank order.
// The last progress line: the trace files that made the job and its ranks, apart from the files read that were
// no trace (a truth.json beside the traces is read, found not to be one, and left out).
std::string LoadedLine(const LoadedJob& job, size_t trace_files) {
  std::string line = fmt::format("loaded {} trace file{}: {} rank{}", trace_files, trace_files == 1 ? "" : "s",
                                 job.store.ranks.size(), job.store.ranks.size() == 1 ? "" : "s");
  if (job.ignored.empty()) return line;
  line +=
      fmt::format("; {} other file{} not a trace, left out:", job.ignored.size(), job.ignored.size() == 1 ? "" : "s");
  for (size_t i = 0; i < job.ignored.size() && i < 3; ++i)
    line += (i ? ", " : " ") + fs::path(job.ignored[i]).filename().string();
  if (job.ignored.size() > 3) line += ", ...";
  return line;
}

Expected<LoadedJob> LoadJob(const std::vector<std::string>& paths, const LoadOptions& options) {
  auto expanded = ExpandInputs(paths);
  if (!expanded.ok()) return expanded.status();
  auto sorted = SortInputs(expanded.value(), options);
  if (!sorted.ok()) return sorted.status();
  SortedInputs& in = sorted.value();
  LoadedJob job;
  job.unreadable = std::move(in.unlisted);
  for (const InputFile& f : expanded.value())
    if (f.left_out.empty()) job.files.push_back(f.path);
  // A recording alone is a job of its own: its collective calls and threads become the traces.
  if (in.files.empty() && !in.recorded.empty()) {
    if (Status st = TakeRecordingAlone(in, &job); !st.ok()) return st;
    return job;
  }
  if (in.files.empty()) return Status::Usage("no input files given");

  bool over_budget = false;
  std::vector<FileResult> results = ImportAll(in, options, &over_budget);
  if (over_budget) return OverBudgetError(results);
  if (Status st = NoOpTableBesideTraces(results, in.files); !st.ok()) return st;
  if (Status st = NoDumpsBesideOthers(results, in.files); !st.ok()) return st;
  std::vector<Status> errors;
  std::vector<std::pair<int, size_t>> order;  // (first rank, result index)
  std::map<int, std::string> owner;           // rank -> file that claimed it
  std::map<int, std::string> dump_owner;      // rank -> Flight Recorder dump that claimed it
  for (size_t i = 0; i < in.files.size(); ++i) {
    FileResult& r = results[i];
    job.input_bytes += r.input_bytes;
    job.content_bytes += r.content_bytes;
    if (!r.store) {
      if (r.not_a_trace && in.trace_inputs[i].from_directory)
        job.ignored.push_back(in.files[i]);  // e.g. a truth.json or config next to the traces
      else if (options.skip_unreadable)
        job.unreadable.push_back({in.files[i], r.error.message(), r.error});
      else
        errors.push_back(r.error);
      continue;
    }
    AssignRanks(*r.store, in.files[i], in.files.size(), options, in.recorded, &owner, &errors);
    AssignDumpRank(*r.store, in.files[i], options, &dump_owner, &errors);
    int first_rank = INT32_MAX;
    for (const RankInfo& rank : r.store->ranks) first_rank = std::min(first_rank, rank.rank);
    for (const FlightRecorderDump& d : r.store->flight_recorder.dumps) first_rank = std::min(first_rank, d.rank);
    order.emplace_back(first_rank, i);
  }
  if (!errors.empty()) {
    std::string message = errors[0].message();
    for (size_t i = 1; i < errors.size(); ++i) message += "\n" + errors[i].message();
    return errors[0].Reworded(message);  // the first error's kind and place
  }
  // A folder that holds a recording beside files that are not traces (a truth.json, a config): the recording
  // alone is the job, as if only it had been given.
  if (order.empty() && !in.recorded.empty() && job.unreadable.empty()) {
    if (Status st = TakeRecordingAlone(in, &job); !st.ok()) return st;
    return job;
  }
  if (order.empty()) return Status::BadInput("none of the input files could be read");
  ShareSessionClocks(&results);
  std::stable_sort(order.begin(), order.end());
  // Merged on all the load's threads; each file's store is freed as soon as its rows are copied.
  std::vector<TraceStore> parts;
  parts.reserve(order.size());
  for (const auto& [first_rank, index] : order) {
    parts.push_back(std::move(*results[index].store));
    results[index].store.reset();
  }
  // Flight Recorder dumps beside a recording alone: the recording is the job's trace, the dumps beside it.
  if (!in.recorded.empty() && DumpsOnly(parts)) {
    auto recording = TraceStoreFromRecording(in.recorded);
    if (!recording.ok()) return recording.status();
    parts.insert(parts.begin(), std::move(recording).value());
  }
  job.store = TraceStore::Merge(std::move(parts), LoadThreads(options));
  job.store.shrink_to_fit();
  SetRecordingTables(in.recorded, &job.store);
  job.recorded = std::move(in.recorded);
  job.notes = std::move(in.segment_notes);
  if (auto warning = OpTableUnitWarning(job.store, options.import.op_table.time_unit_ns)) job.notes.push_back(*warning);
  if (options.on_progress) options.on_progress(LoadedLine(job, order.size()));
  return job;
}

Status RequireEvents(const LoadedJob& job, bool dumps_suffice) {
  if (!job.store.ranks.empty()) return Status::Ok();
  if (!job.store.flight_recorder.empty()) {
    if (dumps_suffice) return Status::Ok();
    return Status::Unsupported(
        "the inputs are PyTorch Flight Recorder dumps: `strata diagnose` reads them (hangs and collective "
        "mismatches); this command needs profiler traces or a recording");
  }
  std::string names;
  for (const auto& in : job.store.inputs) names += (names.empty() ? "" : ", ") + in.path;
  return Status::BadInput(fmt::format("no events could be used from the inputs ({}): nothing to analyse", names));
}

Status CheckRankMapNamesInputs(const LoadedJob& job, const std::map<std::string, int>& rank_map) {
  for (const auto& [file, rank] : rank_map) {
    bool used = false;
    for (const auto& in : job.store.inputs)
      used |= in.path == file || std::filesystem::path(in.path).filename() == file;
    if (!used)
      return Status::Usage(
          fmt::format("{}={} names no input file (inputs are matched by path or base name)", file, rank));
  }
  return Status::Ok();
}

Expected<LoadedJob> LoadComparedRun(const std::string& which, const std::string& path, unsigned threads) {
  LoadOptions load;
  load.threads = threads;
  auto job = LoadJob({path}, load);
  if (!job.ok()) return job.status().Reworded(fmt::format("{} {}: {}", which, path, job.error()));
  if (job.value().store.ranks.empty())
    return Status::BadInput(fmt::format("{} {}: no events could be used from it", which, path));
  return job;
}

}  // namespace strata
