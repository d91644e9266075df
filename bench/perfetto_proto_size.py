#!/usr/bin/python3
"""Size a `.perfetto-trace` of a `strata export` JSON would have, before writing one (issue 15, item 3): encodes
only the lengths of the public TracePacket format (Trace.packet=1; TracePacket timestamp=8,
trusted_packet_sequence_id=10, track_event=11, interned_data=12, track_descriptor=60; TrackEvent type=9,
track_uuid=11, name_iid=10, category_iids=3, debug_annotations=4) with varints by hand: one track descriptor
per thread, names and categories interned once, a BEGIN and an END packet per slice, counters as doubles,
a flow as a flow id on its slice. Prints the JSON's size and the estimate.
Usage: bench/perfetto_proto_size.py MERGED.json"""
import json, sys
def vl(x):  # varint length
    x = int(x) & ((1 << 64) - 1); n = 1
    while x >= 128: x >>= 7; n += 1
    return n
def field(num, payload_len):  # length-delimited field
    return vl(num << 3) + vl(payload_len) + payload_len
def vfield(num, v): return vl(num << 3) + vl(v)
if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
    print(__doc__); sys.exit(0 if len(sys.argv) == 2 else 2)
try:
    d = json.load(open(sys.argv[1])); ev = d["traceEvents"]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"perfetto_proto_size: cannot read {sys.argv[1]}: {e}")
names, cats, tracks = {}, {}, {}
total = 0; seq = 1
def packet(body, ts=None):
    global total
    b = body + vfield(10, seq) + (vfield(8, ts) if ts is not None else 0)
    total += field(1, b)
def intern(table, key, field_no):
    if key in table: return table[key], 0
    iid = len(table) + 1; table[key] = iid
    entry = vfield(1, iid) + field(2, len(key.encode()))
    return iid, field(field_no, entry)
def track(pid, tid, name=""):
    global total
    k = (pid, tid)
    if k not in tracks:
        tracks[k] = len(tracks) + 1
        desc = vfield(1, tracks[k]) + field(4, vfield(1, pid) + vfield(2, tid) + field(5, len(name.encode())))
        packet(field(60, desc))
    return tracks[k]
for e in ev:
    ph = e["ph"]
    if ph == "M":
        if e["name"] == "thread_name": track(e["pid"], e["tid"], e["args"]["name"])
        continue
    ts = round(e["ts"] * 1000)
    uuid = track(e["pid"], e["tid"])
    nid, ni = intern(names, e.get("name", ""), 2)
    cid, ci = intern(cats, e.get("cat", ""), 1)
    interned = field(12, ni + ci) if (ni or ci) else 0
    args = 0
    for k, v in (e.get("args") or {}).items():
        if ph == "C": continue
        kid, ki = intern(names, "arg:" + k, 2); interned += ki
        if isinstance(v, (int,)): args += field(4, vfield(10, kid) + vfield(4, v))
        elif isinstance(v, float): args += field(4, vfield(10, kid) + 1 + 8)
        else: args += field(4, vfield(10, kid) + field(6, len(str(v).encode())))
    if ph == "X":
        te = vfield(9, 1) + vfield(11, uuid) + vfield(10, nid) + vfield(3, cid) + args
        packet(field(11, te) + interned, ts)
        packet(field(11, vfield(9, 2) + vfield(11, uuid)), round((e["ts"] + e["dur"]) * 1000))
    elif ph in ("I", "i"):
        packet(field(11, vfield(9, 3) + vfield(11, uuid) + vfield(10, nid) + vfield(3, cid) + args) + interned, ts)
    elif ph == "C":
        packet(field(11, vfield(9, 4) + vfield(11, uuid) + 1 + 8) + interned, ts)
    elif ph in ("s", "f"):
        total += 1 + vl(e["id"])  # a flow id on the bound slice's begin event
import os
print(f"json {os.path.getsize(sys.argv[1])} bytes, protobuf ~{total} bytes")
