// RedisTestCluster: a private 3-master Redis Cluster for one test (issue 49), with or without replicas: cluster-enabled
// redis-servers (RedisTestServer's way: free loopback ports, their bus ports (+10000) free too, no persistence, their
// own directory), joined by `redis-cli --cluster create ... --cluster-replicas 0`, ready once every node says
// cluster_state:ok. A node is up when the server answering on its port is its own process (a parallel test can take
// a free port first; the node is then started again on another). All three are killed (SIGKILL, reaped) when the object
// goes away. A missing redis-server is a failure.
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
    if (const int fd = BindLoopback(port + 10000); fd >= 0) {
      close(fd);
      return port;
    }
  }
}

class RedisTestCluster {
 public:
  /// 3 masters with `replicas` replicas each (with replicas, a 3 s node timeout: a dead master's replica
  /// is promoted within seconds).
  explicit RedisTestCluster(int replicas = 0) : replicas_(replicas) {
    dir_ = std::filesystem::temp_directory_path() / ("strata-cluster-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    for (int i = 0; i < 3 * (1 + replicas); ++i)
      if (!StartNode()) return;
    std::string create = "redis-cli --cluster create";
    for (int p : ports_) create += " 127.0.0.1:" + std::to_string(p);
    create += " --cluster-replicas " + std::to_string(replicas) + " --cluster-yes >/dev/null 2>&1";
    if (std::system(create.c_str()) != 0) return;
    for (int i = 0; i < 300 && !ready_; ++i) {
      ready_ = true;
      for (int p : ports_) ready_ = ready_ && NodeReady(p);
      if (!ready_) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~RedisTestCluster() {
    for (size_t i = 0; i < pids_.size(); ++i) Kill(i);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool ready() const { return ready_; }
  /// Stops the node on `port` (SIGKILL, reaped).
  void KillPort(int port) {
    for (size_t i = 0; i < ports_.size(); ++i)
      if (ports_[i] == port) Kill(i);
  }
  /// Stops node `i` (SIGKILL, reaped): without a replica its slots have no master left.
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
  /// Several commands in one round trip on one connection to `port` (a WAIT after a write on the same one).
  std::vector<RedisReply> RawPipeline(int port, const std::vector<std::vector<std::string>>& commands) const {
    RedisNode n;
    if (!n.Connect({"127.0.0.1", port}, {}, 3.0).ok()) return {};
    auto r = n.Pipeline(commands);
    return r.ok() ? r.value() : std::vector<RedisReply>{};
  }
  std::string Text(int port, const std::vector<std::string>& argv) const { return Raw(port, argv).text; }

 private:
  // cluster_state:ok, and a replica's link to its master up.
  bool NodeReady(int port) const {
    if (Text(port, {"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos) return false;
    const std::string info = Text(port, {"INFO", "replication"});
    return info.find("role:slave") == std::string::npos || info.find("master_link_status:up") != std::string::npos;
  }
  // A node on a free port, answering as itself; up to 5 ports tried.
  bool StartNode() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      Start(FreeClusterPort());
      if (WaitRedisAnswers(ports_.back(), pids_.back())) return true;
      Kill(pids_.size() - 1);
      ports_.pop_back();
      pids_.pop_back();
    }
    return false;
  }
  void Start(int port) {
    ports_.push_back(port);
    const std::string p = std::to_string(port);
    const std::filesystem::path dir = dir_ / p;  // a directory each: a replica's full sync writes dump.rdb there
    std::filesystem::create_directories(dir);
    std::vector<std::string> args = {"redis-server", "--port", p, "--bind", "127.0.0.1"};
    args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"});
    args.insert(args.end(), {"--save", "", "--appendonly", "no", "--dir", dir.string()});
    args.insert(args.end(), {"--loglevel", "warning", "--logfile", "redis.log"});
    if (replicas_ > 0) args.insert(args.end(), {"--cluster-node-timeout", "3000"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      execvp("redis-server", argv.data());
      _exit(127);
    }
    pids_.push_back(pid);
  }
  int replicas_ = 0;
  std::vector<int> ports_;
  std::vector<pid_t> pids_;
  bool ready_ = false;
  std::filesystem::path dir_;
};

}  // namespace strata::agent
