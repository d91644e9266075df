// HostCounterSampler on fake /proc and /sys trees (exact parsed values, v1 and v2 cgroups, InfiniBand,
// vanished pids and threads, malformed lines) and once on the real /proc with the test's own pid.
#include "recorder/host/host_counters.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "recorder/host/nvml_reader.h"
#include "recorder/host/process_reader.h"
#include "test_util.h"

namespace strata::recorder {
namespace {

namespace fs = std::filesystem;

// A fake root with proc/ and sys/ under a temporary directory.
class FakeRoot {
 public:
  FakeRoot() {
    fs::create_directories(proc());
    fs::create_directories(sys());
  }
  std::string proc() const { return dir_.path() + "/proc"; }
  std::string sys() const { return dir_.path() + "/sys"; }
  void Write(const std::string& relative, const std::string& content) const {
    const fs::path path = fs::path(dir_.path()) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }
  mutable std::error_code ignore_;
  void Remove(const std::string& relative) const { fs::remove_all(fs::path(dir_.path()) / relative); }
  void Link(const std::string& target, const std::string& link) const {
    const fs::path path = fs::path(dir_.path()) / link;
    fs::create_directories(path.parent_path());
    fs::create_hard_link(fs::path(dir_.path()) / target, path);
  }
  HostCounterSampler::Options Options() const {
    HostCounterSampler::Options options;
    options.proc_root = proc();
    options.sys_root = sys();
    options.nvml = false;
    options.links = false;  // needs real namespaces: link_reader_test
    options.thread_status_every = 1;
    return options;
  }

  // A process: /proc/PID/stat, and one entry per thread (schedstat "oncpu wait slices", ctxt switches).
  struct Thread {
    int tid;
    uint64_t oncpu, wait, slices, voluntary, nonvoluntary;
  };
  void Process(int pid, uint64_t minflt, uint64_t majflt, uint64_t rss_kb, const std::vector<Thread>& threads,
               uint64_t start_time = 1000) const {
    const std::string base = "proc/" + std::to_string(pid);
    // Fields 3..22: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
    // cstime priority nice num_threads itrealvalue starttime; comm holds a space and a ')'.
    Write(base + "/stat", std::to_string(pid) + " (py thon)) S 1 1 1 0 -1 4194560 " + std::to_string(minflt) + " 0 " +
                              std::to_string(majflt) + " 0 10 5 0 0 20 0 " + std::to_string(threads.size()) + " 0 " +
                              std::to_string(start_time) + " 123456 789\n");
    Write(base + "/statm", "5000 " + std::to_string(rss_kb * 1024 / ::sysconf(_SC_PAGESIZE)) + " 100 10 0 300 0\n");
    // Files are rewritten in place (the reader keeps schedstat open, as it does on the real /proc); the
    // directories of threads not listed are removed.
    for (const auto& entry : fs::directory_iterator(fs::path(dir_.path()) / base / "task", ignore_)) {
      const std::string tid = entry.path().filename().string();
      bool listed = false;
      for (const Thread& t : threads) listed = listed || std::to_string(t.tid) == tid;
      if (!listed) fs::remove_all(entry.path());
    }
    for (const Thread& t : threads) {
      const std::string task = base + "/task/" + std::to_string(t.tid);
      Write(task + "/schedstat",
            std::to_string(t.oncpu) + " " + std::to_string(t.wait) + " " + std::to_string(t.slices) + "\n");
      Write(task + "/status", "Name:\tpython\nState:\tS (sleeping)\nVmRSS:\t    " + std::to_string(rss_kb) +
                                  " kB\nThreads:\t2\nvoluntary_ctxt_switches:\t" + std::to_string(t.voluntary) +
                                  "\nnonvoluntary_ctxt_switches:\t" + std::to_string(t.nonvoluntary) + "\n");
    }
  }

 private:
  strata::testing::TempDir dir_;
};

struct Sampled {
  const HostCounterSampler* sampler;
  std::vector<CounterSample> samples;

  // The value of the series in this batch, if emitted.
  std::optional<double> Get(std::string_view name, int pid = -1, int index = -1, std::string_view label = "") const {
    const auto& series = sampler->series();
    std::optional<double> found;
    for (const CounterSample& s : samples) {
      const CounterSeries& c = series[s.series];
      if (c.name == name && c.pid == pid && c.index == index && c.label == label) {
        EXPECT_FALSE(found.has_value()) << "series emitted twice in one sample: " << name;
        found = s.value;
      }
    }
    return found;
  }
  size_t Count(std::string_view prefix) const {
    size_t n = 0;
    for (const CounterSample& s : samples) n += sampler->series()[s.series].name.starts_with(prefix);
    return n;
  }
};

Sampled SampleOnce(HostCounterSampler& sampler, uint64_t ts = 1) {
  Sampled out{&sampler, {}};
  sampler.Sample(ts, &out.samples);
  return out;
}

bool AnyWarningContains(const std::vector<std::string>& warnings, std::string_view needle) {
  for (const auto& w : warnings) {
    if (w.find(needle) != std::string::npos) return true;
  }
  return false;
}

const double kNsPerTick = 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));

