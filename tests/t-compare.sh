# SPDX-License-Identifier: MIT
# climg compare: hand-made pairs (one sample changed by imgtool poke), the exit status,
# tolerance, --allow, --ignore, mismatches, every metric against numpy, the diff picture,
# directory mode; and a chain's --expect.

D=$T/compare
mkdir -p "$D"

# field NAME: the value of NAME=... in $T/out's first line.
field() { sed -n '1s/.* '"$1"'=\([^ ]*\).*/\1/p' "$T/out"; }
# want_field NAME VALUE WHAT
want_field() {
	_v=$(field "$1")
	if [ "$_v" = "$2" ]; then ok; else bad "$3: $1=$_v, want $2"; fi
}

# ---- identical, one sample off in each channel, 1-4 channels -----------------------------
for ch in 1 2 3 4; do
	"$IMGTOOL" make 13 7 $ch const:0 "$D/z$ch.png"
	expect_exit 0 "identical $ch-channel images are the same" "$CLIMG" compare "$D/z$ch.png" "$D/z$ch.png"
	want_field psnr inf "identical $ch-channel psnr"
	want_field differing 0 "identical $ch-channel count"
	c=$((ch - 1))
	for d in 1 200 255; do
		"$IMGTOOL" poke "$D/z$ch.png" "$D/p.png" 5 4 $c $d
		expect_exit 1 "$ch channels, channel $c off by $d differs" "$CLIMG" compare "$D/z$ch.png" "$D/p.png"
		want_field differing 1 "$ch ch off by $d: count"
		max=$(awk -v n=$ch -v d=$d 'BEGIN { for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? "," : ""), (i == n ? d : 0) }')
		at=$(awk -v n=$ch 'BEGIN { for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? "," : ""), (i == n ? "5:4" : "-") }')
		want_field max "$max" "$ch ch off by $d: max"
		want_field max_at "$at" "$ch ch off by $d: position"
		expect_exit 0 "tolerance $d accepts a difference of $d" "$CLIMG" compare --tolerance $d "$D/z$ch.png" "$D/p.png"
		want_field differing 0 "tolerance $d: count"
		expect_exit 1 "tolerance $((d - 1)) refuses a difference of $d" "$CLIMG" compare --tolerance=$((d - 1)) "$D/z$ch.png" "$D/p.png"
	done
done
# 13x7 = 91 pixels, one differs: 1.0989%
"$IMGTOOL" poke "$D/z3.png" "$D/p3.png" 12 6 0 9
expect_exit 0 "--allow 1 accepts one pixel" "$CLIMG" compare --allow 1 "$D/z3.png" "$D/p3.png"
want_field allowed 1 "--allow 1"
expect_exit 1 "--allow 0 refuses one pixel" "$CLIMG" compare --allow 0 "$D/z3.png" "$D/p3.png"
expect_exit 0 "--allow 1.1% of 91 pixels is 1" "$CLIMG" compare --allow 1.1% "$D/z3.png" "$D/p3.png"
want_field allowed 1 "--allow 1.1%"
expect_exit 1 "--allow 1% of 91 pixels is 0" "$CLIMG" compare --allow 1% "$D/z3.png" "$D/p3.png"
want_field allowed 0 "--allow 1%"
expect_exit 0 "--ignore over the pixel" "$CLIMG" compare --ignore 10,5,3,2 "$D/z3.png" "$D/p3.png"
want_field compared 85 "--ignore 3x2 leaves 85 pixels"
expect_exit 1 "--ignore next to the pixel" "$CLIMG" compare --ignore 10,5,2,2 --ignore 0,0,13,6 "$D/z3.png" "$D/p3.png"
want_field compared 11 "two --ignore regions, overlapping"

