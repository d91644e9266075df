#!/usr/bin/env python3
"""Browser test of `strata diagnose --format html` (issue 15): headless Chromium opens the report of a synthetic
job with a straggler at 2 ranks, 8 ranks (pipeline of 2 stages), 256 ranks (pipeline of 4, tensor parallel 2)
and 1,024 ranks, and checks what it drew:
  - in the DOM (--dump-dom, after the page's script ran): no error recorded by the page (it records
    window.onerror and console.error in <html data-errors>), rendering finished (<html data-rendered="ok">),
    the heatmap drew ranks x steps cells (binned to 128 rows at 1,024 ranks; rows grouped by the 2
    pipeline stages at 8 ranks) with the straggler's cells as outliers and no rank marked that the diagnosis
    did not name late (copies naming another rank, or none, mark that rank's named steps, or nothing), the KS matrix drew its cells, the blame chain drew its arrows and the culprit op, the critical path drew its segments and jumps;
  - in a screenshot (--screenshot, the PNG decoded by Pillow): the straggler's red is present in the
    heatmap's region, that region is not blank, and the chain's region shows the culprit's red and the
    collectives' amber.
At each size the page fits (issue 51): within each panel no text label overlaps another (the boxes the page
records in <section data-labels> after drawing: canvas labels, SVG texts, bar names with their bars), the
heatmap's step ticks leave a space between them, the blame chain's comparison (#chain-compare) shows the median of
the straggler's peers' time outside collectives in the drawn step, computed here from the page's per-rank data
(the other ranks of its stage when stages are known, else all others), and the KS legend's first-named group
holds the straggler. On the ST op table (a slow pipeline stage) the labels fit too and the chain's number is the
median of the same op instance on the ranks of the other stages, read here from the CSV itself. A copy of the
256-rank page drawing every label where it falls and one of the ST page drawing every step tick must fail.
A job that stopped (issue 22): copies of the 8-rank page whose first finding is a hang, or a collective
mismatch followed by the hang, as `strata diagnose` writes them for a recorded hang (shape taken from
lab/hang_job.py --fault lock and skip_collective), must open with a "Job stopped" panel above the others that
says who never joined which collective (op, communicator, seq), since when and how long, the missing rank's
state, frame and Python stack and the waiting ranks (a mismatch: which ranks called which op), with the
verdict saying the job stopped; a hostile frame name stays text. Pages of jobs that did not stop keep the
panel hidden.
An op table (AR of ../shared/datasets/straggler-whatif when present: 16 workers, rank 0 2.5x slower in
forward-compute) is compared by compute time, not by its time outside collectives (its step time): the
heatmap colours compute time with rank 0 the highest in every step and the only outlier, rank 0 is the slowest
in >= 90 % of the steps, the KS matrix is drawn with rank 0's score the highest, and the blame chain draws rank
0's ops beside its stage peers' same ops (no empty row), in red and blue on the screenshot.
Last, a copy of the 8-rank page broken on purpose (a script error, the heatmap's drawing call renamed) must
fail those checks: the test proves it notices a broken page.
Usage: test_html_report.py STRATA_BINARY. Exit 0 on success, 1 on a failed check (never skips: a missing
chromium is a failure)."""
import csv
import gzip
import html as htmllib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from PIL import Image  # Debian's python3-pil (scripts/setup.sh)

RED = (0xD6, 0x27, 0x28)  # COLORS.bad in the page: outlier cells and the culprit op
AMBER = (0xF2, 0xB4, 0x47)  # COLORS.comm: collectives on the timeline
BLUE = (0x3B, 0x5F, 0x9A)  # COLORS.accent: the culprit's op on the peers (op tables)
DATASETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "datasets",
                        "straggler-whatif")
AR, ST = os.path.join(DATASETS, "trace-AR.csv.gz"), os.path.join(DATASETS, "trace-ST.csv.gz")
WINDOW = (1280, 1700)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("FAIL: chromium is not installed (scripts/setup.sh installs Debian's chromium)")


def run_chromium(page, profile, *args, window=WINDOW):
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--force-device-scale-factor=1", f"--user-data-dir={profile}", f"--window-size={window[0]},{window[1]}",
           *args, "file://" + os.path.abspath(page)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def decode_png(path):
    """(width, height, bytes per pixel, rows of RGB bytes) of a screenshot, decoded by Pillow."""
    with Image.open(path) as im:
        rgb = im.convert("RGB")
    width, height = rgb.size
    data = rgb.tobytes()
    return width, height, 3, [data[y * width * 3:(y + 1) * width * 3] for y in range(height)]


def region_stats(png, rect, colors):
    """Pixels of `rect` (x, y, w, h) that match each of `colors` (±12 per channel), and non-white pixels."""
    width, height, bpp, rows = png
    x0, y0, w, h = rect
    counts, ink = [0] * len(colors), 0
    for y in range(max(0, y0), min(height, y0 + h)):
        line = rows[y]
        for x in range(max(0, x0), min(width, x0 + w)):
            px = line[x * bpp:x * bpp + 3]
            if px[0] < 245 or px[1] < 245 or px[2] < 245:
                ink += 1
            for k, c in enumerate(colors):
                if abs(px[0] - c[0]) <= 12 and abs(px[1] - c[1]) <= 12 and abs(px[2] - c[2]) <= 12:
                    counts[k] += 1
    return counts, ink


