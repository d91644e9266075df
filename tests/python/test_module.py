#!/usr/bin/env python3
"""The Python module (`import strata`, src/python) against the `strata` binary of the same build: the JSON of
strata.diagnose / strata.diff equals the CLI's byte for byte, the frames hold the CLI's numbers (HTA's GPU
breakdown and overlap from `strata summary --per-rank --format json`), errors are strata.Error with the CLI's
message, and a load lets other Python threads run (the GIL is released).

Run by ctest `python_module` (tests/run_unittests.py tests/python) with STRATA_BINARY (the CLI) and
PYTHONPATH (the build's python/ folder: the module built, never one installed) set; from any directory (the
inputs are named relative to the repository's root, as the CLI's outputs name them).
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.chdir(ROOT)  # the module and the CLI both see the inputs by the same relative names

import strata  # noqa: E402  (after the chdir: nothing depends on it, but keep imports in one place)

BINARY = os.environ.get("STRATA_BINARY", os.path.join(ROOT, "build", "strata"))
EXAMPLE = "examples/ddp-2rank-slow-compute"
RECORDING = "examples/recorded-2rank-cpu-contention"
CLEAN, SLOW = "tests/data/ddp/clean-2rank", "tests/data/ddp/slow-compute-rank1"
HTA_2RANK = "../shared/datasets/hta/trace_filter"  # 2 ranks with GPU kernels and NCCL collectives
OP_TABLE = "../shared/datasets/straggler-whatif/trace-AR.csv.gz"
OP_TABLE_SE = "../shared/datasets/straggler-whatif/trace-SE.csv.gz"


def cli(*args, ok=True):
    """The CLI's stdout (ok) or its error text without the "strata: " prefix (not ok)."""
    run = subprocess.run([BINARY, *args], capture_output=True, text=True)
    if ok:
        if run.returncode != 0:
            raise AssertionError(f"strata {' '.join(args)} failed: {run.stderr}")
        return run.stdout
    if run.returncode == 0:
        raise AssertionError(f"strata {' '.join(args)} succeeded where an error was expected")
    return "\n".join(line.removeprefix("strata: ") for line in run.stderr.splitlines())


class BuiltModule(unittest.TestCase):
    def test_imports_the_built_module(self):
        # PYTHONPATH names the build's python/ folder: a module installed elsewhere would hide a broken build.
        expected = os.environ.get("STRATA_PYTHON_DIR")
        self.assertTrue(expected, "STRATA_PYTHON_DIR is not set (ctest sets it to the build's python/)")
        self.assertEqual(os.path.dirname(os.path.dirname(os.path.realpath(strata.__file__))), os.path.realpath(expected))
        self.assertEqual(cli("--version").split()[-1], strata.__version__)


class Diagnose(unittest.TestCase):
    def assert_same_json_as_cli(self, paths, *options, **kwargs):
        expected = cli("diagnose", "--format", "json", *options, *paths)
        got = strata.diagnose(paths, **kwargs).to_json()
        self.assertEqual(got, expected)  # byte for byte, the CLI's whole output
        return json.loads(got)

    def test_traces_json_equals_cli(self):
        j = self.assert_same_json_as_cli([EXAMPLE])
        self.assertEqual(j["findings"][0]["cause"], "slow_compute")

    def test_recording_json_equals_cli(self):
        j = self.assert_same_json_as_cli([RECORDING])
        self.assertEqual(j["findings"][0]["cause"], "cpu_contention")

    def test_op_table_json_equals_cli(self):
        self.assert_same_json_as_cli([OP_TABLE])

    def test_min_effect_is_the_clis(self):
        # A minimum effect above every finding's: the CLI and the module both leave out the SE op table's
        # findings (no straggler is named there) ...
        j = self.assert_same_json_as_cli([OP_TABLE_SE], "--min-effect", "70", min_effect_pct=70)
        self.assertEqual(j["findings"], [])
        self.assertTrue(any("not shown" in n for n in j["notes"]), j["notes"])
        # ... and both keep a named straggler's own finding, whatever it saves.
        j = self.assert_same_json_as_cli([EXAMPLE], "--min-effect", "70", min_effect_pct=70)
        self.assertEqual([(f["cause"], f["rank"]) for f in j["findings"]], [("slow_compute", 1)])

    def test_frames(self):
        result = strata.diagnose(EXAMPLE)
        self.assertEqual(result.status, "findings")
        stragglers = result.stragglers
        self.assertEqual(list(stragglers["rank"]), [1])
        self.assertEqual(stragglers["late_ms_per_step"].iloc[0], 183.538)
        self.assertEqual(list(stragglers["steps"].iloc[0]), [1, 2, 3, 4, 5])
        top = result.findings.iloc[0]
        self.assertEqual((top["cause"], top["rank"], top["op"], top["impact_pct"]),
                         ("slow_compute", 1, "injected_extra_compute", 64.46))
        whatif = result.whatif.set_index(["by", "key"])["slowdown"]
        self.assertEqual(whatif[("rank", "1")], 2.9387)
        self.assertEqual(whatif[("op_type", "compute")], 2.9387)
        # The replay's 2.9307, raised so that 1 - 1/S covers rank 1's measured wait of 66.33 % (docs/impact.md).
        self.assertEqual(result.json["whatif"]["slowdown"], 2.97)

    def test_job_diagnose_equals_diagnose(self):
        job = strata.load(EXAMPLE)
        self.assertEqual(job.diagnose().to_json(), strata.diagnose(EXAMPLE).to_json())


