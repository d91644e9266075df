// cgroup v1 and v2 counters per traced process (see cgroup_reader.h).
#include "recorder/host/cgroup_reader.h"

#include <sys/stat.h>

#include <array>

#include "recorder/host/pressure_reader.h"

namespace strata::recorder {
namespace {

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// v1 reports "no limit" as the largest page-aligned signed 64-bit value; anything this large is unlimited.
constexpr uint64_t kV1Unlimited = uint64_t{1} << 62;

bool HasController(std::string_view controllers, std::string_view name) {
  while (!controllers.empty()) {
    const size_t comma = controllers.find(',');
    if (controllers.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    controllers.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

CgroupReader::CgroupReader(const std::string& proc_root, const std::string& sys_root)
    : proc_root_(proc_root), sys_root_(sys_root) {}

void CgroupReader::DiscoverMounts() {
  mounts_known_ = true;
  if (file_.Read(proc_root_ + "/self/mountinfo") != ReadResult::kOk) return;
  // "36 35 98:0 /root /mount/point rw,noatime shared:1 - cgroup cgroup rw,cpu,cpuacct"
  ForEachLine(file_.text(), [&](std::string_view line) {
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) return;
    std::vector<std::string_view> left, right;
    SplitFields(line.substr(0, dash), &left);
    SplitFields(line.substr(dash + 3), &right);
    if (left.size() < 5 || right.size() < 3) return;
    Mount mount;
    const std::string_view point = left[4];
    mount.dir = (point == "/sys" || point.substr(0, 5) == "/sys/") ? sys_root_ + std::string(point.substr(4))
                                                                   : std::string(point);
    mount.root = std::string(left[3]);
    if (right[0] == "cgroup2") {
      if (!v2_mount_) v2_mount_ = mount;
    } else if (right[0] == "cgroup") {
      for (const char* controller : {"cpu", "cpuacct", "memory"}) {
        if (HasController(right[2], controller) && !v1_mounts_.contains(controller)) v1_mounts_[controller] = mount;
      }
    }
  });
}

std::string CgroupReader::DirFor(const Mount* mount, std::string_view fallback_dir, std::string_view path) const {
  if (mount == nullptr) return std::string(fallback_dir) + std::string(path);
  // Paths in /proc/PID/cgroup are from the hierarchy's root; the mount may show only a subtree of it.
  if (mount->root != "/" && path.substr(0, mount->root.size()) == mount->root) path.remove_prefix(mount->root.size());
  return mount->dir + std::string(path);
}

bool CgroupReader::ReadOptional(const std::string& path, CounterSink& sink) {
  const ReadResult result = file_.Read(path);
  if (result == ReadResult::kOk) return true;
  if (result == ReadResult::kMissing) {
    ++sink.diag().stats.files_missing;
    return false;
  }
  return sink.Read(&file_, path, true);  // counts and warns once
}

void CgroupReader::ReadV1Cpu(const std::string& dir, std::vector<Value>* out, CounterSink& sink) {
  if (ReadOptional(dir + "/cpu.stat", sink)) {
    const std::string_view text = file_.text();
    if (auto v = FindKeyValue(text, "nr_periods")) out->push_back({"cgroup.cpu.nr_periods", "count", true, double(*v)});
    if (auto v = FindKeyValue(text, "nr_throttled")) {
      out->push_back({"cgroup.cpu.nr_throttled", "count", true, double(*v)});
    }
    if (auto v = FindKeyValue(text, "throttled_time")) {
      out->push_back({"cgroup.cpu.throttled_ns", "ns", true, double(*v)});
    }
  }
  std::optional<int64_t> quota, period;
  if (ReadOptional(dir + "/cpu.cfs_quota_us", sink)) quota = ParseI64(Trim(file_.text()));
  if (ReadOptional(dir + "/cpu.cfs_period_us", sink)) period = ParseI64(Trim(file_.text()));
  if (quota && period && *quota > 0 && *period > 0) {
    out->push_back({"cgroup.cpu.limit_cores", "cores", false, double(*quota) / double(*period)});
  }
}

void CgroupReader::ReadV1Cpuacct(const std::string& dir, std::vector<Value>* out, CounterSink& sink) {
  if (!ReadOptional(dir + "/cpuacct.usage", sink)) return;
  if (auto v = ParseU64(Trim(file_.text()))) {
    out->push_back({"cgroup.cpu.usage_ns", "ns", true, double(*v)});
  } else {
    sink.Malformed(dir + "/cpuacct.usage", "not a number");
  }
}

void CgroupReader::ReadV1Memory(const std::string& dir, std::vector<Value>* out, CounterSink& sink) {
  if (ReadOptional(dir + "/memory.usage_in_bytes", sink)) {
    if (auto v = ParseU64(Trim(file_.text())))
      out->push_back({"cgroup.memory.usage_bytes", "bytes", false, double(*v)});
  }
  if (ReadOptional(dir + "/memory.limit_in_bytes", sink)) {
    const auto v = ParseU64(Trim(file_.text()));
    if (v && *v < kV1Unlimited) out->push_back({"cgroup.memory.limit_bytes", "bytes", false, double(*v)});
  }
  if (ReadOptional(dir + "/memory.failcnt", sink)) {
    if (auto v = ParseU64(Trim(file_.text()))) out->push_back({"cgroup.memory.failcnt", "count", true, double(*v)});
  }
  if (ReadOptional(dir + "/memory.stat", sink)) {
    const std::string_view text = file_.text();
    // total_* include the descendants (hierarchical); the plain keys are this cgroup's own.
    struct Key {
      const char* total;
      const char* local;
      const char* name;
      const char* unit;
      bool cumulative;
    };
    constexpr std::array<Key, 4> kKeys = {{
        {"total_pgfault", "pgfault", "cgroup.memory.pgfault", "count", true},
        {"total_pgmajfault", "pgmajfault", "cgroup.memory.pgmajfault", "count", true},
        {"total_rss", "rss", "cgroup.memory.anon_bytes", "bytes", false},
        {"total_cache", "cache", "cgroup.memory.file_bytes", "bytes", false},
    }};
    for (const Key& key : kKeys) {
      auto v = FindKeyValue(text, key.total);
      if (!v) v = FindKeyValue(text, key.local);
      if (v) out->push_back({key.name, key.unit, key.cumulative, double(*v)});
    }
  }
}

void CgroupReader::ReadV2(const std::string& dir, std::vector<Value>* out, CounterSink& sink) {
  if (ReadOptional(dir + "/cpu.stat", sink)) {
    const std::string_view text = file_.text();
    if (auto v = FindKeyValue(text, "usage_usec"))
      out->push_back({"cgroup.cpu.usage_ns", "ns", true, double(*v) * 1e3});
    if (auto v = FindKeyValue(text, "nr_periods")) out->push_back({"cgroup.cpu.nr_periods", "count", true, double(*v)});
    if (auto v = FindKeyValue(text, "nr_throttled")) {
      out->push_back({"cgroup.cpu.nr_throttled", "count", true, double(*v)});
    }
    if (auto v = FindKeyValue(text, "throttled_usec")) {
      out->push_back({"cgroup.cpu.throttled_ns", "ns", true, double(*v) * 1e3});
    }
  }
  if (ReadOptional(dir + "/cpu.max", sink)) {  // "max 100000" or "50000 100000"
    SplitFields(Trim(file_.text()), &fields_);
    if (fields_.size() == 2 && fields_[0] != "max") {
      const auto quota = ParseU64(fields_[0]), period = ParseU64(fields_[1]);
      if (quota && period && *period > 0) {
        out->push_back({"cgroup.cpu.limit_cores", "cores", false, double(*quota) / double(*period)});
      } else {
        sink.Malformed(dir + "/cpu.max", "not 'QUOTA PERIOD'");
      }
    }
  }
  if (ReadOptional(dir + "/memory.current", sink)) {
    if (auto v = ParseU64(Trim(file_.text())))
      out->push_back({"cgroup.memory.usage_bytes", "bytes", false, double(*v)});
  }
  for (const auto& [file, name] :
       {std::pair{"/memory.max", "cgroup.memory.limit_bytes"}, std::pair{"/memory.high", "cgroup.memory.high_bytes"}}) {
    if (ReadOptional(dir + file, sink)) {
      if (auto v = ParseU64(Trim(file_.text()))) out->push_back({name, "bytes", false, double(*v)});  // "max": none
    }
  }
  if (ReadOptional(dir + "/memory.events", sink)) {
    const std::string_view text = file_.text();
    for (const char* key : {"low", "high", "max", "oom", "oom_kill"}) {
      if (auto v = FindKeyValue(text, key)) {
        out->push_back({std::string("cgroup.memory.events.") + key, "count", true, double(*v)});
      }
    }
  }
  if (ReadOptional(dir + "/memory.stat", sink)) {
    const std::string_view text = file_.text();
    if (auto v = FindKeyValue(text, "pgfault")) out->push_back({"cgroup.memory.pgfault", "count", true, double(*v)});
    if (auto v = FindKeyValue(text, "pgmajfault")) {
      out->push_back({"cgroup.memory.pgmajfault", "count", true, double(*v)});
    }
    if (auto v = FindKeyValue(text, "anon")) out->push_back({"cgroup.memory.anon_bytes", "bytes", false, double(*v)});
    if (auto v = FindKeyValue(text, "file")) out->push_back({"cgroup.memory.file_bytes", "bytes", false, double(*v)});
  }
}

const std::vector<CgroupReader::Value>& CgroupReader::ReadDir(char kind, const std::string& dir, CounterSink& sink) {
  std::string key(1, kind);
  key += dir;
  auto [it, inserted] = cache_.try_emplace(key);
  if (!inserted) return it->second;
  std::vector<Value>& values = it->second;
  if (!IsDir(dir)) {
    ++sink.diag().stats.files_missing;
    sink.diag().WarnOnce("cgroup-dir:" + dir, "host counters: cgroup directory " + dir + " not found; skipped");
    return values;
  }
  switch (kind) {
    case 'c':
      ReadV1Cpu(dir, &values, sink);
      break;
    case 'a':
      ReadV1Cpuacct(dir, &values, sink);
      break;
    case 'm':
      ReadV1Memory(dir, &values, sink);
      break;
    default:
      ReadV2(dir, &values, sink);
      for (const char* resource : {"cpu", "memory", "io"}) {
        const std::string path = dir + "/" + resource + ".pressure";
        if (!ReadOptional(path, sink)) continue;
        std::vector<PressureLine> lines;
        if (!ParsePressure(file_.text(), &lines)) {
          sink.Malformed(path, "PSI line");
          continue;
        }
        for (const PressureLine& line : lines) {
          const std::string base = std::string("cgroup.psi.") + resource + "." + std::string(line.kind);
          values.push_back({base + ".avg10", "%", false, line.avg10});
          values.push_back({base + ".total_ns", "ns", true, double(line.total_us) * 1e3});
        }
      }
      break;
  }
  return values;
}

void CgroupReader::Sample(int pid, CounterSink& sink) {
  if (!mounts_known_) DiscoverMounts();
  const std::string path = proc_root_ + "/" + std::to_string(pid) + "/cgroup";
  if (cgroup_file_.Read(path) != ReadResult::kOk) {
    if (cgroup_file_.error() != ENOENT && cgroup_file_.error() != ESRCH) sink.Read(&cgroup_file_, path, false);
    return;  // a vanished pid is reported by the process reader
  }
  const std::string cgroup_root = sys_root_ + "/fs/cgroup";
  std::string label;
  ForEachLine(cgroup_file_.text(), [&](std::string_view line) {
    // "hierarchy-id:controller-list:cgroup-path"
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) return sink.Malformed(path, "no 'id:controllers:path'");
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view cgroup_path = line.substr(second + 1);
    if (cgroup_path.empty() || cgroup_path[0] != '/') return sink.Malformed(path, "cgroup path");
    std::vector<std::pair<char, std::string>> dirs;
    if (id == "0" && controllers.empty()) {
      std::string fallback = cgroup_root;
      if (!v2_mount_ && !IsDir(cgroup_root + "/cgroup.controllers") && IsDir(cgroup_root + "/unified")) {
        fallback = cgroup_root + "/unified";
      }
      dirs.emplace_back('2', DirFor(v2_mount_ ? &*v2_mount_ : nullptr, fallback, cgroup_path));
      label.assign(cgroup_path);
    } else {
      for (const auto& [controller, kind] :
           {std::pair{"cpu", 'c'}, std::pair{"cpuacct", 'a'}, std::pair{"memory", 'm'}}) {
        if (!HasController(controllers, controller)) continue;
        const auto it = v1_mounts_.find(controller);
        std::string fallback = cgroup_root + "/" + controller;
        if (!IsDir(fallback)) fallback = cgroup_root + "/" + std::string(controllers);
        dirs.emplace_back(kind, DirFor(it == v1_mounts_.end() ? nullptr : &it->second, fallback, cgroup_path));
      }
      label.assign(controllers).append(":").append(cgroup_path);
    }
    for (const auto& [kind, dir] : dirs) {
      for (const Value& v : ReadDir(kind, dir, sink)) {
        sink.Emit({.name = v.name, .pid = pid, .label = label, .unit = v.unit, .cumulative = v.cumulative}, v.value);
      }
    }
  });
}

}  // namespace strata::recorder
