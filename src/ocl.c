// SPDX-License-Identifier: MIT
// The only module that talks to the OpenCL driver (OpenCL 1.2 API only). Every failing
// driver call becomes err "opencl: CALL(OBJECT): CL_ERROR_NAME"; a failed program build also
// prints the device's build log to stderr. Devices are numbered platform by platform, device
// by device, the same order for ocl_list_devices and ocl_open's numeric spec.
#include "ocl.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "kernels.h"

// The queue is in order; ocl_profile() recreates it with CL_QUEUE_PROFILING_ENABLE.
static const cl_command_queue_properties queue_props = 0;

// Options for every program. Never -cl-fast-relaxed-math: OpenCL must match the CPU path
// byte for byte.

struct ocl_program {
	struct ocl_program *next;
	const char *name; // kernel_sources[i].name: static storage
	int ch;           // the channel count it was built for (ocl_program_id)
	cl_program prog;
};

struct ocl_kernel {
	struct ocl_kernel *next;
	const struct ocl_program *prog;
	cl_kernel kern;
	size_t wg_max; // CL_KERNEL_WORK_GROUP_SIZE for this kernel on this device
	char name[];
};

struct ocl {
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	char *name;      // "DEVICE (PLATFORM)"
	char *build_log; // of the last program that failed to build, NULL if none
	cl_ulong max_alloc_bytes, global_mem_bytes, local_mem_bytes;
	size_t max_wg, max_item[2]; // work-group size; work-items per dimension
	cl_uint compute_units;
	struct ocl_program *programs;
	struct ocl_kernel *kernels;
	bool profiling;     // commands keep their events for ocl_timer_take
	cl_event *events;   // events of the commands queued since the last ocl_timer_take
	size_t nevents, events_cap;
	struct ocl_pinned *pinned; // live ocl_host_alloc blocks
	bool cache_on;             // the program binary cache (ocl_set_cache); on by default
	bool cpu_device;           // CL_DEVICE_TYPE_CPU (ocl_cpu_device)
	bool cpu_kernels;          // the stages' CPU kernel variants (ocl_cpu_kernels)
	bool cache_ready;          // cache_dir and cache_id were looked up
	char *cache_dir;           // the cache directory, NULL when there is none to use
	char *cache_id;            // the device identity part of every cache key
	int built, cached;         // programs built by ocl_build; of those, from the cache
	bool host_unified;         // CL_DEVICE_HOST_UNIFIED_MEMORY (false when not answered)
	size_t wrap_align;         // ocl_wrap_alloc's alignment: a power of two, >= a page
	char build_opts[128];      // every program's build options (set_build_options)
	size_t index;              // the device's number in ocl_list_devices
};

// Every program's build options (set_build_options): OpenCL C 1.2; CLIMG_LOCAL_MEM_BYTES, the
// device's CL_DEVICE_LOCAL_MEM_SIZE, which kernels may size their __local arrays by
// (kernels/remap.clh does); CLIMG_CPU_KERNELS with the CPU family of kernels
// (ocl_cpu_kernels), so that a program holds only the family that runs; and on a CPU device
// CLIMG_CPU_DEVICE, which keeps kernels only CPU devices run (kernels/convolve.cl's sep_cpu)
// out of GPU builds, where they would only cost compile time. A smaller program loads
// faster: on PoCL (2-core VM, docs/BENCHMARKS.md, sixteenth session) building the rotate
// program from the cache took 11 ms instead of 39, convolve 17 instead of 28. To these each
// program adds CLIMG_CH, the channel count it is built for (program_options). The options are
// part of every cache key.
static void set_build_options(struct ocl *o)
{
	snprintf(o->build_opts, sizeof o->build_opts, "-cl-std=CL1.2 -DCLIMG_LOCAL_MEM_BYTES=%llu%s%s",
	         (unsigned long long)o->local_mem_bytes, o->cpu_kernels ? " -DCLIMG_CPU_KERNELS" : "",
	         o->cpu_device ? " -DCLIMG_CPU_DEVICE" : "");
}

// The build options of the program for ch channels (struct ocl_program_id) into buf: the
// above and CLIMG_CH=ch (kernels/channels.clh).
static void program_options(const struct ocl *o, int ch, char *buf, size_t n)
{
	snprintf(buf, n, "%s -DCLIMG_CH=%d", o->build_opts, ch);
}

// A block of pinned host memory: a CL_MEM_ALLOC_HOST_PTR buffer kept mapped.
struct ocl_pinned {
	struct ocl_pinned *next;
	cl_mem mem;
	void *ptr;
};

struct ocl_buf {
	cl_mem mem;
	size_t bytes;
	struct ocl *wrap_of; // ocl_buf_wrap: the device whose queue ocl_buf_free waits for
	void *host;          // ocl_buf_wrap: the wrapped host memory
};

// One entry of the device numbering.
struct dev {
	cl_platform_id platform;
	cl_device_id device;
};

// ---- test-only fault injection -------------------------------------------------------------
// Five switches let the tests make a working driver fail in each way a real one can, or look
// smaller than it is (documented as test aids in climg(1)); none of them changes anything
// when unset:
//   CLIMG_FAULT_INJECT=N     the Nth counted call fails (below)
//   CLIMG_FAULT_BUILD=1      every program gets a line that cannot compile, as a driver whose
//                            compiler rejects our source would; with CLIMG_FAULT_DEVICE=N
//                            only on device N of ocl_list_devices (one of several failing)
//   CLIMG_FAULT_MAX_ALLOC=N  the device reports a CL_DEVICE_MAX_MEM_ALLOC_SIZE of at most N
//                            bytes, so a small image exceeds it
//   CLIMG_FAULT_LOCAL_MEM=N  the device reports a CL_DEVICE_LOCAL_MEM_SIZE of at most N
//                            bytes, so that a GPU runs the kernels chosen for devices with
//                            less local memory (tests/t-kernels.sh)
//   CLIMG_FAULT_WORK_GROUP=N the device reports a CL_DEVICE_MAX_WORK_GROUP_SIZE, and work-item
//                            sizes, of at most N, so that the stages take the kernels and
//                            work-groups they choose for such devices (tests/t-kernels.sh;
//                            ocl_run refuses larger work-groups, as the driver would)
// With CLIMG_FAULT_INJECT=N (N >= 1) the Nth counted OpenCL call of the process returns
// CL_OUT_OF_RESOURCES without reaching the driver (any other value: off). Counted are exactly
// the calls wrapped in CALL() / CREATE(), i.e. every call from the moment ocl_open has chosen
// a device on: in ocl_open clGetDeviceInfo x7 (limits, availability), then x2 (host-unified
// memory, base address alignment: a failure there only means no zero-copy), clCreateContext,
// clCreateCommandQueue; clCreateBuffer (ocl_buf_new, ocl_buf_wrap, ocl_host_alloc);
// clEnqueueMapBuffer (ocl_host_alloc, ocl_wrap_sync); clEnqueueUnmapMemObject and clFinish
// (ocl_wrap_sync); clEnqueueWriteBuffer; clEnqueueReadBuffer; clEnqueueFillBuffer;
// clEnqueueCopyBuffer; per program built clCreateProgramWithSource, clBuildProgram; per
// kernel first used clCreateKernel, clGetKernelWorkGroupInfo; per ocl_run one clSetKernelArg
// per argument, then clEnqueueNDRangeKernel; clFinish. Not counted: device enumeration and
// selection (ocl_list_devices, the name/type queries in ocl_open, ocl_about),
// clGetProgramBuildInfo (only fetches the log of a build that already failed), the clFinish
// with which ocl_buf_free of a wrapper waits (skipping it would free memory a kernel may
// still write) and clRelease* (results ignored).
static int fault_hit(void)
{
	static long at = -1, calls;

	if (at < 0) {
		const char *s = getenv("CLIMG_FAULT_INJECT");
		char *end = NULL;

		at = s ? strtol(s, &end, 10) : 0;
		if (!s || end == s || *end || at < 1)
			at = 0;
	}
	return at > 0 && ++calls == at;
}

