#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole test suite: the C unit tests, then every tests/t-*.sh file. The last line reads
# "N passed, N failed"; the exit status is 0 only when nothing failed.
# Arguments (e.g. `sh tests/run.sh tests/t-cli.sh`) run only those files after the unit tests.
# JOBS=N runs up to N test files at once (default 1; make test passes the number of
# CPUs). Each file's time is printed after it.
cd "$(dirname "$0")/.." || exit 1
# The binaries under test; `make check-asan` points these at its sanitized build.
CLIMG=$(realpath "${CLIMG:-climg}")
IMGTOOL=$(realpath "${IMGTOOL:-tests/imgtool}")
METATOOL=$(realpath "${METATOOL:-tests/metatool}")
UNIT=${UNIT:-tests/unit}
T=$(mktemp -d "${TMPDIR:-/tmp}/climg-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# The program binary cache of the whole suite lives in $T, never in the user's ~/.cache.
CLIMG_CACHE_DIR=$T/cache
export CLIMG IMGTOOL METATOOL T CLIMG_CACHE_DIR
. tests/lib.sh

# The C unit tests.
c_checks unit "$T/unit.out" "$UNIT"

[ $# -gt 0 ] || set -- tests/t-*.sh
if [ "${JOBS:-1}" -le 1 ]; then
	for t in "$@"; do
		echo "== $t"
		t_start=$(date +%s)
		. "./$t"
		echo "-- $t: $(($(date +%s) - t_start)) s"
	done
else
	# JOBS=N: up to N files at once, each in a subshell with its own scratch directory; each
	# file's output is shown, in order, as soon as it and those before it have ended, and
	# their counts added.
	i=0
	shown=0
	running=""
	show_ended() {
		while [ -f "$T/job$((shown + 1)).end" ]; do
			shown=$((shown + 1))
			cat "$T/job$shown.log"
			if [ -f "$T/job$shown/counts" ]; then
				read -r p f <"$T/job$shown/counts"
				pass=$((pass + p))
				fail=$((fail + f))
			else
				bad "test file $shown did not finish"
			fi
		done
	}
	for t in "$@"; do
		i=$((i + 1))
		mkdir -p "$T/job$i"
		(
			(
				T=$T/job$i
				pass=0
				fail=0
				echo "== $t"
				t_start=$(date +%s)
				. "./$t"
				echo "-- $t: $(($(date +%s) - t_start)) s"
				echo "$pass $fail" >"$T/counts"
			) >"$T/job$i.log" 2>&1
			: >"$T/job$i.end"
		) &
		running="$running $!"
		while [ "$(for p in $running; do kill -0 "$p" 2>/dev/null && echo x; done | wc -l)" -ge "$JOBS" ]; do
			show_ended
			sleep 0.2
		done
		show_ended
	done
	wait
	show_ended
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
