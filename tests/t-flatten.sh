# SPDX-License-Identifier: MIT
# flatten and dropalpha: hand-computed pixels, the formula on every pair of a colour and an
# alpha value against awk (and numpy where python3 has it), identities, grey and RGB passing
# through, usage errors, the documentation, and OpenCL against the CPU path on odd sizes
# with 1-4 channels.

D=$T/flatten
mkdir -p "$D"
dump() { "$IMGTOOL" dump "$1" | tr '\n' '|'; }
# pokes FILE X,Y,C,V...: sets samples of FILE in place
pokes() {
	_f=$1
	shift
	for _s in "$@"; do
		IFS=, read -r _x _y _c _v <<EOF
$_s
EOF
		"$IMGTOOL" poke "$_f" "$_f" "$_x" "$_y" "$_c" "$_v" || return 1
	done
}

# ---- by hand ---------------------------------------------------------------------------
# RGBA 3x1, colour 200,100,0 at alpha 0, 255 and 128. On white (b = 255), alpha 128:
#   R (200*128 + 255*127 + 127) / 255 = 58112 / 255 = 227
#   G (100*128 + 255*127 + 127) / 255 = 45312 / 255 = 177
#   B (  0*128 + 255*127 + 127) / 255 = 32512 / 255 = 127
# on black: R (25600 + 127) / 255 = 100, G (12800 + 127) / 255 = 50, B 127 / 255 = 0.
"$IMGTOOL" make 3 1 4 const:0 "$D/a4.png"
pokes "$D/a4.png" 0,0,0,200 0,0,1,100 1,0,0,200 1,0,1,100 1,0,3,255 2,0,0,200 2,0,1,100 2,0,3,128
check "the hand-made input" test "$(dump "$D/a4.png")" = "200,100,0,0 200,100,0,255 200,100,0,128|"
for m in --cpu --device=0; do
	[ $m = --cpu ] || need_opencl "flatten's OpenCL hand cases" || break
	"$CLIMG" $m "$D/a4.png" flatten -o "$D/o.png"
	check "flatten by hand: white ($m)" test "$(dump "$D/o.png")" = "255,255,255 200,100,0 227,177,127|"
	"$CLIMG" $m "$D/a4.png" flatten:bg=black -o "$D/o.png"
	check "flatten by hand: black ($m)" test "$(dump "$D/o.png")" = "0,0,0 200,100,0 100,50,0|"
	# on 10,20,30 at alpha 128: (25600 + 1270 + 127) / 255 = 105, (12800 + 2540 + 127) / 255
	# = 60, (3810 + 127) / 255 = 15
	"$CLIMG" $m "$D/a4.png" flatten:bg=10,20,30 -o "$D/o.png"
	check "flatten by hand: 10,20,30 ($m)" test "$(dump "$D/o.png")" = "10,20,30 200,100,0 105,60,15|"
	"$CLIMG" $m "$D/a4.png" dropalpha -o "$D/o.png"
	check "dropalpha by hand ($m)" test "$(dump "$D/o.png")" = "200,100,0 200,100,0 200,100,0|"
	# grey+alpha 2x1: 100 at alpha 51, 7 at alpha 0. bg=#ff0000 is grey (9798 * 255 + 16384)
	# >> 15 = 76 here: (100*51 + 76*204 + 127) / 255 = 20731 / 255 = 81, then 76.
	"$IMGTOOL" make 2 1 2 const:0 "$D/a2.png"
	pokes "$D/a2.png" 0,0,0,100 0,0,1,51 1,0,0,7
	"$CLIMG" $m "$D/a2.png" flatten:bg=#ff0000 -o "$D/o.png"
	check "flatten by hand: grey+alpha on red's luma ($m)" test "$(dump "$D/o.png")" = "81 76|"
	"$CLIMG" $m "$D/a2.png" flatten:bg=#FF0000 -o "$D/o2.png"
	same_pixels "hex digits in either case ($m)" "$D/o.png" "$D/o2.png"
	"$CLIMG" $m "$D/a2.png" dropalpha -o "$D/o.png"
	check "dropalpha by hand: grey+alpha ($m)" test "$(dump "$D/o.png")" = "100 7|"
	check "the result is 1 channel ($m)" test "$("$IMGTOOL" info "$D/o.png")" = "2 1 1 png"
