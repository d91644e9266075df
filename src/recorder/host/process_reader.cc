// Per-process scheduler and memory counters (see process_reader.h).
#include "recorder/host/process_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace strata::recorder {
namespace {

// Adds `now - last` to `total` when the counter grew, all of `now` when it went down (a reused tid).
void AddDelta(uint64_t now, uint64_t last, bool known, uint64_t* total) {
  *total += (known && now >= last) ? now - last : now;
}

}  // namespace

ProcessReader::ProcessReader(const std::string& proc_root, int status_every, size_t max_kept_fds)
    : proc_root_(proc_root), status_every_(status_every > 0 ? status_every : 1), max_kept_fds_(max_kept_fds) {
  if (max_kept_fds_ != kFdBudgetFromRlimit) return;
  // Keep at most a quarter of the soft descriptor limit (the recorder needs the rest), and 8192.
  rlimit limit{};
  const rlim_t soft = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
  max_kept_fds_ = static_cast<size_t>(std::min<rlim_t>(soft / 4, 8192));
}

size_t ProcessReader::KeptFds(const PidState& state) {
  size_t n = 0;
  for (const auto& [tid, thread] : state.threads) n += thread.schedstat.get() >= 0;
  return n;
}

void ProcessReader::Retain(const std::vector<int>& pids) {
  std::erase_if(pids_, [&](const auto& entry) {
    if (std::find(pids.begin(), pids.end(), entry.first) != pids.end()) return false;
    kept_fds_ -= KeptFds(entry.second);
    return true;
  });
}

bool ProcessReader::ReadThread(int task_fd, std::string_view tid, bool with_status, ThreadState* thread,
                               ThreadCounters* out) {
  char path[64];
  if (tid.size() > 20) return false;
  std::memcpy(path, tid.data(), tid.size());
  std::memcpy(path + tid.size(), "/schedstat", sizeof("/schedstat"));
  if (thread->schedstat.get() < 0 && kept_fds_ < max_kept_fds_) {
    thread->schedstat = UniqueFd(::openat(task_fd, path, O_RDONLY | O_CLOEXEC));
    if (thread->schedstat.get() < 0) return false;  // gone (or out of descriptors: tried again next time)
    ++kept_fds_;
  }
  // A kept descriptor of an exited thread fails with ESRCH, even if its tid was reused since.
  const ReadResult read =
      thread->schedstat.get() >= 0 ? file_.Reread(thread->schedstat.get()) : file_.ReadAt(task_fd, path);
  if (read != ReadResult::kOk || file_.text().empty()) return false;
  // "on-cpu ns, run-queue wait ns, timeslices"
  if (SplitFields(Trim(file_.text()), &fields_) < 3) return false;
  const auto oncpu = ParseU64(fields_[0]), wait = ParseU64(fields_[1]), slices = ParseU64(fields_[2]);
  if (!oncpu || !wait || !slices) return false;
  out->oncpu_ns = *oncpu;
  out->runq_wait_ns = *wait;
  out->timeslices = *slices;
  if (!with_status) return true;

  std::memcpy(path + tid.size(), "/status", sizeof("/status"));
  if (file_.ReadAt(task_fd, path) != ReadResult::kOk) return false;
  const auto voluntary = FindStatusValue(file_.text(), "voluntary_ctxt_switches");
  const auto nonvoluntary = FindStatusValue(file_.text(), "nonvoluntary_ctxt_switches");
  if (!voluntary || !nonvoluntary) return false;
  out->voluntary = *voluntary;
  out->nonvoluntary = *nonvoluntary;
  return true;
}

