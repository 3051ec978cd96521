#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Golden RoCEv2 vectors built with Scapy (run with /usr/bin/python3).

Writes into OUTDIR:
  golden_rc.pcap golden_uc.pcap golden_ud.pcap golden_cnp.pcap  good packets, every opcode of
      DROCE_OPCODE_LIST, IPv4/IPv6, with and without 802.1Q, payloads 0 1 3 4 1024 4096
  golden_broken.pcap      malformed frames, each with the drop reason droce must give
  golden_rx.pcap          valid frames droce's builder never writes (Ethernet padding, FCS,
                          UDP checksum on IPv4, none on IPv6, DF clear): droce must accept them
  golden_expect.jsonl     one line per packet: file, n, status, reason, icrc_ok and the fields
                          Scapy decodes from the written bytes, named as struct droce_pkt members
  golden_*.spec           (with --spec) one good packet per line as key=value pairs for
                          tests/golden/golden_build.c, which rebuilds it with droce_build()

Everything is a function of a fixed seed and fixed timestamps: regenerating gives the same bytes.
"""
import argparse
import ipaddress
import json
import os
import random
import re
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roce_layers as rl  # noqa: E402
from scapy.compat import raw  # noqa: E402
from scapy.contrib.roce import AETH, BTH, CNPPadding  # noqa: E402
from scapy.layers.inet import IP, UDP, TCP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Dot1Q, Ether  # noqa: E402
from scapy.packet import Padding, Raw  # noqa: E402

SEED = 20261129
TS_BASE = 1767225600		# 2026-01-01 00:00:00 UTC; packet k of a file is at TS_BASE + k s
ROCE_PORT = 4791
GOOD_FILES = ("golden_rc.pcap", "golden_uc.pcap", "golden_ud.pcap", "golden_cnp.pcap")
BROKEN_FILE = "golden_broken.pcap"
RX_FILE = "golden_rx.pcap"

# Which fields each extension header contributes (struct droce_pkt names -> layer attribute).
EXT_FIELDS = {
    rl.DETH: (("deth_qkey", "qkey"), ("deth_sqpn", "sqpn")),
    rl.RETH: (("reth_va", "va"), ("reth_rkey", "rkey"), ("reth_len", "dlen")),
    rl.AtomicETH: (("atomic_va", "va"), ("atomic_rkey", "rkey"),
                   ("atomic_swap_add", "swap_add"), ("atomic_compare", "compare")),
    AETH: (("aeth_syn", "syndrome"), ("aeth_msn", "msn")),
    rl.AtomicAckETH: (("atomic_orig", "orig"),),
    rl.ImmDt: (("imm", "imm"),),
    rl.IETH: (("ieth_rkey", "rkey"),),
    CNPPadding: (),
}


def droce_opcodes(path):
    """{value: name} from DROCE_OPCODE_LIST in stack/droce_opcode.h."""
    text = open(path).read()
    body = text[text.index("#define DROCE_OPCODE_LIST"):]
    body = body[:body.index("\n\n")].replace("\\\n", " ")
    return {int(v, 16): n for n, v in re.findall(r"X\((\w+),\s*(0x[0-9A-Fa-f]+),", body)}


def droce_drops(path):
    """Reason names of DROCE_DROP_LIST in stack/droce_drop.h."""
    text = open(path).read()
    body = text[text.index("#define DROCE_DROP_LIST"):]
    body = body[:body.index("\n\n")].replace("\\\n", " ")
    return re.findall(r"X\((\w+),\s*\w+,", body)


def gid_text(addr):
    """IPv4 or IPv6 text -> GID text (IPv4 as ::ffff:a.b.c.d)."""
    a = ipaddress.ip_address(addr)
    if a.version == 4:
        a = ipaddress.IPv6Address("::ffff:" + str(a))
    return str(a)


def wire_icrc(frame):
    """The ICRC as droce_icrc_get() reads it: the last four bytes, least significant first."""
    return struct.unpack("<I", frame[-4:])[0]


# ---------------------------------------------------------------------------------------------
# Packets from a field dictionary (struct droce_pkt names) and back.

def build(f, payload=b"", pad=None, bth_over=None, ip_over=None, udp_over=None, exts=None):
    """A Scapy packet from fields f; the *_over dictionaries override Scapy fields verbatim
    (to make broken packets); exts replaces the extension headers and payload entirely."""
    op = f["opcode"]
    pl = Ether(dst=f["dmac"], src=f["smac"])
    if f["has_vlan"]:
        tci = f["vlan_tci"]
        pl = pl / Dot1Q(prio=tci >> 13, id=(tci >> 12) & 1, vlan=tci & 0xFFF)
    if f["ip_ver"] == 4:
        ip = IP(src=str(ipaddress.IPv6Address(f["sgid"]).ipv4_mapped),
                dst=str(ipaddress.IPv6Address(f["dgid"]).ipv4_mapped),
                tos=f["tclass"], ttl=f["hop_limit"], id=f["ip_id"], flags="DF")
        udp = UDP(sport=f["udp_sport"], dport=ROCE_PORT, chksum=0)
    else:
        ip = IPv6(src=f["sgid"], dst=f["dgid"], tc=f["tclass"], fl=f["flow_label"],
                  hlim=f["hop_limit"])
        udp = UDP(sport=f["udp_sport"], dport=ROCE_PORT)
    for k, v in (ip_over or {}).items():
        setattr(ip, k, v)
    for k, v in (udp_over or {}).items():
        setattr(udp, k, v)
    if pad is None:
        pad = (4 - len(payload) % 4) % 4
    bth = BTH(opcode=op, solicited=int(f["se"]), migreq=int(f["mig"]), padcount=pad,
              pkey=f["pkey"], fecn=int(f["fecn"]), becn=int(f["becn"]), dqpn=f["dqpn"],
              ackreq=int(f["ackreq"]), psn=f["psn"])
    for k, v in (bth_over or {}).items():
        setattr(bth, k, v)
    pkt = pl / ip / udp / bth
    if exts is not None:
        return pkt / exts if exts else pkt
    for cls in rl.OPCODES[op][1]:
        pkt = pkt / cls(**{attr: f[name] for name, attr in EXT_FIELDS[cls]})
    data = payload + b"\0" * pad
    return pkt / Raw(data) if data else pkt


def decode(frame, upto="all"):
    """The fields Scapy decodes from frame, named as struct droce_pkt members. upto limits them
    to the layers a broken packet still has intact: "l2", "udp" (L2, IP, UDP), "bth" or "all"."""
    p = Ether(frame)
    d = {"dmac": p.dst, "smac": p.src, "has_vlan": Dot1Q in p}
    q = p[Dot1Q] if d["has_vlan"] else None
    d["vlan_tci"] = (q.prio << 13 | q.id << 12 | q.vlan) if q else 0
    l3_off = 18 if d["has_vlan"] else 14
    d["l3_off"] = l3_off
    if upto == "l2":
        return d
    if IP in p:
        ip = p[IP]
        d.update(ip_ver=4, tclass=ip.tos, hop_limit=ip.ttl, flow_label=0, ip_id=ip.id,
                 sgid=gid_text(ip.src), dgid=gid_text(ip.dst))
        l4_off = l3_off + ip.ihl * 4
    else:
        ip = p[IPv6]
        d.update(ip_ver=6, tclass=ip.tc, hop_limit=ip.hlim, flow_label=ip.fl, ip_id=0,
                 sgid=gid_text(ip.src), dgid=gid_text(ip.dst))
        l4_off = l3_off + 40
    u = p[UDP]
    d.update(l4_off=l4_off, udp_sport=u.sport, udp_csum=u.chksum)
    if upto == "udp":
        return d
    d["bth_off"] = l4_off + 8
    b = p[BTH]
    d.update(opcode=b.opcode, se=bool(b.solicited), mig=bool(b.migreq), padcnt=b.padcount,
             tver=b.version, pkey=b.pkey, fecn=bool(b.fecn), becn=bool(b.becn), dqpn=b.dqpn,
             ackreq=bool(b.ackreq), psn=b.psn,
             icrc=struct.unpack("<I", struct.pack(">I", b.icrc))[0],
             frame_len=l3_off + (ip.len if IP in p else 40 + ip.plen))
    if upto == "bth":
        return d
    hlen = 12
    layer = b.payload
    for cls in rl.OPCODES[b.opcode][1]:
        if not isinstance(layer, cls):
            raise ValueError("opcode 0x%02x: expected %s, Scapy found %s" %
                             (b.opcode, cls.__name__, layer.__class__.__name__))
        for name, attr in EXT_FIELDS[cls]:
            d[name] = getattr(layer, attr)
        hlen += len(cls())
        layer = layer.payload
    # Ethernet padding after the IP datagram is Scapy's Padding, a Raw subclass: not payload.
    data = layer.load if isinstance(layer, Raw) and not isinstance(layer, Padding) else b""
    d.update(pay_off=l4_off + 8 + hlen, pay_len=len(data) - b.padcount)
    return d


# ---------------------------------------------------------------------------------------------
# Field values.

class Fields:
    """Deterministic field values that sweep the interesting corners."""
    PSNS = (0xFFFFFF, 0xFFFFFE, 0x000000, 0x000001, 0x7FFFFF, 0x800000)
    PKEYS = (0xFFFF, 0xFFFF, 0x7FFF, 0x8001, 0x1234)
    HOPS = (64, 255, 1, 128)
    SYNS = (0x1F, 0x00, 0x0A, 0x2E, 0x20, 0x60, 0x61, 0x62, 0x63)

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.k = 0

    def bits(self, n):
        return self.r.getrandbits(n)

    def base(self, op, ip_ver, vlan):
        r, k = self.r, self.k
        self.k += 1
        f = {"opcode": op, "has_vlan": vlan, "ip_ver": ip_ver}
        f["dmac"] = "02:00:%02x:%02x:%02x:%02x" % tuple(r.getrandbits(8) for _ in range(4))
        f["smac"] = "52:54:00:%02x:%02x:%02x" % tuple(r.getrandbits(8) for _ in range(3))
        # PCP 0-7, DEI both ways, VID 1..4094.
        f["vlan_tci"] = ((k % 8) << 13 | ((k // 8) % 2) << 12 | (1 + self.bits(12) % 4094)
                         if vlan else 0)
        # DSCP anything, ECN through Not-ECT, ECT(1), ECT(0), CE.
        f["tclass"] = self.bits(6) << 2 | (k % 4)
        f["hop_limit"] = self.HOPS[k % len(self.HOPS)]
        if ip_ver == 4:
            f["sgid"] = gid_text("198.18.%d.%d" % (self.bits(8), 1 + self.bits(7)))
            f["dgid"] = gid_text("198.19.%d.%d" % (self.bits(8), 1 + self.bits(7)))
            f["flow_label"], f["ip_id"] = 0, self.bits(16)
        else:
            f["sgid"] = str(ipaddress.IPv6Address((0xFD00 << 112) | self.bits(112)))
            f["dgid"] = str(ipaddress.IPv6Address((0x2001_0DB8 << 96) | self.bits(96)))
            f["flow_label"], f["ip_id"] = self.bits(20), 0
        f["udp_sport"] = 0xC000 | self.bits(14)
        f["se"] = bool(self.bits(1))
        f["mig"] = bool(self.bits(1))
        f["pkey"] = self.PKEYS[k % len(self.PKEYS)]
        f["fecn"] = k % 5 == 1
        f["becn"] = k % 3 == 2
        f["dqpn"] = (0xFFFFFF, 0x000001)[k % 2] if k % 7 == 0 else self.bits(24)
        f["ackreq"] = bool(self.bits(1))
        f["psn"] = self.PSNS[k % len(self.PSNS)] if k % 4 else self.bits(24)
        for cls in rl.OPCODES[op][1]:
            for name, _ in EXT_FIELDS[cls]:
                f[name] = self.ext(name, k)
        if op == 0x81:
            # A17.9.3: the CNP as ConnectX sends it (DSCP 48, P_Key default, BECN, PSN 0).
            f.update(pkey=0xFFFF, becn=True, fecn=False, se=False, mig=False, ackreq=False,
                     psn=0, tclass=48 << 2 | (k % 4))
        return f

    def ext(self, name, k):
        if name == "aeth_syn":
            return self.SYNS[k % len(self.SYNS)]
        if name in ("aeth_msn", "deth_sqpn"):
            return self.bits(24)
        if name == "deth_qkey":
            return 0x11111111 if k % 3 == 0 else self.bits(32)
        if name in ("reth_va", "atomic_va", "atomic_swap_add", "atomic_compare", "atomic_orig"):
            return self.bits(64) if k % 5 else 0xFFFFFFFFFFFFFFF8
        return self.bits(32)

    def payload(self, n):
        return bytes(self.bits(8) for _ in range(n))


COMBOS = ((4, False), (6, True), (4, True), (6, False))


def good_packets(fv):
    """{file: [(fields, payload)]} covering every opcode in every IP/VLAN combination."""
    out = {name: [] for name in GOOD_FILES}
    for op, (name, exts, pos, has_pay) in sorted(rl.OPCODES.items()):
        if not has_pay:
            sizes = (0, 0, 0, 0)
        elif name == "RC_ATOMIC_WRITE":
            sizes = (8, 8, 8, 8)    # exactly 8 bytes (IBTA 1.5)
        elif pos in ("first", "middle"):
            # FIRST and MIDDLE carry exactly one path MTU (IBTA C9-24, C9-25): 1024 and 4096
            # as rxe and ConnectX mostly use, 256 and 512 for the smaller IB MTUs.
            sizes = (1024, 4096, 256, 512)
        else:
            sizes = (0, 1, 3, 4, 1024, 4096)
        fname = {0x00: "golden_rc.pcap", 0x20: "golden_uc.pcap", 0x60: "golden_ud.pcap",
                 0x80: "golden_cnp.pcap"}[op & 0xE0]
        for i, n in enumerate(sizes):
            ip_ver, vlan = COMBOS[(i + op) % 4]
            out[fname].append((fv.base(op, ip_ver, vlan), fv.payload(n)))
    return out


# ---------------------------------------------------------------------------------------------
# Broken packets: (description, expected reason, frame bytes, how much Scapy can still decode).

def broken_packets(fv):
    out = []

    def add(desc, reason, frame, upto):
        out.append((desc, reason, bytes(frame), upto))

    def f(op, ip_ver=4, vlan=False):
        return fv.base(op, ip_ver, vlan)

    # ICRC wrong: a flipped ICRC bit, or a payload byte corrupted after the ICRC was computed.
    for op, ipv, vlan in ((0x04, 4, False), (0x0A, 6, False), (0x11, 4, True), (0x64, 6, True),
                          (0x81, 4, False), (0x12, 6, False)):
        n = 8 if rl.OPCODES[op][3] else 0
        fr = bytearray(raw(build(f(op, ipv, vlan), fv.payload(n))))
        fr[-1] ^= 0x01
        add("ICRC bit flipped, %s IPv%d" % (rl.OPCODES[op][0], ipv), "ICRC", fr, "all")
    fr = bytearray(raw(build(f(0x24, 4, False), fv.payload(64))))
    fr[-10] ^= 0x80
    add("payload byte corrupted after ICRC, UC_SEND_ONLY IPv4", "ICRC", fr, "all")
    fr = bytearray(raw(build(f(0x01, 6, True), fv.payload(1024))))
    fr[-600] ^= 0x01
    add("payload byte corrupted after ICRC, RC_SEND_MIDDLE IPv6", "ICRC", fr, "all")

    # PadCnt (IBTA 9.2.4, C9-24..C9-27).
    add("payload 5 bytes, PadCnt 0 (payload + pad not a multiple of 4)", "PADCNT",
        raw(build(f(0x02), fv.payload(5), pad=0)), "bth")
    add("no payload, PadCnt 3 (pad longer than the data)", "PADCNT",
        raw(build(f(0x22, 6), exts=b"", bth_over={"padcount": 3})), "bth")
    add("RC_SEND_FIRST with PadCnt 3 (only LAST/ONLY may pad)", "PADCNT",
        raw(build(f(0x00), fv.payload(1021))), "bth")
    add("RC_RDMA_WRITE_MIDDLE IPv6 with PadCnt 1", "PADCNT",
        raw(build(f(0x07, 6, True), fv.payload(1023))), "bth")
    add("payload 6 bytes + PadCnt 1 (7 bytes, not a multiple of 4)", "PADCNT",
        raw(build(f(0x04), fv.payload(6), pad=1)), "bth")

    # Extension headers cut short (IBTA C9-4), UDP/IP lengths consistent with what is there.
    for op, keep, ipv in ((0x0A, 12, 4), (0x11, 0, 4), (0x13, 20, 6), (0x64, 4, 4),
                          (0x12, 4, 6), (0x0C, 8, 4), (0x81, 8, 4), (0x05, 0, 6),
                          (0x0B, 16, 4), (0x65, 8, 6)):
        add("%s IPv%d with %d header bytes after the BTH" % (rl.OPCODES[op][0], ipv, keep),
            "HDR_SHORT", raw(build(f(op, ipv), exts=Raw(fv.payload(keep)) if keep else b"")),
            "bth")

    # UDP payload shorter than BTH + ICRC.
    for n in (8, 12, 15):
        fl = f(0x04)
        fr = raw(build(fl, exts=b""))
        # Rebuild with the UDP payload cut to n bytes: plain Raw, Scapy computes the lengths.
        udp_pay = fr[14 + 20 + 8:14 + 20 + 8 + n]
        pk = build(fl, exts=b"")
        pk[UDP].remove_payload()
        add("UDP payload of %d bytes (BTH + ICRC need 16)" % n, "BTH_SHORT",
            raw(pk / Raw(udp_pay)), "udp")

    # UDP length disagrees with the IP length (RFC 768).
    for ipv, delta in ((4, 4), (4, -4), (6, 8), (6, -2)):
        fl = f(0x04, ipv)
        good = build(fl, fv.payload(16))
        ulen = len(raw(good[UDP]))
        add("UDP length %+d, IPv%d" % (delta, ipv), "UDP_LEN",
            raw(build(fl, fv.payload(16), udp_over={"len": ulen + delta})), "udp")

    # Unknown or unsupported opcodes (IBTA C9-3): reserved RC, RD, IB CNP, reserved UD, vendor.
    for op in (0x15, 0x18, 0x40, 0x4C, 0x66, 0x80, 0xC0, 0xFF):
        fl = f(0x04, 4 if op & 1 else 6)
        fl["opcode"] = op
        add("opcode 0x%02x" % op, "OPCODE", raw(build(fl, exts=Raw(fv.payload(16)))), "bth")

    # IPv4 fragments (A17.4.1: RoCEv2 is never fragmented).
    for over, what in (({"flags": "MF"}, "MF"), ({"flags": 0, "frag": 185}, "offset 1480"),
                       ({"flags": "MF", "frag": 1}, "MF and offset 8")):
        add("IPv4 fragment, %s" % what, "IP_FRAG",
            raw(build(f(0x04, 4, what == "MF"), fv.payload(32), ip_over=over)), "l2")

    # TVer other than 0 (C9-2).
    for tv, ipv in ((1, 4), (15, 6), (8, 4)):
        add("BTH TVer %d, IPv%d" % (tv, ipv), "BTH_TVER",
            raw(build(f(0x0A, ipv), fv.payload(4), bth_over={"version": tv})), "bth")

    # IPv4 header checksum wrong.
    for vlan in (False, True):
        fr = bytearray(raw(build(f(0x11, 4, vlan))))
        fr[(18 if vlan else 14) + 10] ^= 0x01
        add("IPv4 header checksum wrong%s" % (", 802.1Q" if vlan else ""), "IP_CSUM", fr, "l2")

    # Payload on opcodes that carry none (IBTA 9.2 header layouts; A17.9.3 for the CNP).
    for op, n, ipv in ((0x11, 4, 4), (0x0C, 8, 6), (0x13, 4, 4), (0x81, 4, 6), (0x12, 16, 4),
                       (0x14, 4, 6)):
        add("%s IPv%d with %d payload bytes" % (rl.OPCODES[op][0], ipv, n), "PAYLOAD_LEN",
            raw(build(f(op, ipv)) / Raw(fv.payload(n))), "bth")

    # Lower layers.
    g = raw(build(f(0x04, 4, True), fv.payload(20)))
    add("frame of 10 bytes", "ETH_SHORT", g[:10], None)
    add("frame ends inside the 802.1Q tag", "VLAN_SHORT", g[:16], None)
    add("frame ends inside the IPv4 header", "IP_SHORT", g[:18 + 12], "l2")
    g6 = raw(build(f(0x04, 6), fv.payload(20)))
    add("frame ends inside the IPv6 header", "IP_SHORT", g6[:14 + 30], "l2")
    add("frame cut 4 bytes short of the IPv4 length", "IP_LEN", g[:-4], "l2")
    add("frame cut 4 bytes short of the IPv6 payload length", "IP_LEN", g6[:-4], "l2")
    add("IPv4 version nibble 6 under EtherType IPv4", "IP_VERSION",
        raw(build(f(0x04), fv.payload(4), ip_over={"version": 6})), "l2")
    add("IPv4 IHL 4", "IP_IHL", raw(build(f(0x04), fv.payload(4), ip_over={"ihl": 4})), "l2")
    fl = f(0x11)
    pk = build(fl)
    pk[IP].remove_payload()
    pk[IP].proto = 17
    add("IPv4 total length ends inside the UDP header", "UDP_SHORT",
        raw(pk / Raw(b"\xc0\x00\x12")), "l2")
    add("UDP destination port 4792", "NOT_ROCE_PORT",
        raw(build(f(0x04), fv.payload(4), udp_over={"dport": 4792})), "l2")
    pk = build(f(0x04, 6))
    pk[IPv6].remove_payload()
    add("IPv6 carrying TCP", "NOT_UDP", raw(pk / TCP(sport=1, dport=4791)), "l2")
    pk = build(f(0x04, 4))
    pk[IP].remove_payload()
    add("IPv4 carrying TCP", "NOT_UDP", raw(pk / TCP(sport=1, dport=4791)), "l2")
    add("ARP EtherType", "NOT_IP", raw(Ether(dst="ff:ff:ff:ff:ff:ff", src="52:54:00:00:00:01",
                                             type=0x0806) / Raw(bytes(28))), "l2")
    return out


NOT_ROCE = ("NOT_IP", "NOT_UDP", "NOT_ROCE_PORT")


def rx_packets(fv):
    """Valid frames droce must accept although its builder never sends them this way:
    (description, frame)."""
    out = []
    fr = raw(build(fv.base(0x02, 4, False)))
    out.append(("RC_SEND_LAST IPv4 no payload, 58 bytes, Ethernet-padded to 60",
                fr + bytes(60 - len(fr))))
    fr = raw(build(fv.base(0x11, 6, True)))
    out.append(("RC_ACKNOWLEDGE IPv6 802.1Q with 4 bytes of Ethernet FCS left on the frame",
                fr + b"\xde\xad\xbe\xef"))
    out.append(("RC_SEND_ONLY IPv4 with a UDP checksum (RFC 768 allows it; rxe sends 0)",
                raw(build(fv.base(0x04, 4, False), fv.payload(16), udp_over={"chksum": None}))))
    out.append(("RC_RDMA_WRITE_ONLY IPv4 with DF clear",
                raw(build(fv.base(0x0A, 4, True), fv.payload(4), ip_over={"flags": 0}))))
    out.append(("UD_SEND_ONLY IPv6 with UDP checksum 0",
                raw(build(fv.base(0x64, 6, False), fv.payload(8), udp_over={"chksum": 0}))))
    fr = raw(build(fv.base(0x81, 4, True)))
    out.append(("CNP IPv4 802.1Q with 6 bytes of Ethernet padding after it", fr + bytes(6)))
    return out


# ---------------------------------------------------------------------------------------------
# Output.

def pcap_bytes(frames):
    """A classic pcap (microsecond, little-endian, Ethernet), packet k at TS_BASE + k s."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for k, fr in enumerate(frames):
        out.append(struct.pack("<IIII", TS_BASE + k, 0, len(fr), len(fr)))
        out.append(fr)
    return b"".join(out)


