# SPDX-License-Identifier: MIT
# The command line: options, exit codes, messages, files left behind, stdin/stdout, and the
# identities that need no golden file. Runs the CPU path (--cpu) unless it says otherwise;
# tests/t-opencl.sh compares OpenCL with it.

D=$T/cli
mkdir -p "$D"
"$IMGTOOL" make 13 7 3 grad "$D/rgb.png"
"$IMGTOOL" make 64 64 3 noise:5 "$D/big.png" # large enough to truncate
"$IMGTOOL" make 13 7 4 F "$D/f4.png"
"$IMGTOOL" make 6 5 1 F "$D/f1.pgm"

# ---- help, version, listings ---------------------------------------------------------
expect_exit 0 "--help exits 0" "$CLIMG" --help
check "--help shows usage" grep -q '^usage: climg' "$T/out"
for s in grey rotate transpose; do
	check "--help describes $s" grep -q "^  $s" "$T/out"
done
expect_exit 0 "--version exits 0" "$CLIMG" --version
check "--version prints the version" grep -Eq '^climg [0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$' "$T/out"
expect_exit 0 "--list-stages exits 0" "$CLIMG" --list-stages
for s in grey rotate transpose; do
	check "--list-stages lists $s" grep -q "^$s" "$T/out"
done
expect_exit 0 "help STAGE exits 0" "$CLIMG" help grey
check "help grey gives its formula" grep -q 'Y = (9798 R + 19235 G + 3735 B + 16384) >> 15' "$T/out"

# ---- usage errors: exit 2, a message naming the culprit, nothing written ---------------
expect_exit 2 "unknown option" "$CLIMG" "$D/rgb.png" --bogus -o "$D/x.png"
expect_stderr "unknown option named" "^climg: unknown option '--bogus'"
expect_exit 2 "unknown stage" "$CLIMG" "$D/rgb.png" grey blur -o "$D/x.png"
expect_stderr "unknown stage named" "^climg: unknown stage 'blur'"
expect_exit 2 "bad rotate angle" "$CLIMG" "$D/rgb.png" rotate:abc -o "$D/x.png"
expect_stderr "bad angle named" "^climg: rotate: angle must be a number, not 'abc'$"
expect_exit 2 "unknown rotate option" "$CLIMG" "$D/rgb.png" rotate:30:sideways -o "$D/x.png"
expect_stderr "unknown rotate option named" "^climg: rotate: unknown option 'sideways'"
expect_exit 2 "no input" "$CLIMG"
expect_stderr "no input: says so" "^climg: no input given$"
expect_stderr "no input: then --help" "^try 'climg --help'$"
expect_exit 2 "option without value" "$CLIMG" "$D/rgb.png" -o
expect_exit 2 "bad --quality" "$CLIMG" "$D/rgb.png" --quality 101 -o "$D/x.jpg"
expect_stderr "bad --quality named" "quality"
expect_exit 2 "bad --png-level" "$CLIMG" "$D/rgb.png" --png-level x -o "$D/x.png"
expect_exit 2 "unknown output extension" "$CLIMG" "$D/rgb.png" -o "$D/x.gif"
expect_stderr "output extension named" "x.gif"
# stages are parsed before the input is read: a typo wins over a missing file
expect_exit 2 "stage checked before input" "$CLIMG" "$D/missing.png" rotate:1O -o "$D/x.png"
expect_exit 2 "pgm needs one channel" "$CLIMG" --cpu "$D/rgb.png" -o "$D/x.pgm"
expect_stderr "pgm message" "1-channel"
expect_exit 2 "--cpu with --verify" "$CLIMG" --cpu --verify "$D/rgb.png" -o "$D/x.png"
check_not "nothing written after usage errors" test -e "$D/x.png" -o -e "$D/x.pgm" -o -e "$D/x.jpg"