class InputOptions(unittest.TestCase):
    """The CLI's input options as keywords (issue 51 item 8): the same JSON as the CLI given the same options."""

    @classmethod
    def setUpClass(cls):
        # An op table whose headers and time unit are not the defaults: worker, iter, kind, t0, dt in µs.
        import csv
        import gzip

        cls.tmp = tempfile.TemporaryDirectory(prefix="strata-py-opts-")
        cls.table = os.path.join(cls.tmp.name, "renamed.csv")
        with gzip.open(OP_TABLE, "rt") as src, open(cls.table, "w", newline="") as dst:
            rows = csv.DictReader(src)
            rename = {"rank": "worker", "step": "iter", "optype": "kind", "start_ts": "t0", "duration": "dt"}
            out = csv.DictWriter(dst, [rename.get(n, n) for n in rows.fieldnames])
            out.writeheader()
            for row in rows:
                r = {rename.get(k, k): v for k, v in row.items()}
                r["t0"], r["dt"] = f"{float(r['t0']) * 1e6:.3f}", f"{float(r['dt']) * 1e6:.3f}"
                if r["kind"] == "forward-compute":
                    r["kind"] = "fwd"
                out.writerow(r)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_columns_time_unit_and_op_map_equal_cli(self):
        expected = cli("diagnose", "--format", "json", "--col-rank", "worker", "--col-step", "iter", "--col-op", "kind",
                       "--col-start", "t0", "--col-duration", "dt", "--time-unit-ns", "1e3", "--op-map",
                       "fwd=forward-compute", self.table)
        got = strata.diagnose(self.table, columns={"rank": "worker", "step": "iter", "op": "kind", "start": "t0",
                                                   "duration": "dt"}, time_unit_ns=1e3,
                              op_map={"fwd": "forward-compute"})
        self.assertEqual(got.to_json(), expected)
        # The renamed table read with the options is the original table's diagnosis (the same rows, in µs).
        original = json.loads(cli("diagnose", "--format", "json", OP_TABLE))
        self.assertEqual([(f["cause"], f.get("rank")) for f in got.json["findings"]],
                         [(f["cause"], f.get("rank")) for f in original["findings"]])

    def test_rank_map_equals_cli(self):
        expected = cli("diagnose", "--format", "json", "--rank-map", "rank-0.json.gz=1,rank-1.json.gz=0", EXAMPLE)
        got = strata.diagnose(EXAMPLE, rank_map={"rank-0.json.gz": 1, "rank-1.json.gz": 0})
        self.assertEqual(got.to_json(), expected)
        self.assertEqual(got.json["findings"][0]["rank"], 0)  # the slow rank, relabelled

    def test_bad_options_name_the_keyword(self):
        cases = [(dict(op_map={"fwd": "nope"}), "op_map {'fwd': 'nope'}: nope is not an op type"),
                 (dict(columns={"bogus": "x"}), "columns: no op-table column is called 'bogus'"),
                 (dict(time_unit_ns=7), "time_unit_ns=7: not a power of ten"),
                 (dict(rank_map={"nofile.json": 3}), "rank_map nofile.json=3 names no input file")]
        for kwargs, message in cases:
            with self.subTest(kwargs=kwargs), self.assertRaises(strata.Error) as e:
                strata.load(EXAMPLE, **kwargs)
            self.assertIn(message, str(e.exception))
        self.assertIn("--rank-map nofile.json=3 names no input file",
                      cli("diagnose", "--rank-map", "nofile.json=3", EXAMPLE, ok=False))


