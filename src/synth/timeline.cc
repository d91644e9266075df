// Timeline model of one replica's training step (see timeline.h).
#include "synth/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "synth/rng.h"

namespace strata::synth {

namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kLaunchLatency = 5 * kUs;  // launch call to earliest kernel start
constexpr int64_t kMaxListedGroup = 64;      // larger groups are written without their member list
constexpr int64_t kCounterPeriod = 2000 * kUs;

struct OpSpec {
  const char* op;
  const char* kernel;
  double us;
  bool gemm;
};

constexpr const char* kGemmTn = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn";
constexpr const char* kGemmNn = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn";
constexpr const char* kGemmNt = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nt";

// One transformer layer. The TP all-reduce follows entries 2 and 6 (forward) and 2 and 8 (backward).
constexpr OpSpec kForward[] = {
    {"aten::linear", kGemmTn, 280, true},
    {"aten::_scaled_dot_product_flash_attention",
     "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t>, false, true, false, false, true, false>(Flash_fwd_params)",
     220, false},
    {"aten::linear", kGemmNn, 110, true},
    {"aten::layer_norm",
     "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
     "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
     35, false},
    {"aten::linear", kGemmTn, 300, true},
    {"aten::gelu",
     "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
     "at::native::GeluType)::{lambda()#1}, at::detail::Array<char*, 2> >(int, "
     "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}, "
     "at::detail::Array<char*, 2>)",
     60, false},
    {"aten::linear", kGemmTn, 300, true},
};
constexpr OpSpec kBackward[] = {
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNt, 300, true},
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNn, 300, true},
    {"autograd::engine::evaluate_function: GeluBackward0",
     "void at::native::vectorized_elementwise_kernel<4, "
     "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, "
     "c10::basic_string_view<char>)::{lambda()#1}, at::detail::Array<char*, 3> >(int, "
     "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, c10::basic_string_view<char>)::{lambda()#1}, "
     "at::detail::Array<char*, 3>)",
     80, false},
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNt, 300, true},
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNn, 300, true},
    {"autograd::engine::evaluate_function: NativeLayerNormBackward0",
     "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, float>(c10::BFloat16 "
     "const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
     70, false},
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNt, 110, true},
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNn, 110, true},
    {"autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0",
     "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, "
     "4, 2, false, false, cutlass::bfloat16_t>, false, true, false, false, false, true>(Flash_bwd_params)",
     450, false},
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNt, 280, true},
    {"autograd::engine::evaluate_function: AddmmBackward0", kGemmNn, 280, true},
};
constexpr OpSpec kEmbedding = {"aten::embedding",
                               "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
                               "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned "
                               "int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
                               "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, "
                               "unsigned int, long)",
                               40, false};
constexpr OpSpec kEmbeddingBackward = {"autograd::engine::evaluate_function: EmbeddingBackward0",
                                       "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<"
                                       "c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, "
                                       "c10::BFloat16*, int, long, int)",
                                       80, false};
constexpr OpSpec kLoss = {"aten::cross_entropy_loss",
                          "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, "
                          "float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, "
                          "c10::BFloat16 const*, int)",
                          90, false};
constexpr OpSpec kLossBackward = {"autograd::engine::evaluate_function: NllLossBackward0",
                                  "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<"
                                  "c10::BFloat16, float, long>(c10::BFloat16*, c10::BFloat16 const*, long const*, "
                                  "c10::BFloat16 const*, c10::BFloat16 const*, bool, int, int, long, long)",
                                  40, false};
constexpr OpSpec kOptimizer[] = {
    {"aten::_foreach_mul_",
     "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<c10::BFloat16, 1, "
     "1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, "
     "at::native::(anonymous namespace)::BinaryOpScalarFunctor<c10::BFloat16, 1, 1, 0>, std::multiplies<float>, "
     "float)",
     400, false},
    {"aten::_foreach_addcdiv_",
     "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::PointwiseOpScalarFunctor<c10::BFloat16, 4, "
     "3, 3>, std::divides<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<4>, "
     "at::native::(anonymous namespace)::PointwiseOpScalarFunctor<c10::BFloat16, 4, 3, 3>, std::divides<float>, "
     "float)",
     500, false},
};

