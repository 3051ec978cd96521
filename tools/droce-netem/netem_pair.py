# SPDX-License-Identifier: BSD-3-Clause
"""droce-perf's server and client through droce-netem over memif: the run the netem tests
(tests/netem) and the live loss bench (tools/bench/droce-loss-live.py) share.

netem serves both memif sockets; the server (198.18.0.1, lcore 0) and the client (198.18.0.2,
lcore 1) each connect to one. Every process is bounded and ended, however the run ends."""

import json
import os
import random
import re
import signal
import subprocess
import time

EAL_NETEM = ['--no-huge', '-m', '128', '--no-pci', '--no-shconf', '--lcores=0@(0,1)',
	     '--log-level=3']
EAL_PERF = '--no-huge -m 256 --no-pci'


class Checks:
	"""A test's checks: check(desc, ok, detail) prints 'ok:' or 'FAIL:' with the detail and
	counts the failures (fails)."""

	def __init__(self):
		self.fails = 0

	def __call__(self, desc, ok, detail=''):
		print('%s %s%s' % ('ok:  ' if ok else 'FAIL:', desc,
				   (' (%s)' % detail) if detail else ''))
		if not ok:
			self.fails += 1
		return ok


def wait_for(path, pattern, proc, seconds):
	"""True once path holds pattern; False when proc ends first or seconds pass."""
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


def counters(text, side):
	"""droce-perf --counters lines ('client dev.x = 3') as {name: value}."""
	return {m.group(1): int(m.group(2))
		for m in re.finditer(r'^%s (\S+) = (\d+)$' % side, text, re.M)}


class Run:
	"""What one run left: error (why it never got to the client, or None), the client's exit
	status and output (crc, cout, cerr), the server's (src, sout), netem's (nout) and the
	client's seconds."""
	error = None
	crc = src = None
	cout = cerr = sout = nout = ''
	secs = 0.0

	def results(self):
		"""The client's JSON results (its last stdout line), [] without them."""
		try:
			return json.loads(self.cout.strip().splitlines()[-1])['results']
		except (ValueError, IndexError, KeyError):
			return []

	def dropped(self):
		"""Every frame netem did not deliver: its loss, and any queue or ring that was full."""
		return sum(float(x) for x in re.findall(r' drop_\w+=([0-9.]+)', self.nout))


def _text(s):
	return (s.decode(errors='replace') if isinstance(s, bytes) else s) or ''


def run(netem, perf, tmp, netem_args, client_args, server_args=(), env_extra=None, ipv6=False,
	bound=100, show_cmd=False):
	"""netem with netem_args (its impairments and --duration), then droce-perf's server
	(server_args) and client (client_args after '-p PORT'); env_extra is added to both
	sides' environment, ipv6 gives each side an IPv6 address too (GID 1)."""
	tag = 'droce-nt-%d-%d' % (os.getpid(), random.randrange(1 << 30))
	r = Run()
	procs = []
	try:
		netem_out = os.path.join(tmp, 'netem-%s.out' % tag)
		nproc = subprocess.Popen([netem] + EAL_NETEM + [
			'--vdev=net_memif0,role=server,socket=/%s-a' % tag,
			'--vdev=net_memif1,role=server,socket=/%s-b' % tag, '--'] + list(netem_args),
			stdout=open(netem_out, 'w'), stderr=subprocess.STDOUT)
		procs.append(nproc)
		# 30 s while it lives: EAL's start is slow when a test run fills both cores
		if not wait_for(netem_out, r'ready', nproc, 30):
			r.error = 'droce-netem did not start:\n' + open(netem_out).read()
			return r

		def env(addr, sock, lcore):
			e = dict(os.environ)
			e.update(DROCE_EAL=EAL_PERF, DROCE_LCORES=lcore, DROCE_IPV4=addr,
				 DROCE_VDEV='net_memif0,role=client,socket=/%s-%s' % (tag, sock))
			if ipv6:
				e['DROCE_IPV6'] = '2001:2::%s/64' % addr.split('/')[0].split('.')[-1]
			e.update(env_extra or {})
			return e

		port_file = os.path.join(tmp, 'port-%s' % tag)
		server_out = os.path.join(tmp, 'server-%s.out' % tag)
		sproc = subprocess.Popen([perf, '-p', '0', '--port-file', port_file] +
					 list(server_args), env=env('198.18.0.1/24', 'b', '0'),
					 stdout=open(server_out, 'w'), stderr=subprocess.STDOUT)
		procs.append(sproc)
		end = time.monotonic() + 15
		while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
			if time.monotonic() > end or sproc.poll() is not None:
				r.error = 'server never wrote its port:\n' + open(server_out).read()
				return r
			time.sleep(0.1)
		cmd = [perf, '-p', open(port_file).read().strip()] + list(client_args)
		if show_cmd:
			print('client: ' + ' '.join(cmd[1:]))
		t0 = time.monotonic()
		try:
			c = subprocess.run(cmd, env=env('198.18.0.2/24', 'a', '1'),
					   capture_output=True, text=True, timeout=bound)
			r.crc, r.cout, r.cerr = c.returncode, c.stdout, c.stderr
		except subprocess.TimeoutExpired as e:
			r.crc, r.cout, r.cerr = 'timeout', _text(e.stdout), _text(e.stderr)
		try:
			r.src = sproc.wait(timeout=30)
		except subprocess.TimeoutExpired:
			r.src = 'timeout'
		r.secs = time.monotonic() - t0
		nproc.send_signal(signal.SIGTERM)
		try:
			nproc.wait(timeout=10)
		except subprocess.TimeoutExpired:
			pass
		r.sout = open(server_out, errors='replace').read()
		r.nout = open(netem_out, errors='replace').read()
		return r
	finally:
		for p in procs:
			stop(p)
