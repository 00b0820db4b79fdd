# SPDX-License-Identifier: MIT
# Hostile input and failing hardware: every limit at its boundary, bad and unusual inputs,
# output safety (disk full, a closed pipe, signals in the middle of a write) and OpenCL
# failures, which fall back to the CPU path with one warning or, for a device the user
# named, fail with a clear error. Every input is generated here; nothing is downloaded.
# Helpers and variables start with h_ so they cannot clash with other t-*.sh files.
#
# A refused input must exit 1 or 2 with one line on stderr, within 2 s and 512 MiB of
# resident memory (measured by `imgtool measure`; `timeout 10` guards against a hang).
# Under the sanitizers (CLIMG_SANITIZED=1, make check-asan) time and memory are not
# asserted: ASan's shadow memory and slowdown are not ours.

h_d=$T/hostile
rm -rf "$h_d"
mkdir -p "$h_d"
h_san=${CLIMG_SANITIZED:-0}
FAILWRITE=$(realpath "${FAILWRITE:-tests/failwrite.so}")

# h_no_leftovers NAME DIR: DIR holds no climg temporary file.
h_no_temp() {
	if ls -A "$2" | grep -q '\.climg-'; then
		bad "$1 (temporary file left: $(ls -A "$2" | grep '\.climg-' | head -n 1))"
	else ok; fi
}

# h_run CMD...: runs CMD under `imgtool measure` and `timeout 10`, stdout to $T/out and
# stderr to $T/err; sets h_rc, h_rss (KiB) and h_ms.
h_run() {
	"$IMGTOOL" measure "$h_d/measure" timeout 10 "$@" >"$T/out" 2>"$T/err"
	read -r h_rc h_rss h_ms _ <"$h_d/measure"
}

# h_bounds NAME: the last h_run took under 2 s and 512 MiB (not under sanitizers).
h_bounds() {
	[ "$h_san" = 1 ] && return 0
	if [ "$h_ms" -lt 2000 ]; then ok; else bad "$1: took $h_ms ms (limit 2000)"; fi
	if [ "$h_rss" -lt 524288 ]; then ok; else bad "$1: used $h_rss KiB (limit 512 MiB)"; fi
}

# h_one_line NAME PATTERN: stderr of the last run is exactly one line matching PATTERN.
h_one_line() {
	if [ "$(wc -l <"$T/err")" -eq 1 ] && grep -Eq -- "$2" "$T/err"; then ok; else
		bad "$1 (stderr is not one line matching '$2')"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
}

# h_refused NAME CODE PATTERN ARG...: `climg --cpu ARG... -o OUT` exits CODE with one line
# matching PATTERN, within the bounds, and leaves no output and no temporary file.
h_refused() {
	_n=$1
	_code=$2
	_pat=$3
	shift 3
	rm -f "$h_d/out/r.png"
	h_run "$CLIMG" --cpu "$@" -o "$h_d/out/r.png"
	if [ "$h_rc" = "$_code" ]; then ok; else
		bad "$_n (exit $h_rc, want $_code)"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
	h_one_line "$_n: message" "^climg: .*$_pat"
	h_bounds "$_n"
	check_not "$_n: no output" test -e "$h_d/out/r.png"
	h_no_temp "$_n: no temporary file" "$h_d/out"
}

# h_decodes NAME FILE REF: climg --cpu FILE gives REF's pixels, silently, within bounds.
h_decodes() {
	h_run "$CLIMG" --cpu "$2" -o "$h_d/out/d.png"
	if [ "$h_rc" = 0 ] && [ ! -s "$T/err" ]; then ok; else
		bad "$1 (exit $h_rc)"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
	h_bounds "$1"
	same_pixels "$1: pixels" "$h_d/out/d.png" "$3"
}

# ---- every limit is documented in --help, the man page and the README ----
"$CLIMG" --help >"$h_d/help.txt"
for h_lim in "65535 pixels a side" "--max-pixels" "--max-input-bytes" "at most 10000 stages" \
	"at most 100 scans"; do
	check "--help documents the limit '$h_lim'" grep -q -- "$h_lim" "$h_d/help.txt"
done
sed -n '/^\.SH LIMITS/,/^\.SH IMAGES/p' man/climg.1 >"$h_d/limits.man"
for h_lim in "65535 pixels" "max\\-pixels" "max\\-input\\-bytes" "10000 stages" "100 scans"; do
	check "the man page's LIMITS name '$h_lim'" grep -qF -- "$h_lim" "$h_d/limits.man"
done
for h_lim in "| stages | 10000 |" "| progressive JPEG scans | 100 |" "| image size | 65535 pixels a side"; do
	check "the README's limits table has '$h_lim'" grep -qF -- "$h_lim" README.md
done

mkdir -p "$h_d/out"
"$IMGTOOL" make 64 48 3 grad "$h_d/grad.png"
"$IMGTOOL" make 13 7 3 noise:7 "$h_d/small.png"

# ==== limits ============================================================================

# ---- the side limit, checked from the header ----
"$IMGTOOL" make 65535 1 1 const:7 "$h_d/w65535.png"
"$IMGTOOL" make 65536 1 1 const:7 "$h_d/w65536.png"
"$IMGTOOL" make 1 65536 1 const:7 "$h_d/h65536.pgm"
h_run "$CLIMG" --cpu "$h_d/w65535.png" rotate:90 -o "$h_d/out/side.png"
check "side 65535 passes (exit $h_rc)" test "$h_rc" = 0
check "side 65535 rotated is 1x65535" test "$("$IMGTOOL" info "$h_d/out/side.png")" = "1 65535 1 png"
h_refused "side 65536 (png)" 1 "w65536\\.png: 65536x1 exceeds the 65535-pixel side limit$" "$h_d/w65536.png"
h_refused "side 65536 (pgm)" 1 "h65536\\.pgm: 1x65536 exceeds the 65535-pixel side limit$" "$h_d/h65536.pgm"

# ---- --max-pixels, checked from the header ----
for h_ext in png jpg bmp pgm; do
	h_ch=3
	[ "$h_ext" = pgm ] && h_ch=1
	"$IMGTOOL" make 64 48 "$h_ch" grad "$h_d/lim.$h_ext"
	h_run "$CLIMG" --cpu --max-pixels 3072 "$h_d/lim.$h_ext" -o "$h_d/out/lim.png"
	check "--max-pixels 3072 takes 64x48 $h_ext (exit $h_rc)" test "$h_rc" = 0
	h_refused "--max-pixels 3071 refuses 64x48 $h_ext" 1 \
		"lim\\.$h_ext: 64x48 exceeds --max-pixels \\(3071\\)$" --max-pixels 3071 "$h_d/lim.$h_ext"