def attr(dom, element_id, name):
    m = re.search(r'<[^>]*\bid="' + re.escape(element_id) + r'"[^>]*>', dom)
    if not m:
        return None
    a = re.search(r'\b' + re.escape(name) + r'="([^"]*)"', m.group(0))
    return a.group(1) if a else None


def check_page(page, profile, ranks, steps, straggler, rows, stages, window=WINDOW):
    """The failures of the checks above for a report (an empty list when it is right), the DOM and the
    decoded screenshot."""
    failures = []
    shot = os.path.join(profile, "shot.png")
    if os.path.exists(shot):
        os.unlink(shot)
    # One start of the browser (the slow part): the DOM after the script ran, and the screenshot.
    dom = run_chromium(page, profile, "--dump-dom", f"--screenshot={shot}", window=window)
    html = re.search(r"<html[^>]*>", dom)
    html = html.group(0) if html else ""
    if "data-errors=" in html:
        failures.append("the page recorded errors: " + re.search(r'data-errors="([^"]*)"', html).group(1)[:500])
    if 'data-rendered="ok"' not in html:
        failures.append(f"rendering did not finish cleanly: {html[:200]}")
    cells, out_ranks = attr(dom, "heatmap-canvas", "data-cells"), attr(dom, "heatmap-canvas", "data-outlier-ranks")
    if cells != str(rows * steps):
        failures.append(f"heatmap drew {cells} cells, expected {rows} rows x {steps} steps")
    if attr(dom, "heatmap-canvas", "data-rows") != str(rows):
        failures.append(f"heatmap rows {attr(dom, 'heatmap-canvas', 'data-rows')}, expected {rows}")
    if attr(dom, "heatmap-canvas", "data-stages") != str(stages):
        failures.append(f"heatmap stage groups {attr(dom, 'heatmap-canvas', 'data-stages')}, expected {stages}")
    if out_ranks is None or str(straggler) not in out_ranks.split(","):
        failures.append(f"the straggler {straggler} is not among the heatmap's outliers ({out_ranks})")
    failures += check_marks_named(dom, page)
    if f'class="straggler-mark" data-rank="{straggler}"' not in dom:
        failures.append("no straggler mark for rank %d" % straggler)
    kair = attr(dom, "kair-canvas", "data-cells")
    groups = min(ranks, 64) if ranks <= 64 else -(-ranks // -(-ranks // 64))
    if kair != str(groups * groups):
        failures.append(f"KS matrix drew {kair} cells, expected {groups}x{groups}")
    chain, drawn = attr(dom, "chain-svg", "data-chain-paths"), dom.count('class="chain"')
    if chain is None or int(chain) < 2 or drawn != int(chain):
        failures.append(f"blame chain: {chain} arrows recorded, {drawn} drawn")
    if not re.search(r'<section[^>]*id="stopped-section"[^>]*\bhidden', dom):
        failures.append("the 'Job stopped' panel is shown for a job that did not stop")
    # The critical path of the median step over its per-rank timeline: every segment drawn, each jump too.
    segs, jumps = attr(dom, "cpath-svg", "data-segments"), attr(dom, "cpath-svg", "data-jumps")
    drawn_segs, drawn_jumps = dom.count('class="path-seg"'), dom.count('class="path-jump"')
    if segs is None or int(segs) < 1 or drawn_segs != int(segs):
        failures.append(f"critical path: {segs} segments recorded, {drawn_segs} drawn")
    elif jumps is None or drawn_jumps != int(jumps):
        failures.append(f"critical path: {jumps} jumps recorded, {drawn_jumps} drawn")
    if dom.count('class="culprit"') < 1:
        failures.append("the culprit op is not drawn on the timeline")
    timeline_rows = len(re.findall(r'<rect class="window"', dom))
    if not 2 <= timeline_rows <= 16:
        failures.append(f"timeline rows {timeline_rows}: expected 2..16")
    # Pixels.
    png = decode_png(shot)
    for element_id, want, what in (("heatmap-view", [RED], "the straggler's red"),
                                   ("chain-svg", [RED, AMBER], "the culprit's red and the collectives' amber")):
        rect = attr(dom, element_id, "data-rect")
        if not rect:
            failures.append(f"{element_id}: no position recorded")
            continue
        x, y, w, h = (int(v) for v in rect.split(","))
        if y + h > png[1]:
            failures.append(f"{element_id} ({rect}) is below the screenshot ({png[0]}x{png[1]})")
            continue
        counts, ink = region_stats(png, (x, y, w, h), want)
        if ink < 0.05 * w * h:
            failures.append(f"{element_id}: the region {rect} is nearly blank ({ink} inked pixels)")
        least = 400 if element_id == "heatmap-view" else 20  # the straggler's cells, more than its red name
        for k, n in enumerate(counts):
            if n < least:
                failures.append(f"{element_id}: {what}: colour {want[k]} found on {n} pixels")
    return failures, dom, png


def recorded_labels(dom):
    """{section id: [[kind, x, y, w, h, text], ...]} as the page recorded its labels (<section data-labels>)."""
    out = {}
    for tag in re.findall(r"<section[^>]*>", dom):
        sid, labels = re.search(r'id="([^"]+)"', tag), re.search(r'data-labels="([^"]*)"', tag)
        if sid and labels:
            out[sid.group(1)] = json.loads(htmllib.unescape(labels.group(1)))
    return out


def overlapping(boxes):
    """Pairs of boxes ([kind, x, y, w, h, text]) that overlap by more than half a pixel both ways; a bar only
    counts against a name."""
    pairs = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a[0] == "bar" and b[0] == "bar":
                continue
            if (a[1] < b[1] + b[3] - 0.5 and b[1] < a[1] + a[3] - 0.5 and a[2] < b[2] + b[4] - 0.5
                    and b[2] < a[2] + a[4] - 0.5):
                pairs.append((a, b))
    return pairs


def shown_ms(text):
    """The duration after "against" in a sentence of the page (its 3-significant-digit format), in ms."""
    m = re.search(r"against ([\d.]+) (µs|ms|s)\b", text or "")
    return float(m.group(1)) * {"µs": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)] if m else None


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def check_compare(dom, want, what):
    """The chain's comparison (#chain-compare) shows `want` ms as the peers' median."""
    text = text_of(dom, "chain-compare")
    got = shown_ms(text)
    if got is None:
        return [f"blame chain: no comparison with the peers' median shown ({text!r})"]
    if want is None or abs(got - want) > 0.006 * abs(want) + 1e-3:
        return [f"blame chain: the peers' median shown is {got} ms, {what} is {want} ms ({text!r})"]
    return []


