#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Congestion control live: four QPs through a droce-netem bottleneck that marks CE.

droce-perf write bw 64 KiB, four QPs, --verify, through droce-netem at 2 Gbit/s, 20 us, RED
20k/200k/20 % (droce-netem's own marking; Kmax 200 kB), with no algorithm, with DCQCN and with
TIMELY, one after the other, each with the runtime's settings for a 2 Gbit/s link: link_mbps
2000; an in-flight cap for a round trip of 350 us (86 packets, 93 kB of frames a QP, so that
the four caps, which hold the start from line rate, sum to less than 2 x Kmax); TIMELY's
thresholds above this host's scheduling (pmd-glue/README.md, "Settings for a software
bottleneck"). The simulator holds the algorithms to their targets (tests/sim: sim_cc_*); this
holds the real path, engine, runtime and netem, to what they are for, side by side with no
algorithm:
- every run completes and every byte checks;
- with no algorithm the marking bites (CE >= 30 %): the bottleneck is congested;
- DCQCN answers it: CE <= 10 % (its target), CNPs handled and cuts made, and the largest
  backlog <= 2 x Kmax (its target; the caps bound it, and this guards that they do);
- TIMELY takes round-trip samples and cuts on them;
- neither gives up the link: each carries >= 80 % of what no algorithm carried in the same run
  (a ratio, measured side by side; the bench, tools/bench/droce-bench-cc.sh, measures the
  figures: DCQCN collapsed to 62 % of the link before its defaults scaled to it).

    netem_cc.py NETEM PERF [SECONDS]   (3)
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
				'tools', 'droce-netem'))
import netem_pair  # noqa: E402

KMAX = 200000
PATH = {'DROCE_LINK_MBPS': '2000', 'DROCE_DCQCN_MAX_RATE_MBPS': '2000',
	'DROCE_INFLIGHT_RTT_US': '350'}
RUNS = [
	('none', dict(PATH, DROCE_CC='none')),
	('dcqcn', dict(PATH, DROCE_CC='dcqcn')),
	('timely', dict(PATH, DROCE_CC='timely', DROCE_TIMELY_T_LOW_US='500',
			DROCE_TIMELY_T_HIGH_US='5000', DROCE_TIMELY_DELTA_MBPS='50')),
]

check = netem_pair.Checks()


def one(netem, perf, tmp, secs, name, env):
	"""One run: its result and the netem's counters towards the server, or None."""
	r = netem_pair.run(netem, perf, tmp, [
		'--delay', '20us', '--rate', '2gbit', '--limit', '2m', '--red', '20k,200k,20%',
		'--duration', '%ds' % (secs + 60)], [
		'-o', 'write', '-m', 'bw', '-s', '65536', '-q', '4', '-D', str(secs), '--verify',
		'-Q', '-J', '--counters', '127.0.0.1'], env_extra=env, bound=secs + 60)
	if r.error:
		check('%s: the run starts' % name, False, r.error)
		return None
	res = r.results()
	ok = r.crc == 0 and r.src == 0 and len(res) == 1 and res[0]['verified'] is True and \
		res[0]['bad'] == 0 and res[0]['iters'] > 0
	check('%s: every byte of every WRITE checks' % name, ok,
	      'client exit %s, server exit %s%s' % (r.crc, r.src, '' if ok else '\n' + r.cerr[-1500:]))
	if not ok:
		return None
	n = {}
	for line in r.nout.splitlines():
		if line.startswith('droce-netem ab:'):
			n = {k: float(v) for k, v in re.findall(r'(\w+)=([0-9.]+)', line)}
	if not n.get('rx'):
		check('%s: netem counted the frames' % name, False, r.nout[-800:])
		return None
	out = dict(res[0], ce=100.0 * n.get('ce_marked', 0) / n['rx'],
		   backlog=int(n.get('max_backlog', 0)), counters=netem_pair.counters(r.cerr, 'client'))
	print('%-7s %.3f Gbit/s, CE %.1f %%, max backlog %d B, queue median %d B p99 %d B, '
	      'CNPs handled %d, cc %s' % (
		name, out['gbps'], out['ce'], out['backlog'], n.get('queue_p50', -1),
		n.get('queue_p99', -1),
		out['counters'].get('dev.rp_cnp_handled', 0), out.get('cc')))
	return out


def main():
	netem, perf = sys.argv[1:3]
	secs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
	tmp = tempfile.mkdtemp(prefix='droce-netem-cc.')
	got = {}
	try:
		for name, env in RUNS:
			got[name] = one(netem, perf, tmp, secs, name, env)
	finally:
		shutil.rmtree(tmp, ignore_errors=True)
	none, dcqcn, timely = got['none'], got['dcqcn'], got['timely']
	if none:
		check('no algorithm: the bottleneck marks (CE >= 30 %)', none['ce'] >= 30,
		      '%.1f %%' % none['ce'])
	if dcqcn:
		cc = dcqcn.get('cc', {})
		check('DCQCN handles CNPs and cuts', cc.get('name') == 'dcqcn' and
		      dcqcn['counters'].get('dev.rp_cnp_handled', 0) > 0 and cc.get('cuts', 0) > 0,
		      str(cc))
		check('DCQCN: CE <= 10 %', dcqcn['ce'] <= 10, '%.1f %%' % dcqcn['ce'])
		check('DCQCN: largest backlog <= 2 x Kmax', dcqcn['backlog'] <= 2 * KMAX,
		      '%d B' % dcqcn['backlog'])
	if timely:
		cc = timely.get('cc', {})
		check('TIMELY takes round-trip samples and cuts on them',
		      cc.get('name') == 'timely' and cc.get('samples', 0) > 0 and
		      cc.get('decreases', 0) > 0, str(cc))
	for name, r in (('DCQCN', dcqcn), ('TIMELY', timely)):
		if none and r:
			check('%s carries >= 80 %% of what no algorithm carried' % name,
			      r['gbps'] >= 0.8 * none['gbps'],
			      '%.3f against %.3f Gbit/s' % (r['gbps'], none['gbps']))
	print('%d failure(s)' % check.fails)
	return 1 if check.fails or None in got.values() else 0


if __name__ == '__main__':
	sys.exit(main())
