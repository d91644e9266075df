// Gated fork/exec of the recorded command (see command_launcher.h).
#include "recorder/command_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata::recorder {

CommandLauncher::~CommandLauncher() {
  if (gate_fd_ >= 0) ::close(gate_fd_);
  if (exec_error_fd_ >= 0) ::close(exec_error_fd_);
}

Expected<pid_t> CommandLauncher::Fork(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status::Usage("no command given to run");
  command_ = argv[0];
  int gate[2], error_pipe[2];
  if (::pipe2(gate, O_CLOEXEC) != 0 || ::pipe2(error_pipe, O_CLOEXEC) != 0)
    return Status::Resource(std::string("cannot create pipes: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Resource(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(gate[1]);
    ::close(error_pipe[0]);
    char go = 0;
    if (::read(gate[0], &go, 1) != 1) ::_exit(127);  // the recorder went away before releasing us
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execvp(args[0], args.data());
    const int err = errno;
    (void)!::write(error_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(gate[0]);
  ::close(error_pipe[1]);
  gate_fd_ = gate[1];
  exec_error_fd_ = error_pipe[0];
  pid_ = pid;
  return pid;
}

Status CommandLauncher::Release() {
  const char go = 1;
  if (::write(gate_fd_, &go, 1) != 1) return Status::Resource("cannot start " + command_ + ": the child went away");
  ::close(gate_fd_);
  gate_fd_ = -1;
  int err = 0;
  const ssize_t n = ::read(exec_error_fd_, &err, sizeof err);  // EOF (0) once exec succeeded
  ::close(exec_error_fd_);
  exec_error_fd_ = -1;
  if (n == static_cast<ssize_t>(sizeof err)) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exited_ = true;
    exit_code_ = 127;
    return Status::Resource("cannot run " + command_ + ": " + std::strerror(err));
  }
  return Status::Ok();
}

bool CommandLauncher::Exited(int* exit_code) {
  if (!exited_ && pid_ > 0) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } else if (r < 0 && errno == ECHILD) {
      exited_ = true;
    }
  }
  if (exited_ && exit_code) *exit_code = exit_code_;
  return exited_;
}

void CommandLauncher::Signal(int signal) const {
  if (pid_ > 0 && !exited_) ::kill(pid_, signal);
}

}  // namespace strata::recorder
