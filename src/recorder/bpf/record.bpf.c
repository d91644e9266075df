// Kernel side of `strata record`: scheduling, CPU stack samples, probed calls and Python GC of the traced
// processes, sent to user space through one ring buffer (user side: src/recorder/bpf_session.cc).
// Invariants: only processes in `traced` (and the processes they fork) produce events; a full ring buffer
// drops the event and counts it (STRATA_STAT_DROPPED), it never blocks the traced thread; per-thread
// start maps are cleared when a thread exits.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "record_events.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 follow_children = 1;
const volatile __u64 min_helper_off_cpu_ns = 1000000;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 8192);
  __type(key, __u32);    // tgid
  __type(value, __u32);  // 1
} traced SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32);  // tid
  __type(value, struct strata_off_cpu_start);
} off_cpu_since SEC(".maps");

struct runnable_since {
  __u64 ts;
  __u32 waker;
  __u32 pad;
};
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32);  // tid
  __type(value, struct runnable_since);
} runnable SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct strata_call_key);  // {tid, probe}
  __type(value, __u64);                 // entry time
} call_start SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, struct strata_call_key);  // {tgid, probe}
  __type(value, struct strata_call_totals);
} call_totals SEC(".maps");

struct gc_start_value {
  __u64 ts;
  __s32 generation;
  __u32 pad;
};
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);  // tid
  __type(value, struct gc_start_value);
} gc_start SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u32);  // tgid
  __type(value, struct strata_py_offsets);
} py_procs SEC(".maps");

struct strata_py_saved {
  __u32 depth;
  __u32 pad;
  __u64 code[STRATA_PY_MAX_DEPTH];
  __u64 instr[STRATA_PY_MAX_DEPTH];
};
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 8192);
  __type(key, __u32);  // tid of a Python main thread off CPU
  __type(value, struct strata_py_saved);
} py_off_stack SEC(".maps");
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct strata_py_saved);
} py_scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_STACK_TRACE);
  __uint(max_entries, 16384);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 16 * 1024 * 1024);
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, STRATA_STAT_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 stat) {
  __u64* v = bpf_map_lookup_elem(&stats, &stat);
  if (v) *v += 1;
}

static __always_inline int is_traced(__u32 tgid) { return tgid && bpf_map_lookup_elem(&traced, &tgid) != 0; }

static __always_inline void* reserve(__u64 size) {
  void* e = bpf_ringbuf_reserve(&events, size, 0);
  count(e ? STRATA_STAT_EMITTED : STRATA_STAT_DROPPED);
  return e;
}

// Submitting without a wakeup keeps the recorder from being woken (and from preempting a traced thread)
// on every event: user space drains the buffer on a timer, and is woken only when it is half full.
static __always_inline void submit(void* e) {
  __u64 flags =
      bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > 8 * 1024 * 1024 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
  bpf_ringbuf_submit(e, flags);
}

static __always_inline void fill_header(struct strata_event_header* h, __u32 kind, __u32 tid, __u32 tgid, __u64 ts) {
  h->kind = kind;
  h->cpu = bpf_get_smp_processor_id();
  h->tid = tid;
  h->tgid = tgid;
  h->ts = ts;
}

static __always_inline __u64 read_ptr(__u64 addr) {
  __u64 v = 0;
  if (bpf_probe_read_user(&v, sizeof(v), (const void*)addr)) return 0;
  return v;
}

// The Python frames of the current thread `tid` of a CPython process (py_procs) into `code` and `instr`
// (innermost first: each frame's code object and last instruction); returns how many. Its thread state is
// found among the main interpreter's by native thread id, then the frame chain is walked from the current
// frame. Reads the current task's memory only.
static __always_inline __u32 walk_py_stack(__u32 tid, struct strata_py_offsets* o, __u64* code, __u64* instr) {
  __u64 interp = read_ptr(o->runtime + o->interp_head);
  __u64 tstate = interp ? read_ptr(interp + o->threads_head) : 0;
  __u64 found = 0;
  for (int i = 0; i < STRATA_PY_MAX_THREADS && tstate; i++) {
    if (read_ptr(tstate + o->ts_native_id) == tid) {
      found = tstate;
      break;
    }
    tstate = read_ptr(tstate + o->ts_next);
  }
  __u64 cframe = found ? read_ptr(found + o->ts_cframe) : 0;
  __u64 frame = cframe ? read_ptr(cframe + o->cframe_current) : 0;
  __u32 depth = 0;
  for (int i = 0; i < STRATA_PY_MAX_DEPTH; i++) {
    if (!frame) break;
    __u64 c = read_ptr(frame + o->frame_code);
    if (!c) break;
    code[i] = c;
    instr[i] = read_ptr(frame + o->frame_instr);
    depth = i + 1;
    frame = read_ptr(frame + o->frame_previous);
  }
  if (depth == 0) count(STRATA_STAT_PY_MISS);  // a thread that never ran Python, or not yet
  return depth;
}

