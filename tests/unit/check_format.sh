#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every C file of the tree as .clang-format describes it: clang-format (Debian 12's, 14) over
# all of them at once; each place that differs is printed (file:line and the expected change)
# and fails the test. Fix with: clang-format -i --style=file FILE.
# Usage: check_format.sh CLANG_FORMAT SOURCE_ROOT
set -u
cf=$1
cd "$2" || exit 1
files=$(find stack pmd-glue verbs-shim tools tests -name '*.[ch]' | sort)
n=$(echo "$files" | wc -l)
# shellcheck disable=SC2086
"$cf" --style=file --dry-run --Werror $files
rc=$?
echo "check_format: $n files, clang-format exit $rc ($("$cf" --version))"
[ "$n" -gt 100 ] && [ "$rc" = 0 ]
