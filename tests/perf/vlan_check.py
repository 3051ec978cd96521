#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check a droce capture (DROCE_CAPTURE) for 802.1Q tags, with Scapy.

  vlan_check.py tagged PCAP VID PCP
      every frame, received and sent, is tagged VID with priority PCP; there are RoCEv2 frames
      (UDP 4791) both ways and ARP requests and replies both ways.
  vlan_check.py mismatch PCAP MAC VID OTHER_VID
      every frame MAC sent is tagged VID and none is an ARP reply; the peer's frames (its ARP
      requests on OTHER_VID) arrived and were left unanswered; no RoCE frame went out.
Exit 0 when the capture matches, 1 (with the offending frame) when not.
"""
import sys

from scapy.all import ARP, UDP, Dot1Q, Ether, rdpcap  # noqa: E402

ROCE_PORT = 4791


def fail(msg, pkt=None):
    print("FAIL: " + msg)
    if pkt is not None:
        print("  " + pkt.summary())
    sys.exit(1)


def tagged(pcap, vid, pcp):
    pkts = rdpcap(pcap)
    macs = set()
    roce = {}
    arp = {}
    for p in pkts:
        if Ether not in p:
            fail("not Ethernet", p)
        if p[Ether].type != 0x8100 or Dot1Q not in p:
            fail("untagged frame", p)
        if p[Dot1Q].vlan != vid or p[Dot1Q].prio != pcp:
            fail("tag VID %d PCP %d, wanted VID %d PCP %d" %
                 (p[Dot1Q].vlan, p[Dot1Q].prio, vid, pcp), p)
        src = p[Ether].src
        macs.add(src)
        if UDP in p and p[UDP].dport == ROCE_PORT:
            roce[src] = roce.get(src, 0) + 1
        elif ARP in p:
            arp.setdefault(src, set()).add(p[ARP].op)
    if len(macs) != 2:
        fail("frames from %d stations, wanted 2: %s" % (len(macs), sorted(macs)))
    for m in macs:
        if roce.get(m, 0) == 0:
            fail("no RoCEv2 frame from %s" % m)
    if not any(1 in ops for ops in arp.values()) or not any(2 in ops for ops in arp.values()):
        fail("ARP requests and replies wanted, saw %s" % arp)
    print("ok: %d frames, all VID %d PCP %d; RoCEv2 %s; ARP ops %s" %
          (len(pkts), vid, pcp, roce, {k: sorted(v) for k, v in arp.items()}))


def mismatch(pcap, mac, vid, other):
    pkts = rdpcap(pcap)
    sent = heard = 0
    for p in pkts:
        if Dot1Q not in p:
            fail("untagged frame", p)
        if p[Ether].src == mac:
            sent += 1
            if p[Dot1Q].vlan != vid:
                fail("sent on VID %d, not %d" % (p[Dot1Q].vlan, vid), p)
            if ARP in p and p[ARP].op == 2:
                fail("answered an ARP request", p)
            if UDP in p and p[UDP].dport == ROCE_PORT:
                fail("RoCEv2 frame sent to an unresolved peer", p)
        else:
            if p[Dot1Q].vlan != other:
                fail("peer frame on VID %d, not %d" % (p[Dot1Q].vlan, other), p)
            if ARP in p and p[ARP].op == 1:
                heard += 1
    # the announcement, then at least one request for the peer, each way
    if sent < 2 or heard < 2:
        fail("wanted our ARP requests and the peer's: sent %d, heard %d requests" %
             (sent, heard))
    print("ok: %d frames sent on VID %d, %d ARP requests of VID %d heard and ignored" %
          (sent, vid, heard, other))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "tagged":
        tagged(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) == 6 and sys.argv[1] == "mismatch":
        mismatch(sys.argv[2], sys.argv[3].lower(), int(sys.argv[4]), int(sys.argv[5]))
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
