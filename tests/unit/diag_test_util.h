// Helpers for the diagnosis tests: small constructed multi-rank traces written as Kineto JSON (or
// PyTorch 1.x bare arrays) to a temporary directory and loaded with LoadJob, as `strata diagnose` does.
//  - RankJson: one rank's events as a Kineto document ({"distributedInfo": ..., "traceEvents": [...]}, with
//    "cat") or a PyTorch 1.x bare array (no "cat", pid "CPU functions", file name gives the rank).
//  - SimulateDdp: a data-parallel job whose ranks run a per-(rank, step) plan of main-thread work before each
//    collective and after the last one. Collectives block: every rank completes collective k at
//    (latest arrival + transfer[k]) (+ optional per-rank jitter). CPU style: `gloo:all_reduce` X events on
//    another thread; GPU style: compute kernels and `ncclKernel_AllReduce_*` kernels on stream 7 launched by
//    cudaLaunchKernel (correlation ids), a cudaDeviceSynchronize at the end of each step, and Kineto's
//    gpu_user_annotation copy of each ProfilerStep#N (no stream in its args) listed first in the file.
//    All times are simulated on one global clock in integer ns; rank r's trace shows global + offset[r].
// Invariant: the generated traces are exact (integer ns written as µs with three decimals), so tests can
// compare derived quantities with hand-computed values.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/phase_model.h"
#include "analysis/job_summary.h"
#include "importers/job_loader.h"
#include "model/clock_alignment.h"
#include "model/collectives.h"
#include "model/step_windows.h"
#include "store/trace_store.h"
#include "test_util.h"

