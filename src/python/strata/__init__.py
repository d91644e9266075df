"""strata in Python: which worker of a distributed training job is slow, which operation, why, and what
fixing it would save, from the same C++ library as the `strata` command (the compiled part is _strata).

    import strata
    job = strata.load(["traces/"])           # Kineto traces, op tables, `strata record` recordings
    job.slices(1); job.kernels(0); job.collectives(0); job.steps(0)   # per-rank pandas DataFrames
    job.breakdown(); job.overlap()           # HTA's temporal breakdown and comm/comp overlap, per rank
    job.queue_length_series(); job.memory_bandwidth_series()   # HTA's counters over time
    result = strata.diagnose(["traces/"])    # .status, .findings, .stragglers, .whatif, .to_json()
    change = strata.diff("base/", "test/")   # .names, .kinds, .ranks, .to_json()

Every result keeps the JSON the CLI writes (`to_json()` is `strata diagnose|diff --format json`, byte for
byte) and builds its DataFrames from it, so a frame never says something the CLI does not. Errors are
strata.Error with the CLI's message (the text it prints after "strata: "), raised as the subclass of its kind:
BadInputError (a malformed input), NotATraceError, UnsupportedError, ResourceError (I/O, memory), InternalError,
UsageError (a wrong keyword); each has .kind ("bad_input", ...) and .file, .offset (bytes) and .line where the
error was found (None where unknown). pandas is imported when a frame is
first asked for: loading, diagnosing and to_json() work without it.
"""
import json

from . import _strata
from ._strata import (BadInputError, Error, InternalError, NotATraceError, ResourceError, UnsupportedError,
                      UsageError)

__all__ = ["Error", "BadInputError", "NotATraceError", "UnsupportedError", "ResourceError", "InternalError",
           "UsageError", "Job", "Diagnosis", "Diff", "load", "diagnose", "diff", "__version__"]
__version__ = _strata.__version__
DEFAULT_MIN_EFFECT_PCT = _strata.DEFAULT_MIN_EFFECT_PCT


def _pandas():
    """pandas, imported on first use (the module's other results need no pandas); a missing pandas is an
    ImportError naming the package and the interpreter that lacks it."""
    try:
        import pandas
    except ImportError as e:
        import sys

        raise ImportError(f"strata's DataFrames need pandas, which this interpreter ({sys.executable}, Python "
                          f"{sys.version.split()[0]}) cannot import ({e}); install it for that interpreter "
                          "(Debian: apt install python3-pandas), or use .json / .to_json() / .render(), which "
                          "need no pandas") from e
    return pandas


def _paths(paths):
    """A path or a list of paths, as strings (str, os.PathLike)."""
    import os

    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fsdecode(p) for p in paths]


