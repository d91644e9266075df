"""The invariants every single strata output must satisfy, one named rule each (docs/invariants.md).

A rule is a function `(out) -> [message, ...]` registered with `@rule(NAME, KIND)`, where KIND is the
subcommand whose output it reads (diagnose, summary, diff) and `out` an Output: `json` (parsed with
jsonnum.load), `text` (the text report of the same run, or None when only JSON was produced) and `schema`
(the strata.diagnosis/1 JSON Schema, or None). An empty list means the output keeps the rule, None that the
rule does not apply to it (counted apart, so that a rule never checked shows). The rule's
docstring is its one-line statement; the report and docs/invariants.md quote it.

Invariants of this module: every rule reads only its argument (no files, no strata), so the checker tests
(test_checkers.py) can feed hand-made outputs; each rule is stated once here and nowhere else; tolerances are
the named constants below (rounding of printed figures, never a margin that hides a defect).
"""
import math
import re
from dataclasses import dataclass

from jsonnum import NonFinite, decimals_of

RULES = {}

# A figure printed with 2 decimals (impact_pct 64.44) is off by up to 0.005 from the value behind it; two
# such figures compared with each other by up to 0.01. Percentage points.
PCT_ROUNDING = 0.011
# Findings whose saving is of the stalled time, not of a step (docs/impact.md "Exempt").
STALL_CAUSES = {"hang", "collective_mismatch"}
# The status rules' thresholds (src/analysis/diagnosis/thresholds.h: kMaxSkippedShare, kMaxResidualStepShare).
MAX_SKIPPED_SHARE = 0.01
MAX_RESIDUAL_SHARE = 0.10
# Critical-path times are printed in µs with up to 3 decimals; sums of a few hundred of them drift by less.
PATH_ROUNDING_US = 1.0
# S is printed with 4 decimals: 100 * (1 - 1/S) is then off by up to 100 * 0.00005 / S^2 <= 0.005 points.
WASTE_ROUNDING = PCT_ROUNDING + 0.005
# A number is a duration when a key on its path names a unit (late_ms_per_step, step_time_ms/median, dur_us);
# it may be negative when a key on its path says it is signed (clock offsets, excesses, delays, deltas) or
# when it is an instant, not a duration (start_us, end_us: the aligned clock has no origin of its own).
TIME_PART = re.compile(r"(^|_)(ms|us|ns)(_|$)|_s$|^(duration|dur)$")
SIGNED_TIME = re.compile(r"(offset|excess|delay|delta|diff|lead|_vs_|skew|slack|change|_z|/start|/end)", re.I)
SAVING_WORDS = re.compile(r"\b(costs|saves|would save|save about|saves about)\s+(about\s+)?\d", re.I)


@dataclass
class Output:
    json: dict
    text: str = None
    schema: dict = None


@dataclass
class Rule:
    name: str
    kind: str
    check: object
    doc: str
    reads_text: bool = False


def rule(name, kind, reads_text=False):
    """Registers a rule under `name` for outputs of subcommand `kind` (`reads_text`: it checks the text report,
    whose command then belongs in a violation's reproducing lines)."""
    def register(fn):
        RULES[name] = Rule(name, kind, fn, " ".join((fn.__doc__ or "").split()), reads_text)
        return fn
    return register


def check_output(kind, out, only=None, applied=None):
    """{rule name: [messages]} for every rule of `kind` (or those in `only`) that the output breaks. A rule
    returns None when it does not apply (no text report, no critical path, no what-if); the names of those
    that applied are added to `applied` when given."""
    broken = {}
    for r in RULES.values():
        if r.kind != kind or (only and r.name not in only):
            continue
        messages = r.check(out)
        if messages is not None and applied is not None:
            applied.add(r.name)
        if messages:
            broken[r.name] = messages
    return broken


