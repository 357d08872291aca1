// device_scope.h: the two device-scope (gpu / agent) operations a grid barrier is made of,
// spelled per compiler: an acquire load of a 64-bit counter and a release increment of it (or add).
// sm_90: ld.acquire.gpu (a strong GPU-scope load + L1 invalidate in SASS) and red.release.gpu;
// gfx942: agent-scope atomics (sc1 loads, buffer_inv / buffer_wbl2 around them).
// 06-decode's barrier uses them; 05-sync's acq/rel schemes spell the same two operations.
#pragma once
#include "port.h"

__device__ __forceinline__ unsigned long long scope_acquire_load_u64(const unsigned long long* p) {
#if defined(PORT_HIP)
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
#else
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#endif
}
// A counter increment that is both a release (this thread's earlier writes, and those a block
// barrier made it observe, come before it) and an acquire (in the thread that reads the count,
// the writes released by earlier increments come before what follows): one atom, no fence.
__device__ __forceinline__ unsigned long long scope_acq_rel_increment_u64(unsigned long long* p) {
#if defined(PORT_HIP)
  return __hip_atomic_fetch_add(p, 1ull, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT);
#else
  unsigned long long old;
  asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(old) : "l"(p) : "memory");
  return old;
#endif
}
// An arrival whose result nobody needs (the counter is polled afterwards): red, not atom.
__device__ __forceinline__ void scope_release_increment_u64(unsigned long long* p) {
#if defined(PORT_HIP)
  __hip_atomic_fetch_add(p, 1ull, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
#else
  asm volatile("red.release.gpu.global.add.u64 [%0], 1;" ::"l"(p) : "memory");
#endif
}
// The same by n (a count of rows, not of arrivals).
__device__ __forceinline__ void scope_release_add_u64(unsigned long long* p, unsigned long long n) {
#if defined(PORT_HIP)
  __hip_atomic_fetch_add(p, n, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
#else
  asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(n) : "memory");
#endif
}
