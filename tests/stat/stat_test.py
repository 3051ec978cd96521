#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Live counters (droce-stat over telemetry) and capture of the droce runtime.

stat_test.py live STAT_PEER DROCE_STAT DROCE_PCAP
    two stat_peer processes over memif (server inline, client on a poll lcore), each capturing;
    droce-stat reads both while they run: values, consistency, output forms, watch, errors.
stat_test.py capture GLUE_SMOKE DROCE_STAT DROCE_PCAP
    glue_smoke lat (RC SEND ping-pong both ways) with DROCE_CAPTURE: droce-pcap verify, RC
    requests and ACKs in both directions in each file, tshark without malformed packets, and
    the size bound (capture_max_kb); with DROCE_COUNTERS_FILE: each process's counters at
    close, matching its capture, read back by droce-stat --file, and the errors.
"""
import collections
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NDROP = 5
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)
    return cond


def run(cmd, env=None, timeout=30):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def stat(tool, *args):
    return run([sys.executable, tool] + list(args))


def stat_json(tool, *args):
    rc, out, err = stat(tool, "--json", *args)
    if not check(rc == 0, "droce-stat --json %s: exit 0 (%s)" % (" ".join(args), err.strip())):
        return None
    return json.loads(out)


def flat(groups):
    return {g + "." + k: v for g, c in groups.items() for k, v in c.items()}


def read_ready(procs, timeout):
    """pid printed by each child's 'ready PID' line, or None."""
    pids = {}
    end = time.monotonic() + timeout
    while len(pids) < len(procs) and time.monotonic() < end:
        for name, p in procs.items():
            if name in pids:
                continue
            if p.poll() is not None:
                print("%s exited early (%s): %s" % (name, p.returncode, p.stderr.read()))
                return None
            r, _, _ = select.select([p.stdout], [], [], 0.05)
            if r:
                line = p.stdout.readline()
                if line.startswith("ready "):
                    pids[name] = int(line.split()[1])
    return pids if len(pids) == len(procs) else None


def pcap_counts(pcap_tool, path):
    """droce-pcap verify: exit status, frames, RoCE frames, its output."""
    rc, out, err = run([pcap_tool, "verify", path])
    # "<file>: N packets, R RoCE, S skipped, B bad"
    w = out.split(":")[-1].split() if "packets" in out else []
    n, roce = (int(w[0]), int(w[2])) if len(w) >= 4 else (-1, -1)
    return rc, n, roce, out + err


def pcap_count(pcap_tool, path):
    rc, n, _, out = pcap_counts(pcap_tool, path)
    return rc, n, out


def consistency(c, who):
    drops = sum(v for k, v in c.items() if k.startswith("rt.drop_") and k != "rt.drop_neigh_bad")
    check(c["rt.rx_pkts"] > 0 and c["rt.tx_pkts"] > 0, "%s: rt rx/tx packets > 0 (%d/%d)"
          % (who, c["rt.rx_pkts"], c["rt.tx_pkts"]))
    check(c["rt.rx_pkts"] == c["rt.rx_roce"] + c["rt.rx_neigh"] + c["rt.exception"] + drops,
          "%s: every received frame is RoCE, neighbour, exception or a named drop" % who)
    check(c["port.ipackets"] == c["rt.rx_pkts"] and c["port.opackets"] == c["rt.tx_pkts"],
          "%s: ethdev packets equal the loop's (in %d/%d, out %d/%d)" % (who,
          c["port.ipackets"], c["rt.rx_pkts"], c["port.opackets"], c["rt.tx_pkts"]))
    check(c["neigh.arp_req_rx"] + c["neigh.arp_rep_rx"] > 0 and c["neigh.learned"] > 0,
          "%s: ARP received, peer learned" % who)
    check(c["rt.capture_pkts"] == c["rt.rx_pkts"] + c["rt.tx_pkts"] and
          c["rt.capture_skipped"] == 0, "%s: every frame in and out captured (%d)"
          % (who, c["rt.capture_pkts"]))
    check(c["rt.telemetry_reads"] >= 1, "%s: telemetry reads counted" % who)
    check(any(k.startswith("dev.drop_") for k in c), "%s: engine drop reasons listed" % who)


