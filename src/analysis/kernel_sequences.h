// HTA's frequent CUDA kernel sequences (get_frequent_cuda_kernel_sequences) of one rank: which kernel
// sequences an operator the user names launches, and how often, as candidates for fusion. Over the rank's
// kept rows (hta_rows.h):
//   roots: the CPU rows whose name contains `operator_name`, at the smallest nesting depth any of them has on
//          its thread (depth: how many CPU rows of the same thread enclose it), so that nested calls of the
//          operator are not counted twice;
//   a root's kernels: the device rows whose correlated CPU row (runtime_launch.h) lies on the root's thread
//          within the root's span, by start (ties by end);
//   its pattern: the root's name then its kernels' names, kept when it has at least min_pattern_len kernels;
//   per pattern: its count, the kernels' summed duration and the roots' summed duration.
// Patterns are listed by count, descending, then by pattern text ("|"-joined, as HTA prints it), ascending.
// Invariant: the counts sum to the number of roots with at least min_pattern_len kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/hta_rows.h"
#include "store/trace_store.h"

namespace strata {

struct KernelSequenceOptions {
  std::string operator_name;   // required: a substring of the CPU operator's name
  size_t min_pattern_len = 3;  // HTA's default
  size_t top_k = 5;            // HTA's default
};

struct KernelSequence {
  std::vector<std::string> names;  // the operator's, then its kernels'
  uint64_t count = 0;
  double gpu_us = 0, cpu_us = 0;
};

/// The top_k patterns of the rank; empty when the operator is not found or launches too few kernels.
std::vector<KernelSequence> FrequentKernelSequences(const TraceStore& store, const HtaRows& rows,
                                                    const KernelSequenceOptions& options);

}  // namespace strata
