// Kernel classification (see kernel_type.h).
#include "model/kernel_type.h"

namespace strata {

namespace {
bool NameStartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool NameContains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
}  // namespace

bool IsCommunicationKernel(std::string_view n) {
  return NameStartsWith(n, "nccl") || NameStartsWith(n, "hip") || NameStartsWith(n, "hccl") ||
         NameContains(n, "ncclKernel");
}

bool IsMemoryKernel(std::string_view n) {
  return NameStartsWith(n, "Memcpy") || NameStartsWith(n, "hipMemcpy") || NameStartsWith(n, "Memset") ||
         NameStartsWith(n, "hipMemset") || NameStartsWith(n, "dma");
}

bool IsComputationKernel(std::string_view n) {
  if (NameStartsWith(n, "nccl") || NameContains(n, "Memcpy") || NameContains(n, "Memset") || NameContains(n, "dma") ||
      NameContains(n, "Sync") || NameStartsWith(n, "Stream Wait Event") || NameStartsWith(n, "runFunction") ||
      NameStartsWith(n, "hip") || NameStartsWith(n, "job_exe") || NameStartsWith(n, "packet") ||
      NameStartsWith(n, "pe_exe") || NameStartsWith(n, "cpum_exe_subgraph") || NameStartsWith(n, "hccl") ||
      NameStartsWith(n, "collective_subgraph_execution")) {
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
