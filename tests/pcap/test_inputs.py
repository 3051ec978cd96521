#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-pcap on other valid inputs: link types, pcapng, VLAN, CE, IPv6, every header."""
import ipaddress
import os
import re
import struct
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
from frames import ipv4_csum, roce_icrc, udp6_csum, v4_frame  # noqa: E402
from harness import (OK_KEYS, capture, check, cross_check, decode_json,  # noqa: E402
                     ext_keys, main, one_line, run, summary_line, work)
from pcapfile import Pcap, write_pcapng  # noqa: E402


def t_linktypes():
    d = work("linktypes")
    src = capture("rc_pingpong.pcap")
    cap = Pcap(src)
    rc, base, _ = run(["decode", src])
    base_counts = summary_line(run(["verify", src])[1], src)

    p = os.path.join(d, "wifi.pcap")
    cap.write(p, linktype=105)
    one_line(*run(["verify", p]), 2, [p, "IEEE802_11", "not supported"], "802.11 link type")

    sll, sll2, raw = [], [], []
    for sec, usec, wire, fr, off in cap.recs:
        etype, rest, smac = fr[12:14], fr[14:], bytes(fr[6:12])
        sll.append([sec, usec, wire + 2, bytearray(
            struct.pack("!HHH", 0, 1, 6) + smac + b"\0\0" + etype + rest), off])
        sll2.append([sec, usec, wire + 6, bytearray(
            etype + b"\0\0" + struct.pack("!IHBB", 2, 1, 0, 6) + smac + b"\0\0" + rest), off])
        if etype == b"\x08\x00":
            raw.append([sec, usec, wire - 14, bytearray(rest), off])
    for name, lt, recs in (("sll", 113, sll), ("sll2", 276, sll2)):
        p = os.path.join(d, name + ".pcap")
        cap.write(p, linktype=lt, recs=recs)
        rc, out, err = run(["verify", p])
        check(rc == 0 and summary_line(out, p) == base_counts,
              "%s: exit %d, %r vs %r" % (name, rc, out, base_counts))
        # Same packets, same lines (text shows no MAC for packets that parse).
        check(run(["decode", p])[1] == base, "%s: decode differs from the Ethernet capture" % name)
    p = os.path.join(d, "raw.pcap")
    cap.write(p, linktype=101, recs=raw)
    rc, out, err = run(["verify", p])
    s = summary_line(out, p)
    check(rc == 0 and s is not None and s[1] == base_counts[1] and s[3] == 0,
          "raw IP: exit %d %r" % (rc, out))
    p = os.path.join(d, "ng.pcapng")
    write_pcapng(p, cap)
    rc, out, err = run(["verify", p])
    check(rc == 0 and summary_line(out, p) == base_counts, "pcapng: exit %d %r" % (rc, out + err))
    check(run(["decode", p])[1] == base, "pcapng: decode differs from the pcap")
    check(run(["decode", "-"], stdin_path=p)[1] == base, "decode - from stdin differs")


def t_vlan_ecn():
    """A tag (PCP 5, VID 100) on every frame and CE marks: both outside the ICRC."""
    d = work("vlan_ecn")
    src = capture("ib_write_lat.pcap")
    cap = Pcap(src)
    for r in cap.recs:
        fr = r[3]
        if fr[12:14] == b"\x08\x00":
            fr[15] |= 3	# ECN = CE, then the header checksum again
            fr[24:26] = b"\0\0"
            fr[24:26] = struct.pack("!H", ipv4_csum(bytes(fr[14:34])))
        r[3] = fr[:12] + struct.pack("!HH", 0x8100, (5 << 13) | 100) + fr[12:]
        r[2] += 4
    p = os.path.join(d, "vlan_ce.pcap")
    cap.write(p)
    rc, out, err = run(["verify", p])
    s = summary_line(out, p)
    check(rc == 0 and s is not None and s[1] > 0 and s[3] == 0, "vlan+CE: exit %d %r" % (rc, out))
    rc, out, _ = run(["decode", p])
    roce = [l for l in out.splitlines() if " sport " in l]
    check(roce and all(" vlan 100 prio 5 " in l and " ecn CE " in l and l.endswith(" icrc ok")
                       for l in roce), "vlan+CE decode: %r" % roce[:2])
    objs, _ = decode_json(p)
    oks = [o for o in objs if o["status"] == "ok"]
    check(oks and all(o["has_vlan"] and o["vlan_tci"] == 0xA064 and o["l3_off"] == 18 and
                      o["tclass"] & 3 == 3 for o in oks), "vlan+CE json: %r" % oks[:1])


