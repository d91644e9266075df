#!/usr/bin/python3
"""The report screenshots of the docs (docs/img/*.png): which input and panels each shows, made again from the
current output, and checked against it.

  docs_screenshots.py --regenerate STRATA [NAME...]   diagnose each screenshot's input (or only those named, as
                                            report-example) (--format html) and draw it again with
                                            scripts/report_screenshot.py (needs chromium and python3-pil)
  docs_screenshots.py --check STRATA        for each screenshot: the figures the picture carries (written into
                                            the PNG by report_screenshot.py from the page it drew: the top
                                            finding's saving) and the figures its caption in docs/usage.md
                                            prints ("rank N", "saves X %") must equal the current output's
                                            (`strata diagnose --format json` of the same input)

A screenshot whose input is not in the repository (a lab recording) is listed as not checked, with why: the check
never passes what it did not examine. Exit 0 when every checked screenshot matches, 1 otherwise, 2 on usage."""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "usage.md")
# name (docs/img/NAME.png), input (relative to the repository's root), panels drawn (report_screenshot.py's ids).
SCREENSHOTS = [
    ("report-example", "examples/ddp-2rank-slow-compute", ["heatmap-section", "chain-section", "kair-section"]),
    ("report-ar-op-table", "../shared/datasets/straggler-whatif/trace-AR.csv.gz",
     ["heatmap-section", "chain-section", "kair-section"]),
    ("report-recorded", "examples/recorded-2rank-cpu-contention", ["heatmap-section", "chain-section",
                                                                    "layers-section"]),
]


def sig3(x):
    """The page's three significant digits (its sig3)."""
    return float(f"{x:.3g}")


def diagnose(strata, source, fmt, out):
    subprocess.run([strata, "diagnose", source, "--format", fmt, "-o", out], check=True, capture_output=True,
                   timeout=300)


def current(strata, source):
    """(rank, saving %) of the top finding of `source` now."""
    with tempfile.TemporaryDirectory(prefix="strata-docs-") as tmp:
        path = os.path.join(tmp, "d.json")
        diagnose(strata, source, "json", path)
        top = json.load(open(path, encoding="utf-8"))["findings"][0]
    return top["rank"], sig3(top["impact_pct"])


def caption(name):
    """The docs text about docs/img/NAME.png: from the link to the next screenshot link or the paragraph's end."""
    text = open(DOC, encoding="utf-8").read()
    link = text.find(f"(img/{name}.png)")
    if link < 0:
        return None
    end = min([i for i in (text.find("[docs/img/", link), text.find("\n\n", link)) if i >= 0] or [len(text)])
    return re.sub(r"\s+", " ", text[link:end])


def picture_figures(png):
    """The figures report_screenshot.py wrote into the PNG (its "strata-saving" text), or None."""
    from PIL import Image  # Debian's python3-pil, only needed here and for --regenerate
    with Image.open(png) as im:
        return im.text.get("strata-saving") if hasattr(im, "text") else None


def check(strata):
    failed = []
    for name, source, _ in SCREENSHOTS:
        png = os.path.join(ROOT, "docs", "img", name + ".png")
        if source is None or not os.path.exists(os.path.join(ROOT, source)):
            print(f"not checked: {name}.png: its input is not in the repository ({source or 'a lab recording'})")
            continue
        rank, saving = current(strata, os.path.join(ROOT, source))
        got = []
        drawn = picture_figures(png)
        if drawn != f"fixing it saves {saving:g} % of step time":
            got.append(f"the picture shows {drawn!r}, the output now saves {saving:g} %")
        text = caption(name)
        if text is None:
            got.append("docs/usage.md does not link it")
        else:
            savings = re.findall(r"saves ([\d.]+) %", text)
            ranks = re.findall(r"\brank (\d+)", text)
            if not savings or any(float(s) != saving for s in savings):
                got.append(f"its caption prints savings {savings}, the output now {saving:g} % ({text[:200]!r})")
            if not ranks or any(int(r) != rank for r in ranks):
                got.append(f"its caption names ranks {ranks}, the output now rank {rank}")
        print(f"{'ok' if not got else 'FAIL'}: {name}.png: rank {rank}, saves {saving:g} %")
        failed += [f"{name}.png: {g}" for g in got]
    for f in failed:
        print("FAIL: " + f)
    return 1 if failed else 0


def regenerate(strata, only):
    unknown = set(only) - {name for name, _, _ in SCREENSHOTS}
    if unknown:
        print(f"docs_screenshots: no screenshot named {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for name, source, panels in SCREENSHOTS:
        if only and name not in only:
            continue
        if source is None or not os.path.exists(os.path.join(ROOT, source)):
            print(f"not regenerated: {name}.png: its input is not in the repository ({source or 'a lab recording'})")
            continue
        with tempfile.TemporaryDirectory(prefix="strata-docs-") as tmp:
            page = os.path.join(tmp, "report.html")
            diagnose(strata, os.path.join(ROOT, source), "html", page)
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "report_screenshot.py"), page,
                            os.path.join(ROOT, "docs", "img", name + ".png"), *panels], check=True)
    return 0


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("--check", "--regenerate") or (
            sys.argv[1] == "--check" and len(sys.argv) != 3):
        print(__doc__, file=sys.stderr)
        return 2
    strata = os.path.abspath(sys.argv[2])
    if not os.access(strata, os.X_OK):
        print(f"docs_screenshots: {sys.argv[2]}: not an executable strata binary", file=sys.stderr)
        return 2
    return check(strata) if sys.argv[1] == "--check" else regenerate(strata, sys.argv[3:])


if __name__ == "__main__":
    sys.exit(main())