class Job:
    """One loaded job: its ranks, per-rank frames of its store and HTA's per-rank GPU metrics.

    Ranks are addressed by their global rank (`job.ranks`); each frame's times are nanoseconds on that
    rank's own clock, as recorded (diagnose aligns clocks itself)."""

    def __init__(self, native, paths):
        self._native = native
        self.paths = paths
        self._rank_rows = native.ranks()
        self._index = {row["rank"]: i for i, row in enumerate(self._rank_rows)}
        self._summaries = {}

    @property
    def ranks(self):
        """The global ranks, in the order the store holds them."""
        return [row["rank"] for row in self._rank_rows]

    @property
    def rank_info(self):
        """One row per rank: rank, world_size, rank_source, backend, path, format, events."""
        return _pandas().DataFrame(self._rank_rows)

    notes = property(lambda self: list(self._native.notes), doc="warnings the load gave (damaged blocks, ...)")
    files = property(lambda self: list(self._native.files), doc="every file the inputs named or held")
    unreadable = property(lambda self: list(self._native.unreadable), doc="(path, error) of files left out")

    def _frame(self, rank, columns_of):
        if rank is None:
            return {r: self._frame(r, columns_of) for r in self.ranks}
        if rank not in self._index:
            raise KeyError(f"rank {rank} is not in the job (ranks: {self.ranks})")
        return _pandas().DataFrame(columns_of(self._index[rank]))

    def slices(self, rank=None):
        """Every slice of `rank` (a DataFrame), or of every rank ({rank: DataFrame}) when rank is None."""
        return self._frame(rank, lambda i: self._native.slice_columns(i, _strata.SliceSet.ALL))

    def kernels(self, rank=None):
        """GPU events (args.stream and correlation) of `rank`, with HTA's kernel type by name."""
        return self._frame(rank, lambda i: self._native.slice_columns(i, _strata.SliceSet.KERNELS))

    def collectives(self, rank=None):
        """Collective calls of `rank` as diagnose finds them (GPU collective kernels, else CPU-side ops such as
        gloo:all_reduce, else the op table's): group, ordinal in its step, and whether every member of the
        group has the same call (`matched`)."""
        return self._frame(rank, self._native.collective_columns)

    def steps(self, rank=None):
        """Step windows of `rank`: ProfilerStep#N, the op table's steps, or the collectives' rhythm."""
        return self._frame(rank, self._native.step_columns)

    def summary(self, include_last_step=False, top_kernels=10, series=False):
        """`strata summary --format json [--series]` of the job, as a dict."""
        key = (include_last_step, top_kernels, series)
        if key not in self._summaries:
            self._summaries[key] = json.loads(self._native.summary_json(include_last_step, top_kernels, series))
        return self._summaries[key]

    def _series(self, rank, entry, label, value, include_last_step):
        rows = []
        for r in self.summary(include_last_step, series=True)["ranks"]:
            if rank is not None and r["rank"] != rank:
                continue
            for e in r.get(entry) or []:
                rows.extend({"rank": r["rank"], label: e[label], "ts_us": ts, value: v} for ts, v in e["series"])
        return _pandas().DataFrame(rows, columns=["rank", label, "ts_us", value])

    def queue_length_series(self, rank=None, include_last_step=False):
        """HTA's get_queue_length_time_series: per rank and GPU stream, the operations launched and not yet
        started after each change (ts_us: trace time in µs); one rank's rows with `rank`."""
        return self._series(rank, "queue_length", "stream", "queue_length", include_last_step)

    def memory_bandwidth_series(self, rank=None, include_last_step=False):
        """HTA's get_memory_bw_time_series: per rank and kind of memory copy (Memcpy HtoD, Memset, ...), the
        bandwidth in use in GB/s after each change (ts_us: trace time in µs); one rank's rows with `rank`."""
        return self._series(rank, "memory_bandwidth", "kind", "memory_bw_gbps", include_last_step)

    def _gpu_rows(self, include_last_step, row_of):
        rows = [dict(rank=r["rank"], **row_of(r["gpu"])) for r in self.summary(include_last_step)["ranks"]
                if r.get("gpu")]
        return _pandas().DataFrame(rows).set_index("rank") if rows else _pandas().DataFrame()

    def breakdown(self, include_last_step=False):
        """HTA's temporal breakdown per rank (get_temporal_breakdown): idle, compute and non-compute time of
        the GPU in µs and % of kernel time; ranks without GPU events are left out (empty frame: no GPU)."""
        return self._gpu_rows(include_last_step, lambda g: dict(g["temporal_breakdown"]))

    def overlap(self, include_last_step=False):
        """HTA's communication-computation overlap per rank (get_comm_comp_overlap), in %."""
        return self._gpu_rows(include_last_step, lambda g: {"comm_comp_overlap_pct": g["comm_comp_overlap_pct"]})

    def kernel_types(self, include_last_step=False):
        """GPU time per kernel type and rank (HTA's get_gpu_kernel_breakdown by type)."""
        rows = []
        for r in self.summary(include_last_step)["ranks"]:
            for kind, v in ((r.get("gpu") or {}).get("kernel_types") or {}).items():
                rows.append(dict(rank=r["rank"], kernel_type=kind, **v))
        return _pandas().DataFrame(rows)

    def diagnose(self, min_effect_pct=None):
        """The diagnosis of this job (as strata.diagnose on its paths, without loading again)."""
        pct = DEFAULT_MIN_EFFECT_PCT if min_effect_pct is None else float(min_effect_pct)
        return Diagnosis(self._native.diagnose_json(pct), self, pct)

    def __repr__(self):
        steps = len(self.steps(self.ranks[0])) if self.ranks else 0
        return (f"<strata.Job {len(self.ranks)} rank{'' if len(self.ranks) == 1 else 's'} ({_ranks_text(self.ranks)}), "
                f"{steps} step{'' if steps == 1 else 's'} on rank {self.ranks[0] if self.ranks else '-'}, "
                f"from {len(self.files)} file{'' if len(self.files) == 1 else 's'}>")


def _ranks_text(ranks):
    """"0-3" for contiguous ranks, else the first few and how many more."""
    if ranks and ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return f"{ranks[0]}-{ranks[-1]}" if len(ranks) > 1 else str(ranks[0])
    shown = ", ".join(str(r) for r in ranks[:4])
    return shown + (f", ... {len(ranks) - 4} more" if len(ranks) > 4 else "")


def load(paths, threads=0, skip_unreadable=False, *, rank_map=None, op_map=None, columns=None, time_unit_ns=None):
    """Loads one job (files and folders, as `strata diagnose PATHS`); strata.Error names what failed.

    The CLI's input options, as keywords: rank_map={"FILE": RANK} (--rank-map; FILE is a path or a base name),
    op_map={"fwd": "forward-compute"} (--op-map), columns={"rank": "worker", "start": "t0", ...} (--col-rank,
    --col-step, --col-op, --col-start, --col-duration, --col-dp-rank, --col-stage: keys rank, step, op, start,
    duration, dp_rank, stage), time_unit_ns=1e3 (--time-unit-ns), threads (--threads), skip_unreadable
    (--skip-unreadable)."""
    paths = _paths(paths)
    native = _strata.load(paths, threads, skip_unreadable, dict(rank_map or {}), dict(op_map or {}),
                          dict(columns or {}), None if time_unit_ns is None else float(time_unit_ns))
    return Job(native, paths)


