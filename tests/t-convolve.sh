# SPDX-License-Identifier: MIT
# convolve: documentation, usage errors, kernel files, hand-computed results on the OpenCL
# device, and OpenCL against the CPU path byte for byte (every named kernel, custom integer
# and decimal kernels, gauss with sigma 0.5, 2, 8 and 50, every border mode) on odd sizes
# with 1-4 channels, through the local-memory tiles and through the global-memory paths.
# tests/unit.c holds the CPU-path cases worked out by hand.

D=$T/convolve
mkdir -p "$D"

# ---- documentation ------------------------------------------------------------------------
"$CLIMG" help convolve >"$D/help.txt"
# every named kernel with its weights (gauss with its formula) in climg help convolve and the
# man page
while IFS='|' read -r name weights; do
	check "help convolve gives $name's weights" grep -Eq "^ +$name +$weights" "$D/help.txt"
	check "man page gives $name's weights" sh -c "sed 's/\\\\-/-/g' man/climg.1 | grep -A1 -E '^\\.B[IR]? $name' | grep -q -- '$weights'"
done <<'EOF'
sharpen|0 -1 0 / -1 5 -1 / 0 -1 0
edge|0 -1 0 / -1 4 -1 / 0 -1 0
sobel-x|-1 0 1 / -2 0 2 / -1 0 1
sobel-y|-1 -2 -1 / 0 0 0 / 1 2 1
emboss|-2 -1 0 / -1 1 1 / 0 1 2
identity|1
EOF
check "help convolve gives box" grep -Eq '^ +box\[:size=N\] +N x N ones' "$D/help.txt"
check "help convolve gives gauss's formula" sh -c \
	"grep -A1 '^  gauss\[:sigma=S\]\[:radius=R\]$' '$D/help.txt' | grep -qF 'exp(-(x^2 + y^2) / (2 S^2))'"
check "help convolve states the fixed-point contract" grep -q 'out = 0 if t < 0, else min(floor(t / D), 255)' "$D/help.txt"
check "man page gives gauss's formula" grep -q 'exp(\\-(dx\\(S2 + dy\\(S2) / (2 S\\(S2))' man/climg.1
check "man page states the fixed-point contract" grep -q '^out = 0 if t < 0, else min(floor(t / D), 255)' man/climg.1
check "man page works the sobel-x example" grep -q 'The row becomes 168 208 208 208 168' man/climg.1
check "man page says correlation" grep -q 'this is correlation' man/climg.1
check "the contract is written in convolve.c" grep -q '^// FIXED-POINT CONTRACT' src/stages/convolve.c
check "convolve.cl cites it" grep -q 'FIXED-POINT CONTRACT' kernels/convolve.cl

# ---- usage errors: exit 2, the problem named, nothing written --------------------------------
"$IMGTOOL" make 13 7 3 noise:4 "$D/in.png"
while IFS='|' read -r stage msg; do
	expect_exit 2 "$stage is a usage error" "$CLIMG" --cpu "$D/in.png" "$stage" -o "$D/x.png"
	expect_stderr "$stage: message" "^climg: convolve: .*$msg"
