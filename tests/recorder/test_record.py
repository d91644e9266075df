#!/usr/bin/env python3
"""`strata record` for real (root, eBPF): what it sees of real processes, and its messages for bad cases.

usage: test_record.py STRATA_BINARY [--functional] [--long] [TEST_NAME...]
  (--functional: no test that judges a lab job's diagnosis, for the sanitizer build; --long: the lab_* tests too)
Exits 77 (skipped) when not root or the kernel has no BTF (1 under CI=true: a skip fails CI). Each test records a real workload and checks
the segment through `strata inspect --format json` (and `strata diagnose` for the lab jobs):
  ddp_allreduce_count   a 2-rank DDP job from the lab: every gloo allreduce is seen (steps x (buckets + 1)),
                        counters are non-empty, diagnose reads the segment with the traces
  gc_pauses             a GC-heavy Python child: each gc.collect() is one pause of plausible length
  python_frames         a Python child's samples name its hot Python function at the line it executes, and
                        its callers at their calls' lines (CPython 3.11 frame chain, read back through pprof)
  late_library_frames   a library loaded late by a short-lived child still names its samples' frames
  sleeping_off_cpu      a sleeping child shows as off CPU (sleeping) for its sleep
  contention            a busy process pinned to one rank's core shows as run-queue wait behind it
  lab_gc_pause          (--long only) the lab's gc_pause fault is named gc_pause from the recorded data
  lab_cpu_contention    the lab's cpu_contention fault is named cpu_contention
  lab_cpu_throttling    the lab's cpu_throttling fault is named cpu_throttling
  output_closed_at_exit the background teardown of the probes holds none of strata record's output
  not_root, missing_pid, bad_command, target_exits, killed_recorder   the bad cases
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from accuracy_lib.recorder_teardown import wait_recorders_gone  # noqa: E402
from runner import run_tests  # noqa: E402
from accuracy_lib.recording_quality import recording_problem  # noqa: E402
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
STRATA = None


def record(out, cmd, *extra, check=True, env=None):
    r = subprocess.run([STRATA, "record", "-q", "-o", out, *extra, "--", *cmd], capture_output=True, text=True,
                       timeout=600, env=env)
    if check and r.returncode != 0:
        raise AssertionError(f"strata record failed ({r.returncode}): {r.stderr}")
    wait_recorders_gone(out, 60)  # the probes' teardown outlives strata record: the next test starts clean
    return r


def write_script(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def inspect(out):
    segs = [f for f in os.listdir(out) if f.endswith(".sseg")]
    assert len(segs) == 1, f"expected one segment in {out}, found {segs}"
    r = subprocess.run([STRATA, "inspect", "--format", "json", os.path.join(out, segs[0])], capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout)


def diagnose(out, *paths):
    """`strata diagnose` of OUT (the recording with the profiler traces), or of PATHS when given."""
    r = subprocess.run([STRATA, "diagnose", "--format", "json", *(paths or [out])], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def ranks_of(seg):
    return {p["rank"]: p for p in seg["processes"] if p["rank"] is not None}


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def lab_job(out, fault, steps=4, *extra):
    return [PY, os.path.join(ROOT, "lab", "ddp_job.py"), "--ranks", "2", "--steps", str(steps), "--fault", fault,
            "--fault-rank", "1", "--out", out, *extra]


# --- tests --------------------------------------------------------------------------------------------
def test_ddp_allreduce_count(tmp):
    steps = 3
    record(tmp, lab_job(tmp, "none", steps))
    seg = inspect(tmp)
    ranks = ranks_of(seg)
    expect(sorted(ranks) == [0, 1], f"ranks seen: {sorted(ranks)}")
    # The lab runs 4 wait + 1 warm-up + `steps` steps; each has DDP's one gradient bucket and the loss's
    # all_reduce.
    expected = (4 + 1 + steps) * 2
    for r, p in ranks.items():
        got = p["calls"].get("collective", {}).get("all_reduce", 0)
        expect(got == expected, f"rank {r}: {got} gloo all_reduce calls, expected {expected}")
        enq = p["calls"].get("collective_enqueue", {}).get("all_reduce", 0)
        expect(enq == expected, f"rank {r}: {enq} c10d allreduce calls, expected {expected}")
    expect(seg["rows"]["counter"] > 0, "no counter samples")
    for series in ("proc.oncpu_ns", "proc.runq_wait_ns", "cpu.busy_pct", "net.rx_bytes"):
        expect(series in seg["counter_series"], f"counter series {series} missing")
    # The interfaces' byte counters are read at --link-hz (50) between the 10 Hz host counter samples: several
    # times as many rows per series as a process counter's (5x when the loop keeps time; a busy machine delays both).
    per_series = {n: seg["counter_rows"][n] / seg["counter_series"][n] for n in ("net.rx_bytes", "proc.oncpu_ns")}
    expect(per_series["net.rx_bytes"] >= 2.5 * per_series["proc.oncpu_ns"],
           f"link counters not read between the host counter samples: rows per series {per_series}")
    expect(seg["rows"]["sample"] > 0, "no CPU stack samples")
    expect(seg["dropped_events"] == 0, f"{seg['dropped_events']} events dropped")
    d = diagnose(tmp)
    expect(d["job"]["ranks"] == 2, "diagnose did not read the traces beside the segment")


def test_gc_pauses(tmp):
    script = ("import gc\n"
              "class Node:\n    pass\n"
              "gc.disable()\n"
              "for i in range(25):\n"
              "    nodes = [Node() for _ in range(30000)]\n"
              "    for a, b in zip(nodes, nodes[1:]): a.next = b\n"
              "    nodes[-1].next = nodes[0]\n"
              "    del nodes, a, b\n"
              "    gc.collect()\n")
    record(tmp, [PY, "-c", script])
    p = inspect(tmp)["processes"][0]
    expect(p["gc"]["count"] >= 25, f"{p['gc']['count']} GC pauses seen, expected >= 25")
    expect(0.2 <= p["gc"]["max_ms"] <= 5000, f"longest GC {p['gc']['max_ms']} ms is implausible")
    expect(p["gc"]["total_ms"] >= 25 * 0.2, f"GC total {p['gc']['total_ms']} ms is implausible")


def test_python_frames(tmp):
    # CPython 3.11's frame chain read in the kernel at each sample: the innermost Python function of most
    # samples is the hot one, named with its file and the line it executes (its loop, lines 4-5; never its def
    # line 2), and each caller at the line of its call (this also checks the layout offsets python_frames.cc
    # has for 3.11 against a real interpreter: the frame's last instruction, the code object's location table).
    script = ("import time\n"
              "def hot_loop(n):\n"
              "    s = 0\n"
              "    for i in range(n):\n"
              "        s += i * i\n"
              "    return s\n"
              "class Model:\n"
              "    def forward(self):\n"
              "        return hot_loop(200000)\n"
              "t = time.time()\n"
              "while time.time() - t < 1.5:\n"
              "    Model().forward()\n")
    # A rank (RANK, WORLD_SIZE): the pprof export below takes the processes of ranks.
    record(tmp, [PY, write_script(tmp, "hot.py", script)], env=dict(os.environ, RANK="0", WORLD_SIZE="1"))
    p = inspect(tmp)["processes"][0]
    funcs = p["python_functions"]
    total = p["cpu_samples"]
    hot = sum(n for name, n in funcs.items() if name in ("Python hot_loop (hot.py:4)", "Python hot_loop (hot.py:5)"))
    expect(total >= 20, f"only {total} CPU samples")
    expect(hot >= 0.6 * total, f"hot_loop at its loop's lines in {hot} of {total} samples: {funcs}")
    expect("Python hot_loop (hot.py:2)" not in funcs, f"samples named by hot_loop's def line: {funcs}")
    stacks = pprof_python_stacks(tmp)
    if stacks is None:
        print("     note: go is not installed: the callers' lines are not read back from the pprof export")
        return
    hot_stacks = [(n, st) for n, st in stacks if st and st[0] in ("hot_loop hot.py:4", "hot_loop hot.py:5")]
    hot_samples = sum(n for n, _ in hot_stacks)
    expect(hot_samples >= 0.6 * total, f"{hot_samples} of {total} pprof samples end in hot_loop's loop: {stacks[:3]}")
    for _, st in hot_stacks:  # (pprof shows <module> as "": it drops what is in <>, as C++ template arguments)
        expect(st[1:3] == ["Model.forward hot.py:9", "hot.py:12"], f"hot_loop's callers are not at their calls' lines: {st}")


def pprof_python_stacks(tmp):
    """(samples, the Python frames ("function file-name:line", innermost first)) of each stack of the recording
    in TMP, as `go tool pprof -traces -lines` reads them from `strata export --format pprof` (None without go)."""
    import shutil
    if not shutil.which("go"):
        return None
    out = os.path.join(tmp, "cpu.pb.gz")
    subprocess.run([STRATA, "export", "--format", "pprof", "-o", out, tmp], capture_output=True, text=True,
                   check=True)
    r = subprocess.run(["go", "tool", "pprof", "-traces", "-lines", "-sample_index=samples", out], capture_output=True,
                       text=True, check=True, env=dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache")))
    stacks = []
    for block in r.stdout.split("-----------+")[1:]:
        # A frame line: the stack's samples (first frame only) in 10 columns, 3 spaces, "function file:line".
        lines = [line for line in block.splitlines() if len(line) > 13 and line[10:13] == "   "]
        if not lines:
            continue
        python = [f.rsplit(" ", 1) if " " in f else ["", f] for f in (line[13:] for line in lines)
                  if re.search(r"\.py:\d+$", f)]
        stacks.append((int(lines[0][:10]), [(fn + " " if fn else "") + os.path.basename(where) for fn, where in python]))
    return stacks


def test_late_library_frames(tmp):
    # A library loaded after the process started (bz2's libbz2 at `import bz2`, half a second in) and a
    # process gone before the recorder's periodic re-read of its memory maps (2 s): its samples' native
    # frames are still named by their library, because a stack in no known mapping makes the recorder
    # read the maps at once. libbz2's internal functions are not in its symbol table: "[libbz2...]".
    script = ("import os, time\n"
              "time.sleep(0.5)\n"
              "import bz2\n"
              "data = os.urandom(1 << 18)\n"
              "t = time.process_time()\n"
              "while time.process_time() - t < 1.0:\n"
              "    bz2.compress(data)\n")
    # One second of the process's own CPU time (not of the wall clock) at 199 Hz: the samples follow CPU time,
    # so a test sharing the CPU with others (ctest -j2, the sanitizer build) still gets ~199 of them (CI had
    # 14 and 16 samples in a wall-clock second under load).
    record(tmp, [PY, write_script(tmp, "late.py", script)], "--sample-hz", "199",
           env=dict(os.environ, RANK="0", WORLD_SIZE="1"))
    segs = [os.path.join(tmp, n) for n in os.listdir(tmp) if n.endswith(".sseg")]
    out = os.path.join(tmp, "timeline.json")
    subprocess.run([STRATA, "export", "-o", out, *segs], capture_output=True, text=True, check=True)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    names = [e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"
             and "Python compress (bz2.py" in e["name"]]
    in_lib = [n for n in names if "[libbz2" in n]
    expect(len(names) >= 20, f"only {len(names)} samples in bz2.compress")
    expect(len(in_lib) >= 0.6 * len(names), f"{len(in_lib)} of {len(names)} samples in bz2.compress name libbz2: "
           f"{sorted(set(names))[:5]}")


def test_sleeping_off_cpu(tmp):
    record(tmp, ["/bin/sleep", "1"])
    p = inspect(tmp)["processes"][0]
    expect(900 <= p["off_cpu_ms"]["sleeping"] <= 5000, f"sleep 1 off CPU {p['off_cpu_ms']} ms")


RANK_SCRIPT = """
import os, sys, time
rank = int(os.environ["RANK"])
os.sched_setaffinity(0, {rank % os.cpu_count()})
t_end = time.time() + 3.0
while time.time() < t_end:
    t = time.thread_time()
    while time.thread_time() - t < 0.01:
        pass
    time.sleep(0.005)
