// The recorder's user-space helpers that need no privileges: ELF symbols and offsets, probe
// resolution, /proc reading (rank from the environment) and stack symbolization of this process.
#include <gtest/gtest.h>

#include <tuple>

#ifdef STRATA_HAVE_RECORDER
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>

#include "recorder/elf_symbols.h"
#include "recorder/probe_catalog.h"
#include "recorder/process_info.h"
#include "recorder/stack_symbolizer.h"

namespace strata::recorder {
namespace {

// The file that holds `fn`, and the function's address inside this process.
std::string LibraryOf(const void* fn) {
  Dl_info info{};
  EXPECT_NE(dladdr(fn, &info), 0);
  return std::filesystem::canonical(info.dli_fname).string();
}

TEST(ElfSymbols, FindsFunctionsAndConvertsOffsets) {
  const std::string libc = LibraryOf(reinterpret_cast<const void*>(&::getpid));
  auto symbols = ElfSymbols::Load(libc);
  ASSERT_TRUE(symbols.ok()) << symbols.error();
  auto found = symbols.value().Find([](const ElfFunction& f) { return f.name == "getpid"; });
  ASSERT_FALSE(found.empty());
  const ElfFunction* getpid_fn = found.front();
  auto offset = symbols.value().FileOffset(getpid_fn->address);
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(symbols.value().AddressOfFileOffset(*offset), getpid_fn->address);
  const ElfFunction* at = symbols.value().FunctionAt(getpid_fn->address + 1);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->address, getpid_fn->address);
  EXPECT_EQ(symbols.value().build_id().size() % 2, 0u);
}

TEST(ElfSymbols, RefusesNonElfFilesByName) {
  auto symbols = ElfSymbols::Load("/proc/self/status");
  ASSERT_FALSE(symbols.ok());
  EXPECT_NE(symbols.error().find("/proc/self/status"), std::string::npos);
  EXPECT_EQ(Demangle("_ZN4gloo9allreduceERKNS_16AllreduceOptionsE"), "gloo::allreduce(gloo::AllreduceOptions const&)");
  EXPECT_EQ(Demangle("ncclAllReduce"), "ncclAllReduce");
}

TEST(ProbeCatalog, ResolvesGlooAndCudaEntryPointsWhenInstalled) {
  std::vector<std::string> notes;
  const auto libraries = FindProbeLibraries({}, {});
  const auto points = ResolveProbes(libraries, DefaultProbeSpecs(), &notes);
  bool has_gloo_lib = false;
  for (const auto& l : libraries) has_gloo_lib |= l.find("libgloo.so") != std::string::npos;
  if (!has_gloo_lib) GTEST_SKIP() << "no libgloo on this machine";
  bool allreduce = false, enqueue_only_in_torch = true;
  for (const ProbePoint& p : points) {
    if (p.symbol.rfind("gloo::allreduce(", 0) == 0 && p.kind == ProbeKind::kCollective) allreduce = true;
    if (p.kind == ProbeKind::kCollectiveEnqueue && p.symbol.rfind("c10d::", 0) == 0)
      enqueue_only_in_torch &= p.library.find("libtorch") != std::string::npos;
    if (p.kind == ProbeKind::kCudaLaunch) {
      EXPECT_FALSE(p.emit) << p.symbol;
    }
  }
  EXPECT_TRUE(allreduce);
  EXPECT_TRUE(enqueue_only_in_torch);
}

TEST(ProcessInfo, ReadsRankFromTheEnvironment) {
  ProcessInfo info;
  ParseRankEnvironment(std::string("PATH=/bin\0RANK=3\0LOCAL_RANK=1\0WORLD_SIZE=8\0RANKX=9\0", 50), &info);
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.world_size, 8);
  EXPECT_FALSE(info.visible_devices.has_value());
  ProcessInfo gpus;
  ParseRankEnvironment(std::string("RANK=1\0CUDA_VISIBLE_DEVICES=2,3\0", 32), &gpus);
  EXPECT_EQ(gpus.visible_devices, "2,3");
  EXPECT_EQ(gpus.ToJson()["cuda_visible_devices"], "2,3");
  ProcessInfo bad;
  ParseRankEnvironment(std::string("RANK=three\0", 11), &bad);
  EXPECT_FALSE(bad.rank.has_value());
  // Other launchers: Slurm, Open MPI, PMI (MPICH, Intel MPI); torchrun's RANK wins when several are set.
  using namespace std::string_literals;
  for (const auto& [env, rank, local, world] :
       {std::tuple{"SLURM_PROCID=5\0SLURM_LOCALID=1\0SLURM_NTASKS=16\0"s, 5, 1, 16},
        std::tuple{"OMPI_COMM_WORLD_RANK=6\0OMPI_COMM_WORLD_LOCAL_RANK=2\0OMPI_COMM_WORLD_SIZE=8\0"s, 6, 2, 8},
        std::tuple{"PMI_RANK=7\0MPI_LOCALRANKID=3\0PMI_SIZE=9\0"s, 7, 3, 9},
        std::tuple{"SLURM_PROCID=5\0RANK=2\0PMI_RANK=7\0"s, 2, -1, -1}}) {
    ProcessInfo p;
    ParseRankEnvironment(env, &p);
    EXPECT_EQ(p.rank, rank) << env;
    if (local >= 0) {
      EXPECT_EQ(p.local_rank, local) << env;
    }
    if (world >= 0) {
      EXPECT_EQ(p.world_size, world) << env;
    }
  }
  const ProcessInfo self = ReadProcessInfo(::getpid());
  EXPECT_EQ(self.pid, ::getpid());
  EXPECT_EQ(self.ppid, ::getppid());
  EXPECT_FALSE(self.maps.empty());
  const ProcessInfo gone = ReadProcessInfo(999999999);
  EXPECT_TRUE(gone.comm.empty());
  EXPECT_TRUE(gone.maps.empty());
}

TEST(StackSymbolizer, NamesAnAddressOfThisProcess) {
  const auto maps = ReadExecutableMaps(::getpid());
  const uint64_t ip = reinterpret_cast<uint64_t>(&::getpid) + 2;
  StackSymbolizer symbolizer;
  const auto frames = symbolizer.User(maps, {ip, 8});
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "getpid");
  EXPECT_EQ(frames[0].offset, 2u);
  EXPECT_EQ(frames[1].function, "?");  // not mapped
  EXPECT_TRUE(StackSymbolizer::IsInterpreterFrame("_PyEval_EvalFrameDefault"));
  EXPECT_FALSE(StackSymbolizer::IsInterpreterFrame("gloo::allreduce"));
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
