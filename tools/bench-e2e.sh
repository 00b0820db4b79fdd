#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end timings: whole jobs (decode, filter, encode, write) by climg and, where they
# are installed, by vips, ImageMagick's convert and python3 OpenCV, on one generated 20 MP
# photograph (6028x3391, tests/imgtool's photo:1 pattern as a quality-90 JPEG, and the
# same pixels as a PNG written by climg at its default level). Runs are interleaved (each
# round runs every job of every tool once), so load that comes and goes hits all tools
# alike; the table gives medians of wall time and of CPU time (user + sys), the ratio of
# each tool's median wall time to the first tool's (climg --cpu: > 1 is slower) and the
# output sizes.
#
#   sh tools/bench-e2e.sh            (or `make bench-e2e`)
#
# Environment: BENCH_RUNS (rounds, default 5), BENCH_DIR (scratch directory, default a
# new one under /tmp, removed afterwards), BENCH_TOOLS (default
# "climg-cpu climg vips convert opencv"; climg-cpu is `climg --cpu`, climg picks an
# OpenCL device as usual), BENCH_JOBS (default "jpg2png jpg2jpg png2png"),
# BENCH_SIZE (WxH, default 6028x3391). Needs ./climg and tests/imgtool built.
set -eu
cd "$(dirname "$0")/.."
CLIMG=$PWD/climg
IMGTOOL=$PWD/tests/imgtool
RUNS=${BENCH_RUNS:-5}
TOOLS=${BENCH_TOOLS:-"climg-cpu climg vips convert opencv"}
JOBS=${BENCH_JOBS:-"jpg2png jpg2jpg png2png"}
SIZE=${BENCH_SIZE:-6028x3391}
W=${SIZE%x*}
H=${SIZE#*x}

. tools/bench-lib.sh
bench_built bench-e2e "$CLIMG" "$IMGTOOL"
bench_scratch bench

# ---- which tools are here -------------------------------------------------------------
have_vips=0
have_convert=0
OPENCV_PY=""
command -v vips >/dev/null 2>&1 && have_vips=1
# A real ImageMagick prints "Version: ImageMagick ..."; anything else named convert is not.
if convert -version 2>/dev/null | grep -q '^Version: ImageMagick'; then have_convert=1; fi
for py in python3 /usr/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import cv2' 2>/dev/null; then
		OPENCV_PY=$py
		break
	fi
done
TIME_BIN=""
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e' true 2>/dev/null; then TIME_BIN=/usr/bin/time; fi

available() {
	case $1 in
	climg-cpu | climg) return 0 ;;
	vips) [ "$have_vips" = 1 ] ;;
	convert) [ "$have_convert" = 1 ] ;;
	opencv) [ -n "$OPENCV_PY" ] ;;
	*) return 1 ;;
	esac
}

# ---- the jobs: one small script per tool and job, so /usr/bin/time can run it --------
# write_job TOOL JOB: writes $D/job-TOOL-JOB.sh, which runs the job from $1 to $2.
write_job() {
	f=$D/job-$1-$2.sh
	case $1:$2 in
	climg-cpu:jpg2png) echo '"$CLIMG" -q --cpu "$1" rotate:90 -o "$2"' ;;
	climg-cpu:jpg2jpg) echo '"$CLIMG" -q --cpu "$1" rotate:90 --quality 75 -o "$2"' ;;
	climg-cpu:png2png) echo '"$CLIMG" -q --cpu "$1" grey -o "$2"' ;;
	climg:jpg2png) echo '"$CLIMG" -q "$1" rotate:90 -o "$2"' ;;
	climg:jpg2jpg) echo '"$CLIMG" -q "$1" rotate:90 --quality 75 -o "$2"' ;;
	climg:png2png) echo '"$CLIMG" -q "$1" grey -o "$2"' ;;
	vips:jpg2png) echo 'vips rot "$1" "$2" d90' ;;
	vips:jpg2jpg) echo 'vips rot "$1" "$2[Q=75]" d90' ;;
	vips:png2png) echo 'vips colourspace "$1" "$2" b-w' ;;
	convert:jpg2png) echo 'convert "$1" -rotate 90 "$2"' ;;
	convert:jpg2jpg) echo 'convert "$1" -rotate 90 -quality 75 "$2"' ;;
	convert:png2png) echo 'convert "$1" -colorspace Gray "$2"' ;;
	opencv:*) echo '"$OPENCV_PY" "$D/opencv.py" '"$2"' "$1" "$2"' ;;
	esac >"$f"
}

cat >"$D/opencv.py" <<'PY'
import sys, cv2
job, src, dst = sys.argv[1:4]
img = cv2.imread(src)
if job == "png2png":
    cv2.imwrite(dst, cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
elif job == "jpg2jpg":
    cv2.imwrite(dst, cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE), [cv2.IMWRITE_JPEG_QUALITY, 75])
else:
    cv2.imwrite(dst, cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE))
PY

input_of() {
	case $1 in
	png2png) echo "$D/photo.png" ;;
	*) echo "$D/photo.jpg" ;;
	esac
}