"""


def test_contention(tmp):
    busy = subprocess.Popen([PY, "-c", "import os\nos.sched_setaffinity(0, {1})\nwhile True: pass"])
    try:
        time.sleep(0.2)
        launcher = ("import os, subprocess, sys\n"
                    "procs = [subprocess.Popen([sys.executable, '-c', sys.argv[1]], "
                    "env=dict(os.environ, RANK=str(r), WORLD_SIZE='2')) for r in (0, 1)]\n"
                    "sys.exit(max(p.wait() for p in procs))\n")
        record(tmp, [PY, "-c", launcher, RANK_SCRIPT], "--no-probes")
    finally:
        busy.kill()
        busy.wait()
    seg = inspect(tmp)
    r0, r1 = seg["ranks"]["0"], seg["ranks"]["1"]
    expect(r1["runq_other_process_pct"] >= 20, f"rank 1 (shares its core) waited {r1['runq_other_process_pct']} %")
    # Rank 0 may also wait behind whatever else this machine runs; what must hold is that rank 1 waited
    # mostly behind the busy process on its core.
    print(f"     rank 0 {r0['runq_other_process_pct']} % ({r0['top_other_process']}), "
          f"rank 1 {r1['runq_other_process_pct']} % ({r1['top_other_process']})")
    expect(r1["top_other_process"].endswith(f"(pid {busy.pid})"), f"top other process {r1['top_other_process']}")


# A regression test judges only a fault that clearly took: twice the diagnosis' 3 % minimum effect. Between
# that and the 3 % the accuracy suite scores, a verdict may go either way (docs/accuracy.md measures those).
CLEAR_EFFECT_SHARE = 0.06


def unclear_fault(tmp):
    """Why the lab job's fault is too small to judge a verdict on (truth only), or None."""
    with open(os.path.join(tmp, "truth.json")) as f:
        truth = json.load(f)
    step = truth.get("step_ms_median") or 0.0
    effect = min(truth.get("injected_ms", 0.0), truth.get("effect_on_ms", truth.get("injected_ms", 0.0)))
    if truth["fault"] != "none" and effect < CLEAR_EFFECT_SHARE * step:
        return f"unclear: the fault's effect {effect:.1f} ms is under {CLEAR_EFFECT_SHARE:.0%} of the {step:.1f} ms step"
    return None


