// BPF session: skeleton lifecycle, attachment of tracepoints, perf events, uprobes and USDT probes,
// ring-buffer polling and reading of the statistics maps (see bpf_session.h).
#include "recorder/bpf_session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

// The skeleton bpftool generates is C: its rodata struct spells booleans `_Bool` (a C keyword clang's C++
// does not know) and holds the BPF object as one string literal longer than C++ promises to support.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Woverlength-strings"
#define _Bool bool
#endif
#include "record.skel.h"
#if defined(__clang__)
#undef _Bool
#pragma clang diagnostic pop
#endif
#include "store/slice_names.h"

namespace strata::recorder {
namespace {

int SilentLibbpfPrint(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_WARN && std::getenv("STRATA_BPF_DEBUG")) return std::vfprintf(stderr, format, args);
  if (level == LIBBPF_DEBUG && std::getenv("STRATA_BPF_DEBUG")) return std::vfprintf(stderr, format, args);
  return 0;
}

std::string Errno(int err) { return std::strerror(err < 0 ? -err : err); }

// Destroys every link. Detaching a uprobe whose descriptor is the last reference waits for the kernel's
// grace period (35-70 ms each, in series); see DetachInBackground for how strata avoids waiting.
void DestroyLinks(std::vector<bpf_link*>& links) {
  for (bpf_link* link : links) bpf_link__destroy(link);
  links.clear();
}

// In the teardown process: standard streams to /dev/null and every descriptor closed but `keep` (sorted),
// so the recorder's stdout/stderr pipes and output files close when strata record exits, not when the
// probes are gone seconds later (`strata record ... | tee` would wait for them). Async-signal-safe only.
void KeepOnly(const std::vector<int>& keep) {
  const int null = ::open("/dev/null", O_RDWR);
  if (null >= 0)
    for (int fd : {0, 1, 2}) ::dup2(null, fd);
  unsigned int from = 3;
  for (int fd : keep) {
    if (fd < 0 || static_cast<unsigned int>(fd) < from) continue;
    if (static_cast<unsigned int>(fd) > from) ::syscall(SYS_close_range, from, static_cast<unsigned int>(fd) - 1, 0);
    from = static_cast<unsigned int>(fd) + 1;
  }
  ::syscall(SYS_close_range, from, ~0U, 0);
}

}  // namespace

