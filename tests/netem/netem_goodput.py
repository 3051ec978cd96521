#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""READ goodput next to WRITE goodput through droce-netem at 0, 1 and 5 % loss.

Three processes over memif per run, as netem_perf.py: droce-perf server <-> droce-netem (loss
each way, 20 us delay) <-> droce-perf client, 64 KiB messages, 16 in flight, every byte
verified. Prints one line per loss: WRITE and READ Gbit/s, and the READ client's re-requests
and READ responses kept past a gap. Asserts every run completes verified, that READ goodput is
within 2x of WRITE goodput at the same loss (both measured here, side by side), and that a lost
READ response costs about one re-request (re-requests at most 3x the frames netem dropped, and
a few for frames memif held back past others).

    [NETEM_GOODPUT_ITERS=400] netem_goodput.py NETEM PERF [LOSS...]   (default 0 1 5)
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
				'tools', 'droce-netem'))
import netem_pair  # noqa: E402

BOUND = 100	# seconds any one process may take
# 64 KiB messages per run (WRITE at 5 % loss is the slow one)
ITERS = int(os.environ.get('NETEM_GOODPUT_ITERS', '400'))

check = netem_pair.Checks()


def one(netem, perf, tmp, loss, op):
	"""One run: (gbps or None, client counters, frames netem dropped)."""
	r = netem_pair.run(netem, perf, tmp, [
		'--delay', '20us', '--loss', '%s%%' % loss, '--seed', '11', '--duration',
		'%ds' % BOUND], [
		'-o', op, '-m', 'bw', '-s', '65536', '-t', '16', '-n', str(ITERS), '--verify', '-Q',
		'-J', '--counters', '127.0.0.1'], bound=BOUND)
	if r.error:
		print(r.error)
		return None, {}, 0
	res = r.results()
	ok = r.crc == 0 and len(res) == 1 and res[0]['iters'] == ITERS and \
		res[0]['verified'] is True and res[0]['bad'] == 0
	check('%s at %s %% loss: %d x 64 KiB, verified' % (op, loss, ITERS), ok,
	      'exit %s' % r.crc)
	return (res[0]['gbps'] if ok else None), netem_pair.counters(r.cerr, 'client'), r.dropped()


def main():
	netem, perf = sys.argv[1:3]
	losses = sys.argv[3:] or ['0', '1', '5']
	tmp = tempfile.mkdtemp(prefix='droce-netem-goodput.')
	rows = []
	try:
		for loss in losses:
			w, _, _ = one(netem, perf, tmp, loss, 'write')
			r, rc, dropped = one(netem, perf, tmp, loss, 'read')
			rereq = rc.get('dev.read_rereq', 0)
			rows.append((loss, w, r, rereq, rc.get('dev.read_resp_ahead', 0), dropped))
			if w is not None and r is not None:
				check('READ within 2x of WRITE at %s %% loss' % loss, 2 * r >= w,
				      'READ %.2f, WRITE %.2f Gbit/s' % (r, w))
			check('READ re-requests at most 3x the frames lost at %s %%' % loss,
			      rereq <= 3 * dropped + 16, '%d re-requests, %d lost' % (rereq, dropped))
	finally:
		shutil.rmtree(tmp, ignore_errors=True)
	print('loss  WRITE Gbit/s  READ Gbit/s  READ re-requests  READ responses kept  frames lost')
	for loss, w, r, rereq, ahead, dropped in rows:
		print('%3s %% %12s %12s %17d %20d %12d' % (
			loss, '%.2f' % w if w is not None else '-', '%.2f' % r if r is not None else '-',
			rereq, ahead, dropped))
	print('%d failure(s)' % check.fails)
	return 1 if check.fails else 0


if __name__ == '__main__':
	sys.exit(main())
