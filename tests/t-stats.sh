# SPDX-License-Identifier: MIT
# The stats stage through the climg binary: the CSV and JSON formats exactly, hand-computed
# values for 1-4 channels, sums past 2^32, numpy on a large image, OpenCL against the CPU
# path byte for byte on odd sizes and in chains, destinations (templates in a batch) and
# their usage errors, and the documentation. Sourced by tests/run.sh; helpers and variables
# start with s_. OpenCL runs use the device climg picks (PoCL in CI); with no device they
# are skipped only when CLIMG_TEST_NO_OPENCL=1, as in tests/t-opencl.sh.

s_d=$T/stats
rm -rf "$s_d"
mkdir -p "$s_d"
s_cl=1
if ! "$CLIMG" --list-devices | grep -q '^0: '; then
	s_cl=0
	[ "${CLIMG_TEST_NO_OPENCL:-0}" = 1 ] || bad "stats: no OpenCL device"
fi

# s_want FILE LINE...: the CSV: the header, then the lines given
s_want() {
	_f=$1
	shift
	echo channel,min,max,mean,stddev,pixels,sum,sum_sq >"$_f"
	for _l in "$@"; do echo "$_l"; done >>"$_f"
}

# s_same NAME WANT GOT: the files are byte for byte equal (shows the first differences).
s_same() {
	if cmp -s "$2" "$3"; then ok; else
		bad "$1"
		diff "$2" "$3" 2>&1 | head -n 6 | sed 's/^/    | /'
	fi
}

# s_both NAME WANT INPUT STAGE...: what STAGE... writes to stdout for INPUT is WANT, on the
# CPU path and on the OpenCL device (there also under --verify).
s_both() {
	_n=$1
	_want=$2
	_in=$3
	shift 3
	"$CLIMG" --cpu "$_in" "$@" >"$s_d/got" 2>"$T/err"
	s_same "$_n (cpu)" "$_want" "$s_d/got"
	[ $s_cl = 1 ] || return 0
	"$CLIMG" "$_in" "$@" >"$s_d/got" 2>"$T/err"
	s_same "$_n (opencl)" "$_want" "$s_d/got"
	"$CLIMG" --verify "$_in" "$@" >"$s_d/got" 2>"$T/err"
	s_same "$_n (verify)" "$_want" "$s_d/got"
}

# ---- hand-computed values, 1-4 channels ---------------------------------------------------
# 3x2 grey 0 0 5 / 255 5 5: sum 270, sum_sq 25 + 65025 + 25 + 25 = 65100, mean 270 / 6 = 45,
# variance 65100 / 6 - 45^2 = 8825, stddev sqrt(8825) = 93.9414711...
printf 'P5\n3 2\n255\n\0\0\5\377\5\5' >"$s_d/g1.pgm"
s_want "$s_d/w1" grey,0,255,45.000000,93.941471,6,270,65100
s_both "grey 3x2 by hand" "$s_d/w1" "$s_d/g1.pgm" stats
# red, white (the man page's example): red 255 twice; green and blue 0 and 255, mean 127.5,
# stddev |255 - 0| / 2
printf 'P6\n2 1\n255\n\377\0\0\377\377\377' >"$s_d/g3.ppm"
s_want "$s_d/w3" red,255,255,255.000000,0.000000,2,510,130050 \
	green,0,255,127.500000,127.500000,2,255,65025 blue,0,255,127.500000,127.500000,2,255,65025
s_both "rgb red+white by hand" "$s_d/w3" "$s_d/g3.ppm" stats
tail -n 3 "$s_d/w3" >"$s_d/w3.body"
if have_groff "the man page's stats example"; then
	groff -man -Tascii -P-cbu man/climg.1 2>/dev/null | sed 's/^ *//' >"$s_d/man-lines"
	while read -r s_l; do
		check "man page shows the example's line $s_l" grep -qxF -- "$s_l" "$s_d/man-lines"
	done <"$s_d/w3.body"
fi
# grey+alpha impulse (tests/imgtool.c): grey 0 but one 255 in 15 pixels: mean 17, variance
# 65025 / 15 - 17^2 = 4046, stddev 63.6081756...; alpha 255 everywhere
"$IMGTOOL" make 5 3 2 impulse:4:2 "$s_d/g2.png"
s_want "$s_d/w2" grey,0,255,17.000000,63.608176,15,255,65025 \
	alpha,255,255,255.000000,0.000000,15,3825,975375
