// Fault plans of the synthetic generator (see faults.h).
#include "synth/faults.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/decimal.h"
#include "synth/rng.h"

namespace strata::synth {

namespace {

struct NamedFault {
  const char* name;
  Fault fault;
};

constexpr NamedFault kFaults[] = {
    {"none", Fault::kNone},
    {"slow_compute", Fault::kSlowCompute},
    {"thermal_throttling", Fault::kThermalThrottling},
    {"slow_communication", Fault::kSlowCommunication},
    {"network_contention", Fault::kNetworkContention},
    {"pcie_pressure", Fault::kPciePressure},
    {"launch_overhead", Fault::kLaunchOverhead},
    {"dataloader_stall", Fault::kDataloaderStall},
    {"gc_pause", Fault::kGcPause},
    {"stage_imbalance", Fault::kStageImbalance},
    {"data_imbalance", Fault::kDataImbalance},
};

bool RankLevel(Fault f) { return f != Fault::kNone && f != Fault::kStageImbalance && f != Fault::kDataImbalance; }

}  // namespace

const char* FaultName(Fault f) {
  for (const auto& nf : kFaults)
    if (nf.fault == f) return nf.name;
  return "none";
}

std::string FaultNames() {
  std::string out;
  for (const auto& nf : kFaults) out += (out.empty() ? "" : ", ") + std::string(nf.name);
  return out;
}

bool ParseFault(const std::string& name, Fault* out) {
  for (const auto& nf : kFaults)
    if (name == nf.name) {
      *out = nf.fault;
      return true;
    }
  return false;
}

bool FaultPlan::ActiveIn(int64_t step) const {
  return kind != Fault::kNone && std::binary_search(steps.begin(), steps.end(), step);
}

bool FaultPlan::Hits(int64_t r, const Coord& c, int64_t step) const {
  if (!ActiveIn(step)) return false;
  if (kind == Fault::kStageImbalance) return c.stage == stage;
  if (kind == Fault::kDataImbalance) return true;
  return r == rank;
}

std::vector<int64_t> FaultPlan::Ranks(const Layout& layout) const {
  std::vector<int64_t> out;
  if (kind == Fault::kNone) return out;
  if (RankLevel(kind)) return {rank};
  if (kind == Fault::kDataImbalance) return out;  // no single bad rank
  for (int64_t r = 0; r < layout.world(); ++r)
    if (layout.CoordOf(r).stage == stage) out.push_back(r);
  return out;
}

Status ResolveFault(const FaultRequest& req, const Layout& layout, int64_t first_step, int64_t steps, uint64_t seed,
                    FaultPlan* plan) {
  FaultPlan p;
  if (!ParseFault(req.name, &p.kind))
    return Status::Usage(fmt::format("--fault {}: unknown fault (known: {})", req.name, FaultNames()));
  if (p.kind == Fault::kNone) {
    if (req.rank >= 0 || req.stage >= 0 || !req.steps.empty() || req.every > 0)
      return Status::Usage("--fault-rank/--fault-stage/--fault-steps/--every: need a --fault");
    *plan = p;
    return Status::Ok();
  }
  if (!(req.magnitude > 0 && req.magnitude <= 5))
    return Status::Usage(
        fmt::format("--magnitude {}: must be in (0, 5] (extra time as a fraction of the step time)", req.magnitude));
  p.magnitude = req.magnitude;
  if (RankLevel(p.kind)) {
    if (req.stage >= 0)
      return Status::Usage(fmt::format("--fault-stage: {} is a fault of one rank; use --fault-rank", req.name));
    if (req.rank >= layout.world())
      return Status::Usage(
          fmt::format("--fault-rank {}: out of range (the job has ranks 0..{})", req.rank, layout.world() - 1));
    p.rank = req.rank >= 0 ? req.rank : static_cast<int64_t>(Draw(seed, kTagFaultSteps, 1) % layout.world());
    p.stage = layout.CoordOf(p.rank).stage;
  } else if (p.kind == Fault::kStageImbalance) {
    if (req.rank >= 0)
      return Status::Usage("--fault-rank: stage_imbalance is a fault of a pipeline stage; use --fault-stage");
    if (layout.pp() < 2) return Status::Usage("--fault stage_imbalance: needs a pipeline (--pp 2 or more)");
    if (req.stage >= layout.pp())
      return Status::Usage(
          fmt::format("--fault-stage {}: out of range (the job has stages 0..{})", req.stage, layout.pp() - 1));
    p.stage = req.stage >= 0 ? req.stage : layout.pp() - 1;
  } else {  // data imbalance
    if (req.rank >= 0 || req.stage >= 0)
      return Status::Usage("--fault-rank/--fault-stage: data_imbalance has no single bad rank or stage");
    if (layout.dp() < 2) return Status::Usage("--fault data_imbalance: needs data parallelism (--dp 2 or more)");
  }
  if (!req.steps.empty() && req.every > 0) return Status::Usage("--fault-steps and --every: give one of them");
  const int64_t last = first_step + steps - 1;
  if (!req.steps.empty()) {
    size_t pos = 0;
    while (pos <= req.steps.size()) {
      const size_t comma = std::min(req.steps.find(',', pos), req.steps.size());
      const std::string_view item = std::string_view(req.steps).substr(pos, comma - pos);
      int64_t n;
      if (ParseInt64(item, &n) != NumberParse::kOk)
        return Status::Usage(fmt::format("--fault-steps {}: '{}' is not a step number", req.steps, item));
      if (n < first_step || n > last)
        return Status::Usage(
            fmt::format("--fault-steps {}: step {} is outside the job's steps {}..{}", req.steps, n, first_step, last));
      p.steps.push_back(n);
      pos = comma + 1;
    }
  } else if (req.every > 0) {
    for (int64_t s = first_step; s <= last; ++s)
      if (s % req.every == 0) p.steps.push_back(s);
    if (p.steps.empty())
      return Status::Usage(
          fmt::format("--every {}: no step of {}..{} is a multiple of it", req.every, first_step, last));
  } else if (req.every < 0) {
    return Status::Usage(fmt::format("--every {}: must be positive", req.every));
  } else {
    for (int64_t s = first_step; s <= last; ++s) p.steps.push_back(s);
  }
  std::sort(p.steps.begin(), p.steps.end());
  p.steps.erase(std::unique(p.steps.begin(), p.steps.end()), p.steps.end());
  *plan = p;
  return Status::Ok();
}

}  // namespace strata::synth
