"""The metamorphic relations: a transformation of a job's input whose effect on the answer is known, and
the comparison of the two answers (docs/invariants.md).

Each relation is a class registered with `@relation(NAME)`. Its docstring is its statement. `plan(corpus,
base, **kw)` adds to the corpus what the relation needs beside the base source (the transformed source, the
runs, the pair) and returns the pairs' count; `check(a, b, ctx)` compares the two outputs (rules.Output, `a`
the base) and returns the violations as messages, [] when the relation holds, or None when it does not apply
to this pair (e.g. the base found nothing to keep).

Invariants: a relation compares only what its transformation leaves unchanged (the fields it ignores are
listed in it, with the reason); figures are equal within one unit of their last printed digit
(jsonnum.within_rounding); which fields hold ranks is compare.map_ranks's knowledge, not a relation's.
"""
import json
import random
from dataclasses import replace

from compare import differences, map_ranks
from jsonnum import within_rounding
from rules import STALL_CAUSES

RELATIONS = {}
# Input paths differ between a source and its transformed copy; nothing else about an input may.
PATHS = ("/inputs/*/path",)


def relation(name):
    def register(cls):
        inst = cls()
        inst.name = name
        inst.doc = " ".join((cls.__doc__ or "").split())
        RELATIONS[name] = inst
        return cls
    return register


def canonical(doc):
    """The diagnosis with its lists of equals in a fixed order: stragglers by (score desc, rank), findings by
    (stall first, saving desc, cause, rank), inputs and critical-path windows by rank. strata orders the first
    two most important first; among equally important items their order is not part of the answer (and
    findings_ordered checks the order itself); the last two follow the input order."""
    d = dict(doc)
    d["stragglers"] = sorted(doc.get("stragglers", []), key=lambda s: (-s["score"], s["rank"]))
    d["findings"] = sorted(doc.get("findings", []), key=lambda f: (
        f.get("cause") not in STALL_CAUSES, -f["impact_pct"], f["cause"], f.get("rank") or -1))
    d["inputs"] = sorted(doc.get("inputs", []), key=lambda i: (i.get("rank") is None, i.get("rank") or 0,
                                                              i.get("path", "")))
    if isinstance(doc.get("critical_path"), dict):
        d["critical_path"] = dict(doc["critical_path"], windows=sorted(
            doc["critical_path"].get("windows", []), key=lambda w: w["rank"]))
    return d


def culprit(doc):
    """(cause, rank, stage) of the top finding, or None when there is none."""
    fs = [f for f in doc.get("findings", []) if f.get("cause") not in STALL_CAUSES]
    return (fs[0]["cause"], fs[0].get("rank"), fs[0].get("stage")) if fs else None


def top_straggler(doc):
    s = doc.get("stragglers", [])
    return s[0]["rank"] if s else None


def same_answer(a, b, ignore=(), perm=None, dp_perm=None, slack=None):
    """Differences between two diagnoses that should be the same answer (b's ranks are a's through perm, its
    data-parallel ranks through dp_perm)."""
    ref = map_ranks(a, perm, dp_perm) if perm or dp_perm else a
    return differences(canonical(ref), canonical(b), ignore=PATHS + tuple(ignore), slack=slack)


@relation("relabel_ranks")
class RelabelRanks:
    """Renaming the ranks (each rank's file and its rank fields permuted) permutes the answer: stragglers,
    findings and every per-rank figure move with their rank, every figure is equal within rounding."""

    def plan(self, c, base, perm, suffix="relabel", summary=False):
        args = ["--perm", ",".join(f"{k}:{v}" for k, v in sorted(perm.items()))]
        what = "relabel-table" if base.kind == "op_table" else "relabel"
        single = "table.csv.gz" if base.kind == "op_table" else None
        moved = c.derived(base, suffix, what, args, single_file=single)
        ctx_perm = table_rank_perm(base, perm) if base.kind == "op_table" else perm
        dp_perm = perm if base.kind == "op_table" else None
        c.pair(self.name, c.run(base), c.run(moved), perm=ctx_perm, dp_perm=dp_perm)
        if summary:
            c.pair("summary_relabel", c.run(base, "summary"), c.run(moved, "summary"), perm=ctx_perm)
        return moved

    def check(self, a, b, ctx):
        perm = {int(k): v for k, v in ctx["perm"].items()}
        dp_perm = {int(k): v for k, v in (ctx.get("dp_perm") or {}).items()}
        return same_answer(a.json, b.json, perm=perm, dp_perm=dp_perm)


