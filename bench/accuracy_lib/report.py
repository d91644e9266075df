"""The figures of a bench/accuracy run as issue 47 asks them (items 1 and 6), computed from the per-case records
alone (bench/accuracy_lib/results.py) so that bench/accuracy and bench/accuracy_lib/recompute.py print the same
block from the same function:

- lab faulted jobs alone: judged, passed among the judged, not judged (share of the faulted jobs), and the
  set-aside (noisy) cases' verdicts beside them;
- lab clean jobs alone: false alarms among the judged, by case name;
- the share right over all lab cases (judged and set aside, faulted and clean);
- top-1 rank with its chance floor; per cause, precision, recall and F1 of the named cause over all lab cases;
- synth cases apart (a self-consistency check, not accuracy on real jobs);
- the faulted-alone gate at the published bars (scoring.gate(), bench/accuracy's exit status since 2026-12-03,
  gates the faulted jobs alone too; a reduced run tests their pass share for a regression instead of the bar).

Conventions (stated in the block too): an error (no diagnosis) counts as a judged case that did not pass, as
scoring.gate() counts it; a case's cause is right when it is one of the truth's accepted causes
(scoring.accepted: gc_pause may be host_stall without a recording); a clean job that names a cause is a false
positive for that cause even where scoring.judge accepts it (a rank the machine slowed, MACHINE_CAUSES), since
no fault of that cause was injected; a faulted job that names another cause is a false negative for the truth's
cause and a false positive for the named one (one that names none: a false negative only).
"""
from collections import Counter

from accuracy_lib import scoring
from accuracy_lib.scoring import chance_top1

JUDGED = ("pass", "fail", "error")  # not set aside; an error is a judged miss, as in scoring.gate()


def share(a, b):
    return a / b if b else None


def _top1(cases):
    """(right, cases, chance floor) of the top-1 rank over the cases with a diagnosis and a single-rank truth."""
    rows = [c for c in cases if c["truth_ranks"] and c["status"] != "error"]
    right = sum(c["rank"] in c["truth_ranks"] for c in rows)
    floors = [chance_top1({"ranks": c["truth_ranks"]}, c["world"]) or 0.0 for c in rows]
    return {"right": right, "cases": len(rows), "share": share(right, len(rows)),
            "chance": share(sum(floors), len(floors))}


def _prf(tp, fp, fn):
    p, r = share(tp, tp + fp), share(tp, tp + fn)
    f1 = None if p is None or r is None else (2 * p * r / (p + r) if p + r else 0.0)
    return {"tp": tp, "fp": fp, "fn": fn, "truth": tp + fn, "named": tp + fp, "precision": p, "recall": r, "f1": f1}


def per_cause(lab):
    """{cause: tp, fp, fn, truth, named, precision, recall, f1} of the named cause over the lab cases, and the
    micro average over all causes under "all" (None where a share has no cases)."""
    tp, fp, fn = Counter(), Counter(), Counter()
    for c in lab:
        truth, named = c["expected_cause"], c["cause"] or "none"
        if truth != "none" and named in c["accepted_causes"]:
            tp[truth] += 1
            continue
        if truth != "none":
            fn[truth] += 1
        if named != "none":
            fp[named] += 1
    out = {k: _prf(tp[k], fp[k], fn[k]) for k in sorted(set(tp) | set(fp) | set(fn))}
    out["all"] = _prf(sum(tp.values()), sum(fp.values()), sum(fn.values()))
    return out


