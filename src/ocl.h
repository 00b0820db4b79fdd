// SPDX-License-Identifier: MIT
// The only interface to the OpenCL driver (OpenCL 1.2 API only), implemented in src/ocl/
// (src/ocl/ocl_impl.h says which file holds what). Nothing outside src/ocl/ includes
// <CL/cl.h>: callers see opaque handles and 0/-1 returns with err set, OpenCL errors named
// (CL_OUT_OF_RESOURCES, not -5); a failed program build also keeps the device's build log.
#ifndef CLIMG_OCL_H
#define CLIMG_OCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ocl;     // a device, its context, one in-order queue, the programs built for it
struct ocl_buf; // a device buffer

// Prints one line per device across all platforms, numbered in the order --device N uses:
//   0: NVIDIA H100 80GB HBM3 (GPU, NVIDIA CUDA, OpenCL 3.0 CUDA, 79.1 GiB)
// The device ocl_open(NULL) opens ends its line with " [default]".
// Prints "no OpenCL devices" when there are none. -1 with err set on a driver error.
int ocl_list_devices(FILE *out);

// Opens a device. spec: NULL or "" = automatic (the first GPU, else the first device of any
// type); "gpu"; "cpu" (an OpenCL CPU device such as PoCL); a number from ocl_list_devices;
// otherwise a case-insensitive substring of the device name.
// Returns NULL with err set on failure; *none_available is set to 1 when the failure is
// that no platform or device exists at all (the caller may fall back to the CPU path),
// 0 otherwise (a spec that matches nothing, a driver error).
struct ocl *ocl_open(const char *spec, int *none_available);

// How many devices ocl_list_devices lists (*count), and the number of the one spec names
// as ocl_open would pick it (*index; spec NULL: only the count). -1 with err set where
// spec names none or the driver fails.
int ocl_device_index(const char *spec, size_t *index, size_t *count);

void ocl_close(struct ocl *o); // NULL-safe

// Whether a test-only CLIMG_FAULT_* switch is set (src/ocl/fault.c): the binary cache is
// then off, and so is anything else kept between runs that could make a run's driver
// calls differ from the next one's.
bool ocl_faults_set(void);

// Whether o is the device ocl_open(NULL) picks (the automatic one), however it was named.
bool ocl_is_default(const struct ocl *o);

// o's number in ocl_list_devices (what --device N names).
size_t ocl_device_number(const struct ocl *o);

// "NVIDIA H100 80GB HBM3 (NVIDIA CUDA)"
const char *ocl_device_name(const struct ocl *o);

// What a report says about the device: its type ("GPU", "CPU", "accelerator", ...), the
// driver's CL_DRIVER_VERSION and the device's CL_DEVICE_VERSION ("OpenCL 3.0 CUDA").
// Strings are truncated to fit. -1 with err set on a driver error.
struct ocl_about {
	char type[16], driver[128], version[128];
	int is_gpu; // CL_DEVICE_TYPE_GPU
};
int ocl_about(const struct ocl *o, struct ocl_about *a);

// Which of a stage's kernels run: true for the variants written for CPU devices (a CPU
// driver such as PoCL runs a work-group as loops over its work-items, so they give each
// work-item a large piece of the image and use no __local tiles, barriers or local atomics),
// false for the GPU ones. ocl_open sets it from the device's type: true for
// CL_DEVICE_TYPE_CPU. Both families give the same bytes on any device; tests and the
// benchmark override the choice with ocl_set_cpu_kernels to run either one anywhere.
// Programs are built with the family's kernels only (CLIMG_CPU_KERNELS defined for the CPU
// family; the GPU family's large-input fallbacks are in both), so ocl_set_cpu_kernels
// releases the programs built for the other family.
bool ocl_cpu_kernels(const struct ocl *o);
// Whether the device is a CPU device (CL_DEVICE_TYPE_CPU). Its programs are built with
// CLIMG_CPU_DEVICE defined, so kernels that only CPU devices run exist only there.
bool ocl_cpu_device(const struct ocl *o);
void ocl_set_cpu_kernels(struct ocl *o, bool on);

