# SPDX-License-Identifier: MIT
# Image input and output (src/io), through tests/imgtool only (not the climg binary).
# Sourced by tests/run.sh: uses check, check_not, expect_exit, expect_stderr, same_pixels
# from tests/lib.sh, the scratch directory $T and $IMGTOOL. Helpers and variables here
# start with io_ so they cannot clash with other t-*.sh files.

io_d=$T/io
rm -rf "$io_d"
mkdir -p "$io_d"

# io_dump NAME FILE LINE...: `imgtool dump FILE` prints exactly the LINEs.
io_dump() {
	_n=$1
	_f=$2
	shift 2
	printf '%s\n' "$@" >"$io_d/want"
	if "$IMGTOOL" dump "$_f" >"$io_d/got" 2>&1 && cmp -s "$io_d/want" "$io_d/got"; then ok; else
		bad "$_n"
		diff "$io_d/want" "$io_d/got" | head -n 6 | sed 's/^/    | /'
	fi
}

# io_info NAME FILE "W H CH FORMAT"
io_info() {
	if [ "$("$IMGTOOL" info "$2" 2>&1)" = "$3" ]; then ok; else
		bad "$1 (info: '$("$IMGTOOL" info "$2" 2>&1)', want '$3')"
	fi
}

# io_le NAME VALUE MAX: passes when the number VALUE is <= MAX.
io_le() {
	if [ -n "$2" ] && [ "$2" -le "$3" ] 2>/dev/null; then ok; else
		bad "$1 (got '$2', want <= $3)"
	fi
}

# io_no_temp NAME DIR: passes when DIR holds no climg temporary file.
io_no_temp() {
	if ls -A "$2" | grep -q '\.climg-'; then
		bad "$1 (temporary file left: $(ls -A "$2" | grep '\.climg-' | head -n 1))"
	else ok; fi
}

# ---- the tools themselves can fail -----------------------------------------------------
"$IMGTOOL" make 13 7 3 grad "$io_d/a.png"
"$IMGTOOL" make 13 7 3 impulse:12:6 "$io_d/b.png"
check_not "io: cmp detects a difference" "$IMGTOOL" cmp "$io_d/a.png" "$io_d/b.png"
expect_exit 1 "io: cmp exits 1 on a difference" "$IMGTOOL" cmp "$io_d/a.png" "$io_d/b.png"
check "io: cmp names the first difference" grep -q '^x=0 y=0 c=1: A=67 B=0$' "$T/out"
"$IMGTOOL" make 13 7 4 grad "$io_d/c.png"
expect_exit 1 "io: cmp exits 1 on a geometry difference" "$IMGTOOL" cmp "$io_d/a.png" "$io_d/c.png"
check "io: cmp names the geometry" grep -q 'is 13x7x3.* is 13x7x4' "$T/out"
"$IMGTOOL" make 3 2 4 impulse:1:0 "$io_d/imp.png"
io_dump "io: impulse pattern (alpha 255)" "$io_d/imp.png" \
	"0,0,0,255 255,255,255,255 0,0,0,255" "0,0,0,255 0,0,0,255 0,0,0,255"
"$IMGTOOL" make 3 2 2 grad "$io_d/g.png"
io_dump "io: grad pattern" "$io_d/g.png" "0,67 5,72 10,77" "11,78 17,84 23,90"
"$IMGTOOL" make 6 5 1 F "$io_d/f.pgm"
io_dump "io: letter F" "$io_d/f.pgm" \
	"0 255 255 255 255 0" "0 255 0 0 0 0" "0 255 255 0 0 0" "0 255 0 0 0 0" "0 255 0 0 0 0"
"$IMGTOOL" mirror "$io_d/f.pgm" "$io_d/fm.pgm"
io_dump "io: mirror" "$io_d/fm.pgm" \
	"0 255 255 255 255 0" "0 0 0 0 255 0" "0 0 0 255 255 0" "0 0 0 0 255 0" "0 0 0 0 255 0"
"$IMGTOOL" flip "$io_d/f.pgm" "$io_d/ff.pgm"
io_dump "io: flip" "$io_d/ff.pgm" \
	"0 255 0 0 0 0" "0 255 0 0 0 0" "0 255 255 0 0 0" "0 255 0 0 0 0" "0 255 255 255 255 0"
