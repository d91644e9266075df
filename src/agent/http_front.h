// HttpFront: the HTTP side shared by `strata agent` and `strata serve` (cpp-httplib): /metrics (Prometheus
// text), /api/v1/status (JSON) and / (a live page that polls the status every second). The owner renders
// both documents and hands them over with Publish; requests only read the last published copies.
// Invariants: handlers never block on the owner's work (one mutex around two strings); Stop joins the
// server thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"

namespace httplib {
class Server;
}

namespace strata::agent {

class HttpFront {
 public:
  explicit HttpFront(std::string title);
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  /// Binds HOST:PORT (port 0 = any free port, see port()) and starts serving in a thread.
  Status Start(const std::string& listen);
  int port() const { return port_; }
  void Publish(std::string status_json, std::string metrics_text);
  /// The document of /api/v1/nodes (serve's memory across jobs); until published, that path is 404.
  void PublishNodes(std::string nodes_json);
  void Stop();

 private:
  std::string title_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::string status_ = "{}", metrics_, nodes_;
  int port_ = 0;
};

}  // namespace strata::agent