def t_ipv6():
    """The IPv4 frames of a capture carried over IPv6 (new ICRC): addresses, GIDs, flow label."""
    d = work("ipv6")
    cap = Pcap(capture("ib_write_lat.pcap"))
    a6 = {bytes(ipaddress.IPv4Address("198.18.0.%d" % i).packed):
          ipaddress.IPv6Address("fd00:18::%d" % i).packed for i in (1, 2)}
    recs = []
    for sec, usec, wire, fr, off in cap.recs:
        if fr[12:14] != b"\x08\x00" or fr[23] != 17:
            continue
        ip_end = 14 + struct.unpack("!H", fr[16:18])[0]
        udp = bytearray(fr[34:ip_end - 4])
        sip, dip = a6[bytes(fr[26:30])], a6[bytes(fr[30:34])]
        plen = len(udp) + 4
        udp[4:6] = struct.pack("!H", plen)
        udp[6:8] = b"\0\0"
        hdr = struct.pack("!IHBB", (6 << 28) | (0x02 << 20) | 0x12345, plen, 17, 64) + sip + dip
        icrc = roce_icrc(hdr + bytes(udp), 6)
        udp[6:8] = struct.pack("!H", udp6_csum(sip, dip, bytes(udp) + icrc))
        nf = bytearray(fr[:12] + b"\x86\xdd" + hdr + udp + icrc)
        recs.append([sec, usec, len(nf), nf, off])
    p = os.path.join(d, "v6.pcap")
    cap.write(p, recs=recs)
    rc, out, err = run(["verify", p])
    s = summary_line(out, p)
    check(rc == 0 and s is not None and s[1] == len(recs) > 0 and s[3] == 0,
          "verify ipv6: exit %d %r" % (rc, out + err))
    rc, out, _ = run(["decode", p])
    pk = [l for l in out.splitlines() if not l.startswith("#")]
    check(pk and all(re.search(r" fd00:18::[12] -> fd00:18::[12] sport .* ecn ECT0 .* icrc ok$", l)
                     for l in pk), "decode ipv6: %r" % pk[:2])
    objs, _ = decode_json(p)
    check(objs and all(o["ip_ver"] == 6 and o["flow_label"] == 0x12345 and o["tclass"] == 2 and
                       o["src"] == o["sgid"] and o["src"].startswith("fd00:18::") and
                       o["l4_off"] == 54 and o["udp_csum"] != 0 for o in objs),
          "json ipv6: %r" % objs[:1])


