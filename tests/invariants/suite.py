"""What the invariant suite runs, in its two modes (docs/invariants.md):

  fast  a fixed, small corpus (at most 64 ranks, 3-4 steps) that runs in seconds on 2 cores: every fault kind
        of `strata synth` once, each relation on a few jobs, the public op table ST, HTA's 2-rank trace set,
        the recorded DDP jobs of tests/data and examples/; the ctest `invariants_fast`.
  full  the sweep, a benchmark: synth layouts from 2 to 1,024 ranks, every fault kind, magnitudes 0.05-1 and
        several seeds; every trace set of ../shared/datasets that `strata diagnose` or `strata summary` reads
        (Kineto folders and files, the three op tables with their options); every relation where it applies.

`build(corpus, mode, source_dir, shared_dir)` fills a corpus.Corpus. Every diagnose run gets the per-output
rules (rules.py); a run given `text=True` also has its text report checked.

Invariants: the fast corpus is the same on every run (no randomness without a fixed seed); every synth job
names its fault rank, so that a job derived from it (more steps, one more replica, a larger magnitude) keeps
the fault where it was.
"""
import glob
import os
from dataclasses import replace

from corpus import SynthSpec
from relations import RELATIONS, replica_perm

FAULTS = ["slow_compute", "thermal_throttling", "slow_communication", "network_contention", "pcie_pressure",
          "launch_overhead", "dataloader_stall", "gc_pause", "stage_imbalance", "data_imbalance"]
COUNTER_FAULTS = {"thermal_throttling", "network_contention", "pcie_pressure"}
RANKLESS_FAULTS = {"stage_imbalance", "data_imbalance", "none"}
SHIFT_SECONDS = 7.0


def diagnose(c, src, text=True, min_effect=True):
    """The base runs of a source: JSON (+ text), and the --min-effect filter pairs."""
    c.run(src)
    if text:
        c.run(src, fmt="text")
    if min_effect:
        RELATIONS["min_effect_filter"].plan(c, src)


