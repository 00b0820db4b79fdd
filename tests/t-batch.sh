# SPDX-License-Identifier: MIT
# Batches: many inputs in one process. Every output equals the one-image command's, whatever
# -j and the device; templates, directory trees, --files-from, failures, --fail-fast,
# --skip-existing after an interrupt, --shard under GNU parallel, --report, memory, progress.

D=$T/batch
mkdir -p "$D/in/sub/deeper" "$D/in/.hidden"
"$IMGTOOL" make 13 7 3 grad "$D/in/a.png"
"$IMGTOOL" make 31 17 4 noise:3 "$D/in/b.png"
"$IMGTOOL" make 6 5 1 F "$D/in/sub/c.pgm"
"$IMGTOOL" make 9 11 2 noise:4 "$D/in/sub/d.png"
"$IMGTOOL" make 40 23 3 noise:5 "$D/in/sub/deeper/e.ppm"
"$IMGTOOL" make 17 13 3 noise:6 "$D/in/sub/f.jpg"
"$IMGTOOL" make 5 5 3 grad "$D/in/.hidden/h.png"
"$IMGTOOL" make 5 5 3 grad "$D/in/.dot.png"
echo "not an image" >"$D/in/notes.txt"
# the images under in/, in the order a directory argument gives them (relative paths, C order)
ALL="a.png b.png sub/c.pgm sub/d.png sub/deeper/e.ppm sub/f.jpg"

# one_by_one CHAIN...: each input's one-image output into $D/ref/REL.png (--cpu)
one_by_one() {
	rm -rf "$D/ref"
	for r in $ALL; do
		mkdir -p "$D/ref/$(dirname "$r")"
		"$CLIMG" --cpu "$D/in/$r" "$@" -o "$D/ref/${r%.*}.png" || bad "one image: $r $*"
	done
}

# same_tree NAME DIR: every $D/ref file has a byte-identical twin in DIR, and DIR holds no more.
same_tree() {
	_st_ok=1
	for r in $ALL; do
		cmp -s "$D/ref/${r%.*}.png" "$2/${r%.*}.png" || { _st_ok=0; echo "    | differs: ${r%.*}.png"; }
	done
	[ "$(find "$2" -type f | wc -l)" = "$(find "$D/ref" -type f | wc -l)" ] || _st_ok=0
	[ "$_st_ok" = 1 ] && ok || bad "$1"
}

for chain in "grey rotate:90" "convolve:gauss:sigma=1 rotate:30" "transpose" \
	"rotate:-17:nearest:bg=#ff000080 convolve:sobel-x:bias=128" "resize:70%:lanczos flip" \
	"resize:20x15:fit:cubic equalize"; do
	one_by_one $chain
	for j in 1 4; do
		rm -rf "$D/out"
		expect_exit 0 "batch '$chain' -j $j on the CPU path" \
			"$CLIMG" --cpu -j "$j" "$D/in" $chain -o "$D/out/%d/%n.png"
		same_tree "batch '$chain' -j $j --cpu equals one image at a time" "$D/out"
		# the device taking every image's chain (the test setting CLIMG_AUTO_SWITCH=0),
		# the CPU path handing it over from stage 2, and the automatic choice as it is
		for sw in 0 1 ""; do
			rm -rf "$D/out"
			expect_exit 0 "batch '$chain' -j $j, CLIMG_AUTO_SWITCH=$sw" \
				env CLIMG_AUTO_SWITCH=$sw "$CLIMG" -j "$j" "$D/in" $chain -o "$D/out/%d/%n.png"
			same_tree "batch '$chain' -j $j, CLIMG_AUTO_SWITCH=$sw, equals one image at a time" "$D/out"
		done
	done
done
check "hidden files and non-images under a directory are skipped" \
	test -f "$D/out/a.png" -a ! -e "$D/out/.dot.png" -a ! -e "$D/out/.hidden" -a ! -e "$D/out/notes.png"