done <<'EOF'
convolve:kernel=1,2,3,4|the kernel is 2x2; its side must be odd
convolve:kernel=1,2,3,4,5,6|6 numbers do not make a square kernel
convolve:kernel=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16|4x4; its side must be odd
convolve:gauss:sigma=0|sigma must be a number above 0 and at most 1000, not '0'
convolve:gauss:sigma=-2|not '-2'
convolve:gauss:sigma=nan|not 'nan'
convolve:gauss:sigma=1e30|not '1e30'
convolve:gauss:sigma=500|needs a radius of ceil\(3 \* sigma\) = 1500; the largest is 1000
convolve:blur|unknown kernel 'blur'
convolve:kernel=@/nonexistent/k.txt|cannot read kernel file '/nonexistent/k.txt'
convolve:box:size=6|size must be an odd whole number
convolve:box:border=mirror|border must be replicate, reflect, wrap or zero, not 'mirror'
convolve:sobel-x:norm=sum|norm=sum: the weights of sobel-x sum to 0
convolve|needs a kernel
EOF
mkdir -p "$D/dir.txt"
expect_exit 2 "a directory as kernel file" "$CLIMG" --cpu "$D/in.png" "convolve:kernel=@$D/dir.txt" -o "$D/x.png"
expect_stderr "directory named" "cannot read kernel file '.*dir.txt'"
printf '1 2 1\n2 4\n1 2 1\n' >"$D/ragged.txt"
expect_exit 2 "a ragged kernel file" "$CLIMG" --cpu "$D/in.png" "convolve:kernel=@$D/ragged.txt" -o "$D/x.png"
expect_stderr "ragged row named" "ragged.txt: line 2 has 2 numbers, the first row 3"
printf '1 2 1\n2 4 2\n' >"$D/short.txt"
expect_exit 2 "a kernel file that is not square" "$CLIMG" --cpu "$D/in.png" "convolve:kernel=@$D/short.txt" -o "$D/x.png"
expect_stderr "not square named" "short.txt: 2 rows of 3 numbers"
printf '1 2\n3 4\n' >"$D/even.txt"
expect_exit 2 "an even kernel file" "$CLIMG" --cpu "$D/in.png" "convolve:kernel=@$D/even.txt" -o "$D/x.png"
expect_stderr "even file named" "even.txt: the kernel is 2x2"
printf '1 2 1\n2 x 2\n1 2 1\n' >"$D/nan.txt"
expect_exit 2 "a word in a kernel file" "$CLIMG" --cpu "$D/in.png" "convolve:kernel=@$D/nan.txt" -o "$D/x.png"
expect_stderr "word named" "nan.txt: weight 5 must be a number, not 'x'"
check_not "nothing written after usage errors" test -e "$D/x.png"
# convolve's arguments are checked before the input is read
expect_exit 2 "stage checked before the input" "$CLIMG" "$D/missing.png" convolve:gauss:sigma=0 -o "$D/x.png"
# the work limit of a kernel that is not separable is checked from the header, before
# decoding: a PNG whose header says 20001 x 20001 RGB, with no pixels behind it
printf '\211\120\116\107\015\012\032\012\000\000\000\015\111\110\104\122\000\000\116\041\000\000\116\041\010\002\000\000\000\110\214\151\365\000\000\000\013\111\104\101\124\170\234\143\140\200\000\000\000\010\000\001\267\130\163\225\000\000\000\000\111\105\116\104\256\102\140\202' >"$D/huge.png"
k=$(awk 'BEGIN { for (i = 0; i < 51 * 51; i++) printf "%s%d", i ? "," : "", (i * i) % 11 }')
expect_exit 2 "non-separable work limit" "$CLIMG" --cpu --max-pixels 4000000000 "$D/huge.png" "convolve:kernel=$k" -o "$D/x.png"
expect_stderr "work limit named" "^climg: convolve:kernel=0,1,4,9[0-9,]*\\.\\.\\.: a 51x51 custom kernel \\(not separable\\) on a 20001x20001 image with 3 colour channels is 3.1e\\+12 multiply-adds, over the limit of 2\\^40"
expect_exit 1 "a separable kernel has no such limit (the missing pixels fail)" "$CLIMG" --cpu --max-pixels 4000000000 "$D/huge.png" convolve:box:size=51 -o "$D/x.png"

# ---- kernel files ---------------------------------------------------------------------------
printf '# a 3x3 kernel, one row a line\n\n 1\t2  1\r\n2 4 2\r\n1 2 1   \n\n' >"$D/g.txt"
"$CLIMG" --cpu "$D/in.png" convolve:kernel=1,2,1,2,4,2,1,2,1 -o "$D/inline.png"
expect_exit 0 "a kernel file (comments, blank lines, tabs, CRLF)" "$CLIMG" --cpu "$D/in.png" "convolve:kernel=@$D/g.txt" -o "$D/file.png"
same_pixels "kernel file = inline kernel" "$D/file.png" "$D/inline.png"
"$CLIMG" --cpu "$D/in.png" convolve:box:size=3 -o "$D/box.png"
"$CLIMG" --cpu "$D/in.png" convolve:kernel=1,1,1,1,1,1,1,1,1 -o "$D/ones.png"
same_pixels "box = kernel of nine ones" "$D/box.png" "$D/ones.png"
"$CLIMG" --cpu "$D/in.png" convolve:kernel=0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1:norm=none -o "$D/tenth.png"
"$CLIMG" --cpu "$D/in.png" convolve:kernel=1,1,1,1,1,1,1,1,1:norm=10 -o "$D/ten.png"
same_pixels "decimal weights = integers over norm" "$D/tenth.png" "$D/ten.png"