SPEC_KEYS = ("opcode", "dmac", "smac", "has_vlan", "vlan_tci", "ip_ver", "tclass", "hop_limit",
             "flow_label", "ip_id", "sgid", "dgid", "udp_sport", "se", "mig", "pkey", "fecn",
             "becn", "dqpn", "ackreq", "psn")


def spec_line(fields, payload):
    """key=value pairs for golden_build.c; numbers in hex, bools as 0/1, payload as hex."""
    keys = list(SPEC_KEYS)
    for cls in rl.OPCODES[fields["opcode"]][1]:
        keys += [name for name, _ in EXT_FIELDS[cls]]
    parts = []
    for k in keys:
        v = fields[k]
        if isinstance(v, bool):
            v = int(v)
        parts.append("%s=%s" % (k, "0x%x" % v if isinstance(v, int) else v))
    parts.append("payload=" + payload.hex())
    return " ".join(parts)


def check_decoded(fields, payload, dec):
    """The generator's own check: Scapy decodes what was asked for."""
    for k, v in fields.items():
        if dec[k] != v:
            raise SystemExit("gen_golden: Scapy decodes %s=%r, asked for %r (opcode 0x%02x)"
                             % (k, dec[k], v, fields["opcode"]))
    if dec["pay_len"] != len(payload):
        raise SystemExit("gen_golden: payload length %d decoded as %d" %
                         (len(payload), dec["pay_len"]))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--opcode-h", default=os.path.join(here, "..", "..", "stack", "droce_opcode.h"))
    ap.add_argument("--drop-h", default=os.path.join(here, "..", "..", "stack", "droce_drop.h"))
    ap.add_argument("--parse-c", default=os.path.join(here, "..", "..", "stack", "droce_parse.c"))
    ap.add_argument("--spec", action="store_true", help="also write golden_*.spec")
    a = ap.parse_args()

    ours = droce_opcodes(a.opcode_h)
    scapy_side = {op: v[0] for op, v in rl.OPCODES.items()}
    if ours != scapy_side:
        diff = sorted(set(ours.items()) ^ set(scapy_side.items()))
        raise SystemExit("gen_golden: DROCE_OPCODE_LIST and roce_layers.OPCODES differ: %r" % diff)

    os.makedirs(a.outdir, exist_ok=True)
    fv = Fields(SEED)
    expect = []
    for fname, pkts in good_packets(fv).items():
        frames, spec = [], []
        for n, (fields, payload) in enumerate(pkts, 1):
            fr = raw(build(fields, payload))
            dec = decode(fr)
            check_decoded(fields, payload, dec)
            rec = {"file": fname, "n": n, "status": "ok", "reason": "NONE", "icrc_ok": True}
            rec.update(dec)
            rec["desc"] = "%s IPv%d%s payload %d" % (rl.OPCODES[fields["opcode"]][0],
                                                      fields["ip_ver"],
                                                      " 802.1Q" if fields["has_vlan"] else "",
                                                      len(payload))
            expect.append(rec)
            frames.append(fr)
            spec.append(spec_line(fields, payload))
        with open(os.path.join(a.outdir, fname), "wb") as o:
            o.write(pcap_bytes(frames))
        if a.spec:
            with open(os.path.join(a.outdir, fname.replace(".pcap", ".spec")), "w") as o:
                o.write("# %s: one packet per line, struct droce_pkt member=value\n" % fname)
                o.write("\n".join(spec) + "\n")

    frames = []
    broken = broken_packets(fv)
    # Every reason droce_parse() returns has a broken packet; every expected reason exists.
    known = set(droce_drops(a.drop_h))
    parser = set(re.findall(r"DROCE_DROP_(\w+)", open(a.parse_c).read())) - {"NONE"}
    used = {b[1] for b in broken}
    if used - known or parser - used:
        raise SystemExit("gen_golden: reasons not in DROCE_DROP_LIST: %s; parser reasons without "
                         "a broken packet: %s" % (sorted(used - known), sorted(parser - used)))
    for n, (desc, reason, fr, upto) in enumerate(broken, 1):
        # Scapy computed the ICRC over exactly these bytes unless the ICRC was then broken on
        # purpose; droce-pcap reports it for every frame that gets as far as the BTH.
        icrc_ok = upto in ("bth", "all") and reason != "ICRC"
        rec = {"file": BROKEN_FILE, "n": n, "status": "skipped" if reason in NOT_ROCE else "bad",
               "reason": reason, "icrc_ok": icrc_ok}
        if upto is not None:
            rec.update(decode(fr, upto))
        rec["desc"] = desc
        expect.append(rec)
        frames.append(fr)
    with open(os.path.join(a.outdir, BROKEN_FILE), "wb") as o:
        o.write(pcap_bytes(frames))

    frames = []
    for n, (desc, fr) in enumerate(rx_packets(fv), 1):
        rec = {"file": RX_FILE, "n": n, "status": "ok", "reason": "NONE", "icrc_ok": True}
        rec.update(decode(fr))
        rec["desc"] = desc
        expect.append(rec)
        frames.append(fr)
    with open(os.path.join(a.outdir, RX_FILE), "wb") as o:
        o.write(pcap_bytes(frames))

    with open(os.path.join(a.outdir, "golden_expect.jsonl"), "w") as o:
        for rec in expect:
            o.write(json.dumps(rec, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
