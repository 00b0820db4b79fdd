# SPDX-License-Identifier: MIT
# The automatic choice of path (no --device, CLIMG_DEVICE, --devices or --cpu): the model's
# parts in-process (tests/cost.c); the choice itself in hand-made cases (a kept profile that
# makes the device cheap or dear, a tiny image that never opens it, a driver that fails);
# the chain handed from the CPU path to the device at every stage boundary (the test
# setting CLIMG_AUTO_SWITCH) giving the --cpu bytes and side outputs, also when the device
# fails there; --time naming each stage's path; the kept profile; the programs built for
# later runs by a process of its own. tests/t-opencl.sh runs its chains through the same
# switch points on odd sizes.

D=$T/auto
mkdir -p "$D"
COSTTEST=${COSTTEST:-tests/cost}
mkdir -m 700 "$D/unit-cache"
c_checks cost "$T/cost.out" env CLIMG_CACHE_DIR="$D/unit-cache" "$COSTTEST"
need_opencl "the automatic choice's tests" || { return 0 2>/dev/null || exit 0; }

A_VERSION=$("$CLIMG" --version | sed -n '1s/^climg //p')
# a_profile DIR OPEN_MS COMPILE_MS CONVOLVE_CPU_NS CONVOLVE_DEV_NS: a new cache directory
# DIR holding a kept model (src/cost_profile.c) of a CPU device that opens in OPEN_MS,
# compiles a program in COMPILE_MS, and runs convolve's units at those rates.
a_profile() {
	rm -rf "$1"
	mkdir -m 700 "$1"
	printf 'climg cost profile 1\nversion %s\nsaved %s\ndevice cpu a test device\nopen_ms %s\ncompile_ms %s\nkind convolve %s %s\n' \
		"$A_VERSION" "$(date +%s)" "$2" "$3" "$4" "$5" >"$1/cost-profile.txt"
}

"$IMGTOOL" make 8 6 3 noise:5 "$D/tiny.png"
"$IMGTOOL" make 160 120 3 noise:6 "$D/mid.png"
"$IMGTOOL" make 37 23 3 noise:7 "$D/odd.png"
"$CLIMG" --cpu "$D/tiny.png" grey rotate:90 -o "$D/tiny-cpu.png"
"$CLIMG" --cpu "$D/mid.png" convolve:gauss:sigma=2 -o "$D/mid-cpu.png"

# ---- the choice --------------------------------------------------------------------------
# A cheap device (opens in 1 ms, compiles in 1 ms, convolves 50000 times faster): a
# 160x120 gauss goes to it, from its first stage; a tiny image's grey and rotate do not.
a_profile "$D/cheap" 1 1 50 0.001
expect_exit 0 "cheap device: the device takes a gauss" env CLIMG_CACHE_DIR="$D/cheap" \
	"$CLIMG" "$D/mid.png" convolve:gauss:sigma=2 --time -o "$D/mid.png.out.png"
expect_stderr "cheap device: --time says why" "^climg: time: path +the device from stage 1: estimated"
expect_stderr "cheap device: the stage ran on the device" "^climg: time:  1 convolve:gauss:sigm +[0-9.]+ ms +[0-9.]+ GB/s  device\$"
expect_stderr "cheap device: it was opened" "^climg: time: open +[0-9.]+ ms"
check "cheap device: the --cpu bytes" cmp "$D/mid.png.out.png" "$D/mid-cpu.png"
a_profile "$D/cheap" 1 1 50 0.001
expect_exit 0 "cheap device: a tiny image" env CLIMG_CACHE_DIR="$D/cheap" \
	"$CLIMG" "$D/tiny.png" grey rotate:90 --time -o "$D/tiny-auto.png"
