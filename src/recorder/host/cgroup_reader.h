// cgroup counters of each traced process, from the cgroups listed in /proc/PID/cgroup:
//   v1 ("N:cpu,cpuacct:/path"): cpu.stat nr_periods, nr_throttled, throttled_time; cpu.cfs_quota_us /
//      cpu.cfs_period_us (as a core limit); cpuacct.usage; memory.usage_in_bytes, memory.limit_in_bytes,
//      memory.failcnt, memory.stat (total_)pgfault / pgmajfault / rss / cache;
//   v2 ("0::/path"): cpu.stat usage_usec, nr_periods, nr_throttled, throttled_usec; cpu.max;
//      memory.current, memory.max, memory.high, memory.events (low, high, max, oom, oom_kill),
//      memory.stat pgfault / pgmajfault / anon / file; cpu.pressure, memory.pressure, io.pressure.
// v1 and v2 values of the same meaning share a name and unit (times in ns, sizes in bytes), e.g.
// cgroup.cpu.throttled_ns. Series are per pid, labelled like /proc/PID/cgroup without the hierarchy id:
// "cpu,cpuacct:/path" for v1, "/path" for v2. Unlimited limits ("max", v1's 2^63-ish) are not emitted.
// Where each hierarchy is mounted comes from /proc/self/mountinfo (mount points under /sys are taken
// under sys_root), else from the usual places: sys_root/fs/cgroup/<controller>, sys_root/fs/cgroup
// (pure v2) or sys_root/fs/cgroup/unified (hybrid). Each cgroup directory is read once per sample however
// many traced pids are in it. Missing files are skipped (counted); a missing directory is warned once.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

class CgroupReader {
 public:
  CgroupReader(const std::string& proc_root, const std::string& sys_root);
  /// Forgets the directories read in the previous sample.
  void BeginSample() { cache_.clear(); }
  void Sample(int pid, CounterSink& sink);

 private:
  struct Value {
    std::string name;
    const char* unit;
    bool cumulative;
    double value;
  };
  struct Mount {
    std::string dir;   // where it is mounted (under sys_root when under /sys)
    std::string root;  // the cgroup path at the mount's root ("/" unless bind-mounted or namespaced)
  };
  void DiscoverMounts();
  std::string DirFor(const Mount* mount, std::string_view fallback_dir, std::string_view path) const;
  const std::vector<Value>& ReadDir(char kind, const std::string& dir, CounterSink& sink);
  void ReadV1Cpu(const std::string& dir, std::vector<Value>* out, CounterSink& sink);
  void ReadV1Cpuacct(const std::string& dir, std::vector<Value>* out, CounterSink& sink);
  void ReadV1Memory(const std::string& dir, std::vector<Value>* out, CounterSink& sink);
  void ReadV2(const std::string& dir, std::vector<Value>* out, CounterSink& sink);
  /// Reads an optional file; false (counted, not warned) when absent.
  bool ReadOptional(const std::string& path, CounterSink& sink);

  std::string proc_root_;
  std::string sys_root_;
  bool mounts_known_ = false;
  std::map<std::string, Mount> v1_mounts_;  // by controller
  std::optional<Mount> v2_mount_;
  std::unordered_map<std::string, std::vector<Value>> cache_;  // kind + dir -> values, this sample
  FileReader file_;
  FileReader cgroup_file_;
  std::vector<std::string_view> fields_;
};

}  // namespace strata::recorder
