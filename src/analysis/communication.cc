// The communication table: per (communicator, op), time, transfer, wait, bytes and bandwidth (communication.h).
#include "analysis/communication.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <tuple>
#include <utility>

#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"

namespace strata {
namespace {

std::string Squeezed(std::string_view name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// One instance's members: time in the call (ns) by rank number.
struct Instance {
  std::vector<std::pair<int32_t, int64_t>> time_by_rank;
  double bytes = -1;
};

/// Everything gathered for one (communicator, op) before its medians are taken.
struct Gathered {
  std::map<std::string, size_t> names;
  std::string algorithm;
  int32_t members = 0;
  std::vector<Instance> instances;
};

double CallBytes(const TraceStore& store, uint32_t slice) {
  const SliceTable& s = store.slices;
  if (!(s.flags[slice] & kSliceCollectiveArgs) || s.args[slice] >= store.collective_args.size()) return -1;
  const CollectiveArgs& a = store.collective_args[s.args[slice]];
  const int element = ElementBytes(store.strings.view(a.dtype));
  const int64_t elements = std::max(a.in_nelems, a.out_nelems);
  if (element == 0 || elements < 0) return -1;
  return static_cast<double>(elements) * element;
}

std::string OpOfCall(const TraceStore& store, uint32_t slice) {
  const SliceTable& s = store.slices;
  if ((s.flags[slice] & kSliceCollectiveArgs) && s.args[slice] < store.collective_args.size()) {
    const std::string_view named = store.strings.view(store.collective_args[s.args[slice]].collective);
    if (!named.empty()) return OpOfCollective(named);
  }
  return OpOfCollective(store.strings.view(s.name[slice]));
}

/// The row of one (communicator, op) from its instances.
CommunicationOp Summarise(const std::string& group, const std::string& op, const Gathered& g, bool split) {
  CommunicationOp row;
  row.group = group;
  row.op = op;
  row.name = std::max_element(g.names.begin(), g.names.end(), [](const auto& a, const auto& b) {
               return a.second < b.second;
             })->first;
  row.algorithm = g.algorithm;
  row.members = g.members;
  row.calls = g.instances.size();
  row.split = split;
  std::vector<double> time, transfer, wait, bytes;
  std::map<int32_t, double> wait_sum;
  for (const Instance& in : g.instances) {
    int64_t fastest = std::numeric_limits<int64_t>::max(), second = fastest, sum = 0;
    int32_t last = -1;
    for (const auto& [rank, ns] : in.time_by_rank) {
      sum += ns;
      if (ns < fastest) {
        second = fastest;
        fastest = ns;
        last = rank;
      } else {
        second = std::min(second, ns);
      }
    }
    const double n = static_cast<double>(in.time_by_rank.size());
    time.push_back(static_cast<double>(sum) / n / 1e6);
    if (in.bytes >= 0) bytes.push_back(in.bytes);
    if (!split) continue;
    transfer.push_back(static_cast<double>(fastest) / 1e6);
    wait.push_back(static_cast<double>(sum - fastest * static_cast<int64_t>(n)) / n / 1e6);
    for (const auto& [rank, ns] : in.time_by_rank) wait_sum[rank] += static_cast<double>(ns - fastest) / 1e6;
    if (second - fastest >= diagnosis::thresholds::kCommLastArrivalLeadNs) ++row.last_arrivals[last];
  }
  row.time_ms = Mean(time);
  if (!bytes.empty()) row.bytes = Mean(bytes);
  if (split) {
    row.transfer_ms = Mean(transfer);
    row.wait_ms = Mean(wait);
    for (const auto& [rank, ms] : wait_sum) row.wait_ms_by_rank[rank] = ms / static_cast<double>(row.calls);
    if (row.bytes >= 0 && row.transfer_ms > 0) {
      row.algbw_gbps = row.bytes / (row.transfer_ms / 1e3) / 1e9;
      const double factor = BusBandwidthFactor(op, row.members);
      if (factor > 0) row.busbw_gbps = row.algbw_gbps * factor;
    }
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
  std::map<std::pair<std::string, std::string>, Gathered> by_key;
  for (const model::MatchedCollective& m : c.matched) {
    if (!m.complete() || m.present < 2) continue;
    Instance in;
    uint32_t first_slice = 0;
    for (size_t r = 0; r < m.call.size() && r < c.calls.size(); ++r) {
      if (m.call[r] < 0) continue;
      const model::CollectiveCall& call = c.calls[r][static_cast<size_t>(m.call[r])];
      if (in.time_by_rank.empty()) first_slice = call.slice;
      in.time_by_rank.emplace_back(store.ranks[r].rank, std::max<int64_t>(0, call.end_ns - call.start_ns));
      in.bytes = std::max(in.bytes, CallBytes(store, call.slice));
    }
    if (in.time_by_rank.size() < 2) continue;
    Gathered& g = by_key[{std::string(store.strings.view(m.group)), OpOfCall(store, first_slice)}];
    const std::string_view name = store.strings.view(m.key);
    ++g.names[std::string(name)];
    if (g.algorithm.empty()) g.algorithm = AlgorithmOfKernel(name);
    g.members = std::max(g.members, static_cast<int32_t>(in.time_by_rank.size()));
    g.instances.push_back(std::move(in));
  }
  CommunicationTable table;
  for (const auto& [key, g] : by_key) table.ops.push_back(Summarise(key.first, key.second, g, c.ends_synchronize));
  std::stable_sort(table.ops.begin(), table.ops.end(), [](const CommunicationOp& a, const CommunicationOp& b) {
    return a.time_ms * static_cast<double>(a.calls) > b.time_ms * static_cast<double>(b.calls);
  });
  return table;
}

}  // namespace strata
