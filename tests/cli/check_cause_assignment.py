#!/usr/bin/env python3
"""A finding's cause is named in one place (issue 24): NameCause in src/analysis/diagnosis/cause_choice.cc,
set on a finding by SetCause there. No other file of src/ writes a `cause` member (`x.cause = ...`,
`x->cause = ...`, or a designated initializer `.cause = ...`), except the few that carry a cause NameCause
already named from one place to another (ALLOWED, each with why). Nor does any build a cause and its layer by
position (issue 50 item 4: a second cause rule returning `{Cause::kX, Layer::kY, ...}` or constructing
`CauseChoice{Cause::kX, ...}`): a cause paired with a layer in braces or parentheses is allowed only as a
candidate NameCause weighs, its type named (CANDIDATES: `CauseCandidate{...}`, `RecordedCandidate{...}`, and
the online detector's `SummaryCause{...}`, the cause each step-summary class's excess stands for).
Comments and string literals are ignored; the pairing is looked for within one line.

usage: check_cause_assignment.py SRC_DIR    Exits 1 listing every assignment outside the rule (file:line).
"""
import re
import sys

from source_lines import code_lines, run_checker

RULE = "analysis/diagnosis/cause_choice.cc"
# file -> why it may write a cause member (it carries a cause NameCause named; it names none itself).
ALLOWED = {
    "analysis/online/online_detector.cc": "keeps NameCause's choice in the detection it opens",
    "agent/online_job.cc": "copies a detection's cause (named by NameCause) into the agent's finding",
    "agent/stream_codec.cc": "decodes a detection's cause, named by NameCause on the publishing node",
    "agent/serve_core.cc": "decodes a window finding's cause, named by NameCause on the publishing node",
}
ASSIGN = re.compile(r"(\.|->)\s*cause\s*=(?!=)")
# Evidence types whose first members are a cause and its layer: what NameCause weighs, not what it chose.
CANDIDATES = {"CauseCandidate", "RecordedCandidate", "SummaryCause"}
# `NAME{` or `NAME(` (NAME possibly empty: a bare brace) whose first element is an expression naming a cause and
# whose second names a layer.
POSITIONAL = re.compile(r"(?<![\w:])(\w*)\s*[{(]([^{}();,]*\bCause::k\w+[^{}();,]*),\s*[^{}();,]*\bLayer::k")
CHOICE = re.compile(r"\bCauseChoice\s*[{(]\s*[^\s)}]")


def positional(code):
    """Whether the line builds a cause by position outside a candidate (or constructs a CauseChoice with values)."""
    if CHOICE.search(code):
        return True
    return any(m.group(1) not in CANDIDATES for m in POSITIONAL.finditer(code))


def violations(src):
    out = []
    for rel, no, code, line in code_lines(src, (".cc", ".h", ".c")):
        if rel == RULE or rel in ALLOWED:
            continue
        if ASSIGN.search(code):
            out.append(f"{rel}:{no}: writes a cause outside NameCause ({RULE}): {line.strip()}")
        elif positional(code):
            out.append(f"{rel}:{no}: builds a cause by position outside NameCause ({RULE}; a candidate names its "
                       f"type, {' or '.join(sorted(CANDIDATES))}): {line.strip()}")
    return out


def main():
    return run_checker(
        __doc__, violations,
        lambda n: f"{n} cause assignment(s) outside the one rule: hand the evidence to NameCause and set "
        "what it returns with SetCause",
        lambda: f"cause assignment: only {RULE} names a cause ({len(ALLOWED)} files carry one it named)")


if __name__ == "__main__":
    sys.exit(main())
