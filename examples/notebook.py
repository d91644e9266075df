#!/usr/bin/env python3
"""The README's one-minute tour in Python (`import strata`), cell by cell (`# %%`: Jupyter, VS Code and
jupytext open it as a notebook). Run from the repository's root after the quick start:

    PYTHONPATH=build/python python3 examples/notebook.py     # or after `cmake --install`: python3 examples/notebook.py

It prints the lines the tour's commands print (the verdicts, rank 1's change in the diff), and the frames
behind them. The HTML page and the pprof export are the CLI's (`strata diagnose --format html`,
`strata export --format pprof`). tests/python/test_notebook.py runs it and checks those lines against the
README's.
"""
# %% The module
import pandas as pd

import strata

pd.set_option("display.width", 120)
pd.set_option("display.max_columns", 12)
TRACES = "examples/ddp-2rank-slow-compute"  # a 2-rank DDP job, rank 1 doing extra compute each step
RECORDING = "examples/recorded-2rank-cpu-contention"  # what `strata record` wrote for a job with a CPU hog


def verdict(result):
    """The text report's verdict line, from the top finding of the JSON."""
    top = result.json["findings"][0]
    op = f" ({top['op']})" if top.get("op") else ""
    return f"verdict: {top['cause']}: rank {top['rank']}{op} costs {top['impact_pct']:.1f}% of step time"


# %% Traces of a 2-rank DDP job: who, what, why (strata diagnose)
result = strata.diagnose(TRACES)
print(verdict(result))
print(result.stragglers[["rank", "score", "late_ms_per_step", "persistent"]])
print(result.findings[["cause", "rank", "op", "layer", "impact_pct", "confidence"]])
print(result.whatif)

# %% The job behind it: rank 1's extra op, step by step, from the trace's slices
job = strata.load(TRACES)
slices = job.slices(1)
extra = slices[slices["name"] == "injected_extra_compute"]
print((extra.groupby("step")["dur_ns"].sum() / 1e6).rename("injected_extra_compute ms").to_frame())
print(job.steps(1).assign(ms=lambda s: s["dur_ns"] / 1e6)[["step", "ms"]])

# %% Two runs compared (strata diff --all-ranks)
change = strata.diff("tests/data/ddp/clean-2rank", "tests/data/ddp/slow-compute-rank1", all_ranks=True)
for row in change.json["ranks"]:
    if row["differs"]:
        d = row["differs_in"]
        print(f"rank {row['rank']}: {row['base_step_time_us'] / 1e3:.1f} ms -> {row['test_step_time_us'] / 1e3:.1f} ms"
              f"  {d['measure']}  +{d['change_us'] / 1e3:.1f} ms  (other rank +{d['ranks_median_change_us']:.2f} µs)")
print(change.names.head(5)[["name", "base_total_us", "test_total_us", "diff_total_us"]])

# %% What `strata record` wrote, and the recording alone diagnosed (strata inspect, strata diagnose)
recorded = strata.load(RECORDING)
print(recorded.rank_info[["rank", "rank_source", "format", "events"]])
print(verdict(strata.diagnose(RECORDING)))
