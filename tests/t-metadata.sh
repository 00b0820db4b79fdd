# SPDX-License-Identifier: MIT
# Metadata kept from input to output: the ICC profile PNG -> PNG, JPEG -> JPEG, PNG -> JPEG
# and JPEG -> PNG (one segment and several), grey profiles on grey images, a profile of the
# wrong colour space left out with a warning, malformed profiles; the Exif block as it was;
# --strip; a batch whose images keep their own. Read back by tests/metatool (segments and
# chunks walked on its own, iCCP inflated) and by Pillow where python3 has it.
. tests/pyref.sh

D=$T/metadata
mkdir -p "$D"
"$METATOOL" make-icc RGB 3000 "$D/rgb.icc"
"$METATOOL" make-icc RGB 777 "$D/rgb2.icc"
"$METATOOL" make-icc RGB 150000 "$D/big.icc" # 3 APP2 segments in a JPEG
"$METATOOL" make-icc GRAY 1000 "$D/grey.icc"
"$IMGTOOL" make 13 7 3 photo:1 "$D/c.png"
"$IMGTOOL" make 13 7 3 photo:1 "$D/c.jpg"
"$IMGTOOL" make 9 5 1 photo:2 "$D/g.png"
"$IMGTOOL" make 9 5 1 photo:2 "$D/g.jpg"

# has_icc NAME FILE PROFILE: passes when FILE holds exactly PROFILE
has_icc() {
	if "$METATOOL" get-icc "$2" "$D/got.icc" && cmp -s "$D/got.icc" "$3"; then ok; else
		bad "$1"
	fi
}

for prof in rgb big; do
	for x in png jpg; do
		"$METATOOL" add-icc "$D/$prof.icc" "$D/c.$x" "$D/in-$prof.$x"
		has_icc "metatool reads its own profile ($prof, $x)" "$D/in-$prof.$x" "$D/$prof.icc"
	done
	for x in png jpg; do
		for y in png jpg; do
			expect_exit 0 "$prof profile $x -> $y runs" \
				"$CLIMG" --cpu "$D/in-$prof.$x" invert -o "$D/out-$prof-$x.$y"
			check "$prof profile $x -> $y: no warning" test ! -s "$T/err"
			has_icc "$prof profile kept $x -> $y" "$D/out-$prof-$x.$y" "$D/$prof.icc"
		done
	done
done
# the iCCP chunk itself: after IHDR, named "ICC Profile", compression method 0
od -An -c -j 37 -N 18 "$D/out-rgb-jpg.png" | tr -d ' \n' >"$D/iccp.txt"
check "iCCP right after IHDR, named ICC Profile, method 0, then zlib" \
	grep -qx 'iCCPICCProfile\\0\\0x' "$D/iccp.txt"
# one APP2 segment per 65519 bytes of profile
check "a 150000-byte profile is 3 APP2 segments" \
	test "$(od -An -tx1 -v "$D/out-big-png.jpg" | tr -d ' \n' | grep -o '4943435f50524f46494c4500' | wc -l)" = 3

# grey: a GRAY profile stays with grey images; an RGB profile does not go with the grey
# stage's output (a warning says so), and a GRAY profile on an RGB PNG is libpng's to refuse
for x in png jpg; do
	"$METATOOL" add-icc "$D/grey.icc" "$D/g.$x" "$D/in-grey.$x"
	for y in png jpg; do
		"$CLIMG" --cpu "$D/in-grey.$x" invert -o "$D/out-grey.$y"
		has_icc "grey profile kept $x -> $y" "$D/out-grey.$y" "$D/grey.icc"
		expect_exit 0 "grey of an RGB image with a profile ($x -> $y)" \
			"$CLIMG" --cpu "$D/in-rgb.$x" grey -o "$D/out-g.$y"
		expect_stderr "the RGB profile is left out of grey output ($x -> $y)" \
			"^climg: warning: .*out-g\.$y: the ICC profile is not for grey images; the output has none$"
		check_not "grey output has no RGB profile ($x -> $y)" \
			"$METATOOL" get-icc "$D/out-g.$y" "$D/got.icc"
	done
