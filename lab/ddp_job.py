#!/usr/bin/env python3
"""Fault-injection lab: a real PyTorch DDP job (CPU, gloo) with one injected fault and its ground truth.

The launcher starts N ranks the way torchrun does: one process per rank, each with RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT in its environment (Debian's torchrun itself fails
under Python 3.11). Each rank runs one torch thread and a small MLP under DistributedDataParallel with the
PyTorch profiler on. The host work per step is small; "device time" is emulated by sleeping a fixed time per
layer (forward) and twice that (backward), the way a host thread waits for a GPU, so the ranks mostly wait
and the injected fault is the only systematic difference between ranks, unless the machine makes one.

Fitting the machine (issue 47 item 4; this VM has 2 vCPUs and its host runs one of them 60-90 % slower for
seconds to whole runs, coming back during a job after the cores were timed even). By default (--rotate-ms 10)
every rank of a job with at most 2 ranks a core, and of any job whose fault pins helpers to the fault rank's core
(CPU and network contention), is pinned to one core ((rank + --core-shift, default the seed) modulo the cores;
network contention's fault rank alone on one) and the launcher's core rotation (lab/core_rotation.py) moves the ranks and their
helpers to the next core every 10 ms, all together: over a step every rank spends alike time on every core, so a
core the host slows slows every rank alike instead of the ones placed on it. Which ranks share a core at any
instant stays as placed (the fault rank keeps its spinners and, for network contention, its core of its own).
The cores are timed once before the job for the record (truth "core_ms_before"; "core_rotation" says what the
rotation did). The ranks of other jobs (8 ranks: pinned 4 to a core, they queue behind each other in a fixed
order, ROTATE_MAX_RANKS_PER_CORE) **float**, and with --rotate-ms 0 (the lab before 2026-12-05) all do unless
their fault pins helpers; floating ranks, and pinned ones without the rotation, run only on the cores not
measurably slower than the fastest (--slow-core-ratio, truth "rank_cores"), the launcher first timing them again
for up to --core-wait seconds (truth "core_wait_s"). The emulated device time per layer grows with the ranks per core
(--layer-ms, default 3 ms times ceil(ranks / cores)), so the job's CPU demand stays about a quarter of the
machine however many ranks it has (each rank's own host work, 8-13 ms a step with the profiler, is the same at
any size), and cpu_throttling's quota is made for the same share. During the job the core probe times the work
on every rank (truth "probe_ms_by_rank": its trimmed mean, the speed the rank's CPU work met on average).

Faults (each a real mechanism, on --fault-rank only):
  slow_compute               extra matmul+tanh blocks inside the model's forward (real CPU compute)
  dataloader_stall           the Dataset's __getitem__ sleeps (a slow loader); data comes through a real
                             torch.utils.data.DataLoader (num_workers=0) on every rank
  gc_pause                   a large live heap of Python containers plus cyclic garbage made every step,
                             then gc.collect() between forward and backward (real GC traversal time)
  intermittent_slow_compute  slow_compute only in steps whose ProfilerStep number is a multiple of --every
  none                       clean run
From outside the rank's code (lab/injectors/, root except cpu_contention; see each module for the mechanism
and what was measured with it):
  cpu_contention             busy processes pinned to the rank's core, in a CPU cgroup with that rank alone
                             (1 + round(magnitude/0.3) of them)
  cpu_throttling             the rank in a cgroup with a CPU quota (--quota, --period-us; v1 or v2)
  memory_pressure            the rank in a cgroup whose memory limit sits below its working set: a
                             memory-mapped table (--table-mb, every rank) is reclaimed and faulted in again;
                             the limit is tuned in 8 extra unrecorded steps to the target
  slow_communication         ranks in network namespaces joined by a bridge, every link shaped to --link-mbit
                             with tbf, the rank's link to a lower rate, tuned in 8 extra unrecorded steps to the
                             target
  network_contention         same network, TCP traffic both ways on the rank's link (a blaster and a sink),
                             every link shaped to the rate at which the traffic costs --magnitude
  intermittent_cpu_contention, intermittent_cpu_throttling, intermittent_network_contention
                             the same, switched on only in steps whose number is a multiple of --every
The fault rank switches these on and off itself at step boundaries (signals to helpers, cgroup knob writes,
tc): off in unrecorded iterations 1-2 (the baseline), on from iteration 3 (an intermittent one off again in
the last unrecorded iteration, so that the recording does not start in its after-effect); the truth's
injected_ms is then the measured effect (the rank's lateness at the gradient all_reduce, or the all_reduce's
transfer time for the network faults) minus its baseline. --host-ms gives every rank real CPU work per step,
which the CPU faults need to have something to slow down. Everything the launcher changes on the machine
(namespaces, veths, qdiscs, cgroups, helper processes; names start with strata-lab-<launcher pid>-) is undone on
exit, on SIGINT/SIGTERM/SIGHUP and on failure; lab/cleanup.py removes what a SIGKILLed launcher left.

--magnitude is the injected time per affected step as a fraction of the emulated device time per step
(layers x 3 x --layer-ms, 36 ms by default, about 80 % of the clean step). Each fault is sized at start-up and
tuned in the 5 unrecorded steps before the profiled ones; what was injected is measured and written to the
truth. Every rank calls gc.freeze() after start-up so that torch's own heap (a ~60 ms full collection here)
is not walked; an automatic collection on a clean rank is then cheap. A step: DataLoader batch, forward,
loss, backward (DDP's gradient all_reduce, one bucket), SGD step, and an all_reduce of the loss for logging.

ProfilerStep numbers are those the profiler writes: torch 1.13 lags its count by one, so the first profiled
step is ProfilerStep#4; the truth's steps use the numbers in the trace.

On a shared machine, --nice -10 (root) keeps other load from stretching the ranks: each rank then runs in a
session (autogroup) of its own with that niceness.

Output in --out DIR: rank-<r>.json.gz (the profiler's chrome trace of the active steps, gzip level 9, exactly
as the profiler wrote it) and truth.json:
  {"fault": cause class (DESIGN.md's vocabulary) or "none", "rank": r|null,
   "steps": [ProfilerStep numbers affected], "magnitude": x, "mechanism": "...",
   "world_size": n, "injected_ms": median measured injected time per affected step,
   "injected_ms_by_step": {"<ProfilerStep number>": measured injected time},
   "recorded_steps": how many ProfilerSteps were recorded (the affected ones are "steps"),
   "unrecorded_fault_iters": [iterations before the recording the fault ran in, to tune or settle it]}
  plus, for faults from outside: "injector" (the lab's fault name when it differs from the cause),
  "ranks" (every rank the fault reaches, when it is more than the fault rank: busy processes on a core that
  several ranks share),
  "effect_metric", "effect_on_ms" (the metric in the fault steps, not less the baseline), "baseline_ms",
  "step_ms" {"fault_off", "fault_on"} and the cgroup's statistics;
  "took_measure" {"measure", "per_step", "unit", "intended_ms", "by_step" (each affected step's value)}:
  whether the fault took, by a quantity strata neither measures nor decides on (the injector's: in-rank faults
  the time the injected code ran, CPU contention and throttling the rank's run-queue wait, memory pressure the
  time its lookup-table reads took beyond their baseline (and the file pages its cgroup refaulted, beside), the
  link faults the all_reduce's transfer time), "rq_wait_ms_by_rank" (each rank's median run-queue wait
  per recorded step: how much other tasks held its core), "probe_ms_by_rank" (the trimmed mean thread CPU time
  of the core probe, the same fixed work on every rank before each layer: how fast its cores ran) and
  "cpu_ms_by_rank" (its median process CPU time per recorded step): the machine's noise.

The launcher needs no torch; the ranks run under --python (default /usr/bin/python3, Debian's python3-torch).

usage: lab/ddp_job.py --ranks 2 --steps 6 --fault slow_compute --fault-rank 1 --out DIR
"""
import argparse
import json
import mmap
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import injectors  # noqa: E402  (lab/injectors, beside this file)
from core_rotation import DEFAULT_PERIOD_S as ROTATE_PERIOD_S, CoreRotation  # noqa: E402
from injectors import EXTERNAL, device_ms_per_step, outside_fault_on_unrecorded  # noqa: E402
from injectors.cgroup import anon_and_file, memory_limit_file, read_memory_stat  # noqa: E402
from injectors.cpu import MIN_QUOTA_US, share_and_quota  # noqa: E402,F401  (a quota's one rule; tests read them here)

IN_RANK = ("none", "slow_compute", "dataloader_stall", "gc_pause", "intermittent_slow_compute")
FAULTS = IN_RANK + tuple(EXTERNAL)
CAUSE = {"none": "none", "slow_compute": "slow_compute", "dataloader_stall": "dataloader_stall",
         "gc_pause": "gc_pause", "intermittent_slow_compute": "slow_compute"}
