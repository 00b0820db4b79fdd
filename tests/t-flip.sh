# SPDX-License-Identifier: MIT
# flip, flop and transverse: hand-computed pixels, identities, usage errors, OpenCL against
# the CPU path byte for byte on odd sizes with 1-4 channels, and OpenCV's flip where python3
# has it.
. tests/pyref.sh

D=$T/flip
mkdir -p "$D"
# a 3x2 RGB image, every sample distinct: row 0 = 1,2,3 4,5,6 7,8,9; row 1 = 10.. 18
printf 'P6\n3 2\n255\n\1\2\3\4\5\6\7\10\11\12\13\14\15\16\17\20\21\22' >"$D/rgb.ppm"
dump() { "$IMGTOOL" dump "$1" | tr '\n' '|'; }
"$CLIMG" --cpu "$D/rgb.ppm" flip -o "$D/o.ppm"
check "flip by hand" test "$(dump "$D/o.ppm")" = "10,11,12 13,14,15 16,17,18|1,2,3 4,5,6 7,8,9|"
"$CLIMG" --cpu "$D/rgb.ppm" flop -o "$D/o.ppm"
check "flop by hand" test "$(dump "$D/o.ppm")" = "7,8,9 4,5,6 1,2,3|16,17,18 13,14,15 10,11,12|"
# transverse: out(x, y) = in(W-1-y, H-1-x), 2 wide and 3 high
"$CLIMG" --cpu "$D/rgb.ppm" transverse -o "$D/o.ppm"
check "transverse by hand" test "$(dump "$D/o.ppm")" = "16,17,18 7,8,9|13,14,15 4,5,6|10,11,12 1,2,3|"

"$IMGTOOL" make 13 7 3 grad "$D/g3.png"
"$IMGTOOL" make 6 5 1 F "$D/f1.pgm"
"$IMGTOOL" make 11 9 4 F "$D/f4.png"
"$IMGTOOL" make 10 3 2 grad "$D/g2.png"
for f in "$D/g3.png" "$D/f1.pgm" "$D/f4.png" "$D/g2.png"; do
	n=$(basename "$f")
	for s in flip flop transverse; do
		"$CLIMG" --cpu "$f" $s $s -o "$D/id.png"
		same_pixels "$s twice is the identity ($n)" "$D/id.png" "$f"
	done
	"$CLIMG" --cpu "$f" transverse -o "$D/a.png"
	"$CLIMG" --cpu "$f" transpose rotate:180 -o "$D/b.png"
	same_pixels "transverse = transpose rotate:180 ($n)" "$D/a.png" "$D/b.png"
	"$CLIMG" --cpu "$f" flip flop -o "$D/a.png"
	"$CLIMG" --cpu "$f" rotate:180 -o "$D/b.png"
	same_pixels "flip flop = rotate:180 ($n)" "$D/a.png" "$D/b.png"
	"$CLIMG" --cpu "$f" flop -o "$D/a.png"
	"$IMGTOOL" mirror "$f" "$D/b.png"
	same_pixels "flop = imgtool mirror ($n)" "$D/a.png" "$D/b.png"
	"$CLIMG" --cpu "$f" flip -o "$D/a.png"
	"$IMGTOOL" flip "$f" "$D/b.png"
	same_pixels "flip = imgtool flip ($n)" "$D/a.png" "$D/b.png"
done

for s in flip flop transverse; do
	expect_exit 2 "$s:x is a usage error" "$CLIMG" "$D/g3.png" "$s:x" -o "$D/x.png"
	expect_stderr "$s:x message" "^climg: $s: takes no arguments$"
done

# OpenCV: cv2.flip(img, 0) is flip, 1 is flop; transverse as cv2.flip(cv2.transpose(img), -1)
# (images read and written by Pillow: OpenCV reads grey+alpha as BGRA)
if py=$(pyref cv2 numpy PIL); then
	for f in "$D/g3.png" "$D/f4.png" "$D/g2.png" "$D/f1.pgm"; do
		n=$(basename "$f")
		"$py" -c "
import cv2, numpy, sys
from PIL import Image
im = numpy.asarray(Image.open(sys.argv[1]))
Image.fromarray(cv2.flip(im, 0)).save(sys.argv[2])
Image.fromarray(cv2.flip(im, 1)).save(sys.argv[3])
Image.fromarray(cv2.flip(cv2.transpose(im), -1)).save(sys.argv[4])
" "$f" "$D/cv-flip.png" "$D/cv-flop.png" "$D/cv-transverse.png"
		for s in flip flop transverse; do
			"$CLIMG" --cpu "$f" $s -o "$D/o.png"
			same_pixels "$s = OpenCV ($n)" "$D/o.png" "$D/cv-$s.png"
		done
	done
else
	echo "skipping the OpenCV comparisons of flip, flop and transverse: no python3 with cv2, numpy and PIL"
fi

need_opencl "flip, flop and transverse on OpenCL" || { return 0 2>/dev/null || exit 0; }
for ch in 1 2 3 4; do
	for wh in "1 1" "1 19" "19 1" "17 5" "67 33" "300 7"; do
		set -- $wh
		"$IMGTOOL" make "$1" "$2" "$ch" noise:7 "$D/n.png"
		expect_exit 0 "OpenCL = CPU: flip flop transverse ${1}x$2 $ch channels" \
			"$CLIMG" --verify "$D/n.png" flip transverse flop transverse -o "$D/o.png"
	done
done