# a device that fails is dropped once, with one warning, and the batch goes on on the CPU path
one_by_one grey rotate:90
rm -rf "$D/out"
expect_exit 0 "a device whose programs fail to build: the batch goes on" \
	env CLIMG_AUTO_SWITCH=0 CLIMG_FAULT_BUILD=1 "$CLIMG" -j 4 "$D/in" grey rotate:90 -o "$D/out/%d/%n.png"
check "the failing device is dropped with exactly one warning" \
	test "$(grep -c 'using the CPU path' "$T/err")" = 1
same_tree "after the device is dropped: the CPU path's bytes" "$D/out"
rm -rf "$D/out"
expect_exit 1 "a named device that fails: every image fails" \
	env CLIMG_FAULT_BUILD=1 "$CLIMG" --device 0 -j 2 "$D/in" grey rotate:90 -o "$D/out/%d/%n.png"
expect_stderr "a named device's failure is counted" "6 of 6 inputs failed"

# ---- templates -------------------------------------------------------------------------------
rm -rf "$D/t"
expect_exit 0 "template with every placeholder" \
	"$CLIMG" --cpu "$D/in/a.png" "$D/in/sub/c.pgm" grey -o "$D/t/%i-%n.%e.100%%.png"
check "%i %n %e %% expand (first input)" test -f "$D/t/1-a.png.100%.png"
check "%i %n %e %% expand (second input)" test -f "$D/t/2-c.pgm.100%.png"
expect_exit 0 "%d of a named file is its directory as written" \
	"$CLIMG" --cpu "$D/in/sub/c.pgm" grey -o "$D/t/x/%d/%n.png"
check "%d of a named file" test -f "$D/t/x/$D/in/sub/c.png"
expect_exit 0 "one input with a template" "$CLIMG" --cpu "$D/in/a.png" rotate:90 -o "$D/t/one-%n.png"
"$CLIMG" --cpu "$D/in/a.png" rotate:90 -o "$D/t/one-plain.png"
check "one input with a template: the same bytes as the one-image form" \
	cmp "$D/t/one-a.png" "$D/t/one-plain.png"
expect_exit 2 "an unknown placeholder is a usage error" \
	"$CLIMG" "$D/in/a.png" "$D/in/b.png" grey -o "$D/t/%q.png"
expect_stderr "the unknown placeholder is named" "%q"
rm -rf "$D/t"
expect_exit 2 "several inputs and -o without a placeholder" \
	"$CLIMG" "$D/in/a.png" "$D/in/b.png" grey -o "$D/t/out.png"
expect_stderr "the message suggests a template" "template"
expect_exit 2 "two inputs writing the same path" \
	"$CLIMG" "$D/in/a.png" "$D/in/sub/d.png" "$D/in/sub/../a.png" grey -o "$D/t/%n.png"
expect_stderr "the collision names the path" "t/a.png"
check "nothing written after a collision" test ! -e "$D/t"
expect_exit 2 "several inputs to stdout" "$CLIMG" "$D/in/a.png" "$D/in/b.png" grey -o -
expect_exit 2 "several histograms to stdout" "$CLIMG" "$D/in/a.png" "$D/in/b.png" histogram
expect_exit 0 "histogram files from a template" \
	"$CLIMG" --cpu "$D/in" histogram:"$D/t/h/%d/%n.csv" -o "$D/t/img/%d/%n.png"
"$CLIMG" --cpu "$D/in/sub/d.png" histogram:"$D/t/d.csv" -o "$D/t/d.png"
check "a batch's histogram CSV equals the one-image one" cmp "$D/t/d.csv" "$D/t/h/sub/d.csv"
cp "$D/in/a.png" "$D/grey"
expect_exit 0 "a file named like a stage is written ./grey" sh -c "cd '$D' && '$CLIMG' --cpu ./grey grey -o grey-out.png"
check "./grey read as an input" test -f "$D/grey-out.png"
expect_exit 2 "the input comes first" "$CLIMG" grey "$D/in/a.png" -o "$D/t/x.png"
expect_stderr "the message says the input comes first" "input comes first"

