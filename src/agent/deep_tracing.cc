// Deep tracing windows and control access (see deep_tracing.h).
#include "agent/deep_tracing.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <fstream>

namespace strata::agent {

bool DeepSchedule::Request(double now_s, double now_unix, double seconds, std::string reason) {
  seconds = std::min(seconds, kMaxDeepS);
  if (!(seconds > 0)) return false;
  if (!Active(now_s)) {  // a new window: pending until its recorder attaches
    ++opened_;
    pending_ = true;
    asked_s_ = seconds;
    until_s_ = now_s + seconds + kDeepAttachWaitS;
    until_unix_ = now_unix + seconds + kDeepAttachWaitS;
    began_unix_ = 0;
    reason_ = std::move(reason);
    return true;
  }
  if (pending_) {  // a longer request before the recorder attached: more seconds from Begin
    if (seconds <= asked_s_) return false;
    asked_s_ = seconds;
    until_s_ = std::max(until_s_, now_s + seconds + kDeepAttachWaitS);
    until_unix_ = std::max(until_unix_, now_unix + seconds + kDeepAttachWaitS);
    reason_ = std::move(reason);
    return true;
  }
  const double until = now_s + seconds;
  if (until <= until_s_) return false;
  until_s_ = until;
  until_unix_ = now_unix + seconds;
  reason_ = std::move(reason);
  return true;
}

void DeepSchedule::Begin(double now_s, double now_unix) {
  if (!pending_ || !Active(now_s)) return;
  pending_ = false;
  // The seconds asked, from now; never past the pending window's bound (kDeepAttachWaitS after the request).
  const double left = std::min(asked_s_, until_s_ - now_s);
  until_s_ = now_s + left;
  until_unix_ = now_unix + left;
  began_unix_ = now_unix;
}

bool DeepSchedule::RequestOnDetection(double now_s, double now_unix, double seconds, std::string reason) {
  if (!Active(now_s) && opened_ > 0 && now_s < until_s_ + kDeepRefractoryS) return false;
  return Request(now_s, now_unix, seconds, std::move(reason));
}

namespace {

std::string Trimmed(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// Equal strings, in time that depends on their lengths only (a token compared byte by byte until the first
// difference tells a remote caller how much of it was right).
bool SameText(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

Expected<ControlAccess> ControlAccess::FromTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Resource("--control-token " + path + ": cannot read the file");
  std::string line;
  std::getline(in, line);
  ControlAccess access;
  access.token_ = Trimmed(line);
  if (access.token_.empty()) return Status::BadInput("--control-token " + path + ": no token on its first line");
  return access;
}

ControlAccess::Verdict ControlAccess::Check(const std::string& remote, const std::string& authorization) const {
  if (token_.empty()) return IsLoopbackAddress(remote) ? Verdict::kAllowed : Verdict::kNotLoopback;
  const std::string prefix = "Bearer ";
  if (authorization.compare(0, prefix.size(), prefix) != 0) return Verdict::kNeedsToken;
  return SameText(Trimmed(authorization.substr(prefix.size())), token_) ? Verdict::kAllowed : Verdict::kWrongToken;
}

bool IsLoopbackAddress(const std::string& address) {
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, address.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

}  // namespace strata::agent