done
"$METATOOL" add-icc "$D/grey.icc" "$D/c.png" "$D/bad-space.png"
expect_exit 0 "a GRAY profile on an RGB PNG: no failure" \
	"$CLIMG" --cpu "$D/bad-space.png" invert -o "$D/o.png"
expect_stderr "a GRAY profile on an RGB PNG: libpng's reason" \
	"^climg: warning: .*bad-space\.png: the ICC profile is not kept: iCCP: .*"
check_not "a GRAY profile on an RGB PNG: not written" "$METATOOL" get-icc "$D/o.png" "$D/got.icc"
# a JPEG profile segment numbered 0: libjpeg's reason, no profile written
{
	head -c 2 "$D/c.jpg"
	printf '\377\342\000\020ICC_PROFILE\000\000\001'
	tail -c +3 "$D/c.jpg"
} >"$D/bad-seq.jpg"
expect_exit 0 "an ICC segment numbered 0: no failure" \
	"$CLIMG" --cpu "$D/bad-seq.jpg" invert -o "$D/o.jpg"
expect_stderr "an ICC segment numbered 0: warned" \
	"^climg: warning: .*bad-seq\.jpg: malformed ICC profile \(.+\); it is not kept$"
check_not "an ICC segment numbered 0: no profile written" \
	"$METATOOL" get-icc "$D/o.jpg" "$D/got.icc"

# Exif: kept as it was (the tag too) from PNG and JPEG into PNG and JPEG
for x in png jpg; do
	"$METATOOL" add-exif o=3,be "$D/in-rgb.$x" "$D/in-exif.$x"
	"$METATOOL" get-exif "$D/in-exif.$x" "$D/want.exif"
	for y in png jpg; do
		"$CLIMG" --cpu "$D/in-exif.$x" resize:50% -o "$D/o.$y"
		"$METATOOL" get-exif "$D/o.$y" "$D/got.exif"
		check "Exif kept as it was $x -> $y" cmp "$D/got.exif" "$D/want.exif"
		has_icc "the profile kept beside Exif $x -> $y" "$D/o.$y" "$D/rgb.icc"
		"$CLIMG" --cpu --strip "$D/in-exif.$x" resize:50% -o "$D/o.$y"
		check_not "--strip: no Exif $x -> $y" "$METATOOL" get-exif "$D/o.$y" "$D/got.exif"
		check_not "--strip: no profile $x -> $y" "$METATOOL" get-icc "$D/o.$y" "$D/got.icc"
	done
	# formats without metadata: the image is written, nothing else said
	for y in bmp tga ppm; do
		expect_exit 0 "$x with metadata -> $y" "$CLIMG" --cpu "$D/in-exif.$x" -o "$D/o.$y" invert
		check "$x with metadata -> $y: no warning" test ! -s "$T/err"
	done
done
# an Exif block too large for a JPEG segment (a PNG's eXIf) is left out of JPEG output with
# a warning, and kept in PNG output
"$METATOOL" add-exif o=6,pad=70000 "$D/c.png" "$D/huge.png"
"$METATOOL" get-exif "$D/huge.png" "$D/want.exif"
n=$(wc -c <"$D/want.exif")
expect_exit 0 "a $n-byte Exif block into a JPEG: no failure" \
	"$CLIMG" --cpu "$D/huge.png" invert -o "$D/o.jpg"
expect_stderr "a $n-byte Exif block into a JPEG: warned" \
	"^climg: warning: .*o\.jpg: the Exif block \($n bytes\) does not fit a JPEG segment; the output has none$"
check_not "a $n-byte Exif block: not in the JPEG" "$METATOOL" get-exif "$D/o.jpg" "$D/got.exif"
"$CLIMG" --cpu "$D/huge.png" invert -o "$D/o.png"
"$METATOOL" get-exif "$D/o.png" "$D/got.exif"
check "a $n-byte Exif block: in the PNG as it was" cmp "$D/got.exif" "$D/want.exif"