"$IMGTOOL" mirror "$io_d/g.png" "$io_d/gm.png"
io_dump "io: mirror keeps channels together" "$io_d/gm.png" "10,77 5,72 0,67" "23,90 17,84 11,78"
check "io: maxdiff of an image with itself is 0" \
	test "$("$IMGTOOL" maxdiff "$io_d/a.png" "$io_d/a.png")" = 0
"$IMGTOOL" make 13 7 3 const:0 "$io_d/zero.png"
check "io: maxdiff sees an impulse" \
	test "$("$IMGTOOL" maxdiff "$io_d/zero.png" "$io_d/b.png")" = 255

# ---- lossless round trips --------------------------------------------------------------
# Each format and channel count it keeps, written by img_encode and read back (TGA by
# imgtool's own decoder), equals the PNG of the same pattern.
for io_fc in png:1 png:2 png:3 png:4 ppm:3 pgm:1 bmp:3 bmp:4 tga:1 tga:2 tga:3 tga:4; do
	io_fmt=${io_fc%:*}
	io_ch=${io_fc#*:}
	for io_case in "13 7 grad" "1 1 grad" "1 9 grad" "9 1 grad" "13 7 F" "13 7 noise:5" \
		"8 8 const:255" "64 48 noise:9"; do
		# shellcheck disable=SC2086 # split "W H PATTERN" on purpose
		set -- $io_case
		"$IMGTOOL" make "$1" "$2" "$io_ch" "$3" "$io_d/ref.png"
		"$IMGTOOL" make "$1" "$2" "$io_ch" "$3" "$io_d/rt.$io_fmt"
		same_pixels "io: $io_fmt ch=$io_ch $io_case round trip" "$io_d/ref.png" "$io_d/rt.$io_fmt"
	done
done
# The same byte layout seen through the format's own header (not only by comparison).
"$IMGTOOL" make 3 2 3 grad "$io_d/rt.ppm"
io_dump "io: ppm pixels" "$io_d/rt.ppm" "0,67,134 5,72,139 10,77,144" "11,78,145 17,84,151 23,90,157"
io_info "io: ppm info" "$io_d/rt.ppm" "3 2 3 ppm"
"$IMGTOOL" make 3 2 4 grad "$io_d/rt.bmp"
io_dump "io: 32-bit bmp keeps alpha" "$io_d/rt.bmp" \
	"0,67,134,201 5,72,139,206 10,77,144,211" "11,78,145,212 17,84,151,218 23,90,157,224"
# BMP has no grey: 1 and 2 channels are written as grey RGB, alpha dropped.
"$IMGTOOL" make 2 1 1 grad "$io_d/g1.bmp"
io_dump "io: grey bmp reads as RGB" "$io_d/g1.bmp" "0,0,0 5,5,5"
"$IMGTOOL" make 2 1 2 grad "$io_d/g2.bmp"
io_dump "io: grey+alpha bmp drops alpha" "$io_d/g2.bmp" "0,0,0 5,5,5"

# ---- reproducible output ---------------------------------------------------------------
for io_ext in png jpg bmp tga pgm; do
	io_ch=3
	[ "$io_ext" = pgm ] && io_ch=1
	"$IMGTOOL" make 31 17 "$io_ch" noise:3 "$io_d/rep1.$io_ext"
	"$IMGTOOL" make 31 17 "$io_ch" noise:3 "$io_d/rep2.$io_ext"
	check "io: $io_ext output is byte-reproducible" cmp "$io_d/rep1.$io_ext" "$io_d/rep2.$io_ext"
done
"$IMGTOOL" -l 0 make 31 17 3 noise:3 "$io_d/l0.png"
"$IMGTOOL" -l 9 make 31 17 3 noise:3 "$io_d/l9.png"
check_not "io: png level changes the bytes" cmp -s "$io_d/l0.png" "$io_d/l9.png"
same_pixels "io: png level keeps the pixels" "$io_d/l0.png" "$io_d/l9.png"
expect_exit 2 "io: png level 10 refused" "$IMGTOOL" -l 10 make 2 2 3 grad "$io_d/l10.png"
expect_stderr "io: png level message" 'compression level must be 0..9, not 10'

# ---- JPEG ------------------------------------------------------------------------------
# Bounds measured with libjpeg-turbo 2.1 (ISLOW, 4:2:0): smooth RGB at quality 100 is
# within 4, grey within 0; a constant image is exact.
"$IMGTOOL" make 64 48 3 smooth "$io_d/s3.png"
"$IMGTOOL" -q 100 make 64 48 3 smooth "$io_d/s3.jpg"
io_info "io: jpeg info" "$io_d/s3.jpg" "64 48 3 jpeg"
io_le "io: jpeg q100 RGB round trip" "$("$IMGTOOL" maxdiff "$io_d/s3.png" "$io_d/s3.jpg")" 6
"$IMGTOOL" make 64 48 1 smooth "$io_d/s1.png"
"$IMGTOOL" -q 100 make 64 48 1 smooth "$io_d/s1.jpg"
io_info "io: grey jpeg stays grey" "$io_d/s1.jpg" "64 48 1 jpeg"
io_le "io: jpeg q100 grey round trip" "$("$IMGTOOL" maxdiff "$io_d/s1.png" "$io_d/s1.jpg")" 1
"$IMGTOOL" -q 75 make 64 48 3 smooth "$io_d/s75.jpg"
io_le "io: jpeg q75 round trip" "$("$IMGTOOL" maxdiff "$io_d/s3.png" "$io_d/s75.jpg")" 16
check_not "io: jpeg quality changes the bytes" cmp -s "$io_d/s3.jpg" "$io_d/s75.jpg"
"$IMGTOOL" make 16 16 3 const:77 "$io_d/k.png"
"$IMGTOOL" -q 90 make 16 16 3 const:77 "$io_d/k.jpg"
same_pixels "io: constant jpeg is exact" "$io_d/k.png" "$io_d/k.jpg"
# Alpha is dropped: RGBA gives the RGB file's bytes, grey+alpha the grey file's.
"$IMGTOOL" make 64 48 4 smooth "$io_d/a4.jpg"
"$IMGTOOL" make 64 48 3 smooth "$io_d/a3.jpg"
check "io: RGBA jpeg equals RGB jpeg" cmp "$io_d/a4.jpg" "$io_d/a3.jpg"
"$IMGTOOL" make 64 48 2 smooth "$io_d/a2.jpg"
"$IMGTOOL" make 64 48 1 smooth "$io_d/a1.jpg"
check "io: grey+alpha jpeg equals grey jpeg" cmp "$io_d/a2.jpg" "$io_d/a1.jpg"
"$IMGTOOL" jpegvariant progressive "$io_d/prog.jpg"
"$IMGTOOL" make 32 24 3 smooth "$io_d/s32.png"
io_le "io: progressive jpeg decodes" "$("$IMGTOOL" maxdiff "$io_d/s32.png" "$io_d/prog.jpg")" 12
"$IMGTOOL" jpegvariant cmyk "$io_d/cmyk.jpg"
expect_exit 2 "io: CMYK jpeg refused" "$IMGTOOL" info "$io_d/cmyk.jpg"
expect_stderr "io: CMYK message" 'cmyk\.jpg: CMYK JPEG is not supported$'
expect_exit 2 "io: jpeg quality 0 refused" "$IMGTOOL" -q 0 make 2 2 3 grad "$io_d/q0.jpg"
expect_stderr "io: jpeg quality message" 'jpeg quality must be 1\.\.100, not 0'
"$IMGTOOL" make 64 48 3 noise:7 "$io_d/n.jpg"
head -c 3000 "$io_d/n.jpg" >"$io_d/trunc.jpg"
expect_exit 2 "io: truncated jpeg refused" "$IMGTOOL" info "$io_d/trunc.jpg"
expect_stderr "io: truncated jpeg message" 'trunc\.jpg: jpeg: the file is truncated or its image data is corrupt'
check "io: truncated jpeg: one line" test "$(wc -l <"$T/err")" -eq 1
head -c 100 "$io_d/n.jpg" >"$io_d/hdr.jpg"
expect_exit 2 "io: jpeg without image data" "$IMGTOOL" info "$io_d/hdr.jpg"
expect_stderr "io: jpeg error message" 'hdr\.jpg: jpeg: '

# ---- PNG variants with known pixels ----------------------------------------------------
# 16-bit samples become round(v * 255 / 65535) = round(v / 257).
"$IMGTOOL" pngvariant grey16 "$io_d/p.png"
io_dump "io: 16-bit grey png rounds" "$io_d/p.png" "0 0 1 1 2 127 128 255"
"$IMGTOOL" pngvariant rgba16 "$io_d/p.png"
io_dump "io: 16-bit RGBA png" "$io_d/p.png" "255,0,100,128 0,1,254,255"
"$IMGTOOL" pngvariant grey16-all "$io_d/p.png"
io_bad16=$("$IMGTOOL" dump "$io_d/p.png" | tr ' ' '\n' |
	awk '{ v = NR - 1; e = int((v * 255 + 32767) / 65535); if ($1 != e) n++ }
	     END { print n + 0 " " NR }')
check "io: every 16-bit value rounds exactly ($io_bad16)" test "$io_bad16" = "0 65536"
"$IMGTOOL" pngvariant grad16 "$io_d/p.png"
"$IMGTOOL" make 9 7 3 grad "$io_d/ref.png"
same_pixels "io: 16-bit RGB png" "$io_d/ref.png" "$io_d/p.png"
"$IMGTOOL" pngvariant palette "$io_d/p.png"
io_info "io: palette png is RGB" "$io_d/p.png" "4 2 3 png"
io_dump "io: palette png" "$io_d/p.png" \
	"255,0,0 0,255,0 10,20,30 255,0,0" "10,20,30 10,20,30 0,255,0 255,0,0"
"$IMGTOOL" pngvariant palette-trns "$io_d/p.png"
io_dump "io: palette+tRNS png is RGBA" "$io_d/p.png" \
	"255,0,0,0 0,255,0,128 10,20,30,255 255,0,0,0" \
	"10,20,30,255 10,20,30,255 0,255,0,128 255,0,0,0"
"$IMGTOOL" pngvariant palette2 "$io_d/p.png"
io_dump "io: 2-bit palette png" "$io_d/p.png" \
	"0,0,0 255,255,255 1,2,3 200,100,50 255,255,255" \
	"200,100,50 1,2,3 255,255,255 0,0,0 200,100,50"
"$IMGTOOL" pngvariant grey1 "$io_d/p.png"
io_dump "io: 1-bit grey png" "$io_d/p.png" "255 0 255 255 0 0 255 0 255 255"
"$IMGTOOL" pngvariant grey2 "$io_d/p.png"
io_dump "io: 2-bit grey png" "$io_d/p.png" "0 85 170 255 170"
"$IMGTOOL" pngvariant grey4 "$io_d/p.png"
io_dump "io: 4-bit grey png" "$io_d/p.png" "0 17 255" "119 51 68"
"$IMGTOOL" pngvariant grey-trns "$io_d/p.png"
io_dump "io: grey+tRNS png is grey+alpha" "$io_d/p.png" "0,255 50,0 100,255 50,0"
"$IMGTOOL" pngvariant grey4-trns "$io_d/p.png"
io_dump "io: 4-bit grey+tRNS png" "$io_d/p.png" "51,0 0,255 255,255"
"$IMGTOOL" pngvariant rgb-trns "$io_d/p.png"
io_dump "io: RGB+tRNS png is RGBA" "$io_d/p.png" "1,2,3,0 3,2,1,255 1,2,3,0"
"$IMGTOOL" pngvariant interlaced "$io_d/p.png"
"$IMGTOOL" make 13 11 3 grad "$io_d/ref.png"
same_pixels "io: interlaced png" "$io_d/ref.png" "$io_d/p.png"
"$IMGTOOL" pngvariant interlaced-ga16 "$io_d/p.png"
"$IMGTOOL" make 7 5 2 grad "$io_d/ref.png"
same_pixels "io: interlaced 16-bit grey+alpha png" "$io_d/ref.png" "$io_d/p.png"

# Broken PNGs: libpng's message, prefixed.
"$IMGTOOL" make 64 48 3 noise:7 "$io_d/n.png"
head -c 2000 "$io_d/n.png" >"$io_d/trunc.png"
expect_exit 2 "io: truncated png" "$IMGTOOL" info "$io_d/trunc.png"
expect_stderr "io: truncated png message" 'trunc\.png: png: file is truncated$'
head -c 30 "$io_d/n.png" >"$io_d/trunc2.png"
expect_exit 2 "io: png cut in the header" "$IMGTOOL" info "$io_d/trunc2.png"
cp "$io_d/n.png" "$io_d/crc.png"
printf 'X' | dd of="$io_d/crc.png" bs=1 seek=13 conv=notrunc 2>/dev/null
expect_exit 2 "io: png with a bad chunk" "$IMGTOOL" info "$io_d/crc.png"
expect_stderr "io: png CRC message" 'crc\.png: png: .*CRC error'

# ---- BMP variants (stb_image) ----------------------------------------------------------
"$IMGTOOL" bmpvariant pal8 "$io_d/v.bmp"
io_dump "io: 8-bit palette bmp" "$io_d/v.bmp" "255,0,0 0,255,0 0,0,255" "10,20,30 0,0,255 0,255,0"
"$IMGTOOL" bmpvariant pal4 "$io_d/v.bmp"
io_dump "io: 4-bit palette bmp" "$io_d/v.bmp" "255,0,0 0,255,0 0,0,255" "10,20,30 0,0,255 0,255,0"
"$IMGTOOL" bmpvariant pal1 "$io_d/v.bmp"
io_dump "io: 1-bit bmp" "$io_d/v.bmp" \
	"255,0,0 255,0,0 255,0,0 255,0,0 0,255,0 0,255,0 0,255,0 0,255,0 255,0,0 0,255,0" \
	"0,255,0 255,0,0 0,255,0 0,255,0 255,0,0 255,0,0 0,255,0 255,0,0 0,255,0 0,255,0"
"$IMGTOOL" bmpvariant topdown "$io_d/v.bmp"
io_dump "io: top-down bmp" "$io_d/v.bmp" "1,2,3 4,5,6" "7,8,9 10,11,12"
io_info "io: top-down bmp size" "$io_d/v.bmp" "2 2 3 bmp"
"$IMGTOOL" bmpvariant rgb565 "$io_d/v.bmp"
io_dump "io: 5-6-5 bmp" "$io_d/v.bmp" "255,0,0 0,255,255"
"$IMGTOOL" bmpvariant rle8 "$io_d/v.bmp"
expect_exit 2 "io: RLE bmp refused" "$IMGTOOL" info "$io_d/v.bmp"
expect_stderr "io: RLE bmp message" 'v\.bmp: bmp: RLE-compressed BMP is not supported'
"$IMGTOOL" make 64 48 3 noise:7 "$io_d/n.bmp"
head -c 9000 "$io_d/n.bmp" >"$io_d/trunc.bmp"
expect_exit 2 "io: truncated bmp refused" "$IMGTOOL" info "$io_d/trunc.bmp"
expect_stderr "io: truncated bmp message" 'trunc\.bmp: bmp: the file is truncated'
printf 'BM%040d' 0 >"$io_d/junk.bmp"
expect_exit 2 "io: corrupt bmp" "$IMGTOOL" info "$io_d/junk.bmp"
expect_stderr "io: corrupt bmp message" 'junk\.bmp: bmp: '

# ---- PGM / PPM -------------------------------------------------------------------------
printf 'P5 # a comment\n#another\n 2\t# width\n1 # height\n255\n\001\002' >"$io_d/c.pgm"
io_dump "io: pgm header comments" "$io_d/c.pgm" "1 2"
printf 'P6\n2 1\n255\n\001\002\003\004\005\006more' >"$io_d/e.ppm"
io_dump "io: ppm trailing data ignored" "$io_d/e.ppm" "1,2,3 4,5,6"
printf 'P5\n2 1\n255\n\n\n' >"$io_d/ws.pgm"
io_dump "io: pgm pixel after maxval may be whitespace" "$io_d/ws.pgm" "10 10"
printf 'P5\n2 1\n65535\n\001\002\003\004' >"$io_d/m.pgm"
expect_exit 2 "io: 16-bit pgm refused" "$IMGTOOL" info "$io_d/m.pgm"
expect_stderr "io: maxval message" 'm\.pgm: pgm: maxval 65535 is not supported \(only 255\)'
printf 'P5\n3 3\n255\nabc' >"$io_d/t.pgm"
expect_exit 2 "io: truncated pgm" "$IMGTOOL" info "$io_d/t.pgm"
expect_stderr "io: truncated pgm message" 't\.pgm: pgm: the pixel data is truncated \(3 of 9 bytes\)'
printf 'P6\n2 2\n255\nabcdefghijk' >"$io_d/t.ppm"
expect_exit 2 "io: truncated ppm" "$IMGTOOL" info "$io_d/t.ppm"
expect_stderr "io: truncated ppm message" 'ppm: the pixel data is truncated \(11 of 12 bytes\)'
printf 'P5\n0 3\n255\n' >"$io_d/z.pgm"
expect_exit 2 "io: empty pgm" "$IMGTOOL" info "$io_d/z.pgm"
expect_stderr "io: empty pgm message" 'z\.pgm: the image is empty \(0x3\)'
printf 'P5\n2\n' >"$io_d/h.pgm"
expect_exit 2 "io: short pgm header" "$IMGTOOL" info "$io_d/h.pgm"
expect_stderr "io: short pgm header message" 'h\.pgm: pgm: bad header'
printf 'P2\n1 1\n255\n0\n' >"$io_d/a.pgm"
expect_exit 2 "io: plain pgm refused" "$IMGTOOL" info "$io_d/a.pgm"
expect_stderr "io: plain pgm message" 'a\.pgm: PNM type P2 is not supported'

# ---- recognition by content ------------------------------------------------------------
"$IMGTOOL" -f png make 5 4 3 grad "$io_d/png.jpg"
io_info "io: format by content, not name" "$io_d/png.jpg" "5 4 3 png"
echo "hello" >"$io_d/t.txt"
expect_exit 2 "io: text refused" "$IMGTOOL" info "$io_d/t.txt"
expect_stderr "io: unrecognised message" \
	't\.txt: unrecognised image format \(not PNG, JPEG, BMP, PGM or PPM\)$'
: >"$io_d/empty.png"
expect_exit 2 "io: empty file refused" "$IMGTOOL" info "$io_d/empty.png"
expect_stderr "io: empty file message" 'empty\.png: the input is empty'
expect_exit 2 "io: missing file" "$IMGTOOL" info "$io_d/missing.png"
expect_stderr "io: missing file message" 'missing\.png: cannot open: No such file or directory'
expect_exit 2 "io: directory as input" "$IMGTOOL" info "$io_d"
expect_stderr "io: directory input message" 'io: cannot read: Is a directory'
expect_exit 0 "io: stdin input" sh -c '"$1" info - <"$2"' sh "$IMGTOOL" "$io_d/png.jpg"
check "io: stdin input info" grep -q '^5 4 3 png$' "$T/out"
for io_x in PNG Jpeg BMP tga PGM; do
	io_ch=3
	[ "$io_x" = PGM ] && io_ch=1
	check "io: extension .$io_x" "$IMGTOOL" make 3 3 "$io_ch" grad "$io_d/x.$io_x"
done
expect_exit 2 "io: unknown extension" "$IMGTOOL" make 3 3 3 grad "$io_d/x.gif"

# ---- limits ----------------------------------------------------------------------------
for io_ext in png pgm bmp; do
	"$IMGTOOL" make 70000 2 1 const:9 "$io_d/wide.$io_ext"
	expect_exit 2 "io: $io_ext side limit" "$IMGTOOL" info "$io_d/wide.$io_ext"
	expect_stderr "io: $io_ext side limit message" \
		"wide\\.$io_ext: 70000x2 exceeds the 65535-pixel side limit"
done
"$IMGTOOL" make 65535 1 1 const:9 "$io_d/w65535.png"
io_info "io: 65535 pixels a side is allowed" "$io_d/w65535.png" "65535 1 1 png"
for io_ext in png jpg bmp pgm; do
	io_ch=3
	[ "$io_ext" = pgm ] && io_ch=1
	"$IMGTOOL" make 64 48 "$io_ch" grad "$io_d/lim.$io_ext"
	expect_exit 0 "io: $io_ext at --max-pixels" "$IMGTOOL" -p 3072 info "$io_d/lim.$io_ext"
	expect_exit 2 "io: $io_ext over --max-pixels" "$IMGTOOL" -p 3071 info "$io_d/lim.$io_ext"
	expect_stderr "io: $io_ext --max-pixels message" \
		"lim\\.$io_ext: 64x48 exceeds --max-pixels \\(3071\\)"
done
io_size=$(wc -c <"$io_d/lim.png" | tr -d ' ')
expect_exit 0 "io: input of exactly --max-input-bytes" \
	"$IMGTOOL" -b "$io_size" info "$io_d/lim.png"
expect_exit 2 "io: input over --max-input-bytes" \
	"$IMGTOOL" -b "$((io_size - 1))" info "$io_d/lim.png"
expect_stderr "io: --max-input-bytes message" \
	"lim\\.png: input is larger than --max-input-bytes \\($((io_size - 1))\\)"
expect_exit 2 "io: stdin over --max-input-bytes" \
	sh -c '"$1" -b "$2" info - <"$3"' sh "$IMGTOOL" "$((io_size - 1))" "$io_d/lim.png"
expect_stderr "io: stdin limit message" "stdin: input is larger than --max-input-bytes"
expect_exit 0 "io: stdin at --max-input-bytes" \
	sh -c '"$1" -b "$2" info - <"$3"' sh "$IMGTOOL" "$io_size" "$io_d/lim.png"
if [ -r /dev/zero ]; then
	# A PNG signature, then zeros without end: only the byte limit stops it.
	expect_exit 2 "io: endless stdin is bounded" \
		sh -c '{ printf "\211PNG\r\n\032\n"; cat /dev/zero; } | "$1" -b 100000 info -' sh "$IMGTOOL"
	expect_stderr "io: endless stdin message" "stdin: input is larger than --max-input-bytes \\(100000\\)"
	# Zeros from the start are no image format: refused after the first read.
	expect_exit 2 "io: endless device is refused" "$IMGTOOL" info /dev/zero
	expect_stderr "io: endless device message" "/dev/zero: unrecognised image format"
fi

# ---- output files ----------------------------------------------------------------------
expect_exit 2 "io: pgm needs 1 channel" "$IMGTOOL" make 3 3 3 grad "$io_d/x3.pgm"
expect_stderr "io: pgm channel message" \
	'x3\.pgm: pgm output needs a 1-channel image; the result has 3 channels'
expect_exit 2 "io: ppm needs 3 channels" "$IMGTOOL" make 3 3 4 grad "$io_d/x4.ppm"
expect_stderr "io: ppm channel message" 'ppm output needs a 3-channel image; the result has 4'
check "io: no file after a refused format" test ! -e "$io_d/x3.pgm"

mkdir -p "$io_d/out"
expect_exit 2 "io: missing directory" "$IMGTOOL" make 3 3 3 grad "$io_d/nodir/x.png"
expect_stderr "io: missing directory message" \
	"nodir/x\\.png: directory '.*/nodir' does not exist\$"
expect_exit 2 "io: output is a directory" "$IMGTOOL" -f png make 3 3 3 grad "$io_d/out"
expect_stderr "io: directory output message" 'out: is a directory$'
expect_exit 0 "io: write to /dev/null" "$IMGTOOL" -f png make 3 3 3 grad /dev/null
check "io: /dev/null is still a device" test -c /dev/null

# stdout gives the same bytes as a file.
"$IMGTOOL" make 9 5 3 grad "$io_d/out/file.png"
"$IMGTOOL" -f png make 9 5 3 grad - >"$io_d/out/stdout.png"
check "io: stdout output equals file output" cmp "$io_d/out/file.png" "$io_d/out/stdout.png"
io_no_temp "io: no temporary file after success" "$io_d/out"

# New files get 0666 & ~umask; a replaced file keeps its mode; symlinks are followed.
(umask 077 && "$IMGTOOL" make 2 2 3 grad "$io_d/out/m77.png")
(umask 022 && "$IMGTOOL" make 2 2 3 grad "$io_d/out/m22.png")
(umask 002 && "$IMGTOOL" make 2 2 3 grad "$io_d/out/m02.png")
check "io: umask 077 gives 600" test "$(stat -c %a "$io_d/out/m77.png")" = 600
check "io: umask 022 gives 644" test "$(stat -c %a "$io_d/out/m22.png")" = 644
check "io: umask 002 gives 664" test "$(stat -c %a "$io_d/out/m02.png")" = 664
chmod 640 "$io_d/out/m22.png"
"$IMGTOOL" make 3 3 3 grad "$io_d/out/m22.png"
check "io: a replaced file keeps its mode" test "$(stat -c %a "$io_d/out/m22.png")" = 640
io_info "io: the replaced file is new" "$io_d/out/m22.png" "3 3 3 png"
ln -s m22.png "$io_d/out/link.png"
"$IMGTOOL" make 4 4 3 grad "$io_d/out/link.png"
check "io: a symlink stays a symlink" test -L "$io_d/out/link.png"
io_info "io: the symlink's target is written" "$io_d/out/m22.png" "4 4 3 png"

# Reading and writing the same path.
"$IMGTOOL" make 8 6 4 F "$io_d/out/same.png"
cp "$io_d/out/same.png" "$io_d/out/same-ref.png"
check "io: convert in place" "$IMGTOOL" convert "$io_d/out/same.png" "$io_d/out/same.png"
same_pixels "io: in-place result" "$io_d/out/same-ref.png" "$io_d/out/same.png"
check "io: convert to another format in place" \
	"$IMGTOOL" -f tga convert "$io_d/out/same.png" "$io_d/out/same.png"
check_not "io: the in-place tga is not a png any more" "$IMGTOOL" info "$io_d/out/same.png"

# A failure after the output was opened leaves the old file and no temporary file.
"$IMGTOOL" make 5 5 3 grad "$io_d/out/old.jpg"
cp "$io_d/out/old.jpg" "$io_d/out/old.bak"
expect_exit 2 "io: failing encode" "$IMGTOOL" -q 101 make 4 4 3 grad "$io_d/out/old.jpg"
check "io: old file untouched after a failure" cmp "$io_d/out/old.jpg" "$io_d/out/old.bak"
io_no_temp "io: no temporary file after a failure" "$io_d/out"

# A signal between encoding and commit removes the temporary file (-k raises it there).
mkdir -p "$io_d/sig"
# (through `imgtool measure`, which resets the signals to their defaults: a shell running the
# tests in the background, JOBS=2 or nohup, has SIGINT or SIGHUP ignored)
expect_exit 143 "io: SIGTERM before commit" "$IMGTOOL" measure "$io_d/m" \
	"$IMGTOOL" -k 15 make 50 50 3 grad "$io_d/sig/x.png"
io_no_temp "io: SIGTERM removes the temporary file" "$io_d/sig"
check "io: SIGTERM leaves no output" test ! -e "$io_d/sig/x.png"
expect_exit 130 "io: SIGINT before commit" "$IMGTOOL" measure "$io_d/m" \
	"$IMGTOOL" -k 2 make 50 50 3 grad "$io_d/sig/x.png"
io_no_temp "io: SIGINT removes the temporary file" "$io_d/sig"
expect_exit 129 "io: SIGHUP before commit" "$IMGTOOL" measure "$io_d/m" \
	"$IMGTOOL" -k 1 make 50 50 3 grad "$io_d/sig/x.png"
io_no_temp "io: SIGHUP removes the temporary file" "$io_d/sig"
expect_exit 0 "io: an ignored SIGHUP stays ignored" \
	sh -c 'trap "" HUP; exec "$1" -k 1 make 5 5 3 grad "$2"' sh "$IMGTOOL" "$io_d/sig/hup.png"
check "io: output written despite ignored SIGHUP" test -f "$io_d/sig/hup.png"

# A closed pipe is a write error, not a crash.
{
	"$IMGTOOL" -f bmp make 2000 2000 3 noise:1 - 2>"$io_d/pipe.err"
	echo $? >"$io_d/pipe.rc"
} | head -c 10 >/dev/null
check "io: closed pipe exits 2" test "$(cat "$io_d/pipe.rc")" = 2
check "io: closed pipe message" grep -q 'stdout: cannot write: Broken pipe' "$io_d/pipe.err"
if [ -w /dev/full ]; then
	expect_exit 2 "io: full device" "$IMGTOOL" -f png make 300 300 3 noise:1 /dev/full
	expect_stderr "io: full device message" '/dev/full: cannot write: No space left on device'
fi
if [ "$(id -u)" != 0 ]; then
	mkdir -p "$io_d/ro"
	chmod 555 "$io_d/ro"
	expect_exit 2 "io: read-only directory" "$IMGTOOL" make 2 2 3 grad "$io_d/ro/x.png"
	expect_stderr "io: read-only directory message" \
		'ro/x\.png: cannot create temporary file: Permission denied'
	chmod 755 "$io_d/ro"
fi

# ---- committed test data ---------------------------------------------------------------
io_info "io: testdata/f-rgb.png" testdata/f-rgb.png "64 48 3 png"
io_info "io: testdata/f-rgba.png" testdata/f-rgba.png "64 48 4 png"
io_info "io: testdata/grad-grey.pgm" testdata/grad-grey.pgm "37 23 1 pgm"
io_info "io: testdata/photo.jpg" testdata/photo.jpg "320 240 3 jpeg"
io_info "io: testdata/sample.bmp" testdata/sample.bmp "31 17 3 bmp"
"$IMGTOOL" make 64 48 3 F "$io_d/f.png"
same_pixels "io: testdata/f-rgb.png is the F pattern" testdata/f-rgb.png "$io_d/f.png"
"$IMGTOOL" make 31 17 3 grad "$io_d/s.png"
same_pixels "io: testdata/sample.bmp is the grad pattern" testdata/sample.bmp "$io_d/s.png"
