"""Scoring of the online path (strata agent + serve) against a schedule of fault episodes (issue 47 item 6):
detection latency from each fault's onset, misses, and false alarms per hour of clean time, as the field
reports online detectors (Greyhound's schedule of faults with random onsets and durations).

A pure function of the truth and the observations, so that bench/online_accuracy and its unit test
(tests/online_scoring, ctest online_scoring) share it:

- truth: the episodes as the injector wrote them, each {"rank", "start_unix", "end_unix", ...} (the moment the
  first slow step's extra work began, the moment the last one's ended);
- polls: what the bench saw, in time order, each (t_unix, keys): `keys` the set of what was named at that poll,
  a rank (int) for every finding naming one and `JOB` for a finding naming no rank; a poll that failed (no
  answer) is left out, so it neither starts nor ends an alarm;
- the observed span [obs_start, obs_end] (from when the job was seen with all its ranks to its end).

Rules (fixed before the first run, 2026-12-04):
- An **alarm** is a maximal run of consecutive polls naming the same key; it starts at its first poll.
- An episode's **attribution window** is [start_unix, end_unix + grace_s]. An alarm naming the episode's rank
  that starts inside it is a true alarm of that episode; the episode is **detected** at the start of the first
  such alarm (latency = that poll's time - start_unix, never negative), else **missed**. An alarm already open
  at the onset (it started earlier) does not detect the episode: it was raised before any fault.
- Every other alarm is a **false alarm**, one per alarm however many polls it lasts: an alarm starting in clean
  time (outside every attribution window), and one naming another rank or no rank, wherever it starts.
- **Clean time** is the observed span minus the union of the attribution windows. The headline rate,
  `false_alarms_per_clean_hour`, is the false alarms that started in clean time / clean hours (None when there
  is no clean time); the false alarms that started inside an attribution window (another rank, or no rank,
  named during a fault) are counted apart (`false_alarms_in_episodes`), and `false_alarms_per_hour_all` is every
  false alarm / observed hours.
- A detected episode's alarm may stay open past the episode's end (a lasting finding closes with hysteresis and
  stays in the status 5 s more): `cleared_after_s` is how long after end_unix it was last seen (None while still
  open at obs_end), reported, not scored.

The machine's own share (reported beside the figures, never changing them; added 2026-12-04 after the first runs,
whose false alarms came while other work loaded the machine): the bench samples each rank's run-queue wait (the
kernel's schedstat, summed over the rank's threads: time runnable while another task held its CPU) at every
poll, and `machine_share` gives each false alarm naming a rank that rank's wait over the alarm (from
RQ_LEAD_S before its start to its end) beyond the median of the other ranks' (`rq_excess_ms`), and counts the
alarms whose excess reached MACHINE_RQ_MS: those the machine, not the job, may have made.
"""
import math
import statistics

RQ_LEAD_S = 2.0       # the alarm's window for run-queue wait starts this long before its first poll
MACHINE_RQ_MS = 20.0  # a rank's run-queue wait beyond its peers' median, over the alarm, that counts as the machine's

JOB = "job"  # the key of a finding that names no rank
DEFAULT_GRACE_S = 10.0
DETECTED_WITHIN_S = 15.0


def alarms(polls):
    """The alarms in `polls` [(t, keys)]: [{"key", "start", "end", "polls"}], `end` the last poll naming it,
    ordered by start then key (ints before JOB)."""
    out, open_ = [], {}
    last_t = None
    for t, keys in polls:
        if last_t is not None and t < last_t:
            raise ValueError(f"polls out of time order: {t} after {last_t}")
        last_t = t
        for k in list(open_):
            if k not in keys:
                out.append(open_.pop(k))
        for k in keys:
            if k in open_:
                open_[k]["end"] = t
                open_[k]["polls"] += 1
            else:
                open_[k] = {"key": k, "start": t, "end": t, "polls": 1}
    out.extend(open_.values())
    return sorted(out, key=lambda a: (a["start"], (1, 0) if a["key"] == JOB else (0, a["key"])))


def _union_length(intervals, lo, hi):
    """The length of the union of `intervals` [(a, b)] clipped to [lo, hi]."""
    total, cur_a, cur_b = 0.0, None, None
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals):
        if b <= a:
            continue
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a
    return total


