// RedisTestServer: a private redis-server for one test (issue 13's multi-node path): a free loopback port,
// no persistence (--save '' --appendonly no), its own temporary directory; stopped (SIGTERM, reaped) when
// the object goes away. A missing redis-server is a failure, never a skip. Ready means the server answering on
// the port is this one (INFO's process_id is the child's pid): a free port can be taken by a parallel test
// between the check and the bind, and then another test's server would answer PING. A port the test did not
// choose is then chosen again (up to 5 times).
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "agent/redis_connection.h"

namespace strata::agent {

/// A TCP socket bound to loopback `port` (0: a port the kernel picks), or -1 when the port is taken.
inline int BindLoopback(int port = 0) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  close(fd);
  return -1;
}

/// The local port a bound socket has.
inline int PortOf(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

/// A loopback port nothing listens on now (bound to 0 and released).
inline int FreePort() {
  const int fd = BindLoopback();
  const int port = PortOf(fd);
  close(fd);
  return port;
}

/// Whether the redis-server answering on `port` is the process `pid` (INFO server's process_id).
inline bool RedisAnswersAs(int port, pid_t pid) {
  RedisConnection c;
  if (!c.Connect(RedisAddress{"127.0.0.1", port}, 0.2).ok()) return false;
  auto info = c.Command({"INFO", "server"});
  return info.ok() && info.value().text.find("process_id:" + std::to_string(pid) + "\r") != std::string::npos;
}

/// Waits (up to 5 s) until `pid` answers on `port`; false at once when the child has exited (its port taken),
/// `pid` then set to -1 (reaped).
inline bool WaitRedisAnswers(int port, pid_t& pid) {
  for (int i = 0; i < 100; ++i) {
    if (RedisAnswersAs(port, pid)) return true;
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

class RedisTestServer {
 public:
  /// On a free port, chosen again when a parallel test took it first.
  RedisTestServer() {
    for (int attempt = 0; attempt < 5 && !ready_; ++attempt) {
      if (attempt > 0) Stop();
      Launch(FreePort());
    }
  }
  /// On `port`, as the test chose it (no second choice).
  explicit RedisTestServer(int port) { Launch(port); }
  ~RedisTestServer() { Stop(); }
  void Stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool ready() const { return ready_; }
  RedisAddress address() const { return RedisAddress{"127.0.0.1", port_}; }
  int port() const { return port_; }

 private:
  void Launch(int port) {
    port_ = port;
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-redis-" + std::to_string(getpid()) + "-" + std::to_string(port));
    std::filesystem::create_directories(dir_);
    pid_ = fork();
    if (pid_ == 0) {
      const std::string p = std::to_string(port_), d = dir_.string();
      execlp("redis-server", "redis-server", "--port", p.c_str(), "--bind", "127.0.0.1", "--save", "", "--appendonly",
             "no", "--dir", d.c_str(), "--loglevel", "warning", "--logfile", "redis.log", static_cast<char*>(nullptr));
      _exit(127);
    }
    ready_ = WaitRedisAnswers(port_, pid_);
  }
  int port_ = 0;
  pid_t pid_ = -1;
  bool ready_ = false;
  std::filesystem::path dir_;
};

}  // namespace strata::agent
