// HttpFront (see http_front.h).
#include "agent/http_front.h"

#include <httplib.h>

#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace strata::agent {
namespace {

// The live page: the status, refreshed every second by the browser (no external resources). %TITLE% is
// replaced by the program's name. Every value from the status is escaped before it joins the page: summaries
// carry names from the traced program ("Python worker.<locals>.f").
constexpr const char* kPage = R"(<!doctype html><html><head><meta charset="utf-8"><title>%TITLE%</title>
<style>body{font:14px monospace;margin:1em}td,th{padding:2px 8px;text-align:left}.bad{color:#b00}</style></head>
<body><h3>%TITLE%</h3><div id="s">loading...</div><script>
const esc=v=>String(v??'').replace(/[&<>"']/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c]));
async function tick(){try{const r=await fetch('/api/v1/status');const s=await r.json();let h='';
for(const j of s.jobs){h+=`<h4>job ${esc(j.job)}: ${esc(j.status||'?')} (ranks ${esc(j.ranks.join(', '))}, step ${esc(j.step_time_median_ms||'?')} ms)</h4>`;
if(j.stalled)h+=`<p class="bad"><b>STALLED for ${esc(j.stalled_for_s)} s</b>: ranks wait in a collective (see the hang findings)</p>`;
h+='<table><tr><th>rank</th><th>cause</th><th>step</th><th>detected</th><th>summary</th></tr>';
for(const f of j.findings){h+=`<tr class="bad"><td>${esc(f.rank)}</td><td>${esc(f.cause)}</td><td>${esc(f.step)}</td><td>${esc(new Date(f.detected_at*1000).toLocaleTimeString())}</td><td>${esc(f.summary)}</td></tr>`;}
h+='</table>';}
document.getElementById('s').innerHTML=h||'no training job';}catch(e){}}
setInterval(tick,1000);tick();</script></body></html>)";

std::string Page(const std::string& title) {
  std::string page = kPage;
  for (size_t at; (at = page.find("%TITLE%")) != std::string::npos;) page.replace(at, 7, title);
  return page;
}

std::string ErrorJson(const std::string& message) { return nlohmann::json{{"error", message}}.dump(); }

// The refusal for a caller `access` does not allow, or nullopt.
std::optional<ControlReply> Refusal(ControlAccess::Verdict v) {
  switch (v) {
    case ControlAccess::Verdict::kAllowed:
      return std::nullopt;
    case ControlAccess::Verdict::kNeedsToken:
      return ControlReply{401, ErrorJson("this agent's control endpoints need its token: Authorization: Bearer TOKEN "
                                         "(the agent's --control-token file)")};
    case ControlAccess::Verdict::kWrongToken:
      return ControlReply{401, ErrorJson("wrong token")};
    case ControlAccess::Verdict::kNotLoopback:
      return ControlReply{403, ErrorJson("control endpoints answer loopback only unless the agent was started with "
                                         "--control-token FILE")};
  }
  return ControlReply{403, ErrorJson("refused")};
}

// The request's `seconds`: nullopt when absent; an error reply when it is not a positive finite number.
std::optional<ControlReply> ParseSeconds(const httplib::Request& req, std::optional<double>* seconds) {
  if (!req.has_param("seconds")) return std::nullopt;
  const std::string text = req.get_param_value("seconds");
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
    return ControlReply{400, ErrorJson("seconds: expected a positive number of seconds, got '" + text + "'")};
  *seconds = v;
  return std::nullopt;
}

constexpr size_t kMaxControlBody = 4096;  // a control request's form body beyond this is dropped

// `req` with the parameters of its form body, if it has one, added to its query's.
httplib::Request WithFormBody(const httplib::Request& req, const httplib::ContentReader& content) {
  httplib::Request out = req;
  if (!req.has_header("Content-Length") && req.get_header_value("Transfer-Encoding") != "chunked") return out;
  std::string body;
  content([&](const char* data, size_t size) {
    if (body.size() < kMaxControlBody) body.append(data, std::min(size, kMaxControlBody - body.size()));
    return true;
  });
  if (req.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded"))
    httplib::detail::parse_query_text(body, out.params);
  return out;
}

ControlReply DeepRequest(const httplib::Request& req, const ControlAccess& access, const DeepHandler& handler) {
  if (auto refusal = Refusal(access.Check(req.remote_addr, req.get_header_value("Authorization")))) return *refusal;
  if (!req.has_param("job") || req.get_param_value("job").empty())
    return ControlReply{400, ErrorJson("job: missing (the job's id as /api/v1/status lists it)")};
  std::optional<double> seconds;
  if (auto bad = ParseSeconds(req, &seconds)) return *bad;
  return handler(req.get_param_value("job"), seconds);
}

}  // namespace

HttpFront::HttpFront(std::string title) : title_(std::move(title)) {}
HttpFront::~HttpFront() { Stop(); }

Status HttpFront::Start(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  const std::string host = colon == std::string::npos ? "127.0.0.1" : listen.substr(0, colon);
  const std::string port_text = listen.substr(colon == std::string::npos ? 0 : colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535)
    return Status::Usage("--listen '" + listen + "': expected HOST:PORT");
  server_ = std::make_unique<httplib::Server>();
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    res.set_content(metrics_, "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/api/v1/status", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    res.set_content(status_, "application/json");
  });
  server_->Get("/api/v1/nodes", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (nodes_.empty()) {
      res.status = 404;
      res.set_content("{\"error\": \"no memory across jobs here (strata serve keeps it)\"}", "application/json");
      return;
    }
    res.set_content(nodes_, "application/json");
  });
  // A handler with a content reader, as httplib otherwise answers 400 to a POST without Content-Length
  // (what `curl -X POST URL` sends).
  if (deep_)
    server_->Post("/api/v1/deep",
                  [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& content) {
                    const ControlReply reply = DeepRequest(WithFormBody(req, content), access_, deep_);
                    res.status = reply.status;
                    res.set_content(reply.json, "application/json");
                  });
  const std::string page = Page(title_);
  server_->Get("/", [page](const httplib::Request&, httplib::Response& res) { res.set_content(page, "text/html"); });
  if (port == 0) {
    port_ = server_->bind_to_any_port(host.c_str());
    if (port_ <= 0) return Status::Resource("--listen '" + listen + "': cannot bind");
  } else {
    if (!server_->bind_to_port(host.c_str(), static_cast<int>(port)))
      return Status::Resource("--listen '" + listen + "': cannot bind (address in use or not local?)");
    port_ = static_cast<int>(port);
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return Status::Ok();
}

void HttpFront::Publish(std::string status_json, std::string metrics_text) {
  std::lock_guard<std::mutex> lock(mutex_);
  status_ = std::move(status_json);
  metrics_ = std::move(metrics_text);
}

void HttpFront::SetDeepControl(ControlAccess access, DeepHandler handler) {
  access_ = std::move(access);
  deep_ = std::move(handler);
}

void HttpFront::PublishNodes(std::string nodes_json) {
  std::lock_guard<std::mutex> lock(mutex_);
  nodes_ = std::move(nodes_json);
}

void HttpFront::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace strata::agent
