#!/usr/bin/env python3
"""Browser test of `strata diagnose --format html` (issue 15): headless Chromium opens the report of a synthetic
job with a straggler at 8 ranks (pipeline of 2 stages) and at 1,024 ranks, and checks what it drew:
  - in the DOM (--dump-dom, after the page's script ran): no error recorded by the page (it records
    window.onerror and console.error in <html data-errors>), rendering finished (<html data-rendered="ok">),
    the heatmap drew ranks x steps cells (binned to 128 rows at 1,024 ranks; rows grouped by the 2
    pipeline stages at 8 ranks) with the straggler's cells as outliers, the KS matrix drew its cells, the blame chain drew its arrows and the culprit op;
  - in a screenshot (--screenshot, the PNG decoded here with zlib): the straggler's red is present in the
    heatmap's region, that region is not blank, and the chain's region shows the culprit's red and the
    collectives' amber.
Last, a copy of the 8-rank page broken on purpose (a script error, the heatmap's drawing call renamed) must
fail those checks: the test proves it notices a broken page.
Usage: test_html_report.py STRATA_BINARY. Exit 0 on success, 1 on a failed check (never skips: a missing
chromium is a failure)."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

RED = (0xD6, 0x27, 0x28)  # COLORS.bad in the page: outlier cells and the culprit op
AMBER = (0xF2, 0xB4, 0x47)  # COLORS.comm: collectives on the timeline
WINDOW = (1280, 1700)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("FAIL: chromium is not installed (scripts/setup.sh installs Debian's chromium)")


def run_chromium(page, profile, *args):
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--force-device-scale-factor=1", f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
           *args, "file://" + os.path.abspath(page)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def decode_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit non-interlaced RGB/RGBA PNG (what Chromium writes)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise AssertionError(f"{path}: unsupported PNG (depth {depth}, color type {color}, interlace {interlace})")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


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


def check_page(page, profile, ranks, steps, straggler, rows, stages):
    """The failures of the checks above for a report (an empty list when it is right)."""
    failures = []
    shot = os.path.join(profile, "shot.png")
    if os.path.exists(shot):
        os.unlink(shot)
    # One start of the browser (the slow part): the DOM after the script ran, and the screenshot.
    dom = run_chromium(page, profile, "--dump-dom", f"--screenshot={shot}")
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
    elif len(out_ranks.split(",")) > 3:
        failures.append(f"too many outlier ranks on a job with one straggler: {out_ranks}")
    if f'class="straggler-mark" data-rank="{straggler}"' not in dom:
        failures.append("no straggler mark for rank %d" % straggler)
    kair = attr(dom, "kair-canvas", "data-cells")
    groups = min(ranks, 64) if ranks <= 64 else -(-ranks // -(-ranks // 64))
    if kair != str(groups * groups):
        failures.append(f"KS matrix drew {kair} cells, expected {groups}x{groups}")
    chain, drawn = attr(dom, "chain-svg", "data-chain-paths"), dom.count('class="chain"')
    if chain is None or int(chain) < 2 or drawn != int(chain):
        failures.append(f"blame chain: {chain} arrows recorded, {drawn} drawn")
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
        for k, n in enumerate(counts):
            if n < 20:
                failures.append(f"{element_id}: {what}: colour {want[k]} found on {n} pixels")
    return failures


def check_layers(page, profile, tmp):
    import json
    text = open(page, encoding="utf-8").read()
    m = re.search(r'(<script type="application/json" id="strata-diagnosis">)(.*?)(</script>)', text, re.S)
    diagnosis = json.loads(m.group(2))
    layer = lambda runq, gc: {"window_s": 1.5, "runq_pct": runq, "gc_pct": gc, "gc_count": 3, "nic_mb_per_s": None}
    diagnosis["findings"][0]["evidence"]["cross_layer"] = {
        "measured_over": "late steps", "straggler": layer(41.5, 2.0),
        "peers": {"0": layer(1.0, 2.0), "1": layer(2.0, 1.0), "2": layer(3.0, 2.5)}}
    embedded = json.dumps(diagnosis).replace("<", "\\u003c")
    path = os.path.join(tmp, "layers.html")
    open(path, "w", encoding="utf-8").write(text[:m.start(2)] + embedded + text[m.end(2):])
    dom = run_chromium(path, profile, "--dump-dom")
    failures = []
    if 'data-rendered="ok"' not in (re.search(r"<html[^>]*>", dom) or [""])[0]:
        failures.append("layers page: rendering did not finish cleanly")
    table = re.search(r'<table id="layers-table">(.*?)</table>', dom, re.S)
    if not table or re.search(r'id="layers-section"[^>]*hidden', dom):
        failures.append("layers: the section is hidden or has no table")
    else:
        rows = re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)
        runq = [r for r in rows if "runq pct" in r]
        if len(rows) != 6 or not runq or "41.5 %" not in runq[0] or "2 %" not in runq[0]:
            failures.append(f"layers: expected 5 measures, runq 41.5 % against a peers' median of 2 %: {rows[:3]}")
    print(f"{'ok' if not failures else 'FAIL'}: recorder layers, straggler against peers")
    return failures


def report(strata, out, job, html):
    subprocess.run([strata, "diagnose", job, "--format", "html", "-o", html], check=True, capture_output=True,
                   timeout=120)
    if os.path.getsize(html) > 4 << 20:
        raise AssertionError(f"{html}: {os.path.getsize(html)} bytes: the page should stay small")


def synth(strata, out, *args):
    subprocess.run([strata, "synth", "-o", out, "--no-progress", *args], check=True, capture_output=True, timeout=120)


def main():
    strata = os.path.abspath(sys.argv[1])
    failed = []
    with tempfile.TemporaryDirectory(prefix="strata-browser-") as tmp:
        profile = os.path.join(tmp, "profile")
        os.mkdir(profile)
        cases = [("8 ranks, pipeline of 2", ["--ranks", "8", "--pp", "2", "--fault", "slow_compute", "--fault-rank", "5"],
                  8, 6, 5, 8, 2),
                 ("1024 ranks", ["--ranks", "1024", "--steps", "4", "--layers", "2", "--fault", "slow_compute",
                                 "--fault-rank", "700"], 1024, 4, 700, 128, 0)]
        pages = {}
        for name, args, ranks, steps, straggler, rows, stages in cases:
            job, html = os.path.join(tmp, f"job{ranks}"), os.path.join(tmp, f"report{ranks}.html")
            synth(strata, job, *args)
            report(strata, tmp, job, html)
            shutil.rmtree(job)
            pages[ranks] = html
            failures = check_page(html, profile, ranks, steps, straggler, rows, stages)
            print(f"{'ok' if not failures else 'FAIL'}: {name}")
            failed += [f"{name}: {f}" for f in failures]
        # Recorder layers: the 8-rank page with a finding carrying cross-layer evidence (as a recording adds:
        # analysis/diagnosis/cross_layer.cc) shows the straggler's measures beside its peers' median.
        failed += check_layers(pages[8], profile, tmp)
        # A broken page must fail the same checks.
        text = open(pages[8], encoding="utf-8").read()
        broken = text.replace("ctx.fillRect(label + s * cellW", "ctx.fillRectangle(label + s * cellW", 1)
        broken = broken.replace("</body>", "<script>window.notAFunction();</script></body>", 1)
        if broken == text:
            failed.append("could not break the page (the template changed: update the test)")
        bad = os.path.join(tmp, "broken.html")
        open(bad, "w", encoding="utf-8").write(broken)
        failures = check_page(bad, profile, 8, 6, 5, 8, 2)
        want = ["recorded errors", "heatmap drew", "straggler's red"]
        missing = [w for w in want if not any(w in f for f in failures)]
        print(f"{'ok' if not missing else 'FAIL'}: a broken page fails the checks ({len(failures)} failures)")
        if missing:
            failed.append(f"the broken page passed the checks for: {missing} (failures: {failures})")
    for f in failed:
        print("FAIL: " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
