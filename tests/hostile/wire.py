# SPDX-License-Identifier: BSD-3-Clause
"""RoCEv2 frames for the hostile-peer test, byte by byte, so that any field can be wrong.

build() writes Ethernet / IPv4 or IPv6 / UDP / BTH / extension headers / payload / ICRC with
every length and checksum right unless a keyword says otherwise; icrc() is IBTA Annex A17.3.3's
invariant CRC. The first frame is cross-checked against Scapy's own RoCE layers (hostile.py,
scapy_check) so that a right frame here is a right frame there. parse() reads back what the
attacker sniffs: addresses, BTH, and the RETH / AtomicETH / AETH / DETH fields.
"""
import socket
import struct
import zlib

ROCE_PORT = 4791

# IBTA 9.2.1 table 38 (those the attacks use)
RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST, RC_SEND_ONLY = 0x00, 0x01, 0x02, 0x04
RC_WRITE_FIRST, RC_WRITE_MIDDLE, RC_WRITE_LAST, RC_WRITE_ONLY = 0x06, 0x07, 0x08, 0x0A
RC_READ_REQ, RC_READ_RESP_ONLY, RC_ACK, RC_ATOMIC_ACK = 0x0C, 0x10, 0x11, 0x12
RC_CMP_SWAP, RC_FETCH_ADD = 0x13, 0x14
UD_SEND_ONLY = 0x64
CNP = 0x81

# extension headers after the BTH, per opcode (IBTA 9.3)
RETH_OPS = (RC_WRITE_FIRST, RC_WRITE_ONLY, 0x0B, RC_READ_REQ, 0x1D, 0x26, 0x2A, 0x2B)
ATOMIC_OPS = (RC_CMP_SWAP, RC_FETCH_ADD)
AETH_OPS = (0x0D, 0x0F, RC_READ_RESP_ONLY, RC_ACK, RC_ATOMIC_ACK)

# AETH syndrome (IBTA 9.3.5 table 43): NAK codes
NAK_PSN_SEQ, NAK_INVALID_REQ, NAK_REM_ACCESS, NAK_REM_OP = 0, 1, 2, 3
NAK_NAMES = {0: "PSN sequence error", 1: "Invalid Request", 2: "Remote Access Error",
             3: "Remote Operational Error", 4: "Invalid RD Request"}


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def csum16(data):
    if len(data) & 1:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def bth(opcode, dqpn, psn, pkey=0xFFFF, se=0, mig=0, pad=0, tver=0, fecn=0, becn=0, ackreq=0):
    """IBTA 9.2 Base Transport Header, 12 bytes."""
    return struct.pack("!BBHII", opcode, se << 7 | mig << 6 | (pad & 3) << 4 | (tver & 15), pkey,
                       fecn << 31 | becn << 30 | (dqpn & 0xFFFFFF),
                       ackreq << 31 | (psn & 0xFFFFFF))


def reth(va, rkey, dlen):
    return struct.pack("!QII", va & (2**64 - 1), rkey & 0xFFFFFFFF, dlen & 0xFFFFFFFF)


def atomic_eth(va, rkey, swap_add, compare=0):
    return struct.pack("!QIQQ", va & (2**64 - 1), rkey & 0xFFFFFFFF, swap_add, compare)


def aeth(syndrome, msn):
    return struct.pack("!I", (syndrome & 0xFF) << 24 | (msn & 0xFFFFFF))


def deth(qkey, sqpn):
    return struct.pack("!II", qkey & 0xFFFFFFFF, sqpn & 0xFFFFFF)