class Rendering(unittest.TestCase):
    """render("text"|"html") is the CLI's report; the reprs say what a person needs (issue 51 item 8)."""

    def test_text_and_html_equal_cli(self):
        d = strata.diagnose(EXAMPLE)
        self.assertEqual(d.render("text", width=100), cli("diagnose", "--width", "100", EXAMPLE))
        self.assertEqual(d.render("text", width=72), cli("diagnose", "--width", "72", EXAMPLE))
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "report.html")
            cli("diagnose", "--format", "html", "-o", page, EXAMPLE)
            with open(page, encoding="utf-8") as f:
                self.assertEqual(d.render("html"), f.read())
        narrow = d.render("text", width=60)
        self.assertNotEqual(narrow, d.render("text"))
        self.assertEqual(narrow.splitlines()[0], d.render("text").splitlines()[0][:len(narrow.splitlines()[0])])

    def test_render_keeps_min_effect(self):
        d = strata.diagnose(EXAMPLE, min_effect_pct=70)
        self.assertEqual(d.render("text"), cli("diagnose", "--width", "100", "--min-effect", "70", EXAMPLE))

    def test_bad_format(self):
        with self.assertRaises(strata.Error) as e:
            strata.diagnose(EXAMPLE).render("pdf")
        self.assertIn("format 'pdf' is not text or html", str(e.exception))

    def test_reprs(self):
        d = strata.diagnose(EXAMPLE)
        top = d.json["findings"][0]
        self.assertEqual(repr(d), f"<strata.Diagnosis findings: slow_compute rank 1, {top['impact_pct']:g} % of step "
                                  "time>")
        self.assertEqual(repr(strata.diagnose(CLEAN)), "<strata.Diagnosis healthy>")
        job = strata.load(EXAMPLE)
        self.assertRegex(repr(job), r"^<strata\.Job 2 ranks \(0-1\), \d+ steps on rank 0, from \d+ files>$")
        self.assertRegex(repr(strata.diff(CLEAN, SLOW)), rf"^<strata\.Diff {CLEAN} -> {SLOW}: \d+ names compared>$")


class MissingPandas(unittest.TestCase):
    def test_message_names_package_and_interpreter(self):
        # A pandas that cannot be imported (a stand-in package raising ImportError first on the path).
        with tempfile.TemporaryDirectory() as fake:
            os.makedirs(os.path.join(fake, "pandas"))
            with open(os.path.join(fake, "pandas", "__init__.py"), "w") as f:
                f.write("raise ImportError('No module named pandas (stand-in)')\n")
            code = ("import strata, sys\n"
                    "d = strata.diagnose('examples/ddp-2rank-slow-compute')\n"
                    "assert d.json['findings'] and d.render('text')\n"  # no pandas needed for these
                    "try:\n    d.findings\nexcept ImportError as e:\n    print(e)\n")
            env = dict(os.environ, PYTHONPATH=fake + os.pathsep + os.environ.get("PYTHONPATH", ""))
            run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("need pandas", run.stdout)
        self.assertIn(sys.executable, run.stdout)
        self.assertIn("python3-pandas", run.stdout)


