# SPDX-License-Identifier: BSD-3-Clause
"""A hostile sender beside a droce-perf client, against programs under droce-portd.

    portd_hostile.py WIRE_DIR IFACE VICTIM_SLOT OTHER_SLOT SLOT_BITS SECONDS

On IFACE (the client's side of the link) it sniffs the client's RDMA WRITEs to the victim
program (DestQP in VICTIM_SLOT's QPN range) to learn the victim's QPN, a PSN, VA and R_Key, then
for SECONDS sends RDMA WRITE ONLY frames posing as the client (its MAC and IP), 64 bytes of
0xEE aimed at the victim's buffer:
  - to guessed QPNs of the victim's range, with guessed R_Keys and PSNs;
  - to the victim's real QPN with guessed R_Keys and PSNs behind the one seen (duplicates:
    never executed; a PSN the responder expects would draw a NAK and end the session, a
    denial of service, not a write);
  - to guessed QPNs of OTHER_SLOT, which no program holds (the service drops them).
Prints 'hostile: learned QPN ... sent N' and exits 0, or 1 when it saw no WRITE to learn from.
Bounded: at most 20000 frames.
"""
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, sys.argv[1])
import wire  # noqa: E402  (tests/hostile/wire.py: frames byte by byte, ICRC)

iface, victim, other, bits, seconds = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5]), float(sys.argv[6])
seed = int.from_bytes(os.urandom(4), "little")
rnd = random.Random(seed)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((iface, 0))
s.settimeout(0.2)
shift = 24 - bits
seen = None
deadline = time.time() + 20
while seen is None and time.time() < deadline:
    try:
        f = s.recv(65535)
    except socket.timeout:
        continue
    p = wire.parse(f)
    if p and p["opcode"] in (wire.RC_WRITE_FIRST, wire.RC_WRITE_ONLY) and \
            p["dqpn"] >> shift == victim and "rkey" in p:
        seen = p
if seen is None:
    print("hostile: saw no RDMA WRITE to slot %d in 20 s (seed %d)" % (victim, seed))
    sys.exit(1)
qpn, psn, rkey, va = seen["dqpn"], seen["psn"], seen["rkey"], seen["va"]
pay = b"\xee" * 64


def mac(b):
    return ":".join("%02x" % x for x in b)


def frame(dqpn, fpsn, frkey):
    t = wire.bth(wire.RC_WRITE_ONLY, dqpn, fpsn & 0xFFFFFF, ackreq=1) + \
        wire.reth(va, frkey, len(pay)) + pay
    return wire.build(mac(seen["dmac"]), mac(seen["smac"]), seen["src"], seen["dst"], t,
                      sport=seen["sport"])


def guess_rkey():
    k = rnd.getrandbits(32)
    return k if k != rkey else k ^ 1


sent = 0
end = time.time() + seconds
while time.time() < end and sent < 20000:
    kind = sent % 3
    if kind == 0:
        low = rnd.getrandbits(shift) | 2
        f = frame(victim << shift | low if (victim << shift | low) != qpn else qpn ^ 4,
                  rnd.getrandbits(24), guess_rkey())
    elif kind == 1:
        f = frame(qpn, psn - 1 - rnd.randrange(1000), guess_rkey())
    else:
        f = frame(other << shift | rnd.getrandbits(shift), rnd.getrandbits(24), guess_rkey())
    s.send(f)
    sent += 1
    if sent % 64 == 0:
        time.sleep(0.005)  # a flood, not a CPU hog on a shared 2-core machine
print("hostile: learned QPN 0x%06x (slot %d) PSN %d R_Key 0x%08x VA 0x%x; sent %d WRITEs "
      "with guessed QPNs/R_Keys (seed %d)" % (qpn, victim, psn, rkey, va, sent, seed))