// A program: the kernels of kernels/<name>.cl (embedded in the binary) for images of ch
// channels, 1 to 4. It is built with CLIMG_CH=ch and then holds only the kernels for that
// channel count and those for any (kernels/channels.clh), so it compiles and loads in less
// time. A stage's kernels come from its program built for the channel count of the image
// the stage gets (chain_programs).
struct ocl_program_id {
	const char *name;
	int ch;
};

// Builds the programs for the device (those already built are skipped).
// On a build failure err names the program and ocl_build_log() holds the device's log.
// With the program binary cache on, a program built once is loaded from its cached device
// binary instead of compiled (see src/ocl/cache.c); the cache never makes
// ocl_build fail.
int ocl_build(struct ocl *o, const struct ocl_program_id *programs, int n);

// Whether a build diverts the process's standard error (descriptor 2) while the driver
// compiles, so that a compiler's own messages (PoCL prints them there) join the build log
// instead (on by default). Off where other threads may write to stderr during a build
// (the automatic choice builds while the image runs on the CPU path): their lines would
// go with it.
void ocl_set_divert(struct ocl *o, bool on);

// The build log of the last program that failed to build, as lines ready for stderr
// ("climg: opencl: build log for kernels/NAME.cl on DEVICE:\n..."), or NULL. The caller
// prints it when the failure is reported as an error; a fallback to the CPU path keeps
// to its one warning line. NULL-safe.
const char *ocl_build_log(const struct ocl *o);

// The program binary cache is on when ocl_open returns; false turns it off for the programs
// built after the call (--no-cache): nothing is read from or written to the cache directory.
// The directory is $CLIMG_CACHE_DIR, else $XDG_CACHE_HOME/climg, else $HOME/.cache/climg.
void ocl_set_cache(struct ocl *o, bool on);

// What names o's entries in the binary cache: a number (the hash of the device's identity
// and its build options) from which ocl_cache_file_of makes the file of any program, with
// no device open. The automatic choice of path keeps it (src/cost.h), to know before
// opening the device whether a program will load from the cache or compile. 0 when the
// cache is off or unusable.
uint64_t ocl_cache_ident(struct ocl *o);

// The cache file that holds (or would hold) program name for ch channels on the device of
// ident, newly allocated: the same file ocl_build reads and writes. NULL for ident 0, or
// where there is no cache directory (none is made).
char *ocl_cache_file_of(uint64_t ident, const char *name, int ch);

// Ends the cache's writing for the process: when it returns no entry is being written and
// none will be, so the process may end at once (_exit) while another thread still builds a
// program, leaving no temporary file behind.
void ocl_cache_end(void);

// How many programs ocl_build has built for o so far (*built) and how many of them came
// from the cache (*cached), for --time.
void ocl_build_count(const struct ocl *o, int *built, int *cached);

// Device buffers. ocl_buf_new checks bytes against CL_DEVICE_MAX_MEM_ALLOC_SIZE itself.
struct ocl_buf *ocl_buf_new(struct ocl *o, size_t bytes);
// A read-only buffer with a copy of src, made as it is created: nothing is queued and the
// host does not wait for the queue (ocl_upload's blocking write would wait for every
// kernel queued before it). For small constant data such as a stage's weights.
struct ocl_buf *ocl_buf_const(struct ocl *o, const void *src, size_t bytes);
// NULL-safe. A buffer from ocl_buf_new goes once the queued commands are done with it; for
// one from ocl_buf_wrap this waits for every queued command first, so the caller may free or
// reuse the wrapped memory as soon as it returns.
void ocl_buf_free(struct ocl_buf *b);
int ocl_upload(struct ocl *o, struct ocl_buf *dst, const void *src, size_t bytes);
int ocl_download(struct ocl *o, struct ocl_buf *src, void *dst, size_t bytes);

