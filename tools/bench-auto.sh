#!/bin/sh
# SPDX-License-Identifier: MIT
# The automatic choice of path against the two forced ones: whole commands, spawn to exit,
# each run as climg's default (no --device: climg chooses), with --cpu, and with --device
# naming the automatic device (the one --list-devices marks [default]: the first GPU, else
# PoCL), over tiny, 1.8 MP, 20 MP and 8K images, light chains (grey, rotate:90, transpose,
# histogram), heavy ones (gauss sigma 2 and 8, rotate:30, sobel), a long chain (10 stages),
# JPEG and PNG out, one image and a batch of 20 images. Each round runs every command in
# every form once (interleaved, so load that comes and goes hits them alike); the table
# gives the median of BENCH_RUNS rounds (after one untimed round that warms the program
# cache and the cost model) and the ratio of the default to the faster of the other two
# (the goal: at most 1.10). "default, cold" is the default with the program cache and the
# cost model empty (a new CLIMG_CACHE_DIR, POCL_CACHE_DIR and CUDA_CACHE_PATH each run),
# against --cpu (the goal there: at most 1.10 too); a run that leaves a process compiling
# programs for later runs (at the lowest priority) is waited for (BENCH_PREPARE_WAIT seconds
# at most, then ended) before the next run starts: default 15 s on fewer than 8 cores,
# where it would take one of the few from the next run, else 0. The last column says where the default ran the
# stages (from one more run with --time).
#
#   sh tools/bench-auto.sh > auto.md        (or `make bench-auto`)
#
# Environment: BENCH_RUNS (rounds, default 5), BENCH_ROWS (row numbers to run, default all;
# `BENCH_LIST=1` lists them), BENCH_COLD (0 leaves the cold column out), BENCH_PREPARE_WAIT
# (seconds, see above), BENCH_DIR (scratch,
# default a new directory under /tmp, removed afterwards), CLIMG and IMGTOOL (default
# ./climg and tests/imgtool). Progress goes to stderr, the report to stdout.
set -eu
cd "$(dirname "$0")/.."
CLIMG=${CLIMG:-$PWD/climg}
IMGTOOL=${IMGTOOL:-$PWD/tests/imgtool}
RUNS=${BENCH_RUNS:-5}
COLD=${BENCH_COLD:-1}
CORES=$(nproc)
PREPARE_WAIT=${BENCH_PREPARE_WAIT:-$([ "$CORES" -lt 8 ] && echo 15 || echo 0)}

# ---- the rows: NUMBER|FORM|INPUT|CHAIN|OUTPUT EXTENSION ---------------------------------------
LONG="rotate:90 flip grey invert convolve:box transpose threshold:100 rotate:180 flop convolve:gauss:sigma=2"
ROWS="1|one|tiny.png|grey rotate:90|png
2|one|s.jpg|rotate:90|png
3|one|s.jpg|grey|jpg
4|one|s.jpg|convolve:gauss:sigma=2|jpg
5|one|s.jpg|$LONG|png
6|one|m.jpg|rotate:90|png
7|one|m.jpg|transpose|jpg
8|one|m.jpg|histogram:HIST grey|jpg
9|one|m.jpg|convolve:gauss:sigma=8|jpg
10|one|m.jpg|rotate:30|jpg
11|one|m.jpg|convolve:sobel-x|png
12|one|m.jpg|$LONG|jpg
13|one|k.jpg|rotate:90|jpg
14|one|k.jpg|convolve:gauss:sigma=2|jpg
15|one|k.jpg|rotate:30|png
16|batch|batch|rotate:90|png
17|batch|batch|convolve:gauss:sigma=8 rotate:30|jpg
18|batch|batch|$LONG|jpg"
if [ "${BENCH_LIST:-0}" = 1 ]; then
	echo "$ROWS"
	exit 0
fi
SELECT=${BENCH_ROWS:-$(echo "$ROWS" | cut -d'|' -f1 | tr '\n' ' ')}

. tools/bench-lib.sh
bench_built bench-auto "$CLIMG" "$IMGTOOL"
bench_scratch auto
D=$(cd "$D" && pwd)

# The automatic device, by its number, for --device.
DEV=$("$CLIMG" --list-devices | sed -n 's/^\([0-9]*\): .*\[default\]$/\1/p')
[ -n "$DEV" ] || {
	echo "bench-auto: no OpenCL device (climg --list-devices)" >&2
	exit 1
}