// The Python frames of a CPU sample of the current thread (same ts and tid as the sample).
static __always_inline void emit_py_stack(__u32 tid, __u32 tgid, __u64 ts) {
  struct strata_py_offsets* o = bpf_map_lookup_elem(&py_procs, &tgid);
  if (!o) return;
  struct strata_py_stack_event* e = reserve(sizeof(*e));
  if (!e) return;
  fill_header(&e->h, STRATA_EV_PY_STACK, tid, tgid, ts);
  e->depth = walk_py_stack(tid, o, e->code, e->instr);
  e->pad = 0;
  if (e->depth == 0) {
    bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
    return;
  }
  submit(e);
}

// A Python main thread leaving the CPU: its frames, kept until it comes back (they cannot change while it
// is off CPU), so that a long off-CPU interval says which Python function and line it waited in.
static __always_inline void save_py_stack_off_cpu(__u32 tid, __u32 tgid) {
  struct strata_py_offsets* o = bpf_map_lookup_elem(&py_procs, &tgid);
  if (!o || tid != tgid) return;
  __u32 zero = 0;
  struct strata_py_saved* saved = bpf_map_lookup_elem(&py_scratch, &zero);
  if (!saved) return;
  saved->depth = walk_py_stack(tid, o, saved->code, saved->instr);
  if (saved->depth)
    bpf_map_update_elem(&py_off_stack, &tid, saved, BPF_ANY);
  else
    bpf_map_delete_elem(&py_off_stack, &tid);
}

// The saved frames of `tid`, sent with its off-CPU interval that ended at `ts`.
static __always_inline void emit_py_stack_off_cpu(__u32 tid, __u32 tgid, __u64 ts) {
  struct strata_py_saved* saved = bpf_map_lookup_elem(&py_off_stack, &tid);
  if (!saved) return;
  struct strata_py_stack_event* e = reserve(sizeof(*e));
  if (!e) return;
  fill_header(&e->h, STRATA_EV_PY_STACK, tid, tgid, ts);
  __u32 depth = saved->depth < STRATA_PY_MAX_DEPTH ? saved->depth : STRATA_PY_MAX_DEPTH;
  for (int i = 0; i < STRATA_PY_MAX_DEPTH; i++)
    if (i < depth) {
      e->code[i] = saved->code[i];
      e->instr[i] = saved->instr[i];
    }
  e->depth = depth;
  e->pad = 0;
  submit(e);
}

