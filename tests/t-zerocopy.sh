# SPDX-License-Identifier: MIT
# Zero-copy on devices whose memory is the host's (PoCL): the input is read in place, the
# last image-writing stage writes the output image in place, the stages before it alternate
# with a second block of host memory (see src/pipeline.c). Chains with 0 to 4 image-writing stages,
# with histograms (passthrough, side outputs) in front, in the middle and at the end, and
# stages that grow or shrink the image, on odd sizes with 1-4 channels: the default
# transfers and CLIMG_ZERO_COPY=0 (the copying path GPUs take; here on two of the sizes)
# both give the --cpu bytes and histogram files, and --verify passes. The fault sweep of tests/t-hostile.sh runs both ways
# too: a failure anywhere in a zero-copy run falls back to the CPU path with the same input.

D=$T/zerocopy
mkdir -p "$D"
need_opencl "zero-copy tests" || { return 0 2>/dev/null || exit 0; }
# The automatic choice would run these small images on the CPU path; the test setting
# CLIMG_AUTO_SWITCH=0 makes the device it opens take every chain from its first stage,
# fallback included, unless a command says otherwise (unset again at the end).
CLIMG_AUTO_SWITCH=0
export CLIMG_AUTO_SWITCH

# One chain a line: the number of image-writing stages (for 3 and 4 channels; grey passes
# a grey image through), then the stages; H1 and H2 stand for histogram files.
cat >"$D/chains" <<'EOF'
0
0 histogram:H1
1 rotate:90
1 histogram:H1 rotate:30
1 rotate:30:nearest histogram:H1
2 transpose histogram:H1 rotate:-30
2 rotate:30 grey
3 rotate:30 grey transpose
3 histogram:H1 rotate:30 convolve:box transpose histogram:H2
4 rotate:90 histogram:H1 convolve:gauss:sigma=1.5 rotate:30:crop grey:avg transpose
EOF

# zc_run OUT TAG CHAIN OPTION [VAR=VALUE]: runs the chain with one climg option and an
# optional environment variable, its histogram files named after TAG; prints the exit
# status.
zc_run() {
	_chain=$(echo "$3" | sed "s|H1|$D/$2-h1.csv|; s|H2|$D/$2-h2.csv|")
	rm -f "$D/$2-h1.csv" "$D/$2-h2.csv"
	# shellcheck disable=SC2086
	env ${5:-} "$CLIMG" "$4" "$D/in.png" $_chain -o "$1" >/dev/null 2>"$D/$2.err"
	echo $?
}

for size in 1x1 1x17 17x1 61x37; do
	w=${size%x*}
	h=${size#*x}
	for ch in 1 2 3 4; do
		"$IMGTOOL" make "$w" "$h" "$ch" noise:$((w * 13 + h * 5 + ch)) "$D/in.png"
		while read -r k chain; do
			what="$size ch=$ch k=$k: ${chain:-(no stage)}"
			rc=$(zc_run "$D/cpu.png" cpu "$chain" --cpu)
			[ "$rc" = 0 ] || bad "zero-copy: $what: --cpu exit $rc"
			modes=default
			# the copying path on two sizes (GPUs run it on all, tests/t-opencl.sh)
			case $size in 1x1 | 61x37) modes="default copying" ;; esac
			for mode in $modes; do
				zc=""
				[ $mode = copying ] && zc=0
				rc=$(zc_run "$D/cl.png" cl "$chain" --device=0 CLIMG_ZERO_COPY=$zc)
				if [ "$rc" = 0 ] && [ ! -s "$D/cl.err" ] && cmp -s "$D/cl.png" "$D/cpu.png"; then
					ok
				else
					bad "zero-copy: $what, $mode transfers: not the CPU bytes (exit $rc)"
					sed 's/^/    | /' "$D/cl.err" | head -n 3
				fi
				for f in h1 h2; do
					[ -e "$D/cpu-$f.csv" ] || continue
					if cmp -s "$D/cl-$f.csv" "$D/cpu-$f.csv"; then ok; else
						bad "zero-copy: $what, $mode transfers: histogram $f differs"
					fi
				done
			done
			rc=$(zc_run "$D/v.png" v "$chain" --verify)
			if [ "$rc" = 0 ] && cmp -s "$D/v.png" "$D/cpu.png"; then ok; else
				bad "zero-copy: $what: --verify exit $rc"
				sed 's/^/    | /' "$D/v.err" | head -n 3
			fi
		done <"$D/chains"
	done
