// SPDX-License-Identifier: MIT
// Both kernel families on one device: every stage whose kernels come in a variant for CPU
// devices and one for GPUs (ocl_cpu_kernels), run with the family named on the command line
// whatever the device's type, against the CPU path byte for byte (pipeline_verify: the image
// after every stage, the histogram counts and the stats sums at the end), and `climg
// compare`'s kernels against cmp_images, on sizes around the kernels' blocks,
// tiles and slices with 1-4 channels. So CI on PoCL keeps the GPU kernels tested, and a GPU
// machine the CPU ones. Prints one "PASS name" or "FAIL name: ..." line per check, as
// tests/unit.c does; tests/t-kernels.sh runs it.
//
//   tests/kernels cpu|gpu [DEVICE]     DEVICE as climg --device (default: $CLIMG_DEVICE)
//
// Exit status: 0 when every check passed, 1 when one failed, 2 usage error, 3 no device.
#define _DEFAULT_SOURCE // MAP_ANONYMOUS
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../src/compare.h"
#include "../src/err.h"
#include "../src/ocl.h"
#include "../src/pipeline.h"

#include "check.h"

// Sizes: single pixels, rows and columns; below, at and past the blocks (16, 8, 4 pixels)
// and the word kernels' multiples of 4; past a remap tile (256 x 64 output pixels) in both
// directions with partial tiles, and past the mapping's 32 x 32 tiles; several 16384-pixel
// pieces (rotate 180, grey) and 64 KiB histogram slices with a partial last one; and two
// (64 x 64, 128 x 96) whose images are whole 4096-byte pages, with a guard page after them
// too (image_make).
static const struct {
	int w, h;
} sizes[] = { { 1, 1 },     { 1, 19 },   { 19, 1 },   { 2, 3 },   { 13, 7 },
	      { 16, 16 },   { 17, 17 },  { 35, 67 },  { 64, 64 }, { 128, 96 },
	      { 132, 36 },  { 67, 300 }, { 300, 520 } };
#define NSIZES (sizeof sizes / sizeof sizes[0])

// Chains of the stages with two kernel families; each stage is checked where it stands.
static const char *const chains[][6] = {
	{ "rotate:90" },
	{ "rotate:180" },
	{ "rotate:270" },
	{ "transpose" },
	{ "transverse", "flip", "flop" },
	// crop at offsets of every alignment, after a resize gives every input room for them
	{ "resize:41x33:nearest", "crop:37x29+3+1", "crop:33x27", "crop:13x5+1+7", "crop:1x1+12+4" },
	{ "invert", "threshold:77", "equalize" },
	{ "resize:61%:lanczos", "resize:x30:cubic", "resize:150%:bilinear", "resize:9x9:area",
	  "resize:50%:nearest" },
	// one kernel for both axes on a GPU (resize_hv) where the taps are few: bilinear
	// shrinking and growing, area shrinking by a fraction and growing
	{ "resize:50%:bilinear", "resize:37%:area", "resize:170%:area", "resize:13x40:bilinear" },
	{ "grey" },
	{ "grey:avg" },
	// one pixel a work-item on a GPU, 16384 (16 at a time) on a CPU device
	{ "flatten:bg=#0a80f5" },
	{ "dropalpha" },
	{ "grey:bt709", "rotate:90", "histogram", "transpose", "rotate:180", "histogram" },
	{ "stats", "grey", "stats", "rotate:90", "stats" },
	// the mapping (any angle): bilinear with and without alpha, nearest; the tile kernels'
	// orders of work: along output columns (|sin| <= |cos|, shear up or down, 45 degrees)
	// and along output rows (|sin| > |cos|, the 90 degrees of a crop on a non-square image)
	{ "rotate:30", "rotate:-45:crop", "rotate:135:nearest" },
	{ "rotate:17.5:bg=#ff000080:crop", "rotate:100.5:bg=#10203040" },
	{ "rotate:-80:nearest:bg=#0a0b0c", "rotate:90:crop", "rotate:-7.5" },
	// nearly no turn: the canvas is one pixel larger, and tiles inside the input take taps
	// from its last row and column, next to the end of the input's memory
	{ "rotate:0.01" },
	// 3 x 3 convolutions on rows of whole words: the GPU family takes convolve_3x3_packed
	// where the weights are small enough (all but the last, whose weights are scaled to
	// 2^20), or convolve_3x3_packed_norm where the sums need no clamp (box, the next row's
	// first three), the CPU family convolve_3x3; other widths take the other paths
	{ "convolve:box", "convolve:sobel-x:bias=128", "convolve:sharpen:border=wrap",
	  "convolve:emboss:border=reflect", "convolve:edge:bias=64:border=zero" },
	{ "convolve:kernel=1,2,1,2,4,2,1,2,1:border=zero",
	  "convolve:kernel=1,2,3,4,5,6,7,8,9:norm=255:border=wrap",
	  "convolve:box:bias=0.4:border=reflect", "convolve:box:bias=1" },
	{ "convolve:kernel=1,2,3,4,5,6,7,8,9:border=zero:bias=-60",
	  "convolve:kernel=0,0,0,0,-257,0,0,0,0:norm=none:bias=300:border=reflect",
	  "convolve:gauss:sigma=0.5" },
};
#define NCHAINS (sizeof chains / sizeof chains[0])