TEST(HostCounterCpuStat, PerCpuTimesBusyPercentAndMalformedLines) {
  FakeRoot root;
  root.Write("proc/stat",
             "cpu  300 10 100 1000 5 1 2 3 0 0\n"
             "cpu0 100 0 50 500 2 0 1 1 0 0\n"
             "cpu1 200 10 50 500 3 1 1 2 0 0\n"
             "cpu2 abc 0 0 0\n"
             "intr 12345 0 0\n"
             "ctxt 777\n"
             "procs_running 3\n"
             "procs_blocked 1\n");
  HostCounterSampler sampler(root.Options());
  Sampled a = SampleOnce(sampler, 100);
  EXPECT_DOUBLE_EQ(*a.Get("cpu.user_ns", -1, 1), 200 * kNsPerTick);
  EXPECT_DOUBLE_EQ(*a.Get("cpu.nice_ns", -1, 1), 10 * kNsPerTick);
  EXPECT_DOUBLE_EQ(*a.Get("cpu.iowait_ns", -1, 0), 2 * kNsPerTick);
  EXPECT_DOUBLE_EQ(*a.Get("cpu.steal_ns", -1, 1), 2 * kNsPerTick);
  EXPECT_DOUBLE_EQ(*a.Get("cpu.idle_ns", -1, -1), 1000 * kNsPerTick);
  EXPECT_DOUBLE_EQ(*a.Get("host.ctxt_switches"), 777);
  EXPECT_DOUBLE_EQ(*a.Get("host.procs_running"), 3);
  EXPECT_DOUBLE_EQ(*a.Get("host.procs_blocked"), 1);
  EXPECT_FALSE(a.Get("cpu.user_ns", -1, 2).has_value());   // the malformed line
  EXPECT_FALSE(a.Get("cpu.busy_pct", -1, 0).has_value());  // needs two samples
  EXPECT_EQ(sampler.stats().malformed, 1u);
  for (const CounterSample& s : a.samples) EXPECT_EQ(s.ts_ns, 100u);

  // cpu0: busy (user+nice+system+irq+softirq) +30 ticks, idle+iowait +70, steal +0 -> 30 %.
  root.Write("proc/stat", "cpu0 120 0 60 560 12 0 1 1 0 0\n");
  Sampled b = SampleOnce(sampler, 200);
  EXPECT_DOUBLE_EQ(*b.Get("cpu.busy_pct", -1, 0), 30.0);
  const auto warnings = sampler.TakeWarnings();
  EXPECT_TRUE(AnyWarningContains(warnings, "malformed")) << ::testing::PrintToString(warnings);
  EXPECT_TRUE(sampler.TakeWarnings().empty());  // each warning once
}

TEST(HostCounterProcess, SumsThreadsAndNeverGoesBackwardsWhenAThreadExits) {
  FakeRoot root;
  root.Process(100, 50, 2, 2048, {{100, 1000, 200, 10, 5, 1}, {101, 3000, 400, 20, 7, 3}});
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({100});
  Sampled a = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*a.Get("proc.oncpu_ns", 100), 4000);
  EXPECT_DOUBLE_EQ(*a.Get("proc.runq_wait_ns", 100), 600);
  EXPECT_DOUBLE_EQ(*a.Get("proc.timeslices", 100), 30);
  EXPECT_DOUBLE_EQ(*a.Get("proc.voluntary_ctxt_switches", 100), 12);
  EXPECT_DOUBLE_EQ(*a.Get("proc.nonvoluntary_ctxt_switches", 100), 4);
  EXPECT_DOUBLE_EQ(*a.Get("proc.minflt", 100), 50);
  EXPECT_DOUBLE_EQ(*a.Get("proc.majflt", 100), 2);
  // stime (5 ticks in the fake stat) in ns: the kernel time of fault handling and reclaim.
  EXPECT_DOUBLE_EQ(*a.Get("proc.stime_ns", 100), 5 * 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK)));
  EXPECT_DOUBLE_EQ(*a.Get("proc.rss_bytes", 100), 2048.0 * 1024);
  EXPECT_DOUBLE_EQ(*a.Get("proc.threads", 100), 2);

  // Thread 101 exits; 100 runs 500 ns more. The sum over the live threads would drop to 1500.
  root.Process(100, 60, 2, 2048, {{100, 1500, 250, 12, 6, 1}});
  Sampled b = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*b.Get("proc.oncpu_ns", 100), 4500);
  EXPECT_DOUBLE_EQ(*b.Get("proc.runq_wait_ns", 100), 650);
  EXPECT_DOUBLE_EQ(*b.Get("proc.timeslices", 100), 32);
  EXPECT_DOUBLE_EQ(*b.Get("proc.voluntary_ctxt_switches", 100), 13);
  EXPECT_DOUBLE_EQ(*b.Get("proc.minflt", 100), 60);
  EXPECT_DOUBLE_EQ(*b.Get("proc.threads", 100), 1);
  EXPECT_EQ(sampler.stats().threads_exited, 1u);

  // A new thread 102 adds everything it has.
  root.Process(100, 60, 2, 4096, {{100, 1600, 250, 13, 6, 1}, {102, 700, 50, 4, 1, 0}});
  Sampled c = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*c.Get("proc.oncpu_ns", 100), 4500 + 100 + 700);
  EXPECT_DOUBLE_EQ(*c.Get("proc.rss_bytes", 100), 4096.0 * 1024);
  EXPECT_EQ(sampler.stats().counter_resets, 0u);
}