def lab_fault(tmp, fault, accepted, *extra, trace_free=False, steps=6):
    # The verdict is judged once, on the first recording fit to score. A recording is made again (4 in all)
    # only when its own truth measurements show other load on the machine or a fault that did not take
    # (recording_quality, independent of strata's verdict); never because the verdict was wrong. Each attempt
    # pins the ranks one core further (--core-shift): a core this VM runs slower for whole runs (CI,
    # 2026-11-28: 46-79 % slower in 4 of 4 attempts, all under rank 0) falls on each rank in turn instead of
    # on the same one every time.
    problems = []
    for attempt in range(4):
        for name in os.listdir(tmp):
            os.remove(os.path.join(tmp, name))
        record(tmp, lab_job(tmp, fault, steps, "--core-shift", str(attempt), *extra))
        with open(os.path.join(tmp, "truth.json")) as f:
            problem = recording_problem(json.load(f)) or unclear_fault(tmp)
        if problem:
            problems.append(problem)
            continue
        if problems:
            print(f"     recording {attempt + 1} scored (before: {'; '.join(problems)})", flush=True)
        segments = [os.path.join(tmp, n) for n in os.listdir(tmp) if n.endswith(".sseg")]
        d = diagnose(tmp, *segments) if trace_free else diagnose(tmp)
        if trace_free:
            expect([i["format"] for i in d["inputs"]] == ["strata-recording"], f"inputs {d['inputs']}")
            expect(d["job"]["step_source"] == "detected-rhythm", f"step source {d['job']['step_source']}")
        cause = d["findings"][0]["cause"] if d["findings"] else None
        expect(d["stragglers"] and d["stragglers"][0]["rank"] == 1, f"stragglers {[s['rank'] for s in d['stragglers']]}")
        expect(cause in accepted, f"cause {cause}, expected {accepted}; finding: {d['findings'][:1]}")
        return d
    raise AssertionError("too noisy to judge: " + "; ".join(problems))


