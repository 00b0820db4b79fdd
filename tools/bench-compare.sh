#!/bin/sh
# SPDX-License-Identifier: MIT
# climg compare against its peers on two 20 MP PNGs (6028x3391, tests/imgtool's photo
# pattern; B is A with 3 samples changed), each timed BENCH_RUNS times, interleaved, and
# reported as the median wall time, the median CPU time (user and system: on a machine that
# others share, the wall time also counts the waits for a core) and the peak memory (imgtool
# measure), with their ratios to climg compare's (> 1: the peer is slower):
#   climg compare A B            always (the CPU path, its default)
#   climg compare --device 0 A B  when climg has an OpenCL device: the comparison on it
#   odiff A B DIFF               when `odiff` is on PATH (npm install -g odiff-bin; its
#                                native binary, node_modules/@odiff/linux-x64/odiff, spares
#                                the node wrapper's start)
#   compare -metric AE A B null: when ImageMagick is installed (apt-get install imagemagick;
#                                its policy.xml may need a larger area/memory limit)
# and, as the floor under them all, the time climg takes to decode one of the files on one
# thread (--time's decode_ms; a comparison decodes the two at once, one on each core).
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
"$CLIMG" --list-devices | grep -q '^0: ' && names="$names climg-device"
command -v odiff >/dev/null 2>&1 && names="$names odiff"
command -v compare >/dev/null 2>&1 && names="$names magick"

run_one() { # NAME RUN
	case $1 in
	climg) set -- "$1" "$2" "$CLIMG" compare "$DIR/a.png" "$DIR/b.png" ;;
	climg-device) set -- "$1" "$2" "$CLIMG" compare --device 0 "$DIR/a.png" "$DIR/b.png" ;;
	odiff) set -- "$1" "$2" odiff "$DIR/a.png" "$DIR/b.png" "$DIR/odiff-diff.png" ;;
	magick) set -- "$1" "$2" compare -metric AE "$DIR/a.png" "$DIR/b.png" null: ;;
	esac
	_n=$1 _r=$2
	shift 2
	"$IMGTOOL" measure "$DIR/m-$_n.$_r" "$@" >/dev/null 2>&1 || true
}

# The floor under any comparison of the two files: one file's decoding on one thread
# (climg --time's decode_ms; the two decode at once, one on each core).
decode_ms() {
	"$CLIMG" --cpu --time=json "$DIR/a.png" stats:/dev/null -o "$DIR/decoded.ppm" 2>&1 >/dev/null |
		sed -n 's/.*"decode_ms": *\([0-9.]*\).*/\1/p' >>"$DIR/decode"
}

r=1
while [ "$r" -le "$RUNS" ]; do
	for n in $names; do run_one "$n" "$r"; done
	decode_ms
	r=$((r + 1))
done

# median wall ms (FIELD 3) or CPU ms (FIELD 4), max peak KiB and the exit statuses seen of
# NAME's runs (each the same pair of images: every tool should say they differ)
median_ms() { cat "$DIR"/m-"$1".* | awk -v f="${2:-3}" '{print $f}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
peak_kib() { cat "$DIR"/m-"$1".* | awk '$2 > m {m = $2} END {print m}'; }
statuses() { cat "$DIR"/m-"$1".* | awk '{print $1}' | sort -u | tr '\n' ' ' | sed 's/ $//'; }

base=$(median_ms climg)
base_cpu=$(median_ms climg 4)
echo "$(nproc) cores, load average $(cut -d ' ' -f 1-3 /proc/loadavg) at the end;" \
	"$("$CLIMG" --version | head -n 1); device 0: $("$CLIMG" --list-devices | sed -n 's/^0: //p')"
echo
echo "| tool | wall (median of $RUNS) | CPU time (median) | peak memory | wall / climg's | CPU / climg's | exit status |"
echo "|---|---|---|---|---|---|---|"
for n in $names; do
	ms=$(median_ms "$n")
	cpu=$(median_ms "$n" 4)
	kib=$(peak_kib "$n")
	case $n in
	climg) label="climg compare" ;;
	climg-device) label="climg compare --device 0" ;;
	odiff) label="odiff $(odiff --version 2>&1 | head -n 1 | awk '{print $2}')" ;;
	magick) label="ImageMagick $(compare -version 2>/dev/null | head -n 1 | awk '{print $3}') compare -metric AE" ;;
	esac
	awk -v n="$label" -v ms="$ms" -v cpu="$cpu" -v kib="$kib" -v b="$base" -v bc="$base_cpu" \
		-v st="$(statuses "$n")" 'BEGIN { printf "| %s | %.2f s | %.2f s | %.0f MB | %.1f | %.1f | %s |\n",
			n, ms / 1000, cpu / 1000, kib / 1024, (b > 0 ? ms / b : 0), (bc > 0 ? cpu / bc : 0), st }'
done
dec=$(sort -n "$DIR/decode" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
echo
awk -v d="$dec" -v b="$base" -v n="$RUNS" 'BEGIN {
	printf "decoding one file alone on one thread (median of %d): %.0f ms, %.0f%% of the %.0f ms of climg compare\n",
		n, d, (b > 0 ? 100 * d / b : 0), b }'
