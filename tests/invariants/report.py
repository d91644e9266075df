"""The invariant suite's report: report.json (everything) and report.txt (for a person), in the work folder.

report.json: {"summary": {mode, date, commit, inputs, runs, outputs_checked, pairs, checked: {name: count},
vacuous: {relation: count}, rules: {name: statement}, relations: {name: statement}, ...},
"violations": [{rule, case, message, repro: [shell lines], known: reason (only for a known limit)}]}.
report.txt: the headline (cases, outputs, violations by rule), then per rule its statement, its count and
its first violations, each with the commands that reproduce it.

Invariants: every violation in the JSON is counted in the text's table; the text shows at most
`SHOWN_PER_RULE` violations of a rule (the JSON has all of them).
"""
import collections
import json
import os

SHOWN_PER_RULE = 5


def by_rule(violations):
    out = collections.OrderedDict()
    for v in sorted(violations, key=lambda v: v["rule"]):
        out.setdefault(v["rule"], []).append(v)
    return out


def headline(summary, violations):
    """A few lines: what ran, and the violations by rule (known limits counted apart)."""
    lines = [f"invariants ({summary['mode']}, commit {summary['commit']}, {summary['date']}): "
             f"{summary['inputs']} inputs, {summary['runs']} strata runs, {summary['outputs_checked']} outputs "
             f"checked, {summary['pairs']} related pairs, {summary['seconds']:.0f} s"]
    groups = by_rule(violations)
    if not groups:
        lines.append("no violation")
    for rule, vs in groups.items():
        known = sum(1 for v in vs if v.get("known"))
        lines.append(f"  {rule:34s} {len(vs):5d} violation(s)" + (f" ({known} known limits)" if known else ""))
    unchecked = [n for n, k in summary["checked"].items() if k == 0]
    if unchecked:
        lines.append("checked nothing this run: " + ", ".join(unchecked))
    if summary.get("inputs_failed"):
        lines.append(f"inputs that could not be made: {len(summary['inputs_failed'])}")
    return "\n".join(lines)


def write(work, summary, violations):
    with open(os.path.join(work, "report.json"), "w") as f:
        json.dump({"summary": summary, "violations": violations}, f, indent=1, default=str)
    lines = [headline(summary, violations), ""]
    lines += [f"{n}: checked {summary['checked'][n]} times"
              + (f" ({summary['vacuous'][n]} not applicable)" if summary["vacuous"].get(n) else "")
              for n in summary["checked"]]
    for rule, vs in by_rule(violations).items():
        statement = summary["rules"].get(rule) or summary["relations"].get(rule, "")
        lines += ["", f"== {rule}: {len(vs)} violation(s)", f"   {statement}"]
        for v in vs[:SHOWN_PER_RULE]:
            lines.append(f" - {v['case']}: {v['message']}" + (f"  [known: {v['known']}]" if v.get("known") else ""))
            lines += [f"     $ {line}" for line in v["repro"]]
        if len(vs) > SHOWN_PER_RULE:
            lines.append(f"   ... {len(vs) - SHOWN_PER_RULE} more in report.json")
    for name, err in (summary.get("inputs_failed") or {}).items():
        lines.append(f"input not made: {name}: {err}")
    with open(os.path.join(work, "report.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
