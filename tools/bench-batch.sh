#!/bin/sh
# SPDX-License-Identifier: MIT
# Batch throughput: a folder of JPEG photographs (tests/imgtool's photo pattern, a new seed
# per file, quality 90) at two sizes, 1.8 MP (1600x1125) and 20 MP (6028x3391), through a
# light chain (rotate:90, to PNG and to JPEG) and a heavy one (convolve:gauss:sigma=8
# rotate:30, to JPEG), timed side by side in one run:
#   climg           one climg process for the whole folder (the default device)
#   climg --cpu     the same on the CPU path
#   xargs climg --cpu   one process per file, BENCH_JOBS at once
#   xargs climg     the same on the default device
#   loop climg      a shell loop of climg, one file after another, on the default device
#   loop vips / mogrify   where installed, the light chain only
# Each is run BENCH_RUNS times, interleaved, and the median wall time gives images/s (the
# shell loops, by far the slowest, once). The
# codec limit is what decoding and encoding alone allow on all cores: cores / (decode +
# encode seconds of one image on one thread), averaged over the folder's mix, measured with
# `climg --cpu --time=json` under CLIMG_THREADS=1. What all cores reach at once is less (they
# share the memory and the caches), so the codecs are also timed alone on all cores: one
# `climg --cpu` for the whole folder without a stage (decode and encode only), BENCH_RUNS
# times, the median. The table gives each contender's images/s, its ratio to the climg batch
# (< 1: slower) and the climg batches' shares of the codec limit and of the codecs alone.
# Every climg contender's outputs are compared byte for byte with the batch's.
#
#   sh tools/bench-batch.sh           (or `make bench-batch`)
#
# Environment: BENCH_SMALL (1.8 MP files, default 20), BENCH_LARGE (20 MP files, default 2),
# BENCH_RUNS (default 3), BENCH_JOBS (processes for xargs, default the cores),
# BENCH_CHAINS (default "light-png light-jpg heavy"), BENCH_LOOP (0 leaves the shell loops
# out), BENCH_DIR (scratch, default a new directory under /tmp, removed afterwards), CLIMG and
# IMGTOOL (the binaries, default ./climg and tests/imgtool).
set -eu
cd "$(dirname "$0")/.."
CLIMG=${CLIMG:-$PWD/climg}
IMGTOOL=${IMGTOOL:-$PWD/tests/imgtool}
SMALL=${BENCH_SMALL:-20}
LARGE=${BENCH_LARGE:-2}
RUNS=${BENCH_RUNS:-3}
CORES=$(nproc)
JOBS=${BENCH_JOBS:-$CORES}
CHAINS=${BENCH_CHAINS:-"light-png light-jpg heavy"}
LOOP=${BENCH_LOOP:-1}

. tools/bench-lib.sh
bench_built bench-batch "$CLIMG" "$IMGTOOL"
bench_scratch batch

now() { date +%s.%N; }
# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- the folder -------------------------------------------------------------------------------
mkdir -p "$D/in"
echo "bench-batch: making $SMALL 1.8 MP and $LARGE 20 MP JPEGs in $D/in" >&2
{
	i=0
	while [ $i -lt "$SMALL" ]; do
		i=$((i + 1))
		echo "1600 1125 photo:$i $D/in/s$(printf %04d $i).jpg"
	done
	i=0
	while [ $i -lt "$LARGE" ]; do
		i=$((i + 1))
		echo "6028 3391 photo:$((1000 + i)) $D/in/l$(printf %04d $i).jpg"
	done
} | xargs -P "$CORES" -L 1 sh -c '"$0" -q 90 make "$1" "$2" 3 "$3" "$4"' "$IMGTOOL"
N=$((SMALL + LARGE))
ls "$D/in"/*.jpg >"$D/files"

# the warm program cache: no contender pays a first compile. The GPU is named where there is
# one: by default one image may run on the CPU path and build nothing.
for c in "rotate:90" "convolve:gauss:sigma=8 rotate:30"; do
	# shellcheck disable=SC2086
	"$CLIMG" --device gpu "$D/in/s0001.jpg" $c -o "$D/warm.jpg" 2>/dev/null ||
		"$CLIMG" "$D/in/s0001.jpg" $c -o "$D/warm.jpg" 2>/dev/null || true
done

chain_of() {
	case $1 in
	light-png | light-jpg) echo "rotate:90" ;;
	heavy) echo "convolve:gauss:sigma=8 rotate:30" ;;
	esac
}
ext_of() { case $1 in light-png) echo png ;; *) echo jpg ;; esac; }

# ---- the codec limit --------------------------------------------------------------------------
# decode + encode ms of one image on one thread, for a small and a large file
codec_ms() {
	CLIMG_THREADS=1 "$CLIMG" --cpu --time=json "$1" -o "$D/codec.$2" 2>&1 >/dev/null |
		sed 's/.*"decode_ms": \([0-9.]*\).*"encode_ms": \([0-9.]*\).*/\1 \2/' |
		awk '{ print $1 + $2 }'
}
limit_of() {
	s=$(codec_ms "$D/in/s0001.jpg" "$1")
	l=0
	[ "$LARGE" -gt 0 ] && l=$(codec_ms "$D/in/l0001.jpg" "$1")
	awk -v s="$s" -v l="$l" -v ns="$SMALL" -v nl="$LARGE" -v c="$CORES" \
		'BEGIN { printf "%.2f", c / ((ns * s + nl * l) / (ns + nl) / 1000) }'
}

