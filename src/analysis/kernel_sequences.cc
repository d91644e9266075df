// HTA's frequent CUDA kernel sequences (see kernel_sequences.h).
#include "analysis/kernel_sequences.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/runtime_launch.h"

namespace strata {

namespace {

// The nesting depth of every CPU row of `rows.kept` on its thread (index = kept index; -1 for device rows).
std::vector<int> CpuDepths(const TraceStore& store, const HtaRows& rows) {
  std::map<TrackId, std::vector<size_t>> by_track;
  for (size_t i = 0; i < rows.kept.size(); ++i)
    if (!rows.kept[i].device) by_track[store.slices.track[rows.kept[i].row.value]].push_back(i);
  std::vector<int> depth(rows.kept.size(), -1);
  for (auto& [track, idx] : by_track) {
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      const HtaRow &x = rows.kept[a], &y = rows.kept[b];
      return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    std::vector<double> open_ends;
    for (size_t i : idx) {
      while (!open_ends.empty() && open_ends.back() <= rows.kept[i].start) open_ends.pop_back();
      depth[i] = static_cast<int>(open_ends.size());
      open_ends.push_back(rows.kept[i].end);
    }
  }
  return depth;
}

std::vector<size_t> Roots(const TraceStore& store, const HtaRows& rows, const std::string& op) {
  const std::vector<int> depth = CpuDepths(store, rows);
  std::vector<size_t> roots;
  int min_depth = -1;
  for (size_t i = 0; i < rows.kept.size(); ++i) {
    if (depth[i] < 0 || store.strings.view(store.slices.name[rows.kept[i].row.value]).find(op) == std::string::npos)
      continue;
    if (min_depth < 0 || depth[i] < min_depth) {
      min_depth = depth[i];
      roots.clear();
    }
    if (depth[i] == min_depth) roots.push_back(i);
  }
  return roots;
}

// Device rows of `rows.kept` by the thread of the CPU row that launched them: (track, launch start, index).
struct Launched {
  TrackId track;
  double launch_start;
  size_t device;
};

std::vector<Launched> LaunchedKernels(const TraceStore& store, const HtaRows& rows) {
  const std::unordered_map<int64_t, size_t> cpu = CpuRowsByCorrelation(store, rows);
  std::vector<Launched> out;
  for (size_t i = 0; i < rows.kept.size(); ++i) {
    if (!rows.kept[i].device) continue;
    const auto it = cpu.find(store.slices.correlation[rows.kept[i].row.value]);
    if (it == cpu.end()) continue;
    const HtaRow& call = rows.kept[it->second];
    out.push_back({store.slices.track[call.row.value], call.start, i});
  }
  return out;
}

}  // namespace

std::vector<KernelSequence> FrequentKernelSequences(const TraceStore& store, const HtaRows& rows,
                                                    const KernelSequenceOptions& options) {
  if (options.operator_name.empty()) return {};
  const std::vector<Launched> launched = LaunchedKernels(store, rows);
  std::map<std::vector<std::string>, KernelSequence> patterns;
  for (size_t root : Roots(store, rows, options.operator_name)) {
    const HtaRow& op = rows.kept[root];
    const TrackId track = store.slices.track[op.row.value];
    std::vector<const HtaRow*> kernels;
    for (const Launched& l : launched)
      if (l.track == track && op.start <= l.launch_start && l.launch_start <= op.end)
        kernels.push_back(&rows.kept[l.device]);
    if (kernels.size() < options.min_pattern_len) continue;
    std::sort(kernels.begin(), kernels.end(), [](const HtaRow* a, const HtaRow* b) {
      return a->start != b->start ? a->start < b->start : a->end < b->end;
    });
    std::vector<std::string> names = {std::string(store.strings.view(store.slices.name[op.row.value]))};
    double gpu = 0;
    for (const HtaRow* k : kernels) {
      names.emplace_back(store.strings.view(store.slices.name[k->row.value]));
      gpu += k->end - k->start;
    }
    KernelSequence& p = patterns[names];
    p.count += 1;
    p.gpu_us += gpu;
    p.cpu_us += op.end - op.start;
  }
  std::vector<KernelSequence> out;
  for (auto& [names, p] : patterns) {
    p.names = names;
    out.push_back(std::move(p));
  }
  auto text = [](const KernelSequence& p) {
    std::string t;
    for (const std::string& n : p.names) t += (t.empty() ? "" : "|") + n;
    return t;
  };
  std::stable_sort(out.begin(), out.end(), [&](const KernelSequence& a, const KernelSequence& b) {
    return a.count != b.count ? a.count > b.count : text(a) < text(b);
  });
  if (out.size() > options.top_k) out.resize(options.top_k);
  return out;
}

}  // namespace strata
