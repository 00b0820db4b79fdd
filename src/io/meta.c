// SPDX-License-Identifier: MIT
// The metadata an input carries to PNG and JPEG output (struct img_meta): kept by the
// readers, moved to the caller, its Exif orientation rewritten, freed; and the checks the
// writers make before writing it.
#include <stdlib.h>
#include <string.h>

#include "../err.h"
#include "codec.h"

int io_meta_exif(struct img_reader *r, const uint8_t *t, size_t n)
{
	struct img_meta *m = &r->meta;
	char why[96];
	int o;

	if (m->exif)
		return 0;
	m->exif = malloc(n ? n : 1);
	if (!m->exif)
		return err_set("%s: out of memory", r->name);
	memcpy(m->exif, t, n);
	m->exif_bytes = n;
	o = exif_orientation(m->exif, n, &m->orient_at, why, sizeof why);
	if (o < 0)
		warn("%s: malformed Exif block (%s): its orientation is not read", r->name, why);
	m->orient = o > 0 ? o : 0;
	return 0;
}

int io_icc_fits(const uint8_t *icc, size_t n, int ch, const char *out_name)
{
	const char *want = ch <= 2 ? "GRAY" : "RGB ";

	if (n >= 20 && !memcmp(icc + 16, want, 4))
		return 1;
	warn("%s: the ICC profile is not for %s images; the output has none", out_name,
	     ch <= 2 ? "grey" : "RGB");
	return 0;
}

void img_reader_meta_take(struct img_reader *r, struct img_meta *m)
{
	*m = r->meta;
	r->meta = (struct img_meta){ 0 };
}

void img_meta_orient(struct img_meta *m, int orient)
{
	if (m->orient && orient >= 1 && orient <= 8) {
		exif_set_orientation(m->exif, m->exif_bytes, m->orient_at, orient);
		m->orient = orient;
	}
}

void img_meta_free(struct img_meta *m)
{
	if (!m)
		return;
	free(m->icc);
	free(m->exif);
	*m = (struct img_meta){ 0 };
}
