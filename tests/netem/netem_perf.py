#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-perf --verify through droce-netem: delay, jitter, reordering, duplication, 5 % loss.

Three processes over memif: droce-perf server <-> droce-netem (two memif server ports) <->
droce-perf client. Per scenario it asserts that every size of the run completes with every byte
(or atomic value) verified on the side that checks, that the engines recovered by retransmission
(the requester's dev.roce_adp_retrans and the responder's out-of-sequence / duplicate / replay
counters), and that netem itself dropped, duplicated and reordered frames. No timing bound.

    netem_perf.py NETEM PERF SCENARIO
    (write, read, send, fadd, cswap, write_bw, send_bw, awrite_bw, read_bw_2qp_v6)
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
				'tools', 'droce-netem'))
import netem_pair  # noqa: E402

# delay 100 us +- 20 us (--keep-order: jitter alone would reorder nearly every multi-packet
# message, which go-back-N cannot get through), 3 % of frames held 50 us more so later ones
# overtake them, 3 % duplicated, 5 % lost; both directions (ba uses seed + 1).
NETEM_IMPAIR = ['--delay', '100us', '--jitter', '20us', '--keep-order', '--reorder', '3%',
		'--reorder-delay', '50us', '--duplicate', '3%', '--loss', '5%', '--seed', '7']
SIZES = '1,4096,65536'	# one packet, four, and 64 at path MTU 1024

# scenario: (client options, responder counters of which at least one must be > 0[, server
# options])
SCENARIOS = {
	# lat write and send are ping-pongs: both sides are requester and responder
	'write': (['-o', 'write', '-m', 'lat', '--sizes', SIZES, '-n', '40'],
		  ['out_of_seq_request', 'duplicate_request']),
	'send': (['-o', 'send', '-m', 'lat', '--sizes', SIZES, '-n', '40'],
		 ['out_of_seq_request', 'duplicate_request']),
	'read': (['-o', 'read', '-m', 'lat', '--sizes', SIZES, '-n', '40'],
		 ['read_reexecuted', 'duplicate_request']),
	'fadd': (['-o', 'fadd', '-m', 'lat', '-n', '200'], ['atomic_replayed']),
	'cswap': (['-o', 'cswap', '-m', 'lat', '-n', '200'], ['atomic_replayed']),
	# a window of 4 WRs: several messages in flight when a loss rewinds the send queue
	'write_bw': (['-o', 'write', '-m', 'bw', '-t', '4', '--sizes', SIZES, '-n', '60'],
		     ['out_of_seq_request', 'duplicate_request']),
	'send_bw': (['-o', 'send', '-m', 'bw', '-t', '4', '--sizes', SIZES, '-n', '60'],
		    ['out_of_seq_request', 'duplicate_request']),
	# ATOMIC WRITEs onto one counter, 4 in flight: a duplicate placed again after a later
	# one would leave an old value, which the server's final check catches
	'awrite_bw': (['-o', 'awrite', '-m', 'bw', '-t', '4', '-n', '400'],
		      ['out_of_seq_request', 'duplicate_request']),
	# two QPs round robin, each recovering on its own; over IPv6 (GID index 1)
	# (-x is not part of the plan the server adopts: it is given to both sides)
	'read_bw_2qp_v6': (['-o', 'read', '-m', 'bw', '-q', '2', '-t', '2', '--sizes', '4096,65536',
			    '-n', '40', '-x', '1'], ['read_reexecuted', 'duplicate_request'],
			   ['-x', '1']),
}

BOUND = 100	# seconds any one process may take (meson's timeout is above it)

check = netem_pair.Checks()


def netem_counters(text):
	"""'droce-netem ab: rx=1 ...' -> {'ab': {'rx': 1.0, ...}, 'ba': {...}}."""
	out = {}
	for m in re.finditer(r'^droce-netem (ab|ba): (.*)$', text, re.M):
		pairs = re.findall(r'(\w+)=([0-9.]+)', m.group(2))
		out[m.group(1)] = {k: float(v) for k, v in pairs}
	return out