def figures(cases, thresholds=None):
    """Every figure of the block, as a dict of numbers and case names, from the case records. thresholds: the
    GATE_* values for the faulted-alone gate (a results file's own; default scoring.py's)."""
    lab = [c for c in cases if c["counted"] and c["source"] == "lab"]
    synth = [c for c in cases if c["counted"] and c["source"] == "synth"]
    faulted = [c for c in lab if c["expected_cause"] != "none"]
    clean = [c for c in lab if c["expected_cause"] == "none"]
    f_judged = [c for c in faulted if c["status"] in JUDGED]
    f_aside = [c for c in faulted if c["status"] == "noisy"]
    c_judged = [c for c in clean if c["status"] in JUDGED]
    passed = sum(c["status"] == "pass" for c in f_judged)
    right = [c for c in lab if c["verdict"] == "right"]
    fig = {
        "faulted": {
            "cases": len(faulted), "judged": len(f_judged), "passed": passed,
            "pass_share": share(passed, len(f_judged)),
            "errors": sum(c["status"] == "error" for c in f_judged),
            "not_judged": len(f_aside), "not_judged_share": share(len(f_aside), len(faulted)),
            "set_aside_right": sum(c["verdict"] == "right" for c in f_aside),
            "set_aside_wrong": sum(c["verdict"] == "wrong" for c in f_aside),
        },
        "clean": {
            "cases": len(clean), "judged": len(c_judged),
            "false_alarms": sorted(c["case"] for c in c_judged if c["status"] == "fail"),
            "errors": sorted(c["case"] for c in c_judged if c["status"] == "error"),
            "not_judged": len(clean) - len(c_judged),
        },
        "all": {"cases": len(lab), "right": len(right), "right_share": share(len(right), len(lab)),
                "judged_right": sum(c["status"] in JUDGED for c in right),
                "judged": sum(c["status"] in JUDGED for c in lab),
                "set_aside_right": sum(c["status"] == "noisy" for c in right),
                "set_aside": sum(c["status"] == "noisy" for c in lab)},
        "top1": {"judged": _top1(f_judged), "faulted": _top1(faulted)},
        "per_cause": per_cause(lab),
        "synth": {"cases": len(synth), "right": sum(c["verdict"] == "right" for c in synth),
                  "wrong": sorted(c["case"] for c in synth if c["verdict"] != "right")},
    }
    fig["faulted_gate"] = faulted_gate(fig["faulted"], thresholds)
    return fig


def faulted_gate(f, thresholds=None):
    """The faulted-alone gate at the published bars (the exit status of a held-out or full run; a reduced run
    tests its pass share for a regression instead): at least GATE_MIN_LAB_PASS_SHARE of the judged passed, at
    most GATE_MAX_LAB_NOISY_SHARE of the faulted jobs not judged."""
    th = thresholds or {}
    min_pass = th.get("GATE_MIN_LAB_PASS_SHARE", scoring.GATE_MIN_LAB_PASS_SHARE)
    max_noisy = th.get("GATE_MAX_LAB_NOISY_SHARE", scoring.GATE_MAX_LAB_NOISY_SHARE)
    pass_ok = f["judged"] > 0 and f["passed"] >= min_pass * f["judged"]
    noisy_ok = f["not_judged"] <= max_noisy * f["cases"]
    return {"min_pass_share": min_pass, "max_not_judged_share": max_noisy, "pass_ok": pass_ok, "noisy_ok": noisy_ok,
            "ok": pass_ok and noisy_ok}


def headline_phrases(fig):
    """The phrases a published headline built from these figures must contain, word for word (the README quotes
    docs/accuracy.md's headline, and tests/cli/check_accuracy_quote.py checks each bullet that cites a results
    file against the file): the faulted jobs' judged pass share, their share not judged with the set-aside
    verdicts, the clean jobs' false alarms, the share right over all lab cases."""
    f, cl, al = fig["faulted"], fig["clean"], fig["all"]
    alarms = len(cl["false_alarms"]) + len(cl["errors"])
    return [f"faulted jobs: {pct(f['passed'], f['judged'])} judged passed",
            f"{pct(f['not_judged'], f['cases'])} faulted jobs not judged",
            f"set-aside verdicts {f['set_aside_right']} right, {f['set_aside_wrong']} wrong",
            f"{alarms} false alarm(s) in {cl['judged']} judged clean jobs",
            f"right in {pct(al['right'], al['cases'])} lab cases"]


