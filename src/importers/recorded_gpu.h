// Which GPU a recorded rank ran on, as the recorder's NVML series number GPUs (their `index`, in NVML's
// order, with the GPU's UUID as `label`), so that the GPU's series become the rank's counter tracks.
// The rule, from what the recorder read of the process's environment (recorder/process_info.h):
// - CUDA_VISIBLE_DEVICES set: the process sees those GPUs in that order and uses its LOCAL_RANK-th (PyTorch's
//   `cuda:LOCAL_RANK`), or the only one when it sees one. A UUID (GPU-..., MIG-...) is matched against the
//   series' labels; a number is taken as NVML's index (NVML numbers by PCI bus, as CUDA does under
//   CUDA_DEVICE_ORDER=PCI_BUS_ID, what clusters set; under CUDA's default order a mixed-model node can differ).
// - Unset: GPU LOCAL_RANK.
// - Neither: the host's only GPU, when it has one; else not known (nullopt): no GPU series for that rank.
// Invariant: a returned index is one the series have.
#pragma once

#include <optional>
#include <vector>

#include "store/recorded_run.h"

namespace strata {

std::optional<int> NvmlIndexOfProcess(const RecordedProcess& process, const std::vector<RecordedSeries>& series);

}  // namespace strata
