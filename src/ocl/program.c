// SPDX-License-Identifier: MIT
// Programs: each kernels/NAME.cl embedded in the binary, built for one channel count with the
// device's build options, from the binary cache (cache.c) where it holds the program, else
// from source. A failed build keeps the device's build log for ocl_build_log.
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../err.h"
#include "../kernels.h"
#include "ocl_impl.h"

// Every program's build options (ocl_build_options_set): OpenCL C 1.2, and never
// -cl-fast-relaxed-math, as OpenCL must match the CPU path byte for byte;
// CLIMG_LOCAL_MEM_BYTES, the device's CL_DEVICE_LOCAL_MEM_SIZE, which kernels may size their
// __local arrays by (kernels/remap.clh does); CLIMG_CPU_KERNELS with the CPU family of
// kernels (ocl_cpu_kernels), so that a program holds only the family that runs; and on a CPU
// device CLIMG_CPU_DEVICE, which keeps kernels only CPU devices run (the convolve program's
// sep_cpu) out of GPU builds, where they would only cost compile time. A smaller program
// compiles, and loads from the cache, in less time. To these each program adds CLIMG_CH, the
// channel count it is built for (program_options). The options are part of every cache key.
void ocl_build_options_set(struct ocl *o)
{
	snprintf(o->build_opts, sizeof o->build_opts, "-cl-std=CL1.2 -DCLIMG_LOCAL_MEM_BYTES=%llu%s%s",
	         (unsigned long long)o->local_mem_bytes, o->cpu_kernels ? " -DCLIMG_CPU_KERNELS" : "",
	         o->cpu_device ? " -DCLIMG_CPU_DEVICE" : "");
}

// The build options of the program for ch channels (struct ocl_program_id) into buf: the
// above and CLIMG_CH=ch (kernels/channels.clh).
static void program_options(const struct ocl *o, int ch, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s", o->build_opts, ocl_program_ch_option(ch));
}

const char *ocl_program_ch_option(int ch)
{
	static const char *const opt[] = { "", " -DCLIMG_CH=1", " -DCLIMG_CH=2", " -DCLIMG_CH=3",
					   " -DCLIMG_CH=4" };
	return ch >= 1 && ch <= 4 ? opt[ch] : "";
}

struct ocl_program *ocl_program_find(const struct ocl *o, const char *name, int ch)
{
	struct ocl_program *p;

	for (p = o->programs; p && (strcmp(p->name, name) || p->ch != ch); p = p->next)
		;
	return p;
}

void ocl_programs_drop(struct ocl *o)
{
	while (o->kernels) {
		struct ocl_kernel *k = o->kernels;

		o->kernels = k->next;
		RELEASE(clReleaseKernel, k->kern);
		free(k);
	}
	while (o->programs) {
		struct ocl_program *p = o->programs;

		o->programs = p->next;
		RELEASE(clReleaseProgram, p->prog);
		free(p);
	}
}

// PoCL's compiler writes its diagnostics ("1 error generated.") straight to the process's
// standard error. While a program builds, descriptor 2 points at a temporary file whose text
// joins the build log if the build fails and is dropped if it succeeds, so a fallback to the
// CPU path keeps to its one warning line. Best effort: without a temporary file nothing is
// diverted. Descriptor 2 is the process's, so builds on several devices at once (one thread
// each) take turns from divert to restore (err_stderr_lock, which warn takes too):
// interleaved, one would restore the other's file.
struct divert {
	int saved_fd; // the real stderr while diverted, else -1
	FILE *tmp;
};

static void stderr_divert(struct divert *d)
{
	d->saved_fd = -1;
	err_stderr_lock();
	fflush(stderr);
	d->tmp = tmpfile();
	if (!d->tmp)
		return;
	d->saved_fd = dup(STDERR_FILENO);
	if (d->saved_fd < 0 || dup2(fileno(d->tmp), STDERR_FILENO) < 0) {
		if (d->saved_fd >= 0)
			close(d->saved_fd);
		d->saved_fd = -1;
		fclose(d->tmp);
		d->tmp = NULL;
	}
}

// Restores stderr. Returns what was written meanwhile (at most 64 KiB; caller frees), or
// NULL when there was nothing.
static char *stderr_restore(struct divert *d)
{
	char *text = NULL;
	struct stat st;
	size_t len = 0;

	if (!d->tmp) {
		err_stderr_unlock();
		return NULL;
	}
	fflush(stderr);
	dup2(d->saved_fd, STDERR_FILENO);
	close(d->saved_fd);
	// The compiler wrote through the descriptor: the FILE has buffered nothing.
	if (fstat(fileno(d->tmp), &st) == 0 && st.st_size > 0)
		len = st.st_size > 65536 ? 65536 : (size_t)st.st_size;
	if (len > 0 && fseek(d->tmp, 0, SEEK_SET) == 0 && (text = malloc(len + 1))) {
		len = fread(text, 1, len, d->tmp);
		text[len] = '\0';
		while (len > 0 && text[len - 1] == '\n')
			text[--len] = '\0';
		if (len == 0) {
			free(text);
			text = NULL;
		}
	}
	fclose(d->tmp);
	d->tmp = NULL;
	err_stderr_unlock();
	return text;
}