def table_rank_perm(base, dp_perm):
    """The global-rank permutation that relabelling an op table's dp ranks by dp_perm makes."""
    return {r: base.meta["rank_at"][(dp_perm.get(d, d), s)] for (d, s), r in base.meta["rank_at"].items()}


@relation("summary_relabel")
class SummaryRelabel:
    """`strata summary` of relabelled ranks is the same summary with its ranks renamed: every rank's row moves
    with its rank and keeps its figures."""

    def check(self, a, b, ctx):
        perm = {int(k): v for k, v in ctx["perm"].items()}
        ref = map_ranks(a.json, perm)
        for d in (ref, b.json):
            d["ranks"] = sorted(d.get("ranks", []), key=lambda r: r.get("rank", 0))
            d["inputs"] = sorted(d.get("inputs", []), key=lambda i: i.get("path", "").rsplit("/", 1)[-1])
        return differences(ref, b.json, ignore=("/inputs/*/path", "/ranks/*/path", "/inputs/*"))


@relation("shift_rank_clock")
class ShiftRankClock:
    """Shifting one rank's clock (every ts of its Kineto file + X seconds, X well under the 60 s that makes two
    runs) gives the same answer: the same status, stragglers, findings and steps; that rank's clock offset
    against its peers moves by X; every figure is equal within rounding plus what the clock alignment itself
    leaves uncertain (twice its residual, + 10 ns: times by that much, ratios by that share of a step)."""

    IGNORE = ("/job/clock_offsets_us", "/critical_path/start_us", "/job/clock_residual_us")

    def plan(self, c, base, rank, seconds):
        moved = c.derived(base, f"shift{rank}", "shift", ["--rank", str(rank), "--seconds", str(seconds)])
        c.pair(self.name, c.run(base), c.run(moved), rank=rank, seconds=seconds)
        return moved

    def check(self, a, b, ctx):
        bad = same_answer(a.json, b.json, ignore=self.IGNORE, slack=alignment_slack(a.json, b.json))
        oa, ob = a.json["job"].get("clock_offsets_us") or {}, b.json["job"].get("clock_offsets_us") or {}
        k = str(ctx["rank"])
        if k in oa and k in ob and a.json["job"].get("clock_alignment") == "collective-ends":
            others = [r for r in oa if r != k and r in ob]
            moved = [(ob[k] - ob[r]) - (oa[k] - oa[r]) for r in others]
            want = 1e6 * ctx["seconds"]
            tol = 1.0 + 2 * float(a.json["job"].get("clock_residual_us") or 0)
            off = [m for m in moved if abs(m + want) > tol and abs(m - want) > tol]
            if off:
                bad.append(f"rank {k}'s offset against its peers moved by {off[0]:.1f} µs, not by the shift "
                           f"({want:.0f} µs)")
        return bad


def alignment_slack(a, b):
    """The tolerance a clock shift leaves: twice the larger clock residual + 10 ns, in a field's unit (µs, ms)
    and, for other figures, as that share of the median step."""
    resid_us = 2 * max(float(d["job"].get("clock_residual_us") or 0) for d in (a, b)) + 0.01
    step_us = 1e3 * float((a["job"].get("step_time_ms") or {}).get("median") or 0) or 1.0

    def slack(field, x, y):
        if field.endswith("_us") or field in ("start", "end", "duration"):
            return resid_us
        if "_ms" in field or field in ("median", "p90"):
            return resid_us / 1e3
        return resid_us / step_us * max(abs(x), abs(y))
    return slack


