# SPDX-License-Identifier: MIT
# Both kernel families (tests/kernels.c): the stages' variants for CPU devices and for GPUs,
# each run on this device whatever its type, against the CPU path byte for byte, on sizes
# around their blocks, tiles and slices with 1-4 channels. On PoCL the suite's other OpenCL
# tests run the CPU family, on a GPU the GPU family; this file runs both on either.
# Skipped with no OpenCL device when CLIMG_TEST_NO_OPENCL=1, as tests/t-opencl.sh.

# The GPU family runs again on a device said to have 32 KiB of local memory, the least
# OpenCL 1.2 promises, so that the kernels sized for such devices (4-channel remap tiles of
# 96 rows instead of 128) are checked on any device.

# PoCL compiles a kernel once more for each work-group size it is launched with, and the GPU
# family on PoCL, with every size and shape below, made hundreds of such compiles: on a
# fresh machine (CI, make check-fresh) most of this file's time. Those runs check the GPU
# kernels' logic, which the compile does not change, so there PoCL compiles each kernel
# once for any size (POCL_WORK_GROUP_SPECIALIZATION=0, unless the caller set it). The CPU
# family, which PoCL users run, runs as PoCL runs it by default.
kf_spec=${POCL_WORK_GROUP_SPECIALIZATION:-0}

need_opencl "kernel family tests" || { return 0 2>/dev/null || exit 0; }
c_checks "kernels cpu" "$T/kernels-cpu.out" "${KERNELS:-tests/kernels}" cpu
c_checks "kernels gpu" "$T/kernels-gpu.out" \
	env POCL_WORK_GROUP_SPECIALIZATION="$kf_spec" "${KERNELS:-tests/kernels}" gpu
c_checks "kernels gpu, 32 KiB of local memory" "$T/kernels-gpu-32k.out" \
	env POCL_WORK_GROUP_SPECIALIZATION="$kf_spec" CLIMG_FAULT_LOCAL_MEM=32768 \
	"${KERNELS:-tests/kernels}" gpu

# The GPU family again on a device said to allow work-groups of at most 64 items, and of 1
# (the least OpenCL 1.2 allows): the kernels written for one work-group shape (the remaps'
# word-wise tiles, the rotation's tiles) give way to kernels of any shape, and the others
# take smaller work-groups; ocl_run refuses a work-group larger than the device allows.
for kf_wg in 64 1; do
	c_checks "kernels gpu, work-groups of $kf_wg items" "$T/kernels-gpu-wg$kf_wg.out" \
		env POCL_WORK_GROUP_SPECIALIZATION="$kf_spec" CLIMG_FAULT_WORK_GROUP=$kf_wg \
		"${KERNELS:-tests/kernels}" gpu
done
