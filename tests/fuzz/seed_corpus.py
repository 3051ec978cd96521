#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for the libFuzzer targets: every frame of every pcap, one file each.

usage: seed_corpus.py OUTDIR [PCAP_OR_DIR ...]
Without pcap arguments it reads the repository's pcaps/: the golden vectors and the rxe
captures in pcaps/rxe. Files are named by the SHA-1 of the frame, so
duplicates collapse; non-Ethernet and pcapng files are skipped with a note.
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


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    srcs = sys.argv[2:]
    if not srcs:
        repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        srcs = [os.path.join(repo, "pcaps"), os.path.join(repo, "pcaps", "rxe")]
    os.makedirs(out, exist_ok=True)
    npcap = nframe = nnew = 0
    for path in pcap_files(srcs):
        npcap += 1
        for data in frames(path):
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
