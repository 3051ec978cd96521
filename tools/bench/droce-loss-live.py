#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Goodput against loss for the four recovery modes, live: two droce-perf processes through
droce-netem over memif (no hugepages, abstract sockets named per run).

droce-perf write bw, 64 KiB messages, 16 posted, every run bounded by time (-D) and verified,
through droce-netem at RATE with DELAY each way and independent loss each way. Modes (the
runtime keys of both processes, pmd-glue/README.md):
  gbn      recovery=gbn inflight_cap=off   go-back-N over the engine's whole window
  gbn_cap  recovery=gbn inflight_cap=CAP   go-back-N with the in-flight cap (link_mbps = RATE)
  sr       recovery=sr  inflight_cap=off   selective repeat
  sr_cap   recovery=sr  inflight_cap=CAP   selective repeat with the cap
CAP is bdp (the link's rate x DROCE_LIVE_CAP_RTT_US) or auto (the link's rate x each QP's
smoothed round trip, from the 8 B round trip through the same netem up; on a loaded host that
round trip is the processes' stalls and the cap outgrows netem's queue: tools/bench/README.md).
Writes OUT/loss_live.csv (medians), OUT/loss_live-runs.csv (every run) and, with gnuplot,
OUT/loss_live.png titled with the commit and the date; prints a table. Given several queues
(DROCE_LIVE_QUEUE=256KiB,640KiB,1MiB) and one loss, it sweeps the queue instead: the same files
named loss_live_queue*, goodput against the queue. A benchmark: it fails only when a run fails.

    droce-loss-live.py NETEM PERF OUT [LOSS...]    (default 0 0.1 1 2 5)
    DROCE_LIVE_SECONDS (3) per run, DROCE_LIVE_REPS (1) runs per point, DROCE_LIVE_MBPS (1000)
    droce-netem's rate and link_mbps, DROCE_LIVE_DELAY_US (20) its one-way delay,
    DROCE_LIVE_CAP (bdp) or auto, DROCE_LIVE_CAP_RTT_US (1500) bdp's inflight_rtt_us,
    DROCE_LIVE_MODES (all four) the modes to run, e.g. sr,sr_cap, DROCE_LIVE_QUEUE (640KiB)
    droce-netem's queue (its --limit), or a comma-separated list of them
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'droce-netem'))
import netem_pair  # noqa: E402

CAP = os.environ.get('DROCE_LIVE_CAP', 'bdp')
# netem's tail-drop queue: shallower than selective repeat's window without the cap (16 x 64
# KiB), as a switch's buffer is, so that what the cap keeps out of the queue shows
# (tools/bench/README.md, "Live")
QUEUES = os.environ.get('DROCE_LIVE_QUEUE', '640KiB').split(',')
MODES = [('gbn', 'gbn', 'off'), ('gbn_cap', 'gbn', CAP), ('sr', 'sr', 'off'),
	 ('sr_cap', 'sr', CAP)]
if os.environ.get('DROCE_LIVE_MODES'):
	MODES = [m for m in MODES if m[0] in os.environ['DROCE_LIVE_MODES'].split(',')]
SECONDS = int(os.environ.get('DROCE_LIVE_SECONDS', '3'))
REPS = int(os.environ.get('DROCE_LIVE_REPS', '1'))
MBPS = int(os.environ.get('DROCE_LIVE_MBPS', '1000'))
DELAY_US = int(os.environ.get('DROCE_LIVE_DELAY_US', '20'))
# the round trip the bdp cap is made for (inflight_rtt_us): with a window in flight, this host's
# path takes milliseconds, not the idle 8 B round trip (tools/bench/README.md, "Live"); the auto
# cap measures it, from the 8 B round trip up
CAP_RTT_US = int(os.environ.get('DROCE_LIVE_CAP_RTT_US', '1500'))
BOUND = SECONDS + 40  # seconds any one process may take


# client counters each run records (dev.*: droce-stat's names)
KEPT = ['roce_adp_retrans', 'rto_resend', 'local_ack_timeout_err', 'rcvd_seq_err',
	'retry_exceeded_err']