def fault_rank(ranks, seed):
    """A fault rank inside the job, not rank 0, moved around the job by the seed."""
    return (seed * 7 + 3 + (ranks // 3)) % ranks or 1


def spec(ranks, pp, tp, fault, magnitude=0.3, seed=1, steps=4, layers=2, gzip=False, **kw):
    """A synth job of the corpus (None for a stage imbalance without stages or a data imbalance without data
    parallelism, which synth refuses); at least one layer per stage."""
    if (fault == "stage_imbalance" and pp == 1) or (fault == "data_imbalance" and ranks // (pp * tp) < 2):
        return None
    rank = None if fault in RANKLESS_FAULTS else fault_rank(ranks, seed)
    return SynthSpec(ranks=ranks, pp=pp, tp=tp, steps=steps, layers=max(layers, pp), fault=fault,
                     magnitude=magnitude, fault_rank=rank, seed=seed, counters=fault in COUNTER_FAULTS, gzip=gzip,
                     **kw)


def synth_relations(c, s, rel_seed, shift=True, relabel=True):
    """The relations that take a synth job as it is: relabelled replicas, a shifted clock, a clean rank left
    out."""
    src = c.synth(s)
    layout = (s.ranks // (s.pp * s.tp), s.pp, s.tp)
    if relabel and layout[0] > 1:
        RELATIONS["relabel_ranks"].plan(c, src, replica_perm(layout, rel_seed), summary=s.ranks <= 8)
    if shift:
        rank = s.fault_rank if s.fault_rank is not None else s.ranks - 1
        RELATIONS["shift_rank_clock"].plan(c, src, rank, SHIFT_SECONDS)
    if s.fault_rank is not None and s.ranks > 2:
        RELATIONS["drop_clean_rank"].plan(c, src, 0 if s.fault_rank != 0 else s.ranks - 1)
    return src


def beside_cases(c, src, kind):
    """Inputs one step beside a source, diagnosed for the rules: a rank's clock drifting (30 %: the timelines
    cannot line up, the status must say so), unknown top-level members in each trace and, for op tables, an
    op type renamed without --op-map (the what-if misses its time: inconclusive, findings still listed)."""
    if kind == "op_table":
        nomap = c.derived(src, "nomap", "rename-ops", ["--map", "forward-compute=fwd"], single_file="table.csv.gz")
        diagnose(c, nomap, min_effect=False)
    else:
        if kind == "kineto":
            RELATIONS["unknown_members"].plan(c, src)
        for ppm in (20000, 300000):
            diagnose(c, c.derived(src, f"drift{ppm}", "drift", ["--rank", "0", "--ppm", str(ppm)]), min_effect=False)


# ---- the public and recorded inputs -----------------------------------------------------------------------

def op_table(c, shared, name):
    path = os.path.join(shared, "datasets", "straggler-whatif", f"trace-{name}.csv.gz")
    if not os.path.exists(path):
        return None
    return c.existing(f"optable-{name}", [path], "op_table", rank_at=rank_layout(path))


def rank_layout(path):
    """{(dp_rank, stage): rank} of an op table (as strings, as the table writes them)."""
    import transforms
    header, rows = transforms.read_table(path)
    cd, cs, cr = (header.index(n) for n in ("dp_rank", "stage", "rank"))
    out = {}
    for r in rows:
        out.setdefault((int(r[cd]), int(r[cs])), int(r[cr]))
    return out


def op_table_relations(c, src):
    diagnose(c, src)
    beside_cases(c, src, "op_table")
    dps = sorted({d for d, _ in src.meta["rank_at"]})
    perm = {d: dps[(i + 1) % len(dps)] for i, d in enumerate(dps)}
    RELATIONS["relabel_ranks"].plan(c, src, perm)
    for name in ("op_map_rename", "column_rename", "time_unit", "split_vs_merged"):
        RELATIONS[name].plan(c, src)


def recorded_ddp(c, source_dir, full):
    """tests/data/ddp and examples/: PyTorch 1.x traces (rank from the file name) and a recording."""
    cases = sorted(glob.glob(os.path.join(source_dir, "tests", "data", "ddp", "*", "")))
    cases.append(os.path.join(source_dir, "examples", "ddp-2rank-slow-compute", ""))
    for i, d in enumerate(cases):
        name = os.path.basename(os.path.dirname(d))
        src = c.existing(f"ddp-{name}", [d], "legacy")
        diagnose(c, src)
        ranks = len(glob.glob(os.path.join(d, "rank-*.json*")))
        if full or name in ("slow-compute-rank1", "clean-4rank"):
            perm = {r: (r + 1) % ranks for r in range(ranks)}
            RELATIONS["relabel_ranks"].plan(c, src, perm, summary=True)
            RELATIONS["shift_rank_clock"].plan(c, src, ranks - 1, SHIFT_SECONDS)
        if full or name == "slow-compute-rank1":
            RELATIONS["gzip_invariance"].plan(c, src)
            beside_cases(c, src, "legacy")
    rec = os.path.join(source_dir, "examples", "recorded-2rank-cpu-contention", "record.sseg")
    if os.path.exists(rec):
        diagnose(c, c.existing("recorded-2rank-cpu-contention", [rec], "recording"))


def hta_sets(c, shared, full):
    """HTA's traces: the 2-rank set (relabelled, shifted, summarised) and, in full mode, every single-rank
    trace (diagnose must say inconclusive without leading with a saving; summary must add up) and the diff
    pairs both ways."""
    hta = os.path.join(shared, "datasets", "hta")
    if not os.path.isdir(hta):
        return
    tf = c.existing("hta-trace_filter", [os.path.join(hta, "trace_filter")], "kineto")
    diagnose(c, tf)
    RELATIONS["unknown_members"].plan(c, tf)
    c.run(tf, "summary")
    RELATIONS["relabel_ranks"].plan(c, tf, {0: 1, 1: 0}, summary=True)
    RELATIONS["shift_rank_clock"].plan(c, tf, 1, SHIFT_SECONDS)
    singles = sorted(glob.glob(os.path.join(hta, "**", "*.json.gz"), recursive=True))
    singles = [p for p in singles if "/trace_filter/" not in p]
    if not full:
        singles = [p for p in singles if "/cpu_only/" in p]
    for p in singles:
        key = "hta-" + os.path.relpath(p, hta).replace("/", "_").replace(".json.gz", "")
        s = c.existing(key, [p], "kineto")
        diagnose(c, s, min_effect=full)
        c.run(s, "summary")
    pairs = [("trace_compare/base", "trace_compare/test"), ("trace_diff/control", "trace_diff/test")]
    for base, test in pairs if full else pairs[:1]:
        a = c.existing("hta-" + base.replace("/", "_"), [os.path.join(hta, base)], "kineto")
        b = c.existing("hta-" + test.replace("/", "_"), [os.path.join(hta, test)], "kineto")
        RELATIONS["diff_antisymmetry"].plan(c, a, b)
        c.run(a, "diff", other=a)


def nsys_exports(c, shared, full):
    """The Nsight Systems SQLite exports (issue 48): each diagnosed and summarised (the 2-GPU files hold two
    ranks in one file); in full mode the before/after pair diffed both ways."""
    nsys = os.path.join(shared, "datasets", "nsys")
    if not os.path.isdir(nsys):
        return
    names = ["mfu_2gpu_before", "mfu_2gpu_after", "mock"] if full else ["mfu_2gpu_before"]
    made = {}
    for name in names:
        made[name] = c.existing("nsys-" + name, [os.path.join(nsys, name + ".sqlite")], "nsys")
        diagnose(c, made[name], min_effect=full)
        c.run(made[name], "summary")
    if full:
        RELATIONS["diff_antisymmetry"].plan(c, made["mfu_2gpu_before"], made["mfu_2gpu_after"])


# ---- the two modes ---------------------------------------------------------------------------------------

def build_fast(c, source_dir, shared):
    base = [spec(4, 1, 1, "slow_compute"), spec(8, 2, 2, "stage_imbalance"), spec(8, 1, 2, "slow_communication"),
            spec(16, 2, 2, "launch_overhead"), spec(8, 1, 1, "dataloader_stall"), spec(8, 2, 1, "gc_pause"),
            spec(8, 1, 1, "data_imbalance"), spec(8, 1, 2, "thermal_throttling"),
            spec(8, 1, 2, "network_contention"), spec(8, 2, 1, "pcie_pressure"), spec(8, 1, 1, "none"),
            spec(64, 2, 2, "slow_compute", steps=3, layers=2), spec(6, 1, 1, "slow_compute", every=2)]
    for i, s in enumerate(base):
        src = c.synth(s)
        diagnose(c, src)
        if i in (0, 2, 3, 5):
            synth_relations(c, s, rel_seed=i)
    beside_cases(c, c.synth(base[0]), "kineto")
    RELATIONS["more_clean_steps"].plan(c, base[0])
    RELATIONS["more_clean_steps"].plan(c, base[5])
    RELATIONS["extra_clean_rank"].plan(c, base[0])
    RELATIONS["extra_clean_rank"].plan(c, base[2])
    RELATIONS["larger_fault"].plan(c, base[0], [0.1, 0.3, 0.6])
    RELATIONS["larger_fault"].plan(c, base[1], [0.1, 0.3])
    RELATIONS["threads_invariance"].plan(c, c.synth(base[11]))
    c.run(c.synth(base[0]), "summary")
    one_step_jobs(c, ["slow_compute", "dataloader_stall", "none"], [(8, 1, 8)], ladders=False)
    st = op_table(c, shared, "ST")
    if st:
        op_table_relations(c, st)
    hta_sets(c, shared, full=False)
    nsys_exports(c, shared, full=False)
    recorded_ddp(c, source_dir, full=False)


FULL_LAYOUTS = [(2, 1, 1), (4, 1, 1), (8, 2, 2), (8, 1, 2), (16, 4, 1), (16, 2, 2), (32, 2, 2), (64, 2, 2)]
LARGE_LAYOUTS = [(128, 4, 1), (256, 2, 2), (512, 2, 2), (1024, 1, 1), (1024, 2, 2)]
MAGNITUDES = [0.05, 0.1, 0.2, 0.4, 0.7, 1.0]
SEEDS = [1, 2, 3]
INTERMITTENT = [("slow_compute", 2), ("slow_compute", 3), ("gc_pause", 2), ("dataloader_stall", 3)]


def build_full(c, source_dir, shared):
    for ranks, pp, tp in FULL_LAYOUTS:
        for fault in FAULTS + ["none"]:
            for seed in SEEDS:
                full_sweep_job(c, ranks, pp, tp, fault, seed)
    for ranks, pp, tp in FULL_LAYOUTS:
        beside_cases(c, c.synth(spec(ranks, pp, tp, "slow_compute", gzip=True)), "kineto")
        for fault, every in INTERMITTENT:
            s = spec(ranks, pp, tp, fault, steps=6, every=every, gzip=True)
            diagnose(c, c.synth(s))
            RELATIONS["larger_fault"].plan(c, s, [0.1, 0.3, 0.7])
    for ranks, pp, tp in LARGE_LAYOUTS:
        for fault in FAULTS + ["none"]:
            s = spec(ranks, pp, tp, fault, steps=3, layers=pp, gzip=True)
            if s:
                diagnose(c, c.synth(s), text=True, min_effect=ranks <= 256)
        RELATIONS["threads_invariance"].plan(c, c.synth(spec(ranks, pp, tp, "slow_compute", steps=3, layers=pp,
                                                             gzip=True)))
    one_step_jobs(c, FAULTS + ["none"], ONE_STEP_LAYOUTS)
    for name in ("ST", "AR", "SE"):
        t = op_table(c, shared, name)
        if t:
            op_table_relations(c, t)
            RELATIONS["threads_invariance"].plan(c, t)
    hta_sets(c, shared, full=True)
    nsys_exports(c, shared, full=True)
    recorded_ddp(c, source_dir, full=True)


ONE_STEP_LAYOUTS = [(4, 1, 4), (8, 1, 8), (16, 1, 16)]


def one_step_jobs(c, faults, layouts, ladders=True):
    """Jobs of one step and many collectives (16 layers of tensor parallelism: 64 all_reduces), compared over
    their collectives (docs/usage.md, "One step, many collectives"): the rules, a shifted clock, and the
    magnitude ladder."""
    for ranks, pp, tp in layouts:
        for fault in faults:
            s = spec(ranks, pp, tp, fault, steps=1, layers=16)
            if s is None:
                continue
            diagnose(c, c.synth(s))
            synth_relations(c, s, rel_seed=ranks, relabel=False)
            if ladders and fault != "none":
                RELATIONS["larger_fault"].plan(c, s, [0.1, 0.3, 0.7])


def full_sweep_job(c, ranks, pp, tp, fault, seed):
    """One (layout, fault, seed) of the sweep: the magnitude ladder, and on the middle magnitude the runs
    with text, the filter pairs and the relations."""
    ladder = [m for m in (MAGNITUDES if fault != "none" else [0.3])]
    specs = [spec(ranks, pp, tp, fault, magnitude=m, seed=seed, gzip=True) for m in ladder]
    if specs[0] is None:
        return
    for s in specs:
        c.run(c.synth(s))
    if fault != "none":
        RELATIONS["larger_fault"].plan(c, specs[0], ladder)
    mid = replace(specs[0], magnitude=0.3 if fault != "none" else specs[0].magnitude)
    diagnose(c, c.synth(mid))
    if seed == SEEDS[0]:
        synth_relations(c, mid, rel_seed=ranks + seed, relabel=ranks <= 64, shift=True)
        if fault != "none":
            RELATIONS["more_clean_steps"].plan(c, mid)
            RELATIONS["extra_clean_rank"].plan(c, mid)


def build(c, mode, source_dir, shared):
    (build_fast if mode == "fast" else build_full)(c, source_dir, shared)