def test_lab_gc_pause(tmp):
    lab_fault(tmp, "gc_pause", {"gc_pause"})


def test_lab_cpu_contention(tmp):
    # The CPU faults need real CPU work on the ranks (--host-ms): the lab's device time is a sleep.
    lab_fault(tmp, "cpu_contention", {"cpu_contention"}, "--host-ms", "10")


def test_lab_cpu_throttling(tmp):
    lab_fault(tmp, "cpu_throttling", {"cpu_throttling"}, "--host-ms", "10")


def test_trace_free_slow_compute(tmp):
    # The recording alone (no profiler trace read): steps from the all_reduce rhythm, rank 1 from its late
    # arrivals, slow_compute from its main thread's extra on-CPU time, named by a sampled native frame and the
    # Python line that called it: the line of extra_compute's loop body that executes (not its def line).
    # The native frame is "function [module]" when the library's symbols name it (BLAS's sgemm_) and
    # "[module]" when they do not: Debian ships libtorch_cpu with its dynamic symbols only, so tanh's vector
    # loop inside it is named by the library (stack_frames.h). Which of the two draws more samples varies
    # from run to run (CI, 2026-12-05: "[libtorch_cpu.so.1.13.0] in Python ...").
    # 12 steps: at the recorder's 49 Hz the fault's extra work (1.5-2.6 ms a step over the peers' median in 4
    # runs of 6 steps) is one or two samples of the whole job, and a sample more or less of the model's own
    # matmul on the late rank outweighed it once in about ten runs (2026-12-06: "sgemm_ [libblas] in Python
    # Linear.forward"); twice the steps give the fault twice the samples and the noise about 1.4 times.
    d = lab_fault(tmp, "slow_compute", {"slow_compute"}, trace_free=True, steps=12)
    op = d["findings"][0].get("op") or ""
    with open(os.path.join(ROOT, "lab", "ddp_job.py")) as f:
        body = [n for n, line in enumerate(f, 1) if "x = torch.tanh(x @ w)" in line]
    expect(len(body) == 1, f"lines of extra_compute's loop body in lab/ddp_job.py: {body}")
    expect(re.fullmatch(rf"(?:\S.* )?\[[^]\s]+\] in Python \S*extra_compute \(ddp_job\.py:{body[0]}\)", op) is not None,
           f"culprit {op!r} is not '[function ][module] in Python extra_compute (ddp_job.py:{body[0]})'")


