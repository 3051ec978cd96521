#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# stack/ keeps no writable static: every data object of the engine library lies in a read-only
# section (.rodata, or .data.rel.ro, which the loader makes read-only after relocation). A
# variable in .data, .bss, thread-local storage or a common block fails, with its name.
# Usage: check_stack_statics.sh OBJDUMP LIBRARY
objdump=$1
lib=$2
out=$("$objdump" -t "$lib") || { echo "cannot read $lib" >&2; exit 2; }
bad=$(printf '%s\n' "$out" | awk '$0 ~ / O / {
	sec = $(NF - 2)
	if (sec !~ /^\.rodata(\.|$)/ && sec !~ /^\.data\.rel\.ro(\.|$)/)
		print "  " $NF " in " sec
}')
objs=$(printf '%s\n' "$out" | grep -c ' O ')
if [ -n "$bad" ]; then
	echo "writable statics in $lib (stack/ must have none: const tables, or state in the device or QP):"
	printf '%s\n' "$bad"
	exit 1
fi
if [ "$objs" -eq 0 ]; then
	echo "no data object found in $lib: is it the engine library?" >&2
	exit 2
fi
echo "$objs data objects in $lib, all read-only"