class JobFrames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.example = strata.load(EXAMPLE)
        cls.gpu = strata.load(HTA_2RANK)
        cls.gpu_summary = json.loads(cli("summary", "--per-rank", "--format", "json", HTA_2RANK))

    def test_ranks_and_steps(self):
        self.assertEqual(self.example.ranks, [0, 1])
        summary = json.loads(cli("summary", "--format", "json", EXAMPLE))
        for rank in self.example.ranks:
            steps = self.example.steps(rank)
            self.assertEqual(list(steps["step"]), summary["ranks"][rank]["steps"])
            self.assertTrue(((steps["end_ns"] - steps["start_ns"]) == steps["dur_ns"]).all())
        self.assertEqual(sorted(self.example.steps()), [0, 1])

    def test_slices_show_the_injected_op_on_rank_1_only(self):
        rank0, rank1 = self.example.slices(0), self.example.slices(1)
        self.assertEqual(len(rank0) + len(rank1), json.loads(cli("summary", "--format", "json", EXAMPLE))["job"]["events"])
        injected = rank1[rank1["name"] == "injected_extra_compute"]
        self.assertEqual((rank0["name"] == "injected_extra_compute").sum(), 0)
        self.assertGreater(len(injected), 0)
        self.assertTrue((injected["step"] >= 1).all())  # placed in the step windows
        # The diagnosis's op_excess for it is the per-step mean of these durations on rank 1 (no peer has it).
        finding = strata.diagnose(EXAMPLE).json["findings"][0]["evidence"]["op_excess_per_step"][0]
        per_step_ms = injected.groupby("step")["dur_ns"].sum().mean() / 1e6
        self.assertEqual(finding["op"], "injected_extra_compute")
        self.assertAlmostEqual(per_step_ms, finding["excess_ms"], delta=0.1 * finding["excess_ms"])

    def test_kernels_have_htas_types(self):
        for rank in self.gpu.ranks:
            kernels = self.gpu.kernels(rank)
            summary = next(r for r in self.gpu_summary["ranks"] if r["rank"] == rank)
            counts = kernels["kernel_type"].value_counts().to_dict()
            for kind, v in summary["gpu"]["kernel_types"].items():
                # the summary drops the last ProfilerStep (HTA's default): at least its counts are in the frame
                self.assertGreaterEqual(counts.get(kind, 0), v["count"], kind)
        self.assertEqual(len(self.example.kernels(0)), 0)  # a CPU-only job: no GPU events

    def test_collectives(self):
        # CPU-side gloo calls (no NCCL args in these traces), one per step, each matched on both ranks.
        for rank in self.example.ranks:
            coll = self.example.collectives(rank)
            self.assertEqual(list(coll["name"]), ["gloo:all_reduce"] * 5)
            self.assertEqual(list(coll["step"]), [1, 2, 3, 4, 5])
            self.assertTrue(coll["matched"].all())
            self.assertEqual(set(coll["source"]), {"cpu-ops"})
        # GPU collective kernels, their step that of the CPU call that launched them.
        coll = self.gpu.collectives(0)
        self.assertEqual(set(coll["source"]), {"gpu-kernels"})
        self.assertTrue(coll["name"].str.startswith("ncclKernel").all())
        self.assertTrue((coll["launch_ns"] >= 0).all())

    def test_breakdown_is_the_summarys(self):
        breakdown, overlap = self.gpu.breakdown(), self.gpu.overlap()
        self.assertEqual(sorted(breakdown.index), [0, 1])
        for r in self.gpu_summary["ranks"]:
            expected = r["gpu"]["temporal_breakdown"]
            self.assertEqual(breakdown.loc[r["rank"]].to_dict(), expected)
            self.assertEqual(overlap.loc[r["rank"], "comm_comp_overlap_pct"], r["gpu"]["comm_comp_overlap_pct"])
        # HTA's own numbers for this trace (tests/golden/summary/hta_trace_filter.json, checked against HTA's
        # definitions by verify_summary.py): rank 0's idle time and overlap.
        self.assertEqual(breakdown.loc[0, "idle_us"], 321378)
        self.assertEqual(overlap.loc[0, "comm_comp_overlap_pct"], 11.8099)

    def test_breakdown_with_last_step(self):
        summary = json.loads(cli("summary", "--per-rank", "--include-last-step", "--format", "json", HTA_2RANK))
        got = self.gpu.breakdown(include_last_step=True)
        for r in summary["ranks"]:
            self.assertEqual(got.loc[r["rank"]].to_dict(), r["gpu"]["temporal_breakdown"])

    def test_counter_series_are_the_summarys(self):
        """HTA's queue length and memory bandwidth over time: one row per change, each series' count, maximum
        and mean those of the summary's entry, in time order, the CLI's --series JSON the same figures."""
        queues, bandwidth = self.gpu.queue_length_series(), self.gpu.memory_bandwidth_series()
        self.assertEqual(list(queues.columns), ["rank", "stream", "ts_us", "queue_length"])
        self.assertEqual(list(bandwidth.columns), ["rank", "kind", "ts_us", "memory_bw_gbps"])
        cli_json = json.loads(cli("summary", "--series", "--format", "json", HTA_2RANK))
        for r in self.gpu_summary["ranks"]:
            for q in r["queue_length"]:
                rows = queues[(queues["rank"] == r["rank"]) & (queues["stream"] == q["stream"])]
                self.assertEqual(len(rows), q["points"])
                self.assertEqual(rows["queue_length"].max(), q["max"])
                self.assertAlmostEqual(rows["queue_length"].mean(), q["mean"], places=3)
                self.assertTrue(rows["ts_us"].is_monotonic_increasing)
                self.assertGreaterEqual(rows["queue_length"].min(), 0)
            for k in r["memory_bandwidth"]:
                rows = bandwidth[(bandwidth["rank"] == r["rank"]) & (bandwidth["kind"] == k["kind"])]
                self.assertEqual(len(rows), k["changes"])
                self.assertAlmostEqual(rows["memory_bw_gbps"].max(), k["max_gbps"], places=3)
                self.assertAlmostEqual(rows["memory_bw_gbps"].iloc[-1], 0, places=3, msg="every copy ended")
            cli_rank = next(c for c in cli_json["ranks"] if c["rank"] == r["rank"])
            self.assertEqual([len(q["series"]) for q in cli_rank["queue_length"]],
                             [q["points"] for q in r["queue_length"]])
        self.assertEqual(set(queues["rank"]), {0, 1})
        self.assertEqual(set(self.gpu.queue_length_series(rank=1)["rank"]), {1})
        self.assertNotIn("series", json.dumps(self.gpu_summary), "no series unless asked for")
        self.assertEqual(len(self.example.queue_length_series()), 0, "no GPU: no rows, the columns kept")

    def test_cpu_only_job_has_no_breakdown(self):
        self.assertEqual(len(self.example.breakdown()), 0)

    def test_unknown_rank(self):
        with self.assertRaises(KeyError):
            self.example.slices(7)


