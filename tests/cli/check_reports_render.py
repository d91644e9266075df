#!/usr/bin/env python3
"""Reports render the values they are given (issue 50): no file under src/reports computes a median, a peer
comparison or an alignment a diagnosis could disagree with. The analysis measures them once (the diagnosis's
result carries them: DiagnosisResult::drawn, recording_offsets_ns) and the reports read them. A file of
reports/ fails when it includes the homes of those rules (core/robust_stats.h, analysis/diagnosis/
peer_difference.h, model/recording_alignment.h) or calls one of their functions (Median, MedianOfSorted,
PeerMedian(s), Mad, RobustZ, Quantile, KS distances, AlignRecording, AlignRecordedRanks), except the few
files in ALLOWED, each with why. Comments and string literals are ignored.
The HTML report's page script (reports/*.html) draws what the diagnosis judged and judges nothing itself: a
line of it fails when it holds an outlier rule's parts (a MAD, the robust z's constants 1.4826 or 0.6745, or a z
compared with a threshold), as the page's heatmap once marked cells by its own robust z (issue 50), or a KS
distance's (a call of a ks… function, or two empirical distributions' gap |i / a.length − …|), as the trace
page's KAIR panel once scored ranks by a KS rule of its own, or a call of a median (the layers panel once took
its peers' median itself).

usage: check_reports_render.py SRC_DIR    Exits 1 listing every such line (file:line).
"""
import re
import sys

from source_lines import code_lines, run_checker

REPORTS = "reports/"
# file -> why it may still compute one (each is a known exception, to be moved into the analysis).
ALLOWED = {
    "reports/pprof_export.cc": "its product is the peers' median CPU profile (PprofPeersMedian) of the recording's "
                               "raw samples, which the analysis may not read (check_include_graph)",
}
INCLUDES = ("core/robust_stats.h", "analysis/diagnosis/peer_difference.h", "model/recording_alignment.h")
INCLUDE = re.compile(r'#\s*include\s*"(' + "|".join(re.escape(i) for i in INCLUDES) + r')"')
CALL = re.compile(r"\b(Median|MedianOfSorted|MedianDeviationOfSorted|PeerMedians?|Mad|RobustZ|Quantile|"
                  r"InterpolatedQuantileOfSorted|KsDistance\w*|AlignRecording|AlignRecordedRanks)\s*(<[^<>]*>)?\s*\(")


# The parts of an outlier rule or a KS distance in the page's script (JavaScript: its // comments are cut like
# C++'s).
PAGE_RULE = re.compile(r"1\.4826|0\.6745|\bmad\b|\bz\s*[<>]=?\s*\d|\bks\w*\s*\(|"
                       r"Math\.abs\(\s*\w+\s*/\s*\w+\.length\s*-|\bmedian\s*\(", re.I)


def violations(src):
    out = []
    for rel, no, code, line in code_lines(src, (".html",)):
        rule = PAGE_RULE.search(code) if rel.startswith(REPORTS) else None
        if rule:
            out.append(f"{rel}:{no}: the page judges with {rule.group(0)!r}: {line.strip()}")
    for rel, no, code, line in code_lines(src, (".cc", ".h", ".c", ".cpp")):
        if not rel.startswith(REPORTS) or rel in ALLOWED:
            continue
        # An #include's path is a string literal, which code_lines empties: it is matched on the line as written.
        include = INCLUDE.search(line) if code.lstrip().startswith("#") else None
        call = CALL.search(code)
        if include:
            out.append(f"{rel}:{no}: includes {include.group(1)}: {line.strip()}")
        elif call:
            out.append(f"{rel}:{no}: calls {call.group(1)}: {line.strip()}")
    return out


def main():
    return run_checker(
        __doc__, violations,
        lambda n: f"{n} line(s) of src/reports compute what the analysis should measure: measure it once in "
        "the analysis (DiagnosisResult::drawn, analysis/diagnosis/report_facts.h) and render the value",
        lambda: "reports render: no file of src/reports computes a median, peer comparison or alignment "
        f"({len(ALLOWED)} known exception)")


if __name__ == "__main__":
    sys.exit(main())