# ---- --files-from ----------------------------------------------------------------------------
L=$D/list
mkdir -p "$L"
for n in "with space" "quote'single" 'quote"double' "new
line"; do
	cp "$D/in/a.png" "$L/$n.png"
done
( cd "$L" && find . -name '*.png' -print0 | sort -z ) >"$D/nul.list"
rm -rf "$D/out"
expect_exit 0 "--files-from -0 with odd names" \
	sh -c "cd '$L' && '$CLIMG' --cpu --files-from '$D/nul.list' -0 grey -o '$D/out/%n.png'"
check "every odd name written" test "$(find "$D/out" -name '*.png' -printf x | wc -c)" = 4
check "a name with a newline written" test -f "$D/out/new
line.png"
printf '%s\n' "$D/in/a.png" "" "$D/in/sub/c.pgm" >"$D/nl.list"
rm -rf "$D/out"
expect_exit 0 "--files-from with lines, from stdin" \
	sh -c "'$CLIMG' --cpu --files-from - grey -o '$D/out/%n.png' <'$D/nl.list'"
check "--files-from lines: both written" test -f "$D/out/a.png" -a -f "$D/out/c.png"
expect_exit 2 "-0 without --files-from" "$CLIMG" -0 "$D/in/a.png" grey -o "$D/out/x.png"

# ---- failures ----------------------------------------------------------------------------------
F=$D/fail
mkdir -p "$F/in"
for i in 1 2 3 4 5; do cp "$D/in/b.png" "$F/in/img$i.png"; done
head -c 200 "$D/in/b.png" >"$F/in/img3.png" # truncated
rm -rf "$F/out"
expect_exit 1 "a corrupt input in the middle: exit 1" "$CLIMG" --cpu -j 2 "$F/in" grey -o "$F/out/%n.png"
check "the others are written" test -f "$F/out/img1.png" -a -f "$F/out/img2.png" -a -f "$F/out/img4.png" -a -f "$F/out/img5.png"
check "no output for the corrupt input" test ! -e "$F/out/img3.png"
check "one line names the corrupt input" test "$(grep -c 'img3.png' "$T/err")" = 1
expect_stderr "the last line counts the failures" "1 of 5 inputs failed$"
check "no temporary file left" test -z "$(find "$F/out" -name '.*climg*')"
cp "$D/in/b.png" "$F/in/img3.png"
# the largest file starts first: a large image damaged in its middle fails first
"$IMGTOOL" make 300 200 3 noise:7 "$F/in/img1.png"
printf 'XXXXXXXXXXXXXXXX' | dd of="$F/in/img1.png" bs=1 seek=5000 conv=notrunc 2>/dev/null
rm -rf "$F/out"
expect_exit 1 "--fail-fast" "$CLIMG" --cpu -j 1 --fail-fast "$F/in" grey -o "$F/out/%n.png"
check "--fail-fast starts nothing after the first failure" test ! -e "$F/out/img2.png"
expect_stderr "--fail-fast says so" "fail-fast"
cp "$D/in/b.png" "$F/in/img1.png"