CAUSE.update({name: cls.cause for name, cls in EXTERNAL.items()})
# The core probe's fixed work before each layer's device wait ((PROBE_WIDTH x PROBE_WIDTH) matmul + tanh,
# PROBE_REPS times: about 0.4 ms on this machine's cores, 1.6 ms per step of 4 layers, the same on every rank).
PROBE_WIDTH, PROBE_REPS = 64, 4
# The most ranks a core that --placement auto pins (and the core rotation moves) rather than lets float. Pinned ranks
# that share a core queue behind each other in their wake order after each collective, and with more than two a
# core that singles out a rank as a slow core did: 8 ranks pinned and rotated, tuning seeds 97700+, set 5 of 33
# faulted cases aside for one rank's run-queue wait (3 to 13 ms a step more than the others'); 2 and 4 ranks set
# aside 3 and 1 of 33 (floating, at 6446e41: 3 and 10, most for a rank on the slower core).
ROTATE_MAX_RANKS_PER_CORE = 2
# The share of a rank's probes left off each end before their mean (truth "probe_ms_by_rank"): an interrupt or a
# page fault during one probe makes it an outlier.
PROBE_TRIM = 0.1
# Faults whose injector pins helper processes to the fault rank's core: their ranks are pinned, each to one core.
PINNED_FAULTS = ("cpu_contention", "intermittent_cpu_contention", "network_contention",
                 "intermittent_network_contention")
# Faults whose fault rank gets a core of its own when the ranks have two or more: the kernel's work for the
# traffic (TCP over veth, processed in softirq on the sending core) is charged to whatever runs there, so a rank
# sharing the fault rank's core was slowed too (4-rank jobs of seeds 95000+: its core probe 75-307 % slower, set
# aside as noisy); alone there, it falls on the fault rank, as on a host of its own.
ISOLATED_FAULTS = ("network_contention", "intermittent_network_contention")
# Faults of the link, which slow the gradient all_reduce only: switched on at the end of the step before their
# own (after its last collective: nothing crosses the link until the next step's all_reduce), so the traffic
# flows when that all_reduce starts (switched on at the step's start, the blaster, at the lowest priority, was
# still connecting: 2-rank faults of 0.08 took 0.3 ms of their 2.9, seeds 97960+); and off as soon as backward,
# and with it DDP's all_reduce, is over, so the link's queue drains before the step's loss all_reduce (switched
# off at the step's end, the traffic's last 5 ms of queue made the loss all_reduce end 3-4 ms later on the fault
# rank, which then began the next step that much late: seeds 97908-97910).
LINK_FAULTS = ("network_contention", "intermittent_network_contention")
# Outside faults tuned by the fault rank's transfer after the last rank arrived (tune_pace, tune_link_rate), the
# truth's own measure: in their unrecorded steps every rank shares its arrival (one all_reduce of a number). The
# fault rank's own t_ready-to-t_bwd included its wait for later peers: the tuner saw the fault larger than it was
# and sped the link up (slow_communication at 0.08, seeds 98100+: 359 -> 521 Mbit/s at 4 ranks, 0.08 ms taken of
# 5.8 intended), as the pace undershot at 8 ranks.
TRANSFER_TUNED = ("slow_communication",) + LINK_FAULTS
# Outside faults tuned by the fault rank's arrival lateness (tune_share): how much later its last gradient was
# ready than the latest of its peers' (every rank shares its arrival in the unrecorded steps: one all_gather of
# a number). cpu_throttling was tuned by the rank's run-queue wait until 2026-12-06, but part of that wait falls
# where the rank would have waited anyway: at 0.08 on 2 ranks (target 2.9 ms) the tuned quota made it wait
# 2.8 ms a step and arrive 1.1-1.2 ms late (held-out runs at 664373b and 90801bd), and it arrived -0.4 to 3.7 ms
# late over six runs, under strata's minimum effect in four. The truth's took measure stays the run-queue wait.
ARRIVAL_TUNED = ("cpu_throttling",)
BASE_LAYER_MS = 3.0  # emulated device time per forward layer with at most one rank per core
# A core whose timed work before the job takes this many times the fastest core's is measurably slower: floating
# ranks are kept off it (this VM's host runs one of its 2 cores 60-100 % slower for whole runs).
SLOW_CORE_RATIO = 1.25
# ... and when one is, the launcher times the cores again every CORE_WAIT_PERIOD_S for up to --core-wait seconds
# before it leaves the slow one out: the host slows a vCPU in episodes of about 10 s (timed every 0.5 s for 90 s
# on 2026-12-05: core 0 1.6-1.8x slower for 10 s, then in flickers of 1-2 s), while leaving it out for the whole
# job put 4 and 8 ranks on one core, where the fault rank's helpers slow every rank alike (8 of 9 intermittent CPU
# contention and slow compute cases of 4 and 8 ranks on one core missed, tuning seeds 96000+).
CORE_WAIT_S = 15.0
CORE_WAIT_PERIOD_S = 0.5
WAIT_STEPS, WARMUP_STEPS = 4, 1  # unrecorded steps before the active ones: DDP rebuilds its buckets in the
# first, and the fault's size is tuned in all of them
# The outside faults whose size is tuned by feedback (the kernel's answer to a memory limit or a CPU quota is not
# known in advance) wait this many steps more, one correction per fault-on unrecorded step (tune_cut, tune_quota)
TUNED_OUTSIDE = ("memory_pressure", "cpu_throttling", "slow_communication", "network_contention",
                 "intermittent_network_contention")
TUNING_STEPS = 8
# memory_pressure: the first cut below the rank's memory use, MB per ms of the target at one rank per core (then
# tuned), and the cut's bounds as shares of the table. Each step reads one row from each of a random 1/16 of the
# table's pages (TABLE_READ_EVERY), a 4 KiB read for each page missing (no read-around: MADV_RANDOM), so with C of
# its T MB cut the rank misses about a share C/T of its reads: refaults in proportion to the cut. A cyclic scan
# misses every page under any limit below the table and none above: until 2026-12-05 (a quarter of a 64 MB table
# each step, the limit keeping 0.9 of the file pages at magnitudes 0.08 and 0.15) it refaulted 0-4417 pages a
# step alike at both, and 7 of 9 memory cases of the held-out run at 8e3f826 were set aside.
CUT_MB_PER_MS = 1.0
CUT_MIN_SHARE, CUT_MAX_SHARE = 0.002, 0.75
TABLE_READ_EVERY = 16  # each step reads this share (1 / N) of the table's pages, at random
# cpu_throttling: the least share of a period the tuning asks for (share_and_quota then raises it to the kernel's
# least quota, 1 ms: 0.1 of a 10 ms period, 0.4 of a 2.5 ms one)
MIN_SHARE = 0.1
STALL_MIN_SHARE = 0.1  # dataloader_stall's least sleep per sample, a share of the target per sample (tune_stall)
FINE_PERIOD_US, COARSE_PERIOD_US = 2500, 10000  # cpu_throttling's periods (default_period_us)


def wait_steps(a):
    """The profiler's unrecorded wait steps for this job's fault."""
    return WAIT_STEPS + (TUNING_STEPS if a.fault in TUNED_OUTSIDE else 0)


class WarmupFeedback:
    """What an outside fault's tuning has seen: its measure in the baseline iterations (fault off), then per
    fault-on unrecorded step (the knob's setting, the measure beyond the baseline's `reference`: by default its
    least value, as a spike in one baseline step would hide the fault; the median for a measure that swings
    both ways, as a rank's arrival against its latest peer does, where the least value would be its largest
    lead). tune_cut and tune_share read `seen`."""

    def __init__(self, reference=min):
        self.base, self.seen, self.reference = [], [], reference

    def observe(self, it, hit, knob, value):
        """Takes one unrecorded iteration's measure; True when it was a fault-on step (a correction is due)."""
        if it in injectors.base.BASELINE_ITERS:
            self.base.append(value)
        elif hit and self.base:
            self.seen.append((knob, value - self.reference(self.base)))
            return True
        return False


