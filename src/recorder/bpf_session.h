// The loaded BPF side of `strata record` (bpf/record.bpf.c through its bpftool skeleton): open → load →
// attach → poll, and one cleanup path (the destructor detaches everything). Never blocks the traced
// processes: the ring buffer drops when full and the drops are counted (Stats()).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "recorder/bpf/record_events.h"
#include "recorder/probe_catalog.h"
#include "recorder/python_frames.h"

struct record_bpf;
struct ring_buffer;
struct bpf_link;

namespace strata::recorder {

struct BpfStats {
  uint64_t emitted = 0, dropped = 0, no_start = 0, stack_failures = 0, filtered = 0, py_misses = 0;
};

class BpfSession {
 public:
  BpfSession() = default;
  ~BpfSession();
  BpfSession(const BpfSession&) = delete;
  BpfSession& operator=(const BpfSession&) = delete;

  // Checks the prerequisites (root or CAP_BPF, BTF) and loads the programs. Messages say what is missing.
  Status Load(bool follow_children);
  Status Trace(int tgid);  // adds a process to the traced set
  void Untrace(int tgid);
  // Samples of `tgid` carry its Python frames, read through `offsets` (python_frames.h).
  Status TracePython(int tgid, const strata_py_offsets& offsets);
  Status AttachScheduling();
  // Perf-event CPU sampling on every online CPU at `hz` (0 = off).
  Status AttachSampling(unsigned hz);
  // Uprobes (and uretprobes) on every probe point; probe index = position in `points`. Failures per point
  // go to `notes`; returns the number attached.
  size_t AttachProbes(const std::vector<ProbePoint>& points, std::vector<std::string>* notes);
  // USDT python:gc__start / gc__done in `binary` (a python executable or libpython).
  Status AttachPythonGc(const std::string& binary);

  // Calls `handle` for each event waiting (at most `timeout_ms` of waiting). Returns events seen or < 0.
  using EventHandler = std::function<void(const void* data, size_t size)>;
  void SetHandler(EventHandler handle) { handler_ = std::move(handle); }
  int Poll(int timeout_ms);

  // Lets go of every uprobe without waiting for the kernel: detaching one waits for a grace period (35-70
  // ms each, in series: 5 s for a PyTorch job's 70-odd probes). A detached grandchild (own session) keeps
  // their descriptors and closes them once this process has exited, so neither `strata record` nor its
  // caller waits; the probes are gone seconds later. Returns once the grandchild has let go of every other
  // descriptor (its standard streams to /dev/null), so nothing of the teardown outlives this process holding
  // its stdout/stderr (a busy machine could delay the grandchild past strata record's exit). Call once, when
  // nothing more will be read.
  void DetachInBackground();

  BpfStats Stats() const;
  std::map<std::pair<uint32_t, uint32_t>, strata_call_totals> CallTotals() const;  // (tgid, probe) →
  // Since when thread `tid` is off CPU, with where it went to sleep (nullopt: it is on CPU, or untraced).
  std::optional<strata_off_cpu_start> OffCpuSince(uint32_t tid) const;
  // The Python frames (innermost first) a Python main thread left the CPU in (empty: none).
  std::vector<PythonFrameAddress> PythonStackOffCpu(uint32_t tid) const;
  // Instruction pointers of a stack id (empty when evicted or unknown).
  std::vector<uint64_t> Stack(int32_t id) const;

 private:
  static int OnRingEvent(void* ctx, void* data, size_t size);

  record_bpf* skel_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::vector<bpf_link*> links_;
  std::vector<int> perf_fds_;
  EventHandler handler_;
};

}  // namespace strata::recorder
