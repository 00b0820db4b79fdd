# SPDX-License-Identifier: MIT
# equalize: hand-computed tables, alpha kept, colour channels each on their own, usage
# errors, OpenCL against the CPU path on odd sizes with 1-4 channels, and cv2.equalizeHist
# byte for byte where python3 has it.
. tests/pyref.sh

D=$T/equalize
mkdir -p "$D"
dump() { "$IMGTOOL" dump "$1" | tr '\n' '|'; }
# 4x1 grey 10 20 20 40: m = 10, N - hist(m) = 3, s = 85; lut(20) = 2 * 85 = 170, lut(40) = 255
printf 'P5\n4 1\n255\n\12\24\24\50' >"$D/a.pgm"
"$CLIMG" --cpu "$D/a.pgm" equalize -o "$D/o.pgm"
check "equalize by hand" test "$(dump "$D/o.pgm")" = "0 170 170 255|"
# one value everywhere keeps it
printf 'P5\n3 1\n255\n\7\7\7' >"$D/c.pgm"
"$CLIMG" --cpu "$D/c.pgm" equalize -o "$D/o.pgm"
check "equalize of a constant image keeps it" test "$(dump "$D/o.pgm")" = "7 7 7|"
# 3x1 RGB: each channel its own table. R 0 5 9 -> 0 128 255 (s = 127.5, rint(127.5) = 128
# ties to even), G 1 1 2 -> 0 0 255, B 3 3 3 (constant) kept
printf 'P6\n3 1\n255\n\0\1\3\5\1\3\11\2\3' >"$D/rgb.ppm"
"$CLIMG" --cpu "$D/rgb.ppm" equalize -o "$D/o.ppm"
check "equalize per channel by hand" test "$(dump "$D/o.ppm")" = "0,0,3 128,0,3 255,255,3|"
"$IMGTOOL" make 11 9 4 F "$D/f4.png"
"$IMGTOOL" make 10 3 2 grad "$D/g2.png"
alpha() { "$IMGTOOL" dump "$1" | awk '{ for (i = 1; i <= NF; i++) { n = split($i, a, ","); printf "%s ", a[n] } print "" }'; }
for f in "$D/f4.png" "$D/g2.png"; do
	n=$(basename "$f")
	"$CLIMG" --cpu "$f" equalize -o "$D/o.png"
	alpha "$D/o.png" >"$D/ao.txt"
	alpha "$f" >"$D/ai.txt"
	check "equalize keeps alpha ($n)" cmp "$D/ao.txt" "$D/ai.txt"
	"$CLIMG" --cpu "$f" equalize equalize -o "$D/a.png"
	same_pixels "equalize twice = once ($n)" "$D/a.png" "$D/o.png"
done
expect_exit 2 "equalize:x is a usage error" "$CLIMG" "$D/a.pgm" equalize:x -o "$D/x.png"
expect_stderr "equalize:x message" "^climg: equalize: takes no arguments$"

if py=$(pyref cv2 numpy PIL); then
	for p in photo:5 noise:3 grad smooth F const:9; do
		"$IMGTOOL" make 301 157 1 "$p" "$D/e.png"
		"$IMGTOOL" make 61 37 3 "$p" "$D/e3.png"
		"$py" -c "
import cv2, numpy, sys
from PIL import Image
a = numpy.asarray(Image.open(sys.argv[1]))
Image.fromarray(cv2.equalizeHist(a)).save(sys.argv[2])
b = numpy.asarray(Image.open(sys.argv[3]))
Image.fromarray(numpy.dstack([cv2.equalizeHist(numpy.ascontiguousarray(b[:, :, k])) for k in range(3)])).save(sys.argv[4])
" "$D/e.png" "$D/cv.png" "$D/e3.png" "$D/cv3.png"
		"$CLIMG" --cpu "$D/e.png" equalize -o "$D/o.png"
		same_pixels "equalize = cv2.equalizeHist ($p)" "$D/o.png" "$D/cv.png"
		"$CLIMG" --cpu "$D/e3.png" equalize -o "$D/o.png"
		same_pixels "equalize RGB = cv2.equalizeHist per channel ($p)" "$D/o.png" "$D/cv3.png"
	done
else
	echo "skipping the OpenCV comparisons of equalize: no python3 with cv2, numpy and PIL"
fi

need_opencl "equalize on OpenCL" || { return 0 2>/dev/null || exit 0; }
for ch in 1 2 3 4; do
	for g in "1 1 noise:1" "1 19 noise:2" "19 1 grad" "17 5 const:200" "67 33 photo:4" "300 70 noise:5"; do
		set -- $g
		"$IMGTOOL" make "$1" "$2" "$ch" "$3" "$D/n.png"
		expect_exit 0 "OpenCL = CPU: equalize ${1}x$2 $ch channels $3" \
			"$CLIMG" --verify "$D/n.png" equalize -o "$D/o.png"
	done
done