def check_fit(dom, page, straggler, sections=("heatmap-section", "chain-section", "kair-section")):
    """No label drawn over another within each panel, step ticks apart, the chain's comparison against the peers'
    median computed here from the page's per-rank data (a trace's time outside collectives: the other ranks of
    the straggler's stage, else all others), the KS panel's first-named group holding the straggler (when there
    is one straggler rank)."""
    failures = []
    labels = recorded_labels(dom)
    for sec in sections:
        if not labels.get(sec):
            failures.append(f"{sec}: no label boxes recorded")
    for sec, boxes in labels.items():
        for a, b in overlapping(boxes)[:3]:
            failures.append(f"{sec}: label {a[0]} {a[5]!r} at {a[1:5]} overlaps {b[0]} {b[5]!r} at {b[1:5]}")
    # Step ticks apart: at least a space (4 px) between two, so that "1010" and "1012" do not read "10101012".
    ticks = sorted((b for b in labels.get("heatmap-section", []) if b[0] == "tick"), key=lambda b: b[1])
    close = [(a[5], b[5]) for a, b in zip(ticks, ticks[1:]) if b[1] - (a[1] + a[3]) < 4]
    if len(ticks) < 2 or close:
        failures.append(f"heatmap: step ticks {[t[5] for t in ticks]}: fewer than 2, or run together: {close[:3]}")
    view = embedded(page, "strata-view")
    t = view.get("timeline") or {}
    if t.get("kind") != "op_table":
        steps, busy, stages, ranks = view["steps"], view["busy_ms"], view["stages"], view["ranks"]
        late, s = ranks.index(t["late_rank"]), steps.index(t["step"])
        peers = [busy[r][s] for r in range(len(ranks)) if r != late and busy[r][s] is not None
                 and (stages is None or stages[r] == stages[late])]
        failures += check_compare(dom, median(peers) if peers else None,
                                  "the median of its peers' time outside collectives in the step")
    if straggler is None:
        return failures
    top = (attr(dom, "kair-canvas", "data-top-group") or "").split(",")
    lead = re.match(r"highest score: (?:rank (\d+)|r([\d–,]+))", text_of(dom, "kair-top") or "")
    named = set()
    if lead and lead.group(1):
        named = {int(lead.group(1))}
    elif lead:
        for run in lead.group(2).split(","):
            a, _, b = run.partition("–")
            named |= set(range(int(a), int(b or a) + 1))
    if str(straggler) not in top or straggler not in named:
        failures.append(f"KS: the first-named group {text_of(dom, 'kair-top')!r} (ranks {top}) does not hold the "
                        f"straggler {straggler}")
    # The panel draws the diagnosis's own KS score: where the straggler's evidence has one (the data-parallel
    # trace path), the top score drawn is it.
    evidence = [s.get("evidence") or {} for s in embedded(page, "strata-diagnosis").get("stragglers", [])
                if s["rank"] == straggler]
    if evidence and "ks_score" in evidence[0]:
        drawn = attr(dom, "kair-canvas", "data-top-score")
        if not drawn or not abs(float(drawn) - evidence[0]["ks_score"]) <= 1e-9:
            failures.append(f"KS: the top score drawn ({drawn}) is not the straggler's evidence's ks_score "
                            f"({evidence[0]['ks_score']})")
    return failures


def check_stage_chain(dom, page, table):
    """A slow stage's blame chain (ST): the culprit rank's op instance against the median of the same instance
    on the ranks of the other stages, read here from the op table itself."""
    diagnosis, view = embedded(page, "strata-diagnosis"), embedded(page, "strata-view")
    finding, t = diagnosis["findings"][0], view["timeline"]
    if finding["cause"] != "stage_imbalance" or t["late_rank"] not in finding["ranks"]:
        return [f"ST: expected a stage_imbalance finding drawn on one of its ranks: {finding['cause']}, {t['late_rank']}"]
    k = t["chain_op"]["index"]
    ops = {}
    with gzip.open(table, "rt") as f:
        for row in csv.DictReader(f):
            if int(row["step"]) == t["step"] and row["optype"] == t["op"]:
                ops.setdefault((int(row["rank"]), int(row["stage"])), []).append(
                    (float(row["start_ts"]), float(row["duration"]) * 1e3))
    peers = [sorted(v)[k][1] for (rank, stage), v in ops.items() if stage != finding["stage"] and len(v) > k]
    return check_compare(dom, median(peers) if peers else None,
                         f"the median of {t['op']} #{k + 1} on the {len(peers)} ranks of the other stages")


