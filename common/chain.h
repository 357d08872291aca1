// chain.h: the device primitives of a chain of dependent batch-1 kernels (a decode step):
// the streaming 16-byte weight load and programmatic dependent launch. 06-decode uses them;
// 02-gemv's chained rungs spell the same two things (load_weights16, pdl_launch_dependents /
// pdl_wait) and can move here.
#pragma once
#include "check.h"  // CHECK_CUDA, FAIL (chain_launch); port.h: vec4u

// Weights are read once per token: no L1 allocation (nothing reuses them). No L2::256B hint: with
// it, 02-gemv's chained GEMVs stopped at 0.92 of the ceiling where plain reads of the same
// launches reached 1.0 (results/02-gemv.md). gfx942: non-temporal.
// volatile keeps the loads in program order ahead of griddepcontrol.wait, so a chained kernel
// can have its weights in flight while it waits for its predecessor.
__device__ __forceinline__ vec4u chain_weight_load(const void* p) {
#if defined(PORT_HIP)
  return __builtin_nontemporal_load(static_cast<const vec4u*>(p));
#else
  vec4u v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
#endif
}

// Programmatic dependent launch (sm_90): chain_release lets the next grid in the stream launch
// now; chain_acquire waits until the previous grid has completed and its memory is visible.
// Everything a kernel writes, and every read of its predecessor's output, must follow the
// acquire. No-ops where PDL does not exist (sm_80, gfx942) and when PDL is false.
template <bool PDL>
__device__ __forceinline__ void chain_release() {
#if !defined(PORT_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
template <bool PDL>
__device__ __forceinline__ void chain_acquire() {
#if !defined(PORT_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (PDL) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// The host side: with pdl, the launch carries the programmatic-stream-serialization attribute
// (the kernel may start while its predecessor in the stream still runs; what it must not
// overlap waits behind chain_acquire); without it, an ordinary launch. PDL needs sm_90 and
// CUDA: a HIP build asked for it fails loudly (callers check first and skip the mode).
template <class... Params, class... Args>
inline void chain_launch(bool pdl, void (*kernel)(Params...), dim3 blocks, dim3 threads, size_t smem, cudaStream_t s,
                         Args... args) {
  if (pdl) {
#if !defined(PORT_HIP)
    cudaLaunchConfig_t lc = {};
    lc.gridDim = blocks;
    lc.blockDim = threads;
    lc.dynamicSmemBytes = smem;
    lc.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    lc.attrs = attr;
    lc.numAttrs = 1;
    CHECK_CUDA(cudaLaunchKernelEx(&lc, kernel, args...));
    return;
#else
    FAIL("programmatic dependent launch does not exist on HIP");
#endif
  }
  kernel<<<blocks, threads, smem, s>>>(args...);
}
