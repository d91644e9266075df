"""The checkers' own tests: each rule and each relation is fed a hand-made output (or pair) that breaks it and
must flag it, and a clean one that it must pass, so that the invariant suite cannot pass vacuously. A rule
or relation added without a test here fails `test_every_check_is_tested`.

Run alone: /usr/bin/python3 -m unittest discover -s tests/invariants -p 'test_*.py'; run.py --fast runs it
first.
"""
import copy
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import transforms  # noqa: E402
from jsonnum import load  # noqa: E402
from relations import RELATIONS  # noqa: E402
from rules import RULES, Output, check_output  # noqa: E402

TESTED = set()


def good_diagnosis():
    """A clean 4-rank diagnosis: rank 1 late 30 ms of a 100 ms step, S = 1.4872 (at most 32.76 % to save)."""
    text = json.dumps({
        "schema": "strata.diagnosis/1", "status": "findings", "status_reasons": [],
        "inputs": [{"path": f"/x/rank-{r}.json", "rank": r, "format": "kineto", "events": 10 + r,
                    "skipped": {}} for r in range(4)],
        "job": {"ranks": 4, "steps": [1, 2, 3], "step_time_ms": {"median": 100.0, "p90": 101.5},
                "clock_offsets_us": {"0": 1.5, "1": -2.0, "2": 0.5, "3": 0.0}, "clock_residual_us": 3.0,
                "clock_alignment": "collective-ends"},
        "stragglers": [{"rank": 1, "score": 0.3, "late_ms_per_step": 30.0, "steps": [1, 2, 3]}],
        "findings": [{"cause": "slow_compute", "rank": 1, "ranks": [1], "stage": None, "step": None,
                      "op": "aten::mm", "layer": "gpu", "impact_pct": 28.5, "confidence": 0.9,
                      "summary": "rank 1 is slow; fixing it saves 28.5% of step time",
                      "evidence": {"window_ms": 80.25, "excess_ms": {"compute": -1.5}}},
                     {"cause": "host_stall", "rank": 2, "ranks": [2], "stage": None, "step": 2, "op": None,
                      "layer": "host", "impact_pct": 4.0, "confidence": 0.6, "summary": "gap", "evidence": {}}],
        "whatif": {"slowdown": 1.4872, "ideal_step_ms": 66.7, "model": "collective-phases",
                   "by_rank": {"0": 1.0, "1": 1.45, "2": 1.01, "3": 1.0}},
        "critical_path": {"step": 2, "duration_us": 100000.0, "start_us": 5.0e9, "segments": [
            {"rank": 1, "kind": "kernel", "name": "mm", "start_us": 0.0, "dur_us": 60000.0},
            {"rank": 0, "kind": "cpu", "name": "x", "start_us": 60000.0, "dur_us": 40000.0,
             "parts": [{"kind": "cpu", "name": "x", "dur_us": 30000.0},
                       {"kind": "launch", "name": "cudaLaunchKernel", "dur_us": 10000.0}]}],
            "windows": [{"rank": 0, "start_us": 0.0, "end_us": 100000.0}]},
        "notes": []})
    return text


GOOD_TEXT = ("verdict: slow_compute: rank 1 (aten::mm) costs 28.5% of step time\n"
             "job: 4 ranks, 3 steps\n"
             "  critical path of step 2 (100 ms, 1 rank changes): 60.0 % rank 1 kernel (mm), 30.0 % rank 0 cpu\n"
             "      (x), 10.0 % rank 0 launch (cudaLaunchKernel)\n"
             "clocks: aligned by gpu-kernels to within 3.00 µs\n")


def out(doc=None, text=GOOD_TEXT):
    raw = doc if isinstance(doc, str) else json.dumps(doc) if doc is not None else good_diagnosis()
    o = Output(json=load(raw), text=text)
    o.raw = raw
    return o


