// The communication table: per (communicator, op), time, transfer, wait, bytes and bandwidth (communication.h).
#include "analysis/communication.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <tuple>
#include <utility>

#include "analysis/diagnosis/thresholds.h"

namespace strata {
namespace {

std::string Squeezed(std::string_view name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Running sums for one (communicator, op) over its complete instances (means are taken at the end).
struct Gathered {
  std::map<StringId, size_t> names;  // call name -> instances of it
  std::string algorithm;
  int32_t members = 0;
  size_t calls = 0;
  double time_ms = 0, transfer_ms = 0, wait_ms = 0;  // sums over calls of the per-call figures
  double bytes = 0;
  size_t calls_with_bytes = 0;
  std::vector<double> wait_ms_by_index;  // per rank index: its summed wait
  std::vector<uint8_t> member;           // per rank index: 1 when it was in some instance
  std::map<int32_t, size_t> last_arrivals;
};

double CallBytes(const TraceStore& store, SliceId id) {
  const SliceTable& s = store.slices;
  const uint32_t slice = id.value;
  if (!(s.flags[slice] & kSliceCollectiveArgs) || s.args[slice] >= store.collective_args.size()) return -1;
  const CollectiveArgs& a = store.collective_args[s.args[slice]];
  const int element = ElementBytes(store.strings.view(a.dtype));
  const int64_t elements = std::max(a.in_nelems, a.out_nelems);
  if (element == 0 || elements < 0) return -1;
  return static_cast<double>(elements) * element;
}

std::string OpOfCall(const TraceStore& store, SliceId slice) {
  const SliceTable& s = store.slices;
  if ((s.flags[slice.value] & kSliceCollectiveArgs) && s.args[slice.value] < store.collective_args.size()) {
    const std::string_view named = store.strings.view(store.collective_args[s.args[slice.value]].collective);
    if (!named.empty()) return OpOfCollective(named);
  }
  return OpOfCollective(store.strings.view(s.name[slice.value]));
}

/// Adds one instance, given as (rank index, time in the call in ns) per member, to its running sums.
void AddInstance(const std::vector<std::pair<size_t, int64_t>>& members, double bytes, bool split, Gathered* g) {
  int64_t fastest = std::numeric_limits<int64_t>::max(), second = fastest, sum = 0;
  size_t last = 0;
  for (const auto& [index, ns] : members) {
    sum += ns;
    if (ns < fastest) {
      second = fastest;
      fastest = ns;
      last = index;
    } else {
      second = std::min(second, ns);
    }
  }
  const auto n = static_cast<int64_t>(members.size());
  ++g->calls;
  g->members = std::max(g->members, static_cast<int32_t>(n));
  g->time_ms += static_cast<double>(sum) / static_cast<double>(n) / 1e6;
  if (bytes >= 0) {
    g->bytes += bytes;
    ++g->calls_with_bytes;
  }
  if (!split) return;
  g->transfer_ms += static_cast<double>(fastest) / 1e6;
  g->wait_ms += static_cast<double>(sum - fastest * n) / static_cast<double>(n) / 1e6;
  for (const auto& [index, ns] : members) {
    g->wait_ms_by_index[index] += static_cast<double>(ns - fastest) / 1e6;
    g->member[index] = 1;
  }
  if (second - fastest >= diagnosis::thresholds::kCommLastArrivalLeadNs) ++g->last_arrivals[static_cast<int32_t>(last)];
}

/// The row of one (communicator, op) from its sums (the store gives names and rank numbers).
CommunicationOp Summarise(const std::string& group, const std::string& op, const Gathered& g, bool split,
                          const TraceStore& store) {
  const std::vector<RankInfo>& rank_of = store.ranks;
  CommunicationOp row;
  row.group = group;
  row.op = op;
  row.name = store.strings.view(std::max_element(g.names.begin(), g.names.end(), [](const auto& a, const auto& b) {
                                  return a.second < b.second;
                                })->first);
  row.algorithm = g.algorithm;
  row.members = g.members;
  row.calls = g.calls;
  row.split = split;
  const double calls = static_cast<double>(g.calls);
  row.time_ms = g.time_ms / calls;
  if (g.calls_with_bytes > 0) row.bytes = g.bytes / static_cast<double>(g.calls_with_bytes);
  if (!split) return row;
  row.transfer_ms = g.transfer_ms / calls;
  row.wait_ms = g.wait_ms / calls;
  for (const auto& [index, n] : g.last_arrivals) row.last_arrivals[rank_of[static_cast<size_t>(index)].rank] = n;
  for (size_t i = 0; i < g.wait_ms_by_index.size(); ++i)
    if (g.member[i]) row.wait_ms_by_rank[rank_of[i].rank] = g.wait_ms_by_index[i] / calls;
  if (row.bytes >= 0 && row.transfer_ms > 0) {
    row.algbw_gbps = row.bytes / (row.transfer_ms / 1e3) / 1e9;
    const double factor = BusBandwidthFactor(op, row.members);
    if (factor > 0) row.busbw_gbps = row.algbw_gbps * factor;
  }
  return row;
}

}  // namespace

std::string OpOfCollective(std::string_view name) {
  // Longest names first: "reducescatter" holds "reduce" and "scatter", "allreduce" holds "reduce".
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kOps = {{
      {"reducescatter", "reduce_scatter"},
      {"allgather", "all_gather"},
      {"allreduce", "all_reduce"},
      {"alltoall", "all_to_all"},
      {"broadcast", "broadcast"},
      {"barrier", "barrier"},
      {"sendrecv", "send_recv"},
      {"reduce", "reduce"},
      {"gather", "gather"},
      {"scatter", "scatter"},
      {"send", "send"},
      {"recv", "recv"},
  }};
  const std::string squeezed = Squeezed(name);
  for (const auto& [key, op] : kOps)
    if (squeezed.find(key) != std::string::npos) return std::string(op);
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string AlgorithmOfKernel(std::string_view name) {
  if (name.find("ncclKernel") == std::string_view::npos && name.find("ncclDevKernel") == std::string_view::npos)
    return "";
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kAlgorithms = {{
      {"_RING", "ring"},
      {"_TREE", "tree"},
      {"_COLLNET_DIRECT", "collnet_direct"},
      {"_COLLNET_CHAIN", "collnet_chain"},
      {"_NVLS_TREE", "nvls_tree"},
      {"_NVLS", "nvls"},
  }};
  std::string algorithm;
  for (const auto& [key, text] : kAlgorithms)
    if (name.find(key) != std::string_view::npos) {
      algorithm = text;
      break;
    }
  if (algorithm.empty()) return "";
  if (name.find("_LL128") != std::string_view::npos) return algorithm + " LL128";
  if (name.find("_LL") != std::string_view::npos) return algorithm + " LL";
  if (name.find("_SIMPLE") != std::string_view::npos) return algorithm + " simple";
  return algorithm;
}

int ElementBytes(std::string_view dtype) {
  if (const size_t colons = dtype.rfind("::"); colons != std::string_view::npos) dtype.remove_prefix(colons + 2);
  const std::string d = Squeezed(dtype);
  static constexpr std::array<std::pair<std::string_view, int>, 22> kSizes = {{
      {"float", 4},        {"float32", 4},        {"double", 8}, {"float64", 8},      {"half", 2},
      {"float16", 2},      {"bfloat16", 2},       {"long", 8},   {"int64", 8},        {"int", 4},
      {"int32", 4},        {"short", 2},          {"int16", 2},  {"char", 1},         {"int8", 1},
      {"byte", 1},         {"uint8", 1},          {"bool", 1},   {"float8e4m3fn", 1}, {"float8e5m2", 1},
      {"complexfloat", 8}, {"complexdouble", 16},
  }};
  for (const auto& [key, size] : kSizes)
    if (d == key) return size;
  return 0;
}

double BusBandwidthFactor(std::string_view op, int32_t members) {
  if (members < 1) return 0;
  const double n = members;
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all") return (n - 1) / n;
  if (op == "broadcast" || op == "reduce" || op == "send" || op == "recv" || op == "send_recv") return 1.0;
  return 0;
}

CommunicationTable ComputeCommunication(const TraceStore& store, const model::JobModel& job) {
  const model::CollectiveModel& c = job.collectives;
  const size_t ranks = std::min(c.calls.size(), store.ranks.size());
  std::map<std::pair<std::string, std::string>, Gathered> by_key;
  // (group, call name) -> its row's sums: the op is read from the first call of each pair, once.
  std::map<std::pair<StringId, StringId>, Gathered*> by_ids;
  std::vector<std::pair<size_t, int64_t>> members;
  for (const model::MatchedCollective& m : c.matched) {
    if (!m.complete() || m.present < 2) continue;
    members.clear();
    double bytes = -1;
    SliceId first_slice;
    for (size_t r = 0; r < m.call.size() && r < ranks; ++r) {
      if (m.call[r] < 0) continue;
      const model::CollectiveCall& call = c.calls[r][static_cast<size_t>(m.call[r])];
      if (members.empty()) first_slice = call.slice;
      members.emplace_back(r, std::max<int64_t>(0, call.end_ns - call.start_ns));
      bytes = std::max(bytes, CallBytes(store, call.slice));
    }
    if (members.size() < 2) continue;
    Gathered*& g = by_ids[{m.group, m.key}];
    if (g == nullptr) {
      g = &by_key[{std::string(store.strings.view(m.group)), OpOfCall(store, first_slice)}];
      g->wait_ms_by_index.resize(ranks);
      g->member.resize(ranks);
    }
    if (g->algorithm.empty() && g->names.find(m.key) == g->names.end())
      g->algorithm = AlgorithmOfKernel(store.strings.view(m.key));
    ++g->names[m.key];
    AddInstance(members, bytes, c.ends_synchronize, g);
  }
  CommunicationTable table;
  for (const auto& [key, g] : by_key)
    table.ops.push_back(Summarise(key.first, key.second, g, c.ends_synchronize, store));
  std::stable_sort(table.ops.begin(), table.ops.end(), [](const CommunicationOp& a, const CommunicationOp& b) {
    return a.time_ms * static_cast<double>(a.calls) > b.time_ms * static_cast<double>(b.calls);
  });
  return table;
}

}  // namespace strata
