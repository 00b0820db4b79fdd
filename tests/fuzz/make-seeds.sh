#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the seed corpora and dictionaries for the fuzz targets (tests/fuzz/fuzz-*.c) into
# DIR (default build-fuzz/seeds): DIR/TARGET/ holds the seeds, DIR/TARGET.dict the tokens
# libFuzzer splices in. Images come from tests/imgtool (their metadata from tests/metatool),
# stage tokens from the binary's --list-stages, so new stages are fuzzed without editing
# this file.
# Usage: sh tests/fuzz/make-seeds.sh [DIR]   (IMGTOOL, METATOOL, CLIMG name the binaries)
set -eu
DIR=${1:-build-fuzz/seeds}
IMGTOOL=${IMGTOOL:-tests/imgtool}
METATOOL=${METATOOL:-tests/metatool}
CLIMG=${CLIMG:-./climg}
rm -rf "$DIR"
mkdir -p "$DIR/decode" "$DIR/chain" "$DIR/pipeline"
d=$DIR/decode

# ---- decode: one small file of every kind the readers take or refuse ----
for f in png jpg bmp pgm ppm tga; do
	ch=3
	[ "$f" = pgm ] && ch=1
	"$IMGTOOL" make 7 5 "$ch" grad "$d/grad.$f"
done
"$IMGTOOL" make 9 4 4 F "$d/f4.png"
"$IMGTOOL" make 9 4 2 F "$d/f2.png"
"$IMGTOOL" make 9 4 1 F "$d/f1.png"
"$IMGTOOL" make 3 3 4 grad "$d/rgba.bmp"
"$IMGTOOL" make 16 16 1 smooth "$d/grey.jpg"
for k in grey16 rgba16 palette palette-trns palette2 grey1 grey2 grey4 grey-trns grey4-trns \
	rgb-trns interlaced interlaced-ga16; do
	"$IMGTOOL" pngvariant "$k" "$d/$k.png"
done
for k in progressive baseline arith 12bit cmyk scans:70 restart restart-grey; do
	"$IMGTOOL" jpegvariant "$k" "$d/$(echo "$k" | tr ':' '-').jpg"
done
for k in pal8 pal4 pal1 topdown rgb565 rle8; do
	"$IMGTOOL" bmpvariant "$k" "$d/$k.bmp"
done
"$IMGTOOL" rawpng palette-oob "$d/palette-oob.png"
"$IMGTOOL" rawpng huge-header "$d/huge-header.png"
# metadata: Exif blocks of every orientation in both byte orders, malformed ones, and ICC
# profiles (one JPEG segment and two), in JPEG and PNG
"$IMGTOOL" make 5 3 3 grad "$d/meta.jpg"
"$IMGTOOL" make 5 3 1 grad "$d/meta.png"
for o in 1 2 3 4 5 6 7 8; do
	"$METATOOL" add-exif "o=$o" "$d/meta.jpg" "$d/exif-le-$o.jpg"
	"$METATOOL" add-exif "o=$o,be" "$d/meta.png" "$d/exif-be-$o.png"
done
for spec in o=9 o=6,type=4 o=6,ifd=5000 o=6,count=9000 o=6,len=5 be; do
	"$METATOOL" add-exif "$spec" "$d/meta.jpg" "$d/exif-$(echo "$spec" | tr ',=' '--').jpg"
done
"$METATOOL" make-icc RGB 200 "$d/rgb.icc"
"$METATOOL" make-icc GRAY 70000 "$d/grey.icc"
"$METATOOL" add-icc "$d/rgb.icc" "$d/exif-le-6.jpg" "$d/icc-exif.jpg"
"$METATOOL" add-icc "$d/grey.icc" "$d/meta.jpg" "$d/icc-2-segments.jpg"
"$METATOOL" add-icc "$d/grey.icc" "$d/meta.png" "$d/icc-grey.png"
rm "$d/rgb.icc" "$d/grey.icc"
printf 'P5 # c\n2 1\n255\n\001\002' >"$d/comment.pgm"
printf 'P6\n1 1\n255\n\001\002\003trailing' >"$d/trailing.ppm"

