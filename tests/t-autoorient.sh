# SPDX-License-Identifier: MIT
# autoorient: the eight Exif orientations on a 3x2 image by hand, and each the stage it
# stands for (PNG and JPEG, either byte order); images without the tag pass through; the tag
# turns the image the stage gets and is 1 afterwards; malformed Exif blocks warn and pass
# through; Pillow's ImageOps.exif_transpose byte for byte where python3 has it; OpenCL
# against the CPU path on odd sizes with 1-4 channels. Exif images are made by
# tests/metatool (and by Pillow for its comparison).
. tests/pyref.sh

D=$T/autoorient
mkdir -p "$D"
dump() { "$IMGTOOL" dump "$1" | tr '\n' '|'; }

# a 3x2 RGB image, every sample distinct: row 0 = A B C, row 1 = D E F
printf 'P6\n3 2\n255\n\1\2\3\4\5\6\7\10\11\12\13\14\15\16\17\20\21\22' >"$D/rgb.ppm"
"$IMGTOOL" convert "$D/rgb.ppm" "$D/rgb.png"
A=1,2,3 B=4,5,6 C=7,8,9 D_=10,11,12 E=13,14,15 F=16,17,18
want_1="$A $B $C|$D_ $E $F|"
want_2="$C $B $A|$F $E $D_|"
want_3="$F $E $D_|$C $B $A|"
want_4="$D_ $E $F|$A $B $C|"
want_5="$A $D_|$B $E|$C $F|"
want_6="$D_ $A|$E $B|$F $C|"
want_7="$F $C|$E $B|$D_ $A|"
want_8="$C $F|$B $E|$A $D_|"
for o in 1 2 3 4 5 6 7 8; do
	"$METATOOL" add-exif "o=$o" "$D/rgb.png" "$D/e$o.png"
	"$CLIMG" --cpu "$D/e$o.png" autoorient -o "$D/o.png"
	eval "want=\$want_$o"
	check "autoorient by hand: orientation $o" test "$(dump "$D/o.png")" = "$want"
	check "autoorient: orientation $o becomes 1" test "$("$METATOOL" orient "$D/o.png")" = 1
done

# each orientation is the stage it stands for, on a larger image: PNG (little-endian Exif)
# and JPEG (big-endian), 4 channels and 3
"$IMGTOOL" make 13 7 4 F "$D/f.png"
"$IMGTOOL" make 17 11 3 photo:3 "$D/p.jpg"
set -- "" flop rotate:180 flip transpose rotate:90 transverse rotate:270
for o in 2 3 4 5 6 7 8; do
	eval "op=\${$o}"
	"$METATOOL" add-exif "o=$o" "$D/f.png" "$D/ef.png"
	"$CLIMG" --cpu "$D/ef.png" autoorient -o "$D/a.png"
	"$CLIMG" --cpu "$D/f.png" "$op" -o "$D/b.png"
	same_pixels "autoorient = $op for orientation $o (PNG)" "$D/a.png" "$D/b.png"
	"$METATOOL" add-exif "o=$o,be" "$D/p.jpg" "$D/ep.jpg"
	"$CLIMG" --cpu "$D/ep.jpg" autoorient -o "$D/a.png"
	"$CLIMG" --cpu "$D/p.jpg" "$op" -o "$D/b.png"
	same_pixels "autoorient = $op for orientation $o (JPEG, big-endian Exif)" "$D/a.png" "$D/b.png"
done

# no Exif, or Exif without the tag, or orientation 1: the image passes through
"$METATOOL" add-exif be "$D/f.png" "$D/notag.png"
"$METATOOL" add-exif o=1 "$D/f.png" "$D/one.png"
for f in f notag one; do
	"$CLIMG" --cpu "$D/$f.png" autoorient -o "$D/o.png"
	same_pixels "autoorient passes $f.png through" "$D/o.png" "$D/f.png"