check_not "cheap device: a tiny image never opens it" grep -q "^climg: time: open" "$T/err"
expect_stderr "cheap device: a tiny image on the CPU path" "^climg: time:  2 rotate:90 +[0-9.]+ ms +[0-9.]+ GB/s  cpu\$"
check "tiny image: the --cpu bytes" cmp "$D/tiny-auto.png" "$D/tiny-cpu.png"
# A dear device (opening takes 100 s): the gauss stays on the CPU path, which says why.
a_profile "$D/dear" 100000 1 50 0.001
expect_exit 0 "dear device: the CPU path" env CLIMG_CACHE_DIR="$D/dear" \
	"$CLIMG" "$D/mid.png" convolve:gauss:sigma=2 --time=json -o "$D/mid-dear.png"
expect_stderr "dear device: --time=json names the path and why" \
	'"stages": \[\{"stage": "convolve:gauss:sigma=2", "ms": [0-9.]+, "gbps": [0-9.]+, "path": "cpu"\}\].*"why": "the CPU path: estimated [0-9.]+ ms, [0-9.]+ ms with the device \(ready in [0-9.]+ ms after decoding, not open'
check_not "dear device: not opened" grep -q '"open_ms"' "$T/err"
check "dear device: the --cpu bytes" cmp "$D/mid-dear.png" "$D/mid-cpu.png"

# The same choices against a driver whose one GPU cannot create a context
# (tests/fakeicd.c): the tiny image never looks for it (no warning at all); the gauss
# does, and falls back with one warning.
FAKEICD=$(realpath "${FAKEICD:-tests/fakeicd.so}")
mkdir -p "$D/icd"
echo "$FAKEICD" >"$D/icd/fake.icd"
if [ -f "$FAKEICD" ] && ! env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$D/icd" "$CLIMG" --list-devices 2>/dev/null |
	grep -q '^0: climg fake GPU'; then
	echo "skipping the failing-driver checks: this machine's ICD loader does not load tests/fakeicd.so"
elif [ -f "$FAKEICD" ]; then
	a_profile "$D/cheap" 1 1 50 0.001
	expect_exit 0 "failing driver: a tiny image" env -u OCL_ICD_FILENAMES OCL_ICD_VENDORS="$D/icd" \
		CLIMG_CACHE_DIR="$D/cheap" "$CLIMG" "$D/tiny.png" grey rotate:90 -o "$D/tiny-fake.png"
	check "failing driver: a tiny image never opens the device (no warning)" test ! -s "$T/err"
	check "failing driver: a tiny image: the --cpu bytes" cmp "$D/tiny-fake.png" "$D/tiny-cpu.png"
	a_profile "$D/cheap" 1 1 50 0.001
	expect_exit 0 "failing driver: the gauss falls back" env -u OCL_ICD_FILENAMES \
		OCL_ICD_VENDORS="$D/icd" CLIMG_CACHE_DIR="$D/cheap" \
		"$CLIMG" "$D/mid.png" convolve:gauss:sigma=2 -o "$D/mid-fake.png"
	check "failing driver: one warning, the fallback's" \
		sh -c "test \$(wc -l <'$T/err') = 1 && grep -q '^climg: warning: .*climg fake GPU.*; using the CPU path\$' '$T/err'"
	check "failing driver: the gauss gives the --cpu bytes" cmp "$D/mid-fake.png" "$D/mid-cpu.png"
else
	bad "tests/fakeicd.so is not built (make tests/fakeicd.so)"
fi

# A batch with the cheap device: --time says where the images went, the bytes are --cpu's.
mkdir -p "$D/batch"
for i in 1 2 3 4; do "$IMGTOOL" make 120 90 3 "noise:$((i + 20))" "$D/batch/b$i.png"; done
a_profile "$D/cheap" 1 1 50 0.001
expect_exit 0 "cheap device: a batch" env CLIMG_CACHE_DIR="$D/cheap" \
	"$CLIMG" -j 2 --time "$D/batch" convolve:gauss:sigma=2 -o "$D/batch-out/%n.png"
expect_stderr "a batch: --time says where the images went" \
	"^climg: time: the device took [0-9]+ images \([0-9]+ of them after the CPU path ran their first stages\), the CPU path [0-9]+\$"
for i in 1 2 3 4; do
	"$CLIMG" --cpu "$D/batch/b$i.png" convolve:gauss:sigma=2 -o "$D/b$i-cpu.png"
	check "a batch: image $i has the --cpu bytes" cmp "$D/batch-out/b$i.png" "$D/b$i-cpu.png"
