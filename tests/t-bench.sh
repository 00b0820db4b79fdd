# SPDX-License-Identifier: MIT
# tools/bench (make bench) on small images, a smoke test: every stage of this build
# measured and its output equal to the CPU path (--verify), the device copy checked, the
# whole commands timed through climg --time=json, the budget, usage and OpenCL errors.
# Runs on whatever device climg picks, like t-opencl.sh; skipped with no OpenCL device when
# CLIMG_TEST_NO_OPENCL=1.

BENCH=$(realpath "${BENCH:-tools/bench}") # make check-asan: its sanitized build
need_opencl "benchmark tests" || { return 0 2>/dev/null || exit 0; }
# The stage rows tools/bench has, and those this build can run (the rest are noted).
ROWS="grey rotate:90 rotate:180 rotate:270 transpose histogram rotate:30:bilinear convolve:box convolve:gauss:sigma=2 convolve:gauss:sigma=8 convolve:sobel-x"
"$CLIMG" --list-stages | awk '/^[^ ]/ {print $1}' | sed 's/[:[].*//' >"$T/bench-stages.txt"

# An odd size with every check on: 61x37 RGB and grey, 20 runs, the whole commands. The
# checks of measured rows pass --budget 0: on a fresh machine each kernel's first build can
# take seconds, and a slow machine must not turn a row into "skipped (budget)".
expect_exit 0 "bench --verify runs" env TMPDIR="$T" "$BENCH" --size 61x37 --reps 20 --verify \
	--budget 0 --no-opencv --climg "$CLIMG"
cp "$T/out" "$T/bench.md"
check "bench names the device" grep -q '^| device | .*(.*)' "$T/bench.md"
check "bench names the commit" grep -Eq '^\| commit \| ([0-9a-f]{4,}|-)' "$T/bench.md"
check "bench says the outputs were checked" grep -q 'checked against the CPU path' "$T/bench.md"
check "bench checked the copy" grep -Eq '^\| copy \(clEnqueueCopyBuffer of [0-9.]+ MB\), checked \| [0-9.]+ \| 20 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' "$T/bench.md"
for b_row in "upload, pinned" "download, pinned" "upload, pageable" "download, pageable"; do
	check "bench transfer row: $b_row" grep -Eq "^\| $b_row \| 20 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9]+% \|$" "$T/bench.md"
done
# Every row of a stage in this build has 20 runs and numbers (its same-size copy too); the
# others are noted.
for tok in $ROWS; do
	name=${tok%%:*}
	for image in RGB grey; do
		[ "$tok" = grey ] && [ "$image" = grey ] && continue # no kernel: grey passes through
		row="^\| \`$tok\` \| $image \| [0-9]+x[0-9]+x[1-4] \| [0-9.]+ \| 20 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9]+% \| [0-9]+% \| [^|]+ \| (yes|no|-) \|$"
		if grep -qx "$name" "$T/bench-stages.txt"; then
			check "bench row $tok on $image" grep -Eq "$row" "$T/bench.md"
		else
			check "bench notes that $tok is missing" grep -q "^- \`$tok\` skipped: this build has no such stage" "$T/bench.md"
		fi
	done
done
# Output sizes in the table are the stages' own: rotate:90 turns 61x37 into 37x61.
check "bench rotate:90 output size" grep -q '^| `rotate:90` | RGB | 37x61x3 | 0.0 |' "$T/bench.md"
check "bench grey output size" grep -q '^| `grey` | RGB | 61x37x1 |' "$T/bench.md"
# The whole commands ran, on the device and with --cpu (their columns are climg --time's,
# which t-opencl.sh and t-cli.sh check).
for cmd in 'climg in\.jpg grey -o out\.jpg' 'climg in\.png grey rotate:90 transpose -o out\.jpg' \
	'climg in\.jpg rotate:90 -o out\.jpg --cpu' 'climg hd\.jpg rotate:90 -o out\.jpg'; do
	check "bench timed the whole command $cmd" grep -Eq "^\| \`$cmd\` \|( [0-9.]+ \|)+\$" "$T/bench.md"
done
check "bench ends with its wall time" sh -c "tail -n 1 '$T/bench.md' | grep -Eq '^Benchmark wall time: [0-9.]+ s'"
check "bench leaves no temporary directory" sh -c "! ls -d '$T'/climg-bench.* 2>/dev/null"

# 1x1, 1xN and Nx1 images, checked; no whole commands.
for size in 1x1 1x19 19x1; do
	expect_exit 0 "bench --verify $size" "$BENCH" --size "$size" --reps 20 --verify --budget 0 \
		--no-cli --no-opencv
	check "bench $size rotate:90 row" grep -Eq "^\| \`rotate:90\` \| grey \| ${size#*x}x${size%x*}x1 \| " "$T/out"