def t_synth():
    """Opcodes and header values the rxe captures lack, built here with their ICRC."""
    d = work("synth")
    q = struct.pack
    u64 = 0xFFFFFFFFFFFFFFFF
    cases = [
        (v4_frame(0x05, q("!I", 0xDEADBEEF), b"x" * 13, bth_flags=0x80),
         "RC_SEND_ONLY_WITH_IMMEDIATE qp 0x000abc psn 77 SE ecn ECT0 ImmDt 0xdeadbeef pay 13",
         {"imm": 0xDEADBEEF, "padcnt": 3, "pay_len": 13, "se": True}),
        (v4_frame(0x17, q("!I", 0x1234), b"y" * 8),
         "RC_SEND_ONLY_WITH_INVALIDATE qp 0x000abc psn 77 ecn ECT0 IETH rkey 0x00001234 pay 8",
         {"ieth_rkey": 0x1234}),
        (v4_frame(0x13, q("!QIQQ", 0x1122334455667788, 0xABCDEF01, u64, 0x42), ackreq=True),
         "RC_COMPARE_SWAP qp 0x000abc psn 77 AckReq ecn ECT0 AtomicETH va 0x1122334455667788 "
         "rkey 0xabcdef01 swap_add 0xffffffffffffffff compare 0x42 pay 0",
         {"atomic_va": 0x1122334455667788, "atomic_rkey": 0xABCDEF01, "atomic_swap_add": u64,
          "atomic_compare": 0x42, "ackreq": True}),
        (v4_frame(0x0B, q("!QIII", 1 << 63, 7, 64, 9), b"z" * 64),
         "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE qp 0x000abc psn 77 ecn ECT0 RETH va "
         "0x8000000000000000 rkey 0x00000007 len 64 ImmDt 0x00000009 pay 64",
         {"reth_va": 1 << 63, "reth_rkey": 7, "reth_len": 64, "imm": 9}),
        (v4_frame(0x65, q("!IIi", 0x80010000, 0xAB123456, -2), b"u" * 4, dqpn=1),
         "UD_SEND_ONLY_WITH_IMMEDIATE qp 0x000001 psn 77 ecn ECT0 DETH qkey 0x80010000 "
         "sqp 0x123456 ImmDt 0xfffffffe pay 4",
         {"deth_qkey": 0x80010000, "deth_sqpn": 0x123456, "imm": 0xFFFFFFFE}),
        (v4_frame(0x81, b"\0" * 16, fb=0x40, psn=0, tos=0xC3),
         "CNP qp 0x000abc psn 0 BECN ecn CE pay 0", {"becn": True, "tclass": 0xC3}),
        (v4_frame(0x11, q("!I", (0x20 | 14) << 24 | 5)),
         "RC_ACKNOWLEDGE qp 0x000abc psn 77 ecn ECT0 AETH RNR timer 14 (1.28 ms) msn 5 pay 0",
         {"aeth_syn": 0x2E, "aeth_msn": 5}),
        (v4_frame(0x11, q("!I", 0x20 << 24 | 0xFFFFFF)),
         "AETH RNR timer 0 (655.36 ms) msn 16777215 pay 0", {"aeth_msn": 0xFFFFFF}),
        (v4_frame(0x11, q("!I", 0x62 << 24 | 9)), "AETH NAK REM_ACCESS_ERR msn 9 pay 0",
         {"aeth_syn": 0x62}),
        (v4_frame(0x11, q("!I", 0x7F << 24)), "AETH NAK reserved code 31 msn 0", {}),
        (v4_frame(0x11, q("!I", 0x45 << 24)), "AETH reserved syndrome 0x45 msn 0", {}),
        (v4_frame(0x12, q("!IQ", 8 << 24 | 3, 0x0102030405060708)),
         "RC_ATOMIC_ACKNOWLEDGE qp 0x000abc psn 77 ecn ECT0 AETH ACK credits 16 (code 8) msn 3 "
         "AtomicAckETH orig 0x102030405060708 pay 0", {"atomic_orig": 0x0102030405060708}),
        (v4_frame(0x0C, q("!QII", 0x1000, 0x22, 0x10000), bth_flags=0x40, pkey=0x8001, fb=0x80,
                  ackreq=True, dqpn=0xFFFFFF, psn=0xFFFFFF, tos=0x01),
         "RC_RDMA_READ_REQUEST qp 0xffffff psn 16777215 AckReq MigReq FECN pkey 0x8001 ecn ECT1 "
         "RETH va 0x0000000000001000 rkey 0x00000022 len 65536 pay 0",
         {"mig": True, "fecn": True, "pkey": 0x8001, "dqpn": 0xFFFFFF, "psn": 0xFFFFFF}),
    ]
    p = os.path.join(d, "synth.pcap")
    recs = [[1700000000 + i, 250000 * (i % 4), len(c[0]), c[0], 0] for i, c in enumerate(cases)]
    Pcap.new(1).write(p, recs=recs)
    rc, out, err = run(["verify", p])
    check(rc == 0, "verify synth: exit %d %r" % (rc, out + err))
    rc, out, _ = run(["decode", p])
    lines = out.splitlines()
    for i, (fr, text, want) in enumerate(cases):
        check(len(lines) > i and text in lines[i] and lines[i].endswith(" icrc ok") and
              " 198.18.0.1 -> 198.18.0.2 sport 49443 " in lines[i],
              "synth %d: %r lacks %r" % (i + 1, lines[i] if len(lines) > i else None, text))
    check(lines[0].startswith("1 0.000000 ") and lines[1].startswith("2 1.250000 "),
          "synth: relative times %r" % lines[:2])
    objs, _ = decode_json(p)
    for i, (fr, text, want) in enumerate(cases):
        o = objs[i] if i < len(objs) else {}
        check(o.get("ts") == 1700000000 + i + 0.25 * (i % 4),
              "synth %d: ts %r" % (i + 1, o.get("ts")))
        check(o.get("status") == "ok" and set(o) == OK_KEYS | ext_keys(o["opcode_name"]),
              "synth %d: keys %r" % (i + 1, sorted(o)))
        for k, v in want.items():
            check(o.get(k) == v, "synth %d: %s = %r, want %r" % (i + 1, k, o.get(k), v))
        cross_check("synth %d" % (i + 1), o, fr)


def t_cut():
    """A capture's slot cut a frame short (af_packet and a GRO'd TCP segment): a TCP one is
    skipped, not RoCEv2; a UDP one to 4791, cut the same way, is bad."""
    d = work("cut")
    src = Pcap(capture("rc_pingpong.pcap"))
    tcp = next(r for r in src.recs if r[3][12:14] == b"\x08\x00" and r[3][23] == 6)
    roce = next(r for r in src.recs if r[3][12:14] == b"\x08\x00" and r[3][23] == 17)
    recs = []
    for sec, usec, wire, fr, off in (tcp, roce):
        fr = bytearray(fr)
        tot = struct.unpack("!H", fr[16:18])[0] + 2800	# the IP length of a GRO'd segment
        fr[16:18] = struct.pack("!H", tot)
        fr[24:26] = b"\0\0"
        fr[24:26] = struct.pack("!H", ipv4_csum(bytes(fr[14:34])))
        recs.append([sec, usec, 14 + tot, fr, off])
    p = os.path.join(d, "cut.pcap")
    src.write(p, recs=recs)
    rc, out, err = run(["verify", p])
    check(rc == 1 and summary_line(out, p) == (2, 1, 1, 1),
          "cut frames: exit %d %r (want the TCP one skipped, the RoCE one bad)" % (rc, out))
    check(re.search(r"cut\.pcap:2: IP_LEN", out) is not None, "the cut RoCE frame's line: %r" % out)


if __name__ == "__main__":
    main({"linktypes": t_linktypes, "vlan_ecn": t_vlan_ecn, "ipv6": t_ipv6,
          "synth": t_synth, "cut": t_cut})