@relation("more_clean_steps")
class MoreCleanSteps:
    """Adding clean steps (the same job profiled longer, the fault in the same steps) keeps the culprit: the
    top finding's cause and rank (or stage) stay, and the top straggler when the culprit is a rank."""

    def plan(self, c, spec, extra=2):
        longer = replace(spec, steps=spec.steps + extra, fault_steps=tuple(range(1, spec.steps + 1)))
        c.pair(self.name, c.run(c.synth(spec)), c.run(c.synth(longer)))

    def check(self, a, b, ctx):
        return keeps_culprit(a.json, b.json)


@relation("extra_clean_rank")
class ExtraCleanRank:
    """Adding a clean rank (one more data-parallel replica, fault where it was) keeps the culprit: the top
    finding's cause and rank (or stage) stay, and the top straggler when the culprit is a rank."""

    def plan(self, c, spec):
        wider = replace(spec, ranks=spec.ranks + spec.pp * spec.tp, dp=0)
        c.pair(self.name, c.run(c.synth(spec)), c.run(c.synth(wider)))

    def check(self, a, b, ctx):
        return keeps_culprit(a.json, b.json)


def keeps_culprit(a, b):
    """Violations of "the culprit stays": the top finding's (cause, rank, stage) and, when the culprit is a rank
    (or there is no finding), the top straggler. A stage or a load imbalance makes every rank of it late
    alike, so which of them tops the stragglers is not part of its answer."""
    ca = culprit(a)
    if ca is None and top_straggler(a) is None:
        return None
    bad = []
    if ca is not None and culprit(b) != ca:
        bad.append(f"culprit {ca} became {culprit(b)}")
    rank_level = ca is None or ca[1] is not None
    if rank_level and top_straggler(a) is not None and top_straggler(b) != top_straggler(a):
        bad.append(f"top straggler rank {top_straggler(a)} became {top_straggler(b)}")
    return bad


@relation("drop_clean_rank")
class DropCleanRank:
    """Leaving out a clean rank's trace (the world size still says it exists) keeps the culprit, and the result
    says that ranks were not examined (a status reason)."""

    def plan(self, c, base, rank):
        less = c.derived(base, f"drop{rank}", "drop", ["--rank", str(rank)])
        c.run(less, fmt="text")
        c.pair(self.name, c.run(base), c.run(less), rank=rank)

    def check(self, a, b, ctx):
        verdict = keeps_culprit(a.json, b.json)
        if verdict is None:
            return None
        if not b.json.get("status_reasons"):
            verdict.append(f"rank {ctx['rank']} left out, yet no status reason says ranks are missing")
        return verdict


@relation("larger_fault")
class LargerFault:
    """A larger fault (synth magnitude up, same job and seed) never loses its finding or moves it: a finding on
    the fault's rank (or stage) stays, with the same cause, and stays the top finding if it was."""

    def plan(self, c, spec, magnitudes):
        runs = [(m, c.synth(replace(spec, magnitude=m))) for m in sorted(magnitudes)]
        for (ma, sa), (mb, sb) in zip(runs, runs[1:]):
            c.pair(self.name, c.run(sa), c.run(sb), ma=ma, mb=mb, truth_path=sb.meta["truth"])

    def check(self, a, b, ctx):
        with open(ctx["truth_path"]) as f:
            truth = json.load(f)
        mine = [f for f in a.json.get("findings", []) if fault_finding(f, truth)]
        if not mine:
            return None
        bad = []
        for f in mine:
            same = [g for g in b.json.get("findings", []) if fault_finding(g, truth)
                    and g.get("rank") == f.get("rank") and g.get("stage") == f.get("stage")]
            if not same:
                bad.append(f"magnitude {ctx['ma']} -> {ctx['mb']}: finding {f['cause']} on rank {f.get('rank')} "
                           f"stage {f.get('stage')} lost")
            elif f["cause"] not in [g["cause"] for g in same]:
                bad.append(f"magnitude {ctx['ma']} -> {ctx['mb']}: finding on rank {f.get('rank')} changed cause "
                           f"{f['cause']} -> {same[0]['cause']}")
        ta, tb = culprit(a.json), culprit(b.json)
        if ta and fault_finding(a.json["findings"][0], truth) and tb and (ta[1], ta[2]) != (tb[1], tb[2]):
            bad.append(f"magnitude {ctx['ma']} -> {ctx['mb']}: top finding moved from rank {ta[1]} stage {ta[2]} to "
                       f"rank {tb[1]} stage {tb[2]} ({tb[0]})")
        return bad


