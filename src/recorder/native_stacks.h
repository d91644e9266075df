// The native (user and kernel) stacks of a recording: which stack ids the CPU samples drew, per process for
// user stacks, and their "stack" meta records (docs/segment-format.md), named with the process's executable
// mappings. Also keeps those mappings fresh enough to name them: a new user stack whose innermost address lies
// in no mapping known for its process means the process loaded a library since its maps were read, so they
// are read again while it runs (a job shorter than the periodic re-read would otherwise leave every frame
// unnamed), at most every kMinMapsInterval per process (code outside any file, a JIT, cannot make it read them
// at every sample). The recorder writes the records; this class decides which and names them, so the
// recording loop keeps no stack bookkeeping of its own (issue 50: values, not a blackboard).
// Invariants: each distinct (process, user stack id) and each distinct kernel stack id drawn has exactly one
// record in FinalRecords, in increasing order of (pid, id) then id; a negative id is "no stack" and is never
// kept nor named; the maps of a process are read again only for a stack none of them covers, and never twice
// within kMinMapsInterval for one process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "recorder/process_info.h"
#include "recorder/stack_symbolizer.h"

namespace strata::recorder {

/// See the file comment.
class NativeStacks {
 public:
  /// The addresses of stack `id`, innermost first (BpfSession::Stack; empty when unknown).
  using StackReader = std::function<std::vector<uint64_t>(int32_t id)>;
  /// The executable mappings of a live process (ReadExecutableMaps; empty when unreadable).
  using MapsReader = std::function<std::vector<MapEntry>(int pid)>;
  static constexpr uint64_t kMinMapsInterval = 50'000'000;  // ns

  NativeStacks(StackReader stack, MapsReader maps, std::string kallsyms_path = "/proc/kallsyms");

  /// A CPU sample of process `tgid` drew these stacks (-1: none). True when the user stack is new for the
  /// process: the caller then hands the process to CoverNewStack (the per-sample path does no more than this).
  bool Sampled(uint32_t tgid, int32_t user_stack, int32_t kernel_stack);
  /// A user stack new for `process` (running), at monotonic time `now_ns`: its maps are read again when the
  /// stack starts outside them.
  void CoverNewStack(int32_t user_stack, ProcessInfo& process, uint64_t now_ns);

  /// The "stack" record of stack `id`, named now (a live reader needs it before the run ends): a user stack of
  /// `process` (nullptr: none), or a kernel stack. None for a negative id or a user stack of no process.
  std::optional<nlohmann::json> RecordNow(uint32_t tgid, int32_t id, bool kernel, const ProcessInfo* process);

  /// The records of every stack the samples drew, user stacks named with `processes`' maps as they are now
  /// (a process no longer listed: its frames unnamed).
  std::vector<nlohmann::json> FinalRecords(const std::map<int, ProcessInfo>& processes) const;

  /// How many times the maps were read again for a stack outside them (tests, stats).
  size_t maps_reads() const { return maps_reads_; }

 private:
  StackReader stack_;
  MapsReader maps_;
  std::string kallsyms_path_;
  std::set<std::pair<uint32_t, int32_t>> user_;  // (tgid, stack id) drawn by a sample
  std::set<int32_t> kernel_;                     // kernel stack ids drawn by a sample
  std::map<int, uint64_t> maps_read_ns_;         // pid -> when its maps were last read for a stack outside them
  std::unique_ptr<StackSymbolizer> live_;        // names stacks while the job runs (made on first use)
  size_t maps_reads_ = 0;
};

/// A "stack" meta record (docs/segment-format.md): a user stack of `tgid` named with its process's `maps`, or a
/// kernel stack (tgid ignored); the one shape the live and the final records share.
nlohmann::json StackRecord(StackSymbolizer& symbolizer, bool kernel, uint32_t tgid, int32_t id,
                           const std::vector<MapEntry>& maps, const std::vector<uint64_t>& ips);

}  // namespace strata::recorder