// A positive whole number from the environment variable name, else 0.
static unsigned long long env_number(const char *name)
{
	const char *s = getenv(name);
	char *end = NULL;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return 0;
	v = strtoull(s, &end, 10);
	return *end ? 0 : v;
}

#define CALL(call) (fault_hit() ? CL_OUT_OF_RESOURCES : (call))
#define CREATE(errp, call) (fault_hit() ? (*(errp) = CL_OUT_OF_RESOURCES, NULL) : (call))

#define RELEASE(fn, x)                                                                             \
	do {                                                                                       \
		if (x)                                                                             \
			fn(x);                                                                     \
		(x) = NULL;                                                                        \
	} while (0)

// ---- errors --------------------------------------------------------------------------------

// clang-format would break the brace-initialiser macro over lines
// clang-format off
#define E(code) { code, #code }
static const struct {
	cl_int code;
	const char *name;
} error_names[] = {
	E(CL_SUCCESS),
	E(CL_DEVICE_NOT_FOUND),
	E(CL_DEVICE_NOT_AVAILABLE),
	E(CL_COMPILER_NOT_AVAILABLE),
	E(CL_MEM_OBJECT_ALLOCATION_FAILURE),
	E(CL_OUT_OF_RESOURCES),
	E(CL_OUT_OF_HOST_MEMORY),
	E(CL_PROFILING_INFO_NOT_AVAILABLE),
	E(CL_MEM_COPY_OVERLAP),
	E(CL_IMAGE_FORMAT_MISMATCH),
	E(CL_IMAGE_FORMAT_NOT_SUPPORTED),
	E(CL_BUILD_PROGRAM_FAILURE),
	E(CL_MAP_FAILURE),
	E(CL_MISALIGNED_SUB_BUFFER_OFFSET),
	E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
	E(CL_COMPILE_PROGRAM_FAILURE),
	E(CL_LINKER_NOT_AVAILABLE),
	E(CL_LINK_PROGRAM_FAILURE),
	E(CL_DEVICE_PARTITION_FAILED),
	E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
	E(CL_INVALID_VALUE),
	E(CL_INVALID_DEVICE_TYPE),
	E(CL_INVALID_PLATFORM),
	E(CL_INVALID_DEVICE),
	E(CL_INVALID_CONTEXT),
	E(CL_INVALID_QUEUE_PROPERTIES),
	E(CL_INVALID_COMMAND_QUEUE),
	E(CL_INVALID_HOST_PTR),
	E(CL_INVALID_MEM_OBJECT),
	E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
	E(CL_INVALID_IMAGE_SIZE),
	E(CL_INVALID_SAMPLER),
	E(CL_INVALID_BINARY),
	E(CL_INVALID_BUILD_OPTIONS),
	E(CL_INVALID_PROGRAM),
	E(CL_INVALID_PROGRAM_EXECUTABLE),
	E(CL_INVALID_KERNEL_NAME),
	E(CL_INVALID_KERNEL_DEFINITION),
	E(CL_INVALID_KERNEL),
	E(CL_INVALID_ARG_INDEX),
	E(CL_INVALID_ARG_VALUE),
	E(CL_INVALID_ARG_SIZE),
	E(CL_INVALID_KERNEL_ARGS),
	E(CL_INVALID_WORK_DIMENSION),
	E(CL_INVALID_WORK_GROUP_SIZE),
	E(CL_INVALID_WORK_ITEM_SIZE),
	E(CL_INVALID_GLOBAL_OFFSET),
	E(CL_INVALID_EVENT_WAIT_LIST),
	E(CL_INVALID_EVENT),
	E(CL_INVALID_OPERATION),
	E(CL_INVALID_GL_OBJECT),
	E(CL_INVALID_BUFFER_SIZE),
	E(CL_INVALID_MIP_LEVEL),
	E(CL_INVALID_GLOBAL_WORK_SIZE),
	E(CL_INVALID_PROPERTY),
	E(CL_INVALID_IMAGE_DESCRIPTOR),
	E(CL_INVALID_COMPILER_OPTIONS),
	E(CL_INVALID_LINKER_OPTIONS),
	E(CL_INVALID_DEVICE_PARTITION_COUNT),
	E(CL_PLATFORM_NOT_FOUND_KHR),
};
#undef E
// clang-format on

// Records "opencl: WHAT: CL_NAME" (WHAT formatted from fmt) and returns -1.
static int fail_cl(cl_int e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_cl(cl_int e, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < sizeof error_names / sizeof error_names[0]; i++)
		if (error_names[i].code == e)
			return err_set("opencl: %s: %s", what, error_names[i].name);
	return err_set("opencl: %s: OpenCL error %d", what, (int)e);
}

// ---- device enumeration --------------------------------------------------------------------

// A string property of a device (d != NULL) or else of a platform, without surrounding
// white space (some drivers pad names). Caller frees. NULL with err set.
static char *info_str(cl_platform_id p, cl_device_id d, cl_uint param)
{
	size_t len = 0;
	char *s = NULL, *a;
	cl_int e;

	e = d ? clGetDeviceInfo(d, param, 0, NULL, &len)
	      : clGetPlatformInfo(p, param, 0, NULL, &len);
	if (e != CL_SUCCESS)
		goto fail;
	if (!(s = malloc(len + 1))) {
		err_set("out of memory");
		return NULL;
	}
	e = d ? clGetDeviceInfo(d, param, len, s, NULL) : clGetPlatformInfo(p, param, len, s, NULL);
	if (e != CL_SUCCESS)
		goto fail;
	s[len] = '\0';
	for (a = s; isspace((unsigned char)*a); a++)
		;
	memmove(s, a, strlen(a) + 1);
	for (len = strlen(s); len > 0 && isspace((unsigned char)s[len - 1]); len--)
		s[len - 1] = '\0';
	return s;
fail:
	fail_cl(e, d ? "clGetDeviceInfo" : "clGetPlatformInfo");
	free(s);
	return NULL;
}

// All devices of all platforms in numbering order. *n = 0 without error when there is no
// ICD (CL_PLATFORM_NOT_FOUND_KHR), no platform or no device. Caller frees *out.
static int devices_get(struct dev **out, size_t *n)
{
	cl_platform_id *plats = NULL;
	cl_device_id *ids = NULL;
	struct dev *devs = NULL, *grown;
	cl_uint np = 0, nd;
	size_t count = 0;
	cl_int e;

	*out = NULL;
	*n = 0;
	e = clGetPlatformIDs(0, NULL, &np);
	if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && np == 0))
		return 0;
	if (e != CL_SUCCESS)
		return fail_cl(e, "clGetPlatformIDs");
	if (!(plats = calloc(np, sizeof *plats))) {
		err_set("out of memory");
		goto fail;
	}
	if ((e = clGetPlatformIDs(np, plats, NULL)) != CL_SUCCESS) {
		fail_cl(e, "clGetPlatformIDs");
		goto fail;
	}
	for (cl_uint i = 0; i < np; i++) {
		nd = 0;
		e = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
		if (e == CL_DEVICE_NOT_FOUND || (e == CL_SUCCESS && nd == 0))
			continue;
		if (e != CL_SUCCESS) {
			fail_cl(e, "clGetDeviceIDs");
			goto fail;
		}
		free(ids);
		ids = calloc(nd, sizeof *ids);
		grown = realloc(devs, (count + nd) * sizeof *devs);
		if (!ids || !grown) {
			err_set("out of memory");
			goto fail;
		}
		devs = grown;
		if ((e = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, nd, ids, NULL)) !=
		    CL_SUCCESS) {
			fail_cl(e, "clGetDeviceIDs");
			goto fail;
		}
		for (cl_uint j = 0; j < nd; j++)
			devs[count++] = (struct dev){.platform = plats[i], .device = ids[j]};
	}
	free(plats);
	free(ids);
	*out = devs;
	*n = count;
	return 0;
fail:
	free(plats);
	free(ids);
	free(devs);
	return -1;
}

