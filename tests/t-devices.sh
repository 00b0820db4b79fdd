# SPDX-License-Identifier: MIT
# Several devices at once (--devices, CLIMG_DEVICES): PoCL offers two devices with
# POCL_DEVICES="pthread pthread". Images go to both, a device that fails is dropped with
# one warning and its image redone elsewhere, every output has the CPU path's bytes, and a
# malformed list is a usage error.

D=$T/devices
mkdir -p "$D/in"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	"$IMGTOOL" make $((7 + i)) $((5 + 2 * i)) $((i % 4 + 1)) noise:$i "$D/in/i$i.png"
done
CHAIN="grey rotate:90 convolve:box"
"$CLIMG" --cpu "$D/in" $CHAIN -o "$D/ref/%n.png" || bad "the CPU path's outputs"

# same_as_cpu NAME DIR: every output in DIR has the CPU path's bytes, and there are 12.
same_as_cpu() {
	_sc_ok=1
	for _sc_f in "$D"/ref/*.png; do
		cmp -s "$_sc_f" "$2/$(basename "$_sc_f")" || { _sc_ok=0; echo "    | differs: $(basename "$_sc_f")"; }
	done
	[ "$(find "$2" -type f | wc -l)" = 12 ] || _sc_ok=0
	[ "$_sc_ok" = 1 ] && ok || bad "$1"
}

# devices_in REPORT: the distinct device numbers of a --report file ("cpu" for the CPU path)
devices_in() {
	sed -n 's/.*"device":"\([0-9][0-9]*\): [^"]*".*/\1/p; s/.*"device":"cpu".*/cpu/p' "$1" |
		sort -u | tr '\n' ' '
}

need_opencl "the --devices checks" || { return 0 2>/dev/null || exit 0; }
# PoCL alone, whatever other drivers the machine has (a GPU), so that its two devices are
# 0 and 1 and the first is the default
_dv_icd=$(grep -l pocl /etc/OpenCL/vendors/*.icd 2>/dev/null | head -n 1)
_dv_vendors=${OCL_ICD_VENDORS-}
_dv_filenames=${OCL_ICD_FILENAMES-}
if [ -n "$_dv_icd" ]; then
	mkdir -p "$D/icd"
	cp "$_dv_icd" "$D/icd/"
	export OCL_ICD_VENDORS="$D/icd"
	unset OCL_ICD_FILENAMES
fi
if ! POCL_DEVICES="pthread pthread" "$CLIMG" --list-devices | grep -q '^1: .*Portable Computing Language'; then
	echo "skipping the --devices checks: PoCL does not offer two devices"
	if [ -n "$_dv_icd" ]; then
		if [ -n "$_dv_vendors" ]; then export OCL_ICD_VENDORS="$_dv_vendors"; else unset OCL_ICD_VENDORS; fi
		[ -z "$_dv_filenames" ] || export OCL_ICD_FILENAMES="$_dv_filenames"
	fi
	return 0 2>/dev/null || exit 0
fi
export POCL_DEVICES="pthread pthread"

# --list-devices marks the device chosen by default: the first GPU, else the first device
expect_exit 0 "--list-devices with two devices" "$CLIMG" --list-devices
check "the first device is marked as the default" grep -q '^0: .* \[default\]$' "$T/out"
check "only one device is marked" test "$(grep -c '\[default\]' "$T/out")" = 1

# images go to both devices, with the CPU path's bytes
expect_exit 0 "--devices 0,1" "$CLIMG" --devices 0,1 -j 4 "$D/in" $CHAIN -o "$D/o1/%n.png" \
	--report "$D/r1.jsonl"
same_as_cpu "--devices 0,1: the CPU path's bytes" "$D/o1"
check "--devices 0,1: both devices took images (report: $(devices_in "$D/r1.jsonl"))" \
	test "$(devices_in "$D/r1.jsonl")" = "0 1 "
check "--devices 0,1: no warning" test ! -s "$T/err"
expect_exit 0 "CLIMG_DEVICES=0,1" env CLIMG_DEVICES=0,1 "$CLIMG" -j 4 "$D/in" $CHAIN \
	-o "$D/o2/%n.png" --report "$D/r2.jsonl"
same_as_cpu "CLIMG_DEVICES: the CPU path's bytes" "$D/o2"
check "CLIMG_DEVICES: the report names devices by number" grep -q '"device":"[01]: ' "$D/r2.jsonl"
expect_exit 0 "--devices by name and number" "$CLIMG" --devices PTHREAD,1 "$D/in/i3.png" $CHAIN \
	-o "$D/one.png"
check "one image on a set: the CPU path's bytes" cmp "$D/one.png" "$D/ref/i3.png"

# --time: images and images/s of each device, summing to the batch
expect_exit 0 "--devices all --time" "$CLIMG" --devices all -j 6 "$D/in" $CHAIN -o "$D/o3/%n.png" \
	--time --report "$D/r3.jsonl"
same_as_cpu "--devices all: the CPU path's bytes" "$D/o3"
check "--time: a line for each device" grep -q '^climg: time: device 1: .*: [0-9]* images, [0-9.]* images/s, busy' "$T/err"
check "--time: the devices' images add up to the batch" test "$(sed -n 's/^climg: time: device .*: \([0-9]*\) images, .*/\1/p' "$T/err" |
	awk '{ s += $1 } END { print s }')" = 12
check "--devices all: every image on device 0, 1 or the CPU path" \
	test -z "$(devices_in "$D/r3.jsonl" | tr -d '01cpu ')"