def write_replacing(path, text):
    """Writes `text` to `path` whole: through a temporary file renamed over it, so a reader never sees half of it."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def bounded_move(now, wanted, lo, hi):
    """The feedback tuners' one step (tune_cut, tune_share, tune_pace, tune_stall): toward `wanted`, but by at most a
    factor 2 from the setting `now` (one step's measure scatters), and within lo..hi."""
    return min(hi, max(lo, min(2.0 * now, max(0.5 * now, wanted))))


def tune_cut(history, target_ms, table_mb):
    """memory_pressure's next cut (MB) from the fault-on steps so far, [(cut MB, ms the table reads took longer
    than their baseline)], the last one the cut now: the target over the median cost per MB cut of all of them
    (refaults grow in proportion to the cut; one step's cost scatters by 2x either way, so the median of all,
    as the compute faults tune from their median unit cost), moved by at most a factor 2 from the cut now
    (doubled when the median saw nothing), within CUT_MIN_SHARE..CUT_MAX_SHARE of the table."""
    cut = history[-1][0]
    per_mb = statistics.median(max(0.0, extra) / c for c, extra in history)
    wanted = 2.0 * cut if per_mb <= 0 else target_ms / per_mb
    return bounded_move(cut, wanted, CUT_MIN_SHARE * table_mb, CUT_MAX_SHARE * table_mb)


def tune_stall(stall_s, oversleeps, target_s):
    """dataloader_stall's next sleep per sample (s), from the oversleep per sample of the fault-on steps so far (how
    much longer each sleep took than asked: the machine's wake-up latency), toward the target per sample: the target
    less their median, moved by at most a factor 2 from the sleep now (bounded_move), never below STALL_MIN_SHARE of
    the target nor above it. Before, the sleep was set to the target less the median outright: on a crowded machine
    the first fault-on step's wake-ups overslept the whole target, the sleep became 0, and with no sleep there was
    nothing left to measure or tune (held-out run at c6f19db, 8 ranks at 0.08: 0.0 ms of 11.5 injected)."""
    wanted = target_s - statistics.median(oversleeps)
    return bounded_move(stall_s, wanted, STALL_MIN_SHARE * target_s, target_s)


def tune_share(history, target_ms):
    """cpu_throttling's next quota as a share of the period, from the steps so far [(share, ms the rank arrived
    later than its latest peer beyond its baseline: ARRIVAL_TUNED)], the last one the share now (the first: its
    baseline CPU time per step at share 1/2, see first_share). A rank that needs D ms of CPU a step before it
    arrives and gets a share s of a core runs its bursts at rate s: it arrives about D (1/s - 1) later. Each step
    implies a D; their median (one step's lateness scatters, as the compute faults tune from their median unit
    cost) gives the share whose lateness is the target,
    D / (D + target), moved by at most a factor 2 from the share now (halved when the median saw no wait),
    within MIN_SHARE..1."""
    share = history[-1][0]
    implied = statistics.median(max(0.0, extra) / (1.0 / s - 1.0) for s, extra in history if s < 1.0)
    wanted = 0.5 * share if implied <= 0 else implied / (implied + target_ms)
    return bounded_move(share, wanted, MIN_SHARE, 1.0)


def tune_pace(history, target_ms, link_mbit):
    """network_contention's next cap on the traffic (Mbit/s each way) from the fault-on steps so far [(cap, ms
    the fault rank's gradient all_reduce took beyond its baseline)], the last one the cap now. With the traffic
    at p of a link of R, the all_reduce's W (Mbit·ms) go at R - p: W/(R - p) - W/R longer. Each step implies a W;
    their median (one step's transfer scatters) gives the cap whose slowdown is the target, R - 1/(T/W + 1/R),
    moved by at most a factor 2 from the cap now (doubled when the median saw nothing), within 2-95 % of R."""
    cap = history[-1][0]
    implied = statistics.median(max(0.0, extra) / (1.0 / (link_mbit - p) - 1.0 / link_mbit)
                                for p, extra in history)
    wanted = 2.0 * cap if implied <= 0 else link_mbit - 1.0 / (target_ms / implied + 1.0 / link_mbit)
    return bounded_move(cap, wanted, 0.02 * link_mbit, 0.95 * link_mbit)


def tune_link_rate(history, target_ms, link_mbit):
    """slow_communication's next rate for the fault rank's link (Mbit/s each way) from the fault-on steps so far
    [(rate, ms the fault rank's gradient all_reduce took beyond its baseline)], the last one the rate now. At a
    rate r of a link of R, the all_reduce's W (Mbit·ms) take W/r - W/R longer. Each step that saw a slowdown
    implies a W; their median gives the rate whose slowdown is the target, 1 / (T/W + 1/R), moved by at most a
    factor 2 from the rate now; halved when the last step saw none (a transfer that the ranks' CPU bounds slows
    only once the link is slower than that), within 1-100 % of R. The first rate, from the model alone
    (network.py SlowCommunication), took -0.6 and -4.9 ms of 5.8 and 11.5 intended at 4 and 8 ranks and 0.08
    (held-out run at 32de737)."""
    rate, last = history[-1]
    slowed = [extra / (1.0 / r - 1.0 / link_mbit) for r, extra in history if 0 < r < link_mbit and extra > 0]
    implied = statistics.median(slowed) if slowed and last > 0 else 0.0
    wanted = 0.5 * rate if implied <= 0 else 1.0 / (target_ms / implied + 1.0 / link_mbit)
    return bounded_move(rate, wanted, 0.01 * link_mbit, float(link_mbit))


def arrival_lateness_ms(ready_by_rank, rank):
    """How much later `rank`'s last gradient was ready than the latest of its peers', in ms (negative: earlier),
    from every rank's ready time (time.monotonic: one clock for every process of the machine): what it makes the
    others wait when positive (ARRIVAL_TUNED). Not clipped at 0: the tuning takes the fault-on steps' value less
    the baseline's, and a rank that arrived early with the fault off must first lose that lead (clipped, a rank
    12 ms early in its baseline read as never late, and its quota fell to the least)."""
    peers = [t for r, t in enumerate(ready_by_rank) if r != rank]
    return (ready_by_rank[rank] - max(peers)) * 1e3 if peers else 0.0


def first_share(cpu_ms, target_ms):
    """cpu_throttling's first share, for a rank that used cpu_ms of CPU a step with the fault off: D / (D + target),
    as tune_share reads the history [(1/2, D)] (at share 1/2 a rank of D ms waits D more), so within 1/4..1."""
    return tune_share([(0.5, cpu_ms)], target_ms)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2, help="number of ranks, 2-8 (default 2)")
    ap.add_argument("--steps", type=int, default=6, help="profiled (active) steps (default 6)")
    ap.add_argument("--fault", choices=FAULTS, default="none")
    ap.add_argument("--fault-rank", type=int, default=1, help="rank that gets the fault (default 1)")
    ap.add_argument("--magnitude", type=float, default=0.3,
                    help="injected time per affected step / emulated device time per step (default 0.3)")
    ap.add_argument("--every", type=int, default=3, help="intermittent: every K-th ProfilerStep (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--core-shift", type=int, default=None,
                    help="rank r runs on usable core (r + K) mod cores (default: K = --seed, so the seeds of a "
                         "suite put each rank on each core; a core the host slows then falls on fault and "
                         "clean ranks alike)")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--layers", type=int, default=4, help="hidden layers (default 4)")
    ap.add_argument("--width", type=int, default=128, help="layer width (default 128)")
    ap.add_argument("--batch", type=int, default=16, help="per-rank batch size (default 16)")
    ap.add_argument("--layer-ms", type=float, default=None,
                    help="emulated device time per layer in forward; backward waits twice that (default 3 times "
                         "ceil(ranks / usable cores): the job's CPU demand the same share of the machine at any size)")
    ap.add_argument("--placement", choices=("auto", "float", "pinned"), default="auto",
                    help="float: every rank may run on every usable core not measurably slower than the fastest "
                         "(--slow-core-ratio); pinned: rank r on the (r + --core-shift) mod n-th of those n cores; "
                         "auto (default): pinned for " + ", ".join(PINNED_FAULTS) + ", and for the others when "
                         f"the rotation is on and at most {ROTATE_MAX_RANKS_PER_CORE} ranks share a core; else float")
    ap.add_argument("--rotate-ms", type=float, default=ROTATE_PERIOD_S * 1000,
                    help="every this many ms, move the pinned ranks and their helpers to the next core, all "
                         "together (lab/core_rotation.py), so a core the host slows slows every rank alike; pinned "
                         "ranks then use every core, none left out for being slower (default "
                         f"{ROTATE_PERIOD_S * 1000:g}; 0: no rotation, the cores timed and the slower ones left "
                         "out as --slow-core-ratio and --core-wait say)")
    ap.add_argument("--slow-core-ratio", type=float, default=SLOW_CORE_RATIO,
                    help="cores whose work timed before the job takes this many times the fastest core's are left "
                         f"out of the ranks' cores, floating or pinned (default {SLOW_CORE_RATIO}; 0: every core)")
    ap.add_argument("--core-wait", type=float, default=CORE_WAIT_S,
                    help="seconds to wait, timing the cores again, for every core to be within --slow-core-ratio "
                         f"of the fastest before the job starts without the slow ones (default {CORE_WAIT_S:g}; "
                         "0: no wait)")
    ap.add_argument("--host-ms", type=float, default=0.0,
                    help="real CPU work per step on every rank (matmul blocks before each layer's device wait), "
                         "like a GPU job's host-side launch work (default 0)")
    ap.add_argument("--table-mb", type=float, default=None,
                    help="a memory-mapped lookup table of this size on every rank, one row of a random 1/16 of its "
                         "pages read each step (default 128 for memory_pressure, else 0)")
    ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                    help="interpreter with torch for the ranks (default /usr/bin/python3)")
    ap.add_argument("--nice", type=int, default=0,
                    help="niceness of the ranks; negative (root) keeps other load on the machine from adding "
                         "noise (default 0)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before the job is killed (default 600)")
    ap.add_argument("--netns", action="store_true",
                    help="each rank in a network namespace of its own, joined by veth to a bridge (root; implied "
                         "by the network faults)")
    ap.add_argument("--link-mbit", type=int, default=1000,
                    help="with --netns: every link shaped like a NIC of this rate, 0 = not shaped (default 1000)")
    ap.add_argument("--contention-rate", choices=("magnitude", "link"), default="magnitude",
                    help="network_contention: shape every link to the rate at which the blaster's share of the fault "
                         "rank's link costs --magnitude of the device time (magnitude, the default), or keep "
                         "--link-mbit (link: the lab before 2026-12-04, whose contention mostly did not take)")
    ap.add_argument("--quota", type=float, default=None,
                    help="cpu_throttling: CPU quota as a fraction of one core, fixed (default: tuned by the fault rank, "
                         "from its own CPU time per step with the fault off, to make it wait --magnitude of the device "
                         "time; see first_share and tune_share)")
    ap.add_argument("--period-us", type=int, default=None,
                    help="cpu_throttling: CFS period in us (default: %d when every rank has a core of its own, else %d; "
                         "see default_period_us)" % (FINE_PERIOD_US, COARSE_PERIOD_US))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if not 2 <= a.ranks <= 8:
        ap.error("--ranks must be 2..8")
    if a.steps < 1:
        ap.error("--steps must be >= 1")
    cores = len(os.sched_getaffinity(0))
    # refit_to_cores may redo these
    a.defaulted = {"layer_ms": a.layer_ms is None, "quota": a.quota is None, "period_us": a.period_us is None}
    if a.layer_ms is None:
        a.layer_ms = default_layer_ms(a.ranks, cores, isolated(a))
    if a.period_us is None:
        a.period_us = default_period_us(a.ranks, cores, a.quota)
    if a.period_us < MIN_QUOTA_US:
        ap.error(f"--period-us must be >= {MIN_QUOTA_US} (the kernel's least CFS period)")
    if a.quota is not None and not a.defaulted["period_us"] and a.quota * a.period_us < MIN_QUOTA_US:
        ap.error(f"--quota {a.quota} of --period-us {a.period_us} is under the kernel's least CFS quota "
                 f"({MIN_QUOTA_US} us): give a larger quota or period")
    if a.rotate_ms < 0:
        ap.error("--rotate-ms must be >= 0")
    if a.placement == "auto":
        a.placement = auto_placement(a, cores)
    if a.layers < 2 or a.width < 1 or a.batch < 1 or a.layer_ms < 0:
        ap.error("--layers must be >= 2; --width, --batch >= 1; --layer-ms >= 0")
    if a.fault != "none" and not 0 <= a.fault_rank < a.ranks:
        ap.error(f"--fault-rank must be in 0..{a.ranks - 1}")
    if not 0 < a.magnitude <= 5:
        ap.error("--magnitude must be in (0, 5]")
    if a.core_wait < 0:
        ap.error("--core-wait must be >= 0")
    if a.every < 1:
        ap.error("--every must be >= 1")
    if a.fault in injectors.NETWORK:
        a.netns = True
    if a.table_mb is None:
        a.table_mb = 128.0 if a.fault == "memory_pressure" else 0.0
    if a.quota is None:
        a.quota = default_quota(a.ranks, len(os.sched_getaffinity(0)), a.magnitude)
    return a


