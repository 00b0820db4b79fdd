// SPDX-License-Identifier: MIT
// fakeicd.so: a minimal OpenCL installable client driver for tests/t-hostile.sh. Loaded
// by the ICD loader after PoCL (OCL_ICD_FILENAMES=libpocl.so.2:fakeicd.so), it adds a
// second platform with one GPU, "climg fake GPU", which answers the device queries climg
// makes and then cannot create a context (CL_OUT_OF_HOST_MEMORY). So the tests can check,
// on a machine without a GPU, that automatic choice takes a GPU on platform 1 over PoCL on
// platform 0, and that its failure falls back. FAKEICD_DEVICES=0 makes it a platform
// with no devices. Only the calls climg makes before clCreateContext are implemented.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl_icd.h>

#include <stdlib.h>
#include <string.h>

struct _cl_platform_id {
	cl_icd_dispatch *dispatch;
};

struct _cl_device_id {
	cl_icd_dispatch *dispatch;
};

static cl_icd_dispatch table;
static struct _cl_platform_id platform = {&table};
static struct _cl_device_id device = {&table};

// Copies a value of size bytes out the OpenCL way.
static cl_int answer(const void *v, size_t size, size_t param_value_size, void *param_value,
		     size_t *param_value_size_ret)
{
	if (param_value_size_ret)
		*param_value_size_ret = size;
	if (param_value) {
		if (param_value_size < size)
			return CL_INVALID_VALUE;
		memcpy(param_value, v, size);
	}
	return CL_SUCCESS;
}

static cl_int CL_API_CALL platform_info(cl_platform_id p, cl_platform_info what, size_t size,
					void *value, size_t *size_ret)
{
	const char *s;

	if (p != &platform)
		return CL_INVALID_PLATFORM;
	switch (what) {
	case CL_PLATFORM_NAME: s = "climg fake platform"; break;
	case CL_PLATFORM_VENDOR: s = "climg"; break;
	case CL_PLATFORM_VERSION: s = "OpenCL 1.2 fake"; break;
	case CL_PLATFORM_PROFILE: s = "FULL_PROFILE"; break;
	case CL_PLATFORM_EXTENSIONS: s = "cl_khr_icd"; break;
	case CL_PLATFORM_ICD_SUFFIX_KHR: s = "FAKE"; break;
	default: return CL_INVALID_VALUE;
	}
	return answer(s, strlen(s) + 1, size, value, size_ret);
}

static cl_uint ndevices(void)
{
	const char *s = getenv("FAKEICD_DEVICES");
	return s && !strcmp(s, "0") ? 0 : 1;
}

static cl_int CL_API_CALL device_ids(cl_platform_id p, cl_device_type type, cl_uint n,
				     cl_device_id *out, cl_uint *count)
{
	cl_uint have = ndevices() && (type & CL_DEVICE_TYPE_GPU) ? 1 : 0;

	if (p != &platform)
		return CL_INVALID_PLATFORM;
	if (count)
		*count = have;
	if (!have)
		return CL_DEVICE_NOT_FOUND;
	if (out && n > 0)
		out[0] = &device;
	return CL_SUCCESS;
}

static cl_int CL_API_CALL device_info(cl_device_id d, cl_device_info what, size_t size,
				      void *value, size_t *size_ret)
{
	const cl_ulong mem = (cl_ulong)1 << 30, local = 49152;
	const cl_uint units = 16;
	const size_t wg = 256, items[3] = {256, 256, 64};
	const cl_device_type type = CL_DEVICE_TYPE_GPU;
	const cl_bool yes = CL_TRUE;
	const char *s = NULL;

	if (d != &device)
		return CL_INVALID_DEVICE;
	switch (what) {
	case CL_DEVICE_NAME: s = "climg fake GPU"; break;
	case CL_DEVICE_VERSION: s = "OpenCL 1.2 fake"; break;
	case CL_DEVICE_TYPE: return answer(&type, sizeof type, size, value, size_ret);
	case CL_DEVICE_GLOBAL_MEM_SIZE:
	case CL_DEVICE_MAX_MEM_ALLOC_SIZE: return answer(&mem, sizeof mem, size, value, size_ret);
	case CL_DEVICE_LOCAL_MEM_SIZE: return answer(&local, sizeof local, size, value, size_ret);
	case CL_DEVICE_MAX_WORK_GROUP_SIZE: return answer(&wg, sizeof wg, size, value, size_ret);
	case CL_DEVICE_MAX_WORK_ITEM_SIZES:
		return answer(items, sizeof items, size, value, size_ret);
	case CL_DEVICE_AVAILABLE: return answer(&yes, sizeof yes, size, value, size_ret);
	case CL_DEVICE_MAX_COMPUTE_UNITS: return answer(&units, sizeof units, size, value, size_ret);
	default: return CL_INVALID_VALUE;
	}
	return answer(s, strlen(s) + 1, size, value, size_ret);
}

static cl_context CL_API_CALL create_context(const cl_context_properties *props, cl_uint n,
					     const cl_device_id *devices,
					     void(CL_CALLBACK *notify)(const char *, const void *,
								       size_t, void *),
					     void *user, cl_int *err)
{
	(void)props, (void)n, (void)devices, (void)notify, (void)user;
	if (err)
		*err = CL_OUT_OF_HOST_MEMORY;
	return NULL;
}

CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *out,
						       cl_uint *count);
CL_API_ENTRY cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *out,
						       cl_uint *count)
{
	table.clGetPlatformInfo = platform_info;
	table.clGetDeviceIDs = device_ids;
	table.clGetDeviceInfo = device_info;
	table.clCreateContext = create_context;
	if (count)
		*count = 1;
	if (out && n > 0)
		out[0] = &platform;
	return CL_SUCCESS;
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
	return strcmp(name, "clIcdGetPlatformIDsKHR") ? NULL : (void *)clIcdGetPlatformIDsKHR;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info what,
						  size_t size, void *value, size_t *size_ret)
{
	return platform_info(p, what, size, value, size_ret);
}
