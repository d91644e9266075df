"""Ending TCP connections from outside their process: the kernel's sock_diag netlink interface (SOCK_DESTROY,
what `ss -K` sends; needs CAP_NET_ADMIN and CONFIG_INET_DIAG_DESTROY).

network_contention switches its traffic off with it (helpers.py cut, fed a line by the fault rank through
network.py NetworkContention.toggle). The blaster runs at the lowest priority on the fault rank's core, so a
signal asking it to reset its own connection waited until that core was idle: a measured 2-rank job's gradient
all_reduce in the step after each fault step took 18 ms against 10-12 in the others (2026-12-06, seed 97901), its
traffic still crossing the link. The kernel's abort (tcp_abort) discards both socket buffers at once and sends the
far end a reset, whatever the blaster's scheduling.

Invariant: only the one connection named by its four addresses, in the caller's network namespace, is touched;
no such connection (not yet connected, already reset) is not an error.
"""
import errno
import ipaddress
import os
import socket
import struct

NETLINK_SOCK_DIAG = 4
SOCK_DESTROY = 21
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLMSG_ERROR = 2
ALL_TCP_STATES = 0xFFF
NLMSG_HDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
SOCKID = struct.Struct("!HH16s16s")  # sport, dport (network order), src, dst; then if, cookie[2] (host order)
SOCKID_TAIL = struct.Struct("=III")
NO_COOKIE = 0xFFFFFFFF  # INET_DIAG_NOCOOKIE: match by address only


def _request(msg_type, flags, seq, sockid_bytes):
    """An inet_diag_req_v2 for TCP over IPv4 in a netlink message."""
    body = struct.pack("=BBBxI", socket.AF_INET, socket.IPPROTO_TCP, 0, ALL_TCP_STATES) + sockid_bytes
    return NLMSG_HDR.pack(NLMSG_HDR.size + len(body), msg_type, flags, seq, 0) + body


def _messages(data):
    """(type, payload) of each netlink message in one datagram."""
    off = 0
    while off + NLMSG_HDR.size <= len(data):
        length, msg_type, _, _, _ = NLMSG_HDR.unpack_from(data, off)
        if length < NLMSG_HDR.size:
            break
        yield msg_type, data[off + NLMSG_HDR.size:off + length]
        off += (length + 3) & ~3


def _error_code(payload):
    return -struct.unpack_from("=i", payload)[0]


def _sockid(src, sport, dst, dport):
    """An inet_diag_sockid naming one IPv4 connection by its addresses (any interface, no cookie)."""
    pad = bytes(12)
    return (SOCKID.pack(int(sport), int(dport), ipaddress.IPv4Address(src).packed + pad,
                        ipaddress.IPv4Address(dst).packed + pad) + SOCKID_TAIL.pack(0, NO_COOKIE, NO_COOKIE))


def destroy_connection(src, sport, dst, dport):
    """Aborts the TCP connection src:sport -> dst:dport in this network namespace; returns whether there was one
    (the kernel finds it by its addresses: a hash lookup, where a dump walks the whole machine's socket table,
    2-4 ms here). Raises OSError when the kernel refuses (no CAP_NET_ADMIN, no CONFIG_INET_DIAG_DESTROY)."""
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, NETLINK_SOCK_DIAG)
    try:
        nl.send(_request(SOCK_DESTROY, NLM_F_REQUEST | NLM_F_ACK, 1, _sockid(src, sport, dst, dport)))
        for msg_type, payload in _messages(nl.recv(1 << 16)):
            if msg_type != NLMSG_ERROR:
                continue
            code = _error_code(payload)
            if code in (0, errno.ENOENT):  # ENOENT: no such connection (not connected, or already reset)
                return code == 0
            raise OSError(code, f"SOCK_DESTROY of {src}:{sport} -> {dst}:{dport}: {os.strerror(code)}")
        raise OSError(errno.EPROTO, "SOCK_DESTROY: no answer from the kernel")
    finally:
        nl.close()