// --- scheduling ------------------------------------------------------------------------------------
// The task's scheduling state. The field is `__state` since 5.14 and `state` before; sched_switch's own
// prev_state argument exists only since 5.18, so the state is read from the task (CO-RE: the field that
// the running kernel has) and the program loads on every kernel with BTF and the BPF ring buffer (5.8+).
struct task_struct___pre_5_14 {
  long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state(struct task_struct* task) {
  if (bpf_core_field_exists(task->__state)) return BPF_CORE_READ(task, __state);
  return (unsigned int)BPF_CORE_READ((struct task_struct___pre_5_14*)task, state);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct* prev, struct task_struct* next) {
  unsigned int prev_state = task_state(prev);
  __u64 now = bpf_ktime_get_ns();
  __u32 prev_tgid = prev->tgid, prev_tid = prev->pid;
  __u32 next_tgid = next->tgid, next_tid = next->pid;
  if (is_traced(prev_tgid)) {
    struct strata_off_cpu_start s = {};
    int still_runnable = preempt || (prev_state & 0xff) == 0;
    s.ts = now;
    s.state = still_runnable ? 0 : (prev_state & 0xffff);
    s.user_stack = -1;
    s.kernel_stack = -1;
    if (!still_runnable && prev_tid == prev_tgid) {
      // Where a main thread goes to sleep: read by user space only if it stays asleep (a stuck rank).
      s.user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
      s.kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
    }
    if (still_runnable) {
      s.preempted_by = next_tgid;
      bpf_probe_read_kernel_str(s.preempted_by_comm, sizeof(s.preempted_by_comm), next->comm);
      struct runnable_since r = {.ts = now, .waker = 0};
      bpf_map_update_elem(&runnable, &prev_tid, &r, BPF_ANY);
    }
    bpf_map_update_elem(&off_cpu_since, &prev_tid, &s, BPF_ANY);
    save_py_stack_off_cpu(prev_tid, prev_tgid);
  }
  if (is_traced(next_tgid)) {
    struct strata_off_cpu_start* s = bpf_map_lookup_elem(&off_cpu_since, &next_tid);
    if (!s) return 0;
    struct runnable_since* r = bpf_map_lookup_elem(&runnable, &next_tid);
    // Helper threads (gloo, intra-op pools) switch tens of thousands of times a second: of theirs, only
    // long or uninterruptible intervals are sent; main threads (the training loop) send every interval.
    int wanted = next_tid == next_tgid || now - s->ts >= min_helper_off_cpu_ns || (s->state & 2);
    struct strata_off_cpu_event* e = wanted ? reserve(sizeof(*e)) : 0;
    if (!wanted) count(STRATA_STAT_FILTERED);
    if (e) {
      fill_header(&e->h, STRATA_EV_OFF_CPU, next_tid, next_tgid, now);
      e->start = s->ts;
      e->state = s->state;
      e->preempted_by = s->preempted_by;
      __builtin_memcpy(e->preempted_by_comm, s->preempted_by_comm, sizeof(e->preempted_by_comm));
      e->ran_before = prev_tgid;
      e->runq_ns = (r && r->ts >= s->ts && r->ts <= now) ? now - r->ts : 0;
      e->waker = r ? r->waker : 0;
      submit(e);
      // Python frames of the waits (sleeping, any length: a data loader's reads are often short) and of
      // long preemptions; not of every short preemption.
      if (s->state != 0 || now - s->ts >= min_helper_off_cpu_ns) emit_py_stack_off_cpu(next_tid, next_tgid, now);
    }
    bpf_map_delete_elem(&off_cpu_since, &next_tid);
    if (r) bpf_map_delete_elem(&runnable, &next_tid);
  }
  return 0;
}

static __always_inline int on_wakeup(struct task_struct* p) {
  __u32 tgid = p->tgid, tid = p->pid;
  if (!is_traced(tgid)) return 0;
  struct runnable_since r = {.ts = bpf_ktime_get_ns(), .waker = (__u32)(bpf_get_current_pid_tgid() >> 32)};
  bpf_map_update_elem(&runnable, &tid, &r, BPF_ANY);
  return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_sched_wakeup, struct task_struct* p) { return on_wakeup(p); }

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_sched_wakeup_new, struct task_struct* p) { return on_wakeup(p); }

// --- processes -------------------------------------------------------------------------------------
static __always_inline void emit_process(__u32 kind, struct task_struct* p, __u32 ppid) {
  struct strata_process_event* e = reserve(sizeof(*e));
  if (!e) return;
  fill_header(&e->h, kind, p->pid, p->tgid, bpf_ktime_get_ns());
  e->ppid = ppid;
  e->exit_code = kind == STRATA_EV_EXIT ? (__u32)BPF_CORE_READ(p, exit_code) : 0;
  bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
  submit(e);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct* parent, struct task_struct* child) {
  __u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
  if (!follow_children || child_tgid == parent_tgid || !is_traced(parent_tgid)) return 0;
  __u32 one = 1;
  bpf_map_update_elem(&traced, &child_tgid, &one, BPF_ANY);
  emit_process(STRATA_EV_FORK, child, parent_tgid);
  return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct* p, pid_t old_pid, struct linux_binprm* bprm) {
  if (is_traced(p->tgid)) emit_process(STRATA_EV_EXEC, p, 0);
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct* p) {
  __u32 tgid = p->tgid, tid = p->pid;
  if (!is_traced(tgid)) return 0;
  bpf_map_delete_elem(&off_cpu_since, &tid);
  bpf_map_delete_elem(&runnable, &tid);
  bpf_map_delete_elem(&gc_start, &tid);
  bpf_map_delete_elem(&py_off_stack, &tid);
  if (tid == tgid) emit_process(STRATA_EV_EXIT, p, 0);
  return 0;
}

