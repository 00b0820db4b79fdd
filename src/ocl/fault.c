// SPDX-License-Identifier: MIT
// Test-only fault injection. Five switches let the tests make a working driver fail in each
// way a real one can, or look smaller than it is (documented as test aids in climg(1)); none
// of them changes anything when unset:
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
// the calls wrapped in CALL() / CREATE() (ocl_impl.h), i.e. every call from the moment
// ocl_open has chosen a device on: in ocl_open clGetDeviceInfo x7 (limits, availability),
// then x2 (host-unified memory, base address alignment: a failure there only means no
// zero-copy), clCreateContext, clCreateCommandQueue; clCreateBuffer (ocl_buf_new,
// ocl_buf_wrap, ocl_host_alloc); clEnqueueMapBuffer (ocl_host_alloc, ocl_wrap_sync);
// clEnqueueUnmapMemObject and clFinish (ocl_wrap_sync); clEnqueueWriteBuffer;
// clEnqueueReadBuffer; clEnqueueFillBuffer; clEnqueueCopyBuffer; per program built
// clCreateProgramWithSource, clBuildProgram; per kernel first used clCreateKernel,
// clGetKernelWorkGroupInfo; per ocl_run one clSetKernelArg per argument, then
// clEnqueueNDRangeKernel; clFinish; ocl_profile's clCreateCommandQueue; ocl_timer_take's
// clWaitForEvents and clGetEventProfilingInfo. Not counted: device enumeration and selection
// (ocl_list_devices, the name/type queries in ocl_open, ocl_about), clGetProgramBuildInfo
// (only fetches the log of a build that already failed), the clFinish with which
// ocl_buf_free of a wrapper waits (skipping it would free memory a kernel may still write),
// the calls the program binary cache makes (cache.c) and clRelease* (results ignored).
// CLIMG_FAULT_BUILD and the three limits take effect in program.c and device.c through the
// functions below; the program binary cache is off while any switch is set (cache.c).
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_impl.h"

bool ocl_fault_hit(void)
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

// Whether a test-only CLIMG_FAULT_* switch is set in the environment.
bool ocl_fault_set(void)
{
	extern char **environ;

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "CLIMG_FAULT_", 12) && strchr(*e, '=') && strchr(*e, '=')[1])
			return true;
	return false;
}

bool ocl_fault_build(const struct ocl *o)
{
	const char *only = getenv("CLIMG_FAULT_DEVICE");
	bool this_one = !only || !*only || strtoull(only, NULL, 10) == o->index;
	return env_number("CLIMG_FAULT_BUILD") != 0 && this_one;
}

void ocl_fault_limits(struct ocl *o)
{
	unsigned long long max_alloc = env_number("CLIMG_FAULT_MAX_ALLOC");
	unsigned long long local_mem = env_number("CLIMG_FAULT_LOCAL_MEM");
	unsigned long long wg = env_number("CLIMG_FAULT_WORK_GROUP");

	if (max_alloc && max_alloc < o->max_alloc_bytes)
		o->max_alloc_bytes = max_alloc;
	if (local_mem && local_mem < o->local_mem_bytes)
		o->local_mem_bytes = local_mem;
	if (wg && wg < o->max_wg)
		o->max_wg = wg;
}

bool ocl_faults_set(void)
{
	return ocl_fault_set();
}
