#!/usr/bin/env python3
"""Hangs for real (root, eBPF; issue 22): a 3-rank gloo DDP job (lab/hang_job.py, no profiler) whose rank 1
stops at a step, recorded by `strata record` and diagnosed from the recording alone (post-mortem), and watched
by `strata agent` (live). Whether the fault took is read from the injector's side (the rank writes
fault-1.json when it stops; its peers' exit codes come from the launcher), never from strata's numbers.

usage: test_hangs.py STRATA_BINARY [--long | TEST_NAME...]
  (no name: the default run, in ctest; --long: every case, the benchmark's run; post-mortem cases run two at a time,
   live ones alone after them; STRATA_TEST_JOBS=1 runs every case one at a time)
  lock, data_read, spin        post-mortem: `hang` on rank 1, its state and frame (the function and the line
                               it blocks or spins on, not its def line), ranks 0 and 2 waiting in all_reduce;
                               the text report's first line says the job stopped, and who; the Perfetto export
                               draws the stall and where rank 1 stopped; for the lock, the holder thread's
                               Python frame (the line it sleeps on) among rank 1's other threads
  mutex                        post-mortem: as lock, on a pthread mutex, whose owner is named (the thread
                               the injector says holds it)
  skip_collective              post-mortem: `collective_mismatch` naming rank 1's broadcast against ranks
                               0 and 2's all_reduce at the same sequence number
  size_mismatch                post-mortem: `collective_mismatch` naming rank 1's all_reduce of 8 bytes
                               against ranks 0 and 2's of 4 (gloo's buffer sizes, read by the recorder)
  nccl_api_mismatch            3 processes calling the NCCL API (a stand-in libnccl.so, no GPU): the element
                               counts the recorder reads name rank 1's all_reduce of 512 elements against 1024
  came_back_lock, came_back_data_read, came_back_spin  (the last two: --long only)
                               post-mortem, rank 1's stop ends after 1.75 timeouts and no launcher tears the
                               job down: the peers time out and exit, rank 1 comes back and enters the
                               collective alone. Every rank entered it, yet rank 1 is the `hang`, with where it
                               was during the peers' wait (the line it stopped on) and when it came back
  recovered_lock               the stop ends after half the timeout: the job goes on and ends cleanly, no hang
  came_back_matrix             (--long only: a benchmark) lock, data_read and spin with the stop
                               shorter than, about equal to and longer than the timeout, with and without the
                               launcher's teardown; prints one line per case
  crashed_rank                 post-mortem: rank 1 exits with code 3; the job is not healthy and says so
  sigterm, clean               a job stopped by SIGTERM on every rank at once, and a clean job's normal end,
                               raise no hang (the SIGTERM-stopped job is never healthy and says why)
  live_skip_collective         `strata agent` names the mismatch (rank 1's broadcast against 0 and 2's
                               all_reduce) within 10 s, and again after the job died
  live_lock, live_data_read, live_spin  (the last two: --long only)
                               `strata agent` reports the hang (rank 1, its state and the line it stopped on)
                               in /api/v1/status within 10 s of the fault, with strata_job_stalled 1 in
                               /metrics (and, for the lock, on its live page); after the job died, its status
                               still says hang
Exits 77 (skipped) when not root or without kernel BTF (1 under CI=true: a skip fails CI).
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "agent"))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
from accuracy_lib.recorder_teardown import wait_recorders_gone  # noqa: E402
from runner import run_tests  # noqa: E402
from check_export import stall_errors, structure_errors  # noqa: E402
from checks import free_port  # noqa: E402

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
JOB = os.path.join(ROOT, "lab", "hang_job.py")
STRATA = None
# The process group's timeout: the peers wait this long before gloo gives up (live: long enough to be seen).
PG_TIMEOUT_S, LIVE_PG_TIMEOUT_S = 8, 25
# Issue 22: live within 10 s of the stop.
LIVE_LIMIT_S = 10


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def run_job(tmp, fault, *extra):
    """Records the hang lab job; returns (diagnosis JSON, text report, truth)."""
    out = os.path.join(tmp, "job")
    r = subprocess.run([STRATA, "record", "-q", "-o", tmp, "--", PY, JOB, "--fault", fault, "--out", out,
                        "--pg-timeout", str(PG_TIMEOUT_S), *extra], capture_output=True, text=True, timeout=300)
    wait_recorders_gone(tmp, 60)
    segs = [os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".sseg")]
    expect(len(segs) == 1, f"one segment expected, found {segs} (record: {r.stderr[-400:]})")
    with open(os.path.join(out, "truth.json")) as f:
        truth = json.load(f)
    d = subprocess.run([STRATA, "diagnose", "--format", "json", *segs], capture_output=True, text=True)
    expect(d.returncode == 0, f"diagnose failed: {d.stderr}")
    t = subprocess.run([STRATA, "diagnose", *segs], capture_output=True, text=True)
    result = json.loads(d.stdout)
    check_schema(result)
    return result, t.stdout, truth


def check_schema(result):
    """The result keeps to the contract (../shared/spec/diagnosis.schema.json)."""
    from jsonschema import Draft202012Validator
    with open(os.path.join(ROOT, "..", "shared", "spec", "diagnosis.schema.json")) as f:
        errors = [e.message for e in Draft202012Validator(json.load(f)).iter_errors(result)]
    expect(not errors, f"the result breaks the contract: {errors[:3]}")


def check_export(tmp, d):
    """The Perfetto export of the recording shows the stopped job as tests/cli/check_export.py's rules say (a
    hang: the waiting ranks' stall and where rank 1 stopped; a mismatch: what each rank called)."""
    segs = [os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".sseg")]
    out = os.path.join(tmp, "merged.json")
    r = subprocess.run([STRATA, "export", *segs, "-o", out], capture_output=True, text=True)
    expect(r.returncode == 0, f"export failed: {r.stderr}")
    with open(out) as f:
        trace = json.load(f)
    # The whole export is well formed (flows included: a blame arrow to a peer whose call ended before the
    # straggler arrived used to end before it started), and it shows the stall.
    errors = structure_errors(trace) + stall_errors(trace, d)
    expect(not errors, f"the export does not show the stopped job: {errors[:3]}")