done

# ---- the formula on every pair (colour, alpha) -----------------------------------------
# xy: colour channel c of (x, y) is (x + 85 c) & 255, alpha y: all 65536 pairs in each channel.
# awk computes out = int((c a + b (255 - a) + 127) / 255) on its own.
"$IMGTOOL" make 256 256 4 xy "$D/xy4.png"
"$IMGTOOL" make 256 256 2 xy "$D/xy2.png"
# want FILE R G B: the expected dump of flattening FILE (its dump on stdin) onto R,G,B; for
# grey+alpha only R is used
want() {
	"$IMGTOOL" dump "$1" | awk -v r="$2" -v g="$3" -v b="$4" '{
		s = ""
		for (i = 1; i <= NF; i++) {
			n = split($i, v, ",")
			a = v[n]
			bg[1] = r; bg[2] = g; bg[3] = b
			p = ""
			for (c = 1; c < n; c++)
				p = p (c > 1 ? "," : "") int((v[c] * a + bg[c] * (255 - a) + 127) / 255)
			s = s (i > 1 ? " " : "") p
		}
		print s
	}'
}
for bg in "255 255 255" "0 0 0" "1 128 254" "77 77 77"; do
	set -- $bg
	want "$D/xy4.png" "$1" "$2" "$3" >"$D/want4.txt"
	"$CLIMG" --cpu "$D/xy4.png" flatten:bg=$1,$2,$3 -o "$D/o.png"
	"$IMGTOOL" dump "$D/o.png" >"$D/got.txt"
	check "flatten:bg=$1,$2,$3 = the formula on every (colour, alpha)" cmp "$D/want4.txt" "$D/got.txt"
	luma=$(((9798 * $1 + 19235 * $2 + 3735 * $3 + 16384) >> 15))
	want "$D/xy2.png" "$luma" 0 0 >"$D/want2.txt"
	"$CLIMG" --cpu "$D/xy2.png" flatten:bg=$1,$2,$3 -o "$D/o.png"
	"$IMGTOOL" dump "$D/o.png" >"$D/got.txt"
	check "flatten:bg=$1,$2,$3 on grey+alpha = the formula with luma $luma" cmp "$D/want2.txt" "$D/got.txt"
done
"$CLIMG" --cpu "$D/xy4.png" dropalpha -o "$D/o.png"
"$IMGTOOL" dump "$D/o.png" >"$D/got.txt"
"$IMGTOOL" dump "$D/xy4.png" | sed 's/,[0-9]*\( \|$\)/\1/g' >"$D/want.txt"
check "dropalpha keeps the colour channels of every pixel" cmp "$D/want.txt" "$D/got.txt"

if need_python "the numpy reference of flatten" numpy PIL; then
	# the definition, in floating point: the nearest integer to (c a + b (255 - a)) / 255,
	# which is never a tie (255 is odd)
	for bg in "#ffffff" "#000000" "#0180fe"; do
		"$PYTHON" -c "
import sys, numpy as np
from PIL import Image
im = np.asarray(Image.open(sys.argv[1]), dtype=np.float64)
bg = np.array([int(sys.argv[2][i:i + 2], 16) for i in (1, 3, 5)], dtype=np.float64)
a = im[..., 3:4]
out = np.floor((im[..., :3] * a + bg * (255 - a)) / 255 + 0.5).astype(np.uint8)
Image.fromarray(out, 'RGB').save(sys.argv[3])
" "$D/xy4.png" "$bg" "$D/np.png"
		"$CLIMG" --cpu "$D/xy4.png" flatten:bg=$bg -o "$D/o.png"
		same_pixels "flatten:bg=$bg = numpy's nearest integer" "$D/o.png" "$D/np.png"
	done