TEST(HostCounterProcess, ContextSwitchesEveryNthSampleStillCountNewThreads) {
  FakeRoot root;
  root.Process(100, 1, 0, 8, {{100, 10, 1, 1, 5, 1}});
  HostCounterSampler::Options options = root.Options();
  options.thread_status_every = 2;
  HostCounterSampler sampler(options);
  sampler.SetPids({100});
  EXPECT_DOUBLE_EQ(*SampleOnce(sampler).Get("proc.voluntary_ctxt_switches", 100), 5);
  // Not a status sample: no context-switch values, but a new thread's schedstat counts at once.
  root.Process(100, 1, 0, 8, {{100, 20, 1, 1, 6, 1}, {101, 30, 1, 1, 9, 2}});
  Sampled b = SampleOnce(sampler);
  EXPECT_FALSE(b.Get("proc.voluntary_ctxt_switches", 100).has_value());
  EXPECT_DOUBLE_EQ(*b.Get("proc.oncpu_ns", 100), 50);
  // The next status sample adds all of the new thread's switches.
  Sampled c = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*c.Get("proc.voluntary_ctxt_switches", 100), 6 + 9);
  EXPECT_DOUBLE_EQ(*c.Get("proc.nonvoluntary_ctxt_switches", 100), 1 + 2);
}

TEST(HostCounterProcess, DescriptorBudgetKeepsSomeOpenAndReadsTheRestByPath) {
  FakeRoot root;
  root.Process(100, 1, 0, 8, {{100, 10, 1, 1, 1, 1}, {101, 20, 1, 1, 1, 1}, {102, 30, 1, 1, 1, 1}});
  ProcessReader reader(root.proc(), 1, /*max_kept_fds=*/2);
  SeriesTable table;
  Diagnostics diag;
  std::vector<CounterSample> out;
  auto sample = [&] {
    out.clear();
    CounterSink sink(&table, &diag, 1, &out);
    EXPECT_TRUE(reader.Sample(100, sink));
    return out[0].value;  // proc.oncpu_ns comes first
  };
  EXPECT_DOUBLE_EQ(sample(), 60);
  EXPECT_EQ(reader.kept_fds(), 2u);
  root.Process(100, 1, 0, 8, {{100, 15, 1, 1, 1, 1}, {102, 40, 1, 1, 1, 1}});  // 101 exits
  EXPECT_DOUBLE_EQ(sample(), 60 + 5 + 10);
  EXPECT_LE(reader.kept_fds(), 2u);
  EXPECT_EQ(diag.stats.threads_exited, 1u);
  reader.Retain({});
  EXPECT_EQ(reader.kept_fds(), 0u);
}

TEST(HostCounterProcess, VanishedPidsAreReportedOnceAndOthersGoOn) {
  FakeRoot root;
  root.Process(100, 1, 0, 10, {{100, 10, 1, 1, 1, 1}});
  root.Process(200, 1, 0, 10, {{200, 10, 1, 1, 1, 1}});
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({100, 200, 999});  // 999 never existed
  Sampled a = SampleOnce(sampler);
  EXPECT_TRUE(a.Get("proc.oncpu_ns", 100).has_value());
  EXPECT_FALSE(a.Get("proc.oncpu_ns", 999).has_value());
  root.Remove("proc/200");  // exits mid-run
  Sampled b = SampleOnce(sampler);
  SampleOnce(sampler);
  EXPECT_TRUE(b.Get("proc.oncpu_ns", 100).has_value());
  EXPECT_FALSE(b.Get("proc.oncpu_ns", 200).has_value());
  EXPECT_EQ(sampler.stats().pids_vanished, 2u);
  const auto warnings = sampler.TakeWarnings();
  EXPECT_TRUE(AnyWarningContains(warnings, "pid 999 is gone"));
  EXPECT_TRUE(AnyWarningContains(warnings, "pid 200 is gone"));

  // A thread directory listed but gone before its files are read, and a malformed stat: skipped.
  root.Write("proc/100/task/105/unrelated", "");
  root.Write("proc/300/stat", "300 (x) S 1 2\n");
  sampler.SetPids({100, 300});
  Sampled c = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*c.Get("proc.threads", 100), 1);
  EXPECT_FALSE(c.Get("proc.oncpu_ns", 300).has_value());
  EXPECT_GE(sampler.stats().malformed, 1u);
}

TEST(HostCounterProcess, ReusedPidStartsAfreshWithoutGoingBackwards) {
  FakeRoot root;
  root.Process(100, 500, 5, 10, {{100, 9000, 1, 1, 1, 1}}, /*start_time=*/1000);
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({100});
  SampleOnce(sampler);
  root.Process(100, 20, 0, 10, {{100, 300, 1, 1, 1, 1}}, /*start_time=*/5000);
  Sampled b = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*b.Get("proc.oncpu_ns", 100), 9300);
  EXPECT_DOUBLE_EQ(*b.Get("proc.minflt", 100), 500);  // held at the reset, grows from the new base
  root.Process(100, 30, 0, 10, {{100, 400, 1, 1, 1, 1}}, /*start_time=*/5000);
  Sampled c = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*c.Get("proc.minflt", 100), 510);
  EXPECT_TRUE(AnyWarningContains(sampler.TakeWarnings(), "new process"));
}

