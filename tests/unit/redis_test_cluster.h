// RedisTestCluster: a private 3-master Redis Cluster for one test (issue 49): three cluster-enabled
// redis-servers (RedisTestServer's way: free loopback ports, their bus ports (+10000) free too, no persistence, their
// own directory), joined by `redis-cli --cluster create ... --cluster-replicas 0`, ready once every node says
// cluster_state:ok. All three are killed (SIGKILL, reaped) when the object goes away. A missing redis-server is a
// failure.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "agent/redis_node.h"
#include "redis_test_server.h"

namespace strata::agent {

/// A free loopback port whose cluster bus port (port + 10000) is free too.
inline int FreeClusterPort() {
  for (;;) {
    const int port = FreePort();
    if (port + 10000 > 65535) continue;
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port + 10000));
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    if (free) return port;
  }
}

class RedisTestCluster {
 public:
  RedisTestCluster() {
    dir_ = std::filesystem::temp_directory_path() / ("strata-cluster-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    for (int i = 0; i < 3; ++i) Start(FreeClusterPort());
    std::string create = "redis-cli --cluster create";
    for (int p : ports_) create += " 127.0.0.1:" + std::to_string(p);
    create += " --cluster-replicas 0 --cluster-yes >/dev/null 2>&1";
    if (!WaitPing() || std::system(create.c_str()) != 0) return;
    for (int i = 0; i < 100 && !ready_; ++i) {
      ready_ = true;
      for (int p : ports_)
        ready_ = ready_ && Text(p, {"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos;
      if (!ready_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~RedisTestCluster() {
    for (size_t i = 0; i < pids_.size(); ++i) Kill(i);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool ready() const { return ready_; }
  /// Stops node `i` (SIGKILL, reaped): its slots have no master left.
  void Kill(size_t i) {
    if (pids_[i] <= 0) return;
    kill(pids_[i], SIGKILL);
    waitpid(pids_[i], nullptr, 0);
    pids_[i] = -1;
  }
  const std::vector<int>& ports() const { return ports_; }
  /// One command straight to the node on `port` (no routing); its reply's text ("" on an I/O error).
  RedisReply Raw(int port, const std::vector<std::string>& argv) const {
    RedisNode n;
    if (!n.Connect({"127.0.0.1", port}, {}, 2.0).ok()) return {};
    auto r = n.Pipeline({argv});
    return r.ok() ? r.value().front() : RedisReply{};
  }
  std::string Text(int port, const std::vector<std::string>& argv) const { return Raw(port, argv).text; }

 private:
  void Start(int port) {
    ports_.push_back(port);
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string p = std::to_string(port), d = dir_.string(), conf = "nodes-" + p + ".conf";
      execlp("redis-server", "redis-server", "--port", p.c_str(), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", conf.c_str(), "--save", "", "--appendonly", "no", "--dir", d.c_str(),
             "--loglevel", "warning", "--logfile", ("redis-" + p + ".log").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    pids_.push_back(pid);
  }
  bool WaitPing() const {
    for (int p : ports_) {
      bool up = false;
      for (int i = 0; i < 100 && !up; ++i) {
        up = Text(p, {"PING"}) == "PONG";
        if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!up) return false;
    }
    return true;
  }
  std::vector<int> ports_;
  std::vector<pid_t> pids_;
  bool ready_ = false;
  std::filesystem::path dir_;
};

}  // namespace strata::agent