# ---- run-time errors: exit 1, no output, no temporary file -------------------------------
expect_exit 1 "missing input" "$CLIMG" --cpu "$D/missing.png" grey -o "$D/x.png"
expect_stderr "missing input named" "missing.png"
printf 'this is not an image\n' >"$D/text.png"
expect_exit 1 "text file named .png" "$CLIMG" --cpu "$D/text.png" grey -o "$D/x.png"
expect_stderr "text file named" "text.png"
head -c 2000 "$D/big.png" >"$D/trunc.png"
expect_exit 1 "truncated png" "$CLIMG" --cpu "$D/trunc.png" grey -o "$D/x.png"
expect_exit 1 "missing output directory" "$CLIMG" --cpu "$D/rgb.png" -o "$D/nodir/x.png"
expect_stderr "missing directory named" "nodir"
check "no file or temporary left after failures" sh -c "! ls -A '$D' | grep -Ev '^(rgb.png|big.png|f4.png|f1.pgm|text.png|trunc.png)$'"

# a failure leaves an existing output untouched
"$CLIMG" --cpu "$D/rgb.png" rotate:90 -o "$D/keep.png"
cp "$D/keep.png" "$D/keep.orig"
expect_exit 1 "failing run over an existing output" "$CLIMG" --cpu "$D/trunc.png" -o "$D/keep.png"
check "existing output unchanged" cmp "$D/keep.png" "$D/keep.orig"
check "no temporary file beside it" sh -c "! ls -A '$D' | grep -q climg"

# ---- hand-computed end to end: a 3x1 PPM through grey to a PGM ----------------------------
# red, green, blue -> 76, 150, 29 (see tests/unit.c for the arithmetic)
printf 'P6\n3 1\n255\n\377\0\0\0\377\0\0\0\377' >"$D/rgb3.ppm"
printf 'P5\n3 1\n255\n\114\226\035' >"$D/want.pgm"
expect_exit 0 "ppm grey to pgm" "$CLIMG" --cpu "$D/rgb3.ppm" grey -o "$D/got.pgm"
same_pixels "ppm grey to pgm pixels" "$D/got.pgm" "$D/want.pgm"

# ---- stdin and stdout ---------------------------------------------------------------------
"$CLIMG" --cpu "$D/rgb.png" grey -o "$D/grey.png"
cat "$D/rgb.png" | "$CLIMG" --cpu - grey -o - >"$D/pipe.png"
check "stdin to stdout gives the same file" cmp "$D/pipe.png" "$D/grey.png"
"$CLIMG" --cpu "$D/rgb.png" grey -o - --format pgm >"$D/pipe.pgm"
same_pixels "--format pgm on stdout" "$D/pipe.pgm" "$D/grey.png"
expect_exit 2 "no -o is a usage error" "$CLIMG" --cpu "$D/rgb.png" grey
expect_stderr "no -o: says to give -o" "^climg: no output given: give -o FILE"
check "no -o: nothing on stdout" test ! -s "$T/out"
expect_exit 0 "output to /dev/null" "$CLIMG" --cpu "$D/rgb.png" grey -o /dev/null

# ---- options anywhere, input may be the output ------------------------------------------
"$CLIMG" -o "$D/anywhere.png" --cpu "$D/rgb.png" grey
check "options anywhere" cmp "$D/anywhere.png" "$D/grey.png"
cp "$D/rgb.png" "$D/inplace.png"
"$CLIMG" --cpu "$D/inplace.png" grey -o "$D/inplace.png"
check "input may be the output" cmp "$D/inplace.png" "$D/grey.png"

# ---- reproducible output ------------------------------------------------------------------
for ext in png jpg bmp tga ppm; do
	"$CLIMG" --cpu "$D/rgb.png" rotate:90 -o "$D/r1.$ext" 2>/dev/null
	"$CLIMG" --cpu "$D/rgb.png" rotate:90 -o "$D/r2.$ext" 2>/dev/null
	check "same bytes every run ($ext)" cmp "$D/r1.$ext" "$D/r2.$ext"
