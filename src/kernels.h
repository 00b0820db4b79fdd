// SPDX-License-Identifier: MIT
// OpenCL C sources of kernels/*.cl, embedded at build time (build/kernels.c).
#ifndef CLIMG_KERNELS_H
#define CLIMG_KERNELS_H

struct kernel_source {
	const char *name;   // file stem: kernels/<name>.cl
	const char *source; // its text
};

// Terminated by an entry with name NULL.
extern const struct kernel_source kernel_sources[];

#endif
