// stream_read.h: the streaming-read kernels that measure the bandwidth ceiling
// (01-ceiling), shared so that a later experiment can measure the ceiling itself
// when no 01-ceiling result is present.
//
// Each thread reads 16-byte vectors in a grid-stride loop, `U` loads in flight per
// iteration, each load instruction one contiguous 512-byte warp transaction. Every
// element is read exactly once (a guarded tail covers n not divisible by U*threads).
// The words are folded into a register and stored only behind a branch on a runtime
// key that real data practically never matches, so no load can be removed.
// Bytes moved: n * 16 (stream_read_bytes), declared here and used everywhere.
#pragma once
#include <cstdint>
#include <string>
#include <vector>
#include "check.h"
#include "bulk_copy.h"

inline double stream_read_bytes(size_t n_vec4) { return 16.0 * static_cast<double>(n_vec4); }

// Load flavours. PTX qualifiers on NVIDIA; plain and non-temporal on AMD.
enum LoadFlavour {
  kLoadPlain,           // ld.global.v4.u32
  kLoadNc,              // ld.global.nc: the read-only (texture) path
  kLoadStreaming,       // ld.global.cs: evict-first, "cache streaming"
  kLoadNcNoAllocate,    // ld.global.nc.L1::no_allocate: do not install in L1
  kLoadL2EvictFirst,    // ld.global.L2::cache_hint with an evict_first createpolicy
  kLoadL2Prefetch256,   // ld.global.L2::256B: prefetch a 256-byte sector group into L2
  kLoadNcL2Prefetch256, // ld.global.nc.L2::256B
  kLoadNontemporal,     // gfx942: global_load_dwordx4 ... nt
  kLoadBulkCopy,        // sm_90: cp.async.bulk (the TMA engine) into a shared-memory ring
};

inline const char* load_flavour_name(int f) {
  switch (f) {
    case kLoadPlain: return "plain";
    case kLoadNc: return "nc";
    case kLoadStreaming: return "cs";
    case kLoadNcNoAllocate: return "nc.L1::no_allocate";
    case kLoadL2EvictFirst: return "L2::evict_first";
    case kLoadL2Prefetch256: return "L2::256B";
    case kLoadNcL2Prefetch256: return "nc.L2::256B";
    case kLoadNontemporal: return "non-temporal";
    case kLoadBulkCopy: return "bulk copy (TMA)";
  }
  return "?";
}

template <int F>
__device__ __forceinline__ uint64_t stream_policy() {
  uint64_t pol = 0;
#if !defined(PORT_HIP)
  if (F == kLoadL2EvictFirst) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
  return pol;
}