static int device_type(cl_device_id d, cl_device_type *type)
{
	cl_int e = clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof *type, type, NULL);

	return e == CL_SUCCESS ? 0 : fail_cl(e, "clGetDeviceInfo(CL_DEVICE_TYPE)");
}

static const char *type_name(cl_device_type t)
{
	if (t & CL_DEVICE_TYPE_GPU)
		return "GPU";
	if (t & CL_DEVICE_TYPE_CPU)
		return "CPU";
	if (t & CL_DEVICE_TYPE_ACCELERATOR)
		return "accelerator";
	if (t & CL_DEVICE_TYPE_CUSTOM)
		return "custom";
	return "other";
}

// "79.1 GiB", "512.0 MiB" or "1000 bytes" into buf.
static const char *size_str(char buf[32], uint64_t bytes)
{
	if (bytes >= (uint64_t)1 << 30)
		snprintf(buf, 32, "%.1f GiB", (double)bytes / (double)((uint64_t)1 << 30));
	else if (bytes >= (uint64_t)1 << 20)
		snprintf(buf, 32, "%.1f MiB", (double)bytes / (double)((uint64_t)1 << 20));
	else
		snprintf(buf, 32, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

static int device_pick(const struct dev *devs, size_t n, const char *spec, size_t *pick);

int ocl_list_devices(FILE *out)
{
	struct dev *devs = NULL;
	char *name = NULL, *plat = NULL, *version = NULL, mem[32];
	cl_device_type type;
	cl_ulong global_mem;
	size_t n = 0;
	cl_int e;
	int ret = -1;

	size_t def = 0;

	if (devices_get(&devs, &n) < 0)
		return -1;
	if (n > 0 && device_pick(devs, n, NULL, &def) < 0)
		goto done;
	if (n == 0 && fprintf(out, "no OpenCL devices\n") < 0) {
		err_set("cannot write the device list");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(name = info_str(NULL, devs[i].device, CL_DEVICE_NAME)) ||
		    !(plat = info_str(devs[i].platform, NULL, CL_PLATFORM_NAME)) ||
		    !(version = info_str(NULL, devs[i].device, CL_DEVICE_VERSION)) ||
		    device_type(devs[i].device, &type) < 0)
			goto done;
		e = clGetDeviceInfo(devs[i].device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global_mem,
		                    &global_mem, NULL);
		if (e != CL_SUCCESS) {
			fail_cl(e, "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)");
			goto done;
		}
		if (fprintf(out, "%zu: %s (%s, %s, %s, %s)%s\n", i, name, type_name(type), plat,
		            version, size_str(mem, global_mem), i == def ? " [default]" : "") < 0) {
			err_set("cannot write the device list");
			goto done;
		}
		free(name);
		free(plat);
		free(version);
		name = plat = version = NULL;
	}
	ret = 0;
done:
	free(name);
	free(plat);
	free(version);
	free(devs);
	return ret;
}

// ---- opening a device ----------------------------------------------------------------------

static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++) {
		size_t i = 0;

		while (i < n && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return n == 0;
}

#define NOT_FOUND "device '%s' not found (see climg --list-devices)"

// Sets *pick to the index of the device spec names (see ocl_open). -1 with err set.
static int device_pick(const struct dev *devs, size_t n, const char *spec, size_t *pick)
{
	char *name = NULL, *plat = NULL, *both = NULL;
	cl_device_type type, want = 0;
	size_t i, pass;
	int ret = -1;

	if (!spec || !*spec) {
		for (i = 0; i < n; i++) {
			if (device_type(devs[i].device, &type) < 0)
				return -1;
			if (type & CL_DEVICE_TYPE_GPU)
				break;
		}
		*pick = i < n ? i : 0;
		return 0;
	}
	if (spec[strspn(spec, "0123456789")] == '\0') {
		unsigned long long idx = strtoull(spec, NULL, 10);

		if (idx < n) {
			*pick = (size_t)idx;
			return 0;
		}
		return err_set(NOT_FOUND, spec);
	}
	if (!strcasecmp(spec, "gpu"))
		want = CL_DEVICE_TYPE_GPU;
	else if (!strcasecmp(spec, "cpu"))
		want = CL_DEVICE_TYPE_CPU;
	if (want) {
		for (i = 0; i < n; i++) {
			if (device_type(devs[i].device, &type) < 0)
				return -1;
			if (type & want) {
				*pick = i;
				return 0;
			}
		}
		return err_set(NOT_FOUND, spec);
	}
	// Pass 0 matches the device name alone, pass 1 "PLATFORM DEVICE", so "pocl" or
	// "nvidia cuda" can name a device whose own name does not say so.
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			if (!(name = info_str(NULL, devs[i].device, CL_DEVICE_NAME)))
				goto done;
			if (pass == 1) {
				if (!(plat = info_str(devs[i].platform, NULL, CL_PLATFORM_NAME)))
					goto done;
				if (!(both = malloc(strlen(plat) + strlen(name) + 2))) {
					err_set("out of memory");
					goto done;
				}
				sprintf(both, "%s %s", plat, name);
			}
			if (contains_nocase(both ? both : name, spec)) {
				*pick = i;
				ret = 0;
				goto done;
			}
			free(name);
			free(plat);
			free(both);
			name = plat = both = NULL;
		}
	}
	err_set(NOT_FOUND, spec);
done:
	free(name);
	free(plat);
	free(both);
	return ret;
}

int ocl_device_index(const char *spec, size_t *index, size_t *count)
{
	struct dev *devs = NULL;
	size_t n = 0;
	int rc = 0;

	if (devices_get(&devs, &n) < 0)
		return -1;
	*count = n;
	*index = 0;
	if (spec && n > 0)
		rc = device_pick(devs, n, spec, index);
	else if (spec)
		rc = err_set("no OpenCL device found");
	free(devs);
	return rc;
}

// Zero-copy's two device properties. Neither query fails ocl_open: the first is deprecated
// since OpenCL 2.0, and a driver that does not answer it gets the copying path.
static void host_props(struct ocl *o)
{
	cl_bool unified = CL_FALSE;
	cl_uint align_bits = 0;
	long page = sysconf(_SC_PAGESIZE);
	size_t want;

	if (CALL(clGetDeviceInfo(o->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified,
	                         NULL)) != CL_SUCCESS)
		unified = CL_FALSE;
	if (CALL(clGetDeviceInfo(o->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
	                         &align_bits, NULL)) != CL_SUCCESS)
		align_bits = 0;
	o->host_unified = unified == CL_TRUE;
	want = align_bits / 8 > 4096 ? align_bits / 8 : 4096;
	if (page > 0 && (size_t)page > want)
		want = (size_t)page;
	for (o->wrap_align = 4096; o->wrap_align < want; o->wrap_align *= 2)
		;
}

struct ocl *ocl_open(const char *spec, int *none_available)
{
	cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, 0, 0};
	struct dev *devs = NULL;
	struct ocl *o = NULL;
	char *dname = NULL, *pname = NULL;
	size_t n = 0, pick = 0, items[16] = {0};
	cl_bool available = CL_FALSE;
	cl_device_type type = 0;
	unsigned long long fault_max_alloc, fault_local_mem, fault_wg;
	int none = 0;
	cl_int e = CL_SUCCESS;

	if (devices_get(&devs, &n) < 0)
		goto fail;
	if (n == 0) {
		none = 1;
		err_set("no OpenCL device found");
		goto fail;
	}
	if (device_pick(devs, n, spec, &pick) < 0)
		goto fail;
	if (!(o = calloc(1, sizeof *o))) {
		err_set("out of memory");
		goto fail;
	}
	o->platform = devs[pick].platform;
	o->device = devs[pick].device;
	o->index = pick;
	o->cache_on = true;
	if (device_type(o->device, &type) < 0)
		goto fail;
	o->cpu_device = (type & CL_DEVICE_TYPE_CPU) != 0;
	o->cpu_kernels = o->cpu_device;
	if (!(dname = info_str(NULL, o->device, CL_DEVICE_NAME)) ||
	    !(pname = info_str(o->platform, NULL, CL_PLATFORM_NAME)))
		goto fail;
	if (!(o->name = malloc(strlen(dname) + strlen(pname) + 4))) {
		err_set("out of memory");
		goto fail;
	}
	sprintf(o->name, "%s (%s)", dname, pname);

	// The device is chosen: from here on every call counts for fault injection.
	// clang-format off