def job_line(text):
    """The line of lab/hang_job.py that holds `text` (exactly one does): where a fault blocks or spins."""
    with open(JOB) as f:
        found = [n for n, line in enumerate(f, 1) if text in line]
    expect(len(found) == 1, f"{len(found)} lines of {JOB} hold {text!r}")
    return found[0]


def frame_at(function, text):
    """A Python frame's name, as strata gives it, for `function` executing the hang_job.py line holding `text`."""
    return f"{function} (hang_job.py:{job_line(text)})"


# Where each lab fault stops rank 1: its function and the text of the line it blocks or spins on.
LOCK_AT = ("blocked_on_lock", "lock.acquire()  # blocks until")
MUTEX_AT = ("blocked_on_mutex", "libc.pthread_mutex_lock(mutex)  # blocks in futex")
READ_AT = ("__getitem__", "os.read(read_end, 1)  # blocks until")
SPIN_AT = ("spin_forever", "while time.monotonic() < until: x = x *")


def fault_took(truth):
    """The injector's word: rank 1 stopped (it wrote its mark) and its peers did not finish cleanly."""
    expect(truth.get("fault_unix") is not None, f"the fault did not take (no mark from rank 1): {truth}")
    expect(truth["exit_codes"]["0"] != 0 and truth["exit_codes"]["2"] != 0,
           f"the peers ended cleanly, so nothing hung: {truth['exit_codes']}")


def hang_finding(d):
    hangs = [f for f in d["findings"] if f["cause"] == "hang"]
    expect(hangs, f"no hang finding: status {d['status']}, findings {[f['cause'] for f in d['findings']]}, "
                  f"reasons {d['status_reasons']}")
    return hangs[0]


def check_post_mortem_hang(tmp, fault, state, frame):
    d, text, truth = run_job(tmp, fault)
    fault_took(truth)
    f = hang_finding(d)
    e = f["evidence"]
    expect(d["findings"][0]["cause"] == "hang", "the hang is not the first finding")
    expect(f["rank"] == 1, f"the hang names rank {f['rank']}, not 1")
    expect(e["missing_ranks"] == [1] and e["waiting_ranks"] == [0, 2],
           f"missing {e['missing_ranks']}, waiting {e['waiting_ranks']}")
    expect(e["op"] == "all_reduce", f"the peers wait in {e['op']}")
    m = e["missing"][0]
    expect(m["state"].startswith(state), f"rank 1's state is {m['state']!r}, expected {state!r}")
    # The line rank 1 stopped on (the lab's blocking call, or its spin loop), not its function's def line.
    expect(m["frame"] and m["frame"].endswith(frame), f"rank 1's frame is {m['frame']!r}, expected it to end {frame!r}")
    expect(e["stalled_for_s"] >= PG_TIMEOUT_S - 1, f"stalled for {e['stalled_for_s']} s")
    expect(f["impact_pct"] == 100, f"impact {f['impact_pct']}")
    # The recorder does not change how the job fails: gloo's timeout reaches Python as a RuntimeError (exit 1),
    # not an abort (a return probe on gloo's algorithms made it SIGABRT).
    expect(truth["exit_codes"]["0"] == 1 and truth["exit_codes"]["2"] == 1,
           f"the waiting ranks did not exit with gloo's error (code 1): {truth['exit_codes']}")
    expect(d["status"] == "findings", f"status {d['status']}")
    first = text.splitlines()[0]
    expect(first.startswith("verdict: the job stopped: rank 1") and "all_reduce" in text.splitlines()[1] + first,
           f"the text report's first line: {first!r}")
    check_export(tmp, d)
    return d