def broken(name, mutate, text=GOOD_TEXT, kind="diagnose"):
    """The messages of rule `name` on the good diagnosis after `mutate(doc)`."""
    TESTED.add(name)
    doc = json.loads(good_diagnosis())
    mutate(doc)
    return check_output(kind, out(doc, text), only={name}).get(name, [])


class CleanOutputs(unittest.TestCase):
    def test_good_diagnosis_keeps_every_rule(self):
        self.assertEqual(check_output("diagnose", out()), {})


class DiagnoseRules(unittest.TestCase):
    def test_schema_valid(self):
        TESTED.add("schema_valid")
        schema = {"type": "object", "required": ["status"], "properties": {"status": {"enum": ["findings"]}}}
        o = out()
        o.schema = schema
        self.assertEqual(check_output("diagnose", o, only={"schema_valid"}), {})
        o = out(dict(json.loads(good_diagnosis()), status="great"))
        o.schema = schema
        self.assertTrue(check_output("diagnose", o, only={"schema_valid"}))

    def test_finite_numbers(self):
        TESTED.add("finite_numbers")
        raw = good_diagnosis().replace('"ideal_step_ms": 66.7', '"ideal_step_ms": NaN')
        self.assertIn("NaN", check_output("diagnose", out(raw), only={"finite_numbers"})["finite_numbers"][0])

    def test_nonnegative_times(self):
        self.assertTrue(broken("nonnegative_times", lambda d: d["stragglers"][0].update(late_ms_per_step=-3.0)))
        self.assertTrue(broken("nonnegative_times", lambda d: d["critical_path"]["segments"][0].update(dur_us=-1.0)))
        # A signed figure (an excess, a clock offset) may be negative.
        self.assertFalse(broken("nonnegative_times", lambda d: d["job"]["clock_offsets_us"].update({"1": -50.0})))
        # An instant on the aligned clock may be negative; a duration may not.
        self.assertFalse(broken("nonnegative_times", lambda d: d["critical_path"].update(start_us=-3772.5)))
        self.assertTrue(broken("nonnegative_times", lambda d: d["critical_path"].update(duration_us=-1.0)))

    def test_shares_within_100(self):
        self.assertTrue(broken("shares_within_100", lambda d: d["findings"][0].update(impact_pct=130.0)))
        self.assertTrue(broken("shares_within_100", lambda d: d["stragglers"][0].update(score=1.2)))
        self.assertTrue(broken("shares_within_100", lambda d: d["findings"][0].update(confidence=1.5)))
        self.assertTrue(broken("shares_within_100", lambda d: d["findings"][0]["evidence"].update(idle_pct=101.0)))

    def test_savings_within_waste(self):
        self.assertTrue(broken("savings_within_waste", lambda d: d["findings"][0].update(impact_pct=32.8)))
        # Each within 1 - 1/S, but together past it.
        self.assertTrue(broken("savings_within_waste", lambda d: d["findings"][1].update(impact_pct=4.5)))
        # Stall findings are exempt.
        self.assertFalse(broken("savings_within_waste",
                                lambda d: d["findings"].insert(0, dict(d["findings"][1], cause="hang",
                                                                       impact_pct=100.0))))

    def test_rank_findings_within_lateness(self):
        def second(d):
            f = dict(d["findings"][0])
            f.update(cause="cpu_contention", impact_pct=100 * d["stragglers"][0]["score"])
            d["findings"].append(f)
        self.assertTrue(broken("rank_findings_within_lateness", second))

    def test_saving_within_lateness(self):
        self.assertTrue(broken("saving_within_lateness", lambda d: d["stragglers"][0].update(score=0.2)))

    def test_lateness_within_waste(self):
        self.assertTrue(broken("lateness_within_waste", lambda d: d["whatif"].update(slowdown=1.4215)))
        self.assertFalse(broken("lateness_within_waste", lambda d: d["whatif"].update(slowdown=1.4286)))

    def test_status_consistent(self):
        self.assertTrue(broken("status_consistent", lambda d: d.update(findings=[], stragglers=[])))
        self.assertTrue(broken("status_consistent", lambda d: d.update(status="healthy")))
        self.assertTrue(broken("status_consistent", lambda d: d.update(status="inconclusive")))

        self.assertTrue(broken("status_consistent", lambda d: d["job"].update(clock_residual_us=12000.0)))
        self.assertFalse(broken("status_consistent", lambda d: (d["job"].update(clock_residual_us=12000.0),
                                                                d.update(status="inconclusive",
                                                                         status_reasons=["clocks"]))))

        def skipped(d):
            d.update(status="healthy", findings=[], stragglers=[])
            d["inputs"][0]["skipped"] = {"bad_event": 1}
        self.assertTrue(broken("status_consistent", skipped))

        def hidden(d):
            d.update(findings=[], stragglers=[], notes=["2 findings ... are not shown (lower --min-effect)"])
        self.assertFalse(broken("status_consistent", hidden))

    def test_findings_ordered(self):
        self.assertTrue(broken("findings_ordered", lambda d: d["findings"].reverse()))

    def test_named_ranks_exist(self):
        self.assertTrue(broken("named_ranks_exist", lambda d: d["stragglers"][0].update(rank=9)))
        self.assertTrue(broken("named_ranks_exist", lambda d: d["findings"][0].update(ranks=[1, 7])))
        self.assertTrue(broken("named_ranks_exist", lambda d: d["stragglers"][0].update(steps=[1, 99])))

    def test_critical_path_tiles_step(self):
        seg = lambda d: d["critical_path"]["segments"]  # noqa: E731
        self.assertTrue(broken("critical_path_tiles_step", lambda d: seg(d)[1].update(start_us=61000.0)))
        self.assertTrue(broken("critical_path_tiles_step", lambda d: seg(d)[1].update(dur_us=30000.0)))
        self.assertTrue(broken("critical_path_tiles_step", lambda d: seg(d)[1]["parts"][0].update(dur_us=39000.0)))
        self.assertTrue(broken("critical_path_tiles_step", lambda d: d["critical_path"].update(step=7)))
        self.assertTrue(broken("critical_path_tiles_step",
                               lambda d: d["critical_path"]["windows"][0].update(end_us=100500.0)))

    def test_critical_path_shares(self):
        over = GOOD_TEXT.replace("30.0 % rank 0 cpu", "45.0 % rank 0 cpu")
        self.assertTrue(broken("critical_path_shares", lambda d: None, text=over))
        # Shares that agree with the segments but sum past 100 % (segments that overlap).
        def overlap(d):
            d["critical_path"]["segments"][0]["dur_us"] = 70000.0
        more = GOOD_TEXT.replace("60.0 % rank 1", "70.0 % rank 1")
        self.assertTrue(broken("critical_path_shares", overlap, text=more))
        self.assertTrue(broken("critical_path_shares", lambda d: None, text="verdict: x\n"))

    def test_text_verdict_matches_status(self):
        self.assertTrue(broken("text_verdict_matches_status", lambda d: None,
                               text="verdict: healthy: nothing found\n"))
        self.assertTrue(broken("text_verdict_matches_status", lambda d: None, text="job: 4 ranks\n"))

    def test_inconclusive_leads_without_saving(self):
        def inconclusive(d):
            d.update(status="inconclusive", status_reasons=["ranks of the world are missing"])
        lead = "verdict: inconclusive: ranks of the world are missing\nalso: rank 1 costs 28.5% of step time\n"
        self.assertTrue(broken("inconclusive_leads_without_saving", inconclusive, text=lead))
        self.assertFalse(broken("inconclusive_leads_without_saving", inconclusive,
                                text="verdict: inconclusive: ranks of the world are missing\njob: 4 ranks\n"
                                     "findings:\n  1. fixing it saves 28.5% of step time\n"))