// --- CPU stack samples (perf event, attached per CPU by user space) ---------------------------------
SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32, tid = (__u32)id;
  if (!is_traced(tgid)) return 0;
  struct strata_sample_event* e = reserve(sizeof(*e));
  if (!e) return 0;
  __u64 now = bpf_ktime_get_ns();
  fill_header(&e->h, STRATA_EV_SAMPLE, tid, tgid, now);
  e->user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
  e->kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
  if (e->user_stack < 0 && e->kernel_stack < 0) count(STRATA_STAT_STACK_FAIL);
  submit(e);
  emit_py_stack(tid, tgid, now);
  return 0;
}

// --- probed calls: collectives (c10d, gloo, NCCL) and CUDA runtime -----------------------------------
SEC("uprobe")
int on_call_enter(struct pt_regs* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_traced(tgid)) return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  struct strata_call_key key = {.tgid = (__u32)id, .probe = (__u32)cookie & 0xffff};
  __u64 now = bpf_ktime_get_ns();
  bpf_map_update_elem(&call_start, &key, &now, BPF_ANY);
  if (!(cookie & STRATA_PROBE_ENTRY)) return 0;
  struct strata_call_enter_event* e = reserve(sizeof(*e));
  if (!e) return 0;
  fill_header(&e->h, STRATA_EV_CALL_ENTER, (__u32)id, tgid, now);
  // Both read at fixed offsets: the verifier refuses a context read at a computed one.
  __u64 arg1 = PT_REGS_PARM1(ctx), arg2 = PT_REGS_PARM2(ctx), arg3 = PT_REGS_PARM3(ctx), arg4 = PT_REGS_PARM4(ctx);
  barrier_var(arg1);
  barrier_var(arg2);
  barrier_var(arg3);
  barrier_var(arg4);
  e->arg = (cookie & STRATA_PROBE_ARG2) ? arg2 : arg1;
  e->count = (cookie & STRATA_PROBE_COUNT4)   ? arg4
             : (cookie & STRATA_PROBE_COUNT3) ? arg3
             : (cookie & STRATA_PROBE_COUNT2) ? arg2
                                              : 0;
  e->probe = key.probe;
  e->pad = 0;
  submit(e);
  return 0;
}

SEC("uretprobe")
int on_call_return(struct pt_regs* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32, tid = (__u32)id;
  if (!is_traced(tgid)) return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  struct strata_call_key key = {.tgid = tid, .probe = (__u32)cookie & 0xffff};
  __u64* start = bpf_map_lookup_elem(&call_start, &key);
  if (!start) {
    count(STRATA_STAT_NO_START);
    return 0;
  }
  __u64 begin = *start, now = bpf_ktime_get_ns();
  bpf_map_delete_elem(&call_start, &key);
  struct strata_call_key total_key = {.tgid = tgid, .probe = key.probe};
  struct strata_call_totals* t = bpf_map_lookup_elem(&call_totals, &total_key);
  if (t) {
    __sync_fetch_and_add(&t->calls, 1);
    __sync_fetch_and_add(&t->total_ns, now - begin);
  } else {
    struct strata_call_totals init = {.calls = 1, .total_ns = now - begin};
    bpf_map_update_elem(&call_totals, &total_key, &init, BPF_NOEXIST);
  }
  if (!(cookie & STRATA_PROBE_EMIT)) return 0;
  struct strata_call_event* e = reserve(sizeof(*e));
  if (!e) return 0;
  fill_header(&e->h, STRATA_EV_CALL, tid, tgid, now);
  e->start = begin;
  e->probe = key.probe;
  e->pad = 0;
  submit(e);
  return 0;
}

// --- Python garbage collection (USDT python:gc__start / gc__done) ----------------------------------
SEC("usdt")
int BPF_USDT(on_gc_start, int generation) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32, tid = (__u32)id;
  if (!is_traced(tgid)) return 0;
  struct gc_start_value v = {.ts = bpf_ktime_get_ns(), .generation = generation};
  bpf_map_update_elem(&gc_start, &tid, &v, BPF_ANY);
  return 0;
}

SEC("usdt")
int BPF_USDT(on_gc_done, long collected) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32, tid = (__u32)id;
  if (!is_traced(tgid)) return 0;
  struct gc_start_value* s = bpf_map_lookup_elem(&gc_start, &tid);
  if (!s) {
    count(STRATA_STAT_NO_START);
    return 0;
  }
  struct strata_gc_event* e = reserve(sizeof(*e));
  if (e) {
    fill_header(&e->h, STRATA_EV_GC, tid, tgid, bpf_ktime_get_ns());
    e->start = s->ts;
    e->generation = s->generation;
    e->collected = collected;
    e->pad = 0;
    submit(e);
  }
  bpf_map_delete_elem(&gc_start, &tid);
  return 0;
}
