# SPDX-License-Identifier: MIT
# OpenCL against the CPU path, byte for byte, for every stage and several chains on odd
# sizes with 1-4 channels; device choice and the fallback to the CPU path. Runs on whatever
# device climg picks (PoCL in CI; the GPU on a GPU machine; CLIMG_DEVICE to choose).
# With no OpenCL device these tests fail, unless CLIMG_TEST_NO_OPENCL=1 says to skip them.

D=$T/opencl
mkdir -p "$D"
need_opencl "OpenCL tests" || { return 0 2>/dev/null || exit 0; }
echo "device: $("$CLIMG" --list-devices | head -n 1)"
# The automatic choice would run most of these small images on the CPU path; the test
# setting CLIMG_AUTO_SWITCH=0 makes the device it opens take every chain from its first
# stage, fallback included, unless a command says otherwise (unset again at the end).
CLIMG_AUTO_SWITCH=0
export CLIMG_AUTO_SWITCH

CHAINS="rotate:90|rotate:180|rotate:270|transpose|rotate:90 rotate:180 transpose rotate:-90|grey|grey:bt709 rotate:90|grey:avg transpose rotate:180|transpose grey rotate:270"
# 4x4, 12x8, 132x36 and 1036x772 take the word-wide kernels (sides multiples of 4) with
# partial tiles; the others the byte-wise ones.
for size in 1x1 1x17 17x1 13x7 4x4 12x8 132x36 640x480 1031x769 1036x772; do
	w=${size%x*}
	h=${size#*x}
	for ch in 1 2 3 4; do
		img="$D/in-$size-$ch.png"
		"$IMGTOOL" make "$w" "$h" "$ch" noise:$((w * 31 + h * 7 + ch)) "$img"
		echo "$CHAINS" | tr '|' '\n' | while read -r chain; do
			# shellcheck disable=SC2086
			"$CLIMG" "$img" $chain --verify -o "$D/cl.png" >"$T/out" 2>"$T/err"
			echo "verify $? $chain"
			# shellcheck disable=SC2086
			"$CLIMG" --cpu "$img" $chain -o "$D/cpu.png"
			# shellcheck disable=SC2086
			"$CLIMG" "$img" $chain -o "$D/cl.png" 2>"$T/err"
			cmp -s "$D/cl.png" "$D/cpu.png"
			echo "cmp $? $chain"
			# the automatic choice as it is, and the CPU path handing the chain to the
			# device at each stage boundary within it
			# shellcheck disable=SC2086
			env -u CLIMG_AUTO_SWITCH "$CLIMG" "$img" $chain -o "$D/auto.png" 2>"$T/err"
			cmp -s "$D/auto.png" "$D/cpu.png"
			echo "auto $? $chain"
			k=1
			# shellcheck disable=SC2086
			while [ "$k" -lt "$(set -- $chain; echo $#)" ]; do
				# shellcheck disable=SC2086
				CLIMG_AUTO_SWITCH=$k "$CLIMG" "$img" $chain -o "$D/sw.png" 2>"$T/err"
				cmp -s "$D/sw.png" "$D/cpu.png"
				echo "switch-at-$((k + 1)) $? $chain"
				k=$((k + 1))
			done
		done >"$D/results"
		while read -r what rc chain; do
			if [ "$rc" = 0 ]; then ok; else bad "opencl $what $size ch=$ch: $chain"; fi
		done <"$D/results"
	done
done

# --verify reports success and a device failure is not hidden
expect_exit 0 "--verify exit 0" "$CLIMG" "$D/in-13x7-3.png" grey rotate:90 --verify -o "$D/v.png"

# ---- device choice ------------------------------------------------------------------------
expect_exit 0 "--device 0" "$CLIMG" --device 0 "$D/in-13x7-3.png" rotate:90 -o "$D/d0.png"
"$CLIMG" --cpu "$D/in-13x7-3.png" rotate:90 -o "$D/dcpu.png"
check "--device 0 gives the CPU bytes" cmp "$D/d0.png" "$D/dcpu.png"
expect_exit 1 "--device that is not there" "$CLIMG" --device no-such-device "$D/in-13x7-3.png" rotate:90 -o "$D/dx.png"
expect_stderr "missing device named" "no-such-device"
check_not "no output for a missing device" test -e "$D/dx.png"
expect_exit 1 "CLIMG_DEVICE that is not there" env CLIMG_DEVICE=no-such-device "$CLIMG" "$D/in-13x7-3.png" -o "$D/dx.png"
# The device opens while the input decodes. When both fail, the device's error is the one
# reported (as when it was opened first); a decode error on its own names the input.
head -c 20000 "$D/in-640x480-3.png" >"$D/cut.png"
expect_exit 1 "cut input, missing device" "$CLIMG" --device no-such-device "$D/cut.png" grey -o "$D/dx.png"
expect_stderr "cut input, missing device: the device's error" "^climg: .*no-such-device"
check "cut input, missing device: one line" test "$(wc -l <"$T/err")" = 1
expect_exit 1 "cut input, default device" "$CLIMG" "$D/cut.png" grey -o "$D/dx.png"
expect_stderr "cut input, default device: the input's error" "^climg: .*cut\.png"
check "cut input, default device: one line" test "$(wc -l <"$T/err")" = 1
check_not "cut input: no output" test -e "$D/dx.png"

# ---- no OpenCL at all: the CPU path with one warning ------------------------------------
# OCL_ICD_VENDORS names the loader's only drivers (here none); OCL_ICD_FILENAMES, which some
# machines with a GPU set (e.g. to libpocl.so.2:libnvidia-opencl.so.1),
# would add its drivers to those, so it is removed.
mkdir -p "$D/no-icd"
expect_exit 0 "no ICD falls back" env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS=$D/no-icd "$CLIMG" "$D/in-13x7-3.png" rotate:90 -o "$D/fb.png"
check "fallback gives the CPU bytes" cmp "$D/fb.png" "$D/dcpu.png"
check "fallback warns once" test "$(grep -c 'warning' "$T/err")" = 1
expect_exit 1 "no ICD, cut input" env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS=$D/no-icd "$CLIMG" "$D/cut.png" rotate:90 -o "$D/fb3.png"
check "no ICD, cut input: the fallback's warning, then the input's error" \
	sh -c "sed -n 1p '$T/err' | grep -q '^climg: warning: no OpenCL device found; using the CPU path\$' && sed -n 2p '$T/err' | grep -q '^climg: .*cut\.png' && test \$(wc -l <'$T/err') = 2"
expect_exit 0 "no ICD, quiet" env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS=$D/no-icd "$CLIMG" -q "$D/in-13x7-3.png" rotate:90 -o "$D/fb.png"
check "quiet fallback says nothing" test ! -s "$T/err"
expect_exit 1 "no ICD with --device" env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS=$D/no-icd "$CLIMG" --device gpu "$D/in-13x7-3.png" -o "$D/fb2.png"
expect_exit 1 "no ICD with --verify" env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS=$D/no-icd "$CLIMG" --verify "$D/in-13x7-3.png" -o "$D/fb2.png"
expect_exit 0 "no ICD: --list-devices" env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS=$D/no-icd "$CLIMG" --list-devices
check "no ICD: list says none" grep -q 'no OpenCL devices' "$T/out"

# ---- --time on the device: profiling events for every phase ------------------------------------
expect_exit 0 "--time on the device" "$CLIMG" "$D/in-640x480-3.png" grey rotate:90 --time -o "$D/t.png"
for phase in open decode build upload " 1 grey" " 2 rotate:90" download encode total; do
	expect_stderr "device --time reports $phase" "^climg: time: $phase +[0-9.]+ ms"
done
# the phases come in the order they ran, open first; and the same in JSON
check "device --time: open is the first line" sh -c "head -n 1 '$T/err' | grep -q '^climg: time: open '"
expect_exit 0 "--time=json on the device" "$CLIMG" "$D/in-640x480-3.png" grey --time=json -o "$D/tj.png"
expect_stderr "device --time=json: open_ms first" '^\{"device": true, "open_ms": [0-9.]+, "open_wait_ms": [0-9.]+, "decode_ms": [0-9.]+, "decode_strips": [0-9]+, "copy_in_ms": [0-9.]+, "copy_in_gbps": [0-9.]+, "build_ms"'
# the device opens while the input decodes (on a second thread, started just before): the
# open went on after decoding no longer than the open took (5 ms for the thread's start),
# and the decoded image was copied into pinned memory unless the device reads it in place
# (zero-copy, tests/t-zerocopy.sh)
if need_python "the JSON check of the open wait" json; then
	check "device --time=json: waited for the device no longer than it took to open" \
		"$PYTHON" -c 'import json, sys; t = json.loads(open(sys.argv[1]).readline()); sys.exit(not 0 <= t["open_wait_ms"] <= t["open_ms"] + 5)' "$T/err"
fi
expect_exit 0 "--time, copying transfers" env CLIMG_ZERO_COPY=0 "$CLIMG" "$D/in-640x480-3.png" grey --time -o "$D/tc.png"
expect_stderr "--time: open alongside decode" '^climg: time: open +[0-9.]+ ms  alongside decode, then waited [0-9.]+ ms$'
expect_stderr "--time: copy-in after decode" '^climg: time: copy-in +[0-9.]+ ms +[0-9.]+ GB/s  into pinned memory$'
check "--time: copy-in comes after decode" sh -c "grep -A1 '^climg: time: decode ' '$T/err' | grep -q '^climg: time: copy-in '"
check "copying transfers give the CPU bytes" sh -c "'$CLIMG' --cpu '$D/in-640x480-3.png' grey -o '$D/tc0.png' && cmp '$D/tc.png' '$D/tc0.png'"
# the output is downloaded into the input's pinned memory, allocated during the open with
# room for the larger of the two: for grey (a third of the input) and for rotate:30 (a
# larger canvas) alike, and no memory is allocated for it afterwards
expect_stderr "--time: the output into the input's pinned memory" \
	"^climg: time: download +[0-9.]+ ms +[0-9.]+ GB/s  into the input's pinned memory\$"
expect_exit 0 "--time=json, copying transfers" env CLIMG_ZERO_COPY=0 "$CLIMG" "$D/in-640x480-3.png" grey --time=json -o "$D/tc.png"
expect_stderr "--time=json: the output into the input's memory, nothing allocated" \
	'"download_zero_copy": false, "download_into_input": true, "out_alloc_ms": 0.000, "encode_ms"'
check "into the input's memory: the CPU bytes" cmp "$D/tc.png" "$D/tc0.png"
expect_exit 0 "--time=json, copying transfers, a larger output" env CLIMG_ZERO_COPY=0 "$CLIMG" "$D/in-640x480-3.png" rotate:30 --time=json -o "$D/tl.png"
expect_stderr "--time=json: a larger output into the input's memory too" \
	'"download_zero_copy": false, "download_into_input": true, "out_alloc_ms": 0.000, "encode_ms"'
check "a larger output into the input's memory: the CPU bytes" sh -c "'$CLIMG' --cpu '$D/in-640x480-3.png' rotate:30 -o '$D/tl0.png' && cmp '$D/tl.png' '$D/tl0.png'"
"$CLIMG" --cpu "$D/in-640x480-3.png" grey rotate:90 -o "$D/t0.png"
check "device --time gives the CPU bytes" cmp "$D/t.png" "$D/t0.png"
# with --verify: the device's stage times (not 0), and no download time, as the output
# written is the CPU path's
expect_exit 0 "--time with --verify" "$CLIMG" "$D/in-640x480-3.png" grey rotate:90 --time --verify -o "$D/tv.png"
for phase in " 1 grey" " 2 rotate:90"; do
	expect_stderr "--verify --time reports $phase" "^climg: time: $phase +[0-9.]+ ms"
	check_not "--verify --time: $phase is not 0" grep -Eq "^climg: time: $phase +0\.0+ ms" "$T/err"
done
expect_stderr "--verify --time: the download is not timed" "^climg: time: download +- +not timed: --verify writes the CPU path's output$"
check "--verify --time gives the CPU bytes" cmp "$D/tv.png" "$D/t0.png"
expect_exit 0 "--time=json with --verify" "$CLIMG" "$D/in-640x480-3.png" grey --time=json --verify -o "$D/tv.png"
check_not "--verify --time=json: the stage's time is not 0" grep -q '"ms": 0\.0*,' "$T/err"
expect_stderr "--verify --time=json: download null, verified" '"stages": \[\{"stage": "grey", "ms": [0-9.]+, .*"download_ms": null, "download_gbps": null, "download_zero_copy": false, "download_into_input": false, "out_alloc_ms": null, "verified": true, "encode_ms"'
unset CLIMG_AUTO_SWITCH