# ---- mismatches and errors -------------------------------------------------------------------
"$IMGTOOL" make 13 8 3 const:0 "$D/tall.png"
expect_exit 1 "different sizes differ" "$CLIMG" compare "$D/z3.png" "$D/tall.png"
check "size mismatch reported" grep -q '^differ .*mismatch=size other_size=13x8' "$T/out"
expect_exit 1 "different channel counts differ" "$CLIMG" compare "$D/z3.png" "$D/z4.png"
check "channel mismatch reported" grep -q '^differ .*mismatch=channels .*other_channels=4' "$T/out"
expect_exit 2 "missing file" "$CLIMG" compare "$D/z3.png" "$D/missing.png"
expect_stderr "missing file named" "^climg: compare: .*missing.png"
printf 'not an image\n' >"$D/text.png"
expect_exit 2 "unreadable file" "$CLIMG" compare "$D/text.png" "$D/z3.png"
expect_exit 2 "one image only" "$CLIMG" compare "$D/z3.png"
expect_exit 2 "bad tolerance" "$CLIMG" compare --tolerance 256 "$D/z3.png" "$D/z3.png"
expect_stderr "bad tolerance named" "tolerance.*'256'"
expect_exit 2 "bad --allow" "$CLIMG" compare --allow 101% "$D/z3.png" "$D/z3.png"
expect_exit 2 "bad --ignore" "$CLIMG" compare --ignore 1,2,3 "$D/z3.png" "$D/z3.png"
expect_exit 2 "unknown option" "$CLIMG" compare --bogus "$D/z3.png" "$D/z3.png"
expect_exit 2 "directory against a file" "$CLIMG" compare "$D" "$D/z3.png"
expect_exit 0 "compare --help" "$CLIMG" compare --help "$D/z3.png"
check "compare --help: its synopsis and options" sh -c "head -n 1 '$T/out' | grep -q '^usage: climg compare A B' && grep -q -- '--tolerance N' '$T/out' && grep -q -- '--diff FILE' '$T/out'"
check "compare --help fits 80 columns" sh -c "[ \$(awk 'length > 80' '$T/out' | wc -l) = 0 ]"
check "compare --help: no stages, no chain options" sh -c "! grep -q -e 'rotate:' -e '--files-from' '$T/out'"
expect_exit 0 "compare -h" "$CLIMG" compare -h
expect_exit 2 "compare --hepl" "$CLIMG" compare --hepl "$D/z3.png" "$D/z3.png"
expect_stderr "compare --hepl: did you mean --help" "did you mean --help"

# ---- the diff picture ------------------------------------------------------------------------
# A is black (grey 191 + 0/4 = 191); pixel (12, 6) off by 9: red 128 + 127*9/255 = 132
expect_exit 1 "--diff written" "$CLIMG" compare --diff "$D/diff.png" "$D/z3.png" "$D/p3.png"
"$IMGTOOL" dump "$D/diff.png" >"$D/diff.txt"
check "diff is 13x7" sh -c "[ \$(wc -l <'$D/diff.txt') = 7 ] && [ \$(head -n 1 '$D/diff.txt' | wc -w) = 13 ]"
check "diff: grey where the same" sh -c "head -n 1 '$D/diff.txt' | cut -d' ' -f1 | grep -qx 191,191,191"
check "diff: red where it differs" sh -c "sed -n 7p '$D/diff.txt' | cut -d' ' -f13 | grep -qx 132,0,0"
"$IMGTOOL" make 13 7 3 const:255 "$D/w3.png"
"$IMGTOOL" poke "$D/w3.png" "$D/w3p.png" 0 0 1 0
"$CLIMG" compare --diff "$D/diff2.png" --ignore 12,6,1,1 "$D/w3.png" "$D/w3p.png" >/dev/null
"$IMGTOOL" dump "$D/diff2.png" >"$D/diff.txt"
check "diff: white fades to 254, d=255 is 255,0,0, ignored is blue-grey" sh -c \
	"head -n 1 '$D/diff.txt' | cut -d' ' -f1,2 | grep -qx '255,0,0 254,254,254' &&
	 sed -n 7p '$D/diff.txt' | cut -d' ' -f13 | grep -qx 190,190,254"
expect_exit 1 "no diff for a size mismatch" "$CLIMG" compare --diff "$D/diff3.png" "$D/z3.png" "$D/tall.png"
check_not "diff3 not written" test -e "$D/diff3.png"

# ---- every metric against numpy --------------------------------------------------------------
if need_python "compare metrics against numpy" numpy PIL; then
	for ch in 1 3 4; do
		"$IMGTOOL" make 37 23 $ch noise:7 "$D/na.png"
		"$IMGTOOL" make 37 23 $ch noise:8 "$D/nb.png"
		"$CLIMG" compare --json --tolerance 100 --ignore 3,4,5,6 "$D/na.png" "$D/nb.png" >"$D/n.json"
		check "$ch-channel metrics match numpy" "$PYTHON" - "$D/na.png" "$D/nb.png" "$D/n.json" <<'EOF'
