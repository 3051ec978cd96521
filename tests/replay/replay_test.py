#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A Scapy-made RC request stream replayed into a droce responder through DPDK's net_pcap.

1. replay-resp --params (net_pcap with an empty rx_pcap) prints the responder's QPNs, R_Key, VA
   and MAC for DROCE_SEED and dumps its initial memory;
2. Scapy writes the requests to rx_pcap. QP 0: SEND, RDMA WRITE single and multi-packet, RDMA
   READ multi-packet, FETCH_ADD, CMP_SWAP hit and miss, duplicates of an atomic, a WRITE and a
   READ, a PSN gap and a packet inside it, the gap's SEND, SEND and RDMA WRITE with immediate;
   its PSNs wrap through 0xffffff.
   QP 1: a WRITE with a bad R_Key, a SEND after it. QP 2 (no receive posted): a SEND (RNR NAK).
   QP 3: a WRITE MIDDLE out of sequence. QP 4: a SEND longer than its receive buffer;
3. replay-resp (same seed) reads them from rx_pcap and writes its answers to tx_pcap;
4. every response is checked per QP, in order: opcode, PSN, AETH syndrome and MSN, READ
   response data bytes, AtomicAckETH original values, addresses, ICRC (Scapy's computation and
   `droce-pcap verify`); then the receive completions, the counters and the responder's memory
   afterwards, byte for byte.

Mode ipv6: the same over IPv6 (2001:2::/48; Scapy's IPv6 ICRC from tests/golden/roce_layers.py).
Mode fatal-burst: QP 0 only, the bad R_Key WRITE right behind the others in the same Rx burst
(a known engine bug drops the responses still queued: expected to fail, exit 1; any other
failure exits 99).

    replay_test.py REPLAY_RESP DROCE_PCAP [main|ipv6|fatal-burst]  (/usr/bin/python3: Scapy)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'golden'))
import roce_layers as rl  # noqa: E402
from scapy.compat import raw  # noqa: E402
from scapy.contrib.roce import AETH, BTH  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import rdpcap, wrpcap  # noqa: E402

SEED = 4242
# addresses per IP version: 198.18.0.0/15 and 2001:2::/48 (RFC 2544 / RFC 5180 benchmarking)
ADDR = {4: ('198.18.0.1', '198.18.0.2', '/24', 'DROCE_IPV4'),
	6: ('2001:2::1', '2001:2::2', '/64', 'DROCE_IPV6')}
IPVER = 4	# set by main() from the mode
PEER_MAC = '02:00:00:00:00:02'
PEER_QPN = 0x0abcde
P0 = 0xfffffa		# the PSNs of the stream wrap through 0xffffff
MTU = 1024
M24 = 0xffffff

OP = dict(SEND_FIRST=0x00, SEND_MIDDLE=0x01, SEND_LAST=0x02, SEND_ONLY=0x04,
	  SEND_ONLY_IMM=0x05, WRITE_FIRST=0x06, WRITE_MIDDLE=0x07, WRITE_LAST=0x08,
	  WRITE_ONLY=0x0A, WRITE_ONLY_IMM=0x0B, READ_REQ=0x0C, READ_FIRST=0x0D, READ_MIDDLE=0x0E,
	  READ_LAST=0x0F, READ_ONLY=0x10, ACK=0x11, ATOMIC_ACK=0x12, CMP_SWAP=0x13, FETCH_ADD=0x14)
# AETH syndromes (IBTA 9.7.5.2, table 43): NAK 011 + code, RNR NAK 001 + timer
NAK_PSN_SEQ, NAK_INV_REQ, NAK_REM_ACCESS, RNR_NAK = 0x60, 0x61, 0x62, 0x20
WC_RECV, WC_RECV_RDMA_IMM = 128, 129	# enum droce_wc_opcode (= ibv_wc_opcode)
WC_WITH_IMM = 2				# enum droce_wc_flags

failed = []	# descriptions of the failed checks
# exit status for a failure other than the known one of fatal-burst (meson: ERROR even with
# should_fail)
HARD_ERROR = 99


