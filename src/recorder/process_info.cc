// Reading /proc/PID for the recorder (see process_info.h).
#include "recorder/process_info.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace strata::recorder {
namespace {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<int> ParseInt(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

void ParseRankEnvironment(const std::string& environ, ProcessInfo* info) {
  // Launchers name the same facts differently: torchrun, then Slurm, Open MPI, and MPICH/Intel MPI (PMI).
  // The first variable of each list that the process has, in this order, wins.
  static constexpr std::array<std::string_view, 4> kRank = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};
  static constexpr std::array<std::string_view, 4> kLocalRank = {"LOCAL_RANK", "SLURM_LOCALID",
                                                                 "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"};
  static constexpr std::array<std::string_view, 4> kWorldSize = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE",
                                                                 "PMI_SIZE"};
  std::map<std::string_view, std::string_view> vars;
  size_t pos = 0;
  while (pos < environ.size()) {
    size_t end = environ.find('\0', pos);
    if (end == std::string::npos) end = environ.size();
    std::string_view var(environ.data() + pos, end - pos);
    const size_t eq = var.find('=');
    if (eq != std::string_view::npos) vars.emplace(var.substr(0, eq), var.substr(eq + 1));
    pos = end + 1;
  }
  auto first = [&](const auto& names) -> std::optional<int> {
    for (std::string_view name : names)
      if (auto it = vars.find(name); it != vars.end()) return ParseInt(it->second);
    return std::nullopt;
  };
  info->rank = first(kRank);
  info->local_rank = first(kLocalRank);
  info->world_size = first(kWorldSize);
  if (auto it = vars.find("CUDA_VISIBLE_DEVICES"); it != vars.end()) info->visible_devices = std::string(it->second);
}

std::string ReadComm(int pid, const std::string& proc_root) {
  std::string comm = ReadWhole(fmt::format("{}/{}/comm", proc_root, pid));
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

std::vector<MapEntry> ReadExecutableMaps(int pid, const std::string& proc_root) {
  std::vector<MapEntry> maps;
  std::ifstream in(fmt::format("{}/{}/maps", proc_root, pid));
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &path_at) < 4)
      continue;
    if (perms[2] != 'x' || path_at <= 0 || static_cast<size_t>(path_at) >= line.size()) continue;
    std::string path = line.substr(static_cast<size_t>(path_at));
    if (path.empty() || path[0] != '/') continue;
    maps.push_back({start, end, offset, path});
  }
  return maps;
}

ProcessInfo ReadProcessInfo(int pid, const std::string& proc_root) {
  ProcessInfo info;
  info.pid = pid;
  const std::string dir = fmt::format("{}/{}", proc_root, pid);
  info.comm = ReadComm(pid, proc_root);
  std::error_code ec;
  info.exe = std::filesystem::read_symlink(dir + "/exe", ec).string();
  const std::string cmdline = ReadWhole(dir + "/cmdline");
  for (size_t pos = 0; pos < cmdline.size();) {
    size_t end = cmdline.find('\0', pos);
    if (end == std::string::npos) end = cmdline.size();
    info.cmdline.push_back(cmdline.substr(pos, end - pos));
    pos = end + 1;
  }
  ParseRankEnvironment(ReadWhole(dir + "/environ"), &info);
  const std::string stat = ReadWhole(dir + "/stat");
  if (size_t close = stat.rfind(')'); close != std::string::npos) {
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    rest >> state >> info.ppid;
  }
  info.cgroup = ReadWhole(dir + "/cgroup");
  while (!info.cgroup.empty() && info.cgroup.back() == '\n') info.cgroup.pop_back();
  info.maps = ReadExecutableMaps(pid, proc_root);
  return info;
}

nlohmann::json ProcessInfo::ToJson() const {
  nlohmann::json j = {{"type", "process"},
                      {"pid", pid},
                      {"ppid", ppid},
                      {"comm", comm},
                      {"exe", exe},
                      {"cmdline", cmdline},
                      {"cgroup", cgroup},
                      {"first_seen_ns", first_seen_ns},
                      {"exited_ns", exited_ns}};
  j["rank"] = rank ? nlohmann::json(*rank) : nlohmann::json();
  j["local_rank"] = local_rank ? nlohmann::json(*local_rank) : nlohmann::json();
  j["world_size"] = world_size ? nlohmann::json(*world_size) : nlohmann::json();
  if (visible_devices) j["cuda_visible_devices"] = *visible_devices;
  if (exit_status) {
    // Decoded as wait(2)'s WIFSIGNALED / WEXITSTATUS.
    const uint32_t signal = *exit_status & 0x7f;
    j["exit_signal"] = signal != 0 ? nlohmann::json(signal) : nlohmann::json();
    j["exit_code"] = signal == 0 ? nlohmann::json((*exit_status >> 8) & 0xff) : nlohmann::json();
  }
  return j;
}

}  // namespace strata::recorder