# ---- the images -----------------------------------------------------------------------------
echo "bench-auto: making the images in $D" >&2
"$IMGTOOL" make 8 6 3 noise:1 "$D/tiny.png"
"$IMGTOOL" -q 90 make 1600 1125 3 photo:1 "$D/s.jpg"
"$IMGTOOL" -q 90 make 6028 3391 3 photo:2 "$D/m.jpg"
"$IMGTOOL" -q 90 make 7680 4320 3 photo:3 "$D/k.jpg"
mkdir -p "$D/batch"
i=0
while [ $i -lt 20 ]; do
	i=$((i + 1))
	echo "$i $D/batch/b$(printf %02d $i).jpg"
done | xargs -P "$CORES" -L 1 sh -c '"$0" -q 90 make 1600 1125 3 "photo:$((10 + $1))" "$2"' "$IMGTOOL"

mkdir -m 700 -p "$D/cache"
export CLIMG_CACHE_DIR="$D/cache"

# row_field N K: field K of row N.
row_field() { echo "$ROWS" | awk -F'|' -v n="$1" -v k="$2" '$1 == n { print $k }'; }

# run_cmd ROW MODE OUT: runs row ROW in mode default, cpu, device or cold, output into OUT
# (a file, or a directory for a batch); the wall time in ms on stdout.
run_cmd() {
	_form=$(row_field "$1" 2)
	_in=$D/$(row_field "$1" 3)
	_chain=$(row_field "$1" 4 | sed "s|HIST|$D/h-$2.csv|")
	_ext=$(row_field "$1" 5)
	_opt=""
	case $2 in
	cpu) _opt=--cpu ;;
	device) _opt="--device $DEV" ;;
	esac
	if [ "$_form" = batch ]; then
		rm -rf "$3"
		_out="$3/%n.$_ext"
	else
		_out="$3.$_ext"
		rm -f "$_out"
	fi
	if [ "$2" = cold ]; then
		rm -rf "$D/cold"
		mkdir -m 700 -p "$D/cold/climg" "$D/cold/pocl" "$D/cold/cuda"
		_env="CLIMG_CACHE_DIR=$D/cold/climg POCL_CACHE_DIR=$D/cold/pocl CUDA_CACHE_PATH=$D/cold/cuda"
	else
		_env="CLIMG_CACHE_DIR=$D/cache"
	fi
	_t0=$(date +%s%N)
	# shellcheck disable=SC2086
	env $_env "$CLIMG" -q $_opt "$_in" $_chain -o "$_out" >/dev/null 2>"$D/err" ||
		echo "bench-auto: row $1 ($2) failed: $(tail -n 1 "$D/err")" >&2
	_t1=$(date +%s%N)
	echo $(((_t1 - _t0) / 1000000))
	[ "$2" = cold ] && wait_prepare
	return 0
}

# The processes a cold run left compiling programs for later runs (climg's own, with
# CLIMG_PREPARE set, at the lowest priority, in the cold cache directory), by pid.
prepare_pids() {
	grep -l "CLIMG_CACHE_DIR=$D/cold/climg" /proc/[0-9]*/environ 2>/dev/null |
		xargs -r grep -l 'CLIMG_PREPARE=' 2>/dev/null | sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}

# Waits for them (PREPARE_WAIT seconds at most, then ends them), so that they do not take
# the cores from the next run.
wait_prepare() {
	_w=0
	while [ $_w -lt $((PREPARE_WAIT * 5)) ] && [ -n "$(prepare_pids)" ]; do
		sleep 0.2
		_w=$((_w + 1))
	done
	for _p in $(prepare_pids); do
		kill "$_p" 2>/dev/null || true
	done
}

MODES="default cpu device"
[ "$COLD" = 1 ] && MODES="$MODES cold"

# One untimed round: the program cache warm, the model measured on this machine.
echo "bench-auto: warming up" >&2
for r in $SELECT; do
	for m in device cpu default; do
		run_cmd "$r" "$m" "$D/out-$r-$m" >/dev/null
	done
done
: >"$D/times"
LOAD_BEFORE=$(uptime | sed 's/.*load average: //')
round=1
while [ "$round" -le "$RUNS" ]; do
	echo "bench-auto: round $round of $RUNS" >&2
	for r in $SELECT; do
		for m in $MODES; do
			echo "$r $m $(run_cmd "$r" "$m" "$D/out-$r-$m")" >>"$D/times"
		done
	done
	round=$((round + 1))