class SummaryAndDiffRules(unittest.TestCase):
    SUMMARY = {"schema": "strata.summary/1", "ranks": [{"rank": 0, "span_us": {"start": 10.0, "end": 30.0,
               "duration": 20.0}, "gpu": {"temporal_breakdown": {"kernel_time_us": 100, "idle_us": 20,
               "compute_us": 50, "non_compute_us": 30, "idle_pct": 20.0, "compute_pct": 50.0, "non_compute_pct": 30.0},
               "comm_comp_overlap_pct": 12.0, "top_kernels": [{"name": "k", "count": 2, "time_us": 10,
               "mean_us": 5.0, "min_us": 4, "max_us": 6}]}}]}

    def summary(self, mutate):
        TESTED.add("summary_breakdown_adds_up")
        doc = copy.deepcopy(self.SUMMARY)
        mutate(doc)
        return check_output("summary", out(doc), only={"summary_breakdown_adds_up"})

    def test_summary_breakdown_adds_up(self):
        tb = lambda d: d["ranks"][0]["gpu"]["temporal_breakdown"]  # noqa: E731
        self.assertEqual(self.summary(lambda d: None), {})
        self.assertTrue(self.summary(lambda d: tb(d).update(idle_us=25)))
        self.assertTrue(self.summary(lambda d: tb(d).update(idle_pct=25.0, compute_pct=45.5)))
        self.assertTrue(self.summary(lambda d: d["ranks"][0]["gpu"].update(comm_comp_overlap_pct=120.0)))
        self.assertTrue(self.summary(lambda d: d["ranks"][0]["gpu"]["top_kernels"][0].update(mean_us=7.0)))
        self.assertTrue(self.summary(lambda d: d["ranks"][0]["span_us"].update(duration=25.0)))

    def test_diff_rows_consistent(self):
        TESTED.add("diff_rows_consistent")
        row = {"name": "k", "kind": "kernel", "base_count": 2, "test_count": 3, "base_total_us": 10.0,
               "test_total_us": 14.5, "diff_count": 1, "diff_total_us": 4.5}
        ok = {"names": [row], "new_names": [], "gone_names": []}
        self.assertEqual(check_output("diff", out(ok)), {})
        for bad in ({"diff_count": 2}, {"diff_total_us": 3.5}, {"base_count": -1, "diff_count": 4}):
            doc = {"names": [dict(row, **bad)], "new_names": [], "gone_names": []}
            self.assertTrue(check_output("diff", out(doc)), bad)
        self.assertTrue(check_output("diff", out(dict(ok, new_names=["k"]))))


