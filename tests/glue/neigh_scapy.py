#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Cross-check the neighbour module's frames with Scapy, both ways.

Scapy dissects what droce builds (ARP fields, ND fields, hop limit, ICMPv6 checksum recomputed
by Scapy), untagged and on VLAN 100 (every frame tagged VID 100, PCP 3), and droce parses what
Scapy builds (including a frame with a broken checksum, and 802.1Q-tagged ones).
Run with /usr/bin/python3 (Debian's python3-scapy): neigh_scapy.py path/to/neigh_frames
"""
import subprocess
import sys

from scapy.layers.inet6 import (ICMPv6ND_NA, ICMPv6ND_NS, ICMPv6NDOptDstLLAddr,
                                ICMPv6NDOptSrcLLAddr, IPv6)
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import raw

MY_MAC, PEER_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def icmp6_csum_ok(pkt, layer):
    got = pkt[layer].cksum
    again = Ether(raw(pkt))
    del again[layer].cksum
    return Ether(raw(again))[layer].cksum == got


def check_built(tool, mode="build"):
    out = subprocess.run([tool, mode], check=True, capture_output=True, text=True).stdout
    frames = [(l.split()[0], bytes.fromhex(l.split()[1])) for l in out.splitlines()]
    names = [n for n, _ in frames]
    check(names == ["arp_request", "ns", "announce", "announce", "arp_reply", "na_solicited"],
          "%s: frame list %s" % (mode, names))
    for name, data in frames:
        p = Ether(data)
        if mode == "build-vlan":
            check(p.haslayer(Dot1Q) and p[Dot1Q].vlan == 100 and p[Dot1Q].prio == 3,
                  "%s: tagged VID 100 PCP 3" % name)
            data = data[:12] + data[16:]    # the same checks on the frame inside the tag
            p = Ether(data)
        else:
            check(not p.haslayer(Dot1Q), "%s: untagged" % name)
        check(p.src == MY_MAC, "%s: source MAC %s" % (name, p.src))
        if p.haslayer(ARP):
            a = p[ARP]
            check(a.hwtype == 1 and a.ptype == 0x800 and a.hwlen == 6 and a.plen == 4,
                  "%s: ARP header" % name)
            check(len(data) == 60, "%s: padded to 60 bytes" % name)
            check(a.psrc == "198.18.0.1" and a.hwsrc == MY_MAC, "%s: ARP sender" % name)
            if name == "arp_request":
                check(a.op == 1 and a.pdst == "198.18.0.2" and p.dst == "ff:ff:ff:ff:ff:ff",
                      "arp_request fields")
            elif name == "arp_reply":
                check(a.op == 2 and a.pdst == "198.18.0.2" and a.hwdst == PEER_MAC and
                      p.dst == PEER_MAC, "arp_reply fields")
            else:
                check(a.op == 1 and a.pdst == "198.18.0.1", "gratuitous ARP: target = sender")
            continue
        check(p.haslayer(IPv6) and p[IPv6].hlim == 255, "%s: IPv6, hop limit 255" % name)
        if p.haslayer(ICMPv6ND_NS):
            check(p[ICMPv6ND_NS].tgt == "2001:db8::2", "ns target")
            check(p[IPv6].dst == "ff02::1:ff00:2" and p.dst == "33:33:ff:00:00:02",
                  "ns solicited-node destination %s %s" % (p[IPv6].dst, p.dst))
            check(p[ICMPv6NDOptSrcLLAddr].lladdr == MY_MAC, "ns source link-layer option")
            check(icmp6_csum_ok(p, ICMPv6ND_NS), "ns checksum")
        else:
            check(p.haslayer(ICMPv6ND_NA), "%s: is an NA" % name)
            na = p[ICMPv6ND_NA]
            check(na.tgt == "2001:db8::1", "%s: target" % name)
            check(p[ICMPv6NDOptDstLLAddr].lladdr == MY_MAC, "%s: target link-layer" % name)
            check(icmp6_csum_ok(p, ICMPv6ND_NA), "%s: checksum" % name)
            if name == "announce":
                check(na.S == 0 and na.O == 1 and p[IPv6].dst == "ff02::1", "unsolicited NA")
            else:
                check(na.S == 1 and na.O == 1 and p[IPv6].dst == "2001:db8::2" and
                      p.dst == PEER_MAC, "solicited NA")


def check_parsed(tool):
    arp = Ether(src=PEER_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(
        op=1, hwsrc=PEER_MAC, psrc="198.18.0.2", pdst="198.18.0.1")
    ns = (Ether(src=PEER_MAC, dst="33:33:ff:00:00:01") /
          IPv6(src="2001:db8::2", dst="ff02::1:ff00:1", hlim=255) /
          ICMPv6ND_NS(tgt="2001:db8::1") / ICMPv6NDOptSrcLLAddr(lladdr=PEER_MAC))
    na = (Ether(src=PEER_MAC, dst=MY_MAC) / IPv6(src="2001:db8::2", dst="2001:db8::1", hlim=255) /
          ICMPv6ND_NA(tgt="2001:db8::2", S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=PEER_MAC))
    bad = Ether(raw(ns))
    bad[ICMPv6ND_NS].cksum ^= 0x5a5a
    hop = Ether(raw(ns))
    hop[IPv6].hlim = 1
    tagged = [Ether(src=PEER_MAC, dst=f.dst) / Dot1Q(vlan=100, prio=5) / f.payload
              for f in (arp, ns)]
    frames = [arp, ns, na, bad, hop] + tagged
    inp = "".join(raw(f).hex() + "\n" for f in frames)
    out = subprocess.run([tool, "parse"], input=inp, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    check(len(out) == len(frames), "parse output lines")
    want = [
        "rc=0 match=1 op=1 sender=198.18.0.2 target=198.18.0.1 lladdr=1 mac=" + PEER_MAC,
        "rc=0 match=1 op=135 sender=2001:db8::2 target=2001:db8::1 lladdr=1 mac=" + PEER_MAC,
        "rc=0 match=1 op=136 sender=2001:db8::2 target=2001:db8::2 lladdr=1 mac=" + PEER_MAC,
    ]
    for i, w in enumerate(want):
        check(out[i] == w, "parse %d: %s != %s" % (i, out[i], w))
    check(out[3].startswith("rc=-74 "), "bad checksum gives -EBADMSG: " + out[3])
    check(out[4].startswith("rc=-22 "), "hop limit 1 gives -EINVAL: " + out[4])
    check(out[5] == want[0] + " vlan=0xa064", "tagged ARP: " + out[5])
    check(out[6] == want[1] + " vlan=0xa064", "tagged NS: " + out[6])


def main():
    tool = sys.argv[1]
    check_built(tool)
    check_built(tool, "build-vlan")
    check_parsed(tool)
    print("neigh_scapy: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
