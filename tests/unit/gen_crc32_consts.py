#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Derive the folding and Barrett constants used by stack/droce_crc32_x86.c, then check the
folding scheme they imply against zlib on random inputs.

Conventions (reflected CRC-32, P = x^32 + 0x04C11DB7):
- a 64-bit lane L stands for sum(L_j * x^(63-j)); a 128-bit register R loaded little-endian from
  16 message bytes stands for sum(R_j * x^(127-j)), i.e. low lane * x^64 + high lane.
- PCLMULQDQ of lanes a, b gives a register standing for x * a(x) * b(x) (the one-bit shift of a
  reflected product).
Folding a register forward by D bits multiplies its low lane (the high-degree half) by
x^(D+64) and its high lane by x^D; with the extra x that needs lane constants congruent to
x^(D+63) and x^(D-1) mod P. Written as x^32 * (x^(E-32) mod P) they fit in the low 32 bits.

Usage: gen_crc32_consts.py            print the constants
       gen_crc32_consts.py --check F  exit 1 unless C file F defines exactly these values
"""
import os
import random
import re
import sys
import zlib

P = (1 << 32) | 0x04C11DB7
M64 = (1 << 64) - 1


def pmod(a):
    while a.bit_length() > 32:
        a ^= P << (a.bit_length() - 33)
    return a


def pdiv(a):
    q = 0
    while a.bit_length() > 32:
        s = a.bit_length() - 33
        q |= 1 << s
        a ^= P << s
    return q


def rev(v, n):
    return int(format(v, '0%db' % n)[::-1], 2)


def clmul(a, b):
    r = 0
    for i in range(64):
        if (a >> i) & 1:
            r ^= b << i
    return r


def kfold(e):
    """Lane standing for x^32 * (x^(e-32) mod P), which is congruent to x^e: bits 0..31."""
    return rev(pmod(1 << (e - 32)), 32)


def fold_pair(d):
    """(low lane, high lane) constants that move a 128-bit register forward by d bits."""
    return (kfold(d + 63), kfold(d - 1))


def klow(e):
    """Lane standing for x^e mod P itself (degree < 32): bits 32..63."""
    return rev(pmod(1 << e), 32) << 32


MU = rev(pdiv(1 << 64), 64)  # floor(x^64 / P), degree 32: bits 31..63
PL = rev(P, 64)              # P, degree 32: bits 31..63


def fold(r, k):
    return clmul(r & M64, k[0]) ^ clmul(r >> 64, k[1])


def reduce128(r):
    """The reflected CRC register of a 128-bit register (its value times x^32 mod P)."""
    t1 = clmul(r & M64, klow(95))               # low lane * x^96
    x = t1 ^ (((r >> 64) << 32) & ((1 << 128) - 1))  # + high lane * x^32: degree < 96
    t2 = clmul(x & M64, klow(63))               # top 32 coefficients * x^64
    y = (t2 >> 64) ^ (x >> 64)                  # degree < 64
    u = clmul(y & 0xFFFFFFFF, MU)               # (y / x^32) * mu, placed so that ...
    q = (u << 1) & M64                          # ... the quotient lands in bits 32..63
    v = clmul(q, PL)                            # x * q * P
    return ((y >> 32) ^ (v >> 95)) & 0xFFFFFFFF  # y - q * P, degree < 32


def model_crc(crc, data):
    n = len(data) - len(data) % 16
    blk = [int.from_bytes(data[i:i + 16], 'little') for i in range(0, n, 16)]
    blk[0] ^= ~crc & 0xFFFFFFFF
    acc, i = blk[:4], 4
    while i + 4 <= len(blk):
        acc = [fold(acc[j], fold_pair(512)) ^ blk[i + j] for j in range(4)]
        i += 4
    r = acc[0]
    for a in acc[1:] + blk[i:]:
        r = fold(r, fold_pair(128)) ^ a
    return zlib.crc32(data[n:], ~reduce128(r) & 0xFFFFFFFF)


def constants():
    """Name -> value, as stack/droce_crc32_x86.c spells them."""
    c = {}
    for d in (2048, 512, 384, 256, 128):
        c['K%d_LO' % d], c['K%d_HI' % d] = fold_pair(d)
    c['KX95'], c['KX63'], c['KMU'], c['KPOLY'] = klow(95), klow(63), MU, PL
    return c


def check(path):
    """Every constant the C file defines equals the derived one, and none is missing."""
    want = constants()
    got = {}
    for m in re.finditer(r'^#define\s+(K\w+)\s+0x([0-9a-fA-F]+)u', open(path).read(), re.M):
        got[m.group(1)] = int(m.group(2), 16)
    bad = sorted(k for k in want if got.get(k) != want[k])
    for k in bad:
        have = hex(got[k]) if k in got else 'nothing'
        print('%s: file has %s, derived 0x%x' % (k, have, want[k]))
    return 1 if bad else 0


def main():
    for _ in range(200):
        data = os.urandom(random.randint(64, 600))
        seed = random.getrandbits(32)
        assert model_crc(seed, data) == zlib.crc32(data, seed)
    if len(sys.argv) == 3 and sys.argv[1] == '--check':
        sys.exit(check(sys.argv[2]))
    for d in (2048, 512, 384, 256, 128):
        lo, hi = fold_pair(d)
        print('fold %4d bits: 0x%08x (x^%d), 0x%08x (x^%d)' % (d, lo, d + 63, hi, d - 1))
    print('x^95 mod P lane: 0x%016x' % klow(95))
    print('x^63 mod P lane: 0x%016x' % klow(63))
    print('mu lane:         0x%016x' % MU)
    print('P lane:          0x%016x' % PL)


if __name__ == '__main__':
    main()