TEST(HostCounterCgroup, V1CpuAndMemoryControllers) {
  FakeRoot root;
  root.Process(100, 1, 0, 10, {{100, 10, 1, 1, 1, 1}});
  root.Write("proc/100/cgroup",
             "9:name=systemd:/\n"
             "4:memory:/job/rank0\n"
             "3:cpu,cpuacct:/job\n"
             "garbage line\n");
  // cpu and cpuacct co-mounted (no separate cpu/ directory): found under "cpu,cpuacct".
  root.Write("sys/fs/cgroup/cpu,cpuacct/job/cpu.stat",
             "nr_periods 120\nnr_throttled 30\nthrottled_time 4500000000\nnr_bursts 0\nburst_time 0\n");
  root.Write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "150000\n");
  root.Write("sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  root.Write("sys/fs/cgroup/cpu,cpuacct/job/cpuacct.usage", "987654321\n");
  root.Write("sys/fs/cgroup/memory/job/rank0/memory.usage_in_bytes", "1048576\n");
  root.Write("sys/fs/cgroup/memory/job/rank0/memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
  root.Write("sys/fs/cgroup/memory/job/rank0/memory.failcnt", "3\n");
  root.Write("sys/fs/cgroup/memory/job/rank0/memory.stat",
             "cache 100\nrss 200\npgfault 10\npgmajfault 1\ntotal_cache 4096\ntotal_rss 8192\n"
             "total_pgfault 77\ntotal_pgmajfault 6\n");
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({100});
  Sampled a = SampleOnce(sampler);
  const std::string cpu = "cpu,cpuacct:/job", mem = "memory:/job/rank0";
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.nr_periods", 100, -1, cpu), 120);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.nr_throttled", 100, -1, cpu), 30);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.throttled_ns", 100, -1, cpu), 4.5e9);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.limit_cores", 100, -1, cpu), 1.5);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.usage_ns", 100, -1, cpu), 987654321);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.usage_bytes", 100, -1, mem), 1048576);
  EXPECT_FALSE(a.Get("cgroup.memory.limit_bytes", 100, -1, mem).has_value());
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.failcnt", 100, -1, mem), 3);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.pgfault", 100, -1, mem), 77);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.pgmajfault", 100, -1, mem), 6);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.anon_bytes", 100, -1, mem), 8192);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.file_bytes", 100, -1, mem), 4096);
  EXPECT_EQ(sampler.stats().malformed, 1u);  // the garbage line

  root.Write("sys/fs/cgroup/memory/job/rank0/memory.limit_in_bytes", "2147483648\n");
  Sampled b = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*b.Get("cgroup.memory.limit_bytes", 100, -1, mem), 2147483648.0);
}

TEST(HostCounterCgroup, V2FilesPressureAndSharedDirectories) {
  FakeRoot root;
  for (const int pid : {100, 101}) {
    root.Process(pid, 1, 0, 10, {{pid, 10, 1, 1, 1, 1}});
    root.Write("proc/" + std::to_string(pid) + "/cgroup", "0::/kubepods/pod1\n");
  }
  root.Write("sys/fs/cgroup/cgroup.controllers", "cpu memory io\n");
  const std::string dir = "sys/fs/cgroup/kubepods/pod1/";
  root.Write(dir + "cpu.stat",
             "usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\nnr_periods 40\nnr_throttled 12\n"
             "throttled_usec 250000\n");
  root.Write(dir + "cpu.max", "200000 100000\n");
  root.Write(dir + "memory.current", "4096\n");
  root.Write(dir + "memory.max", "max\n");
  root.Write(dir + "memory.high", "1000000\n");
  root.Write(dir + "memory.events", "low 0\nhigh 5\nmax 2\noom 1\noom_kill 1\n");
  root.Write(dir + "memory.stat", "anon 1000\nfile 2000\npgfault 30\npgmajfault 4\n");
  root.Write(dir + "cpu.pressure",
             "some avg10=1.50 avg60=0.00 avg300=0.00 total=1200\nfull avg10=0.25 avg60=0.00 avg300=0.00 total=300\n");
  root.Write(dir + "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
  root.Write(dir + "io.pressure", "some avg10=oops\n");
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({100, 101});
  Sampled a = SampleOnce(sampler);
  const std::string label = "/kubepods/pod1";
  for (const int pid : {100, 101}) {
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.usage_ns", pid, -1, label), 5e6);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.nr_periods", pid, -1, label), 40);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.nr_throttled", pid, -1, label), 12);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.throttled_ns", pid, -1, label), 2.5e8);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.limit_cores", pid, -1, label), 2.0);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.usage_bytes", pid, -1, label), 4096);
    EXPECT_FALSE(a.Get("cgroup.memory.limit_bytes", pid, -1, label).has_value());
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.high_bytes", pid, -1, label), 1e6);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.events.high", pid, -1, label), 5);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.events.max", pid, -1, label), 2);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.events.oom", pid, -1, label), 1);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.events.oom_kill", pid, -1, label), 1);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.pgmajfault", pid, -1, label), 4);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.memory.anon_bytes", pid, -1, label), 1000);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.psi.cpu.some.avg10", pid, -1, label), 1.5);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.psi.cpu.full.total_ns", pid, -1, label), 300e3);
    EXPECT_DOUBLE_EQ(*a.Get("cgroup.psi.memory.some.total_ns", pid, -1, label), 7e3);
    EXPECT_FALSE(a.Get("cgroup.psi.io.some.avg10", pid, -1, label).has_value());  // malformed
  }
  EXPECT_EQ(sampler.stats().malformed, 1u);  // the shared directory is read once per sample

  // cpu.max "max": no limit.
  root.Write(dir + "cpu.max", "max 100000\n");
  EXPECT_FALSE(SampleOnce(sampler).Get("cgroup.cpu.limit_cores", 100, -1, label).has_value());
}