// Enqueues setting the first bytes of b (a multiple of 4) to zero; does not wait.
int ocl_zero(struct ocl *o, struct ocl_buf *b, size_t bytes);

// Device limits, for kernels that size their own work (work-group count, __local memory).
struct ocl_limits {
	uint64_t local_mem_bytes; // CL_DEVICE_LOCAL_MEM_SIZE: __local memory per work-group
	size_t max_wg;            // CL_DEVICE_MAX_WORK_GROUP_SIZE
	unsigned compute_units;   // CL_DEVICE_MAX_COMPUTE_UNITS, at least 1
	size_t item_max[2];       // CL_DEVICE_MAX_WORK_ITEM_SIZES of dimensions 0 and 1
	uint64_t max_alloc_bytes; // CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest buffer
};
struct ocl_limits ocl_get_limits(const struct ocl *o);

// Enqueues a device-to-device copy of the first bytes of src into dst (distinct buffers),
// timed like any command when profiling (ocl_timer_take). Does not wait. The benchmark
// measures the device's copy bandwidth with it.
int ocl_copy(struct ocl *o, struct ocl_buf *dst, struct ocl_buf *src, size_t bytes);

// The work-items a work-group of kernel `kernel` of the built program `program` for ch
// channels may hold on this device: CL_KERNEL_WORK_GROUP_SIZE, at most max_wg (creates the
// kernel if needed).
int ocl_kernel_wg_max(struct ocl *o, const char *program, int ch, const char *kernel,
		      size_t *wg_max);

// A work-group of x by y items (powers of two), halved (y first) until it fits the device's
// limits lim and wg_max, the work-group size the kernel allows (ocl_kernel_wg_max).
void ocl_local_shrink(const struct ocl_limits *lim, size_t wg_max, size_t x, size_t y, size_t *lx,
                      size_t *ly);

// The work-group width, want items (a power of two) or as many as the device allows, of
// kernel `kernel` of program `program` for ch channels launched in work-groups of (width, 1)
// (ocl_local_shrink). 0 with err set where the kernel cannot be had.
size_t ocl_local_width(struct ocl *o, const char *program, int ch, const char *kernel,
		       size_t want);

// 1 if kernel `kernel` of program `program` for ch channels may run in work-groups of lw x
// lh items on this device (ocl_run refuses others), 0 if not, -1 with err set where the
// kernel cannot be had. For the kernels written for one work-group shape, so that a stage
// can take another kernel on a device that does not allow it.
int ocl_kernel_fits(struct ocl *o, const char *program, int ch, const char *kernel, size_t lw,
		    size_t lh);

// Kernel arguments, in order, ended by OCL_END.
enum ocl_arg_kind {
	OCL_ARG_END = 0,
	OCL_ARG_BUF,
	OCL_ARG_INT,
	OCL_ARG_UINT,
	OCL_ARG_LONG,
	OCL_ARG_LOCAL
};
struct ocl_arg {
	enum ocl_arg_kind kind;
	struct ocl_buf *buf; // OCL_ARG_BUF
	int32_t i;           // OCL_ARG_INT
	uint32_t u;          // OCL_ARG_UINT
	int64_t l;           // OCL_ARG_LONG (OpenCL C long)
	size_t local_bytes;  // OCL_ARG_LOCAL: __local memory of this size
};
#define OCL_BUF(b) ((struct ocl_arg){ .kind = OCL_ARG_BUF, .buf = (b) })
#define OCL_INT(v) ((struct ocl_arg){ .kind = OCL_ARG_INT, .i = (int32_t)(v) })
#define OCL_UINT(v) ((struct ocl_arg){ .kind = OCL_ARG_UINT, .u = (uint32_t)(v) })
#define OCL_LONG(v) ((struct ocl_arg){ .kind = OCL_ARG_LONG, .l = (int64_t)(v) })
#define OCL_LOCAL(n) ((struct ocl_arg){ .kind = OCL_ARG_LOCAL, .local_bytes = (n) })
#define OCL_END ((struct ocl_arg){ .kind = OCL_ARG_END })

