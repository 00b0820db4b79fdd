# SPDX-License-Identifier: MIT
# crop: hand-computed rectangles, the centred rounding, identities, usage errors (at parse
# and plan time), OpenCL against the CPU path on odd sizes with 1-4 channels, and numpy
# slicing where python3 has it.
. tests/pyref.sh

D=$T/crop
mkdir -p "$D"
# 4x3 grey, value 10 * y + x
printf 'P5\n4 3\n255\n\0\1\2\3\12\13\14\15\24\25\26\27' >"$D/g.pgm"
dump() { "$IMGTOOL" dump "$1" | tr '\n' '|'; }
"$CLIMG" --cpu "$D/g.pgm" crop:2x2+1+1 -o "$D/o.pgm"
check "crop:2x2+1+1 by hand" test "$(dump "$D/o.pgm")" = "11 12|21 22|"
"$CLIMG" --cpu "$D/g.pgm" crop:1x1+3+2 -o "$D/o.pgm"
check "crop of the last pixel" test "$(dump "$D/o.pgm")" = "23|"
# centred: margins 4-1 = 3 and 3-2 = 1, so X = 1, Y = 0 (the extra pixel right and below)
"$CLIMG" --cpu "$D/g.pgm" crop:1x2 -o "$D/o.pgm"
check "crop:1x2 centred rounds down" test "$(dump "$D/o.pgm")" = "1|11|"
"$CLIMG" --cpu "$D/g.pgm" crop:2x1 -o "$D/o.pgm"
check "crop:2x1 centred" test "$(dump "$D/o.pgm")" = "11 12|"

"$IMGTOOL" make 13 7 3 grad "$D/g3.png"
"$IMGTOOL" make 11 9 4 F "$D/f4.png"
"$IMGTOOL" make 6 5 2 grad "$D/g2.png"
for f in "$D/g3.png" "$D/f4.png" "$D/g2.png"; do
	n=$(basename "$f")
	rm -f "$D/id.png" "$D/a.png" "$D/b.png"
	set -- $("$IMGTOOL" info "$f")
	"$CLIMG" --cpu "$f" "crop:${1}x$2+0+0" -o "$D/id.png"
	same_pixels "crop of the whole image is the identity ($n)" "$D/id.png" "$f"
	"$CLIMG" --cpu "$f" "crop:${1}x$2" -o "$D/id.png"
	same_pixels "centred crop of the whole image is the identity ($n)" "$D/id.png" "$f"
	# a crop of a crop is one crop
	"$CLIMG" --cpu "$f" crop:3x3+1+1 crop:2x2+1+1 -o "$D/a.png"
	"$CLIMG" --cpu "$f" crop:2x2+2+2 -o "$D/b.png"
	same_pixels "crop of a crop ($n)" "$D/a.png" "$D/b.png"
	# crop commutes with flip as the geometry says
	"$CLIMG" --cpu "$f" crop:2x3+1+0 flip -o "$D/a.png"
	"$CLIMG" --cpu "$f" flip "crop:2x3+1+$(($2 - 3))" -o "$D/b.png"
	same_pixels "crop then flip = flip then the mirrored crop ($n)" "$D/a.png" "$D/b.png"
done

for a in "" 0x10 10x0 10 x10 10x10+1 "10x10+-1+0" "10x10-1-1" 10x10+1+1+1 abc 1e1x10 \
	" 10x10" 100000x1 1x1+70000+0; do
	expect_exit 2 "crop:$a is a usage error" "$CLIMG" "$D/missing.png" "crop:$a" -o "$D/x.png"
	expect_stderr "crop:$a message" "^climg: crop: "
done
expect_exit 2 "crop needs an argument" "$CLIMG" "$D/g3.png" crop -o "$D/x.png"
expect_stderr "crop message" "^climg: crop: needs one argument"
expect_exit 2 "crop:2x2+12+0 of 13x7" "$CLIMG" "$D/g3.png" crop:2x2+12+0 -o "$D/x.png"
expect_stderr "crop outside names the size" "crop: the rectangle reaches outside the 13x7 image$"
expect_exit 2 "crop:14x7 of 13x7" "$CLIMG" "$D/g3.png" crop:14x7 -o "$D/x.png"
expect_stderr "crop too wide names the size" "reaches outside the 13x7 image$"
expect_exit 2 "crop outside after a transpose" "$CLIMG" "$D/g3.png" transpose crop:8x1 -o "$D/x.png"
expect_stderr "crop after transpose names the 7x13 image" "reaches outside the 7x13 image$"
check "no output after a crop outside" test ! -e "$D/x.png"

if py=$(pyref numpy PIL); then
	"$CLIMG" --cpu "$D/g3.png" crop:5x4+7+2 -o "$D/o.png"
	"$py" -c "
import numpy, sys
from PIL import Image
a = numpy.asarray(Image.open(sys.argv[1]))[2:6, 7:12]
Image.fromarray(a).save(sys.argv[2])
" "$D/g3.png" "$D/np.png"
	same_pixels "crop = numpy slicing" "$D/o.png" "$D/np.png"
else
	echo "skipping the numpy comparison of crop: no python3 with numpy and PIL"
fi

need_opencl "crop on OpenCL" || { return 0 2>/dev/null || exit 0; }
for ch in 1 2 3 4; do
	for g in "1 1 1x1+0+0" "19 1 7x1+5+0" "1 19 1x17" "67 33 40x30+27+3" "300 7 283x5"; do
		set -- $g
		"$IMGTOOL" make "$1" "$2" "$ch" noise:3 "$D/n.png"
		expect_exit 0 "OpenCL = CPU: crop:$3 of ${1}x$2, $ch channels" \
			"$CLIMG" --verify "$D/n.png" "crop:$3" flip -o "$D/o.png"
	done
done
