// HTA's GPU kernel classification by name (COMMUNICATION / MEMORY / COMPUTATION), implemented as plain
// string tests equivalent to HTA's regular expressions (unit tests check the equivalence with std::regex):
//   COMMUNICATION: (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)
//   MEMORY:        (^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)
//   COMPUTATION:   none of (^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|
//                  (cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|
//                  (^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)
// COMMUNICATION is tested first, then MEMORY, then COMPUTATION; anything else is OTHER.
#pragma once

#include <string_view>

namespace strata {

enum class KernelType { kCommunication, kMemory, kComputation, kOther };

KernelType ClassifyKernel(std::string_view name);
bool IsCommunicationKernel(std::string_view name);
bool IsMemoryKernel(std::string_view name);
bool IsComputationKernel(std::string_view name);
const char* KernelTypeName(KernelType t);

}  // namespace strata
