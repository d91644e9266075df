#!/usr/bin/env python3
"""Hang lab: a real PyTorch DDP job (CPU, gloo, no profiler) in which one rank stops, and its ground truth.

The launcher starts N ranks the way torchrun does (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT in
each environment). A step: a batch from a torch.utils.data.DataLoader (num_workers=0), forward, backward
(DDP's gradient all_reduce), SGD step, an all_reduce of the loss for logging and a broadcast of a "stop" flag
from rank 0 (as training loops do). At step --at, --fault-rank stops (each a real mechanism):
  lock             its main thread blocks on a threading.Lock another thread holds forever (futex)
  mutex            its main thread blocks on a pthread mutex (through ctypes, as a C extension's lock) that
                   another thread holds forever; the holder's native thread id goes into truth.json
  data_read        the Dataset's __getitem__ reads from a pipe no one writes to (blocked in read(2))
  spin             its main thread spins in a Python loop forever (on CPU)
  skip_collective  it skips the loss's all_reduce once and goes on to the broadcast (a collective mismatch)
  size_mismatch    its loss all_reduce is of 2 elements instead of 1 (the same op, another size: gloo fails or
                   waits; a collective mismatch)
  exit             it exits with code 3 before the step's collectives (a crashed rank)
  none             no fault: the job runs --steps steps and ends normally
The peers then wait in the collective the rank never entered until the process group's --pg-timeout
(gloo raises, the rank exits non-zero); the launcher, like torchrun, then stops the remaining ranks with
SIGTERM (and SIGKILL 5 s later). --stop-s S: the stop (lock, mutex, data_read, spin) ends after S seconds and
the rank goes on into the step's collectives (a slow read or a lock holder that returns): shorter than the
timeout the job recovers, longer and the rank comes back to a collective its peers already left.
--no-teardown: the launcher stops no rank after the first failure (each ends by itself). --sigterm-after S: instead, the launcher sends SIGTERM to every rank at once
S seconds after they started (a job stopped, not hung).

truth.json in --out (written by the injector, not by strata): {"fault", "rank", "step", "world_size",
"fault_unix" (when the rank stopped, its own clock), "exit_codes" {rank: code or -signal}, "pids" {rank: pid},
for mutex "holder_tid" (the thread holding the mutex), and when --timeout killed ranks "alive_at_timeout"
{rank: {"threads": [{tid, comm, state, wchan}], "past_last_barrier"}} (where their threads were, and whether
the rank had passed the job's last collective), with --stop-s "resume_unix" (when the rank
came back) and "stop_s"}.
"""
import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time