def kib(queue):
	"""netem's --limit as KiB: 640KiB, 1MiB, 262144 (bytes)."""
	for suf, mul in (('KiB', 1), ('MiB', 1024), ('k', 1), ('m', 1024)):
		if queue.endswith(suf):
			return float(queue[:-len(suf)]) * mul
	return float(queue) / 1024


def one(netem, perf, tmp, queue, loss, recovery, cap, seed, rtt_us, lat=False, keep=None):
	"""One run: (goodput Gbit/s, or with lat the median round trip in us, or None; the
	client's counters KEPT, frames netem dropped). keep: a failed run's output goes there."""
	if lat:
		what = ['-m', 'lat', '-s', '8', '-n', '2000']
	else:
		what = ['-m', 'bw', '-s', '65536', '-t', '16', '-D', str(SECONDS), '-n', '1000000']
	r = netem_pair.run(netem, perf, tmp, [
		'--delay', '%dus' % DELAY_US, '--rate', '%dmbit' % MBPS, '--limit', queue, '--loss',
		'%s%%' % loss, '--seed', str(seed), '--duration', '%ds' % (BOUND + 20)],
		['-o', 'write'] + what + ['--verify', '-Q', '-J', '--counters', '127.0.0.1'],
		env_extra=dict(DROCE_RECOVERY=recovery, DROCE_INFLIGHT_CAP=cap,
			       DROCE_LINK_MBPS=str(MBPS), DROCE_INFLIGHT_RTT_US=str(rtt_us)),
		bound=BOUND)
	if r.error:
		print(r.error, file=sys.stderr)
		return None, {}, 0
	res = r.results()
	cnt = netem_pair.counters(r.cerr, 'client')
	cnt = {k: cnt.get('dev.' + k, 0) for k in KEPT}
	if r.crc != 0 or len(res) != 1 or res[0]['verified'] is not True or res[0]['bad'] != 0:
		print('run %s %s %s failed (exit %s):\n%s' % (loss, recovery, cap, r.crc,
							       r.cerr[-2000:]), file=sys.stderr)
		if keep:
			with open(keep, 'w') as f:
				f.write('client exit %s\n%s\n%s\nserver exit %s\n%s\nnetem\n%s\n' % (
					r.crc, r.cout, r.cerr, r.src, r.sout, r.nout))
		return None, cnt, r.dropped()
	return (res[0]['lat_us']['p50'] if lat else res[0]['gbps'], cnt, r.dropped())


