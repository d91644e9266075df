// Kernel classification (see kernel_type.h).
#include "model/kernel_type.h"

namespace strata {

namespace {
bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
}  // namespace

bool IsCommunicationKernel(std::string_view n) {
  return StartsWith(n, "nccl") || StartsWith(n, "hip") || StartsWith(n, "hccl") || Contains(n, "ncclKernel");
}

bool IsMemoryKernel(std::string_view n) {
  return StartsWith(n, "Memcpy") || StartsWith(n, "hipMemcpy") || StartsWith(n, "Memset") ||
         StartsWith(n, "hipMemset") || StartsWith(n, "dma");
}

bool IsComputationKernel(std::string_view n) {
  if (StartsWith(n, "nccl") || Contains(n, "Memcpy") || Contains(n, "Memset") || Contains(n, "dma") ||
      Contains(n, "Sync") || StartsWith(n, "Stream Wait Event") || StartsWith(n, "runFunction") ||
      StartsWith(n, "hip") || StartsWith(n, "job_exe") || StartsWith(n, "packet") || StartsWith(n, "pe_exe") ||
      StartsWith(n, "cpum_exe_subgraph") || StartsWith(n, "hccl") || StartsWith(n, "collective_subgraph_execution")) {
    return false;
  }
  // (cuda.*LaunchKernel): "cuda" somewhere, followed later by "LaunchKernel".
  const size_t cuda = n.find("cuda");
  if (cuda != std::string_view::npos && n.find("LaunchKernel", cuda + 4) != std::string_view::npos) return false;
  return true;
}

KernelType ClassifyKernel(std::string_view name) {
  if (IsCommunicationKernel(name)) return KernelType::kCommunication;
  if (IsMemoryKernel(name)) return KernelType::kMemory;
  if (IsComputationKernel(name)) return KernelType::kComputation;
  return KernelType::kOther;
}

const char* KernelTypeName(KernelType t) {
  switch (t) {
    case KernelType::kCommunication:
      return "COMMUNICATION";
    case KernelType::kMemory:
      return "MEMORY";
    case KernelType::kComputation:
      return "COMPUTATION";
    case KernelType::kOther:
      break;
  }
  return "OTHER";
}

}  // namespace strata
