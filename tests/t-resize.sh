# SPDX-License-Identifier: MIT
# resize: sizes and their rounding, hand-computed pixels, identities, usage errors and limits,
# OpenCL against the CPU path on odd sizes with 1-4 channels for every filter, and OpenCV and
# Pillow where python3 has them (byte for byte; area within 1).
. tests/pyref.sh

D=$T/resize
mkdir -p "$D"
"$IMGTOOL" make 13 7 3 grad "$D/g3.png"
size() { "$CLIMG" --cpu "$1" "$2" -o "$D/s.png" && "$IMGTOOL" info "$D/s.png" | cut -d' ' -f1,2; }
# 13x7: 7 * 6 / 13 = 3.23 -> 3; 13 * 4 / 7 = 7.43 -> 7; 50%: 6.5 -> 7, 3.5 -> 4
for c in "resize:6x5 6 5" "resize:6 6 3" "resize:6x 6 3" "resize:x4 7 4" "resize:50% 7 4" \
	"resize:200% 26 14" "resize:10x10:fit 10 5" "resize:100x2:fit 4 2" "resize:1 1 1" \
	"resize:x1 2 1" "resize:0.1% 1 1" "resize:26x3:fit 6 3"; do
	set -- $c
	check "$1 of 13x7 is ${2}x$3" test "$(size "$D/g3.png" "$1")" = "$2 $3"
done

# hand-computed: 4x1 grey 0 100 200 250 to 2x1. nearest: s = (4 << 16 + 1) / 2 = 131072,
# columns (s x + 65536) >> 16 = 1, 3: 100 250. bilinear: f = 2x + 0.5: 0.5, 2.5 -> (0 + 100)
# / 2 = 50, (200 + 250) / 2 = 225. area: (0 + 100) / 2, (200 + 250) / 2.
printf 'P5\n4 1\n255\n\0\144\310\372' >"$D/row.pgm"
for c in "nearest 100 250" "bilinear 50 225" "area 50 225"; do
	set -- $c
	"$CLIMG" --cpu "$D/row.pgm" "resize:2x1:$1" -o "$D/o.pgm"
	check "resize:2x1:$1 by hand" test "$("$IMGTOOL" dump "$D/o.pgm")" = "$2 $3"
done
# 1x1 to 3x2 with every filter is the one value everywhere
printf 'P5\n1 1\n255\n\173' >"$D/one.pgm"
for f in nearest bilinear area cubic lanczos; do
	"$CLIMG" --cpu "$D/one.pgm" "resize:3x2:$f" -o "$D/o.pgm"
	check "resize of one pixel, $f" test "$("$IMGTOOL" dump "$D/o.pgm" | tr '\n' ' ')" = "123 123 123 123 123 123 "
done

"$IMGTOOL" make 11 9 4 F "$D/f4.png"
"$IMGTOOL" make 10 3 2 grad "$D/g2.png"
"$IMGTOOL" make 6 5 1 F "$D/f1.pgm"
for f in "$D/g3.png" "$D/f4.png" "$D/g2.png" "$D/f1.pgm"; do
	n=$(basename "$f")
	set -- $("$IMGTOOL" info "$f")
	for flt in nearest bilinear area cubic lanczos; do
		"$CLIMG" --cpu "$f" "resize:${1}x$2:$flt" -o "$D/id.png"
		same_pixels "resize to the same size is the identity ($flt, $n)" "$D/id.png" "$f"
	done
	# nearest by whole factors: 3x bigger, then every third pixel back
	"$CLIMG" --cpu "$f" resize:300%:nearest "resize:${1}x$2:nearest" -o "$D/id.png"
	same_pixels "nearest 300% and back is the identity ($n)" "$D/id.png" "$f"
	# resizing commutes with flop for nearest where the sizes divide evenly
	"$CLIMG" --cpu "$f" resize:200%:nearest flop -o "$D/a.png"
	"$CLIMG" --cpu "$f" flop resize:200%:nearest -o "$D/b.png"
	same_pixels "resize:200%:nearest commutes with flop ($n)" "$D/a.png" "$D/b.png"
