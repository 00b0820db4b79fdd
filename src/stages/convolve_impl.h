// SPDX-License-Identifier: MIT
// Internal to the convolve stage, whose syntax and FIXED-POINT CONTRACT src/stages/convolve.c
// states:
//   convolve.c          the stage: options, parse, plan
//   convolve_spec.c     kernels given as lists of numbers (kernel=...), exact decimals
//   convolve_weights.c  the contract's integers: weights, divisor and bias, and their bounds
//   convolve_cpu.c      the CPU path, the contract's reference
//   convolve_cl.c       the OpenCL path: which of the kernel families runs an image
#ifndef CLIMG_STAGES_CONVOLVE_IMPL_H
#define CLIMG_STAGES_CONVOLVE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "../img.h"
#include "stage.h"

#define MAX_RADIUS 1000
#define MAX_N (2 * MAX_RADIUS + 1)
#define INT32_BOUND 2147483647LL
#define INT64_BOUND ((int64_t)1 << 62)

enum border { BORDER_REPLICATE, BORDER_REFLECT, BORDER_WRAP, BORDER_ZERO };

struct convolve_params {
	int n, r;      // kernel side and radius, n = 2r + 1
	int border;    // enum border
	int separable; // k[dy][dx] = ky[dy] * kx[dx]
	int64_t D, B;  // divisor (>= 1) and bias numerator of the contract
	int64_t off;   // B + floor(D / 2)
	int shift;     // log2(D) when D is a power of two, else -1
	int64_t dev_m; // the device divides by D as (t * dev_m) >> dev_s (kernels/convolve.cl's
	int dev_s;     // finish() says why that is exact), or by t / D where dev_m is 0
	uint32_t m32;  // ... and in 32 bits (finish32) as ((t * m32) >> 32) >> s32, or t >> s32
	int s32;       // where m32 is 0; s32 is -1 where D allows neither (see finish_setup)
	uint32_t pz;   // convolve_3x3_packed's: the halves' start Z, and the division as
	uint32_t pm;   // (u * pm) >> ps; ps is -1 where that kernel does not take p (see
	int ps;        // packed_setup)
	uint32_t pn;   // convolve_3x3_packed_norm's division mul_hi(u, pn); 0 where that
	               // kernel does not take p (packed_setup)
	int32_t *w;    // separable: kx[n] then ky[n]; else k[n * n], row by row (dy, then dx)
	char what[48]; // "3x3 sharpen", for messages
};

// Colour channels: all of grey and RGB, all but the last (alpha) of grey+alpha and RGBA.
static inline int colour_channels(int ch)
{
	return ch == 2 || ch == 4 ? ch - 1 : ch;
}

// ---- convolve_spec.c: the kernel as the user gave it -----------------------------------------

// A number m * 10^e, exactly as written.
struct dec {
	int64_t m;
	int e;
};

// The named kernels of fixed size (box and gauss are built from their options).
struct named {
	const char *name;
	int n;
	int w[9];
};

enum norm_kind { NORM_DEFAULT, NORM_SUM, NORM_NONE, NORM_VALUE };

// The kernel as the user gave it, before fixed point.
struct spec {
	const char *kernel; // the name or "kernel=..." argument, for messages
	enum { K_NONE, K_BOX, K_GAUSS, K_NAMED, K_CUSTOM } kind;
	const struct named *named;
	int n;         // side
	double *v;     // custom: n * n weights as doubles
	struct dec *d; // custom: the same exactly, or NULL when one is not exact
	const char *size_s, *sigma_s, *radius_s, *norm_s, *bias_s, *border_s, *kernel_s;
	long size, radius;
	double sigma, norm_v, bias;
	struct dec norm_d, bias_d;
	bool norm_exact, bias_exact;
	enum norm_kind norm;
};

// Reads s (already accepted by parse_double) exactly. false when it has more than 18
// significant digits or an exponent beyond +-999: the caller then works in double.
bool convolve_dec_parse(const char *s, struct dec *d);
// kernel=W,W,... (list is modified: split at the commas) into s->n, s->v and s->d.
int convolve_custom_inline(struct spec *s, char *list);
// kernel=@FILE: numbers separated by white space, one row of the kernel a line; blank
// lines and lines starting with '#' are skipped. Into s->n, s->v and s->d.
int convolve_custom_file(struct spec *s, const char *path);

// ---- convolve_weights.c: the contract's integers ---------------------------------------------

// The integers of box, gauss, and of a kernel given as n * n numbers (named or custom), into
// p (p->n, p->r, p->separable, p->w, p->D, p->B); they resolve the default norm. -1 with err
// set.
int convolve_build_box(struct spec *s, struct convolve_params *p);
int convolve_build_gauss(struct spec *s, struct convolve_params *p);
int convolve_build_list(struct spec *s, struct convolve_params *p);
// Sets the fields derived from D and B (off, shift, the device's divisions) once they are
// final.
void convolve_finish_setup(struct convolve_params *p);
// sum |w[i]| over n weights.
int64_t convolve_abs_sum(const int32_t *w, int n);
// The 9 weights of a 3 x 3 kernel, row by row (dy, then dx).
void convolve_weights_3x3(const struct convolve_params *p, int32_t k[9]);

// ---- convolve_cpu.c and convolve_cl.c: the stage's two paths ---------------------------------

// params: a struct convolve_params (struct stage_ops).
void convolve_run_cpu(const void *params, const struct stage_plan *plan, const struct img *in,
		struct img *out);
int convolve_run_cl(const void *params, const struct stage_cl *c);

#endif
