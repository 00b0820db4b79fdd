// SPDX-License-Identifier: MIT
// libjpeg's error manager for climg's reader and writer (internal to src/io): error_exit
// longjmps back to the caller's setjmp with the message in text; warnings that mean lost
// image data (truncated or corrupt entropy data, a bad progression, the file ending inside
// a progressive image) do too, so a damaged file is refused rather than decoded with grey
// holes; the other warnings are counted, never printed.
#ifndef CLIMG_IO_JPEG_ERR_H
#define CLIMG_IO_JPEG_ERR_H

#include <setjmp.h>
#include <stdio.h> // jpeglib.h needs FILE and size_t first

#include <jpeglib.h>

struct jpeg_err {
	struct jpeg_error_mgr mgr;
	jmp_buf jmp;
	char text[JMSG_LENGTH_MAX];
};

// Sets e up as libjpeg's error manager (cinfo.err = &e->mgr); the caller setjmps e->jmp.
void jpeg_err_init(struct jpeg_err *e);

#endif