# ---- the contenders ---------------------------------------------------------------------------
have() { command -v "$1" >/dev/null 2>&1; }
contenders() {
	echo "climg climg-cpu xargs-cpu xargs"
	[ "$LOOP" = 1 ] && echo "loop"
	case $1 in
	light-*)
		[ "$LOOP" = 1 ] && have vips && echo "vips"
		[ "$LOOP" = 1 ] && have mogrify && mogrify -version 2>/dev/null | grep -q ImageMagick && echo "mogrify"
		;;
	esac
	return 0
}

# run CONTENDER CHAIN-NAME OUTDIR: one timed run, prints seconds
run() {
	_c=$(chain_of "$2")
	_e=$(ext_of "$2")
	rm -rf "$3"
	mkdir -p "$3"
	_t0=$(now)
	# shellcheck disable=SC2086
	case $1 in
	climg) "$CLIMG" -q "$D/in" $_c -o "$3/%n.$_e" ;;
	climg-cpu) "$CLIMG" -q --cpu "$D/in" $_c -o "$3/%n.$_e" ;;
	xargs-cpu) xargs -P "$JOBS" -I{} sh -c '"$1" -q --cpu "$2" '"$_c"' -o "$3/$(basename "$2" .jpg).'"$_e"'"' sh "$CLIMG" {} "$3" <"$D/files" ;;
	xargs) xargs -P "$JOBS" -I{} sh -c '"$1" -q "$2" '"$_c"' -o "$3/$(basename "$2" .jpg).'"$_e"'"' sh "$CLIMG" {} "$3" <"$D/files" ;;
	loop) while read -r f; do "$CLIMG" -q "$f" $_c -o "$3/$(basename "$f" .jpg).$_e"; done <"$D/files" ;;
	vips) while read -r f; do vips rot "$f" "$3/$(basename "$f" .jpg).$_e" d90; done <"$D/files" ;;
	mogrify) mogrify -path "$3" -format "$_e" -rotate 90 "$D"/in/*.jpg ;;
	esac
	_t1=$(now)
	awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.4f\n", b - a }'
}

# codecs_alone EXT: images/s of decoding and encoding alone, one process on all cores
codecs_alone() {
	: >"$D/t-codecs"
	_r=0
	while [ $_r -lt "$RUNS" ]; do
		_r=$((_r + 1))
		rm -rf "$D/codecs"
		mkdir -p "$D/codecs"
		_t0=$(now)
		"$CLIMG" -q --cpu "$D/in" -o "$D/codecs/%n.$1"
		awk -v a="$_t0" -v b="$(now)" 'BEGIN { printf "%.4f\n", b - a }' >>"$D/t-codecs"
	done
	awk -v n="$N" -v m="$(median <"$D/t-codecs")" 'BEGIN { printf "%.2f", n / m }'
}

echo "| chain | contender | images/s | vs climg batch | share of the codec limit | share of the codecs alone |"
echo "|---|---|---:|---:|---:|---:|"
for ch in $CHAINS; do
	limit=$(limit_of "$(ext_of "$ch")")
	alone=$(codecs_alone "$(ext_of "$ch")")
	list=$(contenders "$ch")
	r=0
	while [ $r -lt "$RUNS" ]; do
		r=$((r + 1))
		for c in $list; do
			case $c in loop | vips | mogrify) [ $r = 1 ] || continue ;; esac
			echo "bench-batch: $ch, $c, run $r of $RUNS" >&2
			run "$c" "$ch" "$D/out-$c" >>"$D/t-$ch-$c"
		done
	done
	for c in climg-cpu xargs-cpu xargs loop; do
		case " $list " in *" $c "*) ;; *) continue ;; esac
		if ! diff -r "$D/out-climg" "$D/out-$c" >/dev/null; then
			echo "bench-batch: $c's outputs differ from the climg batch's" >&2
			exit 1
		fi
	done
	base=$(median <"$D/t-$ch-climg")
	for c in $list; do
		m=$(median <"$D/t-$ch-$c")
		awk -v ch="$ch ($(chain_of "$ch") -> $(ext_of "$ch"))" -v c="$c" -v n="$N" -v m="$m" \
			-v base="$base" -v limit="$limit" -v alone="$alone" 'BEGIN {
			ips = n / m
			ours = c == "climg" || c == "climg-cpu"
			share = ours ? sprintf("%.0f%%", 100 * ips / limit) : ""
			sharea = ours ? sprintf("%.0f%%", 100 * ips / alone) : ""
			printf "| %s | %s | %.2f | %.2f | %s | %s |\n", ch, c, ips, base / m, share, sharea }'
	done
	echo "| $ch | codec limit ($CORES cores) | $limit | | | |"
	echo "| $ch | codecs alone ($CORES cores at once) | $alone | | | |"
done
echo
echo "$N files ($SMALL at 1600x1125, $LARGE at 6028x3391, JPEG quality 90); $CORES cores;" \
	"xargs -P $JOBS; $RUNS interleaved runs, medians; device: $("$CLIMG" --list-devices | head -n 1)"