def percentile(values, q):
    """The q-th percentile (0-100) of `values`, linear between closest ranks; None when empty."""
    v = sorted(values)
    if not v:
        return None
    pos = (len(v) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def score(episodes, polls, obs_start, obs_end, grace_s=DEFAULT_GRACE_S, within_s=DETECTED_WITHIN_S):
    """Scores `polls` against `episodes` over [obs_start, obs_end] (module docstring). Returns
    {"episodes": [per episode: its truth plus outcome, latency_s, alarm_start, cleared_after_s],
     "false_alarms": [the alarms counted, each with where it started: "clean" | "episode"],
     "summary": {...}}."""
    if obs_end < obs_start:
        raise ValueError(f"observed span ends ({obs_end}) before it starts ({obs_start})")
    if grace_s < 0:
        raise ValueError(f"grace_s must be >= 0 (got {grace_s})")
    eps = sorted(episodes, key=lambda e: e["start_unix"])
    for e in eps:
        if e["end_unix"] < e["start_unix"]:
            raise ValueError(f"episode ends before it starts: {e}")
    windows = [(e["start_unix"], e["end_unix"] + grace_s) for e in eps]
    found = alarms([(t, keys) for t, keys in polls if obs_start <= t <= obs_end])

    def window_of(a):
        """The index of the episode whose attribution window the alarm starts in and whose rank it names."""
        for i, (e, (w0, w1)) in enumerate(zip(eps, windows)):
            if a["key"] == e["rank"] and w0 <= a["start"] <= w1:
                return i
        return None

    first = {}  # episode index -> its first true alarm
    false = []
    for a in found:
        i = window_of(a)
        if i is None:
            in_ep = any(w0 <= a["start"] <= w1 for w0, w1 in windows)
            false.append(dict(a, where="episode" if in_ep else "clean"))
        elif i not in first:
            first[i] = a
    out_eps = []
    for i, e in enumerate(eps):
        a = first.get(i)
        rec = dict(e)
        if a is None:
            open_at_onset = any(b["key"] == e["rank"] and b["start"] < e["start_unix"] <= b["end"] for b in found)
            rec.update(outcome="missed", latency_s=None, alarm_start=None, cleared_after_s=None,
                       note="its rank was named since before the onset" if open_at_onset else None)
        else:
            still_open = a["end"] >= obs_end or not any(t > a["end"] for t, _ in polls if t <= obs_end)
            rec.update(outcome="detected", latency_s=a["start"] - e["start_unix"], alarm_start=a["start"],
                       cleared_after_s=None if still_open else a["end"] - e["end_unix"], note=None)
        out_eps.append(rec)
    lat = [e["latency_s"] for e in out_eps if e["outcome"] == "detected"]
    clean_s = (obs_end - obs_start) - _union_length(windows, obs_start, obs_end)
    clean_h = clean_s / 3600.0
    n = len(out_eps)
    summary = {
        "episodes": n,
        "detected": len(lat),
        "missed": n - len(lat),
        "detected_within_s": within_s,
        "detected_within": sum(1 for x in lat if x <= within_s),
        "share_detected_within": (sum(1 for x in lat if x <= within_s) / n) if n else None,
        "latency_median_s": percentile(lat, 50),
        "latency_p90_s": percentile(lat, 90),
        "latency_max_s": max(lat) if lat else None,
        "false_alarms": len(false),
        "false_alarms_in_clean": sum(1 for a in false if a["where"] == "clean"),
        "false_alarms_in_episodes": sum(1 for a in false if a["where"] == "episode"),
        "clean_s": clean_s,
        "observed_s": obs_end - obs_start,
        "false_alarms_per_clean_hour": (sum(1 for a in false if a["where"] == "clean") / clean_h)
        if clean_h > 0 else None,
        "false_alarms_per_hour_all": (len(false) / ((obs_end - obs_start) / 3600.0)) if obs_end > obs_start else None,
        "grace_s": grace_s,
    }
    return {"episodes": out_eps, "false_alarms": false, "summary": summary}


def rescore(run, grace_s):
    """The scores of one run record of a bench/online_accuracy results file ({"truth", "polls": {view: [[t,
    [keys]]]}, "scores": {view: {"observed_from", "observed_to", ...}}}), recomputed from its truth and polls
    alone: {view: score(...)} for every view that was scored (keys read back from JSON: ranks as ints, JOB)."""
    out = {}
    for view, stored in run["scores"].items():
        if "observed_from" not in stored:
            continue
        p = [(t, set(keys)) for t, keys in run["polls"][view]]
        out[view] = score(run["truth"], p, stored["observed_from"], stored["observed_to"], grace_s=grace_s)
        if "run_queue_ms" in run:  # files written before 2026-12-04 11:30 have no samples
            with_machine_share(out[view], run["run_queue_ms"])
    return out


def with_machine_share(result, rq_samples):
    """`result` (score's) with each false alarm's run-queue excess and the summary's
    `false_alarms_machine_share` ({"reached", "judged", "threshold_ms"}), from the bench's samples as written:
    [[t, {"rank": ms}]]."""
    rq = [(t, {int(k): v for k, v in sample.items()}) for t, sample in rq_samples]
    result["false_alarms"], reached, judged = machine_share(result["false_alarms"], rq)
    result["summary"]["false_alarms_machine_share"] = {"reached": reached, "judged": judged,
                                                       "threshold_ms": MACHINE_RQ_MS}
    return result


def _rq_at(rq_polls, t):
    """The last sample at or before `t` ({rank: ms}), else the first one."""
    best = rq_polls[0][1]
    for ts, sample in rq_polls:
        if ts > t:
            break
        best = sample
    return best


def machine_share(false_alarms, rq_polls):
    """Each false alarm naming a rank, with that rank's run-queue wait over [start - RQ_LEAD_S, end] beyond the
    median of its peers' over the same span (`rq_excess_ms`; None when the samples do not cover the rank or have
    no peer), and how many reached MACHINE_RQ_MS. `rq_polls`: [(t, {rank: cumulative run-queue wait ms})] in time
    order. Returns (annotated copies of the alarms, count, alarms that could be judged)."""
    out, count, judged = [], 0, 0
    for a in false_alarms:
        a = dict(a)
        a["rq_excess_ms"] = None
        if rq_polls and isinstance(a["key"], int):
            lo, hi = _rq_at(rq_polls, a["start"] - RQ_LEAD_S), _rq_at(rq_polls, a["end"])
            delta = {r: hi[r] - lo[r] for r in hi if r in lo}
            peers = [d for r, d in delta.items() if r != a["key"]]
            if a["key"] in delta and peers:
                a["rq_excess_ms"] = round(delta[a["key"]] - statistics.median(peers), 3)
                judged += 1
                count += a["rq_excess_ms"] >= MACHINE_RQ_MS
        out.append(a)
    return out, count, judged
