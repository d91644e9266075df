// Collective extraction and matching (see collectives.h).
#include "model/collectives.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "core/robust_stats.h"
#include "model/kernel_type.h"
#include "model/model_thresholds.h"
#include "model/step_rhythm.h"
#include "store/slice_names.h"

namespace strata::model {

std::string_view CollectiveSourceName(CollectiveSource source) {
  switch (source) {
    case CollectiveSource::kGpuKernels:
      return "gpu-kernels";
    case CollectiveSource::kCpuOps:
      return "cpu-ops";
    case CollectiveSource::kOpTable:
      return "op-table";
    case CollectiveSource::kNone:
      break;
  }
  return "none";
}

std::string_view CollectiveMatchingName(CollectiveMatching matching) {
  return matching == CollectiveMatching::kSequenceNumber ? "sequence-number" : "order";
}

bool IsCpuCollective(std::string_view name) { return CollectiveKindOf(name) == CollectiveKind::kBackendOp; }

namespace {

/// Sets launch_ns of each GPU call of one rank: the start of the CPU-side event (not a GPU event) that has
/// the kernel's correlation id. One pass over the rank's rows; kernels without a launcher keep -1.
void FindLaunches(const TraceStore& store, const SliceRows& rows, std::vector<CollectiveCall>* calls) {
  const SliceTable& s = store.slices;
  std::unordered_map<int64_t, size_t> wanted;  // correlation -> index in calls
  for (size_t i = 0; i < calls->size(); ++i) {
    const int64_t corr = s.correlation[(*calls)[i].slice.value];
    if (corr != kNoCorrelation) wanted.emplace(corr, i);
  }
  if (wanted.empty()) return;
  for (const SliceId row : rows) {
    if ((s.flags[row.value] & kSliceGpu) || store.track(s.track[row.value]).stream >= 0) continue;
    if (s.correlation[row.value] == kNoCorrelation) continue;
    if (auto it = wanted.find(s.correlation[row.value]); it != wanted.end())
      (*calls)[it->second].launch_ns = s.ts_ns[row.value];
  }
}

// How far rank r's call indices are shifted from the reference rank's: the shift d in [-period, period]
// whose end times line up (call i + d of r ends with call i of the reference: collectives end together,
// up to a constant clock offset). A rank whose recording began a call later, or that made one more set-up
// call, is shifted by one. Measured by the spread (median absolute deviation) of the end-time differences
// over up to kAlignCalls calls from `from` (at least kCallShiftMinPairs and kCallShiftMinPeriods steps'
// calls); a shift is taken only when it cuts the spread of d = 0 to kCallShiftSpreadShare (model_thresholds.h).
int64_t CallShift(const std::vector<CollectiveCall>& ref, const std::vector<CollectiveCall>& calls, size_t from,
                  size_t period) {
  constexpr size_t kAlignCalls = 256;
  auto spread = [&](int64_t d) -> std::optional<double> {
    std::vector<double> diffs;
    for (size_t i = from; i < ref.size() && diffs.size() < kAlignCalls; ++i) {
      const int64_t j = static_cast<int64_t>(i) + d;
      if (j < 0 || j >= static_cast<int64_t>(calls.size())) continue;
      diffs.push_back(static_cast<double>(calls[static_cast<size_t>(j)].end_ns - ref[i].end_ns));
    }
    if (diffs.size() < std::max(thresholds::kCallShiftMinPairs, thresholds::kCallShiftMinPeriods * period))
      return std::nullopt;
    return Mad(diffs);
  };
  const std::optional<double> none = spread(0);
  if (!none) return 0;
  int64_t best = 0;
  double best_spread = *none;
  for (int64_t d = -static_cast<int64_t>(period); d <= static_cast<int64_t>(period); ++d) {
    if (d == 0) continue;
    if (auto v = spread(d); v && *v < best_spread) best = d, best_spread = *v;
  }
  return best != 0 && best_spread <= thresholds::kCallShiftSpreadShare * *none ? best : 0;
}

// Steps from the collective sequence of the rank with the most calls, applied to every rank from the call
// that lines up with the reference's (CallShift): its exact key
// period ("detected-period"; a repeating sequence of distinct collectives), else the rhythm of the gaps
// between calls ("detected-rhythm"; step_rhythm.h), e.g. when every call is an all_reduce. Step k (numbered
// from the first whole step) runs from the end of the call before its first call to the end of its last.
void DetectSteps(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const CollectiveModel& model,
                 StepModel* steps) {
  const size_t ranks = model.calls.size();
  size_t best = 0;
  for (size_t r = 1; r < ranks; ++r)
    if (model.calls[r].size() > model.calls[best].size()) best = r;
  std::vector<StringId> keys;
  std::vector<std::pair<int64_t, int64_t>> times;
  for (const auto& c : model.calls[best]) {
    keys.push_back(c.key);
    times.emplace_back(c.start_ns, c.end_ns);
  }
  size_t period = DetectPeriod(keys), first = 0;
  StepSource source = StepSource::kDetectedPeriod;
  if (period <= 1) {
    const Rhythm rhythm = DetectRhythm(times);
    if (rhythm.period > 0 && (period == 0 || rhythm.period > 1)) {
      period = rhythm.period;
      first = rhythm.first;
      source = StepSource::kDetectedRhythm;
    }
  }
  if (period == 0) return;
  // Each rank's index of the reference's call `first` (CallShift): its steps are counted from there.
  std::vector<int64_t> start_of(ranks, static_cast<int64_t>(first));
  for (size_t r = 0; r < ranks; ++r)
    if (r != best) start_of[r] += CallShift(model.calls[best], model.calls[r], first, period);
  // Steps before a rank's first call are left out for everyone.
  size_t skipped = 0;
  for (size_t r = 0; r < ranks; ++r)
    while (start_of[r] + static_cast<int64_t>(skipped * period) < 0) ++skipped;
  if (skipped) {
    first += skipped * period;
    for (auto& s0 : start_of) s0 += static_cast<int64_t>(skipped * period);
  }
  size_t min_steps = SIZE_MAX;
  for (size_t r = 0; r < ranks; ++r) {
    const auto at = static_cast<size_t>(start_of[r]);
    min_steps = std::min(min_steps, model.calls[r].size() > at ? (model.calls[r].size() - at) / period : 0);
  }
  // A key period's step 0 has no call before it (the trace may begin anywhere before it): it is left out
  // when at least two steps remain.
  // Steps keep their number in the sequence (a key period's first whole step is step 1).
  int64_t number = 0;
  size_t n_steps = min_steps;
  if (first == 0 && min_steps >= 3) {
    first = period;
    for (auto& s0 : start_of) s0 += static_cast<int64_t>(period);
    number = 1;
    --n_steps;
  }
  // A rhythm's stretches are steps only when they hold the job's usual collectives (the most common
  // sequence of names): the set-up before the loop (broadcasts, barriers) and the tear-down after it are not.
  auto signature = [&](size_t r, size_t k) {
    const auto& calls = model.calls[r];
    std::vector<StringId> sig;
    const auto at = static_cast<size_t>(start_of[r]);
    for (size_t i = at + k * period; i < at + (k + 1) * period; ++i) sig.push_back(calls[i].key);
    return sig;
  };
  std::vector<bool> keep(n_steps, true);
  if (source == StepSource::kDetectedRhythm) {
    std::map<std::vector<StringId>, size_t> seen;
    for (size_t k = 0; k < n_steps; ++k) ++seen[signature(best, k)];
    std::vector<StringId> usual;
    size_t most = 0;
    for (const auto& [sig, n] : seen)
      if (n > most) most = n, usual = sig;
    for (size_t k = 0; k < n_steps; ++k)
      for (size_t r = 0; r < ranks && keep[k]; ++r) keep[k] = signature(r, k) == usual;
  }
  steps->source = source;
  steps->steps.clear();
  for (size_t r = 0; r < ranks; ++r) {
    auto& windows = steps->by_rank[r];
    windows.clear();
    const auto& calls = model.calls[r];
    const TrackId main_track = MainThreadTrack(store, rows_by_rank[r]);
    for (size_t k = 0; k < n_steps; ++k) {
      if (!keep[k]) continue;
      const size_t open = static_cast<size_t>(start_of[r]) + k * period;
      const int64_t start = open == 0 ? calls[0].start_ns : calls[open - 1].end_ns;
      windows.push_back(
          StepWindow{number + static_cast<int64_t>(k), start, calls[open + period - 1].end_ns, main_track});
    }
  }
  for (size_t k = 0; k < n_steps; ++k)
    if (keep[k]) steps->steps.push_back(number + static_cast<int64_t>(k));
}
}  // namespace

size_t DetectPeriod(const std::vector<StringId>& keys) {
  const size_t n = keys.size();
  if (n < 2) return 0;
  std::vector<size_t> pi(n, 0);
  for (size_t i = 1; i < n; ++i) {
    size_t k = pi[i - 1];
    while (k > 0 && keys[i] != keys[k]) k = pi[k - 1];
    if (keys[i] == keys[k]) ++k;
    pi[i] = k;
  }
  const size_t p = n - pi[n - 1];
  return p * 2 <= n ? p : 0;
}

namespace {

/// What a slice name is as a collective, computed once per name: 0 none, 1 a GPU communication kernel,
/// 2 a CPU-side collective op.
class NameKinds {
 public:
  explicit NameKinds(const TraceStore& store) : store_(store), kind_(store.strings.size(), -1) {}
  int8_t operator()(StringId id) {
    if (kind_[id.value] < 0) {
      const std::string_view n = store_.strings.view(id);
      kind_[id.value] = IsCpuCollective(n) ? 2 : IsCommunicationKernel(n) ? 1 : 0;
    }
    return kind_[id.value];
  }

