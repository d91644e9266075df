"""bench/accuracy's figures with the faulted and the clean lab jobs apart (issue 47 items 1, 2 and 6;
bench/accuracy_lib/report.py) recomputed from a constructed results file whose answers are worked out by hand,
the per-cause precision, recall and F1 checked against their invariants, and recompute.py printing from the
file alone the block the runner prints."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")
sys.path.insert(0, BENCH)
from accuracy_lib import report, results  # noqa: E402
from accuracy_lib.cases import Case  # noqa: E402


def rec(name, cause, status, verdict, rank=None, pred="none", truth_ranks=(), world=2, source="lab",
        recorded=True, counted=True, set_aside=None):
    """A case record as results.case_record writes it."""
    return {"case": name, "source": source, "counted": counted, "recorded": recorded, "seed": 0, "world": world,
            "fault_kind": cause, "expected_cause": cause,
            "accepted_causes": ([] if cause == "none" else
                                ["gc_pause", "host_stall"] if cause == "gc_pause" and not recorded else [cause]),
            "truth_rank": truth_ranks[0] if len(truth_ranks) == 1 else None, "truth_ranks": list(truth_ranks),
            "injected_ms": 5.0 if cause != "none" else 0.0, "status": status, "verdict": verdict,
            "problem": None if verdict == "right" else "wrong", "set_aside": set_aside,
            "rank": rank, "cause": pred, "note": "", "attempts": 1}


NOISY = "noisy: rank 0 sat on a core 60 % slower"
# 10 faulted lab jobs: 6 judged passed, 1 judged failed, 3 set aside (1 of them right); 4 clean, 1 false alarm.
CASES = [
    rec("f1", "slow_compute", "pass", "right", 1, "slow_compute", [1]),
    rec("f2", "slow_compute", "pass", "right", 1, "slow_compute", [1]),
    rec("f3", "slow_compute", "pass", "right", 1, "slow_compute", [1]),
    rec("f4", "dataloader_stall", "pass", "right", 0, "dataloader_stall", [0]),
    rec("f5", "dataloader_stall", "pass", "right", 0, "dataloader_stall", [0]),
    # without a recording a GC pause is a gap: host_stall is right for gc_pause (scoring.accepted); 4 ranks
    rec("f6", "gc_pause", "pass", "right", 1, "host_stall", [1], world=4, recorded=False),
    # the rank right, the cause wrong: a false negative of dataloader_stall, a false positive of slow_compute
    rec("f7", "dataloader_stall", "fail", "wrong", 0, "slow_compute", [0]),
    rec("f8", "slow_compute", "noisy", "right", 1, "slow_compute", [1], set_aside=NOISY),
    # the cause right, the rank wrong: wrong as a case, a true positive of gc_pause
    rec("f9", "gc_pause", "noisy", "wrong", 0, "gc_pause", [1], set_aside=NOISY),
    rec("f10", "slow_compute", "noisy", "wrong", None, "none", [1], set_aside=NOISY),
    rec("c1", "none", "pass", "right"),
    rec("c2", "none", "pass", "right"),
    # a rank the machine slowed, named slow_compute: right by scoring.judge, a false positive of slow_compute
    rec("c3", "none", "pass", "right", 0, "slow_compute"),
    rec("c4", "none", "fail", "wrong", 1, "data_imbalance"),
    # left out of every lab figure: synth (reported apart) and a case not counted (needs the recorder)
    rec("s1", "slow_compute", "pass", "right", 3, "slow_compute", [3], world=8, source="synth"),
    rec("s2", "gc_pause", "fail", "wrong", 3, "slow_compute", [3], world=8, source="synth"),
    rec("u1", "memory_pressure", "fail", "wrong", 0, "none", [1], counted=False),
]


def close(test, got, want):
    test.assertIsNotNone(got)
    test.assertAlmostEqual(got, float(want), places=12)


class KnownAnswers(unittest.TestCase):
    def setUp(self):
        self.fig = report.figures(CASES)

    def test_faulted_jobs_alone(self):
        f = self.fig["faulted"]
        self.assertEqual((f["cases"], f["judged"], f["passed"], f["errors"]), (10, 7, 6, 0))
        close(self, f["pass_share"], Fraction(6, 7))
        self.assertEqual(f["not_judged"], 3)
        close(self, f["not_judged_share"], Fraction(3, 10))
        self.assertEqual((f["set_aside_right"], f["set_aside_wrong"]), (1, 2))

    def test_clean_jobs_alone(self):
        c = self.fig["clean"]
        self.assertEqual((c["cases"], c["judged"], c["false_alarms"], c["errors"], c["not_judged"]),
                         (4, 4, ["c4"], [], 0))

    def test_share_right_over_all_lab_cases(self):
        a = self.fig["all"]
        # right: f1-f6, f8, c1-c3
        self.assertEqual((a["cases"], a["right"], a["judged_right"], a["judged"], a["set_aside_right"],
                          a["set_aside"]), (14, 10, 9, 11, 1, 3))
        close(self, a["right_share"], Fraction(10, 14))

    def test_top1_with_chance_floor(self):
        j, f = self.fig["top1"]["judged"], self.fig["top1"]["faulted"]
        self.assertEqual((j["right"], j["cases"]), (7, 7))
        close(self, j["chance"], (6 * Fraction(1, 2) + Fraction(1, 4)) / 7)  # f6: 1 of 4 ranks
        self.assertEqual((f["right"], f["cases"]), (8, 10))  # f9 a wrong rank, f10 none
        close(self, f["chance"], (9 * Fraction(1, 2) + Fraction(1, 4)) / 10)

    def test_per_cause_precision_recall_f1(self):
        pc = self.fig["per_cause"]
        self.assertEqual(sorted(pc), ["all", "data_imbalance", "dataloader_stall", "gc_pause", "slow_compute"])
        sc = pc["slow_compute"]  # TP f1 f2 f3 f8; FN f10; FP f7 (a dataloader stall), c3 (clean)
        self.assertEqual((sc["tp"], sc["fp"], sc["fn"]), (4, 2, 1))
        close(self, sc["precision"], Fraction(4, 6))
        close(self, sc["recall"], Fraction(4, 5))
        close(self, sc["f1"], Fraction(8, 11))
        dl = pc["dataloader_stall"]  # TP f4 f5; FN f7
        self.assertEqual((dl["tp"], dl["fp"], dl["fn"]), (2, 0, 1))
        close(self, dl["precision"], 1)
        close(self, dl["recall"], Fraction(2, 3))
        close(self, dl["f1"], Fraction(4, 5))
        gc = pc["gc_pause"]  # TP f6 (host_stall, no recording), f9 (cause right, rank wrong)
        self.assertEqual((gc["tp"], gc["fp"], gc["fn"]), (2, 0, 0))
        close(self, gc["f1"], 1)
        di = pc["data_imbalance"]  # named once on a clean job, never injected
        self.assertEqual((di["tp"], di["fp"], di["fn"], di["precision"], di["recall"], di["f1"]),
                         (0, 1, 0, 0.0, None, None))
        al = pc["all"]  # micro average
        self.assertEqual((al["tp"], al["fp"], al["fn"]), (8, 3, 2))
        close(self, al["precision"], Fraction(8, 11))
        close(self, al["recall"], Fraction(8, 10))
        close(self, al["f1"], Fraction(16, 21))

    def test_synth_apart(self):
        self.assertEqual(self.fig["synth"], {"cases": 2, "right": 1, "wrong": ["s2"]})

    def test_faulted_alone_gate_is_information(self):
        g = self.fig["faulted_gate"]
        self.assertEqual((g["pass_ok"], g["noisy_ok"], g["ok"]), (True, True, True))
        line = report.render(self.fig)[-1]
        self.assertTrue(line.startswith("faulted-alone gate at the published bars: 6 of 7 judged passed"),
                        line)
        self.assertTrue(line.endswith("it would pass"), line)

    def test_ci_reduced_run_would_fail_on_the_faulted_share_not_judged(self):
        # docs/accuracy.md: the last CI reduced run, 8 of 8 judged faulted passed, 10 of 18 faulted set aside
        cases = ([rec(f"p{i}", "slow_compute", "pass", "right", 1, "slow_compute", [1]) for i in range(8)] +
                 [rec(f"n{i}", "slow_compute", "noisy", "right", 1, "slow_compute", [1], set_aside=NOISY)
                  for i in range(10)])
        fig = report.figures(cases)
        self.assertEqual(fig["faulted_gate"], {"min_pass_share": 0.75, "max_not_judged_share": 0.5,
                                               "pass_ok": True, "noisy_ok": False, "ok": False})
        self.assertIn("10 of 18 faulted not judged (at most 50% allowed): FAILED: it would FAIL",
                      report.render(fig)[-1])
        # a results file's own thresholds decide, not today's scoring.py
        fig = report.figures(cases, {"GATE_MAX_LAB_NOISY_SHARE": 0.6, "GATE_MIN_LAB_PASS_SHARE": 0.75})
        self.assertTrue(fig["faulted_gate"]["ok"])

    def test_the_printed_block(self):
        lines = report.render(self.fig)
        text = "\n".join(lines)
        self.assertIn("lab faulted jobs, 10: passed 6 of 7 (85.7 %) judged; not judged 3 of 10 (30.0 %), set-aside "
                      "verdicts 1 right, 2 wrong", text)
        self.assertIn("lab clean jobs, 4: false alarms in 1 of 4 (25.0 %) judged: c4", text)
        self.assertIn("lab, all cases: right in 10 of 14 (71.4 %) (judged 9 of 11, set aside 1 of 3)", text)
        self.assertIn("  slow_compute             5     6    4    2    1     0.667   0.800  0.727", text)
        self.assertIn("  data_imbalance           0     1    0    1    0     0.000       -      -", text)


class Invariants(unittest.TestCase):
    def check(self, cases):
        fig = report.figures(cases)
        pc = dict(fig["per_cause"])
        al = pc.pop("all")
        lab = [c for c in cases if c["counted"] and c["source"] == "lab"]
        faulted = [c for c in lab if c["expected_cause"] != "none"]
        for k, v in list(pc.items()) + [("all", al)]:
            for m in ("precision", "recall", "f1"):
                if v[m] is not None:
                    self.assertTrue(0.0 <= v[m] <= 1.0, (k, m, v))
            self.assertEqual(v["truth"], v["tp"] + v["fn"], k)
            self.assertEqual(v["named"], v["tp"] + v["fp"], k)
            if v["precision"] is not None and v["recall"] is not None:
                p, r = v["precision"], v["recall"]
                self.assertAlmostEqual(v["f1"], 2 * p * r / (p + r) if p + r else 0.0, places=12, msg=k)
                if p and r:
                    self.assertAlmostEqual(2 / v["f1"], 1 / p + 1 / r, places=9, msg=k)  # harmonic mean
                    self.assertTrue(min(p, r) - 1e-12 <= v["f1"] <= max(p, r) + 1e-12, k)
            else:
                self.assertIsNone(v["f1"], k)
        # every faulted job is the truth of one cause; every cause named once, by one case
        self.assertEqual(sum(v["truth"] for v in pc.values()), len(faulted))
        self.assertEqual(sum(v["named"] for v in pc.values()), sum((c["cause"] or "none") != "none" for c in lab))
        for m in ("tp", "fp", "fn"):
            self.assertEqual(al[m], sum(v[m] for v in pc.values()), m)
        f, cl, a = fig["faulted"], fig["clean"], fig["all"]
        self.assertEqual(f["judged"] + f["not_judged"], f["cases"])
        self.assertEqual(f["set_aside_right"] + f["set_aside_wrong"], f["not_judged"])
        self.assertEqual(f["cases"] + cl["cases"], a["cases"])
        self.assertEqual(a["judged_right"] + a["set_aside_right"], a["right"])
        self.assertEqual(a["judged"] + a["set_aside"], a["cases"])

    def test_the_constructed_run(self):
        self.check(CASES)

    def test_many_drawn_runs(self):
        import random
        rnd = random.Random(47)
        causes = ["slow_compute", "dataloader_stall", "gc_pause", "cpu_contention", "none"]
        for _ in range(200):
            cases = []
            for i in range(rnd.randint(0, 30)):
                truth = rnd.choice(causes)
                named = rnd.choice(causes + ["host_stall", "data_imbalance"])
                status = rnd.choice(["pass", "fail", "noisy", "error"] if truth != "none" else ["pass", "fail"])
                verdict = None if status == "error" else rnd.choice(["right", "wrong"])
                cases.append(rec(f"x{i}", truth, status, verdict, rnd.choice([0, 1, None]), named,
                                 [] if truth == "none" else [rnd.choice([0, 1])], recorded=rnd.random() < 0.5))
            self.check(cases)


class ResultsFile(unittest.TestCase):
    def test_a_noisy_case_keeps_its_verdict_and_why(self):
        case = Case("lab-x", "lab", "gc_pause", seed=7)
        truth = {"fault": "gc_pause", "rank": 1, "world_size": 2, "injected_ms": 3.5}
        r = results.case_record({"case": case, "recorded": False, "status": "noisy", "problem": None,
                                 "set_aside": NOISY, "truth": truth, "rank": 1, "cause": "host_stall", "world": 2,
                                 "note": "", "attempts": 1}, True)
        self.assertEqual((r["verdict"], r["set_aside"], r["seed"], r["accepted_causes"], r["truth_ranks"]),
                         ("right", NOISY, 7, ["gc_pause", "host_stall"], [1]))
        r = results.case_record({"case": case, "recorded": True, "status": "noisy", "problem": "cause host_stall",
                                 "set_aside": NOISY, "truth": truth, "rank": 1, "cause": "host_stall", "world": 2,
                                 "note": "", "attempts": 1}, True)
        self.assertEqual((r["verdict"], r["accepted_causes"]), ("wrong", ["gc_pause"]))
        r = results.case_record({"case": case, "recorded": True, "status": "error", "problem": "lab job failed",
                                 "note": "", "attempts": 1}, True)
        self.assertEqual((r["verdict"], r["expected_cause"], r["world"]), (None, "gc_pause", None))

    def test_recompute_prints_the_runners_block_from_the_file_alone(self):
        run = results.run_header("abc1234", "reduced")
        self.assertEqual(run["thresholds"]["GATE_MIN_LAB_PASS_SHARE"], 0.75)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            results.write(path, run, CASES)
            out = subprocess.run([sys.executable, os.path.join(BENCH, "accuracy_lib", "recompute.py"), path],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            lines = out.stdout.splitlines()
            self.assertIn("reduced suite at commit abc1234", lines[0])
            self.assertEqual(lines[1:], report.report_lines(CASES))
            out = subprocess.run([sys.executable, os.path.join(BENCH, "accuracy_lib", "recompute.py"), path,
                                  "--figures-json"], capture_output=True, text=True, timeout=60)
            self.assertEqual(json.loads(out.stdout)["all"]["right"], 10)
            with open(path, "w") as f:  # the list form written before issue 47 has no header
                json.dump([{"case": "x"}], f)
            out = subprocess.run([sys.executable, os.path.join(BENCH, "accuracy_lib", "recompute.py"), path],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 2)
            self.assertIn("not a bench/accuracy results document", out.stderr)


if __name__ == "__main__":
    unittest.main()
