// The state a rank was found in and what observed it, as closed vocabularies (issue 50 item 2): where a rank
// missing from a stalled collective was (rank_whereabouts.h, stall.h, flight_recorder_findings.h), where a rank
// idle past the stall threshold is (stall.h RankInflight, sent by agents to serve), and where its other threads
// wait. A RankState is a RankStateKind with the particulars that vary (an exit code, a signal, a system call, a
// sequence number...); analysis sets and compares kinds, never sentences. The sentence a report shows
// ("blocked on a lock (futex)", "exited with code 1") is rendered by StateText alone, from the one table of
// wordings in rank_state.cc, which also reads a sentence back (StateOfSentence, for agents that sent only it).
// Invariants: every kind has one stable lowercase key (RankStateKindKey; the agent -> serve stream's
// state_kind) and at least one wording; every Observer one name, the text the JSON's observed_by shows;
// StateOfSentence(StateText(s)) == s for every state whose particulars fill one of its kind's wordings
// (tests/unit/rank_state_test.cc lists each wording, so a change of words shows there).
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace strata::diagnosis {

// Each kind with its wording(s); `detail` and `context` are RankState's particulars.
enum class RankStateKind : uint8_t {
  kNotObserved,             // "not observed (no sample or scheduler event of its main thread during the stall)"
  kOnCpu,                   // "on CPU (spinning)"
  kRunnable,                // "runnable, waiting for a CPU"
  kLock,                    // "blocked on a lock (futex)": detail the system call
  kIoWait,                  // "waiting for I/O (read)": detail the system call ("waiting for I/O": none named)
  kSleeping,                // "sleeping (nanosleep)": detail the system call
  kChildWait,               // "waiting for a child process"
  kPaused,                  // "paused (pause)": detail the system call
  kInSyscall,               // "sleeping in system call 99": detail its number (a call with no kind of its own)
  kOffCpu,                  // "sleeping (off CPU)": off CPU, in no system call known
  kUninterruptible,         // "in uninterruptible I/O (D state)"
  kExited,                  // "exited with code 1": detail the code ("exited": code unknown)
  kExitedNormally,          // "exited normally (code 0)"
  kKilled,                  // "killed by signal 9 (SIGKILL)": detail the signal, "9 (SIGKILL)"
  kKernelNotStarted,        // "kernel not started (called the collective; its kernel never ran)"
  kNotRecorded,             // "not recorded (no process of this rank was seen)"
  kNotReported,             // "not reported by any agent"
  kWhereaboutsNotReported,  // "not inside the collective (its whereabouts not reported)"
  kInsideAnother,           // "inside broadcast (pg1)": detail the op, context its communicator
  kNoDump,                  // "no dump of it among the inputs; its peers' dumps show it never enqueued #6": detail 6
  kWorkNotStarted,          // "enqueued #6 but its work never started while its peers' did": detail 6
  kNeverEnqueued,           // "never enqueued #6: its dump holds no entry of the group": detail 6; with context
                            // "... #6; its last entry of the group: all_reduce #5 (completed)"
  kUnrecognized,            // a sentence no kind of this version words (an agent's of another version): detail it
};
inline constexpr size_t kRankStateKinds = static_cast<size_t>(RankStateKind::kUnrecognized) + 1;

/// A state: its kind and the particulars its wording shows ("" when it has none).
struct RankState {
  RankStateKind kind = RankStateKind::kNotObserved;
  std::string detail;
  std::string context;
  bool operator==(const RankState&) const = default;
};

/// The one renderer: the sentence reports and the JSON show for `s`, the wording of its kind that has a place
/// for each particular it carries.
std::string StateText(const RankState& s);

/// The state a sentence of StateText words, read back: how a stream entry of an agent older than the state_kind
/// field (which sent the sentence only) is decoded. A sentence no wording matches is kept as kUnrecognized.
RankState StateOfSentence(std::string_view sentence);

/// The kind's stable lowercase key ("lock", "io_wait", "exited"...), and its inverse.
std::string_view RankStateKindKey(RankStateKind k);
std::optional<RankStateKind> ParseRankStateKind(std::string_view key);

/// Whether the state says that no agent reported where the rank is (serve waits a while for it to arrive).
bool WhereaboutsUnreported(RankStateKind k);

// What observed a missing rank's state (the evidence's observed_by).
enum class Observer : uint8_t {
  kNone,                // nothing did
  kProcessExit,         // its process's exit
  kThreadState,         // a thread_state record of its main thread (the recorder's)
  kOffCpuInterval,      // an off-CPU interval of its main thread
  kCpuSamples,          // CPU samples of its main thread
  kNcclProfiler,        // the NCCL profiler plugin: the kernel never started
  kAgent,               // its node's agent (serve's judgement across nodes)
  kFlightRecorderDump,  // its own Flight Recorder dump
  kPeersDumps,          // its peers' Flight Recorder dumps (none of its own)
};
inline constexpr std::array<std::string_view, 9> kObserverNames = {"none",
                                                                   "process exit",
                                                                   "thread state",
                                                                   "off-CPU interval",
                                                                   "CPU samples",
                                                                   "NCCL profiler",
                                                                   "its node's agent",
                                                                   "Flight Recorder dump",
                                                                   "its peers' Flight Recorder dumps"};
inline std::string_view ObserverName(Observer o) { return kObserverNames[static_cast<size_t>(o)]; }

// A state and an observer go into a report's JSON as their text (the JSON library's hook, found by
// argument-dependent lookup; no JSON type is named here: reports own JSON).
template <typename Json>
void to_json(Json& j, const RankState& s) {  // NOLINT(readability-identifier-naming): the library's name
  j = StateText(s);
}
template <typename Json>
void to_json(Json& j, const Observer& o) {  // NOLINT(readability-identifier-naming): the library's name
  j = std::string(ObserverName(o));
}

// For test failure messages.
inline std::ostream& operator<<(std::ostream& os, const RankState& s) { return os << StateText(s); }
inline std::ostream& operator<<(std::ostream& os, RankStateKind k) { return os << RankStateKindKey(k); }
inline std::ostream& operator<<(std::ostream& os, Observer o) { return os << ObserverName(o); }

}  // namespace strata::diagnosis

// A state formats as its sentence ("rank 3 is {}").
template <>
struct fmt::formatter<strata::diagnosis::RankState> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const strata::diagnosis::RankState& s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(strata::diagnosis::StateText(s), ctx);
  }
};
