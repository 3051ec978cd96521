# SPDX-License-Identifier: BSD-3-Clause
"""
RoCEv2 layers that Debian's Scapy 2.5 (scapy.contrib.roce) lacks, written from IBTA Vol 1 9.3
(extension header formats), and the IPv6 ICRC its BTH leaves at zero (Annex A17.3.3).

scapy.contrib.roce provides BTH (with the IPv4 ICRC), AETH, CNPPadding and binds AETH to the
ACK opcode only. This module adds DETH, RETH, AtomicETH, AtomicAckETH, ImmDt and IETH, binds
every extension header to the opcodes that carry it, and chains the second header of the
opcodes that have two (RETH+ImmDt, DETH+ImmDt, AETH+AtomicAckETH).

Import it with /usr/bin/python3 (the only interpreter that sees python3-scapy).
"""
from zlib import crc32

from scapy.compat import raw
from scapy.fields import BitField, ByteField, IntField, XIntField, XLongField
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import Packet, Raw, bind_layers
from scapy.contrib.roce import AETH, BTH, CNPPadding


class DETH(Packet):
    """IBTA 9.3.3 Datagram Extended Transport Header: Q_Key, reserved, source QP."""
    name = "DETH"
    fields_desc = [XIntField("qkey", 0), ByteField("reserved", 0), BitField("sqpn", 0, 24)]


class RETH(Packet):
    """IBTA 9.3.4 RDMA Extended Transport Header: virtual address, R_Key, DMA length."""
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dlen", 0)]


class AtomicETH(Packet):
    """IBTA 9.3.5 Atomic Extended Transport Header."""
    name = "AtomicETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), XLongField("swap_add", 0),
                   XLongField("compare", 0)]


class AtomicAckETH(Packet):
    """IBTA 9.3.7 Atomic Acknowledge Extended Transport Header: original remote data."""
    name = "AtomicAckETH"
    fields_desc = [XLongField("orig", 0)]


class ImmDt(Packet):
    """IBTA 9.3.8 Immediate Data Extended Transport Header."""
    name = "ImmDt"
    fields_desc = [XIntField("imm", 0)]


class IETH(Packet):
    """IBTA 9.3.9 Invalidate Extended Transport Header: the R_Key to invalidate."""
    name = "IETH"
    fields_desc = [XIntField("rkey", 0)]


# Opcodes (IBTA 9.2.1 table 38; CNP: Annex A17.9.3), written independently of droce's table so
# the generator can check the two agree: name, extension headers in wire order, message
# position (first/middle/last/only) and whether the opcode may carry payload.
OPCODES = {
    0x00: ("RC_SEND_FIRST", (), "first", True),
    0x01: ("RC_SEND_MIDDLE", (), "middle", True),
    0x02: ("RC_SEND_LAST", (), "last", True),
    0x03: ("RC_SEND_LAST_WITH_IMMEDIATE", (ImmDt,), "last", True),
    0x04: ("RC_SEND_ONLY", (), "only", True),
    0x05: ("RC_SEND_ONLY_WITH_IMMEDIATE", (ImmDt,), "only", True),
    0x06: ("RC_RDMA_WRITE_FIRST", (RETH,), "first", True),
    0x07: ("RC_RDMA_WRITE_MIDDLE", (), "middle", True),
    0x08: ("RC_RDMA_WRITE_LAST", (), "last", True),
    0x09: ("RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", (ImmDt,), "last", True),
    0x0A: ("RC_RDMA_WRITE_ONLY", (RETH,), "only", True),
    0x0B: ("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", (RETH, ImmDt), "only", True),
    0x0C: ("RC_RDMA_READ_REQUEST", (RETH,), "only", False),
    0x0D: ("RC_RDMA_READ_RESPONSE_FIRST", (AETH,), "first", True),
    0x0E: ("RC_RDMA_READ_RESPONSE_MIDDLE", (), "middle", True),
    0x0F: ("RC_RDMA_READ_RESPONSE_LAST", (AETH,), "last", True),
    0x10: ("RC_RDMA_READ_RESPONSE_ONLY", (AETH,), "only", True),
    0x11: ("RC_ACKNOWLEDGE", (AETH,), "only", False),
    0x12: ("RC_ATOMIC_ACKNOWLEDGE", (AETH, AtomicAckETH), "only", False),
    0x13: ("RC_COMPARE_SWAP", (AtomicETH,), "only", False),
    0x14: ("RC_FETCH_ADD", (AtomicETH,), "only", False),
    0x16: ("RC_SEND_LAST_WITH_INVALIDATE", (IETH,), "last", True),
    0x17: ("RC_SEND_ONLY_WITH_INVALIDATE", (IETH,), "only", True),
    0x1D: ("RC_ATOMIC_WRITE", (RETH,), "only", True),  # IBTA 1.5
    0x20: ("UC_SEND_FIRST", (), "first", True),
    0x21: ("UC_SEND_MIDDLE", (), "middle", True),
    0x22: ("UC_SEND_LAST", (), "last", True),
    0x23: ("UC_SEND_LAST_WITH_IMMEDIATE", (ImmDt,), "last", True),
    0x24: ("UC_SEND_ONLY", (), "only", True),
    0x25: ("UC_SEND_ONLY_WITH_IMMEDIATE", (ImmDt,), "only", True),
    0x26: ("UC_RDMA_WRITE_FIRST", (RETH,), "first", True),
    0x27: ("UC_RDMA_WRITE_MIDDLE", (), "middle", True),
    0x28: ("UC_RDMA_WRITE_LAST", (), "last", True),
    0x29: ("UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", (ImmDt,), "last", True),
    0x2A: ("UC_RDMA_WRITE_ONLY", (RETH,), "only", True),
    0x2B: ("UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", (RETH, ImmDt), "only", True),
    0x64: ("UD_SEND_ONLY", (DETH,), "only", True),
    0x65: ("UD_SEND_ONLY_WITH_IMMEDIATE", (DETH, ImmDt), "only", True),
    0x81: ("CNP", (CNPPadding,), "only", False),
}


