// The recording loop of `strata record` (see recorder.h): set-up in the order open → load → trace →
// attach → release the command, then poll events, sample counters and flush until the command exits
// (or every attached process has, or Ctrl-C), then name the sampled stacks and close the segment.
#include "recorder/recorder.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/status.h"
#include "recorder/bpf_session.h"
#include "recorder/command_launcher.h"
#include "recorder/counter_writer.h"
#include "recorder/native_stacks.h"
#include "recorder/open_collectives.h"
#include "recorder/other_processes.h"
#include "recorder/probe_catalog.h"
#include "recorder/process_info.h"
#include "recorder/python_frames.h"
#include "recorder/python_stacks.h"
#include "recorder/recording_notes.h"
#include "recorder/stuck_threads.h"
#include "recorder/ticker.h"
#include "segments/segment_writer.h"

namespace strata::recorder {
namespace {

std::atomic<int> g_stop_signal{0};

/// The recorder runs as root: its output directory must not let another user plant or swap files in it.
/// Refused: a directory owned by another user (not root, not the caller), or writable by others without the
/// sticky bit (in a sticky one, /tmp-like, files cannot be renamed or removed by others).
Status CheckOutputDirectory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return Status::Resource(fmt::format("{}: cannot check the output directory: {}", dir, std::strerror(errno)));
  if (!S_ISDIR(st.st_mode)) return Status::Usage(fmt::format("{}: the output is not a directory", dir));
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    return Status::Resource(
        fmt::format("{}: the output directory is owned by another user (uid {}); record into a "
                    "directory of your own",
                    dir, st.st_uid));
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    return Status::Resource(
        fmt::format("{}: the output directory is writable by every user and has no sticky bit; "
                    "record into a directory others cannot write to",
                    dir));
  return Status::Ok();
}

std::atomic<bool> g_stop_sent_by_process{false};

// Ctrl-C at a terminal comes from the kernel (si_code SI_KERNEL) to the whole foreground group, the command
// included; kill(1) and the like send it to this process alone (si_code <= 0), and then it is passed on.
void OnStopSignal(int signal, siginfo_t* info, void*) {
  g_stop_sent_by_process = info != nullptr && info->si_code <= 0;
  g_stop_signal = signal;
}

uint64_t NowNs(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Alive and not a zombie (an exited child its parent has not reaped yet still answers kill(pid, 0)).
bool ProcessAlive(int pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (!f) return false;
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const char* close = std::strrchr(buf, ')');
  return !(n > 0 && close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X'));
}

std::string HostName() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// All mutable state of one recording, owned by Record().
class Recording {
 public:
  explicit Recording(const RecordOptions& options)
      : options_(options),
        stacks_([this](int32_t id) { return session_.Stack(id); }, [](int pid) { return ReadExecutableMaps(pid); }),
        stuck_(StuckThreadsIo()) {}

  Expected<int> Run();

 private:
  void OnEvent(const void* data, size_t size);
  void OnCallEnter(const strata_event_header& h, const strata_call_enter_event& e);
  void SeeProcess(int pid, int ppid, uint64_t ts);
  void RefreshMaps();
  void SampleCounters(uint64_t now);
  void SampleLinks(uint64_t now);
  // The link samples' own rate: only when they are more frequent than the full ones (RecordOptions::link_hz).
  double LinkHz() const;
  void WriteFinalMeta();
  void Say(const std::string& line) const;
  void OfferNcclPlugin();
  // The steps of Run.
  Status Prepare();
  Status Launch(CommandLauncher& launcher);
  void AttachProbePoints();
  void AttachGcProbes();
  void FlushAndWatchDisk(bool* disk_full, bool* failed);
  bool StopRequested(CommandLauncher& launcher, std::chrono::steady_clock::time_point now,
                     std::chrono::steady_clock::time_point* stop_deadline, int* exit_code);
  int Loop(CommandLauncher& launcher);
  Status Finish();
  std::string path_;  // the segment being written
  void WatchPython(const ProcessInfo& process);
  int32_t PythonStackId(uint32_t tgid, const strata_py_stack_event* e);
  int32_t PythonStackId(uint32_t tgid, const std::vector<PythonFrameAddress>& frames);
  int32_t Written(PythonStacks::Interned stack);
  void WriteStackNow(uint32_t tgid, int32_t id, bool kernel);
  std::vector<int> LivePids() const;
  StuckThreads::Io StuckThreadsIo();

  const RecordOptions& options_;
  std::vector<int> pids_;  // the --pid processes alive at the start (options_.pids less those already gone)
  BpfSession session_;
  segments::SegmentWriter writer_;
  std::optional<CounterWriter> counters_;  // when --counter-hz is set (counter_writer.h)
  std::map<int, ProcessInfo> processes_;
  NativeStacks stacks_;  // the stacks the samples drew, and their records (native_stacks.h)
  OtherProcesses other_processes_{[](int pid) { return ReadComm(pid); }};  // other_processes.h
  std::vector<ProbePoint> probes_;
  PythonStacks python_;              // the processes whose Python frames are walked, and each stack's id (WatchPython)
  StuckThreads stuck_;               // thread_state records of ranks whose main thread stays off CPU (stuck_threads.h)
  OpenCollectives open_algorithms_;  // gloo's algorithms awaiting c10d's completion (open_collectives.h)
  RecordingNotes notes_{[this](const std::string& line) { Say(line); }};  // recording_notes.h
  uint64_t events_ = 0;
  uint64_t start_mono_ = 0;
};

// A line for the person running the recorder, through the caller's callback (nothing when unset).
void Recording::Say(const std::string& line) const {
  if (options_.on_message) options_.on_message(line);
}

// The launched command inherits NCCL_PROFILER_PLUGIN and STRATA_NCCL_PROFILER_DIR: NCCL, if the command
// uses it, loads the plugin, which writes device-side collective times beside this segment. A plugin the
// user's environment names already is left alone (NCCL loads one plugin).
void Recording::OfferNcclPlugin() {
  if (options_.nccl_plugin.empty()) return;
  if (const char* set = std::getenv("NCCL_PROFILER_PLUGIN"); set != nullptr && *set != '\0') {
    notes_.Add(
        fmt::format("NCCL_PROFILER_PLUGIN is already set ({}): strata's NCCL profiler plugin is not offered, "
                    "so NCCL collectives are timed on the CPU only",
                    set));
    return;
  }
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(options_.out_dir, ec).string();
  ::setenv("NCCL_PROFILER_PLUGIN", options_.nccl_plugin.c_str(), 1);
  ::setenv("STRATA_NCCL_PROFILER_DIR", dir.c_str(), 1);
}

// Samples of a CPython process this recorder knows carry its Python frames from now on.
void Recording::WatchPython(const ProcessInfo& process) {
  if (options_.sample_hz == 0) return;
  std::string why;
  if (auto offsets = PythonOffsetsOf(process, &why)) {
    python_.Watch(process.pid, *offsets);
    if (auto st = session_.TracePython(process.pid, *offsets); !st.ok()) notes_.AddOnce(st.message());
  } else if (!why.empty()) {
    notes_.AddOnce(why);
  }
}

// The id of a Python stack of `tgid` (its "py_stack" meta record is written when first seen, named while
// the process runs); -1 for an empty or malformed one.
int32_t Recording::PythonStackId(uint32_t tgid, const strata_py_stack_event* e) {
  if (e->depth == 0 || e->depth > STRATA_PY_MAX_DEPTH) return -1;
  std::vector<PythonFrameAddress> frames(e->depth);
  for (uint32_t i = 0; i < e->depth; ++i) frames[i] = {e->code[i], e->instr[i]};
  return PythonStackId(tgid, frames);
}

// Each frame's line is its last instruction's, read from the process now (its code object once).
int32_t Recording::PythonStackId(uint32_t tgid, const std::vector<PythonFrameAddress>& frames) {
  return Written(python_.Intern(tgid, frames));
}

// A stack's id, its "py_stack" record written when it is new.
int32_t Recording::Written(PythonStacks::Interned stack) {
  if (stack.record) writer_.AppendMeta(*stack.record);
  return stack.id;
}

void Recording::SeeProcess(int pid, int ppid, uint64_t ts) {
  ProcessInfo info = ReadProcessInfo(pid);
  auto& slot = processes_[pid];
  if (slot.pid == 0) slot.first_seen_ns = ts;
  info.first_seen_ns = slot.first_seen_ns;
  if (info.ppid == 0) info.ppid = ppid;
  if (info.maps.empty()) info.maps = std::move(slot.maps);  // the process is gone: keep what we had
  if (info.comm.empty()) info.comm = slot.comm;
  slot = std::move(info);
  writer_.AppendMeta(slot.ToJson());
  WatchPython(slot);
}

void Recording::OnEvent(const void* data, size_t size) {
  if (size < sizeof(strata_event_header)) return;
  ++events_;
  const auto* h = static_cast<const strata_event_header*>(data);
  switch (h->kind) {
    case STRATA_EV_OFF_CPU: {
      if (size < sizeof(strata_off_cpu_event)) return;
      const auto* e = static_cast<const strata_off_cpu_event*>(data);
      writer_.Append(OffCpuRow{h->tid, h->tgid, e->start, h->ts, e->runq_ns, e->state, e->preempted_by, e->ran_before,
                               e->waker, h->cpu});
      for (uint32_t other : {e->preempted_by, e->ran_before}) {
        if (other == 0) continue;  // idle: no process, and no lookup on the busiest event's path
        const std::string_view comm =
            other == e->preempted_by ? std::string_view(e->preempted_by_comm, sizeof e->preempted_by_comm) : "";
        if (auto record = other_processes_.FirstSight(other, processes_.count(static_cast<int>(other)) > 0, comm))
          writer_.AppendMeta(*record);
      }
      break;
    }
    case STRATA_EV_SAMPLE: {
      if (size < sizeof(strata_sample_event)) return;
      const auto* e = static_cast<const strata_sample_event*>(data);
      writer_.Append(SampleRow{h->ts, h->tid, h->tgid, h->cpu, e->user_stack, e->kernel_stack});
      if (stacks_.Sampled(h->tgid, e->user_stack, e->kernel_stack))
        if (auto it = processes_.find(static_cast<int>(h->tgid)); it != processes_.end() && it->second.exited_ns == 0)
          stacks_.CoverNewStack(e->user_stack, it->second, NowNs(CLOCK_MONOTONIC));
      break;
    }
    case STRATA_EV_PY_STACK: {
      if (size < sizeof(strata_py_stack_event)) return;
      const auto* e = static_cast<const strata_py_stack_event*>(data);
      const int32_t id = PythonStackId(h->tgid, e);
      if (id >= 0) writer_.Append(PySampleRow{h->ts, h->tid, h->tgid, id});
      break;
    }
    case STRATA_EV_CALL_ENTER: {
      if (size < sizeof(strata_call_enter_event)) return;
      OnCallEnter(*h, *static_cast<const strata_call_enter_event*>(data));
      break;
    }
    case STRATA_EV_CALL: {
      if (size < sizeof(strata_call_event)) return;
      const auto* e = static_cast<const strata_call_event*>(data);
      writer_.Append(CallRow{h->tid, h->tgid, e->probe, e->start, h->ts});
      break;
    }
    case STRATA_EV_GC: {
      if (size < sizeof(strata_gc_event)) return;
      const auto* e = static_cast<const strata_gc_event*>(data);
      writer_.Append(GcRow{h->tid, h->tgid, e->start, h->ts, e->generation, e->collected});
      break;
    }
    case STRATA_EV_FORK:
    case STRATA_EV_EXEC: {
      if (size < sizeof(strata_process_event)) return;
      const auto* e = static_cast<const strata_process_event*>(data);
      SeeProcess(static_cast<int>(h->tgid), static_cast<int>(e->ppid), h->ts);
      break;
    }
    case STRATA_EV_EXIT: {
      auto it = processes_.find(static_cast<int>(h->tgid));
      if (it != processes_.end()) {
        it->second.exited_ns = h->ts;
        if (size >= sizeof(strata_process_event))
          it->second.exit_status = static_cast<const strata_process_event*>(data)->exit_code;
        writer_.AppendMeta(it->second.ToJson());
      }
      session_.Untrace(static_cast<int>(h->tgid));
      python_.Forget(static_cast<int>(h->tgid));
      break;
    }
    default:
      break;
  }
}

// What the stuck-thread watch reads (the BPF session's off-CPU starts, Python frames) and writes (meta records).
StuckThreads::Io Recording::StuckThreadsIo() {
  return {.off_cpu_since = [this](uint32_t tid) { return session_.OffCpuSince(tid); },
          .main_python_stack = [this](uint32_t pid) { return PythonStackId(pid, session_.PythonStackOffCpu(pid)); },
          .python_stack_now = [this](int pid, long tid) -> std::optional<int32_t> {
            if (python_.OffsetsOf(pid) == nullptr) return std::nullopt;
            return Written(python_.ReadNow(pid, tid));
          },
          .write_stack_now = [this](uint32_t tgid, int32_t id, bool kernel) { WriteStackNow(tgid, id, kernel); },
          .append_meta = [this](const nlohmann::json& record) { writer_.AppendMeta(record); }};
}

// A "stack" meta record for stack `id` of `tgid`, named now (a live reader needs it before the run ends).
void Recording::WriteStackNow(uint32_t tgid, int32_t id, bool kernel) {
  auto it = processes_.find(static_cast<int>(tgid));
  if (auto record = stacks_.RecordNow(tgid, id, kernel, it == processes_.end() ? nullptr : &it->second))
    writer_.AppendMeta(*record);
}

// A collective entered. Gloo's algorithms have no return probe where c10d's completion is probed (a C++
// exception cannot unwind through one: probe_catalog.h): the call row of the thread's algorithm is written
// when c10d finishes its work on that thread (OpenCollectives).
void Recording::OnCallEnter(const strata_event_header& h, const strata_call_enter_event& e) {
  const ProbePoint* probe = e.probe < probes_.size() ? &probes_[e.probe] : nullptr;
  if (probe && probe->kind == ProbeKind::kCollectiveDone) {
    if (auto done = open_algorithms_.Completed(h.tid))
      writer_.Append(CallRow{h.tid, h.tgid, done->probe, done->entry_ns, h.ts});
    return;
  }
  if (probe && probe->kind == ProbeKind::kCollective && !probe->returns) open_algorithms_.Entered(h.tid, e.probe, h.ts);
  writer_.Append(CallEnterRow{h.tid, h.tgid, e.probe, h.ts, e.arg, e.count});
}

std::vector<int> Recording::LivePids() const {
  std::vector<int> pids;
  for (const auto& [pid, info] : processes_)
    if (info.exited_ns == 0) pids.push_back(pid);
  return pids;
}

void Recording::RefreshMaps() {
  for (auto& [pid, info] : processes_) {
    if (info.exited_ns != 0) continue;
    auto maps = ReadExecutableMaps(pid);
    if (!maps.empty()) info.maps = std::move(maps);
  }
}

void Recording::SampleCounters(uint64_t now) {
  if (counters_) counters_->Sample(now, LivePids(), &writer_, [this](const std::string& w) { notes_.Add(w); });
}

void Recording::SampleLinks(uint64_t now) {
  if (counters_) counters_->SampleLinks(now, &writer_, [this](const std::string& w) { notes_.Add(w); });
}

double Recording::LinkHz() const {
  return counters_ && options_.link_hz > options_.counter_hz ? options_.link_hz : 0.0;
}

void Recording::WriteFinalMeta() {
  RefreshMaps();
  for (const auto& [pid, info] : processes_) writer_.AppendMeta(info.ToJson());
  for (const auto& [key, totals] : session_.CallTotals())
    writer_.AppendMeta({{"type", "call_totals"},
                        {"pid", key.first},
                        {"probe", key.second},
                        {"calls", totals.calls},
                        {"total_ns", totals.total_ns}});
  for (const nlohmann::json& record : stacks_.FinalRecords(processes_)) writer_.AppendMeta(record);
  const BpfStats stats = session_.Stats();
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const double recorder_cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                                static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  writer_.AppendMeta({{"type", "stats"},
                      {"events", events_},
                      {"emitted", stats.emitted},
                      {"dropped", stats.dropped},
                      {"unmatched_returns", stats.no_start},
                      {"stack_failures", stats.stack_failures},
                      {"python_frames_missed", stats.py_misses},
                      {"filtered_short_helper_off_cpu", stats.filtered},
                      {"end_ns", NowNs(CLOCK_MONOTONIC)},
                      {"recorder_cpu_s", recorder_cpu_s},
                      {"notes", notes_.all()}});
  Say(fmt::format("{} processes, {} events ({} dropped), written to {} ({:.1f} MB)", processes_.size(), events_,
                  stats.dropped, writer_.path(), static_cast<double>(writer_.bytes_written()) / 1e6));
}

// Checks the targets, loads the BPF programs and opens the segment.
Status Recording::Prepare() {
  if (options_.command.empty() && options_.pids.empty())
    return Status::Usage("give a command after -- or at least one --pid");
  // Pids gone by now are left out (noted) as long as one is alive: a job's process that ended between being
  // listed and the recorder starting (the agent lists them a second before) must not lose the others.
  std::vector<int> gone;
  for (int pid : options_.pids) (pid > 0 && ProcessAlive(pid) ? pids_ : gone).push_back(pid);
  if (!gone.empty() && pids_.empty()) return Status::Usage(fmt::format("no process with pid {}", gone.front()));
  for (int pid : gone) notes_.Add(fmt::format("no process with pid {}: left out", pid));
  if (auto st = session_.Load(options_.follow_children); !st.ok()) return st;
  std::error_code ec;
  std::filesystem::create_directories(options_.out_dir, ec);
  if (ec) return Status::Resource(fmt::format("cannot create {}: {}", options_.out_dir, ec.message()));
  if (auto st = CheckOutputDirectory(options_.out_dir); !st.ok()) return st;
  start_mono_ = NowNs(CLOCK_MONOTONIC);
  segments::FileHeader header;
  header.created_unix_ns = static_cast<int64_t>(NowNs(CLOCK_REALTIME));
  header.realtime_minus_monotonic_ns = header.created_unix_ns - static_cast<int64_t>(start_mono_);
  path_ = (std::filesystem::path(options_.out_dir) / fmt::format("record-{}-{}.sseg", HostName(), ::getpid())).string();
  if (auto st = writer_.Open(path_, header, 65536, static_cast<size_t>(options_.max_buffer_mb) << 20); !st.ok())
    return st;
  session_.SetHandler([this](const void* data, size_t size) { OnEvent(data, size); });
  return Status::Ok();
}

// Forks the command (held until Release) or takes the given pids, and attaches the scheduler and sampling
// programs; a failure to attach the scheduler kills the held command.
Status Recording::Launch(CommandLauncher& launcher) {
  if (!options_.command.empty()) {
    OfferNcclPlugin();
    auto child = launcher.Fork(options_.command);
    if (!child.ok()) return child.status();
    processes_[child.value()].pid = child.value();
    processes_[child.value()].first_seen_ns = start_mono_;
    (void)session_.Trace(child.value());
  }
  for (int pid : pids_) {
    if (auto st = session_.Trace(pid); !st.ok()) notes_.Add(st.message());
    SeeProcess(pid, 0, start_mono_);
  }
  if (auto st = session_.AttachScheduling(); !st.ok()) {
    launcher.Signal(SIGKILL);
    return st;
  }
  if (auto st = session_.AttachSampling(options_.sample_hz); !st.ok())
    notes_.Add(st.message() + "; no CPU stack samples");
  return Status::Ok();
}

void Recording::AttachProbePoints() {
  std::vector<std::string> probe_notes;
  probes_ = ResolveProbes(FindProbeLibraries(options_.libraries, pids_), DefaultProbeSpecs(), &probe_notes);
  const size_t attached = session_.AttachProbes(probes_, &probe_notes);
  for (const std::string& n : probe_notes) notes_.Keep(n);
  for (size_t i = 0; i < probes_.size(); ++i)
    writer_.AppendMeta({{"type", "probe"},
                        {"id", i},
                        {"symbol", probes_[i].symbol},
                        {"op", probes_[i].op},
                        {"kind", ProbeKindName(probes_[i].kind)},
                        {"library", probes_[i].library},
                        {"emit", probes_[i].emit}});
  Say(fmt::format("{} probe points attached (collectives, CUDA)", attached));
}

// USDT GC probes in every Python the job may run: /usr/bin/python3, the given ones, the attached pids'.
void Recording::AttachGcProbes() {
  std::set<std::string> pythons(options_.pythons.begin(), options_.pythons.end());
  std::error_code ec;
  if (auto p = std::filesystem::canonical("/usr/bin/python3", ec); !ec) pythons.insert(p.string());
  for (int pid : pids_)
    if (auto p = std::filesystem::canonical(fmt::format("/proc/{}/exe", pid), ec);
        !ec && p.filename().string().rfind("python", 0) == 0)
      pythons.insert(p.string());
  size_t gc_probes = 0;
  for (const std::string& python : pythons) {
    if (auto st = session_.AttachPythonGc(python); st.ok())
      ++gc_probes;
    else
      notes_.Add(st.message());
  }
  if (gc_probes == 0) notes_.Add("no Python GC probes attached: GC pauses will not be recorded");
}

// Writes what is buffered; says when the disk fills and when it has room again. `failed`: a write error
// that stops the recording.
void Recording::FlushAndWatchDisk(bool* disk_full, bool* failed) {
  if (auto st = writer_.Flush(); !st.ok()) {
    Say(st.message() + "; stopping");
    *failed = true;
    return;
  }
  if (writer_.disk_full() == *disk_full) return;
  *disk_full = !*disk_full;
  notes_.Add(*disk_full ? fmt::format("the disk is full: keeping up to {} MB of recording in memory "
                                      "(--max-buffer-mb) and retrying every second",
                                      options_.max_buffer_mb)
                        : std::string("the disk has room again: the recording kept in memory is written"));
}

// Launch mode, after a stop signal: Ctrl-C reaches the whole foreground group (the command too); a signal
// sent to us alone (and any SIGTERM) is passed on. Either way the command gets 15 s to finish cleanly.
// Returns true when the recording should stop now.
bool Recording::StopRequested(CommandLauncher& launcher, std::chrono::steady_clock::time_point now,
                              std::chrono::steady_clock::time_point* stop_deadline, int* exit_code) {
  if (g_stop_signal == 0) return false;
  if (*stop_deadline == std::chrono::steady_clock::time_point{}) {
    const bool passed_on = g_stop_signal == SIGTERM || g_stop_sent_by_process;
    if (passed_on) launcher.Signal(g_stop_signal);
    Say(fmt::format("stopping; {}, waiting up to 15 s for it to exit",
                    passed_on ? fmt::format("signal passed on to the command (pid {})", launcher.pid())
                              : fmt::format("the command (pid {}) got the Ctrl-C too", launcher.pid())));
    *stop_deadline = now + std::chrono::seconds(15);
    return false;
  }
  if (now < *stop_deadline) return false;
  notes_.Add(
      fmt::format("the command (pid {}) did not exit within 15 s of the stop signal; it keeps running, "
                  "unrecorded from now on (stop it with kill {})",
                  launcher.pid(), launcher.pid()));
  *exit_code = 130;
  return true;
}

// Polls events, samples counters, refreshes memory maps and flushes until the command exits, the attached
// processes are gone or a stop signal says so. Returns the exit code (the command's in launch mode).
int Recording::Loop(CommandLauncher& launcher) {
  const auto start = std::chrono::steady_clock::now();
  Ticker counters(counters_ ? options_.counter_hz : 0, start);
  Ticker links(LinkHz(), start);
  auto next_flush = start + std::chrono::seconds(1);
  auto next_maps = start + std::chrono::seconds(2);
  std::chrono::steady_clock::time_point stop_deadline{};
  int exit_code = 0;
  bool disk_full = false;
  while (true) {
    const auto before = std::chrono::steady_clock::now();
    session_.Poll(std::min(counters.MsUntilNext(before, 100), links.MsUntilNext(before, 100)));
    const auto now = std::chrono::steady_clock::now();
    const bool full = counters.Due(now);
    if (links.Due(now) && !full) SampleLinks(NowNs(CLOCK_MONOTONIC));
    if (full) SampleCounters(NowNs(CLOCK_MONOTONIC));
    if (now >= next_maps) {
      RefreshMaps();
      next_maps = now + std::chrono::seconds(2);
    }
    if (now >= next_flush) {
      stuck_.Watch(processes_, NowNs(CLOCK_MONOTONIC));
      bool failed = false;
      FlushAndWatchDisk(&disk_full, &failed);
      if (failed) break;
      next_flush = now + std::chrono::seconds(1);
    }
    if (!options_.command.empty()) {
      if (launcher.Exited(&exit_code)) break;
      if (StopRequested(launcher, now, &stop_deadline, &exit_code)) break;
    } else {
      if (g_stop_signal != 0) break;
      bool any_alive = false;
      for (int pid : pids_) any_alive = any_alive || ProcessAlive(pid);
      if (!any_alive) {
        notes_.Add("every attached process has exited");
        break;
      }
    }
  }
  return exit_code;
}

// Drains the ring buffer, lets the probes go, and closes the segment with its final records.
Status Recording::Finish() {
  while (session_.Poll(0) > 0) {
  }
  session_.DetachInBackground();
  if (counters_) SampleCounters(NowNs(CLOCK_MONOTONIC));
  writer_.AppendMeta({{"type", "recording"},
                      {"host", HostName()},
                      {"command", options_.command},
                      {"pids", pids_},
                      {"start_ns", start_mono_},
                      {"sample_hz", options_.sample_hz},
                      {"counter_hz", options_.counter_hz},
                      {"link_hz", LinkHz()},
                      {"recorder_pid", ::getpid()}});
  WriteFinalMeta();
  return writer_.Close();
}

Expected<int> Recording::Run() {
  if (auto st = Prepare(); !st.ok()) return st;
  CommandLauncher launcher;
  if (auto st = Launch(launcher); !st.ok()) return st;
  if (options_.probes) AttachProbePoints();
  if (options_.python_gc) AttachGcProbes();
  if (options_.counter_hz > 0) {
    counters_.emplace();
  }
  // Every program and probe is attached: from now on nothing the processes do is missed. Said in the file at
  // once (the agent's flight recorder switches its live reading to a new chunk on this record, and stops the
  // previous chunk's recorder only then: agent/flight_recorder.h).
  writer_.AppendMeta({{"type", "attached"},
                      {"ts_ns", NowNs(CLOCK_MONOTONIC)},
                      {"unix_ns", static_cast<int64_t>(NowNs(CLOCK_REALTIME))}});
  (void)writer_.Flush();  // an error stays with the writer: the loop's first flush reports it
  struct sigaction action {};
  action.sa_sigaction = OnStopSignal;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  if (!options_.command.empty()) {
    if (auto st = launcher.Release(); !st.ok()) {
      (void)writer_.Close();
      std::error_code ec;
      std::filesystem::remove(path_, ec);
      return st;
    }
    Say(fmt::format("recording {} (pid {})", options_.command[0], launcher.pid()));
  }
  const int exit_code = Loop(launcher);
  if (auto st = Finish(); !st.ok()) return st;
  return exit_code;
}

}  // namespace

Expected<int> Record(const RecordOptions& options) {
  Recording recording(options);
  return recording.Run();
}

}  // namespace strata::recorder
