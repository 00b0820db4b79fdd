# SPDX-License-Identifier: MIT
# The codecs made for speed (src/io): the C checks in tests/codec (DEFLATE segments
# inflated by zlib and libdeflate, the Huffman length limit, the row filters); PNG output
# at every --png-level, 1-4 channels, odd sizes and several segments, read back by libpng
# and, where python3 is installed, by an independent reader (tests/png-read.py); the
# same bytes whatever CLIMG_THREADS says. Sourced by tests/run.sh; helpers and variables
# start with cd_.

cd_d=$T/codec
rm -rf "$cd_d"
mkdir -p "$cd_d"

# ---- C checks --------------------------------------------------------------------------
c_checks codec "$cd_d/codec.out" "${CODEC:-tests/codec}" "$cd_d"

# cd_py: an independent reader, when python3 is there.
cd_py=""
if command -v python3 >/dev/null 2>&1 && python3 -c 'import zlib' 2>/dev/null; then
	cd_py=python3
else
	echo "skipping the python3 PNG reader checks: no python3 with zlib"
fi

# cd_same_py NAME FILE.png: the python reader sees the pixels imgtool (libpng) sees.
cd_same_py() {
	[ -n "$cd_py" ] || return 0
	if "$cd_py" tests/png-read.py "$2" >"$cd_d/py.txt" 2>&1 &&
		"$IMGTOOL" dump "$2" >"$cd_d/lib.txt" 2>&1 && cmp -s "$cd_d/py.txt" "$cd_d/lib.txt"; then
		ok
	else
		bad "$1"
		head -n 3 "$cd_d/py.txt" | sed 's/^/    | /'
	fi
}

# ---- PNG round trips at every level ----------------------------------------------------
# The reference is a TGA of the same pattern (stb's writer, imgtool's own reader), so a
# PNG writer bug cannot hide in both sides.
for cd_ch in 1 2 3 4; do
	for cd_case in "1 1 grad" "1 9 noise:3" "9 1 grad" "13 7 F" "67 31 photo:5" "3 200 smooth"; do
		# shellcheck disable=SC2086 # split "W H PATTERN" on purpose
		set -- $cd_case
		"$IMGTOOL" make "$1" "$2" "$cd_ch" "$3" "$cd_d/ref.tga"
		for cd_l in 0 1 2 3 4 5 6 7 8 9; do
			"$IMGTOOL" -l "$cd_l" make "$1" "$2" "$cd_ch" "$3" "$cd_d/l$cd_l.png"
			same_pixels "codec: png level $cd_l ch=$cd_ch $cd_case" "$cd_d/ref.tga" "$cd_d/l$cd_l.png"
		done
		cd_same_py "codec: python reads png ch=$cd_ch $cd_case level 6" "$cd_d/l6.png"
		cd_same_py "codec: python reads png ch=$cd_ch $cd_case level 0" "$cd_d/l0.png"
	done
done

# Several segments (about 1 MiB of filtered rows each): 3 for this RGB image, 2 for the
# RGBA one, one per 4 rows for the widest rows allowed (a one-row last segment), 3 for
# the tallest grey image of 40 columns.
for cd_case in "1031 769 3 photo:7" "600 437 4 noise:2" "65535 9 4 grad" "40 65535 1 grad"; do
	# shellcheck disable=SC2086
	set -- $cd_case
	"$IMGTOOL" make "$1" "$2" "$3" "$4" "$cd_d/big.tga"
	for cd_l in 0 1 3 6 7; do
		CLIMG_THREADS=1 "$IMGTOOL" -l "$cd_l" make "$1" "$2" "$3" "$4" "$cd_d/t1.png"
		same_pixels "codec: $cd_case level $cd_l round trip" "$cd_d/big.tga" "$cd_d/t1.png"
		for cd_t in 2 3 8; do
			CLIMG_THREADS=$cd_t "$IMGTOOL" -l "$cd_l" make "$1" "$2" "$3" "$4" "$cd_d/tn.png"
			check "codec: $cd_case level $cd_l: $cd_t threads give the 1-thread bytes" \
				cmp "$cd_d/t1.png" "$cd_d/tn.png"
		done
	done
