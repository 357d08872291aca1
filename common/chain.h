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

// Data-carried readiness (sm_90 CUDA; the host runs it only there): a real chain whose next
// kernel reads its predecessor's y as x with no griddepcontrol.wait at all. Before the chain,
// every y of it is poisoned with all-ones bytes (0xFFFF halves: a NaN no FP16 result here is
// stored as, chain_data_bits maps it to 0x7FFF); the producer stores its sums with relaxed
// gpu-scope stores; the consumer reads 16 bytes of x with relaxed gpu-scope loads (from L2: L1
// is not coherent and may hold the poison) and re-reads, with a short sleep, while any half is
// poisoned. A poll gives up after 2 ms of %globaltimer and counts itself in *timeouts (a run
// with any is a wrong result, exit 1). Each half is written once per chain, so a value seen is
// the value: the data is its own flag and nothing else needs ordering after it.
#if !defined(PORT_HIP)
__device__ __forceinline__ vec4u chain_data_load16(const void* p) {
  vec4u v;
  asm volatile("ld.relaxed.gpu.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ bool chain_data_poisoned(const vec4u& v) {
  auto h = [](unsigned u) { return (u & 0xffffu) == 0xffffu || (u >> 16) == 0xffffu; };
  return h(v.x) || h(v.y) || h(v.z) || h(v.w);
}
// The slow path, out of line: the fast path stays four loads and a test. The sleep between polls
// starts at 32 ns and doubles up to max_sleep_ns (32: a fixed 32 ns): every poll is a load that
// queues at L2 beside the weight stream.
__device__ __noinline__ vec4u chain_data_poll16(const void* p, unsigned* timeouts, unsigned max_sleep_ns = 32) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  vec4u v = chain_data_load16(p);
  unsigned sleep_ns = 32;
  while (chain_data_poisoned(v)) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > 2000000ull) {
      atomicAdd(timeouts, 1u);
      break;
    }
    __nanosleep(sleep_ns);
    if (sleep_ns < max_sleep_ns) sleep_ns *= 2;
    v = chain_data_load16(p);
  }
  return v;
}
// One lane gates a warp's read of a chunk: the leader polls one vector of it (backing off to
// max_sleep_ns) before any lane reads the chunk, so that a waiting warp sends one poll at a time,
// not one per lane (chain_probe's data set: per-lane polls ran a chain 1.9x slower than the gate).
// Each lane still checks its own vectors after it (chain_data_poll16).
__device__ __forceinline__ void chain_data_gate16(const void* p, bool leader, unsigned* timeouts, unsigned max_sleep_ns) {
  if (leader && chain_data_poisoned(chain_data_load16(p))) (void)chain_data_poll16(p, timeouts, max_sleep_ns);
  __syncwarp();
}
// FP16 bits of s, never the poison.
__device__ __forceinline__ unsigned short chain_data_bits(float s) {
  const unsigned short b = __half_as_ushort(__float2half(s));
  return b == 0xffffu ? static_cast<unsigned short>(0x7fffu) : b;
}
__device__ __forceinline__ void chain_data_store_half(__half* p, float s) {
  asm volatile("st.relaxed.gpu.global.u16 [%0], %1;" ::"l"(p), "h"(chain_data_bits(s)) : "memory");
}
#endif