done
check "orientation 1: the tag stays 1" test "$("$METATOOL" orient "$D/o.png")" = 1
"$CLIMG" --cpu "$D/notag.png" autoorient -o "$D/o.png"
check "no tag: the output has none either" test "$("$METATOOL" orient "$D/o.png")" = 0

# the tag turns the image the stage gets: rotate:90 then orientation 6 (rotate:90) is
# rotate:180; the tag is 1 after the first autoorient, so a second does nothing
"$METATOOL" add-exif o=6 "$D/f.png" "$D/e6.png"
"$CLIMG" --cpu "$D/e6.png" rotate:90 autoorient -o "$D/a.png"
"$CLIMG" --cpu "$D/f.png" rotate:180 -o "$D/b.png"
same_pixels "rotate:90 autoorient = rotate:180 for orientation 6" "$D/a.png" "$D/b.png"
"$CLIMG" --cpu "$D/e6.png" autoorient autoorient -o "$D/a.png"
"$CLIMG" --cpu "$D/f.png" rotate:90 -o "$D/b.png"
same_pixels "autoorient twice = once" "$D/a.png" "$D/b.png"
# the other stages leave the tag as it was; --strip writes no Exif at all
"$CLIMG" --cpu "$D/e6.png" invert rotate:90 -o "$D/o.png"
check "without autoorient the tag stays 6" test "$("$METATOOL" orient "$D/o.png")" = 6
"$CLIMG" --cpu -q "$D/e6.png" rotate:90 -o "$D/o.jpg"
check "without autoorient the tag stays 6 (JPEG output)" test "$("$METATOOL" orient "$D/o.jpg")" = 6
"$METATOOL" add-exif o=1 "$D/f.png" "$D/e1.png"
"$METATOOL" get-exif "$D/e1.png" "$D/want.exif"
for x in png jpg; do
	"$CLIMG" --cpu -q "$D/e6.png" autoorient -o "$D/o.$x"
	"$METATOOL" get-exif "$D/o.$x" "$D/got.exif"
	check "after autoorient the Exif block is the input's with orientation 1 ($x)" \
		cmp "$D/got.exif" "$D/want.exif"
	"$CLIMG" --cpu -q --strip "$D/e6.png" autoorient -o "$D/o.$x"
	check_not "--strip: no Exif block ($x)" "$METATOOL" get-exif "$D/o.$x" "$D/got.exif"
done
"$CLIMG" --cpu --strip "$D/e6.png" autoorient -o "$D/a.png"
"$CLIMG" --cpu "$D/f.png" rotate:90 -o "$D/b.png"
same_pixels "--strip: autoorient still turns the image" "$D/a.png" "$D/b.png"

expect_exit 2 "autoorient:x is a usage error" "$CLIMG" "$D/f.png" autoorient:x -o "$D/x.png"
expect_stderr "autoorient:x message" "^climg: autoorient: takes no arguments$"

# malformed Exif blocks: a warning naming the input and why, the image passed through,
# the block written as it came
"$IMGTOOL" convert "$D/p.jpg" "$D/b.png"
for spec in o=9 o=0 o=6,type=4 o=6,ifd=5000 o=6,count=9000 o=6,len=5 o=6,be,len=20; do
	"$METATOOL" add-exif "$spec" "$D/p.jpg" "$D/bad.jpg"
	expect_exit 0 "malformed Exif ($spec): no failure" \
		"$CLIMG" --cpu "$D/bad.jpg" autoorient -o "$D/o.jpg"
	expect_stderr "malformed Exif ($spec): warned" \
		"^climg: warning: .*bad\.jpg: malformed Exif block \(.+\): its orientation is not read$"
	"$CLIMG" --cpu -q "$D/bad.jpg" autoorient -o "$D/o.png"
	same_pixels "malformed Exif ($spec): passed through" "$D/o.png" "$D/b.png"
	"$METATOOL" get-exif "$D/bad.jpg" "$D/want.exif"
	"$METATOOL" get-exif "$D/o.jpg" "$D/got.exif"
	check "malformed Exif ($spec): the block kept as it was" cmp "$D/got.exif" "$D/want.exif"
