// SPDX-License-Identifier: MIT
// Platforms and devices: numbering, listing, choosing and opening one (its context and
// queue), what it says about itself and its limits. Devices are numbered platform by
// platform, device by device, the same order for ocl_list_devices and ocl_open's numeric
// spec. Every failing driver call becomes err "opencl: CALL(OBJECT): CL_ERROR_NAME".
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../err.h"
#include "ocl_impl.h"

// One entry of the device numbering.
struct dev {
	cl_platform_id platform;
	cl_device_id device;
};

// ---- device enumeration --------------------------------------------------------------------

// A string property of a device (d != NULL) or else of a platform, without surrounding
// white space (some drivers pad names). Caller frees. NULL with err set.
char *ocl_info_str(cl_platform_id p, cl_device_id d, cl_uint param)
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
	ocl_fail(e, d ? "clGetDeviceInfo" : "clGetPlatformInfo");
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
		return ocl_fail(e, "clGetPlatformIDs");
	if (!(plats = calloc(np, sizeof *plats))) {
		err_set("out of memory");
		goto fail;
	}
	if ((e = clGetPlatformIDs(np, plats, NULL)) != CL_SUCCESS) {
		ocl_fail(e, "clGetPlatformIDs");
		goto fail;
	}
	for (cl_uint i = 0; i < np; i++) {
		nd = 0;
		e = clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
		if (e == CL_DEVICE_NOT_FOUND || (e == CL_SUCCESS && nd == 0))
			continue;
		if (e != CL_SUCCESS) {
			ocl_fail(e, "clGetDeviceIDs");
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
			ocl_fail(e, "clGetDeviceIDs");
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

	return e == CL_SUCCESS ? 0 : ocl_fail(e, "clGetDeviceInfo(CL_DEVICE_TYPE)");
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
const char *ocl_size_str(char buf[32], uint64_t bytes)
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
		if (!(name = ocl_info_str(NULL, devs[i].device, CL_DEVICE_NAME)) ||
		    !(plat = ocl_info_str(devs[i].platform, NULL, CL_PLATFORM_NAME)) ||
		    !(version = ocl_info_str(NULL, devs[i].device, CL_DEVICE_VERSION)) ||
		    device_type(devs[i].device, &type) < 0)
			goto done;
		e = clGetDeviceInfo(devs[i].device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global_mem,
		                    &global_mem, NULL);
		if (e != CL_SUCCESS) {
			ocl_fail(e, "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)");
			goto done;
		}
		if (fprintf(out, "%zu: %s (%s, %s, %s, %s)%s\n", i, name, type_name(type), plat,
		            version, ocl_size_str(mem, global_mem), i == def ? " [default]" : "") < 0) {
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
			if (!(name = ocl_info_str(NULL, devs[i].device, CL_DEVICE_NAME)))
				goto done;
			if (pass == 1) {
				if (!(plat = ocl_info_str(devs[i].platform, NULL, CL_PLATFORM_NAME)))
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

bool ocl_is_default(const struct ocl *o)
{
	return o->is_default;
}

size_t ocl_device_number(const struct ocl *o)
{
	return o->index;
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
	o->divert = true;
	if (spec && *spec) {
		size_t def = 0;
		o->is_default = device_pick(devs, n, NULL, &def) == 0 && def == pick;
	} else {
		o->is_default = true;
	}
	o->cache_on = true;
	if (device_type(o->device, &type) < 0)
		goto fail;
	o->cpu_device = (type & CL_DEVICE_TYPE_CPU) != 0;
	o->cpu_kernels = o->cpu_device;
	if (!(dname = ocl_info_str(NULL, o->device, CL_DEVICE_NAME)) ||
	    !(pname = ocl_info_str(o->platform, NULL, CL_PLATFORM_NAME)))
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
			ocl_fail(e, "clGetDeviceInfo(%s)", queries[i].name);
			goto fail;
		}
	}
	o->max_item[0] = items[0];
	o->max_item[1] = items[1];
	host_props(o);
	ocl_fault_limits(o);
	for (int i = 0; i < 2; i++)
		if (o->max_item[i] > o->max_wg)
			o->max_item[i] = o->max_wg;
	ocl_build_options_set(o);
	if (!available) {
		err_set("opencl: %s is not available", o->name);
		goto fail;
	}

	props[1] = (cl_context_properties)o->platform;
	o->ctx = CREATE(&e, clCreateContext(props, 1, &o->device, NULL, NULL, &e));
	if (!o->ctx) {
		ocl_fail(e, "clCreateContext(%s)", o->name);
		goto fail;
	}
	o->queue = CREATE(&e, clCreateCommandQueue(o->ctx, o->device, OCL_QUEUE_PROPS, &e));
	if (!o->queue) {
		ocl_fail(e, "clCreateCommandQueue(%s)", o->name);
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

void ocl_close(struct ocl *o)
{
	if (!o)
		return;
	ocl_events_release(o);
	free(o->events);
	ocl_pinned_free_all(o);
	ocl_programs_drop(o);
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
	    !(driver = ocl_info_str(NULL, o->device, CL_DRIVER_VERSION)) ||
	    !(version = ocl_info_str(NULL, o->device, CL_DEVICE_VERSION))) {
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
	ocl_build_options_set(o);
	ocl_programs_drop(o); // built for the other family
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
// ---- the ICD loader's version ------------------------------------------------------------
// The cl_loader_info extension (ocl-icd 2.3 and later, the Khronos loader too) has
// clGetICDLoaderInfoOCLICD, reached only through clGetExtensionFunctionAddress (deprecated
// in OpenCL 1.2, yet the extension's one way in). The lookup makes the loader load its
// drivers, as ocl_list_devices does.
typedef cl_int(CL_API_CALL *icdl_info_fn)(cl_uint param, size_t size, void *value,
                                          size_t *size_ret);
enum { ICDL_OCL_VERSION = 1, ICDL_VERSION = 2, ICDL_VENDOR = 4 }; // CL_ICDL_*

int ocl_loader_version(char *buf, size_t size)
{
	char what[3][128];
	const cl_uint params[3] = { ICDL_VERSION, ICDL_VENDOR, ICDL_OCL_VERSION };
	icdl_info_fn info;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	info = (icdl_info_fn)clGetExtensionFunctionAddress("clGetICDLoaderInfoOCLICD");
#pragma GCC diagnostic pop
	if (!info)
		return err_set("the opencl icd loader has no cl_loader_info");
	for (int i = 0; i < 3; i++) {
		memset(what[i], 0, sizeof what[i]);
		if (info(params[i], sizeof what[i] - 1, what[i], NULL) != CL_SUCCESS)
			snprintf(what[i], sizeof what[i], "?");
	}
	snprintf(buf, size, "%s (%s, %s)", what[0], what[1], what[2]);
	return 0;
}