#define Q(param, var) { param, #param, &(var), sizeof(var) }
	const struct {
		cl_device_info param;
		const char *name;
		void *value;
		size_t size;
	} queries[] = {
		Q(CL_DEVICE_MAX_MEM_ALLOC_SIZE, o->max_alloc_bytes),
		Q(CL_DEVICE_GLOBAL_MEM_SIZE, o->global_mem_bytes),
		Q(CL_DEVICE_LOCAL_MEM_SIZE, o->local_mem_bytes),
		Q(CL_DEVICE_MAX_WORK_GROUP_SIZE, o->max_wg),
		Q(CL_DEVICE_MAX_WORK_ITEM_SIZES, items), // 3 or more dimensions; we use 2
		Q(CL_DEVICE_AVAILABLE, available),
		Q(CL_DEVICE_MAX_COMPUTE_UNITS, o->compute_units),
	};
#undef Q
	// clang-format on
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
		e = CALL(clGetDeviceInfo(o->device, queries[i].param, queries[i].size,
		                         queries[i].value, NULL));
		if (e != CL_SUCCESS) {
			fail_cl(e, "clGetDeviceInfo(%s)", queries[i].name);
			goto fail;
		}
	}
	o->max_item[0] = items[0];
	o->max_item[1] = items[1];
	host_props(o);
	fault_max_alloc = env_number("CLIMG_FAULT_MAX_ALLOC");
	if (fault_max_alloc && fault_max_alloc < o->max_alloc_bytes)
		o->max_alloc_bytes = fault_max_alloc;
	fault_local_mem = env_number("CLIMG_FAULT_LOCAL_MEM");
	if (fault_local_mem && fault_local_mem < o->local_mem_bytes)
		o->local_mem_bytes = fault_local_mem;
	fault_wg = env_number("CLIMG_FAULT_WORK_GROUP");
	if (fault_wg && fault_wg < o->max_wg)
		o->max_wg = fault_wg;
	for (int i = 0; i < 2; i++)
		if (o->max_item[i] > o->max_wg)
			o->max_item[i] = o->max_wg;
	set_build_options(o);
	if (!available) {
		err_set("opencl: %s is not available", o->name);
		goto fail;
	}

	props[1] = (cl_context_properties)o->platform;
	o->ctx = CREATE(&e, clCreateContext(props, 1, &o->device, NULL, NULL, &e));
	if (!o->ctx) {
		fail_cl(e, "clCreateContext(%s)", o->name);
		goto fail;
	}
	o->queue = CREATE(&e, clCreateCommandQueue(o->ctx, o->device, queue_props, &e));
	if (!o->queue) {
		fail_cl(e, "clCreateCommandQueue(%s)", o->name);
		goto fail;
	}
	free(devs);
	free(dname);
	free(pname);
	if (none_available)
		*none_available = 0;
	return o;
fail:
	if (none_available)
		*none_available = none;
	free(devs);
	free(dname);
	free(pname);
	ocl_close(o);
	return NULL;
}

static void events_release(struct ocl *o)
{
	for (size_t i = 0; i < o->nevents; i++)
		RELEASE(clReleaseEvent, o->events[i]);
	o->nevents = 0;
}

// Releases every kernel and program built so far; ocl_build and the kernel lookups make them
// again when next asked.
static void programs_drop(struct ocl *o)
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

void ocl_close(struct ocl *o)
{
	if (!o)
		return;
	events_release(o);
	free(o->events);
	while (o->pinned) {
		struct ocl_pinned *p = o->pinned;

		o->pinned = p->next;
		clEnqueueUnmapMemObject(o->queue, p->mem, p->ptr, 0, NULL, NULL);
		clFinish(o->queue);
		RELEASE(clReleaseMemObject, p->mem);
		free(p);
	}
	programs_drop(o);
	RELEASE(clReleaseCommandQueue, o->queue);
	RELEASE(clReleaseContext, o->ctx);
	free(o->build_log);
	free(o->cache_dir);
	free(o->cache_id);
	free(o->name);
	free(o);
}

const char *ocl_device_name(const struct ocl *o)
{
	return o->name;
}

int ocl_about(const struct ocl *o, struct ocl_about *a)
{
	char *driver = NULL, *version = NULL;
	cl_device_type type;

	memset(a, 0, sizeof *a);
	if (device_type(o->device, &type) < 0 ||
	    !(driver = info_str(NULL, o->device, CL_DRIVER_VERSION)) ||
	    !(version = info_str(NULL, o->device, CL_DEVICE_VERSION))) {
		free(driver);
		return -1;
	}
	snprintf(a->type, sizeof a->type, "%s", type_name(type));
	snprintf(a->driver, sizeof a->driver, "%s", driver);
	snprintf(a->version, sizeof a->version, "%s", version);
	a->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
	free(driver);
	free(version);
	return 0;
}

bool ocl_cpu_device(const struct ocl *o)
{
	return o->cpu_device;
}

bool ocl_cpu_kernels(const struct ocl *o)
{
	return o->cpu_kernels;
}

void ocl_set_cpu_kernels(struct ocl *o, bool on)
{
	if (o->cpu_kernels == on)
		return;
	o->cpu_kernels = on;
	set_build_options(o);
	programs_drop(o); // built for the other family
}

// ---- profiling -----------------------------------------------------------------------------

// Where an enqueue call should put its event: a new slot when profiling, else NULL.
// Called right before the enqueue; event_keep() then counts the slot as used.
static cl_event *event_slot(struct ocl *o)
{
	if (!o->profiling)
		return NULL;
	if (o->nevents == o->events_cap) {
		size_t cap = o->events_cap ? 2 * o->events_cap : 64;
		cl_event *ev = realloc(o->events, cap * sizeof *ev);
		if (!ev)
			return NULL; // this command goes untimed rather than failing
		o->events = ev;
		o->events_cap = cap;
	}
	return &o->events[o->nevents];
}

static void event_keep(struct ocl *o, cl_event *slot)
{
	if (slot)
		o->nevents++;
}

int ocl_profile(struct ocl *o)
{
	cl_int e = CL_SUCCESS;
	cl_command_queue q;

	q = CREATE(&e, clCreateCommandQueue(o->ctx, o->device,
					    queue_props | CL_QUEUE_PROFILING_ENABLE, &e));
	if (!q)
		return fail_cl(e, "clCreateCommandQueue(%s, profiling)", o->name);
	RELEASE(clReleaseCommandQueue, o->queue);
	o->queue = q;
	o->profiling = true;
	return 0;
}

int ocl_timer_take(struct ocl *o, double *ms)
{
	cl_int e = CL_SUCCESS;
	double total = 0;

	*ms = 0;
	if (!o->nevents)
		return 0;
	e = CALL(clWaitForEvents((cl_uint)o->nevents, o->events));
	for (size_t i = 0; i < o->nevents && e == CL_SUCCESS; i++) {
		cl_ulong start = 0, end = 0;
		e = CALL(clGetEventProfilingInfo(o->events[i], CL_PROFILING_COMMAND_START,
						 sizeof start, &start, NULL));
		if (e == CL_SUCCESS)
			e = CALL(clGetEventProfilingInfo(o->events[i], CL_PROFILING_COMMAND_END,
							 sizeof end, &end, NULL));
		total += (double)(end - start) * 1e-6;
	}
	events_release(o);
	if (e != CL_SUCCESS)
		return fail_cl(e, "clGetEventProfilingInfo");
	*ms = total;
	return 0;
}

// ---- pinned host memory --------------------------------------------------------------------

