# SPDX-License-Identifier: MIT
# The histogram stage through the climg binary: the CSV format exactly, hand-computed counts
# for 1-4 channels, uniform images (one bin holds everything), OpenCL against the CPU path
# byte for byte on odd sizes and in chains, destinations and their usage errors, atomic
# files, and the plot. Sourced by tests/run.sh; helpers and variables start with h_.
# OpenCL runs use the device climg picks (PoCL in CI); with no device they are skipped only
# when CLIMG_TEST_NO_OPENCL=1, as in tests/t-opencl.sh.

h_d=$T/histogram
rm -rf "$h_d"
mkdir -p "$h_d"
h_cl=1
if ! "$CLIMG" --list-devices | grep -q '^0: '; then
	h_cl=0
	[ "${CLIMG_TEST_NO_OPENCL:-0}" = 1 ] || bad "histogram: no OpenCL device"
fi

# h_want FILE CH V:C0[,C1...]...: writes the CSV expected for a CH-channel image whose
# only non-zero rows are the given ones ("77:6" or "255:2,1,1").
h_want() {
	_f=$1
	_ch=$2
	shift 2
	case $_ch in
	1) echo value,grey ;;
	2) echo value,grey,alpha ;;
	3) echo value,red,green,blue ;;
	4) echo value,red,green,blue,alpha ;;
	esac >"$_f"
	_zero=$(printf ',0%.0s' $(seq "$_ch"))
	_v=0
	while [ $_v -lt 256 ]; do
		_row="$_v$_zero"
		for _set in "$@"; do
			[ "${_set%%:*}" = "$_v" ] && _row="$_v,${_set#*:}"
		done
		echo "$_row"
		_v=$((_v + 1))
	done >>"$_f"
}

# h_same NAME WANT GOT: the files are byte for byte equal (shows the first differences).
h_same() {
	if cmp -s "$2" "$3"; then ok; else
		bad "$1"
		diff "$2" "$3" 2>&1 | head -n 6 | sed 's/^/    | /'
	fi
}

# h_both NAME WANT INPUT STAGE...: the CSV that STAGE... writes to stdout for INPUT is WANT,
# on the CPU path and on the OpenCL device (there also under --verify).
h_both() {
	_n=$1
	_want=$2
	_in=$3
	shift 3
	"$CLIMG" --cpu "$_in" "$@" >"$h_d/got" 2>"$T/err"
	h_same "$_n (cpu)" "$_want" "$h_d/got"
	[ $h_cl = 1 ] || return 0
	# the automatic choice would take the CPU path: CLIMG_AUTO_SWITCH=0, the device
	CLIMG_AUTO_SWITCH=0 "$CLIMG" "$_in" "$@" >"$h_d/got" 2>"$T/err"
	h_same "$_n (opencl)" "$_want" "$h_d/got"
	"$CLIMG" --verify "$_in" "$@" >"$h_d/got" 2>"$T/err"
	h_same "$_n (verify)" "$_want" "$h_d/got"
}

# ---- hand-computed counts, 1-4 channels -------------------------------------------------
# 3x2 grey 0 0 5 / 255 5 5
printf 'P5\n3 2\n255\n\0\0\5\377\5\5' >"$h_d/g1.pgm"
h_want "$h_d/w1" 1 0:2 5:3 255:1
h_both "grey 3x2 by hand" "$h_d/w1" "$h_d/g1.pgm" histogram
# red, white: the example in the man page
printf 'P6\n2 1\n255\n\377\0\0\377\377\377' >"$h_d/g3.ppm"
h_want "$h_d/w3" 3 0:0,1,1 255:2,1,1
h_both "rgb red+white by hand (man page example)" "$h_d/w3" "$h_d/g3.ppm" histogram
check "man page shows that example" grep -q '^255,2,1,1$' man/climg.1
# impulse:X:Y is 0 in the colour channels except 255 at (X, Y), alpha 255 (tests/imgtool.c)
"$IMGTOOL" make 5 3 2 impulse:4:2 "$h_d/g2.png"
h_want "$h_d/w2" 2 0:14,0 255:1,15
h_both "grey+alpha impulse by hand" "$h_d/w2" "$h_d/g2.png" histogram
"$IMGTOOL" make 7 2 4 impulse:0:1 "$h_d/g4.png"
h_want "$h_d/w4" 4 0:13,13,13,0 255:1,1,1,14
h_both "rgba impulse by hand" "$h_d/w4" "$h_d/g4.png" histogram
# the grey of red (76) and of white (255), then grey+alpha of the rgba impulse
h_want "$h_d/wg" 1 76:1 255:1
h_both "histogram after grey" "$h_d/wg" "$h_d/g3.ppm" grey histogram

