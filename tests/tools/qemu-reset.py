#!/usr/bin/python3
"""Power-cycles a QEMU guest: system_reset on its monitor socket.

usage: qemu-reset.py SOCKET   (QEMU started with -monitor unix:SOCKET,server,nowait)

Waits for the monitor's prompt before sending the command and for the next
prompt after it, so the command is read before the connection closes.
Exits 0 once QEMU has taken it, 1 otherwise (what a power_cycle command of
a lab machine should do).
"""
import socket
import sys
import time


def until_prompt(s, deadline):
    buf = b""
    while not buf.rstrip().endswith(b"(qemu)"):
        s.settimeout(max(0.1, deadline - time.monotonic()))
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("the monitor closed the connection")
        buf += chunk
    return buf


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    deadline = time.monotonic() + 10
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(sys.argv[1])
            until_prompt(s, deadline)
            s.sendall(b"system_reset\n")
            until_prompt(s, deadline)
    except (OSError, ConnectionError) as e:
        print("qemu-reset: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
