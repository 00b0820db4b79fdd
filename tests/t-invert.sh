# SPDX-License-Identifier: MIT
# invert and threshold: hand-computed pixels, alpha kept, identities, usage errors, OpenCL
# against the CPU path on odd sizes with 1-4 channels, and OpenCV where python3 has it.
. tests/pyref.sh

D=$T/invert
mkdir -p "$D"
dump() { "$IMGTOOL" dump "$1" | tr '\n' '|'; }
printf 'P6\n2 1\n255\n\0\1\200\201\377\12' >"$D/a.ppm"
"$CLIMG" --cpu "$D/a.ppm" invert -o "$D/o.ppm"
check "invert by hand" test "$(dump "$D/o.ppm")" = "255,254,127 126,0,245|"
"$CLIMG" --cpu "$D/a.ppm" threshold:128 -o "$D/o.ppm"
check "threshold:128 by hand (128 is not above 128)" test "$(dump "$D/o.ppm")" = "0,0,0 255,255,0|"
"$CLIMG" --cpu "$D/a.ppm" threshold:0 -o "$D/o.ppm"
check "threshold:0 by hand" test "$(dump "$D/o.ppm")" = "0,255,255 255,255,255|"
"$CLIMG" --cpu "$D/a.ppm" threshold:255 -o "$D/o.ppm"
check "threshold:255 is all 0" test "$(dump "$D/o.ppm")" = "0,0,0 0,0,0|"
# alpha kept: the F pattern's alpha is 255 - 3x - y; alpha FILE prints the last sample of
# every pixel
alpha() { "$IMGTOOL" dump "$1" | awk '{ for (i = 1; i <= NF; i++) { n = split($i, a, ","); printf "%s ", a[n] } print "" }'; }
"$IMGTOOL" make 11 9 4 F "$D/f4.png"
"$IMGTOOL" make 10 3 2 grad "$D/g2.png"
"$IMGTOOL" make 13 7 3 grad "$D/g3.png"
"$IMGTOOL" make 6 5 1 F "$D/f1.pgm"
for f in "$D/f4.png" "$D/g2.png"; do
	n=$(basename "$f")
	for s in invert threshold:9; do
		"$CLIMG" --cpu "$f" $s -o "$D/o.png"
		alpha "$D/o.png" >"$D/ao.txt"
		alpha "$f" >"$D/ai.txt"
		check "$s keeps alpha ($n)" cmp "$D/ao.txt" "$D/ai.txt"
	done
done
for f in "$D/f4.png" "$D/g2.png" "$D/g3.png" "$D/f1.pgm"; do
	n=$(basename "$f")
	"$CLIMG" --cpu "$f" invert invert -o "$D/o.png"
	same_pixels "invert twice is the identity ($n)" "$D/o.png" "$f"
	"$CLIMG" --cpu "$f" threshold:77 threshold:200 -o "$D/a.png"
	"$CLIMG" --cpu "$f" threshold:77 -o "$D/b.png"
	same_pixels "threshold of a threshold changes nothing ($n)" "$D/a.png" "$D/b.png"
	# 255 - v > 254 - T exactly when v <= T: threshold:T invert = invert threshold:(254 - T)
	"$CLIMG" --cpu "$f" threshold:100 invert -o "$D/a.png"
	"$CLIMG" --cpu "$f" invert threshold:154 -o "$D/b.png"
	same_pixels "threshold:100 invert = invert threshold:154 ($n)" "$D/a.png" "$D/b.png"
done

for a in "" 256 -1 abc 1.5 " 1" 0x10 "1:2"; do
	expect_exit 2 "threshold:$a is a usage error" "$CLIMG" "$D/missing.png" "threshold:$a" -o "$D/x.png"
	expect_stderr "threshold:$a message" "^climg: threshold: "
done
expect_exit 2 "threshold needs a level" "$CLIMG" "$D/g3.png" threshold -o "$D/x.png"
expect_stderr "threshold message" "^climg: threshold: needs one argument"
expect_exit 2 "threshold:256 names the range" "$CLIMG" "$D/g3.png" threshold:256 -o "$D/x.png"
expect_stderr "threshold:256 message" "^climg: threshold: level must be a whole number 0-255, not '256'$"
expect_exit 2 "invert:x is a usage error" "$CLIMG" "$D/g3.png" invert:x -o "$D/x.png"
expect_stderr "invert:x message" "^climg: invert: takes no arguments$"

if py=$(pyref cv2 numpy); then
	for f in "$D/g3.png" "$D/f1.pgm"; do
		n=$(basename "$f")
		"$py" -c "
import cv2, sys
im = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
cv2.imwrite(sys.argv[2], cv2.bitwise_not(im))
cv2.imwrite(sys.argv[3], cv2.threshold(im, 100, 255, cv2.THRESH_BINARY)[1])
" "$f" "$D/cv-invert.png" "$D/cv-threshold.png"
		"$CLIMG" --cpu "$f" invert -o "$D/o.png"
		same_pixels "invert = cv2.bitwise_not ($n)" "$D/o.png" "$D/cv-invert.png"
		"$CLIMG" --cpu "$f" threshold:100 -o "$D/o.png"
		same_pixels "threshold:100 = cv2.threshold THRESH_BINARY ($n)" "$D/o.png" "$D/cv-threshold.png"
	done
else
	echo "skipping the OpenCV comparisons of invert and threshold: no python3 with cv2 and numpy"
fi

need_opencl "invert and threshold on OpenCL" || { return 0 2>/dev/null || exit 0; }
for ch in 1 2 3 4; do
	for wh in "1 1" "1 19" "19 1" "17 5" "67 33" "300 70"; do
		set -- $wh
		"$IMGTOOL" make "$1" "$2" "$ch" noise:9 "$D/n.png"
		expect_exit 0 "OpenCL = CPU: invert threshold ${1}x$2 $ch channels" \
			"$CLIMG" --verify "$D/n.png" invert threshold:100 -o "$D/o.png"
	done
done
