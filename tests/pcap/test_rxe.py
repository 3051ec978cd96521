#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-pcap on the rxe captures as they are: verify, decode, JSON, usage."""
import collections
import os
import re
import sys

sys.dont_write_bytecode = True	# no __pycache__ in the source tree
from harness import (ALWAYS, BOOL_KEYS, EXPECTED, OK_KEYS, STR_KEYS, check,  # noqa: E402
                     cross_check, decode_json, ext_keys, main, one_line, run, rxe_files,
                     summary_line)
from pcapfile import Pcap  # noqa: E402


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
            check(l.startswith("%d " % (i + 1)),
                  "%s: line %d is numbered wrong: %r" % (name, i + 1, l))
            if " skipped (" in l:
                continue
            m = re.search(r" sport \d+ (\S+) qp (0x[0-9a-f]{6}) psn (\d+) .* "
                          r"pay \d+ icrc (ok|BAD)$", l)
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
            check(any(c > 1 for c in reqs.values()),
                  "loss5: no retransmitted WRITE (same QP and PSN)")
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
        check(len(objs) == len(cap.recs),
              "%s: %d objects for %d packets" % (f, len(objs), len(cap.recs)))
        check(err.startswith("# %d packets" % len(cap.recs)),
              "%s: summary on stderr: %r" % (f, err))
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


if __name__ == "__main__":
    main({"usage": t_usage, "verify_rxe": t_verify_rxe, "decode_opcodes": t_decode_opcodes,
          "json": t_json})