namespace strata::diagtest {

inline constexpr int64_t kUs = 1'000;
inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kSec = 1'000'000'000;
/// Global time of the first step (a Kineto-like absolute clock in ns).
inline constexpr int64_t kBase = 5'000'000'000'000'000;

inline const char* const kDataLoaderNext = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
inline const char* const kNcclKernel = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";

enum class Style { kKineto, kLegacy };

/// One trace event (ph X), times in ns on the rank's clock.
struct Event {
  std::string name;
  std::string cat;  // empty: no "cat" field
  int64_t ts = 0, dur = 0;
  int64_t pid = 1000, tid = 1;
  int64_t stream = -1, correlation = -1;  // written to args when >= 0
};

/// ns as a JSON number of µs: integer when whole, else three decimals.
inline std::string Us(int64_t ns) {
  const bool neg = ns < 0;
  const uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  std::string s = (neg ? "-" : "") + std::to_string(a / 1000);
  if (a % 1000 != 0) {
    std::string frac = std::to_string(a % 1000);
    s += "." + std::string(3 - frac.size(), '0') + frac;
  }
  return s;
}

/// One rank's trace as JSON text.
inline std::string RankJson(const std::vector<Event>& events, int rank, int world, Style style) {
  std::string out;
  if (style == Style::kKineto) {
    out += "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"gloo\", \"rank\": " + std::to_string(rank) +
           ", \"world_size\": " + std::to_string(world) + "},\n\"traceEvents\": [\n";
  } else {
    out += "[\n";
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    out += "{\"ph\": \"X\", \"name\": " + nlohmann::json(e.name).dump();
    if (style == Style::kKineto && !e.cat.empty()) out += ", \"cat\": " + nlohmann::json(e.cat).dump();
    if (style == Style::kLegacy) {
      out += ", \"pid\": \"CPU functions\"";
    } else {
      out += ", \"pid\": " + std::to_string(e.pid);
    }
    out +=
        ", \"tid\": " + std::to_string(e.tid) + ", \"ts\": " + Us(e.ts) + ", \"dur\": " + Us(e.dur) + ", \"args\": {";
    std::string args;
    if (e.stream >= 0) args += "\"device\": 0, \"stream\": " + std::to_string(e.stream);
    if (e.correlation >= 0)
      args += std::string(args.empty() ? "" : ", ") + "\"correlation\": " + std::to_string(e.correlation);
    out += args + "}}";
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  out += style == Style::kKineto ? "]}\n" : "]\n";
  return out;
}

/// Writes one file per rank (rank-R.json) into a fresh temporary directory and loads the job.
/// A load error fails the calling test (the returned store is then empty).
inline TraceStore LoadRankJsons(const std::vector<std::string>& jsons) {
  testing::TempDir dir;
  for (size_t r = 0; r < jsons.size(); ++r)
    testing::WriteFile(dir.file("rank-" + std::to_string(r) + ".json"), jsons[r]);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  if (!job.ok()) {
    ADD_FAILURE() << "LoadJob: " << job.error();
    return TraceStore();
  }
  TraceStore store = std::move(job.value().store);
  EXPECT_EQ(store.ranks.size(), jsons.size());
  for (size_t r = 0; r < store.ranks.size(); ++r) EXPECT_EQ(store.ranks[r].rank, static_cast<int32_t>(r));
  return store;
}

// ---- the DDP simulator ----------------------------------------------------------------------------

/// Work on the main thread (CPU style) or a kernel (GPU style). An empty name is an idle gap.
/// CPU children are laid out from the parent's start, one after another.
struct Item {
  std::string name;
  int64_t dur = 0;
  std::string cat = "cpu_op";
  std::vector<Item> children;
};
inline Item Op(std::string name, int64_t dur, std::string cat = "cpu_op", std::vector<Item> children = {}) {
  return Item{std::move(name), dur, std::move(cat), std::move(children)};
}
inline Item Gap(int64_t dur) { return Item{"", dur, "", {}}; }

/// What one rank does in one step: segs[k] before collective k, then tail after the last one.
struct RankStep {
  std::vector<std::vector<Item>> segs;
  std::vector<Item> tail;
};

struct DdpSpec {
  int ranks = 4;
  int steps = 6;
  int first_step = 1;  // ProfilerStep#first_step is the first step
  std::function<RankStep(int rank, int step_index)> plan;
  std::vector<int64_t> transfer;      // per collective index; missing entries use 10 ms
  std::vector<int64_t> clock_offset;  // per rank: rank clock = global clock + offset; missing = 0
  std::function<int64_t(int rank, int step_index, int k)> completion_jitter;  // ns added to a completion
  Style style = Style::kKineto;
  bool gpu = false;
  bool profiler_steps = true;                  // write ProfilerStep#N events
  std::string collective = "gloo:all_reduce";  // CPU style: the op name of every collective...
  std::vector<std::string> collective_names;   // ...unless named here per collective index
  int64_t step_gap = 200 * kUs;                // idle between a rank's steps
  // GPU style: the host waits for the device at the end of each step (cudaDeviceSynchronize). When false it
  // waits at the start of the next step instead, so the step's last kernels run after its CPU side ended
  // (inside the next ProfilerStep, or between steps), as in jobs that sync on the loss of the next step.
  bool sync_at_step_end = true;
};

/// Per rank, the events of the simulated job (each rank's clock), plus what was simulated (global clock).
struct SimulatedJob {
  std::vector<std::vector<Event>> events;
  std::vector<std::vector<int64_t>> step_start, step_end;              // [step index][rank], global
  std::vector<std::vector<std::vector<int64_t>>> arrival, completion;  // [step index][k][rank], global
};

namespace detail {

/// Emits a CPU item and its children at `t` on the main thread; returns the end.
inline int64_t EmitCpu(std::vector<Event>& out, const Item& it, int64_t t, int64_t pid) {
  if (it.name.empty()) return t + it.dur;
  out.push_back(Event{it.name, it.cat, t, it.dur, pid, 1});
  int64_t c = t;
  for (const Item& child : it.children) c = EmitCpu(out, child, c, pid);
  EXPECT_LE(c, t + it.dur) << "children of " << it.name << " overflow it";
  return t + it.dur;
}

}  // namespace detail

inline SimulatedJob SimulateDdp(const DdpSpec& spec) {
  SimulatedJob job;
  const int R = spec.ranks;
  job.events.resize(R);
  std::vector<int64_t> host(R, kBase);  // CPU main thread cursor (global)
  std::vector<int64_t> dev(R, kBase);   // GPU stream free time (global)
  std::vector<int64_t> corr(R, 1);
  std::vector<int64_t> first_kernel(R, INT64_MAX);  // first kernel start of the current step
  std::vector<std::vector<Event>> gpu_annotations(R);
  auto pid_of = [](int r) { return int64_t{1000} + r; };
  auto transfer = [&](size_t k) { return k < spec.transfer.size() ? spec.transfer[k] : 10 * kMs; };
  // GPU: the host launches `it` (cpu op + cudaLaunchKernel) at host[r]; the kernel runs when the stream
  // is free. Returns the kernel's start.
  auto launch = [&](int r, const std::string& cpu_name, int64_t earliest_kernel_start) {
    auto& ev = job.events[r];
    const int64_t h = host[r];
    ev.push_back(Event{cpu_name, "cpu_op", h, 40 * kUs, pid_of(r), 1});
    ev.push_back(Event{"cudaLaunchKernel", "cuda_runtime", h + 10 * kUs, 20 * kUs, pid_of(r), 1, -1, corr[r]});
    host[r] = h + 50 * kUs;
    return std::max({h + 30 * kUs, dev[r], earliest_kernel_start});
  };
  auto kernel = [&](int r, const std::string& name, int64_t start, int64_t dur) {
    job.events[r].push_back(Event{name, "kernel", start, dur, 0, 7, 7, corr[r]++});
    first_kernel[r] = std::min(first_kernel[r], start);
    dev[r] = start + dur;
  };
  auto run_items = [&](int r, const std::vector<Item>& items) {
    auto& ev = job.events[r];
    for (const Item& it : items) {
      if (!spec.gpu || it.name.empty() || it.cat != "kernel") {
        host[r] = detail::EmitCpu(ev, it, host[r], pid_of(r));
      } else {
        const int64_t ks = launch(r, "aten::mm", 0);
        kernel(r, it.name, ks, it.dur);
      }
    }
  };
  for (int s = 0; s < spec.steps; ++s) {
    std::vector<RankStep> plans;
    for (int r = 0; r < R; ++r) plans.push_back(spec.plan(r, s));
    size_t K = plans[0].segs.size();
    for (const auto& p : plans) EXPECT_EQ(p.segs.size(), K) << "every rank needs the same collectives";
    std::vector<int64_t> start(host);
    if (spec.gpu && !spec.sync_at_step_end && s > 0) {
      for (int r = 0; r < R; ++r) {
        const int64_t h = host[r];
        job.events[r].push_back(Event{"cudaDeviceSynchronize", "cuda_runtime", h,
                                      std::max<int64_t>(dev[r] - h, 0) + 5 * kUs, pid_of(r), 1});
        host[r] = std::max(h, dev[r]) + 5 * kUs;
      }
    }
    std::fill(first_kernel.begin(), first_kernel.end(), INT64_MAX);
    job.step_start.push_back(start);
    job.arrival.emplace_back();
    job.completion.emplace_back();
    for (size_t k = 0; k < K; ++k) {
      std::vector<int64_t> arrival(R);
      for (int r = 0; r < R; ++r) {
        run_items(r, plans[r].segs[k]);
        if (spec.gpu) {
          arrival[r] = launch(r, "c10d::allreduce_", 0);
        } else {
          arrival[r] = host[r];
        }
      }
      const int64_t latest = *std::max_element(arrival.begin(), arrival.end());
      std::vector<int64_t> completion(R);
      for (int r = 0; r < R; ++r) {
        int64_t e = latest + transfer(k);
        if (spec.completion_jitter) e += spec.completion_jitter(r, s, static_cast<int>(k));
        completion[r] = e;
        const int64_t a = arrival[r];
        if (spec.gpu) {
          kernel(r, kNcclKernel, a, e - a);
        } else {
          job.events[r].push_back(Event{k < spec.collective_names.size() ? spec.collective_names[k] : spec.collective,
                                        "cpu_op", a, e - a, pid_of(r), 2 + static_cast<int64_t>(k % 2)});
          host[r] = e;  // the main thread waits for the (bucket's) all-reduce
        }
      }
      job.arrival.back().push_back(arrival);
      job.completion.back().push_back(completion);
    }
    std::vector<int64_t> end(R);
    for (int r = 0; r < R; ++r) {
      run_items(r, plans[r].tail);
      if (spec.gpu && spec.sync_at_step_end) {
        const int64_t h = host[r];
        const int64_t d = dev[r];
        job.events[r].push_back(
            Event{"cudaDeviceSynchronize", "cuda_runtime", h, std::max<int64_t>(d - h, 0) + 5 * kUs, pid_of(r), 1});
        host[r] = std::max(h, d) + 5 * kUs;
      }
      end[r] = host[r];
      if (spec.profiler_steps) {
        const std::string name = "ProfilerStep#" + std::to_string(spec.first_step + s);
        job.events[r].push_back(Event{name, "user_annotation", start[r], end[r] - start[r], pid_of(r), 1});
        if (spec.gpu && first_kernel[r] != INT64_MAX) {
          // Kineto's GPU-side copy of the step annotation: on the device's pid/tid, spanning the step's
          // kernels, with no stream or correlation in its args. Written before the CPU events (as when a
          // trace lists device activity first): it must not be taken for the step or its main thread.
          gpu_annotations[r].push_back(
              Event{name, "gpu_user_annotation", first_kernel[r], dev[r] - first_kernel[r], 0, 7, -1, -1});
        }
      }
      host[r] = end[r] + spec.step_gap;
      if (spec.sync_at_step_end) dev[r] = std::max(dev[r], host[r]);
    }
    job.step_end.push_back(end);
  }
  for (int r = 0; r < R; ++r) {
    job.events[r].insert(job.events[r].begin(), gpu_annotations[r].begin(), gpu_annotations[r].end());
    const int64_t off = static_cast<size_t>(r) < spec.clock_offset.size() ? spec.clock_offset[r] : 0;
    for (Event& e : job.events[r]) e.ts += off;
  }
  return job;
}

inline std::vector<std::string> JobJsons(const DdpSpec& spec, const SimulatedJob& job) {
  std::vector<std::string> out;
  for (int r = 0; r < spec.ranks; ++r) out.push_back(RankJson(job.events[r], r, spec.ranks, spec.style));
  return out;
}

/// Simulates, writes and loads a job.
inline TraceStore LoadDdp(const DdpSpec& spec, SimulatedJob* sim = nullptr) {
  SimulatedJob job = SimulateDdp(spec);
  TraceStore store = LoadRankJsons(JobJsons(spec, job));
  if (sim) *sim = std::move(job);
  return store;
}

inline diagnosis::DiagnosisResult DiagnoseDdp(const DdpSpec& spec) {
  const TraceStore store = LoadDdp(spec);
  return diagnosis::Diagnose(store);
}

/// Deterministic noise in [-1, 1] from a few integers (splitmix64).
inline double Noise(uint64_t a, uint64_t b = 0, uint64_t c = 0) {
  uint64_t x =
      a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL ^ (c + 7) * 0x94D049BB133111EBULL;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(1ULL << 52) - 1.0;
}

/// The usual step of the scenario tests: compute (three aten ops, `compute` ns in all) before one
/// all-reduce, then a 10 ms optimizer tail. `extra` adds items before the all-reduce.
inline RankStep BasicStep(int64_t compute, std::vector<Item> extra = {}) {
  RankStep st;
  std::vector<Item> seg = {Op("aten::conv2d", compute / 2), Op("aten::mm", compute / 4),
                           Op("aten::relu", compute - compute / 2 - compute / 4)};
  seg.insert(seg.end(), extra.begin(), extra.end());
  st.segs.push_back(std::move(seg));
  st.tail = {Op("Optimizer.step#SGD.step", 10 * kMs, "cpu_op", {Op("aten::add_", 8 * kMs)})};
  return st;
}

/// The models `strata diagnose` builds before localization, on a loaded store.
struct Models {
  std::vector<SliceRows> rows;
  model::StepModel steps;
  model::CollectiveModel collectives;
  model::ClockAlignment clocks;
  diagnosis::PhaseModel phases;
};

inline std::unique_ptr<Models> BuildModels(const TraceStore& store) {
  auto m = std::make_unique<Models>();
  m->rows = SlicesByRank(store);
  m->steps = model::FindSteps(store, m->rows);
  m->collectives = model::MatchCollectives(store, m->rows, &m->steps);
  m->clocks = model::AlignClocks(m->collectives, store.ranks.size());
  // PhaseModel keeps pointers into collectives.matched: built in place, the Models object is not moved.
  m->phases = diagnosis::BuildPhases(m->steps, m->collectives, m->clocks, store.ranks.size());
  return m;
}

}  // namespace strata::diagtest