FAULTS = ["none", "lock", "mutex", "data_read", "spin", "skip_collective", "size_mismatch", "exit"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=3)
    ap.add_argument("--steps", type=int, default=400, help="steps when nothing stops the job (default 400)")
    ap.add_argument("--fault", choices=FAULTS, default="none")
    ap.add_argument("--fault-rank", type=int, default=1)
    ap.add_argument("--at", type=int, default=60, help="step at which the fault rank stops (default 60)")
    ap.add_argument("--pg-timeout", type=float, default=15, help="process group timeout, s (default 15)")
    ap.add_argument("--stop-s", type=float, default=0, help="the stop ends after S seconds (default 0: never)")
    ap.add_argument("--no-teardown", action="store_true", help="stop no rank after the first failure")
    ap.add_argument("--sigterm-after", type=float, default=0, help="SIGTERM every rank after S seconds")
    ap.add_argument("--step-sleep-ms", type=float, default=10, help="emulated device time per step (default 10)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=120, help="kill everything after S seconds (default 120)")
    ap.add_argument("--job", default=None, help="TORCHELASTIC_RUN_ID of the ranks (how `strata agent` names the job)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def worker(a):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank = int(os.environ["RANK"])
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=a.pg_timeout))
    faulty = rank == a.fault_rank and a.fault != "none"
    read_end, write_end = os.pipe()  # data_read: nothing is ever written to it
    state = {"step": 0}

    def mark_fault(**extra):
        with open(os.path.join(a.out, f"fault-{rank}.json"), "w") as f:
            json.dump({"step": state["step"], "fault_unix": time.time(), **extra}, f)

    def mark_resume():
        path = os.path.join(a.out, f"fault-{rank}.json")
        with open(path) as f:
            mark = json.load(f)
        mark.update(resume_unix=time.time(), stop_s=a.stop_s)
        with open(path, "w") as f:
            json.dump(mark, f)

    def hold_time():
        """How long a stop's holder keeps what the rank waits for: --stop-s, else (nearly) forever."""
        return a.stop_s if a.stop_s > 0 else 10 ** 6

    def write_after(fd, seconds):
        time.sleep(seconds)
        os.write(fd, b"x")

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return 10 ** 6

        def __getitem__(self, i):
            if faulty and a.fault == "data_read" and state["step"] == a.at and not state.get("stopped"):
                state["stopped"] = True  # once: the batch's other items read on
                mark_fault()
                threading.Thread(target=write_after, args=(write_end, hold_time()), daemon=True).start()
                os.read(read_end, 1)  # blocks until the writer writes (--stop-s), else forever
                mark_resume()
            return torch.randn(32), torch.randn(8)

    def blocked_on_lock():
        lock = threading.Lock()
        holder_ready = threading.Event()

        def hold():
            lock.acquire()
            holder_ready.set()
            time.sleep(hold_time())  # the holder sleeps here, holding the lock
            lock.release()

        threading.Thread(target=hold, daemon=True).start()
        holder_ready.wait()
        mark_fault()
        lock.acquire()  # blocks until the holder lets go (--stop-s), else forever
        mark_resume()

    def blocked_on_mutex():
        import ctypes
        libc = ctypes.CDLL(None)
        mutex = ctypes.create_string_buffer(64)  # zeroed: PTHREAD_MUTEX_INITIALIZER (a normal mutex)
        holder = {}
        holder_ready = threading.Event()

        def hold_mutex():
            libc.pthread_mutex_lock(mutex)
            holder["tid"] = threading.get_native_id()
            holder_ready.set()
            time.sleep(hold_time())  # the holder sleeps here, holding the mutex
            libc.pthread_mutex_unlock(mutex)

        threading.Thread(target=hold_mutex, daemon=True).start()
        holder_ready.wait()
        mark_fault(holder_tid=holder["tid"])
        libc.pthread_mutex_lock(mutex)  # blocks in futex until the holder unlocks (ctypes lets the GIL go)
        mark_resume()

    def spin_forever():
        mark_fault()
        x, until = 1.0, time.monotonic() + hold_time()
        while time.monotonic() < until: x = x * 1.000001 + 1e-9  # noqa: E701 (spins on this one line: loop and body)
        mark_resume()

    model = DDP(torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 8)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = iter(torch.utils.data.DataLoader(Data(), batch_size=16, num_workers=0))
    flag = torch.zeros(1)
    for step in range(a.steps):
        state["step"] = step
        if faulty and step == a.at and a.fault == "lock":
            blocked_on_lock()
        if faulty and step == a.at and a.fault == "mutex":
            blocked_on_mutex()
        if faulty and step == a.at and a.fault == "spin":
            spin_forever()
        if faulty and step == a.at and a.fault == "exit":
            mark_fault()
            os._exit(3)
        x, y = next(loader)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(a.step_sleep_ms / 1000)
        if faulty and step == a.at and a.fault == "skip_collective":
            mark_fault()
        elif faulty and step == a.at and a.fault == "size_mismatch":
            mark_fault()
            dist.all_reduce(torch.cat([loss.detach().reshape(1), loss.detach().reshape(1)]))
        else:
            dist.all_reduce(loss.detach())
        dist.broadcast(flag, 0)
    # Every rank through its last collective before any tears down: rank 0 hosts the TCPStore, and a peer
    # leaving while rank 0 still sends the last broadcast is not part of what this lab tests.
    dist.barrier()
    # The rank's end, past its last collective, without torch's teardown: twice a rank that had passed its last
    # collective (its peers ended, exit code 0) was still alive at the launcher's 120 s, its main thread waiting
    # on a futex and one other thread running (CI's recorder_hangs clean and recovered_lock, 2026-12-06; the same
    # on a loaded machine without the recorder, 1 job in 12). destroy_process_group and the interpreter's exit join
    # gloo's and torch's threads; a training job's end is not what this lab tests. The mark says the rank got here.
    open(os.path.join(a.out, f"ended-{int(os.environ['RANK'])}"), "w").close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def threads_of(pid):
    """[{tid, comm, state, wchan}] of a live process's threads, from /proc (what the launcher saw at its
    timeout); [] when the process is gone."""
    out = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            with open(base + "/stat") as f:
                stat = f.read()
            with open(base + "/wchan") as f:
                wchan = f.read().strip()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        state = stat[stat.rindex(")") + 2:].split()[0]
        out.append({"tid": int(tid), "comm": comm, "state": state, "wchan": wchan})
    return out


def launch(a):
    os.makedirs(a.out, exist_ok=True)
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    procs = {}
    argv = [sys.executable, os.path.abspath(__file__), "--worker"] + [x for x in sys.argv[1:]]
    for r in range(a.ranks):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(a.ranks), LOCAL_WORLD_SIZE=str(a.ranks),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                   TORCHELASTIC_RUN_ID=a.job or f"hang-lab-{os.getpid()}")
        procs[r] = subprocess.Popen(argv, env=env)
    started = time.time()
    terminated_at = None
    sigterm_sent = False
    alive_at_timeout = {}
    while any(p.poll() is None for p in procs.values()):
        now = time.time()
        if a.sigterm_after and not sigterm_sent and now - started >= a.sigterm_after:
            for p in procs.values():
                p.send_signal(signal.SIGTERM)
            sigterm_sent = True
        failed = [r for r, p in procs.items() if p.poll() not in (None, 0)]
        if failed and terminated_at is None and not sigterm_sent and not a.no_teardown:
            time.sleep(1)  # torchrun: a failed rank stops the others
            for p in procs.values():
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            terminated_at = time.time()
        if (terminated_at and now - terminated_at > 5) or now - started > a.timeout:
            if now - started > a.timeout and not alive_at_timeout:
                alive_at_timeout = {str(r): {"threads": threads_of(p.pid),
                                             "past_last_barrier": os.path.exists(os.path.join(a.out, f"ended-{r}"))}
                                    for r, p in procs.items() if p.poll() is None}
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
        time.sleep(0.1)
    truth = {"fault": a.fault, "rank": a.fault_rank if a.fault != "none" else None, "world_size": a.ranks,
             "pids": {str(r): p.pid for r, p in procs.items()},
             "exit_codes": {str(r): p.returncode for r, p in procs.items()}}
    if alive_at_timeout:  # why the launcher had to kill a rank: where each of its threads was
        truth["alive_at_timeout"] = alive_at_timeout
    mark = os.path.join(a.out, f"fault-{a.fault_rank}.json")
    if os.path.exists(mark):
        with open(mark) as f:
            truth.update(json.load(f))
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return 0


def main():
    a = parse_args()
    if a.worker:
        worker(a)
        return 0
    return launch(a)


if __name__ == "__main__":
    sys.exit(main())
