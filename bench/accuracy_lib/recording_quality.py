"""Whether a lab recording is fit to score: a fault that did not take, or other load on the machine. Decided
only on quantities strata neither measures nor decides on (issue 23): the injector's own measure of what it
did (truth "took_measure", written by lab/ddp_job.py: the time the injected code ran in the rank, the rank's
run-queue wait under CPU contention or a CPU quota, the time the rank's table reads lost under a memory limit
(before 2026-12-05 the pages its cgroup refaulted: TOOK_MIN_REFAULT_PAGES still judges truths of that form), the
all_reduce's transfer time on the ranks' own clocks), each rank's run-queue wait (the kernel's count of the
time the rank was runnable while another task held its core) and each rank's core speed (the lab's core probe:
the same fixed CPU work on every rank each step, timed in thread CPU time). Never on a rank's lateness: that is
what strata judges, so filtering on it would choose the judged set by strata's own threshold. A clean job is
always judged: a rank the machine slowed by these measures is really late, and naming it for a compute cause
is accepted (scoring.judge); naming any other rank is a false alarm. Since 2026-11-28: a CI run of 6361199 set
all 10 clean jobs aside this way (one vCPU 74-86 % slower for the whole run), judging none.

Shared by bench/accuracy and tests/recorder/test_record.py, which record a lab job again (a few times) when
this says why not. The constants are frozen with src/analysis/diagnosis/thresholds.h before a measurement
(docs/accuracy.md).
"""
import statistics

# A fault took when the injector's measure cost the fault rank at least this share of the clean step ...
TOOK_MIN_STEP_SHARE = 0.02
# ... or, for memory pressure (a count, not a time), when the rank's cgroup refaulted at least this many file
# pages (1 MiB of 4 KiB pages) per step with the limit on.
TOOK_MIN_REFAULT_PAGES = 256
# The machine was noisy when a rank the fault does not reach waited for its core at least this share of a
# step more than the median of those ranks (median run-queue wait over the recorded steps): the excess delays
# that rank as a fault would. Ranks that share cores wait alike (their bursts follow the same collectives:
# 8 ranks on 2 cores wait 2-4 ms per step each, measured 2026-11-27), which singles no rank out.
NOISE_MIN_RQ_WAIT_STEP_SHARE = 0.02
# The machine was noisy, too, when a rank the fault does not reach ran on a slower core than the fastest rank's
# by the core probe (lab/ddp_job.py: fixed CPU work each step, timed in thread CPU time; the trimmed mean of its
# probes from the third iteration on, their median until 2026-12-05, when the core rotation made a rank's probes
# a mix of cores) and the slowdown, applied to the CPU time that rank used per step, delays it by at least this
# share of a step. A virtual machine's host can slow one vCPU without the guest seeing steal or run-queue wait
# (2026-11-27: the clean 2-rank jobs of a CI run all named rank 0, always on core 0; rank 0's host work took
# 18 ms where rank 1's took 10 ms; with the pinning shifted, the rank on core 0 was named instead).
NOISE_MIN_CORE_STEP_SHARE = 0.02
# ... but only when that delay is also a sizeable share of the fault's own effect: at least this share of the
# injector's measure per step (took_measure, over all recorded steps: an intermittent fault's per affected step
# times the share of steps it affected). A rank the machine slowed by 2 ms beside a fault of 20 ms per step does
# not change which rank is late; by half the fault's effect it may. Measured only by the injector and the
# machine (never strata's lateness). Since 2026-11-28 (issue 23: 4- and 8-rank jobs on a VM with one vCPU
# 50-80 % slower for whole runs put a rank the fault does not reach on that core in nearly every job, so a
# held-out run at 50324d9 judged 7 of 36 8-rank faulted cases); frozen before the held-out run at seeds 12000+.
NOISE_MIN_SIGNAL_SHARE = 0.5


def _clean_step_ms(truth):
    return (truth.get("step_ms") or {}).get("fault_off") or truth.get("step_ms_median") or 0.0


def _reached(truth):
    return set(truth.get("ranks") or ([truth["rank"]] if truth.get("rank") is not None else []))


def fault_signal_ms(truth):
    """The fault's own effect in ms per recorded step by the injector's measure (an intermittent fault's per
    affected step times the share of recorded steps it affected), or None when the measure is not a time
    (memory pressure counts pages) or the truth has none."""
    m = truth.get("took_measure")
    if not m or m.get("unit") != "ms":
        return None
    affected = len(truth.get("steps") or [])
    recorded = truth.get("recorded_steps") or affected
    share = min(1.0, affected / recorded) if recorded else 1.0
    return max(0.0, m.get("per_step", 0.0)) * share


def machine_noise(truth):
    """Why the machine was too noisy to judge a faulty recording, or None: a rank the fault does not reach
    waited for its core more than its like did, or ran on a slower core than the fastest rank's, by enough
    to matter beside the fault's own effect (NOISE_MIN_SIGNAL_SHARE of it)."""
    signal = fault_signal_ms(truth)
    floor = NOISE_MIN_SIGNAL_SHARE * signal if signal is not None else 0.0
    for rank, (ms, why) in _machine_delays(truth).items():
        if ms >= floor:
            if signal is not None:
                why += (f"; {ms:.1f} ms is at least {NOISE_MIN_SIGNAL_SHARE:.0%} of the fault's "
                        f"{signal:.1f} ms per recorded step by the injector's measure")
            return f"noisy: {why}"
    return None


