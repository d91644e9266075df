"""One case's verdict from its diagnosis: what bench/accuracy records for a job it made and diagnosed, and what
bench/rebuild_results records again for a kept job. The one place the pieces are put together: scoring.judge
(right or wrong), scoring.predicted (strata's top rank and first cause), recording_quality (set aside, and the
ranks the machine slowed in a clean job, which judge accepts). A set-aside (noisy) case keeps the verdict it would
have had, in its note."""
from accuracy_lib.recording_quality import machine_slowed_ranks
from accuracy_lib.scoring import judge, predicted, second_cause_right


def settle(res, truth, d, why):
    """Fills bench/accuracy's result dict `res` (case, recorded, note) for a job whose truth is `truth`, diagnosed
    as `d` (strata diagnose --format json), set aside for `why` (recording_quality.recording_problem, or None):
    truth, rank, cause, problem, world and status (pass / fail / noisy). Returns `res`."""
    case = res["case"]
    problem = judge(truth, d, res["recorded"])
    rank, cause = predicted(d)
    res.update(truth=truth, rank=rank, cause=cause, problem=problem, world=d["job"]["ranks"])
    slowed = machine_slowed_ranks(truth) if case.source == "lab" and truth.get("fault") == "none" else {}
    if slowed:  # judged all the same: naming these ranks is right (scoring.judge)
        res["note"] = (res["note"] + "; " if res["note"] else "") + "machine-slowed ranks accepted: " + \
            "; ".join(slowed.values())
    second = second_cause_right(truth, d, res["recorded"]) if case.source == "lab" and not problem else None
    if second:  # judged right on the fault rank's second finding (scoring.judge)
        res["note"] = (res["note"] + "; " if res["note"] else "") + "two causes: " + second
    if why:
        res.update(status="noisy", set_aside=why, note=(res["note"] + "; " if res["note"] else "") +
                   f"recording {why}: not judged (the verdict would have been {'wrong' if problem else 'right'})")
    else:
        res["status"] = "fail" if problem else "pass"
    return res