// Keeps the build log of prog in o->build_log, headed by what failed to build where, with
// the text the compiler printed (diverted, may be NULL) after it.
static void build_log_keep(struct ocl *o, cl_program prog, const char *name, const char *diverted)
{
	static const char head[] = "climg: opencl: build log for kernels/%s.cl on %s:\n%s\n%s%s";
	size_t len = 0, n;
	char *log = NULL;

	if (clGetProgramBuildInfo(prog, o->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) ==
	        CL_SUCCESS &&
	    (log = malloc(len + 1)) &&
	    clGetProgramBuildInfo(prog, o->device, CL_PROGRAM_BUILD_LOG, len, log, NULL) ==
	        CL_SUCCESS) {
		log[len] = '\0';
		while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == '\0'))
			log[--len] = '\0';
	} else {
		free(log);
		log = NULL;
	}
	if (!log || !*log) {
		free(log);
		log = NULL;
	}
	free(o->build_log);
	n = strlen(head) + strlen(name) + strlen(o->name) + (log ? strlen(log) : 40) +
	    (diverted ? strlen(diverted) : 0) + 1;
	o->build_log = malloc(n);
	if (o->build_log)
		snprintf(o->build_log, n, head, name, o->name,
		         log ? log : "(the driver gave no build log)", diverted ? diverted : "",
		         diverted ? "\n" : "");
	free(log);
}

void ocl_set_divert(struct ocl *o, bool on)
{
	o->divert = on;
}

const char *ocl_build_log(const struct ocl *o)
{
	return o ? o->build_log : NULL;
}

void ocl_build_count(const struct ocl *o, int *built, int *cached)
{
	*built = o ? o->built : 0;
	*cached = o ? o->cached : 0;
}

// Compiles kernels/NAME.cl from its source for ch channels with options opts (which say so).
// NULL with err set; a failed build prints the device's build log.
static cl_program program_from_source(struct ocl *o, const struct kernel_source *src, int ch,
				      const char *opts)
{
	// The API takes const char **, the table holds const char *const. CLIMG_FAULT_BUILD
	// adds a second string that cannot compile.
	const char *text[2] = {src->source,
	                       "\n#error CLIMG_FAULT_BUILD is set: a test-only build failure\n"};
	cl_uint count = ocl_fault_build(o) ? 2 : 1;
	struct divert div;
	char *diverted;
	cl_program prog;
	cl_int e = CL_SUCCESS;

	prog = CREATE(&e, clCreateProgramWithSource(o->ctx, count, text, NULL, &e));
	if (!prog) {
		ocl_fail(e, "clCreateProgramWithSource(kernels/%s.cl)", src->name);
		return NULL;
	}
	if (o->divert) {
		stderr_divert(&div);
		e = CALL(clBuildProgram(prog, 1, &o->device, opts, NULL, NULL));
		diverted = stderr_restore(&div);
	} else {
		e = CALL(clBuildProgram(prog, 1, &o->device, opts, NULL, NULL));
		diverted = NULL;
	}
	if (e == CL_BUILD_PROGRAM_FAILURE) {
		build_log_keep(o, prog, src->name, diverted);
		err_set("opencl: kernels/%s.cl failed to build for %d channels on %s: "
		        "CL_BUILD_PROGRAM_FAILURE", src->name, ch, o->name);
	} else if (e != CL_SUCCESS) {
		ocl_fail(e, "clBuildProgram(kernels/%s.cl)", src->name);
	}
	free(diverted);
	if (e != CL_SUCCESS)
		RELEASE(clReleaseProgram, prog);
	return prog;
}

int ocl_build(struct ocl *o, const struct ocl_program_id *programs, int n)
{
	const struct kernel_source *src;
	struct ocl_cache_key *key = NULL;
	struct ocl_program *p = NULL;
	cl_program prog = NULL;
	char opts[sizeof o->build_opts + 32];

	for (int i = 0; i < n; i++) {
		const char *name = programs[i].name;
		int ch = programs[i].ch;

		if (ocl_program_find(o, name, ch))
			continue;
		if (ch < 1 || ch > 4)
			return err_set("opencl: kernels/%s.cl: no images have %d channels", name,
			               ch);
		for (src = kernel_sources; src->name && strcmp(src->name, name); src++)
			;
		if (!src->name)
			return err_set("opencl: kernels/%s.cl is not embedded in this binary",
			               name);
		program_options(o, ch, opts, sizeof opts);
		key = ocl_cache_key_new(o, src->name, opts, src->source); // NULL: no cache
		if ((prog = ocl_cache_load(o, key, opts))) {
			o->cached++;
		} else {
			if (!(prog = program_from_source(o, src, ch, opts)))
				goto fail;
			ocl_cache_store(key, prog);
		}
		ocl_cache_key_free(key);
		key = NULL;
		if (!(p = malloc(sizeof *p))) {
			err_set("out of memory");
			goto fail;
		}
		*p = (struct ocl_program){ .next = o->programs, .name = src->name, .ch = ch,
		                           .prog = prog };
		o->programs = p;
		o->built++;
		prog = NULL;
	}
	ocl_cache_key_free(key);
	return 0;
fail:
	ocl_cache_key_free(key);
	RELEASE(clReleaseProgram, prog);
	return -1;
}