done
"$IMGTOOL" make 700 400 4 photo:3 "$cd_d/seg.png"
cd_same_py "codec: python reads a 2-segment png" "$cd_d/seg.png"
if [ -n "$cd_py" ]; then
	# Every IDAT but the last ends a segment with a sync flush: 00 00 ff ff.
	check "codec: a 2-segment png has 2 IDAT chunks" test "$("$cd_py" -c '
import struct, sys
d = open(sys.argv[1], "rb").read(); p = 8; n = 0
while p < len(d):
    (k,) = struct.unpack(">I", d[p:p + 4]); n += d[p + 4:p + 8] == b"IDAT"; p += 12 + k
print(n)' "$cd_d/seg.png")" = 2
fi

# Sizes: level 0 stores (at least the filtered bytes), higher levels do not grow much.
"$IMGTOOL" make 400 300 3 photo:9 "$cd_d/p.tga"
for cd_l in 0 1 6 9; do
	"$IMGTOOL" -l "$cd_l" convert "$cd_d/p.tga" "$cd_d/s$cd_l.png"
done
cd_size() { wc -c <"$1" | tr -d ' '; }
check "codec: level 0 holds every filtered byte" test "$(cd_size "$cd_d/s0.png")" -ge $((300 * 1201))
check "codec: level 1 compresses" test "$(cd_size "$cd_d/s1.png")" -lt $((300 * 1200 * 3 / 4))
check "codec: level 6 is no larger than level 1" \
	test "$(cd_size "$cd_d/s6.png")" -le "$(cd_size "$cd_d/s1.png")"
check "codec: level 9 is no larger than level 6" \
	test "$(cd_size "$cd_d/s9.png")" -le "$(cd_size "$cd_d/s6.png")"

# ---- PNG decoding against another writer ----------------------------------------------
# Pillow's own encoder (its filters, its zlib stream in 64 KiB IDAT chunks) writes random
# and smooth pixels in each colour type; climg's reader (src/io/png_fast.c for these) must
# give them back exactly. A 16-bit PNG, which libpng decodes, alongside.
if need_python "the PNG decoding checks against Pillow" PIL numpy; then
	for cd_m in L LA RGB RGBA I16; do
		"$PYTHON" - "$cd_m" "$cd_d/pil.png" "$cd_d/pil.txt" <<'EOF_PY'
import sys
import numpy as np
from PIL import Image
m, png, txt = sys.argv[1:4]
ch = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4, "I16": 1}[m]
rng = np.random.default_rng(7)
h, w = 97, 301
a = rng.integers(0, 65536 if m == "I16" else 256, (h, w, ch), dtype=np.uint16)
a[h // 2:] = (np.arange(w)[None, :, None] * 3 + np.arange(h - h // 2)[:, None, None] * 5
              + np.arange(ch)) % 256
if m == "I16":
    Image.fromarray(a[:, :, 0]).save(png)  # 16-bit grey
    want = (a.astype(np.uint32) * 255 + 32767) // 65535  # png_set_scale_16
else:
    a = a.astype(np.uint8)
    Image.fromarray(a[:, :, 0] if ch == 1 else a, m).save(png)
    want = a
with open(txt, "w") as f:
    for row in want:
        f.write(" ".join(",".join(str(int(v)) for v in px) for px in row) + "\n")
EOF_PY
		"$IMGTOOL" dump "$cd_d/pil.png" >"$cd_d/pil-got.txt" 2>&1
		check "codec: climg reads Pillow's $cd_m png" cmp -s "$cd_d/pil.txt" "$cd_d/pil-got.txt"
	done
fi

# ---- the command line ------------------------------------------------------------------
"$IMGTOOL" make 61 43 3 photo:2 "$cd_d/in.png"
for cd_l in 0 5 9; do
	expect_exit 0 "codec: climg --png-level $cd_l" "$CLIMG" --cpu "$cd_d/in.png" --png-level "$cd_l" -o "$cd_d/c$cd_l.png"
	same_pixels "codec: climg --png-level $cd_l keeps the pixels" "$cd_d/in.png" "$cd_d/c$cd_l.png"
