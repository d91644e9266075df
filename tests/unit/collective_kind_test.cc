// CollectiveKindOf (store/slice_names.h): the one recognition of collective calls by their names, for each
// kind of text that names one (a profiler's op, a probe's symbol, a Python frame of the stall's whereabouts).
#include <gtest/gtest.h>

#include "store/slice_names.h"

namespace strata {
namespace {

TEST(CollectiveKindOf, NamesEachKindOfCollectiveText) {
  for (const char* op : {"gloo:all_reduce", "nccl:all_reduce", "mpi:broadcast", "ucc:allreduce"})
    EXPECT_EQ(CollectiveKindOf(op), CollectiveKind::kBackendOp) << op;
  EXPECT_EQ(CollectiveKindOf("c10d::allreduce_"), CollectiveKind::kC10dMethod);
  EXPECT_EQ(CollectiveKindOf("c10d::ProcessGroupGloo::AsyncWork::finishWorkGloo"), CollectiveKind::kC10dMethod);
  EXPECT_EQ(CollectiveKindOf("Python all_reduce (distributed_c10d.py:2050)"), CollectiveKind::kTorchApi);
  // Not collectives: a kernel (kernel_type.h names those), a Python frame elsewhere, an op that only mentions one.
  for (const char* other : {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Python all_reduce (train.py:12)", "aten::add",
                            "record_param_comms", "", "nccl", "distributed_c10d.py:12"})
    EXPECT_EQ(CollectiveKindOf(other), CollectiveKind::kNone) << other;
}

}  // namespace
}  // namespace strata