def check(desc, ok, detail=''):
	if not ok:
		failed.append(desc)
	print('%s %s%s' % ('ok:  ' if ok else 'FAIL:', desc, (' (%s)' % detail) if detail else ''))
	return ok


def psn(k):
	return (P0 + k) & M24


def pattern(seed, n):
	return bytes((seed * 37 + i * 11 + (i >> 5)) & 0xff for i in range(n))


def run_resp(exe, tmp, rx, tx, extra):
	resp_ip, peer_ip, plen, var = ADDR[IPVER]
	env = dict(os.environ)
	for k in ('DROCE_IPV4', 'DROCE_IPV6', 'DROCE_CONFIG'):
		env.pop(k, None)
	env.update(DROCE_EAL='--no-huge -m 128 --no-pci --no-telemetry --log-level=3',
		   DROCE_VDEV='net_pcap0,rx_pcap=%s,tx_pcap=%s' % (rx, tx),
		   DROCE_SEED=str(SEED), DROCE_LCORES='0')
	env[var] = resp_ip + plen	# the only address: GID index 0
	cmd = [exe, '--peer-ip', peer_ip, '--peer-mac', PEER_MAC, '--peer-qpn', hex(PEER_QPN),
	       '--rq-psn', hex(P0)] + extra
	r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=40)
	print('$ ' + ' '.join(cmd[1:]) + '  -> exit %d' % r.returncode)
	print(r.stdout + r.stderr)
	if r.returncode != 0:
		print('replay-resp failed')
		raise SystemExit(HARD_ERROR)
	m = re.search(r'^replay params: (.*)$', r.stdout, re.M)
	params = dict(kv.split('=') for kv in m.group(1).split())
	return params, r.stdout


