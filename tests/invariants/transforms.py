#!/usr/bin/env python3
"""Input transformations of the metamorphic relations: each turns one job's files into another job's files
whose diagnosis is known from the first's (docs/invariants.md). Also a command line, so that a violation's
reproducing command can rebuild the transformed input:

  transforms.py relabel SRC DST --perm 0:3,1:2,...     rank r's file (and its rank fields) becomes rank perm[r]
  transforms.py shift SRC DST --rank R --seconds X     every ts of rank R's Kineto file + X seconds
  transforms.py drift SRC DST --rank R --ppm P         rank R's clock runs P ppm fast (its ts and dur scaled)
  transforms.py drop SRC DST --rank R                  rank R's file left out
  transforms.py members SRC DST --count N              N unknown top-level members added to each trace
  transforms.py plain SRC DST                          the same files, gzip removed
  transforms.py rename-ops SRC.csv[.gz] DST.csv --map forward-compute=fwd,...   op types renamed in an op table
  transforms.py rename-columns SRC DST --map rank=worker,...                    op-table columns renamed
  transforms.py time-unit SRC DST --scale 1000         op-table start/duration multiplied (s -> ms)
  transforms.py split SRC DST                          an op table written as one CSV per rank
  transforms.py relabel-table SRC DST --perm 0:1,...   an op table's data-parallel ranks permuted

Kineto files are edited as text (never re-serialised), so every byte not named by the transformation stays
as it was: `rank` in distributedInfo, `Process Group Ranks`, `traceName` and the file name for relabel; the
number after each "ts" for shift (added in decimal, exactly). Traces without distributedInfo (PyTorch 1.x)
take their rank from the file name, which relabel renames. Op tables are read and written with the csv
module; untouched fields are written back as read.

Invariants: relabel with the identity and shift by 0 s produce files that parse to the same events; every
transformation writes only under DST and never modifies SRC; a file it cannot transform is an error naming it.
"""
import argparse
import csv
import gzip
import io
import os
import re
import shutil
import sys
from decimal import Decimal

RANK_IN_NAME = re.compile(r"(rank[-_]?)(\d+)")
DIST_RANK = re.compile(r'("distributedInfo"\s*:\s*\{[^{}]*?"rank"\s*:\s*)(\d+)')
PG_RANKS = re.compile(r'("Process Group Ranks"\s*:\s*")\[([0-9,\s]*)\](")')
TRACE_NAME = re.compile(r'("traceName"\s*:\s*"rank-)(\d+)(")')
TS = re.compile(r'("ts"\s*:\s*)(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')
DUR = re.compile(r'("dur"\s*:\s*)(\d+(?:\.\d+)?)')


