#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates the committed sample images in testdata/ with tests/imgtool (patterns are
# described at the top of tests/imgtool.c). Run from the repository root, after building
# tests/imgtool: `make testdata` or `sh tests/make-testdata.sh`. The output depends only
# on the patterns and on zlib/libjpeg, so rerunning it normally changes nothing.
set -eu
IMGTOOL=${IMGTOOL:-tests/imgtool}
[ -x "$IMGTOOL" ] || {
	echo "make-testdata.sh: $IMGTOOL not built (run 'make tests/imgtool')" >&2
	exit 1
}
mkdir -p testdata
mk() { "$IMGTOOL" -q 90 -l 9 make "$@"; }

mk 64 48 3 F testdata/f-rgb.png           # the letter F, RGB
mk 64 48 4 F testdata/f-rgba.png          # the letter F, alpha fading to the right
mk 37 23 1 grad testdata/grad-grey.pgm    # odd sizes, grey
mk 320 240 3 photo:1 testdata/photo.jpg   # smooth gradient plus noise, quality 90
mk 31 17 3 grad testdata/sample.bmp       # 93-byte rows: 3 bytes of BMP row padding

total=$(cat testdata/* | wc -c)
[ "$total" -lt 102400 ] || {
	echo "make-testdata.sh: testdata/ is $total bytes; keep it under 100 KB" >&2
	exit 1
}