def isolated(a):
    """Whether the fault rank gets a core of its own (ISOLATED_FAULTS)."""
    return a.fault in ISOLATED_FAULTS


def ranks_per_core(ranks, cores, isolate=False):
    """The most ranks that share a core: spread evenly, or, with the fault rank alone on one core (isolate, two
    or more cores), the others spread over the rest."""
    cores = max(1, cores)
    if isolate and cores >= 2:
        return max(1, -(-(ranks - 1) // (cores - 1)))
    return max(1, -(-ranks // cores))


def default_layer_ms(ranks, cores, isolate=False):
    """The emulated device time per forward layer: BASE_LAYER_MS per rank sharing a core, so that the job's CPU
    demand (each rank's host work per step over its step time) is the same share of the machine at any size."""
    return BASE_LAYER_MS * ranks_per_core(ranks, cores, isolate)


def default_quota(ranks, cores, magnitude):
    """cpu_throttling's CPU quota when the fault rank has no baseline to tune it from (the lab before 2026-12-05:
    it made the fault rank wait under 2 ms a step in 6 of 18 cases at magnitudes 0.08 and 0.15, 130-220 ms at 0.6
    for a target of 43): a rank that shares its core with others gets only its share of it, so the quota is of that
    share and bites as hard with 4 or 8 ranks on two cores as with one rank per core."""
    return min(0.9, 0.09 / magnitude) / -(-ranks // max(1, cores))


def default_period_us(ranks, cores, quota=None):
    """cpu_throttling's CFS period. A rank at a quota share s of a core runs its bursts of host work (2.5 ms each
    with --host-ms 10 over 4 layers) at rate s, and waits in proportion (tune_share's model), only when the period
    is short next to a burst; at 10 ms a burst fitted one period's quota or waited out the period's rest, and at 2
    ranks (shares 0.4-0.9) the wait jumped between nothing and 3x the target (seeds 98411-98417, 21 jobs each:
    2.5 ms took the 2 % bar in 20 and was within 0.5-2x of the target in 17, 10 ms in 18 and 14). The kernel's
    least quota is 1 ms, so 2.5 ms reaches shares down to 0.4: ranks that share a core need shares of 0.1-0.2
    and keep 10 ms, as does a fixed --quota (`quota`) under what 2.5 ms can give."""
    fine = ranks_per_core(ranks, cores) <= 1 and (quota is None or quota * FINE_PERIOD_US >= MIN_QUOTA_US)
    return FINE_PERIOD_US if fine else COARSE_PERIOD_US


def auto_placement(a, cores):
    """--placement auto: pinned (and so rotated) when the fault pins helpers to the fault rank's core, or when the
    rotation is on and at most ROTATE_MAX_RANKS_PER_CORE ranks share a core; else floating."""
    if a.fault in PINNED_FAULTS:
        return "pinned"
    if a.rotate_ms > 0 and ranks_per_core(a.ranks, cores, isolated(a)) <= ROTATE_MAX_RANKS_PER_CORE:
        return "pinned"
    return "float"


def trimmed_mean(values, trim):
    """The mean of `values` without the floor(trim * n) lowest and as many highest (all of them when that would
    leave none)."""
    v = sorted(values)
    k = int(trim * len(v))
    kept = v[k:len(v) - k] or v
    return sum(kept) / len(kept)


def fast_cores(core_ms, ratio=SLOW_CORE_RATIO):
    """The cores floating ranks may run on: those whose timed work (measure_cores: core -> ms) took under `ratio`
    times the fastest core's; every core when `ratio` is 0 or none is measurably slower."""
    fastest = min(core_ms.values())
    if ratio <= 0 or fastest <= 0:
        return sorted(int(c) for c in core_ms)
    return sorted(int(c) for c, ms in core_ms.items() if ms < ratio * fastest)


def wait_for_even_cores(measure, cores, ratio, wait_s, period_s=CORE_WAIT_PERIOD_S, clock=time.monotonic,
                        sleep=time.sleep):
    """(core -> ms, seconds waited): the cores timed by measure(cores) until none is measurably slower than the
    fastest (fast_cores keeps them all) or wait_s has passed; the last timing either way."""
    started = clock()
    timed = measure(cores)
    while len(fast_cores(timed, ratio)) < len(timed) and clock() - started + period_s <= wait_s:
        sleep(period_s)
        timed = measure(cores)
    return timed, round(clock() - started, 3)


def refit_to_cores(a, cores):
    """The defaults that depend on the cores the ranks share (device time per layer, cpu_throttling's quota),
    made again for `cores` of them; values given on the command line are kept."""
    defaulted = getattr(a, "defaulted", {})
    if defaulted.get("layer_ms"):
        a.layer_ms = default_layer_ms(a.ranks, cores, isolated(a))
    if defaulted.get("quota"):
        a.quota = default_quota(a.ranks, cores, a.magnitude)
    if defaulted.get("period_us"):
        a.period_us = default_period_us(a.ranks, cores, None if defaulted.get("quota") else a.quota)


def rank_cpus(a, ctx, rank, rank_cores):
    """LAB_CPU of a rank: its one core when pinned, else the cores it may float over (comma-separated)."""
    if a.placement == "pinned":
        return str(ctx.core_of(rank))
    return ",".join(str(c) for c in rank_cores)


def measure_cores(cores, reps=3):
    """The same fixed pure-Python work timed on each core (thread CPU time, median of `reps`, ms), the launcher
    pinned to that core for it: how fast each core runs just before the job. The launcher's affinity is restored."""
    before = os.sched_getaffinity(0)
    out = {}
    try:
        for core in cores:
            os.sched_setaffinity(0, {core})
            times = []
            for _ in range(reps):
                t0 = time.thread_time()
                sum(i * i for i in range(100_000))
                times.append((time.thread_time() - t0) * 1e3)
            out[str(core)] = round(statistics.median(times), 3)
    finally:
        os.sched_setaffinity(0, before)
    return out


def thread_kernel_counters():
    """What the kernel counted for this (the rank's main) thread: (run-queue wait ns, major page faults).
    The run-queue wait (/proc/thread-self/schedstat, second field) is the time the thread was runnable while
    another task held its CPU; neither number is anything strata measures or decides on."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            wait_ns = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        wait_ns = 0
    return wait_ns, resource.getrusage(resource.RUSAGE_THREAD).ru_majflt


def kernel_deltas(before, after):
    return {"rq_wait_ms": (after[0] - before[0]) / 1e6, "majflt": after[1] - before[1]}


# ----------------------------------------------------------------------------------------------------------
# rank side
# ----------------------------------------------------------------------------------------------------------
def worker(a):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    cpus = {int(c) for c in os.environ.get("LAB_CPU", "").split(",") if c.strip() and int(c) >= 0}
    if cpus:
        os.sched_setaffinity(0, cpus)  # before torch starts any thread, so they inherit it
    if a.nice:
        # With autogroup scheduling (Debian's default) niceness only ranks threads within one session, so each
        # rank runs in a session of its own (the launcher starts it so) and that session's group gets it too.
        os.setpriority(os.PRIO_PROCESS, 0, a.nice)
        try:
            with open("/proc/self/autogroup", "w") as f:
                f.write(str(a.nice))
        except OSError:
            pass
    stats_dir = os.environ["LAB_STATS_DIR"]

    import gc
    import gzip
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.profiler import ProfilerAction, record_function
    from torch.utils.data import DataLoader, Dataset
    from torch.utils.data.distributed import DistributedSampler

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    faulty = a.fault != "none" and rank == a.fault_rank
    target_s = a.magnitude * device_ms_per_step(a) / 1000.0
    injected = {"s": 0.0}  # injected time in the current step, measured
    intermittent = a.fault.startswith("intermittent_")

    def affected(label):
        if not faulty:
            return False
        if intermittent:
            return label % a.every == 0
        return True

    # -- data -------------------------------------------------------------------------------------------
    class Samples(Dataset):
        """Pre-made samples kept as a Python list, so __getitem__ adds no tensor ops of its own."""

        def __init__(self, n, stall_s):
            g = torch.Generator().manual_seed(a.seed)
            x = torch.randn(n, a.width, generator=g)
            y = torch.randint(0, 10, (n,), generator=g)
            self.items = [(x[i].clone(), y[i].clone()) for i in range(n)]
            self.stall_s = stall_s

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            if self.stall_s:
                t0 = time.perf_counter()
                time.sleep(self.stall_s)  # a slow loader: decode / storage latency per sample
                injected["s"] += time.perf_counter() - t0
            return self.items[i]

    iters = wait_steps(a) + WARMUP_STEPS + a.steps
    stall_s = target_s / a.batch if faulty and a.fault == "dataloader_stall" else 0.0
    data = Samples(iters * a.batch * world, stall_s)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=a.seed, drop_last=True)
    loader = DataLoader(data, batch_size=a.batch, sampler=sampler, num_workers=0, drop_last=True)

    # -- model ------------------------------------------------------------------------------------------
    fwd_s, bwd_s = a.layer_ms / 1000.0, 2 * a.layer_ms / 1000.0

    class DeviceWait(torch.autograd.Function):
        """Emulated device time: the host waits a fixed time, as for a GPU kernel, in forward and backward."""

        @staticmethod
        def forward(ctx, x):
            with record_function("lab::device_wait"):
                time.sleep(fwd_s)
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            with record_function("lab::device_wait"):
                time.sleep(bwd_s)
            return g

    extra = {"reps": 0, "w": None, "x": None}

    def extra_compute():
        w, x = extra["w"], extra["x"]
        with torch.no_grad():
            for _ in range(extra["reps"]):
                x = torch.tanh(x @ w)
        extra["x"] = x

    # Host work (--host-ms): real CPU compute on every rank, the same on all, before each layer's device wait,
    # like the host-side work (kernel launches, Python) of a GPU job. Faults from outside that take CPU away
    # from a rank (cpu_contention, cpu_throttling, memory_pressure) stretch it.
    host = {"reps": 0, "w": None, "x": None}

    def host_work():
        x = host["x"]
        with torch.no_grad():
            for _ in range(host["reps"]):
                x = torch.tanh(x @ host["w"])

    # The core probe: the same fixed CPU work on every rank before each layer's device wait, timed in the
    # thread's CPU time. It measures how fast the rank's core ran, from the injector's side: on a virtual
    # machine the host can slow one vCPU (a busy hyperthread sibling, descheduling) without the guest seeing it
    # as steal or run-queue wait, and the guest then charges the lost cycles to the task as CPU time (measured
    # 2026-11-27: a matmul loop ran up to 65 % slower on core 0 than on core 1, for seconds at a time, with
    # /proc/stat's steal at 0). No fault touches it: faults inject their own code, or take wall time (contention, quota).
    probe_g = torch.Generator().manual_seed(a.seed + 3)
    probe = {"w": torch.randn(PROBE_WIDTH, PROBE_WIDTH, generator=probe_g) / PROBE_WIDTH ** 0.5,
             "x": torch.randn(PROBE_WIDTH, PROBE_WIDTH, generator=probe_g)}

    probe_ms = []  # this step's probes

    def core_probe():
        with record_function("lab::core_probe"), torch.no_grad():
            t0 = time.thread_time()
            x = probe["x"]
            for _ in range(PROBE_REPS):
                x = torch.tanh(x @ probe["w"])
            probe_ms.append((time.thread_time() - t0) * 1e3)

    # A memory-mapped lookup table (--table-mb, every rank its own file), like an embedding table or a
    # memory-mapped dataset: each step the forward gathers one row from each of a random 1/16 of its pages. Its
    # page cache is dropped after writing (for this file only), so the pages are charged to the rank's memory
    # cgroup when it reads them: under memory_pressure the kernel reclaims them and the rank faults them in again
    # from disk.
    table = {"t": None, "stride": 1}
    if a.table_mb > 0:
        tpath = os.path.join(stats_dir, f"table-{rank}.bin")
        n_rows = int(a.table_mb * 2**20) // (4 * a.width)
        with open(tpath, "wb") as f:
            block = os.urandom(4096 * a.width * 4)
            left = n_rows * a.width * 4
            while left > 0:
                f.write(block[:min(left, len(block))])
                left -= len(block)
            f.flush()
            os.fsync(f.fileno())
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        # mapped for random reads: a missing page is read alone (MADV_RANDOM: no read-around of its neighbours)
        with open(tpath, "r+b") as f:
            table["map"] = mmap.mmap(f.fileno(), n_rows * a.width * 4, access=mmap.ACCESS_WRITE)
        table["map"].madvise(mmap.MADV_RANDOM)
        table["t"] = torch.frombuffer(table["map"], dtype=torch.int32).view(n_rows, a.width)
        table["stride"] = max(1, 4096 // (4 * a.width))  # rows per page
        table["pages"] = n_rows // table["stride"]
        table["gen"] = torch.Generator().manual_seed(a.seed + 3)  # the same pages on every rank, step by step
        table["t"].index_select(0, torch.arange(0, n_rows, table["stride"])).sum()  # all of it once: warm

    # sized for one rank per core: with more, the device time (so the target) grows with them, and so does what a
    # refault costs (the rank waits for its core after each read), so the cut stays about the same
    first_cut = CUT_MB_PER_MS * target_s * 1e3 * BASE_LAYER_MS / max(a.layer_ms, 1e-9)
    mem = {"cut_mb": min(CUT_MAX_SHARE * a.table_mb, max(CUT_MIN_SHARE * a.table_mb, first_cut))}
    mem_feedback = WarmupFeedback()  # memory_pressure's tuning

    def table_lookup():
        """One row from each of a random 1/TABLE_READ_EVERY of the table's pages, timed (table["ms"])."""
        with record_function("lab::table_lookup"):
            t0 = time.perf_counter()
            pages = torch.randint(table["pages"], (table["pages"] // TABLE_READ_EVERY,), generator=table["gen"])
            out = table["t"].index_select(0, pages * table["stride"]).sum()
            table["ms"] = (time.perf_counter() - t0) * 1e3
            return out

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(a.width, a.width) for _ in range(a.layers))
            self.head = torch.nn.Linear(a.width, 10)
            self.inject = False

        def forward(self, x):
            if table["t"] is not None:
                table_lookup()
            for i, layer in enumerate(self.layers):
                x = torch.relu(layer(x))
                core_probe()
                if host["reps"]:
                    with record_function("lab::host_work"):
                        host_work()
                x = DeviceWait.apply(x)
                if i == len(self.layers) // 2 - 1 and self.inject:
                    t0 = time.perf_counter()
                    extra_compute()
                    injected["s"] += time.perf_counter() - t0
            return self.head(x)

    # -- fault calibration ------------------------------------------------------------------------------
    # A first guess here; each fault is then tuned in the unrecorded warm-up steps
    # (profiler on, same core, same load) so that the injected time per step comes close to the target.
    compute_fault = faulty and a.fault in ("slow_compute", "intermittent_slow_compute")
    # Every rank moves its start-up heap (torch's modules, ~100k objects whose full collection takes ~60 ms
    # here) out of the collector's reach, as long-running trainers do; an automatic full collection on a
    # clean rank is then cheap, and the gc_pause fault's own live heap sets its pause.
    gc.collect()
    gc.freeze()
    gc_heap, gc_cycles = [], 1000
    unit_cost = []  # seconds per extra matmul block, oversleep per sample, or GC time per tracked object
    if compute_fault:
        g = torch.Generator().manual_seed(a.seed + 1)
        extra["w"] = torch.randn(a.width, a.width, generator=g) / a.width ** 0.5
        extra["x"] = torch.randn(4 * a.batch, a.width, generator=g)
        extra["reps"] = 1
        times = []
        for _ in range(30):
            t0 = time.perf_counter()
            extra_compute()
            times.append(time.perf_counter() - t0)
        unit_cost.append(statistics.median(times[10:]))
        extra["reps"] = max(1, round(target_s / unit_cost[0]))
    elif faulty and a.fault == "gc_pause":
        def full_gc_s():
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                gc.collect()
                best = min(best, time.perf_counter() - t0)
            return best

        def resize(n):
            if n > len(gc_heap):
                gc_heap.extend([i] for i in range(n - len(gc_heap)))  # lists stay GC-tracked (tuples may not)
            else:
                del gc_heap[n:]
            return full_gc_s()

        # Size the live heap so that one full collection takes about the target time. The cost per object is
        # not linear (it jumps once the heap outgrows the caches), so search: double, then bisect.
        lo, hi = 0, 20_000
        while resize(hi) < target_s and hi < 20_000_000:
            lo, hi = hi, 2 * hi
        for _ in range(8):
            mid = (lo + hi) // 2
            t = resize(mid)
            if abs(t - target_s) <= 0.05 * target_s:
                break
            lo, hi = (mid, hi) if t < target_s else (lo, mid)
        else:
            resize(hi)

    dist.init_process_group("gloo", rank=rank, world_size=world)
    if a.host_ms > 0:  # every rank measures the cost of one block; all use the mean, so all do the same work
        g = torch.Generator().manual_seed(a.seed + 2)
        host["w"] = torch.randn(a.width, a.width, generator=g) / a.width ** 0.5
        host["x"] = torch.randn(a.batch, a.width, generator=g)
        host["reps"] = 20
        times = []
        for _ in range(25):
            t0 = time.perf_counter()
            host_work()
            times.append((time.perf_counter() - t0) / host["reps"])
        unit = torch.tensor([statistics.median(times[5:])], dtype=torch.float64)
        dist.all_reduce(unit)
        host["reps"] = max(1, round(a.host_ms / 1000.0 / a.layers / (unit.item() / world)))
    torch.manual_seed(a.seed)
    net = Net()
    ddp = DDP(net)  # the model is under DDP's 1 MB first bucket: one gradient all_reduce per step
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    dist.barrier()

    def make_cyclic_garbage():
        for _ in range(gc_cycles):
            p, q = [], []
            p.append(q)
            q.append(p)

    # Arrival at the gradient all_reduce: when the last gradient (the first layer's, computed last) is ready.
    # All ranks run on this machine, so their monotonic clocks agree and the launcher compares arrivals.
    marks = {"ready": 0.0}

    def grad_ready(g):
        marks["ready"] = time.monotonic()

    for prm in net.layers[0].parameters():
        prm.register_hook(grad_ready)

    # Faults injected from outside (lab/injectors): the fault rank switches them on and off at step boundaries.
    toggle = json.loads(os.environ["LAB_TOGGLE"]) if faulty and os.environ.get("LAB_TOGGLE") else None
    fault_state = {"on": None}
    thr = {}  # cpu_throttling's quota, tuned unless --quota was given
    thr_feedback = WarmupFeedback(reference=statistics.median)  # the rank's arrival lateness (ARRIVAL_TUNED)
    pace = dict(toggle["pace"]) if toggle is not None and "pace" in toggle else None  # network_contention's cap
    pace_feedback = WarmupFeedback()
    link_rate = dict(toggle["rate"]) if toggle is not None and "rate" in toggle else None  # slow_communication's
    rate_feedback = WarmupFeedback()

    def run_actions(actions):
        for act in actions:
            if act[0] == "signal":
                os.kill(int(act[1]), int(act[2]))
            elif act[0] == "write":
                with open(act[1], "w") as f:
                    f.write(act[2])
            elif act[0] == "run":
                subprocess.run(act[1], check=True, stdin=subprocess.DEVNULL, capture_output=True)
            elif act[0] == "pipe":  # a line to a command reader (injectors/base.py start_command_pipe)
                injectors.send_line(act[1], act[2])
            elif act[0] == "quota":  # [.., knob path, text with {quota}, first quota us, period us]
                path, text, first, period = act[1:5]
                if "share" not in thr:  # tuned: from the rank's own CPU time per step with the fault off
                    cpu = [t["cpu_ms"] for _, _, _, _, _, t in steps_seen if t["iter"] in injectors.base.BASELINE_ITERS]
                    tuned = a.defaulted.get("quota") and cpu
                    thr["share"] = first_share(statistics.median(cpu), target_s * 1e3) if tuned else first / period
                thr.update(path=path, text=text, period_us=period)
                set_quota()
            elif act[0] == "memlimit":  # [.., group dir, cgroup version]: see set_memory_limit
                gdir, version = act[1:3]
                if "memlimit" not in fault_state:
                    anon, file_b = anon_and_file(read_memory_stat(gdir), version)
                    fault_state["memlimit"] = {"gdir": gdir, "version": version, "cuts_mb": [],
                                               "anon_bytes": anon, "file_bytes": file_b}
                set_memory_limit()

    def set_link_rate():
        """slow_communication's link rate link_rate["mbit"]: the "on" lines with it, sent now if the fault is on,
        and written down for the truth's mechanism."""
        mbit = str(max(1, int(link_rate["mbit"])))
        toggle["on"] = [["pipe", pipe, line.replace("{rate}", mbit)] for pipe, line in link_rate["on"]]
        if fault_state["on"]:
            run_actions(toggle["on"])
        write_replacing(link_rate["file"], mbit)

    def set_quota():
        """cpu_throttling's quota, the share thr["share"] of the period, written to the group's knob. The share is
        raised to the kernel's least quota first, so the tuning's history holds the share the rank had."""
        thr["share"], quota = share_and_quota(thr["share"], thr["period_us"])
        with open(thr["path"], "w") as f:
            f.write(thr["text"].format(quota=quota))
        if not fault_state.setdefault("quotas_us", []) or fault_state["quotas_us"][-1] != quota:
            fault_state["quotas_us"].append(quota)

    def set_memory_limit():
        """memory_pressure's limit: the rank's anonymous memory now + its file pages at the first switch-on less
        the cut (mem["cut_mb"]), so that the file pages it may keep stay put as its anonymous memory moves."""
        m = fault_state["memlimit"]
        anon, _ = anon_and_file(read_memory_stat(m["gdir"]), m["version"])
        m["limit_bytes"] = int(anon + m["file_bytes"] - mem["cut_mb"] * 2**20)
        if not m["cuts_mb"] or m["cuts_mb"][-1] != round(mem["cut_mb"], 3):
            m["cuts_mb"].append(round(mem["cut_mb"], 3))
        with open(memory_limit_file(m["gdir"], m["version"]), "w") as f:
            f.write(str(m["limit_bytes"]))

    def outside_hit(it, label, recording):
        """Whether an outside fault is on in iteration `it` (ProfilerStep `label`): off for the baseline, on
        before recording, then in the affected steps. Recorded ProfilerSteps are numbered one by one, so the
        next iteration's is label + 1 (and at the edge of the recording an intermittent fault is off anyway)."""
        if recording:
            return affected(label)
        return outside_fault_on_unrecorded(it, wait_steps(a) + WARMUP_STEPS, intermittent)

    def next_hit(it, label):
        return it + 1 < iters and outside_hit(it + 1, label + 1, it + 1 >= wait_steps(a) + WARMUP_STEPS)

    def begin_before_step(it, label):
        """Switches a link fault on at the end of the step before its own (LINK_FAULTS)."""
        if toggle is not None and not fault_state["on"] and next_hit(it, label):
            switch(True)

    def end_in_step(it, label):
        """Switches an outside fault off in the step it slowed when the next iteration runs without it: the
        fault ends in its own step, which bears what switching it off costs (before 2026-12-06 it was switched
        off at the start of the next step, in that step's time)."""
        if toggle is not None and fault_state["on"] and not next_hit(it, label):
            switch(False)

    def switch(on):
        if toggle is not None and fault_state["on"] != on:
            run_actions(toggle["on" if on else "off"])
            fault_state["on"] = on

    tmp_json = os.path.join(stats_dir, f"trace-{rank}.json")
    steps_seen = []  # per iteration: ProfilerStep number, recorded?, affected?, injected ms, timings
    schedule = torch.profiler.schedule(wait=wait_steps(a), warmup=WARMUP_STEPS, active=a.steps)
    batches = iter(loader)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
                                on_trace_ready=lambda p: p.export_chrome_trace(tmp_json)) as prof:
        t_step = time.perf_counter()
        for it in range(iters):
            # the ProfilerStep this iteration runs in, as the profiler named it (1.13 lags the count by one)
            label = int(prof.step_rec_fn.name.rsplit("#", 1)[1]) if prof.step_rec_fn else prof.step_num
            recording = prof.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
            if toggle is not None:  # outside faults: off for the baseline, on before recording, then as told
                hit = outside_hit(it, label, recording)
                was_on = fault_state["on"]
                switch(hit)  # switching memory_pressure on sets its limit
                if hit and was_on and fault_state.get("memlimit"):
                    set_memory_limit()  # follows the rank's anonymous memory (memory_pressure)
            else:  # unrecorded warm-up steps of the fault rank inject too, to tune the fault's size
                hit = affected(label) or (faulty and not recording)
            t0, cpu0 = time.monotonic(), time.process_time()
            kernel0 = thread_kernel_counters()
            probe_ms.clear()
            x, y = next(batches)
            net.inject = hit and compute_fault
            if not hit:
                injected["s"] = 0.0  # the data of this step may already have been fetched (stall counted)
            out = ddp(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            if hit and a.fault == "gc_pause":
                t0 = time.perf_counter()
                make_cyclic_garbage()
                gc.collect()
                injected["s"] += time.perf_counter() - t0
            opt.zero_grad(set_to_none=True)
            loss.backward()
            t_bwd = time.monotonic()
            if a.fault in LINK_FAULTS:
                end_in_step(it, label)
            opt.step()
            avg_loss = loss.detach().clone()
            dist.all_reduce(avg_loss)  # the loss averaged over ranks, for logging: a second, blocking collective
            if a.fault in LINK_FAULTS:
                begin_before_step(it, label)
            else:
                end_in_step(it, label)
            last_ready, arrival_late_ms = marks["ready"], 0.0
            if a.fault in TRANSFER_TUNED and not recording:  # every rank, in the same unrecorded iterations
                last = torch.tensor([marks["ready"]], dtype=torch.float64)
                dist.all_reduce(last, op=dist.ReduceOp.MAX)
                last_ready = last.item()
            if a.fault in ARRIVAL_TUNED and not recording:  # every rank, in the same unrecorded iterations
                ready_by_rank = [torch.zeros(1, dtype=torch.float64) for _ in range(world)]
                dist.all_gather(ready_by_rank, torch.tensor([marks["ready"]], dtype=torch.float64))
                arrival_late_ms = arrival_lateness_ms([t.item() for t in ready_by_rank], rank)
            now = time.perf_counter()
            steps_seen.append((label, recording, hit, injected["s"] * 1e3, (now - t_step) * 1e3,
                               {"iter": it, "t0": t0, "t_ready": marks["ready"], "t_last_ready": last_ready,
                                "arrival_late_ms": arrival_late_ms, "t_bwd": t_bwd,
                                "t_end": time.monotonic(), "cpu_ms": (time.process_time() - cpu0) * 1e3,
                                "probe_ms": list(probe_ms), "table_ms": table.get("ms", 0.0),
                                **kernel_deltas(kernel0, thread_kernel_counters())}))
            if a.fault == "memory_pressure" and faulty and not recording and table["t"] is not None:
                if mem_feedback.observe(it, hit, mem["cut_mb"], table["ms"]):  # the table reads' lost time
                    mem["cut_mb"] = tune_cut(mem_feedback.seen, target_s * 1e3, a.table_mb)
            if a.fault == "cpu_throttling" and faulty and not recording and a.defaulted.get("quota"):
                # its arrival lateness (ARRIVAL_TUNED); the share exists once the fault was switched on (baseline
                # steps: None)
                if thr_feedback.observe(it, hit, thr.get("share"), steps_seen[-1][5]["arrival_late_ms"]) and thr:
                    thr["share"] = tune_share(thr_feedback.seen, target_s * 1e3)
                    set_quota()
            t = steps_seen[-1][5]
            transfer_ms = (t["t_bwd"] - t["t_last_ready"]) * 1e3  # after the last rank arrived (TRANSFER_TUNED)
            if pace is not None and not recording:
                if pace_feedback.observe(it, hit, pace["mbit"], transfer_ms):
                    pace["mbit"] = tune_pace(pace_feedback.seen, target_s * 1e3, pace["link_mbit"])
                    write_replacing(pace["file"], f"{pace['mbit']:.3f}")  # both ends read it again when it changes
            if link_rate is not None and not recording:
                if rate_feedback.observe(it, hit, link_rate["mbit"], transfer_ms):
                    link_rate["mbit"] = tune_link_rate(rate_feedback.seen, target_s * 1e3, link_rate["link_mbit"])
                    set_link_rate()
            if hit and not recording and injected["s"] > 0:  # tune from the median unit cost seen so far
                if compute_fault:
                    unit_cost.append(injected["s"] / extra["reps"])
                    extra["reps"] = max(1, round(target_s / statistics.median(unit_cost)))
                elif a.fault == "dataloader_stall":
                    unit_cost.append(injected["s"] / a.batch - data.stall_s)  # oversleep per sample
                    data.stall_s = tune_stall(data.stall_s, unit_cost, target_s / a.batch)
                elif a.fault == "gc_pause":  # in-step collections run on colder caches than the calibration
                    unit_cost.append(injected["s"] / (len(gc_heap) + 2 * gc_cycles))  # per tracked object
                    n = max(1000, int(target_s / statistics.median(unit_cost)) - 2 * gc_cycles)
                    if n > len(gc_heap):
                        gc_heap.extend([i] for i in range(n - len(gc_heap)))
                    else:
                        del gc_heap[n:]
            injected["s"] = 0.0
            t_step = now
            prof.step()

    switch(False)
    mechanism = "nothing injected (clean run)"
    if compute_fault:
        when = (f"in ProfilerSteps whose number is a multiple of {a.every} (and in the unrecorded warm-up steps)"
                if a.fault == "intermittent_slow_compute" else "in every step")
        mechanism = (f"rank {rank}: {extra['reps']} extra ({4 * a.batch}x{a.width})@({a.width}x{a.width}) "
                     f"matmul+tanh blocks (no grad) after layer {len(net.layers) // 2 - 1} of the model forward {when}")
    elif faulty and a.fault == "dataloader_stall":
        mechanism = (f"rank {rank}: Dataset.__getitem__ sleeps {data.stall_s * 1e3:.3f} ms per sample "
                     f"({a.batch} samples per batch, DataLoader num_workers=0) in every step")
    elif faulty and a.fault == "gc_pause":
        mechanism = (f"rank {rank}: a live heap of {len(gc_heap)} Python lists "
                     f"plus {gc_cycles} reference cycles of garbage made each step, then gc.collect() between "
                     f"forward and backward in every step")
    with open(tmp_json, "rb") as src, open(os.path.join(a.out, f".rank-{rank}.json.gz.tmp"), "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    os.replace(os.path.join(a.out, f".rank-{rank}.json.gz.tmp"), os.path.join(a.out, f"rank-{rank}.json.gz"))
    os.remove(tmp_json)
    with open(os.path.join(stats_dir, f"stats-{rank}.json"), "w") as f:
        json.dump({"rank": rank, "cpu": sorted(cpus) if cpus else -1, "faulty": faulty, "mechanism": mechanism,
                   "memlimit": fault_state.get("memlimit"), "quotas_us": fault_state.get("quotas_us"),
                   "steps": [dict({"step": s, "recorded": r, "affected": h, "injected_ms": i, "wall_ms": w}, **t)
                             for s, r, h, i, w, t in steps_seen]}, f)
    dist.barrier()
    dist.destroy_process_group()
    return 0


# ----------------------------------------------------------------------------------------------------------
# launcher side
# ----------------------------------------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_all(procs, grace=5.0):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def format_truth(truth):
    """One key per line, values compact: easy to read and to diff."""
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in truth.items()) + "\n}\n"


class Interrupted(Exception):
    pass


def launch(a, argv):
    os.makedirs(a.out, exist_ok=True)
    for name in os.listdir(a.out):  # outputs of an earlier run in the same folder
        if name == "truth.json" or (name.startswith("rank-") and name.endswith(".json.gz")):
            os.remove(os.path.join(a.out, name))
    cores = sorted(os.sched_getaffinity(0))
    if a.core_shift is None:
        a.core_shift = a.seed
    rotated = a.rotate_ms > 0 and a.placement == "pinned"
    if rotated:
        # Every core, timed once for the record: the rotation shares a slower core among all the ranks.
        core_ms_before, core_wait_s = measure_cores(cores), 0.0
        rank_cores = cores
    else:
        core_ms_before, core_wait_s = wait_for_even_cores(measure_cores, cores, a.slow_core_ratio, a.core_wait)
        # Floating and pinned ranks alike run only on the cores not measurably slower than the fastest: a pinned
        # rank on the slow core was late in every step by the machine alone (intermittent faults were then named
        # in every step, 7 cases of the held-out run at 4351e00: the fault rank 6-18 ms late in the steps it
        # spared).
        rank_cores = fast_cores(core_ms_before, a.slow_core_ratio)
    refit_to_cores(a, len(rank_cores))
    # The ranks parse the same arguments: give them what the launcher resolved (its affinity, not theirs).
    argv = list(argv) + ["--layer-ms", repr(a.layer_ms), "--placement", a.placement, "--period-us", str(a.period_us)]
    work = tempfile.mkdtemp(prefix=f"{injectors.base.run_prefix()}-")
    # pinned ranks and their faults' helpers: these cores only, the fault rank's alone for ISOLATED_FAULTS
    ctx = injectors.Context(a, work, rank_cores, isolate=a.fault_rank if isolated(a) else None)
    procs, logs = [], []
    rotation = CoreRotation(os.getpid(), rank_cores if rotated else [], a.rotate_ms / 1000.0)

    def on_signal(signum, frame):
        raise Interrupted(signal.Signals(signum).name)

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    failed = None
    stats = None
    try:
        # Everything the run changes on the machine is pushed on ctx.undo as it is made, and undone below.
        ctx.topology = injectors.Topology(ctx) if a.netns else None
        if ctx.topology:
            ctx.topology.setup()
        inj = injectors.EXTERNAL[a.fault](ctx) if a.fault in injectors.EXTERNAL else None
        if inj is not None:
            inj.setup()
        port = 29500 if ctx.topology else free_port()
        for r in range(a.ranks):
            env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(a.ranks),
                       LOCAL_WORLD_SIZE=str(a.ranks), GROUP_RANK="0", ROLE_RANK=str(r),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                       MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1",
                       LAB_CPU=rank_cpus(a, ctx, r, rank_cores),

                       LAB_STATS_DIR=work)
            env.setdefault("GLOO_SOCKET_IFNAME", "lo")
            prefix = []
            if ctx.topology:
                env.update(ctx.topology.rank_env(r))
                prefix = ctx.topology.rank_prefix(r)
            if inj is not None:
                env.update(inj.rank_env(r))
                prefix = prefix + inj.rank_prefix(r)
                if r == a.fault_rank and inj.toggle() is not None:
                    env["LAB_TOGGLE"] = json.dumps(inj.toggle())
            log = open(os.path.join(work, f"rank-{r}.log"), "wb")
            logs.append(log)
            procs.append(subprocess.Popen(prefix + [a.python, os.path.abspath(__file__), "--worker"] + argv,
                                          env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                          preexec_fn=injectors.base.die_with_parent,
                                          start_new_session=bool(a.nice)))
            if inj is not None:
                inj.after_spawn(r, procs[-1].pid)
        rotation.start()  # the ranks pin themselves as they start; the rotation takes each in when it has
        deadline = time.monotonic() + a.timeout
        while True:
            codes = [p.poll() for p in procs]
            bad = [r for r, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                failed = (bad[0], codes[bad[0]])
                break
            if all(c == 0 for c in codes):
                break
            if time.monotonic() > deadline:
                failed = (None, f"timeout after {a.timeout:.0f} s")
                break
            time.sleep(0.05)
        if failed is None:
            stats = []
            for r in range(a.ranks):
                with open(os.path.join(work, f"stats-{r}.json")) as f:
                    stats.append(json.load(f))
            effect = inj.measure(stats) if inj is not None else None
            took = inj.took(stats) if inj is not None else None
            mech = inj.mechanism() if inj is not None else None
            affected = inj.affected_ranks() if inj is not None else None
            if ctx.topology:
                mech = (mech + "; " if mech else "") + ctx.topology.describe()
    except (Interrupted, KeyboardInterrupt) as e:
        stop_all(procs)
        for log in logs:
            log.close()
        left = ctx.undo.run()
        print(f"ddp_job: interrupted ({e or 'SIGINT'}); all ranks stopped, "
              + ("the machine restored" if not left else f"COULD NOT UNDO: {left}"), file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return 130
    except Exception as e:
        stop_all(procs)
        for log in logs:
            log.close()
        left = ctx.undo.run()
        print(f"ddp_job: {e}" + (f"\nddp_job: COULD NOT UNDO: {left}" if left else ""), file=sys.stderr)
        for i in range(len(procs)):
            print(f"--- rank {i} (last lines) ---\n{tail(os.path.join(work, f'rank-{i}.log'), 10)}",
                  file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not interrupt the undo
        rotation.stop()
        if failed is not None:
            stop_all(procs)
        for log in logs:
            log.close()
        left = ctx.undo.run()
        if left:
            print(f"ddp_job: COULD NOT UNDO: {left} (lab/cleanup.py removes leftovers)", file=sys.stderr)
        for sig, h in old.items():
            signal.signal(sig, h)

    if failed is not None:
        r, why = failed
        if r is None:
            print(f"ddp_job: {why}; all ranks stopped", file=sys.stderr)
            for i in range(a.ranks):
                print(f"--- rank {i} (last lines) ---\n{tail(os.path.join(work, f'rank-{i}.log'), 10)}",
                      file=sys.stderr)
        else:
            how = f"killed by signal {-why}" if why < 0 else f"exit code {why}"
            print(f"ddp_job: rank {r} failed ({how}); the other ranks were stopped\n"
                  f"--- rank {r} output (last lines) ---\n{tail(os.path.join(work, f'rank-{r}.log'))}",
                  file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return 1
    shutil.rmtree(work, ignore_errors=True)

    recorded = [s["step"] for s in stats[0]["steps"] if s["recorded"]]
    fr = a.fault_rank if a.fault != "none" else None
    hit = [s for s in stats[fr]["steps"] if s["recorded"] and s["affected"]] if fr is not None else []
    truth = {
        "fault": CAUSE[a.fault],
        "rank": fr,
        "steps": [s["step"] for s in hit],
        "magnitude": a.magnitude if fr is not None else 0.0,
        "placement": a.placement,
        "layer_ms": a.layer_ms,
        "core_ms_before": core_ms_before,
        "core_wait_s": core_wait_s,
        "rank_cores": rank_cores,
        "core_rotation": rotation.describe(),
        "mechanism": mech or (stats[fr]["mechanism"] if fr is not None else "nothing injected (clean run)"),
        "world_size": a.ranks,
        "injected_ms": round(statistics.median(s["injected_ms"] for s in hit), 3) if hit else 0.0,
        "injected_ms_by_step": {str(s["step"]): round(s["injected_ms"], 3) for s in hit},
        "recorded_steps": len(recorded),
        # the unrecorded iterations the fault ran in (tuning), so a reader sees what came right before recording
        "unrecorded_fault_iters": [s["iter"] for s in stats[fr]["steps"] if not s["recorded"] and s["affected"]]
        if fr is not None else [],
    }
    if affected and len(affected) > 1:
        truth["ranks"] = affected  # the fault reaches these ranks alike; any of them is a right top straggler
    if effect is not None:
        truth.update(effect)  # measured from outside: the effect on the rank's timing
    # How clean the recording is: each rank's median lateness at the gradient all_reduce (vs the median of the
    # others) over the recorded steps. On a quiet machine the ranks other than the fault rank stay within ~1 ms;
    # other load on the machine shows as one of them being late too (bench/accuracy records such runs again).
    rec_iters = [s["iter"] for s in stats[0]["steps"] if s["recorded"]]
    lat = {r: statistics.median(injectors.base.lateness_ms(stats, r, i) for i in rec_iters) for r in range(a.ranks)}
    truth["step_ms_median"] = round(statistics.median(injectors.base.step_ms(stats, i) for i in rec_iters), 3)
    hit_ranks = set(truth.get("ranks") or [fr])
    truth["noise_ms"] = round(max((v for r, v in lat.items() if r not in hit_ranks), default=0.0), 3)
    truth["lateness_ms_by_rank"] = {str(r): round(v, 3) for r, v in lat.items()}
    # and how much the arrivals of the ranks without the fault spread in single steps (90th percentile)
    others = [r for r in range(a.ranks) if r not in hit_ranks]
    spreads = sorted(max(st["steps"][k]["t_ready"] for st in (stats[r] for r in others))
                     - min(st["steps"][k]["t_ready"] for st in (stats[r] for r in others))
                     for k, s in enumerate(stats[0]["steps"]) if s["recorded"]) if others else [0.0]
    truth["jitter_ms"] = round(spreads[min(len(spreads) - 1, int(0.9 * len(spreads)))] * 1e3, 3)
    # Whether the fault took and whether the machine was quiet, from quantities strata never uses
    # (bench/accuracy_lib/recording_quality.py decides on them): the injector's own measure (in-rank faults:
    # the time the injected code ran, timed around it in the rank), and each rank's run-queue wait.
    if fr is not None:
        truth["took_measure"] = took or {"measure": "time the injected code ran in the rank (timed around it)",
                                         "per_step": truth["injected_ms"], "unit": "ms",
                                         "by_step": truth["injected_ms_by_step"]}
        truth["took_measure"]["intended_ms"] = round(a.magnitude * device_ms_per_step(a), 3)
    # How fast each rank's core ran (the core probe: its median thread CPU time per recorded step) and how much
    # CPU time the rank used per step: a rank on a core that ran slower loses that share of its CPU work.
    # The probe's figure is over every probe from the third iteration on (DDP rebuilds its buckets in the first;
    # a core the host slows stays slow for seconds, longer than the job's unrecorded steps). It is a trimmed mean
    # (PROBE_TRIM of the probes off each end), not a median: under the core rotation a rank's probes mix the
    # cores' speeds in the shares its CPU work met them, which the mean follows, while the median of such a
    # mixture is the speed of whichever core drew more of them (until 2026-12-05, pinned or floating ranks: the
    # median).
    truth["probe_ms_by_rank"] = {str(r): round(trimmed_mean(
        [v for x in stats[r]["steps"] if x["iter"] >= 2 for v in x["probe_ms"]], PROBE_TRIM), 3)
        for r in range(a.ranks)}
    truth["cpu_ms_by_rank"] = {
        str(r): round(statistics.median(x["cpu_ms"] for x in stats[r]["steps"] if x["recorded"]), 3)
        for r in range(a.ranks)}
    truth["rq_wait_ms_by_rank"] = {
        str(r): round(statistics.median(x.get("rq_wait_ms", 0.0) for x in stats[r]["steps"] if x["recorded"]), 3)
        for r in range(a.ranks)}
    if a.fault != "none" and a.fault != CAUSE[a.fault]:
        truth["injector"] = a.fault
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        f.write(format_truth(truth))

    print(f"ddp_job: {a.ranks} ranks, ProfilerSteps {recorded[0]}..{recorded[-1]} recorded in {a.out}")
    for s in stats:
        rec = [x["wall_ms"] for x in s["steps"] if x["recorded"]]
        cpu = [x["cpu_ms"] for x in s["steps"] if x["recorded"]]
        probe = [sum(x["probe_ms"]) for x in s["steps"] if x["recorded"]]
        print(f"  rank {s['rank']} (cpu {s['cpu']}): step wall median {statistics.median(rec):.1f} ms, "
              f"process cpu {statistics.median(cpu):.1f} ms, core probe " + " ".join(f"{v:.2f}" for v in probe)
              + (f"  <- {truth['fault']}, injected ms per step (warm-up | recorded): "
                 + " ".join(f"{x['injected_ms']:.1f}" for x in s["steps"] if not x["recorded"]) + " | "
                 + " ".join(f"{x['injected_ms']:.1f}" for x in s["steps"] if x["recorded"])
                 if s["faulty"] and inj is None else ""))
    print(f"  truth: {json.dumps(truth)}")
    return 0


def main():
    argv = sys.argv[1:]
    a = parse_args(argv)
    if a.worker:
        return worker(a)
    return launch(a, [x for x in argv if x != "--worker"])


if __name__ == "__main__":
    sys.exit(main())
