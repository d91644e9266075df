"""The corpus of the invariant suite: the inputs strata is run on, the runs, and the pairs of runs a
metamorphic relation compares.

A Source is one job's input as strata reads it (a folder of per-rank traces, an op table, a recording): its
paths, its kind (kineto, legacy, op_table, recording), the options strata needs to read it, the shell lines
that recreate it (`recipe`, for reproducing commands) and, for generated ones, how to make it. A Run is one
strata invocation on a source (subcommand, format, options). A Pair names a relation and the two runs it
compares, with the relation's context (the rank permutation, the shifted rank, the threshold ...).

Sources come from `strata synth` (specs below), from ../shared/datasets, examples/ and tests/data/ddp, and
from transforming other sources (transforms.py). The Corpus only records them; run.py makes them in
dependency order and runs strata.

Invariants: a key names one source or run (same key, same thing); a derived source lists what it is derived
from in `deps`, and its recipe is complete given theirs; `recipe_for` returns every line needed, deps first.
"""
import hashlib
import os
import shlex
from dataclasses import dataclass, field

import transforms

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSFORMS = os.path.join(HERE, "transforms.py")


@dataclass
class Source:
    key: str
    paths: list
    kind: str
    options: list = field(default_factory=list)
    recipe: list = field(default_factory=list)
    make: object = None
    deps: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)


@dataclass
class Run:
    source: str
    sub: str
    fmt: str
    options: tuple = ()
    other: str = None  # diff: the TEST source

    @property
    def key(self):
        text = "|".join([self.source, self.sub, self.fmt, " ".join(self.options), self.other or ""])
        return f"{self.source}.{self.sub}.{hashlib.sha1(text.encode()).hexdigest()[:10]}.{self.fmt}"


@dataclass
class Pair:
    relation: str
    a: str  # run keys
    b: str
    context: dict = field(default_factory=dict)


@dataclass
class SynthSpec:
    ranks: int
    dp: int = 0
    pp: int = 1
    tp: int = 1
    steps: int = 4
    layers: int = 2
    fault: str = "none"
    magnitude: float = 0.3
    fault_rank: int = None
    fault_steps: tuple = ()
    every: int = 0
    seed: int = 1
    counters: bool = False
    gzip: bool = False

    def args(self):
        a = ["--ranks", self.ranks, "--pp", self.pp, "--tp", self.tp, "--steps", self.steps, "--layers",
             self.layers, "--fault", self.fault, "--seed", self.seed, "--no-progress"]
        if self.fault != "none":
            a += ["--magnitude", self.magnitude]
        if self.fault_rank is not None:
            a += ["--fault-rank", self.fault_rank]
        if self.fault_steps:
            a += ["--fault-steps", ",".join(map(str, self.fault_steps))]
        if self.every:
            a += ["--every", self.every]
        a += ["--counters"] * self.counters + ["--gzip"] * self.gzip
        return [str(x) for x in a]

    def name(self):
        parts = [f"r{self.ranks}", f"p{self.pp}", f"t{self.tp}", f"s{self.steps}", f"l{self.layers}", self.fault]
        if self.fault != "none":
            parts += [f"m{self.magnitude:g}", f"at{self.fault_rank}"]
        parts += [f"seed{self.seed}"]
        parts += [f"fs{'-'.join(map(str, self.fault_steps))}"] * bool(self.fault_steps)
        parts += [f"e{self.every}"] * bool(self.every) + ["c"] * self.counters + ["gz"] * self.gzip
        return "synth-" + "-".join(parts)


def sh(argv):
    return " ".join(shlex.quote(str(x)) for x in argv)


class Corpus:
    """Sources, runs and pairs of one suite run; `work` is where generated inputs go."""

    def __init__(self, work, strata):
        self.work, self.strata = work, strata
        self.sources, self.runs, self.pairs = {}, {}, []

    # ---- sources --------------------------------------------------------------------------------------
    def add(self, source):
        self.sources.setdefault(source.key, source)
        return self.sources[source.key]

    def existing(self, key, paths, kind, options=(), **meta):
        """A source that is already on disk (a dataset, an example)."""
        return self.add(Source(key, [os.path.abspath(p) for p in paths], kind, list(options), meta=meta))

    def synth(self, spec, **meta):
        """A `strata synth` job (made when the corpus is prepared)."""
        out = os.path.join(self.work, "inputs", spec.name())
        argv = [self.strata, "synth", "-o", out, *spec.args()]
        return self.add(Source(spec.name(), [out], "kineto", recipe=[sh(argv)], make=("run", argv),
                               meta={"spec": spec, "ranks": spec.ranks, "truth": os.path.join(out, "truth.json"),
                                     **meta}))

    def derived(self, base, suffix, what, args, kind=None, single_file=None, options=None, **meta):
        """A source made from `base` by `transforms.py WHAT base DST ARGS...` (DST a folder, or a file named
        `single_file`)."""
        src = base.paths[0]
        dst = os.path.join(self.work, "inputs", f"{base.key}~{suffix}")
        if single_file:
            dst = os.path.join(dst, single_file)
        argv = ["/usr/bin/python3", TRANSFORMS, what, src, dst, *args]
        merged = {**base.meta, **meta}
        return self.add(Source(f"{base.key}~{suffix}", [dst if single_file else os.path.dirname(dst + "/")],
                               kind or base.kind, list(base.options if options is None else options),
                               recipe=[sh(argv)], make=("transform", argv[2:]), deps=[base.key], meta=merged))

    def recipe_for(self, key, seen=None):
        """Every shell line that recreates source `key`, the sources it is derived from first."""
        seen = set() if seen is None else seen
        if key in seen:
            return []
        seen.add(key)
        s = self.sources[key]
        lines = []
        for d in s.deps:
            lines += self.recipe_for(d, seen)
        return lines + s.recipe

    def make(self, key):
        """Creates source `key` (its deps must exist). Returns an error text or ""."""
        s = self.sources[key]
        if s.make is None:
            return ""
        how, argv = s.make
        if how == "transform":
            try:
                transforms.main([str(a) for a in argv])
            except SystemExit as e:
                return str(e) if e.code not in (0, None) else ""
            return ""
        import subprocess
        r = subprocess.run(argv, capture_output=True, text=True)
        return "" if r.returncode == 0 else f"exit {r.returncode}: {r.stderr[-400:]}"

    # ---- runs -----------------------------------------------------------------------------------------
    def run(self, source, sub="diagnose", fmt="json", options=(), other=None):
        r = Run(source.key, sub, fmt, tuple(options), other.key if other else None)
        self.runs.setdefault(r.key, r)
        return self.runs[r.key]

    def argv(self, run):
        s = self.sources[run.source]
        tail = list(s.paths)
        if run.other:
            tail += self.sources[run.other].paths
        return [self.strata, run.sub, "--format", run.fmt, *s.options, *run.options, *tail]

    def pair(self, relation, a, b, **context):
        self.pairs.append(Pair(relation, a.key, b.key, context))

    def repro(self, run_keys):
        """Shell lines reproducing the given runs: the recipes of their sources, then the strata commands."""
        lines, seen = [], set()
        for k in run_keys:
            r = self.runs[k]
            for src in filter(None, (r.source, r.other)):
                lines += [x for x in self.recipe_for(src, seen) if x not in lines]
        return lines + [sh(self.argv(self.runs[k])) for k in run_keys]