def embedded(page, element_id):
    text = open(page, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="' + element_id + r'">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def check_op_table(page, profile):
    """The failures of the op-table checks above on the AR page."""
    failures = []
    shot = os.path.join(profile, "ar.png")
    dom = run_chromium(page, profile, "--dump-dom", f"--screenshot={shot}")
    html = re.search(r"<html[^>]*>", dom).group(0)
    if "data-errors=" in html or 'data-rendered="ok"' not in html:
        failures.append(f"the page did not render cleanly: {html[:300]}")
    view = embedded(page, "strata-view")
    metric = attr(dom, "heatmap-canvas", "data-metric")
    if metric != "compute_ms":
        failures.append(f"the heatmap colours {metric!r}, expected the compute time (compute_ms)")
    matrix = view.get(metric or "", [])
    steps, ranks = len(view["steps"]), view["ranks"]
    top = sum(1 for s in range(steps) if matrix and max(range(len(ranks)), key=lambda r: matrix[r][s] or 0) == 0)
    if top < 0.95 * steps:
        failures.append(f"rank 0 has the heatmap's highest value in {top} of {steps} steps")
    if attr(dom, "heatmap-canvas", "data-outlier-ranks") != "0":
        failures.append(f"heatmap outliers {attr(dom, 'heatmap-canvas', 'data-outlier-ranks')!r}, expected rank 0 only")
    if "compute time" not in (text_of(dom, "heatmap") or ""):
        failures.append("the heatmap does not say it colours compute time")
    slowest = (attr(dom, "freq", "data-slowest") or "").split(",")[0].split(":")
    if len(slowest) != 2 or slowest[0] != "0" or float(slowest[1]) < 90:
        failures.append(f"how often slowest: {attr(dom, 'freq', 'data-slowest')!r}, expected rank 0 at >= 90 %")
    if "compute time" not in (text_of(dom, "freq") or ""):
        failures.append("the 'slowest' panel does not say it compares compute time")
    if attr(dom, "kair-canvas", "data-cells") != str(len(ranks) ** 2) or attr(dom, "kair-canvas", "data-top") != "rank 0":
        failures.append(f"KS: {attr(dom, 'kair-canvas', 'data-cells')} cells, highest score "
                        f"{attr(dom, 'kair-canvas', 'data-top')!r}, expected {len(ranks) ** 2} cells and rank 0")
    windows = len(re.findall(r'<rect class="window"', dom))
    with_ops = attr(dom, "chain-svg", "data-rows-with-ops")
    if windows < 2 or with_ops != str(windows):
        failures.append(f"blame chain: {windows} rows, {with_ops} with ops (no empty row allowed)")
    if dom.count('class="culprit"') < 1 or dom.count('class="same-op"') < 1:
        failures.append("blame chain: the straggler's culprit op or its peers' same op is not drawn")
    if int(attr(dom, "chain-svg", "data-chain-paths") or 0) < 1:
        failures.append("blame chain: no arrow from the straggler's op to its peers' same op")
    rect = attr(dom, "chain-svg", "data-rect")
    if rect:
        x, y, w, h = (int(v) for v in rect.split(","))
        counts, _ = region_stats(decode_png(shot), (x, y, w, h), [RED, BLUE])
        if min(counts) < 20:
            failures.append(f"blame chain: red / blue pixels {counts}")
    else:
        failures.append("chain-svg: no position recorded")
    return failures


def with_diagnosis(page, path, change, view_change=None):
    """Writes to `path` a copy of `page` whose embedded diagnosis is `change(diagnosis)`'s (it edits the dict in
    place), and its view `view_change(view)`'s when given (what the analysis measures for the page with such a
    diagnosis); the page's script stays as it is. Returns `path`."""
    text = open(page, encoding="utf-8").read()
    for element, edit in (("strata-diagnosis", change), ("strata-view", view_change)):
        if edit is None:
            continue
        m = re.search(r'(<script type="application/json" id="' + element + r'">)(.*?)(</script>)', text, re.S)
        data = json.loads(m.group(2))
        edit(data)
        embedded = json.dumps(data).replace("<", "\\u003c")
        text = text[:m.start(2)] + embedded + text[m.end(2):]
    open(path, "w", encoding="utf-8").write(text)
    return path


def with_layers(page, tmp):
    """A copy of `page` whose top finding carries cross-layer evidence as a recording adds it
    (analysis/diagnosis/cross_layer.cc, every measure it writes)."""
    def layer(runq, throttled, faults):
        return {"window_s": 0.803, "runq_pct": runq, "runq_other_process_pct": 0.4, "runq_idle_cpu_pct": 0.06,
                "cgroup_throttled_pct": throttled, "gc_pct": 0.0, "gc_count": 0, "uninterruptible_pct": 0.0,
                "kernel_cpu_pct": 4.02, "major_faults_per_s": faults, "memcg_limit_hits_per_s": 0.0,
                "nic_mb_per_s": None, "link_busy_pct": None, "link_capacity_mbit": None}

    peers = {"0": layer(3.81, 30.0, 2.0), "1": layer(3.5, 29.0, 2.5), "2": layer(4.0, 31.0, 1.5)}

    def change(diagnosis):
        diagnosis["findings"][0]["evidence"]["cross_layer"] = {
            "measured_over": "late steps", "straggler": layer(8.62, 30.0, 12.5), "peers": peers}

    def view_change(view):  # the peers' median of each measure, as the analysis gives it (DrawnFacts::layers)
        view["layers"] = {"finding": 0, "peers_median": {
            k: (median([p[k] for p in peers.values()]) if peers["0"][k] is not None else None) for k in peers["0"]}}
    return with_diagnosis(page, os.path.join(tmp, "layers.html"), change, view_change)


def check_layers(dom, png):
    """The layers table of a page made by with_layers: each measure with its unit (rates per second, not
    durations), the measures where the straggler stands out first, bars scaled so the straggler's excess is
    visible (8.6 % against 3.8 % is a bar twice the other, not two slivers of a 100 % scale), and the
    straggler's red in the screenshot."""
    failures = []
    table = re.search(r'<table id="layers-table"[^>]*>(.*?)</table>', dom, re.S)
    if not table or re.search(r'id="layers-section"[^>]*hidden', dom):
        failures.append("layers: the section is hidden or has no table")
        return failures
    rows = re.findall(r'<tr data-key="([^"]*)">(.*?)</tr>', table.group(1), re.S)
    keys = [k for k, _ in rows]
    cells = {k: re.findall(r"<td[^>]*>(.*?)</td>", body, re.S) for k, body in rows}
    if len(rows) != 14:
        failures.append(f"layers: {len(rows)} measures drawn, expected 14: {keys}")
    if keys[:3] != ["window_s", "major_faults_per_s", "runq_pct"]:
        failures.append(f"layers: expected the window, then the measures the straggler is furthest above its "
                        f"peers in (major faults, run queue): {keys[:3]}")
    if keys and keys[-1] not in ("nic_mb_per_s", "link_busy_pct", "link_capacity_mbit"):
        failures.append(f"layers: measures without data should come last: {keys}")
    for key, want in (("runq_pct", ["8.62 %", "3.81 %", "2.26×"]), ("major_faults_per_s", ["12.5 /s", "2 /s"]),
                      ("memcg_limit_hits_per_s", ["0 /s", "0 /s"]), ("window_s", ["803 ms", "803 ms"]),
                      ("cgroup_throttled_pct", ["30 %", "30 %", "1×"])):
        got = cells.get(key, [])
        if got[1:1 + len(want)] != want:
            failures.append(f"layers: {key}: expected {want}, got {got[1:]}")
    widths = {k: re.search(r'data-straggler-width="(\d+)" data-peers-width="(\d+)"', body) for k, body in rows}
    bars = {k: m.group(1) for k, m in widths.items() if m}
    peers = {k: m.group(2) for k, m in widths.items() if m}
    if bars.get("runq_pct") != "240" or not 100 <= int(peers.get("runq_pct", 0)) <= 110:
        failures.append(f"layers: run queue bars {bars.get('runq_pct')} / {peers.get('runq_pct')} px, expected "
                        "240 / 106 (scaled to the larger value)")
    if "window_s" in bars or "nic_mb_per_s" in bars:
        failures.append("layers: the window and measures without data should have no bars")
    rect = attr(dom, "layers-table", "data-rect")
    if not rect:
        failures.append("layers-table: no position recorded")
    else:
        x, y, w, h = (int(v) for v in rect.split(","))
        if y + h > png[1]:
            failures.append(f"layers-table ({rect}) is below the screenshot ({png[0]}x{png[1]})")
        else:
            (red,), _ = region_stats(png, (x, y, w, h), [RED])
            if red < 6 * 240:  # the bars of the measures the straggler leads in
                failures.append(f"layers-table: the straggler's red bars cover {red} pixels")
    return failures


# A hang's finding as `strata diagnose --format json` writes it (src/reports/evidence_json.cc), with a frame
# name that would be markup if the page inserted it as HTML.
HOSTILE = "Python <img src=x onerror=console.error('injected')> (evil.py:1)"  # recorded as a page error if run
HANG = {
    "cause": "hang", "layer": "python", "rank": 1, "ranks": [], "op": "Python worker (job.py:78)", "stage": None,
    "step": None, "impact_pct": 100, "confidence": 1,
    "summary": "rank 1 stopped: rank(s) 0, 2 have waited 8.0 s in all_reduce (pg0 #185) that rank 1 never entered",
    "evidence": {
        "communicator": "pg0", "seq": 185, "op": "all_reduce", "waiting_ranks": [0, 2], "missing_ranks": [1],
        "stalled_since_unix": 1795704052.247, "stalled_for_s": 8.02, "stall_threshold_s": 5.0, "ongoing": False,
        "missing": [{"rank": 1, "state": "blocked on a lock (futex)", "frame": "Python worker (job.py:78)",
                     "native_frame": "[libc.so.6]",
                     "python_stack": ["Python worker (job.py:78)", HOSTILE, "Python <module> (job.py:1)"],
                     "kernel_wait": "futex_do_wait", "since_unix": 1795704052.25, "last_completed_seq": 184,
                     "last_completed_op": "broadcast", "observed_by": "thread state"}],
        "from": "recorder: collectives"}}
MISMATCH = {
    "cause": "collective_mismatch", "layer": "comm", "rank": 1, "ranks": [0, 1, 2], "op": "broadcast",
    "stage": None, "step": None, "impact_pct": 100, "confidence": 1,
    "summary": "collective mismatch at pg0 #186: rank(s) 0, 2 called all_reduce; rank(s) 1 called broadcast",
    "evidence": {"communicator": "pg0", "seq": 186,
                 "calls": [{"op": "all_reduce", "count": None, "ranks": [0, 2]},
                           {"op": "broadcast", "count": 4096, "ranks": [1]}]}}


def with_findings(page, tmp, name, first):
    """A copy of `page` whose diagnosis starts with the findings `first`."""
    return with_diagnosis(page, os.path.join(tmp, name),
                          lambda d: d.__setitem__("findings", first + d["findings"]))


def with_stragglers(page, tmp, name, stragglers):
    """A copy of `page` whose diagnosis names the stragglers `stragglers` (its data unchanged)."""
    return with_diagnosis(page, os.path.join(tmp, name), lambda d: d.__setitem__("stragglers", stragglers))


def check_marks_named(dom, page):
    """The heatmap marks the ranks the diagnosis named late in some step, and no other (issue 50: the page
    judges no cell itself)."""
    stragglers = embedded(page, "strata-diagnosis").get("stragglers", [])
    named = sorted({s["rank"] for s in stragglers if s.get("steps")})
    marked = attr(dom, "heatmap-canvas", "data-outlier-ranks")
    marked = sorted(int(r) for r in marked.split(",") if r) if marked is not None else None
    failures = [] if marked == named else [f"the heatmap marks ranks {marked}, the diagnosis named {named} late"]
    # A row per rank (no bins): one marked cell per named (rank, step) the heatmap draws, no more.
    view = embedded(page, "strata-view")
    if attr(dom, "heatmap-canvas", "data-rows") == str(len(view["ranks"])):
        cells = {(s["rank"], st) for s in stragglers for st in s.get("steps", [])
                 if s["rank"] in view["ranks"] and st in view["steps"]}
        if attr(dom, "heatmap-canvas", "data-outlier-cells") != str(len(cells)):
            failures.append(f"{attr(dom, 'heatmap-canvas', 'data-outlier-cells')} cells marked, the diagnosis "
                            f"named {len(cells)} (rank, step) cells late")
    return failures


def text_of(dom, element_id):
    """The text of the element `element_id` (tags stripped, entities left as the DOM dump writes them)."""
    m = re.search(r'<(\w+)[^>]*\bid="' + re.escape(element_id) + r'"[^>]*>', dom)
    if not m:
        return None
    depth, i, tag = 1, m.end(), m.group(1)
    for t in re.finditer(r"<(/?)" + tag + r"\b[^>]*>", dom[m.end():]):
        depth += -1 if t.group(1) else 1
        if depth == 0:
            i = m.end() + t.start()
            break
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom[m.end():i])).strip()