TEST(HostCounterCgroup, MountPointsFromMountinfo) {
  FakeRoot root;
  root.Process(100, 1, 0, 10, {{100, 10, 1, 1, 1, 1}});
  root.Write("proc/100/cgroup", "5:cpu,cpuacct:/slice/job\n0::/slice/job\n");
  // Hybrid layout at unusual places; the v1 mount shows only the subtree /slice.
  root.Write("proc/self/mountinfo",
             "25 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"
             "31 25 0:26 / /sys/fs/cgroup/v2 rw - cgroup2 cgroup2 rw\n"
             "32 25 0:27 /slice /sys/fs/cgroup/cpux rw - cgroup cgroup rw,cpu,cpuacct\n"
             "33 25 0:28 / /sys/fs/cgroup/mem rw - cgroup cgroup rw,memory\n");
  root.Write("sys/fs/cgroup/cpux/job/cpu.stat", "nr_periods 9\nnr_throttled 8\nthrottled_time 7\n");
  root.Write("sys/fs/cgroup/v2/slice/job/cpu.stat", "usage_usec 3\n");
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({100});
  Sampled a = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.throttled_ns", 100, -1, "cpu,cpuacct:/slice/job"), 7);
  EXPECT_DOUBLE_EQ(*a.Get("cgroup.cpu.usage_ns", 100, -1, "/slice/job"), 3000);
}

TEST(HostCounterPressure, HostPressureAndMissingPsiWarnedOnce) {
  FakeRoot root;
  root.Write("proc/pressure/cpu", "some avg10=2.50 avg60=1.00 avg300=0.50 total=123456\n");
  root.Write("proc/pressure/memory",
             "some avg10=0.00 avg60=0.00 avg300=0.00 total=10\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=5\n");
  root.Write("proc/pressure/io", "some avg10=0.10 avg60=0.00 avg300=0.00 total=99\n");
  HostCounterSampler sampler(root.Options());
  Sampled a = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*a.Get("psi.cpu.some.avg10"), 2.5);
  EXPECT_DOUBLE_EQ(*a.Get("psi.cpu.some.total_ns"), 123456e3);
  EXPECT_DOUBLE_EQ(*a.Get("psi.memory.full.total_ns"), 5e3);
  EXPECT_DOUBLE_EQ(*a.Get("psi.io.some.avg10"), 0.1);

  FakeRoot bare;
  HostCounterSampler without(bare.Options());
  EXPECT_EQ(SampleOnce(without).Count("psi."), 0u);
  SampleOnce(without);
  const auto warnings = without.TakeWarnings();
  size_t psi = 0;
  for (const auto& w : warnings) psi += w.find("pressure stall") != std::string::npos;
  EXPECT_EQ(psi, 1u) << ::testing::PrintToString(warnings);
}

TEST(HostCounterNetDev, OneReadPerNamespaceLabelledByInterface) {
  FakeRoot root;
  const std::string header =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
      "carrier compressed\n";
  root.Write("proc/net/dev", header + "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n" +
                                 "  eth0: 5000 50 1 2 0 0 0 0 7000 70 3 4 0 0 0 0\n" + "  bad: 1 2 3\n");
  root.Write("proc/self/ns/net", "");
  root.Write("proc/ns_b", "");
  for (const int pid : {100, 200, 201}) root.Process(pid, 1, 0, 10, {{pid, 10, 1, 1, 1, 1}});
  root.Link("proc/self/ns/net", "proc/100/ns/net");  // the recorder's own namespace
  root.Link("proc/ns_b", "proc/200/ns/net");         // 200 and 201 share another one
  root.Link("proc/ns_b", "proc/201/ns/net");
  root.Write("proc/200/net/dev", header + "  eth0: 11 1 0 0 0 0 0 0 22 2 0 0 0 0 0 0\n");
  root.Write("proc/201/net/dev", header + "  eth0: 11 1 0 0 0 0 0 0 22 2 0 0 0 0 0 0\n");
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({100, 200, 201});
  Sampled a = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*a.Get("net.rx_bytes", -1, -1, "lo"), 1000);
  EXPECT_DOUBLE_EQ(*a.Get("net.rx_errs", -1, -1, "eth0"), 1);
  EXPECT_DOUBLE_EQ(*a.Get("net.rx_drop", -1, -1, "eth0"), 2);
  EXPECT_DOUBLE_EQ(*a.Get("net.tx_bytes", -1, -1, "eth0"), 7000);
  EXPECT_DOUBLE_EQ(*a.Get("net.tx_packets", -1, -1, "eth0"), 70);
  EXPECT_DOUBLE_EQ(*a.Get("net.tx_drop", -1, -1, "eth0"), 4);
  EXPECT_DOUBLE_EQ(*a.Get("net.rx_bytes", 200, -1, "eth0"), 11);
  EXPECT_DOUBLE_EQ(*a.Get("net.tx_bytes", 200, -1, "eth0"), 22);
  EXPECT_FALSE(a.Get("net.rx_bytes", 201, -1, "eth0").has_value());  // same namespace as 200
  EXPECT_FALSE(a.Get("net.rx_bytes", 100, -1, "eth0").has_value());  // same as the recorder's
  EXPECT_EQ(*a.Get("net.ns_inode", 200), *a.Get("net.ns_inode", 201));
  EXPECT_NE(*a.Get("net.ns_inode", 100), *a.Get("net.ns_inode", 200));
  EXPECT_EQ(sampler.stats().malformed, 1u);

  // 200 exits: the namespace's series move to 201.
  root.Remove("proc/200");
  Sampled b = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*b.Get("net.rx_bytes", 201, -1, "eth0"), 11);
}

