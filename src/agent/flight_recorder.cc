// FlightRecorder: recorder subprocesses and chunk retention (see flight_recorder.h).
#include "agent/flight_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

namespace strata::agent {
namespace fs = std::filesystem;

namespace {

// One past the highest chunk number in `dir` (0 when none): an agent restarted on a job whose earlier
// chunks are still retained continues their numbering instead of writing into chunk-000000 again beside an
// old segment (the live diagnosis reads every segment of the current chunk).
uint64_t FirstFreeChunk(const std::string& dir) {
  uint64_t next = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("chunk-", 0) != 0 || name.size() == 6) continue;
    uint64_t n = 0;
    const char* digits = name.c_str() + 6;
    const auto [end, err] = std::from_chars(digits, name.c_str() + name.size(), n);
    if (err == std::errc() && *end == '\0' && n != UINT64_MAX) next = std::max(next, n + 1);
  }
  return next;
}

}  // namespace

FlightRecorder::~FlightRecorder() { Stop(); }

bool FlightRecorder::Start(const std::set<int>& pids, double now_s) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  next_chunk_ = std::max(next_chunk_, FirstFreeChunk(dir_));
  const std::string chunk = (fs::path(dir_) / fmt::format("chunk-{:06d}", next_chunk_++)).string();
  std::vector<std::string> args = {options_.strata,
                                   "record",
                                   "-q",
                                   "--no-nccl-plugin",
                                   "-o",
                                   chunk,
                                   "--sample-hz",
                                   std::to_string(options_.sample_hz)};
  for (int pid : pids) {
    args.push_back("--pid");
    args.push_back(std::to_string(pid));
  }
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    // The recorder's own messages go to the agent's stderr; its stdin is not the agent's.
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(options_.strata.c_str(), argv.data());
    _exit(127);
  }
  if (current_.pid > 0) {
    // The new recorder attaches first; the old one is stopped once it had time to (no gap between chunks).
    current_.stop_at_s = now_s + 3;
    stopping_.push_back(current_);
  }
  current_ = Child{child, chunk, now_s, pids};
  ++restarts_;
  return true;
}

void FlightRecorder::Reap() {
  int status = 0;
  auto exited = [&status](pid_t pid) { return waitpid(pid, &status, WNOHANG) == pid; };
  stopping_.erase(std::remove_if(stopping_.begin(), stopping_.end(), [&](const Child& c) { return exited(c.pid); }),
                  stopping_.end());
  if (current_.pid > 0 && exited(current_.pid)) {  // its processes ended (or it failed): the chunk is finished
    current_.pid = 0;
    current_.exited_cleanly = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
}

void FlightRecorder::Update(const std::set<int>& pids, double now_s, bool hold_rotation) {
  Reap();
  for (Child& c : stopping_)
    if (!c.signalled && now_s >= c.stop_at_s) {
      kill(c.pid, SIGINT);
      c.signalled = true;
    }
  // A new process starts a new chunk (a recorder attaches to the pids it was given); one that ended does not:
  // the current recorder goes on with the rest, so the chunk keeps the whole story of a job whose ranks die
  // one after another (a hang ending in the peers' timeouts).
  const bool changed = !std::includes(current_.pids.begin(), current_.pids.end(), pids.begin(), pids.end());
  const bool due = current_.pid > 0 && !hold_rotation && now_s - current_.started_s >= options_.rotate_s;
  // A recorder that ended cleanly saw its processes end: the same pids, still listed while they exit, would
  // only start an empty chunk (and the job's last word would be about it); one that failed is restarted.
  const bool lost = current_.pid == 0 && !(current_.exited_cleanly && !changed);
  if (!pids.empty() && (lost || changed || due)) Start(pids, now_s);
  Prune();
}

void FlightRecorder::Prune() {
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return;
  struct Chunk {
    std::string path;
    double age_s;
    uint64_t bytes;
  };
  std::vector<Chunk> chunks;
  const auto now_file = fs::file_time_type::clock::now();
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (!entry.is_directory() || entry.path().filename().string().rfind("chunk-", 0) != 0) continue;
    uint64_t bytes = 0;
    auto newest = fs::file_time_type::min();
    for (const auto& f : fs::directory_iterator(entry.path(), ec)) {
      bytes += f.file_size(ec);
      newest = std::max(newest, f.last_write_time(ec));
    }
    const double age =
        newest == fs::file_time_type::min() ? 0 : std::chrono::duration<double>(now_file - newest).count();
    chunks.push_back({entry.path().string(), age, bytes});
  }
  std::sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) { return a.path < b.path; });
  uint64_t total = 0;
  for (const Chunk& c : chunks) total += c.bytes;
  const auto limit = static_cast<uint64_t>(options_.retain_mb * 1e6);
  for (const Chunk& c : chunks) {
    if (c.path == current_.dir) continue;
    bool live = false;
    for (const Child& s : stopping_) live |= s.dir == c.path;
    if (live) continue;
    if (c.age_s > options_.retain_s || total > limit) {
      fs::remove_all(c.path, ec);
      total -= std::min(total, c.bytes);
    }
  }
}

void FlightRecorder::Stop() {
  std::vector<Child> all = stopping_;
  if (current_.pid > 0) all.push_back(current_);
  for (const Child& c : all) kill(c.pid, SIGINT);
  for (const Child& c : all) {
    int status = 0;
    waitpid(c.pid, &status, 0);
  }
  stopping_.clear();
  current_.pid = 0;
}

}  // namespace strata::agent