s_both "grey+alpha impulse by hand" "$s_d/w2" "$s_d/g2.png" stats
# rgba impulse 7x2: each colour one 255 in 14 pixels: mean 255 / 14 = 18.2142857..., variance
# 65025 / 14 - (255 / 14)^2 = 4312.9336..., stddev 65.6725409...
"$IMGTOOL" make 7 2 4 impulse:0:1 "$s_d/g4.png"
s_imp=0,255,18.214286,65.672541,14,255,65025
s_want "$s_d/w4" red,$s_imp green,$s_imp blue,$s_imp alpha,255,255,255.000000,0.000000,14,3570,910350
s_both "rgba impulse by hand" "$s_d/w4" "$s_d/g4.png" stats
# the grey of red (bt601: 76) and of white (255): mean 165.5, stddev 89.5
s_want "$s_d/wg" grey,76,255,165.500000,89.500000,2,331,70801
s_both "stats after grey" "$s_d/wg" "$s_d/g3.ppm" grey stats

# ---- JSON ----------------------------------------------------------------------------------
printf '%s\n' '{"width":2,"height":1,"pixels":2,"channels":[{"channel":"red","min":255,"max":255,"mean":255.000000,"stddev":0.000000,"sum":510,"sum_sq":130050},{"channel":"green","min":0,"max":255,"mean":127.500000,"stddev":127.500000,"sum":255,"sum_sq":65025},{"channel":"blue","min":0,"max":255,"mean":127.500000,"stddev":127.500000,"sum":255,"sum_sq":65025}]}' >"$s_d/w3.json"
expect_exit 0 "JSON by extension" "$CLIMG" "$s_d/g3.ppm" stats:"$s_d/s.json"
s_same "JSON: the object exactly" "$s_d/w3.json" "$s_d/s.json"
check "JSON: stdout empty" test ! -s "$T/out"
expect_exit 0 "JSON by extension in capitals" "$CLIMG" --cpu "$s_d/g3.ppm" stats:"$s_d/S.JSON"
s_same "JSON in capitals: the object" "$s_d/w3.json" "$s_d/S.JSON"
if need_python "stats JSON parsed by python" json; then
	check "JSON parses, 3 channels" "$PYTHON" -c "import json,sys; j=json.load(open(sys.argv[1])); assert [c['channel'] for c in j['channels']] == ['red','green','blue']" "$s_d/s.json"
fi

# ---- uniform images: stddev exactly 0; sums past 2^32 ------------------------------------
for s_size in 1x1 257x3; do
	for s_v in 0 77 255; do
		for s_ch in 1 4; do
			s_w=${s_size%x*}
			s_h=${s_size#*x}
			s_n=$((s_w * s_h))
			"$IMGTOOL" make "$s_w" "$s_h" "$s_ch" const:$s_v "$s_d/u.png"
			s_line=$s_v,$s_v,$s_v.000000,0.000000,$s_n,$((s_v * s_n)),$((s_v * s_v * s_n))
			if [ $s_ch = 1 ]; then
				s_want "$s_d/wu" grey,$s_line
			else
				s_want "$s_d/wu" red,$s_line green,$s_line blue,$s_line alpha,$s_line
			fi
			s_both "uniform $s_size ch=$s_ch all $s_v" "$s_d/wu" "$s_d/u.png" stats
		done
	done
done
# 4200 x 4200 = 17640000 pixels of 255: the sum 4498200000 passes 2^32 (a 32-bit sum wraps),
# so do the sums of squares of most images
"$IMGTOOL" make 4200 4200 1 const:255 "$s_d/u.png"
s_want "$s_d/wu" grey,255,255,255.000000,0.000000,17640000,4498200000,1147041000000
s_both "uniform 4200x4200 all 255: sums past 2^32" "$s_d/wu" "$s_d/u.png" stats
rm -f "$s_d/u.png"

# ---- numpy on a large image ---------------------------------------------------------------
# every number against numpy (integers exactly, mean and stddev within 1e-6), and the printed
# mean and stddev against Python's exact integers divided once, on both paths
if need_python "stats against numpy" numpy PIL; then
	for s_ch in 1 3 4; do
		"$IMGTOOL" make 2011 1503 $s_ch photo:$s_ch "$s_d/big.png"
		"$CLIMG" --cpu "$s_d/big.png" stats:"$s_d/big-cpu.csv"
		check "numpy agrees, 2011x1503 ch=$s_ch" "$PYTHON" - "$s_d/big.png" "$s_d/big-cpu.csv" <<'EOF'
import math, sys
import numpy as np
from PIL import Image
a = np.asarray(Image.open(sys.argv[1])).astype(np.int64)
if a.ndim == 2:
    a = a[:, :, None]
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[2])]
assert rows[0] == "channel,min,max,mean,stddev,pixels,sum,sum_sq".split(","), rows[0]
assert len(rows) == 1 + a.shape[2]
n = a.shape[0] * a.shape[1]
for c in range(a.shape[2]):
    v = a[:, :, c]
    r = rows[1 + c]
    s, q = int(v.sum()), int((v * v).sum())
    assert [int(x) for x in (r[1], r[2], r[5], r[6], r[7])] == [v.min(), v.max(), n, s, q], (c, r)
    assert abs(float(r[3]) - v.mean()) <= 1e-6, (c, r[3], v.mean())
    assert abs(float(r[4]) - v.std()) <= 1e-6, (c, r[4], v.std())
    assert r[3] == "%.6f" % (s / n), (c, r[3])
    assert r[4] == "%.6f" % (math.sqrt(n * q - s * s) / n), (c, r[4])