class Relations(unittest.TestCase):
    def rel(self, name, a, b, **ctx):
        TESTED.add(name)
        return RELATIONS[name].check(out(a), out(b), ctx)

    def doc(self, mutate=lambda d: None):
        d = json.loads(good_diagnosis())
        mutate(d)
        return d

    def test_relabel_ranks(self):
        perm = {0: 1, 1: 2, 2: 3, 3: 0}

        def moved(d):
            d["stragglers"][0]["rank"] = 2
            d["findings"][0].update(rank=2, ranks=[2])
            d["findings"][1].update(rank=3, ranks=[3])
            d["job"]["clock_offsets_us"] = {"1": 1.5, "2": -2.0, "3": 0.5, "0": 0.0}
            d["whatif"]["by_rank"] = {"1": 1.0, "2": 1.45, "3": 1.01, "0": 1.0}
            for i in d["inputs"]:
                i["rank"] = perm[i["rank"]]
            d["inputs"] = [dict(i, events=10 + next(r for r, p in perm.items() if p == i["rank"])) for i in d["inputs"]]
            for s in d["critical_path"]["segments"] + d["critical_path"]["windows"]:
                s["rank"] = perm[s["rank"]]
        self.assertEqual(self.rel("relabel_ranks", self.doc(), self.doc(moved), perm=perm), [])
        # The answer did not follow the ranks: the straggler stayed rank 1.
        self.assertTrue(self.rel("relabel_ranks", self.doc(), self.doc(), perm=perm))
        # A figure changed beyond rounding.
        worse = self.doc(lambda d: (moved(d), d["findings"][0].update(impact_pct=28.7)))
        self.assertTrue(self.rel("relabel_ranks", self.doc(), worse, perm=perm))
        # The last printed digit may differ (rounding), no more.
        close = self.doc(lambda d: (moved(d), d["findings"][0].update(impact_pct=28.51)))
        self.assertEqual(self.rel("relabel_ranks", self.doc(), close, perm=perm), [])

    def test_relabel_ranks_of_an_op_table(self):
        # Data-parallel ranks 0 <-> 1; global ranks 0 <-> 4 (the workers at dp 0 and 1 of stage 0).
        a = {"stragglers": [], "findings": [{"cause": "data_imbalance", "rank": None, "ranks": [0, 4],
                                             "impact_pct": 5.0, "evidence": {"dp_ranks_slowest_in_some_step": [0, 2],
                                                                             "dp_rank": 0}}],
             "whatif": {"by_dp_rank": {"0": 1.2, "1": 1.0, "2": 1.1}}}
        b = copy.deepcopy(a)
        b["findings"][0]["evidence"] = {"dp_ranks_slowest_in_some_step": [1, 2], "dp_rank": 1}
        b["whatif"]["by_dp_rank"] = {"1": 1.2, "0": 1.0, "2": 1.1}
        ctx = {"perm": {0: 4, 4: 0}, "dp_perm": {0: 1, 1: 0}}
        self.assertEqual(self.rel("relabel_ranks", a, b, **ctx), [])
        self.assertTrue(self.rel("relabel_ranks", a, a, **ctx))

    def test_summary_relabel(self):
        a = copy.deepcopy(SummaryAndDiffRules.SUMMARY)
        a["ranks"].append(dict(copy.deepcopy(a["ranks"][0]), rank=1, events=5))
        a["ranks"][0]["events"] = 7
        b = copy.deepcopy(a)
        b["ranks"][0]["rank"], b["ranks"][1]["rank"] = 1, 0
        self.assertEqual(self.rel("summary_relabel", a, b, perm={0: 1, 1: 0}), [])
        self.assertTrue(self.rel("summary_relabel", a, a, perm={0: 1, 1: 0}))

    def test_shift_rank_clock(self):
        def shifted(d):
            d["job"]["clock_offsets_us"]["2"] = 0.5 + 7e6
            d["critical_path"]["start_us"] = 5.0e9 + 7e6
        self.assertEqual(self.rel("shift_rank_clock", self.doc(), self.doc(shifted), rank=2, seconds=7.0), [])
        # The offset did not absorb the shift (it moved by 1 s, not 7 s).
        self.assertTrue(self.rel("shift_rank_clock", self.doc(),
                                 self.doc(lambda d: d["job"]["clock_offsets_us"].update({"2": 1e6})),
                                 rank=2, seconds=7.0))
        self.assertTrue(self.rel("shift_rank_clock", self.doc(),
                                 self.doc(lambda d: (shifted(d), d["stragglers"][0].update(rank=2))),
                                 rank=2, seconds=7.0))

    def test_keeps_culprit(self):
        for name in ("more_clean_steps", "extra_clean_rank"):
            self.assertEqual(self.rel(name, self.doc(), self.doc(lambda d: d["findings"][0].update(impact_pct=20.0))), [])
            self.assertTrue(self.rel(name, self.doc(), self.doc(lambda d: d["findings"][0].update(rank=3))))
            self.assertTrue(self.rel(name, self.doc(), self.doc(lambda d: d["stragglers"][0].update(rank=3))))
            self.assertIsNone(self.rel(name, self.doc(lambda d: d.update(findings=[], stragglers=[])), self.doc()))
            # A stage's ranks are late alike: which tops the stragglers is not the answer; the stage is.
            stage = lambda d: d["findings"][0].update(cause="stage_imbalance", rank=None, stage=1)  # noqa: E731
            self.assertEqual(self.rel(name, self.doc(stage),
                                      self.doc(lambda d: (stage(d), d["stragglers"][0].update(rank=3)))), [])
            self.assertTrue(self.rel(name, self.doc(stage),
                                     self.doc(lambda d: (stage(d), d["findings"][0].update(stage=0)))))

    def test_drop_clean_rank(self):
        caveat = lambda d: d.update(status_reasons=["7 of the job's 8 ranks were given"])  # noqa: E731
        self.assertEqual(self.rel("drop_clean_rank", self.doc(), self.doc(caveat), rank=0), [])
        self.assertTrue(self.rel("drop_clean_rank", self.doc(), self.doc(), rank=0))
        self.assertTrue(self.rel("drop_clean_rank", self.doc(),
                                 self.doc(lambda d: (caveat(d), d["findings"].pop(0))), rank=0))

    def test_larger_fault(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"fault": "slow_compute", "rank": 1, "ranks": [1], "stage": None}, f)
        ctx = {"truth_path": f.name, "ma": 0.1, "mb": 0.3}
        try:
            self.assertEqual(self.rel("larger_fault", self.doc(), self.doc(), **ctx), [])
            self.assertTrue(self.rel("larger_fault", self.doc(), self.doc(lambda d: d["findings"].pop(0)), **ctx))
            self.assertTrue(self.rel("larger_fault", self.doc(),
                                     self.doc(lambda d: d["findings"][0].update(cause="host_stall")), **ctx))
            moved = lambda d: d["findings"].insert(0, dict(d["findings"][1], impact_pct=30.0))  # noqa: E731
            self.assertTrue(self.rel("larger_fault", self.doc(), self.doc(moved), **ctx))
            self.assertIsNone(self.rel("larger_fault", self.doc(lambda d: d.update(findings=[])), self.doc(), **ctx))
        finally:
            os.unlink(f.name)

    def test_same_answer_relations(self):
        for name in ("op_map_rename", "column_rename", "time_unit", "split_vs_merged", "gzip_invariance",
                     "unknown_members"):
            self.assertEqual(self.rel(name, self.doc(), self.doc(lambda d: d["inputs"][0].update(path="/y"))), [])
            self.assertTrue(self.rel(name, self.doc(), self.doc(lambda d: d["whatif"].update(slowdown=1.4875))))
            self.assertTrue(self.rel(name, self.doc(), self.doc(lambda d: d["findings"][0].update(rank=2))))

    def test_min_effect_filter(self):
        filtered = self.doc(lambda d: (d["findings"].pop(1), d.update(notes=["1 findings ... are not shown"])))
        self.assertEqual(self.rel("min_effect_filter", self.doc(), filtered, threshold=10.0), [])
        # Nothing under the default 3 %: the outputs are equal.
        self.assertEqual(self.rel("min_effect_filter", self.doc(), self.doc(), threshold=None), [])
        self.assertTrue(self.rel("min_effect_filter", self.doc(), self.doc(), threshold=10.0))
        self.assertTrue(self.rel("min_effect_filter", self.doc(),
                                 self.doc(lambda d: (d["findings"].pop(1), d["whatif"].update(slowdown=1.4811),
                                                     d.update(notes=["1 ... not shown"]))), threshold=10.0))
        self.assertTrue(self.rel("min_effect_filter", self.doc(),
                                 self.doc(lambda d: (d["findings"].pop(1), d.update(status="healthy"),
                                                     d.update(notes=["1 ... not shown"]))), threshold=10.0))
        self.assertTrue(self.rel("min_effect_filter", self.doc(),
                                 self.doc(lambda d: d["findings"].pop(1)), threshold=10.0))

    def test_threads_invariance(self):
        self.assertEqual(self.rel("threads_invariance", self.doc(), self.doc()), [])
        self.assertTrue(self.rel("threads_invariance", self.doc(), self.doc(lambda d: d["job"].update(ranks=5))))

    def test_diff_antisymmetry(self):
        TESTED.add("diff_antisymmetry")
        row = {"name": "k", "base_count": 2, "test_count": 3, "base_total_us": 10.0, "test_total_us": 14.5,
               "diff_count": 1, "diff_total_us": 4.5}
        back = {"name": "k", "base_count": 3, "test_count": 2, "base_total_us": 14.5, "test_total_us": 10.0,
                "diff_count": -1, "diff_total_us": -4.5}
        check = RELATIONS["diff_antisymmetry"].check
        self.assertEqual(check(out({"names": [row]}), out({"names": [back]}), {}), [])
        self.assertTrue(check(out({"names": [row]}), out({"names": [row]}), {}))


