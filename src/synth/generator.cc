// Synthetic job generation: validation, the two passes, truth.json (see generator.h).
#include "synth/generator.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "synth/rng.h"

namespace strata::synth {

namespace {

/// Counts events on their way to the real sink.
class CountingSink : public RankSink {
 public:
  CountingSink(std::unique_ptr<RankSink> inner, uint64_t* events) : inner_(std::move(inner)), events_(events) {}
  void Emit(const SynthEvent& e) override {
    ++*events_;
    inner_->Emit(e);
  }
  Status Finish() override { return inner_->Finish(); }
  RankSink* inner() { return inner_.get(); }

 private:
  std::unique_ptr<RankSink> inner_;
  uint64_t* events_;
};

Status WriteTruth(const SynthOptions& o, const JobConfig& cfg) {
  using J = nlohmann::ordered_json;
  const FaultPlan& f = cfg.fault;
  J truth;
  truth["fault"] = FaultName(f.kind);
  truth["rank"] = f.rank >= 0 ? J(f.rank) : J();
  truth["ranks"] = f.Ranks(cfg.layout);
  truth["stage"] = f.kind == Fault::kStageImbalance ? J(f.stage) : J();
  truth["steps"] = f.steps;
  truth["magnitude"] = f.magnitude;
  truth["layout"] = {{"dp", cfg.layout.dp()}, {"pp", cfg.layout.pp()}, {"tp", cfg.layout.tp()}};
  truth["seed"] = cfg.seed;
  truth["world_size"] = cfg.layout.world();
  truth["generator"] = "strata synth";
  J offsets = J::object();
  for (int64_t r = 0; r < cfg.layout.world(); ++r)
    offsets[std::to_string(r)] = static_cast<double>(ClockOffsetNs(cfg.seed, r, o.clock_skew_us)) / 1000.0;
  truth["clock_offsets_us"] = std::move(offsets);
  const std::string path = o.out_dir + "/truth.json";
  std::ofstream out(path, std::ios::binary);
  out << truth.dump(1) << "\n";
  out.close();
  if (!out) return Status::Resource(fmt::format("cannot write {}", path));
  return Status::Ok();
}

}  // namespace

int64_t ClockOffsetNs(uint64_t seed, int64_t rank, double skew_us) {
  return std::llround((2 * Uniform(seed, kTagClockOffset, static_cast<uint64_t>(rank)) - 1) * skew_us * 1000.0);
}

Status Validate(const SynthOptions& o, JobConfig* cfg) {
  if (o.out_dir.empty()) return Status::Usage("-o: an output directory is required");
  if (Status e = ResolveLayout(o.ranks, o.dp, o.pp, o.tp, &cfg->layout); !e.ok()) return e;
  if (o.steps < 1 || o.steps > 100000)
    return Status::Usage(fmt::format("--steps {}: must be between 1 and 100000", o.steps));
  if (o.first_step < 0) return Status::Usage(fmt::format("--first-step {}: must not be negative", o.first_step));
  if (o.layers < cfg->layout.pp() || o.layers > 1000)
    return Status::Usage(fmt::format("--layers {}: must be between --pp ({}) and 1000", o.layers, cfg->layout.pp()));
  if (o.microbatches < 0 || o.microbatches > 1000)
    return Status::Usage(fmt::format("--microbatches {}: must be between 1 and 1000", o.microbatches));
  if (!(o.clock_skew_us >= 0 && o.clock_skew_us <= 1e6))
    return Status::Usage(fmt::format("--clock-skew-us {}: must be between 0 and 1000000", o.clock_skew_us));
  cfg->steps = o.steps;
  cfg->first_step = o.first_step;
  cfg->layers = o.layers;
  cfg->microbatches = o.microbatches > 0 ? o.microbatches : cfg->layout.pp() > 1 ? 2 * cfg->layout.pp() : 1;
  cfg->seed = o.seed;
  cfg->counters = o.counters;
  return ResolveFault(o.fault, cfg->layout, o.first_step, o.steps, o.seed, &cfg->fault);
}

namespace {

/// The default sink: a Kineto file per rank under o.out_dir, created (and checked writable) first.
Expected<SinkFactory> FileSinkFactory(const SynthOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec || !std::filesystem::is_directory(o.out_dir))
    return Status::Resource(
        fmt::format("-o {}: cannot create the directory ({})", o.out_dir, ec ? ec.message() : "not a directory"));
  const std::string probe = o.out_dir + "/.strata-synth-probe";
  FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) return Status::Resource(fmt::format("-o {}: directory is not writable", o.out_dir));
  std::fclose(f);
  std::filesystem::remove(probe, ec);
  const bool gzip = o.gzip;
  return SinkFactory([gzip](const RankHeader& h, const std::string& path, Status* error) {
    auto w = std::make_unique<KinetoWriter>();
    *error = w->Open(path, gzip, h);
    return std::unique_ptr<RankSink>(std::move(w));
  });
}