// Enqueues kernel `kernel` of program `program` for ch channels (as ocl_build built it) over
// a 2-D range of gw x gh work-items (any sizes; ocl_run rounds the range up to a multiple of
// the local size it picks, so kernels must ignore items outside the image). local_w/local_h:
// 0 lets ocl choose. Does not wait for completion.
int ocl_run(struct ocl *o, const char *program, int ch, const char *kernel, size_t gw,
	    size_t gh, size_t local_w, size_t local_h, const struct ocl_arg *args);


// Waits for everything queued; reports errors that surface at completion.
int ocl_finish(struct ocl *o);

// Profiling (--time). ocl_profile recreates the queue with profiling on; call it before
// anything is queued. Then ocl_timer_take waits for the commands queued since its last
// call and sets *ms to the sum of their device execution times (0 when none).
int ocl_profile(struct ocl *o);
int ocl_timer_take(struct ocl *o, double *ms);

// Pinned (page-locked) host memory, which the device reads and writes at full speed:
// a CL_MEM_ALLOC_HOST_PTR buffer kept mapped. NULL with err set on failure.
// ocl_host_free frees a block from ocl_host_alloc, or gives any other pointer to
// hostmem_put (so one call frees either kind; o may be NULL for plain memory). Free blocks
// before ocl_close.
void *ocl_host_alloc(struct ocl *o, size_t bytes);
void ocl_host_free(struct ocl *o, void *ptr);

// ---- zero-copy on devices whose memory is the host's ----------------------------------------
// On such a device (PoCL, integrated GPUs) a buffer can live in host memory the caller owns
// (CL_MEM_USE_HOST_PTR): kernels read and write it in place, and no upload or download copy
// is needed. The OpenCL 1.2 rules kept here: the host memory outlives the buffer, the host
// does not touch it while commands use it, and after kernels wrote it the host reads it only
// after ocl_wrap_sync (a blocking map for reading, then unmap).

// CL_DEVICE_HOST_UNIFIED_MEMORY: true when the device's memory is the host's (PoCL and other
// CPU devices, integrated GPUs), false on discrete GPUs and when the driver does not say.
bool ocl_host_unified(const struct ocl *o);

// Host memory to wrap with ocl_buf_wrap: aligned to the larger of the page size and the
// device's CL_DEVICE_MEM_BASE_ADDR_ALIGN (so a driver can use it in place; PoCL needs 128
// bytes on x86-64), plain memory that free(), hostmem_put and ocl_host_free release
// (hostmem's where a page is aligned enough, so a batch reuses it). Memory that is not
// aligned so may still be wrapped, but a driver may then copy. NULL with err set.
void *ocl_wrap_alloc(const struct ocl *o, size_t bytes);

// Whether ptr has the alignment ocl_wrap_alloc gives.
bool ocl_wrap_aligned(const struct ocl *o, const void *ptr);

// A buffer over the first bytes of host memory the caller owns and keeps alive, unmodified
// by the host while commands may use it, until ocl_buf_free of the buffer has returned.
// read_only: kernels only read it (CL_MEM_READ_ONLY). NULL with err set.
struct ocl_buf *ocl_buf_wrap(struct ocl *o, void *host, size_t bytes, bool read_only);

// Makes the first bytes of a buffer from ocl_buf_wrap readable by the host at the wrapped
// memory, after kernels wrote it: waits for the commands queued before, maps the bytes for
// reading (the driver returns a pointer into the wrapped memory: no copy on PoCL) and
// unmaps them. Both commands are timed like any other (ocl_timer_take). -1 with err set.
int ocl_wrap_sync(struct ocl *o, struct ocl_buf *b, size_t bytes);

// The OpenCL ICD loader's version, vendor and OpenCL version, from its cl_loader_info
// extension: "2.3.1 (OCL Icd free software, OpenCL 3.0)", truncated to fit buf. -1 with err
// set when the loader has no such extension.
int ocl_loader_version(char *buf, size_t size);

#endif