void BpfSession::DetachInBackground() {
  if (links_.empty()) return;
  std::vector<int> fds;
  for (bpf_link* link : links_) fds.push_back(bpf_link__fd(link));
  // `gate` lets the grandchild finish when this process exits; `ready`'s write end is in no `keep`, so it closes in
  // the grandchild with every descriptor it lets go of (after its standard streams went to /dev/null): EOF on
  // ready[0] tells this process that nothing of the teardown holds its stdout/stderr any more.
  int gate[2], ready[2];
  if (::pipe(gate) != 0) return DestroyLinks(links_);
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    ::close(gate[0]);
    ::close(gate[1]);
    return DestroyLinks(links_);
  }
  std::vector<int> keep = fds;  // sorted before the fork: the child may not allocate
  keep.push_back(gate[0]);
  std::sort(keep.begin(), keep.end());
  const pid_t child = ::fork();
  if (child < 0) {
    for (int fd : {gate[0], gate[1], ready[0], ready[1]}) ::close(fd);
    return DestroyLinks(links_);
  }
  if (child == 0) {  // only async-signal-safe calls from here: the parent has other threads
    if (::fork() != 0) ::_exit(0);
    ::setsid();
    KeepOnly(keep);
    char byte;
    while (::read(gate[0], &byte, 1) < 0 && errno == EINTR) {
    }
    for (int fd : fds) ::close(fd);
    ::_exit(0);
  }
  ::close(gate[0]);
  ::close(ready[1]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  char byte;
  while (::read(ready[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(ready[0]);
  // The grandchild holds every probe's descriptor, so closing ours is cheap (not the last reference) and
  // disables the probes at once; `gate` closes when this process exits and lets the grandchild finish.
  DestroyLinks(links_);
}

BpfSession::~BpfSession() {
  if (ring_) ring_buffer__free(ring_);
  DestroyLinks(links_);
  for (int fd : perf_fds_) ::close(fd);
  if (skel_) record_bpf__destroy(skel_);
}

Status BpfSession::Load(bool follow_children) {
  libbpf_set_print(SilentLibbpfPrint);
  if (::geteuid() != 0)
    return Status::Resource(
        "strata record needs root (it loads eBPF programs and attaches probes): run it with sudo, or give the "
        "binary CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE");
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux"))
    return Status::Unsupported(
        "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing), which strata record's CO-RE programs "
        "need: use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
  skel_ = record_bpf__open();
  if (!skel_) return Status::Resource("cannot open the BPF programs: " + Errno(errno));
  skel_->rodata->follow_children = follow_children ? 1 : 0;
  // Programs attached on demand only: sampling, probes and USDT stay loaded but unattached when unused.
  if (int err = record_bpf__load(skel_); err != 0)
    return Status::Resource("cannot load the BPF programs into the kernel: " + Errno(err) +
                            " (set STRATA_BPF_DEBUG=1 to see the verifier's log)");
  ring_ = ring_buffer__new(bpf_map__fd(skel_->maps.events), &BpfSession::OnRingEvent, this, nullptr);
  if (!ring_) return Status::Resource("cannot open the BPF ring buffer: " + Errno(errno));
  return Status::Ok();
}

Status BpfSession::Trace(int tgid) {
  const uint32_t key = static_cast<uint32_t>(tgid), one = 1;
  if (bpf_map__update_elem(skel_->maps.traced, &key, sizeof key, &one, sizeof one, BPF_ANY) != 0)
    return Status::Resource(fmt::format("cannot trace pid {}: {}", tgid, Errno(errno)));
  return Status::Ok();
}

void BpfSession::Untrace(int tgid) {
  const uint32_t key = static_cast<uint32_t>(tgid);
  bpf_map__delete_elem(skel_->maps.traced, &key, sizeof key, 0);
  bpf_map__delete_elem(skel_->maps.py_procs, &key, sizeof key, 0);
}

Status BpfSession::TracePython(int tgid, const strata_py_offsets& offsets) {
  const uint32_t key = static_cast<uint32_t>(tgid);
  if (bpf_map__update_elem(skel_->maps.py_procs, &key, sizeof key, &offsets, sizeof offsets, BPF_ANY) != 0)
    return Status::Resource(fmt::format("cannot read Python frames of pid {}: {}", tgid, Errno(errno)));
  return Status::Ok();
}

Status BpfSession::AttachScheduling() {
  for (bpf_program* prog :
       {skel_->progs.on_sched_switch, skel_->progs.on_sched_wakeup, skel_->progs.on_sched_wakeup_new,
        skel_->progs.on_fork, skel_->progs.on_exec, skel_->progs.on_exit}) {
    bpf_link* link = bpf_program__attach(prog);
    if (!link) return Status::Resource(fmt::format("cannot attach {}: {}", bpf_program__name(prog), Errno(errno)));
    links_.push_back(link);
  }
  return Status::Ok();
}

Status BpfSession::AttachSampling(unsigned hz) {
  if (hz == 0) return Status::Ok();
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_freq = hz;
    attr.freq = 1;
    const int fd = static_cast<int>(::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) {
      if (errno == ENODEV) continue;  // offline CPU
      return Status::Resource(fmt::format("cannot open a perf event on CPU {}: {}", cpu, Errno(errno)));
    }
    perf_fds_.push_back(fd);
    bpf_link* link = bpf_program__attach_perf_event(skel_->progs.on_cpu_sample, fd);
    if (!link) return Status::Resource(fmt::format("cannot attach CPU sampling on CPU {}: {}", cpu, Errno(errno)));
    links_.push_back(link);
  }
  return Status::Ok();
}

size_t BpfSession::AttachProbes(const std::vector<ProbePoint>& points, std::vector<std::string>* notes) {
  size_t attached = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const ProbePoint& p = points[i];
    const bool collective = p.kind == ProbeKind::kCollective || p.kind == ProbeKind::kCollectiveEnqueue ||
                            p.kind == ProbeKind::kCollectiveDone || p.kind == ProbeKind::kCollectiveBuffer;
    const uint64_t cookie = static_cast<uint64_t>(i) | (p.emit ? STRATA_PROBE_EMIT : 0) |
                            (p.emit && collective ? STRATA_PROBE_ENTRY : 0) |
                            (CollectiveKindOf(p.symbol) == CollectiveKind::kC10dMethod ? STRATA_PROBE_ARG2 : 0) |
                            (p.count_arg == 2   ? STRATA_PROBE_COUNT2
                             : p.count_arg == 3 ? STRATA_PROBE_COUNT3
                             : p.count_arg == 4 ? STRATA_PROBE_COUNT4
                                                : 0);
    bpf_uprobe_opts enter_opts{};
    enter_opts.sz = sizeof enter_opts;
    enter_opts.bpf_cookie = cookie;
    bpf_uprobe_opts return_opts = enter_opts;
    return_opts.retprobe = true;
    // The return probe first: a call that enters once the entry probe is attached then always has its return
    // (attached the other way, calls entering between the two attaches were recorded as never returning, and
    // a live window kept them as calls still inside: agent_nodes_hang).
    bpf_link* ret = !p.returns ? nullptr
                               : bpf_program__attach_uprobe_opts(skel_->progs.on_call_return, -1, p.library.c_str(),
                                                                 p.file_offset, &return_opts);
    if (p.returns && !ret) {
      if (notes) notes->push_back(fmt::format("cannot probe {} in {}: {}", p.symbol, p.library, Errno(errno)));
      continue;
    }
    bpf_link* enter =
        bpf_program__attach_uprobe_opts(skel_->progs.on_call_enter, -1, p.library.c_str(), p.file_offset, &enter_opts);
    if (!enter) {
      if (ret) bpf_link__destroy(ret);
      if (notes) notes->push_back(fmt::format("cannot probe {} in {}: {}", p.symbol, p.library, Errno(errno)));
      continue;
    }
    links_.push_back(enter);
    if (ret) links_.push_back(ret);
    ++attached;
  }
  return attached;
}

Status BpfSession::AttachPythonGc(const std::string& binary) {
  bpf_link* start =
      bpf_program__attach_usdt(skel_->progs.on_gc_start, -1, binary.c_str(), "python", "gc__start", nullptr);
  if (!start) return Status::Unsupported(fmt::format("no python:gc__start probe in {}: {}", binary, Errno(errno)));
  bpf_link* done = bpf_program__attach_usdt(skel_->progs.on_gc_done, -1, binary.c_str(), "python", "gc__done", nullptr);
  if (!done) {
    bpf_link__destroy(start);
    return Status::Unsupported(fmt::format("no python:gc__done probe in {}: {}", binary, Errno(errno)));
  }
  links_.push_back(start);
  links_.push_back(done);
  return Status::Ok();
}

int BpfSession::OnRingEvent(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfSession*>(ctx);
  if (self->handler_) self->handler_(data, size);
  return 0;
}

int BpfSession::Poll(int timeout_ms) {
  if (!ring_) return -1;
  // Events are submitted without wakeups (see record.bpf.c): wait, then drain whatever is there.
  const int woken = ring_buffer__poll(ring_, timeout_ms);
  const int drained = ring_buffer__consume(ring_);
  return woken < 0 ? woken : woken + (drained > 0 ? drained : 0);
}

BpfStats BpfSession::Stats() const {
  BpfStats stats;
  if (!skel_) return stats;
  const int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> values(cpus > 0 ? cpus : 1);
  auto read = [&](uint32_t index) {
    uint64_t sum = 0;
    if (bpf_map__lookup_elem(skel_->maps.stats, &index, sizeof index, values.data(), values.size() * sizeof(uint64_t),
                             0) == 0)
      for (uint64_t v : values) sum += v;
    return sum;
  };
  stats.dropped = read(STRATA_STAT_DROPPED);
  stats.emitted = read(STRATA_STAT_EMITTED);
  stats.no_start = read(STRATA_STAT_NO_START);
  stats.stack_failures = read(STRATA_STAT_STACK_FAIL);
  stats.filtered = read(STRATA_STAT_FILTERED);
  stats.py_misses = read(STRATA_STAT_PY_MISS);
  return stats;
}

std::map<std::pair<uint32_t, uint32_t>, strata_call_totals> BpfSession::CallTotals() const {
  std::map<std::pair<uint32_t, uint32_t>, strata_call_totals> out;
  if (!skel_) return out;
  strata_call_key key{}, next{};
  const strata_call_key* prev = nullptr;
  while (bpf_map__get_next_key(skel_->maps.call_totals, prev, &next, sizeof next) == 0) {
    strata_call_totals totals{};
    if (bpf_map__lookup_elem(skel_->maps.call_totals, &next, sizeof next, &totals, sizeof totals, 0) == 0)
      out[{next.tgid, next.probe}] = totals;
    key = next;
    prev = &key;
  }
  return out;
}

std::optional<strata_off_cpu_start> BpfSession::OffCpuSince(uint32_t tid) const {
  strata_off_cpu_start value{};
  if (!skel_ || bpf_map__lookup_elem(skel_->maps.off_cpu_since, &tid, sizeof tid, &value, sizeof value, 0) != 0)
    return std::nullopt;
  return value;
}

std::vector<PythonFrameAddress> BpfSession::PythonStackOffCpu(uint32_t tid) const {
  struct {  // record.bpf.c's strata_py_saved
    uint32_t depth, pad;
    uint64_t code[STRATA_PY_MAX_DEPTH];
    uint64_t instr[STRATA_PY_MAX_DEPTH];
  } saved{};
  if (!skel_ || bpf_map__lookup_elem(skel_->maps.py_off_stack, &tid, sizeof tid, &saved, sizeof saved, 0) != 0)
    return {};
  std::vector<PythonFrameAddress> frames(std::min<uint32_t>(saved.depth, STRATA_PY_MAX_DEPTH));
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = {saved.code[i], saved.instr[i]};
  return frames;
}

std::vector<uint64_t> BpfSession::Stack(int32_t id) const {
  if (!skel_ || id < 0) return {};
  std::vector<uint64_t> ips(127);
  const uint32_t key = static_cast<uint32_t>(id);
  if (bpf_map__lookup_elem(skel_->maps.stacks, &key, sizeof key, ips.data(), ips.size() * sizeof(uint64_t), 0) != 0)
    return {};
  size_t depth = 0;
  while (depth < ips.size() && ips[depth] != 0) ++depth;
  ips.resize(depth);
  return ips;
}

}  // namespace strata::recorder