constexpr const char* kTpAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
constexpr const char* kDpAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
constexpr const char* kSendRecv = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";
constexpr double kTpTransferUs = 70, kP2pTransferUs = 150, kDpTransferUs = 2500, kMemcpyUs = 300;
constexpr double kHostOpUs = 28;

double Sum(const OpSpec* ops, size_t n, bool gemm_only) {
  double s = 0;
  for (size_t i = 0; i < n; ++i)
    if (!gemm_only || ops[i].gemm) s += ops[i].us;
  return s;
}

std::string RankList(const std::vector<int64_t>& members) {
  if (static_cast<int64_t>(members.size()) > kMaxListedGroup) return "";
  std::string s = "[";
  for (size_t i = 0; i < members.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", members[i]);
  return s + "]";
}

}  // namespace

ReplicaSim::ReplicaSim(const JobConfig& cfg, const FaultEffect& effect, int64_t replica, std::vector<RankSink*> sinks)
    : cfg_(cfg), effect_(effect), replica_(replica) {
  const Layout& l = cfg.layout;
  ranks_.resize(static_cast<size_t>(l.replica_size()));
  for (int64_t s = 0; s < l.pp(); ++s)
    for (int64_t t = 0; t < l.tp(); ++t) {
      Rank& r = At(s, t);
      r.c = {replica, s, t};
      r.rank = l.RankOf(r.c);
      r.sink = sinks.empty() ? nullptr : sinks[static_cast<size_t>(s * l.tp() + t)];
    }
}

int64_t ReplicaSim::LayersOf(int64_t stage) const {
  const int64_t pp = cfg_.layout.pp();
  return cfg_.layers / pp + (stage < cfg_.layers % pp ? 1 : 0);
}

ReplicaSim::StageCost ReplicaSim::Cost(int64_t stage) const {
  const Layout& l = cfg_.layout;
  const double mb = static_cast<double>(cfg_.microbatches), layers = static_cast<double>(LayersOf(stage));
  constexpr size_t nf = std::size(kForward), nb = std::size(kBackward);
  StageCost c;
  c.kernel_ns = kUs * (mb * layers * (Sum(kForward, nf, false) + Sum(kBackward, nb, false)) +
                       Sum(kOptimizer, std::size(kOptimizer), false));
  c.gemm_ns = kUs * mb * layers * (Sum(kForward, nf, true) + Sum(kBackward, nb, true));
  c.memcpy_ns = kUs * kMemcpyUs;
  c.compute_ops = static_cast<int64_t>(cfg_.microbatches * LayersOf(stage) * static_cast<int64_t>(nf + nb));
  if (stage == 0) {
    c.kernel_ns += kUs * mb * (kEmbedding.us + kEmbeddingBackward.us);
    c.compute_ops += 2 * cfg_.microbatches;
  }
  if (stage == l.pp() - 1) {
    c.kernel_ns += kUs * mb * (kLoss.us + kLossBackward.us);
    c.compute_ops += 2 * cfg_.microbatches;
  }
  if (l.tp() > 1) c.transfer_ns += kUs * kTpTransferUs * 4 * mb * layers;
  const double boundaries = (stage > 0 ? 1 : 0) + (stage < l.pp() - 1 ? 1 : 0);
  c.transfer_ns += kUs * kP2pTransferUs * 2 * mb * boundaries;
  if (l.dp() > 1) c.transfer_ns += kUs * kDpTransferUs;
  return c;
}

bool ReplicaSim::CommSlow(const std::vector<int64_t>& members) const {
  const Fault f = cfg_.fault.kind;
  if ((f != Fault::kSlowCommunication && f != Fault::kNetworkContention) || !cfg_.fault.ActiveIn(step_)) return false;
  return std::find(members.begin(), members.end(), cfg_.fault.rank) != members.end();
}

