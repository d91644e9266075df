#!/usr/bin/env python3
"""Helper processes of the lab, started by the injectors (plain Python, no torch):

  helpers.py spin MARKER CORE NICE             a busy loop pinned to CORE (cpu_contention)
  helpers.py sink MARKER HOST PORT [PACE_FILE]  accepts connections, reads everything, sends back as fast as
                                               the link lets it, or at the rate PACE_FILE holds (read again
                                               when it changes) (network_contention, the far end)
  helpers.py blast MARKER HOST PORT [SRC_PORT [PACE_FILE]]  while on (SIGUSR2; SIGUSR1 off, the connection
                                               reset), connects to a sink (from SRC_PORT when given) and sends as
                                               fast as the link lets it, or at PACE_FILE's rate, while reading
                                               what comes back (network_contention, the fault rank's end)

  helpers.py cut MARKER SRC SPORT DST DPORT FIFO   for each line read from FIFO, aborts the TCP connection
                                               SRC:SPORT -> DST:DPORT in its network namespace (sockdiag.py;
                                               network_contention's switch-off)

MARKER is the run's prefix (strata-lab-<pid>-...): lab/cleanup.py recognises leftovers by it in the command
line. Each exits on SIGTERM. sink and blast run at the lowest priority (lowest_priority).
"""
import os
import signal
import socket
import struct
import sys
import threading
import time


def set_nice(nice):
    if nice:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
        try:  # the session's autogroup too (ranks run with the same, see ddp_job.py --nice)
            with open("/proc/self/autogroup", "w") as f:
                f.write(str(nice))
        except OSError:
            pass


def lowest_priority():
    """SCHED_IDLE (and nice 19 where that is refused): the process runs only on a CPU nothing else wants, and
    any rank that wakes on its core preempts it at once instead of waiting out its time slice."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, 0, 19)


def spin(core, nice):
    os.sched_setaffinity(0, {int(core)})
    set_nice(int(nice))
    x = 0
    while True:
        x += 1


SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)


def pace(sock, pace_file):
    """Caps what the socket sends at the rate PACE_FILE holds (Mbit/s, written by the launcher, then by the fault
    rank's tuning; absent or 0: no cap). TCP paces below the cap by itself (since Linux 4.20, no fq
    qdisc needed): the traffic takes a share of the link that the rank's tuning sets, instead of all it can."""
    if not pace_file:
        return
    try:
        with open(pace_file) as f:
            mbit = float(f.read().strip() or 0)
    except (OSError, ValueError):
        return
    if mbit > 0:
        sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("I", min(2**32 - 1, int(mbit * 1e6 / 8))))


def pump_out(sock, state=None, pace_file=None):
    """Send as fast as the link lets it, or at the cap PACE_FILE holds (read again whenever the file changes: the
    fault rank's tuning writes it while the traffic runs), until the connection fails (or state["on"] turns
    false)."""
    buf = b"\0" * (1 << 16)
    seen = None
    try:
        while state is None or state["on"]:
            if pace_file:
                stamp = os.stat(pace_file).st_mtime_ns
                if stamp != seen:
                    seen = stamp
                    pace(sock, pace_file)
            sock.sendall(buf)
    except OSError:
        pass


def pump_in(sock):
    try:
        while sock.recv(1 << 16):
            pass
    except OSError:
        pass


def both_ways(sock, pace_file=None):
    t = threading.Thread(target=pump_in, args=(sock,), daemon=True)
    t.start()
    pump_out(sock, pace_file=pace_file)


# Socket buffers of the traffic's two ends, fixed (no autotuning up to several MB): the kernel keeps sending
# what a send buffer holds, and keeps accepting into a stopped receiver's buffer, after the blaster is stopped
# (SIGSTOP at the end of a fault step). 512 KB drains in ~4 ms at 1 Gbit/s, before the next step's gradient
# all_reduce, yet keeps the link's queue full while the traffic is on. The FORCE options (root) pass
# net.core.{w,r}mem_max; without root the plain ones are capped there.
BUFFER_BYTES = 512 * 1024
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def small_buffers(sock, receive=True):
    for force, plain, wanted in ((SO_SNDBUFFORCE, socket.SO_SNDBUF, True), (SO_RCVBUFFORCE, socket.SO_RCVBUF, receive)):
        if not wanted:
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, force, BUFFER_BYTES)
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, plain, BUFFER_BYTES)


def sink(host, port, pace_file=None):
    lowest_priority()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    small_buffers(srv, receive=False)  # inherited by accepted connections
    srv.bind((host, int(port)))
    srv.listen(8)
    print("listening", flush=True)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=both_ways, args=(c, pace_file), daemon=True).start()


class Off(Exception):
    """Raised in the blaster's main thread by SIGUSR1: stop sending now."""


def abort(sock):
    """Close with a reset (SO_LINGER on, 0 s): the kernel discards what both ends' socket buffers still hold
    instead of sending it, so the link is free at once."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD)  # wakes the reading thread, whose recv would hold the socket open
    except OSError:
        pass
    sock.close()


def blast(host, port, src_port="0", pace_file=None):
    """Traffic switched by signals: SIGUSR2 on (connect to the sink, send and read as fast as the link lets
    it), SIGUSR1 off (the connection reset at once, see abort). Stopping the process instead (SIGSTOP) left
    what its socket buffers held crossing the link for the next steps (docs/accuracy.md). Starts off, after
    one connection that shows the sink is reachable. From SRC_PORT, when given, so that the fault rank can find
    the connection by its address and abort it itself (sockdiag.py: a lookup, not a walk of every socket)."""
    lowest_priority()
    state = {"on": False, "sending": False}

    def on(signum, frame):
        state["on"] = True

    def off(signum, frame):  # interrupts a blocked send; raised only inside the try below
        state["on"] = False
        if state["sending"]:
            state["sending"] = False
            raise Off()

    def connect():
        s = socket.socket()
        small_buffers(s)  # before connecting: the receive window is announced in the handshake
        if int(src_port):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("", int(src_port)))
        s.settimeout(10)
        s.connect((host, int(port)))
        s.settimeout(None)
        return s

    abort(connect())
    signal.signal(signal.SIGUSR2, on)
    signal.signal(signal.SIGUSR1, off)
    print("connected", flush=True)
    while True:
        while not state["on"]:
            signal.pause()
        s = None
        try:
            s = connect()
            threading.Thread(target=pump_in, args=(s,), daemon=True).start()
            state["sending"] = state["on"]
            pump_out(s, state, pace_file)
        except Off:
            pass
        except OSError:
            time.sleep(0.01)  # the sink went away or refused: try again while on
        finally:
            state["sending"] = False
            if s is not None:
                abort(s)


def cut(src, sport, dst, dport, fifo):
    """The blaster's off switch, done from outside it: the blaster runs at the lowest priority on the fault
    rank's core, so its own reset waited for that core to be idle, and the fault rank aborting the connection
    itself waited on the socket's lock the blaster held (0.4-3.3 ms of the rank's step, 2026-12-06). Here, at
    normal priority and on any core, the kernel's abort discards both ends' socket buffers at once."""
    import sockdiag
    with open(fifo) as lines:
        for _ in lines:
            sockdiag.destroy_connection(src, sport, dst, dport)


def main():
    mode, _marker, *rest = sys.argv[1:]
    if mode == "spin":
        spin(*rest)
    elif mode == "sink":
        sink(*rest)
    elif mode == "blast":
        blast(*rest)
    elif mode == "cut":
        cut(*rest)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
