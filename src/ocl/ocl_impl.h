// SPDX-License-Identifier: MIT
// Internals shared by the files of src/ocl/ and by nothing else: struct ocl and the handles
// behind src/ocl.h, the fault-injection wrappers every counted driver call goes through, and
// the helpers one file of the driver layer lends another. Callers include src/ocl.h only.
//   device.c   platforms and devices, ocl_open / ocl_close, ocl_about, limits
//   program.c  building programs, build options, build logs
//   cache.c    the program binary cache
//   mem.c      buffers, pinned host memory, zero-copy wrapping, transfers
//   run.c      kernels, ocl_run, ocl_finish, profiling
//   fault.c    test-only fault injection (CLIMG_FAULT_*)
//   error.c    OpenCL error names
#ifndef CLIMG_OCL_IMPL_H
#define CLIMG_OCL_IMPL_H

#include "../ocl.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The queue is in order; ocl_profile() recreates it with CL_QUEUE_PROFILING_ENABLE.
#define OCL_QUEUE_PROPS ((cl_command_queue_properties)0)

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
	size_t index;              // the device's number in ocl_list_devices
	bool is_default;           // the device ocl_open(NULL) opens (ocl_is_default)
	bool divert;               // builds divert stderr (ocl_set_divert)
	char build_opts[128];      // every program's build options (ocl_build_options_set)
};

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

// ---- fault.c: test-only fault injection ----------------------------------------------------
// Every driver call that fault injection counts goes through CALL() or CREATE(): with
// CLIMG_FAULT_INJECT=N the Nth of them fails with CL_OUT_OF_RESOURCES (fault.c lists them).
bool ocl_fault_hit(void);
#define CALL(call) (ocl_fault_hit() ? CL_OUT_OF_RESOURCES : (call))
#define CREATE(errp, call) (ocl_fault_hit() ? (*(errp) = CL_OUT_OF_RESOURCES, NULL) : (call))
// Whether any CLIMG_FAULT_* switch is set (the binary cache is then off).
bool ocl_fault_set(void);
// Whether CLIMG_FAULT_BUILD asks every program to fail to build.
bool ocl_fault_build(const struct ocl *o);
// Lowers o's limits to what CLIMG_FAULT_MAX_ALLOC, _LOCAL_MEM and _WORK_GROUP say.
void ocl_fault_limits(struct ocl *o);

// Releases x with fn where it is not NULL, then sets it to NULL. Results are ignored.
#define RELEASE(fn, x)                                                                             \
	do {                                                                                       \
		if (x)                                                                             \
			fn(x);                                                                     \
		(x) = NULL;                                                                        \
	} while (0)

// ---- error.c ---------------------------------------------------------------------------------
// Records "opencl: WHAT: CL_NAME" (WHAT formatted from fmt) and returns -1.
int ocl_fail(cl_int e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// ---- device.c --------------------------------------------------------------------------------
// A string property of a device (d != NULL) or else of a platform, without surrounding
// white space (some drivers pad names). Caller frees. NULL with err set.
char *ocl_info_str(cl_platform_id p, cl_device_id d, cl_uint param);
// "79.1 GiB", "512.0 MiB" or "1000 bytes" into buf.
const char *ocl_size_str(char buf[32], uint64_t bytes);

// ---- program.c -------------------------------------------------------------------------------
// Sets o->build_opts from o's device and kernel family.
void ocl_build_options_set(struct ocl *o);
// What a program's options add to o->build_opts for ch channels (1 to 4).
const char *ocl_program_ch_option(int ch);
// The program `name` built for ch channels, or NULL when it is not built.
struct ocl_program *ocl_program_find(const struct ocl *o, const char *name, int ch);
// Releases every kernel and program built so far; ocl_build and the kernel lookups make them
// again when next asked.
void ocl_programs_drop(struct ocl *o);

// ---- cache.c ---------------------------------------------------------------------------------
struct ocl_cache_key; // the key and file of one program's cache entry
// The key of program name with source and build options opts, or NULL when the cache is off
// (or memory is short: the program is then simply built from source).
struct ocl_cache_key *ocl_cache_key_new(struct ocl *o, const char *name, const char *opts,
					const char *source);
void ocl_cache_key_free(struct ocl_cache_key *k); // NULL-safe
// The program built (with options opts) from the cached binary of k, or NULL (no entry, a bad
// or stale one, k NULL, or the driver refused it). Never sets err.
cl_program ocl_cache_load(struct ocl *o, const struct ocl_cache_key *k, const char *opts);
// Writes prog's binary as the entry of k (NULL: nothing). Best effort, never reported.
void ocl_cache_store(const struct ocl_cache_key *k, cl_program prog);

// ---- mem.c -----------------------------------------------------------------------------------
// Unmaps and releases every ocl_host_alloc block still live (ocl_close).
void ocl_pinned_free_all(struct ocl *o);

// ---- run.c -----------------------------------------------------------------------------------
// Where an enqueue call should put its event: a new slot when profiling, else NULL.
// Called right before the enqueue; ocl_event_keep() then counts the slot as used.
cl_event *ocl_event_slot(struct ocl *o);
void ocl_event_keep(struct ocl *o, cl_event *slot);
// Releases the events kept since the last ocl_timer_take.
void ocl_events_release(struct ocl *o);

#endif
