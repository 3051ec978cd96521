# SPDX-License-Identifier: BSD-3-Clause
"""RoCEv2 frames built from scratch, ICRC included, written independently of the C stack."""
import struct
import zlib


def ipv4_csum(hdr):
    """RFC 1071 ones' complement sum, folded and inverted."""
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def roce_icrc(l3, ver):
    """IBTA A17.3.3 over a packet from its IP header, ICRC excluded: variant fields set to ones."""
    m = bytearray(l3)
    if ver == 4:
        ihl = (m[0] & 0x0F) * 4
        m[1] = 0xFF	# ToS
        m[8] = 0xFF	# TTL
        m[10:12] = b"\xff\xff"	# header checksum
    else:
        ihl = 40
        m[0:4] = bytes([m[0] | 0x0F, 0xFF, 0xFF, 0xFF])	# traffic class, flow label
        m[7] = 0xFF	# hop limit
    m[ihl + 6:ihl + 8] = b"\xff\xff"	# UDP checksum
    m[ihl + 12] = 0xFF	# BTH FECN, BECN, resv6
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF)


def udp6_csum(sip, dip, udp):
    data = sip + dip + struct.pack("!IxxxB", len(udp), 17) + udp + b"\0" * (len(udp) & 1)
    c = ipv4_csum(data)
    return c if c != 0 else 0xFFFF


def v4_frame(opcode, ext=b"", payload=b"", bth_flags=0, pkey=0xFFFF, fb=0, dqpn=0xABC,
             ackreq=False, psn=77, tos=0x02, sport=0xC123):
    """Ethernet/IPv4/UDP/BTH frame: bth_flags = SE, MigReq (PadCnt is computed), fb = FECN, BECN
    in the top two bits of BTH byte 4."""
    pad = -len(payload) % 4
    bth = struct.pack("!BBHII", opcode, bth_flags | (pad << 4), pkey, (fb << 24) | dqpn,
                      (0x80000000 if ackreq else 0) | psn)
    l4 = bth + ext + payload + b"\0" * pad
    udp = struct.pack("!HHHH", sport, 4791, 8 + len(l4) + 4, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(udp) + len(l4) + 4, 0x1234,
                               0x4000, 64, 17, 0, bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2])))
    ip[10:12] = struct.pack("!H", ipv4_csum(bytes(ip)))
    l3 = bytes(ip) + udp + l4
    return bytearray(b"\x52\x54\x00\xc6\x00\x02\x52\x54\x00\xc6\x00\x01\x08\x00" + l3 +
                     roce_icrc(l3, 4))
