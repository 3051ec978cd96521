# SPDX-License-Identifier: BSD-3-Clause
"""The hostile-peer test's plumbing: namespaces, processes on droce-run, the attacker's raw
socket and sniffer, droce's counters over telemetry, process memory through /proc/PID/mem.
"""
import ctypes
import json
import os
import socket
import subprocess
import threading
import time

import wire

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 3
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1


def sh(*args, check=True, ns=None, timeout=30):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                       check=False)
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                r.stdout.decode(errors="replace")))
    return r.stdout.decode(errors="replace")


class Topology:
    """Four namespaces named hostile_<role>_<pid>: s (droce server), c (droce client), a
    (attacker), m (a bridge joining them, learning off so every frame floods to every port:
    the attacker on its port sees the legitimate session, as on a hub or a mirrored port)."""

    HOSTS = {  # role: (interface, MAC, the kernel's address)
        "s": ("vs", "02:00:00:00:07:01", "198.19.0.1"),
        "c": ("vc", "02:00:00:00:07:02", "198.19.0.2"),
        "a": ("va", "02:00:00:00:07:03", "198.19.0.3"),
    }

    def __init__(self, tag):
        self.ns = {r: "hostile_%s_%s" % (r, tag) for r in ("s", "c", "a", "m")}
        self.made = []

    def up(self):
        m = self.ns["m"]
        for r in ("m", "s", "c", "a"):
            sh("ip", "netns", "add", self.ns[r])
            self.made.append(self.ns[r])
        # br_netfilter, when loaded, would check (and drop, and reassemble) IPv4 on the
        # bridge before droce sees it: the malformed frames must reach droce as sent
        for k in ("iptables", "ip6tables", "arptables"):
            sh("sysctl", "-qw", "net.bridge.bridge-nf-call-%s=0" % k, ns=m, check=False)
        sh("ip", "-n", m, "link", "add", "br0", "type", "bridge", "ageing_time", "0")
        sh("ip", "-n", m, "link", "set", "br0", "up")
        for r, (dev, mac, kaddr) in self.HOSTS.items():
            n = self.ns[r]
            sh("ip", "-n", n, "link", "add", dev, "address", mac, "type", "veth", "peer",
               "name", "m" + r, "netns", m)
            sh("ip", "-n", m, "link", "set", "dev", "m" + r, "master", "br0")
            sh("ip", "-n", m, "link", "set", "dev", "m" + r, "up")
            sh("bridge", "-n", m, "link", "set", "dev", "m" + r, "learning", "off", "flood", "on")
            sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=n)
            sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", ns=n)
            sh("ip", "-n", n, "addr", "add", kaddr + "/24", "dev", dev)
            sh("ip", "-n", n, "link", "set", dev, "up")
            sh("ip", "-n", n, "link", "set", "lo", "up")
            # RoCE frames sent to the kernel's own address (an attack) must not draw an ICMP
            # port unreachable: droce is what is tested, not the kernel
            sh("nft", "add table inet hostile; add chain inet hostile in { type filter hook "
               "input priority 0; }; add rule inet hostile in udp dport 4791 drop", ns=n)

    def down(self):
        for n in reversed(self.made):
            subprocess.run(["ip", "netns", "del", n], stderr=subprocess.DEVNULL, check=False)
        self.made = []


