# SPDX-License-Identifier: MIT
# rotate by any angle: identities, sizes, hand-computed pixels, the limits and the messages on
# the CPU path; then OpenCL against the CPU path byte for byte for every mode on odd sizes
# with 1-4 channels. tests/unit.c checks the arithmetic itself (sizes table, right angles
# through the mapping, a bright pixel at 30, 45 and 135 degrees, 30 and back).

D=$T/rotate
mkdir -p "$D"
"$IMGTOOL" make 13 7 3 grad "$D/rgb.png"
"$IMGTOOL" make 13 7 4 F "$D/f4.png"
"$IMGTOOL" make 6 5 1 F "$D/f1.pgm"
"$IMGTOOL" make 10 10 2 grad "$D/ga.png"

# ---- identities and the exact path ---------------------------------------------------------
for f in "$D/rgb.png" "$D/f4.png" "$D/f1.pgm" "$D/ga.png"; do
	n=$(basename "$f")
	for a in 360 -720 0 0.0 -0 360:crop:nearest; do
		"$CLIMG" --cpu "$f" "rotate:$a" -o "$D/id.png"
		same_pixels "rotate:$a is the identity ($n)" "$D/id.png" "$f"
	done
	"$CLIMG" --cpu "$f" rotate:90 -o "$D/r90.png"
	"$CLIMG" --cpu "$f" transpose -o "$D/t.png"
	"$IMGTOOL" mirror "$D/t.png" "$D/want.png"
	same_pixels "rotate:90 is the exact remap ($n)" "$D/r90.png" "$D/want.png"
	for a in 90:bilinear 90:nearest 450 -270:expand 90:bg=#ff0000; do
		"$CLIMG" --cpu "$f" "rotate:$a" -o "$D/a.png"
		same_pixels "rotate:$a = rotate:90 ($n)" "$D/a.png" "$D/r90.png"
	done
	# 30 twelve times is a full turn, but every step resamples: not the identity, and the
	# canvas grows; 30 and back with crop keeps the size
	"$CLIMG" --cpu "$f" rotate:30:crop rotate:-30:crop -o "$D/back.png"
	check "rotate 30 and back with crop keeps the size ($n)" sh -c \
		"test \"\$('$IMGTOOL' info '$D/back.png')\" = \"\$('$IMGTOOL' info '$f' | sed 's/ [a-z]*\$/ png/')\""
done
# on a square image crop changes nothing for 90
"$CLIMG" --cpu "$D/ga.png" rotate:90:crop -o "$D/a.png"
"$CLIMG" --cpu "$D/ga.png" rotate:90 -o "$D/b.png"
same_pixels "rotate:90:crop of a square is rotate:90" "$D/a.png" "$D/b.png"

# ---- sizes (the table is in tests/unit.c) ---------------------------------------------------
# 13x7 at 30: 13 cos 30 + 7 sin 30 = 14.76, 13 sin 30 + 7 cos 30 = 12.56
for a in 30 -30 390 -330 150 210; do
	"$CLIMG" --cpu "$D/rgb.png" "rotate:$a" -o "$D/s.png"
	check "rotate:$a of 13x7 is 15x13" test "$("$IMGTOOL" info "$D/s.png")" = "15 13 3 png"
done
"$CLIMG" --cpu "$D/rgb.png" rotate:60 -o "$D/s.png"
check "rotate:60 of 13x7 is 13x15" test "$("$IMGTOOL" info "$D/s.png")" = "13 15 3 png"
"$CLIMG" --cpu "$D/rgb.png" rotate:30:crop -o "$D/s.png"
check "rotate:30:crop of 13x7 is 13x7" test "$("$IMGTOOL" info "$D/s.png")" = "13 7 3 png"
"$CLIMG" --cpu "$D/rgb.png" rotate:0.000001 -o "$D/s.png"
check "rotate:0.000001 of 13x7 is 13x7" test "$("$IMGTOOL" info "$D/s.png")" = "13 7 3 png"
same_pixels "rotate:0.000001 samples every pixel centre exactly" "$D/s.png" "$D/rgb.png"

