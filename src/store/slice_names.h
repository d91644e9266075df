// Slice names with a meaning of their own, shared by the importers that write them and the passes that
// read them: containers (a whole step, a recorded thread's on-CPU interval) hold the ops that did the work
// and are never named as a culprit op themselves.
#pragma once

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

inline bool IsContainerSliceName(std::string_view name) {
  return name.substr(0, kProfilerStepPrefix.size()) == kProfilerStepPrefix || name == kRecordedOnCpu ||
         name == kRecordedMainThread;
}

}  // namespace strata
