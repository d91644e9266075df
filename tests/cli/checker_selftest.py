#!/usr/bin/env python3
"""The project's own checkers must see what they claim to see (issue 23): each is fed constructed sources in
a temporary directory, and must report every planted fault (with the place and, for includes, the chain) and
pass the clean input.

  check_function_length.py  an over-long method in a (nested) class body, constructor with an initializer
                            list, lambda member, function in extern "C", free function, out-of-class member;
                            short code, long data tables and enums, braces in comments and strings pass;
                            unbalanced braces are reported;
  check_include_graph.py    a direct upward include, transitive ones (through a same-level header, through
                            two lower folders), an upward include of a generated header, a sibling-folder
                            include, a JSON library reached by analysis through a header, a JSON name in
                            analysis, the recording's raw index or rows reached by analysis or the model, the
                            store including segments/ (directly or through its own header), the agent
                            including a pass's internals of analysis or the model, a folder with no level; a
                            clean downward tree (the agent reading a public product that includes internals)
                            passes;
  check_architecture_levels.py  a doc whose level table and flow line say LEVEL passes; a folder moved, a
                            folder left out, the flow line alone drawn the old way are reported;
  check_cause_assignment.py a finding's cause written outside cause_choice.cc (member, pointer, designated
                            initializer) or built by position (a second rule returning `{Cause::kX,
                            Layer::kY}`, a CauseChoice constructed with a cause in braces or parentheses, a
                            conditional cause, a helper called with a cause and layer) is reported with file
                            and line; comparisons, comments, strings, default member initializers, sets of
                            causes, candidates that name their type and the allowed carriers pass;
  check_one_median.py       a median computed outside core/robust_stats.h (nth_element, the middle element,
                            the lower middle) is reported with file and line; calls of Median, comments,
                            strings, midpoints of two values and the home itself pass;
  check_reports_render.py   a file of reports/ that includes robust_stats.h, peer_difference.h or
                            recording_alignment.h, or calls Median, PeerMedian, Mad or AlignRecording, is
                            reported with file and line; the same in analysis/, in a comment or a string, a
                            report reading a measured value, and the allowed exception pass;
  check_unity_safety.py     a `using namespace` at namespace scope (a .cc, a header, after a namespace's brace
                            on one line) is reported with file and line; one inside a function, in a comment
                            or a string passes;
  SliceTable::kRowBytes     (with --cxx) store/trace_store.h as is compiles; with a column added but not
                            listed in kColumns, or a column widened past 48 bytes a row, it does not.

usage: checker_selftest.py [--cxx COMPILER --src SRC_DIR]
"""
import argparse
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
FAILURES = []