# ---- hand-computed pixels (the arithmetic is spelled out in tests/unit.c) -----------------
# a 1x1 grey 200 at 45 degrees: a 2x2 canvas, each pixel 75/256 of 200 over black = 59
"$IMGTOOL" make 1 1 1 const:200 "$D/one.pgm"
"$CLIMG" --cpu "$D/one.pgm" rotate:45 -o "$D/o.pgm"
check "rotate:45 of one pixel by hand" test "$("$IMGTOOL" dump "$D/o.pgm" | tr '\n' ' ')" = "59 59 59 59 "
"$CLIMG" --cpu "$D/one.pgm" rotate:-135:bg=#ff0000 -o "$D/o.pgm"
# 59 + 181/256 of red's luma 76 (BT.601): (75*256*200 + 181*256*76 + 2^15) >> 16 = 112
check "rotate:-135 over a red background by hand" test "$("$IMGTOOL" dump "$D/o.pgm" | tr '\n' ' ')" = "112 112 112 112 "
# 3x1 RGB at 180 + 90 + 0.0 through nearest: right angles, exact
printf 'P6\n3 1\n255\n\1\2\3\4\5\6\7\10\11' >"$D/row.ppm"
"$CLIMG" --cpu "$D/row.ppm" rotate:270:nearest -o "$D/o.ppm"
check "rotate:270 of a 3x1 row by hand" test "$("$IMGTOOL" dump "$D/o.ppm" | tr '\n' ' ')" = "7,8,9 4,5,6 1,2,3 "

# ---- usage errors: exit 2 before any pixel is read, naming the culprit ----------------------
for a in abc nan inf -inf 1e999 0x10 "" "30:cubic" "30:crop:expand" "30:nearest:nearest" \
	"30:bg=256" "30:bg=#12345" "30:bg=red" "30:bg=1:bg=2"; do
	expect_exit 2 "rotate:$a is a usage error" "$CLIMG" "$D/missing.png" "rotate:$a" -o "$D/x.png"
	check "rotate:$a message" grep -q '^climg: rotate: ' "$T/err"
done
expect_exit 2 "rotate:abc" "$CLIMG" "$D/rgb.png" rotate:abc -o "$D/x.png"
expect_stderr "rotate:abc message" "^climg: rotate: angle must be a number, not 'abc'$"
expect_exit 2 "rotate:1e999" "$CLIMG" "$D/rgb.png" rotate:1e999 -o "$D/x.png"
expect_stderr "rotate:1e999 message" "^climg: rotate: angle must be a number, not '1e999'$"
expect_exit 2 "rotate bg" "$CLIMG" "$D/rgb.png" rotate:30:bg=#zz0000 -o "$D/x.png"
expect_stderr "rotate bg message" "^climg: rotate: bg must be a grey level 0-255, #RRGGBB or #RRGGBBAA, not '#zz0000'$"
expect_exit 2 "rotate unknown option" "$CLIMG" "$D/rgb.png" rotate:30:bicubic -o "$D/x.png"
expect_stderr "rotate unknown option message" "unknown option 'bicubic'"
expect_exit 2 "rotate contradicting options" "$CLIMG" "$D/rgb.png" rotate:30:crop:expand -o "$D/x.png"
expect_stderr "rotate contradicting options message" "'expand' repeats or contradicts"
check_not "nothing written after rotate usage errors" test -e "$D/x.png"

