#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Soak the engine with random droce-sim configurations (not run by CI).

usage: tests/sim/soak.py BUILD_DIR [CONFIGS] [SEED]

Each configuration draws a QP type, MTU, size range, QP count and a random mix of impairments
and options, then runs 10 seeds of it. Prints every configuration with a mismatch as a
replayable command line. RETRY_EXC_ERR under extreme settings (a timeout shorter than the queue
it sits behind, go-back-N under heavy reordering) is legitimate and listed apart.
"""
import random
import subprocess
import sys


def config(rng):
    qpt = rng.choice(['rc', 'rc', 'rc', 'uc', 'ud'])
    mtu = rng.choice([256, 512, 1024, 2048, 4096])
    hi = rng.choice([0, 64, mtu, 3 * mtu, 20000, 65536])
    lo = rng.choice([0, 0, hi // 2, hi])
    a = ['--qp-type', qpt, '--seed', str(rng.randint(1, 10**6)), '--seeds', '10',
         '--mtu', str(mtu), '--size', '%d-%d' % (lo, hi),
         '--msgs', str(rng.choice([50, 200, 400])), '--qps', str(rng.choice([1, 2, 4, 8]))]
    knobs = [
        (0.7, ['--loss', rng.choice(['0.5', '1', '3', '5', '10'])]),
        (0.3, ['--burst-loss', '%s:%s' % (rng.choice(['1', '3', '5']), rng.choice(['2', '4', '8']))]),
        (0.3, ['--reorder', rng.choice(['1', '3', '5'])]),
        (0.3, ['--jitter', rng.choice(['200', '1us', '3us'])]),
        (0.3, ['--dup', rng.choice(['1', '3'])]),
        (0.3, ['--corrupt', rng.choice(['1', '3'])]),
        (0.2, ['--tx-busy', rng.choice(['10', '50'])]),
        (0.2, ['--rate', rng.choice(['1', '10', '100', '0'])]),
        (0.2, ['--sq-depth', rng.choice(['2', '4', '8', '64'])]),
        (0.2, ['--rq-depth', rng.choice(['1', '2', '8'])]),
        (0.2, ['--recv-every', rng.choice(['10us', '50us'])]),
        (0.2, ['--rd-atomic', rng.choice(['1', '2', '16'])]),
        (0.3 if qpt != 'uc' else 0, ['--srq']),
        (0.3, ['--shared-cq']),
        (0.2, ['--one-way']),
        (0.2, ['--psn', rng.choice(['0', '0x7fffff', '0xffffff'])]),
    ]
    for p, opt in knobs:
        if rng.random() < p:
            a += opt
    if rng.random() < 0.3:
        pool = {'rc': ['write', 'write_imm', 'send', 'send_imm', 'read', 'cas', 'fadd'],
                'uc': ['write', 'write_imm', 'send', 'send_imm'],
                'ud': ['send', 'send_imm']}[qpt]
        a += ['--ops', ','.join(rng.sample(pool, rng.randint(1, min(4, len(pool)))))]
    return a


def main():
    build = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    sim = build + '/tests/sim/droce-sim'
    bad = retry = 0
    for _ in range(n):
        a = config(rng)
        r = subprocess.run([sim] + a, capture_output=True, text=True, timeout=600)
        lines = [l for l in r.stdout.splitlines() if 'MISMATCH' in l]
        real = [l for l in lines if 'RETRY_EXC_ERR' not in l]
        if r.returncode not in (0, 1) or real:
            bad += 1
            print('MISMATCH:', sim, ' '.join(a))
            print('   ', (real[0] if real else r.stderr[-300:])[:300], flush=True)
        elif lines:
            retry += 1
            print('retry exhausted (extreme settings?):', sim, ' '.join(a), flush=True)
    print('%d configurations, %d with mismatches, %d with only RETRY_EXC_ERR' % (n, bad, retry))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
