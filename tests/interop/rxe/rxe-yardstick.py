#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rxe-yardstick: droce-interop's cases between two rxe guests, the yardstick for droce's figures
(a slow emulated peer is not a droce fault), and the table of both side by side.

  rxe-yardstick.py run --interop IOP --server ADDR --client ADDR --out FILE.json
                       [--cases C,...] [--sizes 64,...] [--iters N] [--mtu M] [--timeout S]
                       [--lossy]
  rxe-yardstick.py table DROCE_REPORT.json YARDSTICK.json [YARDSTICK_LOSSY_CLIENT.json]
  rxe-yardstick.py matrix DIR [IOP]

run: each case once, the guest at --server serving and the one at --client connecting, through
their agents (rxe-peer.py), with the command lines droce-interop builds (it is loaded as a
module: one definition of the cases, their options and their result lines).
table: case, size, droce serving, droce as client, rxe to rxe: figure or the failure's reason.
Under loss the lossy guest is rxe in both of droce's columns: the requester when droce serves,
the responder when rxe serves. So the yardstick runs twice there, YARDSTICK.json with the lossy
guest serving and YARDSTICK_LOSSY_CLIENT.json with it connecting, and each droce column is
judged beside the run whose lossy guest plays the same role.
matrix: every setting rxe-matrix.sh ran into DIR (DIR/mtuM-lossL/report.json beside
DIR/mtuM-lossL.rxe.json and, under loss, DIR/mtuM-lossL.rxe-c.json) as DIR/matrix.csv (one row per
case x size x role x setting) and DIR/matrix.md (a table per setting, the yardstick beside, a
verdict per row); exit 1 when a droce run failed where rxe to rxe, in the same condition, passed. The loss rule (--lossy, droce-interop's): under loss an RC
case must pass; a UC/UD case that fails is "n/a under loss", not a failure. With IOP (droce-interop)
the rule is applied again to every run of a lossy setting, from the verify verdict and counters
its report kept: reports written before a change of the rule are judged as now.
"""
import argparse
import csv
import importlib.machinery
import importlib.util
import json
import os
import re
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
    r = {"case": case, "size": size, "figure": fig, "ok": not problems,
         "reason": problems[0] if problems else None, "problems": problems}
    if problems and a.lossy and case in iop.UNRELIABLE:
        r["na"] = iop.NA_LOSS
    return r


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
            if iop.clock_refused(r):
                first = r["reason"]
                r = run_one(iop, a, case, size, port)
                port += 1
                r["rerun"] = "first run: " + first
            results.append(r)
            print("%-13s %-6s rxe-rxe       %s" % (case, "" if size is None else size,
                                                  r["figure"] if r["ok"] else
                                                  "n/a" if r.get("na") else "FAIL"),
                  flush=True)
            with open(a.out, "w") as f:
                json.dump(results, f, indent=1)
    return 0


def cell(r):
    if r is None:
        return "-"
    # a run perftest spoiled by refusing its clock went again (droce-interop's clock_refused)
    again = " (2nd run)" if r.get("rerun") else ""
    if r["ok"]:
        return r["figure"] + again
    return "%s (%s)%s" % ("n/a under loss" if r.get("na") else "FAIL",
                          (r.get("reason") or "?")[:70], again)


def load_json(path, default):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def load(droce_report, yard, yard_c=None):
    """droce's results, and the yardstick's keyed by the droce role each one stands beside:
    "droce-client" (rxe serves droce) beside the lossy guest serving, "droce-server" beside it
    connecting (YARD_C), or beside YARD when there is no such run (no loss: one condition)."""
    d = load_json(droce_report, {"results": []})["results"]
    y = load_json(yard, [])
    yc = load_json(yard_c, None) if yard_c else None
    ys = {"droce-client": y, "droce-server": y if yc is None else yc}
    return d, ys, yc is not None


def index(d, ys):
    idx, keys = {}, []
    for r in d:
        idx[(r["case"], r["size"], r["role"])] = r
    for role, y in ys.items():
        for r in y:
            idx[(r["case"], r["size"], "rxe:" + role)] = r
    for r in d + ys["droce-server"] + ys["droce-client"]:
        if (r["case"], r["size"]) not in keys:
            keys.append((r["case"], r["size"]))
    return idx, keys


ROLES = ("droce-server", "droce-client")


def columns(split):
    if split:
        return ["droce serves rxe", "rxe to rxe, lossy client", "rxe serves droce",
                "rxe to rxe, lossy server"]
    return ["droce serves rxe", "rxe serves droce", "rxe to rxe"]


def cells(idx, c, s, split):
    dr = [idx.get((c, s, role)) for role in ROLES]
    yr = [idx.get((c, s, "rxe:" + role)) for role in ROLES]
    if split:
        return [cell(dr[0]), cell(yr[0]), cell(dr[1]), cell(yr[1])], dr, yr
    return [cell(dr[0]), cell(dr[1]), cell(yr[1])], dr, yr


def table(droce_report, yard, yard_c=None):
    d, ys, split = load(droce_report, yard, yard_c)
    idx, keys = index(d, ys)
    rows = [tuple(["case", "size"] + columns(split))]
    for c, s in keys:
        rows.append(tuple([c, "-" if s is None else str(s)] + cells(idx, c, s, split)[0]))
    w = [max(len(x[i]) for x in rows) for i in range(len(rows[0]))]
    for x in rows:
        print("  ".join(x[i].ljust(w[i]) for i in range(len(x))).rstrip())
    return 0


def verdict(dr, yr):
    """A row's verdict: each droce run (both roles) judged beside the yardstick run in the same
    condition (yr[i] beside dr[i])."""
    runs = [(r, y) for r, y in zip(dr, yr) if r is not None]
    if not runs:
        return "-"
    if all(r["ok"] for r, _ in runs):
        return "pass"
    if all(r["ok"] or r.get("na") for r, _ in runs):
        return "n/a under loss"
    failed = [y for r, y in runs if not r["ok"] and not r.get("na")]
    if all(y is not None and not y["ok"] for y in failed):
        return "FAIL, rxe to rxe too"
    return "FAIL"


def result_word(r):
    return "ok" if r["ok"] else "n/a" if r.get("na") else "FAIL"


def matrix(top, iop_path=None):
    """matrix.csv and matrix.md from every setting under top; 1 when droce failed alone."""
    iop = load_interop(iop_path) if iop_path else None
    settings = []
    for name in sorted(os.listdir(top)):
        m = re.fullmatch(r"mtu(\d+)-loss(\d+)", name)
        if m and os.path.isfile(os.path.join(top, name, "report.json")):
            settings.append((int(m.group(1)), int(m.group(2)), name))
    if not settings:
        print("rxe-yardstick: no mtuM-lossL/report.json under %s" % top, file=sys.stderr)
        return 2
    settings.sort()
    csv_rows = [("path_mtu", "loss_pct", "case", "size", "role", "result", "figure", "reason")]
    md = ["# droce against Linux rxe, beside rxe to rxe", "",
          "Figures as the programs print them (perftest: MB/s or t_typical us; rdma-core's "
          "pingpongs: us/iter). rxe to rxe: guest 1 serving guest 2, the loss on guest 1's side "
          "as for droce; under loss also guest 2 serving guest 1 (lossy client), the condition "
          "droce serving meets, and each droce column is judged beside its own. Under loss an "
          "RC case must pass; a UC/UD case that fails there is n/a under loss.", ""]
    lone = 0
    for mtu, loss, name in settings:
        d, ys, split = load(os.path.join(top, name, "report.json"),
                            os.path.join(top, name + ".rxe.json"),
                            os.path.join(top, name + ".rxe-c.json"))
        yall = ys["droce-client"] + (ys["droce-server"] if split else [])
        for r in d + yall if iop is not None and loss > 0 else []:
            na = iop.loss_na(True, r["case"], r.get("capture", {}).get("verify_rc"),
                             r.get("errors"))
            if not r["ok"] and na:
                r["na"] = na
        idx, keys = index(d, ys)
        for r in d:
            csv_rows.append((mtu, loss, r["case"], "" if r["size"] is None else r["size"],
                             r["role"], result_word(r), r["figure"] or "", r.get("reason") or ""))
        for role, y in (("rxe-rxe", ys["droce-client"]),) + (
                (("rxe-rxe-lossy-client", ys["droce-server"]),) if split else ()):
            for r in y:
                csv_rows.append((mtu, loss, r["case"], "" if r["size"] is None else r["size"],
                                 role, result_word(r), r["figure"] or "", r.get("reason") or ""))
        count = {}
        head = ["case", "size"] + columns(split) + ["verdict"]
        md += ["## path MTU %d, %d %% loss on the rxe side" % (mtu, loss), "",
               "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c, s in keys:
            row, dr, yr = cells(idx, c, s, split)
            v = verdict(dr, yr)
            count[v] = count.get(v, 0) + 1
            lone += v == "FAIL"
            md.append("| %s | %s | %s | %s |" % (c, "-" if s is None else s, " | ".join(row), v))
        md += ["", "Rows: " + ", ".join("%d %s" % (n, v) for v, n in sorted(count.items())) +
               "; droce runs: %d passed, %d failed, %d n/a under loss." % (
                   sum(r["ok"] for r in d), sum(not r["ok"] and not r.get("na") for r in d),
                   sum(bool(r.get("na")) for r in d)), ""]
    with open(os.path.join(top, "matrix.csv"), "w", newline="") as f:
        csv.writer(f).writerows(csv_rows)
    with open(os.path.join(top, "matrix.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    return 1 if lone else 0


def main(argv):
    if argv[:1] == ["table"] and len(argv) in (3, 4):
        return table(*argv[1:])
    if argv[:1] == ["matrix"] and len(argv) in (2, 3):
        return matrix(argv[1], argv[2] if len(argv) == 3 else None)
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
    ap.add_argument("--lossy", action="store_true")
    return run(ap.parse_args(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
