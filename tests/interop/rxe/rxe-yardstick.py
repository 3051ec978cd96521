#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rxe-yardstick: droce-interop's cases between two rxe guests, the yardstick for droce's figures
(a slow emulated peer is not a droce fault), and the table of both side by side.

  rxe-yardstick.py run --interop IOP --server ADDR --client ADDR --out FILE.json
                       [--cases C,...] [--sizes 64,...] [--iters N] [--mtu M] [--timeout S]
  rxe-yardstick.py table DROCE_REPORT.json YARDSTICK.json

run: each case once, the guest at --server serving and the one at --client connecting, through
their agents (rxe-peer.py), with the command lines droce-interop builds (it is loaded as a
module: one definition of the cases, their options and their result lines).
table: case, size, droce serving, droce as client, rxe to rxe: figure or the failure's reason.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_interop(path):
    loader = importlib.machinery.SourceFileLoader("droce_interop", path)
    spec = importlib.util.spec_from_loader("droce_interop", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def prefix(addr, timeout):
    return [sys.executable, os.path.join(HERE, "rxe-peer.py"), "-t", str(timeout + 30), addr]


def run_one(iop, a, case, size, port):
    prog, _, kind, _ = iop.CASES[case]
    sp, cp = prefix(a.server, a.timeout), prefix(a.client, a.timeout)
    s_prog = iop.program_args(case, size, a, "rxe0", 1, port, a.server)
    c_prog = iop.program_args(case, size, a, "rxe0", 1, port, a.server)
    if kind == "rping":
        s_prog.insert(1, "-s")
        c_prog.insert(1, "-c")
    else:
        c_prog.append(a.server)
    bound = ["timeout", "-k", "5", str(a.timeout)]
    tag = "%s%s.rxe" % (case, "" if size is None else "_%d" % size)
    log = os.path.join(a.logdir, tag)
    server = iop.Side("server", sp + bound + s_prog, log + ".server")
    client = iop.Side("client", cp + bound + c_prog, log + ".client")
    deadline = time.monotonic() + a.timeout + 10
    server.start()
    if iop.cm_case(case):
        time.sleep(2)
    else:
        while time.monotonic() < deadline - a.timeout / 2 and server.proc.poll() is None:
            if iop.listening(sp, port) is not False:
                break
            time.sleep(0.2)
    problems = []
    if server.proc.poll() is None:
        client.start()
        client.finish(deadline)
        if client.rc != 0:
            deadline = min(deadline, time.monotonic() + iop.GRACE)
    else:
        client.rc = "not started"
    server.finish(deadline)
    for s in (client, server):
        if s.rc is None:
            problems.append("%s timed out or killed" % s.name)
        elif s.rc != 0:
            last = s.err.strip().splitlines() or s.out.strip().splitlines() or ["no output"]
            problems.append("%s exited %s: %s" % (s.name, s.rc, last[-1][:160]))
    figs = [f for f in (iop.result_line(kind, s.out, size) for s in (server, client)) if f]
    fig = figs[0][0] if figs else None
    if not fig and not problems:
        problems.append("no result line")
    return {"case": case, "size": size, "figure": fig, "ok": not problems,
            "reason": problems[0] if problems else None}


def run(a):
    iop = load_interop(a.interop)
    cases = a.cases.split(",") if a.cases else list(iop.CASES)
    sizes = [int(s) for s in a.sizes.split(",")]
    a.logdir = os.path.splitext(a.out)[0]
    os.makedirs(a.logdir, exist_ok=True)
    results, port = [], a.port
    for case in cases:
        for size in (sizes if iop.CASES[case][3] else [None]):
            r = run_one(iop, a, case, size, port)
            port += 1
            results.append(r)
            print("%-13s %-6s rxe-rxe       %s" % (case, "" if size is None else size,
                                                  r["figure"] if r["ok"] else "FAIL"),
                  flush=True)
            with open(a.out, "w") as f:
                json.dump(results, f, indent=1)
    return 0


def cell(r):
    if r is None:
        return "-"
    if r["ok"]:
        return r["figure"]
    return "FAIL (%s)" % (r.get("reason") or "?")[:70]


def table(droce_report, yard):
    with open(droce_report) as f:
        d = json.load(f)["results"]
    try:
        with open(yard) as f:
            y = json.load(f)
    except (OSError, ValueError):
        y = []
    keys = []
    for r in d + y:
        k = (r["case"], r["size"])
        if k not in keys:
            keys.append(k)
    idx = {}
    for r in d:
        idx[(r["case"], r["size"], r["role"])] = r
    for r in y:
        idx[(r["case"], r["size"], "rxe")] = r
    rows = [("case", "size", "droce serves rxe", "rxe serves droce", "rxe to rxe")]
    for c, s in keys:
        rows.append((c, "-" if s is None else str(s),
                     cell(idx.get((c, s, "droce-server"))), cell(idx.get((c, s, "droce-client"))),
                     cell(idx.get((c, s, "rxe")))))
    w = [max(len(x[i]) for x in rows) for i in range(len(rows[0]))]
    for x in rows:
        print("  ".join(x[i].ljust(w[i]) for i in range(len(x))).rstrip())
    return 0


def main(argv):
    if argv[:1] == ["table"] and len(argv) == 3:
        return table(argv[1], argv[2])
    if argv[:1] != ["run"]:
        print(__doc__, file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser(prog="rxe-yardstick.py run")
    ap.add_argument("--interop", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases")
    ap.add_argument("--sizes", default="64,4096,65536")
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--mtu", type=int)
    ap.add_argument("--qp-timeout", type=int)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--port", type=int, default=19600)
    return run(ap.parse_args(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