TEST(HostCounterNetDev, LinkSamplesReadTheInterfacesAloneIntoTheFullSamplesSeries) {
  // The recorder's faster link sampling (RecordOptions::link_hz): between full samples, the byte counters of
  // the namespaces the last full sample read and nothing else, in the same series as the full samples' (a step's
  // traffic is one series read more often, not a second series).
  FakeRoot root;
  const std::string header =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
      "carrier compressed\n";
  auto dev = [&](uint64_t rx) {
    return header + "  eth0: " + std::to_string(rx) + " 1 0 0 0 0 0 0 22 2 0 0 0 0 0 0\n";
  };
  root.Write("proc/net/dev", dev(5000));
  root.Write("proc/self/ns/net", "");
  root.Write("proc/ns_b", "");
  root.Process(200, 1, 0, 10, {{200, 10, 1, 1, 1, 1}});
  root.Link("proc/ns_b", "proc/200/ns/net");
  root.Write("proc/200/net/dev", dev(11));
  HostCounterSampler sampler(root.Options());
  sampler.SetPids({200});
  Sampled before{&sampler, {}};
  sampler.SampleLinks(1, &before.samples);
  EXPECT_TRUE(before.samples.empty()) << "no namespace known before a full sample";
  const Sampled full = SampleOnce(sampler, 1);
  const size_t series_after_full = sampler.series().size();
  root.Write("proc/200/net/dev", dev(4096));
  Sampled links{&sampler, {}};
  sampler.SampleLinks(2, &links.samples);
  EXPECT_DOUBLE_EQ(*links.Get("net.rx_bytes", 200, -1, "eth0"), 4096);
  EXPECT_DOUBLE_EQ(*links.Get("net.rx_bytes", -1, -1, "eth0"), 5000);
  EXPECT_DOUBLE_EQ(*links.Get("net.tx_bytes", 200, -1, "eth0"), 22);
  EXPECT_FALSE(links.Get("net.rx_packets", 200, -1, "eth0").has_value()) << "bytes only";
  EXPECT_FALSE(links.Get("net.ns_inode", 200).has_value()) << "no namespace lookup per pid";
  EXPECT_EQ(sampler.series().size(), series_after_full) << "no new series: the full sample's, read again";
  for (const CounterSample& s : links.samples) {
    EXPECT_TRUE(sampler.series()[s.series].name.starts_with("net.")) << sampler.series()[s.series].name;
    EXPECT_EQ(s.ts_ns, 2u);
  }
  EXPECT_GT(full.samples.size(), links.samples.size()) << "the process's own counters are not read";
  EXPECT_EQ(links.Count("proc."), 0u);
  EXPECT_EQ(sampler.stats().samples, 1u) << "a link sample is not a full sample";
  // A process in a namespace of its own that appears after the full sample is read from the next full one on.
  root.Write("proc/ns_c", "");
  root.Process(300, 1, 0, 10, {{300, 10, 1, 1, 1, 1}});
  root.Link("proc/ns_c", "proc/300/ns/net");
  root.Write("proc/300/net/dev", dev(77));
  sampler.SetPids({200, 300});
  Sampled early{&sampler, {}};
  sampler.SampleLinks(3, &early.samples);
  EXPECT_FALSE(early.Get("net.rx_bytes", 300, -1, "eth0").has_value());
  SampleOnce(sampler, 4);
  Sampled later{&sampler, {}};
  sampler.SampleLinks(5, &later.samples);
  EXPECT_DOUBLE_EQ(*later.Get("net.rx_bytes", 300, -1, "eth0"), 77);
}

TEST(HostCounterDiskstats, SkipsLoopRamAndPartitionsAndScalesUnits) {
  FakeRoot root;
  root.Write("proc/diskstats",
             "   7       0 loop0 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
             "   1       0 ram0 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
             "   8       0 sda 100 5 2000 30 50 7 1000 40 2 60 70 0 0 0 0 0 0\n"
             "   8       1 sda1 90 5 1800 25 45 7 900 35 1 55 60 0 0 0 0 0 0\n"
             " 259       0 nvme0n1 1 2 3\n");
  root.Write("sys/class/block/sda1/partition", "1\n");
  HostCounterSampler sampler(root.Options());
  Sampled a = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*a.Get("disk.reads", -1, -1, "sda"), 100);
  EXPECT_DOUBLE_EQ(*a.Get("disk.read_bytes", -1, -1, "sda"), 2000.0 * 512);
  EXPECT_DOUBLE_EQ(*a.Get("disk.read_time_ns", -1, -1, "sda"), 30e6);
  EXPECT_DOUBLE_EQ(*a.Get("disk.writes", -1, -1, "sda"), 50);
  EXPECT_DOUBLE_EQ(*a.Get("disk.write_bytes", -1, -1, "sda"), 1000.0 * 512);
  EXPECT_DOUBLE_EQ(*a.Get("disk.in_flight", -1, -1, "sda"), 2);
  EXPECT_DOUBLE_EQ(*a.Get("disk.io_time_ns", -1, -1, "sda"), 60e6);
  EXPECT_DOUBLE_EQ(*a.Get("disk.weighted_io_time_ns", -1, -1, "sda"), 70e6);
  EXPECT_EQ(a.Count("disk."), 9u);  // sda only
  EXPECT_EQ(sampler.stats().malformed, 1u);

  // A counter that goes down (device reset) is held, then grows from the new base.
  root.Write("proc/diskstats", "   8       0 sda 10 5 2000 30 50 7 1000 40 2 60 70\n");
  EXPECT_DOUBLE_EQ(*SampleOnce(sampler).Get("disk.reads", -1, -1, "sda"), 100);
  root.Write("proc/diskstats", "   8       0 sda 15 5 2000 30 50 7 1000 40 2 60 70\n");
  EXPECT_DOUBLE_EQ(*SampleOnce(sampler).Get("disk.reads", -1, -1, "sda"), 105);
  EXPECT_EQ(sampler.stats().counter_resets, 1u);
}

