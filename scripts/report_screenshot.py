#!/usr/bin/python3
"""Screenshot of a `strata diagnose --format html` report for the docs: headless Chromium draws the page at
1280 CSS px wide, and the picture keeps only the named panels (the page's <section> ids, in page order), the
header always first; where panels were left out between two kept ones, a labelled rule says so. The page
records each panel's position in its data-rect attribute, which is where the crops come from. The picture
carries the page's headline saving as PNG text ("strata-saving"), which scripts/docs_screenshots.py --check
compares with the current output.

Usage: report_screenshot.py REPORT.html OUT.png [SECTION_ID ...]   (default: every panel)
Needs chromium and Debian's python3-pil (scripts/setup.sh installs both); run it with /usr/bin/python3."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from PIL import Image, ImageDraw, ImageFont, PngImagePlugin

WIDTH, HEIGHT = 1280, 6000  # CSS px; the page is taller than any report's content
GAP = 30


def chromium(page, profile, *args):
    browser = shutil.which("chromium") or sys.exit("report_screenshot: chromium is not installed")
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--force-device-scale-factor=1", f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
           *args, "file://" + os.path.abspath(page)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


def sections(dom):
    """(id, top, bottom) of every drawn panel, in page order, and the bottom of the header."""
    found = []
    for tag in re.findall(r"<section[^>]*>", dom):
        sid, rect = re.search(r'id="([^"]+)"', tag), re.search(r'data-rect="([^"]+)"', tag)
        if sid and rect:
            _, y, _, h = (int(v) for v in rect.group(1).split(","))
            found.append((sid.group(1), y, y + h))
    return sorted(found, key=lambda s: s[1])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    page, out, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory(prefix="strata-shot-") as tmp:
        dom = chromium(page, tmp, "--dump-dom")
        if 'data-rendered="ok"' not in (re.search(r"<html[^>]*>", dom) or [""])[0]:
            sys.exit(f"report_screenshot: {page} did not render cleanly (see <html data-errors>)")
        panels = sections(dom)
        if not panels:
            sys.exit(f"report_screenshot: {page}: no panels found (not a strata report?)")
        unknown = set(wanted) - {p[0] for p in panels}
        if unknown:
            sys.exit(f"report_screenshot: no drawn panel {sorted(unknown)}; panels: {[p[0] for p in panels]}")
        shot = os.path.join(tmp, "page.png")
        chromium(page, tmp, f"--screenshot={shot}")
        full = Image.open(shot).convert("RGB")
    keep = [p for p in panels if not wanted or p[0] in wanted]
    pieces, skipped_before = [(0, panels[0][1] - 8)], []  # the header, down to the first panel
    for _, top, bottom in keep:
        if len(pieces) > 1 and top - 6 < pieces[-1][1]:  # side by side with the last one (the page's grid)
            pieces[-1] = (pieces[-1][0], max(pieces[-1][1], bottom + 6))
            continue
        gap = (pieces[-1][1] if len(pieces) > 1 else panels[0][1] - 6, top - 6)
        skipped_before.append(any(p not in keep and gap[0] <= p[1] < gap[1] for p in panels))
        pieces.append((top - 6, bottom + 6))
    height = sum(b - a for a, b in pieces) + GAP * sum(skipped_before)
    picture = Image.new("RGB", (WIDTH, height), (255, 255, 255))
    draw = ImageDraw.Draw(picture)
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 13)
    except OSError:
        font = ImageFont.load_default()
    y = 0
    for k, (a, b) in enumerate(pieces):
        if k > 0 and skipped_before[k - 1]:
            mid, text = y + GAP // 2, "  panels left out of this picture  "
            draw.line((24, mid, WIDTH - 24, mid), fill=(190, 197, 208))
            w = draw.textlength(text, font=font)
            draw.rectangle((WIDTH / 2 - w / 2, mid - 9, WIDTH / 2 + w / 2, mid + 9), fill=(255, 255, 255))
            draw.text((WIDTH / 2 - w / 2, mid - 8), text, fill=(95, 107, 122), font=font)
            y += GAP
        picture.paste(full.crop((0, a, WIDTH, b)), (0, y))
        y += b - a
    info = PngImagePlugin.PngInfo()
    saving = re.search(r'<div[^>]*id="saving"[^>]*>([^<]*)</div>', dom)
    if saving:
        info.add_text("strata-saving", saving.group(1))
    picture.save(out, optimize=True, pnginfo=info)
    print(f"{out}: {WIDTH}x{height}, {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