def test_lock(tmp):
    d = check_post_mortem_hang(tmp, "lock", "blocked on a lock",
                               frame_at(*LOCK_AT))
    # The lock's holder (a thread asleep in time.sleep while holding it) is named among the rank's other
    # threads, before the idle ones (gloo's and torch's pool threads waiting on futexes).
    f = hang_finding(d)
    others = f["evidence"]["missing"][0].get("other_threads") or []
    busy = [t for t in others if not t["idle"]]
    expect(busy and busy[0]["state"].startswith("sleeping"),
           f"the lock holder is not named among rank 1's other threads: {others}")
    expect(others[0] is busy[0], "a busy thread is not listed first")
    expect(f"thread {busy[0]['tid']}" in f["summary"], f"the summary does not name the holder: {f['summary']}")
    # Its Python frames, read from the rank's memory at the stall: the holder sleeps in `hold`, on its sleep.
    holder = frame_at("blocked_on_lock.<locals>.hold", "# the holder sleeps here, holding the lock")
    expect(busy[0]["frame"] and busy[0]["frame"].endswith(holder),
           f"the holder's Python frame is {busy[0]['frame']!r}, expected it to end {holder!r}")
    expect("blocked_on_lock.<locals>.hold" in f["summary"], f"the summary lacks the holder's frame: {f['summary']}")
    # A threading.Lock (a semaphore) names no owner: none is claimed.
    expect("lock_owner_tid" not in f["evidence"]["missing"][0], "an owner was claimed for a semaphore")


def test_mutex(tmp):
    d = check_post_mortem_hang(tmp, "mutex", "blocked on a lock",
                               frame_at(*MUTEX_AT))
    # A pthread mutex names its owner: the thread the injector says holds it, listed first with its frame.
    truth = json.load(open(os.path.join(tmp, "job", "truth.json")))
    f = hang_finding(d)
    m = f["evidence"]["missing"][0]
    expect(m.get("lock_owner_tid") == truth["holder_tid"],
           f"lock owner {m.get('lock_owner_tid')}, the injector's holder {truth['holder_tid']}")
    others = m.get("other_threads") or []
    holder = frame_at("hold_mutex", "# the holder sleeps here, holding the mutex")
    expect(others and others[0]["tid"] == truth["holder_tid"] and (others[0]["frame"] or "").endswith(holder),
           f"the owner is not first among the other threads with its frame ({holder}): {others[:2]}")
    expect(f"a lock its thread {truth['holder_tid']} holds" in f["summary"],
           f"the summary does not name the owner: {f['summary']}")


def test_data_read(tmp):
    check_post_mortem_hang(tmp, "data_read", "waiting for I/O (read)",
                           frame_at(*READ_AT))


def test_spin(tmp):
    check_post_mortem_hang(tmp, "spin", "on CPU (spinning)", frame_at(*SPIN_AT))


