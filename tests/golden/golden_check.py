#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Golden-vector checks (meson suite 'golden'); each subcommand exits 0 only if its check passed.

  regen GENDIR PCAPDIR              the generator's output equals the committed files, byte for byte
  fields TOOL EXPECT PCAP...        droce-pcap decode --json agrees with Scapy's fields (golden_expect)
  bytes BUILDER SPEC SCAPY.pcap OUT droce_build() rebuilds Scapy's packets byte for byte
  tshark TSHARK BUILDER SPEC EXPECT OUT
                                    tshark decodes droce_build()'s frames without malformed packets
                                    or expert warnings, and its InfiniBand fields match ours
"""
import ipaddress
import json
import os
import struct
import subprocess
import sys

GENERATED = ("golden_rc.pcap", "golden_uc.pcap", "golden_ud.pcap", "golden_cnp.pcap",
             "golden_broken.pcap", "golden_rx.pcap", "golden_expect.jsonl")
META = ("file", "desc")
ALWAYS = ("n", "status", "reason", "icrc_ok")


def fail(msgs, what):
    for m in msgs[:40]:
        print("FAIL", m)
    if len(msgs) > 40:
        print("... %d more" % (len(msgs) - 40))
    print("%s: %d problem(s)" % (what, len(msgs)) if msgs else "%s: ok" % what)
    return 1 if msgs else 0


def read_pcap(path):
    """[(ts_sec, ts_usec, orig_len, frame)] from a classic little-endian pcap."""
    data = open(path, "rb").read()
    magic, = struct.unpack("<I", data[:4])
    if magic != 0xA1B2C3D4:
        raise SystemExit("%s: not a little-endian microsecond pcap" % path)
    off, out = 24, []
    while off < len(data):
        sec, usec, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        out.append((sec, usec, orig, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out


def load_expect(path):
    return [json.loads(line) for line in open(path)]


def norm(key, v):
    """Normalise text forms so that equal addresses compare equal."""
    if key in ("sgid", "dgid") and isinstance(v, str):
        return str(ipaddress.IPv6Address(v))
    if key in ("smac", "dmac") and isinstance(v, str):
        return v.lower()
    return v


def cmd_regen(gendir, pcapdir):
    msgs = []
    for name in GENERATED:
        a, b = os.path.join(gendir, name), os.path.join(pcapdir, name)
        if not os.path.exists(b):
            msgs.append("%s: not committed" % b)
        elif open(a, "rb").read() != open(b, "rb").read():
            msgs.append("%s differs from a fresh run of gen_golden.py (%s)" % (b, a))
    return fail(msgs, "regen: %d files" % len(GENERATED))


def cmd_fields(tool, expect_path, pcaps):
    expect = load_expect(expect_path)
    msgs, npk, nfield = [], 0, 0
    for pcap in pcaps:
        name = os.path.basename(pcap)
        want = [e for e in expect if e["file"] == name]
        if not want:
            msgs.append("%s: no expectations" % name)
            continue
        r = subprocess.run([tool, "decode", "--json", pcap], capture_output=True, text=True)
        if r.returncode not in (0, 1):
            msgs.append("%s: droce-pcap exit %d: %s" % (name, r.returncode, r.stderr.strip()))
            continue
        got = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
        if len(got) != len(want):
            msgs.append("%s: droce-pcap printed %d records, expected %d"
                        % (name, len(got), len(want)))
        for e, g in zip(want, got):
            npk += 1
            where = "%s #%d (%s)" % (name, e["n"], e["desc"])
            # Good packets and ICRC failures are parsed to the end: every field must be there.
            strict = e["status"] == "ok" or e["reason"] == "ICRC"
            for k, v in e.items():
                if k in META:
                    continue
                if k not in g:
                    if strict or k in ALWAYS:
                        msgs.append("%s: droce-pcap has no '%s'" % (where, k))
                    continue
                nfield += 1
                if norm(k, g[k]) != norm(k, v):
                    msgs.append("%s: %s droce-pcap %r, Scapy %r" % (where, k, g[k], v))
    return fail(msgs, "fields: %d packets, %d field comparisons" % (npk, nfield))


def run_builder(builder, spec, out):
    r = subprocess.run([builder, "build", spec, out], capture_output=True, text=True)
    if r.returncode != 0:
        return "golden_build exit %d: %s%s" % (r.returncode, r.stdout, r.stderr)
    return None


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def cmd_bytes(builder, spec, scapy_pcap, out):
    err = run_builder(builder, spec, out)
    if err:
        return fail([err], "bytes")
    want, got = read_pcap(scapy_pcap), read_pcap(out)
    msgs = []
    if len(want) != len(got):
        msgs.append("%d packets built, Scapy has %d" % (len(got), len(want)))
    for n, (w, g) in enumerate(zip(want, got), 1):
        if w != g:
            i = first_diff(w[3], g[3])
            msgs.append("#%d: %d vs %d bytes, first difference at byte %d: Scapy %s, droce %s"
                        % (n, len(w[3]), len(g[3]), i, w[3][i:i + 8].hex(), g[3][i:i + 8].hex()))
    if not msgs and open(scapy_pcap, "rb").read() != open(out, "rb").read():
        msgs.append("packets equal but the files differ (pcap header)")
    return fail(msgs, "bytes: %s, %d packets" % (os.path.basename(scapy_pcap), len(want)))


# Heuristic dissectors tshark 4.0 tries on the InfiniBand payload (names as --disable-heuristic
# takes them). Our payloads are random bytes, which RPC-over-RDMA, Mellanox EoIB and the others
# misread as their own headers and then report as malformed: that says nothing about our BTH.
IB_PAYLOAD_HEURISTICS = ("rpcrdma_infiniband", "mellanox_eoib", "iser_infiniband",
                         "sdp_infiniband", "smb_direct_infiniband", "smcr_infiniband", "lnet_ib",
                         "eth_over_ib", "fc_infiniband")


# tshark field -> the struct droce_pkt member(s) it shows (AtomicETH's VA and R_Key appear as
# RETH fields in tshark 4.0).
TSHARK_FIELDS = (
    ("infiniband.bth.opcode", ("opcode",)),
    ("infiniband.bth.se", ("se",)),
    ("infiniband.bth.m", ("mig",)),
    ("infiniband.bth.padcnt", ("padcnt",)),
    ("infiniband.bth.tver", ("tver",)),
    ("infiniband.bth.p_key", ("pkey",)),
    ("infiniband.bth.destqp", ("dqpn",)),
    ("infiniband.bth.a", ("ackreq",)),
    ("infiniband.bth.psn", ("psn",)),
    ("infiniband.reth.va", ("reth_va", "atomic_va")),
    ("infiniband.reth.r_key", ("reth_rkey", "atomic_rkey")),
    ("infiniband.reth.dmalen", ("reth_len",)),
    ("infiniband.aeth.syndrome", ("aeth_syn",)),
    ("infiniband.aeth.msn", ("aeth_msn",)),
    ("infiniband.atomiceth.swapdt", ("atomic_swap_add",)),
    ("infiniband.atomiceth.cmpdt", ("atomic_compare",)),
    ("infiniband.atomicacketh.origremdt", ("atomic_orig",)),
    ("infiniband.immdt", ("imm",)),
    ("infiniband.ieth", ("ieth_rkey",)),
    ("infiniband.deth.q_key", ("deth_qkey",)),
    ("infiniband.deth.srcqp", ("deth_sqpn",)),
    ("infiniband.invariant.crc", ("icrc",)),
)
# tshark 4.0 shows the ICRC only for some opcodes (not when the payload goes to "Data").
TSHARK_OPTIONAL = ("infiniband.invariant.crc",)
# Opcodes tshark 4.0 (Debian 12) decodes no further than the BTH: ATOMIC WRITE (IBTA 1.5)
# postdates its dissector, which lists no 0x1D (tshark -G values).
TSHARK_BTH_ONLY = (0x1D,)


def tshark_value(field, val):
    """A tshark -T fields value as our number (None if it does not parse)."""
    try:
        if field in ("infiniband.immdt", "infiniband.ieth"):
            return int(val, 16)		# FT_BYTES, printed as hex digits
        if field == "infiniband.invariant.crc":
            # tshark reads the four wire bytes big-endian; droce_icrc_get() little-endian.
            return struct.unpack("<I", struct.pack(">I", int(val, 0)))[0]
        return int(val, 0)
    except ValueError:
        return None


def tshark_base(tshark, pcap):
    """tshark reading pcap, numbers unresolved, the payload heuristics off."""
    base = [tshark, "-n", "-r", pcap]
    for h in IB_PAYLOAD_HEURISTICS:
        base += ["--disable-heuristic", h]
    return base


def tshark_expert(base):
    """tshark's expert info at warning level or above (malformed packets are errors)."""
    msgs = []
    r = subprocess.run(base + ["-q", "-z", "expert"], capture_output=True, text=True)
    if r.returncode != 0:
        msgs.append("tshark exit %d: %s" % (r.returncode, r.stderr.strip()))
    section = None
    for line in r.stdout.splitlines():
        s = line.strip()
        for head in ("Errors", "Warns", "Notes", "Chats", "Comments"):
            if s.startswith(head + " ("):
                section = head
        if section in ("Errors", "Warns") and s and s[0].isdigit():
            msgs.append("tshark expert %s: %s" % (section, s))
    return msgs