done

# Four transposes on the device give the input back, both ways.
"$IMGTOOL" make 61 37 3 noise:3 "$D/in.png"
expect_exit 0 "zero-copy: four transposes" "$CLIMG" --device 0 "$D/in.png" transpose transpose \
	transpose transpose -o "$D/t4.png"
same_pixels "zero-copy: four transposes give the input back" "$D/t4.png" "$D/in.png"
expect_exit 0 "copying: four transposes" env CLIMG_ZERO_COPY=0 "$CLIMG" --device 0 "$D/in.png" \
	transpose transpose transpose transpose -o "$D/t4c.png"
same_pixels "copying: four transposes give the input back" "$D/t4c.png" "$D/in.png"

# --time says what happened: on PoCL (host-unified memory) nothing is copied, unless
# CLIMG_ZERO_COPY=0; then, and on a discrete GPU, both transfers have a rate.
if "$CLIMG" --list-devices | grep -q '^0: .*Portable Computing Language'; then
	expect_exit 0 "zero-copy --time" "$CLIMG" --device 0 "$D/in.png" rotate:90 --time -o "$D/t.png"
	expect_stderr "zero-copy --time: upload" \
		'^climg: time: upload +[0-9.]+ ms +zero-copy: the device reads the input in place$'
	expect_stderr "zero-copy --time: download" \
		'^climg: time: download +[0-9.]+ ms +zero-copy: the last stage wrote the output in place$'
	check_not "zero-copy --time: the decoded image is not copied in" grep -q '^climg: time: copy-in' "$T/err"
	expect_exit 0 "zero-copy --time=json" "$CLIMG" --device 0 "$D/in.png" rotate:90 --time=json
	expect_stderr "zero-copy --time=json: upload" \
		'"upload_ms": [0-9.]+, "upload_gbps": 0.00, "upload_zero_copy": true,'
	expect_stderr "zero-copy --time=json: download" \
		'"download_ms": [0-9.]+, "download_gbps": 0.00, "download_zero_copy": true,'
	expect_stderr "zero-copy --time=json: no copy-in" '"copy_in_ms": 0.000, "copy_in_gbps": 0.00,'
	# a histogram's counts are still downloaded; with no image-writing stage the output is
	# a copy of the input
	expect_exit 0 "zero-copy --time with a histogram" "$CLIMG" --device 0 "$D/in.png" \
		histogram:"$D/h.csv" rotate:90 --time
	expect_stderr "zero-copy --time: side outputs copied" \
		'^climg: time: download +[0-9.]+ ms +[0-9.]+ GB/s  zero-copy image; side outputs copied$'
	expect_exit 0 "zero-copy --time, histogram only" "$CLIMG" --device 0 "$D/in.png" \
		histogram:"$D/h.csv" --time
	expect_stderr "histogram only: the output is a copy" \
		'^climg: time: download +[0-9.]+ ms +[0-9.]+ GB/s  into memory allocated in [0-9.]+ ms$'
	expect_exit 0 "CLIMG_ZERO_COPY=0 --time" env CLIMG_ZERO_COPY=0 "$CLIMG" --device 0 \
		"$D/in.png" rotate:90 --time=json
	expect_stderr "CLIMG_ZERO_COPY=0: both transfers copy" \
		'"upload_zero_copy": false,.*"download_gbps": [0-9.]+, "download_zero_copy": false,'
	if need_python "the JSON check of the copy-in" json; then
		check "CLIMG_ZERO_COPY=0: the decoded image is copied into pinned memory" \
			"$PYTHON" -c 'import json, sys; t = json.loads(open(sys.argv[1]).readline()); sys.exit(not (t["copy_in_ms"] > 0 and t["copy_in_gbps"] > 0))' "$T/err"
	fi
else
	echo "skipping the zero-copy --time checks: device 0 is not PoCL"
fi

