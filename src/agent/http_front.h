// HttpFront: the HTTP side shared by `strata agent` and `strata serve` (cpp-httplib): /metrics (Prometheus
// text), /api/v1/status (JSON) and / (a live page that polls the status every second). The owner renders
// both documents and hands them over with Publish; requests only read the last published copies. The agent
// also serves one control endpoint, POST /api/v1/deep (deep_tracing.h), for the callers its ControlAccess
// allows.
// Invariants: handlers never block on the owner's work (one mutex around two strings; the control handler
// only queues the request for the owner's next round); Stop joins the server thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent/deep_tracing.h"
#include "core/status.h"

namespace httplib {
class Server;
}

namespace strata::agent {

/// The owner's answer to a control request: the HTTP status and a JSON body.
struct ControlReply {
  int status = 202;
  std::string json;
};
/// A deep-tracing request: the job's id and the seconds asked for (nullopt: the owner's default).
using DeepHandler = std::function<ControlReply(const std::string& job, std::optional<double> seconds)>;

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
  /// Serves POST /api/v1/deep (parameters `job` and `seconds`, in the query or a form body) to the callers
  /// `access` allows (401/403 for the others), answered by `handler`. Call before Start.
  void SetDeepControl(ControlAccess access, DeepHandler handler);
  /// The document of /api/v1/nodes (serve's memory across jobs); until published, that path is 404.
  void PublishNodes(std::string nodes_json);
  void Stop();

 private:
  std::string title_;
  ControlAccess access_;
  DeepHandler deep_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::string status_ = "{}", metrics_, nodes_;
  int port_ = 0;
};

}  // namespace strata::agent
