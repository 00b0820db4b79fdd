#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole test suite: the C unit tests, then every tests/t-*.sh file. The last line reads
# "N passed, N failed"; the exit status is 0 only when nothing failed.
# Arguments (e.g. `sh tests/run.sh tests/t-cli.sh`) run only those files after the unit tests.
cd "$(dirname "$0")/.." || exit 1
# The binaries under test; `make check-asan` points these at its sanitized build.
CLIMG=$(realpath "${CLIMG:-climg}")
IMGTOOL=$(realpath "${IMGTOOL:-tests/imgtool}")
UNIT=${UNIT:-tests/unit}
T=$(mktemp -d "${TMPDIR:-/tmp}/climg-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export CLIMG IMGTOOL T
. tests/lib.sh

# C unit tests print one "PASS name" or "FAIL name: why" line per check.
"$UNIT" >"$T/unit.out" 2>&1
rc=$?
n=$(grep -c '^PASS ' "$T/unit.out")
pass=$((pass + n))
grep '^FAIL ' "$T/unit.out" | sed 's/^FAIL /FAIL: unit: /'
fail=$((fail + $(grep -c '^FAIL ' "$T/unit.out")))
if [ "$rc" != 0 ] && ! grep -q '^FAIL ' "$T/unit.out"; then
	bad "unit: exited $rc"
	tail -n 5 "$T/unit.out"
fi

[ $# -gt 0 ] || set -- tests/t-*.sh
for t in "$@"; do
	echo "== $t"
	. "./$t"
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
