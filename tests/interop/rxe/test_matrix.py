#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rxe-yardstick.py matrix on made-up reports (no guest, no root): matrix.csv has one row per
case x size x role x setting, matrix.md a table per setting with the yardstick beside, and the
verdicts follow the loss rule: an RC case failing under loss is a failure, a UC/UD one marked
"n/a under loss" is not; a droce failure that rxe to rxe shares says so. Under loss each droce
column is judged beside the rxe-to-rxe run whose lossy guest plays rxe's role there (serving,
or connecting: NAME.rxe-c.json). Exit status: 1 when droce failed where rxe to rxe, in the same
condition, passed, else 0.
droce-interop's loss_na (the rule itself) and clock_refused (which runs go once more) are checked
too.
Usage: test_matrix.py RXE_DIR DROCE_INTEROP (the folder holding rxe-yardstick.py, the configured
droce-interop)"""
import csv
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

NA = "n/a under loss (UC/UD: no transport retries)"


def res(case, size, role, ok, fig=None, reason=None, na=False):
    r = {"case": case, "size": size, "ok": ok, "figure": fig, "reason": reason}
    if role:
        r["role"] = role
    if na:
        r["na"] = NA
    return r


def write(top, name, droce, yard, yard_c=None):
    os.makedirs(os.path.join(top, name))
    with open(os.path.join(top, name, "report.json"), "w") as f:
        json.dump({"results": droce}, f)
    with open(os.path.join(top, name + ".rxe.json"), "w") as f:
        json.dump(yard, f)
    if yard_c is not None:
        with open(os.path.join(top, name + ".rxe-c.json"), "w") as f:
            json.dump(yard_c, f)


def run(tool, top, iop):
    p = subprocess.run([sys.executable, tool, "matrix", top, iop], capture_output=True,
                       text=True, timeout=60)
    return p.returncode


def main():
    tool = os.path.join(sys.argv[1], "rxe-yardstick.py")
    bad = []

    def check(cond, what):
        if not cond:
            bad.append(what)
            print("FAIL: " + what)

    loader = importlib.machinery.SourceFileLoader("droce_interop", sys.argv[2])
    spec = importlib.util.spec_from_loader("droce_interop", loader)
    iop = importlib.util.module_from_spec(spec)
    loader.exec_module(iop)
    for lossy, case, vrc, errors, want in (
            (True, "uc_pingpong", 0, {}, NA), (True, "ud_pingpong", 2, {}, NA),
            (True, "uc_write_bw", None, None, NA), (True, "mcast_bw", 0, {}, NA),
            (True, "uc_pingpong", 1, {}, None), (True, "ud_pingpong", 0, {"drop_icrc": 1}, None),
            (True, "rc_pingpong", 0, {}, None), (True, "read_bw", 2, {}, None),
            (False, "uc_pingpong", 0, {}, None)):
        got = iop.loss_na(lossy, case, vrc, errors)
        check(got == want, "loss_na(%s, %s, verify %s, %s): %s" % (lossy, case, vrc, errors, got))
    # perftest refusing its clock after the run is run again; nothing else is
    for r, want in ((dict(ok=False, problems=["droce exited 1: x", "peer exited 1: Can't "
                                               "produce a report"]), True),
                    (dict(ok=False, reason="client exited 1: Can't produce a report"), True),
                    (dict(ok=False, problems=["peer exited 1: Failed to modify QP to RTS"]),
                     False),
                    (dict(ok=True, problems=[]), False)):
        check(iop.clock_refused(r) == want, "clock_refused(%s) != %s" % (r, want))
    with tempfile.TemporaryDirectory() as top:
        S, C = "droce-server", "droce-client"
        write(top, "mtu1024-loss0",
              [res("write_bw", 4096, S, True, "30.1 MB/s"),
               dict(res("write_bw", 4096, C, True, "20 MB/s"),
                    rerun="first run: peer exited 1: Can't produce a report"),
               res("mcast_bw", None, S, True, "9 MB/s"),
               res("mcast_bw", None, C, False, reason="peer timed out after 60 s")],
              [res("write_bw", 4096, None, True, "19 MB/s"),
               res("mcast_bw", None, None, False, reason="client timed out or killed")])
        write(top, "mtu1024-loss5",
              [res("uc_write_bw", 4096, S, False, reason="peer exited 1", na=True),
               res("uc_write_bw", 4096, C, True, "1 MB/s"),
               res("read_bw", 4096, S, True, "2 MB/s"), res("read_bw", 4096, C, False,
                                                            reason="droce exited 1"),
               # judged before the rule knew an empty capture: n/a now
               dict(res("ud_pingpong", None, C, False, reason="droce exited 124"),
                    capture={"verify_rc": 2}, errors={}),
               # droce serving fails where rxe fails with its lossy guest connecting too,
               # although rxe passes with it serving: rxe's own requester under loss
               res("write_bw", 65536, S, False, reason="peer timed out"),
               res("write_bw", 65536, C, True, "5 MB/s")],
              [res("uc_write_bw", 4096, None, False, reason="server exited 1", na=True),
               res("read_bw", 4096, None, True, "3 MB/s"),
               res("write_bw", 65536, None, True, "7 MB/s")],
              [res("uc_write_bw", 4096, None, True, "4 MB/s"),
               res("read_bw", 4096, None, True, "2.5 MB/s"),
               res("write_bw", 65536, None, False, reason="client timed out or killed")])
        rc = run(tool, top, sys.argv[2])
        check(rc == 1, "exit status %d, want 1 (read_bw failed under loss where rxe passed)" % rc)
        with open(os.path.join(top, "matrix.csv")) as f:
            rows = list(csv.reader(f))
        check(rows[0][:6] == ["path_mtu", "loss_pct", "case", "size", "role", "result"],
              "matrix.csv header %s" % rows[0])
        check(len(rows) == 1 + 6 + 13, "matrix.csv: %d rows, want 20" % len(rows))
        want = {("1024", "5", "uc_write_bw", "4096", S): "n/a",
                ("1024", "5", "read_bw", "4096", C): "FAIL",
                ("1024", "0", "write_bw", "4096", "rxe-rxe"): "ok",
                ("1024", "0", "mcast_bw", "", C): "FAIL",
                ("1024", "5", "ud_pingpong", "", C): "n/a",
                ("1024", "5", "write_bw", "65536", "rxe-rxe-lossy-client"): "FAIL",
                ("1024", "5", "write_bw", "65536", "rxe-rxe"): "ok"}
        got = {tuple(r[:5]): r[5] for r in rows[1:]}
        for k, v in want.items():
            check(got.get(k) == v, "matrix.csv %s: %s, want %s" % (k, got.get(k), v))
        with open(os.path.join(top, "matrix.md")) as f:
            md = f.read()
        for ln in ("## path MTU 1024, 0 % loss on the rxe side",
                   "## path MTU 1024, 5 % loss on the rxe side",
                   "| write_bw | 4096 | 30.1 MB/s | 20 MB/s (2nd run) | 19 MB/s | pass |",
                   "| mcast_bw | - | 9 MB/s | FAIL (peer timed out after 60 s) | FAIL (client "
                   "timed out or killed) | FAIL, rxe to rxe too |",
                   "| case | size | droce serves rxe | rxe to rxe, lossy client | rxe serves droce "
                   "| rxe to rxe, lossy server | verdict |",
                   "| uc_write_bw | 4096 | n/a under loss (peer exited 1) | 4 MB/s | 1 MB/s | n/a "
                   "under loss (server exited 1) | n/a under loss |",
                   "| read_bw | 4096 | 2 MB/s | 2.5 MB/s | FAIL (droce exited 1) | 3 MB/s | FAIL |",
                   "| write_bw | 65536 | FAIL (peer timed out) | FAIL (client timed out or killed) "
                   "| 5 MB/s | 7 MB/s | FAIL, rxe to rxe too |",
                   "droce runs: 3 passed, 2 failed, 2 n/a under loss."):
            check(ln in md, "matrix.md lacks: " + ln)
        # without the lone failure: exit 0
        os.remove(os.path.join(top, "mtu1024-loss5", "report.json"))
        rc = run(tool, top, sys.argv[2])
        check(rc == 0, "exit status %d with only a failure rxe shares, want 0" % rc)
    print("test_matrix: %s" % ("%d failures" % len(bad) if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