done
h_refused "--max-pixels 0 is a usage error" 2 "--max-pixels must be a whole number" \
	--max-pixels 0 "$h_d/grad.png"
h_refused "--max-pixels 1e3 is a usage error" 2 "--max-pixels must be a whole number.*'1e3'" \
	--max-pixels 1e3 "$h_d/grad.png"

# ---- --max-input-bytes: files, stdin, FIFOs and endless devices ----
h_size=$(wc -c <"$h_d/grad.png" | tr -d ' ')
h_run "$CLIMG" --cpu --max-input-bytes "$h_size" "$h_d/grad.png" -o "$h_d/out/mib.png"
check "--max-input-bytes = file size passes (exit $h_rc)" test "$h_rc" = 0
h_refused "--max-input-bytes = file size - 1" 1 \
	"grad\\.png: input is larger than --max-input-bytes \\($((h_size - 1))\\)$" \
	--max-input-bytes "$((h_size - 1))" "$h_d/grad.png"
expect_exit 1 "stdin over --max-input-bytes" \
	sh -c 'exec "$1" --cpu --max-input-bytes "$2" - -o /dev/null <"$3"' sh "$CLIMG" \
	"$((h_size - 1))" "$h_d/grad.png"
h_one_line "stdin over --max-input-bytes: message" "^climg: stdin: input is larger than --max-input-bytes"
# A PNG signature and then zeros without end: only the byte limit stops the reading.
expect_exit 1 "endless stdin is bounded" sh -c \
	'{ printf "\211PNG\r\n\032\n"; cat /dev/zero; } | "$1" --cpu --max-input-bytes 3000000 - -o /dev/null' \
	sh "$CLIMG"
h_one_line "endless stdin: message" "^climg: stdin: input is larger than --max-input-bytes \\(3000000\\)$"
if mkfifo "$h_d/fifo" 2>/dev/null; then
	{ printf '\211PNG\r\n\032\n'; cat /dev/zero; } >"$h_d/fifo" 2>/dev/null &
	h_run "$CLIMG" --cpu --max-input-bytes 3000000 "$h_d/fifo" -o /dev/null
	check "a FIFO is read with a bound (exit $h_rc)" test "$h_rc" = 1
	h_one_line "FIFO: message" "fifo: input is larger than --max-input-bytes \\(3000000\\)$"
	kill $! 2>/dev/null
	wait $! 2>/dev/null
fi
h_refused "/dev/zero as input" 1 "/dev/zero: unrecognised image format" /dev/zero

# ---- progressive JPEG scans: at most 100 ----
"$IMGTOOL" jpegvariant scans:100 "$h_d/s100.jpg"
"$IMGTOOL" jpegvariant scans:101 "$h_d/s101.jpg"
"$IMGTOOL" make 64 48 1 smooth "$h_d/smooth1.png"
h_run "$CLIMG" --cpu "$h_d/s100.jpg" -o "$h_d/out/s100.png"
check "jpeg of 100 scans decodes (exit $h_rc)" test "$h_rc" = 0
h_md=$("$IMGTOOL" maxdiff "$h_d/out/s100.png" "$h_d/smooth1.png")
check "jpeg of 100 scans looks like its source (maxdiff $h_md)" test "$h_md" -le 8
h_refused "jpeg of 101 scans" 1 "s101\\.jpg: jpeg: more than 100 progressive scans" "$h_d/s101.jpg"
# 3000 scans (704 valid steps, then the last one repeated) over a 1024x1024 image: each
# scan is a pass over 16384 blocks, so without the cap this takes seconds.
"$IMGTOOL" jpegvariant scans:3000:1024x1024 "$h_d/s3000.jpg"
h_refused "jpeg of 3000 scans" 1 "s3000\\.jpg: jpeg: more than 100 progressive scans" "$h_d/s3000.jpg"
[ "$h_san" = 1 ] || check "3000-scan jpeg refused in under a second ($h_ms ms)" test "$h_ms" -lt 1000

# ---- the chain: at most 10000 stages, every image within the limits ----
set --
h_i=0
while [ "$h_i" -lt 10000 ]; do
	set -- "$@" transpose
	h_i=$((h_i + 1))
done
h_run "$CLIMG" --cpu "$h_d/small.png" "$@" -o "$h_d/out/t10000.png"
check "10000 stages run (exit $h_rc)" test "$h_rc" = 0
h_bounds "10000 stages"
same_pixels "10000 transposes give the input back" "$h_d/out/t10000.png" "$h_d/small.png"
h_refused "10001 stages" 2 "too many stages \\(10001; at most 10000\\)$" "$h_d/small.png" "$@" grey
if [ "${CLIMG_TEST_NO_OPENCL:-0}" != 1 ]; then
	h_run "$CLIMG" "$h_d/small.png" "$@" -o "$h_d/out/t10000cl.png"
	check "10000 stages on OpenCL (exit $h_rc)" test "$h_rc" = 0
	same_pixels "10000 transposes on OpenCL" "$h_d/out/t10000cl.png" "$h_d/small.png"
fi
set --

# ---- a chain that grows the image stops at the plan, before anything is allocated ----
"$IMGTOOL" make 1000 1000 3 grad "$h_d/k1.png"
set -- rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 \
	rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45
# 1000 -> 1415 -> 2002 -> ... -> 22668 (513 M pixels): the 9th is over --max-pixels
h_refused "repeated rotate:45 growing past --max-pixels" 2 \
	"rotate:45: the output would be 22668x22668 = 513838224 pixels, more than --max-pixels 268435456$" \
	"$h_d/k1.png" "$@"
