// Types shared by the recorder's BPF programs (record.bpf.c) and its user side (bpf_session.cc).
// Every event starts with struct event_header; `kind` says which struct follows. Times are
// CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns). Sizes are fixed: both sides compile this header.
#ifndef STRATA_RECORDER_BPF_RECORD_EVENTS_H_
#define STRATA_RECORDER_BPF_RECORD_EVENTS_H_

#ifdef __BPF__
typedef __u16 strata_u16;
typedef __u32 strata_u32;
typedef __u64 strata_u64;
typedef __s32 strata_s32;
typedef __s64 strata_s64;
#else
#include <stdint.h>
typedef uint16_t strata_u16;
typedef uint32_t strata_u32;
typedef uint64_t strata_u64;
typedef int32_t strata_s32;
typedef int64_t strata_s64;
#endif

#define STRATA_COMM_LEN 16
// Uprobe cookie: low 16 bits = probe index in the user side's probe table; this flag = emit one event
// per call (otherwise only count and sum time per process, for high-rate calls such as kernel launches).
#define STRATA_PROBE_EMIT (1u << 16)
// Uprobe cookie flag: also emit an event when the call is entered (collectives: a call that never returns
// is a rank stuck inside it, and its peers' entries say who never arrived).
#define STRATA_PROBE_ENTRY (1u << 17)
// Uprobe cookie flag: the entry event's `arg` is the second integer argument, not the first: a C++ method
// returning a class object by value (c10d's `c10::intrusive_ptr<Work> ProcessGroup...::allreduce(...)`) gets
// the return slot's address first and `this` second (Itanium C++ ABI).
#define STRATA_PROBE_ARG2 (1u << 18)
// Uprobe cookie flags: the entry event's `count` is the call's second (COUNT2), third (COUNT3) or fourth
// (COUNT4) integer argument: the NCCL API's element count (ncclSend/ncclRecv second, the collectives third;
// nccl.h); gloo's buffer size (Context::createUnboundBuffer returns a std::unique_ptr by value: the return
// slot, `this`, the data pointer, then the size).
#define STRATA_PROBE_COUNT2 (1u << 19)
#define STRATA_PROBE_COUNT3 (1u << 20)
#define STRATA_PROBE_COUNT4 (1u << 21)

enum strata_event_kind {
  STRATA_EV_OFF_CPU = 1,     // a traced thread was off CPU: [start, end)
  STRATA_EV_SAMPLE = 2,      // CPU stack sample of a traced thread
  STRATA_EV_CALL = 3,        // one probed call (collective, CUDA sync) returned
  STRATA_EV_GC = 4,          // one Python garbage collection (USDT gc__start .. gc__done)
  STRATA_EV_EXEC = 5,        // a traced process exec'ed (its environment now names its rank)
  STRATA_EV_FORK = 6,        // a traced process forked a new process (now traced too)
  STRATA_EV_EXIT = 7,        // a traced process exited
  STRATA_EV_PY_STACK = 8,    // the Python frames of a sampled thread (same ts and tid as its STRATA_EV_SAMPLE)
  STRATA_EV_CALL_ENTER = 9,  // a probed collective call was entered (its STRATA_EV_CALL follows when it returns)
};

struct strata_event_header {
  strata_u32 kind;
  strata_u32 cpu;
  strata_u32 tid;
  strata_u32 tgid;
  strata_u64 ts;  // event time (the end of an interval)
};

// Off-CPU interval of one thread. state: the thread's state when it left the CPU (0 = still runnable,
// i.e. preempted; 1 = interruptible sleep; 2 = uninterruptible (D) sleep; other bits as in the kernel).
// runq_ns: time it was runnable but waiting for a CPU (from the wakeup, or from the preemption).
struct strata_off_cpu_event {
  struct strata_event_header h;
  strata_u64 start;
  strata_u64 runq_ns;
  strata_u32 state;
  strata_u32 preempted_by;  // tgid of the task that took the CPU when this one was preempted (0: idle/none)
  strata_u32 ran_before;    // tgid of the task that ran on the CPU just before this one came back
  strata_u32 waker;         // tgid that woke this thread (0: none seen)
  char preempted_by_comm[STRATA_COMM_LEN];
};

struct strata_sample_event {
  struct strata_event_header h;
  strata_s32 user_stack;  // id in the stack map, < 0 when not available
  strata_s32 kernel_stack;
};

