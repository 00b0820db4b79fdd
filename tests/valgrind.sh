#!/bin/sh
# SPDX-License-Identifier: MIT
# `make check-valgrind`: the CPU path under valgrind's memcheck, on successes and on the
# failures that exercise the cleanup paths: every run must report no errors and lose no
# memory definitely. Prints one line per run and "N passed, N failed".
cd "$(dirname "$0")/.." || exit 1
CLIMG=$(realpath "${CLIMG:-climg}")
IMGTOOL=$(realpath "${IMGTOOL:-tests/imgtool}")
METATOOL=$(realpath "${METATOOL:-tests/metatool}")
T=$(mktemp -d "${TMPDIR:-/tmp}/climg-valgrind.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
command -v valgrind >/dev/null || {
	echo "valgrind is not installed (apt-get install valgrind)"
	echo "0 passed, 1 failed"
	exit 1
}
pass=0
fail=0

# vg_verdict NAME OK: the run logged in $T/vg.log passes when OK is 1 (its exit status was
# as wanted) and memcheck counted no errors; else its first error lines are shown.
vg_verdict() {
	if [ "$2" = 1 ] && grep -q 'ERROR SUMMARY: 0 errors' "$T/vg.log"; then
		pass=$((pass + 1))
		echo "ok   $1"
	else
		fail=$((fail + 1))
		echo "FAIL: $1"
		grep -E 'Invalid|uninitialised|definitely|ERROR SUMMARY' "$T/vg.log" | head -n 5 | sed 's/^/    | /'
	fi
}

# vg NAME ARG...: climg --cpu ARG... under memcheck (whatever climg's own exit status).
vg() {
	_n=$1
	shift
	valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite --show-leak-kinds=definite \
		--log-file="$T/vg.log" "$CLIMG" --cpu "$@" >/dev/null 2>"$T/err"
	_rc=$?
	_ok=0
	[ "$_rc" != 99 ] && _ok=1
	vg_verdict "$_n (climg exit $_rc)" "$_ok"
}

"$IMGTOOL" make 61 37 3 noise:4 "$T/rgb.png"
"$IMGTOOL" make 61 37 4 F "$T/rgba.png"
"$IMGTOOL" make 33 21 1 grad "$T/grey.pgm"
"$IMGTOOL" make 40 30 3 photo:2 "$T/photo.jpg"
"$IMGTOOL" make 17 9 3 grad "$T/small.bmp"
"$IMGTOOL" jpegvariant progressive "$T/prog.jpg"
"$IMGTOOL" jpegvariant arith "$T/arith.jpg"
"$IMGTOOL" pngvariant interlaced-ga16 "$T/il.png"
"$IMGTOOL" pngvariant palette-trns "$T/pal.png"
head -c 2000 "$T/rgb.png" >"$T/trunc.png"
head -c 500 "$T/photo.jpg" >"$T/trunc.jpg"
"$IMGTOOL" jpegvariant scans:101 "$T/scans.jpg"
"$IMGTOOL" jpegvariant cmyk "$T/cmyk.jpg"
"$IMGTOOL" rawpng huge-header "$T/huge.png"
"$METATOOL" make-icc RGB 70000 "$T/rgb.icc"
"$METATOOL" add-icc "$T/rgb.icc" "$T/photo.jpg" "$T/icc.jpg"
"$METATOOL" add-exif o=6 "$T/icc.jpg" "$T/meta.jpg"
"$METATOOL" add-exif o=6,count=9000 "$T/photo.jpg" "$T/badexif.jpg"

vg "png chain to png" "$T/rgb.png" grey rotate:90 transpose -o "$T/o.png"
vg "rgba png to jpeg (alpha dropped)" "$T/rgba.png" rotate:180 -o "$T/o.jpg"
vg "pgm to tga" "$T/grey.pgm" transpose -o "$T/o.tga"
vg "jpeg to bmp" "$T/photo.jpg" grey:bt709 -o "$T/o.bmp"
vg "bmp to ppm" "$T/small.bmp" rotate:-90 -o "$T/o.ppm"
vg "progressive jpeg" "$T/prog.jpg" grey:avg -o "$T/o.pgm"
vg "arithmetic jpeg" "$T/arith.jpg" -o "$T/o2.png"
vg "interlaced 16-bit png" "$T/il.png" rotate:90 -o "$T/o3.png"
vg "palette png" "$T/pal.png" -o -
vg "stdin to stdout" - grey -o - <"$T/rgb.png"
vg "convolve gauss, edge, custom" "$T/rgba.png" convolve:gauss:sigma=2 convolve:edge:bias=128 \
	convolve:kernel=1,2,1,2,4,2,1,2,1:border=reflect -o "$T/c.png"
vg "rotate by any angle" "$T/rgb.png" rotate:30 rotate:-12.5:nearest:crop:bg=#ff000080 -o "$T/r.png"
vg "histogram csv and plot" "$T/photo.jpg" histogram:"$T/h.csv":plot="$T/h.png":scale=log grey \
	-o "$T/h2.png"
vg "exif and icc, autoorient to png" "$T/meta.jpg" autoorient -o "$T/m.png"
vg "exif and icc, autoorient to jpeg" "$T/meta.jpg" autoorient -o "$T/m.jpg"
vg "exif and icc, png to jpeg" "$T/m.png" invert -o "$T/m2.jpg"
vg "malformed exif" "$T/badexif.jpg" autoorient -o "$T/m3.jpg"
vg "convolve work limit" "$T/rgb.png" convolve:gauss:radius=1001 -o "$T/x.png"
vg "truncated png" "$T/trunc.png" -o "$T/x.png"
vg "truncated jpeg" "$T/trunc.jpg" -o "$T/x.png"
vg "101-scan jpeg" "$T/scans.jpg" -o "$T/x.png"
vg "cmyk jpeg" "$T/cmyk.jpg" -o "$T/x.png"
vg "huge header" "$T/huge.png" -o "$T/x.png"
vg "usage error" "$T/rgb.png" rotate:abc -o "$T/x.png"
vg "missing output directory" "$T/rgb.png" -o "$T/nodir/x.png"
vg "pgm of 3 channels" "$T/rgb.png" -o "$T/x.pgm"
vg "/dev/zero" /dev/zero -o "$T/x.png"
vg "disk full" "$T/rgb.png" -o /dev/full

# The inputs the fuzzers found, through the gcc-built replay runners: valgrind sees the
# out-of-bounds accesses that a plain replay survives.
FUZZ_REPLAY=${FUZZ_REPLAY:-tests/fuzz}
for t in chain decode pipeline; do
	[ -n "$(ls tests/fuzz/regress/$t 2>/dev/null)" ] || continue
	valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite --log-file="$T/vg.log" \
		"$FUZZ_REPLAY/replay-$t" tests/fuzz/regress/$t/* >/dev/null 2>&1
	_rc=$?
	_ok=0
	[ "$_rc" = 0 ] && _ok=1
	vg_verdict "fuzz replay $t" "$_ok"
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
