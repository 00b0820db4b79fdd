// SPDX-License-Identifier: MIT
// `climg --version`. Where a library can say which version of it runs (libpng, zlib, the
// OpenCL ICD loader), that is printed; libjpeg-turbo and libdeflate have no such call, so
// their headers' versions at build time are printed, marked "(build)".
#include "version.h"

#include <jpeglib.h>
#include <libdeflate.h>
#include <png.h>
#include <zlib.h>

#include "err.h"
#include "ocl.h"

#ifndef CLIMG_VERSION
#error "CLIMG_VERSION must be defined (the Makefile passes -DCLIMG_VERSION)"
#endif

const char *climg_version(void)
{
	return CLIMG_VERSION;
}

int version_print(FILE *out)
{
	char loader[256];
	int jt = LIBJPEG_TURBO_VERSION_NUMBER; // MMMmmmppp, e.g. 2001005 for 2.1.5

	if (ocl_loader_version(loader, sizeof loader) < 0)
		snprintf(loader, sizeof loader, "unknown (%s)", err_msg());
	if (fprintf(out, "climg %s\n", CLIMG_VERSION) < 0 ||
	    fprintf(out, "libpng %s\n", png_get_libpng_ver(NULL)) < 0 ||
	    fprintf(out, "libjpeg-turbo %d.%d.%d (build)\n", jt / 1000000, jt / 1000 % 1000,
	            jt % 1000) < 0 ||
	    fprintf(out, "libdeflate %s (build)\n", LIBDEFLATE_VERSION_STRING) < 0 ||
	    fprintf(out, "zlib %s\n", zlibVersion()) < 0 ||
	    fprintf(out, "opencl-icd-loader %s\n", loader) < 0)
		return err_set("cannot write the version");
	return 0;
}