# ---- chain: W H (16-bit little-endian), CH, then tokens one per line ----
"$CLIMG" --list-stages | awk '/^[^ ]/ {print $1}' >"$DIR/usages"
n=0
seed() { # seed FILE W_LO W_HI H_LO H_HI CH TOKENS...
	_f=$1
	shift
	printf "\\$(printf %o "$1")\\$(printf %o "$2")\\$(printf %o "$3")\\$(printf %o "$4")\\$(printf %o "$5")" >"$_f"
	shift 5
	printf '%s' "$*" | tr ' ' '\n' >>"$_f"
}
seed "$DIR/chain/1" 13 0 7 0 3 grey rotate:90 transpose
seed "$DIR/chain/2" 255 255 1 0 4 rotate:-270 grey:bt709 rotate:450
seed "$DIR/chain/3" 1 0 1 0 1 grey:avg transpose transpose
seed "$DIR/chain/4" 0 1 0 1 2 rotate:180.0 rotate:1e2 rotate:-0
# the stages' options, as their documentation writes them
seed "$DIR/chain/5" 40 0 30 0 4 convolve:box convolve:gauss:sigma=2 convolve:sharpen
seed "$DIR/chain/6" 9 0 9 0 3 convolve:kernel=1,2,1,2,4,2,1,2,1:norm=sum:bias=128:border=reflect \
	convolve:sobel-x:border=wrap convolve:edge:norm=none:border=zero
seed "$DIR/chain/7" 33 0 17 0 2 rotate:30:nearest:crop:bg=#ff000080 rotate:-12.5:bilinear:expand:bg=7
seed "$DIR/chain/8" 5 0 5 0 1 histogram histogram:-:scale=log histogram:plot=/dev/null:scale=linear \
	convolve:gauss:sigma=0.5:radius=3 convolve:box:size=5 convolve:emboss convolve:identity
while read -r u; do
	n=$((n + 1))
	# every documented form, with its placeholders filled by plain values
	t=$(printf '%s' "$u" | sed 's/\[//g; s/\]//g; s/|.*//; s/DEGREES/90/; s/[A-Z][A-Z]*/1/g')
	seed "$DIR/chain/usage$n" 20 0 10 0 3 "$t"
done <"$DIR/usages"

# ---- pipeline: w%64, h%64, ch%4, the chain, NUL, pixels ----
for f in "$DIR"/chain/*; do
	b=$(basename "$f")
	{
		printf '\015\006\002'
		tail -c +6 "$f"
		printf '\000'
		head -c 300 "$d/grad.ppm"
	} >"$DIR/pipeline/$b"
done

# ---- dictionaries ----
{
	for w in grey rotate transpose bt601 bt709 avg ":" ":90" ":-90" ":180" ":270" ":0" \
		"1e309" "nan" "inf" "0x1p3" "." "e" "-" "+" convolve box gauss sharpen edge \
		sobel-x sobel-y emboss identity "size=" "sigma=" "radius=" "kernel=" "kernel=@" \
		"norm=" "sum" "none" "bias=" "border=" replicate reflect wrap zero nearest \
		bilinear crop expand "bg=" "bg=#" histogram "plot=" "scale=" log linear ","; do
		printf '"%s"\n' "$w"
	done
	sed 's/[[|].*//; s/:.*//' "$DIR/usages" | sort -u | sed 's/.*/"&"/; s/^""$//'
} >"$DIR/chain.dict"
cp "$DIR/chain.dict" "$DIR/pipeline.dict"
{
	for w in IHDR IDAT IEND PLTE tRNS iCCP eXIf ICC_PROFILE MM II; do printf '"%s"\n' "$w"; done
	printf '"Exif\\x00\\x00"\n"\\xff\\xe1"\n"\\xff\\xe2"\n"\\x01\\x12"\n"\\x12\\x01"\n"\\x00\\x03"\n'
	printf '"\\x89PNG\\x0d\\x0a\\x1a\\x0a"\n"\\xff\\xd8\\xff"\n"\\xff\\xda"\n"\\xff\\xc0"\n"\\xff\\xc2"\n"\\xff\\xd9"\n"\\xff\\xc4"\n"\\xff\\xdb"\n'
	printf '"BM"\n"P5"\n"P6"\n"255"\n"65535"\n'
} >"$DIR/decode.dict"
echo "make-seeds: $(ls "$DIR/decode" | wc -l) decode, $(ls "$DIR/chain" | wc -l) chain, $(ls "$DIR/pipeline" | wc -l) pipeline seeds in $DIR"