/// Pass 1, timing only: dp_end[s * world + r] = completion of rank r's DP all-reduce in step s. Every member
/// of a DP group (same stage and tensor rank) completes at the latest arrival + transfer.
std::vector<int64_t> TimeDataParallel(const SynthOptions& o, const JobConfig& cfg, const FaultEffect& effect,
                                      bool progress, GenerateStats* st) {
  const Layout& l = cfg.layout;
  const int64_t world = l.world();
  const auto rs = static_cast<size_t>(l.replica_size());
  std::vector<int64_t> dp_end(static_cast<size_t>(cfg.steps * world));
  std::vector<int64_t> start(static_cast<size_t>(world), 0), arrival(static_cast<size_t>(world), 0);
  std::vector<int64_t> transfer(static_cast<size_t>(world), 0);
  st->state_bytes = (dp_end.size() + start.size() + arrival.size() + transfer.size()) * sizeof(int64_t);
  for (int64_t s = 0; s < cfg.steps; ++s) {
    for (int64_t d = 0; d < l.dp(); ++d) {
      ReplicaSim sim(cfg, effect, d, {});
      const size_t base = static_cast<size_t>(d) * rs;
      sim.BeginStep(s, &start[base]);
      sim.RunToDataParallel();
      for (size_t i = 0; i < rs; ++i) {
        arrival[base + i] = sim.DpArrival(i);
        transfer[base + i] = l.dp() > 1 ? sim.DpTransfer(i, s) : 0;
      }
    }
    int64_t* end = &dp_end[static_cast<size_t>(s * world)];
    for (size_t i = 0; i < rs; ++i) {
      int64_t latest = INT64_MIN;
      for (int64_t d = 0; d < l.dp(); ++d) latest = std::max(latest, arrival[static_cast<size_t>(d) * rs + i]);
      for (int64_t d = 0; d < l.dp(); ++d) end[static_cast<size_t>(d) * rs + i] = latest + transfer[i];
    }
    for (int64_t d = 0; d < l.dp(); ++d) {
      ReplicaSim sim(cfg, effect, d, {});
      const size_t base = static_cast<size_t>(d) * rs;
      sim.BeginStep(s, &start[base]);
      sim.RunToDataParallel();
      sim.FinishStep(&end[base]);
      for (size_t i = 0; i < rs; ++i) start[base + i] = sim.NextStart(i);
    }
    if (progress) o.on_progress(fmt::format("timed step {} of {}", s + 1, cfg.steps));
  }
  return dp_end;
}

/// Pass 2 for replica d: opens its ranks' sinks, replays every step against the timed DP completions, and
/// finishes the sinks.
Status WriteReplica(const SynthOptions& o, const JobConfig& cfg, const FaultEffect& effect, int64_t d,
                    const SinkFactory& factory, const std::vector<int64_t>& dp_end, GenerateStats* st) {
  const Layout& l = cfg.layout;
  const auto rs = static_cast<size_t>(l.replica_size());
  const char* ext = o.gzip ? ".json.gz" : ".json";
  std::vector<std::unique_ptr<CountingSink>> sinks;
  std::vector<RankSink*> raw;
  for (size_t i = 0; i < rs; ++i) {
    const int64_t rank = d * l.replica_size() + static_cast<int64_t>(i);
    RankHeader h;
    h.rank = rank;
    h.world = l.world();
    h.device = rank % 8;
    h.pid = 100000 + rank;
    h.offset_ns = ClockOffsetNs(cfg.seed, rank, o.clock_skew_us);
    Status error;
    auto sink = factory(h, fmt::format("{}/rank-{}{}", o.out_dir, rank, ext), &error);
    if (!error.ok()) return error;
    if (!sink) return Status::Resource(fmt::format("cannot open the output of rank {}", rank));
    sinks.push_back(std::make_unique<CountingSink>(std::move(sink), &st->events));
    raw.push_back(sinks.back().get());
  }
  st->max_open_sinks = std::max(st->max_open_sinks, sinks.size());
  ReplicaSim sim(cfg, effect, d, raw);
  std::vector<int64_t> rstart(rs, 0);
  for (int64_t s = 0; s < cfg.steps; ++s) {
    sim.BeginStep(s, rstart.data());
    sim.RunToDataParallel();
    sim.FinishStep(&dp_end[static_cast<size_t>(s * l.world() + d * l.replica_size())]);
    for (size_t i = 0; i < rs; ++i) rstart[i] = sim.NextStart(i);
  }
  for (auto& sink : sinks) {
    if (Status e = sink->Finish(); !e.ok()) return e;
    if (auto* w = dynamic_cast<KinetoWriter*>(sink->inner())) st->bytes += w->bytes_written();
  }
  st->ranks_written += l.replica_size();
  return Status::Ok();
}

}  // namespace

Status Generate(const SynthOptions& o, GenerateStats* stats, SinkFactory factory) {
  GenerateStats local;
  GenerateStats& st = stats ? *stats : local;
  st = GenerateStats();
  JobConfig cfg;
  if (Status e = Validate(o, &cfg); !e.ok()) return e;
  const int64_t world = cfg.layout.world();
  const bool progress = o.on_progress && (o.progress > 0 || (o.progress < 0 && world >= 512));
  if (!factory) {
    auto files = FileSinkFactory(o);
    if (!files.ok()) return files.status();
    factory = std::move(files).value();
  }
  const FaultEffect effect = CalibrateFault(cfg);
  st.clean_step_ms = effect.clean_step_ns / 1e6;
  const std::vector<int64_t> dp_end = TimeDataParallel(o, cfg, effect, progress, &st);
  int64_t next_report = world / 20;
  for (int64_t d = 0; d < cfg.layout.dp(); ++d) {
    if (Status e = WriteReplica(o, cfg, effect, d, factory, dp_end, &st); !e.ok()) return e;
    if (progress && st.ranks_written >= next_report) {
      o.on_progress(fmt::format("wrote {} of {} ranks", st.ranks_written, world));
      next_report = st.ranks_written + std::max<int64_t>(1, world / 20);
    }
  }
  return WriteTruth(o, cfg);
}

}  // namespace strata::synth