bool ProcessReader::Sample(int pid, CounterSink& sink) {
  PidState& state = pids_[pid];
  const std::string pid_dir = proc_root_ + "/" + std::to_string(pid);
  const std::string stat_path = pid_dir + "/stat";
  const ReadResult result = file_.Read(stat_path);
  if (result != ReadResult::kOk) {
    if (result == ReadResult::kMissing) {
      if (!state.gone) {
        state.gone = true;
        kept_fds_ -= KeptFds(state);
        state.threads.clear();  // closes the kept descriptors
        ++sink.diag().stats.pids_vanished;
        sink.diag().WarnOnce("pid-gone:" + std::to_string(pid),
                             "host counters: pid " + std::to_string(pid) + " is gone; its counters stop");
      }
    } else {
      sink.Read(&file_, stat_path, true);  // counts and warns once
    }
    return false;
  }
  // "pid (comm) state ppid ..." where comm may hold spaces and parentheses: fields start after the last ')'.
  const std::string_view text = file_.text();
  const size_t paren = text.rfind(')');
  if (paren == std::string_view::npos || SplitFields(Trim(text.substr(paren + 1)), &fields_) < 20) {
    sink.Malformed(stat_path, "too few fields");
    return true;
  }
  // Indexes after ')': state=0 ... minflt=7, majflt=9, utime=11, stime=12, num_threads=17, starttime=19.
  const auto minflt = ParseU64(fields_[7]), majflt = ParseU64(fields_[9]), stime = ParseU64(fields_[12]),
             start_time = ParseU64(fields_[19]);
  if (!minflt || !majflt || !stime || !start_time) {
    sink.Malformed(stat_path, "non-numeric field");
    return true;
  }
  if (state.start_time != 0 && state.start_time != *start_time) {
    sink.diag().WarnOnce("pid-reused:" + std::to_string(pid) + ":" + std::to_string(*start_time),
                         "host counters: pid " + std::to_string(pid) + " now belongs to a new process");
    kept_fds_ -= KeptFds(state);
    state.threads.clear();
  }
  state.start_time = *start_time;
  state.gone = false;

  const std::string task_dir = pid_dir + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (dir == nullptr) {
    sink.Read(&file_, task_dir, false);  // classify, count
    return false;
  }
  const uint64_t round = ++state.round;
  const bool with_status = (round - 1) % static_cast<uint64_t>(status_every_) == 0;
  int threads = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (!IsAllDigits(name)) continue;
    const int tid = static_cast<int>(ParseU64(name).value_or(0));
    auto [it, inserted] = state.threads.try_emplace(tid);
    ThreadState& thread = it->second;
    ThreadCounters now = thread.last;  // the status fields stay as they were when status is not read
    if (!ReadThread(::dirfd(dir), name, with_status, &thread, &now)) continue;  // exited since the listing
    ++threads;
    const bool known = !inserted;
    AddDelta(now.oncpu_ns, thread.last.oncpu_ns, known, &state.total.oncpu_ns);
    AddDelta(now.runq_wait_ns, thread.last.runq_wait_ns, known, &state.total.runq_wait_ns);
    AddDelta(now.timeslices, thread.last.timeslices, known, &state.total.timeslices);
    // A thread first seen without its status has 0 switches recorded: the next status read adds all it has.
    AddDelta(now.voluntary, thread.last.voluntary, true, &state.total.voluntary);
    AddDelta(now.nonvoluntary, thread.last.nonvoluntary, true, &state.total.nonvoluntary);
    thread.last = now;
    thread.round = round;
  }
  ::closedir(dir);
  sink.diag().stats.threads_exited += std::erase_if(state.threads, [&](const auto& entry) {
    if (entry.second.round == round) return false;
    kept_fds_ -= entry.second.schedstat.get() >= 0;
    return true;
  });

  const ThreadCounters& t = state.total;
  auto emit = [&](std::string_view name, std::string_view unit, bool cumulative, double value) {
    sink.Emit({.name = name, .pid = pid, .unit = unit, .cumulative = cumulative}, value);
  };
  emit("proc.oncpu_ns", "ns", true, static_cast<double>(t.oncpu_ns));
  emit("proc.runq_wait_ns", "ns", true, static_cast<double>(t.runq_wait_ns));
  emit("proc.timeslices", "count", true, static_cast<double>(t.timeslices));
  if (with_status) {
    emit("proc.voluntary_ctxt_switches", "count", true, static_cast<double>(t.voluntary));
    emit("proc.nonvoluntary_ctxt_switches", "count", true, static_cast<double>(t.nonvoluntary));
  }
  emit("proc.minflt", "count", true, static_cast<double>(*minflt));
  emit("proc.majflt", "count", true, static_cast<double>(*majflt));
  // Time in the kernel on the process's behalf (page-fault handling and memory reclaim among it), in
  // clock ticks: coarse (10 ms at USER_HZ 100) but cumulative, so exact over a window of many samples.
  if (clock_tick_hz_ == 0) clock_tick_hz_ = ::sysconf(_SC_CLK_TCK);
  if (clock_tick_hz_ > 0)
    emit("proc.stime_ns", "ns", true, static_cast<double>(*stime) * 1e9 / static_cast<double>(clock_tick_hz_));
  emit("proc.threads", "threads", false, threads);
  // statm: "size resident shared text lib data dirty", in pages.
  if (file_.Read(pid_dir + "/statm") == ReadResult::kOk && SplitFields(file_.text(), &fields_) >= 2) {
    if (const auto resident = ParseU64(fields_[1])) {
      if (page_size_ == 0) page_size_ = ::sysconf(_SC_PAGESIZE);
      emit("proc.rss_bytes", "bytes", false, static_cast<double>(*resident) * static_cast<double>(page_size_));
    }
  }
  return true;
}

}  // namespace strata::recorder