# the chain's memory is planned: over the address-space limit it is refused before
# decoding (8 turns: two 16008x16008 RGB images, 1.4 GiB, under ulimit -v of 1000000 KiB)
if [ "$h_san" != 1 ]; then
	h_run sh -c 'ulimit -v 1000000 && exec "$@"' sh "$CLIMG" --cpu "$h_d/k1.png" \
		rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 rotate:45 \
		-o "$h_d/out/m.png"
	check "a chain over ulimit -v is refused (exit $h_rc)" test "$h_rc" = 1
	h_one_line "a chain over ulimit -v: message" \
		"^climg: the chain's images need 1\\.4 GiB of memory, more than the address-space limit \\(ulimit -v\\), 976\\.6 MiB$"
	h_bounds "a chain over ulimit -v"
	check_not "a chain over ulimit -v: no output" test -e "$h_d/out/m.png"
	h_run sh -c 'ulimit -v 1000000 && exec "$@"' sh "$CLIMG" --cpu "$h_d/k1.png" \
		rotate:45 rotate:45 -o "$h_d/out/m.png"
	check "a chain within ulimit -v runs (exit $h_rc)" test "$h_rc" = 0
fi
# with the area limit raised, the side limit stops it, at 90676
h_refused "repeated rotate:45 growing past 65535 a side" 2 \
	"rotate:45: the output would be 90676x90676 pixels; sides are limited to 65535$" \
	--max-pixels 4294836225 "$h_d/k1.png" "$@"
set --

# ---- convolve: its radius and its work ----
h_run "$CLIMG" --cpu "$h_d/small.png" convolve:gauss:sigma=300:radius=1000 -o "$h_d/out/c.png"
check "convolve radius 1000 runs (exit $h_rc)" test "$h_rc" = 0
h_refused "convolve radius 1001" 2 "convolve: radius must be a whole number from 0 to 1000, not '1001'$" \
	"$h_d/small.png" convolve:gauss:radius=1001
awk 'BEGIN { for (i = 0; i < 301; i++) { for (j = 0; j < 301; j++)
	printf "%d%s", 1 + (i * 7 + j * 3) % 5, j < 300 ? " " : "\n" } }' >"$h_d/k301.txt"
"$IMGTOOL" make 4000 4000 3 const:1 "$h_d/c4000.png"
h_refused "convolve: 301x301 not separable on 4000x4000 RGB is over 2^40" 2 \
	"is 4\\.3e\\+12 multiply-adds, over the limit of 2\\^40" "$h_d/c4000.png" "convolve:kernel=@$h_d/k301.txt"
h_refused "convolve kernel file /dev/zero" 2 "kernel file '/dev/zero' is larger than 16 MiB$" \
	"$h_d/small.png" convolve:kernel=@/dev/zero

# ---- a histogram's CSV that is also the image output: refused before decoding ----
h_refused "histogram CSV = image output" 2 "writes to '.*r\\.png', the image output too$" \
	"$h_d/c4000.png" "histogram:$h_d/out/r.png"

# ---- numbers: whole, decimal, locale-independent; never NaN or infinity ----
for h_arg in rotate:90abc rotate:0x1p3 "rotate: 90" "rotate:90 " rotate:1e309 rotate:-1e309 \
	rotate:nan rotate:NaN rotate:inf rotate:-inf rotate:90,0 rotate:0x5A rotate:9e99999 \
	rotate:++90 rotate:; do
	h_refused "number '$h_arg' refused" 2 "rotate: " "$h_d/small.png" "$h_arg"
done
for h_arg in "--quality= 90" --quality=9.5 --quality=1e2 --png-level=0x1 --max-input-bytes=-1 \
	--max-pixels=4294836226 --max-pixels=99999999999999999999999; do
	h_refused "option '$h_arg' refused" 2 "must be a whole number" "$h_d/small.png" "$h_arg"
done
for h_arg in rotate:90.0 rotate:+90 rotate:450 rotate:-270 rotate:9e1 rotate:.9e2; do
	expect_exit 0 "number '$h_arg' accepted" "$CLIMG" --cpu "$h_d/small.png" "$h_arg" -o "$h_d/out/n.png"
done
expect_exit 0 "numbers ignore the locale" env LC_ALL=de_DE.UTF-8 LC_NUMERIC=de_DE.UTF-8 \
	"$CLIMG" --cpu "$h_d/small.png" rotate:90.0 -o "$h_d/out/n.png"

# ==== bad inputs ========================================================================
: >"$h_d/empty.png"
h_refused "empty file" 1 "empty\\.png: the input is empty$" "$h_d/empty.png"
printf 'just some text\n' >"$h_d/text.png"
h_refused "text file named .png" 1 "text\\.png: unrecognised image format" "$h_d/text.png"
# a directory stands for the images under it: a batch, which needs a template
h_refused "directory of images with a plain -o" 2 "inputs would all write '.*r\\.png': give -o a template" "$h_d"
mkdir -p "$h_d/nothing"
h_refused "directory without images" 1 "no input images under the directories given$" "$h_d/nothing"
h_refused "missing input" 1 "missing\\.png: cannot open: No such file or directory$" "$h_d/missing.png"
printf 'x' >"$h_d/unreadable.png"
chmod 000 "$h_d/unreadable.png"
if [ "$(id -u)" != 0 ]; then
	h_refused "unreadable file" 1 "unreadable\\.png: cannot open: Permission denied$" "$h_d/unreadable.png"
elif command -v setpriv >/dev/null && [ "$h_san" != 1 ]; then
	# root reads anything: run as nobody (the binary and the file's directory must be
	# reachable for it, so both are copied to a world-searchable directory)
	h_pub=$(mktemp -d /tmp/climg-unreadable.XXXXXX)
	chmod 755 "$h_pub"
	cp "$CLIMG" "$h_pub/climg"
	cp "$h_d/unreadable.png" "$h_pub/unreadable.png"
	chmod 000 "$h_pub/unreadable.png"
	expect_exit 1 "unreadable file (as nobody)" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$h_pub/climg" --cpu "$h_pub/unreadable.png" -o /dev/null
	h_one_line "unreadable file: message" "unreadable\\.png: cannot open: Permission denied$"
	rm -rf "$h_pub"
fi
chmod 644 "$h_d/unreadable.png"
# a name with a newline and an escape sequence stays one line
h_refused "control characters in a name" 1 "a\\\\nb\\\\x1b\\[31m\\.png: cannot open" \
	"$h_d/a