TEST(HostCounterInfiniband, PortCountersWhenPresent) {
  FakeRoot root;
  const std::string port = "sys/class/infiniband/mlx5_0/ports/1/counters/";
  root.Write(port + "port_xmit_data", "1000\n");
  root.Write(port + "port_rcv_data", "250\n");
  root.Write(port + "port_xmit_packets", "10\n");
  root.Write(port + "port_rcv_packets", "5\n");
  root.Write(port + "port_xmit_wait", "77\n");
  root.Write(port + "symbol_error", "x\n");
  root.Write("sys/class/infiniband/mlx5_1/ports/2/counters/port_rcv_data", "8\n");
  HostCounterSampler sampler(root.Options());
  Sampled a = SampleOnce(sampler);
  EXPECT_DOUBLE_EQ(*a.Get("ib.xmit_bytes", -1, 1, "mlx5_0"), 4000);
  EXPECT_DOUBLE_EQ(*a.Get("ib.rcv_bytes", -1, 1, "mlx5_0"), 1000);
  EXPECT_DOUBLE_EQ(*a.Get("ib.xmit_packets", -1, 1, "mlx5_0"), 10);
  EXPECT_DOUBLE_EQ(*a.Get("ib.rcv_packets", -1, 1, "mlx5_0"), 5);
  EXPECT_DOUBLE_EQ(*a.Get("ib.xmit_wait", -1, 1, "mlx5_0"), 77);
  EXPECT_FALSE(a.Get("ib.symbol_errors", -1, 1, "mlx5_0").has_value());
  EXPECT_DOUBLE_EQ(*a.Get("ib.rcv_bytes", -1, 2, "mlx5_1"), 32);
  EXPECT_EQ(sampler.stats().malformed, 1u);

  FakeRoot bare;
  HostCounterSampler none(bare.Options());
  EXPECT_EQ(SampleOnce(none).Count("ib."), 0u);
}

// A fake NVML with one GPU.
namespace fake_nvml {
int xid_pending = 0;
int Init() { return 0; }
int Shutdown() { return 0; }
const char* ErrorString(int) { return "fake error"; }
int Count(unsigned int* n) {
  *n = 1;
  return 0;
}
int ByIndex(unsigned int, NvmlApi::Device* d) {
  *d = reinterpret_cast<NvmlApi::Device>(0x1234);
  return 0;
}
int Uuid(NvmlApi::Device, char* buf, unsigned int) {
  std::snprintf(buf, 64, "GPU-fake-0");
  return 0;
}
int Utilization(NvmlApi::Device, NvmlApi::Utilization* u) {
  *u = {87, 40};
  return 0;
}
int Clock(NvmlApi::Device, int type, unsigned int* mhz) {
  *mhz = type == NvmlApi::kClockSm ? 1410 : 0;
  return 0;
}
int Throttle(NvmlApi::Device, unsigned long long* reasons) {
  *reasons = 0x4;  // SW power cap
  return 0;
}
int Pcie(NvmlApi::Device, int counter, unsigned int* kbps) {
  *kbps = counter == NvmlApi::kPcieTxBytes ? 1000 : 2000;
  return 0;
}
int Power(NvmlApi::Device, unsigned int* mw) {
  *mw = 250500;
  return 0;
}
int Temperature(NvmlApi::Device, int, unsigned int*) { return NvmlApi::kErrorNotSupported; }
int EventSetCreate(NvmlApi::EventSet* set) {
  *set = reinterpret_cast<NvmlApi::EventSet>(0x5678);
  return 0;
}
int Register(NvmlApi::Device, unsigned long long, NvmlApi::EventSet) { return 0; }
int Wait(NvmlApi::EventSet, NvmlApi::EventData* data, unsigned int timeout_ms) {
  EXPECT_EQ(timeout_ms, 0u);
  if (xid_pending == 0) return NvmlApi::kErrorTimeout;
  --xid_pending;
  *data = {};
  data->device = reinterpret_cast<NvmlApi::Device>(0x1234);
  data->event_type = NvmlApi::kEventXidCritical;
  data->event_data = 79;
  return 0;
}
int Free(NvmlApi::EventSet) { return 0; }
}  // namespace fake_nvml