void *ocl_host_alloc(struct ocl *o, size_t bytes)
{
	struct ocl_pinned *p = calloc(1, sizeof *p);
	cl_int e = CL_SUCCESS;

	if (!p) {
		err_set("out of memory");
		return NULL;
	}
	p->mem = CREATE(&e, clCreateBuffer(o->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
					   bytes ? bytes : 1, NULL, &e));
	if (!p->mem) {
		fail_cl(e, "clCreateBuffer(%zu pinned bytes)", bytes);
		free(p);
		return NULL;
	}
	p->ptr = CREATE(&e, clEnqueueMapBuffer(o->queue, p->mem, CL_TRUE,
					       CL_MAP_READ | CL_MAP_WRITE, 0, bytes ? bytes : 1,
					       0, NULL, NULL, &e));
	if (!p->ptr) {
		fail_cl(e, "clEnqueueMapBuffer(%zu pinned bytes)", bytes);
		RELEASE(clReleaseMemObject, p->mem);
		free(p);
		return NULL;
	}
	p->next = o->pinned;
	o->pinned = p;
	return p->ptr;
}

void ocl_host_free(struct ocl *o, void *ptr)
{
	for (struct ocl_pinned **pp = o ? &o->pinned : NULL; pp && *pp; pp = &(*pp)->next) {
		struct ocl_pinned *p = *pp;
		if (p->ptr != ptr)
			continue;
		*pp = p->next;
		clEnqueueUnmapMemObject(o->queue, p->mem, p->ptr, 0, NULL, NULL);
		clFinish(o->queue);
		RELEASE(clReleaseMemObject, p->mem);
		free(p);
		return;
	}
	free(ptr);
}

// ---- programs and kernels ------------------------------------------------------------------

static struct ocl_program *program_find(const struct ocl *o, const char *name, int ch)
{
	struct ocl_program *p;

	for (p = o->programs; p && (strcmp(p->name, name) || p->ch != ch); p = p->next)
		;
	return p;
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

const char *ocl_build_log(const struct ocl *o)
{
	return o ? o->build_log : NULL;
}

// ---- program binary cache ------------------------------------------------------------------
// Compiling OpenCL C costs tens to hundreds of milliseconds a program even when the driver
// keeps its own cache, so ocl_build keeps each program's device binary (what
// CL_PROGRAM_BINARIES gives) in a file and later runs build from that:
//   DIR/NAME-HHHHHHHHHHHHHHHH.clbin
// DIR is $CLIMG_CACHE_DIR, else $XDG_CACHE_HOME/climg (an absolute XDG_CACHE_HOME only, as
// the XDG base directory spec asks), else $HOME/.cache/climg; missing directories are
// created with mode 0700. NAME is the program (kernels/NAME.cl) and H, in hex, the 64-bit
// FNV-1a hash (offset basis 0xcbf29ce484222325, prime 0x100000001b3, over bytes) of the
// device's identity followed by the program's build options: one file per (device, kernel
// family, program, channel count), so a changed kernel source replaces its old entry instead
// of piling up beside it, and a process that runs the other family (tests/kernels,
// tools/bench --kernels) or other channel counts does not overwrite the usual one.
//
// The key of an entry is the text
//   "climg program cache 1\nplatform: P\nplatform version: PV\ndevice: D\n"
//   "device version: DV\ndriver version: V\n"                   (the identity, hashed for H)
//   "options: BUILD_OPTIONS\nprogram: NAME\n\n" followed by the full kernel source.
// A file is a 40-byte header in the machine's byte order, the key, then the binary:
//   8 bytes  "CLIMGPB1" (magic and format version)
//   u64      key bytes;  u64 binary bytes (the file is exactly 40 + both long)
//   u64      FNV-1a 64 of the key;  u64 FNV-1a 64 of the binary
// An entry is used only when all of that checks out, its key equals ours byte for byte (so
// neither a hash collision nor a stale entry - other source, options or driver - can load
// a wrong program) and the driver builds the binary. Anything else - a missing, short,
// corrupt or stale file, a binary the driver refuses - builds from source, silently, and
// rewrites the entry. Entries are written to a temporary file in DIR and renamed over the
// old one, so concurrent processes each read a whole entry or none, and two building the
// same program at once both succeed (the last rename wins; both wrote the same program).
// There is no fsync: an entry torn by a crash fails its checks and is rebuilt.
//
// The cache never fails a run: a directory that cannot be created or written is ignored.
// It is also ignored when DIR is not owned by the user or is writable by group or others
// (whoever can write it could make climg run their device code), and while any test-only
// CLIMG_FAULT_* switch is set, so that the fault-injection call counts and forced build
// failures are the same on every run. The driver calls made for the cache are not counted
// by CALL() for the same reason.

static const char cache_magic[8] = "CLIMGPB1";

struct cache_header {
	char magic[8];
	uint64_t key_bytes, bin_bytes;
	uint64_t key_hash, bin_hash;
};
_Static_assert(sizeof(struct cache_header) == 40, "the header is 40 bytes, no padding");

// An entry's largest size; anything bigger is not one of ours.
#define CACHE_MAX_BYTES ((uint64_t)256 << 20)

// The key and file of one program's entry.
struct cache_key {
	char *text; // the key (see above), not NUL-terminated in files
	size_t len;
	char *path; // DIR/NAME-H.clbin
};

static uint64_t fnv1a64(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3u;
	}
	return h;
}

#define FNV1A64_BASIS 0xcbf29ce484222325u

// A newly allocated string "A" "B" "C" (b, c may be NULL), or NULL.
static char *str_join(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0, lc = c ? strlen(c) : 0;
	char *s = malloc(la + lb + lc + 1);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b ? b : "", lb);
	memcpy(s + la + lb, c ? c : "", lc + 1);
	return s;
}

