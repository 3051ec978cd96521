#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-stat --qps (telemetry /droce/qps) on a live droce-perf pair over memif.

stat_qps.py DROCE_PERF DROCE_STAT AIMD_PLUGIN
    the client's two QPs run the aimd plugin (tools/cc-plugins) at a 500 Mbit/s ceiling, the
    server's none: each side lists its two QPs as RC/RTS with packets moving, the client's with
    the plugin's own figures (rate_mbps=500, no cuts) and packets its limiter held; text and
    JSON forms; --qps with --file refused.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stat_test import FAILS, check, stat  # noqa: E402  (the live test's helpers)


def qps_json(tool, pid):
    rc, out, err = stat(tool, "--qps", "--json", "-p", str(pid))
    return json.loads(out) if rc == 0 else {"error": err.strip()}


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    perf, tool, plugin = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="droce-qps-")
    port_file = os.path.join(tmp, "port")
    sock = "/droce_qps_%d" % os.getpid()
    base = dict(os.environ, DROCE_EAL="--no-huge -m 256 --no-pci")
    srv_env = dict(base, DROCE_LCORES="0", DROCE_IPV4="198.18.0.1/24",
                   DROCE_VDEV="net_memif0,role=server,socket=" + sock)
    cli_env = dict(base, DROCE_LCORES="1", DROCE_IPV4="198.18.0.2/24",
                   DROCE_VDEV="net_memif0,role=client,socket=" + sock,
                   DROCE_CC_PLUGIN=os.path.abspath(plugin), DROCE_CC="aimd",
                   DROCE_CC_AIMD_MAX_MBPS="500")
    procs = []
    try:
        srv = subprocess.Popen(["timeout", "60", perf, "-p", "0", "--port-file", port_file],
                               env=srv_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        procs.append(srv)
        end = time.monotonic() + 20
        while not os.path.exists(port_file) and time.monotonic() < end:
            time.sleep(0.05)
        if not check(os.path.exists(port_file), "server up"):
            return 1
        with open(port_file) as f:
            port = f.read().strip()
        cli = subprocess.Popen(["timeout", "60", perf, "-p", port, "-o", "write", "-s", "65536",
                                "-q", "2", "-D", "4", "-Q", "127.0.0.1"], env=cli_env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(cli)
        # timeout(1) is the child we started; droce-perf is its child
        pids = {}
        for name, p in (("server", srv), ("client", cli)):
            end = time.monotonic() + 10
            while name not in pids and time.monotonic() < end:
                kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True,
                                      text=True).stdout.split()
                if kids:
                    pids[name] = int(kids[0])
                time.sleep(0.05)
        if not check(len(pids) == 2, "both droce-perf processes found"):
            return 1
        # until the client's QPs are sending and its limiter has held packets
        j = {}
        end = time.monotonic() + 15
        while time.monotonic() < end:
            j = qps_json(tool, pids["client"])
            qs = j.get("list", [])
            if len(qs) == 2 and all(q.get("sent_pkts", 0) > 0 and q.get("cc_deferred", 0) > 0
                                    for q in qs):
                break
            time.sleep(0.2)
        qs = j.get("list", [])
        print("client: %s" % json.dumps(j))
        check(j.get("qps") == 2 and len(qs) == 2, "client: two QPs listed")
        check(all(q.get("type") == "RC" and q.get("state") == "RTS" for q in qs),
              "client: RC, RTS")
        check(all(q.get("cc") == "aimd" and q.get("cc_rate_mbps") == 500 and
                  q.get("cc_cuts") == 0 for q in qs),
              "client: the plugin's algorithm and its own figures (rate_mbps 500, no cuts)")
        check(all(q.get("sent_pkts", 0) > 0 and q.get("cc_deferred", 0) > 0 for q in qs),
              "client: packets sent, some held by the limiter")
        s = qps_json(tool, pids["server"])
        print("server: %s" % json.dumps(s))
        sq = s.get("list", [])
        check(s.get("qps") == 2 and len(sq) == 2 and
              all(q.get("cc") == "none" and q.get("rcvd_pkts", 0) > 0 and
                  not any(k.startswith("cc_") and k != "cc_deferred" for k in q) for q in sq),
              "server: two QPs under none (no figures of its own), packets received")
        rc, out, _ = stat(tool, "--qps", "-p", str(pids["client"]))
        lines = [l for l in out.splitlines() if " RC " in l]
        check(rc == 0 and len(lines) == 2 and all("aimd" in l and "rate_mbps=500" in l
                                                  for l in lines),
              "text: one line per QP with the algorithm's figures")
        rc, _, err = stat(tool, "--qps", "--file", os.path.join(tmp, "x.json"))
        check(rc == 2 and "--qps" in err, "--qps with --file refused")
        for name, p in (("client", cli), ("server", srv)):
            try:
                out, _ = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            check(p.returncode == 0, "%s exits 0 (%s)" % (name, out.strip()[-300:]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    print("qps: %s" % ("FAIL (%d)" % len(FAILS) if FAILS else "ok"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