def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def write_like(src_path, dst_path, data):
    """Writes `data` to dst_path, gzip-compressed when the source file was."""
    with open(src_path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with open(dst_path, "wb") as f:
        f.write(gzip.compress(data, compresslevel=1, mtime=0) if gz else data)


def trace_files(src):
    """The per-rank trace files of a job folder, sorted (truth.json and other side files excluded)."""
    names = sorted(n for n in os.listdir(src) if re.search(r"\.json(\.gz)?$", n) and n != "truth.json")
    if not names:
        raise SystemExit(f"transforms: {src}: no trace files")
    return names


def file_rank(name, text):
    """The rank a trace claims: distributedInfo.rank, else the number in its file name."""
    m = DIST_RANK.search(text[:4096]) or DIST_RANK.search(text)
    if m:
        return int(m.group(2))
    m = RANK_IN_NAME.search(name)
    if not m:
        raise SystemExit(f"transforms: {name}: no rank in distributedInfo or in the file name")
    return int(m.group(2))


def relabel(src, dst, perm):
    """Writes SRC's rank files to DST with every rank r renamed perm[r] (file name, distributedInfo.rank,
    Process Group Ranks, traceName); truth.json's rank fields follow."""
    os.makedirs(dst, exist_ok=True)
    for name in trace_files(src):
        text = read_bytes(os.path.join(src, name)).decode("utf-8")
        r = file_rank(name, text)
        new = perm.get(r, r)
        text = DIST_RANK.sub(lambda m: m.group(1) + str(perm.get(int(m.group(2)), int(m.group(2)))), text, count=1)
        text = PG_RANKS.sub(lambda m: m.group(1) + "[" + ", ".join(
            str(x) for x in sorted(perm.get(int(t), int(t)) for t in m.group(2).split(",") if t.strip())) + "]"
            + m.group(3), text)
        text = TRACE_NAME.sub(lambda m: m.group(1) + str(perm.get(int(m.group(2)), int(m.group(2)))) + m.group(3), text)
        out_name = RANK_IN_NAME.sub(lambda m: m.group(1) + str(new), name, count=1)
        write_like(os.path.join(src, name), os.path.join(dst, out_name), text.encode("utf-8"))
    _copy_truth(src, dst, perm)


def _copy_truth(src, dst, perm):
    path = os.path.join(src, "truth.json")
    if not os.path.exists(path):
        return
    import json
    truth = json.load(open(path))
    if isinstance(truth.get("rank"), int):
        truth["rank"] = perm.get(truth["rank"], truth["rank"])
    if isinstance(truth.get("ranks"), list):
        truth["ranks"] = sorted(perm.get(r, r) for r in truth["ranks"])
    with open(os.path.join(dst, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)


def shift(src, dst, rank, seconds):
    """Copies SRC to DST, adding `seconds` to every ts of rank `rank`'s file (exact decimal arithmetic)."""
    os.makedirs(dst, exist_ok=True)
    delta = Decimal(str(seconds)) * Decimal(1000000)
    found = False
    for name in trace_files(src):
        data = read_bytes(os.path.join(src, name))
        text = data.decode("utf-8")
        if file_rank(name, text) == rank:
            found = True
            text = TS.sub(lambda m: m.group(1) + _add(m.group(2), delta), text)
            data = text.encode("utf-8")
        write_like(os.path.join(src, name), os.path.join(dst, name), data)
    if not found:
        raise SystemExit(f"transforms: {src}: no file of rank {rank}")
    _copy_truth(src, dst, {})


def drift(src, dst, rank, ppm):
    """Copies SRC to DST with rank `rank`'s clock running `ppm` parts per million fast: every ts moves away from
    the file's first ts, and every dur grows, by that factor (exact decimal arithmetic)."""
    os.makedirs(dst, exist_ok=True)
    factor = 1 + Decimal(str(ppm)) / Decimal(1000000)
    found = False
    for name in trace_files(src):
        data = read_bytes(os.path.join(src, name))
        text = data.decode("utf-8")
        if file_rank(name, text) == rank:
            found = True
            first = TS.search(text)
            t0 = Decimal(first.group(2)) if first else Decimal(0)
            text = TS.sub(lambda m: m.group(1) + _fmt(t0 + (Decimal(m.group(2)) - t0) * factor, m.group(2)), text)
            text = DUR.sub(lambda m: m.group(1) + _fmt(Decimal(m.group(2)) * factor, m.group(2)), text)
            data = text.encode("utf-8")
        write_like(os.path.join(src, name), os.path.join(dst, name), data)
    if not found:
        raise SystemExit(f"transforms: {src}: no file of rank {rank}")
    _copy_truth(src, dst, {})


def drop(src, dst, rank):
    """Copies SRC to DST without rank `rank`'s file."""
    os.makedirs(dst, exist_ok=True)
    kept = 0
    for name in trace_files(src):
        data = read_bytes(os.path.join(src, name))
        if file_rank(name, data.decode("utf-8")) != rank:
            write_like(os.path.join(src, name), os.path.join(dst, name), data)
            kept += 1
    if kept == len(trace_files(src)):
        raise SystemExit(f"transforms: {src}: no file of rank {rank}")
    _copy_truth(src, dst, {})


def _fmt(value, like):
    decimals = max(3, len(like.split(".")[1]) if "." in like else 0)
    return f"{value:.{decimals}f}"


def _add(number, delta):
    value = Decimal(number) + delta
    decimals = len(number.split(".")[1]) if "." in number and "e" not in number.lower() else 0
    return f"{value:.{decimals}f}"


def members(src, dst, count):
    """Copies SRC to DST with `count` top-level members that no trace format defines inserted at the start of
    each Kineto object file ("x_unknown_000000_...": 0, about 50 bytes each); bare-array files are copied."""
    os.makedirs(dst, exist_ok=True)
    extra = "".join(f'"x_unknown_{i:06d}_{"x" * 30}": 0, ' for i in range(count))
    for name in trace_files(src):
        data = read_bytes(os.path.join(src, name))
        text = data.decode("utf-8")
        start = len(text) - len(text.lstrip())
        if text[start:start + 1] == "{":
            data = (text[:start + 1] + extra + text[start + 1:]).encode("utf-8")
        write_like(os.path.join(src, name), os.path.join(dst, name), data)
    _copy_truth(src, dst, {})


def plain(src, dst):
    """Copies SRC's trace files to DST decompressed (name without .gz)."""
    os.makedirs(dst, exist_ok=True)
    for name in trace_files(src):
        with open(os.path.join(dst, re.sub(r"\.gz$", "", name)), "wb") as f:
            f.write(read_bytes(os.path.join(src, name)))
    _copy_truth(src, dst, {})


# ---- op tables ------------------------------------------------------------------------------------------

def read_table(path):
    text = read_bytes(path).decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise SystemExit(f"transforms: {path}: empty table")
    return rows[0], rows[1:]


def write_table(path, header, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    data = buf.getvalue().encode("utf-8")
    with open(path, "wb") as f:
        f.write(gzip.compress(data, compresslevel=1, mtime=0) if path.endswith(".gz") else data)


def column(header, name, path):
    if name not in header:
        raise SystemExit(f"transforms: {path}: no column {name}")
    return header.index(name)


def rename_ops(src, dst, mapping, col="optype"):
    """Writes SRC's op table to DST with each op type FROM renamed TO (mapping FROM -> TO)."""
    header, rows = read_table(src)
    c = column(header, col, src)
    for r in rows:
        r[c] = mapping.get(r[c], r[c])
    write_table(dst, header, rows)


def rename_columns(src, dst, mapping):
    """Writes SRC's op table to DST with its header's columns renamed (mapping old -> new)."""
    header, rows = read_table(src)
    write_table(dst, [mapping.get(h, h) for h in header], rows)


def time_unit(src, dst, scale, cols=("start_ts", "duration")):
    """Writes SRC's op table to DST with its time columns multiplied by `scale` (exact decimal arithmetic)."""
    header, rows = read_table(src)
    idx = [column(header, c, src) for c in cols]
    factor = Decimal(str(scale))
    for r in rows:
        for i in idx:
            r[i] = str((Decimal(r[i]) * factor).normalize()) if r[i] else r[i]
    write_table(dst, header, rows)


def split(src, dst):
    """Writes SRC's op table to DST as one CSV per rank (rank-<r>.csv), rows in their original order."""
    header, rows = read_table(src)
    c = column(header, "rank", src)
    by_rank = {}
    for r in rows:
        by_rank.setdefault(r[c], []).append(r)
    for rank, part in by_rank.items():
        write_table(os.path.join(dst, f"rank-{rank}.csv"), header, part)


def relabel_table(src, dst, perm):
    """Writes SRC's op table to DST with data-parallel rank d renamed perm[d]; each row's global rank becomes the
    rank of the worker at (perm[d], same stage), so the layout stays consistent."""
    header, rows = read_table(src)
    cd, cs, cr = (column(header, n, src) for n in ("dp_rank", "stage", "rank"))
    rank_at = {(r[cd], r[cs]): r[cr] for r in rows}
    for r in rows:
        d = str(perm.get(int(r[cd]), int(r[cd])))
        if (d, r[cs]) not in rank_at:
            raise SystemExit(f"transforms: {src}: no worker at dp {d} stage {r[cs]}")
        r[cd], r[cr] = d, rank_at[(d, r[cs])]
    write_table(dst, header, rows)


def parse_map(text, conv=str):
    """"a=b,c=d" or "0:3,1:2" as a dict."""
    out = {}
    for item in filter(None, text.split(",")):
        k, v = re.split(r"[=:]", item, maxsplit=1)
        out[conv(k)] = conv(v)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["relabel", "shift", "drift", "drop", "members", "plain", "rename-ops", "rename-columns", "time-unit",
                                    "split", "relabel-table"])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--perm", default="")
    p.add_argument("--map", default="")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--seconds", type=float, default=0.0)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--ppm", type=float, default=0.0)
    p.add_argument("--count", type=int, default=0)
    a = p.parse_args(argv)
    if os.path.exists(a.dst) and os.path.abspath(a.dst) != os.path.abspath(a.src):
        shutil.rmtree(a.dst) if os.path.isdir(a.dst) else os.remove(a.dst)
    {
        "relabel": lambda: relabel(a.src, a.dst, parse_map(a.perm, int)),
        "shift": lambda: shift(a.src, a.dst, a.rank, a.seconds),
        "drift": lambda: drift(a.src, a.dst, a.rank, a.ppm),
        "drop": lambda: drop(a.src, a.dst, a.rank),
        "members": lambda: members(a.src, a.dst, a.count),
        "plain": lambda: plain(a.src, a.dst),
        "rename-ops": lambda: rename_ops(a.src, a.dst, parse_map(a.map)),
        "rename-columns": lambda: rename_columns(a.src, a.dst, parse_map(a.map)),
        "time-unit": lambda: time_unit(a.src, a.dst, a.scale),
        "split": lambda: split(a.src, a.dst),
        "relabel-table": lambda: relabel_table(a.src, a.dst, parse_map(a.perm, int)),
    }[a.what]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