def fault_finding(f, truth):
    """Whether finding f is about the injected fault: on its rank(s), its stage, or (no rank) its cause."""
    if f.get("cause") in STALL_CAUSES:
        return False
    ranks = set(truth.get("ranks") or ([truth["rank"]] if truth.get("rank") is not None else []))
    if f.get("rank") is not None and f["rank"] in ranks:
        return True
    if truth.get("stage") is not None and f.get("stage") == truth["stage"]:
        return True
    return f.get("rank") is None and f.get("stage") is None and f.get("cause") == truth.get("fault")


@relation("op_map_rename")
class OpMapRename:
    """Renaming an op table's op types and mapping them back with a matching --op-map gives the same answer."""

    NAMES = {"forward-compute": "fwd", "backward-compute": "bwd", "grads-reduce-scatter": "rs",
             "params-all-gather": "ag", "optimizer": "opt", "forward-send": "fs", "backward-recv": "br"}

    def plan(self, c, base):
        spec = ",".join(f"{k}={v}" for k, v in self.NAMES.items())
        back = ",".join(f"{v}={k}" for k, v in self.NAMES.items())
        moved = c.derived(base, "opnames", "rename-ops", ["--map", spec], single_file="table.csv.gz",
                          options=list(base.options) + ["--op-map", back])
        c.pair(self.name, c.run(base), c.run(moved))
        return moved

    def check(self, a, b, ctx):
        return same_answer(a.json, b.json)


@relation("column_rename")
class ColumnRename:
    """Renaming an op table's columns and naming them with the matching --col-* options gives the same answer."""

    COLS = {"rank": ("worker", "--col-rank"), "step": ("iteration", "--col-step"), "optype": ("kind", "--col-op"),
            "start_ts": ("begin", "--col-start"), "duration": ("span", "--col-duration"),
            "dp_rank": ("replica", "--col-dp-rank"), "stage": ("pp", "--col-stage")}

    def plan(self, c, base):
        spec = ",".join(f"{k}={v[0]}" for k, v in self.COLS.items())
        opts = [x for v in self.COLS.values() for x in (v[1], v[0])]
        moved = c.derived(base, "columns", "rename-columns", ["--map", spec], single_file="table.csv.gz",
                          options=list(base.options) + opts)
        c.pair(self.name, c.run(base), c.run(moved))

    def check(self, a, b, ctx):
        return same_answer(a.json, b.json)


@relation("time_unit")
class TimeUnit:
    """An op table written in milliseconds and read with --time-unit-ns 1e6 gives the answer of the same table
    in seconds."""

    def plan(self, c, base):
        moved = c.derived(base, "ms", "time-unit", ["--scale", "1000"], single_file="table.csv.gz",
                          options=list(base.options) + ["--time-unit-ns", "1000000"])
        c.pair(self.name, c.run(base), c.run(moved))

    def check(self, a, b, ctx):
        return same_answer(a.json, b.json)


@relation("split_vs_merged")
class SplitVsMerged:
    """One op table holding every rank and the same rows as one table per rank give the same answer."""

    def plan(self, c, base):
        moved = c.derived(base, "split", "split", [])
        c.pair(self.name, c.run(base), c.run(moved))

    def check(self, a, b, ctx):
        return same_answer(a.json, b.json, ignore=("/inputs", "/status_reasons", "/notes"))


