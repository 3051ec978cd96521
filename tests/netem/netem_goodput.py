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
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

EAL_NETEM = ['--no-huge', '-m', '128', '--no-pci', '--no-shconf', '--lcores=0@(0,1)',
	     '--log-level=3']
EAL_PERF = '--no-huge -m 256 --no-pci'
BOUND = 100	# seconds any one process may take
# 64 KiB messages per run (WRITE at 5 % loss is the slow one)
ITERS = int(os.environ.get('NETEM_GOODPUT_ITERS', '400'))

fails = 0


def check(desc, ok, detail=''):
	global fails
	print('%s %s%s' % ('ok:  ' if ok else 'FAIL:', desc, (' (%s)' % detail) if detail else ''))
	if not ok:
		fails += 1


def counters(text, side):
	return {m.group(1): int(m.group(2))
		for m in re.finditer(r'^%s (\S+) = (\d+)$' % side, text, re.M)}


def wait_for(path, pattern, proc, seconds):
	end = time.monotonic() + seconds
	while time.monotonic() < end:
		if os.path.exists(path):
			with open(path, errors='replace') as f:
				if re.search(pattern, f.read()):
					return True
		if proc.poll() is not None:
			return False
		time.sleep(0.05)
	return False


def stop(proc):
	if proc.poll() is None:
		proc.kill()
		proc.wait()


def one(netem, perf, tmp, loss, op):
	"""One run: (gbps or None, client counters, frames netem dropped)."""
	tag = 'droce-ng-%d-%d' % (os.getpid(), random.randrange(1 << 30))
	procs = []
	try:
		netem_out = os.path.join(tmp, 'netem-%s-%s.out' % (loss, op))
		nproc = subprocess.Popen([netem] + EAL_NETEM + [
			'--vdev=net_memif0,role=server,socket=/%s-a' % tag,
			'--vdev=net_memif1,role=server,socket=/%s-b' % tag, '--',
			'--delay', '20us', '--loss', '%s%%' % loss, '--seed', '11',
			'--duration', '%ds' % BOUND], stdout=open(netem_out, 'w'),
			stderr=subprocess.STDOUT)
		procs.append(nproc)
		if not wait_for(netem_out, r'ready', nproc, 10):
			print('droce-netem did not start:\n' + open(netem_out).read())
			return None, {}, 0

		def env(addr, sock, lcore):
			e = dict(os.environ)
			e.update(DROCE_EAL=EAL_PERF, DROCE_LCORES=lcore, DROCE_IPV4=addr,
				 DROCE_VDEV='net_memif0,role=client,socket=/%s-%s' % (tag, sock))
			return e

		port_file = os.path.join(tmp, 'port-%s-%s' % (loss, op))
		server_out = os.path.join(tmp, 'server-%s-%s.out' % (loss, op))
		sproc = subprocess.Popen([perf, '-p', '0', '--port-file', port_file],
					 env=env('198.18.0.1/24', 'b', '0'),
					 stdout=open(server_out, 'w'), stderr=subprocess.STDOUT)
		procs.append(sproc)
		end = time.monotonic() + 15
		while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
			if time.monotonic() > end or sproc.poll() is not None:
				print('server never wrote its port:\n' + open(server_out).read())
				return None, {}, 0
			time.sleep(0.1)
		cmd = [perf, '-p', open(port_file).read().strip(), '-o', op, '-m', 'bw', '-s',
		       '65536', '-t', '16', '-n', str(ITERS), '--verify', '-Q', '-J', '--counters',
		       '127.0.0.1']
		try:
			c = subprocess.run(cmd, env=env('198.18.0.2/24', 'a', '1'),
					   capture_output=True, text=True, timeout=BOUND)
			crc, cout, cerr = c.returncode, c.stdout, c.stderr
		except subprocess.TimeoutExpired:
			crc, cout, cerr = 'timeout', '', ''
		try:
			sproc.wait(timeout=30)
		except subprocess.TimeoutExpired:
			pass
		nproc.send_signal(signal.SIGTERM)
		try:
			nproc.wait(timeout=10)
		except subprocess.TimeoutExpired:
			pass
		nout = open(netem_out, errors='replace').read()
		# every frame netem did not deliver: its loss, and any queue or ring that was full
		dropped = sum(float(x) for x in re.findall(r' drop_\w+=([0-9.]+)', nout))
		try:
			r = json.loads(cout.strip().splitlines()[-1])['results'][0]
		except (ValueError, IndexError, KeyError):
			r = None
		ok = crc == 0 and r is not None and r['iters'] == ITERS and r['verified'] is True \
			and r['bad'] == 0
		check('%s at %s %% loss: %d x 64 KiB, verified' % (op, loss, ITERS), ok,
		      'exit %s' % crc)
		return (r['gbps'] if ok else None), counters(cerr, 'client'), dropped
	finally:
		for p in procs:
			stop(p)


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
	print('%d failure(s)' % fails)
	return 1 if fails else 0


if __name__ == '__main__':
	sys.exit(main())