def _bth_opcode(layer):
    """Opcode of the BTH below an extension header, or None."""
    u = layer.underlayer
    while u is not None and not isinstance(u, BTH):
        u = u.underlayer
    return None if u is None else u.opcode


def _next_ext(self, payload):
    """Dissection: the header that follows self for this packet's opcode, else Raw."""
    exts = OPCODES.get(_bth_opcode(self), (None, ()))[1]
    for i, cls in enumerate(exts[:-1]):
        if isinstance(self, cls):
            return exts[i + 1]
    return Raw


for _cls in (DETH, RETH, AtomicETH, AtomicAckETH, ImmDt, IETH, AETH, CNPPadding):
    _cls.guess_payload_class = _next_ext

for _op, (_name, _exts, _pos, _pay) in OPCODES.items():
    if _exts and _op not in (0x11, 0x81):	# contrib.roce binds ACK->AETH and CNP itself
        bind_layers(BTH, _exts[0], opcode=_op)


# IPv6 ICRC (IBTA A17.3.3): contrib.roce computes it for IPv4 only and returns 0 for IPv6. The
# invariant fields masked to ones for IPv6 are traffic class, flow label and hop limit; the UDP
# checksum and BTH byte 4 (FECN, BECN, reserved) are masked as for IPv4.
_scapy_compute_icrc = BTH.compute_icrc


def _compute_icrc(self, p):
    udp = self.underlayer
    ip = udp.underlayer if isinstance(udp, UDP) else None
    if not isinstance(ip, IPv6):
        return _scapy_compute_icrc(self, p)
    pshdr = Raw(b"\xff" * 8) / ip.copy()
    pshdr[IPv6].tc = 0xFF
    pshdr[IPv6].fl = 0xFFFFF
    pshdr[IPv6].hlim = 0xFF
    pshdr[UDP].chksum = 0xFFFF
    pshdr[BTH].fecn = 1
    pshdr[BTH].becn = 1
    pshdr[BTH].resv6 = 0x3F
    bth = pshdr[BTH].self_build()
    payload = raw(pshdr[BTH].payload)
    # A placeholder ICRC so that the IPv6 payload length and UDP length come out right.
    pshdr[UDP].payload = Raw(bth + payload + b"\xff\xff\xff\xff")
    return self.pack_icrc(crc32(raw(pshdr)[:-4]) & 0xFFFFFFFF)


BTH.compute_icrc = _compute_icrc