# ---- hand-computed results on the default device (OpenCL where there is one) -----------------
# The 5x5 image and the expected rows are those of tests/unit.c (worked out there). The
# automatic choice would run images this small on the CPU path: CLIMG_AUTO_SWITCH=0 (a test
# setting) has the device it opens take them.
printf 'P5\n5 5\n255\n\000\012\024\036\372\050\062\074\106\120\132\144\156\170\202\214\226\240\252\264\310\322\334\346\360' >"$D/five.pgm"
while read -r border kernel want; do
	CLIMG_AUTO_SWITCH=0 "$CLIMG" "$D/five.pgm" "convolve:kernel=$kernel:border=$border" -o "$D/five-out.pgm" 2>"$T/err"
	got=$("$IMGTOOL" dump "$D/five-out.pgm" | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" = "$(echo "$want" | tr ',' ' ')" ]; then ok; else
		bad "device 5x5 by hand, $kernel, border=$border: got $got"
	fi
done <<'EOF'
replicate 1,2,3,4,5,6,7,8,9 25,33,43,95,133,65,73,83,107,122,114,121,131,141,147,169,177,187,197,203,196,203,213,223,229
reflect 1,2,3,4,5,6,7,8,9 33,38,48,86,83,68,73,83,107,104,117,121,131,141,143,172,177,187,197,199,167,171,181,191,193
wrap 1,2,3,4,5,6,7,8,9 81,59,69,107,93,81,73,83,107,92,125,121,131,141,131,180,177,187,197,187,133,97,107,159,144
zero 1,2,3,4,5,6,7,8,9 18,31,40,76,56,48,73,83,107,69,83,121,131,141,89,124,177,187,197,122,66,91,96,100,59
replicate 1,2,1,2,4,2,1,2,1 13,20,30,79,166,45,53,63,86,119,93,100,110,120,128,145,153,163,173,180,188,195,205,215,223
reflect 1,2,1,2,4,2,1,2,1 25,30,40,76,108,48,53,63,86,104,95,100,110,120,125,148,153,163,173,178,175,180,190,200,205
wrap 1,2,1,2,4,2,1,2,1 99,70,80,116,140,68,53,63,86,96,103,100,110,120,118,155,153,163,173,170,161,145,155,178,189
zero 1,2,1,2,4,2,1,2,1 9,18,25,59,81,34,53,63,86,86,70,100,110,120,95,109,153,163,173,134,103,143,150,158,122
EOF
# an impulse comes out as the kernel turned by 180 degrees
"$IMGTOOL" make 5 5 1 impulse:2:2 "$D/imp.png"
CLIMG_AUTO_SWITCH=0 "$CLIMG" "$D/imp.png" convolve:kernel=1,2,3,4,5,6,7,8,9:norm=255 -o "$D/imp-out.pgm"
check "device impulse response: the kernel turned" test "$("$IMGTOOL" dump "$D/imp-out.pgm" | tr '\n' '/')" = "0 0 0 0 0/0 9 8 7 0/0 6 5 4 0/0 3 2 1 0/0 0 0 0 0/"
# sobel-x with bias=128 on a left-to-right ramp: the man page's 168 208 208 208 168
printf 'P5\n5 2\n255\n\012\024\036\050\062\012\024\036\050\062' >"$D/ramp.pgm"
CLIMG_AUTO_SWITCH=0 "$CLIMG" "$D/ramp.pgm" convolve:sobel-x:bias=128 -o "$D/ramp-out.pgm"
check "device sobel-x on a ramp: the documented values" test "$("$IMGTOOL" dump "$D/ramp-out.pgm" | tr '\n' '/')" = "168 208 208 208 168/168 208 208 208 168/"

# ---- OpenCL against the CPU path, byte for byte ---------------------------------------------
# --verify compares after every stage, so each chain checks each of its kernels on its own
# input. Every chain starts from noise. Each runs four ways: as climg chooses (3x3 kernels
# take convolve_3x3 and its frame kernel convolve_3x3_edge: on rows of whole words, 68x21
# and 68x24 always and the other sizes with 4 channels, the aligned forms, else the
# _unaligned ones, 13x7, 61x37 and 131x67 with 1 to 3 channels; rows of 4 but not 8 bytes
# end in a frame unit of 4 samples; 24 rows end in a whole item of 4 rows, inside the image
# and next to its last row, 21 in a unit of 1 row),
# CLIMG_CONVOLVE_PATH=tile (the local-memory kernels: strips for separable kernels, tiles
# for the others), =global (the paths without local memory) and =cpu (convolve_sep_cpu,
# which CPU devices take for separable kernels of radius up to 32 and only CPU devices have;
# elsewhere the same as =tile). CLIMG_CONVOLVE_STRIP=5 cuts the two-pass path and the strip
# kernel into strips of 5 rows; "tile:61" runs the strip kernel with strips of 61 rows,
# where its ring of rows wraps around.
if "$CLIMG" --list-devices | grep -q '^0: '; then
	# 3x3 kernels that convolve_3x3's 32-bit arithmetic does not take: D = 8400000 is not a
	# power of two and above 2^23; with norm=1000, 255 sum|k| + |bias numerator| > 2^31
	K3BIG=933333,933333,933333,933333,933334,933333,933333,933333,933335
	printf '0.5 -1.25 0 1 0.125\n1 2.75 -0.5 0.25 1\n0 1 3 1 0\n-1 0.5 0.75 2 1\n0.125 0 1 -1 0.5\n' >"$D/k5.txt"
	CHAINS="convolve:box convolve:sharpen convolve:gauss convolve:sobel-x:bias=128 convolve:emboss convolve:identity convolve:edge:bias=64:border=reflect convolve:sobel-y:bias=128:border=wrap
convolve:gauss:sigma=0.5:border=wrap convolve:kernel=0.5,-1.25,0.5,1,2.75,-0.5,0.25,1,0.125:border=reflect convolve:gauss:sigma=2:border=reflect convolve:kernel=1,2,3,4,5,6,7,8,9:border=zero:bias=-60 convolve:gauss:sigma=8
convolve:kernel=@$D/k5.txt:border=wrap convolve:box:size=5:border=zero convolve:kernel=@$D/k5.txt:norm=none:bias=100:border=reflect convolve:gauss:sigma=50:border=zero
convolve:gauss:sigma=50 convolve:box:size=31:border=wrap convolve:gauss:sigma=8:border=reflect:bias=3.5 convolve:gauss:sigma=2:radius=9:norm=0.9:border=zero
grey convolve:sobel-x:bias=128 rotate:90 convolve:emboss:border=wrap transpose convolve:gauss:sigma=2
convolve:kernel=$K3BIG convolve:kernel=$K3BIG:norm=1000:bias=-1000000"
	# One size and channel count, every chain on every path: "RC PATH CHAIN" lines (and the
	# output of a failed run) into $D/results-SIZE-CH. The 32 of them are dealt out to one
	# background worker a CPU (each run opens the device, about 0.3 s on a GPU: run one at a
	# time, this file took minutes there), then their results are counted in
	# order; each case must have given one line a chain and path.
	convolve_cl_case() {
		cc_size=$1
		cc_ch=$2
		cc_w=${cc_size%x*}
		cc_h=${cc_size#*x}
		cc_img="$D/v-$cc_size-$cc_ch.png"
		"$IMGTOOL" make "$cc_w" "$cc_h" "$cc_ch" noise:$((cc_w * 7 + cc_h * 3 + cc_ch)) "$cc_img"
		for cc_path in auto tile tile:61 global cpu; do
			cc_hook=${cc_path%:*}
			[ "$cc_path" = auto ] && cc_hook=
			cc_strip=5
			[ "$cc_path" = tile:61 ] && cc_strip=61
			echo "$CHAINS" | while read -r chain; do
				# shellcheck disable=SC2086
				CLIMG_CONVOLVE_PATH=$cc_hook CLIMG_CONVOLVE_STRIP=$cc_strip "$CLIMG" "$cc_img" $chain --verify -o "$D/v-$cc_size-$cc_ch-out.png" >"$D/v-$cc_size-$cc_ch.out" 2>&1
				echo "$? $cc_path $chain"
				[ -s "$D/v-$cc_size-$cc_ch.out" ] && sed 's/^/    | /' "$D/v-$cc_size-$cc_ch.out"
			done
		done >"$D/results-$cc_size-$cc_ch"
	}
	CV_SIZES="1x1 1x17 17x1 13x7 68x21 68x24 61x37 131x67"
	# worker K of N: the cases whose number modulo N is K
	convolve_cl_worker() {
		cw_i=0
		for cw_size in $CV_SIZES; do
			for cw_ch in 1 2 3 4; do
				[ $((cw_i % $2)) = "$1" ] && convolve_cl_case "$cw_size" "$cw_ch"
				cw_i=$((cw_i + 1))
			done
		done
	}
	cv_jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
	[ "$cv_jobs" -ge 1 ] 2>/dev/null || cv_jobs=1
	[ "$cv_jobs" -le 32 ] || cv_jobs=32
	cv_k=0
	cv_pids=
	while [ "$cv_k" -lt "$cv_jobs" ]; do
		convolve_cl_worker "$cv_k" "$cv_jobs" &
		cv_pids="$cv_pids $!"
		cv_k=$((cv_k + 1))
	done
	# shellcheck disable=SC2086
	wait $cv_pids
	for size in $CV_SIZES; do
		for ch in 1 2 3 4; do
			cv_lines=$(grep -c '^[0-9]' "$D/results-$size-$ch" 2>/dev/null)
			if [ "${cv_lines:-0}" != $((5 * $(echo "$CHAINS" | wc -l))) ]; then
				bad "convolve opencl = cpu, $size ch=$ch: ${cv_lines:-0} results"
				continue
			fi
			while read -r rc p chain; do
				case $rc in
				0) ok ;;
				[0-9]*) bad "convolve opencl = cpu, $size ch=$ch ($p): $chain (exit $rc)" ;;
				*) echo "$rc $p $chain" ;;
				esac
			done <"$D/results-$size-$ch"
		done
	done
	# the strip kernel with strips of its own height (128 rows for these): 3 strips. PoCL's
	# local memory fits strips of 128 samples and chunks of two rows an item-row; with the
	# device's local memory taken as 12, 17 and 24 KiB (CLIMG_FAULT_LOCAL_MEM) gauss takes
	# strips of 32, 64 and 128 samples with chunks of one row an item-row.
	"$IMGTOOL" make 37 300 3 noise:11 "$D/tall.png"
	for lm in "" 12288 17408 24576; do
		for chain in convolve:gauss:sigma=2 convolve:sobel-y:border=wrap:bias=128 convolve:box:size=7:border=reflect; do
			# shellcheck disable=SC2086
			check "convolve opencl = cpu, 37x300 ch=3 (tile, own strips${lm:+, local memory $lm}): $chain" \
				env CLIMG_FAULT_LOCAL_MEM=$lm CLIMG_CONVOLVE_PATH=tile "$CLIMG" "$D/tall.png" $chain --verify -o "$D/v.png"
		done
	done
	# the default device's output file equals the CPU path's
	"$CLIMG" "$D/v-131x67-3.png" convolve:gauss:sigma=8 -o "$D/cl.png"
	"$CLIMG" --cpu "$D/v-131x67-3.png" convolve:gauss:sigma=8 -o "$D/cpu.png"
	check "gauss:sigma=8 output file: OpenCL = CPU" cmp "$D/cl.png" "$D/cpu.png"
else
	echo "skipping convolve's OpenCL comparisons: no OpenCL device"
fi
