#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for the libFuzzer targets: every frame of every pcap, one file each.

usage: seed_corpus.py [--rx | --cm | --pcap] OUTDIR [PCAP_OR_DIR ...]
Without pcap arguments it reads the repository's pcaps/: the golden vectors and the rxe
captures in pcaps/rxe. Files are named by the SHA-1 of the frame, so
duplicates collapse; non-Ethernet and pcapng files are skipped with a note.
--rx: each frame in fuzz_rx's input format, twice (flags 0x0F: fixed up, aimed at a QP, PSN and
RETH set; 0x07: the RETH as captured), the selector cycling over the QPs.
--cm: one MAD per IB CM attribute fuzz_cm knows (header only: the fuzzer fills the rest).
--pcap: the capture files themselves, those up to 64 KiB (fuzz_pcap's input is a file).
"""
import hashlib
import os
import struct
import sys

LINKTYPE_ETHERNET = 1
MAGICS = {
    b"\xd4\xc3\xb2\xa1": "<",  # microsecond, little-endian
    b"\xa1\xb2\xc3\xd4": ">",
    b"\x4d\x3c\xb2\xa1": "<",  # nanosecond
    b"\xa1\xb2\x3c\x4d": ">",
}


def frames(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24 or hdr[:4] not in MAGICS:
            print(f"seed_corpus: {path}: not a classic pcap, skipped", file=sys.stderr)
            return
        end = MAGICS[hdr[:4]]
        linktype = struct.unpack(end + "I", hdr[20:24])[0] & 0x0FFFFFFF
        if linktype != LINKTYPE_ETHERNET:
            print(f"seed_corpus: {path}: link type {linktype}, skipped", file=sys.stderr)
            return
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, _ = struct.unpack(end + "IIII", rec)
            data = f.read(incl)
            if len(data) < incl:
                return
            yield data


def pcap_files(args):
    for a in args:
        if os.path.isdir(a):
            for name in sorted(os.listdir(a)):
                if name.endswith((".pcap", ".cap")):
                    yield os.path.join(a, name)
        elif os.path.isfile(a):
            yield a
        else:
            print(f"seed_corpus: {a}: not found, skipped", file=sys.stderr)


def cm_seeds(out):
    os.makedirs(out, exist_ok=True)
    for attr in range(0x10, 0x19):	# REQ .. SIDR_REP (IBTA 12.6, 12.11)
        mad = bytearray(256)
        # base version 1, class 0x07 (CM), class version 2, method Send (IBTA 13.4.2)
        mad[0:4] = bytes([1, 7, 2, 3])
        mad[8:16] = (0x1234).to_bytes(8, "big")
        mad[16:18] = attr.to_bytes(2, "big")
        with open(os.path.join(out, "cm_attr_%02x" % attr), "wb") as f:
            f.write(mad)
    print(f"seed_corpus: 9 CM MADs in {out}")


def main():
    mode = None
    args = sys.argv[1:]
    if args and args[0] in ("--rx", "--cm", "--pcap"):
        mode = args.pop(0)
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    srcs = args[1:]
    if mode == "--cm":
        cm_seeds(out)
        return 0
    if not srcs:
        repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        srcs = [os.path.join(repo, "pcaps"), os.path.join(repo, "pcaps", "rxe")]
    os.makedirs(out, exist_ok=True)
    npcap = nframe = nnew = 0
    for path in pcap_files(srcs):
        npcap += 1
        if mode == "--pcap":
            if os.path.getsize(path) <= 65536:
                with open(path, "rb") as f, \
                        open(os.path.join(out, os.path.basename(path)), "wb") as o:
                    o.write(f.read())
                nnew += 1
            continue
        for data in frames(path):
            if mode == "--rx":
                sel = (nframe * 4) & 0xFF
                for flags in (0x0F, 0x07):
                    blob = bytes([flags, sel]) + len(data).to_bytes(2, "big") + data
                    name = os.path.join(out, hashlib.sha1(blob).hexdigest())
                    if not os.path.exists(name):
                        with open(name, "wb") as f:
                            f.write(blob)
                        nnew += 1
                nframe += 1
                continue
            nframe += 1
            name = os.path.join(out, hashlib.sha1(data).hexdigest())
            if not os.path.exists(name):
                with open(name, "wb") as f:
                    f.write(data)
                nnew += 1
    print(f"seed_corpus: {npcap} pcaps, {nframe} frames, {nnew} new seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
