#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The shim exports exactly what the installed libibverbs.so.1 exports.

For the replacement and the preload library: the same soname (replacement only), the same
version nodes with the same parents, and the same set of (symbol, version, default/compat,
type, binding): nothing missing (an application would bind it to the real library and crash
on the shim's objects) and nothing extra (internals stay hidden). Besides: the shim's own
node, DROCE_SHIM_1.0 (no parent, after the IBVERBS_* ones), with exactly SHIM_OWN in it
(verbs-shim/gen_abi.py's SHIM_NODES; droce_shim_gsi.h).
"""
import re
import subprocess
import sys

SHIM_NODES = [('DROCE_SHIM_1.0', '')]
SHIM_OWN = {('droce_shim_create_gsi_qp@@DROCE_SHIM_1.0', 'FUNC', 'GLOBAL'),
            ('droce_shim_mcast_report@@DROCE_SHIM_1.0', 'FUNC', 'GLOBAL'),
            ('droce_shim_cm_id_prefix@@DROCE_SHIM_1.0', 'FUNC', 'GLOBAL'),
            ('droce_shim_cm_listen@@DROCE_SHIM_1.0', 'FUNC', 'GLOBAL')}


def readelf(*args):
    return subprocess.run(['readelf', *args], capture_output=True, text=True,
                          check=True).stdout


def exports(lib):
    out = set()
    for line in readelf('--dyn-syms', '-W', lib).splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(':') or f[6] in ('UND', 'ABS'):
            continue
        if f[3] in ('FUNC', 'OBJECT'):
            out.add((f[7], f[3], f[4]))	# name@@VER / name@VER, type, binding
    return out


def nodes(lib):
    text = readelf('-V', '-W', lib)
    text = text.split('Version needs')[0]
    return re.findall(r'Name: (\S+)|Parent 1: (\S+)', text)


def soname(lib):
    m = re.search(r'\(SONAME\)\s+Library soname: \[(.*)\]', readelf('-d', lib))
    return m.group(1) if m else None


def main():
    real, ours, preload = sys.argv[1:4]
    failed = False
    want = exports(real)
    for lib in (ours, preload):
        got = exports(lib)
        for s in sorted(SHIM_OWN - got):
            print(f'{lib}: missing its own {s}')
            failed = True
        got -= SHIM_OWN
        for s in sorted(want - got):
            print(f'{lib}: missing {s}')
            failed = True
        for s in sorted(got - want):
            print(f'{lib}: extra {s}')
            failed = True
        # first entry is the BASE (soname) node, compared separately
        if nodes(lib)[1:] != nodes(real)[1:] + SHIM_NODES:
            print(f'{lib}: version nodes {nodes(lib)[1:]} != {nodes(real)[1:] + SHIM_NODES}')
            failed = True
    if soname(ours) != soname(real):
        print(f'soname {soname(ours)} != {soname(real)}')
        failed = True
    private = [n for n, _ in nodes(real) if n.startswith('IBVERBS_PRIVATE_')]
    if len(want) < 150 or len(private) != 1:
        print(f'{real}: unexpected ABI ({len(want)} symbols, private nodes {private})')
        failed = True
    if failed:
        return 1
    count = sum(1 for n, _ in nodes(real) if n) - 1
    print(f'{len(want)} symbols, {count} nodes incl. {private[0]}: identical; '
          f'own: {", ".join(sorted(s[0] for s in SHIM_OWN))}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