// Where a CPython process keeps its frames (map py_procs, by tgid; filled by user space for the versions
// src/recorder/python_frames.cc knows): runtime = address of _PyRuntime in the process, then byte offsets
// along _PyRuntime -> main interpreter -> thread states (matched by native thread id) -> current frame ->
// previous frames, each frame giving its code object and its last instruction (user space turns that into
// the line the frame executes).
struct strata_py_offsets {
  strata_u64 runtime;
  strata_u16 interp_head;     // _PyRuntimeState.interpreters.head
  strata_u16 threads_head;    // PyInterpreterState.threads.head
  strata_u16 ts_next;         // PyThreadState.next
  strata_u16 ts_native_id;    // PyThreadState.native_thread_id
  strata_u16 ts_cframe;       // PyThreadState.cframe
  strata_u16 cframe_current;  // _PyCFrame.current_frame
  strata_u16 frame_code;      // _PyInterpreterFrame.f_code
  strata_u16 frame_previous;  // _PyInterpreterFrame.previous
  strata_u16 frame_instr;     // _PyInterpreterFrame.prev_instr
};

#define STRATA_PY_MAX_DEPTH 32
#define STRATA_PY_MAX_THREADS 32
struct strata_py_stack_event {
  struct strata_event_header h;
  strata_u32 depth;  // frames in `code` and `instr`, innermost first
  strata_u32 pad;
  strata_u64 code[STRATA_PY_MAX_DEPTH];   // each frame's code object
  strata_u64 instr[STRATA_PY_MAX_DEPTH];  // each frame's last instruction (an address in its code; 0 unread)
};

struct strata_call_event {
  struct strata_event_header h;
  strata_u64 start;
  strata_u32 probe;  // index in the user side's probe table
  strata_u32 pad;
};

// Entry of a probed call whose cookie has STRATA_PROBE_ENTRY; h.ts is the entry time (equal to the `start`
// of its STRATA_EV_CALL). arg: the first integer argument, or the second with STRATA_PROBE_ARG2 (a c10d
// method's `this`).
struct strata_call_enter_event {
  struct strata_event_header h;
  strata_u64 arg;
  strata_u64 count;  // the element count argument (cookie COUNT2 / COUNT3), 0 when not read
  strata_u32 probe;
  strata_u32 pad;
};

// Since when a traced thread is off CPU (map off_cpu_since, by tid; deleted when it runs again). For a main
// thread that went to sleep (state != 0), the user and kernel stack ids where it went to sleep (-1 otherwise):
// user space reads them for a thread that stays off CPU (a rank stuck on a lock, a read, a sleep).
struct strata_off_cpu_start {
  strata_u64 ts;
  strata_u32 state;
  strata_u32 preempted_by;
  char preempted_by_comm[STRATA_COMM_LEN];
  strata_s32 user_stack;
  strata_s32 kernel_stack;
};

struct strata_gc_event {
  struct strata_event_header h;
  strata_u64 start;
  strata_s64 collected;
  strata_s32 generation;
  strata_u32 pad;
};

struct strata_process_event {
  struct strata_event_header h;
  strata_u32 ppid;       // parent tgid (fork)
  strata_u32 exit_code;  // exit: the task's exit_code as wait(2) reports it (status << 8, or the signal)
  char comm[STRATA_COMM_LEN];
};

// Per (process, probe) call count and total time, for probes that do not emit events.
struct strata_call_key {
  strata_u32 tgid;
  strata_u32 probe;
};
struct strata_call_totals {
  strata_u64 calls;
  strata_u64 total_ns;
};

// Indexes of the per-CPU statistics array.
enum strata_stat {
  STRATA_STAT_DROPPED = 0,     // ring buffer full: event dropped
  STRATA_STAT_EMITTED = 1,     // events written to the ring buffer
  STRATA_STAT_NO_START = 2,    // a return / done without its entry (probe attached mid-call)
  STRATA_STAT_STACK_FAIL = 3,  // stack id lookup failed
  STRATA_STAT_FILTERED = 4,    // short off-CPU interval of a helper thread, not sent
  STRATA_STAT_PY_MISS = 5,     // a Python process's sample whose thread state or frames could not be read
  STRATA_STAT_COUNT = 6,
};

#endif  // STRATA_RECORDER_BPF_RECORD_EVENTS_H_