def icrc(l3, ipv6):
    """Annex A17.3.3: CRC-32 over 8 bytes of ones, then the IP/UDP/BTH/payload with the
    variant fields (IPv4 TOS, TTL, checksum / IPv6 class, flow label, hop limit; UDP
    checksum; BTH byte 4) set to ones. l3 is the IP header onwards, without the ICRC."""
    b = bytearray(l3)
    if ipv6:
        b[0] |= 0x0F
        b[1] = 0xFF
        b[2] = b[3] = 0xFF
        b[7] = 0xFF
        l4 = 40
    else:
        l4 = (b[0] & 15) * 4
        b[1] = 0xFF
        b[8] = 0xFF
        b[10] = b[11] = 0xFF
    if len(b) >= l4 + 8:
        b[l4 + 6] = b[l4 + 7] = 0xFF
    if len(b) > l4 + 12:
        b[l4 + 8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def build(dmac, smac, src, dst, transport, sport=0xC000, ttl=64, tos=0, ip_id=0,
          frag=0x4000, ip_len=None, ip_csum=None, udp_len=None, bad_icrc=False, ethertype=None):
    """One frame: transport is BTH + extension headers + payload (padded by the caller);
    src/dst are IPv4 or IPv6 text addresses. ip_len / udp_len / ip_csum / frag override."""
    ipv6 = ":" in dst
    udp_payload_len = len(transport) + 4
    udp = struct.pack("!HHHH", sport, ROCE_PORT,
                      8 + udp_payload_len if udp_len is None else udp_len, 0)
    if ipv6:
        plen = 8 + udp_payload_len if ip_len is None else ip_len
        ip = struct.pack("!IHBB", 6 << 28 | (tos & 0xFF) << 20, plen, 17, ttl) + \
            socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst)
        etype = 0x86DD
    else:
        tot = 20 + 8 + udp_payload_len if ip_len is None else ip_len
        hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, tot, ip_id, frag, ttl, 17, 0,
                          socket.inet_aton(src), socket.inet_aton(dst))
        c = csum16(hdr) if ip_csum is None else ip_csum
        ip = hdr[:10] + struct.pack("!H", c) + hdr[12:]
        etype = 0x0800
    l3 = ip + udp + transport
    crc = icrc(l3, ipv6)
    if bad_icrc:
        crc = bytes(x ^ 0xA5 for x in crc)
    eth = mac_bytes(dmac) + mac_bytes(smac) + struct.pack("!H", ethertype or etype)
    return eth + l3 + crc


def parse(f):
    """A sniffed RoCEv2 frame (untagged IPv4 or IPv6) as a dict, or None."""
    if len(f) < 14 + 20 + 8 + 12 + 4:
        return None
    etype = struct.unpack("!H", f[12:14])[0]
    if etype == 0x0800:
        ihl = (f[14] & 15) * 4
        if f[14 + 9] != 17:
            return None
        src = socket.inet_ntoa(f[26:30])
        dst = socket.inet_ntoa(f[30:34])
        l4 = 14 + ihl
    elif etype == 0x86DD:
        if f[20] != 17 or len(f) < 14 + 40 + 8 + 12 + 4:
            return None
        src = socket.inet_ntop(socket.AF_INET6, f[22:38])
        dst = socket.inet_ntop(socket.AF_INET6, f[38:54])
        l4 = 54
    else:
        return None
    sport, dport = struct.unpack("!HH", f[l4:l4 + 4])
    if dport != ROCE_PORT:
        return None
    b = l4 + 8
    op, b1, pkey, w1, w2 = struct.unpack("!BBHII", f[b:b + 12])
    p = {"dmac": f[0:6], "smac": f[6:12], "src": src, "dst": dst, "sport": sport,
         "opcode": op, "pkey": pkey, "dqpn": w1 & 0xFFFFFF, "psn": w2 & 0xFFFFFF,
         "ackreq": w2 >> 31, "pad": (b1 >> 4) & 3, "len": len(f)}
    e = b + 12
    if op in RETH_OPS and len(f) >= e + 16:
        p["va"], p["rkey"], p["dlen"] = struct.unpack("!QII", f[e:e + 16])
    elif op in ATOMIC_OPS and len(f) >= e + 28:
        p["va"], p["rkey"], p["swap_add"], p["compare"] = struct.unpack("!QIQQ", f[e:e + 28])
    elif op in AETH_OPS and len(f) >= e + 4:
        a = struct.unpack("!I", f[e:e + 4])[0]
        p["syndrome"], p["msn"] = a >> 24, a & 0xFFFFFF
    elif op == UD_SEND_ONLY and len(f) >= e + 8:
        p["qkey"], sq = struct.unpack("!II", f[e:e + 8])
        p["sqpn"] = sq & 0xFFFFFF
    return p