def machine_slowed_ranks(truth):
    """{rank: why} for the ranks the fault does not reach that the machine itself slowed by the lab's measures
    (run-queue wait beyond their like's, a slower core), the most slowed first. In a clean job these ranks are
    really late: naming one of them for a compute cause is right, not a false alarm (scoring.judge)."""
    return {rank: why for rank, (_, why) in _machine_delays(truth).items()}


# Faults that put work of their own on the fault rank's core (cpu_contention's pinned helpers; the kernel's work
# for network_contention's traffic, charged to the sending core): there a slower core probe is the fault's effect,
# not the machine's.
FAULTS_ON_THE_RANKS_CORE = ("cpu_contention", "network_contention")


def machine_slowed_fault_ranks(truth):
    """{rank: why} for the ranks the fault reaches that the machine slowed too: a core slower than the fastest
    rank's by the lab's core probe, by enough to matter (the rule of NOISE_MIN_CORE_STEP_SHARE), for a fault that
    puts no work of its own on that core. Such a rank's lateness has two causes (issue 47 item 5): naming the
    machine's first and the fault's second is right (scoring.judge)."""
    if truth.get("fault", "none") in ("none",) + FAULTS_ON_THE_RANKS_CORE:
        return {}
    return {rank: why for rank, _, why in _core_speed_noise(truth, reached=True)}


def _machine_delays(truth):
    """{rank: (ms of delay per step, why)} for the ranks the fault does not reach that the machine slowed, the
    most slowed first (a rank slowed both ways: its larger delay)."""
    found = _run_queue_noise(truth) + _core_speed_noise(truth)
    found.sort(key=lambda t: -t[1])
    slowed = {}
    for rank, ms, why in found:
        slowed.setdefault(rank, (ms, why))
    return slowed


def _core_speed_noise(truth, reached=False):
    """[(rank, ms of delay per step, why)] for the ranks on a core slow enough to matter: the ranks the fault
    does not reach, or (reached) those it does."""
    step = _clean_step_ms(truth)
    probe = {int(r): v for r, v in (truth.get("probe_ms_by_rank") or {}).items()}
    cpu = {int(r): v for r, v in (truth.get("cpu_ms_by_rank") or {}).items()}
    if len(probe) < 2 or step <= 0 or min(probe.values()) <= 0:
        return []
    fastest = min(probe.values())
    fault_ranks = _reached(truth)
    delay = {r: (v / fastest - 1.0) * cpu.get(r, 0.0) for r, v in probe.items() if (r in fault_ranks) == reached}
    which = "which the fault reaches too" if reached else "which the fault does not reach"
    return [(rank, ms,
             f"rank {rank}, {which}, ran on a core {probe[rank] / fastest - 1:.0%} "
             f"slower than the fastest rank's (core probe: {probe[rank]:.3f} vs {fastest:.3f} ms of thread CPU "
             f"time), {ms:.1f} ms of its {cpu.get(rank, 0.0):.1f} ms CPU time per step "
             f"({NOISE_MIN_CORE_STEP_SHARE:.0%} of the {step:.1f} ms step makes a machine noisy)")
            for rank, ms in delay.items() if ms >= NOISE_MIN_CORE_STEP_SHARE * step]


def _run_queue_noise(truth):
    """[(rank, ms of excess wait per step, why)] for the ranks that waited for their core more than their like."""
    step = _clean_step_ms(truth)
    reached = _reached(truth)
    waits = {int(r): v for r, v in (truth.get("rq_wait_ms_by_rank") or {}).items() if int(r) not in reached}
    if not waits or step <= 0:
        return []
    typical = statistics.median(waits.values())
    return [(rank, wait - typical,
             f"rank {rank}, which the fault does not reach, waited {wait:.1f} ms per step for its core "
             f"(run-queue wait), {wait - typical:.1f} ms more than the median of such ranks "
             f"({NOISE_MIN_RQ_WAIT_STEP_SHARE:.0%} of the {step:.1f} ms step makes a machine noisy)")
            for rank, wait in waits.items() if wait - typical >= NOISE_MIN_RQ_WAIT_STEP_SHARE * step]


def fault_not_taken(truth):
    """Why the injector's own measure says the fault did not take, or None (it took, or the truth predates
    the measure)."""
    m = truth.get("took_measure")
    if truth.get("fault", "none") == "none" or not m:
        return None
    value = m.get("per_step", 0.0)
    if m.get("unit") == "pages":
        if value < TOOK_MIN_REFAULT_PAGES:
            return (f"did not take: {value:g} pages per step by {m['measure']} ({TOOK_MIN_REFAULT_PAGES} required)")
        return None
    step = _clean_step_ms(truth)
    if value < TOOK_MIN_STEP_SHARE * step:
        return (f"did not take: {value:.2f} ms per affected step by {m['measure']} ({TOOK_MIN_STEP_SHARE:.0%} of the "
                f"{step:.1f} ms clean step required; {m.get('intended_ms', 0):.1f} ms intended)")
    return None


def recording_problem(truth):
    """Why a lab recording is not fit to score, or None. A clean job is always judged: the ranks the machine
    slowed are part of its truth (machine_slowed_ranks), not a reason to set it aside."""
    if truth.get("fault", "none") == "none":
        return None
    return machine_noise(truth) or fault_not_taken(truth)