def check(ok, what, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILURES.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def write_tree(root, files):
    for rel, text in files.items():
        path = pathlib.Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run_checker(script, files, *args):
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(tmp, files)
        res = subprocess.run([sys.executable, str(HERE / script), tmp, *args], capture_output=True, text=True)
        return res.returncode, res.stdout.replace(tmp + os.sep, "").replace(tmp, "SRC") + res.stderr


def body(n, indent="  "):
    """n statement lines."""
    return "".join(f"{indent}x += {k};\n" for k in range(n))


def function_length_cases():
    limit = "10"
    clean = {
        "a/clean.h": "namespace n {\n\nclass Small {\n public:\n  int Get() const { return x_; }\n"
                     "  void Set(int v) {\n    x_ = v;\n  }\n\n private:\n  int x_ = 0;\n};\n\n"
                     "// a comment with a brace {\nconstexpr const char* kText = \"{ not code\";\n"
                     "constexpr int kTable[] = {\n" + "".join(f"    {k},\n" for k in range(30)) + "};\n"
                     "enum class E {\n" + "".join(f"  k{k},\n" for k in range(30)) + "};\n\n}  // namespace n\n",
        "a/clean.cc": "int Free(int x) {\n" + body(5) + "  return x;\n}\n",
    }
    rc, out = run_checker("check_function_length.py", clean, limit)
    check(rc == 0, "function_length: short functions, long data tables and enums, braces in comments and "
                   "strings pass", out)

    planted = {
        "method in a nested class body": (
            "b/method.h", "namespace n {\n\nstruct Outer {\n  struct Inner {\n    int Long() {\n      int x = 0;\n" +
            body(12, "      ") + "      return x;\n    }\n  };\n};\n\n}\n", "b/method.h:5:", "Outer::Inner::Long"),
        "constructor with an initializer list": (
            "b/ctor.h", "class Widget {\n public:\n  explicit Widget(int v)\n      : a_(v),\n        b_{v} {\n"
            "    int x = 0;\n" + body(10, "    ") + "  }\n\n private:\n  int a_, b_;\n};\n", "b/ctor.h:3:",
            "Widget::Widget"),
        "lambda member": ("b/lambda.h", "#include <functional>\nclass Holder {\n  std::function<int(int)> f_ = "
                          "[](int x) {\n" + body(12, "    ") + "    return x;\n  };\n};\n", "b/lambda.h:3:",
                          "lambda f_"),
        "function in an extern \"C\" block": ("b/plugin.cc", 'extern "C" {\n\nint Exported(int x) {\n' + body(12) +
                                               "  return x;\n}\n\n}\n", "b/plugin.cc:3:", "Exported"),
        "free function": ("b/free.cc", "namespace {\n\nint Free(int x) {\n" + body(12) + "  return x;\n}\n\n}\n",
                          "b/free.cc:3:", "Free"),
        "out-of-class member": ("b/member.cc", "template <typename T>\nint Box<T>::Get(int x) const {\n" + body(12) +
                                "  return x;\n}\n", "b/member.cc:1:", "Box<T>::Get"),
    }
    for what, (rel, text, place, name) in planted.items():
        rc, out = run_checker("check_function_length.py", {**clean, rel: text}, limit)
        check(rc == 1 and place in out and name in out, f"function_length: reports an over-long {what} "
                                                         f"({place} {name})", out)
    rc, out = run_checker("check_function_length.py", {**clean, "b/broken.cc": "void F() {\n  if (x) {\n}\n"}, limit)
    check(rc == 1 and "b/broken.cc" in out and "cannot match" in out,
          "function_length: reports a file whose braces do not balance instead of passing it", out)


def include_graph_cases():
    clean = {
        "core/base.h": "#pragma once\n#include <vector>\n",
        "store/recorded_rows.h": '#pragma once\n#include "core/base.h"\n',
        "store/table.h": '#pragma once\n#include "core/base.h"\n',
        "store/recorded_run.h": '#pragma once\n#include "store/recorded_rows.h"\n',
        "segments/reader.h": '#pragma once\n#include "store/recorded_rows.h"\n',
        "importers/reader.h": ('#pragma once\n#include "store/table.h"\n#include "store/recorded_run.h"\n#include "local.h"\n'
                               '#include "segments/reader.h"\n'),
        "importers/local.h": '#pragma once\n#include "core/base.h"\n',
        "model/job.h": '#pragma once\n#include "store/table.h"\n',
        "analysis/pass.cc": '#include "model/job.h"\n#include "analysis/diagnosis/cross_layer.h"\n',
        "analysis/diagnosis/cross_layer.h": '#pragma once\n#include "model/job.h"\n',
        "analysis/diagnosis/result.h": '#pragma once\n#include "analysis/diagnosis/cross_layer.h"\n',
        "reports/json.cc": '#include <nlohmann/json.hpp>\n#include "analysis/pass.h"\n',
        "agent/round.cc": '#include "analysis/diagnosis/result.h"\n#include "reports/json.h"\n',
        "cli/main.cc": '#include "reports/json.h"\n#include "importers/reader.h"\n',
    }
    rc, out = run_checker("check_include_graph.py", clean)
    check(rc == 0, "include_graph: a tree whose includes all point down passes", out)

    planted = {
        "a direct upward include": ({"core/up.h": '#include "store/table.h"\n'},
                                    ["core/up.h: core includes store/", "core/up.h -> store/table.h"]),
        "a transitive upward include through a same-level header": (
            {"importers/reader.h": '#pragma once\n#include "store/table.h"\n#include "local.h"\n',
             "importers/local.h": '#pragma once\n#include "model/job.h"\n',
             "importers/user.cc": '#include "importers/reader.h"\n'},
            ["importers/user.cc: importers reaches model/",
             "importers/user.cc -> importers/reader.h -> importers/local.h -> model/job.h"]),
        "a transitive upward include two folders down": (
            {"store/recorded_rows.h": '#pragma once\n#include "core/base.h"\n#include "core/bad.h"\n',
             "core/bad.h": '#pragma once\n#include "reports/json.h"\n', "reports/json.h": "#pragma once\n"},
            ["segments/reader.h: segments reaches reports/",
             "segments/reader.h -> store/recorded_rows.h -> core/bad.h -> reports/json.h"]),
        "the store including the recording's file format (segments/ is above the store)": (
            {"store/recorded_run.h": '#pragma once\n#include "store/recorded_rows.h"\n#include "segments/reader.h"\n'},
            ["store/recorded_run.h: store includes segments/ (above it in the flow)",
             "store/recorded_run.h -> segments/reader.h"]),
        "the store reaching the file format through a header of its own": (
            {"store/table.h": '#pragma once\n#include "store/recorded_run.h"\n',
             "store/recorded_run.h": '#pragma once\n#include "segments/reader.h"\n'},
            ["store/table.h: store reaches segments/ (above it in the flow)",
             "store/table.h -> store/recorded_run.h -> segments/reader.h"]),
        "the agent including a pass's internals": (
            {"agent/summaries.cc": '#include "analysis/diagnosis/result.h"\n#include "analysis/diagnosis/cross_layer.h"\n'},
            ["agent/summaries.cc:2: agent includes analysis/diagnosis/cross_layer.h, internals of analysis/"]),
        "the agent including the model's internals": (
            {"agent/summaries.cc": '#include "model/job.h"\n'},
            ["agent/summaries.cc:1: agent includes model/job.h, internals of model/"]),
        "the recording's raw index reached by analysis through a header": (
            {"model/job.h": '#pragma once\n#include "store/table.h"\n#include "store/recorded_run.h"\n'},
            ["analysis/pass.cc: analysis reaches the recording's raw rows",
             "analysis/pass.cc -> model/job.h -> store/recorded_run.h"]),
        "the recording's rows reached by the model": (
            {"model/rows_user.cc": '#include "store/recorded_rows.h"\n'},
            ["model/rows_user.cc: model reaches the recording's raw rows",
             "model/rows_user.cc -> store/recorded_rows.h"]),
        "the recording's file format reached by analysis": (
            {"analysis/reader_user.cc": '#include "segments/reader.h"\n'},
            ["analysis/reader_user.cc: analysis reaches the recording's raw rows",
             "analysis/reader_user.cc -> segments/reader.h"]),
        "an upward include of a header not in the tree (generated)": (
            {"model/gen.cc": '#include "agent/generated.h"\n'}, ["model/gen.cc: model includes agent/"]),
        "an include of a sibling folder": ({"recorder/probe.cc": '#include "importers/reader.h"\n'},
                                           ["recorder/probe.cc: recorder includes importers/ (beside it"]),
        "a JSON library reached by analysis through a header": (
            {"core/json_util.h": '#pragma once\n#include <nlohmann/json.hpp>\n',
             "model/job.h": '#pragma once\n#include "store/table.h"\n#include "core/json_util.h"\n'},
            ["analysis/pass.cc: analysis reaches a JSON library",
             "analysis/pass.cc -> model/job.h -> core/json_util.h -> #include <nlohmann/json.hpp>"]),
        "a JSON name in analysis": ({"analysis/pass.cc": '#include "model/job.h"\nauto j = nlohmann::json();\n'},
                                    ["analysis/pass.cc:2: analysis uses nlohmann::"]),
        "a folder with no level": ({"newfolder/x.h": '#include "core/base.h"\n'},
                                   ["newfolder/: a folder with no level"]),
    }
    for what, (files, expected) in planted.items():
        rc, out = run_checker("check_include_graph.py", {**clean, **files})
        check(rc == 1 and all(e in out for e in expected), f"include_graph: reports {what}", out)


def architecture_levels_cases():
    """The doc's level table and flow line against the real LEVEL: a doc made from LEVEL passes; one folder
    moved, one left out, or the flow line alone drawn the old way (segments below the store) fails."""
    spec = importlib.util.spec_from_file_location("check_include_graph", HERE / "check_include_graph.py")
    graph = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(graph)
    by_level = {}
    for folder, n in graph.LEVEL.items():
        by_level.setdefault(n, []).append(folder)

    def doc(levels, flow=None):
        rows = "".join(f"| {n} | {', '.join(f'`{f}/`' for f in fs)} | why |\n" for n, fs in sorted(levels.items()))
        flow = flow or " → ".join(" | ".join(fs) for _, fs in sorted(levels.items()))
        return {"architecture.md": f"# Map\n\n`{flow}`.\n\n### Levels\n\n| level | folders | why |\n|---|---|---|\n"
                                   f"{rows}\n## Next\n\n| 3 | `stray/` | not the table |\n"}

    rc, out = run_checker("check_architecture_levels.py", doc(by_level))
    check(rc == 0, "architecture_levels: a doc whose table and flow line say LEVEL passes", out)
    moved = {n: [f for f in fs if f != "segments"] for n, fs in by_level.items()}
    moved[graph.LEVEL["store"]].append("segments")
    lacking = {n: [f for f in fs if f != "agent"] for n, fs in by_level.items() if fs != ["agent"]}
    old_flow = "core → segments → store → importers | recorder | synth → model → analysis → reports → agent → cli | python"
    planted = {
        "a folder moved in the table and the flow line": (doc(moved), "level table (### Levels): segments/ is at level"),
        "a folder left out": (doc(lacking), "level table (### Levels): agent/ is missing"),
        "the flow line alone drawn the old way": (doc(by_level, old_flow),
                                                  "flow line (core → ...): segments/ is at level 1, LEVEL says 2"),
    }
    for what, (files, expected) in planted.items():
        rc, out = run_checker("check_architecture_levels.py", files)
        check(rc == 1 and expected in out, f"architecture_levels: reports {what}", out)


def check_clean_and_planted(script, label, clean, clean_what, planted):
    """A line checker passes `clean` (files by path) and reports each planted case: {what: (path, text,
    expected output)}, the path's text added to the clean files."""
    rc, out = run_checker(script, clean)
    check(rc == 0, f"{label}: {clean_what}", out)
    for what, (rel, text, expected) in planted.items():
        rc, out = run_checker(script, {**clean, rel: text})
        check(rc == 1 and expected in out, f"{label}: reports {what}", out)


def cause_assignment_cases():
    clean = {
        "analysis/diagnosis/cause_choice.cc": "void SetCause(const CauseChoice& c, Finding* f) { f->cause = c.cause; }\n",
        "analysis/diagnosis/result.h": "struct Finding {\n  Cause cause = Cause::kUnknown;\n};\n",
        "analysis/diagnosis/pass.cc": ('if (f.cause == Cause::kHang) return;  // f.cause = Cause::kHang is not here\n'
                                       'const char* s = "f.cause = x";\nbool b = f.cause != g.cause;\n'),
        "agent/online_job.cc": "f.cause = d.cause;\n",
        # Candidates NameCause weighs name their type; a set of causes pairs no layer; CauseChoice declared empty.
        "analysis/diagnosis/candidates.cc": (
            "ProfileEvidence{{CauseCandidate{Cause::kSlowCompute, Layer::kGpu, ms}}, late};\n"
            "out.push_back(RecordedCandidate{gc ? Cause::kGcPause : Cause::kIoStall, Layer::kOs, x, what});\n"
            "static const std::set<Cause> kGuesses = {Cause::kSlowCompute, Cause::kUnknown};\n"
            "CauseChoice none;\nCauseChoice c = NameCause(e);\nCauseChoice{};\n"
            "// return {Cause::kHang, Layer::kComm};\nconst char* t = \"{Cause::kHang, Layer::kComm}\";\n"),
    }
    planted = {
        "a member assignment": ("analysis/diagnosis/other.cc", "  f.cause = Cause::kSlowCompute;\n",
                                "analysis/diagnosis/other.cc:1: writes a cause"),
        "an assignment through a pointer": ("analysis/diagnosis/other.cc", "x;\nfinding->cause = best.cause;\n",
                                            "analysis/diagnosis/other.cc:2: writes a cause"),
        "a designated initializer": ("reports/make.cc", "Finding f{.cause = Cause::kHang};\n",
                                     "reports/make.cc:1: writes a cause"),
        # A second cause rule: a function that decides a cause and returns it by position.
        "a second rule returning a cause and layer by position": (
            "analysis/diagnosis/second_rule.cc",
            "CauseChoice Contended(double ratio) {\n  if (ratio > 2) return {Cause::kNetworkContention, Layer::kComm, "
            "1, 1, 1};\n  return {};\n}\n",
            "analysis/diagnosis/second_rule.cc:2: builds a cause by position"),
        "a CauseChoice constructed with a cause": (
            "analysis/diagnosis/second_rule.cc", "SetCause(CauseChoice{Cause::kStageImbalance, Layer::kGpu}, &f);\n",
            "analysis/diagnosis/second_rule.cc:1: builds a cause by position"),
        "a CauseChoice constructed in parentheses": (
            "analysis/diagnosis/second_rule.cc", "auto c = CauseChoice(Cause::kHang, Layer::kComm);\n",
            "analysis/diagnosis/second_rule.cc:1: builds a cause by position"),
        "a conditional cause by position": (
            "reports/second_rule.cc", "f.choice = {slow ? Cause::kSlowCompute : Cause::kHostStall, Layer::kHost};\n",
            "reports/second_rule.cc:1: builds a cause by position"),
        "a helper taking a cause and layer": (
            "analysis/diagnosis/second_rule.cc", "return Named(Cause::kCpuContention, Layer::kCpu, share);\n",
            "analysis/diagnosis/second_rule.cc:1: builds a cause by position"),
    }
    check_clean_and_planted("check_cause_assignment.py", "cause_assignment", clean, "comparisons, comments, strings and the one rule pass", planted)


def one_median_cases():
    clean = {
        "core/robust_stats.h": "std::nth_element(v.begin(), mid, v.end());\nreturn v[v.size() / 2];\n",
        "analysis/pass.cc": ('const double m = Median(values);  // not v[v.size() / 2] nor nth_element\n'
                             'const char* s = "v[n / 2]";\nconst double mid = (a + b) / 2;\nv.reserve(n / 2);\n'),
    }
    planted = {
        "a selection by nth_element": ("model/pass.cc", "x;\nstd::nth_element(v.begin(), v.begin() + k, v.end());\n",
                                       "model/pass.cc:2: selects with std::nth_element"),
        "the middle element of a list": ("reports/view.cc", "const double m = v[v.size() / 2];\n",
                                         "reports/view.cc:1: reads the middle element"),
        "the lower middle of a median": ("analysis/s.cc", "  m = 0.5 * (other(m / 2 - 1) + other(m / 2));\n",
                                         "analysis/s.cc:1: reads the lower middle"),
        "a middle element by (n - 1) / 2": ("analysis/c.cc", "return spans[(spans.size() - 1) / 2].second;\n",
                                            "analysis/c.cc:1: reads the middle element"),
    }
    check_clean_and_planted("check_one_median.py", "one_median", clean, "calls of Median, comments, strings, midpoints and the one home pass", planted)


def reports_render_cases():
    clean = {
        "analysis/diagnosis/latest_arrival.cc": ('#include "core/robust_stats.h"\n'
                                                 "const double late = mine - PeerMedian(peers, at);\n"),
        "reports/html_view.cc": ('#include "analysis/diagnosis/result.h"  // not core/robust_stats.h\n'
                                 'out["peers_median_ms"] = ViewMs(c.peers_median_ns);  // no Median(peers) here\n'
                                 'const char* s = "Median(x)";\nconst double m = facts.MedianStep;\n'),
        "reports/pprof_export.cc": "const double median = Median(samples);\n",
    }
    planted = {
        "an include of the median's home": ("reports/perfetto_export.cc", 'x;\n#include "core/robust_stats.h"\n',
                                           "reports/perfetto_export.cc:2: includes core/robust_stats.h"),
        "an include of the alignment": ("reports/perfetto_export.cc", '#include "model/recording_alignment.h"\n',
                                        "reports/perfetto_export.cc:1: includes model/recording_alignment.h"),
        "a median of arrivals": ("reports/perfetto_export.cc",
                                 "const double late = mine.start - Median(std::move(arrivals));\n",
                                 "reports/perfetto_export.cc:1: calls Median"),
        "a peer median": ("reports/op_view.cc", "x;\ny;\nreturn PeerMedian(peers, [&](size_t q) { return v[q]; });\n",
                          "reports/op_view.cc:3: calls PeerMedian"),
        "a MAD": ("reports/view.h", "const double spread = Mad(v);\n", "reports/view.h:1: calls Mad"),
        "an alignment": ("reports/export.cc", "auto a = model::AlignRecording(calls, trace);\n",
                         "reports/export.cc:1: calls AlignRecording"),
        "a median with a template argument": ("reports/view.cc", "auto m = Median<EvenCount::kUpperMiddle>(v);\n",
                                              "reports/view.cc:1: calls Median"),
    }
    check_clean_and_planted("check_reports_render.py", "reports_render", clean,
                            "the analysis, comments, strings, measured values and the allowed exception pass", planted)


def unity_safety_cases():
    clean = {
        "analysis/pass.cc": ("namespace strata {\nvoid F() {\n  using namespace std::chrono_literals;\n}\n"
                             "// using namespace diagnosis; would leak\nconst char* s = \"using namespace x;\";\n}\n"),
    }
    planted = {
        "a namespace-scope using in a .cc": ("reports/r.cc", "namespace strata {\nusing namespace diagnosis;\n}\n",
                                             "reports/r.cc:2: `using namespace`"),
        "one in a header": ("model/m.h", "#pragma once\nusing namespace std;\n", "model/m.h:2: `using namespace`"),
        "one after a namespace's brace": ("cli/c.cc", "namespace strata { using namespace fmt;\n",
                                          "cli/c.cc:1: `using namespace`"),
    }
    check_clean_and_planted("check_unity_safety.py", "unity_safety", clean, "a function's own using, comments and strings pass", planted)


def slice_row_cases(cxx, src):
    header = (pathlib.Path(src) / "store" / "trace_store.h").read_text()
    column = "  std::vector<uint8_t> flags;\n"
    assert column in header, "trace_store.h: the flags column moved; update this self-test"
    variants = {
        "as is": (header, True),
        "a column added but not listed in kColumns": (
            header.replace(column, column + "  std::vector<int64_t> extra;\n"), False),
        "the flags column widened to 8 bytes (53 bytes a row)": (
            header.replace(column, "  std::vector<int64_t> flags;\n"), False),
    }
    for what, (text, compiles) in variants.items():
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, {"store/trace_store.h": text, "tu.cc": '#include "store/trace_store.h"\n'})
            res = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I", tmp, "-I", str(src), f"{tmp}/tu.cc"],
                                 capture_output=True, text=True)
        ok = (res.returncode == 0) == compiles
        check(ok, f"SliceTable::kRowBytes: trace_store.h {what} {'compiles' if compiles else 'fails to compile'}",
              res.stderr[-2000:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cxx", help="C++ compiler for the SliceTable row-size cases")
    parser.add_argument("--src", help="the source tree (src/) for the SliceTable row-size cases")
    args = parser.parse_args()
    function_length_cases()
    include_graph_cases()
    architecture_levels_cases()
    cause_assignment_cases()
    one_median_cases()
    reports_render_cases()
    unity_safety_cases()
    if args.cxx and args.src:
        slice_row_cases(args.cxx, args.src)
    else:
        print("skip SliceTable::kRowBytes cases (no --cxx/--src)")
    print(f"{len(FAILURES)} checker self-test(s) failed" if FAILURES else "checker self-test: every checker "
          "reports every planted fault and passes clean input")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