fi

# ---- identities --------------------------------------------------------------------------
for ch in 2 4; do
	"$IMGTOOL" make 37 23 $ch opaque:5 "$D/op.png"
	"$CLIMG" --cpu "$D/op.png" flatten:bg=#123456 -o "$D/a.png"
	"$CLIMG" --cpu "$D/op.png" dropalpha -o "$D/b.png"
	same_pixels "flatten of an opaque image = dropalpha ($ch channels)" "$D/a.png" "$D/b.png"
	"$IMGTOOL" make 37 23 $ch const:0 "$D/clear.png"
	"$CLIMG" --cpu "$D/clear.png" flatten:bg=9 -o "$D/a.png"
	"$IMGTOOL" make 37 23 $((ch - 1)) const:9 "$D/b.png"
	same_pixels "flatten of a transparent image is the background ($ch channels)" "$D/a.png" "$D/b.png"
	"$IMGTOOL" make 37 23 $ch noise:7 "$D/n.png"
	for bg in white 255 "#ffffff" 255,255,255; do
		"$CLIMG" --cpu "$D/n.png" flatten:bg=$bg -o "$D/a.png"
		"$CLIMG" --cpu "$D/n.png" flatten -o "$D/b.png"
		same_pixels "flatten:bg=$bg = flatten ($ch channels)" "$D/a.png" "$D/b.png"
	done
	"$CLIMG" --cpu "$D/n.png" flatten:bg=black -o "$D/a.png"
	"$CLIMG" --cpu "$D/n.png" flatten:bg=0,0,0 -o "$D/b.png"
	same_pixels "flatten:bg=black = flatten:bg=0,0,0 ($ch channels)" "$D/a.png" "$D/b.png"
	"$CLIMG" --cpu "$D/n.png" flatten dropalpha -o "$D/b.png"
	"$CLIMG" --cpu "$D/n.png" flatten -o "$D/a.png"
	same_pixels "dropalpha after flatten changes nothing ($ch channels)" "$D/a.png" "$D/b.png"
done
"$IMGTOOL" make 37 23 2 noise:7 "$D/n2.png"
"$CLIMG" --cpu "$D/n2.png" flatten:bg=77 -o "$D/a.png"
"$CLIMG" --cpu "$D/n2.png" flatten:bg=77,77,77 -o "$D/b.png"
same_pixels "a grey level V is grey V on grey+alpha" "$D/a.png" "$D/b.png"
for ch in 1 3; do
	"$IMGTOOL" make 13 7 $ch grad "$D/p.png"
	for s in flatten flatten:bg=#102030 dropalpha; do
		"$CLIMG" --cpu "$D/p.png" $s -o "$D/o.png"
		same_pixels "$s passes $ch channels through" "$D/o.png" "$D/p.png"
	done
done
# the slip these stages are for: an image with alpha into a format without it
"$IMGTOOL" make 13 7 4 noise:3 "$D/rgba.png"
"$IMGTOOL" make 13 7 2 noise:3 "$D/ga.png"
for f in "$D/rgba.png" "$D/ga.png"; do
	n=$(basename "$f")
	expect_exit 0 "flatten grey gives PGM ($n)" "$CLIMG" --cpu "$f" flatten grey -o "$D/o.pgm"
	expect_exit 0 "dropalpha grey gives PGM ($n)" "$CLIMG" --cpu "$f" dropalpha grey -o "$D/o.pgm"
done
expect_exit 0 "flatten gives PPM (RGBA)" "$CLIMG" --cpu "$D/rgba.png" flatten -o "$D/o.ppm"

# ---- usage errors ------------------------------------------------------------------------
for a in bg= bg=red bg=256 bg=-1 bg=#12345 bg=#1234567 bg=#12345g bg=#11223344 bg=1,2 \
	bg=1,2,3,4 bg=1,,3 bg=1,2,256 "bg=1, 2,3" bg=0x10; do
	expect_exit 2 "flatten:$a is a usage error" "$CLIMG" "$D/missing.png" "flatten:$a" -o "$D/x.png"
	expect_stderr "flatten:$a message" "^climg: flatten: bg must be white, black, a grey level 0-255, #RRGGBB or R,G,B, not '"
