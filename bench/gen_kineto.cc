// strata_gen_kineto: writes a deterministic multi-rank Kineto-style trace set for load benchmarks.
// Each rank's file looks like PyTorch 2.x profiler output of a GPU training loop: ProfilerStep
// annotations, nested cpu_ops with typical args, cudaLaunchKernel runtime events, kernels on two streams
// with correlation ids, ac2g flows and NCCL kernels. Same arguments -> byte-identical output.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

namespace {

const char* kOps[] = {"aten::linear",  "aten::matmul",  "aten::addmm", "aten::layer_norm", "aten::gelu",
                      "aten::softmax", "aten::dropout", "aten::add",   "aten::mul",        "aten::copy_"};
const char* kKernels[] = {
    "void "
    "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_align1>(cutlass_80_tensorop_s1688gemm_128x64_32x6_nt_"
    "align1::Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
    "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
    "at::detail::Array<char*, 2>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, "
    "float const*, float const*, float*, float*, float*)",
    "ampere_sgemm_128x64_tn",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
    "namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: strata_gen_kineto OUT_DIR RANKS MB_PER_RANK [--compact] [--steps N] [--ops N]\n"
                 "writes OUT_DIR/rank-<r>.json, each about MB_PER_RANK megabytes, or with --steps exactly N\n"
                 "ProfilerSteps of --ops CPU ops each (every 10th op also launches an NCCL kernel)\n");
    return 2;
  }
  const std::string out_dir = argv[1];
  const int ranks = std::atoi(argv[2]);
  const double mb = std::atof(argv[3]);
  bool compact = false;
  int max_steps = 0, ops_per_step = 200;
  for (int i = 4; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--compact") compact = true;
    if (arg == "--steps" && i + 1 < argc) max_steps = std::atoi(argv[++i]);
    if (arg == "--ops" && i + 1 < argc) ops_per_step = std::atoi(argv[++i]);
  }
  const int nccl_every = max_steps > 0 ? 10 : 50;
  const char* sep = compact ? "," : ", ";
  const char* colon = compact ? ":" : ": ";
  std::filesystem::create_directories(out_dir);
  for (int r = 0; r < ranks; ++r) {
    const std::string path = fmt::format("{}/rank-{}.json", out_dir, r);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    std::mt19937_64 rng(1234 + r);
    fmt::print(
        f,
        "{{\"schemaVersion\"{0}1{1}\"distributedInfo\"{0}{{\"backend\"{0}\"nccl\"{1}\"rank\"{0}{2}{1}"
        "\"world_size\"{0}{3}}}{1}\"deviceProperties\"{0}[{{\"id\"{0}0{1}\"name\"{0}\"NVIDIA A100-SXM4-80GB\"}}]{1}"
        "\"traceEvents\"{0}[\n",
        colon, sep, r, ranks);
    const auto limit = static_cast<long>(mb * 1024 * 1024);
    long ts = 1700000000000000L + r * 37;  // µs
    long corr = 1;
    long ext = 1;
    bool first = true;
    auto emit = [&](const std::string& ev) {
      if (!first) std::fputs(",\n", f);
      first = false;
      std::fputs(ev.c_str(), f);
    };
    for (int step = 1; max_steps > 0 ? step <= max_steps : std::ftell(f) < limit; ++step) {
      const long step_start = ts;
      std::string step_events;
      long gpu_ts = ts + 50;
      for (int op = 0; op < ops_per_step && (max_steps > 0 || std::ftell(f) < limit); ++op) {
        const char* name = kOps[rng() % 10];
        const long dur = 20 + static_cast<long>(rng() % 200);
        emit(fmt::format(
            "{{\"ph\"{0}\"X\"{1}\"cat\"{0}\"cpu_op\"{1}\"name\"{0}\"{2}\"{1}\"pid\"{0}{3}{1}\"tid\"{0}{4}{1}"
            "\"ts\"{0}{5}.{6:03}{1}\"dur\"{0}{7}.{8:03}{1}\"args\"{0}{{\"External id\"{0}{9}{1}"
            "\"Input Dims\"{0}[[{10}{1}{11}]{1}[{11}]]{1}\"Input type\"{0}[\"float\"{1}\"float\"]}}}}",
            colon, sep, name, 4000 + r, 4100 + r, ts, rng() % 1000, dur, rng() % 1000, ext++, rng() % 4096,
            rng() % 4096));
        const long launch_ts = ts + dur / 2;
        emit(fmt::format(
            "{{\"ph\"{0}\"X\"{1}\"cat\"{0}\"cuda_runtime\"{1}\"name\"{0}\"cudaLaunchKernel\"{1}\"pid\"{0}{2}{1}"
            "\"tid\"{0}{3}{1}\"ts\"{0}{4}{1}\"dur\"{0}{5}{1}\"args\"{0}{{\"External id\"{0}{6}{1}"
            "\"cbid\"{0}211{1}\"correlation\"{0}{7}}}}}",
            colon, sep, 4000 + r, 4100 + r, launch_ts, 5, ext, corr));
        const bool nccl = op % nccl_every == nccl_every - 1;
        const int stream = nccl ? 20 : 7;
        const long kdur = nccl ? 400 + static_cast<long>(rng() % 400) : 10 + static_cast<long>(rng() % 150);
        gpu_ts = std::max(gpu_ts, launch_ts + 10);
        const std::string kname =
            nccl ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
                 : kKernels[rng() % 5];
        emit(
            fmt::format("{{\"ph\"{0}\"X\"{1}\"cat\"{0}\"kernel\"{1}\"name\"{0}\"{2}\"{1}\"pid\"{0}0{1}\"tid\"{0}{3}{1}"
                        "\"ts\"{0}{4}{1}\"dur\"{0}{5}{1}\"args\"{0}{{\"External id\"{0}{6}{1}\"queued\"{0}0{1}"
                        "\"device\"{0}0{1}\"context\"{0}1{1}\"stream\"{0}{3}{1}\"correlation\"{0}{7}{1}"
                        "\"registers per thread\"{0}128{1}\"shared memory\"{0}0{1}\"blocks per SM\"{0}2.5{1}"
                        "\"warps per SM\"{0}20.0{1}\"grid\"{0}[216{1}1{1}1]{1}\"block\"{0}[256{1}1{1}1]{1}"
                        "\"est. achieved occupancy %\"{0}25}}}}",
                        colon, sep, kname, stream, gpu_ts, kdur, ext, corr));
        emit(
            fmt::format("{{\"ph\"{0}\"s\"{1}\"id\"{0}{2}{1}\"pid\"{0}{3}{1}\"tid\"{0}{4}{1}\"ts\"{0}{5}{1}"
                        "\"cat\"{0}\"ac2g\"{1}\"name\"{0}\"ac2g\"}}",
                        colon, sep, corr, 4000 + r, 4100 + r, launch_ts));
        emit(
            fmt::format("{{\"ph\"{0}\"f\"{1}\"id\"{0}{2}{1}\"pid\"{0}0{1}\"tid\"{0}{3}{1}\"ts\"{0}{4}{1}"
                        "\"cat\"{0}\"ac2g\"{1}\"name\"{0}\"ac2g\"{1}\"bp\"{0}\"e\"}}",
                        colon, sep, corr, stream, gpu_ts));
        gpu_ts += kdur;
        ts += dur + 5;
        ++corr;
      }
      emit(fmt::format(
          "{{\"ph\"{0}\"X\"{1}\"cat\"{0}\"user_annotation\"{1}\"name\"{0}\"ProfilerStep#{2}\"{1}"
          "\"pid\"{0}{3}{1}\"tid\"{0}{4}{1}\"ts\"{0}{5}{1}\"dur\"{0}{6}{1}\"args\"{0}{{\"External id\"{0}{7}}}}}",
          colon, sep, step, 4000 + r, 4100 + r, step_start, ts - step_start, ext++));
    }
    std::fputs("\n], \"traceName\": \"generated\"}\n", f);
    std::fclose(f);
  }
  return 0;
}