done

# ---- the device taking the chain at each stage boundary -------------------------------------
# Two histograms (side outputs on either side of each switch point) and every kind of stage
# boundary; CLIMG_AUTO_SWITCH=K: the CPU path runs stages 1..K, the device the rest.
A_CHAIN="grey histogram:$D/h1.csv rotate:90 convolve:box transpose histogram:$D/h2.csv"
# shellcheck disable=SC2086
"$CLIMG" --cpu "$D/odd.png" $A_CHAIN -o "$D/odd-cpu.png"
cp "$D/h1.csv" "$D/h1-cpu.csv"
cp "$D/h2.csv" "$D/h2-cpu.csv"
for k in 0 1 2 3 4 5 6; do
	rm -f "$D/h1.csv" "$D/h2.csv"
	# shellcheck disable=SC2086
	expect_exit 0 "switch at stage $((k + 1)): runs" env CLIMG_AUTO_SWITCH=$k "$CLIMG" \
		"$D/odd.png" $A_CHAIN --time -o "$D/odd-sw.png"
	check "switch at stage $((k + 1)): the --cpu bytes" cmp "$D/odd-sw.png" "$D/odd-cpu.png"
	check "switch at stage $((k + 1)): the first histogram's" cmp "$D/h1.csv" "$D/h1-cpu.csv"
	check "switch at stage $((k + 1)): the second histogram's" cmp "$D/h2.csv" "$D/h2-cpu.csv"
	# each stage's line names where it ran
	check "switch at stage $((k + 1)): --time names each stage's path" sh -c '
		i=1
		for s in grey histogram rotate:90 convolve:box transpose histogram; do
			if [ $i -le $1 ]; then p=cpu; else p=device; fi
			grep -Eq "^climg: time: +$i $s.* GB/s  $p\$" "$2" || exit 1
			i=$((i + 1))
		done' sh "$k" "$T/err"
done
expect_stderr "switch: the path line names the test setting" "^climg: time: path +CLIMG_AUTO_SWITCH=6 \(a test setting\)\$"

# A device that fails once it has the chain (every counted OpenCL call in turn, and a
# build): the CPU path takes the chain from the image it gave the device, with one
# warning, and the bytes and side outputs are --cpu's.
a_sweep() {
	_k=$1
	shift
	_n=1
	_clean=0
	while [ "$_n" -le 200 ] && [ "$_clean" -lt 3 ]; do
		rm -f "$D/h1.csv" "$D/h2.csv" "$D/odd-f.png"
		# shellcheck disable=SC2086
		env "$@" CLIMG_AUTO_SWITCH="$_k" CLIMG_FAULT_INJECT=$_n "$CLIMG" "$D/odd.png" $A_CHAIN \
			-o "$D/odd-f.png" >"$T/out" 2>"$T/err"
		_rc=$?
		if [ "$_rc" = 0 ] && cmp -s "$D/odd-f.png" "$D/odd-cpu.png" && cmp -s "$D/h1.csv" "$D/h1-cpu.csv" &&
			cmp -s "$D/h2.csv" "$D/h2-cpu.csv" && { [ ! -s "$T/err" ] || { [ "$(wc -l <"$T/err")" = 1 ] &&
				grep -q '^climg: warning: .*; using the CPU path$' "$T/err"; }; }; then
			ok
		else
			bad "switch at stage $((_k + 1)), fault at OpenCL call $_n: the --cpu bytes, one warning (exit $_rc)"
			sed 's/^/    | /' "$T/err" | head -n 3
		fi
		if [ -s "$T/err" ]; then _clean=0; else _clean=$((_clean + 1)); fi
		_n=$((_n + 1))
	done
	check "switch at stage $((_k + 1)): faults reached the end of the calls" test "$_clean" = 3 -a "$_n" -gt 20
}
a_sweep 3
a_sweep 2 CLIMG_ZERO_COPY=0
rm -f "$D/h1.csv" "$D/h2.csv"
# shellcheck disable=SC2086
expect_exit 0 "switch at stage 4, the build fails" env CLIMG_AUTO_SWITCH=3 CLIMG_FAULT_BUILD=1 \
	"$CLIMG" "$D/odd.png" $A_CHAIN -o "$D/odd-b.png"