def main():
	netem, perf, scenario = sys.argv[1:4]
	copts, resp_counters = SCENARIOS[scenario][:2]
	sopts = SCENARIOS[scenario][2] if len(SCENARIOS[scenario]) > 2 else []
	tmp = tempfile.mkdtemp(prefix='droce-netem-perf.')
	try:
		# both sides: IPv4 is GID 0, IPv6 GID 1 (-x 1)
		r = netem_pair.run(netem, perf, tmp, NETEM_IMPAIR + ['--duration', '%ds' % BOUND],
				   copts + ['--verify', '-Q', '-J', '--counters', '127.0.0.1'],
				   server_args=['--counters'] + sopts, ipv6=True, bound=BOUND,
				   show_cmd=True)
		if r.error:
			print(r.error)
			return 1
		crc, cout, cerr, src, sout, nout = r.crc, r.cout, r.cerr, r.src, r.sout, r.nout
		print('--- client stdout\n' + cout + '--- client stderr (non-zero counters)')
		print('\n'.join(l for l in cerr.splitlines() if ' dev.' in l or 'droce-perf' in l))
		print('--- server\n' + '\n'.join(l for l in sout.splitlines()
						if ' dev.' in l or not l.startswith('server ')))
		print('--- netem\n' + '\n'.join(l for l in nout.splitlines() if 'droce-netem' in l))
		print('--- %.1f s\n' % r.secs)

		check('client exit 0', crc == 0, crc)
		check('server exit 0', src == 0, src)
		res = r.results()
		n = int(copts[copts.index('-n') + 1])
		want = 1 if '--sizes' not in copts else \
			len(copts[copts.index('--sizes') + 1].split(','))
		check('a result per size', len(res) == want, '%d of %d' % (len(res), want))
		for r in res:
			check('%d B: %d iterations, verified, no bad byte' % (r['size'], n),
			      r['iters'] == n and r['verified'] is True and r['bad'] == 0,
			      'iters=%s verified=%s bad=%s' % (r['iters'], r['verified'], r['bad']))
		served = re.findall(r'^server: .* (\d+) B: (\d+) served, verify ok$', sout, re.M)
		check('server: every size served and verified', len(served) == want and
		      all(int(s[1]) == n for s in served), served)

		cc, sc = netem_pair.counters(cerr, 'client'), netem_pair.counters(sout, 'server')
		retrans = sum(r.get('retrans', 0) for r in res)
		# JSON retrans is dev.roce_adp_retrans within each round; the counter holds them all
		check('client retransmitted (JSON retrans, dev.roce_adp_retrans)',
		      retrans > 0 and retrans <= cc.get('dev.roce_adp_retrans', 0),
		      'json %d, counter %d' % (retrans, cc.get('dev.roce_adp_retrans', 0)))
		# which events drove the retransmissions: a sequence NAK, an implied NAK, an RTO
		# (a lone atomic's lost response has nothing after it to show it) or a local ACK
		# timeout
		causes = ('rcvd_seq_err', 'implied_nak_seq_err', 'rto_resend', 'local_ack_timeout_err')
		cause = sum(cc.get('dev.' + k, 0) for k in causes)
		check('client saw the losses (seq NAK, implied NAK, RTO or ACK timeout)', cause > 0,
		      ' '.join('%s %d' % (k, cc.get('dev.' + k, 0)) for k in causes))
		got = {k: sc.get('dev.' + k, 0) for k in resp_counters}
		check('server (responder) handled the damage', any(v > 0 for v in got.values()),
		      got)
		for k in ('retry_exceeded_err', 'req_cqe_error', 'resp_cqe_error'):
			check('no %s on either side' % k,
			      cc.get('dev.' + k, 0) == 0 and sc.get('dev.' + k, 0) == 0)

		nc = netem_counters(nout)
		check('netem printed both directions', 'ab' in nc and 'ba' in nc)
		if 'ab' in nc and 'ba' in nc:
			tot = {k: nc['ab'].get(k, 0) + nc['ba'].get(k, 0)
			       for k in ('rx', 'drop_loss', 'duplicated', 'reordered')}
			check('netem dropped frames', tot['drop_loss'] > 0, tot)
			check('netem duplicated frames', tot['duplicated'] > 0)
			check('netem reordered frames', tot['reordered'] > 0)
			# 5 %: the total over both directions, 3.5 sigma either side from a few
			# hundred frames up
			check('netem loss rate near 5 %',
			      0.02 * tot['rx'] <= tot['drop_loss'] <= 0.09 * tot['rx'],
			      '%d of %d' % (tot['drop_loss'], tot['rx']))
	finally:
		shutil.rmtree(tmp, ignore_errors=True)
	print('%s: %d failure(s)' % (scenario, check.fails))
	return 1 if check.fails else 0


if __name__ == '__main__':
	sys.exit(main())