def main():
	if len(sys.argv) < 4:
		print(__doc__, file=sys.stderr)
		return 2
	netem, perf, out = sys.argv[1:4]
	losses = sys.argv[4:] or ['0', '0.1', '1', '2', '5']
	by_queue = len(QUEUES) > 1
	if by_queue and len(losses) != 1:
		print('droce-loss-live: several queues take one loss (e.g. 1)', file=sys.stderr)
		return 2
	os.makedirs(out, exist_ok=True)
	tmp = tempfile.mkdtemp(prefix='droce-loss-live.')
	here = os.path.dirname(os.path.abspath(__file__))
	commit = subprocess.run(['git', '-C', here, 'rev-parse', '--short', 'HEAD'],
				capture_output=True, text=True).stdout.strip() or 'unknown'
	date = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
	base = os.path.join(out, 'loss_live_queue' if by_queue else 'loss_live')
	runs = base + '-runs.csv'
	csv = base + '.csv'
	# the points: (queue, loss), the swept one first in each row of the table
	points = [(q, l) for q in QUEUES for l in losses]
	res = {}
	failed = 0
	try:
		# the idle path's round trip, printed beside the cap's (tools/bench/README.md)
		rtt, _, _ = one(netem, perf, tmp, QUEUES[-1], '0', 'gbn', 'off', 11, 100, lat=True)
		if rtt is None:
			return 1
		rtt_us = CAP_RTT_US if CAP == 'bdp' else max(10, int(rtt))
		ncap = MBPS * rtt_us // 8 // 1024
		with open(runs, 'w') as f:
			f.write('queue,mode,loss_pct,rep,goodput_gbps,%s,frames_lost\n' % ','.join(KEPT))
			# interleaved: every mode at a point before the next point, so a change of the
			# host's load falls on all four alike
			for queue, loss in points:
				for rep in range(REPS):
					for mode, rec, cap in MODES:
						keep = os.path.join(out, 'loss_live-fail-%s-%s-%s-%d.txt' % (
							queue, mode, loss, rep))
						g, cnt, lost = one(netem, perf, tmp, queue, loss, rec, cap,
								   11 + rep, rtt_us, keep=keep)
						if g is None:
							failed += 1
						else:
							res.setdefault((mode, queue, loss), []).append(g)
						f.write('%s,%s,%s,%d,%s,%s,%d\n' % (
							queue, mode, loss, rep,
							'%.3f' % g if g is not None else '',
							','.join(str(cnt.get(k, '')) for k in KEPT), lost))
						f.flush()
				print('  queue %s, loss %s %%: done' % (queue, loss), file=sys.stderr)
	finally:
		shutil.rmtree(tmp, ignore_errors=True)

	def med(m, p):
		v = sorted(res.get((m,) + p, []))
		if not v:
			return None
		return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2

	def cell(m, p, fmt):
		v = med(m, p)
		return fmt % v if v is not None else ''

	xname = 'queue_kib' if by_queue else 'loss_pct'
	with open(csv, 'w') as f:
		f.write(xname + ',' + ','.join('%s_gbps' % m for m, _, _ in MODES) + '\n')
		for p in points:
			x = '%g' % kib(p[0]) if by_queue else p[1]
			f.write(x + ''.join(',' + cell(m, p, '%.3f') for m, _, _ in MODES) + '\n')
	where = ('loss %s %%, queues %s' % (losses[0], ' '.join(QUEUES)) if by_queue
		 else 'queue %s' % QUEUES[0])
	print('droce-loss-live: droce-perf write bw 64 KiB x 16 posted, %d s a run, median of %d;'
	      ' droce-netem %d Mbit/s, %d us each way, %s; 8 B round trip %.0f us, cap %s from %d'
	      ' packets (inflight_rtt_us %d) (%s, %s)' % (SECONDS, REPS, MBPS, DELAY_US, where, rtt,
							CAP, ncap, rtt_us, commit, date))
	print('%-8s' % ('queue' if by_queue else 'loss %') +
	      ''.join('%10s' % m for m, _, _ in MODES) + '   (Gbit/s)')
	for p in points:
		print('%8s' % (p[0] if by_queue else p[1]) +
		      ''.join('%10s' % (cell(m, p, '%.3f') or '-') for m, _, _ in MODES))
	print('  -> %s (%s)' % (csv, runs))
	if shutil.which('gnuplot'):
		png = base + '.png'
		gp = '''set datafile separator ','
set terminal png size 900,600 noenhanced
set output '%s'
set title "droce-perf write 64 KiB x 16, netem %d Mbit/s %d us, %s, cap %s %d pkts (%s, %s)" font ',10'
set xlabel '%s'
set ylabel 'goodput Gbit/s'
set yrange [0:%g]
set key %s
set grid
plot for [i=2:%d] '%s' using 1:i with linespoints title columnhead(i)
''' % (png, MBPS, DELAY_US, 'loss %s %%' % losses[0] if by_queue else where, CAP, ncap,
       commit, date, 'netem queue KiB' if by_queue else 'loss %', MBPS * 1.1 / 1000,
       'bottom right' if by_queue else 'right center', len(MODES) + 1, csv)
		if subprocess.run(['gnuplot'], input=gp, text=True).returncode == 0:
			print('  -> %s' % png)
		else:
			failed += 1
	if failed:
		print('droce-loss-live: %d run(s) failed' % failed, file=sys.stderr)
	return 1 if failed else 0


if __name__ == '__main__':
	sys.exit(main())