def test_trace_free_dataloader_stall(tmp):
    # num_workers=0: the Dataset's __getitem__ waits in the main thread itself. Its Python frames when it
    # left the CPU (torch/utils/data/ on the stack) make the wait data loading, not a host stall.
    d = lab_fault(tmp, "dataloader_stall", {"dataloader_stall"}, trace_free=True)
    op = d["findings"][0].get("op") or ""
    expect("DataLoader" in op or "__getitem__" in op or op == "", f"culprit {op!r}")


def test_trace_free_gc_pause(tmp):
    lab_fault(tmp, "gc_pause", {"gc_pause"}, trace_free=True)


def test_probes_let_go(tmp):
    # Detaching uprobes waits for the kernel per probe (seconds for a PyTorch job): a detached grandchild of
    # the recorder does it after the recorder has exited. It must not outlive that work.
    record(tmp, ["/bin/sleep", "0.2"])
    expect(inspect(tmp)["finished"] is True, "a recording that stopped cleanly is marked as cut short")
    left = wait_recorders_gone(tmp, 20)
    expect(not left, f"recorder processes still there 20 s later: {left}")


def test_output_closed_at_exit(tmp):
    # The probes are let go by a background process (seconds, uprobes wait for the kernel); it must not hold
    # strata record's stdout/stderr, or `strata record ... | tee log` waits for it long after the recording.
    p = subprocess.Popen([STRATA, "record", "-o", tmp, "--", "/bin/sleep", "0.1"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.wait(timeout=120)
    ours = {os.fstat(f.fileno()).st_ino for f in (p.stdout, p.stderr)}
    holders = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("pipe:[") and int(link[6:-1]) in ours:
                    holders.append(f"pid {pid} ({open(f'/proc/{pid}/comm').read().strip()}) fd {fd}")
        except OSError:
            continue  # gone, or not ours to read
    p.stdout.close()
    p.stderr.close()
    wait_recorders_gone(tmp, 60)  # two teardowns at once take twice as long: let the next test start clean
    expect(p.returncode == 0, f"strata record exited {p.returncode}")
    expect(not holders, f"strata record's output pipes still open after it exited: {holders}")


def test_sigint_to_recorder_alone(tmp):
    # kill -INT sent to the recorder alone (not Ctrl-C at a terminal, which reaches the command too) is passed
    # on to the command: the job does not keep running unrecorded, and stderr says what happened to it.
    p = subprocess.Popen([STRATA, "record", "--no-probes", "-o", tmp, "--", "/bin/sleep", "60"],
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("strata record did not stop within 30 s of SIGINT")
    expect("signal passed on to the command" in err, f"stderr: {err}")
    left = subprocess.run(["pgrep", "-f", "^/bin/sleep 60$"], capture_output=True, text=True).stdout.split()
    expect(not left, f"the command is still running: {left}")
    expect(inspect(tmp)["processes"], "the segment is not readable")


def fill_disk_while_recording(tmp, free_after, *extra, seconds=5):
    """Records `sleep SECONDS` into a 512 KiB tmpfs that is filled 1.3 s in and, unless free_after is None,
    emptied free_after seconds later. Returns (exit code, stderr, inspect() of the segment)."""
    fs = os.path.join(tmp, "fs")
    os.mkdir(fs)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", fs], check=True)
    try:
        out = os.path.join(fs, "run")
        os.mkdir(out)
        p = subprocess.Popen([STRATA, "record", "--no-probes", *extra, "-o", out, "--", "/bin/sleep", str(seconds)],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.3)
        filler = os.path.join(fs, "filler")
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True)
        if free_after is not None:
            time.sleep(free_after)
            os.remove(filler)
        _, err = p.communicate(timeout=60)
        return p.returncode, err, inspect(out)
    finally:
        subprocess.run(["umount", "-l", fs])


def test_disk_full(tmp):
    # The disk fills for 2 s: the recording waits in memory and is written when there is room; nothing lost.
    for name in ("a", "b", "c"):
        os.mkdir(os.path.join(tmp, name))
    rc, err, seg = fill_disk_while_recording(os.path.join(tmp, "a"), 2)
    expect(rc == 0, f"rc {rc}: {err}")
    expect("the disk is full" in err and "the disk has room again" in err, f"stderr: {err}")
    expect(seg["finished"] and not seg["gaps"], f"finished {seg['finished']}, gaps {seg['gaps']}")
    expect(seg["rows"]["counter"] > 3000, f"counter rows {seg['rows']['counter']}: some were lost")
    # With no room kept in memory the rows of the full period are dropped: counted, marked, exit 2.
    rc, err, seg = fill_disk_while_recording(os.path.join(tmp, "b"), 2, "--max-buffer-mb", "0")
    expect(rc == 2 and "rows were not written" in err, f"rc {rc}: {err}")
    expect(seg["finished"] and seg["gaps"] and "counter rows not recorded" in seg["gaps"][0], f"gaps {seg['gaps']}")
    # The disk never empties: the end cannot be written; the file is readable and says it was cut short.
    rc, err, seg = fill_disk_while_recording(os.path.join(tmp, "c"), None, seconds=3)
    expect(rc == 2 and "still waiting at the end" in err, f"rc {rc}: {err}")
    expect(seg["finished"] is False and seg["blocks"] >= 1, f"finished {seg['finished']}, blocks {seg['blocks']}")


def test_unsafe_output_dir(tmp):
    # strata record runs as root: an output directory others can write to (no sticky bit) or that another user
    # owns would let them plant or swap the segment; both are refused before anything is recorded.
    shared = os.path.join(tmp, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    r = subprocess.run([STRATA, "record", "-o", shared, "--", "/bin/true"], capture_output=True, text=True)
    expect(r.returncode == 2 and "writable by every user and has no sticky bit" in r.stderr, f"rc {r.returncode}: {r.stderr}")
    theirs = os.path.join(tmp, "theirs")
    os.mkdir(theirs)
    os.chown(theirs, 65534, 65534)
    r = subprocess.run([STRATA, "record", "-o", theirs, "--", "/bin/true"], capture_output=True, text=True)
    expect(r.returncode == 2 and "owned by another user" in r.stderr, f"rc {r.returncode}: {r.stderr}")
    expect(not os.listdir(shared) and not os.listdir(theirs), "a segment was written")


def test_not_root(tmp):
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", STRATA, "record", "-o", tmp,
                        "--", "/bin/true"], capture_output=True, text=True)
    expect(r.returncode == 2 and "needs root" in r.stderr, f"rc {r.returncode}: {r.stderr}")


def test_missing_pid(tmp):
    r = subprocess.run([STRATA, "record", "-o", tmp, "--pid", "999999999"], capture_output=True, text=True)
    expect(r.returncode == 2 and "no process with pid 999999999" in r.stderr, f"rc {r.returncode}: {r.stderr}")


def test_bad_command(tmp):
    r = record(tmp, ["/nonexistent/train.py"], check=False)
    expect(r.returncode == 2 and "cannot run /nonexistent/train.py" in r.stderr, f"rc {r.returncode}: {r.stderr}")
    expect(not any(f.endswith(".sseg") for f in os.listdir(tmp)), "a segment was left for a command that never ran")


def test_target_exits(tmp):
    # A process that wakes every 100 ms (a process asleep for the whole recording has no off-CPU interval
    # that starts after the recorder attached).
    target = subprocess.Popen([PY, "-c", "import time\nfor _ in range(20): time.sleep(0.1)"])
    time.sleep(0.3)
    r = subprocess.run([STRATA, "record", "-o", tmp, "--pid", str(target.pid)], capture_output=True, text=True,
                       timeout=60)
    target.wait()
    expect(r.returncode == 0, f"rc {r.returncode}: {r.stderr}")
    expect("every attached process has exited" in r.stderr, r.stderr)
    seg = inspect(tmp)
    expect(seg["processes"] and seg["processes"][0]["pid"] == target.pid, "attached process missing")
    expect(seg["processes"][0]["off_cpu_ms"]["sleeping"] >= 500, f"{seg['processes'][0]['off_cpu_ms']}")


def test_single_process_is_rank_zero(tmp):
    # One training process with no rank variable (strata record -- python3 train.py): rank 0, so its profile
    # exports and its summary reads; diagnose says one rank cannot be compared rather than refusing the input.
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")}
    record(tmp, [PY, "-c", "import time\nt = time.time()\nwhile time.time() - t < 1.5: sum(i * i for i in range(10000))"],
           env=env)
    seg = inspect(tmp)
    expect([p["rank"] for p in seg["processes"]] == [0], f"processes {seg['processes']}")
    out = os.path.join(tmp, "cpu.pb.gz")
    r = subprocess.run([STRATA, "export", "--format", "pprof", "-o", out, tmp], capture_output=True, text=True)
    expect(r.returncode == 0 and os.path.getsize(out) > 0, f"export: rc {r.returncode}: {r.stderr}")
    expect("is rank 0" in r.stderr, f"export says nothing of the rank it took: {r.stderr}")
    d = diagnose(tmp)
    expect(d["status"] == "inconclusive" and d["job"]["ranks"] == 1, f"{d['status']}, {d['job']['ranks']} ranks")


def test_killed_recorder(tmp):
    rec = subprocess.Popen([STRATA, "record", "-q", "-o", tmp, "--", "/bin/sleep", "6"], stderr=subprocess.PIPE)
    time.sleep(3.5)
    rec.send_signal(signal.SIGKILL)
    rec.wait()
    seg = inspect(tmp)  # readable: every flushed block
    expect(seg["blocks"] >= 1 and seg["rows"]["counter"] > 0, f"after SIGKILL: {seg['blocks']} blocks, {seg['rows']}")
    expect(seg["finished"] is False, "a killed recording is not marked as cut short")
    subprocess.run(["pkill", "-f", "^/bin/sleep 6$"])


TESTS = [name[5:] for name in dir(sys.modules[__name__]) if name.startswith("test_")]
# Tests that judge strata's diagnosis of a real lab job (timing-sensitive; see --functional).
JUDGED = {"lab_gc_pause": True, "lab_cpu_contention": True, "lab_cpu_throttling": True,
          "trace_free_slow_compute": True, "trace_free_dataloader_stall": True, "trace_free_gc_pause": True}
# The default run (ctest recorder_record, in CI).
ORDER = ["ddp_allreduce_count", "gc_pauses", "python_frames", "late_library_frames", "sleeping_off_cpu", "contention",
         "trace_free_slow_compute", "trace_free_dataloader_stall", "trace_free_gc_pause", "probes_let_go",
         "sigint_to_recorder_alone", "output_closed_at_exit", "disk_full", "unsafe_output_dir", "not_root", "missing_pid",
         "bad_command", "target_exits", "single_process_is_rank_zero", "killed_recorder"]
# --long adds these (~1.5 min): lab jobs with a trace and a recording whose cause only the recording shows. CI
# judges the same three jobs in bench/accuracy's reduced suite (lab-gc_pause-2r-r1, lab-cpu_contention-2r-r1,
# lab-cpu_throttling-2r-r1, all with the recorder), so they run there once, not twice.
LONG = ["lab_gc_pause", "lab_cpu_contention", "lab_cpu_throttling"]


def main():
    global STRATA
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    STRATA = os.path.abspath(sys.argv[1])
    # Under CI=true a skip is a failure: the recorder must be tested where CI runs.
    skip = 1 if os.environ.get("CI") == "true" else 77
    if os.geteuid() != 0:
        print(f"{'FAIL' if skip == 1 else 'SKIP'}: strata record needs root")
        return skip
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        print(f"{'FAIL' if skip == 1 else 'SKIP'}: no kernel BTF")
        return skip
    args = sys.argv[2:]
    functional = "--functional" in args
    long_run = "--long" in args
    args = [a for a in args if a not in ("--functional", "--long")]
    # --functional: every test but those that judge a diagnosis of a lab job against its injected fault. Those
    # measure timing on the 2 cores the job runs on; a sanitizer-built recorder takes several times the CPU
    # of a Release one and perturbs them. The sanitizer run checks the recorder's memory safety on the rest.
    names = args or [n for n in ORDER + (LONG if long_run else []) if not (functional and JUDGED.get(n))]
    return run_tests(names, globals(), "strata-rec")


if __name__ == "__main__":
    sys.exit(main())
