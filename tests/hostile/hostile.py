#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile peer on droce's link: an attacker beside unmodified verbs programs on droce.

Topology (hostile_lib.Topology): namespaces s (server), c (client), a (attacker) on a bridge in
m that floods every frame to every port. The server and client are Debian's unmodified
ibv_rc_pingpong, ibv_ud_pingpong and perftest binaries through droce-run over af_packet; the
attacker sniffs their session for the QPN, PSN, R_Key, VA and Q_Key, then sends crafted frames
(wire.py, cross-checked against Scapy's RoCE layers) from its own port.

Each attack names what IBTA / rxe expect (a NAK code and the QP in ERR, or a silent drop) and
the droce drop reason that must count it; the observed counters, NAKs and QP states are
compared with that. Memory within 64 KiB of every MR the server registered (mrlog.c logs them)
is read through /proc/PID/mem before and after: no byte may change within 4 KiB of an MR's
pages (nor inside the MR while the legitimate client is stopped), and the attack payload may
appear nowhere new outside the MRs. The servers must never crash; the legitimate sessions that
run through the attacks must finish with their data checked (-c).

usage: hostile.py DROCE_RUN MRLOG_SO [--only=SESSION|CASE,...] [--keep]
  SESSION: rc, ud, fatal, flood; CASE: a case of the fatal session (write_rkey ...)
"""
import os
import signal
import struct
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_lib as L  # noqa: E402
import wire  # noqa: E402

SRV_IP, CLI_IP, ATK_IP = "198.18.0.1", "198.18.0.2", "198.18.0.3"
SRV_IP6 = "2001:2::1"
SRV_MAC, CLI_MAC, ATK_MAC = (L.Topology.HOSTS[r][1] for r in ("s", "c", "a"))
SRV_KADDR = L.Topology.HOSTS["s"][2]
HALF = 1 << 22	# a quarter of the 24-bit PSN space: certainly ahead or behind
MARGIN = 64 << 10	# memory read around each MR
GUARD = 4096		# around each MR's pages: not one byte may change there
PAY = b"HOSTILE!" * 8	# every attack's payload: found in memory outside an MR, it was placed


class Cfg:
    pass


class Results:
    def __init__(self, quiet=False):
        self.rows = []
        self.quiet = quiet

    def add(self, session, name, expected, observed, ok, note=""):
        self.rows.append((session, name, expected, observed, ok, note))
        if self.quiet:
            return
        print("%s %s/%s: expected %s; observed %s%s" % ("ok  " if ok else "FAIL", session, name,
              expected, observed, " (" + note + ")" if note else ""), flush=True)

    def failed(self):
        return [r for r in self.rows if not r[4]]


def settle(tel, before, reason, n, timeout=1.5):
    """Wait until drop reason's count rose by n (telemetry snapshots lag the loop); the delta."""
    end = time.monotonic() + timeout
    while True:
        now = tel.counters()
        d = L.drop_count(now, reason) - L.drop_count(before, reason)
        if d >= n or time.monotonic() > end:
            return d, now
        time.sleep(0.03)


def delta_all(before, after):
    return {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}


def top_drops(before, after):
    d = delta_all(before, after)
    keep = ("dev.duplicate_request", "dev.nak_sent", "dev.out_of_seq_request")
    return ", ".join("%s+%d" % (k, v) for k, v in sorted(d.items()) if k in keep or (
        ".drop_" in k and k not in ("rt.drop_not_for_us", "rt.drop_not_udp"))) or \
        "no drop counted"


class Session:
    """One server/client pair under attack; the attacker learns the session from the wire."""

    def __init__(self, cfg, name, server_argv, client_argv, port):
        self.cfg, self.name, self.port = cfg, name, port
        cfg.atk.resume()
        self.srv = L.Proc(cfg, cfg.topo.ns["s"], "vs", SRV_IP, server_argv + ["-p", str(port)],
                          name + ".srv", ip6=SRV_IP6, mrlog=True)
        if not L.wait_listen(cfg.topo.ns["s"], port, self.srv):
            raise RuntimeError("%s: server not listening: %s" % (name, self.srv.text()))
        self.cli = L.Proc(cfg, cfg.topo.ns["c"], "vc", CLI_IP,
                          client_argv + ["-p", str(port), SRV_KADDR], name + ".cli")
        self.tel = L.Telemetry(self.srv.pid)
        self.ctel = None
        self.mrs = []

    def learn(self, pred, timeout=30):
        """The first client->server request matching pred: the server's QPN, a PSN, the
        client's UDP source port and P_Key, and (for RDMA) the R_Key and VA."""
        p = self.cfg.atk.wait_for(lambda f: f["src"] == CLI_IP and f["dst"] == SRV_IP and pred(f),
                                  timeout, alive=self.cli.alive)
        if p is None:
            raise RuntimeError("%s: no request seen on the wire: %s %s" %
                               (self.name, self.srv.text(), self.cli.text()))
        self.qpn, self.sport, self.pkey = p["dqpn"], p["sport"], p["pkey"]
        return p

    def load_mrs(self):
        self.mrs = sorted(set(L.read_mrs(self.srv.mrlog)))
        if not self.mrs:
            raise RuntimeError("%s: the server registered no MR (mrlog)" % self.name)
        self.ranges = L.windows(self.srv.pid, self.mrs, MARGIN)
        return self.mrs

    def req(self, opcode, psn, ext=b"", payload=b"", dqpn=None, pad=None, src=CLI_IP,
            dst=SRV_IP, dmac=SRV_MAC, smac=CLI_MAC, pkey=None, tver=0, ackreq=1, **kw):
        """A request as if from the client (or from src), to the server's QP."""
        if pad is None:
            pad = (4 - len(payload) % 4) % 4
        t = wire.bth(opcode, self.qpn if dqpn is None else dqpn, psn,
                     self.pkey if pkey is None else pkey, pad=pad, tver=tver, ackreq=ackreq)
        return wire.build(dmac, smac, src, dst, t + ext + payload + b"\0" * pad,
                          sport=self.sport, **kw)

    def end(self):
        self.tel.close()
        if self.ctel is not None:
            self.ctel.close()
        self.cli.kill()
        self.srv.kill()


def spans(addrs):
    """Sorted addresses as merged 'start-end' text (at most 4 spans)."""
    out = []
    for x in addrs:
        if out and x <= out[-1][1] + 64:
            out[-1][1] = x
        else:
            out.append([x, x])
    txt = ", ".join("0x%x-0x%x" % (a, e + 1) for a, e in out[:4])
    return txt + (" and %d more" % (len(out) - 4) if len(out) > 4 else "")


def check_memory(res, s, before, skip, what):
    """Two verdicts on memory read back after the attacks: (1) nothing changed within GUARD
    bytes of each MR's pages (the MR itself too while the client is stopped: skip says); (2)
    the attack payload appears nowhere new in the window outside the MRs. Changes further out
    are the program's and the shim's own heap objects (a QP moved to ERR flushes its queues
    into a CQ there): listed, not judged."""
    after = L.snapshot(s.srv.pid, s.ranges)
    guard = [((a & ~4095) - GUARD, ((a + n + 4095) & ~4095) + GUARD) for a, n, _, _ in s.mrs]
    diff = L.changed(before, after, skip)
    near = [x for x in diff if any(lo <= x < hi for lo, hi in guard)]
    mrs = [(a, a + n) for a, n, _, _ in s.mrs]
    placed = []
    for start, data in after.items():
        i = data.find(PAY[:16])
        while i >= 0:
            x = start + i
            old = before.get(start, b"")[i:i + 16]
            if old != PAY[:16] and not any(lo <= x < hi for lo, hi in mrs):
                placed.append(x)
            i = data.find(PAY[:16], i + 1)
    total = sum(e - a for a, e in s.ranges)
    far = [x for x in diff if x not in set(near)]
    ok = not near and not placed
    res.add(s.name, "memory " + what,
            "no byte changed within %d bytes of the MRs' pages; the attack payload nowhere "
            "new outside the MRs in %d bytes read" % (GUARD, total),
            "%d changed near the MRs%s; payload found outside at %d places%s" % (
                len(near), (" (" + spans(near) + ")") if near else "", len(placed),
                (" (" + spans(placed) + ")") if placed else ""), ok,
            ("further out, %d bytes of the program's own heap changed: %s" %
             (len(far), spans(far))) if far else "")


def baseline(s, exclude_mrs):
    """Two snapshots 0.3 s apart: bytes that change without any attack (the program's own
    variables near its buffers) are left out of the comparison and counted."""
    a = L.snapshot(s.srv.pid, s.ranges)
    time.sleep(0.3)
    b = L.snapshot(s.srv.pid, s.ranges)
    vol = set(L.changed(a, b))
    skip = [vol] + ([(x, x + n) for x, n, _, _ in s.mrs] if exclude_mrs else [])
    return b, skip, len(vol)


# ---------------------------------------------------------------------------------------------
# Session rc: ibv_rc_pingpong -c runs through every attack the responder and requester must drop
# silently; it must still end with its data checked.

def silent_cases(s, old_psn, ahead_psn, srv_psn, srv_old_psn):
    """(name, expected reason, expectation text, frames). The server's QP is the victim; PSNs
    that could be accepted are a duplicate's (old_psn), so a missing check shows up as a
    duplicate, never as data placed."""
    send = lambda **kw: s.req(wire.RC_SEND_ONLY, old_psn, payload=PAY, **kw)
    bogus = (s.qpn ^ 0x5A5A00) & 0xFFFFFF
    full = send()
    l3 = 14
    cases = [
        ("icrc", "ICRC", "silent drop (IBTA A17.3.3, 7.8.1: ICRC mismatch)",
         [send(bad_icrc=True)]),
        ("tver", "BTH_TVER", "silent drop (IBTA C9-2: TVer not 0)", [send(tver=1)]),
        ("pkey", "PKEY", "silent drop (IBTA C9-43, 10.9.3: P_Key mismatch)",
         [send(pkey=0x7ABC)]),
        ("bad_qpn", "BAD_QPN", "silent drop (IBTA C9-50: no such QP)",
         [send(dqpn=(s.qpn ^ 0x5A5A00) & 0xFFFFFF)]),
        ("opcode_reserved", "OPCODE", "silent drop (IBTA C9-3: reserved opcode 0x1F)",
         [s.req(0x1F, old_psn)]),
        ("opcode_uc_on_rc", "QPT_OPCODE", "silent drop (IBTA C9-49: UC opcode to an RC QP)",
         [s.req(0x24, old_psn, payload=PAY)]),
        ("padcnt", "PADCNT", "silent drop (IBTA 9.2.4, C9-24: pad longer than the payload)",
         [s.req(wire.RC_SEND_ONLY, old_psn, payload=b"", pad=3)]),
        ("payload_on_read", "PAYLOAD_LEN", "silent drop (IBTA C9-4: READ request with payload)",
         [s.req(wire.RC_READ_REQ, old_psn, wire.reth(0x1000, 0x1234, 64), payload=b"\0" * 8,
                pad=0)]),
        ("ip_csum", "IP_CSUM", "silent drop (RFC 791, IBTA A17.4.1)", [send(ip_csum=0x1234)]),
        ("ip_mf", "IP_FRAG", "never parsed (IBTA A17.4.1: never fragmented; MF set)",
         [send(frag=0x2000, dqpn=bogus)]),
        ("ip_frag_offset", "IP_FRAG", "never parsed (IBTA A17.4.1: fragment offset 64)",
         [send(frag=0x0008, dqpn=bogus)]),
        ("ip_frag_pair", "BAD_QPN", "the two fragments of one datagram (to no QP): the "
         "kernel under af_packet reassembles them first (PACKET_FANOUT_FLAG_DEFRAG), droce "
         "then sees one whole datagram and drops it as to no QP (IBTA C9-50)",
         fragments(send(dqpn=bogus, ip_id=0x4242, frag=0), l3, 48)),
        ("ip_len_long", "IP_LEN", "silent drop (IP total length past the frame)",
         [send(ip_len=len(full) - l3 + 40)]),
        ("ip_len_short", "UDP_LEN", "silent drop (IP total length 8 bytes short: the rest "
         "may be Ethernet padding, but then the UDP length is longer than what IP leaves)",
         [send(ip_len=len(full) - l3 - 8)]),
        ("udp_len", "UDP_LEN", "silent drop (RFC 768: UDP length not what IP leaves)",
         [send(udp_len=len(full) - l3 - 20 - 4)]),
    ]
    # cut at every header boundary, lengths then made consistent (a short packet) or left
    # as sent (a truncated one)
    ip_end, udp_end, bth_end = l3 + 20, l3 + 28, l3 + 40
    eth_only = full[:l3]
    cases += [
        ("cut_after_eth", "IP_SHORT", "silent drop (frame ends inside the IPv4 header)",
         [eth_only, full[:l3 + 10]]),
        ("cut_after_ip", "UDP_SHORT", "silent drop (frame ends inside the UDP header)",
         [full[:ip_end], full[:ip_end + 4]]),
        ("cut_after_udp", "BTH_SHORT", "silent drop (IBTA C9-4: no room for BTH and ICRC)",
         [cut_consistent(full, l3, udp_end)]),
        ("cut_inside_bth", "BTH_SHORT", "silent drop (IBTA C9-4: BTH cut at 8 of 12 bytes)",
         [cut_consistent(full, l3, udp_end + 8)]),
        ("cut_inside_reth", "HDR_SHORT", "silent drop (IBTA C9-4: RETH cut at 8 of 16 bytes)",
         [cut_consistent(s.req(wire.RC_WRITE_ONLY, old_psn, wire.reth(0x1000, 1, 0)), l3,
                         bth_end + 8, icrc=True)]),
        ("cut_inside_atometh", "HDR_SHORT",
         "silent drop (IBTA C9-4: AtomicETH cut at 20 of 28 bytes)",
         [cut_consistent(s.req(wire.RC_FETCH_ADD, old_psn, wire.atomic_eth(0x1000, 1, 1)), l3,
                         bth_end + 20, icrc=True)]),
        ("truncated_in_bth", "IP_LEN", "silent drop (IP length says more than the frame holds)",
         [full[:bth_end - 4]]),
        ("truncated_in_payload", "IP_LEN", "silent drop (IP length past the frame's end)",
         [full[:len(full) - 20]]),
    ]
    # PSN window (IBTA 9.7.5.1.1/2): a duplicate is re-ACKed and not placed; a PSN ahead
    # draws one PSN sequence error NAK
    cases += [
        ("psn_duplicate", "dev.duplicate_request",
         "duplicate: ACKed again, not placed (IBTA 9.7.5.1.2)", [full]),
        ("psn_ahead", "PSN_OUT_OF_SEQ",
         "silent drop after one PSN sequence error NAK (IBTA 9.7.5.1.1)",
         [s.req(wire.RC_SEND_ONLY, ahead_psn, payload=PAY)]),
    ]
    # ghost and stale responses at the server's requester (it sends the pongs)
    resp = lambda op, psn, ext: s.req(op, psn, ext)
    cases += [
        ("ghost_ack", "RESP_GHOST", "silent drop (IBTA 9.7.5.2.1: ACK for a PSN never sent)",
         [resp(wire.RC_ACK, (srv_psn + HALF) & 0xFFFFFF, wire.aeth(0, 1))]),
        ("ghost_nak", "RESP_GHOST",
         "silent drop (IBTA 9.7.5.2.1: a Remote Access NAK for a PSN never sent)",
         [resp(wire.RC_ACK, (srv_psn + HALF) & 0xFFFFFF, wire.aeth(0x62, 1))]),
        ("ghost_read_resp", "RESP_GHOST",
         "silent drop (IBTA 9.7.5.2.1: READ response for a PSN never sent)",
         [s.req(wire.RC_READ_RESP_ONLY, (srv_psn + HALF) & 0xFFFFFF, wire.aeth(0, 1),
                payload=PAY)]),
        ("ghost_atomic_ack", "RESP_GHOST",
         "silent drop (IBTA 9.7.5.2.1: atomic ACK for a PSN never sent)",
         [resp(wire.RC_ATOMIC_ACK, (srv_psn + HALF) & 0xFFFFFF,
               wire.aeth(0, 1) + b"\0" * 8)]),
        ("stale_ack", "RESP_STALE",
         "silent drop (IBTA 9.7.5.2.1: ACK before the oldest outstanding PSN)",
         [resp(wire.RC_ACK, srv_old_psn, wire.aeth(0, 1))]),
        ("cnp_no_qp", "BAD_QPN", "silent drop (Annex A17.9.3: CNP to no QP)",
         [s.req(wire.CNP, 0, b"\0" * 16, dqpn=(s.qpn ^ 0x5A5A00) & 0xFFFFFF, ackreq=0)]),
    ]
    # misaddressed (the engine's address checks): expected reasons DST_MAC, DST_IP, SRC_GID,
    # DST_GID
    cases += [
        ("src_ip_spoofed", "SRC_GID",
         "silent drop (IBTA 9.6.1.5 C9-54 analogue, A17.4: source not the QP's remote GID)",
         [send(src=ATK_IP, smac=ATK_MAC)]),
        ("cnp_wrong_source", "SRC_GID",
         "silent drop (A17.9.3: a CNP from a GID not the QP's remote)",
         [s.req(wire.CNP, 0, b"\0" * 16, src=ATK_IP, smac=ATK_MAC, ackreq=0)]),
        ("dst_ip_kernel", "DST_IP",
         "silent drop (destination IP the kernel's own on this interface, not droce's)",
         [send(dst=SRV_KADDR)]),
        ("dst_ip_foreign", "DST_IP", "silent drop (destination IP nobody's here)",
         [send(dst="198.18.0.99")]),
        ("dst_mac_broadcast", "DST_MAC", "silent drop (unicast RoCE to ff:ff:ff:ff:ff:ff)",
         [send(dmac="ff:ff:ff:ff:ff:ff")]),
        ("dst_gid_v6", "DST_GID",
         "silent drop (to the server's IPv6 address, a QP connected on its IPv4 GID)",
         [send(src="::ffff:" + CLI_IP, dst=SRV_IP6)]),
        # the client has no IPv6 address at all: this one is counted on the client's side
        ("ipv6_to_v4_only", "DST_IP", "silent drop (IPv6 to the client, which has only an "
         "IPv4 address)", [s.req(wire.RC_SEND_ONLY, srv_old_psn, payload=PAY, dqpn=s.cli_qpn,
                                 src=SRV_IP6, dst="2001:2::2", smac=SRV_MAC, dmac=CLI_MAC)],
         "cli"),
    ]
    return cases


def fragments(frame, l3, first):
    """frame's IPv4 datagram as two fragments, the first carrying first bytes (a multiple
    of 8) of the IP payload."""
    eth, ip, pay = frame[:l3], bytearray(frame[l3:l3 + 20]), frame[l3 + 20:]
    out = []
    for off, chunk, mf in ((0, pay[:first], 0x2000), (first, pay[first:], 0)):
        h = bytearray(ip)
        h[2:4] = struct.pack("!H", 20 + len(chunk))
        h[6:8] = struct.pack("!H", mf | off // 8)
        h[10:12] = b"\0\0"
        h[10:12] = struct.pack("!H", wire.csum16(bytes(h)))
        out.append(eth + bytes(h) + chunk)
    return out


def cut_consistent(frame, l3, end, icrc=False):
    """frame cut at end with IP total length and UDP length rewritten to match (and, with
    icrc, a right ICRC over what is left appended): a short packet, not a truncated one."""
    b = bytearray(frame[:end]) + (b"\0" * 4 if icrc else b"")
    tot = len(b) - l3
    b[l3 + 2:l3 + 4] = struct.pack("!H", tot)
    b[l3 + 10:l3 + 12] = b"\0\0"
    b[l3 + 10:l3 + 12] = struct.pack("!H", wire.csum16(bytes(b[l3:l3 + 20])))
    if len(b) >= l3 + 28:
        b[l3 + 24:l3 + 26] = struct.pack("!H", tot - 20)
    if icrc:
        b[-4:] = wire.icrc(bytes(b[l3:-4]), False)
    return bytes(b)


def session_rc(cfg, res):
    # -e: both sides sleep on their completion channel instead of spinning, which leaves the
    # CPU to the runtimes' poll loops: ibv_rc_pingpong's fixed local ACK timeout (14: 67 ms,
    # 7 retries) does not survive a runtime kept off the CPU for half a second
    argv = ["ibv_rc_pingpong", "-g", "0", "-c", "-e", "-n", "100000", "-s", "2048"]
    s = Session(cfg, "rc", argv, argv, 20101)
    try:
        first = s.learn(lambda f: f["opcode"] in (wire.RC_SEND_FIRST, wire.RC_SEND_ONLY))
        srv_first = cfg.atk.wait_for(lambda f: f["src"] == SRV_IP and f["opcode"] in
                                     (wire.RC_SEND_FIRST, wire.RC_SEND_ONLY), 10)
        if srv_first is None:
            raise RuntimeError("rc: no server SEND seen")
        s.cli_qpn = srv_first["dqpn"]
        time.sleep(0.2)
        s.load_mrs()
        before_mem, skip, nvol = baseline(s, exclude_mrs=True)
        old_psn = first["psn"]
        last = cfg.atk.seen(lambda f: f["src"] == CLI_IP and f["dst"] == SRV_IP and
                            f["opcode"] <= 0x04)[-1]
        srv_last = cfg.atk.seen(lambda f: f["src"] == SRV_IP and f["opcode"] <= 0x04)[-1]
        cfg.atk.pause()
        cases = silent_cases(s, old_psn, (last["psn"] + HALF) & 0xFFFFFF, srv_last["psn"],
                             (srv_first["psn"] - 16) & 0xFFFFFF)
        t_battery = time.monotonic()
        for name, reason, expect, frames, *side in cases:
            tel = s.tel
            if side:
                if s.ctel is None:
                    s.ctel = L.Telemetry(s.cli.pid)
                tel = s.ctel
            if not s.srv.alive() or not s.cli.alive():
                res.add("rc", name, expect, "the legitimate session ended before this case",
                        False)
                continue
            before = tel.counters()
            for f in frames:
                cfg.atk.send(f)
            if reason.startswith("dev."):
                end = time.monotonic() + 3
                while True:
                    after = tel.counters()
                    d = after.get(reason, 0) - before.get(reason, 0)
                    if d >= 1 or time.monotonic() > end:
                        break
                    time.sleep(0.03)
                ok = d >= 1
                obs = "%s +%d" % (reason, d)
            else:
                n = 1 if name == "ip_frag_pair" else len(frames)	# one datagram
                d, after = settle(tel, before, reason, n)
                ok = d >= n
                obs = "drop_%s +%d (%s)" % (reason, d, top_drops(before, after))
                if reason == "IP_FRAG" and not ok:
                    # the af_packet PMD's PACKET_FANOUT_FLAG_DEFRAG makes the kernel hold
                    # fragments for reassembly: a lone one never reaches droce. Sent to no
                    # QP, one parsed past IP would be counted BAD_QPN.
                    nq = L.drop_count(after, "BAD_QPN") - L.drop_count(before, "BAD_QPN")
                    ok = nq == 0
                    obs = "not delivered to droce (kernel reassembly holds it), BAD_QPN " \
                          "+%d (%s)" % (nq, top_drops(before, after))
            st = s.tel.qps().get(s.qpn, {}).get("state", "gone") if not side else \
                tel.qps().get(s.cli_qpn, {}).get("state", "gone")
            ok = ok and st == "RTS"
            res.add("rc", name, "%s; drop_%s" % (expect, reason) if not reason.startswith("dev.")
                    else "%s; %s" % (expect, reason), "%s; QP %s" % (obs, st), ok)
        check_memory(res, s, before_mem, skip, "outside the MRs (%d bytes changing by "
                     "themselves left out)" % nvol)
        cfg.figures.append("rc: %d attacks in %.1f s while ibv_rc_pingpong ran" %
                           (len(cases), time.monotonic() - t_battery))
        rc_c = s.cli.wait(120)
        rc_s = s.srv.wait(30)
        out_c, err_c = s.cli.text()
        out_s, err_s = s.srv.text()
        ok = rc_c == 0 and rc_s == 0 and "100000 iters" in out_c and "100000 iters" in out_s
        res.add("rc", "legitimate_session", "ibv_rc_pingpong -c: 100000 iterations, data "
                "checked, both exit 0", "client exit %s, server exit %s%s" %
                (rc_c, rc_s, "" if ok else ": " + (err_c + err_s)[-300:]), ok)
    finally:
        s.end()


# ---------------------------------------------------------------------------------------------
# Sessions where the attack moves the server's QP to ERR: one server per attack, its client
# stopped (SIGSTOP) once the attacker has what it needs, so the PSN is exact and memory,
# the MRs included, holds still.

def counters_at_exit(s):
    """A server that ended by itself: the counters it wrote at close (counters_file)."""
    import glob
    import json
    files = glob.glob(os.path.join(s.cfg.tmp, "%s-%d.json" % (s.srv.name, s.srv.pid)))
    if not files:
        return {}
    data = json.load(open(files[0]))["counters"]
    return {g + "." + k: v for g in data for k, v in data[g].items()}


def fatal(cfg, res, group, argv, learn_op, cases, port):
    """One perftest server with a QP per case (-q N), its client stopped once a request of
    each QP was seen; each case attacks its own QP at that QP's exact expected PSN."""
    n = len(cases)
    s = Session(cfg, group, argv + ["-q", str(n)], argv + ["-q", str(n)], port)
    try:
        s.learn(lambda f: f["opcode"] == learn_op)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            qps = {f["dqpn"] for f in cfg.atk.seen(lambda f: f["src"] == CLI_IP and
                                                   f["dst"] == SRV_IP and
                                                   f["opcode"] == learn_op)}
            if len(qps) >= n or not s.cli.alive():
                break
            time.sleep(0.002)
        s.cli.stop()
        # the sniffer has seen every request once nothing new arrives for 0.3 s
        count = -1
        while count != len(cfg.atk.seen()):
            count = len(cfg.atk.seen())
            time.sleep(0.3)
        reqs = cfg.atk.seen(lambda f: f["src"] == CLI_IP and f["dst"] == SRV_IP and
                            f["opcode"] < 0x20)
        first = {}
        for f in reqs:
            if f["opcode"] == learn_op:
                first.setdefault(f["dqpn"], f)
        if len(first) < n:
            raise RuntimeError("%s: requests seen on %d QPs of %d" % (group, len(first), n))
        # The server expects the PSN after the last request seen, unless some never reached
        # it (its af_packet ring overflows on a loaded host): then the PSN sequence NAK it
        # sent after the last request names what it expects
        naks = cfg.atk.seen(lambda f: f["src"] == SRV_IP and f["opcode"] == wire.RC_ACK and
                            f["syndrome"] == 0x60 + wire.NAK_PSN_SEQ)
        epsn = {}
        for q, p in first.items():
            mine = [f for f in reqs if f["dqpn"] == q]
            last = max(mine, key=lambda f: (f["psn"] - p["psn"]) & 0xFFFFFF)
            epsn[q] = (last["psn"] + 1) & 0xFFFFFF
            span = (epsn[q] - p["psn"]) & 0xFFFFFF
            later = [f for f in naks if f["t"] > max(x["t"] for x in mine) and
                     ((f["psn"] - p["psn"]) & 0xFFFFFF) <= span]
            if later:
                epsn[q] = later[-1]["psn"]
        s.load_mrs()
        before_mem, skip, nvol = baseline(s, exclude_mrs=False)
        for (name, build, nak, reason, expect), (qpn, p) in zip(cases, sorted(first.items())):
            s.qpn = qpn
            e = epsn[qpn]
            cfg.atk.clear()
            alive = s.srv.alive()
            before = s.tel.counters() if alive else {}
            cfg.atk.send(build(s, p, e))
            nakf = cfg.atk.wait_for(lambda f: f["src"] == SRV_IP and f["dqpn"] != 0 and
                                    f["opcode"] == wire.RC_ACK, 3.0)
            if nakf is not None and nakf["syndrome"] == 0x60 + wire.NAK_PSN_SEQ and \
                    nakf["psn"] != e:
                # the guess was ahead (requests lost before the server): as an attacker
                # would, take the expected PSN from the server's sequence NAK and go again
                e = nakf["psn"]
                cfg.atk.clear()
                cfg.atk.send(build(s, p, e))
                nakf = cfg.atk.wait_for(lambda f: f["src"] == SRV_IP and f["dqpn"] != 0 and
                                        f["opcode"] == wire.RC_ACK, 3.0)
            time.sleep(0.2)
            replies = cfg.atk.seen(lambda f: f["src"] == SRV_IP and f["opcode"] == wire.RC_ACK)
            got = ["%s psn %s" % (wire.NAK_NAMES.get(f["syndrome"] & 31, "?")
                                  if (f["syndrome"] >> 5) == 3 else "ACK",
                                  "ok" if f["psn"] == e else "0x%x (expected 0x%x)" %
                                  (f["psn"], e)) for f in replies]
            want = "%s psn ok" % wire.NAK_NAMES[nak]
            st, note = "gone", ""
            if s.srv.alive():
                d, after = settle(s.tel, before, reason, 1)
                end = time.monotonic() + 3
                while time.monotonic() < end:
                    st = s.tel.qps().get(qpn, {}).get("state", "gone")
                    if st == "ERR":
                        break
                    time.sleep(0.05)
            else:
                # the program polled the error completion and ended on its own (an unmodified
                # perftest server does): its counters were saved at exit
                rc = s.srv.wait(10)
                after = counters_at_exit(s)
                d = L.drop_count(after, reason) - L.drop_count(before, reason)
                st = "ERR" if rc is not None and rc >= 0 and after else "gone"
                note = "the server program ended itself with exit %s after the error " \
                       "completion: %s" % (rc, s.srv.text()[1].strip().splitlines()[:2])
            ok = got == [want] and st == "ERR" and d >= 1 and nakf is not None
            res.add(group, name, "%s; NAK %s, QP ERR, drop_%s" % (expect, wire.NAK_NAMES[nak],
                    reason), "%s; QP %s; drop_%s +%d (%s)" % (
                        " ".join(got) or "no NAK", st, reason, d, top_drops(before, after)),
                    ok, note)
            if s.srv.alive():
                check_memory(res, s, before_mem, skip, "after %s: around and inside the MRs "
                             "(%d bytes changing by themselves left out)" % (name, nvol))
            elif s.srv.p.returncode is not None and s.srv.p.returncode < 0:
                res.add(group, name + " crash", "the server alive", "killed by signal %d" %
                        -s.srv.p.returncode, False)
        if s.srv.alive():
            memory_control(res, s, before_mem, skip)
    finally:
        s.cli.cont()
        s.end()


def memory_control(res, s, before, skip):
    """The memory check itself must be able to fail: 16 bytes of the payload written just past
    the first MR's end through /proc/PID/mem (as an out-of-bounds WRITE would) must be
    flagged by it."""
    a, n = s.mrs[0][0], s.mrs[0][1]
    with open("/proc/%d/mem" % s.srv.pid, "r+b", buffering=0) as f:
        f.seek(a + n)
        saved = f.read(16)
        f.seek(a + n)
        f.write(PAY[:16])
        probe = Results(quiet=True)
        check_memory(probe, s, before, skip, "control")
        # put the bytes back: they may be the allocator's, and the program frees later
        f.seek(a + n)
        f.write(saved)
    flagged = not probe.rows[0][4]
    res.add(s.name, "memory_check_control", "16 payload bytes written past the MR's end by "
            "the test itself are flagged", probe.rows[0][3], flagged)


def fatal_cases(cfg, res):
    # -u 20: the client's local ACK timeout (4 s) outlasts its stop; -n far more than it can
    # send before the attacker stops it
    base = ["-x", "0", "-n", "5000000", "-u", "20"]
    wbw = ["ib_write_bw", "-s", "64"] + base
    rbw = ["ib_read_bw", "-s", "64"] + base
    abw = ["ib_atomic_bw"] + base
    sbw = ["ib_send_bw", "-s", "64"] + base
    W, R, A, S = wire.RC_WRITE_ONLY, wire.RC_READ_REQ, wire.RC_FETCH_ADD, wire.RC_SEND_ONLY
    mr_end = lambda s, p: [a + n for a, n, _, rk in s.mrs if rk == p["rkey"]][0]
    mr_start = lambda s, p: [a for a, n, _, rk in s.mrs if rk == p["rkey"]][0]
    w = lambda s, e, va, rk, ln, pay: s.req(W, e, wire.reth(va, rk, ln), payload=pay)
    groups = [
        ("write_bw", wbw, W, [
            ("write_rkey", lambda s, p, e: w(s, e, p["va"], p["rkey"] ^ 0x00F0F000, 64,
                                             PAY), wire.NAK_REM_ACCESS, "RKEY",
             "WRITE with an R_Key no MR has (IBTA C9-88, 9.7.5.2.4; rxe RKEY_VIOLATION)"),
            ("write_past_end", lambda s, p, e: w(s, e, mr_end(s, p) - 32, p["rkey"], 64,
                                                 PAY), wire.NAK_REM_ACCESS, "RKEY",
             "WRITE of 64 bytes at the MR's last 32 (IBTA C9-88 bounds)"),
            ("write_below_start", lambda s, p, e: w(s, e, mr_start(s, p) - 32, p["rkey"], 64,
                                                    PAY), wire.NAK_REM_ACCESS, "RKEY",
             "WRITE starting 32 bytes before the MR"),
            ("write_wrap_2_64", lambda s, p, e: w(s, e, 2**64 - 32, p["rkey"], 64,
                                                  PAY), wire.NAK_REM_ACCESS, "RKEY",
             "WRITE at VA 2^64-32, length 64: the range wraps to 0"),
            ("write_huge_len", lambda s, p, e: w(s, e, p["va"], p["rkey"], 0x7FFFFFF0,
                                                 PAY), wire.NAK_REM_ACCESS, "RKEY",
             "WRITE whose RETH length (2 GiB - 16) runs past the MR (IBTA C9-88)"),
            ("write_len_over_2_31", lambda s, p, e: w(s, e, p["va"], p["rkey"], 0xFFFFFFF0,
                                                      PAY), wire.NAK_INVALID_REQ, "LENGTH",
             "WRITE whose RETH length (4 GiB - 16) is above the largest message, 2^31 "
             "(rxe check_length: Invalid Request)"),
            ("write_past_reth_len", lambda s, p, e: w(s, e, p["va"], p["rkey"], 16,
                                                      PAY), wire.NAK_INVALID_REQ,
             "LENGTH", "WRITE ONLY carrying 64 bytes for a RETH length of 16 (IBTA C9-92; "
             "rxe RESPST_ERR_LENGTH: Invalid Request)"),
            ("write_middle_first", lambda s, p, e: s.req(wire.RC_WRITE_MIDDLE, e,
                                                         payload=PAY),
             wire.NAK_INVALID_REQ, "OPCODE_SEQ",
             "WRITE MIDDLE with no FIRST before it (IBTA C9-90 opcode sequence)"),
            ("read_on_write_qp", lambda s, p, e: s.req(R, e, wire.reth(p["va"], p["rkey"], 64)),
             wire.NAK_INVALID_REQ, "QP_ACCESS",
             "READ to a QP that ib_write_bw enabled for remote writes only (IBTA 9.7.5.1.x "
             "QP access; rxe check_op_valid: Invalid Request)"),
            ("atomic_on_write_qp", lambda s, p, e: s.req(A, e, wire.atomic_eth(
                (p["va"] + 7) & ~7, p["rkey"], 1)), wire.NAK_INVALID_REQ, "QP_ACCESS",
             "FETCH_ADD to a QP not enabled for remote atomics (rxe: Invalid Request)"),
        ]),
        ("read_bw", rbw, R, [
            ("read_past_end", lambda s, p, e: s.req(R, e, wire.reth(mr_end(s, p) - 16,
                                                                    p["rkey"], 64)),
             wire.NAK_REM_ACCESS, "RKEY", "READ of 64 bytes at the MR's last 16"),
            ("write_on_read_qp", lambda s, p, e: w(s, e, p["va"], p["rkey"], 64, PAY),
             wire.NAK_INVALID_REQ, "QP_ACCESS",
             "WRITE to a QP that ib_read_bw enabled for remote reads only (rxe check_op_valid: "
             "Invalid Request)"),
        ]),
        ("atomic_bw", abw, A, [
            ("atomic_rkey", lambda s, p, e: s.req(A, e, wire.atomic_eth(
                p["va"], p["rkey"] ^ 0x00F0F000, 1)), wire.NAK_REM_ACCESS, "RKEY",
             "FETCH_ADD with a wrong R_Key"),
            ("atomic_misaligned", lambda s, p, e: s.req(A, e, wire.atomic_eth(
                p["va"] + 4, p["rkey"], 1)), wire.NAK_INVALID_REQ, "ATOMIC_ALIGN",
             "FETCH_ADD at VA+4, not 8-aligned (IBTA 9.4.5; rxe: Invalid Request)"),
            ("atomic_past_end", lambda s, p, e: s.req(A, e, wire.atomic_eth(
                mr_end(s, p), p["rkey"], 1)), wire.NAK_REM_ACCESS, "RKEY",
             "FETCH_ADD at the MR's end"),
        ]),
        ("send_bw", sbw, S, [
            ("send_oversized", lambda s, p, e: s.req(S, e, payload=PAY * 8),
             wire.NAK_INVALID_REQ, "LENGTH",
             "SEND of 512 bytes into a 64-byte receive (IBTA C9-146; rxe: Invalid Request)"),
        ]),
    ]
    port = 20200
    for group, argv, op, cases in groups:
        port += 1
        if cfg.only_cases:
            cases = [c for c in cases if c[0] in cfg.only_cases]
        if not cases:
            continue
        try:
            fatal(cfg, res, group, argv, op, cases, port)
        except Exception as e:  # a broken session fails its cases, the other groups run
            traceback.print_exc()
            res.add(group, "session", "runs", "failed: %s" % e, False)


# ---------------------------------------------------------------------------------------------
# Session ud: Q_Key and P_Key on a UD QP while ibv_ud_pingpong -c runs.

def session_ud(cfg, res):
    argv = ["ibv_ud_pingpong", "-g", "0", "-c", "-e", "-n", "20000", "-s", "1024"]
    s = Session(cfg, "ud", argv, argv, 20301)
    try:
        p = s.learn(lambda f: f["opcode"] == wire.UD_SEND_ONLY)
        qkey, sqpn = p["qkey"], p["sqpn"]
        cfg.atk.pause()
        s.load_mrs()
        before_mem, skip, nvol = baseline(s, exclude_mrs=True)
        ud = lambda qk, pkey=None: s.req(wire.UD_SEND_ONLY, 0, wire.deth(qk, sqpn),
                                         payload=PAY, pkey=pkey, ackreq=0)
        cases = [
            ("qkey_wrong", "QKEY", "silent drop (IBTA C10-15, 10.2.5: Q_Key mismatch)",
             ud(qkey ^ 0x0F0F0F0F)),
            ("qkey_privileged", "QKEY", "silent drop (IBTA 10.2.5: a privileged Q_Key, high "
             "bit set, the QP does not hold)", ud(0x80000000 | qkey)),
            ("qkey_qp1", "QKEY", "silent drop (the GSI Q_Key 0x80010000 at a UD QP)",
             ud(0x80010000)),
            ("pkey", "PKEY", "silent drop (IBTA C9-43: P_Key mismatch)", ud(qkey, 0x7ABC)),
        ]
        for name, reason, expect, frame in cases:
            before = s.tel.counters()
            cfg.atk.send(frame)
            d, after = settle(s.tel, before, reason, 1)
            res.add("ud", name, "%s; drop_%s" % (expect, reason), "drop_%s +%d (%s)" %
                    (reason, d, top_drops(before, after)), d >= 1)
        check_memory(res, s, before_mem, skip, "outside the MRs (%d bytes changing by "
                     "themselves left out)" % nvol)
        rc_c, rc_s = s.cli.wait(120), s.srv.wait(30)
        out_c, err_c = s.cli.text()
        ok = rc_c == 0 and rc_s == 0 and "20000 iters" in out_c
        res.add("ud", "legitimate_session", "ibv_ud_pingpong -c: 20000 iterations, data "
                "checked, both exit 0", "client exit %s, server exit %s%s" %
                (rc_c, rc_s, "" if ok else ": " + err_c[-300:]), ok)
    finally:
        s.end()


# ---------------------------------------------------------------------------------------------
# Flood: a bounded count of bogus frames while ib_write_bw runs for a fixed time.

def write_bw_gbps(out):
    rows = [ln.split() for ln in out.splitlines() if ln.strip().startswith("65536")]
    return rows[-1][3] if rows and len(rows[-1]) > 3 else "?"


def session_flood(cfg, res, count):
    """ib_write_bw -D 4 once alone (the reference), then -D 10 with count bogus frames sent
    at the server as fast as the attacker can (four kinds: bad ICRC, no such QP, wrong P_Key,
    truncated)."""
    # -u 18 (1 s local ACK timeout): frames the flood pushes out of the af_packet ring are
    # resent rather than ending the run on a loaded host
    argv = ["ib_write_bw", "-x", "0", "-s", "65536", "-u", "18", "--report_gbits", "-D", "10"]
    rargv = argv[:-1] + ["4"]
    ref = Session(cfg, "flood_reference", rargv, rargv, 20400)
    try:
        ref.learn(lambda f: f["opcode"] in (wire.RC_WRITE_FIRST, wire.RC_WRITE_ONLY))
        cfg.atk.pause()
        rss_ref = L.rss_kb(ref.srv.pid)
        ref.cli.wait(60)
        ref.srv.wait(30)
        gbps_ref = write_bw_gbps(ref.cli.text()[0])
    finally:
        ref.end()
    s = Session(cfg, "flood", argv, argv, 20401)
    try:
        p = s.learn(lambda f: f["opcode"] in (wire.RC_WRITE_FIRST, wire.RC_WRITE_ONLY))
        cfg.atk.pause()
        time.sleep(0.3)
        s.load_mrs()
        before_mem, skip, nvol = baseline(s, exclude_mrs=True)
        rss0 = L.rss_kb(s.srv.pid)
        before = s.tel.counters()
        psn = p["psn"]
        kinds = [
            s.req(wire.RC_WRITE_ONLY, psn, wire.reth(p["va"], p["rkey"], 64),
                  payload=PAY, bad_icrc=True),
            s.req(wire.RC_SEND_ONLY, psn, payload=PAY * 4, dqpn=(s.qpn ^ 0x5A5A00) & 0xFFFFFF),
            s.req(wire.RC_SEND_ONLY, psn, payload=PAY, pkey=0x7ABC),
            s.req(wire.RC_WRITE_ONLY, psn, wire.reth(p["va"], p["rkey"], 64), payload=PAY)[:60],
        ]
        t0 = time.monotonic()
        for i in range(count):
            cfg.atk.sock.send(kinds[i & 3])
        t_flood = time.monotonic() - t0
        time.sleep(0.3)
        alive = s.srv.alive()
        rss1 = L.rss_kb(s.srv.pid) if alive else -1
        after = s.tel.counters() if alive else {}
        if alive:
            check_memory(res, s, before_mem, skip, "outside the MRs after the flood (%d "
                         "bytes changing by themselves left out)" % nvol)
        rc_c, rc_s = s.cli.wait(60), s.srv.wait(30)
        if not after:
            after = counters_at_exit(s)
        kinds_ok = all(L.drop_count(after, r) > L.drop_count(before, r)
                       for r in ("ICRC", "BAD_QPN", "PKEY", "IP_LEN"))
        got = sum(L.drop_count(after, r) - L.drop_count(before, r)
                  for r in ("ICRC", "BAD_QPN", "PKEY", "IP_LEN"))
        res.add("flood", "counted", "each kind counted under its own reason (ICRC, BAD_QPN, "
                "PKEY, IP_LEN), the server alive", "%d of %d counted (%s)%s" % (
                    got, count, top_drops(before, after), "" if alive else "; SERVER GONE"),
                alive and kinds_ok)
        gbps = write_bw_gbps(s.cli.text()[0])
        ok = rc_c == 0 and rc_s == 0 and gbps != "?"
        res.add("flood", "legitimate_transfer", "ib_write_bw -D 10 ends by itself, both exit 0",
                "client exit %s, server exit %s, %s Gb/s average (alone: %s Gb/s)" %
                (rc_c, rc_s, gbps, gbps_ref), ok)
        cfg.figures.append("flood: %d bogus frames in %.2f s (%.0f/s) at the server during "
                           "ib_write_bw -s 65536 -D 10: %s Gb/s (alone, -D 4: %s Gb/s); %d of them "
                           "counted by droce (the rest lost before it); server RSS %d kB "
                           "before the flood, %d kB after (alone: %d kB)" %
                           (count, t_flood, count / max(t_flood, 1e-6), gbps, gbps_ref, got,
                            rss0, rss1, rss_ref))
    finally:
        s.end()


def scapy_check():
    """wire.build against Scapy's RoCE layers (tests/golden/roce_layers.py) on one frame."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
    from scapy.all import Ether, IP, UDP, Raw, raw
    from scapy.contrib.roce import BTH
    import roce_layers
    ours = wire.build(SRV_MAC, CLI_MAC, CLI_IP, SRV_IP,
                      wire.bth(wire.RC_WRITE_ONLY, 0x123456, 0x654321, ackreq=1) +
                      wire.reth(0x1122334455667788, 0xCAFE, 8) + b"ABCDEFGH", ip_id=1)
    theirs = raw(Ether(dst=SRV_MAC, src=CLI_MAC) /
                 IP(src=CLI_IP, dst=SRV_IP, id=1, flags="DF", ttl=64) /
                 UDP(sport=0xC000, dport=4791, chksum=0) /
                 BTH(opcode=wire.RC_WRITE_ONLY, dqpn=0x123456, psn=0x654321, ackreq=1) /
                 roce_layers.RETH(va=0x1122334455667788, rkey=0xCAFE, dlen=8) /
                 Raw(b"ABCDEFGH"))
    if ours != theirs:
        raise RuntimeError("wire.build disagrees with Scapy:\n%s\n%s" % (ours.hex(),
                                                                        theirs.hex()))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = [a for a in sys.argv[1:] if a.startswith("--")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("FAIL: needs root (network namespaces, veth, a bridge, raw sockets, "
              "/proc/PID/mem)")
        return 1
    cfg = Cfg()
    cfg.droce_run, cfg.mrlog_so = (os.path.abspath(a) for a in args)
    cfg.procs, cfg.figures = [], []
    only = [o.split("=", 1)[1].split(",") for o in opts if o.startswith("--only=")]
    cfg.only = set(only[0]) if only else set()
    cfg.only_cases = {x for x in cfg.only if x not in ("rc", "ud", "fatal", "flood")}
    keep = "--keep" in opts
    cfg.tmp = tempfile.mkdtemp(prefix="droce_hostile.")
    # meson's timeout and Ctrl-C end the run through the cleanup below (namespaces removed)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    res = Results()
    cfg.topo = L.Topology("%d" % os.getpid())
    try:
        scapy_check()
        cfg.topo.up()
        cfg.atk = L.Attacker(cfg.topo.ns["a"], "va")
        want = lambda x: not cfg.only or x in cfg.only or (x == "fatal" and cfg.only_cases)
        for name, fn in (("rc", session_rc), ("ud", session_ud), ("fatal", fatal_cases),
                         ("flood", lambda c, r: session_flood(c, r, 50000))):
            if not want(name):
                continue
            t0 = time.monotonic()
            try:
                fn(cfg, res)
            except Exception as e:
                traceback.print_exc()
                res.add(name, "session", "runs", "failed: %s" % e, False)
            print("-- %s: %.1f s" % (name, time.monotonic() - t0), flush=True)
        for p in cfg.procs:
            if p.p.returncode is not None and p.p.returncode < 0 and p.p.returncode != -9:
                res.add("all", p.name, "no crash", "killed by signal %d" % -p.p.returncode,
                        False)
    finally:
        for p in cfg.procs:
            p.kill()
        if getattr(cfg, "atk", None):
            cfg.atk.close()
        cfg.topo.down()
        if keep:
            print("logs kept in", cfg.tmp)
        else:
            import shutil
            shutil.rmtree(cfg.tmp, ignore_errors=True)
    for f in cfg.figures:
        print(f)
    bad = res.failed()
    print("%d cases, %d passed, %d failed" % (len(res.rows), len(res.rows) - len(bad), len(bad)))
    for r in bad:
        print("FAILED: %s/%s: expected %s; observed %s" % r[:4])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