def in_netns(ns, fn):
    """Run fn() with this thread in network namespace ns (a socket made there stays there)."""
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + ns)
        try:
            return fn()
        finally:
            if libc.setns(here, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(here)
        os.close(there)


class Attacker:
    """A raw socket on the attacker's port: send() crafted frames, and a sniffer thread that
    keeps every RoCEv2 frame seen (parsed) while sniffing is on."""

    def __init__(self, ns, dev):
        def mk():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.bind((dev, 0))
            return s
        self.sock = in_netns(ns, mk)
        self.sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)	# SO_RCVBUFFORCE
        self.sock.settimeout(0.05)
        self.frames = []
        self.lock = threading.Lock()
        self.stop = False
        self.paused = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            if self.paused:
                # not reading: the socket's queue fills and the kernel drops the rest,
                # which costs the sessions under test no CPU
                time.sleep(0.01)
                continue
            try:
                f, addr = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            p = wire.parse(f)
            if p is not None:
                p["t"] = time.monotonic()
                with self.lock:
                    self.frames.append(p)
                    if len(self.frames) > 200000:
                        del self.frames[:100000]

    def clear(self):
        with self.lock:
            self.frames = []

    def pause(self):
        self.paused = True

    def resume(self):
        """Sniff again, from now: what queued while paused is thrown away."""
        self.sock.setblocking(False)
        try:
            while True:
                self.sock.recv(65536)
        except BlockingIOError:
            pass
        self.sock.settimeout(0.05)
        self.clear()
        self.paused = False

    def seen(self, pred=lambda p: True):
        with self.lock:
            return [p for p in self.frames if pred(p)]

    def wait_for(self, pred, timeout, alive=None):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            got = self.seen(pred)
            if got:
                return got[0]
            if alive is not None and not alive():
                return None
            time.sleep(0.002)
        return None

    def wait_for_all(self, pred, timeout):
        """Every frame matching pred seen within timeout from now (and before)."""
        time.sleep(timeout)
        return self.seen(pred)

    def send(self, frame, count=1):
        for _ in range(count):
            self.sock.send(frame)

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


class Telemetry:
    """droce's counters and QPs of one process, over its DPDK telemetry socket (as droce-stat)."""

    def __init__(self, pid, timeout=60.0):
        path = "/var/run/dpdk/droce%d/dpdk_telemetry.v2" % pid
        end = time.monotonic() + timeout
        self.sock = None
        while time.monotonic() < end:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                raise RuntimeError("process %d ended before its telemetry socket %s appeared"
                                   % (pid, path))
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.settimeout(5)
                s.connect(path)
                hello = json.loads(s.recv(1024).decode())
                self.max_len = int(hello.get("max_output_len", 16384))
                self.sock = s
                break
            except (OSError, ValueError):
                s.close()
                time.sleep(0.1)
        if self.sock is None:
            raise RuntimeError("no telemetry socket %s after %.0f s (process %d alive)"
                               % (path, timeout, pid))

    def cmd(self, c):
        self.sock.send(c.encode())
        reply = self.sock.recv(self.max_len)
        if not reply:
            raise RuntimeError("the droce process ended (telemetry socket closed)")
        return json.loads(reply.decode()).get(c)

    def counters(self):
        """{"group.name": value} (groups rt, port, neigh, dev)."""
        data = self.cmd("/droce/counters")
        flat = {}
        for g in ("rt", "port", "neigh", "dev"):
            for k, v in (data.get(g) or {}).items():
                flat[g + "." + k] = v
        return flat

    def qps(self):
        data = self.cmd("/droce/qps") or {}
        return {v["qpn"]: v for k, v in data.items() if k.startswith("qp_")}

    def close(self):
        self.sock.close()


def drop_count(counters, reason):
    """A named drop reason counted in any group (the engine's dev.drop_X or the runtime's
    classifier rt.drop_X)."""
    want = "drop_" + reason.lower()
    return sum(v for k, v in counters.items() if k.split(".", 1)[1] == want)


# ---- memory through /proc/PID/mem ----

def read_mrs(path):
    """The MRs the interposer (mrlog.c) logged: [(addr, length, access, rkey)]."""
    mrs = []
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 6 and w[0] == "mr":
                    mrs.append((int(w[1], 16), int(w[2]), int(w[3]), int(w[5])))
    except FileNotFoundError:
        pass
    return mrs