done
expect_exit 2 "codec: --png-level 10 refused" "$CLIMG" --cpu "$cd_d/in.png" --png-level 10 -o "$cd_d/x.png"
"$CLIMG" --cpu "$cd_d/in.png" -o "$cd_d/c6.png"
expect_exit 0 "codec: a bad CLIMG_THREADS is ignored" \
	env CLIMG_THREADS=lots "$CLIMG" --cpu "$cd_d/in.png" -o "$cd_d/bt.png"
expect_stderr "codec: a bad CLIMG_THREADS is named" \
	"^climg: warning: CLIMG_THREADS must be a whole number from 1 to 256, not 'lots'; ignored$"
check "codec: a bad CLIMG_THREADS changes nothing" cmp "$cd_d/bt.png" "$cd_d/c6.png"
expect_exit 0 "codec: CLIMG_THREADS=0 is ignored too" env CLIMG_THREADS=0 "$CLIMG" -q --cpu "$cd_d/in.png" -o "$cd_d/bt.png"

# ---- JPEG in strips --------------------------------------------------------------------
# tests/codec compares the bytes with libjpeg's own restart-marker encoding; here: any
# thread count gives them, and they decode close to the source.
"$IMGTOOL" make 900 2500 3 smooth "$cd_d/tall.png"
CLIMG_THREADS=1 "$CLIMG" --cpu "$cd_d/tall.png" --quality 95 -o "$cd_d/j1.jpg"
for cd_t in 2 3 8; do
	CLIMG_THREADS=$cd_t "$CLIMG" --cpu "$cd_d/tall.png" --quality 95 -o "$cd_d/jn.jpg"
	check "codec: jpeg in strips: $cd_t threads give the 1-thread bytes" cmp "$cd_d/j1.jpg" "$cd_d/jn.jpg"
done
check "codec: a jpeg in strips has restart markers (DRI)" \
	sh -c 'od -An -tx1 -v "$1" | tr -d " \n" | grep -q ffdd0004' sh "$cd_d/j1.jpg"
cd_md=$("$IMGTOOL" maxdiff "$cd_d/tall.png" "$cd_d/j1.jpg")
check "codec: a jpeg in strips decodes within 4 of the source (got $cd_md)" test "$cd_md" -le 4
"$IMGTOOL" make 64 48 3 smooth "$cd_d/small.png"
"$CLIMG" --cpu "$cd_d/small.png" -o "$cd_d/small.jpg"
check_not "codec: a one-strip jpeg has no restart markers" \
	sh -c 'od -An -tx1 -v "$1" | tr -d " \n" | grep -q ffdd0004' sh "$cd_d/small.jpg"

# ---- JPEG decoded in strips ------------------------------------------------------------
# A JPEG whose restart markers fall at the starts of MCU rows (climg's own, above) decodes
# in strips on several threads (tests/codec checks the bytes for every sampling): the
# bytes of one thread, and --time says how many strips; a damaged one gives the exit
# status and message it gives on one thread.
"$IMGTOOL" make 1000 6000 3 photo:4 "$cd_d/long.png"
"$CLIMG" --cpu "$cd_d/long.png" -o "$cd_d/long.jpg"
expect_exit 0 "codec: jpeg decoded on 1 thread" env CLIMG_THREADS=1 "$CLIMG" --cpu \
	"$cd_d/long.jpg" --png-level 1 --time=json -o "$cd_d/d1.png"
expect_stderr "codec: --time=json, 1 thread: in one piece" '"decode_strips": 1,'
expect_exit 0 "codec: jpeg decoded on 4 threads" env CLIMG_THREADS=4 "$CLIMG" --cpu \
	"$cd_d/long.jpg" --png-level 1 --time=json -o "$cd_d/d4.png"
