// NsysNames: how the Nsight Systems importer names and files its rows so that every pass reads them as it
// reads a Kineto trace of the same work. Kineto's names are the reference: a memcpy is "Memcpy HtoD (Pageable ->
// Device)", a runtime call "cudaLaunchKernel" (nsys writes "cudaLaunchKernel_v7000"), a CPU-side NCCL call
// "nccl:all_reduce", an op of PyTorch's emit_nvtx "aten::add" (nsys has "aten::add, op_id = 12"), a step
// "ProfilerStep#N".
// Invariants: pure functions of their arguments; a name they do not recognise comes back unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::nsys {

/// A memcpy row's name from its copyKind and srcKind / dstKind (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND ids;
/// -1 when NULL), as Kineto writes it: "Memcpy HtoD (Pageable -> Device)".
std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind);

/// A memset row's name from its memKind (-1 when NULL): "Memset (Device)".
std::string MemsetName(int64_t mem_kind);

/// A CUDA API function's name without nsys's version suffix: "cudaLaunchKernel_v7000" -> "cudaLaunchKernel".
std::string_view RuntimeName(std::string_view nsys_name);

/// What an NVTX range is read as: its name and Kineto's category for it.
struct NvtxRange {
  std::string name;
  std::string_view category;  // "cpu_op" (framework op, CPU-side collective) or "user_annotation"
};

/// An NVTX range's text as strata names it: NCCL's API ranges ("ncclAllReduce") as CPU-side collective calls
/// ("nccl:all_reduce"), an emit_nvtx op without its ", op_id = ..." / ", seq = ..." / ", sizes = ..." suffix,
/// a step range ("ProfilerStep#3", "step 3", "train_step_3", "iteration 3") as "ProfilerStep#3"; anything
/// else unchanged, a user annotation.
NvtxRange NvtxRangeName(std::string_view text);

}  // namespace strata::nsys
