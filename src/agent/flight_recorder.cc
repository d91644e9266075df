// FlightRecorder: recorder subprocesses and chunk retention (see flight_recorder.h).
#include "agent/flight_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include "agent/deep_tracing.h"
#include "segments/segment_tail.h"

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

// The segment files (*.sseg) of a chunk.
std::vector<std::string> SegmentFiles(const std::string& chunk_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(chunk_dir, ec))
    if (entry.path().extension() == ".sseg") out.push_back(entry.path().string());
  return out;
}

// When the chunk's recorder said every probe was attached (its `attached` record, Unix ns); 0 when not yet.
int64_t AttachedUnixNs(const std::string& chunk_dir) {
  for (const std::string& path : SegmentFiles(chunk_dir)) {
    segments::SegmentTail tail(path);
    if (!tail.Poll().ok()) continue;
    for (const auto& record : tail.data().meta)
      if (record.is_object() && record.value("type", "") == "attached") return record.value("unix_ns", int64_t{1});
  }
  return 0;
}

// The last time the chunk's recorder wrote to its segment (Unix ns; 0 when it has none).
int64_t LastWriteUnixNs(const std::string& chunk_dir) {
  int64_t last = 0;
  for (const std::string& path : SegmentFiles(chunk_dir)) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0)
      last = std::max(last, static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec);
  }
  return last;
}

// A pending chunk attached this long past its handover becomes current even if the previous recorder's file
// did not show a write past it (it writes every second while it runs; this only bounds a stalled writer).
constexpr double kPromoteWithoutOverlapS = 3;
constexpr double kHandoverSteps = 2.5, kMinHandoverS = 1, kMaxHandoverS = 30;

}  // namespace

FlightRecorder::~FlightRecorder() { Stop(); }

double HandoverSeconds(double step_s) {
  if (step_s <= 0) return 0;  // no step summarized yet: none can be lost, and a longer overlap only perturbs
  return std::clamp(kHandoverSteps * step_s, kMinHandoverS, kMaxHandoverS);
}

bool FlightRecorder::Start(const std::set<int>& pids, double now_s, bool deep) {
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
                                   std::to_string(deep ? options_.deep_sample_hz : options_.sample_hz)};
  if (deep) {
    args.push_back("--counter-hz");
    args.push_back(fmt::format("{:g}", kDeepCounterHz));
  }
  // No link samples between the host counter samples (strata record's --link-hz): the agent re-reads its
  // recording every interval, and their rows slowed it enough on a loaded 2-core machine that serve named no
  // rank, or a wrong one, in 3 of 3 runs of two agent_cluster tests at once (0 of 7 without them, 2026-12-06).
  // Those runs had the recorder spinning in the last millisecond before each tick (since fixed: ticker.h);
  // whether the agent could take them now was not measured again.
  args.push_back("--link-hz");
  args.push_back("0");
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
  // A pending chunk replaced before it attached is stopped now: it never became the one read.
  if (!pending_.dir.empty()) StopChild(pending_, now_s);
  pending_ = Child{};
  Child started{child, chunk, now_s, pids};
  started.deep = deep;
  if (current_.pid > 0)
    pending_ = started;  // read once attached; the current one goes on meanwhile
  else
    current_ = started;  // nothing running to overlap with: read from now on
  ++restarts_;
  return true;
}

void FlightRecorder::StopChild(Child c, double now_s) {
  if (c.pid <= 0) return;
  c.stop_at_s = now_s;
  stopping_.push_back(c);
}

void FlightRecorder::PromotePending(double now_s) {
  if (pending_.dir.empty()) return;
  if (pending_.attached_unix_ns == 0) {
    pending_.attached_unix_ns = AttachedUnixNs(pending_.dir);
    if (pending_.attached_unix_ns == 0) return;
    pending_.attached_seen_s = now_s;
  }
  // The previous recorder must have written a handover past the attach instant: what happened before it is
  // in the previous chunk only (a step under way then, in full), and the live diagnosis reads that chunk one
  // last time when it switches.
  const auto handover_ns = static_cast<int64_t>(handover_s_ * 1e9);
  const bool overlapped = current_.pid == 0 ||
                          LastWriteUnixNs(current_.dir) > pending_.attached_unix_ns + handover_ns ||
                          now_s - pending_.attached_seen_s >= kPromoteWithoutOverlapS + handover_s_;
  if (!overlapped) return;
  StopChild(current_, now_s);
  current_ = pending_;
  pending_ = Child{};
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
  // A pending recorder that ended before it became current: its processes ended (the current chunk saw
  // them end too, and holds more) or it failed (a later round starts another: the pids differ from the
  // current chunk's or the rotation is due).
  if (pending_.pid > 0 && exited(pending_.pid)) pending_ = Child{};
}

void FlightRecorder::Update(const std::set<int>& pids, double now_s, bool hold_rotation, bool deep) {
  Reap();
  PromotePending(now_s);
  // A new process starts a new chunk (a recorder attaches to the pids it was given); one that ended does not:
  // the current recorder goes on with the rest, so the chunk keeps the whole story of a job whose ranks die
  // one after another (a hang ending in the peers' timeouts). Both are judged against the newest recorder
  // started (a pending one covers its pids already).
  const Child& newest = pending_.dir.empty() ? current_ : pending_;
  const bool changed = !std::includes(newest.pids.begin(), newest.pids.end(), pids.begin(), pids.end());
  const bool due =
      newest.pid > 0 && !hold_rotation && (now_s - newest.started_s >= options_.rotate_s || newest.deep != deep);
  // A recorder that ended cleanly saw its processes end: the same pids, still listed while they exit, would
  // only start an empty chunk (and the job's last word would be about it); one that failed is restarted.
  const bool lost = pending_.dir.empty() && current_.pid == 0 && !(current_.exited_cleanly && !changed);
  if (!pids.empty() && (lost || changed || due)) Start(pids, now_s, deep);
  for (Child& c : stopping_)
    if (!c.signalled && now_s >= c.stop_at_s) {
      kill(c.pid, SIGINT);
      c.signalled = true;
    }
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
    if (c.path == current_.dir || c.path == pending_.dir) continue;
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
  if (pending_.pid > 0) all.push_back(pending_);
  for (const Child& c : all) kill(c.pid, SIGINT);
  for (const Child& c : all) {
    int status = 0;
    waitpid(c.pid, &status, 0);
  }
  stopping_.clear();
  current_.pid = 0;
  pending_ = Child{};
}

}  // namespace strata::agent