 private:
  const TraceStore& store_;
  std::vector<int8_t> kind_;
};

/// Whether any rank has a complete communication kernel on a GPU stream: then GPU kernels are the source.
bool AnyGpuCollective(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, NameKinds& kinds) {
  const SliceTable& s = store.slices;
  for (const auto& rows : rows_by_rank)
    for (const SliceId row : rows)
      if ((s.flags[row.value] & kSliceComplete) && store.track(s.track[row.value]).stream >= 0 &&
          kinds(s.name[row.value]) == 1)
        return true;
  return false;
}

/// The collective calls of each rank from the chosen source, in start order (GPU calls with their launch
/// times). Returns whether any rank has one.
bool ExtractCalls(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, bool gpu, NameKinds& kinds,
                  CollectiveModel* model) {
  const SliceTable& s = store.slices;
  bool any = false;
  for (size_t r = 0; r < rows_by_rank.size(); ++r) {
    for (const SliceId row : rows_by_rank[r]) {
      if (!(s.flags[row.value] & (kSliceComplete | kSliceBeginEnd))) continue;
      const bool on_stream = store.track(s.track[row.value]).stream >= 0;
      const int8_t k = kinds(s.name[row.value]);
      if (gpu ? !(k == 1 && on_stream) : !(k == 2 && !on_stream)) continue;
      CollectiveCall c;
      c.slice = row;
      c.key = s.name[row.value];
      if ((s.flags[row.value] & kSliceCollectiveArgs) && s.args[row.value] < store.collective_args.size()) {
        const CollectiveArgs& a = store.collective_args[s.args[row.value]];
        c.group = a.group != StringPool::kEmpty && !store.strings.view(a.group).empty() ? a.group : a.group_ranks;
        if (c.group != StringPool::kEmpty && store.strings.view(c.group).empty()) c.group = StringPool::kEmpty;
        c.group_size = a.group_size;
        c.seq = a.seq;
      }
      c.start_ns = s.ts_ns[row.value];
      c.end_ns = s.ts_ns[row.value] + s.dur_ns[row.value];
      model->calls[r].push_back(c);
      any = true;
    }
    std::sort(model->calls[r].begin(), model->calls[r].end(),
              [](const CollectiveCall& a, const CollectiveCall& b) { return a.start_ns < b.start_ns; });
    if (gpu) FindLaunches(store, rows_by_rank[r], &model->calls[r]);
  }
  return any;
}

/// No steps recorded or detected: the whole trace of each rank is one window, step 0 (DESIGN.md, Diagnosis 1).
void WholeTraceAsOneStep(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, StepModel* steps) {
  const SliceTable& s = store.slices;
  steps->steps = {0};
  for (size_t r = 0; r < rows_by_rank.size(); ++r) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const SliceId row : rows_by_rank[r]) {
      lo = std::min(lo, s.ts_ns[row.value]);
      hi = std::max(hi, s.ts_ns[row.value] + s.dur_ns[row.value]);
    }
    steps->by_rank[r].clear();
    if (lo <= hi) steps->by_rank[r].push_back(StepWindow{0, lo, hi, MainThreadTrack(store, rows_by_rank[r])});
  }
}