# ---- the format: header, 256 rows in order, integers, columns summing to w*h ------------
for f in testdata/photo.jpg testdata/f-rgba.png testdata/grad-grey.pgm testdata/sample.bmp; do
	"$CLIMG" "$f" histogram >"$h_d/h.csv"
	h_info=$("$IMGTOOL" info "$f") # W H CH FORMAT
	h_w=$(echo "$h_info" | cut -d ' ' -f 1)
	h_h=$(echo "$h_info" | cut -d ' ' -f 2)
	h_ch=$(echo "$h_info" | cut -d ' ' -f 3)
	check "256 rows after the header ($f)" test "$(wc -l <"$h_d/h.csv")" = 257
	check "rows are v,count... for v = 0..255 in order ($f)" awk -F, -v ch="$h_ch" '
		NR > 1 && (NF != ch + 1 || $1 != NR - 2) { exit 1 }
		NR > 1 { for (i = 1; i <= NF; i++) if ($i !~ /^(0|[1-9][0-9]*)$/) exit 1 }' "$h_d/h.csv"
	check "every column sums to w*h ($f)" awk -F, -v n=$((h_w * h_h)) '
		NR > 1 { for (i = 2; i <= NF; i++) s[i] += $i }
		END { for (i = 2; i <= NF; i++) if (s[i] != n) exit 1 }' "$h_d/h.csv"
done
check "header for 3 channels" sh -c "'$CLIMG' testdata/photo.jpg histogram | head -n 1 | grep -qx 'value,red,green,blue'"
check "header for 4 channels" sh -c "'$CLIMG' testdata/f-rgba.png histogram | head -n 1 | grep -qx 'value,red,green,blue,alpha'"
check "header for grey+alpha" sh -c "'$CLIMG' testdata/f-rgba.png grey histogram | head -n 1 | grep -qx 'value,grey,alpha'"
# the man page's example, verbatim: a 2x1 RGB image of one red and one white pixel
printf 'P6\n2 1\n255\n\377\000\000\377\377\377' >"$h_d/rw.ppm"
"$CLIMG" --cpu "$h_d/rw.ppm" histogram >"$h_d/rw.csv"
{ head -n 3 "$h_d/rw.csv"; echo '\&...'; tail -n 2 "$h_d/rw.csv"; } >"$h_d/rw-short"
sed -n '/^For example, a 2\\(mu1 RGB image of one red and one white pixel gives$/,/^\.fi$/p' man/climg.1 |
	sed -n '/^\.nf$/,/^\.fi$/p' | sed '1d;$d' >"$h_d/man-example"
check "the man page's histogram example is real" cmp -s "$h_d/rw-short" "$h_d/man-example"

# ---- uniform images: the whole count lands in one bin ------------------------------------
# 2048x2048 has 4194304 pixels in one bin: a 16-bit per-group or an 8-bit per-item counter
# would wrap (PoCL runs at most 16 x 256 work-items here, 1024 pixels each); 4097x4097 has
# 16785409 > 2^24, which a float accumulator cannot hold exactly.
for size in 1x1 257x1 2048x2048; do
	w=${size%x*}
	h=${size#*x}
	for v in 0 255 77; do
		for ch in 1 4; do
			[ $size = 2048x2048 ] && [ $ch = 4 ] && [ $v != 77 ] && continue
			"$IMGTOOL" make "$w" "$h" "$ch" const:$v "$h_d/u.png"
			case $ch in
			1) h_want "$h_d/wu" 1 "$v:$((w * h))" ;;
			4) n=$((w * h)) && h_want "$h_d/wu" 4 "$v:$n,$n,$n,$n" ;;
			esac
			h_both "uniform $size ch=$ch all $v" "$h_d/wu" "$h_d/u.png" histogram
		done
	done