b$(printf '\033')[31m.png"

# ---- PNG ----
"$IMGTOOL" make 64 48 3 noise:3 "$h_d/n.png"
head -c 3000 "$h_d/n.png" >"$h_d/trunc.png"
h_refused "truncated png" 1 "trunc\\.png: png: file is truncated$" "$h_d/trunc.png"
head -c 20 "$h_d/n.png" >"$h_d/trunc-hdr.png"
h_refused "png cut in its header" 1 "trunc-hdr\\.png: png: " "$h_d/trunc-hdr.png"
cp "$h_d/n.png" "$h_d/crc.png"
printf 'X' | dd of="$h_d/crc.png" bs=1 seek=29 conv=notrunc 2>/dev/null # IHDR's CRC
h_refused "png with a bad CRC" 1 "crc\\.png: png: .*CRC error" "$h_d/crc.png"
cp "$h_d/n.png" "$h_d/idat.png"
printf 'X' | dd of="$h_d/idat.png" bs=1 seek=200 conv=notrunc 2>/dev/null # inside IDAT
h_refused "png with damaged image data" 1 "idat\\.png: png: " "$h_d/idat.png"
"$IMGTOOL" rawpng huge-header "$h_d/huge.png"
check "the huge-header png is 68 bytes" test "$(wc -c <"$h_d/huge.png" | tr -d ' ')" = 68
h_refused "68-byte png claiming 65535x65535" 1 "huge\\.png: 65535x65535 exceeds --max-pixels" "$h_d/huge.png"
"$IMGTOOL" rawpng bomb "$h_d/bomb.png"
h_refused "20000x20000 decompression bomb" 1 "bomb\\.png: 20000x20000 exceeds --max-pixels \\(268435456\\)$" "$h_d/bomb.png"
# Indices past the palette decode as black, opaque: deterministic, as libpng does it.
"$IMGTOOL" rawpng palette-oob "$h_d/oob.png"
h_run "$CLIMG" --cpu "$h_d/oob.png" -o "$h_d/out/oob.png"
check "palette indices past the end decode (exit $h_rc)" test "$h_rc" = 0
check "palette indices past the end are black" \
	test "$("$IMGTOOL" dump "$h_d/out/oob.png")" = "255,0,0 0,255,0 0,0,0 0,0,0 0,0,0 0,255,0"
# The PNG kinds climg does not write decode exactly (their pixels: tests/t-io.sh).
"$IMGTOOL" make 9 7 3 grad "$h_d/grad97.png"
"$IMGTOOL" pngvariant grad16 "$h_d/g16.png"
h_decodes "16-bit png" "$h_d/g16.png" "$h_d/grad97.png"
"$IMGTOOL" make 13 11 3 grad "$h_d/grad1311.png"
"$IMGTOOL" pngvariant interlaced "$h_d/il.png"
h_decodes "interlaced png" "$h_d/il.png" "$h_d/grad1311.png"
"$IMGTOOL" make 7 5 2 grad "$h_d/grad75.png"
"$IMGTOOL" pngvariant interlaced-ga16 "$h_d/ilga.png"
h_decodes "interlaced 16-bit grey+alpha png" "$h_d/ilga.png" "$h_d/grad75.png"
for h_v in "palette-trns|255,0,0,0 0,255,0,128 10,20,30,255 255,0,0,0|10,20,30,255 10,20,30,255 0,255,0,128 255,0,0,0" \
	"grey1|255 0 255 255 0 0 255 0 255 255" "grey2|0 85 170 255 170" "grey4|0 17 255|119 51 68"; do
	h_kind=${h_v%%|*}
	"$IMGTOOL" pngvariant "$h_kind" "$h_d/v.png"
	h_run "$CLIMG" --cpu "$h_d/v.png" -o "$h_d/out/v.png"
	"$IMGTOOL" dump "$h_d/out/v.png" | tr '\n' '|' | sed 's/|$//' >"$h_d/v.txt"
	check "$h_kind png decodes exactly" test "$(cat "$h_d/v.txt")" = "${h_v#*|}"
done

# ---- JPEG ----
"$IMGTOOL" make 64 48 3 noise:9 "$h_d/n.jpg"
head -c 2000 "$h_d/n.jpg" >"$h_d/trunc.jpg"
h_refused "truncated jpeg" 1 "trunc\\.jpg: jpeg: the file is truncated or its image data is corrupt" "$h_d/trunc.jpg"
"$IMGTOOL" jpegvariant progressive "$h_d/prog.jpg"
h_psize=$(wc -c <"$h_d/prog.jpg" | tr -d ' ')
head -c "$((h_psize * 2 / 3))" "$h_d/prog.jpg" >"$h_d/trunc-prog.jpg"
h_refused "truncated progressive jpeg" 1 "trunc-prog\\.jpg: jpeg: the file is truncated" "$h_d/trunc-prog.jpg"
head -c 300 "$h_d/n.jpg" >"$h_d/trunc-hdr.jpg"
h_refused "jpeg cut in its header" 1 "trunc-hdr\\.jpg: jpeg: " "$h_d/trunc-hdr.jpg"
# a sequential JPEG whose data is complete but whose EOI marker is missing decodes
"$IMGTOOL" jpegvariant baseline "$h_d/base.jpg"
h_bsize=$(wc -c <"$h_d/base.jpg" | tr -d ' ')
head -c "$((h_bsize - 2))" "$h_d/base.jpg" >"$h_d/no-eoi.jpg"
"$CLIMG" --cpu "$h_d/base.jpg" -o "$h_d/base.png"
h_decodes "jpeg without its EOI marker" "$h_d/no-eoi.jpg" "$h_d/base.png"
"$IMGTOOL" jpegvariant arith "$h_d/arith.jpg"
h_decodes "arithmetic-coded jpeg (same pixels as Huffman)" "$h_d/arith.jpg" "$h_d/base.png"
"$IMGTOOL" jpegvariant 12bit "$h_d/12bit.jpg"
h_refused "12-bit jpeg" 1 "12bit\\.jpg: jpeg: 12-bit samples are not supported \\(only 8-bit\\)$" "$h_d/12bit.jpg"
"$IMGTOOL" jpegvariant cmyk "$h_d/cmyk.jpg"
h_refused "CMYK jpeg" 1 "cmyk\\.jpg: CMYK JPEG is not supported$" "$h_d/cmyk.jpg"

# ---- BMP ----
# found by the decode fuzzer: stb took 64800 bits per pixel for 32 and read zeros past
# the end of 122 bytes
h_refused "bmp with an impossible bit depth" 1 "bmp: unsupported bit depth 64800$" \
	tests/fuzz/regress/decode/bmp-depth-64800
# and a 29-byte one, too short for the header it claims, that stb took for 33x40
h_refused "bmp shorter than its header" 1 "bmp: the header is truncated \\(29 bytes\\)$" \
	tests/fuzz/regress/decode/bmp-29-bytes
"$IMGTOOL" make 64 48 3 noise:2 "$h_d/n.bmp"
head -c 5000 "$h_d/n.bmp" >"$h_d/trunc.bmp"
h_refused "truncated bmp" 1 "trunc\\.bmp: bmp: the file is truncated" "$h_d/trunc.bmp"

# ---- trailing garbage after the image data is ignored (documented) ----
for h_f in grad.png base.jpg; do
	cp "$h_d/$h_f" "$h_d/trail-$h_f"
	printf 'trailing garbage \377\330\377 \211PNG' >>"$h_d/trail-$h_f"
done
"$IMGTOOL" make 5 4 3 grad "$h_d/g.bmp"
"$IMGTOOL" make 5 4 1 grad "$h_d/g.pgm"
for h_f in g.bmp g.pgm; do
	cp "$h_d/$h_f" "$h_d/trail-$h_f"
	printf 'trailing garbage' >>"$h_d/trail-$h_f"
done
h_decodes "png with trailing garbage" "$h_d/trail-grad.png" "$h_d/grad.png"
h_decodes "jpeg with trailing garbage" "$h_d/trail-base.jpg" "$h_d/base.png"
h_decodes "bmp with trailing garbage" "$h_d/trail-g.bmp" "$h_d/g.bmp"
h_decodes "pgm with trailing garbage" "$h_d/trail-g.pgm" "$h_d/g.pgm"

# ---- enormous arguments: Linux allows 128 KiB per argument, so 1 MB comes as 8 ----
h_big=$(head -c 131000 /dev/zero | tr '\0' '9')
h_run "$CLIMG" --cpu "$h_d/small.png" "rotate:$h_big" "rotate:$h_big" "rotate:$h_big" \
	"rotate:$h_big" "rotate:$h_big" "rotate:$h_big" "rotate:$h_big" "rotate:$h_big" -o "$h_d/out/x.png"
check "1 MB of arguments: usage error (exit $h_rc)" test "$h_rc" = 2
h_one_line "1 MB of arguments: one line, the argument elided" \
	"^climg: rotate: angle must be a number, not '9+\\.\\.\\.9+'$"
check "1 MB of arguments: the message is short" test "$(wc -c <"$T/err")" -lt 1100
h_bounds "1 MB of arguments"
h_refused "a 128 KiB input name" 1 "cannot open: File name too long" "$h_d/$h_big"
h_refused "a 128 KiB stage name" 2 "unknown stage '9999" "$h_d/small.png" "$h_big"
unset h_big

# ==== output safety =====================================================================
# ---- errors about the output come before the input is read ----
h_run sh -c '{ printf "\211PNG\r\n\032\n"; head -c 200000000 /dev/zero; } 2>/dev/null |
	"$1" --cpu --max-input-bytes 300000000 - -o "$2/nodir/x.png"' sh "$CLIMG" "$h_d"
check "missing output directory (exit $h_rc)" test "$h_rc" = 1
h_one_line "missing output directory, named before the input is read" \
	"^climg: .*nodir/x\\.png: directory '.*/nodir' does not exist$"
[ "$h_san" = 1 ] || check "missing output directory: reported at once ($h_ms ms)" test "$h_ms" -lt 1000
mkdir -p "$h_d/out/isdir.png"
expect_exit 1 "output path that is a directory" "$CLIMG" --cpu "$h_d/grad.png" -o "$h_d/out/isdir.png"
h_one_line "output path that is a directory: message" \
	"isdir\\.png: is a directory; -o names the file to write, e\\.g\\. -o .*/isdir\\.png/out\\.png$"
check "output path that is a directory: still an empty directory" \
	sh -c '[ -d "$1" ] && [ -z "$(ls -A "$1")" ]' sh "$h_d/out/isdir.png"
if [ "$(id -u)" != 0 ]; then
	mkdir -p "$h_d/ro"
	chmod 555 "$h_d/ro"
	expect_exit 1 "read-only output directory" "$CLIMG" --cpu "$h_d/grad.png" -o "$h_d/ro/x.png"
	h_one_line "read-only directory: message" "ro/x\\.png: cannot create temporary file: Permission denied$"
	chmod 755 "$h_d/ro"
elif unshare -m true 2>/dev/null; then
	mkdir -p "$h_d/ro"
	expect_exit 1 "read-only output directory (read-only tmpfs)" unshare -m sh -c \
		'mount -t tmpfs -o ro,size=64k tmpfs "$1" && exec "$2" --cpu "$3" -o "$1/x.png"' \
		sh "$h_d/ro" "$CLIMG" "$h_d/grad.png"
	h_one_line "read-only directory: message" "ro/x\\.png: cannot create temporary file: Read-only file system$"
fi

# ---- disk full: the temporary file goes, a previous output stays ----
"$IMGTOOL" make 300 300 3 noise:1 "$h_d/big.png" # about 270 KB as PNG
"$CLIMG" --cpu "$h_d/grad.png" -o "$h_d/out/prev.png"
cp "$h_d/out/prev.png" "$h_d/prev.orig"
if [ -f "$FAILWRITE" ]; then
	expect_exit 1 "disk full (write fails with ENOSPC)" env LD_PRELOAD="$FAILWRITE" \
		FAILWRITE_AFTER=100000 "$CLIMG" --cpu "$h_d/big.png" -o "$h_d/out/prev.png"
	h_one_line "disk full: message" "prev\\.png: cannot write: No space left on device$"
	check "disk full: previous output unchanged" cmp "$h_d/out/prev.png" "$h_d/prev.orig"
	h_no_temp "disk full: temporary file removed" "$h_d/out"
	expect_exit 1 "disk full at the first byte" env LD_PRELOAD="$FAILWRITE" \
		FAILWRITE_AFTER=0 "$CLIMG" --cpu "$h_d/grad.png" -o "$h_d/out/new.png"
	check_not "disk full at the first byte: no output" test -e "$h_d/out/new.png"
	h_no_temp "disk full at the first byte: no temporary file" "$h_d/out"
	# SIGTERM and SIGINT half-way through a long write
	# (through imgtool measure, which gives climg the default dispositions a terminal would)
	for h_sig in 15:143 2:130 1:129; do
		expect_exit "${h_sig#*:}" "signal ${h_sig%:*} during the write" "$IMGTOOL" measure \
			"$h_d/m" env LD_PRELOAD="$FAILWRITE" FAILWRITE_AFTER=100000 \
			FAILWRITE_SIGNAL="${h_sig%:*}" "$CLIMG" --cpu "$h_d/big.png" -o "$h_d/out/prev.png"
		check "signal ${h_sig%:*}: previous output unchanged" cmp "$h_d/out/prev.png" "$h_d/prev.orig"
		h_no_temp "signal ${h_sig%:*}: temporary file removed" "$h_d/out"
		expect_exit "${h_sig#*:}" "signal ${h_sig%:*} during a new file's write" "$IMGTOOL" \
			measure "$h_d/m" env LD_PRELOAD="$FAILWRITE" FAILWRITE_AFTER=100000 \
			FAILWRITE_SIGNAL="${h_sig%:*}" "$CLIMG" --cpu "$h_d/big.png" -o "$h_d/out/sig.png"
		check_not "signal ${h_sig%:*}: no partial file" test -e "$h_d/out/sig.png"
		h_no_temp "signal ${h_sig%:*}: no temporary file" "$h_d/out"
	done
else
	bad "tests/failwrite.so is not built (make test builds it)"
fi
# a file size limit (EFBIG, SIGXFSZ ignored) is a write error like any other
expect_exit 1 "file size limit" sh -c 'ulimit -f 8 && exec "$1" --cpu "$2" -o "$3"' sh \
	"$CLIMG" "$h_d/big.png" "$h_d/out/prev.png"
h_one_line "file size limit: message" "prev\\.png: cannot write: File too large$"
check "file size limit: previous output unchanged" cmp "$h_d/out/prev.png" "$h_d/prev.orig"
h_no_temp "file size limit: temporary file removed" "$h_d/out"
# a real full file system, where mounting one is allowed
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	mkdir -p "$h_d/full"
	unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
		cp "$3" "$1/prev.png"
		"$2" --cpu "$4" -o "$1/prev.png" 2>"$1/../full.err"
		echo "rc=$?"
		cmp -s "$1/prev.png" "$3" && echo unchanged
		ls -A "$1" | grep -q climg && echo temp-left
		exit 0' sh "$h_d/full" "$CLIMG" "$h_d/prev.orig" "$h_d/big.png" >"$h_d/full.out"
	check "full tmpfs: exit 1" grep -q '^rc=1$' "$h_d/full.out"
	check "full tmpfs: previous output unchanged" grep -q '^unchanged$' "$h_d/full.out"
	check_not "full tmpfs: no temporary file" grep -q temp-left "$h_d/full.out"
	check "full tmpfs: message" grep -q 'cannot write: No space left on device$' "$h_d/full.err"
fi

# ---- stdout into a closed pipe ----
{
	"$CLIMG" --cpu "$h_d/big.png" -o - 2>"$h_d/pipe.err"
	echo $? >"$h_d/pipe.rc"
} | head -c 1 >/dev/null
check "closed pipe: exit 1" test "$(cat "$h_d/pipe.rc")" = 1
check "closed pipe: one line" test "$(wc -l <"$h_d/pipe.err")" -eq 1
check "closed pipe: message" grep -q '^climg: stdout: cannot write: Broken pipe$' "$h_d/pipe.err"
if [ -w /dev/full ]; then
	expect_exit 1 "output to /dev/full" "$CLIMG" --cpu "$h_d/big.png" -o /dev/full
	h_one_line "/dev/full: message" "/dev/full: cannot write: No space left on device$"
fi

# ==== OpenCL failures ===================================================================
# Each gives the --cpu bytes with exactly one warning line, or an error for a named device.
need_opencl "the OpenCL failure tests" || { return 0 2>/dev/null || exit 0; }
# The automatic choice would run this small image on the CPU path and never open the device;
# the test setting CLIMG_AUTO_SWITCH=0 makes the device it opens take the chain from its
# first stage, its failures falling back as ever (unset again at the end; tests/t-auto.sh
# has failures at later stages).
CLIMG_AUTO_SWITCH=0
export CLIMG_AUTO_SWITCH
h_chain="grey rotate:90 transpose"
"$CLIMG" --cpu "$h_d/small.png" $h_chain -o "$h_d/cpu.png"

# h_fallback NAME [VAR=VALUE | -u VAR ...]: with the environment (env(1)'s arguments), the
# automatic device's failure falls back: exit 0, the --cpu bytes, exactly one stderr line, a
# warning.
h_fallback() {
	_n=$1
	shift
	rm -f "$h_d/out/fb.png"
	env "$@" "$CLIMG" "$h_d/small.png" $h_chain -o "$h_d/out/fb.png" >"$T/out" 2>"$T/err"
	_rc=$?
	if [ "$_rc" = 0 ] && cmp -s "$h_d/out/fb.png" "$h_d/cpu.png"; then ok; else
		bad "$_n: falls back to the CPU bytes (exit $_rc)"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
	h_one_line "$_n: exactly one warning line" "^climg: warning: .*; using the CPU path$"
}

# h_named_error NAME PATTERN [VAR=VALUE | -u VAR ...]: the same failure with --device 0 (or
# $h_dev) is an error.
h_named_error() {
	_n=$1
	_pat=$2
	shift 2
	rm -f "$h_d/out/ne.png"
	env "$@" "$CLIMG" --device "${h_dev:-0}" "$h_d/small.png" $h_chain -o "$h_d/out/ne.png" \
		>"$T/out" 2>"$T/err"
	_rc=$?
	if [ "$_rc" = 1 ]; then ok; else bad "$_n with --device: exit $_rc, want 1"; fi
	if grep -Eq -- "^climg: $_pat" "$T/err" && ! grep -q warning "$T/err"; then ok; else
		bad "$_n with --device: message"
		sed 's/^/    | /' "$T/err" | head -n 5
	fi
	check_not "$_n with --device: no output" test -e "$h_d/out/ne.png"
	h_no_temp "$_n with --device: no temporary file" "$h_d/out"
}

# The loader's drivers are those OCL_ICD_VENDORS names: OCL_ICD_FILENAMES, which some
# machines with a GPU set (e.g. to libpocl.so.2:libnvidia-opencl.so.1),
# would add its drivers to them, so each of these runs removes it (env -u).
mkdir -p "$h_d/no-icd"
h_fallback "no ICD at all" -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$h_d/no-icd"
h_named_error "no ICD at all" "no OpenCL device found" -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$h_d/no-icd"
h_pocl_icd=$(grep -l pocl /etc/OpenCL/vendors/*.icd 2>/dev/null | head -n 1)
if [ -n "$h_pocl_icd" ] && "$CLIMG" --list-devices | grep -q 'Portable Computing Language'; then
	# PoCL with POCL_DEVICES empty is a platform with zero devices; only PoCL's ICD is
	# listed, so that another driver (a GPU) does not supply a device.
	mkdir -p "$h_d/pocl-only"
	cp "$h_pocl_icd" "$h_d/pocl-only/"
	h_zero="-u OCL_ICD_FILENAMES OCL_ICD_VENDORS=$h_d/pocl-only"
	check "POCL_DEVICES= gives a platform with zero devices" \
		sh -c 'env $2 POCL_DEVICES= "$1" --list-devices | grep -q "^no OpenCL devices$"' sh "$CLIMG" "$h_zero"
	# shellcheck disable=SC2086
	h_fallback "a platform with zero devices" $h_zero POCL_DEVICES=
	# shellcheck disable=SC2086
	h_named_error "a platform with zero devices" "no OpenCL device found" $h_zero POCL_DEVICES=
fi
# A GPU on platform 1 behind PoCL on platform 0 (tests/fakeicd.c: a fake driver whose GPU
# answers every query and then cannot create a context). The ICD loader reads its
# directory in the file system's order; names are tried until PoCL comes first.
FAKEICD=$(realpath "${FAKEICD:-tests/fakeicd.so}")
h_pocl=$(grep -l pocl /etc/OpenCL/vendors/*.icd 2>/dev/null | head -n 1)
h_order=""
if [ -n "$h_pocl" ] && [ -f "$FAKEICD" ]; then
	for h_i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
		rm -rf "$h_d/icd"
		mkdir -p "$h_d/icd"
		cat "$h_pocl" >"$h_d/icd/p$h_i.icd"
		echo "$FAKEICD" >"$h_d/icd/g$h_i.icd"
		env -u OCL_ICD_FILENAMES OCL_ICD_PLATFORM_SORT=none OCL_ICD_VENDORS="$h_d/icd" "$CLIMG" --list-devices >"$h_d/devs"
		if sed -n 1p "$h_d/devs" | grep -q '^0: .*Portable Computing Language' &&
			sed -n 2p "$h_d/devs" | grep -q '^1: climg fake GPU (GPU, climg fake platform'; then
			h_order=ok
			break
		fi
	done
fi
if [ "$h_order" = ok ]; then
	h_icd="-u OCL_ICD_FILENAMES OCL_ICD_PLATFORM_SORT=none OCL_ICD_VENDORS=$h_d/icd"
	# shellcheck disable=SC2086
	h_fallback "PoCL on platform 0, a GPU on platform 1: the GPU is chosen" $h_icd
	check "the automatic choice was the GPU" grep -q 'clCreateContext(climg fake GPU' "$T/err"
	# shellcheck disable=SC2086
	h_dev=gpu
	# shellcheck disable=SC2086
	h_named_error "--device gpu (the failing GPU)" "opencl: clCreateContext\\(climg fake GPU" $h_icd
	h_dev=0
	# shellcheck disable=SC2086
	expect_exit 0 "--device 0 takes PoCL on platform 0" env $h_icd "$CLIMG" --device 0 \
		"$h_d/small.png" $h_chain -o "$h_d/out/p0.png"
	check "--device 0: no warning" test ! -s "$T/err"
	check "--device 0: the CPU bytes" cmp "$h_d/out/p0.png" "$h_d/cpu.png"
	# a platform with no devices beside a working one is skipped without a word
	# shellcheck disable=SC2086
	expect_exit 0 "a platform with zero devices beside PoCL" env $h_icd FAKEICD_DEVICES=0 \
		"$CLIMG" "$h_d/small.png" $h_chain -o "$h_d/out/z.png"
	check "zero-device platform: no warning" test ! -s "$T/err"
	check "zero-device platform: the CPU bytes" cmp "$h_d/out/z.png" "$h_d/cpu.png"
	# and alone it is no device at all
	rm -f "$h_d/icd/p"*.icd
	h_fallback "only a platform with zero devices" -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$h_d/icd" FAKEICD_DEVICES=0
	check "only a zero-device platform: the warning says so" \
		grep -q '^climg: warning: no OpenCL device found; using the CPU path$' "$T/err"
else
	echo "skipping the PoCL-then-GPU order test: no PoCL ICD or no fake ICD, or no order found"
fi

h_fallback "a program that fails to build" CLIMG_FAULT_BUILD=1
check "build failure: the warning says what failed" grep -Eq 'kernels/[a-z]+\.cl failed to build for [1-4] channels on' "$T/err"
h_named_error "a program that fails to build" "opencl: kernels/.*\\.cl failed to build" CLIMG_FAULT_BUILD=1
check "build failure with --device: the build log is printed" \
	grep -q '^climg: opencl: build log for kernels/' "$T/err"
check "build failure with --device: the log has the compiler's message" grep -q 'CLIMG_FAULT_BUILD' "$T/err"
# The chain's largest image is 13x7x3 = 273 bytes: a limit of 273 fits, 272 does not.
expect_exit 0 "max alloc = the largest buffer runs on the device" env CLIMG_FAULT_MAX_ALLOC=273 \
	"$CLIMG" --device 0 "$h_d/small.png" $h_chain -o "$h_d/out/ma.png"
check "max alloc = the largest buffer: no warning" test ! -s "$T/err"
check "max alloc = the largest buffer: the CPU bytes" cmp "$h_d/out/ma.png" "$h_d/cpu.png"
h_fallback "a buffer over CL_DEVICE_MAX_MEM_ALLOC_SIZE" CLIMG_FAULT_MAX_ALLOC=272
check "max alloc: the warning names the limit" grep -q 'CL_DEVICE_MAX_MEM_ALLOC_SIZE' "$T/err"
h_named_error "a buffer over CL_DEVICE_MAX_MEM_ALLOC_SIZE" \
	"opencl: a buffer of 273 bytes exceeds the allocation limit of .*, 272 bytes" CLIMG_FAULT_MAX_ALLOC=272

# Every counted OpenCL call failing in turn (CLIMG_FAULT_INJECT=N, see src/ocl/fault.c): from
# opening the device to the last download. Each N falls back with one warning, or with
# --device fails with one line; a fault climg absorbs by design (pinned host memory that
# cannot be had is replaced by plain memory) gives a clean run with the same bytes. After
# the last counted call every run is clean: three clean N in a row end the loop.
# h_fault_sweep NAME [VAR=VALUE...] runs it with that environment. On a device whose memory
# is the host's (PoCL) the default is zero-copy, so a fault in a later kernel or in the map
# of the output must leave the input intact for the CPU path: the bytes show it.
# The --device run names the device the automatic choice takes (the first GPU, else device
# 0: src/ocl/device.c, device_pick), so that both runs make the same calls; device 0 need not be
# the GPU (PoCL comes first on some machines with a GPU).
h_auto=0
"$CLIMG" --list-devices | grep -q '^[0-9]*: .* (GPU, ' && h_auto=gpu
h_fault_sweep() {
	h_name=$1
	shift
	h_n=1
	h_clean=0
	h_last=0
	while [ "$h_n" -le 200 ] && [ "$h_clean" -lt 3 ]; do
		rm -f "$h_d/out/fi.png"
		env "$@" CLIMG_FAULT_INJECT=$h_n "$CLIMG" "$h_d/small.png" $h_chain -o "$h_d/out/fi.png" \
			>"$T/out" 2>"$T/err"
		h_rc=$?
		h_quiet=0
		[ ! -s "$T/err" ] && h_quiet=1
		# the first fault past the device's opening that makes the run fall back (the
		# numbers differ between devices: PoCL asks more, zero-copy calls others)
		[ "$h_quiet" = 0 ] && [ "$h_n" -ge 10 ] && [ -z "$h_fail_n" ] && h_fail_n=$h_n
		sed -n 's/.*opencl: \(cl[A-Za-z]*\).*/\1/p' "$T/err" >>"$h_d/calls"
		if [ "$h_rc" = 0 ] && cmp -s "$h_d/out/fi.png" "$h_d/cpu.png" && { [ "$h_quiet" = 1 ] || {
			[ "$(wc -l <"$T/err")" -eq 1 ] &&
				grep -q '^climg: warning: .*CL_OUT_OF_RESOURCES; using the CPU path$' "$T/err"; }; }; then
			ok
		else
			bad "$h_name: fault at OpenCL call $h_n: fallback (exit $h_rc)"
			sed 's/^/    | /' "$T/err" | head -n 3
		fi
		rm -f "$h_d/out/fi.png"
		env "$@" CLIMG_FAULT_INJECT=$h_n "$CLIMG" --device "$h_auto" "$h_d/small.png" $h_chain \
			-o "$h_d/out/fi.png" >"$T/out" 2>"$T/err"
		h_rc=$?
		if [ "$h_quiet" = 1 ] && [ "$h_rc" = 0 ] && [ ! -s "$T/err" ] && cmp -s "$h_d/out/fi.png" "$h_d/cpu.png"; then
			ok
			h_clean=$((h_clean + 1))
			h_last=$h_n
		elif [ "$h_quiet" = 0 ] && [ "$h_rc" = 1 ] && [ ! -e "$h_d/out/fi.png" ] &&
			[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q '^climg: .*CL_OUT_OF_RESOURCES$' "$T/err"; then
			ok
			h_clean=0
		else
			bad "$h_name: fault at OpenCL call $h_n with --device: error (exit $h_rc)"
			sed 's/^/    | /' "$T/err" | head -n 3
			h_clean=0
		fi
		h_n=$((h_n + 1))
	done
	check "$h_name: fault injection reached the end of the calls (clean from call $((h_last - 2)))" \
		test "$h_clean" = 3 -a "$h_last" -gt 20
	check "$h_name: the clean run gives the CPU bytes" cmp "$h_d/out/fi.png" "$h_d/cpu.png"
}
: >"$h_d/calls"
h_fail_n=
h_fault_sweep "default transfers"
h_fault_sweep "copying transfers" CLIMG_ZERO_COPY=0
# Copying, the output goes into the input's pinned memory (it fits: grey), and the
# histogram's counts are downloaded after it: a fault there must find the input as decoded
# for the CPU path, not the output written over it.
h_chain="grey rotate:90 histogram:$h_d/out/fi.csv"
"$CLIMG" --cpu "$h_d/small.png" $h_chain -o "$h_d/cpu.png"
h_fault_sweep "copying transfers, the output into the input's memory" CLIMG_ZERO_COPY=0
h_chain="grey rotate:90 transpose"
"$CLIMG" --cpu "$h_d/small.png" $h_chain -o "$h_d/cpu.png"
for h_call in clGetDeviceInfo clCreateContext clCreateCommandQueue clCreateProgramWithSource \
	clBuildProgram clCreateBuffer clEnqueueWriteBuffer clCreateKernel clSetKernelArg \
	clEnqueueNDRangeKernel clFinish clEnqueueReadBuffer; do
	check "fault injection covers $h_call" grep -qx "$h_call" "$h_d/calls"
done
# zero-copy maps the output and unmaps it (ocl_wrap_sync). A device with memory of its own
# maps only the pinned memory allocated while the device opens, whose failure climg
# absorbs (the input is uploaded from plain memory; the clean runs above check the bytes),
# so no error there names a map.
if "$CLIMG" --device "$h_auto" "$h_d/small.png" $h_chain --time=json 2>&1 | grep -q '"download_zero_copy": true'; then
	check "fault injection covers clEnqueueMapBuffer" grep -qx clEnqueueMapBuffer "$h_d/calls"
	check "fault injection covers clEnqueueUnmapMemObject" grep -qx clEnqueueUnmapMemObject "$h_d/calls"
fi
rm -f "$h_d/out/v.png"
check "a fault past the device's opening makes the run fall back" test -n "$h_fail_n"
expect_exit 1 "--verify with a failing device is an error" env CLIMG_FAULT_INJECT="$h_fail_n" \
	"$CLIMG" --verify "$h_d/small.png" $h_chain -o "$h_d/out/v.png"
check_not "--verify failure: no output" test -e "$h_d/out/v.png"
unset CLIMG_AUTO_SWITCH