// The pages image_make maps for an image of n bytes: a page that cannot be read, the image
// from the start of the next page, the rest of its last page, and another unreadable page.
static size_t image_pages(size_t n, size_t *page)
{
	*page = (size_t)sysconf(_SC_PAGESIZE);
	return ((n ? n : 1) + *page - 1) / *page + 2;
}

// Fills im with xorshift32 noise (every value, no pattern a wrong index could match), or
// with one value when uniform is set (one bin holds everything: the histograms' worst case).
// The image starts a page, so a zero-copy device (PoCL) reads it in place (climg wraps
// memory with ocl_wrap_aligned's alignment, a page there), and the page before it cannot
// be read, nor the page after it: a kernel that reads the chain's input before its first
// byte, or past its last where the image is whole pages, faults instead of reading other
// memory. image_free frees it.
static int image_make(struct img *im, int w, int h, int ch, uint32_t seed, bool uniform)
{
	size_t n = (size_t)w * (size_t)h * (size_t)ch, page, pages = image_pages(n, &page);
	uint32_t s = seed ? seed : 1;
	uint8_t *m = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (m == MAP_FAILED)
		return err_set("mmap: out of memory");
	if (mprotect(m, page, PROT_NONE) || mprotect(m + (pages - 1) * page, page, PROT_NONE)) {
		munmap(m, pages * page);
		return err_set("mprotect failed");
	}
	*im = (struct img){ w, h, ch, m + page };
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		im->data[i] = uniform ? 200 : (uint8_t)(s >> 24);
	}
	return 0;
}

static void image_free(struct img *im)
{
	size_t page, pages = image_pages((size_t)im->w * im->h * im->ch, &page);
	munmap(im->data - page, pages * page);
	im->data = NULL;
}

// Runs chain k (n stages) on im with both paths; a check named NAME.
static void verify(struct ocl *o, const struct img *im, const char *const *tokens,
		   const char *name)
{
	struct chain c = { 0 };
	struct plan p = { 0 };
	struct img out = { 0 };
	struct geom g = { im->w, im->h, im->ch, 0 };
	struct ocl_program_id programs[8];
	int n = 0, np, rc = -1;

	while (n < 6 && tokens[n])
		n++;
	if (chain_parse(&c, n, (char *const *)tokens) < 0)
		goto done;
	if (plan_make(&p, &c, &g, 0) < 0)
		goto done;
	np = plan_programs(&p, programs, 8);
	if (ocl_build(o, programs, np) < 0)
		goto done;
	rc = pipeline_verify(&p, o, im, &out, NULL);
done:
	if (rc == 0)
		printf("PASS %s\n", name);
	else
		printf("FAIL %s: %s\n", name, err_msg());
	failures += rc != 0;
	ocl_host_free(o, out.data);
	plan_free(&p);
	chain_free(&c);
}

