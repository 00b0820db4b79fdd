// SPDX-License-Identifier: MIT
#include "jpeg_meta.h"

#include <string.h>

// clang-format off
#include <jerror.h>
// clang-format on

#include "../err.h"

#define EXIF_HEAD "Exif\0\0" // what an Exif APP1 segment starts with (6 bytes)
#define EXIF_HEAD_BYTES 6
#define SEGMENT_MAX 65533 // data bytes of one segment (its 16-bit length counts itself)
#define ICC_CHUNK 65519   // profile bytes of an APP2 segment: "ICC_PROFILE\0", seq, count
#define ICC_MAX ((size_t)255 * ICC_CHUNK) // 255 segments at most

void jpeg_meta_save(j_decompress_ptr d)
{
	jpeg_save_markers(d, JPEG_APP0 + 1, 0xFFFF);
	jpeg_save_markers(d, JPEG_APP0 + 2, 0xFFFF);
}

int jpeg_meta_read(struct img_reader *r, j_decompress_ptr d)
{
	JOCTET *icc = NULL;
	unsigned int icc_bytes = 0;
	long warnings = d->err->num_warnings;

	for (jpeg_saved_marker_ptr m = d->marker_list; m; m = m->next)
		if (m->marker == JPEG_APP0 + 1 && m->data_length >= EXIF_HEAD_BYTES &&
		    !memcmp(m->data, EXIF_HEAD, EXIF_HEAD_BYTES)) {
			if (io_meta_exif(r, m->data + EXIF_HEAD_BYTES,
					 m->data_length - EXIF_HEAD_BYTES) != 0)
				return -1;
			break;
		}
	if (jpeg_read_icc_profile(d, &icc, &icc_bytes)) {
		r->meta.icc = icc;
		r->meta.icc_bytes = icc_bytes;
	} else if (d->err->num_warnings > warnings && d->err->msg_code == JWRN_BOGUS_ICC) {
		char text[JMSG_LENGTH_MAX];
		d->err->format_message((j_common_ptr)d, text);
		warn("%s: malformed ICC profile (%s); it is not kept", r->name, text);
	}
	return 0;
}

void jpeg_meta_write(j_compress_ptr c, const struct img_meta *m, int ch, const char *out_name)
{
	if (!m)
		return;
	if (m->exif && m->exif_bytes > SEGMENT_MAX - EXIF_HEAD_BYTES) {
		warn("%s: the Exif block (%zu bytes) does not fit a JPEG segment; the output has "
		     "none",
		     out_name, m->exif_bytes);
	} else if (m->exif) {
		jpeg_write_m_header(c, JPEG_APP0 + 1, (unsigned)(EXIF_HEAD_BYTES + m->exif_bytes));
		for (int i = 0; i < EXIF_HEAD_BYTES; i++)
			jpeg_write_m_byte(c, EXIF_HEAD[i]);
		for (size_t i = 0; i < m->exif_bytes; i++)
			jpeg_write_m_byte(c, m->exif[i]);
	}
	if (m->icc && m->icc_bytes > ICC_MAX)
		warn("%s: the ICC profile (%zu bytes) does not fit 255 JPEG segments; the output "
		     "has none",
		     out_name, m->icc_bytes);
	else if (m->icc && io_icc_fits(m->icc, m->icc_bytes, ch, out_name))
		jpeg_write_icc_profile(c, m->icc, (unsigned)m->icc_bytes);
}
