#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rxe-peer: run one command in an rxe guest through its agent (guest-agent.sh), as if local.

  rxe-peer.py [-t SECS] [-p PORT] GUEST_ADDR COMMAND [ARG...]

The command's stdout and stderr come back as its own, and its exit status as this one's (255:
the guest could not be reached or the answer was cut). The guest kills the command after SECS
seconds (default 300), or as soon as this process goes (the connection closes): a program left
behind in the guest would go on retrying at the next one. This is the --peer prefix
droce-interop is given for an rxe guest.
"""
import shlex
import socket
import sys


def main(argv):
    secs, port = 300, 7000
    while argv and argv[0] in ("-t", "-p"):
        if argv[0] == "-t":
            secs = int(argv[1])
        else:
            port = int(argv[1])
        argv = argv[2:]
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    addr, cmd = argv[0], argv[1:]
    try:
        s = socket.create_connection((addr, port), timeout=10)
    except OSError as e:
        print("rxe-peer: %s:%d: %s" % (addr, port, e), file=sys.stderr)
        return 255
    # the guest answers when the command ends: no read timeout beyond its own bound
    s.settimeout(secs + 60)
    s.sendall(("%d %s\n" % (secs, shlex.join(cmd))).encode())
    buf = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            buf += b
    except OSError as e:
        print("rxe-peer: %s: %s" % (addr, e), file=sys.stderr)
        return 255
    out = {}
    for tag in (b"O", b"E"):
        nl = buf.find(b"\n")
        head = buf[:nl].split()
        if nl < 0 or len(head) != 2 or head[0] != tag:
            print("rxe-peer: %s: answer cut short" % addr, file=sys.stderr)
            return 255
        n = int(head[1])
        out[tag], buf = buf[nl + 1:nl + 1 + n], buf[nl + 1 + n:]
    sys.stdout.buffer.write(out[b"O"])
    sys.stdout.flush()
    sys.stderr.buffer.write(out[b"E"])
    sys.stderr.flush()
    head = buf.split()
    if len(head) != 2 or head[0] != b"R":
        print("rxe-peer: %s: no exit status" % addr, file=sys.stderr)
        return 255
    return int(head[1])


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