check "the build fails: one warning" sh -c "test \$(wc -l <'$T/err') = 1 && grep -q 'failed to build.*; using the CPU path\$' '$T/err'"
check "the build fails: the --cpu bytes and side outputs" sh -c \
	"cmp '$D/odd-b.png' '$D/odd-cpu.png' && cmp '$D/h1.csv' '$D/h1-cpu.csv' && cmp '$D/h2.csv' '$D/h2-cpu.csv'"
# --device keeps forcing the device, and its failure is an error
expect_exit 1 "--device: a failing build is an error" env CLIMG_FAULT_BUILD=1 \
	"$CLIMG" --device 0 "$D/mid.png" convolve:gauss:sigma=2 -o "$D/mid-x.png"
check_not "--device: no output" test -e "$D/mid-x.png"

# ---- the kept model ---------------------------------------------------------------------------
rm -rf "$D/kept" "$D/nokeep"
expect_exit 0 "a run keeps its measurements" env CLIMG_CACHE_DIR="$D/kept" \
	"$CLIMG" "$D/mid.png" convolve:gauss:sigma=2 -o "$D/k.png"
check "the kept model is in the cache directory" grep -q '^climg cost profile 1$' "$D/kept/cost-profile.txt"
check "... with the date it was saved" grep -Eq '^saved [0-9]+$' "$D/kept/cost-profile.txt"
expect_exit 0 "--no-cache keeps nothing" env CLIMG_CACHE_DIR="$D/nokeep" \
	"$CLIMG" --no-cache "$D/mid.png" convolve:gauss:sigma=2 -o "$D/k.png"
check_not "--no-cache: no kept model" test -e "$D/nokeep/cost-profile.txt"

# ---- programs built for later runs ----------------------------------------------------------
# The device would pay with its programs in the cache, not while they compile (a compile
# of 1000 s): the run takes the CPU path, and a process of its own builds the program and
# keeps the device's model; the next run loads the program and takes the device.
"$IMGTOOL" make 400 300 3 noise:9 "$D/big.png"
"$CLIMG" --cpu "$D/big.png" convolve:gauss:sigma=2 -o "$D/big-cpu.png"
a_profile "$D/prep" 1 1000000 50 0.001
expect_exit 0 "a cold program: the CPU path" env CLIMG_CACHE_DIR="$D/prep" \
	"$CLIMG" "$D/big.png" convolve:gauss:sigma=2 --time -o "$D/big-1.png"
expect_stderr "a cold program: the path line says it is built for later runs" \
	"^climg: time: path +the CPU path: .*; its programs are built for later runs\$"
check_not "a cold program: the run did not open the device" grep -q "^climg: time: open" "$T/err"
check "a cold program: the --cpu bytes" cmp "$D/big-1.png" "$D/big-cpu.png"
# the background process ends by saving the device it opened into the model
i=0
while [ $i -lt 600 ] && grep -q '^device cpu a test device$' "$D/prep/cost-profile.txt"; do
	sleep 0.2
	i=$((i + 1))
done
check "the background process built the program" sh -c "ls '$D/prep' | grep -q '^convolve-.*\\.clbin\$'"
check "the background process kept the device's model" grep -q '^device [cg]pu ' "$D/prep/cost-profile.txt"
sleep 1 # its last writes
expect_exit 0 "the next run: the program from the cache" env CLIMG_CACHE_DIR="$D/prep" \
	"$CLIMG" "$D/big.png" convolve:gauss:sigma=2 --time -o "$D/big-2.png"
expect_stderr "the next run loads the program" "^climg: time: build +[0-9.]+ ms  1 of 1 programs from the cache\$"
check "the next run: the --cpu bytes" cmp "$D/big-2.png" "$D/big-cpu.png"
