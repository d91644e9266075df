// Slice names with a meaning of their own, shared by the importers that write them and the passes that
// read them: containers (a whole step, a recorded thread's on-CPU interval) hold the ops that did the work
// and are never named as a culprit op themselves; collective calls are recognised by their names in one
// function (CollectiveKindOf).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";
// The recording importer's on-CPU interval of a main thread (its stack samples are its children).
inline constexpr std::string_view kRecordedOnCpu = "on-CPU";
// The recording importer's span of a main thread's recorded life (marks the training loop's thread).
inline constexpr std::string_view kRecordedMainThread = "recorded main thread";
// The recording importer's wait of a main thread that a process of its own rank ended (a DataLoader worker);
// named so that the window profile counts it as data loading.
inline constexpr std::string_view kRecordedWorkerWait = "DataLoader: waiting for a worker process";

/// An op name as findings show it: a C++ argument list dropped ("kernel<T>(int, float*)" -> "kernel<T>"),
/// but not parentheses inside a name ("enumerate(DataLoader)#...__next__") nor a Python location
/// ("... in Python Net.forward (train.py:42)", see stack_frames.h); at most 80 characters (160 with a
/// Python location).
inline std::string ShortOpName(std::string_view name) {
  std::string s(name);
  const bool python = s.find("Python ") != std::string::npos;
  if (const size_t paren = s.find('('); !python && paren != std::string::npos && paren > 0 && s.back() == ')')
    s.resize(paren);
  const size_t cap = python ? 160 : 80;
  if (s.size() > cap) s = s.substr(0, cap - 3) + "...";
  return s;
}

inline bool IsContainerSliceName(std::string_view name) {
  return name.substr(0, kProfilerStepPrefix.size()) == kProfilerStepPrefix || name == kRecordedOnCpu ||
         name == kRecordedMainThread;
}

/// What a name says of a collective call, as text written by a profiler, a probe or a stack walk shows it:
/// the one recognition of collective calls by their names (a GPU kernel's name is model/kernel_type.h's).
enum class CollectiveKind : uint8_t {
  kNone,
  kBackendOp,   // a backend's CPU-side op: "gloo:", "nccl:", "mpi:" or "ucc:" and the op ("nccl:all_reduce")
  kC10dMethod,  // c10d's ops and process-group methods: "c10d::allreduce_", "c10d::ProcessGroupGloo::..."
  kTorchApi,    // a Python frame in torch.distributed's collective API: "Python all_reduce (distributed_c10d.py:N)"
};

inline CollectiveKind CollectiveKindOf(std::string_view name) {
  for (std::string_view backend : {"gloo:", "nccl:", "mpi:", "ucc:"})
    if (name.starts_with(backend)) return CollectiveKind::kBackendOp;
  if (name.starts_with("c10d::")) return CollectiveKind::kC10dMethod;
  if (name.starts_with("Python ") && name.find("(distributed_c10d.py:") != std::string_view::npos)
    return CollectiveKind::kTorchApi;
  return CollectiveKind::kNone;
}

}  // namespace strata