class Diff(unittest.TestCase):
    def test_json_equals_cli(self):
        self.assertEqual(strata.diff(CLEAN, SLOW).to_json(), cli("diff", "--format", "json", CLEAN, SLOW))

    def test_all_ranks_json_equals_cli_and_names_rank_1(self):
        d = strata.diff(CLEAN, SLOW, all_ranks=True)
        self.assertEqual(d.to_json(), cli("diff", "--format", "json", "--all-ranks", CLEAN, SLOW))
        ranks = d.ranks.set_index("rank")
        self.assertEqual(list(ranks.index[ranks["differs"]]), [1])
        self.assertEqual(ranks.loc[1, "differs_in.measure"], "DistributedDataParallel.forward")
        self.assertEqual(ranks.loc[1, "differs_in.change_us"], 11377.0)

    def test_selection_options_equal_cli(self):
        d = strata.diff(CLEAN, SLOW, base_rank=[1], test_rank=[1], base_step=[5], test_step=[5], device="cpu")
        expected = cli("diff", "--format", "json", "--base-rank", "1", "--test-rank", "1", "--base-step", "5",
                       "--test-step", "5", "--device", "cpu", CLEAN, SLOW)
        self.assertEqual(d.to_json(), expected)
        names = d.names.set_index("name")
        self.assertEqual(names.loc["gloo:all_reduce", "base_count"], 2)

    def test_bad_selection_is_the_clis_error(self):
        expected = cli("diff", "--base-rank", "9", CLEAN, SLOW, ok=False)
        with self.assertRaises(strata.Error) as e:
            strata.diff(CLEAN, SLOW, base_rank=[9])
        self.assertEqual(str(e.exception), expected)