def check_came_back(tmp, fault, stop_s, teardown, state):
    """Rank 1 stops for stop_s. Returns a line saying what happened and what strata said; raises when strata's
    answer is wrong for what the injector says happened: peers that failed mean a hang on rank 1 (came back or
    never entered); peers that finished mean no hang."""
    extra = ["--stop-s", str(stop_s), "--steps", "90"] + ([] if teardown else ["--no-teardown"])
    d, text, truth = run_job(tmp, fault, *extra)
    expect(truth.get("fault_unix") is not None, f"the fault did not take (no mark from rank 1): {truth}")
    causes = [f["cause"] for f in d["findings"]]
    peers_failed = truth["exit_codes"]["0"] != 0 and truth["exit_codes"]["2"] != 0
    back = truth.get("resume_unix")
    what = (f"{fault} stop {stop_s:g} s ({'teardown' if teardown else 'no teardown'}): exit codes "
            f"{truth['exit_codes']}, rank 1 back {'at +%.1f s' % (back - truth['fault_unix']) if back else 'never'}")
    if not peers_failed:
        expect("hang" not in causes, f"{what}: the job went on, yet strata says hang: {text.splitlines()[0]}")
        return what + "; strata: no hang"
    f = hang_finding(d)
    e = f["evidence"]
    expect(f["rank"] == 1 and e["missing_ranks"] == [1] and e["waiting_ranks"] == [0, 2],
           f"{what}: the hang names rank {f.get('rank')}, missing {e['missing_ranks']}, waiting {e['waiting_ranks']}: "
           f"{f['summary']}")
    m = e["missing"][0]
    expect(m["state"].startswith(state), f"{what}: rank 1's state is {m['state']!r}, expected {state!r}")
    frame = frame_at(*CAME_BACK_AT[fault])  # where it was during the peers' wait: the line it stopped on
    expect((m.get("frame") or "").endswith(frame), f"{what}: rank 1's frame is {m.get('frame')!r}, expected {frame!r}")
    entered = m.get("came_back_unix")
    if entered:  # it entered: after the peers had left, and no earlier than it resumed
        expect(back and entered >= back - 0.5, f"{what}: came back at {entered}, resumed at {back}")
        expect("came back" in f["summary"] or "when rank 1 entered it" in f["summary"],
               f"{what}: the summary does not say when it came back: {f['summary']}")
    expect(text.splitlines()[0].startswith("verdict: the job stopped: rank 1"), f"{what}: {text.splitlines()[0]!r}")
    return what + f"; strata: hang rank 1, {m['state']}, " + (f"came back at +{entered - truth['fault_unix']:.1f} s"
                                                              if entered else "never entered")


CAME_BACK_STATES = {"lock": "blocked on a lock", "data_read": "waiting for I/O (read)", "spin": "on CPU (spinning)"}
CAME_BACK_AT = {"lock": LOCK_AT, "data_read": READ_AT, "spin": SPIN_AT}


def came_back(tmp, fault):
    line = check_came_back(tmp, fault, 1.75 * PG_TIMEOUT_S, False, CAME_BACK_STATES[fault])
    expect("came back at" in line, f"rank 1 did not come back into the collective: {line}")
    print("  " + line)


def test_came_back_lock(tmp):
    came_back(tmp, "lock")


def test_came_back_data_read(tmp):
    came_back(tmp, "data_read")


def test_came_back_spin(tmp):
    came_back(tmp, "spin")


def test_recovered_lock(tmp):
    line = check_came_back(tmp, "lock", 0.5 * PG_TIMEOUT_S, True, CAME_BACK_STATES["lock"])
    expect(line.endswith("no hang"), f"the job did not recover from a stop of half the timeout: {line}")
    print("  " + line)


def test_came_back_matrix(tmp):
    failures = []
    for fault in ("lock", "data_read", "spin"):
        for share in (0.5, 1.0, 1.75):
            for teardown in (False, True):
                case = os.path.join(tmp, f"{fault}-{share}-{teardown}")
                os.makedirs(case)
                try:
                    print("  " + check_came_back(case, fault, share * PG_TIMEOUT_S, teardown, CAME_BACK_STATES[fault]))
                except AssertionError as e:
                    print(f"  FAIL {e}")
                    failures.append(str(e))
    expect(not failures, f"{len(failures)} of 18 cases wrong")


