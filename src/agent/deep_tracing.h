// Deep tracing on demand (issue 25, item 5; docs/agent.md "Deep tracing"): a bounded window in which the agent
// records a job in more detail than its always-on level, opened when an online detection names a rank of the
// job, or by hand (POST /api/v1/deep), then closed on its own. In the window the job's flight recorder samples
// CPU stacks at the deep rate (AgentOptions::deep_sample_hz, 499 Hz against the always-on 49) and host counters
// at kDeepCounterHz; it switches by starting a new chunk (flight_recorder.h: the new recorder becomes the one
// read only once it is attached, so the live window has no blind spot at either switch).
// Also here: who may use the control endpoints (ControlAccess). Without a token file they answer only requests
// from loopback; with one (`--control-token FILE`), only requests that carry it (Authorization: Bearer TOKEN).
// A window's seconds count from when the deep recorder is attached (Begin), not from the request: switching
// to a new recorder takes seconds (its probes are written into the ranks' code), on a loaded machine most of
// an 8 s window (ctest agent_deep, CI of 8972ac3), and a window counted from the request could end before its
// recorder recorded anything. Until Begin it is pending, and lasts at most kDeepAttachWaitS more.
// Invariants: a window never lasts longer than kMaxDeepS + kDeepAttachWaitS past the request that opened or
// extended it (kMaxDeepS past its Begin); a request never shortens an open window; Active(now) is false from
// the window's end on; a detection opens no window within kDeepRefractoryS of the last one's end.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace strata::agent {

/// The longest deep window one request can ask for (seconds): the deep rate costs the job more than the 1 %
/// the always-on level is held to, so it is never left on by a forgotten request.
inline constexpr double kMaxDeepS = 600;
/// Host counter samples per second in a deep window (the recorder's always-on default is 10).
inline constexpr double kDeepCounterHz = 50;
/// After a window closes, detections open no other for this long (requests by hand still do). Each switch
/// is a recorder attaching (uprobes written into the ranks' code) and one letting go: on this 2-core VM with
/// two busy ranks the online detector named a rank (`unknown`, then `slow_compute`) in the clean phase right
/// after a window closed, which opened the next window, whose switches did the same (ctest agent_deep,
/// 2026-11-28). A refractory time bounds that loop to one window per deep_s + kDeepRefractoryS.
inline constexpr double kDeepRefractoryS = 120;
/// A window waits this long at most for its deep recorder to attach (the switch measured up to ~8 s on this
/// 2-core VM under load); past it, the window's seconds count as if it had attached then.
inline constexpr double kDeepAttachWaitS = 30;

/// One job's deep window. Times are the agent's monotonic seconds; `until_unix` is the same instant on the wall
/// clock, for the status.
class DeepSchedule {
 public:
  /// Opens the window, or extends it, to now + seconds (seconds clamped to (0, kMaxDeepS]); `reason` says who
  /// asked. A window it opens is pending (its end provisional, kDeepAttachWaitS later) until Begin. Returns
  /// whether the window's end moved.
  bool Request(double now_s, double now_unix, double seconds, std::string reason);
  /// The job's deep recorder is attached (its chunk is the one read): a pending window's seconds count from
  /// now. Does nothing when no window is pending.
  void Begin(double now_s, double now_unix);
  /// A window is open and its deep recorder not attached yet.
  bool Pending(double now_s) const { return pending_ && Active(now_s); }
  /// A detection's request: as Request, unless a window closed less than kDeepRefractoryS ago (a detection
  /// inside an open window still extends it).
  bool RequestOnDetection(double now_s, double now_unix, double seconds, std::string reason);
  bool Active(double now_s) const { return now_s < until_s_; }
  double until_unix() const { return until_unix_; }
  /// When the open (or last) window's seconds began, its recorder attached (Unix seconds; 0 while pending).
  double began_unix() const { return began_unix_; }
  const std::string& reason() const { return reason_; }
  /// Windows opened so far (an extension of an open window is not a new one).
  uint64_t opened() const { return opened_; }

 private:
  double until_s_ = 0, until_unix_ = 0, began_unix_ = 0;
  double asked_s_ = 0;    // a pending window's seconds, counted from Begin
  bool pending_ = false;  // opened, its recorder not attached yet
  std::string reason_;
  uint64_t opened_ = 0;
};

/// Who may call the control endpoints.
class ControlAccess {
 public:
  /// Loopback only (no token).
  ControlAccess() = default;
  /// The token in `path` (its first line, without surrounding white space): an error naming the file when it
  /// cannot be read or holds no token.
  static Expected<ControlAccess> FromTokenFile(const std::string& path);

  enum class Verdict { kAllowed, kNeedsToken, kWrongToken, kNotLoopback };
  /// `remote`: the peer's address as the HTTP server gives it; `authorization`: the request's Authorization
  /// header ("" when none).
  Verdict Check(const std::string& remote, const std::string& authorization) const;
  bool has_token() const { return !token_.empty(); }

 private:
  std::string token_;
};

/// 127.0.0.0/8, ::1 and ::ffff:127.x.y.z.
bool IsLoopbackAddress(const std::string& address);

}  // namespace strata::agent