template <int F>
__device__ __forceinline__ vec4u load16(const vec4u* p, uint64_t pol) {
  vec4u v;
#if defined(PORT_HIP)
  (void)pol;
  if (F == kLoadNontemporal) v = __builtin_nontemporal_load(p);
  else v = *p;
#else
#define STREAM_LD(QUAL) asm(QUAL " {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p))
  if (F == kLoadPlain) STREAM_LD("ld.global.v4.u32");
  else if (F == kLoadNc) STREAM_LD("ld.global.nc.v4.u32");
  else if (F == kLoadStreaming) STREAM_LD("ld.global.cs.v4.u32");
  else if (F == kLoadNcNoAllocate) STREAM_LD("ld.global.nc.L1::no_allocate.v4.u32");
  else if (F == kLoadL2Prefetch256) STREAM_LD("ld.global.L2::256B.v4.u32");
  else if (F == kLoadNcL2Prefetch256) STREAM_LD("ld.global.nc.L2::256B.v4.u32");
  else if (F == kLoadL2EvictFirst)
    asm("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p), "l"(pol));
#undef STREAM_LD
#endif
  return v;
}

// kValidate: sum every word into a 64-bit total (order-free, exact), so the host can
// prove each element was read exactly once. Timed kernels fold with XOR instead and
// only ever store behind the key branch.
// Layouts: kGridStride puts a thread's U loads a whole grid apart (the GPU sweeps memory
// as one front); kWarpChunk gives each warp U*512 contiguous bytes per iteration (fewer
// DRAM pages open at once per warp). Both read every element exactly once.
enum StreamLayout { kGridStride = 0, kWarpChunk = 1 };

template <int F, int U, bool kValidate, int L = kGridStride>
__device__ __forceinline__ void stream_read_body(const vec4u* __restrict__ p, size_t n, unsigned key,
                                                 unsigned* sink, unsigned long long* total) {
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t gtid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t lane = threadIdx.x % PORT_WARP_SIZE, warp = gtid / PORT_WARP_SIZE;
  // Element of load u in iteration `it`: a step of `stride` vectors per iteration.
  const size_t first = L == kGridStride ? gtid : warp * (U * PORT_WARP_SIZE) + lane;
  const size_t ustep = L == kGridStride ? threads : PORT_WARP_SIZE;
  const size_t stride = U * threads;
  size_t i = first;
  const uint64_t pol = stream_policy<F>();
  unsigned acc = 0;
  unsigned long long acc64 = 0;
  // Full iterations: every thread's last load of the iteration is in range.
  const size_t full = n / stride;
  for (size_t it = 0; it < full; ++it, i += stride) {
    vec4u v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load16<F>(p + i + u * ustep, pol);  // all U in flight
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (kValidate) acc64 += static_cast<unsigned long long>(v[u].x) + v[u].y + v[u].z + v[u].w;
      else acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  // Tail: the last n % stride elements, one load per thread per step.
  for (size_t j = full * stride + gtid; j < n; j += threads) {
    vec4u v = load16<F>(p + j, pol);
    if (kValidate) acc64 += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
    else acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (kValidate) atomicAdd(total, acc64);
  else if (acc == key) sink[threadIdx.x] = acc;  // never-taken in practice; the loads must stay
}


// Bulk-copy variant (sm_90): one thread per block asks the copy engine for 16 KB chunks
// (cp.async.bulk, completing on an mbarrier) into a ring of kBulkStages shared-memory
// stages; the whole block folds each chunk once it lands, then the stage is refilled.
// Bytes in flight per block: kBulkStages x 16 KB, without one load instruction per 16 B.
constexpr int kBulkStages = 4;
constexpr int kBulkChunkVec = 1024;  // 16 KB
constexpr int kBulkSmemBytes = kBulkStages * kBulkChunkVec * 16;

template <bool kValidate>
__device__ __forceinline__ void stream_bulk_body(const vec4u* __restrict__ p, size_t n, unsigned key, unsigned* sink,
                                                 unsigned long long* total) {
#if !defined(PORT_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) vec4u ring[];
  __shared__ __align__(8) unsigned long long bar[kBulkStages];
  const size_t nchunks = (n + kBulkChunkVec - 1) / kBulkChunkVec;
  auto issue = [&](size_t c, int s) {
    const size_t vecs = (c + 1) * kBulkChunkVec <= n ? kBulkChunkVec : n - c * kBulkChunkVec;
    bulk_load(smem_u32(ring + s * kBulkChunkVec), p + c * kBulkChunkVec, static_cast<unsigned>(vecs * 16),
              smem_u32(&bar[s]));
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kBulkStages; ++s) bulk_bar_init(smem_u32(&bar[s]));
    bulk_bar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < kBulkStages; ++s) {
      size_t c = blockIdx.x + static_cast<size_t>(s) * gridDim.x;
      if (c < nchunks) issue(c, s);
    }
  unsigned acc = 0;
  unsigned long long acc64 = 0;
  const unsigned long long t0 = port_const_clock();
  for (size_t j = 0;; ++j) {
    const size_t c = blockIdx.x + j * gridDim.x;
    if (c >= nchunks) break;
    const int s = static_cast<int>(j % kBulkStages);
    bulk_wait(smem_u32(&bar[s]), static_cast<unsigned>((j / kBulkStages) & 1), t0, kBulkTimeoutTicks);
    const size_t vecs = (c + 1) * kBulkChunkVec <= n ? kBulkChunkVec : n - c * kBulkChunkVec;
    for (size_t i = threadIdx.x; i < vecs; i += blockDim.x) {
      vec4u v = ring[s * kBulkChunkVec + i];
      if (kValidate) acc64 += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
      else acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    __syncthreads();  // every thread is done with stage s before the engine refills it
    if (threadIdx.x == 0) {
      bulk_refill_fence();
      const size_t cn = c + static_cast<size_t>(kBulkStages) * gridDim.x;
      if (cn < nchunks) issue(cn, s);
    }
  }
  if (kValidate) atomicAdd(total, acc64);
  else if (acc == key) sink[threadIdx.x] = acc;
#else
  (void)p; (void)n; (void)key; (void)sink; (void)total;
  // Compiled out: needs sm_90 (the host never selects it on older devices).
#if defined(PORT_HIP)
  __builtin_trap();
#else
  __trap();
#endif
#endif
}

typedef void (*StreamReadFn)(const vec4u*, size_t, unsigned, unsigned*);
typedef void (*StreamCheckFn)(const vec4u*, size_t, unsigned, unsigned*, unsigned long long*);

#define STREAM_KERNEL_PAIR_L(NAME, F, U, L)                                                                   \
  extern "C" __global__ void stream_read_##NAME##_x##U(const vec4u* p, size_t n, unsigned key, unsigned* s) { \
    stream_read_body<F, U, false, L>(p, n, key, s, nullptr);                                                  \
  }                                                                                                           \
  extern "C" __global__ void stream_check_##NAME##_x##U(const vec4u* p, size_t n, unsigned key, unsigned* s,  \
                                                        unsigned long long* t) {                              \
    stream_read_body<F, U, true, L>(p, n, key, s, t);                                                         \
  }
#define STREAM_KERNEL_PAIR(NAME, F, U) STREAM_KERNEL_PAIR_L(NAME, F, U, kGridStride)
#define STREAM_KERNEL_FLAVOUR(NAME, F) \
  STREAM_KERNEL_PAIR(NAME, F, 1) STREAM_KERNEL_PAIR(NAME, F, 2) STREAM_KERNEL_PAIR(NAME, F, 4) STREAM_KERNEL_PAIR(NAME, F, 8)
// Warp-chunked layout, for plain and the read-only path, at the widest chunks.
#define STREAM_KERNEL_CHUNKED(NAME, F) \
  STREAM_KERNEL_PAIR_L(NAME##_chunk, F, 4, kWarpChunk) STREAM_KERNEL_PAIR_L(NAME##_chunk, F, 8, kWarpChunk)

STREAM_KERNEL_FLAVOUR(plain, kLoadPlain)
STREAM_KERNEL_CHUNKED(plain, kLoadPlain)
#if defined(PORT_HIP)
STREAM_KERNEL_FLAVOUR(nt, kLoadNontemporal)
STREAM_KERNEL_CHUNKED(nt, kLoadNontemporal)
#else
STREAM_KERNEL_FLAVOUR(nc, kLoadNc)
STREAM_KERNEL_CHUNKED(nc, kLoadNc)
STREAM_KERNEL_FLAVOUR(cs, kLoadStreaming)
STREAM_KERNEL_FLAVOUR(nc_noalloc, kLoadNcNoAllocate)
STREAM_KERNEL_FLAVOUR(l2_evict_first, kLoadL2EvictFirst)
STREAM_KERNEL_FLAVOUR(l2_256b, kLoadL2Prefetch256)
STREAM_KERNEL_FLAVOUR(nc_l2_256b, kLoadNcL2Prefetch256)
extern "C" __global__ void stream_read_bulk(const vec4u* p, size_t n, unsigned key, unsigned* s) {
  stream_bulk_body<false>(p, n, key, s, nullptr);
}
extern "C" __global__ void stream_check_bulk(const vec4u* p, size_t n, unsigned key, unsigned* s, unsigned long long* t) {
  stream_bulk_body<true>(p, n, key, s, t);
}
#endif

struct StreamKernel {
  int flavour;
  int unroll;  // loads in flight per thread per iteration
  int layout;  // StreamLayout
  int smem_bytes;  // dynamic shared memory per block (the bulk-copy ring)
  const char* symbol;
  StreamReadFn read;
  StreamCheckFn check;
};

#define STREAM_ENTRY_L(NAME, F, U, L) {F, U, L, 0, "stream_read_" #NAME "_x" #U, stream_read_##NAME##_x##U, stream_check_##NAME##_x##U}
#define STREAM_ENTRY(NAME, F, U) STREAM_ENTRY_L(NAME, F, U, kGridStride)
#define STREAM_CHUNKED(NAME, F) STREAM_ENTRY_L(NAME##_chunk, F, 4, kWarpChunk), STREAM_ENTRY_L(NAME##_chunk, F, 8, kWarpChunk)
#define STREAM_ENTRIES(NAME, F) STREAM_ENTRY(NAME, F, 1), STREAM_ENTRY(NAME, F, 2), STREAM_ENTRY(NAME, F, 4), STREAM_ENTRY(NAME, F, 8)

inline const std::vector<StreamKernel>& stream_kernels() {
  static const std::vector<StreamKernel> k = {
      STREAM_ENTRIES(plain, kLoadPlain),
#if defined(PORT_HIP)
      STREAM_ENTRIES(nt, kLoadNontemporal),
#else
      STREAM_ENTRIES(nc, kLoadNc),
      STREAM_ENTRIES(cs, kLoadStreaming),
      STREAM_ENTRIES(nc_noalloc, kLoadNcNoAllocate),
      STREAM_ENTRIES(l2_evict_first, kLoadL2EvictFirst),
      STREAM_ENTRIES(l2_256b, kLoadL2Prefetch256),
      STREAM_ENTRIES(nc_l2_256b, kLoadNcL2Prefetch256),
#endif
      STREAM_CHUNKED(plain, kLoadPlain),
#if defined(PORT_HIP)
      STREAM_CHUNKED(nt, kLoadNontemporal),
#else
      STREAM_CHUNKED(nc, kLoadNc),
      {kLoadBulkCopy, kBulkStages, kGridStride, kBulkSmemBytes, "stream_read_bulk", stream_read_bulk, stream_check_bulk},
#endif
  };
  return k;
}

inline const StreamKernel* find_stream_kernel(int flavour, int unroll, int layout = kGridStride) {
  for (auto& k : stream_kernels())
    if (k.flavour == flavour && k.unroll == unroll && k.layout == layout) return &k;
  return nullptr;
}

inline std::vector<int> stream_flavours() {
  std::vector<int> f;
  for (auto& k : stream_kernels())
    if (k.layout == kGridStride && k.flavour != kLoadBulkCopy && (f.empty() || f.back() != k.flavour))
      f.push_back(k.flavour);
  return f;
}