def kv_rows(dom, table_id):
    """{label: value} of a two-column table of the page."""
    table = re.search(r'<table[^>]*id="' + re.escape(table_id) + r'"[^>]*>(.*?)</table>', dom, re.S)
    rows = re.findall(r"<tr[^>]*><th>(.*?)</th><td[^>]*>(.*?)</td></tr>", table.group(1) if table else "", re.S)
    return dict(rows)


def check_stopped(dom, png, mismatch):
    """The failures of the "Job stopped" panel of a page made by with_findings (hang first, or mismatch then
    hang): shown first, saying who never joined which collective, since when and how long, the missing rank's
    state, frame and stack, the waiting ranks; a mismatch's table of ranks and ops; all as text."""
    failures = []
    html = re.search(r"<html[^>]*>", dom).group(0)
    if "data-errors=" in html or 'data-rendered="ok"' not in html:
        failures.append(f"the page did not render cleanly: {html[:300]}")
    sec = re.search(r'<section[^>]*id="stopped-section"[^>]*>', dom)
    if not sec or re.search(r"\bhidden", sec.group(0)):
        return failures + ["the 'Job stopped' panel is missing or hidden"]
    want_cause = "collective_mismatch" if mismatch else "hang"
    for name, want in (("data-cause", want_cause), ("data-waiting-ranks", "0,2"), ("data-missing-ranks", "1")):
        if attr(dom, "stopped-section", name) != want:
            failures.append(f"stopped-section {name}={attr(dom, 'stopped-section', name)!r}, expected {want!r}")
    verdict = text_of(dom, "verdict") or ""
    want = ("findings the job stopped at a collective mismatch: at pg0 #186, ranks 0, 2 called all_reduce; rank 1 "
            "called broadcast of 4096 elements" if mismatch else
            "findings the job stopped: rank 1 (blocked on a lock (futex) in Python worker (job.py:78)) never joined "
            "all_reduce (pg0 #185); ranks 0, 2 waited 8.02 s in it")
    if verdict != want:
        failures.append(f"verdict {verdict!r}, expected {want!r}")
    if text_of(dom, "stopped-verdict") != "Job stopped":
        failures.append(f"the header does not say the job stopped: {text_of(dom, 'stopped-verdict')!r}")
    lead = text_of(dom, "stall-lead") or ""
    if lead != ("rank 1 never joined all_reduce (pg0 #185); ranks 0, 2 wait in it since 2026-11-26 14:40:52 UTC, "
                "for 8.02 s."):
        failures.append(f"the stall's lead sentence: {lead!r}")
    facts = kv_rows(dom, "stall-facts")
    for k, v in (("collective", "all_reduce"), ("communicator", "pg0"), ("sequence number", "185"),
                 ("waiting ranks", "0, 2"), ("missing ranks", "1"), ("stalled since", "2026-11-26 14:40:52 UTC"),
                 ("stalled for", "8.02 s"), ("stall threshold", "5 s"), ("still stalled at the end", "no")):
        if facts.get(k) != v:
            failures.append(f"stall facts: {k} = {facts.get(k)!r}, expected {v!r}")
    rank = re.search(r'<div class="missing-rank" data-rank="1">(.*?)</ol>', dom, re.S)
    body = rank.group(1) if rank else ""
    for v in ("blocked on a lock (futex)", "Python worker (job.py:78)", "futex_do_wait", "broadcast #184",
              "thread state"):
        if f"<td>{v}</td>" not in body:
            failures.append(f"the missing rank's block lacks {v!r}")
    stack = re.findall(r"<li>(.*?)</li>", body)
    if stack != ["Python worker (job.py:78)", "Python &lt;img src=x onerror=console.error('injected')&gt; (evil.py:1)",
                 "Python &lt;module&gt; (job.py:1)"]:
        failures.append(f"the Python stack, innermost first, as text: {stack}")
    if "<img" in dom:
        failures.append("a frame name became markup (an <img> element in the page)")
    if mismatch:
        table = re.search(r'<table id="mismatch-table">(.*?)</table>', dom, re.S)
        rows = re.findall(r'<tr data-op="([^"]*)" class="([^"]*)"><td[^>]*>[^<]*</td><td[^>]*>([^<]*)</td>'
                          r'<td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td></tr>', table.group(1) if table else "")
        if rows != [("all_reduce", "", "–", "–", "0, 2"), ("broadcast", "odd", "4096", "–", "1")]:
            failures.append(f"mismatch table rows {rows}")
    # Placed first, above the other panels, and drawn in red on the first screen.
    rect, heat = attr(dom, "stopped-section", "data-rect"), attr(dom, "heatmap-section", "data-rect")
    if not rect or not heat:
        return failures + ["stopped-section or heatmap-section: no position recorded"]
    x, y, w, h = (int(v) for v in rect.split(","))
    if not y + h <= int(heat.split(",")[1]) or y > 400:
        failures.append(f"the panel ({rect}) is not at the top, above the heatmap ({heat})")
    (red,), _ = region_stats(png, (x, y, w, min(h, png[1] - y)), [RED])
    if red < 2 * (w + min(h, png[1] - y)):
        failures.append(f"the panel's red frame and title cover {red} pixels")
    return failures