ReplicaSim::Launch ReplicaSim::HostOp(Rank& r, std::string_view op, int64_t cost_ns, std::string_view runtime,
                                      SynthEvent::Kind op_kind) {
  Launch l;
  l.corr = (index_ + 1) * 1000000 + r.k++;
  SynthEvent e;
  e.kind = op_kind;
  e.name = op;
  e.ts_ns = r.host;
  e.dur_ns = cost_ns;
  e.correlation = l.corr;  // External id
  Emit(r, e);
  const int64_t launch_dur = 6 * kUs + static_cast<int64_t>(2000 * Uniform(cfg_.seed, kTagHostOp, r.rank, index_, r.k));
  l.ts = r.host + std::max<int64_t>(kUs, cost_ns - launch_dur - 2 * kUs);
  SynthEvent rt;
  rt.kind = SynthEvent::Kind::kRuntime;
  rt.name = runtime;
  rt.ts_ns = l.ts;
  rt.dur_ns = launch_dur;
  rt.correlation = l.corr;
  rt.flow = true;
  Emit(r, rt);
  r.host += std::max(cost_ns, l.ts + launch_dur - r.host) + 1500;
  return l;
}

void ReplicaSim::Compute(Rank& r, std::string_view op, std::string_view kernel, double base_us, bool gemm) {
  double factor = Jitter(0.03, cfg_.seed, kTagKernel, r.rank, index_, r.k);
  const Fault f = cfg_.fault.kind;
  if (r.hit) {
    if ((f == Fault::kSlowCompute && gemm) || f == Fault::kThermalThrottling || f == Fault::kStageImbalance)
      factor *= effect_.kernel_factor;
    if (f == Fault::kDataImbalance) factor *= imbalance_by_stage_[static_cast<size_t>(r.c.stage)];
  }
  const auto dur = static_cast<int64_t>(base_us * kUs * factor);
  int64_t cost = static_cast<int64_t>(kHostOpUs * kUs * Jitter(0.15, cfg_.seed, kTagHostOp, r.rank, index_, r.k));
  if (r.hit && f == Fault::kLaunchOverhead) cost += effect_.host_extra_ns;
  const Launch l = HostOp(r, op, cost);
  SynthEvent k;
  k.kind = SynthEvent::Kind::kKernel;
  k.name = kernel;
  k.ts_ns = std::max(r.gpu, l.ts + kLaunchLatency);
  k.dur_ns = dur;
  k.correlation = l.corr;
  k.stream = 7;
  Emit(r, k);
  r.gpu = k.ts_ns + dur;
}

void ReplicaSim::Memcpy(Rank& r, std::string_view op, std::string_view kernel, double base_us, bool memset) {
  double factor = Jitter(0.03, cfg_.seed, kTagMemcpy, r.rank, index_, r.k);
  if (r.hit && cfg_.fault.kind == Fault::kPciePressure && !memset) factor *= effect_.memcpy_factor;
  const auto dur = static_cast<int64_t>(base_us * kUs * factor);
  const Launch l = HostOp(r, op, static_cast<int64_t>(kHostOpUs * kUs), memset ? "cudaMemsetAsync" : "cudaMemcpyAsync");
  SynthEvent k;
  k.kind = memset ? SynthEvent::Kind::kMemset : SynthEvent::Kind::kMemcpy;
  k.name = kernel;
  k.ts_ns = std::max(r.gpu, l.ts + kLaunchLatency);
  k.dur_ns = dur;
  k.correlation = l.corr;
  k.stream = 7;
  Emit(r, k);
  r.gpu = k.ts_ns + dur;
}