done
"$IMGTOOL" make 4097 4097 1 const:200 "$h_d/u.png"
h_want "$h_d/wu" 1 200:16785409
h_both "uniform 4097x4097 all 200 (more than 2^24)" "$h_d/wu" "$h_d/u.png" histogram
rm -f "$h_d/u.png"

# ---- OpenCL against the CPU path on odd sizes, 1-4 channels ------------------------------
if [ $h_cl = 1 ]; then
	for size in 1x1 1x17 17x1 13x7 251x241 1031x769; do
		w=${size%x*}
		h=${size#*x}
		for ch in 1 2 3 4; do
			# noise has no runs of equal values, photo (smooth) has many
			pats="noise:$((w + h + ch)) photo:$ch"
			[ $w -gt 1000 ] && pats=photo:$ch
			for pat in $pats; do
				"$IMGTOOL" make "$w" "$h" "$ch" "$pat" "$h_d/in.png"
				"$CLIMG" --cpu "$h_d/in.png" histogram:"$h_d/cpu.csv" 2>"$T/err"
				CLIMG_AUTO_SWITCH=0 "$CLIMG" "$h_d/in.png" histogram:"$h_d/cl.csv" 2>"$T/err"
				h_same "opencl = cpu $size ch=$ch $pat" "$h_d/cpu.csv" "$h_d/cl.csv"
			done
			expect_exit 0 "verify $size ch=$ch" "$CLIMG" --verify "$h_d/in.png" histogram:"$h_d/v.csv" grey histogram:plot="$h_d/v.png"
		done
	done
fi

# ---- chains: histograms before and after other stages ------------------------------------
"$IMGTOOL" make 37 23 4 photo:3 "$h_d/c.png"
# h_chain LABEL OPTION...: the chain, its files named LABEL-*
h_chain() {
	_l=$h_d/$1
	shift
	"$CLIMG" "$@" "$h_d/c.png" histogram:"$_l-a.csv" rotate:90 histogram:"$_l-b.csv" \
		grey histogram:"$_l-c.csv":plot="$_l-c.png" transpose \
		histogram:plot="$_l-d.png":scale=log -o "$_l-out.png"
}
expect_exit 0 "chain on the cpu" h_chain cpu --cpu
if [ $h_cl = 1 ]; then
	expect_exit 0 "chain on opencl" h_chain cl --device 0
	expect_exit 0 "chain under --verify" h_chain verify --verify
	for f in a.csv b.csv c.csv c.png d.png out.png; do
		h_same "chain: opencl = cpu ($f)" "$h_d/cpu-$f" "$h_d/cl-$f"
		h_same "chain: verify = cpu ($f)" "$h_d/cpu-$f" "$h_d/verify-$f"
	done
fi
h_same "rotation keeps the histogram" "$h_d/cpu-a.csv" "$h_d/cpu-b.csv"
"$CLIMG" --cpu "$h_d/c.png" rotate:90 grey transpose -o "$h_d/plain.png"
same_pixels "histograms leave the image alone" "$h_d/plain.png" "$h_d/cpu-out.png"
"$CLIMG" --cpu "$h_d/c.png" grey -o "$h_d/grey.png"
"$CLIMG" --cpu "$h_d/grey.png" histogram >"$h_d/grey.csv"
h_same "a histogram after grey counts grey's output" "$h_d/grey.csv" "$h_d/cpu-c.csv"

# ---- destinations -------------------------------------------------------------------------
expect_exit 0 "histogram alone writes to stdout" "$CLIMG" "$h_d/g1.pgm" histogram
h_same "stdout holds the CSV and nothing else" "$h_d/w1" "$T/out"
expect_exit 0 "- is stdout" "$CLIMG" "$h_d/g1.pgm" histogram:-
h_same "- holds the CSV" "$h_d/w1" "$T/out"
expect_exit 0 "to a file" "$CLIMG" "$h_d/g1.pgm" histogram:"$h_d/f.csv"
check "to a file: stdout empty" test ! -s "$T/out"
h_same "to a file: the CSV" "$h_d/w1" "$h_d/f.csv"
expect_exit 0 "plot alone writes no CSV" "$CLIMG" "$h_d/g1.pgm" histogram:plot="$h_d/p1.png"
check "plot alone: stdout empty" test ! -s "$T/out"
expect_exit 0 "CSV to stdout with an image file" "$CLIMG" "$h_d/g3.ppm" histogram grey -o "$h_d/i.png"
h_same "CSV to stdout with an image file: the CSV" "$h_d/w3" "$T/out"
"$CLIMG" "$h_d/g3.ppm" grey -o "$h_d/i2.png"
check "CSV to stdout with an image file: the image" cmp "$h_d/i.png" "$h_d/i2.png"
"$CLIMG" "$h_d/g3.ppm" -o "$h_d/i3.png"
expect_exit 0 "image to stdout, CSV to a file" "$CLIMG" "$h_d/g3.ppm" histogram:"$h_d/f3.csv" -o -
check "image to stdout is the PNG" cmp "$T/out" "$h_d/i3.png"
h_same "image to stdout, CSV to a file: the CSV" "$h_d/w3" "$h_d/f3.csv"

# ---- usage errors: exit 2 before reading the input, nothing written -----------------------
h_usage() {
	_n=$1
	_pat=$2
	shift 2
	expect_exit 2 "$_n" "$CLIMG" "$h_d/missing.png" "$@"
	expect_stderr "$_n: message" "$_pat"
}
h_usage "two stdout histograms" '^climg: stage 1 \(histogram\) and stage 3 \(histogram:-\) both write to standard output$' histogram grey histogram:-
h_usage "histogram and -o - both on stdout" 'standard output, and so does -o -' histogram -o -
h_usage "CSV and plot both on stdout" 'both write to standard output' histogram:-:plot=-
h_usage "CSV path is the image output" "writes to '.*o.png', the image output too" histogram:plot="$h_d/o.png" -o "$h_d/o.png"
h_usage "two histograms to one file" "both write to '.*same.csv'" histogram:"$h_d/same.csv" histogram:"$h_d/same.csv"
h_usage "CSV and plot to one file" "both write to" histogram:"$h_d/same.dat":plot="$h_d/same.dat"
h_usage "CSV with an image extension" "would hold text, not an image; for a picture use plot=" histogram:"$h_d/h.png"
h_usage "plot with an unknown extension" "cannot tell the image format of '.*h.gif'" histogram:plot="$h_d/h.gif"
h_usage "plot as pgm" "pgm output needs a 1-channel image" histogram:plot="$h_d/h.pgm"
h_usage "scale without plot" "scale= is for the plot" histogram:scale=log
h_usage "bad scale" "scale must be linear or log, not 'cubic'" histogram:scale=cubic:plot="$h_d/p.png"
h_usage "misspelt option" "unknown option 'plto='" histogram:plto="$h_d/p.png"
h_usage "two CSV destinations" "two CSV destinations" histogram:"$h_d/a.csv":"$h_d/b.csv"
h_usage "empty argument" "empty argument" histogram:
check "no file after usage errors" sh -c "! ls '$h_d' | grep -Eq '^(o.png|same.csv|same.dat|h.png|h.gif|h.pgm|p.png|a.csv|b.csv)$'"
# two files that are one (a hard link)
echo old >"$h_d/link1.csv"
ln "$h_d/link1.csv" "$h_d/link2.csv"
expect_exit 2 "hard-linked destinations" "$CLIMG" "$h_d/g1.pgm" histogram:"$h_d/link1.csv" histogram:"$h_d/link2.csv"
expect_stderr "hard-linked destinations: message" "both write to"

# ---- run-time failures: the file is opened before decoding, written only after success ----
"$IMGTOOL" make 64 64 3 noise:5 "$h_d/big.png"
head -c 2000 "$h_d/big.png" >"$h_d/trunc.png"
expect_exit 1 "missing CSV directory" "$CLIMG" "$h_d/trunc.png" histogram:"$h_d/nodir/h.csv"
expect_stderr "missing directory is reported before decoding" "nodir"
expect_exit 1 "missing plot directory" "$CLIMG" "$h_d/trunc.png" histogram:plot="$h_d/nodir/h.png"
expect_stderr "missing plot directory named" "nodir"
echo keep >"$h_d/keep.csv"
cp "$h_d/keep.csv" "$h_d/keep.orig"
expect_exit 1 "failing run over an existing CSV" "$CLIMG" --cpu "$h_d/trunc.png" histogram:"$h_d/keep.csv":plot="$h_d/keep.png"
check "existing CSV unchanged" cmp "$h_d/keep.csv" "$h_d/keep.orig"
check "no plot after a failure" test ! -e "$h_d/keep.png"
check "no temporary file left" sh -c "! ls -A '$h_d' | grep -q '\.climg-'"
expect_exit 1 "a failing image output leaves no CSV" "$CLIMG" --cpu "$h_d/g3.ppm" histogram:"$h_d/none.csv" -o "$h_d/nodir/x.png"
check "no CSV when the image output fails" test ! -e "$h_d/none.csv"

# ---- the plot -----------------------------------------------------------------------------
"$CLIMG" testdata/photo.jpg histogram:plot="$h_d/p.png"
check "plot is a 536x300 RGB PNG" test "$("$IMGTOOL" info "$h_d/p.png")" = "536 300 3 png"
"$CLIMG" testdata/photo.jpg rotate:90 histogram:plot="$h_d/p-rot.png"
check "same histogram, same plot" cmp "$h_d/p.png" "$h_d/p-rot.png"
"$CLIMG" testdata/photo.jpg histogram:plot="$h_d/p2.png"
check "plot bytes are reproducible" cmp "$h_d/p.png" "$h_d/p2.png"
"$CLIMG" testdata/photo.jpg grey histogram:plot="$h_d/p-grey.png"
check_not "plot changes with the histogram (grey)" "$IMGTOOL" cmp "$h_d/p.png" "$h_d/p-grey.png"
"$IMGTOOL" make 320 240 3 photo:2 "$h_d/photo2.png"
"$CLIMG" "$h_d/photo2.png" histogram:plot="$h_d/p-other.png"
check_not "plot changes with the histogram (other image)" "$IMGTOOL" cmp "$h_d/p.png" "$h_d/p-other.png"
"$CLIMG" testdata/photo.jpg histogram:plot="$h_d/p-log.png":scale=log
check_not "scale=log changes the plot" "$IMGTOOL" cmp "$h_d/p.png" "$h_d/p-log.png"
"$CLIMG" testdata/photo.jpg histogram:plot="$h_d/p-lin.png":scale=linear
check "scale=linear is the default" cmp "$h_d/p.png" "$h_d/p-lin.png"
"$CLIMG" --cpu testdata/photo.jpg histogram:plot="$h_d/p-cpu.png"
check "plot: cpu = opencl" cmp "$h_d/p.png" "$h_d/p-cpu.png"
"$CLIMG" testdata/photo.jpg histogram:plot=- >"$h_d/p-stdout.png"
check "plot=- writes the PNG to stdout" cmp "$h_d/p.png" "$h_d/p-stdout.png"
"$CLIMG" testdata/photo.jpg histogram:plot="$h_d/p.bmp"
same_pixels "plot format by extension (bmp)" "$h_d/p.png" "$h_d/p.bmp"
"$CLIMG" testdata/f-rgba.png histogram:plot="$h_d/p4.png" histogram:plot="$h_d/p1.png":scale=log
check "plot of 4 channels is RGB too" test "$("$IMGTOOL" info "$h_d/p4.png")" = "536 300 3 png"

# an opaque RGBA image: its alpha is one bin of every pixel, which the plot leaves out by
# default so that the colour curves fill it; alpha=yes puts it back (and the colours then lie
# flat on the bottom row, blue on top). h_curve PLOT R,G,B: how many pixels of that curve
# colour the plot area holds above its bottom row (rows 20-274, columns 12-523).
h_curve() {
	"$IMGTOOL" dump "$1" | awk -v c="$2" 'NR >= 21 && NR <= 275 {
		for (i = 13; i <= 524; i++) if ($i == c) n++ } END { print n + 0 }'
}
"$IMGTOOL" make 256 256 4 opaque:1 "$h_d/op4.png"
"$CLIMG" "$h_d/op4.png" histogram:plot="$h_d/pa.png"
"$CLIMG" "$h_d/op4.png" histogram:plot="$h_d/pa-no.png":alpha=no
check "alpha=no is the default" cmp "$h_d/pa.png" "$h_d/pa-no.png"
"$CLIMG" "$h_d/op4.png" histogram:plot="$h_d/pa-yes.png":alpha=yes
for c in red:220,32,32 green:32,160,32 blue:32,64,224; do
	n=$(h_curve "$h_d/pa.png" "${c#*:}")
	check "opaque RGBA: the ${c%%:*} curve is drawn ($n pixels)" test "$n" -ge 500