/// Each call's step (the window holding it; -1 outside every window) and its ordinal among the calls of the
/// same (step, key, group) on its rank.
void AssignStepsAndOrdinals(const StepModel& steps, CollectiveModel* model) {
  const bool stepped = steps.source != StepSource::kNone;
  // Launch times are on the CPU side, as are profiler-step windows; detected-period windows are made of
  // the calls' own times.
  const bool by_launch = steps.source == StepSource::kProfilerStep;
  for (size_t r = 0; r < model->calls.size(); ++r) {
    std::map<std::tuple<int64_t, StringId, StringId>, uint32_t> next;
    for (auto& c : model->calls[r]) {
      if (stepped) {
        const int w = FindWindow(steps.by_rank[r], by_launch && c.launch_ns >= 0 ? c.launch_ns : c.start_ns);
        c.step = w < 0 ? -1 : steps.by_rank[r][w].step;
      } else {
        c.step = 0;
      }
      if (c.step == -1 && stepped) continue;
      c.ordinal = next[{c.step, c.key, c.group}]++;
    }
  }
}

/// How the calls are matched: by sequence number when every call has one on a recorded group, else by order.
CollectiveMatching ChooseMatching(const CollectiveModel& model) {
  for (const auto& calls : model.calls)
    for (const CollectiveCall& c : calls)
      if (c.seq < 0 || c.group == StringPool::kEmpty) return CollectiveMatching::kOrder;
  return CollectiveMatching::kSequenceNumber;
}