void ReplicaSim::TensorAllReduce(int64_t stage, int64_t occurrence) {
  const Layout& l = cfg_.layout;
  if (l.tp() < 2) return;
  const Coord c{replica_, stage, 0};
  const std::vector<int64_t> members = l.Members(GroupKind::kTensor, c);
  CollArgs args;
  args.collective = "allreduce";
  args.nelems = 8388608;
  args.group_id = l.GroupId(GroupKind::kTensor, c);
  args.group_size = l.tp();
  args.group_desc = "tensor_parallel";
  args.ranks = RankList(members);
  std::vector<Launch> launches(static_cast<size_t>(l.tp()));
  int64_t latest = 0;
  for (int64_t t = 0; t < l.tp(); ++t) {
    Rank& r = At(stage, t);
    launches[static_cast<size_t>(t)] = HostOp(r, "nccl:all_reduce", 18 * kUs);
    latest = std::max(latest, std::max(r.gpu, launches[static_cast<size_t>(t)].ts + kLaunchLatency));
  }
  double transfer = kTpTransferUs * kUs * Jitter(0.03, cfg_.seed, kTagTransfer, args.group_id, index_, occurrence);
  if (CommSlow(members)) transfer *= effect_.transfer_factor;
  const int64_t end = latest + static_cast<int64_t>(transfer);
  for (int64_t t = 0; t < l.tp(); ++t) {
    Rank& r = At(stage, t);
    SynthEvent k;
    k.kind = SynthEvent::Kind::kKernel;
    k.name = kTpAllReduce;
    k.ts_ns = std::max(r.gpu, launches[static_cast<size_t>(t)].ts + kLaunchLatency);
    k.dur_ns = end - k.ts_ns;
    k.correlation = launches[static_cast<size_t>(t)].corr;
    k.stream = 20;
    k.coll = &args;
    Emit(r, k);
    r.gpu = end;
  }
}

void ReplicaSim::PointToPoint(int64_t from_stage, int64_t to_stage, int64_t mb, int64_t dir) {
  const Layout& l = cfg_.layout;
  const int64_t low = std::min(from_stage, to_stage);
  for (int64_t t = 0; t < l.tp(); ++t) {
    const Coord c{replica_, low, t};
    const std::vector<int64_t> members = l.Members(GroupKind::kPipePair, c);
    CollArgs send, recv;
    send.collective = "send";
    recv.collective = "recv";
    for (CollArgs* a : {&send, &recv}) {
      a->nelems = 4194304;
      a->group_id = l.GroupId(GroupKind::kPipePair, c);
      a->group_size = 2;
      a->group_desc = "pipeline_p2p";
      a->ranks = RankList(members);
    }
    Rank& s = At(from_stage, t);
    Rank& r = At(to_stage, t);
    const Launch ls = HostOp(s, "nccl:send", 15 * kUs);
    const Launch lr = HostOp(r, "nccl:recv", 15 * kUs);
    const int64_t as = std::max(s.gpu, ls.ts + kLaunchLatency), ar = std::max(r.gpu, lr.ts + kLaunchLatency);
    double transfer = kP2pTransferUs * kUs * Jitter(0.03, cfg_.seed, kTagTransfer, send.group_id, index_, mb * 2 + dir);
    if (CommSlow(members)) transfer *= effect_.transfer_factor;
    const int64_t end = std::max(as, ar) + static_cast<int64_t>(transfer);
    for (auto [rank, arrival, launch, args] : {std::tuple{&s, as, ls, &send}, std::tuple{&r, ar, lr, &recv}}) {
      SynthEvent k;
      k.kind = SynthEvent::Kind::kKernel;
      k.name = kSendRecv;
      k.ts_ns = arrival;
      k.dur_ns = end - arrival;
      k.correlation = launch.corr;
      k.stream = 24;
      k.coll = args;
      Emit(*rank, k);
      rank->gpu = end;
    }
  }
}

void ReplicaSim::Forward(int64_t stage, int64_t mb) {
  const Layout& l = cfg_.layout;
  for (int64_t t = 0; t < l.tp(); ++t)
    if (stage == 0) Compute(At(stage, t), kEmbedding.op, kEmbedding.kernel, kEmbedding.us, false);
  for (int64_t layer = 0; layer < LayersOf(stage); ++layer) {
    for (size_t i = 0; i < std::size(kForward); ++i) {
      for (int64_t t = 0; t < l.tp(); ++t)
        Compute(At(stage, t), kForward[i].op, kForward[i].kernel, kForward[i].us, kForward[i].gemm);
      if (i == 2 || i == 6) TensorAllReduce(stage, (mb * LayersOf(stage) + layer) * 4 + (i == 2 ? 0 : 1));
    }
  }
  for (int64_t t = 0; t < l.tp(); ++t)
    if (stage == l.pp() - 1) Compute(At(stage, t), kLoss.op, kLoss.kernel, kLoss.us, false);
}