def walk_numbers(node, path=""):
    """Yields (path, key, value) for every number in a JSON value (key: the nearest dict key)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                yield f"{path}/{k}", k, v
            else:
                yield from walk_numbers(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                yield f"{path}/{i}", None, v
            else:
                yield from walk_numbers(v, f"{path}/{i}")


def waste_pct(j):
    """100 * (1 - 1/S) of a diagnosis, or None when it has no what-if (model none, S missing or <= 0)."""
    w = j.get("whatif") or {}
    S = w.get("slowdown")
    if w.get("model") == "none" or not isinstance(S, (int, float)) or S <= 0:
        return None
    return 100.0 * max(0.0, 1.0 - 1.0 / S)


def step_findings(j):
    """The findings whose saving is a share of step time (stall findings are of the stalled time)."""
    return [f for f in j.get("findings", []) if f.get("cause") not in STALL_CAUSES]


# ---- every run ------------------------------------------------------------------------------------------

RULES["exits_cleanly"] = Rule(
    "exits_cleanly", "run", None,
    "strata exits 0 on every input the suite gives it (each a valid job): no crash, no error, no timeout.")


# ---- diagnose -------------------------------------------------------------------------------------------

@rule("schema_valid", "diagnose")
def schema_valid(out):
    """The JSON validates against the strata.diagnosis/1 contract (../shared/spec/diagnosis.schema.json)."""
    if out.schema is None:
        return None
    import jsonschema
    validator = jsonschema.Draft202012Validator(out.schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:160]}"
            for e in list(validator.iter_errors(out.json))[:5]]


@rule("finite_numbers", "diagnose")
def finite_numbers(out):
    """No number is NaN or infinite (strict JSON has none; a NaN printed as null is caught by the schema)."""
    return [f"{p} = {v.literal}" for p, _, v in walk_numbers(out.json) if isinstance(v, NonFinite)][:5] + \
           [f"{p} = {v}" for p, _, v in walk_numbers(out.json)
            if not isinstance(v, NonFinite) and isinstance(v, float) and not math.isfinite(v)][:5]


@rule("nonnegative_times", "diagnose")
def nonnegative_times(out):
    """No duration is negative: every *_ms/*_us/*_s figure (step times, lateness, windows, path segments, what-if
    times) is >= 0, except the signed ones (clock offsets, excesses, delays, deltas) and instants (start, end)."""
    bad = []
    for p, _, v in walk_numbers(out.json):
        if v < 0 and any(TIME_PART.search(part) for part in p.split("/")) and not SIGNED_TIME.search(p):
            bad.append(f"{p} = {v}")
    return bad[:5]


@rule("shares_within_100", "diagnose")
def shares_within_100(out):
    """Every share is within 0..100 %: impact_pct in [0, 100], confidence and straggler score in [0, 1], every
    *_pct in [0, 100] and every *share* in [0, 1]."""
    j, bad = out.json, []
    for f in j.get("findings", []):
        if not -PCT_ROUNDING <= f.get("impact_pct", 0) <= 100 + PCT_ROUNDING:
            bad.append(f"finding {f.get('cause')} impact_pct {f['impact_pct']}")
        if not 0 <= f.get("confidence", 0) <= 1:
            bad.append(f"finding {f.get('cause')} confidence {f['confidence']}")
    for s in j.get("stragglers", []):
        if not 0 <= s.get("score", 0) <= 1:
            bad.append(f"straggler {s.get('rank')} score {s['score']}")
    for p, key, v in walk_numbers(j):
        if key and key.endswith("_pct"):
            if not -PCT_ROUNDING <= v <= 100 + PCT_ROUNDING:
                bad.append(f"{p} = {v}")
        elif key and "share" in key and not -1e-9 <= v <= 1 + 1e-4:
            bad.append(f"{p} = {v}")
    return bad[:5]


@rule("savings_within_waste", "diagnose")
def savings_within_waste(out):
    """No finding saves more than the what-if allows, 100 * (1 - 1/S), and the findings' savings together
    neither (docs/impact.md; stall findings, a share of the stalled time, are exempt)."""
    j = out.json
    waste = waste_pct(j)
    if waste is None:
        return None
    tol, bad, total = WASTE_ROUNDING, [], 0.0
    for f in step_findings(j):
        total += f["impact_pct"]
        if f["impact_pct"] > waste + tol:
            bad.append(f"{f['cause']} (rank {f.get('rank')}) saves {f['impact_pct']}% > 1 - 1/S = {waste:.3f}% "
                       f"(S {j['whatif']['slowdown']})")
    if total > waste + tol * max(1, len(step_findings(j))):
        bad.append(f"the findings save {total:.2f}% together > 1 - 1/S = {waste:.3f}%")
    return bad


@rule("saving_within_lateness", "diagnose")
def saving_within_lateness(out):
    """A finding about straggler ranks saves no more than their lateness share: impact_pct <= 100 * the sum
    of the scores (peers' wait as a share of the step) of the stragglers among its ranks. Not applied to an
    inconclusive result (it says its figures cannot be trusted)."""
    j, bad = out.json, []
    if j.get("status") == "inconclusive":
        return None
    score = {s["rank"]: s["score"] for s in j.get("stragglers", [])}
    for f in step_findings(j):
        ranks = set(f.get("ranks") or []) | ({f["rank"]} if f.get("rank") is not None else set())
        late = [r for r in ranks if r in score]
        if not late or len(late) < len(ranks):
            continue
        share = 100.0 * sum(score[r] for r in late)
        if f["impact_pct"] > share + PCT_ROUNDING + 0.005 * len(late):
            bad.append(f"{f['cause']} on rank(s) {sorted(late)} saves {f['impact_pct']}% > their lateness share "
                       f"{share:.2f}% (by {f['impact_pct'] - share:.2f} points)")
    return bad


@rule("rank_findings_within_lateness", "diagnose")
def rank_findings_within_lateness(out):
    """The findings about one straggler rank alone (a first cause and a second, docs/confidence.md) together save
    no more than its lateness share: a second cause splits the rank's saving, it never adds to it. Not applied to
    an inconclusive result."""
    j = out.json
    if j.get("status") == "inconclusive":
        return None
    score = {s["rank"]: s["score"] for s in j.get("stragglers", [])}
    total, count = {}, {}
    for f in step_findings(j):
        r = f.get("rank")
        if r in score and set(f.get("ranks") or [r]) == {r}:
            total[r] = total.get(r, 0.0) + f["impact_pct"]
            count[r] = count.get(r, 0) + 1
    return [f"the {count[r]} findings about rank {r} save {total[r]:.2f}% > its lateness share "
            f"{100 * score[r]:.2f}%" for r in total if total[r] > 100 * score[r] + PCT_ROUNDING * count[r] + 0.005]


@rule("lateness_within_waste", "diagnose")
def lateness_within_waste(out):
    """A straggler's lateness share is within what the what-if says can be saved: 100 * score <= 100 * (1 - 1/S).
    Not applied to an inconclusive result (it says its figures cannot be trusted)."""
    j = out.json
    waste = waste_pct(j)
    if waste is None or j.get("status") == "inconclusive":
        return None
    tol = WASTE_ROUNDING + 0.005
    return [f"straggler {s['rank']}: peers wait {100 * s['score']:.2f}% of a step > 1 - 1/S = {waste:.3f}% "
            f"(S {j['whatif']['slowdown']}; by {100 * s['score'] - waste:.2f} points)"
            for s in j.get("stragglers", []) if 100 * s["score"] > waste + tol]


@rule("status_consistent", "diagnose")
def status_consistent(out):
    """The status means what the contract says (docs/usage.md "Status"): `findings` has a finding, a straggler
    or a note that findings were hidden; `healthy` has none, at least 2 ranks and 2 steps (or, compared over
    one step's collectives, at least 12 of them), no input with more
    than 1 % of its events skipped; `inconclusive` gives a reason; collective-aligned clocks whose residual
    exceeds 10 % of the median step make the result inconclusive, findings or not."""
    j = out.json
    st, bad = j.get("status"), []
    hidden = any("not shown" in n for n in j.get("notes", []))
    if st == "findings" and not (j["findings"] or j["stragglers"] or hidden):
        bad.append("status findings with no finding, no straggler and nothing hidden")
    if st == "healthy":
        if j["findings"] or j["stragglers"]:
            bad.append(f"status healthy with {len(j['findings'])} findings, {len(j['stragglers'])} stragglers")
        if j["job"]["ranks"] < 2 or compared_units(j["job"]) < 2:
            bad.append(f"status healthy over {j['job']['ranks']} ranks and {compared_units(j['job'])} "
                       f"{j['job'].get('unit', 'step')}s")
        bad += [f"status healthy, yet {i['path']} lost {share:.1%} of its events" for i, share in skipped_shares(j)
                if share > MAX_SKIPPED_SHARE]
    if st == "inconclusive" and not j.get("status_reasons"):
        bad.append("status inconclusive without a reason")
    job = j["job"]
    step_us = 1e3 * float((job.get("step_time_ms") or {}).get("median") or 0)
    resid = float(job.get("clock_residual_us") or 0)
    if job.get("clock_alignment") == "collective-ends" and step_us > 0 and resid > MAX_RESIDUAL_SHARE * step_us \
            and st != "inconclusive":
        bad.append(f"clock residual {resid:.0f} µs is {resid / step_us:.0%} of the {step_us:.0f} µs step, yet the "
                   f"status is {st}")
    return bad


def compared_units(job):
    """How many units the ranks were compared over: the steps, or one step's collectives (at least 12 count,
    docs/usage.md "One step, many collectives")."""
    if job.get("unit") == "collective":
        return job.get("units", 0) if job.get("units", 0) >= 12 else 0
    return len(job.get("steps", []))


def skipped_shares(j):
    """(input, share of its events skipped) over the reasons whose scope is an event (docs/usage.md)."""
    scopes = {k: v.get("scope") for k, v in (j.get("skip_reasons") or {}).items()}
    out = []
    for i in j.get("inputs", []):
        n = sum(c for k, c in (i.get("skipped") or {}).items() if scopes.get(k, "event") == "event")
        total = n + i.get("events", 0)
        out.append((i, n / total if total else 0.0))
    return out


@rule("findings_ordered", "diagnose")
def findings_ordered(out):
    """Findings are ordered most important first: stall findings (hang, mismatch) first, then by impact_pct,
    largest first."""
    fs = out.json.get("findings", [])
    keys = [(f.get("cause") in STALL_CAUSES, f["impact_pct"]) for f in fs]
    for i in range(1, len(keys)):
        if keys[i] > keys[i - 1]:
            return [f"finding {i} ({fs[i]['cause']}, {fs[i]['impact_pct']}%) above finding {i - 1} "
                    f"({fs[i - 1]['cause']}, {fs[i - 1]['impact_pct']}%) in importance but listed after it"]
    return []


@rule("named_ranks_exist", "diagnose")
def named_ranks_exist(out):
    """Every rank a straggler or finding names is a rank of the job (a key of job.clock_offsets_us, or an input's
    rank), and every step they name is one of job.steps (a straggler's, one of the units 1..job.units when they
    are collectives)."""
    j = out.json
    ranks = {int(k) for k in (j["job"].get("clock_offsets_us") or {})}
    ranks |= {i["rank"] for i in j.get("inputs", []) if isinstance(i.get("rank"), int)}
    steps, bad = set(j["job"].get("steps", [])), []
    units = set(range(1, j["job"].get("units", 0) + 1)) if j["job"].get("unit") == "collective" else steps
    if not ranks:
        return None
    for s in j.get("stragglers", []):
        if s["rank"] not in ranks:
            bad.append(f"straggler rank {s['rank']} is not a rank of the job")
        bad += [f"straggler {s['rank']}: step {x} is not a step of the job" for x in s.get("steps", []) if x not in units]
    for f in j.get("findings", []):
        named = set(f.get("ranks") or []) | ({f["rank"]} if f.get("rank") is not None else set())
        bad += [f"finding {f['cause']}: rank {r} is not a rank of the job" for r in sorted(named - ranks)]
        if f.get("step") is not None and f["step"] not in steps:
            bad.append(f"finding {f['cause']}: step {f['step']} is not a step of the job")
    return bad[:5]


@rule("critical_path_tiles_step", "diagnose")
def critical_path_tiles_step(out):
    """The critical path (when present) is of one of the job's steps and tiles it: segments start at 0, are
    positive, adjacent and end at duration_us; the parts of a merged segment sum to its duration; every rank's
    window lies inside the step."""
    cp = out.json.get("critical_path")
    if not cp:
        return None
    bad = []
    if cp.get("step") not in out.json["job"].get("steps", []):
        bad.append(f"critical path of step {cp.get('step')}, not a step of the job")
    at, dur = 0.0, cp["duration_us"]
    for i, s in enumerate(cp.get("segments", [])):
        if abs(s["start_us"] - at) > PATH_ROUNDING_US:
            bad.append(f"segment {i} starts at {s['start_us']} µs, the previous ended at {at} µs")
        if s["dur_us"] <= 0:
            bad.append(f"segment {i} ({s['kind']} {s.get('name')}) lasts {s['dur_us']} µs")
        if s.get("parts") and abs(sum(p["dur_us"] for p in s["parts"]) - s["dur_us"]) > PATH_ROUNDING_US:
            bad.append(f"segment {i}: parts sum to {sum(p['dur_us'] for p in s['parts'])} µs, not its "
                       f"{s['dur_us']} µs")
        at = s["start_us"] + s["dur_us"]
    if cp.get("segments") and abs(at - dur) > PATH_ROUNDING_US:
        bad.append(f"segments end at {at} µs, the step lasts {dur} µs")
    for w in cp.get("windows", []):
        if not -PATH_ROUNDING_US <= w["start_us"] <= w["end_us"] <= dur + PATH_ROUNDING_US:
            bad.append(f"rank {w['rank']}'s window {w['start_us']}..{w['end_us']} µs is outside the step 0..{dur}")
    return bad[:5]


def path_time_by_rank_kind(cp):
    """{(rank, kind): µs} of a critical path, merged segments counted by their parts' kinds."""
    out = {}
    for s in cp.get("segments", []):
        for kind, dur in ([(p["kind"], p["dur_us"]) for p in s["parts"]] if s.get("parts")
                          else [(s["kind"], s["dur_us"])]):
            out[(s["rank"], kind)] = out.get((s["rank"], kind), 0.0) + dur
    return out


CONTRIBUTOR = re.compile(r"(\d+(?:\.\d+)?) % rank (\d+) (\w+)")


@rule("critical_path_shares", "diagnose", reads_text=True)
def critical_path_shares(out):
    """The text's critical-path line gives each contributor's share of the step, and they are the path's: each
    share is its (rank, kind)'s time in the JSON segments over the step (3 significant digits), and the shares
    sum to at most 100 %."""
    cp = out.json.get("critical_path")
    if not cp or out.text is None:
        return None
    flat = " ".join(out.text.split())
    m = re.search(r"critical path of step (\d+) \(.*?(?= communication| clocks:|$)", flat)
    if not m:
        return ["the JSON has a critical path, the text report none"]
    shares = [(float(x), int(r), k) for x, r, k in CONTRIBUTOR.findall(m.group(0))]
    bad = []
    if int(m.group(1)) != cp["step"]:
        bad.append(f"text: critical path of step {m.group(1)}, JSON: step {cp['step']}")
    total = sum(x for x, _, _ in shares)
    if total > 100 + 0.05 * len(shares):
        bad.append(f"critical-path shares sum to {total:.2f} %")
    time = path_time_by_rank_kind(cp)
    for x, r, k in shares:
        want = 100.0 * time.get((r, k), 0.0) / max(cp["duration_us"], 1e-9)
        if abs(x - want) > 0.006 * max(x, want) + 0.05:
            bad.append(f"text gives rank {r} {k} {x} % of the path, its segments {want:.2f} %")
    return bad[:5]


def verdict_block(text):
    """The text report's opening lines: the verdict, its wrapped continuation and the `also:`/`caveat:` lines."""
    lines = text.splitlines()
    block = lines[:1]
    for line in lines[1:]:
        if line.startswith((" ", "also:", "caveat:")):
            block.append(line)
        else:
            break
    return block


@rule("text_verdict_matches_status", "diagnose", reads_text=True)
def text_verdict_matches_status(out):
    """The text report opens with `verdict:` and says the JSON's status: `inconclusive:` or `healthy:` for those,
    neither for findings."""
    if out.text is None:
        return None
    first = out.text.splitlines()[0] if out.text else ""
    st = out.json.get("status")
    if not first.startswith("verdict: "):
        return [f"first line is not a verdict: {first[:100]!r}"]
    word = first[len("verdict: "):].split(":")[0]
    said = word if word in ("inconclusive", "healthy") else "findings"
    return [] if said == st else [f"JSON status {st} but the text says {first[:100]!r}"]


@rule("inconclusive_leads_without_saving", "diagnose", reads_text=True)
def inconclusive_leads_without_saving(out):
    """An inconclusive result never leads with a saving: the text's verdict and the reasons under it state no
    `costs N%` / `saves N%`."""
    if out.text is None or out.json.get("status") != "inconclusive":
        return None
    block = " ".join(" ".join(verdict_block(out.text)).split())
    m = SAVING_WORDS.search(block)
    return [f"inconclusive, yet its opening lines say {block[max(0, m.start() - 60):m.end() + 30]!r}"] if m else []


# ---- summary --------------------------------------------------------------------------------------------

@rule("summary_breakdown_adds_up", "summary")
def summary_breakdown_adds_up(out):
    """Each rank's GPU time adds up (HTA's definitions): idle + compute + non-compute = kernel time, their
    percentages sum to 100, every percentage is in [0, 100], no time or count is negative, a kernel's
    min <= mean <= max, and a span's duration is end - start."""
    bad = []
    for r in out.json.get("ranks", []):
        bad += _rank_breakdown(r)
    for p, key, v in walk_numbers(out.json):
        if key and (key.endswith("_us") or key in ("count", "events")) and "span_us" not in p and v < 0:
            bad.append(f"{p} = {v}")
    return bad[:5]


def _rank_breakdown(r):
    bad, who = [], f"rank {r.get('rank')}"
    span = r.get("span_us") or {}
    if span and abs(span["end"] - span["start"] - span["duration"]) > 1.0:
        bad.append(f"{who}: span {span['start']}..{span['end']} but duration {span['duration']}")
    gpu = r.get("gpu") or {}
    tb = gpu.get("temporal_breakdown")
    if tb:
        parts = tb["idle_us"] + tb["compute_us"] + tb["non_compute_us"]
        if abs(parts - tb["kernel_time_us"]) > 1.0:
            bad.append(f"{who}: idle + compute + non-compute = {parts} us != kernel time {tb['kernel_time_us']} us")
        pcts = [tb[k] for k in ("idle_pct", "compute_pct", "non_compute_pct")]
        if tb["kernel_time_us"] > 0 and abs(sum(pcts) - 100) > 0.01:
            bad.append(f"{who}: breakdown percentages sum to {sum(pcts)}")
        bad += [f"{who}: {k} = {tb[k]}" for k in ("idle_pct", "compute_pct", "non_compute_pct") if not 0 <= tb[k] <= 100]
    ov = gpu.get("comm_comp_overlap_pct")
    if ov is not None and not 0 <= ov <= 100:
        bad.append(f"{who}: comm/comp overlap {ov}%")
    for k in gpu.get("top_kernels", []):
        if not k["min_us"] - 1e-6 <= k["mean_us"] <= k["max_us"] + 1e-6:
            bad.append(f"{who}: kernel {k['name'][:40]} min {k['min_us']} mean {k['mean_us']} max {k['max_us']}")
    return bad


# ---- diff -----------------------------------------------------------------------------------------------

@rule("diff_rows_consistent", "diff")
def diff_rows_consistent(out):
    """Every row of a diff says test - base: diff_count = test_count - base_count, diff_total_us =
    test_total_us - base_total_us; counts and totals are >= 0; a new name has no base count, a gone one no
    test count."""
    bad = []
    rows = out.json.get("names") or out.json.get("rows") or []
    for r in rows:
        n = r.get("name", "?")[:40]
        if r["diff_count"] != r["test_count"] - r["base_count"]:
            bad.append(f"{n}: diff_count {r['diff_count']} != {r['test_count']} - {r['base_count']}")
        d = r["test_total_us"] - r["base_total_us"]
        places = max(decimals_of(r[k]) or 0 for k in ("diff_total_us", "test_total_us", "base_total_us"))
        if abs(r["diff_total_us"] - d) > 2.0001 * 10.0 ** -places + 1e-9 * abs(d):
            bad.append(f"{n}: diff_total_us {r['diff_total_us']} != {r['test_total_us']} - {r['base_total_us']}")
        if min(r["base_count"], r["test_count"], r["base_total_us"], r["test_total_us"]) < 0:
            bad.append(f"{n}: a negative count or total")
    new = set(out.json.get("new_names", []))
    gone = set(out.json.get("gone_names", []))
    for r in rows:
        if r.get("name") in new and r["base_count"] != 0:
            bad.append(f"{r['name'][:40]} is new but has base count {r['base_count']}")
        if r.get("name") in gone and r["test_count"] != 0:
            bad.append(f"{r['name'][:40]} is gone but has test count {r['test_count']}")
    return bad[:5]