done

# --only measures just the rows named (on both images), --kernels picks the family; both
# families' outputs are checked against the CPU path.
for kind in cpu gpu; do
	expect_exit 0 "bench --only --kernels $kind" "$BENCH" --size 37x61 --reps 20 --verify --budget 0 \
		--no-cli --no-opencv --only rotate:90,histogram --kernels "$kind"
	check "bench --kernels $kind is reported" grep -q "^| kernels | the variants for .* (--kernels $kind) |$" "$T/out"
	check "bench --only: rotate:90 on RGB" grep -q '^| `rotate:90` | RGB | 61x37x3 |' "$T/out"
	check "bench --only: histogram on grey" grep -q '^| `histogram` | grey | 37x61x1 |' "$T/out"
	check "bench --only: 4 rows" test "$(grep -c '^| `' "$T/out")" = 4
done
check "bench without --kernels picks by type" sh -c "'$BENCH' --size 8x8 --reps 20 --no-cli --no-opencv --only grey | grep -q '^| kernels | the variants for .* (by the device.s type) |\$'"
expect_exit 2 "bench --only with an unknown row" "$BENCH" --only rotate:90,rotate:45
expect_stderr "bench --only names the row and lists them" "^bench: --only: 'rotate:45' is not a stage row; the rows are: grey,rotate:90,rotate:180,"
expect_exit 2 "bench --only with an empty item" "$BENCH" --only grey,
expect_exit 2 "bench --kernels other" "$BENCH" --kernels fpga
expect_stderr "bench --kernels message" "^bench: --kernels must be auto, cpu or gpu, not 'fpga'$"

# Past the budget every stage is skipped, listed and noted, and it still succeeds.
expect_exit 0 "bench over budget" "$BENCH" --size 8x8 --budget 0.001 --no-cli --no-opencv
check "bench over budget: rows marked" grep -q '^| `rotate:90` | RGB | 8x8x3 | .* | skipped (budget) |$' "$T/out"
check "bench over budget: noted" grep -q '^- `transpose` on the grey image skipped: the 0.001 s budget was spent (--budget 0: no limit)$' "$T/out"

# Without cv2 the OpenCV comparison is a note (a Python that cannot import it).
expect_exit 0 "bench without cv2" "$BENCH" --size 8x8 --reps 20 --no-cli --python false
check "bench notes no cv2" grep -q '^- OpenCV comparison skipped: false cannot import cv2 and numpy' "$T/out"

# Usage errors exit 2; OpenCL errors exit 1 with the named error.
expect_exit 2 "bench --reps 19" "$BENCH" --reps 19
expect_stderr "bench --reps message" "--reps must be a whole number from 20 to 100, not '19'"
expect_exit 2 "bench --size 0x5" "$BENCH" --size 0x5
expect_exit 2 "bench --size 5" "$BENCH" --size 5
expect_exit 2 "bench --budget -1" "$BENCH" --budget -1
expect_exit 2 "bench unknown option" "$BENCH" --frobnicate
expect_exit 0 "bench --help" "$BENCH" --help
check "bench --help is usage" grep -q '^usage: tools/bench' "$T/out"
expect_exit 1 "bench on a missing device" "$BENCH" --device no-such-device --size 8x8
expect_stderr "bench names the missing device" "^bench: device 'no-such-device' not found"
# An OpenCL call that fails (the 11th counted one, today the first clCreateBuffer) is
# reported with its error's name, not hidden.
expect_exit 1 "bench reports an OpenCL failure" env CLIMG_FAULT_INJECT=11 "$BENCH" --size 8x8
expect_stderr "bench names the OpenCL error" "^bench: opencl: .*CL_OUT_OF_RESOURCES"

# The OpenCV comparison, with a stand-in for Python that answers as tools/bench-opencv.py
# does: its rows are set beside climg's.
cat >"$T/fake-python" <<'EOS'
#!/bin/sh
[ "$1" = -c ] && exit 0 # "import cv2, numpy"
echo "# opencv 9.9.9-fake"
echo "# device Fake Device (OpenCL 1.2)"
echo "# runs 20"
echo "cvtColor 1000.5"
EOS
chmod +x "$T/fake-python"
expect_exit 0 "bench with an OpenCV stand-in" "$BENCH" --size 16x9 --reps 20 --budget 0 --no-cli \
	--python "$T/fake-python"
check "bench OpenCV row beside climg's" grep -Eq '^\| grey: cvtColor RGB2GRAY \| 1000\.5000 \| [0-9.]+ \|' "$T/out"