done
expect_exit 0 "jpeg output drops alpha with a warning" "$CLIMG" --cpu "$D/f4.png" -o "$D/f4.jpg"
expect_stderr "alpha warning" "^climg: warning: .*alpha"
expect_exit 0 "-q silences the warning" "$CLIMG" -q --cpu "$D/f4.png" -o "$D/f4q.jpg"
check "-q: stderr empty" test ! -s "$T/err"

# ---- identities (CPU path) ----------------------------------------------------------------
for f in "$D/rgb.png" "$D/f4.png" "$D/f1.pgm"; do
	n=$(basename "$f")
	"$CLIMG" --cpu "$f" rotate:90 rotate:90 rotate:90 rotate:90 -o "$D/id.png"
	same_pixels "four rotate:90 give $n back" "$D/id.png" "$f"
	"$CLIMG" --cpu "$f" transpose transpose -o "$D/id.png"
	same_pixels "two transposes give $n back" "$D/id.png" "$f"
	"$CLIMG" --cpu "$f" rotate:180 -o "$D/a.png"
	"$CLIMG" --cpu "$f" rotate:90 rotate:90 -o "$D/b.png"
	same_pixels "rotate:180 = rotate:90 twice ($n)" "$D/a.png" "$D/b.png"
	"$CLIMG" --cpu "$f" rotate:-90 -o "$D/a.png"
	"$CLIMG" --cpu "$f" rotate:270 -o "$D/b.png"
	same_pixels "rotate:-90 = rotate:270 ($n)" "$D/a.png" "$D/b.png"
	"$CLIMG" --cpu "$f" rotate:90 -o "$D/a.png"
	"$CLIMG" --cpu "$f" transpose -o "$D/t.png"
	"$IMGTOOL" mirror "$D/t.png" "$D/b.png"
	same_pixels "rotate:90 = transpose then mirror ($n)" "$D/a.png" "$D/b.png"
	"$CLIMG" --cpu "$f" rotate:-720 -o "$D/a.png"
	same_pixels "rotate:-720 is the identity ($n)" "$D/a.png" "$f"
done

# ---- --time ----------------------------------------------------------------------------------
expect_exit 0 "--time on the CPU path" "$CLIMG" --cpu "$D/rgb.png" grey rotate:90 --time -o "$D/t.png"
for phase in decode " 1 grey" " 2 rotate:90" encode total; do
	expect_stderr "--time reports $phase" "^climg: time: $phase +[0-9.]+ ms"
done
check_not "--time --cpu: no open line (no device is looked for)" grep -q "^climg: time: open" "$T/err"
expect_stderr "--time --cpu: each stage ran on the CPU path" "^climg: time:  2 rotate:90 +[0-9.]+ ms +[0-9.]+ GB/s  cpu\$"
expect_stderr "--time --cpu: the path line says why" "^climg: time: path +--cpu\$"
# without --cpu the automatic choice runs an image this small on the CPU path and never
# opens the device (tests/t-auto.sh has the choice itself)
expect_exit 0 "--time, the automatic choice" "$CLIMG" "$D/rgb.png" grey --time -o "$D/t1.png"
check_not "--time: no device opened for a small image" grep -q "^climg: time: open" "$T/err"
expect_stderr "--time: the path line gives the estimates" "^climg: time: path +the CPU path: estimated [0-9.]+ ms, [0-9.]+ ms with the device"
"$CLIMG" --cpu "$D/rgb.png" grey rotate:90 -o "$D/t0.png"
check "--time does not change the output" cmp "$D/t.png" "$D/t0.png"
expect_exit 0 "--time=json" "$CLIMG" --cpu "$D/rgb.png" grey --time=json -o "$D/t.png"
expect_stderr "--time=json is one JSON object" '^\{"device": false, "decode_ms": [0-9.]+, "decode_strips": 1, "stages": \[\{"stage": "grey", "ms": [0-9.]+, "gbps": [0-9.]+, "path": "cpu"\}\], "encode_ms": [0-9.]+, "total_ms": [0-9.]+, "why": "--cpu"\}$'
