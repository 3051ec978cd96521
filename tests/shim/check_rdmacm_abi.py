#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The librdmacm replacement exports exactly what the installed librdmacm.so.1 exports.

Same soname, same version nodes with the same parents, the same set of (symbol@@version, type,
binding): nothing missing (a program would bind it to the real library and crash on our ids)
and nothing extra (internals stay hidden).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_abi import exports, nodes, soname  # noqa: E402


def main():
    real, ours = sys.argv[1:3]
    want, got = exports(real), exports(ours)
    failed = False
    for s in sorted(want - got):
        print(f'{ours}: missing {s}')
        failed = True
    for s in sorted(got - want):
        print(f'{ours}: extra {s}')
        failed = True
    if nodes(ours)[1:] != nodes(real)[1:]:
        print(f'{ours}: version nodes {nodes(ours)[1:]} != {nodes(real)[1:]}')
        failed = True
    if soname(ours) != soname(real):
        print(f'soname {soname(ours)} != {soname(real)}')
        failed = True
    if len(want) < 40:
        print(f'{real}: unexpected ABI ({len(want)} symbols)')
        failed = True
    if failed:
        return 1
    print(f'{len(want)} symbols, {len(nodes(real)) - 1} nodes: identical')
    return 0


if __name__ == '__main__':
    sys.exit(main())