done
expect_exit 2 "flatten:white is a usage error" "$CLIMG" "$D/rgba.png" flatten:white -o "$D/x.png"
expect_stderr "flatten:white message" "^climg: flatten: unknown option 'white' \(use bg=COLOUR"
expect_exit 2 "two options" "$CLIMG" "$D/rgba.png" flatten:bg=1:bg=2 -o "$D/x.png"
expect_stderr "two options message" "^climg: flatten: takes one option at most"
expect_exit 2 "dropalpha:x is a usage error" "$CLIMG" "$D/rgba.png" dropalpha:x -o "$D/x.png"
expect_stderr "dropalpha:x message" "^climg: dropalpha: takes no arguments$"
check "no output after usage errors" test ! -e "$D/x.png"

# ---- documentation -----------------------------------------------------------------------
"$CLIMG" --help >"$D/help"
"$CLIMG" --list-stages >"$D/stages"
for u in 'flatten[:bg=COLOUR]' dropalpha; do
	check "--list-stages gives $u" grep -q "^$(printf '%s' "$u" | sed 's/[][]/\\&/g') " "$D/stages"
	check "--help gives $u" grep -qF -- "  $u " "$D/help"
	check "README gives $u" grep -qF -- "| \`$u\` |" README.md
done
check "the man page gives flatten's syntax" grep -qx '\.BR flatten \[ :bg=\\fICOLOUR\\fR \]' man/climg.1
check "the man page gives dropalpha" grep -qx '\.B dropalpha' man/climg.1
"$CLIMG" help flatten >"$D/help-flatten"
for w in '(c a + b (255 - a) + 127) / 255' 'R,G,B' '#RRGGBB' '(9798 R + 19235 G + 3735 B + 16384) >> 15'; do
	check "climg help flatten states $w" grep -qF -- "$w" "$D/help-flatten"
	check "src/stages/flatten.c states $w" grep -qF -- "$w" src/stages/flatten.c
done
if have_groff "the man-page checks of flatten"; then
	groff -man -Tascii -P-cbu man/climg.1 2>/dev/null >"$D/man"
	for w in 'flatten[:bg=COLOUR]' '(c a + b (255 - a) + 127) / 255' 'R,G,B' '#RRGGBB' dropalpha; do
		check "the man page states $w" grep -qF -- "$w" "$D/man"
	done
fi

# ---- OpenCL against the CPU path ---------------------------------------------------------
need_opencl "flatten and dropalpha on OpenCL" || { return 0 2>/dev/null || exit 0; }
# sizes: single pixels, a row, a column, under and over the CPU device's 16-pixel blocks and
# 16384-pixel pieces, with a partial last piece
for ch in 1 2 3 4; do
	for wh in "1 1" "1 19" "19 1" "17 5" "67 33" "129 129" "300 70"; do
		set -- $wh
		"$IMGTOOL" make "$1" "$2" "$ch" noise:$(($1 + $2)) "$D/n.png"
		expect_exit 0 "OpenCL = CPU: flatten ${1}x$2 $ch channels" \
			"$CLIMG" --verify "$D/n.png" flatten:bg=#0a80f5 -o "$D/o.png"
		expect_exit 0 "OpenCL = CPU: dropalpha ${1}x$2 $ch channels" \
			"$CLIMG" --verify "$D/n.png" dropalpha rotate:90 -o "$D/o.png"
	done
done
for f in "$D/xy4.png" "$D/xy2.png"; do
	n=$(basename "$f")
	"$CLIMG" --cpu "$f" flatten:bg=1,128,254 -o "$D/cpu.png"
	"$CLIMG" --device=0 "$f" flatten:bg=1,128,254 -o "$D/cl.png"
	check "OpenCL = CPU on every (colour, alpha) ($n)" cmp "$D/cpu.png" "$D/cl.png"
done