assert n * 255 * 255 * 2 > 2**32  # the sums of squares pass 2^32
EOF
		if [ $s_cl = 1 ]; then
			"$CLIMG" "$s_d/big.png" stats:"$s_d/big-cl.csv"
			s_same "numpy image: opencl = cpu ch=$s_ch" "$s_d/big-cpu.csv" "$s_d/big-cl.csv"
		fi
	done
	rm -f "$s_d/big.png"
fi

# ---- OpenCL against the CPU path on odd sizes, 1-4 channels ------------------------------
if [ $s_cl = 1 ]; then
	for s_size in 1x1 1x17 17x1 13x7 251x241 1031x769; do
		s_w=${s_size%x*}
		s_h=${s_size#*x}
		for s_ch in 1 2 3 4; do
			for s_pat in "noise:$((s_w + s_h + s_ch))" "photo:$s_ch"; do
				"$IMGTOOL" make "$s_w" "$s_h" "$s_ch" "$s_pat" "$s_d/in.png"
				"$CLIMG" --cpu "$s_d/in.png" stats:"$s_d/cpu.csv" 2>"$T/err"
				"$CLIMG" "$s_d/in.png" stats:"$s_d/cl.csv" 2>"$T/err"
				s_same "opencl = cpu $s_size ch=$s_ch $s_pat" "$s_d/cpu.csv" "$s_d/cl.csv"
			done
			expect_exit 0 "verify $s_size ch=$s_ch" "$CLIMG" --verify "$s_d/in.png" stats:"$s_d/v.csv" grey stats:"$s_d/v.json"
		done
	done
fi

# ---- chains --------------------------------------------------------------------------------
"$IMGTOOL" make 37 23 4 photo:3 "$s_d/c.png"
# s_chain LABEL OPTION...: the chain, its files named LABEL-*
s_chain() {
	_l=$s_d/$1
	shift
	"$CLIMG" "$@" "$s_d/c.png" stats:"$_l-a.csv" rotate:90 stats:"$_l-b.csv" grey \
		stats:"$_l-c.json" histogram:"$_l-h.csv" transpose -o "$_l-out.png"
}
expect_exit 0 "chain on the cpu" s_chain cpu --cpu
if [ $s_cl = 1 ]; then
	expect_exit 0 "chain on opencl" s_chain cl --device 0
	expect_exit 0 "chain under --verify" s_chain verify --verify
	for f in a.csv b.csv c.json h.csv out.png; do
		s_same "chain: opencl = cpu ($f)" "$s_d/cpu-$f" "$s_d/cl-$f"
		s_same "chain: verify = cpu ($f)" "$s_d/cpu-$f" "$s_d/verify-$f"
	done
fi
s_same "rotation keeps the stats" "$s_d/cpu-a.csv" "$s_d/cpu-b.csv"
"$CLIMG" --cpu "$s_d/c.png" rotate:90 grey transpose -o "$s_d/plain.png"
same_pixels "stats leave the image alone" "$s_d/plain.png" "$s_d/cpu-out.png"
"$CLIMG" --cpu "$s_d/c.png" rotate:90 grey -o "$s_d/grey.png"
"$CLIMG" --cpu "$s_d/grey.png" stats:"$s_d/grey.json"
s_same "stats after grey measure grey's output" "$s_d/grey.json" "$s_d/cpu-c.json"
# the stats agree with the histogram taken at the same point: sum = the sum of v count(v),
# sum_sq = the sum of v^2 count(v), for grey (column 2) and alpha (column 3)
for s_col in 2 3; do
	s_hs=$(awk -F, -v c=$s_col 'NR > 1 { s1 += $1 * $c; s2 += $1 * $1 * $c }
		END { printf "\"sum\":%d,\"sum_sq\":%d\n", s1, s2 }' "$s_d/cpu-h.csv")
	s_js=$(grep -o '"sum":[0-9]*,"sum_sq":[0-9]*' "$s_d/cpu-c.json" | sed -n "$((s_col - 1))p")
	check "sums agree with the histogram (column $s_col: $s_hs)" test "$s_hs" = "$s_js"
done

# ---- destinations --------------------------------------------------------------------------
expect_exit 0 "stats alone writes to stdout" "$CLIMG" "$s_d/g1.pgm" stats
s_same "stdout holds the CSV and nothing else" "$s_d/w1" "$T/out"
expect_exit 0 "- is stdout" "$CLIMG" "$s_d/g1.pgm" stats:-
s_same "- holds the CSV" "$s_d/w1" "$T/out"
expect_exit 0 "to a .csv file" "$CLIMG" "$s_d/g1.pgm" stats:"$s_d/f.csv"
check "to a file: stdout empty" test ! -s "$T/out"
s_same "to a .csv file: the CSV" "$s_d/w1" "$s_d/f.csv"
expect_exit 0 "to a file without an extension" "$CLIMG" "$s_d/g1.pgm" stats:"$s_d/f"
s_same "no extension: CSV" "$s_d/w1" "$s_d/f"
expect_exit 0 "CSV to stdout with an image file" "$CLIMG" "$s_d/g3.ppm" stats grey -o "$s_d/i.png"
s_same "CSV to stdout with an image file: the CSV" "$s_d/w3" "$T/out"
"$CLIMG" "$s_d/g3.ppm" grey -o "$s_d/i2.png"
check "CSV to stdout with an image file: the image" cmp "$s_d/i.png" "$s_d/i2.png"

# ---- a batch: DEST is a template -------------------------------------------------------------
mkdir -p "$s_d/bin"
"$IMGTOOL" make 13 7 3 grad "$s_d/bin/one.png"
"$IMGTOOL" make 9 5 1 noise:3 "$s_d/bin/two.png"
expect_exit 0 "batch: a file per image" "$CLIMG" "$s_d/bin" stats:"$s_d/bout/%n.csv" grey stats:"$s_d/bout/%n-grey.json"
for s_n in one two; do
	"$CLIMG" --cpu "$s_d/bin/$s_n.png" stats >"$s_d/one-$s_n.csv"
	s_same "batch: $s_n.csv is the one-image run's" "$s_d/one-$s_n.csv" "$s_d/bout/$s_n.csv"
	"$CLIMG" --cpu "$s_d/bin/$s_n.png" grey stats:"$s_d/one-$s_n.json"
	s_same "batch: $s_n-grey.json is the one-image run's" "$s_d/one-$s_n.json" "$s_d/bout/$s_n-grey.json"
done
expect_exit 2 "batch: stats to stdout is refused" "$CLIMG" "$s_d/bin" stats
expect_stderr "batch: stdout refused, message" 'stats: several inputs cannot share standard output; give a destination such as stats:h/%n.csv'

# ---- usage errors: exit 2 before reading the input, nothing written -----------------------
s_usage() {
	_n=$1
	_pat=$2
	shift 2
	expect_exit 2 "$_n" "$CLIMG" "$s_d/missing.png" "$@"
	expect_stderr "$_n: message" "$_pat"
}
s_usage "image extension" "stats: cannot tell the format of '.*s.png' \(use .csv or .json\)" stats:"$s_d/s.png"
s_usage "unknown extension" "cannot tell the format of '.*s.txt'" stats:"$s_d/s.txt"
s_usage "two destinations" "stats: takes at most one argument" stats:"$s_d/a.csv":"$s_d/b.csv"
s_usage "empty destination" "stats: empty destination" stats:
s_usage "stats and histogram both on stdout" '^climg: stage 1 \(stats\) and stage 2 \(histogram\) both write to standard output$' stats histogram
s_usage "stats and -o - both on stdout" 'standard output, and so does -o -' stats -o -
s_usage "stats file is the image output" "writes to '.*o.csv', the image output too" stats:"$s_d/o.csv" -o "$s_d/o.csv" --format png
s_usage "two stats to one file" "both write to '.*same.csv'" stats:"$s_d/same.csv" grey stats:"$s_d/same.csv"
check "no file after usage errors" sh -c "! ls '$s_d' | grep -Eq '^(s.png|s.txt|a.csv|b.csv|o.csv|same.csv)$'"

# ---- run-time failures: the file is opened before decoding, written only after success ----
"$IMGTOOL" make 64 64 3 noise:5 "$s_d/n.png"
head -c 2000 "$s_d/n.png" >"$s_d/trunc.png"
expect_exit 1 "missing directory" "$CLIMG" "$s_d/trunc.png" stats:"$s_d/nodir/s.csv"
expect_stderr "missing directory is reported" "nodir"
echo keep >"$s_d/keep.csv"
cp "$s_d/keep.csv" "$s_d/keep.orig"
expect_exit 1 "failing run over an existing file" "$CLIMG" --cpu "$s_d/trunc.png" stats:"$s_d/keep.csv"
check "existing file unchanged" cmp "$s_d/keep.csv" "$s_d/keep.orig"
check "no temporary file left" sh -c "! ls -A '$s_d' | grep -q '\.climg-'"

# ---- documentation ------------------------------------------------------------------------
"$CLIMG" --help >"$s_d/help"
for w in 'stats[:DEST]' 'stats sums'; do
	check "--help describes $w" grep -qF -- "$w" "$s_d/help"
done
"$CLIMG" help stats >"$s_d/help"
for w in 'stats[:DEST]' 'channel,min,max,mean,stddev,pixels,sum,sum_sq' '.json' 'sqrt(N sum_sq - sum^2) / N'; do
	check "climg help stats describes $w" grep -qF -- "$w" "$s_d/help"
done
if have_groff "the man-page checks"; then
	groff -man -Tascii -P-cbu man/climg.1 2>/dev/null >"$s_d/man"
	for w in 'stats[:DEST]' 'channel,min,max,mean,stddev,pixels,sum,sum_sq' 'stddev = sqrt(N sum_sq - sum^2) / N' '.json' '"sum_sq":65025' 'population deviation'; do
		check "man page describes $w" grep -qF -- "$w" "$s_d/man"
	done
fi
check "README gives stats' syntax" grep -qF -- '`stats[:DEST]`' README.md
check "climg help stats names numpy's std" sh -c "'$CLIMG' help stats | grep -qF \"numpy's\""
# the man page's example, verbatim: a 2x1 RGB image of one red and one white pixel
printf 'P6\n2 1\n255\n\377\000\000\377\377\377' >"$s_d/rw.ppm"
"$CLIMG" --cpu "$s_d/rw.ppm" stats >"$s_d/rw.csv"
sed -n '/^For example, the 2\\(mu1 RGB image of one red and one white pixel gives$/,/^\.fi$/p' man/climg.1 |
	sed -n '/^\.nf$/,/^\.fi$/p' | sed '1d;$d' >"$s_d/man-example"
check "the man page's stats example is real" cmp -s "$s_d/rw.csv" "$s_d/man-example"
check "--list-stages lists stats" sh -c "'$CLIMG' --list-stages | grep -q '^stats\[:DEST\] '"