done
# a constant image stays constant with every filter (weights sum to one)
"$IMGTOOL" make 37 23 3 const:77 "$D/c.png"
"$IMGTOOL" make 11 5 3 const:77 "$D/c-small.png"
"$IMGTOOL" make 80 41 3 const:77 "$D/c-big.png"
for flt in nearest bilinear area cubic lanczos; do
	"$CLIMG" --cpu "$D/c.png" "resize:11x5:$flt" -o "$D/o.png"
	same_pixels "a constant image shrinks to constant ($flt)" "$D/o.png" "$D/c-small.png"
	"$CLIMG" --cpu "$D/c.png" "resize:80x41:$flt" -o "$D/o.png"
	same_pixels "a constant image grows to constant ($flt)" "$D/o.png" "$D/c-big.png"
done

for a in "" 0x10 10x0 abc x 10xabc 0% -5% nan% 70000 10x10:cubic:nearest 10:fit x10:fit \
	10x10:fit:fit 10x10:bicubic " 10" 1e3; do
	expect_exit 2 "resize:$a is a usage error" "$CLIMG" "$D/missing.png" "resize:$a" -o "$D/x.png"
	expect_stderr "resize:$a message" "^climg: resize: "
done
expect_exit 2 "resize needs a size" "$CLIMG" "$D/g3.png" resize -o "$D/x.png"
expect_stderr "resize message" "^climg: resize: needs a size"
expect_exit 2 "resize past the side limit" "$CLIMG" "$D/g3.png" resize:1000000% -o "$D/x.png"
expect_stderr "resize side limit message" "65535 pixels a side"
expect_exit 2 "resize past --max-pixels" "$CLIMG" --max-pixels 1000 "$D/g3.png" resize:100x100 -o "$D/x.png"
expect_stderr "resize --max-pixels names the limit" "max-pixels"
check "no output after a refused resize" test ! -e "$D/x.png"

if py=$(pyref cv2 numpy PIL); then
	for ch in 1 2 3 4; do
		"$IMGTOOL" make 61 37 "$ch" photo:3 "$D/p.png"
		for s in 29x50 150x77 7x90 61x80 100x37 1x1 2x3; do
			w=${s%x*}
			h=${s#*x}
			for flt in nearest bilinear area cubic lanczos; do
				"$CLIMG" --cpu "$D/p.png" "resize:$s:$flt" -o "$D/o.png"
				r=$("$py" -c "
import cv2, numpy, sys
from PIL import Image
w, h, f = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
im = Image.open(sys.argv[1])
if f in ('cubic', 'lanczos'):
    r = numpy.asarray(im.resize((w, h), Image.BICUBIC if f == 'cubic' else Image.LANCZOS))
else:
    flag = {'nearest': cv2.INTER_NEAREST_EXACT, 'bilinear': cv2.INTER_LINEAR_EXACT,
            'area': cv2.INTER_AREA}[f]
    r = cv2.resize(numpy.asarray(im), (w, h), interpolation=flag)
b = numpy.asarray(Image.open(sys.argv[5]))
print(int(numpy.abs(r.astype(int) - b.astype(int)).max()) if r.shape == b.shape else 999)
" "$D/p.png" "$w" "$h" "$flt" "$D/o.png")
				want=0
				[ "$flt" = area ] && want=1
				check "resize:$s:$flt of 61x37x$ch within $want of the reference (got $r)" test "$r" -le "$want"
			done
		done
	done
else
	echo "skipping the OpenCV and Pillow comparisons of resize: no python3 with cv2, numpy and PIL"
fi

need_opencl "resize on OpenCL" || { return 0 2>/dev/null || exit 0; }
for ch in 1 2 3 4; do
	"$IMGTOOL" make 67 33 "$ch" noise:4 "$D/n.png"
	for s in 1x1 31x17 200x9 3x100 67x1; do
		for flt in nearest bilinear area cubic lanczos; do
			expect_exit 0 "OpenCL = CPU: resize:$s:$flt of 67x33, $ch channels" \
				"$CLIMG" --verify "$D/n.png" "resize:$s:$flt" -o "$D/o.png"
		done
	done
done