import json, math, sys
import numpy as np
from PIL import Image
a = np.asarray(Image.open(sys.argv[1])).astype(np.int64)
b = np.asarray(Image.open(sys.argv[2])).astype(np.int64)
if a.ndim == 2:
    a, b = a[:, :, None], b[:, :, None]
j = json.load(open(sys.argv[3]))
keep = np.ones(a.shape[:2], bool)
keep[4:10, 3:8] = False
d = np.abs(a - b)[keep]                      # (pixels, ch)
n = d.size
assert j["compared"] == keep.sum(), j["compared"]
assert j["differing"] == int((d.max(axis=1) > 100).sum()), j["differing"]
assert j["sum_abs"] == [int(v) for v in d.sum(axis=0)], j["sum_abs"]
assert j["sum_sq"] == [int(v) for v in (d * d).sum(axis=0)], j["sum_sq"]
full = np.where(keep[:, :, None], np.abs(a - b), -1)
for c in range(a.shape[2]):
    m = full[:, :, c]
    assert j["max"][c] == m.max()
    y, x = divmod(int(np.argmax(m)), m.shape[1])  # first in row order
    assert j["max_at"][c] == [x, y], (j["max_at"][c], x, y)
mae = d.sum() / n
rmse = math.sqrt((d * d).sum() / n)
psnr = 20 * math.log10(255 / rmse)
for k, v in (("mae", mae), ("rmse", rmse), ("psnr", psnr),
             ("differing_percent", 100 * j["differing"] / j["compared"])):
    assert abs(j[k] - v) <= 1e-5 * max(1, abs(v)), (k, j[k], v)
EOF
	done
fi

# ---- directories -----------------------------------------------------------------------------
mkdir -p "$D/da/sub" "$D/db/sub"
cp "$D/z3.png" "$D/da/same.png"
cp "$D/z3.png" "$D/db/same.png"
cp "$D/z3.png" "$D/da/sub/off.png"
cp "$D/p3.png" "$D/db/sub/off.png"
cp "$D/z3.png" "$D/da/onlya.png"
cp "$D/z3.png" "$D/db/sub/onlyb.png"
expect_exit 1 "directories with differences" "$CLIMG" compare "$D/da" "$D/db"
check "differing pair listed" grep -q '^differ .*differing=1 .* path=sub/off.png$' "$T/out"
check "only in A listed" grep -qx 'only_in_a path=onlya.png' "$T/out"
check "only in B listed" grep -qx 'only_in_b path=sub/onlyb.png' "$T/out"
check "same pair not listed" sh -c "! grep -q 'same.png' '$T/out'"
check "summary" sh -c "tail -n 1 '$T/out' | grep -qx 'summary pairs=2 same=1 differ=1 only_in_a=1 only_in_b=1 errors=0'"
expect_exit 1 "directories, json" "$CLIMG" compare --json "$D/da" "$D/db"
check "one JSON object a line, same pairs too" sh -c "[ \$(grep -c '^{.*}\$' '$T/out') = 5 ] && grep -q '\"path\":\"same.png\",\"result\":\"same\"' '$T/out'"
expect_exit 0 "--allow 1 in directory mode, missing files removed" sh -c \
	"rm '$D/da/onlya.png' '$D/db/sub/onlyb.png' && '$CLIMG' compare --allow 1 '$D/da' '$D/db'"
printf 'junk' >"$D/da/bad.png"
cp "$D/da/bad.png" "$D/db/bad.png"
expect_exit 2 "an unreadable pair is exit 2" "$CLIMG" compare "$D/da" "$D/db"
check "error listed" grep -qx 'error path=bad.png' "$T/out"