/// Matches calls across ranks by (step, group, key, ordinal), or by (group, key, sequence number) when the model's
/// matching says so (the instance's step is then its first rank's); counts the calls of incomplete instances and
/// notes subgroups.
void MatchAcrossRanks(bool stepped, CollectiveModel* model) {
  const size_t ranks = model->calls.size();
  const bool by_seq = model->matching == CollectiveMatching::kSequenceNumber;
  std::map<std::tuple<int64_t, StringId, StringId, int64_t>, size_t> index;
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < model->calls[r].size(); ++i) {
      const CollectiveCall& c = model->calls[r][i];
      if (c.step == -1 && stepped) continue;
      const auto key = by_seq ? std::make_tuple(int64_t{0}, c.group, c.key, c.seq)
                              : std::make_tuple(c.step, c.group, c.key, int64_t{c.ordinal});
      auto [it, inserted] = index.try_emplace(key, model->matched.size());
      if (inserted) {
        MatchedCollective m;
        m.key = c.key;
        m.step = c.step;
        m.ordinal = c.ordinal;
        m.group = c.group;
        m.seq = by_seq ? c.seq : -1;
        m.expected = c.group != StringPool::kEmpty && c.group_size > 0
                         ? std::min<size_t>(static_cast<size_t>(c.group_size), ranks)
                         : ranks;
        m.call.assign(ranks, -1);
        model->matched.push_back(m);
      }
      MatchedCollective& m = model->matched[it->second];
      m.call[r] = static_cast<int32_t>(i);
      ++m.present;
    }
  }
  for (const auto& m : model->matched) {
    if (m.present < m.expected) model->unmatched_calls += m.present;
    if (m.complete() && m.expected < ranks) model->subgroups = true;
  }
}