# A large JPEG: decoding it outlasts opening PoCL, so the stages' memory and the decoder's
# are made present meanwhile (populate_while_decoding in src/run_job.c, in a run of one
# image), on the device and with --cpu; through one and two image-writing stages (one block,
# then both) the device gives the CPU path's bytes.
"$IMGTOOL" make 4001 3001 3 noise:29 "$D/big.png"
"$IMGTOOL" -q 90 convert "$D/big.png" "$D/big.jpg"
for chain in "rotate:90" "rotate:90 grey"; do
	# shellcheck disable=SC2086
	expect_exit 0 "large JPEG, $chain: --cpu" "$CLIMG" --cpu "$D/big.jpg" $chain -o "$D/big-cpu.png"
	# shellcheck disable=SC2086
	expect_exit 0 "large JPEG, $chain: device 0" "$CLIMG" --device 0 "$D/big.jpg" $chain \
		-o "$D/big-cl.png"
	same_pixels "large JPEG, $chain: device 0 gives the CPU bytes" "$D/big-cl.png" "$D/big-cpu.png"
done

# A batch on the copying path: the device's few pinned blocks (src/run.c, PINNED_BLOCKS)
# serve more images than there are blocks, each block given back once the device is done
# with its image, and replaced by a larger one when an image outgrows it; the device taking
# over after the first stage (CLIMG_AUTO_SWITCH=1) asks for a second block without waiting
# for one. Every output is the --cpu batch's, byte for byte.
mkdir -p "$D/pool"
i=0
for size in "33 17" "640 401" "64 64" "1201 601" "7 5" "901 899" "2 3" "1500 201" "300 1000" \
	"45 46" "1024 768" "100 3"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$IMGTOOL" make $size $(((i % 4) + 1)) noise:$i "$D/pool/p$i.png"
done
for sw in 0 1; do
	for chain in "rotate:30 grey" "rotate:90 transpose" "histogram:$D/pool-%n-H.csv rotate:-30"; do
		rm -rf "$D/pool-cpu" "$D/pool-cl" "$D"/pool-*-H.*
		# shellcheck disable=SC2086
		expect_exit 0 "pool, $chain: --cpu batch" "$CLIMG" --cpu -j 6 "$D"/pool/*.png $chain \
			-o "$D/pool-cpu/%n.png"
		for f in "$D"/pool-*-H.csv; do [ ! -e "$f" ] || mv "$f" "${f%.csv}.cpu"; done
		# shellcheck disable=SC2086
		expect_exit 0 "pool, $chain, switch at $sw: copying batch" env CLIMG_ZERO_COPY=0 \
			CLIMG_AUTO_SWITCH=$sw "$CLIMG" -j 6 "$D"/pool/*.png $chain -o "$D/pool-cl/%n.png"
		check "pool, $chain, switch at $sw: the --cpu bytes" diff -r "$D/pool-cpu" "$D/pool-cl"
		for f in "$D"/pool-*-H.csv; do
			[ -e "$f" ] || continue
			check "pool, $chain, switch at $sw: $(basename "$f")" cmp -s "$f" "${f%.csv}.cpu"
		done
	done
done
# ... and when the device fails part-way (the Nth OpenCL call, CLIMG_FAULT_INJECT): the
# images that held or waited for blocks go on on the CPU path, nothing waits for ever, and
# every output is still the --cpu batch's.
rm -rf "$D/pool-cpu"
expect_exit 0 "pool faults: --cpu batch" "$CLIMG" --cpu -j 6 "$D"/pool/*.png rotate:30 grey \
	-o "$D/pool-cpu/%n.png"
for n in 12 30 60 120 240; do
	rm -rf "$D/pool-cl"
	expect_exit 0 "pool faults: call $n fails, the batch goes on" env CLIMG_ZERO_COPY=0 \
		CLIMG_AUTO_SWITCH=0 CLIMG_FAULT_INJECT=$n "$CLIMG" -j 6 "$D"/pool/*.png rotate:30 grey \
		-o "$D/pool-cl/%n.png"
	check "pool faults: call $n fails: the --cpu bytes" diff -r "$D/pool-cpu" "$D/pool-cl"
done
unset CLIMG_AUTO_SWITCH