# ---- --skip-existing after an interrupt -------------------------------------------------------
S=$D/skip
mkdir -p "$S/in"
"$IMGTOOL" make 600 400 3 noise:9 "$S/in/i00.png"
for i in 01 02 03 04 05 06 07 08 09 10 11; do cp "$S/in/i00.png" "$S/in/i$i.png"; done
# a background job of a script starts with SIGINT ignored: env gives it the default back
env --default-signal=INT "$CLIMG" --cpu -j 1 "$S/in" convolve:gauss:sigma=6 -o "$S/out/%n.png" 2>/dev/null &
pid=$!
n=0
while [ "$(ls "$S/out" 2>/dev/null | grep -c '^i.*png$')" -lt 1 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
kill -INT $pid
wait $pid
first=$(ls "$S/out" | grep -c '^i.*png$')
check "SIGINT stopped the batch half-way ($first of 12 written)" test "$first" -ge 1 -a "$first" -lt 12
check "SIGINT left no temporary file" test -z "$(find "$S/out" -name '.*')"
expect_exit 0 "--skip-existing finishes the rest" \
	"$CLIMG" --cpu --skip-existing "$S/in" convolve:gauss:sigma=6 -o "$S/out/%n.png" --report "$S/r2.jsonl"
check "every output now exists" test "$(ls "$S/out" | grep -c '^i.*png$')" = 12
check "the second run skipped what the first wrote" test "$(grep -c '"status": *"skipped"' "$S/r2.jsonl")" = "$first"
"$CLIMG" --cpu "$S/in/i05.png" convolve:gauss:sigma=6 -o "$S/one.png"
check "an output of the resumed batch equals the one-image one" cmp "$S/one.png" "$S/out/i05.png"
expect_exit 0 "a third run" "$CLIMG" --cpu --skip-existing "$S/in" convolve:gauss:sigma=6 -o "$S/out/%n.png" --report "$S/r3.jsonl"
check "the third run writes nothing" test "$(grep -c '"status": *"skipped"' "$S/r3.jsonl")" = 12

# ---- --shard under GNU parallel, and --report -------------------------------------------------
rm -rf "$D/sh" "$D/whole"
"$CLIMG" --cpu "$D/in" rotate:90 -o "$D/whole/%d/%n.png" --report "$D/whole.jsonl"
if command -v parallel >/dev/null; then
	parallel --will-cite "'$CLIMG' --cpu --shard {}/3 '$D/in' rotate:90 -o '$D/sh/%d/%n.png' --report '$D/sh{}.jsonl'" ::: 1 2 3
	check "the shards together write every output" diff -r "$D/whole" "$D/sh"
	cat "$D/sh1.jsonl" "$D/sh2.jsonl" "$D/sh3.jsonl" | sed 's/.*"index": *\([0-9]*\).*/\1/' | sort -n >"$D/idx"
	check "each input in exactly one shard" test "$(tr '\n' ' ' <"$D/idx")" = "1 2 3 4 5 6 "
	check "shards are disjoint: no report line twice" test "$(sort -u "$D/idx" | wc -l)" = 6
else
	bad "GNU parallel is not installed (Debian: parallel; sh tools/install-deps.sh installs it)"
fi
expect_exit 2 "--shard 4/3 is a usage error" "$CLIMG" --shard 4/3 "$D/in" grey -o "$D/x/%n.png"
# Each shard checks the whole list's outputs: two inputs that would write one file are
# refused by every shard (alone, each shard holds one of them), and nothing is written.
mkdir -p "$D/twin/p" "$D/twin/q"
cp "$D/in/a.png" "$D/twin/p/x.png"
cp "$D/in/b.png" "$D/twin/q/x.png"
for k in 1 2; do
	expect_exit 2 "shard $k/2 of a list whose outputs collide" \
		"$CLIMG" --cpu --shard $k/2 "$D/twin/p/x.png" "$D/twin/q/x.png" grey -o "$D/twin/out/%n.png"
	expect_stderr "shard $k/2 names both inputs" "'.*p/x.png' and '.*q/x.png' would both write '.*/twin/out/x.png'"
	expect_exit 2 "shard $k/2 of two inputs and one -o" \
		"$CLIMG" --cpu --shard $k/2 "$D/twin/p/x.png" "$D/twin/q/x.png" grey -o "$D/twin/one.png"
	expect_stderr "shard $k/2: 2 inputs would all write one file" "2 inputs would all write"
done
check "colliding shards wrote nothing" test ! -e "$D/twin/out" -a ! -e "$D/twin/one.png"
if need_python "the --report JSON checks" json; then
	check "every --report line parses as JSON with the documented fields" "$PYTHON" -c '
import json, sys
keys = ["index", "input", "status", "error", "width", "height", "channels", "outputs", "device", "ms"]
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert list(o) == keys, list(o)
    assert o["status"] == "ok" and o["error"] is None and o["device"] == "cpu"
    assert set(o["ms"]) == {"decode", "stages", "encode", "total"}
    assert len(o["outputs"]) == 1 and len(o["outputs"][0]["sha256"]) == 64
    n += 1
assert n == 6, n' "$D/whole.jsonl"
	# the SHA-256s and sizes against sha256sum and the files
	"$PYTHON" -c '
import json, sys
for line in open(sys.argv[1]):
    for o in json.loads(line)["outputs"]:
        print(o["sha256"] + "  " + o["path"])' "$D/whole.jsonl" >"$D/sums"
	check "--report SHA-256s agree with sha256sum" sha256sum -c --quiet "$D/sums"
fi
rm -rf "$D/out"
expect_exit 1 "a failed input is reported" "$CLIMG" --cpu "$F/in/img1.png" "$D/in/zzz-missing.png" grey -o "$D/out/%n.png" --report "$D/fail.jsonl"
check "the report says failed with the message" grep -q '"status": *"failed", *"error": *"[^"]*zzz-missing' "$D/fail.jsonl"

# ---- memory stays flat -------------------------------------------------------------------------
if need_python "the peak-memory check" resource; then
	M=$D/mem
	mkdir -p "$M/in"
	"$IMGTOOL" make 512 512 3 noise:8 "$M/in/m000.png"
	i=1
	while [ $i -lt 200 ]; do cp "$M/in/m000.png" "$M/in/m$(printf %03d $i).png"; i=$((i + 1)); done
	mkdir -p "$M/in20"
	cp "$M"/in/m00*.png "$M"/in/m01[0-9].png "$M/in20/"
	rss() { "$PYTHON" -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"; }
	# AddressSanitizer keeps freed memory in a quarantine (256 MiB), which would grow with
	# the count of images; without it the measure is the program's own.
	m_asan=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
	r20=$(ASAN_OPTIONS=$m_asan rss "$CLIMG" --cpu -j 2 "$M/in20" rotate:90 -o "$M/o20/%n.png")
	r200=$(ASAN_OPTIONS=$m_asan rss "$CLIMG" --cpu -j 2 "$M/in" rotate:90 -o "$M/o200/%n.png")
	echo "peak RSS: 20 inputs $r20 KiB, 200 inputs $r200 KiB"
	check "peak memory of 200 inputs within 25% (+4 MiB) of 20 inputs'" \
		test "$r200" -le $((r20 * 5 / 4 + 4096))
fi

# ---- progress ----------------------------------------------------------------------------------
rm -rf "$D/out"
script -qec "'$CLIMG' --cpu '$D/in' grey -o '$D/out/%n.png'" /dev/null >"$D/tty.out" 2>&1
check "the progress line appears on a terminal" grep -q 'done, 0 failed' "$D/tty.out"
rm -rf "$D/out"
"$CLIMG" --cpu "$D/in" grey -o "$D/out/%n.png" 2>"$D/pipe.err"
check "no progress line in a pipe" test ! -s "$D/pipe.err"
rm -rf "$D/out"
"$CLIMG" --cpu --progress "$D/in" grey -o "$D/out/%n.png" 2>"$D/forced.err"
check "--progress forces it" grep -q 'done, 0 failed' "$D/forced.err"
rm -rf "$D/out"
script -qec "'$CLIMG' -q --cpu '$D/in' grey -o '$D/out/%n.png'" /dev/null >"$D/tty.out" 2>&1
check "-q: no progress line" test ! -s "$D/tty.out"
expect_exit 0 "--time in a batch" "$CLIMG" --cpu --time "$D/in" grey -o "$D/out/%n.png"
expect_stderr "--time prints images/s" "images/s"
