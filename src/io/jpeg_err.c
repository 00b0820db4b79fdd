// SPDX-License-Identifier: MIT
// libjpeg's error manager (jpeg_err.h).
#include <setjmp.h>
#include <stdio.h> // jpeglib.h needs FILE and size_t first

// jpeglib.h first: it includes jconfig.h, whose *_ARITH_CODING_SUPPORTED jerror.h reads.
#include <jpeglib.h>
// clang-format off
#include <jerror.h>
// clang-format on

#include "jpeg_err.h"

static void on_error_exit(j_common_ptr cinfo)
{
	struct jpeg_err *e = (struct jpeg_err *)cinfo->err;

	if (e->mgr.msg_code == JERR_BAD_PRECISION)
		snprintf(e->text, sizeof(e->text), "%d-bit samples are not supported (only 8-bit)",
		         e->mgr.msg_parm.i[0]);
	else
		e->mgr.format_message(cinfo, e->text);
	longjmp(e->jmp, 1);
}

// Whether warning code means image data was lost. The end of the file is harmless only in
// a sequential decompressor (a missing end-of-image marker after complete image data;
// missing data there is reported as JWRN_HIT_MARKER when the decoder needs it).
static int data_lost(j_common_ptr cinfo, int code)
{
	switch (code) {
	case JWRN_HIT_MARKER:
	case JWRN_HUFF_BAD_CODE:
#if JPEG_LIB_VERSION >= 70 || defined(C_ARITH_CODING_SUPPORTED) || defined(D_ARITH_CODING_SUPPORTED)
	case JWRN_ARITH_BAD_CODE:
#endif
	case JWRN_MUST_RESYNC:
	case JWRN_BOGUS_PROGRESSION:
	case JWRN_NOT_SEQUENTIAL: return 1;
	case JWRN_JPEG_EOF:
		return cinfo->is_decompressor &&
		       ((struct jpeg_decompress_struct *)cinfo)->progressive_mode;
	default: return 0;
	}
}

static void on_emit_message(j_common_ptr cinfo, int level)
{
	struct jpeg_err *e = (struct jpeg_err *)cinfo->err;

	if (level >= 0)
		return;
	e->mgr.num_warnings++;
	if (data_lost(cinfo, e->mgr.msg_code)) {
		if (e->mgr.msg_code == JWRN_JPEG_EOF || e->mgr.msg_code == JWRN_HIT_MARKER)
			snprintf(e->text, sizeof(e->text),
			         "the file is truncated or its image data is corrupt (%s)",
			         e->mgr.msg_code == JWRN_JPEG_EOF
			             ? "it ends inside the image"
			             : "premature end of data segment");
		else
			e->mgr.format_message(cinfo, e->text);
		longjmp(e->jmp, 1);
	}
}

static void on_output_message(j_common_ptr cinfo)
{
	(void)cinfo;
}

void jpeg_err_init(struct jpeg_err *e)
{
	jpeg_std_error(&e->mgr);
	e->mgr.error_exit = on_error_exit;
	e->mgr.emit_message = on_emit_message;
	e->mgr.output_message = on_output_message;
}