def pct(a, b):
    return f"{a} of {b} ({100.0 * a / b:.1f} %)" if b else f"{a} of {b}"


def _num(x):
    return f"{x:.3f}" if x is not None else "-"


def render(fig):
    """The printed block, a list of lines."""
    f, cl, al, t1, gt = fig["faulted"], fig["clean"], fig["all"], fig["top1"], fig["faulted_gate"]
    out = ["", "== Figures, faulted and clean lab jobs apart (issue 47; from a --json file: "
               "bench/accuracy_lib/recompute.py)"]
    if not al["cases"]:
        out.append("lab: no case counted")
        out.append(_synth_line(fig["synth"]))
        return out
    errs = f" ({f['errors']} error(s) among them, counted as not passed, as gate() does)" if f["errors"] else ""
    out.append(f"lab faulted jobs, {f['cases']}: passed {pct(f['passed'], f['judged'])} judged{errs}; not judged "
               f"{pct(f['not_judged'], f['cases'])}, set-aside verdicts {f['set_aside_right']} right, "
               f"{f['set_aside_wrong']} wrong")
    alarms = cl["false_alarms"]
    line = (f"lab clean jobs, {cl['cases']}: false alarms in {pct(len(alarms), cl['judged'])} judged"
            + (": " + ", ".join(alarms) if alarms else ""))
    if cl["errors"]:
        line += f"; {len(cl['errors'])} error(s): " + ", ".join(cl["errors"])
    if cl["not_judged"]:
        line += f"; {cl['not_judged']} not judged"
    out.append(line)
    out.append(f"lab, all cases: right in {pct(al['right'], al['cases'])} (judged {al['judged_right']} of "
               f"{al['judged']}, set aside {al['set_aside_right']} of {al['set_aside']})")
    rank = []
    for what, r in (("judged", t1["judged"]), ("set-aside included", t1["faulted"])):
        if r["cases"]:
            rank.append(f"{what} {pct(r['right'], r['cases'])}, chance {100.0 * r['chance']:.1f} %")
    out.append("top-1 rank, faulted jobs with a fault rank: " + ("; ".join(rank) if rank else "no such case"))
    out.append("cause named, per cause, over all lab cases (set-aside included; a clean job naming a cause is a "
               "false positive for it):")
    out.append(f"  {'cause':20} {'truth':>5} {'named':>5} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} "
               f"{'recall':>7} {'F1':>6}")
    for k, v in fig["per_cause"].items():
        name = "all (micro)" if k == "all" else k
        out.append(f"  {name:20} {v['truth']:5} {v['named']:5} {v['tp']:4} {v['fp']:4} {v['fn']:4} "
                   f"{_num(v['precision']):>9} {_num(v['recall']):>7} {_num(v['f1']):>6}")
    out.append(_synth_line(fig["synth"]))
    if not f["cases"]:
        out.append("faulted-alone gate at the published bars: no faulted lab job")
        return out
    out.append(f"faulted-alone gate at the published bars: {f['passed']} of {f['judged']} judged passed "
               f"({gt['min_pass_share']:.0%} required): {'ok' if gt['pass_ok'] else 'FAILED'}; "
               f"{f['not_judged']} of {f['cases']} faulted not judged (at most {gt['max_not_judged_share']:.0%} "
               f"allowed): {'ok' if gt['noisy_ok'] else 'FAILED'}: it would {'pass' if gt['ok'] else 'FAIL'}")
    return out


def _synth_line(sy):
    return (f"synth (self-consistency, not accuracy on real jobs): right in {pct(sy['right'], sy['cases'])}"
            + (": wrong " + ", ".join(sy["wrong"]) if sy["wrong"] else ""))


def report_lines(cases, thresholds=None):
    return render(figures(cases, thresholds))