class Diagnosis:
    """The result of a diagnosis: the strata.diagnosis/1 JSON (`.json`, `.to_json()`) and frames of it."""

    def __init__(self, text, job=None, min_effect_pct=DEFAULT_MIN_EFFECT_PCT):
        self._text = text
        self.json = json.loads(text)
        self._job, self._min_effect_pct = job, min_effect_pct

    status = property(lambda self: self.json["status"], doc="findings, healthy or inconclusive")
    status_reasons = property(lambda self: self.json["status_reasons"])

    def to_json(self):
        """The text `strata diagnose --format json` writes for the same inputs."""
        return self._text

    @property
    def findings(self):
        """One row per finding: cause, rank, op, layer, impact_pct, confidence, summary, evidence (a dict)."""
        return _pandas().DataFrame(self.json["findings"])

    @property
    def stragglers(self):
        """One row per straggler rank: score, late_ms_per_step, steps, persistent, evidence (a dict)."""
        return _pandas().DataFrame(self.json["stragglers"])

    @property
    def whatif(self):
        """The what-if replay: slowdown per rank, stage and op type (`by`, `key`, `slowdown`); the job's
        slowdown S and ideal step are in `.json["whatif"]`."""
        w = self.json.get("whatif") or {}
        rows = [dict(by=by[3:], key=key, slowdown=value) for by in ("by_rank", "by_stage", "by_op_type")
                for key, value in (w.get(by) or {}).items()]
        return _pandas().DataFrame(rows, columns=["by", "key", "slowdown"])

    def render(self, format="text", width=100):
        """The report `strata diagnose --format text|html` prints for the same job and options (text wrapped
        at `width` columns; html: the self-contained page)."""
        if self._job is None:
            raise Error("render: this diagnosis was made from JSON alone; strata.diagnose(...) keeps its job")
        return self._job._native.diagnose_report(self._min_effect_pct, format, int(width))

    def __repr__(self):
        findings = self.json["findings"]
        top = ""
        if findings:
            f = findings[0]
            rank = f" rank {f['rank']}" if f.get("rank") is not None else ""
            impact = f", {f['impact_pct']:g} % of step time" if f.get("impact_pct") is not None else ""
            top = f": {f['cause']}{rank}{impact}"
            if len(findings) > 1:
                top += f" (+{len(findings) - 1} more finding{'' if len(findings) == 2 else 's'})"
        elif self.json.get("status_reasons"):
            top = f": {self.json['status_reasons'][0]}"
        return f"<strata.Diagnosis {self.status}{top}>"


def diagnose(paths, min_effect_pct=None, threads=0, skip_unreadable=False, **load_options):
    """`strata diagnose PATHS`: loads the job and diagnoses it (see Diagnosis); load_options are strata.load's
    keywords (rank_map, op_map, columns, time_unit_ns)."""
    return load(paths, threads, skip_unreadable, **load_options).diagnose(min_effect_pct)


class Diff:
    """What changed between two runs (strata.diff/1): `.names`, `.kinds`, `.ranks` frames, `.to_json()`."""

    def __init__(self, text):
        self._text = text
        self.json = json.loads(text)

    def to_json(self):
        """The text `strata diff --format json` writes for the same runs and options."""
        return self._text

    names = property(lambda self: _pandas().DataFrame(self.json["names"]), doc="every op/kernel name compared")

    def __repr__(self):
        n = len(self.json.get("names", []))
        return f"<strata.Diff {self.json.get('base', {}).get('path', 'BASE')} -> " \
               f"{self.json.get('test', {}).get('path', 'TEST')}: {n} name{'' if n == 1 else 's'} compared>"
    kinds = property(lambda self: _pandas().DataFrame(self.json["kinds"]), doc="the change by kind")
    ranks = property(lambda self: _pandas().json_normalize(self.json.get("ranks", [])),
                     doc="each rank's change (with --all-ranks); differs_in.* says in what a rank differs")


def diff(base, test, base_rank=(), test_rank=(), base_step=(), test_step=(), all_ranks=False, all_steps=False,
         device="all", threads=0):
    """`strata diff BASE TEST` with the same options (ranks and steps as lists of numbers)."""
    base, test = _paths(base)[0], _paths(test)[0]
    return Diff(_strata.diff_json(base, test, list(base_rank), list(test_rank), list(base_step), list(test_step),
                                  all_ranks, all_steps, device, threads))
