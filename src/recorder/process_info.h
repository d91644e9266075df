// What the recorder knows about one traced process, read from /proc while it runs: command, rank from
// its environment (RANK / LOCAL_RANK / WORLD_SIZE, as torchrun and the lab set them), cgroups and its
// memory map (for naming sampled addresses after the process has gone).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::recorder {

struct MapEntry {
  uint64_t start = 0, end = 0, offset = 0;
  std::string path;  // file-backed executable mappings only
};

struct ProcessInfo {
  int pid = 0;
  int ppid = 0;
  std::string comm;
  std::string exe;
  std::vector<std::string> cmdline;
  std::optional<int> rank, local_rank, world_size;
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES as set (which GPUs it sees, in order)
  std::string cgroup;                          // /proc/PID/cgroup as one line per hierarchy
  std::vector<MapEntry> maps;
  uint64_t first_seen_ns = 0, exited_ns = 0;
  std::optional<uint32_t> exit_status;  // as wait(2) reports it (exit code << 8, or the killing signal)

  nlohmann::json ToJson() const;  // the "process" meta record (maps excluded)
};

// Reads what it can of /proc/PID (a vanished process leaves fields empty); `proc_root` for tests.
ProcessInfo ReadProcessInfo(int pid, const std::string& proc_root = "/proc");
// /proc/PID/comm without its newline (empty when the process is gone).
std::string ReadComm(int pid, const std::string& proc_root = "/proc");
// Executable file-backed mappings of /proc/PID/maps.
std::vector<MapEntry> ReadExecutableMaps(int pid, const std::string& proc_root = "/proc");
// Rank, local rank and world size from a NUL-separated environment block: torchrun's RANK / LOCAL_RANK /
// WORLD_SIZE, else Slurm's SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS, else Open MPI's OMPI_COMM_WORLD_*,
// else PMI_RANK / MPI_LOCALRANKID / PMI_SIZE.
void ParseRankEnvironment(const std::string& environ, ProcessInfo* info);

}  // namespace strata::recorder
