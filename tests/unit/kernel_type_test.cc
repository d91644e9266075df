// ClassifyKernel agrees with HTA's regular expressions (Python re.search == std::regex_search).
#include "model/kernel_type.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

namespace strata {
namespace {

struct HtaRegexes {
  std::regex comm{R"((^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*))"};
  std::regex memory{R"((^(hip)?Memcpy)|(^(hip)?Memset)|(^dma))"};
  std::regex non_compute{
      R"((^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)|)"
      R"((^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution))"};

  KernelType Classify(const std::string& name) const {
    if (std::regex_search(name, comm)) return KernelType::kCommunication;
    if (std::regex_search(name, memory)) return KernelType::kMemory;
    if (!std::regex_search(name, non_compute)) return KernelType::kComputation;
    return KernelType::kOther;
  }
};

const std::vector<std::string>& RealNames() {
  static const std::vector<std::string> names = {
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
      "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)",
      "ncclKernel_ReduceScatter_RING_LL_Sum_float(ncclWorkElem)",
      "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)",
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
      "ncclDevKernel_Generic(ncclDevComm*, unsigned long, ncclWork*)",
      "void ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)",
      "Memcpy HtoD (Pageable -> Device)",
      "Memcpy DtoH (Device -> Pageable)",
      "Memcpy DtoD (Device -> Device)",
      "Memset (Device)",
      "hipMemcpyWithStream",
      "hipMemsetAsync",
      "hipLaunchKernel",
      "hipExtModuleLaunchKernel",
      "hcclAllReduce",
      "dma_copy_h2d",
      "dmaTransfer",
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
      "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
      "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>(float*, "
      "at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, "
      "at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
      "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn",
      "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize96x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
      "ampere_sgemm_128x64_nn",
      "cudaLaunchKernel",
      "cudaLaunchKernelExC",
      "cudaMemcpyAsync",
      "cudaStreamSynchronize",
      "cudaDeviceSynchronize",
      "Stream Wait Event",
      "runFunction",
      "job_exe_0",
      "packet_submit",
      "pe_exe_1",
      "cpum_exe_subgraph_2",
      "collective_subgraph_execution",
      "triton__0d1d2d3d4d5",
      "void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_32x6_tn_align8>(Params)",
      "aten::copy_",
      "",
      "nccl",
      "hip",
      "Memcpy",
      "mynccl",
      "xncclKernel",
      "x Memcpy",
      "xdma",
      "Sync",
      "fooSyncbar",
      "cuda_LaunchKernel_wrapper",
      "LaunchKernel cuda",
  };
  return names;
}

TEST(KernelType, RealNamesMatchHtaRegexes) {
  const HtaRegexes hta;
  for (const std::string& name : RealNames()) {
    EXPECT_EQ(ClassifyKernel(name), hta.Classify(name)) << "kernel name '" << name << "'";
  }
}

TEST(KernelType, ExpectedClassesOfWellKnownNames) {
  EXPECT_EQ(ClassifyKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel("void ncclKernel_Broadcast"), KernelType::kCommunication);
  EXPECT_EQ(ClassifyKernel("hipMemcpyWithStream"), KernelType::kCommunication);  // ^hip wins, as in HTA
  EXPECT_EQ(ClassifyKernel("Memcpy HtoD (Pageable -> Device)"), KernelType::kMemory);
  EXPECT_EQ(ClassifyKernel("Memset (Device)"), KernelType::kMemory);
  EXPECT_EQ(ClassifyKernel("dma_copy"), KernelType::kMemory);
  EXPECT_EQ(ClassifyKernel("void at::native::vectorized_elementwise_kernel<4>"), KernelType::kComputation);
  EXPECT_EQ(ClassifyKernel("ampere_sgemm_128x64_nn"), KernelType::kComputation);
  EXPECT_EQ(ClassifyKernel("cudaLaunchKernel"), KernelType::kOther);
  EXPECT_EQ(ClassifyKernel("cudaStreamSynchronize"), KernelType::kOther);
  EXPECT_EQ(ClassifyKernel("Stream Wait Event"), KernelType::kOther);
  EXPECT_EQ(ClassifyKernel("x Memcpy"), KernelType::kOther);  // not memory (not at start), not compute
  EXPECT_STREQ(KernelTypeName(KernelType::kCommunication), "COMMUNICATION");
  EXPECT_STREQ(KernelTypeName(KernelType::kMemory), "MEMORY");
  EXPECT_STREQ(KernelTypeName(KernelType::kComputation), "COMPUTATION");
  EXPECT_STREQ(KernelTypeName(KernelType::kOther), "OTHER");
}

TEST(KernelType, RandomNamesFromFragmentsMatchHtaRegexes) {
  const HtaRegexes hta;
  // No line terminators: std::regex's '.' and Python's differ on '\r'.
  const std::vector<std::string> fragments = {"nccl",
                                              "Kernel",
                                              "ncclKernel",
                                              "Dev",
                                              "hip",
                                              "hccl",
                                              "Memcpy",
                                              "Memset",
                                              "Mem",
                                              "cpy",
                                              "set",
                                              "dma",
                                              "dm",
                                              "Sync",
                                              "Syn",
                                              "c",
                                              "Stream Wait Event",
                                              "Stream",
                                              " Wait",
                                              " Event",
                                              "cuda",
                                              "Launch",
                                              "LaunchKernel",
                                              "runFunction",
                                              "run",
                                              "job_exe",
                                              "job",
                                              "_exe",
                                              "packet",
                                              "pe_exe",
                                              "cpum_exe_subgraph",
                                              "collective_subgraph_execution",
                                              "collective",
                                              " ",
                                              "_",
                                              "void ",
                                              "at::native::",
                                              "(",
                                              ")",
                                              "<",
                                              ">",
                                              "x",
                                              "0",
                                              "ncc",
                                              "l",
                                              "h",
                                              "ip"};
  std::mt19937 rng(2024);
  std::uniform_int_distribution<size_t> pick(0, fragments.size() - 1);
  std::uniform_int_distribution<int> len(0, 6);
  int mismatches = 0;
  for (int i = 0; i < 5000 && mismatches < 10; ++i) {
    std::string name;
    const int n = len(rng);
    for (int k = 0; k < n; ++k) name += fragments[pick(rng)];
    const KernelType got = ClassifyKernel(name);
    const KernelType want = hta.Classify(name);
    if (got != want) {
      ++mismatches;
      ADD_FAILURE() << "kernel name '" << name << "': ClassifyKernel says " << KernelTypeName(got) << ", HTA's regex "
                    << KernelTypeName(want);
    }
    // The predicate functions agree with the regexes too.
    ASSERT_EQ(IsCommunicationKernel(name), std::regex_search(name, hta.comm)) << name;
    ASSERT_EQ(IsMemoryKernel(name), std::regex_search(name, hta.memory)) << name;
    ASSERT_EQ(IsComputationKernel(name), !std::regex_search(name, hta.non_compute)) << name;
  }
}

}  // namespace
}  // namespace strata