# a device that fails is dropped with one warning; its images are redone on the other
expect_exit 0 "device 1 fails to build: the batch goes on" env CLIMG_FAULT_BUILD=1 CLIMG_FAULT_DEVICE=1 \
	"$CLIMG" --devices 0,1 -j 4 "$D/in" $CHAIN -o "$D/o4/%n.png" --report "$D/r4.jsonl"
check "the failing device is dropped with exactly one warning" \
	test "$(grep -c 'dropping device 1; the other devices take its images' "$T/err")" = 1
check "nothing else is warned" test "$(wc -l <"$T/err")" = 1
same_as_cpu "after the drop: the CPU path's bytes" "$D/o4"
check "every image ran on device 0 (report: $(devices_in "$D/r4.jsonl"))" test "$(devices_in "$D/r4.jsonl")" = "0 "
# a device that fails to open (the first counted call of whichever opens first): images
# are taken before it has opened, so those that took it are redone on the other
expect_exit 0 "a device fails to open: the batch goes on" env CLIMG_FAULT_INJECT=1 \
	"$CLIMG" --devices 0,1 -j 4 "$D/in" $CHAIN -o "$D/o7/%n.png" --report "$D/r7.jsonl"
check "the device that failed to open is dropped with exactly one warning" \
	test "$(grep -c 'dropping device [01]; the other devices take its images' "$T/err")" = 1
check "nothing else is warned when a device fails to open" test "$(wc -l <"$T/err")" = 1
same_as_cpu "after a failed opening: the CPU path's bytes" "$D/o7"
check "every image ran on one device (report: $(devices_in "$D/r7.jsonl"))" \
	test "$(devices_in "$D/r7.jsonl" | wc -w)" = 1
expect_exit 0 "both devices fail: the CPU path" env CLIMG_FAULT_BUILD=1 \
	"$CLIMG" --devices 0,1 -j 4 "$D/in" $CHAIN -o "$D/o5/%n.png" --report "$D/r5.jsonl"
check "each device dropped once" test "$(grep -c 'dropping device' "$T/err")" = 2
check "then one warning for the CPU path" \
	test "$(grep -c '^climg: warning: no device left; using the CPU path$' "$T/err")" = 1
same_as_cpu "no device left: the CPU path's bytes" "$D/o5"
check "every image on the CPU path" test "$(devices_in "$D/r5.jsonl")" = "cpu "

# --verify verifies each image on the device that took it
expect_exit 0 "--verify --devices 0,1" "$CLIMG" --verify --devices 0,1 -j 4 "$D/in" $CHAIN \
	-o "$D/o6/%n.png" --report "$D/r6.jsonl"
same_as_cpu "--verify on two devices: the CPU path's bytes" "$D/o6"
check "--verify: both devices took images" test "$(devices_in "$D/r6.jsonl")" = "0 1 "
# with --verify a device is required: one that fails to open is the run's error, not a drop
expect_exit 1 "--verify: a device that fails to open is an error" env CLIMG_FAULT_INJECT=1 \
	"$CLIMG" --verify --devices 0,1 -j 4 "$D/in" $CHAIN -o "$D/o8/%n.png"
expect_stderr "--verify: the failure named" "CL_OUT_OF_RESOURCES"
# each failed input's line, though the other device builds meanwhile with descriptor 2
# diverted (src/ocl/program.c)
check "--verify: a line for each failed input" test "$(grep -c "^climg: $D/in/i[0-9]*\.png: " "$T/err")" = \
	"$(sed -n 's/^climg: \([0-9]*\) of 12 inputs failed$/\1/p' "$T/err")"
check "--verify: no device dropped" test "$(grep -c 'dropping device' "$T/err")" = 0

# usage errors, before any work
for l in "" "0,,1" "0," ",1" "7" "nosuchdevice" "all,0" "0,0" "PTHREAD,0"; do
	expect_exit 2 "--devices '$l'" "$CLIMG" --devices "$l" "$D/in" grey -o "$D/bad/%n.png"
done
expect_stderr "a device named twice says so" "device 0 is listed twice"
expect_exit 2 "--devices with a device not there" "$CLIMG" --devices 0,9 "$D/in" grey -o "$D/bad/%n.png"
expect_stderr "it says which" "devices: device '9' not found"
expect_exit 2 "--device and --devices" "$CLIMG" --device 0 --devices 1 "$D/in" grey -o "$D/bad/%n.png"
expect_exit 2 "--cpu and --devices" "$CLIMG" --cpu --devices all "$D/in" grey -o "$D/bad/%n.png"
expect_exit 2 "CLIMG_DEVICE and CLIMG_DEVICES" env CLIMG_DEVICE=0 CLIMG_DEVICES=1 "$CLIMG" "$D/in" \
	grey -o "$D/bad/%n.png"
expect_exit 0 "--devices overrides CLIMG_DEVICE" env CLIMG_DEVICE=nosuchdevice "$CLIMG" --devices 1 \
	"$D/in/i2.png" grey -o "$D/one2.png"
check "no output of a usage error" test ! -e "$D/bad"
unset POCL_DEVICES
if [ -n "$_dv_icd" ]; then
	if [ -n "$_dv_vendors" ]; then export OCL_ICD_VENDORS="$_dv_vendors"; else unset OCL_ICD_VENDORS; fi
	[ -z "$_dv_filenames" ] || export OCL_ICD_FILENAMES="$_dv_filenames"
fi
