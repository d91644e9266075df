#!/usr/bin/env python3
"""Helper processes of the lab, started by the injectors (plain Python, no torch):

  helpers.py spin MARKER CORE NICE             a busy loop pinned to CORE (cpu_contention)
  helpers.py sink MARKER HOST PORT             accepts connections, reads everything, sends back as fast as
                                               the link lets it (network_contention, the far end)
  helpers.py blast MARKER HOST PORT [SECONDS]  connects to a sink and sends as fast as the link lets it while
                                               reading what comes back (network_contention, the fault rank's end)

MARKER is the run's prefix (strata-lab-<pid>-...): lab/cleanup.py recognises leftovers by it in the command
line. Each exits on SIGTERM.
"""
import os
import socket
import sys
import threading


def set_nice(nice):
    if nice:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
        try:  # the session's autogroup too (ranks run with the same, see ddp_job.py --nice)
            with open("/proc/self/autogroup", "w") as f:
                f.write(str(nice))
        except OSError:
            pass


def spin(core, nice):
    os.sched_setaffinity(0, {int(core)})
    set_nice(int(nice))
    x = 0
    while True:
        x += 1


def pump_out(sock):
    buf = b"\0" * (1 << 16)
    try:
        while True:
            sock.sendall(buf)
    except OSError:
        pass


def pump_in(sock):
    try:
        while sock.recv(1 << 16):
            pass
    except OSError:
        pass


def both_ways(sock):
    t = threading.Thread(target=pump_in, args=(sock,), daemon=True)
    t.start()
    pump_out(sock)


def sink(host, port):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
    srv.listen(8)
    print("listening", flush=True)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=both_ways, args=(c,), daemon=True).start()


def blast(host, port):
    s = socket.create_connection((host, int(port)), timeout=10)
    s.settimeout(None)
    print("connected", flush=True)
    both_ways(s)


def main():
    mode, _marker, *rest = sys.argv[1:]
    if mode == "spin":
        spin(*rest)
    elif mode == "sink":
        sink(*rest)
    elif mode == "blast":
        blast(*rest)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