done
expect_exit 0 "-q: no warning for a malformed block" "$CLIMG" -q --cpu "$D/bad.jpg" autoorient -o "$D/q.png"
check "-q: stderr empty" test ! -s "$T/err"

# Pillow's ImageOps.exif_transpose, byte for byte: PNGs of 1-4 channels and a JPEG, with the
# orientations written by Pillow itself
if py=$(pyref numpy PIL); then
	"$py" -c "
import sys, numpy
from PIL import Image, ImageOps
d = sys.argv[1]
rng = numpy.random.default_rng(5)
for mode, shape in (('L', (7, 13)), ('LA', (7, 13, 2)), ('RGB', (9, 5, 3)), ('RGBA', (11, 6, 4))):
    im = Image.fromarray(rng.integers(0, 256, shape, dtype=numpy.uint8), mode)
    for o in range(1, 9):
        ex = Image.Exif()
        ex[274] = o
        im.save('%s/pil-%s-%d.png' % (d, mode, o), exif=ex.tobytes())
        ImageOps.exif_transpose(Image.open('%s/pil-%s-%d.png' % (d, mode, o))).save('%s/ref-%s-%d.png' % (d, mode, o))
        if mode == 'RGB':
            im.resize((37, 21)).save('%s/pil-jpg-%d.jpg' % (d, o), exif=ex.tobytes(), quality=92)
            ImageOps.exif_transpose(Image.open('%s/pil-jpg-%d.jpg' % (d, o))).save('%s/ref-jpg-%d.png' % (d, o))
" "$D"
	for o in 1 2 3 4 5 6 7 8; do
		for m in L LA RGB RGBA; do
			"$CLIMG" --cpu "$D/pil-$m-$o.png" autoorient -o "$D/o.png"
			same_pixels "autoorient = Pillow exif_transpose ($m, orientation $o)" \
				"$D/o.png" "$D/ref-$m-$o.png"
		done
		"$CLIMG" --cpu "$D/pil-jpg-$o.jpg" autoorient -o "$D/o.png"
		same_pixels "autoorient = Pillow exif_transpose (JPEG, orientation $o)" \
			"$D/o.png" "$D/ref-jpg-$o.png"
		"$CLIMG" --cpu "$D/pil-jpg-$o.jpg" autoorient -o "$D/o.jpg"
		check "Pillow reads orientation 1 after autoorient ($o)" test "$("$py" -c "
import sys
from PIL import Image
print(Image.open(sys.argv[1]).getexif().get(274))" "$D/o.jpg")" = 1
	done
else
	echo "skipping the Pillow comparisons of autoorient: no python3 with numpy and PIL"
fi

need_opencl "autoorient on OpenCL" || { return 0 2>/dev/null || exit 0; }
mkdir -p "$D/cl"
for ch in 1 2 3 4; do
	for wh in "1 1" "1 19" "19 1" "17 5" "67 33"; do
		set -- $wh
		"$IMGTOOL" make "$1" "$2" "$ch" noise:7 "$D/n.png"
		for o in 2 3 4 5 6 7 8; do
			"$METATOOL" add-exif "o=$o" "$D/n.png" "$D/cl/$o.png"
		done
		expect_exit 0 "OpenCL = CPU: autoorient 2-8 ${1}x$2 $ch channels" \
			"$CLIMG" --verify "$D"/cl/?.png autoorient -o "$D/cl/out-%n.png"
	done
done
"$METATOOL" add-exif o=6 "$D/p.jpg" "$D/ep.jpg"
"$CLIMG" "$D/ep.jpg" autoorient -o "$D/a.png"
"$CLIMG" --cpu "$D/ep.jpg" autoorient -o "$D/b.png"
same_pixels "autoorient on the device = the CPU path (JPEG, orientation 6)" "$D/a.png" "$D/b.png"