done
n=$(h_curve "$h_d/pa.png" 176,176,176)
check "opaque RGBA: no alpha curve by default ($n pixels)" test "$n" = 0
n=$(h_curve "$h_d/pa-yes.png" 176,176,176)
check "alpha=yes draws the alpha curve ($n pixels)" test "$n" -ge 200
n=$(h_curve "$h_d/pa-yes.png" 220,32,32)
check "alpha=yes: alpha sets the scale, red lies flat ($n pixels)" test "$n" -lt 100
"$CLIMG" "$h_d/op4.png" dropalpha histogram:plot="$h_d/pa-rgb.png"
check "the plot of RGBA without alpha = the plot of its RGB" cmp "$h_d/pa.png" "$h_d/pa-rgb.png"
h_usage "alpha without plot" "alpha= is for the plot; add plot=FILE" histogram:alpha=yes
h_usage "bad alpha" "alpha must be yes or no, not 'on'" histogram:plot="$h_d/p.png":alpha=on
h_usage "alpha twice" "alpha= given twice" histogram:plot="$h_d/p.png":alpha=yes:alpha=no

# ---- documentation ------------------------------------------------------------------------
"$CLIMG" --help >"$h_d/help"
check "--help gives histogram's syntax" grep -qF -- 'histogram[:DEST][:plot=FILE][:scale=linear|log][:alpha=yes|no]' "$h_d/help"
"$CLIMG" help histogram >"$h_d/help"
for w in 'histogram[:DEST][:plot=FILE][:scale=linear|log][:alpha=yes|no]' 'value,red,green,blue,alpha' 'value,grey,alpha' 'plot=FILE' 'scale=log' 'alpha=yes' '536x300'; do
	check "climg help histogram describes $w" grep -qF -- "$w" "$h_d/help"
done
# the man page as groff renders it
if have_groff "the man-page checks"; then
	groff -man -Tascii -P-cbu man/climg.1 2>/dev/null >"$h_d/man"
	for w in 'histogram[:DEST][:plot=FILE][:scale=linear|log][:alpha=yes|no]' 'value,red,green,blue,alpha' 'value,grey,alpha' 'plot=FILE' 'scale=log' 'alpha=yes' '536x300' 'standard output' 'legend'; do
		check "man page describes $w" grep -qF -- "$w" "$h_d/man"
	done
fi
check "README gives histogram's syntax" grep -qF -- 'histogram[:DEST][:plot=FILE][:scale=linear\|log][:alpha=yes\|no]' README.md
check "--list-stages lists histogram" sh -c "'$CLIMG' --list-stages | grep -q '^histogram'"