class Errors(unittest.TestCase):
    def assert_clis_error(self, path, *cli_args):
        expected = cli("diagnose", *cli_args, path, ok=False)
        with self.assertRaises(strata.Error) as e:
            strata.diagnose(path)
        self.assertEqual(str(e.exception), expected)
        self.assertIn(path, str(e.exception))
        return str(e.exception)

    def test_missing_path(self):
        self.assertIn("no such file", self.assert_clis_error("/nonexistent/strata/rank-0.json"))
        with self.assertRaises(strata.ResourceError) as e:
            strata.load("/nonexistent/strata/rank-0.json")
        self.assertEqual(e.exception.kind, "resource")
        self.assertIsNone(e.exception.file)

    def test_corrupt_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "rank-0.json")
            with open(bad, "w") as f:
                f.write('{"traceEvents": [ {"ph": "X", ')
            self.assertIn("invalid JSON", self.assert_clis_error(bad))
            with self.assertRaises(strata.BadInputError) as e:
                strata.load(bad)
            self.assertEqual((e.exception.kind, e.exception.file, e.exception.line), ("bad_input", bad, None))
            self.assertIn(f"invalid JSON at byte {e.exception.offset}:", str(e.exception))

    def test_error_kinds_are_subclasses_with_the_cli_exit_codes_kinds(self):
        with tempfile.TemporaryDirectory() as tmp:
            notes = os.path.join(tmp, "notes.json")
            with open(notes, "w") as f:
                f.write("hello: this is no trace\n")
            with self.assertRaises(strata.NotATraceError) as e:
                strata.load(notes)
            self.assertEqual((e.exception.kind, e.exception.file), ("not_a_trace", notes))
            ops = os.path.join(tmp, "ops.csv")
            with open(ops, "w") as f:
                f.write('rank,step,optype,start_ts,duration\n0,1,fwd,0,1\n0,1,"fwd,0,1\n')
            with self.assertRaises(strata.BadInputError) as e:
                strata.load(ops)
            self.assertEqual((e.exception.file, e.exception.line, e.exception.offset), (ops, 3, None))
        with self.assertRaises(strata.UsageError) as e:
            strata.load(EXAMPLE, op_map={"fwd": "no-such-type"})
        self.assertEqual(e.exception.kind, "usage")
        for name in ("BadInputError", "NotATraceError", "UnsupportedError", "ResourceError", "InternalError",
                     "UsageError"):
            self.assertTrue(issubclass(getattr(strata, name), strata.Error), name)

    def test_diff_missing_base(self):
        expected = cli("diff", "/nonexistent/base", SLOW, ok=False)
        with self.assertRaises(strata.Error) as e:
            strata.diff("/nonexistent/base", SLOW)
        self.assertEqual(str(e.exception), expected)
        self.assertTrue(str(e.exception).startswith("BASE /nonexistent/base: "))

    def test_error_is_an_exception_class(self):
        self.assertTrue(issubclass(strata.Error, Exception))


class GilReleased(unittest.TestCase):
    def test_other_threads_run_during_load_and_diagnosis(self):
        # The main thread counts while a worker loads, then diagnoses, a 2 MB op table: each one call into C++.
        # Holding the GIL, a call would stop the count for its whole duration (at most a tick at each end).
        spans = {}

        def work():
            t0 = time.perf_counter()
            native = strata._strata.load([OP_TABLE], 0, False)
            t1 = time.perf_counter()
            native.diagnose_json(strata.DEFAULT_MIN_EFFECT_PCT)
            spans.update(load=(t0, t1), diagnose=(t1, time.perf_counter()))

        ticks = []
        worker = threading.Thread(target=work)
        worker.start()
        while worker.is_alive():
            ticks.append(time.perf_counter())
            time.sleep(0.001)
        worker.join()
        for call, (start, end) in spans.items():
            during = sum(start < t < end for t in ticks)
            self.assertGreater(end - start, 0.02, call)
            self.assertGreaterEqual(during, 10, f"{call}: {during} ticks in {end - start:.3f} s")


if __name__ == "__main__":
    unittest.main()