void ReplicaSim::Backward(int64_t stage, int64_t mb) {
  const Layout& l = cfg_.layout;
  for (int64_t t = 0; t < l.tp(); ++t)
    if (stage == l.pp() - 1) Compute(At(stage, t), kLossBackward.op, kLossBackward.kernel, kLossBackward.us, false);
  for (int64_t layer = LayersOf(stage) - 1; layer >= 0; --layer) {
    for (size_t i = 0; i < std::size(kBackward); ++i) {
      for (int64_t t = 0; t < l.tp(); ++t)
        Compute(At(stage, t), kBackward[i].op, kBackward[i].kernel, kBackward[i].us, kBackward[i].gemm);
      if (i == 4 || i == 10) TensorAllReduce(stage, (mb * LayersOf(stage) + layer) * 4 + (i == 4 ? 2 : 3));
    }
  }
  for (int64_t t = 0; t < l.tp(); ++t)
    if (stage == 0)
      Compute(At(stage, t), kEmbeddingBackward.op, kEmbeddingBackward.kernel, kEmbeddingBackward.us, false);
}

void ReplicaSim::BeginStep(int64_t index, const int64_t* start) {
  index_ = index;
  step_ = cfg_.first_step + index;
  const Layout& l = cfg_.layout;
  imbalance_by_stage_.assign(static_cast<size_t>(l.pp()), 1.0);
  if (cfg_.fault.kind == Fault::kDataImbalance && cfg_.fault.ActiveIn(step_) && l.dp() > 1) {
    // Each step one replica draws the heavy batch (e.g. the long sequences), in turn: the heavy replica
    // changes every step and none is heavy more often than ceil(steps / dp) times.
    const int64_t shift = static_cast<int64_t>(Draw(cfg_.seed, kTagFaultSteps, 2) % static_cast<uint64_t>(l.dp()));
    const double share = (index + shift) % l.dp() == replica_ ? 1.0 : 0.0;
    for (int64_t s = 0; s < l.pp(); ++s)
      imbalance_by_stage_[static_cast<size_t>(s)] = 1 + share * effect_.imbalance_ns / Cost(s).kernel_ns;
  }
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Rank& r = ranks_[i];
    r.host = r.gpu = r.step_start = start[i];
    r.k = 0;
    r.hit = cfg_.fault.Hits(r.rank, r.c, step_);
  }
}

void ReplicaSim::RunToDataParallel() {
  const Layout& l = cfg_.layout;
  for (Rank& r : ranks_) {
    SynthEvent dl;
    dl.kind = SynthEvent::Kind::kUserAnnotation;
    dl.name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    dl.ts_ns = r.host;
    dl.dur_ns = static_cast<int64_t>(250 * kUs * Jitter(0.1, cfg_.seed, kTagDataLoader, r.rank, index_));
    if (r.hit && cfg_.fault.kind == Fault::kDataloaderStall) dl.dur_ns += effect_.stall_ns;
    Emit(r, dl);
    r.host += dl.dur_ns + 3 * kUs;
    Memcpy(r, "aten::to", "Memcpy HtoD (Pageable -> Device)", kMemcpyUs, false);
    Memcpy(r, "aten::zero_", "Memset (Device)", 8, true);
    if (r.hit && cfg_.fault.kind == Fault::kGcPause) r.host += effect_.stall_ns;  // no event: an uncovered gap
    r.gpu = std::max(r.gpu, r.host);
  }
  // Forward (GPipe: every microbatch through every stage), then backward in the same microbatch order.
  for (int64_t mb = 0; mb < cfg_.microbatches; ++mb)
    for (int64_t s = 0; s < l.pp(); ++s) {
      Forward(s, mb);
      if (s + 1 < l.pp()) PointToPoint(s, s + 1, mb, 0);
    }
  for (int64_t mb = 0; mb < cfg_.microbatches; ++mb)
    for (int64_t s = l.pp() - 1; s >= 0; --s) {
      Backward(s, mb);
      if (s > 0) PointToPoint(s, s - 1, mb, 1);
    }
  for (Rank& r : ranks_) {
    if (l.dp() < 2) {
      r.dp_arrival = r.gpu;
      continue;
    }
    const Launch la = HostOp(r, "nccl:all_reduce", 20 * kUs);
    r.dp_launch = la.ts;
    r.dp_corr = la.corr;
    r.dp_arrival = std::max(r.gpu, la.ts + kLaunchLatency);
  }
}