def test_attach_late(tmp):
    """`strata record --pid` pointed at a job already stuck: the recorder saw no rank go to sleep (no switch
    after its attach), yet writes where each rank is from /proc (thread_state records, their since unknown), so
    `strata inspect` names rank 1 blocked on the lock in blocked_on_lock and its peers in backward."""
    out = os.path.join(tmp, "job")
    job = subprocess.Popen([PY, JOB, "--fault", "lock", "--out", out, "--pg-timeout", "20"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        mark = os.path.join(out, "fault-1.json")
        deadline = time.time() + 90
        while not os.path.exists(mark) and time.time() < deadline and job.poll() is None:
            time.sleep(0.2)
        expect(os.path.exists(mark), "rank 1 did not stop (no fault mark)")
        time.sleep(2)  # every rank asleep a while before the recorder attaches
        pids = subprocess.run(["pgrep", "-f", f"hang_job.py --worker .*--out {out}"], capture_output=True,
                              text=True).stdout.split()
        expect(len(pids) == 3, f"three ranks expected, found {pids}")
        rec = os.path.join(tmp, "rec")
        r = subprocess.run([STRATA, "record", "-q", "-o", rec] + [a for p in pids for a in ("--pid", p)],
                           capture_output=True, text=True, timeout=120)
        wait_recorders_gone(rec, 60)
    finally:
        try:
            job.wait(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
    segs = [os.path.join(rec, f) for f in os.listdir(rec) if f.endswith(".sseg")]
    expect(len(segs) == 1, f"one segment expected, found {segs} (record: {r.stderr[-400:]})")
    j = json.loads(subprocess.run([STRATA, "inspect", "--format", "json", segs[0]], capture_output=True,
                                  text=True).stdout)
    main_threads = {t["rank"]: t for t in j["stuck_threads"] if t["pid"] == t["tid"]}
    expect(sorted(main_threads) == [0, 1, 2], f"stuck main threads of ranks {sorted(main_threads)}: {main_threads}")
    one = main_threads[1]
    expect(one["since_before_attach"] and one["since_unix"] is None,
           f"rank 1 should be asleep since before the attach, its start unknown: {one}")
    lock_frame = frame_at("worker.<locals>." + LOCK_AT[0], LOCK_AT[1])
    expect(one["state"].startswith("blocked on a lock") and (one["frame"] or "").endswith(lock_frame),
           f"rank 1 (its frame read from its memory at {lock_frame!r} expected): {one}")
    for peer in (0, 2):
        expect(main_threads[peer]["frame"], f"rank {peer} has no Python frame: {main_threads[peer]}")
    text = subprocess.run([STRATA, "inspect", segs[0]], capture_output=True, text=True).stdout
    expect("(rank 1): blocked on a lock (futex) since before the recorder attached in Python " + lock_frame in text,
           f"inspect's text: {text[-800:]}")
    # diagnose claims no hang it could not measure (no collective was entered in the recording), is never
    # healthy, and says where each rank waits, grouped by place: rank 1 apart from its peers.
    d = json.loads(subprocess.run([STRATA, "diagnose", "--format", "json", segs[0]], capture_output=True,
                                  text=True).stdout)
    expect(d["status"] == "inconclusive", f"status {d['status']}")
    first = d["status_reasons"][0]
    expect(first.startswith("every rank was asleep since before the recorder attached")
           and "rank 1: blocked on a lock (futex) in Python " + lock_frame in first
           and "ranks 0, 2: " in first, f"the first reason: {first!r}")


def test_skip_collective(tmp):
    d, _, truth = run_job(tmp, "skip_collective")
    expect(truth.get("fault_unix") is not None, f"the fault did not take: {truth}")
    mism = [f for f in d["findings"] if f["cause"] == "collective_mismatch"]
    expect(mism, f"no collective_mismatch: {[f['cause'] for f in d['findings']]} {d['status_reasons']}")
    sides = {c["op"]: c["ranks"] for c in mism[0]["evidence"]["calls"]}
    expect(sides == {"all_reduce": [0, 2], "broadcast": [1]}, f"sides {sides}")
    expect(mism[0]["rank"] == 1, f"the odd rank out is {mism[0]['rank']}")
    expect(d["status"] == "findings", f"status {d['status']}")
    check_export(tmp, d)


def test_size_mismatch(tmp):
    # Rank 1's loss all_reduce is of 2 floats, its peers' of 1: the same op at the same number, another size. The
    # recorder reads the bytes of the buffers gloo's algorithm is given (createUnboundBuffer's size argument).
    d, _, truth = run_job(tmp, "size_mismatch")
    expect(truth.get("fault_unix") is not None, f"the fault did not take: {truth}")
    mism = [f for f in d["findings"] if f["cause"] == "collective_mismatch"]
    expect(mism, f"no collective_mismatch: {[f['cause'] for f in d['findings']]} {d['status_reasons']}")
    sides = {(c["op"], c["bytes"]): c["ranks"] for c in mism[0]["evidence"]["calls"]}
    expect(sides == {("all_reduce", 4): [0, 2], ("all_reduce", 8): [1]}, f"sides {sides}")
    expect(mism[0]["rank"] == 1, f"the odd rank out is {mism[0]['rank']}")
    expect("rank(s) 1 called all_reduce of 8 bytes" in mism[0]["summary"], mism[0]["summary"])
    expect(d["status"] == "findings", f"status {d['status']}")
    check_export(tmp, d)
    with open(os.path.join(tmp, "merged.json")) as f:
        marks = [e["name"] for e in json.load(f)["traceEvents"] if e.get("name", "").startswith("mismatch at")]
    expect(any("called all_reduce of 8 bytes; ranks 0, 2 called all_reduce of 4 bytes" in m for m in marks),
           f"the export's mismatch marks do not tell the sizes apart: {marks[:3]}")


def test_nccl_api_mismatch(tmp):
    # Three "ranks" calling the NCCL API (a stand-in libnccl.so with its signatures: no GPU here); rank 1 calls
    # all_reduce #3 on 512 elements, its peers on 1024. The recorder reads each call's count argument.
    caller, lib_dir = os.environ.get("STRATA_NCCL_API_CALLER"), os.environ.get("STRATA_FAKE_NCCL_DIR")
    expect(caller and lib_dir, "STRATA_NCCL_API_CALLER / STRATA_FAKE_NCCL_DIR are not set (ctest sets them)")
    launch = " ".join(f"RANK={r} WORLD_SIZE=3 {caller} 8 1 3 &" for r in range(3)) + " wait"
    r = subprocess.run([STRATA, "record", "-q", "-o", tmp, f"--lib={lib_dir}", "--", "/bin/sh", "-c", launch],
                       capture_output=True, text=True, timeout=120)
    wait_recorders_gone(tmp, 60)
    expect(r.returncode == 0, f"record failed: {r.stderr[-400:]}")
    segs = [os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".sseg")]
    d = subprocess.run([STRATA, "diagnose", "--format", "json", *segs], capture_output=True, text=True)
    expect(d.returncode == 0, f"diagnose failed: {d.stderr}")
    d = json.loads(d.stdout)
    check_schema(d)
    mism = [f for f in d["findings"] if f["cause"] == "collective_mismatch"]
    expect(mism, f"no collective_mismatch: {[f['cause'] for f in d['findings']]} {d['status_reasons']}")
    e = mism[0]["evidence"]
    sides = {(c["op"], c["count"]): c["ranks"] for c in e["calls"]}
    expect(sides == {("all_reduce", 1024): [0, 2], ("all_reduce", 512): [1]}, f"sides {sides}")
    expect(e["seq"] == 3 and mism[0]["rank"] == 1, f"seq {e['seq']}, odd rank {mism[0]['rank']}")
    # The point-to-point sends differ in count by design (100 + rank) and are never compared.
    expect(len(mism) == 1, f"more than one mismatch: {[m['summary'] for m in mism]}")


def test_crashed_rank(tmp):
    d, _, truth = run_job(tmp, "exit")
    expect(truth["exit_codes"]["1"] == 3, f"rank 1 did not exit with code 3: {truth['exit_codes']}")
    expect(d["status"] != "healthy", "a job whose rank crashed is called healthy")
    expect(any("rank 1" in r and "exited with code 3" in r for r in d["status_reasons"]),
           f"the status does not say rank 1 exited with code 3: {d['status_reasons']}")


def test_sigterm(tmp):
    d, _, truth = run_job(tmp, "none", "--sigterm-after", "6", "--steps", "100000")
    expect(all(c == -15 for c in truth["exit_codes"].values()), f"not every rank died by SIGTERM: {truth}")
    causes = [f["cause"] for f in d["findings"]]
    expect("hang" not in causes and "collective_mismatch" not in causes, f"a stopped job raised {causes}")
    # Never healthy, and the reasons say it was stopped. Inconclusive unless the steps before the stop named a
    # straggler (status findings): on a clean job that is a false alarm of the straggler rule, which the
    # accuracy suite judges (CI at f7ed8b0 saw one here); this test is about the stop, as test_clean is.
    expect(d["status"] in ("inconclusive", "findings") and any("signal 15" in r for r in d["status_reasons"]),
           f"status {d['status']}: {d['status_reasons']}")
    if d["status"] == "findings":
        print(f"  note: the stopped clean job named {[(f['cause'], f.get('rank')) for f in d['findings']]}")


def test_clean(tmp):
    d, _, truth = run_job(tmp, "none", "--steps", "150")
    expect(all(c == 0 for c in truth["exit_codes"].values()), f"the clean job failed: {truth['exit_codes']}"
           + (f"; alive at the launcher's timeout: {truth['alive_at_timeout']}" if "alive_at_timeout" in truth else ""))
    causes = [f["cause"] for f in d["findings"]]
    expect("hang" not in causes and "collective_mismatch" not in causes, f"a clean job raised {causes}")
    expect(not any("ended abnormally" in r or "inside a collective" in r or "signal" in r
                   for r in d["status_reasons"]), f"a clean end is said to be abnormal: {d['status_reasons']}")


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.read().decode()


def live_page_text(tmp, port, attempts=3):
    """The agent's live page (/) as headless Chromium renders it after its script fetched the status: the
    rendered part (the script's source is cut off, since it holds the same words as templates). Chromium's
    virtual time may run out before the fetch answers on a loaded machine: up to `attempts` renderings, until
    one shows a stalled job with its figure."""
    import shutil
    browser = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser")) if p), None)
    expect(browser is not None, "chromium is not installed (scripts/setup.sh installs it)")
    rendered = ""
    for _ in range(attempts):
        r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp}/profile",
                            "--virtual-time-budget=4000", "--dump-dom", f"http://127.0.0.1:{port}/"],
                           capture_output=True, text=True, timeout=60)
        rendered = re.sub(r"<script.*?</script>", "", r.stdout, flags=re.S)
        if re.search(r"STALLED for [0-9]", rendered):
            break
    return rendered