def windows(pid, mrs, margin):
    """Readable mapped ranges within margin bytes of any MR: [(start, end)]."""
    want = [(max(0, a - margin), a + n + margin) for a, n, _, _ in mrs]
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            w = line.split()
            lo, hi = (int(x, 16) for x in w[0].split("-"))
            if "r" not in w[1] or (len(w) > 5 and w[5] in ("[vvar]", "[vsyscall]")):
                continue
            for a, b in want:
                s, e = max(lo, a), min(hi, b)
                if s < e:
                    out.append((s, e))
    out.sort()
    merged = []
    for s, e in out:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def snapshot(pid, ranges):
    snap = {}
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as f:
        for s, e in ranges:
            f.seek(s)
            snap[s] = f.read(e - s)
    return snap


def changed(a, b, skip=()):
    """Addresses whose byte differs between two snapshots of the same ranges, outside skip
    (a list of (start, end) ranges) and outside any address in a set passed as skip too."""
    ranges = [x for x in skip if isinstance(x, tuple)]
    addrs = set()
    for x in skip:
        if isinstance(x, set):
            addrs |= x
    out = []
    for s, da in a.items():
        db = b.get(s)
        if db is None:
            continue
        for off in range(0, len(da), 4096):
            ca, cb = da[off:off + 4096], db[off:off + 4096]
            if ca == cb:
                continue
            for i in range(len(ca)):
                if ca[i] != cb[i]:
                    x = s + off + i
                    if x in addrs or any(lo <= x < hi for lo, hi in ranges):
                        continue
                    out.append(x)
    return out


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def die_with_parent():
    ctypes.CDLL(None).prctl(1, 9)	# PR_SET_PDEATHSIG, SIGKILL


class Proc:
    """A program run through droce-run in a namespace; same PID as the program (droce-run and
    ip netns exec both exec). Output to files in tmp."""

    def __init__(self, cfg, ns, dev, ip, argv, name, ip6=None, mrlog=False):
        extra = getattr(cfg, "extra_set", [])
        self.name = name
        self.out = os.path.join(cfg.tmp, name + ".out")
        self.err = os.path.join(cfg.tmp, name + ".err")
        self.mrlog = os.path.join(cfg.tmp, name + ".mrs") if mrlog else None
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("DROCE_") or k in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
                del env[k]
        if mrlog:
            env["LD_PRELOAD"] = cfg.mrlog_so
            env["HOSTILE_MRLOG"] = self.mrlog
        cmd = ["ip", "netns", "exec", ns, cfg.droce_run, "-q", "--no-huge", "--iface", dev,
               "--pmd", "af_packet", "--ip", ip + "/24"]
        if ip6:
            cmd += ["--ip6", ip6 + "/64"]
        cmd += ["--set", "counters_file=" + os.path.join(cfg.tmp, name + "-%p.json")]
        for x in extra:
            cmd += ["--set", x.replace("%n", name)]
        cmd += ["--"]
        cmd += argv
        # ip netns exec, droce-run and env all exec: the program keeps this child's PID, and
        # dies with the test even if the test itself is killed (PR_SET_PDEATHSIG, SIGKILL)
        self.p = subprocess.Popen(cmd, stdout=open(self.out, "w"), stderr=open(self.err, "w"),
                                  stdin=subprocess.DEVNULL, env=env, preexec_fn=die_with_parent)
        self.pid = self.p.pid
        cfg.procs.append(self)

    def alive(self):
        return self.p.poll() is None

    def wait(self, timeout):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.p.poll() is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
            self.p.wait()

    def stop(self):
        os.kill(self.pid, 19)	# SIGSTOP

    def cont(self):
        os.kill(self.pid, 18)	# SIGCONT

    def text(self):
        with open(self.out, errors="replace") as f:
            o = f.read()
        with open(self.err, errors="replace") as f:
            return o, f.read()


def wait_listen(ns, port, proc, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.alive():
        if sh("ss", "-Hltn", "sport = :%d" % port, ns=ns, check=False).strip():
            return True
        time.sleep(0.1)
    return False