int64_t ReplicaSim::DpTransfer(size_t local, int64_t index) const {
  const Layout& l = cfg_.layout;
  const Coord c = ranks_[local].c;
  const int64_t gid = l.GroupId(GroupKind::kData, c);
  double transfer = kDpTransferUs * kUs * Jitter(0.03, cfg_.seed, kTagTransfer, gid, index, 999999);
  const Fault f = cfg_.fault.kind;
  if ((f == Fault::kSlowCommunication || f == Fault::kNetworkContention) &&
      cfg_.fault.ActiveIn(cfg_.first_step + index)) {
    const Coord fc = l.CoordOf(cfg_.fault.rank);
    if (fc.stage == c.stage && fc.tp == c.tp) transfer *= effect_.transfer_factor;
  }
  return static_cast<int64_t>(transfer);
}

void ReplicaSim::FinishStep(const int64_t* dp_end) {
  const Layout& l = cfg_.layout;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    Rank& r = ranks_[i];
    if (l.dp() > 1) {
      const Coord c = r.c;
      CollArgs args;
      args.collective = "allreduce";
      args.nelems = 100000000 / l.pp() / l.tp();
      args.group_id = l.GroupId(GroupKind::kData, c);
      args.group_size = l.dp();
      args.group_desc = "data_parallel";
      if (l.dp() <= kMaxListedGroup) args.ranks = RankList(l.Members(GroupKind::kData, c));
      SynthEvent k;
      k.kind = SynthEvent::Kind::kKernel;
      k.name = kDpAllReduce;
      k.ts_ns = r.dp_arrival;
      k.dur_ns = dp_end[i] - r.dp_arrival;
      k.correlation = r.dp_corr;
      k.stream = 28;
      k.coll = &args;
      Emit(r, k);
      r.gpu = dp_end[i];
    }
    // Optimizer, then loss.item(): a device-to-host copy and a synchronization that waits for the device.
    const int64_t opt_start = r.host;
    for (const OpSpec& op : kOptimizer) Compute(r, op.op, op.kernel, op.us, op.gemm);
    SynthEvent opt;
    opt.kind = SynthEvent::Kind::kUserAnnotation;
    opt.name = "Optimizer.step#AdamW.step";
    opt.ts_ns = opt_start;
    opt.dur_ns = r.host - opt_start;
    Emit(r, opt);
    Memcpy(r, "aten::item", "Memcpy DtoH (Device -> Pageable)", 3, false);
    SynthEvent sync;
    sync.kind = SynthEvent::Kind::kRuntime;
    sync.name = "cudaStreamSynchronize";
    sync.ts_ns = r.host;
    sync.dur_ns = std::max<int64_t>(2 * kUs, r.gpu - r.host + 3 * kUs);
    sync.correlation = (index_ + 1) * 1000000 + r.k++;
    Emit(r, sync);
    r.host = sync.ts_ns + sync.dur_ns + 4 * kUs;
    SynthEvent step;
    step.kind = SynthEvent::Kind::kUserAnnotation;
    const std::string name = fmt::format("ProfilerStep#{}", step_);
    step.name = name;
    step.ts_ns = r.step_start;
    step.dur_ns = r.host - r.step_start;
    Emit(r, step);
    if (cfg_.counters) Counters(r, r.host);
    r.host += 12 * kUs;
    r.gpu = r.host;
  }
}