def live(peer, tool, pcap_tool):
    tmp = tempfile.mkdtemp(prefix="droce-stat-")
    stop = {n: os.path.join(tmp, "stop-" + n) for n in ("server", "client")}
    sock = "/droce_stat_%d" % os.getpid()
    env = dict(os.environ, DROCE_CAPTURE=os.path.join(tmp, "peer-%p.pcap"))
    procs = {}
    try:
        procs["server"] = subprocess.Popen([peer, "server", sock, str(NDROP), stop["server"],
                                            "pause"],
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, env=env)
        time.sleep(0.3)
        procs["client"] = subprocess.Popen([peer, "client", sock, str(NDROP), stop["client"],
                                            "lcore"],
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, env=env)
        pids = read_ready(procs, 25)
        if not check(pids is not None, "both peers ready"):
            return
        time.sleep(0.3)  # the last datagrams arrive and are counted
        last = {}
        for name in ("server", "client"):
            pid = pids[name]
            j = stat_json(tool, "--pid", str(pid))
            if j is None:
                continue
            check(j["pid"] == pid and not j["stale"], "%s: /droce/counters answered, fresh"
                  % name)
            c = flat(j["counters"])
            check(c.get("rt.drop_not_roce_port", 0) == NDROP,
                  "%s: rt.drop_not_roce_port == %d (the peer's datagrams), got %s"
                  % (name, NDROP, c.get("rt.drop_not_roce_port")))
            consistency(c, name)
            last[name] = c
        cpid, spid = pids["client"], pids["server"]
        # The same process through its file prefix and through the socket path.
        j = stat_json(tool, "--prefix", "droce%d" % cpid, "-g", "rt")
        check(j is not None and list(j["counters"]) == ["rt"] and
              j["counters"]["rt"]["rx_pkts"] >= last["client"]["rt.rx_pkts"],
              "client by --prefix, one group (-g rt)")
        sockpath = "/var/run/dpdk/droce%d/dpdk_telemetry.v2" % spid
        if os.geteuid() != 0:
            base = os.environ.get("XDG_RUNTIME_DIR")
            sockpath = os.path.join(base + "/dpdk" if base else "/tmp/dpdk",
                                    "droce%d" % spid, "dpdk_telemetry.v2")
        j = stat_json(tool, "--socket", sockpath)
        check(j is not None and j["pid"] == spid, "server by --socket")
        # Human form: grouped, non-zero only by default; -a adds the zeros.
        rc, out, _ = stat(tool, "-p", str(spid))
        rows = [l.split() for l in out.splitlines() if l.startswith("  ")]
        check(rc == 0 and "\nrt\n" in out and "\nport\n" in out and
              any(r[0] == "drop_not_roce_port" and r[1] == str(NDROP) for r in rows) and
              all(r[-1] != "0" for r in rows), "text: grouped, named drops, no zero rows")
        rc, out_a, _ = stat(tool, "-p", str(spid), "-a")
        rows_a = [l.split() for l in out_a.splitlines() if l.startswith("  ")]
        check(rc == 0 and len(rows_a) > len(rows) and any(r[-1] == "0" for r in rows_a) and
              "\ndev\n" in out_a, "text -a: zero counters too (%d > %d rows)"
              % (len(rows_a), len(rows)))
        # Watch: bounded samples of deltas.
        rc, out, err = stat(tool, "-p", str(cpid), "--json", "-w", "0.2", "-c", "3")
        samples = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
        check(len(samples) == 3 and
              all(s["delta"]["rt"]["iterations"] > 0 and
                  all(v >= 0 for v in flat(s["delta"]).values()) and
                  0.15 < s["interval_s"] < 2 for s in samples),
              "watch -w 0.2 -c 3: three delta samples, the poll lcore iterating (%s)"
              % err.strip())
        rc, out, _ = stat(tool, "-p", str(cpid), "-w", "0.1", "-c", "2")
        check(rc == 0 and out.count("--- pid %d" % cpid) == 2, "watch text: two samples")
        rc, out, _ = stat(tool, "-p", str(spid), "--info")
        info = json.loads(out) if rc == 0 else {}
        check(info.get("pid") == spid and info.get("ipv4") == "198.19.7.1" and
              "link_up" in info, "--info: pid, address, link")
        # Errors: one line naming what to do.
        empty = os.path.join(tmp, "none")
        os.mkdir(empty)
        rc, _, err = stat(tool, "--runtime-dir", empty)
        check(rc == 1 and "no droce process with telemetry found under %s" % empty in err and
              "--socket" in err, "no process: %s" % err.strip())
        rc, _, err = stat(tool, "--pid", "999999999")
        check(rc == 1 and "no droce process with pid 999999999" in err, "unknown pid: %s"
              % err.strip())
        rc, _, err = stat(tool, "--socket", os.path.join(tmp, "nope"))
        check(rc == 1 and err.startswith("droce-stat: ") and err.count("\n") == 1,
              "bad socket path: %s" % err.strip())
        # The inline server stops polling: telemetry answers with its last snapshot, stale.
        open(stop["server"], "w").close()
        line = ""
        r, _, _ = select.select([procs["server"].stdout], [], [], 10)
        if r:
            line = procs["server"].stdout.readline()
        if check(line.strip() == "paused", "server paused its loop"):
            j = stat_json(tool, "--pid", str(spid))
            c = flat(j["counters"]) if j else {}
            check(j is not None and j["stale"] and
                  c.get("rt.rx_pkts") == last["server"]["rt.rx_pkts"] and
                  c.get("rt.telemetry_reads", 0) >= last["server"]["rt.telemetry_reads"],
                  "a loop that does not poll: the last snapshot, marked stale")
        # A watch over a process that exits ends with one line, exit 1.
        watch = subprocess.Popen([sys.executable, tool, "-p", str(cpid), "-w", "0.1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        # Stop the client, then the server: both closing at once races EAL's interrupt thread
        # against rte_eal_cleanup (pmd-glue/README.md, memif). Their captures hold the frames counted.
        open(stop["client"], "w").close()
        try:
            _, werr = watch.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            watch.kill()
            _, werr = watch.communicate()
        check(watch.returncode == 1 and werr.count("\n") == 1 and
              ("is gone" in werr or "no droce runtime" in werr),
              "watch ends when the process goes: %s" % werr.strip())
        for name in ("client", "server"):
            p = procs[name]
            if name == "server":
                time.sleep(0.5)  # the server's interrupt thread handles the disconnect first
                open(stop["server"] + ".2", "w").close()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            check(p.returncode == 0, "%s exits 0 (status %s %s)" % (name, p.returncode,
                                                              p.stderr.read().strip()))
        for name in ("server", "client"):
            path = os.path.join(tmp, "peer-%d.pcap" % pids[name])
            rc, n, out = pcap_count(pcap_tool, path)
            c = last.get(name, {})
            check(rc == 0 and n >= c.get("rt.capture_pkts", 1) > 0,
                  "%s capture: droce-pcap verify passes, %d frames >= %s counted live"
                  % (name, n, c.get("rt.capture_pkts")))
        check(not os.path.exists(sockpath), "telemetry socket gone after close")
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def counters_file(tool, path, frames):
    """The counters a process wrote at close: droce-stat's shape, the frames of its capture."""
    name = os.path.basename(path)
    if not check(os.path.exists(path), "%s written at close" % name):
        return
    with open(path) as f:
        saved = json.load(f)
    c = flat(saved["counters"])
    check(str(saved["pid"]) in name and set(saved["counters"]) == {"rt", "port", "neigh", "dev"},
          "%s: its pid and the four groups" % name)
    check(c["rt.capture_pkts"] == frames == c["rt.rx_pkts"] + c["rt.tx_pkts"] and
          c["dev.sent_pkts"] > 4000 and c["dev.rcvd_pkts"] > 4000 and c["rt.link_up"] == 1,
          "%s: the capture's %d frames = rt rx %d + tx %d; engine sent %d, received %d"
          % (name, frames, c["rt.rx_pkts"], c["rt.tx_pkts"], c["dev.sent_pkts"],
             c["dev.rcvd_pkts"]))
    rc, out, err = stat(tool, "--file", path, "--json", "-g", "dev")
    check(rc == 0 and json.loads(out)["counters"] == {"dev": saved["counters"]["dev"]},
          "droce-stat --file %s --json -g dev: the file's dev group" % name)
    rc, out, err = stat(tool, "--file", path)
    rows = [l.split() for l in out.splitlines()]
    check(rc == 0 and "at its close" in out and ["sent_pkts", str(c["dev.sent_pkts"])] in rows,
          "droce-stat --file %s: printed like a live read" % name)


def counters_file_errors(smoke, tool, tmp):
    """A file droce-stat cannot use, and one the runtime cannot write, are each said once."""
    bad = os.path.join(tmp, "not-json.json")
    with open(bad, "w") as f:
        f.write("rt.rx_pkts 3\n")
    rc, out, err = stat(tool, "--file", bad)
    check(rc == 1 and "not a droce counters file" in err and "counters_file" in err,
          "droce-stat --file on a text file: exit 1, names the key (%s)" % err.strip())
    rc, out, err = stat(tool, "--file", os.path.join(tmp, "absent.json"))
    check(rc == 1 and "No such file" in err, "droce-stat --file absent: exit 1 (%s)"
          % err.strip())
    env = dict(os.environ, DROCE_COUNTERS_FILE=os.path.join(tmp, "no-dir", "c.json"))
    rc, out, err = run([smoke, "lat", "--no-huge -m 128 --no-pci"], env=env, timeout=90)
    said = [l for l in err.splitlines() if "counters file" in l]
    check(rc == 0 and len(said) == 2 and all("No such file or directory" in l and
                                             "DROCE_COUNTERS_FILE" in l for l in said),
          "an unwritable counters_file: one line per process naming the fix, run still ok "
          "(rc %d, %s)" % (rc, said))


def capture(smoke, tool, pcap_tool):
    tmp = tempfile.mkdtemp(prefix="droce-cap-")
    try:
        env = dict(os.environ, DROCE_CAPTURE=os.path.join(tmp, "cap-%p.pcap"),
                   DROCE_COUNTERS_FILE=os.path.join(tmp, "cnt-%p.json"))
        rc, out, err = run([smoke, "lat", "--no-huge -m 128 --no-pci"], env=env, timeout=90)
        if not check(rc == 0, "glue_smoke lat with capture (%s)" % err.strip()[-300:]):
            return
        files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".pcap"))
        check(len(files) == 2, "one capture per process (%d)" % len(files))
        for f in files:
            rc, n, roce, out = pcap_counts(pcap_tool, f)
            check(rc == 0 and " 0 bad" in out and roce > 8000, "verify %s: %s"
                  % (os.path.basename(f), out.strip()))
            counters_file(tool, os.path.join(tmp, os.path.basename(f).replace(
                "cap-", "cnt-").replace(".pcap", ".json")), n)
            rc, out, err = run([pcap_tool, "decode", "--json", f])
            seen = collections.Counter()
            for line in out.splitlines():
                o = json.loads(line)
                if o["status"] == "ok":
                    seen[(o["src"], o["dst"], o["opcode_name"])] += 1
            for a, b in (("198.18.0.1", "198.18.0.2"), ("198.18.0.2", "198.18.0.1")):
                check(seen[(a, b, "RC_SEND_ONLY")] > 0 and
                      seen[(a, b, "RC_ACKNOWLEDGE")] > 0,
                      "%s: RC SENDs and ACKs %s -> %s (%d, %d)" % (os.path.basename(f), a, b,
                      seen[(a, b, "RC_SEND_ONLY")], seen[(a, b, "RC_ACKNOWLEDGE")]))
            rc, out, err = run(["tshark", "-n", "-r", f, "-Y", "_ws.malformed"], timeout=60)
            check(rc == 0 and out.strip() == "", "tshark: no malformed packet in %s"
                  % os.path.basename(f))
            rc, out, err = run(["tshark", "-n", "-r", f, "-Y", "infiniband.bth.opcode",
                                "-T", "fields", "-e", "frame.number"], timeout=60)
            check(rc == 0 and len(out.split()) == roce,
                  "tshark decodes the %d RoCE frames as InfiniBand (%d)"
                  % (roce, len(out.split())))
        counters_file_errors(smoke, tool, tmp)
        # The size bound: a 64 KB capture is a valid pcap no larger than the bound.
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        del env["DROCE_COUNTERS_FILE"]
        env["DROCE_CAPTURE_MAX_KB"] = "64"
        rc, out, err = run([smoke, "lat", "--no-huge -m 128 --no-pci"], env=env, timeout=90)
        check(rc == 0, "glue_smoke lat with capture_max_kb = 64")
        for f in sorted(os.path.join(tmp, f) for f in os.listdir(tmp)):
            size = os.path.getsize(f)
            rc, n, out = pcap_count(pcap_tool, f)
            check(rc == 0 and 60000 < size <= 65536 and n > 100,
                  "bounded capture: %d bytes, %d frames, verify passes" % (size, n))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("live", "capture"):
        print(__doc__, file=sys.stderr)
        return 2
    signal.alarm(110)
    if sys.argv[1] == "live":
        live(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        capture(sys.argv[2], sys.argv[3], sys.argv[4])
    print("%s: %s" % (sys.argv[1], "FAIL (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