# ---- --expect: a chain's result against a golden image -----------------------------------------
"$IMGTOOL" make 13 7 3 grad "$D/in.png"
"$CLIMG" --cpu "$D/in.png" grey rotate:90 -o "$D/golden.png"
expect_exit 0 "--expect: the same" "$CLIMG" --cpu "$D/in.png" grey rotate:90 --expect "$D/golden.png"
expect_stderr "--expect: metrics on stderr" "^same size=7x13 channels=1 .*psnr=inf path=.*in.png$"
check "--expect: nothing on stdout" test ! -s "$T/out"
"$IMGTOOL" poke "$D/golden.png" "$D/golden1.png" 3 4 0 0
expect_exit 1 "--expect: one pixel off" "$CLIMG" --cpu "$D/in.png" grey rotate:90 --expect "$D/golden1.png" -o "$D/written.png"
expect_stderr "--expect: the difference" "^differ .*differing=1 .*max_at=3:4 "
same_pixels "--expect with -o writes too" "$D/written.png" "$D/golden.png"
expect_exit 0 "--expect --allow 1" "$CLIMG" --cpu "$D/in.png" grey rotate:90 --expect "$D/golden1.png" --allow 1
expect_exit 0 "--expect --ignore" "$CLIMG" --cpu "$D/in.png" grey rotate:90 --expect "$D/golden1.png" --ignore 3,4,1,1
expect_exit 1 "--expect: size mismatch" "$CLIMG" --cpu "$D/in.png" grey --expect "$D/golden.png"
expect_stderr "--expect: size mismatch named" "mismatch=size"
expect_exit 1 "--expect: missing golden" "$CLIMG" --cpu "$D/in.png" grey --expect "$D/nogolden.png"
expect_stderr "--expect: missing golden named" "nogolden.png"
expect_exit 2 "--expect: bad template" "$CLIMG" --cpu "$D/in.png" grey --expect "$D/%q.png"
# a batch: two inputs, golden/%n.png; one golden differs
mkdir -p "$D/bin" "$D/gold"
"$IMGTOOL" make 13 7 3 grad "$D/bin/one.png"
"$IMGTOOL" make 9 5 3 noise:3 "$D/bin/two.png"
"$CLIMG" --cpu "$D/bin" transpose -o "$D/gold/%n.png" 2>/dev/null
expect_exit 0 "--expect in a batch: all the same" "$CLIMG" --cpu "$D/bin" transpose --expect "$D/gold/%n.png"
check "--expect in a batch: a line per image" sh -c "[ \$(grep -c '^same ' '$T/err') = 2 ]"
"$IMGTOOL" poke "$D/gold/two.png" "$D/gold/two.png" 1 1 2 77
expect_exit 1 "--expect in a batch: one differs" "$CLIMG" --cpu "$D/bin" transpose --expect "$D/gold/%n.png"
expect_stderr "--expect in a batch: the one named" "two.png.*differs from .*gold/two.png"