ext_of() {
	case $1 in
	jpg2jpg) echo jpg ;;
	*) echo png ;;
	esac
}

describe() {
	case $1 in
	jpg2png) echo "JPEG, rotate 90, PNG" ;;
	jpg2jpg) echo "JPEG, rotate 90, JPEG q75" ;;
	png2png) echo "PNG, grey, PNG" ;;
	esac
}

export CLIMG OPENCV_PY D

# run_one TOOL JOB: one timed run; appends "JOB TOOL WALL_MS CPU_MS" to $D/times.
run_one() {
	out=$D/out-$1-$2.$(ext_of "$2")
	rm -f "$out"
	t0=$(date +%s%N)
	if [ -n "$TIME_BIN" ]; then
		$TIME_BIN -f '%U %S' -o "$D/cpu" sh "$D/job-$1-$2.sh" "$(input_of "$2")" "$out" \
			>/dev/null 2>"$D/err" || echo "bench-e2e: $1 failed on $2: $(tail -n 1 "$D/err")" >&2
	else
		sh "$D/job-$1-$2.sh" "$(input_of "$2")" "$out" >/dev/null 2>"$D/err" ||
			echo "bench-e2e: $1 failed on $2: $(tail -n 1 "$D/err")" >&2
	fi
	t1=$(date +%s%N)
	cpu=-
	if [ -n "$TIME_BIN" ]; then
		cpu=$(tail -n 1 "$D/cpu" | awk '{ printf "%d", ($1 + $2) * 1000 }')
	fi
	echo "$2 $1 $(((t1 - t0) / 1000000)) $cpu" >>"$D/times"
}

# ---- the input -------------------------------------------------------------------------
echo "bench-e2e: making the ${W}x${H} test photograph in $D" >&2
"$IMGTOOL" -q 90 make "$W" "$H" 3 photo:1 "$D/photo.jpg"
"$IMGTOOL" convert "$D/photo.jpg" "$D/photo.png"

TOOLS_HERE=""
for tool in $TOOLS; do
	if available "$tool"; then TOOLS_HERE="$TOOLS_HERE $tool"; else
		echo "bench-e2e: $tool is not installed; left out" >&2
	fi
done
for job in $JOBS; do
	for tool in $TOOLS_HERE; do
		write_job "$tool" "$job"
	done
done

# One untimed run of everything warms the page cache (and PoCL's kernel cache).
: >"$D/times"
for job in $JOBS; do
	for tool in $TOOLS_HERE; do
		run_one "$tool" "$job"
	done
done
: >"$D/times"

LOAD_BEFORE=$(uptime | sed 's/.*load average: //')
r=1
while [ "$r" -le "$RUNS" ]; do
	for job in $JOBS; do
		for tool in $TOOLS_HERE; do
			run_one "$tool" "$job"
		done
	done
	r=$((r + 1))
done
LOAD_AFTER=$(uptime | sed 's/.*load average: //')

# ---- the report ------------------------------------------------------------------------
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
secs() { awk -v ms="$1" 'BEGIN { if (ms == "-") print "-"; else printf "%.2f", ms / 1000 }'; }

echo "climg end-to-end benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) CPUs;" \
	"load average before: $LOAD_BEFORE; after: $LOAD_AFTER"
echo "input: ${W}x${H} RGB, photo.jpg $(wc -c <"$D/photo.jpg" | tr -d ' ') bytes (quality 90)," \
	"photo.png $(wc -c <"$D/photo.png" | tr -d ' ') bytes; $RUNS interleaved runs, medians"
echo "versions: $("$CLIMG" --version)$([ "$have_vips" = 1 ] && echo ", $(vips --version)")$([ "$have_convert" = 1 ] && echo ", $(convert -version | head -n 1 | sed 's/^Version: //; s/ https.*//')")$([ -n "$OPENCV_PY" ] && echo ", OpenCV $("$OPENCV_PY" -c 'import cv2; print(cv2.__version__)')")"
echo "OpenCL device (for 'climg'): $("$CLIMG" --list-devices 2>/dev/null | head -n 1 || echo none)"
echo
echo "| job | tool | wall (s) | CPU user+sys (s) | wall / climg-cpu | output (bytes) |"
echo "|---|---|---:|---:|---:|---:|"
for job in $JOBS; do
	ref=""
	for tool in $TOOLS_HERE; do
		wall=$(awk -v j="$job" -v t="$tool" '$1 == j && $2 == t { print $3 }' "$D/times" | median)
		cpu=$(awk -v j="$job" -v t="$tool" '$1 == j && $2 == t && $4 != "-" { print $4 }' "$D/times" | median)
		[ -n "$cpu" ] || cpu=-
		[ -n "$ref" ] || ref=$wall
		ratio=$(awk -v a="$wall" -v b="$ref" 'BEGIN { printf "%.2f", b ? a / b : 0 }')
		out=$D/out-$tool-$job.$(ext_of "$job")
		size=-
		[ -f "$out" ] && size=$(wc -c <"$out" | tr -d ' ')
		echo "| $(describe "$job") | $tool | $(secs "$wall") | $(secs "$cpu") | $ratio | $size |"
	done
done
