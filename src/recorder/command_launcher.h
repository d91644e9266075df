// Starts the command that `strata record` watches. The child is forked first and held at a gate until
// the recorder has put it in the traced set and attached its probes, so nothing it does is missed; a
// command that cannot be executed is reported with the exec error instead of a silent exit code.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace strata::recorder {

class CommandLauncher {
 public:
  CommandLauncher() = default;
  ~CommandLauncher();
  CommandLauncher(const CommandLauncher&) = delete;
  CommandLauncher& operator=(const CommandLauncher&) = delete;

  // Forks the child, which waits at the gate. Returns its pid.
  Expected<pid_t> Fork(const std::vector<std::string>& argv);
  // Lets the child exec the command; fails (naming the command) when exec fails.
  Status Release();
  // Non-blocking: true once the child has exited; `exit_code` is its code (128+signal when killed).
  bool Exited(int* exit_code);
  void Signal(int signal) const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int gate_fd_ = -1;        // write end: the child reads one byte to go on
  int exec_error_fd_ = -1;  // read end: the child writes errno if exec fails (closed on exec)
  std::string command_;
  bool exited_ = false;
  int exit_code_ = 0;
};

}  // namespace strata::recorder
