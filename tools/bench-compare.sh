#!/bin/sh
# SPDX-License-Identifier: MIT
# climg compare against its peers on two 20 MP PNGs (6028x3391, tests/imgtool's photo
# pattern; B is A with 3 samples changed), each timed BENCH_RUNS times, interleaved, and
# reported as the median wall time and the peak memory (imgtool measure), with its ratio to
# climg compare (> 1: the peer is slower):
#   climg compare A B            always
#   odiff A B                    when `odiff` is on PATH (npm install -g odiff-bin)
#   compare -metric AE A B null: when ImageMagick is installed (apt-get install imagemagick;
#                                its policy.xml may need a larger area/memory limit)
# The peers are not installed by tools/install-deps.sh.
#
#   sh tools/bench-compare.sh
#
# Environment: BENCH_RUNS (default 3), BENCH_DIR (scratch, default a new directory under
# /tmp, removed afterwards), CLIMG and IMGTOOL (default ./climg and tests/imgtool).
set -eu
cd "$(dirname "$0")/.."
CLIMG=${CLIMG:-$PWD/climg}
IMGTOOL=${IMGTOOL:-$PWD/tests/imgtool}
RUNS=${BENCH_RUNS:-3}
for b in "$CLIMG" "$IMGTOOL"; do
	[ -x "$b" ] || { echo "bench-compare: $b not built (make climg tests/imgtool)" >&2; exit 2; }
done
if [ -n "${BENCH_DIR:-}" ]; then
	DIR=$BENCH_DIR
	mkdir -p "$DIR"
else
	DIR=$(mktemp -d /tmp/climg-bench-compare.XXXXXX)
	trap 'rm -rf "$DIR"' EXIT
fi

"$IMGTOOL" make 6028 3391 3 photo:1 "$DIR/a.png"
"$IMGTOOL" poke "$DIR/a.png" "$DIR/t.png" 10 20 0 0
"$IMGTOOL" poke "$DIR/t.png" "$DIR/t2.png" 3000 1700 1 255
"$IMGTOOL" poke "$DIR/t2.png" "$DIR/b.png" 6027 3390 2 7
rm -f "$DIR/t.png" "$DIR/t2.png"

names="climg"
command -v odiff >/dev/null 2>&1 && names="$names odiff"
command -v compare >/dev/null 2>&1 && names="$names magick"

run_one() { # NAME RUN
	case $1 in
	climg) set -- "$1" "$2" "$CLIMG" compare "$DIR/a.png" "$DIR/b.png" ;;
	odiff) set -- "$1" "$2" odiff "$DIR/a.png" "$DIR/b.png" "$DIR/odiff-diff.png" ;;
	magick) set -- "$1" "$2" compare -metric AE "$DIR/a.png" "$DIR/b.png" null: ;;
	esac
	_n=$1 _r=$2
	shift 2
	"$IMGTOOL" measure "$DIR/m-$_n-$_r" "$@" >/dev/null 2>&1 || true
}

r=1
while [ "$r" -le "$RUNS" ]; do
	for n in $names; do run_one "$n" "$r"; done
	r=$((r + 1))
done

# median wall ms and max peak KiB of NAME's runs
median_ms() { cat "$DIR"/m-"$1"-* | awk '{print $3}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
peak_kib() { cat "$DIR"/m-"$1"-* | awk '$2 > m {m = $2} END {print m}'; }

base=$(median_ms climg)
echo "| tool | wall (median of $RUNS) | peak memory | time / climg's |"
echo "|---|---|---|---|"
for n in $names; do
	ms=$(median_ms "$n")
	kib=$(peak_kib "$n")
	awk -v n="$n" -v ms="$ms" -v kib="$kib" -v b="$base" \
		'BEGIN { printf "| %s | %.2f s | %.0f MB | %.1f |\n", n, ms / 1000, kib / 1024, (b > 0 ? ms / b : 0) }'
done