/// Orders instances by step, then by start on the first rank that has them (clocks differ across ranks).
void OrderInstances(CollectiveModel* model) {
  const size_t ranks = model->calls.size();
  auto first_start = [&](const MatchedCollective& m) {
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0) return model->calls[r][m.call[r]].start_ns;
    return INT64_MAX;
  };
  std::stable_sort(model->matched.begin(), model->matched.end(),
                   [&](const MatchedCollective& a, const MatchedCollective& b) {
                     if (a.step != b.step) return a.step < b.step;
                     if (a.key == b.key && a.group == b.group)
                       return a.seq >= 0 && b.seq >= 0 ? a.seq < b.seq : a.ordinal < b.ordinal;
                     return first_start(a) < first_start(b);
                   });
}

}  // namespace

/// Every call an NCCL API call seen from the CPU in a profiler trace (`nccl:*`): non-blocking, ends are
/// launches. A recording's collectives are left as they were (the NCCL profiler plugin's are timed on the
/// device, where they do synchronize; recorded clocks are monotonic, aligned to each other by the ends).
bool AllNcclCalls(const TraceStore& store, const CollectiveModel& model) {
  bool any = false;
  for (const auto& calls : model.calls)
    for (const CollectiveCall& c : calls) {
      if (store.strings.view(c.key).substr(0, 5) != "nccl:") return false;
      if (store.strings.view(store.slices.category[c.slice.value]) == "recorded_collective") return false;
      any = true;
    }
  return any;
}

CollectiveModel MatchCollectives(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                 StepModel* steps) {
  CollectiveModel model;
  model.calls.resize(rows_by_rank.size());
  NameKinds kinds(store);
  const bool gpu = AnyGpuCollective(store, rows_by_rank, kinds);
  const bool any = ExtractCalls(store, rows_by_rank, gpu, kinds, &model);
  model.source = !any ? CollectiveSource::kNone : gpu ? CollectiveSource::kGpuKernels : CollectiveSource::kCpuOps;
  if (!any) return model;
  if (model.source == CollectiveSource::kCpuOps) model.ends_synchronize = !AllNcclCalls(store, model);
  // No steps recorded: try the period of the collective sequence, then the rhythm of its gaps.
  if (steps->source == StepSource::kNone) DetectSteps(store, rows_by_rank, model, steps);
  if (steps->source == StepSource::kNone) WholeTraceAsOneStep(store, rows_by_rank, steps);
  AssignStepsAndOrdinals(*steps, &model);
  model.matching = ChooseMatching(model);
  MatchAcrossRanks(steps->source != StepSource::kNone, &model);
  OrderInstances(&model);
  return model;
}

std::map<int64_t, double> TransferMsByStep(const CollectiveModel& model) {
  std::map<int64_t, double> out;
  if (!model.ends_synchronize) return out;
  for (const MatchedCollective& m : model.matched) {
    if (!m.complete() || m.step < 0) continue;
    int64_t shortest = -1;
    for (size_t r = 0; r < m.call.size(); ++r) {
      if (m.call[r] < 0) continue;
      const CollectiveCall& c = model.calls[r][static_cast<size_t>(m.call[r])];
      const int64_t ns = std::max<int64_t>(0, c.end_ns - c.start_ns);
      if (shortest < 0 || ns < shortest) shortest = ns;
    }
    if (shortest >= 0) out[m.step] += static_cast<double>(shortest) / 1e6;
  }
  return out;
}

}  // namespace strata::model
