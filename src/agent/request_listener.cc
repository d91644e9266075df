// RequestListener (see request_listener.h).
#include "agent/request_listener.h"

#include <algorithm>

namespace strata::agent {

Status RequestListener::Connected(double now_s) {
  if (conn_.connected()) return Status::Ok();
  if (now_s < retry_at_) return Status::Resource(address_.Text() + ": waiting to reconnect");
  Status st = conn_.Connect(address_, timeout_s_);
  if (!st.ok()) {
    backoff_s_ = backoff_s_ == 0 ? 0.5 : std::min(backoff_s_ * 2, 30.0);
    retry_at_ = now_s + backoff_s_;
    return st;
  }
  backoff_s_ = 0;
  return Status::Ok();
}

Expected<std::vector<WindowRequest>> RequestListener::Poll(const std::string& job, double now_s) {
  if (Status st = Connected(now_s); !st.ok()) return st;
  std::vector<WindowRequest> out;
  const std::string key = RequestsStreamKey(job);
  auto last = last_id_.find(job);
  if (last == last_id_.end()) {  // start at the stream's end
    auto r = conn_.Command({"XREVRANGE", key, "+", "-", "COUNT", "1"});
    if (!r.ok()) return r.status();
    const auto& e = r.value().elements;
    last_id_[job] = e.empty() || e[0].elements.empty() ? "0-0" : e[0].elements[0].text;
    return out;
  }
  auto r = conn_.Command({"XREAD", "COUNT", "100", "STREAMS", key, last->second});
  if (!r.ok()) return r.status();
  for (const RedisReply& stream : r.value().elements) {
    if (stream.elements.size() != 2) continue;
    for (const RedisReply& entry : stream.elements[1].elements) {
      if (entry.elements.size() != 2) continue;
      last->second = entry.elements[0].text;
      StreamFields fields;
      const auto& kv = entry.elements[1].elements;
      for (size_t i = 0; i + 1 < kv.size(); i += 2) fields.emplace_back(kv[i].text, kv[i + 1].text);
      auto request = DecodeWindowRequest(fields);
      if (request.ok()) out.push_back(std::move(request).value());
    }
  }
  return out;
}

}  // namespace strata::agent
