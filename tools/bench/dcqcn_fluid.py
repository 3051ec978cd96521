#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""DCQCN's fluid model (Zhu et al., SIGCOMM 2015, section 5, equations 1-4: N identical flows
into one RED queue), integrated with Euler steps of 1 us and the feedback delay as a delay line.
Plain python3, no numpy. Prints the queue and the rate over time and their means over the last
half, to set beside droce-sim-cc's figures for the same link, marking and parameters.

Rates are in packets per second internally (MTU-sized packets, as the model counts them).

Usage: dcqcn_fluid.py [--flows N] [--gbps R] [--red KMIN,KMAX,PMAX%] [--ms T] [--mtu B]
                      [--ai MBPS] [--hai MBPS] [--t-us T] [--b-bytes B] [--f F] [--g G]
                      [--k-us K] [--cnp-us TAU] [--delay-us D] [--every-us S]
                      [--ai-ppm P] [--target-cut-pct C] [--level-cut-pct L]
                      [--level-min-share S] [--level-max-alpha A]
                      [--paced-cut-pct P] [--paced-min-share S]
Defaults: droce's DCQCN defaults for the link (stack/droce_cc_dcqcn.c) and the paper's marking.
"""
import argparse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--flows', type=int, default=2)
    ap.add_argument('--gbps', type=float, default=25.0)
    ap.add_argument('--red', default='5000,200000,1')
    ap.add_argument('--ms', type=float, default=20.0)
    ap.add_argument('--mtu', type=int, default=4096 + 58)
    ap.add_argument('--ai', type=float, default=None,
                    help='Mbit/s (default link/10000)')
    ap.add_argument('--hai', type=float, default=None, help='Mbit/s (default link/2500)')
    ap.add_argument('--ai-ppm', type=float, default=300,
                    help='the additive step adds this many millionths of RT')
    ap.add_argument('--target-cut-pct', type=float, default=3,
                    help='percent of each cut that RT takes too')
    ap.add_argument('--level-cut-pct', type=float, default=5,
                    help='with RT >= link / S and alpha < A, a cut lowers RT by this percent of '
                    'the way from it to the new rate (0: off)')
    ap.add_argument('--level-min-share', type=float, default=6)
    ap.add_argument('--level-max-alpha', type=float, default=716 / 1024)
    ap.add_argument('--paced-cut-pct', type=float, default=15,
                    help='with RT >= link / S, a cut lowers RT by this percent of the way from '
                    'it to the new rate (0: off); the model has no windows, so every flow is '
                    'paced')
    ap.add_argument('--paced-min-share', type=float, default=10)
    ap.add_argument('--t-us', type=float, default=None, help='default 35 x stretch')
    ap.add_argument('--b-bytes', type=float, default=1e6)
    ap.add_argument('--f', type=int, default=4)
    ap.add_argument('--g', type=float, default=1.0 / 128)
    ap.add_argument('--k-us', type=float, default=None, help='alpha period, 50 x stretch')
    ap.add_argument('--cnp-us', type=float, default=None, help='default 50 x stretch')
    ap.add_argument('--delay-us', type=float, default=6.0, help='feedback delay')
    ap.add_argument('--every-us', type=float, default=500.0)
    a = ap.parse_args()
    # droce's defaults: below 25 Gbit/s the timers and the CNP interval stretch by 25G / link
    stretch = max(1.0, 25.0 / a.gbps)
    a.t_us = a.t_us if a.t_us is not None else 35.0 * stretch
    a.k_us = a.k_us if a.k_us is not None else 50.0 * stretch
    a.cnp_us = a.cnp_us if a.cnp_us is not None else 50.0 * stretch
    if a.ai is None:
        a.ai = a.gbps * 1e3 / 10000

    kmin, kmax, pmax = (float(x) for x in a.red.split(','))
    pmax /= 100
    bits = a.mtu * 8
    c = a.gbps * 1e9 / bits                      # link, packets/s
    ai = a.ai * 1e6 / bits
    hai = (a.hai if a.hai is not None else a.gbps * 1e3 / 2500) * 1e6 / bits
    tau, tau_a, t_inc = a.cnp_us * 1e-6, a.k_us * 1e-6, a.t_us * 1e-6
    bpk = a.b_bytes / a.mtu                      # byte counter, packets
    dt = 1e-6
    steps = int(a.ms * 1e-3 / dt)
    lag = max(1, int(a.delay_us * 1e-6 / dt))
    rc, rt, alpha, q = c, c, 1.0, 0.0            # every flow starts at line rate
    hist = [0.0] * lag                           # p as the senders hear it
    qs, rs = [], []

    def red(qb):
        if qb <= kmin:
            return 0.0
        if qb > kmax:
            return 1.0
        return pmax * (qb - kmin) / (kmax - kmin)

    def pw(b, e):
        try:
            return b ** e
        except OverflowError:
            return float('inf')

    for i in range(steps):
        p = min(hist[i % lag], 1 - 1e-9)
        hist[i % lag] = red(q * a.mtu)
        # chance of at least one mark in a CNP interval, a byte stage, a timer stage
        cut = 1 - (1 - p) ** (tau * rc)
        db = pw(1 - p, -bpk) - 1 if p > 0 else float('inf')
        dtm = pw(1 - p, -t_inc * rc) - 1 if p > 0 else float('inf')
        byte_ev = rc * p / db if p > 0 and db > 0 else rc / bpk
        time_ev = rc * p / dtm if p > 0 and dtm > 0 else 1 / t_inc
        # additive increase once F stages passed without a mark; hyper when both did
        fb = (1 - p) ** (a.f * bpk)
        ft = (1 - p) ** (a.f * t_inc * rc)
        inc = (ai + rt * a.ai_ppm / 1e6) * (byte_ev * fb + time_ev * ft) + \
            hai * byte_ev * fb * ft
        d_alpha = a.g / tau_a * (cut - alpha)
        # a cut sets RT to RC less target_cut_pct of the cut (the paper's: to RC), or for a
        # QP among few past the start lowers it by level_cut_pct of the way to the new rate,
        # for a paced one by paced_cut_pct
        if a.level_cut_pct > 0 and rt >= c / a.level_min_share and alpha < a.level_max_alpha:
            drop = a.level_cut_pct / 100 * (rt - rc + rc * alpha / 2)
        elif a.paced_cut_pct > 0 and rt >= c / a.paced_min_share:
            drop = a.paced_cut_pct / 100 * (rt - rc + rc * alpha / 2)
        else:
            drop = rt - rc + a.target_cut_pct / 100 * rc * alpha / 2
        d_rt = -drop / tau * cut + inc
        d_rc = -rc * alpha / (2 * tau) * cut + (rt - rc) / 2 * (byte_ev + time_ev)
        q = max(0.0, q + (a.flows * rc - c) * dt)
        alpha = min(1.0, max(0.0, alpha + d_alpha * dt))
        rt = min(c, max(rt + d_rt * dt, 0.0))
        rc = min(rt, max(rc + d_rc * dt, c / 10000))
        qs.append(q * a.mtu)
        rs.append(rc * bits / 1e6)
        if (i + 1) % int(a.every_us) == 0:
            print('%.2f ms queue %.0f B rate %.0f Mbit/s alpha %.3f' %
                  ((i + 1) * dt * 1e3, q * a.mtu, rc * bits / 1e6, alpha))
    half = len(qs) // 2
    tail_q = sorted(qs[half:])
    util = min(1.0, sum(rs[half:]) / len(rs[half:]) * a.flows / (a.gbps * 1e3))
    print('fluid model, %d flows at %.1f Gbit/s: last half: rate x flows %.1f %% of the link, '
          'queue median %.0f B, max %.0f B' %
          (a.flows, a.gbps, util * 100, tail_q[len(tail_q) // 2], tail_q[-1]))


if __name__ == '__main__':
    main()