# ---- on the device: the same integers as the CPU path ---------------------------------------
# The CPU path is the default; --device (or CLIMG_DEVICE) names a device, --verify runs both.
# (tests/kernels.c runs both kernel families against cmp_images too.)
if need_opencl "compare on the device"; then
	for size in 1x1 1x17 17x1 13x7 251x241 1031x769; do
		w=${size%x*}
		h=${size#*x}
		for ch in 1 2 3 4; do
			"$IMGTOOL" make "$w" "$h" $ch noise:$((w + ch)) "$D/ca.png"
			"$IMGTOOL" make "$w" "$h" $ch photo:$ch "$D/cp.png"
			"$IMGTOOL" poke "$D/cp.png" "$D/cq.png" $((w / 2)) $((h - 1)) $((ch - 1)) 3
			for pair in "ca cp" "cp cq" "cq cq"; do
				set -- $pair
				for opts in "" "--tolerance 9 --ignore 0,0,5,3 --ignore $((w / 2)),1,2,$h"; do
					"$CLIMG" compare --json $opts "$D/$1.png" "$D/$2.png" >"$D/c-cpu.json"
					"$CLIMG" compare --json --device 0 $opts "$D/$1.png" "$D/$2.png" >"$D/c-cl.json"
					check "opencl = cpu, $size ch=$ch $1 $2 ${opts:+(tolerance, ignore)}" cmp "$D/c-cpu.json" "$D/c-cl.json"
				done
			done
			"$CLIMG" compare "$D/ca.png" "$D/cp.png" >"$D/v-cpu.txt"
			v_rc=$?
			expect_exit $v_rc "--verify $size ch=$ch: the CPU path's exit status" "$CLIMG" compare --verify "$D/ca.png" "$D/cp.png"
			check "--verify $size ch=$ch: the CPU path's line" cmp "$D/v-cpu.txt" "$T/out"
		done
	done
	# every sample differs by 255: the largest difference first reached at the first pixel
	# compared, whichever work-group or slice it falls in; the sums of squares pass 2^32
	"$IMGTOOL" make 1031 769 4 const:0 "$D/k0.png"
	"$IMGTOOL" make 1031 769 4 const:255 "$D/k9.png"
	for opts in "" "--ignore 0,0,1031,700 --ignore 0,700,500,1"; do
		"$CLIMG" compare --json $opts "$D/k0.png" "$D/k9.png" >"$D/k-cpu.json"
		"$CLIMG" compare --json --device 0 $opts "$D/k0.png" "$D/k9.png" >"$D/k-cl.json"
		check "uniform difference: opencl = cpu ${opts:+(ignored rows)}" cmp "$D/k-cpu.json" "$D/k-cl.json"
	done
	"$CLIMG" compare --json "$D/k0.png" "$D/k9.png" >"$D/k-cpu.json"
	check "uniform difference: first reached at (0, 0); sum_sq 792839 * 65025" \
		grep -q '"max_at":\[\[0,0\],\[0,0\],\[0,0\],\[0,0\]\],"sum_abs":\[202173945,202173945,202173945,202173945\],"sum_sq":\[51554355975,' "$D/k-cpu.json"
	"$CLIMG" compare --json --ignore 0,0,1031,700 --ignore 0,700,500,1 "$D/k0.png" "$D/k9.png" >"$D/k-cpu.json"
	check "uniform difference, rows left out: first reached at (500, 700)" grep -q '"max_at":\[\[500,700\],' "$D/k-cpu.json"
	CLIMG_DEVICE=0 "$CLIMG" compare --json "$D/k0.png" "$D/k9.png" >"$D/k-env.json"
	"$CLIMG" compare --json "$D/k0.png" "$D/k9.png" >"$D/k-cpu.json"
	check "CLIMG_DEVICE names the device: the same JSON" cmp "$D/k-cpu.json" "$D/k-env.json"
	# directories on the device, and verified
	rm -f "$D/da/bad.png" "$D/db/bad.png"
	expect_exit 1 "directories on the device" "$CLIMG" compare --device 0 --allow 0 "$D/da" "$D/db"
	"$CLIMG" compare "$D/da" "$D/db" >"$D/dir-cpu.txt" 2>/dev/null
	check "directories: the device's lines are the CPU path's" cmp "$D/dir-cpu.txt" "$T/out"
	expect_exit 0 "directories under --verify" "$CLIMG" compare --verify --allow 1 "$D/da" "$D/db"
	# --expect compares where the chain ran: on the device, and both under --verify
	expect_exit 0 "--expect on the device: the same" "$CLIMG" --device 0 "$D/in.png" grey rotate:90 --expect "$D/golden.png"
	expect_exit 1 "--expect on the device: one pixel off" "$CLIMG" --device 0 "$D/in.png" grey rotate:90 --expect "$D/golden1.png"
	expect_stderr "--expect on the device: the difference" "^differ .*differing=1 .*max_at=3:4 "
	expect_exit 1 "--expect --verify: one pixel off" "$CLIMG" --verify "$D/in.png" grey rotate:90 --expect "$D/golden1.png"
	expect_stderr "--expect --verify: the difference" "^differ .*differing=1 .*max_at=3:4 "
	expect_exit 0 "--expect --verify in a batch" "$CLIMG" --verify "$D/bin" transpose --expect "$D/gold/%n.png" --allow 1
	# a named device that is not there
	expect_exit 2 "a missing named device" "$CLIMG" compare --device no-such-device "$D/z3.png" "$D/z3.png"
	expect_stderr "a missing named device: named" "no-such-device"
fi
expect_exit 2 "--cpu with --verify" "$CLIMG" compare --cpu --verify "$D/z3.png" "$D/z3.png"
expect_stderr "--cpu with --verify: message" "^climg: compare: --cpu and --verify exclude each other$"
expect_exit 2 "--cpu with --device" "$CLIMG" compare --cpu -d 0 "$D/z3.png" "$D/z3.png"
expect_exit 0 "--cpu overrides CLIMG_DEVICE" env CLIMG_DEVICE=no-such-device "$CLIMG" compare --cpu "$D/z3.png" "$D/z3.png"
