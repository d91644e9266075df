// RedisTestServer: a private redis-server for one test (issue 13's multi-node path): a free loopback port,
// no persistence (--save '' --appendonly no), its own temporary directory; stopped (SIGTERM, reaped) when
// the object goes away. A missing redis-server is a failure, never a skip.
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

/// A loopback port nothing listens on now (bound to 0 and released).
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

class RedisTestServer {
 public:
  explicit RedisTestServer(int port = FreePort()) : port_(port) {
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
    for (int i = 0; i < 100 && !ready_; ++i) {
      RedisConnection c;
      if (c.Connect(address(), 0.2).ok() && c.Command({"PING"}).ok()) ready_ = true;
      if (!ready_) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
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
  int port_;
  pid_t pid_ = -1;
  bool ready_ = false;
  std::filesystem::path dir_;
};

}  // namespace strata::agent