void ReplicaSim::Counters(Rank& r, int64_t end) {
  const Fault f = cfg_.fault.kind;
  const bool hit = r.hit;
  SynthEvent e;
  e.kind = SynthEvent::Kind::kCounter;
  for (int64_t t = r.step_start, j = 0; t < end; t += kCounterPeriod, ++j) {
    e.ts_ns = t;
    auto u = [&](uint64_t which) { return Jitter(0.03, cfg_.seed, kTagCounter, r.rank, index_ * 100000 + j, which); };
    e.name = "cpu_util_pct";
    e.value = 32 * u(0) * (hit && f == Fault::kLaunchOverhead ? 2.9 : 1.0);
    Emit(r, e);
    e.name = "nic_bytes_per_s";
    e.value = 2.0e9 * u(1) + (hit && f == Fault::kNetworkContention ? 3.5e9 * u(5) : 0.0);
    Emit(r, e);
    e.name = "pcie_bytes_per_s";
    e.value = 1.2e9 * u(2) + (hit && f == Fault::kPciePressure ? 9.0e9 * u(6) : 0.0);
    Emit(r, e);
    e.name = "gpu_sm_clock_mhz";
    e.value = 1410 * (1 + (u(3) - 1) / 6) / (hit && f == Fault::kThermalThrottling ? effect_.kernel_factor : 1.0);
    Emit(r, e);
  }
}

FaultEffect CalibrateFault(const JobConfig& cfg) {
  JobConfig clean = cfg;
  clean.fault = FaultPlan();
  FaultEffect none;
  ReplicaSim sim(clean, none, 0, {});
  const size_t n = static_cast<size_t>(cfg.layout.replica_size());
  std::vector<int64_t> start(n, 0), end(n);
  sim.BeginStep(0, start.data());
  sim.RunToDataParallel();
  for (size_t i = 0; i < n; ++i) end[i] = sim.DpArrival(i) + (cfg.layout.dp() > 1 ? sim.DpTransfer(i, 0) : 0);
  // The step ends when every stage's DP all-reduce is done: use the latest.
  const int64_t latest = *std::max_element(end.begin(), end.end());
  std::fill(end.begin(), end.end(), latest);
  sim.FinishStep(end.data());
  int64_t step_ns = 0;
  for (size_t i = 0; i < n; ++i) step_ns = std::max(step_ns, sim.NextStart(i));
  FaultEffect e;
  e.clean_step_ns = static_cast<double>(step_ns);
  const FaultPlan& p = cfg.fault;
  if (p.kind == Fault::kNone) return e;
  const double extra = p.magnitude * e.clean_step_ns;
  const ReplicaSim::StageCost c = sim.Cost(p.stage >= 0 ? p.stage : 0);
  switch (p.kind) {
    case Fault::kSlowCompute:
      e.kernel_factor = 1 + extra / c.gemm_ns;
      break;
    case Fault::kThermalThrottling:
    case Fault::kStageImbalance:
      e.kernel_factor = 1 + extra / c.kernel_ns;
      break;
    case Fault::kSlowCommunication:
    case Fault::kNetworkContention:
      e.transfer_factor = 1 + extra / std::max(1.0, c.transfer_ns);
      break;
    case Fault::kPciePressure:
      e.memcpy_factor = 1 + extra / c.memcpy_ns;
      break;
    case Fault::kLaunchOverhead: {
      // The host only starves the device once it is the bottleneck: make the host's work for the step take
      // (1 + magnitude) clean steps, spread over its compute ops.
      const double ops = static_cast<double>(std::max<int64_t>(1, c.compute_ops));
      e.host_extra_ns =
          static_cast<int64_t>(std::max(extra / ops, (e.clean_step_ns + extra - ops * kHostOpUs * kUs) / ops));
      break;
    }
    case Fault::kDataloaderStall:
    case Fault::kGcPause:
      e.stall_ns = static_cast<int64_t>(extra);
      break;
    case Fault::kDataImbalance:
      e.imbalance_ns = extra;
      break;
    case Fault::kNone:
      break;
  }
  return e;
}

}  // namespace strata::synth