# ---- limits: the expanded canvas obeys --max-pixels and the 65535 side limit ---------------
"$IMGTOOL" make 10 10 1 grad "$D/ten.pgm"
expect_exit 2 "expanded canvas over --max-pixels" "$CLIMG" --cpu --max-pixels 100 "$D/ten.pgm" rotate:45 -o "$D/x.png"
expect_stderr "max-pixels message" "^climg: rotate:45: the output would be 15x15 = 225 pixels, more than --max-pixels 100$"
expect_exit 0 "crop stays within --max-pixels" "$CLIMG" --cpu --max-pixels 100 "$D/ten.pgm" rotate:45:crop -o "$D/x.png"
# a PNG header saying 65535x30000 grey, then the start of an IDAT chunk: enough for the
# planner, which must refuse before decoding (67554 a side); with crop it goes on to decode
# and fails on the missing data instead
printf '\211PNG\r\n\032\n\0\0\0\rIHDR\0\0\377\377\0\0\165\060\010\0\0\0\0\137\266\237\121\0\0\0\144IDAT' >"$D/huge.png"
expect_exit 2 "expanded canvas over 65535 a side" "$CLIMG" --cpu --max-pixels 4294836225 "$D/huge.png" rotate:45 -o "$D/x2.png"
expect_stderr "side limit message" "^climg: rotate:45: the output would be 67554x67554 pixels; sides are limited to 65535$"
expect_exit 1 "cropped canvas is planned (then decoding fails)" "$CLIMG" --cpu --max-pixels 4294836225 "$D/huge.png" rotate:45:crop -o "$D/x2.png"
expect_stderr "crop: the decoder, not the planner, fails" "huge.png"
check_not "nothing written after limit errors" test -e "$D/x2.png"

# ---- OpenCL against the CPU path, byte for byte ---------------------------------------------
need_opencl "rotate OpenCL tests" || { return 0 2>/dev/null || exit 0; }
# --verify compares after every stage, so each chain checks each of its stages. A: bilinear
# and nearest, expand and crop, backgrounds; B: right angles cropped (the nearest mapping),
# angles near 0 and 90, more backgrounds.
A="rotate:30 rotate:-45:crop rotate:135:nearest rotate:17.5:bg=#ff000080:crop rotate:-100:bg=200"
B="rotate:90:crop rotate:270:crop:nearest:bg=#12345678 rotate:0.001 rotate:89.999:nearest rotate:-30:nearest:crop:bg=#0a0b0c rotate:200:bilinear:bg=#ffffff00"
for size in 1x1 1x17 17x1 2x3 13x7 61x37 257x131; do
	w=${size%x*}
	h=${size#*x}
	for ch in 1 2 3 4; do
		img="$D/in-$size-$ch.png"
		"$IMGTOOL" make "$w" "$h" "$ch" noise:$((w * 7 + h * 3 + ch)) "$img"
		for chain in "$A" "$B"; do
			# shellcheck disable=SC2086
			if "$CLIMG" "$img" $chain --verify -o "$D/cl.png" >"$T/out" 2>"$T/err"; then ok; else
				bad "rotate opencl = cpu $size ch=$ch: $chain"
				sed 's/^/    | /' "$T/err" | head -n 3
			fi
		done
	done
done
# and without --verify: the OpenCL output file equals the CPU one
"$IMGTOOL" make 640 480 4 photo:3 "$D/photo.png"
for a in 33.3 -12:nearest 77:crop:bg=#80808080; do
	"$CLIMG" "$D/photo.png" "rotate:$a" -o "$D/cl.png" 2>"$T/err"
	"$CLIMG" --cpu "$D/photo.png" "rotate:$a" -o "$D/cpu.png"
	check "rotate:$a 640x480 RGBA: OpenCL file = CPU file" cmp "$D/cl.png" "$D/cpu.png"
done
# RGB and grey take the bilinear kernels without alpha (rotate_bilinear_c1, _c3)
for ch in 1 3; do
	"$IMGTOOL" make 643 481 $ch photo:4 "$D/photo$ch.png"
	for a in 30 -45 100.5 7:crop 0.5; do
		"$CLIMG" "$D/photo$ch.png" "rotate:$a" -o "$D/cl.png" 2>"$T/err"
		"$CLIMG" --cpu "$D/photo$ch.png" "rotate:$a" -o "$D/cpu.png"
		check "rotate:$a 643x481 ch=$ch: OpenCL file = CPU file" cmp "$D/cl.png" "$D/cpu.png"
	done
done