// Creates dir and its missing parents with mode 0700. 0 or -1 (errno set).
static int mkdir_parents(const char *dir)
{
	char *p = str_join(dir, NULL, NULL);
	int rc = 0;

	if (!p)
		return -1;
	for (char *s = p + 1; *s && rc == 0; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (rc == 0 && mkdir(p, 0700) < 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

// Whether a test-only CLIMG_FAULT_* switch is set in the environment.
static bool fault_switch_set(void)
{
	extern char **environ;

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "CLIMG_FAULT_", 12) && strchr(*e, '=') && strchr(*e, '=')[1])
			return true;
	return false;
}

// The cache directory, created if missing, and the device identity, looked up at the first
// build. Leaves o->cache_dir NULL when there is no usable directory (the cache is off).
static void cache_prepare(struct ocl *o)
{
	static const char id_format[] = "climg program cache 1\nplatform: %s\n"
	                                "platform version: %s\ndevice: %s\ndevice version: %s\n"
	                                "driver version: %s\n";
	const char *env = getenv("CLIMG_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *dir = NULL, *val[5] = {NULL}, *id = NULL;
	struct stat st;
	int len;

	o->cache_ready = true;
	if (fault_switch_set())
		return;
	if (env && *env)
		dir = str_join(env, NULL, NULL);
	else if (xdg && xdg[0] == '/')
		dir = str_join(xdg, "/climg", NULL);
	else if (home && *home)
		dir = str_join(home, "/.cache/climg", NULL);
	if (!dir || mkdir_parents(dir) < 0 || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		goto done;
	// A failing query records err; the cache is then off and the run goes on (only a
	// later failure's message is ever printed).
	if (!(val[0] = info_str(o->platform, NULL, CL_PLATFORM_NAME)) ||
	    !(val[1] = info_str(o->platform, NULL, CL_PLATFORM_VERSION)) ||
	    !(val[2] = info_str(NULL, o->device, CL_DEVICE_NAME)) ||
	    !(val[3] = info_str(NULL, o->device, CL_DEVICE_VERSION)) ||
	    !(val[4] = info_str(NULL, o->device, CL_DRIVER_VERSION)))
		goto done;
	len = snprintf(NULL, 0, id_format, val[0], val[1], val[2], val[3], val[4]);
	if (len < 0 || !(id = malloc((size_t)len + 1)))
		goto done;
	snprintf(id, (size_t)len + 1, id_format, val[0], val[1], val[2], val[3], val[4]);
	o->cache_id = id;
	o->cache_dir = dir;
	id = dir = NULL;
done:
	for (int i = 0; i < 5; i++)
		free(val[i]);
	free(id);
	free(dir);
}

static void cache_key_free(struct cache_key *k)
{
	if (!k)
		return;
	free(k->text);
	free(k->path);
	free(k);
}

// The key and file of program `name` with source `source` and build options `opts`, or NULL
// when the cache is off (or memory is short: the program is then simply built from source).
static struct cache_key *cache_key_new(struct ocl *o, const char *name, const char *opts,
				       const char *source)
{
	struct cache_key *k;
	char hex[17];
	int len;

	if (!o->cache_on)
		return NULL;
	if (!o->cache_ready)
		cache_prepare(o);
	if (!o->cache_dir || !(k = calloc(1, sizeof *k)))
		return NULL;
	snprintf(hex, sizeof hex, "%016llx",
	         (unsigned long long)fnv1a64(fnv1a64(FNV1A64_BASIS, o->cache_id,
	                                             strlen(o->cache_id)),
	                                     opts, strlen(opts)));
	len = snprintf(NULL, 0, "%soptions: %s\nprogram: %s\n\n%s", o->cache_id, opts, name,
	               source);
	if (len < 0 || !(k->text = malloc((size_t)len + 1)) ||
	    !(k->path = malloc(strlen(o->cache_dir) + strlen(name) + 32))) {
		cache_key_free(k);
		return NULL;
	}
	snprintf(k->text, (size_t)len + 1, "%soptions: %s\nprogram: %s\n\n%s", o->cache_id, opts,
	         name, source);
	k->len = (size_t)len;
	sprintf(k->path, "%s/%s-%s.clbin", o->cache_dir, name, hex);
	return k;
}

// Reads the whole regular file path (at most CACHE_MAX_BYTES) into *data (caller frees).
// 0 or -1.
static int file_read(const char *path, unsigned char **data, size_t *n)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*data = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > CACHE_MAX_BYTES || !(buf = malloc((size_t)st.st_size)))
		goto fail;
	while (got < (size_t)st.st_size) {
		r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto fail;
		got += (size_t)r;
	}
	close(fd);
	*data = buf;
	*n = got;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

// The program built (with options opts) from the cached binary of k, or NULL (no entry, a bad
// or stale one, or the driver refused it): the caller then builds from source. Never sets err.
static cl_program cache_load(struct ocl *o, const struct cache_key *k, const char *opts)
{
	unsigned char *file = NULL;
	const unsigned char *bin;
	struct cache_header h;
	size_t n = 0, bin_bytes;
	cl_program prog = NULL;
	cl_int e = CL_SUCCESS, status = CL_SUCCESS;

	if (!k || file_read(k->path, &file, &n) < 0 || n < sizeof h)
		goto fail;
	memcpy(&h, file, sizeof h);
	// The lengths first, so the comparisons below stay inside the file.
	if (memcmp(h.magic, cache_magic, sizeof h.magic) || h.key_bytes != k->len ||
	    n - sizeof h < k->len || h.bin_bytes == 0 || h.bin_bytes != n - sizeof h - k->len ||
	    h.key_hash != fnv1a64(FNV1A64_BASIS, k->text, k->len) ||
	    memcmp(file + sizeof h, k->text, k->len))
		goto fail;
	bin = file + sizeof h + k->len;
	bin_bytes = (size_t)h.bin_bytes;
	if (h.bin_hash != fnv1a64(FNV1A64_BASIS, bin, bin_bytes))
		goto fail;
	prog = clCreateProgramWithBinary(o->ctx, 1, &o->device, &bin_bytes, &bin, &status, &e);
	if (!prog || e != CL_SUCCESS || status != CL_SUCCESS ||
	    clBuildProgram(prog, 1, &o->device, opts, NULL, NULL) != CL_SUCCESS)
		goto fail;
	free(file);
	return prog;
fail:
	RELEASE(clReleaseProgram, prog);
	free(file);
	return NULL;
}

// Writes all n bytes of data to fd. 0 or -1.
static int write_all(int fd, const void *data, size_t n)
{
	const unsigned char *p = data;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

// Writes prog's binary as the entry of k, through a temporary file renamed into place.
// Best effort: any failure leaves the cache as it was and is not reported.
static void cache_store(const struct cache_key *k, cl_program prog)
{
	struct cache_header h = {.key_bytes = k ? k->len : 0};
	unsigned char *bin = NULL;
	size_t bin_bytes = 0;
	char *tmp = NULL;
	bool tmp_made = false;
	int fd = -1;

	if (!k ||
	    clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_bytes, &bin_bytes, NULL) !=
	        CL_SUCCESS ||
	    bin_bytes == 0 || bin_bytes > CACHE_MAX_BYTES - sizeof h - k->len ||
	    !(bin = malloc(bin_bytes)) ||
	    clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS)
		goto done;
	memcpy(h.magic, cache_magic, sizeof h.magic);
	h.bin_bytes = bin_bytes;
	h.key_hash = fnv1a64(FNV1A64_BASIS, k->text, k->len);
	h.bin_hash = fnv1a64(FNV1A64_BASIS, bin, bin_bytes);
	if (!(tmp = str_join(k->path, ".tmp.XXXXXX", NULL)) || (fd = mkstemp(tmp)) < 0)
		goto done;
	tmp_made = true;
	if (write_all(fd, &h, sizeof h) < 0 || write_all(fd, k->text, k->len) < 0 ||
	    write_all(fd, bin, bin_bytes) < 0)
		goto done;
	if (close(fd) < 0) {
		fd = -1;
		goto done;
	}
	fd = -1;
	if (rename(tmp, k->path) == 0)
		tmp_made = false;
done:
	if (fd >= 0)
		close(fd);
	if (tmp_made)
		unlink(tmp);
	free(tmp);
	free(bin);
}

void ocl_set_cache(struct ocl *o, bool on)
{
	o->cache_on = on;
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
	const char *only = getenv("CLIMG_FAULT_DEVICE");
	bool this_one = !only || !*only || strtoull(only, NULL, 10) == o->index;
	cl_uint count = env_number("CLIMG_FAULT_BUILD") && this_one ? 2 : 1;
	struct divert div;
	char *diverted;
	cl_program prog;
	cl_int e = CL_SUCCESS;

	prog = CREATE(&e, clCreateProgramWithSource(o->ctx, count, text, NULL, &e));
	if (!prog) {
		fail_cl(e, "clCreateProgramWithSource(kernels/%s.cl)", src->name);
		return NULL;
	}
	stderr_divert(&div);
	e = CALL(clBuildProgram(prog, 1, &o->device, opts, NULL, NULL));
	diverted = stderr_restore(&div);
	if (e == CL_BUILD_PROGRAM_FAILURE) {
		build_log_keep(o, prog, src->name, diverted);
		err_set("opencl: kernels/%s.cl failed to build for %d channels on %s: "
		        "CL_BUILD_PROGRAM_FAILURE", src->name, ch, o->name);
	} else if (e != CL_SUCCESS) {
		fail_cl(e, "clBuildProgram(kernels/%s.cl)", src->name);
	}
	free(diverted);
	if (e != CL_SUCCESS)
		RELEASE(clReleaseProgram, prog);
	return prog;
}

int ocl_build(struct ocl *o, const struct ocl_program_id *programs, int n)
{
	const struct kernel_source *src;
	struct cache_key *key = NULL;
	struct ocl_program *p = NULL;
	cl_program prog = NULL;
	char opts[sizeof o->build_opts + 32];

	for (int i = 0; i < n; i++) {
		const char *name = programs[i].name;
		int ch = programs[i].ch;

		if (program_find(o, name, ch))
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
		key = cache_key_new(o, src->name, opts, src->source); // NULL: no cache
		if ((prog = cache_load(o, key, opts))) {
			o->cached++;
		} else {
			if (!(prog = program_from_source(o, src, ch, opts)))
				goto fail;
			cache_store(key, prog);
		}
		cache_key_free(key);
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
	cache_key_free(key);
	return 0;
fail:
	cache_key_free(key);
	RELEASE(clReleaseProgram, prog);
	return -1;
}

// The cached kernel `name` of program `program` for ch channels, created on first use. NULL
// with err set.
static struct ocl_kernel *kernel_get(struct ocl *o, const char *program, int ch, const char *name)
{
	struct ocl_kernel *k;
	struct ocl_program *p;
	cl_int e;

	for (k = o->kernels; k; k = k->next)
		if (!strcmp(k->name, name) && !strcmp(k->prog->name, program) && k->prog->ch == ch)
			return k;
	if (!(p = program_find(o, program, ch))) {
		err_set("opencl: kernels/%s.cl was not built for %d channels before running %s",
		        program, ch, name);
		return NULL;
	}
	if (!(k = calloc(1, sizeof *k + strlen(name) + 1))) {
		err_set("out of memory");
		return NULL;
	}
	strcpy(k->name, name);
	k->prog = p;
	k->kern = CREATE(&e, clCreateKernel(p->prog, name, &e));
	if (!k->kern) {
		fail_cl(e, "clCreateKernel(%s)", name);
		goto fail;
	}
	e = CALL(clGetKernelWorkGroupInfo(k->kern, o->device, CL_KERNEL_WORK_GROUP_SIZE,
	                                  sizeof k->wg_max, &k->wg_max, NULL));
	if (e != CL_SUCCESS) {
		fail_cl(e, "clGetKernelWorkGroupInfo(%s)", name);
		goto fail;
	}
	if (k->wg_max == 0 || k->wg_max > o->max_wg)
		k->wg_max = o->max_wg ? o->max_wg : 1;
	k->next = o->kernels;
	o->kernels = k;
	return k;
fail:
	RELEASE(clReleaseKernel, k->kern);
	free(k);
	return NULL;
}

// A local size for a gw x gh range: 16x16, or 256x1 (1x256) for a single row (column),
// halved while a half still covers the range in that dimension, then until it fits the
// device's per-dimension limits and the kernel's work-group size.
static void local_pick(const struct ocl *o, const struct ocl_kernel *k, size_t gw, size_t gh,
                       size_t local[2])
{
	size_t lw = 16, lh = 16;

	if (gh == 1) {
		lw = 256;
		lh = 1;
	} else if (gw == 1) {
		lw = 1;
		lh = 256;
	}
	while (lw > 1 && (lw > o->max_item[0] || lw / 2 >= gw)) // no group wider than needed
		lw /= 2;
	while (lh > 1 && (lh > o->max_item[1] || lh / 2 >= gh))
		lh /= 2;
	while (lw * lh > k->wg_max) {
		if (lw >= lh && lw > 1)
			lw /= 2;
		else if (lh > 1)
			lh /= 2;
		else
			break;
	}
	local[0] = lw;
	local[1] = lh;
}

// Whether kernel k may run in work-groups of lw x lh items on this device.
static bool local_fits(const struct ocl *o, const struct ocl_kernel *k, size_t lw, size_t lh)
{
	return lw <= o->max_item[0] && lh <= o->max_item[1] && lw * lh <= k->wg_max;
}

int ocl_run(struct ocl *o, const char *program, int ch, const char *kernel, size_t gw,
            size_t gh, size_t local_w, size_t local_h, const struct ocl_arg *args)
{
	struct ocl_kernel *k;
	size_t global[2], local[2] = {local_w, local_h};
	cl_ulong local_bytes = 0;
	cl_event *ev;
	cl_int e = CL_SUCCESS;

	if (!(k = kernel_get(o, program, ch, kernel)))
		return -1;
	for (cl_uint i = 0; args[i].kind != OCL_ARG_END; i++) {
		const struct ocl_arg *a = &args[i];
		cl_int iv = a->i;
		cl_uint uv = a->u;
		cl_long lv = a->l;
		cl_mem m;

		switch (a->kind) {
		case OCL_ARG_BUF:
			if (!a->buf)
				return err_set("opencl: %s: argument %u is a NULL buffer", kernel,
				               i);
			m = a->buf->mem;
			e = CALL(clSetKernelArg(k->kern, i, sizeof m, &m));
			break;
		case OCL_ARG_INT: e = CALL(clSetKernelArg(k->kern, i, sizeof iv, &iv)); break;
		case OCL_ARG_UINT: e = CALL(clSetKernelArg(k->kern, i, sizeof uv, &uv)); break;
		case OCL_ARG_LONG: e = CALL(clSetKernelArg(k->kern, i, sizeof lv, &lv)); break;
		case OCL_ARG_LOCAL:
			local_bytes += a->local_bytes;
			e = CALL(clSetKernelArg(k->kern, i, a->local_bytes, NULL));
			break;
		default:
			return err_set("opencl: %s: argument %u has unknown kind %d", kernel, i,
			               (int)a->kind);
		}
		if (e != CL_SUCCESS)
			return fail_cl(e, "clSetKernelArg(%s, %u)", kernel, i);
	}
	if (local_bytes > o->local_mem_bytes)
		return err_set("opencl: %s needs %llu bytes of local memory, %s has %llu", kernel,
		               (unsigned long long)local_bytes, o->name,
		               (unsigned long long)o->local_mem_bytes);
	if (gw == 0 || gh == 0)
		return 0; // nothing to do (OpenCL 1.2 rejects an empty range)
	if (local_w == 0 && local_h == 0)
		local_pick(o, k, gw, gh, local);
	else if (local_w == 0 || local_h == 0)
		return err_set("opencl: %s: local size %zux%zu: give both or neither", kernel,
		               local_w, local_h);
	else if (!local_fits(o, k, local_w, local_h))
		return err_set("opencl: %s: work-groups of %zux%zu items, but %s allows %zu (%zux%zu "
		               "at most) for this kernel",
		               kernel, local_w, local_h, o->name, k->wg_max, o->max_item[0],
		               o->max_item[1]);
	if (gw > SIZE_MAX - local[0] || gh > SIZE_MAX - local[1])
		return err_set("opencl: %s: range %zux%zu is too large", kernel, gw, gh);
	global[0] = (gw + local[0] - 1) / local[0] * local[0];
	global[1] = (gh + local[1] - 1) / local[1] * local[1];
	ev = event_slot(o);
	e = CALL(clEnqueueNDRangeKernel(o->queue, k->kern, 2, NULL, global, local, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return fail_cl(e, "clEnqueueNDRangeKernel(%s)", kernel);
	event_keep(o, ev);
	return 0;
}

int ocl_kernel_wg_max(struct ocl *o, const char *program, int ch, const char *kernel,
                      size_t *wg_max)
{
	struct ocl_kernel *k = kernel_get(o, program, ch, kernel);

	if (!k)
		return -1;
	*wg_max = k->wg_max;
	return 0;
}

void ocl_local_shrink(const struct ocl_limits *lim, size_t wg_max, size_t x, size_t y, size_t *lx,
                      size_t *ly)
{
	while (x > 1 && x > lim->item_max[0])
		x /= 2;
	while (y > 1 && y > lim->item_max[1])
		y /= 2;
	while (x * y > wg_max && x * y > 1) {
		if (y > 1)
			y /= 2;
		else
			x /= 2;
	}
	*lx = x;
	*ly = y;
}

int ocl_kernel_fits(struct ocl *o, const char *program, int ch, const char *kernel, size_t lw,
                    size_t lh)
{
	struct ocl_kernel *k = kernel_get(o, program, ch, kernel);

	return k ? local_fits(o, k, lw, lh) : -1;
}

int ocl_finish(struct ocl *o)
{
	cl_int e = CALL(clFinish(o->queue));

	return e == CL_SUCCESS ? 0 : fail_cl(e, "clFinish");
}

// ---- buffers -------------------------------------------------------------------------------

// A buffer of flags over host (NULL unless CL_MEM_USE_HOST_PTR). NULL with err set.
static struct ocl_buf *buf_create(struct ocl *o, cl_mem_flags flags, void *host, size_t bytes)
{
	struct ocl_buf *b;
	char want[32], max[32];
	cl_int e = CL_SUCCESS;

	if (bytes == 0) {
		err_set("opencl: cannot allocate an empty buffer");
		return NULL;
	}
	// Checked here because some drivers (NVIDIA) accept a too large buffer and fail later.
	if ((uint64_t)bytes > o->max_alloc_bytes) {
		err_set("opencl: a buffer of %s exceeds the allocation limit of %s, %s "
		        "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
		        size_str(want, bytes), o->name, size_str(max, o->max_alloc_bytes));
		return NULL;
	}
	if (!(b = calloc(1, sizeof *b))) {
		err_set("out of memory");
		return NULL;
	}
	b->bytes = bytes;
	b->mem = CREATE(&e, clCreateBuffer(o->ctx, flags, bytes, host, &e));
	if (!b->mem) {
		fail_cl(e, "clCreateBuffer(%zu bytes%s)", bytes, host ? ", host memory" : "");
		free(b);
		return NULL;
	}
	return b;
}

struct ocl_buf *ocl_buf_new(struct ocl *o, size_t bytes)
{
	return buf_create(o, CL_MEM_READ_WRITE, NULL, bytes);
}

struct ocl_buf *ocl_buf_const(struct ocl *o, const void *src, size_t bytes)
{
	// the OpenCL API takes a non-const pointer; with CL_MEM_COPY_HOST_PTR it only reads it
	return buf_create(o, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (void *)src, bytes);
}

void ocl_buf_free(struct ocl_buf *b)
{
	if (!b)
		return;
	// The wrapped memory is the caller's again only when no queued command can touch it
	// (a failed run may leave kernels queued). A real wait: never a counted fault.
	if (b->wrap_of)
		clFinish(b->wrap_of->queue);
	RELEASE(clReleaseMemObject, b->mem);
	free(b);
}

bool ocl_host_unified(const struct ocl *o)
{
	return o->host_unified;
}

void *ocl_wrap_alloc(const struct ocl *o, size_t bytes)
{
	size_t align = o->wrap_align;
	void *p = NULL;
	int e;

	// Whole alignment units (a page or more): a driver may then use every byte in place.
	if (bytes > SIZE_MAX - align) {
		err_set("out of memory for %zu bytes", bytes);
		return NULL;
	}
	bytes = bytes ? (bytes + align - 1) / align * align : align;
	e = posix_memalign(&p, align, bytes);
	if (e) {
		err_set("out of memory for %zu bytes", bytes);
		return NULL;
	}
	return p;
}

bool ocl_wrap_aligned(const struct ocl *o, const void *ptr)
{
	return (uintptr_t)ptr % o->wrap_align == 0;
}

struct ocl_buf *ocl_buf_wrap(struct ocl *o, void *host, size_t bytes, bool read_only)
{
	cl_mem_flags flags =
	    CL_MEM_USE_HOST_PTR | (read_only ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE);
	struct ocl_buf *b;

	if (!host) {
		err_set("opencl: cannot wrap NULL host memory");
		return NULL;
	}
	b = buf_create(o, flags, host, bytes);
	if (b) {
		b->wrap_of = o;
		b->host = host;
	}
	return b;
}

int ocl_wrap_sync(struct ocl *o, struct ocl_buf *b, size_t bytes)
{
	cl_event *ev;
	cl_int e = CL_SUCCESS;
	void *p;

	if (!b->host || bytes > b->bytes)
		return err_set("opencl: cannot sync %zu bytes of a buffer of %zu%s", bytes,
		               b->bytes, b->host ? "" : " that wraps no host memory");
	if (bytes == 0)
		return 0;
	ev = event_slot(o);
	p = CREATE(&e, clEnqueueMapBuffer(o->queue, b->mem, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL,
	                                  ev, &e));
	if (!p)
		return fail_cl(e, "clEnqueueMapBuffer(%zu bytes, host memory)", bytes);
	event_keep(o, ev);
	// OpenCL 1.2 (clEnqueueMapBuffer): for a CL_MEM_USE_HOST_PTR buffer the pointer is
	// derived from host_ptr, here host_ptr itself (offset 0). Anything else breaks the
	// contract the caller relies on, so it is an error (the CPU path can take over).
	if (p != b->host) {
		clEnqueueUnmapMemObject(o->queue, b->mem, p, 0, NULL, NULL);
		return err_set("opencl: clEnqueueMapBuffer(%zu bytes, host memory) mapped the "
		               "buffer elsewhere than its host memory",
		               bytes);
	}
	ev = event_slot(o);
	e = CALL(clEnqueueUnmapMemObject(o->queue, b->mem, p, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return fail_cl(e, "clEnqueueUnmapMemObject(%zu bytes, host memory)", bytes);
	event_keep(o, ev);
	e = CALL(clFinish(o->queue));
	return e == CL_SUCCESS ? 0 : fail_cl(e, "clFinish");
}

int ocl_upload(struct ocl *o, struct ocl_buf *dst, const void *src, size_t bytes)
{
	cl_event *ev;
	cl_int e;

	if (bytes > dst->bytes)
		return err_set("opencl: upload of %zu bytes into a buffer of %zu", bytes,
		               dst->bytes);
	ev = event_slot(o);
	e = CALL(clEnqueueWriteBuffer(o->queue, dst->mem, CL_TRUE, 0, bytes, src, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return fail_cl(e, "clEnqueueWriteBuffer(%zu bytes)", bytes);
	event_keep(o, ev);
	return 0;
}

int ocl_download(struct ocl *o, struct ocl_buf *src, void *dst, size_t bytes)
{
	cl_event *ev;
	cl_int e;

	if (bytes > src->bytes)
		return err_set("opencl: download of %zu bytes from a buffer of %zu", bytes,
		               src->bytes);
	ev = event_slot(o);
	e = CALL(clEnqueueReadBuffer(o->queue, src->mem, CL_TRUE, 0, bytes, dst, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return fail_cl(e, "clEnqueueReadBuffer(%zu bytes)", bytes);
	event_keep(o, ev);
	return 0;
}

int ocl_zero(struct ocl *o, struct ocl_buf *b, size_t bytes)
{
	const cl_uint zero = 0;
	cl_int e;

	if (bytes > b->bytes || bytes % sizeof zero)
		return err_set("opencl: cannot zero %zu bytes of a buffer of %zu", bytes, b->bytes);
	if (bytes == 0)
		return 0;
	e = CALL(clEnqueueFillBuffer(o->queue, b->mem, &zero, sizeof zero, 0, bytes, 0, NULL,
	                             NULL));
	return e == CL_SUCCESS ? 0 : fail_cl(e, "clEnqueueFillBuffer(%zu bytes)", bytes);
}

struct ocl_limits ocl_get_limits(const struct ocl *o)
{
	return (struct ocl_limits){
	    .local_mem_bytes = o->local_mem_bytes,
	    .max_wg = o->max_wg ? o->max_wg : 1,
	    .compute_units = o->compute_units ? o->compute_units : 1,
	    .item_max = {o->max_item[0] ? o->max_item[0] : 1, o->max_item[1] ? o->max_item[1] : 1},
	    .max_alloc_bytes = o->max_alloc_bytes,
	};
}

int ocl_copy(struct ocl *o, struct ocl_buf *dst, struct ocl_buf *src, size_t bytes)
{
	cl_event *ev;
	cl_int e;

	if (bytes > src->bytes || bytes > dst->bytes)
		return err_set("opencl: copy of %zu bytes from a buffer of %zu into one of %zu",
		               bytes, src->bytes, dst->bytes);
	if (bytes == 0)
		return 0;
	ev = event_slot(o);
	e = CALL(clEnqueueCopyBuffer(o->queue, src->mem, dst->mem, 0, 0, bytes, 0, NULL, ev));
	if (e != CL_SUCCESS)
		return fail_cl(e, "clEnqueueCopyBuffer(%zu bytes)", bytes);
	event_keep(o, ev);
	return 0;
}