done
LOAD_AFTER=$(uptime | sed 's/.*load average: //')

# Every form gives the same bytes.
for r in $SELECT; do
	_ext=$(row_field "$r" 5)
	for m in cpu device cold; do
		[ "$m" = cold ] && [ "$COLD" != 1 ] && continue
		if [ "$(row_field "$r" 2)" = batch ]; then
			diff -r "$D/out-$r-default" "$D/out-$r-$m" >/dev/null ||
				echo "bench-auto: row $r: the default's outputs differ from $m's" >&2
		else
			cmp -s "$D/out-$r-default.$_ext" "$D/out-$r-$m.$_ext" ||
				echo "bench-auto: row $r: the default's output differs from $m's" >&2
		fi
	done
done

# ---- the report ---------------------------------------------------------------------------
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
med() { awk -v r="$1" -v m="$2" '$1 == r && $2 == m { print $3 }' "$D/times" | median; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# where_ran ROW: where the default ran the stages, from one run with --time.
where_ran() {
	_form=$(row_field "$1" 2)
	_in=$D/$(row_field "$1" 3)
	_chain=$(row_field "$1" 4 | sed "s|HIST|$D/h-t.csv|")
	_ext=$(row_field "$1" 5)
	_out=$D/where.$_ext
	[ "$_form" = batch ] && _out="$D/where/%n.$_ext"
	rm -rf "$D/where" "$_out"
	# shellcheck disable=SC2086
	"$CLIMG" -q --time "$_in" $_chain -o "$_out" 2>"$D/where.err" >/dev/null || true
	if [ "$_form" = batch ]; then
		sed -n 's/^climg: time: the device took \([0-9]*\) images (\([0-9]*\) of them.*the CPU path \([0-9]*\)$/device \1 (\2 after CPU stages), cpu \3/p' "$D/where.err"
	else
		awk '/^climg: time: +[0-9]+ / { p = $NF; n++; c[p]++ } END {
			if (!n) print "-"; else if (c["cpu"] == n) print "cpu"; else if (c["device"] == n) print "device";
			else printf "cpu %d, device %d stages\n", c["cpu"], c["device"] }' "$D/where.err"
	fi
}

describe() {
	_in=$(row_field "$1" 3)
	_chain=$(row_field "$1" 4 | sed 's|histogram:HIST|histogram|')
	[ "$_chain" = "$LONG" ] && _chain="10 stages (long)"
	case $_in in
	tiny.png) _w="8x6 PNG" ;;
	s.jpg) _w="1.8 MP JPEG" ;;
	m.jpg) _w="20 MP JPEG" ;;
	k.jpg) _w="8K JPEG" ;;
	batch) _w="20 x 1.8 MP JPEG" ;;
	esac
	echo "$_w, \`$_chain\`, $(row_field "$1" 5 | tr a-z A-Z) out"
}

echo "climg automatic choice benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $("$CLIMG" --version | head -n 1)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $CORES CPUs;" \
	"load average before: $LOAD_BEFORE; after: $LOAD_AFTER"
echo "device (--device $DEV, the automatic one): $("$CLIMG" --list-devices | sed -n "s/^$DEV: //p")"
echo "$RUNS interleaved rounds after one warm-up round, medians of wall time (spawn to exit), seconds"
echo
if [ "$COLD" = 1 ]; then
	echo "| # | command | default | --cpu | --device | default / best | default, cold | cold / --cpu | the default ran |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|---|"
else
	echo "| # | command | default | --cpu | --device | default / best | the default ran |"
	echo "|---:|---|---:|---:|---:|---:|---|"
fi
for r in $SELECT; do
	a=$(med "$r" default)
	c=$(med "$r" cpu)
	d=$(med "$r" device)
	best=$c
	[ "$d" -lt "$best" ] && best=$d
	line="| $r | $(describe "$r") | $(secs "$a") | $(secs "$c") | $(secs "$d") | $(ratio "$a" "$best")"
	if [ "$COLD" = 1 ]; then
		k=$(med "$r" cold)
		line="$line | $(secs "$k") | $(ratio "$k" "$c")"
	fi
	echo "$line | $(where_ran "$r") |"
done
echo
echo "The long chain: \`$LONG\`."