// cmp_count_cl on o against cmp_images, every integer: a and b, then b and a, with opts;
// a check named NAME.
static void verify_compare(struct ocl *o, const struct img *a, const struct img *b,
			   const struct cmp_opts *opts, const char *name)
{
	struct cmp_result cl, cpu;
	const char *what = NULL;
	for (int k = 0; k < 2 && !what; k++) {
		const struct img *x = k ? b : a, *y = k ? a : b;
		cmp_images(x, y, opts, &cpu);
		if (cmp_count_cl(o, x, y, opts, &cl) < 0) {
			what = err_msg();
			break;
		}
		if (cl.compared != cpu.compared || cl.differing != cpu.differing)
			what = "the counts differ";
		for (int c = 0; c < a->ch && !what; c++)
			if (cl.max[c] != cpu.max[c] || cl.max_x[c] != cpu.max_x[c] ||
			    cl.max_y[c] != cpu.max_y[c] || cl.sum_abs[c] != cpu.sum_abs[c] ||
			    cl.sum_sq[c] != cpu.sum_sq[c])
				what = "a channel's largest difference, its position or a sum differs";
	}
	if (what)
		printf("FAIL %s: %s\n", name, what);
	else
		printf("PASS %s\n", name);
	failures += what != NULL;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 2 ? argv[2] : getenv("CLIMG_DEVICE");
	struct ocl *o;
	bool cpu;
	char name[256];

	if (argc < 2 || argc > 3 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "gpu"))) {
		fprintf(stderr, "usage: tests/kernels cpu|gpu [DEVICE]\n");
		return 2;
	}
	cpu = !strcmp(argv[1], "cpu");
	if (!(o = ocl_open(dev && *dev ? dev : NULL, NULL))) {
		fprintf(stderr, "kernels: %s\n", err_msg());
		return 3;
	}
	ocl_set_cpu_kernels(o, cpu);
	// The programs are built with the family asked for: convolve_3x3_packed_cN is one of the
	// GPU family's kernels, absent from the CPU family's programs.
	{
		const struct ocl_program_id conv = { "convolve", 1 };
		size_t wg;
		int built = ocl_build(o, &conv, 1);
		CHECK("kernels: the convolve program builds for 1 channel", built == 0);
		CHECK(cpu ? "kernels: the CPU family's program lacks convolve_3x3_packed_c1"
			  : "kernels: the GPU family's program has convolve_3x3_packed_c1",
		      built == 0 && (ocl_kernel_wg_max(o, "convolve", 1, "convolve_3x3_packed_c1",
						       &wg) == 0) == !cpu);
	}
	// tests/t-kernels.sh runs the GPU family a second time with this set, so that the
	// kernels sized for devices with less local memory run too (src/stages/remap.c's
	// remap_tile_rows, tested in tests/unit.c)
	const char *lm = getenv("CLIMG_FAULT_LOCAL_MEM");
	if (lm && *lm)
		CHECK("kernels: the device's local memory is taken as CLIMG_FAULT_LOCAL_MEM at most",
		      ocl_get_limits(o).local_mem_bytes <= strtoull(lm, NULL, 10));
	for (size_t s = 0; s < NSIZES; s++) {
		for (int ch = 1; ch <= 4; ch++) {
			struct img im;
			uint32_t seed = (uint32_t)(sizes[s].w * 131 + sizes[s].h * 7 + ch);
			if (image_make(&im, sizes[s].w, sizes[s].h, ch, seed, false) < 0)
				goto fail;
			if (s == 0 && ch == 1 && pipeline_zero_copy(o))
				CHECK("kernels: a zero-copy device reads the test images in place",
				      ocl_wrap_aligned(o, im.data));
			for (size_t k = 0; k < NCHAINS; k++) {
				snprintf(name, sizeof name, "kernels %s %dx%dx%d:", argv[1], im.w,
					 im.h, ch);
				for (int t = 0; t < 6 && chains[k][t]; t++)
					snprintf(name + strlen(name), sizeof name - strlen(name),
						 " %s", chains[k][t]);
				verify(o, &im, chains[k], name);
			}
			// compare: against a copy with every 7th sample changed (by 1 to 255, so
			// the largest difference of a channel is reached at several places), all
			// pixels and with a region left out and a tolerance
			{
				struct img b;
				size_t n = (size_t)im.w * (size_t)im.h * (size_t)ch;
				struct cmp_opts all = { 0 }, part = { .tolerance = 100, .nignore = 2 };
				part.ignore[0] = (struct cmp_rect){ 0, 0, 1, 1 };
				part.ignore[1] = (struct cmp_rect){ im.w / 3, im.h / 4, im.w / 2 + 1,
								    im.h / 2 + 1 };
				if (image_make(&b, im.w, im.h, ch, seed, false) < 0)
					goto fail;
				for (size_t i = 0; i < n; i += 7)
					b.data[i] = (uint8_t)(b.data[i] + 1 + i % 255);
				snprintf(name, sizeof name, "kernels %s %dx%dx%d: compare", argv[1],
					 im.w, im.h, ch);
				verify_compare(o, &im, &b, &all, name);
				snprintf(name, sizeof name, "kernels %s %dx%dx%d: compare, tolerance "
					 "and ignored regions", argv[1], im.w, im.h, ch);
				verify_compare(o, &im, &b, &part, name);
				image_free(&b);
			}
			image_free(&im);
			// one value everywhere: one histogram bin takes every count, and every
			// minimum is the maximum
			if (image_make(&im, sizes[s].w, sizes[s].h, ch, 1, true) < 0)
				goto fail;
			snprintf(name, sizeof name, "kernels %s %dx%dx%d uniform: histogram stats",
				 argv[1], im.w, im.h, ch);
			verify(o, &im, (const char *const[]){ "histogram", "stats", NULL }, name);
			image_free(&im);
		}
	}
	// Rows that are not whole words (248 x 227 turned by these angles): each tile row starts
	// up to 3 pixels right of the tile's first column (rotate_skew). Here some tiles are all
	// background while those pixels are not, which the tile's class must see (ROTATE_MAP).
	for (int ch = 1; ch <= 3; ch++) {
		static const char *const turns[] = { "rotate:-30", "rotate:60", "rotate:60:nearest" };
		struct img im;
		if (image_make(&im, 248, 227, ch, (uint32_t)(248 + ch), false) < 0)
			goto fail;
		for (size_t k = 0; k < sizeof turns / sizeof *turns; k++) {
			snprintf(name, sizeof name, "kernels %s 248x227x%d: %s", argv[1], ch, turns[k]);
			verify(o, &im, (const char *const[]){ turns[k], NULL }, name);
		}
		image_free(&im);
	}
	// A program holds one family's kernels (src/ocl/program.c), so switching families releases the
	// programs built so far: without that the other family's kernels would be missing.
	for (int k = 0; k < 2; k++) {
		struct img im;
		bool fam = k == 0 ? !cpu : cpu;
		ocl_set_cpu_kernels(o, fam);
		if (image_make(&im, 67, 300, 3, 7, false) < 0)
			goto fail;
		snprintf(name, sizeof name, "kernels %s, then %s: 67x300x3 rotate:90 rotate:30 grey "
			 "histogram", argv[1], fam ? "cpu" : "gpu");
		verify(o, &im, (const char *const[]){ "rotate:90", "rotate:30", "grey", "histogram",
						      NULL }, name);
		image_free(&im);
	}
	ocl_close(o);
	return failures ? 1 : 0;
fail:
	fprintf(stderr, "kernels: %s\n", err_msg());
	ocl_close(o);
	return 1;
}