class Stream:
	"""Builds request frames and the responses they must get, in order."""

	def __init__(self, prm):
		self.prm = prm
		self.qpns = [int(q, 16) for q in prm['qpns'].split(',')]
		self.qp = 0		# the QP the next requests go to
		self.rkey = int(prm['rkey'], 16)
		self.va = int(prm['va'], 16)
		self.frames = []
		# expected responses: dicts of qp, op, psn, [syn], [msn or (lo, hi)], [data], [orig]
		self.expect = []

	def req(self, op, k, payload=b'', ackreq=False, exts=()):
		pad = (4 - len(payload) % 4) % 4
		resp_ip, peer_ip = ADDR[IPVER][:2]
		if IPVER == 4:
			l3 = IP(src=peer_ip, dst=resp_ip, flags='DF', ttl=64)
			udp = UDP(sport=0xc123, dport=4791, chksum=0)
		else:	# Scapy fills in the UDP checksum; the ICRC masks it (IBTA A17.3.3)
			l3 = IPv6(src=peer_ip, dst=resp_ip, hlim=64)
			udp = UDP(sport=0xc123, dport=4791)
		pkt = Ether(dst=self.prm['mac'], src=PEER_MAC) / l3 / udp / \
			BTH(opcode=OP[op], padcount=pad, pkey=0xffff, dqpn=self.qpns[self.qp],
			    ackreq=int(ackreq), psn=psn(k))
		for e in exts:
			pkt = pkt / e
		if payload or pad:
			pkt = pkt / Raw(payload + b'\0' * pad)
		self.frames.append(raw(pkt))
		return len(self.frames) - 1

	def again(self, idx):
		"""A byte-identical duplicate of an earlier frame."""
		self.frames.append(self.frames[idx])

	def ack(self, k, msn, coalesce=True, psn_lo=None):
		self.expect.append(dict(qp=self.qp, op=OP['ACK'], psn=psn(k), syn='ack', msn=msn,
					psn_lo=None if psn_lo is None else psn(psn_lo),
					coalesce=coalesce))

	def nak(self, k, syn, msn):
		self.expect.append(dict(qp=self.qp, op=OP['ACK'], psn=psn(k), syn=syn, msn=msn))

	def read_resp(self, k, data, msn):
		n = max(1, (len(data) + MTU - 1) // MTU)
		for i in range(n):
			op = 'READ_ONLY' if n == 1 else 'READ_FIRST' if i == 0 else \
				'READ_LAST' if i == n - 1 else 'READ_MIDDLE'
			e = dict(qp=self.qp, op=OP[op], psn=psn(k + i),
				 data=data[i * MTU:(i + 1) * MTU])
			if op != 'READ_MIDDLE':		# MIDDLE carries no AETH (IBTA 9.3.5)
				e.update(syn='ack', msn=msn)
			self.expect.append(e)

	def atomic_ack(self, k, orig, msn):
		self.expect.append(dict(qp=self.qp, op=OP['ATOMIC_ACK'], psn=psn(k), syn='ack',
					msn=msn, orig=orig))


def build(st, mem0, mode):
	"""The request stream, its expected responses, the memory image it must leave and the
	receive completions (wr_id, status, byte_len) per QP."""
	va, rkey = st.va, st.rkey
	aoff = int(st.prm['atomic_off'], 16)
	mem = bytearray(mem0)
	recv_ok = []		# the SENDs' data, per receive WQE consumed, in order

	# 1. SEND only, 100 B -> ACK, MSN 1, into the first receive
	a = pattern(1, 100)
	st.req('SEND_ONLY', 0, a, ackreq=True)
	st.ack(0, 1)
	recv_ok.append(a)
	# 2. RDMA WRITE only, 200 B at +0x100 -> ACK, MSN 2
	b = pattern(2, 201)
	w_only = st.req('WRITE_ONLY', 1, b, ackreq=True, exts=[rl.RETH(va=va + 0x100, rkey=rkey,
									dlen=len(b))])
	mem[0x100:0x100 + len(b)] = b
	st.ack(1, 2)
	# 3. RDMA WRITE, 4000 B in 4 packets at +0x1000 (AckReq on the LAST) -> ACK, MSN 3
	c = pattern(3, 4000)
	st.req('WRITE_FIRST', 2, c[0:1024], exts=[rl.RETH(va=va + 0x1000, rkey=rkey, dlen=4000)])
	st.req('WRITE_MIDDLE', 3, c[1024:2048])
	st.req('WRITE_MIDDLE', 4, c[2048:3072])
	st.req('WRITE_LAST', 5, c[3072:], ackreq=True)
	mem[0x1000:0x1000 + 4000] = c
	st.ack(5, 3)
	# 4. RDMA READ, 3000 B from inside what 3 wrote: 3 responses, PSNs 6..8, MSN 4
	rd_data = bytes(mem[0x1000 + 500:0x1000 + 3500])
	rd = st.req('READ_REQ', 6, exts=[rl.RETH(va=va + 0x1000 + 500, rkey=rkey, dlen=3000)])
	st.read_resp(6, rd_data, 4)
	# 5. FETCH_ADD +5 on 1000 -> original 1000, MSN 5
	v0 = int.from_bytes(mem[aoff:aoff + 8], 'little')
	v1 = int.from_bytes(mem[aoff + 8:aoff + 16], 'little')
	fa = st.req('FETCH_ADD', 9, exts=[rl.AtomicETH(va=va + aoff, rkey=rkey, swap_add=5,
							compare=0)])
	st.atomic_ack(9, v0, 5)
	mem[aoff:aoff + 8] = (v0 + 5).to_bytes(8, 'little')
	# 6. CMP_SWAP compare v1 (5) swap 77: hit -> original 5, MSN 6
	st.req('CMP_SWAP', 10, exts=[rl.AtomicETH(va=va + aoff + 8, rkey=rkey, swap_add=77,
						  compare=v1)])
	st.atomic_ack(10, v1, 6)
	# 7. CMP_SWAP compare 5 again, swap 99: miss -> original 77, memory keeps 77, MSN 7
	st.req('CMP_SWAP', 11, exts=[rl.AtomicETH(va=va + aoff + 8, rkey=rkey, swap_add=99,
						  compare=v1)])
	st.atomic_ack(11, 77, 7)
	mem[aoff + 8:aoff + 16] = (77).to_bytes(8, 'little')
	# Duplicates (IBTA 9.7.5.1.2). The MSN of a response to a duplicate is not the original's
	# again necessarily: accept original..current.
	# 8. the FETCH_ADD again: answered from the atomic result cache (1000), not re-executed
	st.again(fa)
	st.atomic_ack(9, v0, (5, 7))
	# 9. the WRITE only again: ACKed (up to at most ePSN - 1), not a new message
	st.again(w_only)
	st.ack(11, 7, coalesce=False, psn_lo=1)
	# 10. the READ again: re-executed, same PSNs and data
	st.again(rd)
	st.read_resp(6, rd_data, (4, 7))
	# 11. a PSN gap: SEND at 14 while 12 is expected -> one NAK sequence error naming 12
	st.req('SEND_ONLY', 14, pattern(11, 64), ackreq=True)
	st.nak(12, NAK_PSN_SEQ, 7)
	# 12. another packet beyond the gap (a WRITE at +0x3000): silently dropped, no second NAK
	st.req('WRITE_ONLY', 15, pattern(12, 32), ackreq=True,
	       exts=[rl.RETH(va=va + 0x3000, rkey=rkey, dlen=32)])
	# 13. the gap's own PSN: SEND 50 B -> ACK 12, MSN 8, into the second receive
	e = pattern(13, 50)
	st.req('SEND_ONLY', 12, e, ackreq=True)
	st.ack(12, 8)
	recv_ok.append(e)
	# QP 0's receive completions: (wr_id, status, byte_len, opcode, imm), None: not checked
	wcs = {0: [(100 + i, 0, len(d), WC_RECV, None) for i, d in enumerate(recv_ok)]}
	# 13b. SEND only with immediate, 20 B -> ACK 13, MSN 9; the third receive completes with
	# the immediate (IBTA 9.4.1: ImmDt is delivered in the completion)
	g = pattern(131, 20)
	st.req('SEND_ONLY_IMM', 13, g, ackreq=True, exts=[rl.ImmDt(imm=0x11223344)])
	st.ack(13, 9)
	recv_ok.append(g)
	wcs[0].append((102, 0, len(g), WC_RECV, 0x11223344))
	# 13c. RDMA WRITE only with immediate, 24 B at +0x5000 -> ACK 14, MSN 10; it consumes the
	# fourth receive (IBTA 9.4.4), which gets the immediate and the length, not the data
	h = pattern(132, 24)
	st.req('WRITE_ONLY_IMM', 14, h, ackreq=True,
	       exts=[rl.RETH(va=va + 0x5000, rkey=rkey, dlen=len(h)), rl.ImmDt(imm=0x55667788)])
	st.ack(14, 10)
	mem[0x5000:0x5000 + len(h)] = h
	wcs[0].append((103, 0, len(h), WC_RECV_RDMA_IMM, 0x55667788))
	nrecv = int(st.prm['recvs'])
	# 14. a WRITE with a wrong R_Key -> NAK remote access error, the QP goes to the error
	# state (IBTA 9.7.5.2.4 / 10.3.1) and nothing is written; its posted receives are flushed.
	# main: on a second QP of its own, as its first request (PSN P0, MSN 0).
	# fatal-burst: on the first QP right after 13c, in the same Rx burst as the requests
	# before it (PSN 15, MSN 10): their responses must still go out first, in order.
	k, msn = 15, 10
	if mode != 'fatal-burst':
		st.qp, k, msn = 1, 0, 0
	bad = rkey ^ 0x00010000
	st.req('WRITE_ONLY', k, pattern(14, 16), ackreq=True,
	       exts=[rl.RETH(va=va + 0x4000, rkey=bad, dlen=16)])
	st.nak(k, NAK_REM_ACCESS, msn)
	wcs.setdefault(st.qp, []).extend((100 * (st.qp + 1) + i, 5, None, None, None)
					 for i in range(len(wcs.get(st.qp, [])), nrecv))
	# 15. a SEND after the error: no response, no receive consumed
	st.req('SEND_ONLY', k + 1, pattern(15, 8), ackreq=True)
	slot = int(st.prm['recv_slot'])
	base = int(st.prm['len'])
	dont_care = []		# receive buffer bytes an error leaves undefined
	if mode != 'fatal-burst':
		# 16. QP 2 has no receive posted: a SEND gets an RNR NAK carrying the QP's
		# min_rnr_timer (1) at its PSN (IBTA 9.7.5.2.8); the QP stays usable
		st.qp = 2
		st.req('SEND_ONLY', 0, pattern(16, 40), ackreq=True)
		st.nak(0, RNR_NAK | 1, 0)
		# 17. QP 3: a WRITE MIDDLE with no FIRST before it: opcode sequence error, NAK
		# invalid request (IBTA 9.7.5.1.3, 9.7.5.2.5), the QP goes to the error state
		st.qp = 3
		st.req('WRITE_MIDDLE', 0, pattern(17, 1024), ackreq=True)
		st.nak(0, NAK_INV_REQ, 0)
		wcs[3] = [(400 + i, 5, None, None, None) for i in range(nrecv)]
		# 18. QP 4: a 5000-byte SEND into a 4096-byte receive: the LAST packet overflows it,
		# NAK invalid request at that PSN, the receive completes with a local length error
		# (IBTA 9.7.5.2.5, 10.8.3.1), the others are flushed
		st.qp = 4
		f = pattern(18, 5000)
		st.req('SEND_FIRST', 0, f[0:1024])
		for i in range(1, 4):
			st.req('SEND_MIDDLE', i, f[i * 1024:(i + 1) * 1024])
		st.req('SEND_LAST', 4, f[4096:], ackreq=True)
		st.nak(4, NAK_INV_REQ, 0)
		wcs[4] = [(500, 1, None, WC_RECV, None)] + \
			[(500 + i, 5, None, None, None) for i in range(1, nrecv)]
		dont_care.append((base + 4 * nrecv * slot, base + (4 * nrecv + 1) * slot))
	# receive buffers: the two SENDs' data, the rest untouched
	for i, d in enumerate(recv_ok):
		mem[base + i * slot:base + i * slot + len(d)] = d
	return bytes(mem), wcs, dont_care


def l3of(p):
	return p[IP] if IPVER == 4 else p[IPv6]


def aeth_of(p):
	return p[AETH] if AETH in p else None


def describe(p):
	b = p[BTH]
	s = 'op 0x%02x psn 0x%06x' % (b.opcode, b.psn)
	a = aeth_of(p)
	if a is not None:
		s += ' syn 0x%02x msn %d' % (a.syndrome, a.msn)
	if rl.AtomicAckETH in p:
		s += ' orig %d' % p[rl.AtomicAckETH].orig
	return s


def payload_of(p):
	b = p[BTH]
	data = raw(p[Raw]) if Raw in p else b''
	return data[:len(data) - b.padcount] if b.padcount else data


def icrc_ok(frame):
	"""Scapy recomputes the ICRC (IBTA A17.3.3) over the frame as written."""
	p = Ether(frame)
	got = frame[-4:]
	p[BTH].icrc = None
	return raw(p)[-4:] == got


def match(e, p):
	"""Why response p is not the expected e ('' when it is)."""
	b = p[BTH]
	if b.opcode != e['op']:
		return 'opcode 0x%02x, want 0x%02x' % (b.opcode, e['op'])
	lo = e.get('psn_lo')
	if lo is None and b.psn != e['psn']:
		return 'PSN 0x%06x, want 0x%06x' % (b.psn, e['psn'])
	if lo is not None and ((b.psn - lo) & M24) > ((e['psn'] - lo) & M24):
		return 'PSN 0x%06x outside 0x%06x..0x%06x' % (b.psn, lo, e['psn'])
	if 'syn' in e:
		a = aeth_of(p)
		if a is None:
			return 'no AETH'
		if e['syn'] == 'ack' and a.syndrome >> 5 != 0:
			return 'syndrome 0x%02x, want an ACK' % a.syndrome
		if e['syn'] != 'ack' and a.syndrome != e['syn']:
			return 'syndrome 0x%02x, want 0x%02x' % (a.syndrome, e['syn'])
		msn = e['msn'] if isinstance(e['msn'], tuple) else (e['msn'], e['msn'])
		if not msn[0] <= a.msn <= msn[1]:
			return 'MSN %d, want %s' % (a.msn, e['msn'])
	elif AETH in p:
		return 'an AETH where none belongs'
	if 'orig' in e and (rl.AtomicAckETH not in p or p[rl.AtomicAckETH].orig != e['orig']):
		return 'AtomicAckETH %s, want %d' % (
			p[rl.AtomicAckETH].orig if rl.AtomicAckETH in p else 'missing', e['orig'])
	if 'data' in e and payload_of(p) != e['data']:
		return 'payload differs (%d bytes, want %d)' % (len(payload_of(p)), len(e['data']))
	if 'data' not in e and payload_of(p):
		return 'unexpected payload of %d bytes' % len(payload_of(p))
	return ''


def check_responses(qp, expect, got):
	"""In order, one for one; an ACK may be absent when the next expected response is an ACK
	that covers it (IBTA 9.7.5.1: one ACK may acknowledge several requests)."""
	i = j = 0
	print('QP %d: %d responses expected, %d sent' % (qp, len(expect), len(got)))
	while i < len(expect):
		e = expect[i]
		nxt = expect[i + 1] if i + 1 < len(expect) else None
		p = got[j] if j < len(got) else None
		why = match(e, p) if p is not None else 'missing'
		if why and e.get('coalesce') and nxt is not None and nxt.get('syn') == 'ack' and \
		   nxt['op'] == OP['ACK']:
			print('ok:   QP %d response %d (ACK 0x%06x) coalesced into the next ACK' % (
				qp, i + 1, e['psn']))
			i += 1
			continue
		check('QP %d response %d: %s' % (qp, i + 1, describe(p) if p is not None else '-'),
		      not why, why)
		i += 1
		j += 1
	check('QP %d: no response beyond those expected' % qp, j >= len(got),
	      '; '.join(describe(p) for p in got[j:]))


def main():
	exe, droce_pcap = sys.argv[1:3]
	global IPVER
	mode = sys.argv[3] if len(sys.argv) > 3 else 'main'
	IPVER = 6 if mode == 'ipv6' else 4
	qps = ['--qps', '5', '--no-recv', '2'] if mode != 'fatal-burst' else ['--qps', '1']
	tmp = tempfile.mkdtemp(prefix='droce-replay.')
	try:
		empty = os.path.join(tmp, 'empty.pcap')
		wrpcap(empty, [], linktype=1)
		mem0_path = os.path.join(tmp, 'mem0.bin')
		prm, _ = run_resp(exe, tmp, empty, os.path.join(tmp, 'params_tx.pcap'),
				  qps + ['--params', '--dump', mem0_path])
		mem0 = open(mem0_path, 'rb').read()
		st = Stream(prm)
		want_mem, want_wc, dont_care = build(st, mem0, mode)
		rx = os.path.join(tmp, 'requests.pcap')
		tx = os.path.join(tmp, 'responses.pcap')
		wrpcap(rx, [Ether(f) for f in st.frames])
		print('%s: %d request frames, %d responses expected' % (mode, len(st.frames),
									  len(st.expect)))

		mem1_path = os.path.join(tmp, 'mem1.bin')
		prm2, out = run_resp(exe, tmp, rx, tx, qps + ['--dump', mem1_path])
		check('same QPNs, R_Key, VA and MAC for the same seed', prm2 == prm,
		      '%s vs %s' % (prm, prm2))

		pkts = [Ether(raw(p)) for p in rdpcap(tx)]
		roce = [p for p in pkts if UDP in p and p[UDP].dport == 4791]
		other = [p for p in pkts if not (UDP in p and p[UDP].dport == 4791)]
		print('tx_pcap: %d frames, %d RoCE' % (len(pkts), len(roce)))
		for p in roce:
			print('  dqpn 0x%06x %s' % (p[BTH].dqpn, describe(p)))
		# the announcement: gratuitous ARP, or (IPv6) an unsolicited neighbour advert
		check('non-RoCE output is the announcement only (ARP or ICMPv6)',
		      all(p.type == 0x0806 or (IPv6 in p and p[IPv6].nh == 58) for p in other),
		      [p.summary() for p in other])
		peers = [(PEER_QPN + q) & M24 for q in range(len(st.qpns))]
		for n, p in enumerate(roce):
			ok = (p[Ether].src == prm['mac'] and p[Ether].dst == PEER_MAC and
			      l3of(p).src == ADDR[IPVER][0] and l3of(p).dst == ADDR[IPVER][1] and
			      p[BTH].dqpn in peers and p[BTH].pkey == 0xffff)
			check('response %d addressed to the peer (MACs, IPs, DestQP, P_Key)' %
			      (n + 1), ok)
			check('response %d ICRC (Scapy)' % (n + 1), icrc_ok(raw(p)))
		# in order per QP; QPs are independent of each other
		for q, peer in enumerate(peers):
			check_responses(q, [e for e in st.expect if e['qp'] == q],
					[p for p in roce if p[BTH].dqpn == peer])
		v = subprocess.run([droce_pcap, 'verify', tx, rx], capture_output=True, text=True)
		print(v.stdout + v.stderr)
		check('droce-pcap verify: every response and request parses, ICRC right',
		      v.returncode == 0, 'exit %d' % v.returncode)

		# receive completions per QP: the SENDs with their lengths, then the receives the
		# error state flushed (WR_FLUSH_ERR, length not defined)
		got = {}
		for m in re.findall(r'^replay wc: (.*)$', out, re.M):
			w = dict(kv.split('=') for kv in m.split())
			q = st.qpns.index(int(w['qpn'], 16))
			imm = int(w['imm'], 16) if int(w['flags']) & WC_WITH_IMM else None
			got.setdefault(q, []).append((int(w['wr_id']), int(w['status']),
						      int(w['byte_len']), int(w['opcode']), imm))
		for q in range(len(st.qpns)):
			want = want_wc.get(q, [])
			# a None in the expectation: that field is not checked
			have = [tuple(g if x is not None else None for g, x in zip(gw, ww))
				for gw, ww in zip(got.get(q, []), want)]
			check('QP %d receive completions' % q,
			      len(got.get(q, [])) == len(want) and have == want,
			      'got %s, want %s' % (got.get(q, []), want))
		cnt = dict(kv.split('=')
			   for kv in re.findall(r'^replay counter: (\S+)$', out, re.M))
		want_cnt = [('duplicate_request', 3), ('atomic_replayed', 1),
			    ('read_reexecuted', 1), ('send_seq_err', 1), ('out_of_seq_request', 2),
			    ('rdma_recvs', 4), ('rx_atomic_requests', 3), ('rx_read_requests', 1),
			    ('resp_remote_access_errors', 1)]
		if mode != 'fatal-burst':	# QPs 2, 3 and 4: RNR, opcode sequence, length
			want_cnt += [('send_rnr_err', 1), ('resp_remote_invalid_request', 2),
				     ('resp_local_length_error', 1), ('resp_cqe_error', 1),
				     ('resp_cqe_flush_error', 11), ('nak_sent', 5)]
		for k, n in want_cnt:
			check('counter dev.%s = %d' % (k, n), int(cnt.get('dev.' + k, 0)) == n,
			      cnt.get('dev.' + k, 0))

		mem1 = open(mem1_path, 'rb').read()
		diff = [i for i in range(len(want_mem)) if mem1[i] != want_mem[i] and
			not any(lo <= i < hi for lo, hi in dont_care)]
		check('responder memory afterwards: writes, atomics, receives; nothing else',
		      len(mem1) == len(want_mem) and not diff,
		      'first differing offsets %s' % [hex(i) for i in diff[:8]])
	finally:
		shutil.rmtree(tmp, ignore_errors=True)
	print('%s: %d failure(s)' % (mode, len(failed)))
	if mode == 'fatal-burst' and failed and \
	   not all(d.startswith(('QP 0 response', 'QP 0: no response')) for d in failed):
		print('fatal-burst: failures beyond the known lost responses')
		return HARD_ERROR
	return 1 if failed else 0


if __name__ == '__main__':
	try:
		sys.exit(main())
	except Exception:	# a crash is never the expected failure
		import traceback
		traceback.print_exc()
		sys.exit(HARD_ERROR)
