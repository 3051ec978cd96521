#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Shared pieces of the droce-pcap tests: running the tool, checks, the rxe capture table.

A test script calls main({name: function}); each test writes its inputs under WORK/NAME and exits
0 only if every check held. A missing capture folder or file is a failure, never a skip.
Usage: SCRIPT TEST --tool PATH --rxe DIR --work DIR
"""
import argparse
import ipaddress
import json
import os
import re
import shutil
import struct
import subprocess
import sys

ARGS = None


# The table of pcaps/rxe/README.md: the opcodes each capture holds, exactly.
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

def run(args, stdin_path=None):
    """The tool's exit code, stdout and stderr; stdin from a file if given, else nothing."""
    with open(stdin_path if stdin_path else os.devnull, "rb") as f:
        p = subprocess.run([ARGS.tool] + args, stdin=f, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def rxe_files():
    d = ARGS.rxe
    if not os.path.isdir(d):
        raise SystemExit("FAIL: capture folder %s is missing: the rxe captures must sit in "
                         "pcaps/rxe in the repository" % d)
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
        (want["reth_va"], want["reth_rkey"],
         want["reth_len"]) = struct.unpack("!QII", fr[ext:ext + 16])
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


def main(tests):
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=sorted(tests))
    ap.add_argument("--tool", required=True)
    ap.add_argument("--rxe", required=True)
    ap.add_argument("--work", required=True)
    ARGS = ap.parse_args()
    ARGS.rxe = os.path.normpath(ARGS.rxe)
    ARGS.tool = os.path.abspath(ARGS.tool)
    tests[ARGS.test]()
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("ok")
