// SPDX-License-Identifier: MIT
// The metadata of JPEG files (jpeg_meta.c), for jpeg.c: the Exif block (the first APP1
// segment that starts "Exif\0\0") and the ICC profile (APP2 "ICC_PROFILE" segments, in
// their sequence, as libjpeg-turbo's jpeg_read_icc_profile joins them). Internal to src/io.
#ifndef CLIMG_IO_JPEG_META_H
#define CLIMG_IO_JPEG_META_H

#include <stdio.h> // jpeglib.h needs FILE and size_t first

#include <jpeglib.h>

#include "codec.h"

// Asks d to keep the APP1 and APP2 segments it reads: before jpeg_read_header.
void jpeg_meta_save(j_decompress_ptr d);

// Keeps the Exif block and the ICC profile of the header d has read in r->meta; a
// malformed profile is left out with a warning naming the input. 0 / -1 with err set (out
// of memory). Runs where d's errors longjmp, as jpeg_read_header does.
int jpeg_meta_read(struct img_reader *r, j_decompress_ptr d);

// Writes m's Exif block (APP1) and ICC profile (APP2; where io_icc_fits an image of ch
// channels) into c: after jpeg_start_compress, before the first scanline. A block or
// profile too large for JPEG's segments is left out with a warning naming out_name.
// m may be NULL.
void jpeg_meta_write(j_compress_ptr c, const struct img_meta *m, int ch, const char *out_name);

#endif
