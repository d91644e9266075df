// OtherProcesses: the processes outside the traced set seen taking a traced thread's CPU (the off-CPU event's
// preempted_by and ran_before), each named once in the segment by an "other_process" meta record, so a diagnosis
// can say which process held the CPU (docs/segment-format.md).
// Invariants: at most one record per pid over the recording; never one for pid 0 (idle) or a traced process; the
// name is /proc's comm read when first seen, else the comm the kernel gave with the event (a process that
// preempted the thread and exited since), else empty.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace strata::recorder {

class OtherProcesses {
 public:
  /// `comm_of(pid)`: the process's name now ("" when it is gone).
  explicit OtherProcesses(std::function<std::string(int pid)> comm_of) : comm_of_(std::move(comm_of)) {}

  /// The "other_process" record for `pid` the first time it is seen and is not traced (`traced`); nullopt
  /// otherwise. `event_comm`: the name the kernel gave with the event for this pid, when it gave one, as its
  /// fixed-size field (cut at its first NUL here, on a first sight only: the caller runs once per off-CPU event).
  std::optional<nlohmann::json> FirstSight(uint32_t pid, bool traced, std::string_view event_comm = {}) {
    if (pid == 0 || traced || !seen_.insert(pid).second) return std::nullopt;
    std::string comm = comm_of_(static_cast<int>(pid));
    if (comm.empty()) comm = std::string(event_comm.substr(0, event_comm.find('\0')));
    return nlohmann::json{{"type", "other_process"}, {"pid", pid}, {"comm", comm}};
  }

 private:
  std::function<std::string(int pid)> comm_of_;
  std::set<uint32_t> seen_;
};

}  // namespace strata::recorder