class Transforms(unittest.TestCase):
    """The transformations write what the relations assume."""

    def test_relabel_and_shift_edit_only_their_fields(self):
        TESTED.add("transforms")
        with tempfile.TemporaryDirectory() as tmp:
            src, rel, sh = (os.path.join(tmp, n) for n in ("src", "rel", "sh"))
            os.makedirs(src)
            for r in range(2):
                with open(os.path.join(src, f"rank-{r}.json"), "w") as f:
                    f.write('{"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": 2}, "traceEvents": '
                            '[{"ph": "X", "name": "k", "ts": 1000.125, "dur": 5, "args": {"Process Group Ranks": '
                            '"[0, 1]"}}], "traceName": "rank-%d"}' % (r, r))
            transforms.relabel(src, rel, {0: 1, 1: 0})
            got = json.load(open(os.path.join(rel, "rank-1.json")))
            self.assertEqual(got["distributedInfo"]["rank"], 1)
            self.assertEqual(got["traceName"], "rank-1")
            transforms.shift(src, sh, 1, 2.5)
            self.assertEqual(json.load(open(os.path.join(sh, "rank-1.json")))["traceEvents"][0]["ts"], 2501000.125)
            self.assertEqual(json.load(open(os.path.join(sh, "rank-0.json")))["traceEvents"][0]["ts"], 1000.125)