# a JPEG large enough to be encoded in strips on several threads: the metadata goes into
# the first strip's headers, the same bytes whatever the thread count
"$IMGTOOL" make 1500 900 3 photo:4 "$D/large.png"
"$METATOOL" add-icc "$D/big.icc" "$D/large.png" "$D/tmp.png"
"$METATOOL" add-exif o=8,be "$D/tmp.png" "$D/large-meta.png"
"$METATOOL" get-exif "$D/large-meta.png" "$D/want.exif"
CLIMG_THREADS=4 "$CLIMG" --cpu "$D/large-meta.png" -o "$D/l4.jpg" invert
CLIMG_THREADS=1 "$CLIMG" --cpu "$D/large-meta.png" -o "$D/l1.jpg" invert
CLIMG_THREADS=4 "$CLIMG" --cpu --strip "$D/large-meta.png" -o "$D/ls.jpg" invert
check "strips with metadata: the same bytes on 1 and 4 threads" cmp "$D/l1.jpg" "$D/l4.jpg"
has_icc "strips with metadata: the profile" "$D/l4.jpg" "$D/big.icc"
"$METATOOL" get-exif "$D/l4.jpg" "$D/got.exif"
check "strips with metadata: the Exif block" cmp "$D/got.exif" "$D/want.exif"
same_pixels "strips with metadata: the pixels of --strip's" "$D/l4.jpg" "$D/ls.jpg"
check "strips with metadata: restart markers (written in strips)" \
	test "$(od -An -tx1 -v "$D/l4.jpg" | tr -d ' \n' | grep -o 'ffdd0004' | wc -l)" = 1

# a batch: each image keeps its own profile and tag
mkdir -p "$D/batch"
"$METATOOL" add-icc "$D/rgb2.icc" "$D/c.jpg" "$D/tmp.jpg"
"$METATOOL" add-exif o=8 "$D/tmp.jpg" "$D/batch/two.jpg"
"$METATOOL" add-exif o=5 "$D/in-rgb.png" "$D/batch/one.png"
cp "$D/c.jpg" "$D/batch/three.jpg"
expect_exit 0 "a batch of three" "$CLIMG" --cpu "$D/batch" invert -o "$D/batch/out-%n.jpg"
has_icc "batch: one keeps its profile" "$D/batch/out-one.jpg" "$D/rgb.icc"
has_icc "batch: two keeps its profile" "$D/batch/out-two.jpg" "$D/rgb2.icc"
check_not "batch: three has none" "$METATOOL" get-icc "$D/batch/out-three.jpg" "$D/got.icc"
check "batch: one keeps its tag" test "$("$METATOOL" orient "$D/batch/out-one.jpg")" = 5
check "batch: two keeps its tag" test "$("$METATOOL" orient "$D/batch/out-two.jpg")" = 8
check "batch: three has none" test "$("$METATOOL" orient "$D/batch/out-three.jpg")" = 0

# Pillow reads them back: a real sRGB profile (littleCMS's) and tags Pillow wrote
if py=$(pyref PIL PIL.ImageCms); then
	"$py" -c "
import sys
from PIL import Image, ImageCms
d = sys.argv[1]
icc = ImageCms.ImageCmsProfile(ImageCms.createProfile('sRGB')).tobytes()
open(d + '/srgb.icc', 'wb').write(icc)
ex = Image.Exif()
ex[274] = 6
ex[271] = 'pillow'
im = Image.new('RGB', (11, 5), (200, 30, 90))
im.save(d + '/pil.png', icc_profile=icc, exif=ex.tobytes())
im.save(d + '/pil.jpg', icc_profile=icc, exif=ex.tobytes())
" "$D"
	for x in png jpg; do
		for y in png jpg; do
			for s in invert autoorient; do
				"$CLIMG" --cpu "$D/pil.$x" "$s" -o "$D/o.$y"
				want=6
				[ "$s" = autoorient ] && want=1
				check "Pillow reads the profile and tags ($x -> $y, $s)" "$py" -c "
import sys
from PIL import Image
im = Image.open(sys.argv[1])
ex = im.getexif()
assert im.info.get('icc_profile') == open(sys.argv[2], 'rb').read(), 'profile'
assert ex.get(274) == int(sys.argv[3]), ex.get(274)
assert ex.get(271) == 'pillow', ex.get(271)
" "$D/o.$y" "$D/srgb.icc" "$want"
			done
		done
	done
else
	echo "skipping the Pillow read-back of metadata: no python3 with PIL and ImageCms"
fi