@relation("min_effect_filter")
class MinEffectFilter:
    """--min-effect only filters: the answer at any threshold is the answer at --min-effect 0 with the findings
    saving less than the threshold removed (and a note saying so), but each named straggler's own top finding,
    which stays (so a straggler's cause is the same at any threshold); no other figure, no status changes."""

    def plan(self, c, base, thresholds=(None, 10.0)):
        zero = c.run(base, options=("--min-effect", "0"))
        for t in thresholds:
            other = c.run(base) if t is None else c.run(base, options=("--min-effect", f"{t:g}"))
            c.pair(self.name, zero, other, threshold=t)

    def check(self, a, b, ctx):
        t = 3.0 if ctx["threshold"] is None else ctx["threshold"]
        named = {s["rank"] for s in a.json.get("stragglers", [])}
        owned = set()
        kept = []
        for f in a.json.get("findings", []):  # sorted by what they save: a rank's first is its top finding
            own = f.get("rank") in named and f.get("rank") not in owned
            if own:
                owned.add(f["rank"])
            if f["impact_pct"] >= t or own:
                kept.append(f)
        bad = differences(dict(a.json, findings=kept), b.json, ignore=("/notes",), mask_digits=False)
        hidden = len(a.json.get("findings", [])) - len(kept)
        noted = any("not shown" in n for n in b.json.get("notes", []))
        if hidden and not noted:
            bad.append(f"{hidden} finding(s) under {t}% hidden without a note")
        return bad


@relation("threads_invariance")
class ThreadsInvariance:
    """The number of files parsed at once changes nothing: --threads 1 and the default give byte-identical output."""

    def plan(self, c, base):
        c.pair(self.name, c.run(base), c.run(base, options=("--threads", "1")))

    def check(self, a, b, ctx):
        if a.raw == b.raw:
            return []
        return differences(a.json, b.json, mask_digits=False) or ["outputs differ byte for byte"]


@relation("gzip_invariance")
class GzipInvariance:
    """The same traces gzip-compressed and plain give the same answer."""

    def plan(self, c, base):
        plain = c.derived(base, "plain", "plain", [])
        c.pair(self.name, c.run(base), c.run(plain))

    def check(self, a, b, ctx):
        return same_answer(a.json, b.json)


@relation("unknown_members")
class UnknownMembers:
    """Top-level members of a trace that strata does not know (Kineto adds new ones from version to version;
    the contract's own rule is that fields may be added) change nothing: 2,000 of them, about 100 KB, in front
    of each trace give the same answer."""

    def plan(self, c, base, count=2000):
        more = c.derived(base, "members", "members", ["--count", str(count)])
        c.pair(self.name, c.run(base), c.run(more))

    def check(self, a, b, ctx):
        return same_answer(a.json, b.json)


@relation("diff_antisymmetry")
class DiffAntisymmetry:
    """`strata diff A B` and `strata diff B A` are the same rows with base and test swapped and every
    difference negated."""

    def plan(self, c, a, b):
        c.pair(self.name, c.run(a, "diff", other=b), c.run(b, "diff", other=a))

    def check(self, a, b, ctx):
        ra = {r["name"]: r for r in rows_of(a.json)}
        rb = {r["name"]: r for r in rows_of(b.json)}
        bad = [f"{n[:50]}: only in one direction" for n in sorted(set(ra) ^ set(rb))][:3]
        for n in sorted(set(ra) & set(rb)):
            x, y = ra[n], rb[n]
            pairs = [(x["base_count"], y["test_count"]), (x["test_count"], y["base_count"]),
                     (x["base_total_us"], y["test_total_us"]), (x["diff_count"], -y["diff_count"]),
                     (x["diff_total_us"], -y["diff_total_us"])]
            if not all(within_rounding(p, q) for p, q in pairs):
                bad.append(f"{n[:50]}: {x} vs {y}")
        return bad[:5]


def rows_of(diff_json):
    return diff_json.get("names") or diff_json.get("rows") or []


def replica_perm(layout, seed):
    """A permutation of a synth job's ranks that permutes whole data-parallel replicas (keeping each rank's
    stage and tensor index), so the layout stays a valid one; for a pure data-parallel job, any permutation."""
    dp, pp, tp = layout
    rng = random.Random(seed)
    order = list(range(dp))
    while dp > 1 and order == list(range(dp)):
        rng.shuffle(order)
    block = pp * tp
    return {d * block + i: order[d] * block + i for d in range(dp) for i in range(block)}