# 1000x6000 in strips of 1040 rows (65 MCU rows): 6 restart intervals, 3 strips of 2
expect_stderr "codec: --time=json, 4 threads: 3 strips" '"decode_strips": 3,'
check "codec: jpeg in strips: the bytes of one thread" cmp "$cd_d/d1.png" "$cd_d/d4.png"
expect_exit 0 "codec: --time, 4 threads" env CLIMG_THREADS=4 "$CLIMG" --cpu "$cd_d/long.jpg" \
	--time -o "$cd_d/d4.jpg"
expect_stderr "codec: --time says the strips" '^climg: time: decode +[0-9.]+ ms  in 3 strips at once$'
cd_n=$(wc -c <"$cd_d/long.jpg")
# another marker (a comment) between the last interval and the end of the image: read whole
head -c $((cd_n - 2)) "$cd_d/long.jpg" >"$cd_d/com.jpg"
printf '\377\376\000\002\377\331' >>"$cd_d/com.jpg"
expect_exit 0 "codec: a comment after the last interval" env CLIMG_THREADS=4 "$CLIMG" --cpu \
	"$cd_d/com.jpg" --png-level 1 --time=json -o "$cd_d/com.png"
expect_stderr "codec: a comment after the last interval: in one piece" '"decode_strips": 1,'
check "codec: a comment after the last interval: the same pixels" cmp "$cd_d/com.png" "$cd_d/d1.png"
head -c $((cd_n * 3 / 5)) "$cd_d/long.jpg" >"$cd_d/cut.jpg"
cp "$cd_d/long.jpg" "$cd_d/bad.jpg"
printf '\377\320\377\320climg' | dd of="$cd_d/bad.jpg" bs=1 seek=$((cd_n / 2)) conv=notrunc 2>/dev/null
# stuffed 0xFF bytes keep the restart markers in place but are no Huffman code: the strip
# that holds them fails, and the file is decoded in one piece for its message
cp "$cd_d/long.jpg" "$cd_d/huff.jpg"
printf '\377\000\377\000\377\000\377\000' | dd of="$cd_d/huff.jpg" bs=1 seek=$((cd_n / 2)) conv=notrunc 2>/dev/null
# bytes with no marker among them decode, as noise, alike on any thread count
cp "$cd_d/long.jpg" "$cd_d/noise.jpg"
printf 'climg noise' | dd of="$cd_d/noise.jpg" bs=1 seek=$((cd_n / 2)) conv=notrunc 2>/dev/null
expect_exit 0 "codec: jpeg with noise, 1 thread" env CLIMG_THREADS=1 "$CLIMG" --cpu "$cd_d/noise.jpg" --png-level 1 -o "$cd_d/noise1.png"
expect_exit 0 "codec: jpeg with noise, 4 threads" env CLIMG_THREADS=4 "$CLIMG" --cpu "$cd_d/noise.jpg" --png-level 1 -o "$cd_d/noise4.png"
check "codec: jpeg with noise: the bytes of one thread" cmp "$cd_d/noise1.png" "$cd_d/noise4.png"
check_not "codec: jpeg with noise: not the undamaged bytes" cmp -s "$cd_d/noise1.png" "$cd_d/d1.png"
for cd_f in cut bad huff; do
	CLIMG_THREADS=1 "$CLIMG" --cpu "$cd_d/$cd_f.jpg" -o "$cd_d/${cd_f}1.png" >/dev/null 2>"$cd_d/e1"
	cd_rc1=$?
	CLIMG_THREADS=4 "$CLIMG" --cpu "$cd_d/$cd_f.jpg" -o "$cd_d/${cd_f}4.png" >/dev/null 2>"$cd_d/e4"
	cd_rc4=$?
	check "codec: damaged jpeg ($cd_f): an error (exit $cd_rc1)" test "$cd_rc1" = 1
	check "codec: damaged jpeg ($cd_f): 4 threads exit as 1 does" test "$cd_rc4" = "$cd_rc1"
	check "codec: damaged jpeg ($cd_f): 4 threads say what 1 says" cmp "$cd_d/e1" "$cd_d/e4"
	check_not "codec: damaged jpeg ($cd_f): no output" test -e "$cd_d/${cd_f}4.png"
done
