#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-pcap on damaged captures: flipped bytes, cuts, junk, malformed frames."""
import os
import random
import re
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
from harness import (ALWAYS, OK_KEYS, capture, check, decode_json, ext_keys, main,  # noqa: E402
                     one_line, run, summary_line, work)
from pcapfile import Pcap  # noqa: E402


def payload_records(path, count):
    """(index, pay_off, pay_len) of RoCE packets with payload, from the tool's own JSON."""
    objs, _ = decode_json(path)
    out = [(o["n"] - 1, o["pay_off"], o["pay_len"]) for o in objs
           if o["status"] == "ok" and o["pay_len"] >= 8]
    if not check(len(out) >= count, "%s: too few packets with payload" % path):
        raise SystemExit(1)
    return out


def t_flip():
    d = work("flip")
    src = capture("ib_write_bw.pcap")
    cap = Pcap(src)
    idx, off, plen = payload_records(src, 10)[7]	# the 8th payload packet, past the handshake
    cap.recs[idx][3][off + plen // 2] ^= 0x01
    bad = os.path.join(d, "flipped.pcap")
    cap.write(bad)
    n = idx + 1
    rc, out, err = run(["verify", bad])
    check(rc == 1, "verify flipped: exit %d, want 1" % rc)
    lines = out.splitlines()
    check(lines[:1] == ["%s:%d: ICRC: ICRC mismatch" % (bad, n)], "verify flipped: %r" % lines)
    check(len(lines) == 2, "verify flipped: one bad packet and the summary expected: %r" % lines)
    s = summary_line(out, bad)
    check(s is not None and s[3] == 1, "verify flipped: summary %r" % (s,))
    # decode: that line, and only that one, ends in "icrc BAD"; JSON agrees.
    rc, out, _ = run(["decode", bad])
    badl = [l for l in out.splitlines() if l.endswith(" icrc BAD")]
    check(rc == 0 and len(badl) == 1 and badl[0].startswith("%d " % n), "decode flipped: %r" % badl)
    check(re.search(r"#\s+ICRC\s+1\s", out) is not None, "decode flipped: no ICRC count in summary")
    objs, _ = decode_json(bad)
    o = objs[idx]
    check(o["status"] == "bad" and o["reason"] == "ICRC" and o["icrc_ok"] is False and
          "pay_len" in o and "psn" in o, "json flipped: %r" % o)
    check(sum(1 for x in objs if x["status"] == "bad") == 1, "json flipped: more than one bad")
    # A second file, good, in the same run: still exit 1, both summaries.
    rc, out, _ = run(["verify", src, bad])
    check(rc == 1 and summary_line(out, src) and summary_line(out, bad), "verify good+bad: %d" % rc)


def t_truncated():
    d = work("truncated")
    src = capture("ib_write_lat.pcap")
    with open(src, "rb") as f:
        data = f.read()
    cap = Pcap(src)
    rec = cap.recs[29]	# packet 30
    cases = {"mid-data": rec[4] + 16 + len(rec[3]) // 2, "mid-header": rec[4] + 8,
             "file-header": 10}
    for what, cut in cases.items():
        p = os.path.join(d, "cut-%s.pcap" % what)
        with open(p, "wb") as f:
            f.write(data[:cut])
        one_line(*run(["verify", p]), 2, [p], "verify %s" % what)
        rc, out, err = run(["decode", p])
        check(rc == 2 and len(err.strip().splitlines()) == 1 and p in err,
              "decode %s: exit %d, %r" % (what, rc, err))
        if what != "file-header":
            check("truncated" in err and "after packet 29" in err, "decode %s: %r" % (what, err))
            check(len(out.splitlines()) == 29, "decode %s: %d lines before the error" %
                  (what, len(out.splitlines())))
    # Cut on a record boundary: a shorter but whole capture, which passes.
    p = os.path.join(d, "cut-boundary.pcap")
    with open(p, "wb") as f:
        f.write(data[:rec[4]])
    rc, out, err = run(["verify", p])
    check(rc == 0 and summary_line(out, p) and summary_line(out, p)[0] == 29,
          "verify boundary cut: exit %d %r %r" % (rc, out, err))


def t_not_pcap():
    d = work("not_pcap")
    txt = os.path.join(d, "notes.txt")
    with open(txt, "w") as f:
        f.write("this is not a capture\n" * 20)
    empty = os.path.join(d, "empty.pcap")
    open(empty, "wb").close()
    missing = os.path.join(d, "missing.pcap")
    for p, word in ((txt, "format"), (empty, "not a readable capture"),
                    (missing, "No such file")):
        one_line(*run(["verify", p]), 2, [p, word], "verify %s" % p)
        one_line(*run(["decode", "--json", p]), 2, [p, word], "decode %s" % p)
    # Errors and bad packets together: the worst exit code wins and good files still report.
    good = capture("ib_write_lat.pcap")
    rc, out, err = run(["verify", missing, good])
    check(rc == 2 and summary_line(out, good) is not None, "verify missing+good: exit %d" % rc)


def t_malformed():
    """Frames broken at different layers: named reason, packet number, what was parsed so far."""
    d = work("malformed")
    src = capture("ib_write_lat.pcap")
    cap = Pcap(src)
    roce = [i for i, r in enumerate(cap.recs) if len(r[3]) > 42 and r[3][36:38] == b"\x12\xb7"]
    a, b, c, e = roce[10], roce[20], roce[30], roce[40]
    cap.recs[a][3][42] = 0x1F	# a reserved opcode (IBTA 9.2.1 table 38)
    cap.recs[b][3][22] ^= 0xFF	# TTL without the header checksum
    cap.recs[c][3] = cap.recs[c][3][:-20]	# snapped: captured bytes below the wire length
    cap.recs[e][3][37] ^= 0x01	# UDP destination port 4790: not RoCEv2, skipped
    p = os.path.join(d, "malformed.pcap")
    cap.write(p)
    rc, out, err = run(["verify", p])
    wire = cap.recs[c][2]
    check(rc == 1 and out.splitlines()[:3] == [
        "%s:%d: OPCODE: unknown or unsupported BTH opcode" % (p, a + 1),
        "%s:%d: IP_CSUM: IPv4 header checksum wrong" % (p, b + 1),
        "%s:%d: IP_LEN: IP length field disagrees with the frame (captured %d of %d bytes)" % (
            p, c + 1, wire - 20, wire)], "verify malformed: exit %d %r" % (rc, out))
    s = summary_line(out, p)
    check(s is not None and s[3] == 3 and s[2] == summary_line(run(["verify", src])[1], src)[2] + 1,
          "verify malformed: summary %r" % (s,))
    rc, out, _ = run(["decode", p])
    lines = out.splitlines()
    check(re.match(r"%d \d+\.\d{6} BAD OPCODE: unknown or unsupported BTH opcode \| "
                   r"198\.18\.0\.\d -> 198\.18\.0\.\d sport \d+ opcode 0x1f qp 0x[0-9a-f]{6} "
                   r"psn \d+ .*ecn Not-ECT icrc BAD$" % (a + 1), lines[a]) is not None,
          "decode opcode: %r" % lines[a])
    check(re.match(r"%d \d+\.\d{6} BAD IP_CSUM: IPv4 header checksum wrong \| "
                   r"52:54:00:c6:00:0\d -> 52:54:00:c6:00:0\d$" % (b + 1), lines[b]) is not None,
          "decode ip_csum: %r" % lines[b])
    check(" BAD IP_LEN: " in lines[c] and "(captured %d of %d bytes)" % (wire - 20, wire)
          in lines[c], "decode snapped: %r" % lines[c])
    check(lines[e] == "%s skipped (UDP destination port is not 4791)" %
          " ".join(lines[e].split()[:2]), "decode other port: %r" % lines[e])
    objs, _ = decode_json(p)
    oa, ob, oe = objs[a], objs[b], objs[e]
    check(oa["status"] == "bad" and oa["reason"] == "OPCODE" and oa["opcode"] == 0x1F and
          oa["opcode_name"] == "UNKNOWN" and "psn" in oa and "pay_len" not in oa and
          oa["icrc_ok"] is False, "json opcode: %r" % oa)
    check(ob["reason"] == "IP_CSUM" and "dmac" in ob and "l3_off" in ob and "src" not in ob,
          "json ip_csum: %r" % ob)
    check(oe["status"] == "skipped" and oe["reason"] == "NOT_ROCE_PORT" and "udp_sport" in oe and
          "opcode" not in oe, "json other port: %r" % oe)


# The reasons droce_parse() gives once a layer's fields are filled, and the keys that layer adds.
LAYERS = [
    ({"ETH_SHORT"}, set()),
    ({"VLAN_SHORT"}, {"dmac", "smac"}),
    ({"NOT_IP", "IP_SHORT", "IP_VERSION", "IP_IHL", "IP_LEN", "IP_FRAG", "IP_CSUM"},
     {"has_vlan", "vlan_tci", "l3_off"}),
    ({"NOT_UDP"}, {"ip_ver", "tclass", "hop_limit", "flow_label", "ip_id", "sgid", "dgid", "src",
                   "dst"}),
    ({"UDP_SHORT"}, {"l4_off"}),
    ({"NOT_ROCE_PORT", "UDP_LEN"}, {"udp_sport", "udp_csum"}),
    ({"BTH_SHORT"}, {"bth_off"}),
    ({"BTH_TVER", "OPCODE", "HDR_SHORT", "PADCNT", "PAYLOAD_LEN"},
     {"opcode", "opcode_name", "se", "mig", "padcnt", "tver", "pkey", "fecn", "becn", "dqpn",
      "ackreq", "psn", "icrc", "frame_len"}),
]


def layers_before(reason):
    keys = set()
    for reasons, layer in LAYERS:
        keys |= layer
        if reason in reasons:
            return keys
    check(False, "reason %r is not in this test's table" % reason)
    return keys


def t_mutations():
    """Seeded random damage to every frame: the tool must neither crash nor lose a packet."""
    d = work("mutations")
    cap = Pcap(capture("ib_atomic_bw_fadd.pcap"))
    rng = random.Random(4791)
    for r in cap.recs:
        fr = r[3]
        for _ in range(rng.randint(1, 3)):
            fr[rng.randrange(min(len(fr), 90))] = rng.randrange(256)
        if rng.random() < 0.3:
            r[3] = fr[:rng.randrange(len(fr) + 1)]
    p = os.path.join(d, "mutated.pcap")
    cap.write(p)
    rc, out, err = run(["decode", p])
    check(rc == 0 and len([l for l in out.splitlines() if not l.startswith("#")]) == len(cap.recs),
          "decode mutated: exit %d, %r" % (rc, err))
    objs, _ = decode_json(p)
    check(len(objs) == len(cap.recs), "json mutated: %d objects" % len(objs))
    seen = set()
    for o in objs:
        if o.get("status") == "ok" or o.get("reason") == "ICRC":
            want = OK_KEYS | ext_keys(o["opcode_name"])
        else:
            want = ALWAYS | layers_before(o.get("reason"))
        seen.add(o.get("reason"))
        check(set(o) == want, "json mutated keys for %s: %s extra, %s missing" % (
            o.get("reason"), sorted(set(o) - want), sorted(want - set(o))))
    check(len(seen) >= 8, "mutations reached only %s" % sorted(seen))
    rc, out, err = run(["verify", p])
    s = summary_line(out, p)
    check(rc == 1 and s is not None and s[3] == sum(o["status"] == "bad" for o in objs),
          "verify mutated: exit %d %r" % (rc, s))


if __name__ == "__main__":
    main({"flip": t_flip, "truncated": t_truncated, "not_pcap": t_not_pcap,
          "malformed": t_malformed, "mutations": t_mutations})