def report(strata, out, job, html):
    subprocess.run([strata, "diagnose", job, "--format", "html", "-o", html], check=True, capture_output=True,
                   timeout=120)
    if os.path.getsize(html) > 4 << 20:
        raise AssertionError(f"{html}: {os.path.getsize(html)} bytes: the page should stay small")


def synth(strata, out, *args):
    subprocess.run([strata, "synth", "-o", out, "--no-progress", *args], check=True, capture_output=True, timeout=120)


def check_broken_fit(pages, profile, tmp):
    """A copy of the 256-rank page that draws every label wherever it falls (no placement), and one of the ST page
    that draws every step's tick (no thinning): the fit checks must fail."""
    failed = []
    unplaced = ("if (placed.some(function (o) { return intersects(box, o[1]); })) return false;", "")
    cases = [(256, 177, [unplaced], ["overlaps"])]
    if "st" in pages:
        cases.append(("st", None, [("const every = Math.max(1, Math.ceil((tickW + 6) / cellW));", "const every = 1;")],
                      ["step ticks"]))
    for key, straggler, edits, want in cases:
        text = open(pages[key], encoding="utf-8").read()
        broken = text
        for old, new in edits:
            broken = broken.replace(old, new, 1)
        if broken == text:
            failed.append(f"could not break the {key} page's label placement (the template changed: update the test)")
            continue
        bad = os.path.join(tmp, f"unplaced-{key}.html")
        open(bad, "w", encoding="utf-8").write(broken)
        failures = check_fit(run_chromium(bad, profile, "--dump-dom"), bad, straggler)
        missing = [w for w in want if not any(w in f for f in failures)]
        print(f"{'ok' if not missing else 'FAIL'}: labels drawn without placement ({key}) fail the checks")
        if missing:
            failed.append(f"the {key} page without label placement passed the checks for: {missing}")
    return failed


