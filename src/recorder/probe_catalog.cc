// Probe specs and their resolution against ELF symbol tables (see probe_catalog.h).
#include "recorder/probe_catalog.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace strata::recorder {
namespace {

constexpr std::string_view kGloo = "libgloo.so";
constexpr std::string_view kTorchCpu = "libtorch_cpu.so";
constexpr std::string_view kTorchCuda = "libtorch_cuda.so";
constexpr std::string_view kNccl = "libnccl.so";
constexpr std::string_view kCudart = "libcudart.so";

bool HasPrefix(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string BaseName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

bool WantedLibrary(const std::string& base) {
  for (std::string_view lib : {kGloo, kTorchCpu, kTorchCuda, kNccl, kCudart})
    if (HasPrefix(base, lib)) return true;
  return false;
}

// `function` matches a demangled name "function(...)" or exactly "function" (C symbols).
bool NameMatches(const std::string& demangled, std::string_view function) {
  if (!HasPrefix(demangled, function)) return false;
  return demangled.size() == function.size() || demangled[function.size()] == '(';
}

}  // namespace

const std::vector<ProbeSpec>& DefaultProbeSpecs() {
  static const std::vector<ProbeSpec> specs = [] {
    std::vector<ProbeSpec> s;
    // gloo's algorithms block until the collective completes; PyTorch wheels link gloo into libtorch_cpu.
    for (auto [fn, op] :
         std::initializer_list<std::pair<std::string_view, std::string_view>>{{"gloo::allreduce", "all_reduce"},
                                                                              {"gloo::allgather", "all_gather"},
                                                                              {"gloo::allgatherv", "all_gather"},
                                                                              {"gloo::broadcast", "broadcast"},
                                                                              {"gloo::reduce", "reduce"},
                                                                              {"gloo::barrier", "barrier"},
                                                                              {"gloo::alltoall", "all_to_all"},
                                                                              {"gloo::alltoallv", "all_to_all"},
                                                                              {"gloo::gather", "gather"},
                                                                              {"gloo::scatter", "scatter"}})
      s.push_back({{kGloo, kTorchCpu}, fn, op, ProbeKind::kCollective});
    // The buffers gloo's algorithm options are given (gloo/context.h: std::unique_ptr<UnboundBuffer>
    // createUnboundBuffer(void* ptr, size_t size), called on the worker thread just before the algorithm runs):
    // their byte sizes are the collective's size, so a size mismatch between ranks can be named without reading
    // C++ objects whose layout differs by build. The size is the fourth integer argument: a class returned by
    // value takes the first (its slot), then `this`, then the pointer (the third, read by mistake at first, gave
    // heap addresses as "sizes": 1,081,883,200 on a real job).
    s.push_back({{kGloo, kTorchCpu}, "gloo::Context::createUnboundBuffer", "buffer", ProbeKind::kCollectiveBuffer, 4});
    // Where the gloo work of c10d completes (successfully: an error leaves the algorithm uncompleted).
    s.push_back({{kTorchCpu}, "c10d::ProcessGroupGloo::AsyncWork::finishWorkGloo", "done", ProbeKind::kCollectiveDone});
    for (std::string_view pg : {"c10d::ProcessGroupGloo::", "c10d::ProcessGroupNCCL::"}) {
      const bool nccl = pg.find("NCCL") != std::string_view::npos;
      for (auto [fn, op] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
               {"allreduce", "all_reduce"},
               {"allreduce_coalesced", "all_reduce"},
               {"allgather", "all_gather"},
               {"_allgather_base", "all_gather"},
               {"reduce_scatter", "reduce_scatter"},
               {"_reduce_scatter_base", "reduce_scatter"},
               {"broadcast", "broadcast"},
               {"reduce", "reduce"},
               {"barrier", "barrier"},
               {"alltoall", "all_to_all"},
               {"alltoall_base", "all_to_all"},
               {"send", "send"},
               {"recv", "recv"}}) {
        static std::set<std::string> names;  // stable storage for the composed names
        const std::string& name = *names.insert(std::string(pg) + std::string(fn)).first;
        s.push_back({{nccl ? kTorchCuda : kTorchCpu}, name, op, ProbeKind::kCollectiveEnqueue});
      }
    }
    // The NCCL API's element count: the third argument of the collectives (sendbuff, recvbuff, count, ...;
    // all_gather's sendcount, reduce_scatter's recvcount), the second of send and recv (buff, count, ...).
    for (auto [fn, op] :
         std::initializer_list<std::pair<std::string_view, std::string_view>>{{"ncclAllReduce", "all_reduce"},
                                                                              {"ncclAllGather", "all_gather"},
                                                                              {"ncclReduceScatter", "reduce_scatter"},
                                                                              {"ncclBroadcast", "broadcast"},
                                                                              {"ncclReduce", "reduce"},
                                                                              {"ncclSend", "send"},
                                                                              {"ncclRecv", "recv"}})
      s.push_back({{kNccl}, fn, op, ProbeKind::kCollectiveEnqueue, op == "send" || op == "recv" ? 2 : 3});
    s.push_back({{kNccl}, "ncclGroupStart", "group_start", ProbeKind::kGroup});
    s.push_back({{kNccl}, "ncclGroupEnd", "group_end", ProbeKind::kGroup});
    for (std::string_view fn : {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize"})
      s.push_back({{kCudart}, fn, fn, ProbeKind::kCudaSync});
    for (std::string_view fn : {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemcpy"})
      s.push_back({{kCudart}, fn, fn, ProbeKind::kCudaLaunch});
    return s;
  }();
  return specs;
}

std::vector<std::string> FindProbeLibraries(const std::vector<std::string>& extra, const std::vector<int>& pids) {
  std::vector<std::string> candidates;
  if (FILE* ldconfig = ::popen("/sbin/ldconfig -p 2>/dev/null", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, ldconfig)) {
      std::string_view l(line);
      const size_t arrow = l.find("=> ");
      if (arrow == std::string_view::npos) continue;
      std::string path(l.substr(arrow + 3));
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      if (WantedLibrary(BaseName(path))) candidates.push_back(path);
    }
    ::pclose(ldconfig);
  }
  for (const std::string& e : extra) {
    std::error_code ec;
    if (std::filesystem::is_directory(e, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(e, ec))
        if (WantedLibrary(entry.path().filename().string())) candidates.push_back(entry.path().string());
    } else {
      candidates.push_back(e);
    }
  }
  for (int pid : pids) {
    std::ifstream maps(fmt::format("/proc/{}/maps", pid));
    std::string line;
    while (std::getline(maps, line)) {
      const size_t slash = line.find('/');
      if (slash == std::string::npos) continue;
      std::string path = line.substr(slash);
      if (WantedLibrary(BaseName(path))) candidates.push_back(path);
    }
  }
  std::vector<std::string> out;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const std::string& c : candidates) {
    std::error_code ec;
    const std::string real = std::filesystem::canonical(c, ec).string();
    struct stat st;
    if (ec || ::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (seen.insert({st.st_dev, st.st_ino}).second) out.push_back(real);
  }
  return out;
}

std::vector<ProbePoint> ResolveProbes(const std::vector<std::string>& libraries, const std::vector<ProbeSpec>& specs,
                                      std::vector<std::string>* notes) {
  std::vector<ProbePoint> points;
  for (const std::string& library : libraries) {
    const std::string base = BaseName(library);
    std::vector<const ProbeSpec*> relevant;
    for (const ProbeSpec& spec : specs)
      for (std::string_view lib : spec.libraries)
        if (HasPrefix(base, lib)) relevant.push_back(&spec);
    if (relevant.empty()) continue;
    auto symbols = ElfSymbols::Load(library);
    if (!symbols.ok()) {
      if (notes) notes->push_back(symbols.error());
      continue;
    }
    size_t found = 0;
    std::set<uint64_t> offsets;
    for (const ProbeSpec* spec : relevant) {
      for (const ElfFunction* f :
           symbols.value().Find([&](const ElfFunction& fn) { return NameMatches(fn.demangled, spec->function); })) {
        auto offset = symbols.value().FileOffset(f->address);
        if (!offset || !offsets.insert(*offset).second) continue;
        ProbePoint& p = points.emplace_back();
        p.library = library;
        p.symbol = f->demangled;
        p.op = spec->op;
        p.kind = spec->kind;
        p.file_offset = *offset;
        p.emit = spec->kind != ProbeKind::kCudaLaunch;
        p.count_arg = spec->count_arg;
        ++found;
      }
    }
    if (notes) notes->push_back(fmt::format("{}: {} probe points", library, found));
  }
  // Gloo is PyTorch's own (linked into libtorch_cpu) or a libgloo that only c10d uses (Debian's): where c10d's
  // completion is probed, it stands for the algorithms' returns.
  const bool completes = std::any_of(points.begin(), points.end(),
                                     [](const ProbePoint& p) { return p.kind == ProbeKind::kCollectiveDone; });
  for (ProbePoint& p : points)
    if (p.kind == ProbeKind::kCollectiveDone || p.kind == ProbeKind::kCollectiveBuffer ||
        (p.kind == ProbeKind::kCollective && completes))
      p.returns = false;
  return points;
}

}  // namespace strata::recorder
