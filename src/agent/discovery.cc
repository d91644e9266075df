// Discovery: /proc scan (see discovery.h).
#include "agent/discovery.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "recorder/process_info.h"

namespace strata::agent {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string EnvValue(const std::string& environ, const std::string& name) {
  const std::string key = name + "=";
  size_t pos = 0;
  while (pos < environ.size()) {
    const size_t end = environ.find('\0', pos);
    const std::string_view entry(environ.data() + pos, (end == std::string::npos ? environ.size() : end) - pos);
    if (entry.substr(0, key.size()) == key) return std::string(entry.substr(key.size()));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return "";
}

// Field 22 of /proc/PID/stat (start time in clock ticks); 0 when unreadable, or when the process has ended
// (state Z, a zombie its parent has not reaped, or X): it has nothing left to record.
uint64_t StartTime(const std::string& proc_root, int pid) {
  const std::string stat = ReadAll(proc_root + "/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return 0;
  if (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X') return 0;
  std::istringstream rest(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

}  // namespace

std::string JobIdOf(const std::string& environ) {
  recorder::ProcessInfo info;
  recorder::ParseRankEnvironment(environ, &info);
  if (!info.rank) return "";
  for (const char* name : {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"})
    if (std::string v = EnvValue(environ, name); !v.empty()) return v;
  const std::string addr = EnvValue(environ, "MASTER_ADDR"), port = EnvValue(environ, "MASTER_PORT");
  if (!addr.empty() || !port.empty()) return addr + ":" + port;
  return "local";
}

uint64_t NetworkNamespaceOf(const std::string& proc_root, const std::string& pid) {
  struct stat st {};
  if (::stat((proc_root + "/" + pid + "/ns/net").c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

std::map<std::string, DiscoveredJob> Discovery::Scan() {
  std::map<std::string, DiscoveredJob> jobs;
  std::map<int, Seen> now;
  DIR* dir = opendir(proc_root_.c_str());
  if (dir == nullptr) return jobs;
  const int self = static_cast<int>(getpid());
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == self) continue;
    const uint64_t start = StartTime(proc_root_, static_cast<int>(pid));
    if (start == 0) continue;
    Seen seen;
    if (auto it = seen_.find(static_cast<int>(pid)); it != seen_.end() && it->second.start_time == start) {
      seen = it->second;
    } else {
      const std::string environ = ReadAll(proc_root_ + "/" + std::to_string(pid) + "/environ");
      seen.start_time = start;
      seen.job = JobIdOf(environ);
      if (!seen.job.empty()) {
        recorder::ProcessInfo info;
        recorder::ParseRankEnvironment(environ, &info);
        seen.rank = *info.rank;
      }
    }
    now[static_cast<int>(pid)] = seen;
    if (seen.job.empty()) continue;
    if (netns_ != 0 && NetworkNamespaceOf(proc_root_, e->d_name) != netns_) continue;
    jobs[seen.job].rank_of_pid[static_cast<int>(pid)] = seen.rank;
  }
  closedir(dir);
  seen_ = std::move(now);
  return jobs;
}

}  // namespace strata::agent