def main():
    strata = os.path.abspath(sys.argv[1])
    failed = []
    with tempfile.TemporaryDirectory(prefix="strata-browser-") as tmp:
        profile = os.path.join(tmp, "profile")
        os.mkdir(profile)
        cases = [("2 ranks", ["--ranks", "2", "--fault", "slow_compute", "--fault-rank", "1"], 2, 6, 1, 2, 0),
                 ("8 ranks, pipeline of 2", ["--ranks", "8", "--pp", "2", "--fault", "slow_compute", "--fault-rank", "5"],
                  8, 6, 5, 8, 2),
                 ("256 ranks, pipeline of 4, tensor parallel 2",
                  ["--ranks", "256", "--pp", "4", "--tp", "2", "--steps", "6", "--layers", "4", "--fault", "slow_compute",
                   "--fault-rank", "177"], 256, 6, 177, 128, 4),
                 ("1024 ranks", ["--ranks", "1024", "--steps", "4", "--layers", "2", "--fault", "slow_compute",
                                 "--fault-rank", "700"], 1024, 4, 700, 128, 0)]
        pages = {}
        for name, args, ranks, steps, straggler, rows, stages in cases:
            job, html = os.path.join(tmp, f"job{ranks}"), os.path.join(tmp, f"report{ranks}.html")
            synth(strata, job, *args)
            report(strata, tmp, job, html)
            shutil.rmtree(job)
            window = WINDOW
            if ranks == 8:
                # Recorder layers: the 8-rank page given a finding with cross-layer evidence shows the
                # straggler's measures beside its peers' median (in the same browser run: tall enough for it).
                html, window = with_layers(html, tmp), (WINDOW[0], 2600)
            pages[ranks] = html
            failures, dom, png = check_page(html, profile, ranks, steps, straggler, rows, stages, window)
            print(f"{'ok' if not failures else 'FAIL'}: {name}")
            failed += [f"{name}: {f}" for f in failures]
            failures = check_fit(dom, html, straggler)
            print(f"{'ok' if not failures else 'FAIL'}: {name}: labels apart, chain against the peers' median, KS group")
            failed += [f"{name}: {f}" for f in failures]
            if ranks == 8:
                failures = check_layers(dom, png)
                print(f"{'ok' if not failures else 'FAIL'}: recorder layers, straggler against peers")
                failed += [f"{name}: {f}" for f in failures]
        # An op table.
        if os.path.exists(AR):
            html = os.path.join(tmp, "ar.html")
            report(strata, tmp, AR, html)
            failures = check_op_table(html, profile)
            print(f"{'ok' if not failures else 'FAIL'}: op table (AR): compute time, KS, the peers' same ops")
            failed += [f"op table (AR): {f}" for f in failures]
        else:
            print(f"skip: op table (AR): {AR} is absent")
        # A slow pipeline stage (ST: 8 workers, stage 3 slower on every dp rank): its chain against the other
        # stages, 32 four-digit step numbers as ticks.
        if os.path.exists(ST):
            html = pages["st"] = os.path.join(tmp, "st.html")
            report(strata, tmp, ST, html)
            dom = run_chromium(html, profile, "--dump-dom")
            failures = check_fit(dom, html, None, ("heatmap-section", "chain-section", "kair-section", "whatif-section"))
            failures += check_stage_chain(dom, html, ST)
            print(f"{'ok' if not failures else 'FAIL'}: op table (ST): labels apart, the slow stage against the others")
            failed += [f"op table (ST): {f}" for f in failures]
        else:
            print(f"skip: op table (ST): {ST} is absent")
        # A job that stopped: a hang first, then a mismatch before it.
        for name, first, mismatch in (("hang", [HANG], False), ("mismatch, then the hang", [MISMATCH, HANG], True)):
            page = with_findings(pages[8], tmp, name.split(",")[0] + ".html", first)
            dom = run_chromium(page, profile, "--dump-dom", "--screenshot=" + os.path.join(profile, "stop.png"))
            failures = check_stopped(dom, decode_png(os.path.join(profile, "stop.png")), mismatch)
            print(f"{'ok' if not failures else 'FAIL'}: job stopped panel: {name}")
            failed += [f"job stopped ({name}): {f}" for f in failures]
        # The marks are the diagnosis's: a copy naming rank 2 late in steps 3 and 4 instead of rank 5 marks rank 2
        # in those steps only (rank 5's values stand out as before), and one naming no straggler marks nothing.
        view = embedded(pages[8], "strata-view")
        for name, stragglers, cells in (("rank 2 named", [{"rank": 2, "steps": view["steps"][2:4]}], 2),
                                        ("none named", [], 0)):
            page = with_stragglers(pages[8], tmp, name.replace(" ", "-") + ".html", stragglers)
            dom = run_chromium(page, profile, "--dump-dom")
            failures = check_marks_named(dom, page)
            if attr(dom, "heatmap-canvas", "data-outlier-cells") != str(cells):
                failures.append(f"{attr(dom, 'heatmap-canvas', 'data-outlier-cells')} cells marked, expected {cells}")
            print(f"{'ok' if not failures else 'FAIL'}: heatmap marks what the diagnosis names: {name}")
            failed += [f"heatmap marks ({name}): {f}" for f in failures]
        # A broken page must fail the same checks.
        text = open(pages[8], encoding="utf-8").read()
        broken = text.replace("ctx.fillRect(label + s * cellW", "ctx.fillRectangle(label + s * cellW", 1)
        broken = broken.replace("</body>", "<script>window.notAFunction();</script></body>", 1)
        if broken == text:
            failed.append("could not break the page (the template changed: update the test)")
        bad = os.path.join(tmp, "broken.html")
        open(bad, "w", encoding="utf-8").write(broken)
        failures, _, _ = check_page(bad, profile, 8, 6, 5, 8, 2)
        want = ["recorded errors", "heatmap drew", "straggler's red"]
        missing = [w for w in want if not any(w in f for f in failures)]
        print(f"{'ok' if not missing else 'FAIL'}: a broken page fails the checks ({len(failures)} failures)")
        if missing:
            failed.append(f"the broken page passed the checks for: {missing} (failures: {failures})")
        failed += check_broken_fit(pages, profile, tmp)
    for f in failed:
        print("FAIL: " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