TEST(HostCounterNvml, ReadsAFakeNvmlAndDropsUnsupportedQueries) {
  NvmlApi api;
  api.init = fake_nvml::Init;
  api.shutdown = fake_nvml::Shutdown;
  api.error_string = fake_nvml::ErrorString;
  api.device_count = fake_nvml::Count;
  api.device_by_index = fake_nvml::ByIndex;
  api.uuid = fake_nvml::Uuid;
  api.utilization = fake_nvml::Utilization;
  api.clock = fake_nvml::Clock;
  api.throttle_reasons = fake_nvml::Throttle;
  api.pcie_throughput = fake_nvml::Pcie;
  api.power_mw = fake_nvml::Power;
  api.temperature = fake_nvml::Temperature;
  api.event_set_create = fake_nvml::EventSetCreate;
  api.register_events = fake_nvml::Register;
  api.event_set_wait = fake_nvml::Wait;
  api.event_set_free = fake_nvml::Free;
  NvmlReader reader(api, nullptr);
  std::string why;
  ASSERT_TRUE(reader.Init(&why)) << why;

  SeriesTable table;
  Diagnostics diag;
  std::vector<CounterSample> out;
  auto value = [&](std::string_view name) -> std::optional<double> {
    for (const CounterSample& s : out) {
      const CounterSeries& c = table.series()[s.series];
      if (c.name == name) {
        EXPECT_EQ(c.index, 0);
        EXPECT_EQ(c.label, "GPU-fake-0");
        return s.value;
      }
    }
    return std::nullopt;
  };
  fake_nvml::xid_pending = 2;
  {
    CounterSink sink(&table, &diag, 5, &out);
    reader.Sample(sink);
  }
  EXPECT_DOUBLE_EQ(*value("gpu.util_pct"), 87);
  EXPECT_DOUBLE_EQ(*value("gpu.mem_util_pct"), 40);
  EXPECT_DOUBLE_EQ(*value("gpu.sm_clock_mhz"), 1410);
  EXPECT_DOUBLE_EQ(*value("gpu.throttle_reasons"), 4);
  EXPECT_DOUBLE_EQ(*value("gpu.pcie_tx_bytes_per_s"), 1000.0 * 1024);
  EXPECT_DOUBLE_EQ(*value("gpu.pcie_rx_bytes_per_s"), 2000.0 * 1024);
  EXPECT_DOUBLE_EQ(*value("gpu.power_w"), 250.5);
  EXPECT_FALSE(value("gpu.temp_c").has_value());
  EXPECT_DOUBLE_EQ(*value("gpu.xid_errors"), 2);
  EXPECT_DOUBLE_EQ(*value("gpu.last_xid"), 79);
  out.clear();
  {
    CounterSink sink(&table, &diag, 6, &out);
    reader.Sample(sink);
  }
  EXPECT_FALSE(value("gpu.pcie_tx_bytes_per_s").has_value());  // every 10th sample only
  EXPECT_DOUBLE_EQ(*value("gpu.xid_errors"), 2);
  const auto warnings = diag.Take();
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_NE(warnings[0].find("temperature"), std::string::npos);
}

TEST(HostCounterNvml, MissingLibraryIsReportedOnceAndSamplingGoesOn) {
  FakeRoot root;
  root.Write("proc/stat", "cpu0 1 2 3 4 5 6 7 8 0 0\n");
  HostCounterSampler::Options options = root.Options();
  options.nvml = true;
  options.nvml_library = "libstrata-test-no-such-nvml.so.1";
  HostCounterSampler sampler(options);
  EXPECT_TRUE(SampleOnce(sampler).Get("cpu.user_ns", -1, 0).has_value());
  EXPECT_TRUE(SampleOnce(sampler).Get("cpu.user_ns", -1, 0).has_value());
  size_t nvml = 0;
  for (const auto& w : sampler.TakeWarnings()) nvml += w.starts_with("NVML not available");
  EXPECT_EQ(nvml, 1u);
}

TEST(HostCounterRealProc, OwnPidOnThisMachine) {
  HostCounterSampler::Options options;  // real /proc and /sys, and NVML if a driver is there
  HostCounterSampler sampler(options);
  const int self = static_cast<int>(::getpid());
  sampler.SetPids({self});
  Sampled a = SampleOnce(sampler, 1);
  // Spin 60 ms of this thread's CPU time (not wall time: on a busy machine the thread may wait for a CPU).
  auto cpu_ns = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  const int64_t until = cpu_ns() + 60'000'000;
  volatile uint64_t sink = 0;
  while (cpu_ns() < until) sink = sink + 1;
  Sampled b = SampleOnce(sampler, 2);
  ASSERT_TRUE(a.Get("proc.oncpu_ns", self).has_value());
  EXPECT_GE(*b.Get("proc.oncpu_ns", self) - *a.Get("proc.oncpu_ns", self), 30e6);
  EXPECT_GT(*b.Get("proc.rss_bytes", self), 0);
  EXPECT_GE(*b.Get("proc.threads", self), 1);
  EXPECT_TRUE(b.Get("net.rx_bytes", -1, -1, "lo").has_value());
  EXPECT_TRUE(b.Get("cpu.user_ns", -1, 0).has_value());
  EXPECT_TRUE(b.Get("cpu.busy_pct", -1, -1).has_value());
  // Nothing malformed in the real files; whatever the machine lacks (PSI, NVML) is a warning, not a crash.
  EXPECT_EQ(sampler.stats().malformed, 0u) << ::testing::PrintToString(sampler.TakeWarnings());
}

}  // namespace
}  // namespace strata::recorder