class KnownLimits(unittest.TestCase):
    def test_only_matching_violations_are_known(self):
        import run
        vs = [{"rule": "shares_within_100", "case": "recorded-2rank", "message": "explained_pct = 104.1"},
              {"rule": "shares_within_100", "case": "synth-r8", "message": "explained_pct = 104.1"},
              {"rule": "findings_ordered", "case": "recorded-2rank", "message": "x"}]
        allow = [{"rule": "shares_within_100", "case": "recorded-*", "message": "explained_pct", "reason": "r"},
                 {"rule": "lateness_within_waste", "reason": "unused"}]
        unused = run.mark_known(vs, allow)
        self.assertEqual([bool(v.get("known")) for v in vs], [True, False, False])
        self.assertEqual(unused, [allow[1]])
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"limits": [{"rule": "x"}]}, f)
        try:
            with self.assertRaises(SystemExit):
                run.load_allow(f.name)
        finally:
            os.unlink(f.name)


class Docs(unittest.TestCase):
    def test_every_check_is_described(self):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "invariants.md")
        with open(path) as f:
            text = f.read()
        missing = [n for n in list(RULES) + list(RELATIONS) if f"`{n}`" not in text]
        self.assertEqual(missing, [], "docs/invariants.md does not describe these")


class Coverage(unittest.TestCase):
    def test_every_check_is_tested(self):
        # Runs last (alphabetical class order puts Coverage first, so it runs the others itself).
        with open(os.devnull, "w") as sink:
            for cls in (DiagnoseRules, SummaryAndDiffRules, Relations, Transforms):
                unittest.TextTestRunner(stream=sink).run(unittest.defaultTestLoader.loadTestsFromTestCase(cls))
        untested = (set(RULES) - {"exits_cleanly"} | set(RELATIONS)) - TESTED
        self.assertEqual(untested, set(), "rules or relations without a test that breaks them")


if __name__ == "__main__":
    unittest.main()
