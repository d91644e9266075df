// Threads asleep since before the recorder attached, from /proc (see sleep_watch.h).
#include "recorder/sleep_watch.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

namespace strata::recorder {

std::optional<SleepWatch::Seen> SleepWatch::Read(int pid, long tid) {
  const std::string task = fmt::format("/proc/{}/task/{}/", pid, tid);
  std::ifstream stat(task + "stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const size_t paren = line.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos || paren + 2 >= line.size()) return std::nullopt;
  Seen seen;
  seen.state = line[paren + 2];
  std::ifstream schedstat(task + "schedstat");
  if (!(schedstat >> seen.cpu_ns)) return std::nullopt;
  return seen;
}

std::optional<SleepWatch::Asleep> SleepWatch::Observe(long tid, const std::optional<Seen>& seen, uint64_t now,
                                                      uint64_t min_ns) {
  const bool asleep = seen && (seen->state == 'S' || seen->state == 'D');
  if (!asleep) {
    watched_.erase(tid);
    return std::nullopt;
  }
  auto [it, fresh] = watched_.try_emplace(tid, Watch{seen->cpu_ns, now});
  if (!fresh && it->second.cpu_ns != seen->cpu_ns) it->second = Watch{seen->cpu_ns, now};  // it ran meanwhile
  if (now < it->second.since || now - it->second.since < min_ns) return std::nullopt;
  const bool first = !it->second.reported;
  it->second.reported = true;
  return Asleep{seen->state == 'D' ? 2u : 1u, it->second.since, first};
}

}  // namespace strata::recorder
