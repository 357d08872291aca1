// bulk_copy.h: the sm_90 copy engine (cp.async.bulk, "TMA" without a tensor map) feeding a
// shared-memory ring, completion tracked by mbarriers. Used by the ceiling's bulk-copy ring
// (stream_read.h) and the GEMV's ring rungs (02-gemv). Device code only; every helper is
// compiled to nothing below sm_90 and on HIP (callers guard their use the same way).
//
// Protocol per stage s: the producer thread arms bar[s] with the bytes it expects
// (mbarrier.arrive.expect_tx) and starts the copy, which completes the transaction on bar[s];
// consumers wait on bar[s] for the phase parity of their round ((round) & 1); once every
// consumer is done with the stage (a __syncthreads), the producer orders the generic-proxy
// reads before the async-proxy refill (fence.proxy.async) and re-arms the stage.
#pragma once
#include "port.h"

#if !defined(PORT_HIP)
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// One arrival (the producer's) completes a phase together with the expected bytes.
__device__ __forceinline__ void bulk_bar_init(unsigned bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
#endif
}
// After the initialisations, before any other thread or the copy engine sees the barriers.
__device__ __forceinline__ void bulk_bar_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
// A phase that several copies complete together: one arrival announcing all their bytes
// (bulk_arm), then the copies (bulk_copy_to). One copy alone: bulk_load.
__device__ __forceinline__ void bulk_arm(unsigned bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
// bytes: a multiple of 16, src and dst 16-byte aligned.
__device__ __forceinline__ void bulk_copy_to(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
#endif
}
__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  bulk_arm(bar, bytes);
  bulk_copy_to(dst, src, bytes, bar);
}
// The consumers' reads of a stage (generic proxy) happen before the engine refills it.
__device__ __forceinline__ void bulk_refill_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
// Wait for phase `parity` of bar. A completion that never comes traps after timeout_ticks of
// the constant-rate clock (the host sees a launch error and exits 1) instead of hanging.
__device__ __forceinline__ void bulk_wait(unsigned bar, unsigned parity, unsigned long long t0,
                                          unsigned long long timeout_ticks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  for (unsigned spin = 0;; ++spin) {
    unsigned done;
    asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], %2; selp.u32 %0, 1, 0, q; }"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    if (done) return;
    if ((spin & 1023) == 1023 && port_const_clock() - t0 > timeout_ticks) __trap();
  }
#else
  (void)bar; (void)parity; (void)t0; (void)timeout_ticks;
#endif
}
// Ten seconds on the 1 GHz constant-rate clock: far beyond any legitimate wait.
constexpr unsigned long long kBulkTimeoutTicks = 10000000000ull;
#endif  // !PORT_HIP