def stop_agent(agent):
    """SIGTERM, then the agent's exit within 60 s (it ends its round first: on a loaded machine a round's
    window diagnosis can take seconds); says how long it took when that was more than 10 s."""
    asked = time.time()
    agent.terminate()
    agent.wait(timeout=60)
    if time.time() - asked > 10:
        print(f"     the agent took {time.time() - asked:.1f} s to stop after SIGTERM", flush=True)


def start_agent(tmp):
    port = free_port()
    os.chmod(tmp, 0o755)
    agent = subprocess.Popen([STRATA, "agent", "--listen", f"127.0.0.1:{port}", "--dir", os.path.join(tmp, "flight"),
                              "--interval-s", "1", "--window-s", "15", "-q"])
    return port, agent


def ended_status(port, job_id, seconds=15):
    """The agent's status of `job_id` once it says the job ended (None if it never does within `seconds`)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        for j in json.loads(get(port, "/api/v1/status"))["jobs"]:
            if j["job"] == job_id and j.get("ended"):
                return j
        time.sleep(0.5)
    return None


def check_live(tmp, fault, state, frame):
    port, agent = start_agent(tmp)
    out = os.path.join(tmp, "job")
    job_id = f"hang-test-{os.getpid()}-{fault}"
    try:
        time.sleep(1)
        job = subprocess.Popen([PY, JOB, "--fault", fault, "--at", "350", "--steps", "100000", "--out", out,
                                "--pg-timeout", str(LIVE_PG_TIMEOUT_S), "--job", job_id],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found, before, metric, page = None, [], None, None
        while job.poll() is None:
            time.sleep(0.5)
            try:
                status = json.loads(get(port, "/api/v1/status"))
            except OSError:
                continue
            mark = os.path.join(out, "fault-1.json")
            for j in (j for j in status["jobs"] if j["job"] == job_id):
                hangs = [f for f in j["findings"] if f["cause"] == "hang"]
                if hangs and os.environ.get("STRATA_HANG_DEBUG"):
                    print("     debug:", [(h["rank"], h["summary"][:160]) for h in hangs], flush=True)
                if not os.path.exists(mark):
                    before += hangs
                elif hangs and found is None:
                    found = (hangs[0], j)
                    metric = get(port, "/metrics")
                    page = live_page_text(tmp, port) if fault == "lock" else None
        job.wait()
        with open(os.path.join(out, "truth.json")) as f:
            truth = json.load(f)
        fault_took(truth)
        expect(not before, f"a hang was raised before the fault: {before}")
        expect(found is not None, "the agent never reported the hang")
        f, j = found
        latency = f["detected_at"] - truth["fault_unix"]
        print(f"     live {fault}: detected {latency:.1f} s after rank 1 stopped")
        expect(latency <= LIVE_LIMIT_S, f"detected {latency:.1f} s after the stop (limit {LIVE_LIMIT_S} s)")
        expect(f["rank"] == 1, f"the live hang names rank {f['rank']}: {f['summary']}")
        expect(state in f["summary"], f"the live summary does not say {state!r}: {f['summary']}")
        expect(frame in f["summary"], f"the live summary does not say where rank 1 stopped ({frame!r}): {f['summary']}")
        expect(j["status"] != "healthy" and j.get("stalled") is True, f"status {j['status']}, stalled {j.get('stalled')}")
        expect(f'strata_job_stalled{{training_job="{job_id}"}} 1' in metric, "strata_job_stalled is not 1")
        if page is not None:  # the live page says it, with the program's names escaped (not read as tags)
            expect(re.search(r"STALLED for [0-9]", page), f"the live page does not say the job is stalled: {page[-600:]}")
            expect(frame.replace("<", "&lt;").replace(">", "&gt;") in page, f"the live page lost the frame: {page[-600:]}")
        # After the crash the agent diagnoses the finished recording: still the hang, never inconclusive.
        end = ended_status(port, job_id)
        expect(end is not None, "the agent never said the job ended")
        if end:
            causes = [(f["rank"], f["cause"]) for f in end["findings"]]
            expect(end["status"] == "findings" and (1, "hang") in causes,
                   f"after the job died the agent says {end['status']} {causes} "
                   f"(reasons {end.get('status_reasons')}, error {end.get('error')!r})")
    finally:
        stop_agent(agent)


def test_live_lock(tmp):
    check_live(tmp, "lock", "blocked on a lock", frame_at("worker.<locals>." + LOCK_AT[0], LOCK_AT[1]))


def test_live_data_read(tmp):
    check_live(tmp, "data_read", "waiting for I/O (read)", frame_at(*READ_AT))


def test_live_spin(tmp):
    check_live(tmp, "spin", "on CPU (spinning)", frame_at(*SPIN_AT))


def test_live_skip_collective(tmp):
    """Rank 1 skips the loss's all_reduce: gloo holds the three ranks in different collectives until the
    process group's timeout. The agent names the mismatch live within the limit, and again after the job died."""
    port, agent = start_agent(tmp)
    out = os.path.join(tmp, "job")
    job_id = f"hang-test-{os.getpid()}-skip"
    try:
        time.sleep(1)
        job = subprocess.Popen([PY, JOB, "--fault", "skip_collective", "--at", "250", "--steps", "100000", "--out",
                                out, "--pg-timeout", str(LIVE_PG_TIMEOUT_S), "--job", job_id],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        live = None
        while job.poll() is None:
            time.sleep(0.5)
            try:
                jobs = json.loads(get(port, "/api/v1/status"))["jobs"]
            except OSError:
                continue
            for j in (j for j in jobs if j["job"] == job_id and live is None):
                live = next((f for f in j["findings"] if f["cause"] == "collective_mismatch"), None)
        job.wait()
        with open(os.path.join(out, "truth.json")) as f:
            truth = json.load(f)
        expect(truth.get("fault_unix") is not None, f"the fault did not take: {truth}")
        expect(live is not None, "the agent never reported the mismatch while the job ran")
        latency = live["detected_at"] - truth["fault_unix"]
        print(f"     live skip_collective: mismatch named {latency:.1f} s after rank 1 skipped")
        expect(latency <= LIVE_LIMIT_S, f"named {latency:.1f} s after the skip (limit {LIVE_LIMIT_S} s)")
        end = ended_status(port, job_id)
        expect(end is not None, "the agent never said the job ended")
        for when, j in (("live", {"findings": [live], "status": "findings"}), ("after the end", end)):
            mism = [f for f in j["findings"] if f["cause"] == "collective_mismatch"]
            expect(mism, f"no collective_mismatch {when}: {j['status']} {[f['cause'] for f in j['findings']]}")
            summary = mism[0]["summary"]
            expect("rank(s) 0, 2 called all_reduce" in summary and "rank(s) 1 called broadcast" in summary,
                   f"{when}: {summary}")
            expect(mism[0]["rank"] == 1 and j["status"] == "findings", f"{when}: rank {mism[0]['rank']}, {j['status']}")
        expect(not end.get("error"), f"the agent could not read the ended job's recording: {end.get('error')}")
    finally:
        stop_agent(agent)


# The default run (ctest recorder_hangs, in CI): one case of each kind of answer.
ORDER = ["lock", "mutex", "data_read", "attach_late", "spin", "came_back_lock", "recovered_lock", "skip_collective",
         "size_mismatch", "nccl_api_mismatch", "crashed_rank", "sigterm", "clean", "live_lock", "live_skip_collective"]
# --long adds these (a benchmark, ~4 min more: CI's time budget keeps timing-heavy cases few): the other
# states of a rank that came back or hangs live (their post-mortem answers are in the default run), and the
# matrix of stop lengths around the timeout.
LONG = ["came_back_data_read", "came_back_spin", "live_data_read", "live_spin", "came_back_matrix"]


def main():
    global STRATA
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    STRATA = os.path.abspath(sys.argv[1])
    skip = 1 if os.environ.get("CI") == "true" else 77
    if os.geteuid() != 0 or not os.path.exists("/sys/kernel/btf/vmlinux"):
        print(f"{'FAIL' if skip == 1 else 'SKIP'}: needs root and kernel BTF")
        return skip
    args = sys.argv[2:]
    names = ORDER + LONG if args == ["--long"] else args or ORDER
    # Two post-mortem cases at a time (each job mostly waits out its process group's timeout: CI's two cores are
    # idle for most of a case); the live cases and the stop-length matrix, which time what they measure (and
    # whose agent would see every job on the machine), run alone afterwards. STRATA_TEST_JOBS=1: one at a time.
    jobs = int(os.environ.get("STRATA_TEST_JOBS", "2"))
    alone = [n for n in names if n.startswith("live_") or n == "came_back_matrix"]
    return run_tests(names, globals(), "strata-hang", jobs=jobs, alone=alone)


if __name__ == "__main__":
    sys.exit(main())