def cmd_tshark(tshark, builder, spec, expect_path, out):
    err = run_builder(builder, spec, out)
    if err:
        return fail([err], "tshark")
    base = tshark_base(tshark, out)
    msgs = tshark_expert(base)
    # Per packet: protocols reached, then every InfiniBand field tshark shows against ours.
    cmd = base + ["-T", "fields", "-E", "separator=/t", "-E", "occurrence=f",
                  "-e", "frame.number", "-e", "frame.protocols", "-e", "_ws.malformed"]
    for f, _ in TSHARK_FIELDS:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    name = os.path.basename(spec).replace(".spec", ".pcap")
    want = [e for e in load_expect(expect_path) if e["file"] == name]
    if len(rows) != len(want):
        msgs.append("tshark printed %d packets, expected %d" % (len(rows), len(want)))
    ncmp = 0
    for e, row in zip(want, rows):
        num, protos, malformed = row[:3]
        where = "#%s (%s)" % (num, e["desc"])
        if "infiniband" not in protos.split(":"):
            msgs.append("%s: tshark did not reach InfiniBand: %s" % (where, protos))
        if malformed:
            msgs.append("%s: malformed (%s)" % (where, protos))
        for (f, keys), val in zip(TSHARK_FIELDS, row[3:]):
            key = next((k for k in keys if k in e), None)
            if key is None or (val == "" and f in TSHARK_OPTIONAL):
                continue
            if int(e["opcode"]) in TSHARK_BTH_ONLY and not f.startswith("infiniband.bth."):
                continue
            ncmp += 1
            got = tshark_value(f, val)
            if got != int(e[key]):
                msgs.append("%s: tshark %s %r, ours %s=%d" % (where, f, val, key, e[key]))
    return fail(msgs, "tshark: %s, %d packets, %d field comparisons" % (name, len(rows), ncmp))


def main():
    a = sys.argv[1:]
    if a and a[0] == "regen" and len(a) == 3:
        return cmd_regen(a[1], a[2])
    if a and a[0] == "fields" and len(a) >= 4:
        return cmd_fields(a[1], a[2], a[3:])
    if a and a[0] == "bytes" and len(a) == 5:
        return cmd_bytes(*a[1:])
    if a and a[0] == "tshark" and len(a) == 6:
        return cmd_tshark(*a[1:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
