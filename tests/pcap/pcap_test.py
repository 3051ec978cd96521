#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-pcap tests over the rxe captures in shared/pcaps/rxe.

Usage: pcap_test.py TEST --tool PATH --rxe DIR --work DIR
Each TEST writes its inputs under WORK/TEST and exits 0 only if every check held. A missing
capture folder or file is a failure, never a skip.
"""
import argparse
import collections
import ipaddress
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
from frames import ipv4_csum, roce_icrc, udp6_csum, v4_frame
from pcapfile import Pcap, write_pcapng

# The README table of shared/pcaps/rxe: the opcodes each capture holds, exactly.
EXPECTED = {
    "rc_pingpong.pcap": {"RC_SEND_FIRST", "RC_SEND_MIDDLE", "RC_SEND_LAST", "RC_ACKNOWLEDGE"},
    "ud_pingpong.pcap": {"UD_SEND_ONLY"},
    "ib_write_bw.pcap": {"RC_RDMA_WRITE_FIRST", "RC_RDMA_WRITE_MIDDLE", "RC_RDMA_WRITE_LAST",
                         "RC_ACKNOWLEDGE"},
    "ib_write_lat.pcap": {"RC_RDMA_WRITE_ONLY", "RC_ACKNOWLEDGE"},
    "ib_read_bw.pcap": {"RC_RDMA_READ_REQUEST", "RC_RDMA_READ_RESPONSE_FIRST",
                        "RC_RDMA_READ_RESPONSE_MIDDLE", "RC_RDMA_READ_RESPONSE_LAST"},
    "ib_send_bw.pcap": {"RC_SEND_FIRST", "RC_SEND_MIDDLE", "RC_SEND_LAST", "RC_ACKNOWLEDGE"},
    "ib_atomic_bw_fadd.pcap": {"RC_FETCH_ADD", "RC_ATOMIC_ACKNOWLEDGE"},
    "loss5_ib_write_bw.pcap": {"RC_RDMA_WRITE_FIRST", "RC_RDMA_WRITE_MIDDLE",
                               "RC_RDMA_WRITE_LAST", "RC_ACKNOWLEDGE"},
}

ALWAYS = {"n", "ts", "status", "reason", "icrc_ok"}
OK_KEYS = ALWAYS | {
    "dmac", "smac", "has_vlan", "vlan_tci", "l3_off", "ip_ver", "tclass", "hop_limit",
    "flow_label", "ip_id", "sgid", "dgid", "src", "dst", "l4_off", "udp_sport", "udp_csum",
    "bth_off", "opcode", "opcode_name", "se", "mig", "padcnt", "tver", "pkey", "fecn", "becn",
    "dqpn", "ackreq", "psn", "icrc", "frame_len", "pay_off", "pay_len"}
BOOL_KEYS = {"icrc_ok", "has_vlan", "se", "mig", "fecn", "becn", "ackreq"}
STR_KEYS = {"status", "reason", "dmac", "smac", "sgid", "dgid", "src", "dst", "opcode_name"}
RETH = {"reth_va", "reth_rkey", "reth_len"}
AETH = {"aeth_syn", "aeth_msn"}
ATOMIC = {"atomic_va", "atomic_rkey", "atomic_swap_add", "atomic_compare"}
DETH = {"deth_qkey", "deth_sqpn"}

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def ext_keys(name):
    """Extension-header keys by opcode name (IBTA 9.2 table 38), written out independently."""
    k = set()
    if name.startswith("UD_"):
        k |= DETH
    if re.search(r"RDMA_WRITE_(FIRST|ONLY)|READ_REQUEST", name):
        k |= RETH
    if name in ("RC_COMPARE_SWAP", "RC_FETCH_ADD"):
        k |= ATOMIC
    if re.search(r"READ_RESPONSE_(FIRST|LAST|ONLY)|ACKNOWLEDGE", name):
        k |= AETH
    if name == "RC_ATOMIC_ACKNOWLEDGE":
        k.add("atomic_orig")
    if "IMMEDIATE" in name:
        k.add("imm")
    if "INVALIDATE" in name:
        k.add("ieth_rkey")
    return k


# --- running the tool ---

def run(args):
    p = subprocess.run([ARGS.tool] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def rxe_files():
    d = ARGS.rxe
    if not os.path.isdir(d):
        raise SystemExit("FAIL: capture folder %s is missing: the rxe captures must sit in "
                         "shared/pcaps/rxe beside the repository" % d)
    have = sorted(f for f in os.listdir(d) if f.endswith(".pcap"))
    missing = sorted(set(EXPECTED) - set(have))
    if missing:
        raise SystemExit("FAIL: %s lacks %s" % (d, ", ".join(missing)))
    return [os.path.join(d, f) for f in have]


def capture(name):
    """One of the rxe captures, after checking that they are all there."""
    rxe_files()
    return os.path.join(ARGS.rxe, name)


def work(name):
    d = os.path.join(ARGS.work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def decode_json(path):
    rc, out, err = run(["decode", "--json", path])
    check(rc == 0, "decode --json %s: exit %d (%s)" % (path, rc, err.strip()))
    objs = []
    for i, line in enumerate(out.splitlines()):
        try:
            objs.append(json.loads(line))
        except ValueError as e:
            check(False, "%s: JSON line %d does not parse (%s): %r" % (path, i + 1, e, line))
    return objs, err


def summary_line(out, path):
    m = re.search(r"^%s: (\d+) packets, (\d+) RoCE, (\d+) skipped, (\d+) bad$" % re.escape(path),
                  out, re.M)
    check(m is not None, "no summary line for %s in %r" % (path, out))
    return tuple(int(x) for x in m.groups()) if m else None


def one_line(rc, out, err, want_rc, words, what):
    text = (out + err).strip()
    check(rc == want_rc, "%s: exit %d, want %d" % (what, rc, want_rc))
    check(len(text.splitlines()) == 1, "%s: want one line, got %r" % (what, text))
    for w in words:
        check(w in text, "%s: %r not in %r" % (what, w, text))


# --- the tests ---

def t_usage():
    rc, out, err = run(["--help"])
    check(rc == 0 and "decode" in out and "verify" in out, "--help: exit %d, %r" % (rc, out))
    rc, out, _ = run(["decode", "--help"])
    check(rc == 0 and "--json" in out, "decode --help: exit %d" % rc)
    for args in ([], ["bogus"], ["decode"], ["decode", "--bogus", "x.pcap"],
                 ["decode", "a.pcap", "b.pcap"], ["verify"], ["verify", "--json", "x.pcap"]):
        rc, out, err = run(args)
        one_line(rc, out, err, 2, ["--help"], "usage error %r" % args)


def t_verify_rxe():
    files = rxe_files()
    rc, out, err = run(["verify"] + files)
    check(rc == 0, "verify of the rxe captures: exit %d\n%s%s" % (rc, out, err))
    check(err == "", "verify wrote to stderr: %r" % err)
    check(len(out.splitlines()) == len(files), "verify: one line per file expected: %r" % out)
    for f in files:
        s = summary_line(out, f)
        if s:
            n, roce, skipped, bad = s
            check(bad == 0 and roce > 0 and n == roce + skipped, "%s: summary %r" % (f, s))


def t_decode_opcodes():
    for f in rxe_files():
        name = os.path.basename(f)
        if not check(name in EXPECTED, "%s has no row in this test's table: add it" % name):
            continue
        rc, out, err = run(["decode", f])
        check(rc == 0 and err == "", "decode %s: exit %d %r" % (f, rc, err))
        lines = out.splitlines()
        pkts = [l for l in lines if not l.startswith("#")]
        seen = collections.Counter()
        reqs = collections.Counter()
        for i, l in enumerate(pkts):
            check(l.startswith("%d " % (i + 1)), "%s: line %d is numbered wrong: %r" % (name, i + 1, l))
            if " skipped (" in l:
                continue
            m = re.search(r" sport \d+ (\S+) qp (0x[0-9a-f]{6}) psn (\d+) .* pay \d+ icrc (ok|BAD)$", l)
            if not check(m is not None, "%s: unexpected line %r" % (name, l)):
                continue
            seen[m.group(1)] += 1
            check(m.group(4) == "ok", "%s: %r" % (name, l))
            if "WRITE" in m.group(1):
                reqs[(m.group(2), m.group(3))] += 1
        check(set(seen) == EXPECTED[name],
              "%s: opcodes %s, README says %s" % (name, sorted(seen), sorted(EXPECTED[name])))
        if name == "ud_pingpong.pcap":
            check(all(" DETH qkey 0x11111111 " in l for l in pkts if "UD_SEND_ONLY" in l),
                  "ud_pingpong: Q_Key 0x11111111 expected on every UD SEND")
        if name == "ib_read_bw.pcap":
            check(any(re.search(r"READ_REQUEST .* RETH va 0x[0-9a-f]{16} rkey 0x[0-9a-f]{8} "
                                r"len 4096 ", l) for l in pkts), "ib_read_bw: no RETH len 4096")
        if name == "ib_atomic_bw_fadd.pcap":
            check(any("AtomicETH va " in l and " swap_add 0x1 " in l for l in pkts),
                  "atomic: no AtomicETH with add 1")
            check(any(" AtomicAckETH orig 0x" in l for l in pkts), "atomic: no AtomicAckETH")
        if name == "loss5_ib_write_bw.pcap":
            check(any("RC_ACKNOWLEDGE" in l and " AETH NAK PSN_SEQ_ERR msn " in l for l in pkts),
                  "loss5: no NAK with PSN sequence error")
            check(any(c > 1 for c in reqs.values()), "loss5: no retransmitted WRITE (same QP and PSN)")
        if name == "rc_pingpong.pcap":
            check(any(l.endswith(" skipped (IP protocol is not UDP)") for l in pkts),
                  "rc_pingpong: the TCP exchange should be skipped")
        if not name.startswith("loss5"):
            check(not any("NAK" in l for l in pkts), "%s: a NAK where none is expected" % name)
        # The summary: totals, then one line per reason that occurred, matching the lines.
        summ = [l for l in lines if l.startswith("#")]
        check(len(summ) >= 2 and summ[0].startswith("# %d packets: " % len(pkts)),
              "%s: summary %r" % (name, summ[:1]))
        got = {m.group(1): int(m.group(2)) for m in
               (re.match(r"#\s+(\w+)\s+(\d+)\s", l) for l in summ[1:]) if m}
        want = {"NONE": sum(seen.values())}
        for l in pkts:
            if " skipped (IP protocol is not UDP)" in l:
                want["NOT_UDP"] = want.get("NOT_UDP", 0) + 1
            elif " skipped (EtherType is neither IPv4 nor IPv6)" in l:
                want["NOT_IP"] = want.get("NOT_IP", 0) + 1
        check(got == want, "%s: reason counts %r, lines say %r" % (name, got, want))


def t_json():
    for f in rxe_files():
        cap = Pcap(f)
        objs, err = decode_json(f)
        check(len(objs) == len(cap.recs), "%s: %d objects for %d packets" % (f, len(objs), len(cap.recs)))
        check(err.startswith("# %d packets" % len(cap.recs)), "%s: summary on stderr: %r" % (f, err))
        status = collections.Counter()
        for i, (o, (sec, usec, _, fr, _)) in enumerate(zip(objs, cap.recs)):
            n = o.get("n")
            where = "%s packet %s" % (os.path.basename(f), n)
            if not check(ALWAYS <= set(o), "%s: missing %s" % (where, ALWAYS - set(o))):
                continue
            status[o["status"]] += 1
            check(n == i + 1, "%s: n out of sequence (want %d)" % (where, i + 1))
            check(abs(o["ts"] - (sec + usec / 1e6)) < 2e-6, "%s: ts %r" % (where, o["ts"]))
            for k, v in o.items():
                if k in BOOL_KEYS:
                    check(isinstance(v, bool), "%s: %s not a boolean" % (where, k))
                elif k in STR_KEYS:
                    check(isinstance(v, str), "%s: %s not a string" % (where, k))
                elif k != "ts":
                    check(type(v) is int and v >= 0, "%s: %s=%r not a number" % (where, k, v))
            if o["status"] == "skipped":
                check(o["reason"] in ("NOT_IP", "NOT_UDP", "NOT_ROCE_PORT") and not o["icrc_ok"],
                      "%s: skipped for %s" % (where, o["reason"]))
                continue
            if not check(o["status"] == "ok" and o["reason"] == "NONE" and o["icrc_ok"] is True,
                         "%s: %s %s" % (where, o["status"], o["reason"])):
                continue
            want = OK_KEYS | ext_keys(o["opcode_name"])
            check(set(o) == want, "%s: keys %s extra, %s missing" % (
                where, sorted(set(o) - want), sorted(want - set(o))))
            cross_check(where, o, fr)
        check(status["ok"] > 0, "%s: no RoCE packet decoded" % f)


def cross_check(where, o, fr):
    """Fields against the frame's bytes, decoded here by offsets (IPv4, no VLAN in these files)."""
    ip, udp, bth = 14, 34, 42
    want = {
        "dmac": ":".join("%02x" % b for b in fr[0:6]),
        "smac": ":".join("%02x" % b for b in fr[6:12]),
        "l3_off": ip, "l4_off": udp, "bth_off": bth, "ip_ver": 4, "has_vlan": False,
        "src": str(ipaddress.IPv4Address(bytes(fr[26:30]))),
        "dst": str(ipaddress.IPv4Address(bytes(fr[30:34]))),
        "sgid": "::ffff:" + str(ipaddress.IPv4Address(bytes(fr[26:30]))),
        "tclass": fr[15], "hop_limit": fr[22], "ip_id": struct.unpack("!H", fr[18:20])[0],
        "udp_sport": struct.unpack("!H", fr[34:36])[0],
        "udp_csum": struct.unpack("!H", fr[40:42])[0],
        "opcode": fr[bth], "se": bool(fr[bth + 1] & 0x80), "mig": bool(fr[bth + 1] & 0x40),
        "padcnt": (fr[bth + 1] >> 4) & 3, "pkey": struct.unpack("!H", fr[bth + 2:bth + 4])[0],
        "fecn": bool(fr[bth + 4] & 0x80), "becn": bool(fr[bth + 4] & 0x40),
        "dqpn": struct.unpack("!I", fr[bth + 4:bth + 8])[0] & 0xFFFFFF,
        "ackreq": bool(fr[bth + 8] & 0x80),
        "psn": struct.unpack("!I", fr[bth + 8:bth + 12])[0] & 0xFFFFFF,
        "frame_len": ip + struct.unpack("!H", fr[16:18])[0],
    }
    want["icrc"] = struct.unpack("<I", fr[want["frame_len"] - 4:want["frame_len"]])[0]
    ext = bth + 12
    if "deth_qkey" in o:
        want["deth_qkey"] = struct.unpack("!I", fr[ext:ext + 4])[0]
        ext += 8
    if "reth_va" in o:
        want["reth_va"], want["reth_rkey"], want["reth_len"] = struct.unpack("!QII", fr[ext:ext + 16])
        ext += 16
    if "atomic_va" in o:
        (want["atomic_va"], want["atomic_rkey"], want["atomic_swap_add"],
         want["atomic_compare"]) = struct.unpack("!QIQQ", fr[ext:ext + 28])
        ext += 28
    if "aeth_syn" in o:
        w = struct.unpack("!I", fr[ext:ext + 4])[0]
        want["aeth_syn"], want["aeth_msn"] = w >> 24, w & 0xFFFFFF
        ext += 4
    if "atomic_orig" in o:
        want["atomic_orig"] = struct.unpack("!Q", fr[ext:ext + 8])[0]
        ext += 8
    if "imm" in o:
        want["imm"] = struct.unpack("!I", fr[ext:ext + 4])[0]
        ext += 4
    if "ieth_rkey" in o:
        want["ieth_rkey"] = struct.unpack("!I", fr[ext:ext + 4])[0]
        ext += 4
    if o.get("opcode_name") == "CNP":
        ext += 16	# reserved bytes (IBTA A17.9.3)
    want["pay_off"] = ext
    want["pay_len"] = want["frame_len"] - 4 - ext - want["padcnt"]
    for k, v in want.items():
        check(o.get(k) == v, "%s: %s = %r, the frame says %r" % (where, k, o.get(k), v))


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
    for o in objs:
        if o.get("status") == "ok":
            check(set(o) == OK_KEYS | ext_keys(o["opcode_name"]), "json mutated keys: %r" % o)
    rc, out, err = run(["verify", p])
    s = summary_line(out, p)
    check(rc == 1 and s is not None and s[3] == sum(o["status"] == "bad" for o in objs),
          "verify mutated: exit %d %r" % (rc, s))


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
        check(o.get("ts") == 1700000000 + i + 0.25 * (i % 4), "synth %d: ts %r" % (i + 1, o.get("ts")))
        check(o.get("status") == "ok" and set(o) == OK_KEYS | ext_keys(o["opcode_name"]),
              "synth %d: keys %r" % (i + 1, sorted(o)))
        for k, v in want.items():
            check(o.get(k) == v, "synth %d: %s = %r, want %r" % (i + 1, k, o.get(k), v))
        cross_check("synth %d" % (i + 1), o, fr)


TESTS = {
    "usage": t_usage, "verify_rxe": t_verify_rxe, "decode_opcodes": t_decode_opcodes,
    "json": t_json, "flip": t_flip, "truncated": t_truncated, "not_pcap": t_not_pcap,
    "linktypes": t_linktypes, "vlan_ecn": t_vlan_ecn, "malformed": t_malformed, "ipv6": t_ipv6,
    "mutations": t_mutations, "synth": t_synth,
}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=sorted(TESTS))
    ap.add_argument("--tool", required=True)
    ap.add_argument("--rxe", required=True)
    ap.add_argument("--work", required=True)
    ARGS = ap.parse_args()
    ARGS.rxe = os.path.normpath(ARGS.rxe)
    ARGS.tool = os.path.abspath(ARGS.tool)
    TESTS[ARGS.test]()
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("ok")
