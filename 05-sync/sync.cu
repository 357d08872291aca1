// 05-sync: grid-wide barriers against kernel boundaries (batch-1 decode, one device).
//
//   make 05-sync/sync && 05-sync/sync [--quick] [--json PATH] [--only a,b] [--timeout-ms N]
//   make 05-sync/sync.s        PTX (+ SASS on the GPU machine) or gfx942 AMDGCN of every kernel
//   05-sync/sync --plant-fault hang|stale   must exit 1 (a missing arrival times out; a stale payload is caught)
//
// Table of contents. Every scheme runs `iters` synchronisations per cooperative launch; before
// each one every block publishes a payload, after it every block reads all blocks' payloads.
//   cg_grid_sync          cooperative_groups::this_grid().sync()                     (sync_cg_grid)
//   sense_<order>         atomic counter + generation flag (sense reversal)          (sync_sense_*)
//   monotonic_<order>     one counter that only grows: wait for (g+1)*N arrivals      (sync_monotonic_*)
//   gather_<order>        a flag per block, gathered by block 0, one broadcast flag   (sync_gather_*)
//   clusterC_<order>      hardware cluster barrier inside a cluster of C blocks, an atomic
//                         counter among cluster leaders only (sm_90 only)             (sync_cluster_*)
//   ready_<order>         no barrier: each consumer polls every producer's counter    (sync_ready_*)
//   sparseF_<order>       readiness over F neighbours only (b±1..b±F/2): a consumer that
//                         needs a few producers, not all; not a barrier       (sync_sparse_*)
//   sparseF_data          the same neighbours, readiness in the data (data_carried's words) (sync_sparse_data)
//   data_carried          no flag at all: value and epoch share one 8-byte word,
//                         consumers poll the payload itself                           (sync_data_carried)
//   split arrive/wait     monotonic barrier with work between arrive and wait         (sync_split)
//   orders: relaxed (no ordering: the communication floor, not a correct barrier),
//           acqrel (red/atom.release, ld.acquire.gpu; HIP: agent-scope release/acquire),
//           volfence (volatile spin + __threadfence), backoff (acqrel + __nanosleep / s_sleep)
// Kernel boundaries (boundary_empty, boundary_read32): back-to-back stream launches, stream+PDL,
// CUDA-graph replay, graph replay with programmatic dependent launch; an empty kernel and one
// that reads 32 MB (8 rotating buffers, 256 MB > 4x L2), against one fused read of all 8.
//
// Never wrong, never hung: each timed configuration is first run with the full payload check
// (fresh seed; payload slots NaN-poisoned, i.e. 0xFF, before the run); a stale value is a
// violation and exits 1 before timing. Every spin loop times out on the constant-rate clock,
// records block / scheme / generation in a device error record, raises a global abort flag that
// every other spinner watches, and the host exits 1.
#include <algorithm>
#include <cstring>
#include <sstream>
#include <thread>
#include "../common/ceiling.h"
#include "../common/device_scope.h"
#if defined(PORT_HIP)
#include <hip/hip_cooperative_groups.h>
#else
#include <cooperative_groups.h>
#endif
namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// Device side
// ---------------------------------------------------------------------------------------------
enum Kind { kCgGrid, kSense, kMonotonic, kGather, kCluster, kReady, kDataCarried, kSplit, kSparse, kSparseData };
enum Order { kRelaxed, kAcqRel, kVolFence, kBackoff };
enum Fault { kNoFault, kFaultHang, kFaultStale };

// What the host reads back after every launch set.
struct ErrorRecord {
  unsigned kind;  // 0 none, 1 timeout
  int block, thread, scheme;
  unsigned long long generation, want, seen;
  unsigned vkind;  // first violation: 0 none, 1 recorded
  int vblock, vproducer, vscheme;
  unsigned long long vgeneration, vwant, vseen;
};

struct SyncArgs {
  int nblocks, iters, check, scheme;  // check: 0 bare (no payload read), 1 read every block's payload
  unsigned long long gen0;            // generation of this launch's first barrier (state persists)
  unsigned seed;
  unsigned* payload;               // [2][nblocks]: slot g%2 holds generation g
  unsigned long long* words;       // [2][nblocks] x word_stride: data-carried (epoch << 32 | value)
  int word_stride;                 // 1: packed words; 16: one word per 128-byte line
  unsigned long long* flags;       // [nblocks]: per-block arrival / readiness counters
  unsigned long long* counter;     // monotonic and cluster-leader counter
  unsigned long long* gen_flag;    // sense / gather release flag
  unsigned long long* sense_count; // [2]: arrivals of generation g go to sense_count[g%2]
  unsigned long long* violations;
  ErrorRecord* err;
  unsigned* abort_flag;
  unsigned long long timeout_ticks;
  int work, split_mode;  // sync_split: FMA steps between arrive and wait; 0 split, 1 joined, 2 work only
  int fanin;             // sync_sparse_*: producers per consumer (even, < nblocks, <= threads)
  float key;
  float* sink;
  int fault;
  unsigned long long fault_gen;
};

// A payload that differs between generation g and g-2 (odd multiplier: a bijection mod 2^32).
__host__ __device__ inline unsigned payload_value(unsigned seed, unsigned long long g, int b, int n) {
  return static_cast<unsigned>(g * static_cast<unsigned long long>(n) + b) * 2654435761u ^ seed;
}

// --- memory operations per order ------------------------------------------------------------
template <int O>
__device__ __forceinline__ unsigned long long spin_load(const unsigned long long* p) {
#if defined(PORT_HIP)
  if (O == kRelaxed) return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  if (O == kVolFence) return *reinterpret_cast<const volatile unsigned long long*>(p);
  return scope_acquire_load_u64(p);
#else
  unsigned long long v;
  if (O == kRelaxed) asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else if (O == kVolFence) asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else v = scope_acquire_load_u64(p);  // ld.acquire.gpu (common/device_scope.h)
  return v;
#endif
}
// The data-carried word needs no ordering: the value is its own flag (one single-copy-atomic load).
__device__ __forceinline__ unsigned long long word_load(const unsigned long long* p) {
#if defined(PORT_HIP)
  return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
#else
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#endif
}
__device__ __forceinline__ void word_store(unsigned long long* p, unsigned long long v) {
#if defined(PORT_HIP)
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
#else
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#endif
}
template <int O>
__device__ __forceinline__ void signal_store(unsigned long long* p, unsigned long long v) {
#if defined(PORT_HIP)
  if (O == kRelaxed) __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  else if (O == kVolFence) { __threadfence(); *reinterpret_cast<volatile unsigned long long*>(p) = v; }
  else __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
#else
  if (O == kRelaxed) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  else if (O == kVolFence) { __threadfence(); asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
  else asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#endif
}
// Arrival without a result (the counter is polled afterwards).
template <int O>
__device__ __forceinline__ void arrive_red(unsigned long long* p) {
#if defined(PORT_HIP)
  if (O == kRelaxed) __hip_atomic_fetch_add(p, 1ull, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  else if (O == kVolFence) { __threadfence(); atomicAdd(p, 1ull); }
  else scope_release_increment_u64(p);
#else
  if (O == kRelaxed) asm volatile("red.relaxed.gpu.global.add.u64 [%0], 1;" ::"l"(p) : "memory");
  else if (O == kVolFence) { __threadfence(); atomicAdd(p, 1ull); }
  else scope_release_increment_u64(p);  // red.release.gpu (common/device_scope.h)
#endif
}
// Arrival that needs the old value (sense reversal: the last arriver releases the others).
template <int O>
__device__ __forceinline__ unsigned long long arrive_atom(unsigned long long* p) {
#if defined(PORT_HIP)
  if (O == kRelaxed) return __hip_atomic_fetch_add(p, 1ull, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  if (O == kVolFence) { __threadfence(); return atomicAdd(p, 1ull); }
  return __hip_atomic_fetch_add(p, 1ull, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT);
#else
  unsigned long long old;
  if (O == kRelaxed) asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(old) : "l"(p) : "memory");
  else if (O == kVolFence) { __threadfence(); old = atomicAdd(p, 1ull); }
  else asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(old) : "l"(p) : "memory");
  return old;
#endif
}
template <int O>
__device__ __forceinline__ void after_wait() {
  if (O == kVolFence) __threadfence();  // the volatile spin load orders nothing by itself
}
template <int O>
__device__ __forceinline__ void backoff() {
  if (O != kBackoff) return;
#if defined(PORT_HIP)
  __builtin_amdgcn_s_sleep(1);  // ~64 cycles: fewer loads hammering the flag's L2 channel
#else
  __nanosleep(32);
#endif
}

__device__ inline bool aborted(const SyncArgs& a) { return *reinterpret_cast<volatile unsigned*>(a.abort_flag) != 0; }

// Failure paths, kept out of line; they take plain values (a reference to the kernel's
// parameter block would force a local copy of it into every hot loop).
__device__ __noinline__ void record_timeout(ErrorRecord* err, unsigned* abort_flag, int scheme, unsigned long long g,
                                            unsigned long long want, unsigned long long seen) {
  if (atomicCAS(&err->kind, 0u, 1u) == 0u) {
    err->block = blockIdx.x;
    err->thread = threadIdx.x;
    err->scheme = scheme;
    err->generation = g;
    err->want = want;
    err->seen = seen;
  }
  atomicExch(abort_flag, 1u);
}
__device__ __noinline__ void record_violation(ErrorRecord* err, int scheme, unsigned long long g, int producer,
                                              unsigned long long want, unsigned long long seen) {
  if (atomicCAS(&err->vkind, 0u, 1u) == 0u) {
    err->vblock = blockIdx.x;
    err->vproducer = producer;
    err->vscheme = scheme;
    err->vgeneration = g;
    err->vwant = want;
    err->vseen = seen;
  }
}

// Spin until (*p >> shift) >= want. The clock is read only once the first poll failed, then
// every 16 polls, together with the abort flag. False: timed out (recorded) or aborted.
// `seen` (optional) receives the word that satisfied the wait, so a caller whose word is its
// own payload (data-carried) need not load it again: one round trip less per crossing.
template <int O>
__device__ __forceinline__ bool spin_until(const SyncArgs& a, const unsigned long long* p, unsigned long long want,
                                           unsigned long long g, int shift = 0, unsigned long long* seen = nullptr) {
  unsigned long long v = spin_load<O>(p);
  if ((v >> shift) >= want) {
    if (seen) *seen = v;
    return true;
  }
  const unsigned long long t0 = port_const_clock();
  for (unsigned n = 1;; ++n) {
    backoff<O>();
    v = spin_load<O>(p);
    if ((v >> shift) >= want) {
      if (seen) *seen = v;
      return true;
    }
    if ((n & 15) == 0) {
      if (aborted(a)) return false;
      if (port_const_clock() - t0 > a.timeout_ticks) {
        record_timeout(a.err, a.abort_flag, a.scheme, g, want, v >> shift);
        return false;
      }
    }
  }
}

// Every thread of the block polls a slice of the per-producer counters, four loads in flight
// before the first compare (the loads are independent; only a not-ready one is re-polled).
template <int O>
__device__ __forceinline__ bool poll_all(const SyncArgs& a, const unsigned long long* base, unsigned long long want,
                                         unsigned long long g) {
  const int n = a.nblocks, bd = blockDim.x;
  bool ok = true;
  for (int p0 = threadIdx.x; p0 < n && ok; p0 += 4 * bd) {
    unsigned long long v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = p0 + j * bd < n ? spin_load<O>(base + p0 + j * bd) : ~0ull;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (v[j] < want) ok = ok && spin_until<O>(a, base + p0 + j * bd, want, g);
  }
  after_wait<O>();
  return ok;
}

// After the synchronisation: every block reads every block's payload of generation g.
__device__ __forceinline__ unsigned check_payloads(const SyncArgs& a, unsigned long long g) {
  const unsigned* slot = a.payload + (g & 1) * a.nblocks;
  unsigned bad = 0;
  for (int p = threadIdx.x; p < a.nblocks; p += blockDim.x) {
    const unsigned got = slot[p], want = payload_value(a.seed, g, p, a.nblocks);
    if (got != want) {
      ++bad;
      record_violation(a.err, a.scheme, g, p, want, got);
    }
  }
  return bad;
}

// Sparse readiness: block b's producers are its F nearest neighbours on a ring, b±1 .. b±F/2.
// The neighbourhood is symmetric, so a block's consumers are its producers: a block can publish
// generation g+2 into slot g%2 only after every reader of its generation g has said g+1 is ready
// (which each does after its reads of g), as with the all-to-all schemes.
__device__ __forceinline__ int sparse_producer(int b, int n, int t) {
  const int j = t / 2 + 1;
  return t & 1 ? (b - j + n) % n : (b + j) % n;
}
// After a sparse crossing: thread t < F reads its producer's payload of generation g (only the
// producers: any other block may be a generation ahead or behind).
__device__ __forceinline__ unsigned check_sparse_payloads(const SyncArgs& a, unsigned long long g) {
  if (threadIdx.x >= a.fanin) return 0;
  const int p = sparse_producer(blockIdx.x, a.nblocks, threadIdx.x);
  const unsigned got = a.payload[(g & 1) * a.nblocks + p], want = payload_value(a.seed, g, p, a.nblocks);
  if (got == want) return 0;
  record_violation(a.err, a.scheme, g, p, want, got);
  return 1;
}

__device__ __forceinline__ unsigned my_payload(const SyncArgs& a, unsigned long long g) {
  unsigned v = payload_value(a.seed, g, blockIdx.x, a.nblocks);
  if (a.fault == kFaultStale && blockIdx.x == 1 && g == a.fault_gen) v ^= 1u;  // planted: must be caught
  return v;
}
__device__ __forceinline__ bool skip_arrival(const SyncArgs& a, unsigned long long g) {
  return a.fault == kFaultHang && blockIdx.x == a.nblocks - 1 && g >= a.fault_gen;  // planted: must time out
}

__device__ __forceinline__ float fma_work(float x, int steps) {
#pragma unroll 1
  for (int k = 0; k < steps; ++k) x = fmaf(x, 0.999f, 0.001f);  // a dependent FMA and the count: ~14 ns a step measured
  return x;
}

// One template body for the barrier and readiness schemes; the extern "C" wrappers below give
// each instance a name the assembly rules can address. SKEW (the *_skew kernels): before each
// generation's arrival one block, a different one each generation ((g * 37) mod N: 37 is prime
// to any grid here but multiples of 37), does `work` dependent FMA steps first: a straggler.
template <int K, int O, bool SKEW = false>
__device__ __forceinline__ void sync_body(const SyncArgs& a) {
  __shared__ int s_fail;
  if (threadIdx.x == 0) s_fail = 0;
  __syncthreads();
  const int b = blockIdx.x, n = a.nblocks;
  const bool t0 = threadIdx.x == 0;
  unsigned bad = 0;
  float x = 1.0f + threadIdx.x * 1e-3f;
  for (int i = 0; i < a.iters; ++i) {
    const unsigned long long g = a.gen0 + i;
    const int slot = static_cast<int>(g & 1);
    bool ok = true;
    if constexpr (SKEW)
      if (b == static_cast<int>((g * 37) % static_cast<unsigned long long>(n))) x = fma_work(x, a.work);
    if constexpr (K == kDataCarried || K == kSparseData) {
      if (t0 && !skip_arrival(a, g))
        word_store(a.words + static_cast<size_t>(slot * n + b) * a.word_stride, ((g + 1) << 32) | my_payload(a, g));
    } else if (t0) {
      a.payload[slot * n + b] = my_payload(a, g);  // a plain store: the synchronisation must publish it
    }
    if constexpr (K == kCgGrid) {
      cg::this_grid().sync();
    } else if constexpr (K == kSense) {
      __syncthreads();
      if (t0 && !skip_arrival(a, g)) {
        unsigned long long* cnt = a.sense_count + slot;
        if (arrive_atom<O>(cnt) == static_cast<unsigned long long>(n - 1)) {
          *reinterpret_cast<volatile unsigned long long*>(cnt) = 0;  // next used by generation g+2
          signal_store<O>(a.gen_flag, g + 1);
        } else {
          ok = spin_until<O>(a, a.gen_flag, g + 1, g);
          after_wait<O>();
        }
      } else if (t0) {
        ok = spin_until<O>(a, a.gen_flag, g + 1, g);
      }
    } else if constexpr (K == kMonotonic) {
      __syncthreads();
      if (t0) {
        if (!skip_arrival(a, g)) arrive_red<O>(a.counter);
        ok = spin_until<O>(a, a.counter, (g + 1) * static_cast<unsigned long long>(n), g);
        after_wait<O>();
      }
    } else if constexpr (K == kGather) {
      __syncthreads();
      if (t0 && !skip_arrival(a, g)) signal_store<O>(a.flags + b, g + 1);
      if (b == 0) {
        ok = poll_all<O>(a, a.flags, g + 1, g);
        if (!ok) s_fail = 1;
        __syncthreads();
        if (t0 && !s_fail) signal_store<O>(a.gen_flag, g + 1);
      } else if (t0) {
        ok = spin_until<O>(a, a.gen_flag, g + 1, g);
        after_wait<O>();
      }
    } else if constexpr (K == kReady) {
      __syncthreads();  // this block's reads of generation g-1 are done before it says g is ready
      if (t0 && !skip_arrival(a, g)) signal_store<O>(a.flags + b, g + 1);
      ok = poll_all<O>(a, a.flags, g + 1, g);
    } else if constexpr (K == kSparse) {
      __syncthreads();  // as ready: this block's reads of generation g-1 are done before it says g is ready
      if (t0 && !skip_arrival(a, g)) signal_store<O>(a.flags + b, g + 1);
      if (threadIdx.x < a.fanin) {  // one producer per thread, all polls in flight at once
        ok = spin_until<O>(a, a.flags + sparse_producer(b, n, threadIdx.x), g + 1, g);
        after_wait<O>();
      }
    } else if constexpr (K == kSparseData) {
      // Thread t < F polls its producer's word (the value is its own flag, as in data_carried)
      // and checks the value it returned: no fence, no second load.
      if (threadIdx.x < a.fanin) {
        const int p = sparse_producer(b, n, threadIdx.x);
        const unsigned long long* wp = a.words + static_cast<size_t>(slot * n + p) * a.word_stride;
        const unsigned long long want = g + 1;
        unsigned long long v = word_load(wp);
        if ((v >> 32) < want) ok = spin_until<kRelaxed>(a, wp, want, g, 32, &v);
        if (ok && a.check) {
          const unsigned long long expect = (want << 32) | payload_value(a.seed, g, p, n);
          if (v != expect) {
            ++bad;
            record_violation(a.err, a.scheme, g, p, expect, v);
          }
        }
      }
    } else if constexpr (K == kDataCarried) {
      const int ws = a.word_stride;
      const unsigned long long* w = a.words + static_cast<size_t>(slot) * n * ws;
      const unsigned long long want = g + 1;
      for (int p0 = threadIdx.x; p0 < n && ok; p0 += 4 * blockDim.x) {
        unsigned long long v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
          v[j] = p0 + j * blockDim.x < n ? word_load(w + static_cast<size_t>(p0 + j * blockDim.x) * ws) : 0ull;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int p = p0 + j * blockDim.x;
          if (p >= n || !ok) continue;
          const unsigned long long* wp = w + static_cast<size_t>(p) * ws;
          if ((v[j] >> 32) < want) ok = spin_until<kRelaxed>(a, wp, want, g, 32, &v[j]);
          if (ok && a.check) {
            const unsigned long long expect = (want << 32) | payload_value(a.seed, g, p, n);
            if (v[j] != expect) {
              ++bad;
              record_violation(a.err, a.scheme, g, p, expect, v[j]);
            }
          }
        }
      }
    }
    if (!ok) s_fail = 1;
    __syncthreads();
    if (s_fail) break;
    if (a.check && K == kSparse) bad += check_sparse_payloads(a, g);
    else if (a.check && K != kDataCarried && K != kSparseData) bad += check_payloads(a, g);
  }
  if (SKEW && x == a.key) a.sink[threadIdx.x] = x;  // never true: keeps the straggler's FMA chain alive
  if (bad) atomicAdd(a.violations, static_cast<unsigned long long>(bad));
}

#define SYNC_KERNEL(name, K, O) \
  extern "C" __global__ void name(SyncArgs a) { sync_body<K, O>(a); }
SYNC_KERNEL(sync_cg_grid, kCgGrid, kAcqRel)
SYNC_KERNEL(sync_sense_relaxed, kSense, kRelaxed)
SYNC_KERNEL(sync_sense_acqrel, kSense, kAcqRel)
SYNC_KERNEL(sync_sense_volfence, kSense, kVolFence)
SYNC_KERNEL(sync_monotonic_relaxed, kMonotonic, kRelaxed)
SYNC_KERNEL(sync_monotonic_acqrel, kMonotonic, kAcqRel)
SYNC_KERNEL(sync_monotonic_volfence, kMonotonic, kVolFence)
SYNC_KERNEL(sync_monotonic_backoff, kMonotonic, kBackoff)
SYNC_KERNEL(sync_gather_relaxed, kGather, kRelaxed)
SYNC_KERNEL(sync_gather_acqrel, kGather, kAcqRel)
SYNC_KERNEL(sync_ready_relaxed, kReady, kRelaxed)
SYNC_KERNEL(sync_ready_acqrel, kReady, kAcqRel)
SYNC_KERNEL(sync_data_carried, kDataCarried, kRelaxed)
SYNC_KERNEL(sync_sparse_relaxed, kSparse, kRelaxed)
SYNC_KERNEL(sync_sparse_acqrel, kSparse, kAcqRel)
SYNC_KERNEL(sync_sparse_data, kSparseData, kRelaxed)
// A straggler each generation (SKEW): the barrier, the all-to-all data exchange, the sparse one.
#define SYNC_KERNEL_SKEW(name, K, O) \
  extern "C" __global__ void name(SyncArgs a) { sync_body<K, O, true>(a); }
SYNC_KERNEL_SKEW(sync_monotonic_acqrel_skew, kMonotonic, kAcqRel)
SYNC_KERNEL_SKEW(sync_data_carried_skew, kDataCarried, kRelaxed)
SYNC_KERNEL_SKEW(sync_sparse_data_skew, kSparseData, kRelaxed)

// Hierarchical: the hardware cluster barrier (barrier.cluster.arrive/wait) inside a cluster,
// the atomic counter among cluster leaders only. sm_90 and later; compiled out elsewhere.
#if !defined(PORT_HIP)
template <int O>
__device__ __forceinline__ void cluster_barrier() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (O == kRelaxed) asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  else cg::this_cluster().sync();  // barrier.cluster.arrive (release) + barrier.cluster.wait (acquire)
#endif
}
template <int O>
__device__ __forceinline__ void sync_cluster_body(const SyncArgs& a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ int s_fail;
  if (threadIdx.x == 0) s_fail = 0;
  cg::cluster_group cl = cg::this_cluster();
  cl.sync();
  const int b = blockIdx.x, n = a.nblocks, csize = static_cast<int>(cl.num_blocks());
  const unsigned long long nclusters = static_cast<unsigned long long>(n / csize);
  const bool leader = cl.block_rank() == 0 && threadIdx.x == 0;
  unsigned bad = 0;
  for (int i = 0; i < a.iters; ++i) {
    const unsigned long long g = a.gen0 + i;
    if (threadIdx.x == 0) a.payload[(g & 1) * n + b] = my_payload(a, g);
    cluster_barrier<O>();
    if (leader) {
      if (!skip_arrival(a, g)) arrive_red<O>(a.counter);
      if (!spin_until<O>(a, a.counter, (g + 1) * nclusters, g)) {
        // Failure path only: tell every block of this cluster before releasing them.
        for (int r = 0; r < csize; ++r) *cl.map_shared_rank(&s_fail, r) = 1;
        asm volatile("fence.acq_rel.cluster;" ::: "memory");
      }
    }
    cluster_barrier<O>();
    if (s_fail) break;
    if (a.check) bad += check_payloads(a, g);
  }
  if (bad) atomicAdd(a.violations, static_cast<unsigned long long>(bad));
  cl.sync();  // no block leaves while a peer may still write its shared memory
#else
  (void)a;
  __trap();  // never launched: the host refuses cluster schemes below sm_90
#endif
}
extern "C" __global__ void sync_cluster_relaxed(SyncArgs a) { sync_cluster_body<kRelaxed>(a); }
extern "C" __global__ void sync_cluster_acqrel(SyncArgs a) { sync_cluster_body<kAcqRel>(a); }
#endif

// Split arrive/wait on the monotonic acq/rel counter: arrive, `work` dependent FMAs per thread,
// then wait. split_mode 1 (joined) does the work before a whole barrier; 2 does the work only.
extern "C" __global__ void sync_split(SyncArgs a) {
  __shared__ int s_fail;
  if (threadIdx.x == 0) s_fail = 0;
  __syncthreads();
  const int n = a.nblocks;
  const bool t0 = threadIdx.x == 0;
  const unsigned long long target_per_gen = static_cast<unsigned long long>(n);
  float x = 1.0f + threadIdx.x * 1e-3f;
  unsigned bad = 0;
  for (int i = 0; i < a.iters; ++i) {
    const unsigned long long g = a.gen0 + i;
    if (t0) a.payload[(g & 1) * n + blockIdx.x] = my_payload(a, g);
    bool ok = true;
    if (a.split_mode == 0) {
      __syncthreads();
      if (t0 && !skip_arrival(a, g)) arrive_red<kAcqRel>(a.counter);
      x = fma_work(x, a.work);
      if (t0) ok = spin_until<kAcqRel>(a, a.counter, (g + 1) * target_per_gen, g);
    } else if (a.split_mode == 1) {
      x = fma_work(x, a.work);
      __syncthreads();
      if (t0) {
        if (!skip_arrival(a, g)) arrive_red<kAcqRel>(a.counter);
        ok = spin_until<kAcqRel>(a, a.counter, (g + 1) * target_per_gen, g);
      }
    } else {
      x = fma_work(x, a.work);
    }
    if (!ok) s_fail = 1;
    __syncthreads();
    if (s_fail) break;
    if (a.check && a.split_mode != 2) bad += check_payloads(a, g);
  }
  if (x == a.key) a.sink[threadIdx.x] = x;  // never true: keeps the FMA chain alive
  if (bad) atomicAdd(a.violations, static_cast<unsigned long long>(bad));
}

__global__ void read_const_clock(unsigned long long* out) { *out = port_const_clock(); }

// --- kernel boundaries ----------------------------------------------------------------------
// With programmatic dependent launch the next grid may start before this one ends; the
// dependency wait at the top keeps the chain ordered, the trigger at the end lets the next
// grid's launch overlap this one's tail. Without PDL both are no-ops.
__device__ __forceinline__ void pdl_wait() {
#if !defined(PORT_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if !defined(PORT_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}
// Near-empty: one counter increment per launch, so a chain of L launches must leave L.
extern "C" __global__ void boundary_empty(unsigned long long* counter) {
  pdl_wait();
  if (blockIdx.x == 0 && threadIdx.x == 0) *counter += 1;
  pdl_trigger();
}
// Reads n 16-byte vectors (napkin: 32 MB = 2M vectors; at ~4.5 TB/s about 7.5 us), four loads
// in flight per thread, and adds the 32-bit words into *sum (the host knows the exact total).
extern "C" __global__ void boundary_read32(const uint4* __restrict__ buf, size_t n, unsigned long long* sum) {
  pdl_wait();
  unsigned long long acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = buf[i + j * stride];
#pragma unroll
    for (int j = 0; j < 4; ++j) acc += static_cast<unsigned long long>(v[j].x) + v[j].y + v[j].z + v[j].w;
  }
  for (; i < n; i += stride) {
    const uint4 v = buf[i];
    acc += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  for (int o = PORT_WARP_SIZE / 2; o > 0; o /= 2) acc += __shfl_xor_sync(PORT_FULL_MASK, acc, o);
  __shared__ unsigned long long part[1024 / 32];
  const int lane = threadIdx.x % PORT_WARP_SIZE, warp = threadIdx.x / PORT_WARP_SIZE;
  if (lane == 0) part[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long t = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x / PORT_WARP_SIZE); ++w) t += part[w];
    atomicAdd(sum, t);
  }
  pdl_trigger();
}

// ---------------------------------------------------------------------------------------------
// Host side (CUDA and HIP; cluster launch and PDL are CUDA-only)
// ---------------------------------------------------------------------------------------------
namespace {

struct Scheme {
  const char* name;
  int kind, order, cluster;  // cluster: blocks per cluster (kCluster only)
  const void* fn;
  bool barrier;  // a true all-block barrier (as opposed to readiness)
  const char* relaxed_twin;  // same communication with no ordering ("" if none)
  int word_stride = 1;       // data-carried words: 1 packed, 16 = one per 128-byte line
  int fanin = 0;             // kSparse, kSparseData: producers per consumer
};

std::vector<Scheme> all_schemes() {
  std::vector<Scheme> s = {
      {"cg_grid_sync", kCgGrid, kAcqRel, 0, (const void*)sync_cg_grid, true, ""},
      {"sense_relaxed", kSense, kRelaxed, 0, (const void*)sync_sense_relaxed, true, ""},
      {"sense_acqrel", kSense, kAcqRel, 0, (const void*)sync_sense_acqrel, true, "sense_relaxed"},
      {"sense_volfence", kSense, kVolFence, 0, (const void*)sync_sense_volfence, true, "sense_relaxed"},
      {"monotonic_relaxed", kMonotonic, kRelaxed, 0, (const void*)sync_monotonic_relaxed, true, ""},
      {"monotonic_acqrel", kMonotonic, kAcqRel, 0, (const void*)sync_monotonic_acqrel, true, "monotonic_relaxed"},
      {"monotonic_volfence", kMonotonic, kVolFence, 0, (const void*)sync_monotonic_volfence, true, "monotonic_relaxed"},
      {"monotonic_backoff", kMonotonic, kBackoff, 0, (const void*)sync_monotonic_backoff, true, "monotonic_relaxed"},
      {"gather_relaxed", kGather, kRelaxed, 0, (const void*)sync_gather_relaxed, true, ""},
      {"gather_acqrel", kGather, kAcqRel, 0, (const void*)sync_gather_acqrel, true, "gather_relaxed"},
#if !defined(PORT_HIP)
      {"cluster2_relaxed", kCluster, kRelaxed, 2, (const void*)sync_cluster_relaxed, true, ""},
      {"cluster2_acqrel", kCluster, kAcqRel, 2, (const void*)sync_cluster_acqrel, true, "cluster2_relaxed"},
      {"cluster4_relaxed", kCluster, kRelaxed, 4, (const void*)sync_cluster_relaxed, true, ""},
      {"cluster4_acqrel", kCluster, kAcqRel, 4, (const void*)sync_cluster_acqrel, true, "cluster4_relaxed"},
      {"cluster8_relaxed", kCluster, kRelaxed, 8, (const void*)sync_cluster_relaxed, true, ""},
      {"cluster8_acqrel", kCluster, kAcqRel, 8, (const void*)sync_cluster_acqrel, true, "cluster8_relaxed"},
#endif
      {"ready_relaxed", kReady, kRelaxed, 0, (const void*)sync_ready_relaxed, false, ""},
      {"ready_acqrel", kReady, kAcqRel, 0, (const void*)sync_ready_acqrel, false, "ready_relaxed"},
      {"data_carried", kDataCarried, kRelaxed, 0, (const void*)sync_data_carried, false, ""},
      // Same kernel, each producer's word alone in its 128-byte line: consumers' polls of one
      // producer no longer land on the line fifteen other producers are writing.
      {"data_carried_padded", kDataCarried, kRelaxed, 0, (const void*)sync_data_carried, false, "", 16},
      // A consumer that needs F producers, not all of them (attention needs its KV head's rows,
      // not the whole QKV output): the same flags as ready_*, F polls instead of every block's.
      {"sparse2_relaxed", kSparse, kRelaxed, 0, (const void*)sync_sparse_relaxed, false, "", 1, 2},
      {"sparse2_acqrel", kSparse, kAcqRel, 0, (const void*)sync_sparse_acqrel, false, "sparse2_relaxed", 1, 2},
      {"sparse8_relaxed", kSparse, kRelaxed, 0, (const void*)sync_sparse_relaxed, false, "", 1, 8},
      {"sparse8_acqrel", kSparse, kAcqRel, 0, (const void*)sync_sparse_acqrel, false, "sparse8_relaxed", 1, 8},
      {"sparse32_relaxed", kSparse, kRelaxed, 0, (const void*)sync_sparse_relaxed, false, "", 1, 32},
      {"sparse32_acqrel", kSparse, kAcqRel, 0, (const void*)sync_sparse_acqrel, false, "sparse32_relaxed", 1, 32},
      // The same neighbours with readiness in the data: data_carried_padded's words, F of them.
      {"sparse2_data", kSparseData, kRelaxed, 0, (const void*)sync_sparse_data, false, "", 16, 2},
      {"sparse8_data", kSparseData, kRelaxed, 0, (const void*)sync_sparse_data, false, "", 16, 8},
      {"sparse32_data", kSparseData, kRelaxed, 0, (const void*)sync_sparse_data, false, "", 16, 32},
  };
  return s;
}
const char* order_name(int o) {
  switch (o) {
    case kRelaxed: return "relaxed";
    case kAcqRel: return "acq/rel";
    case kVolFence: return "volatile+fence";
    case kBackoff: return "acq/rel+backoff";
  }
  return "?";
}
// A scheme whose result is meaningful: everything but the relaxed floors (data_carried and sparse_data are
// relaxed by design: the value is its own flag, and the epoch check proves it).
bool is_correct_scheme(const Scheme& s) { return s.order != kRelaxed || s.kind == kDataCarried || s.kind == kSparseData; }
// A consumer of F producers (flags or data), not an all-to-all exchange.
bool is_sparse(const Scheme& s) { return s.kind == kSparse || s.kind == kSparseData; }

// Cluster schemes need whole clusters: a grid rounds down to a multiple of the cluster size
// (1 block per SM on 132 SMs is 128 blocks for clusters of 8).
int whole_clusters(const Scheme& s, int blocks) { return s.kind == kCluster ? blocks - blocks % s.cluster : blocks; }

int build_sm() {  // "sm_90" -> 90; 0 for gfx
  const char* a = SUITE_BUILD_ARCH;
  return std::strncmp(a, "sm_", 3) == 0 ? std::atoi(a + 3) : 0;
}

constexpr int kMaxWordStride = 16;

// Device buffers shared by all schemes (sized for the largest grid).
struct SyncState {
  int cap = 0;
  unsigned* payload = nullptr;
  unsigned long long *words = nullptr, *flags = nullptr, *counters = nullptr, *violations = nullptr;
  ErrorRecord* err = nullptr;
  unsigned* abort_flag = nullptr;
  float* sink = nullptr;
  void alloc(int max_blocks) {
    cap = max_blocks;
    CHECK_CUDA(cudaMalloc(&payload, 2 * cap * sizeof(unsigned)));
    CHECK_CUDA(cudaMalloc(&words, 2 * cap * kMaxWordStride * sizeof(unsigned long long)));
    CHECK_CUDA(cudaMalloc(&flags, cap * sizeof(unsigned long long)));
    CHECK_CUDA(cudaMalloc(&counters, 8 * sizeof(unsigned long long)));
    CHECK_CUDA(cudaMalloc(&violations, sizeof(unsigned long long)));
    CHECK_CUDA(cudaMalloc(&err, sizeof(ErrorRecord)));
    CHECK_CUDA(cudaMalloc(&abort_flag, sizeof(unsigned)));
    CHECK_CUDA(cudaMalloc(&sink, 1024 * sizeof(float)));
  }
  // Fresh state for a configuration: generation 0, poisoned payload slots (all-ones is no
  // generation's payload with overwhelming probability, and the epoch 0xFFFFFFFF is never reached).
  void reset(cudaStream_t s) {
    CHECK_CUDA(cudaMemsetAsync(payload, 0xFF, 2 * cap * sizeof(unsigned), s));
    CHECK_CUDA(cudaMemsetAsync(words, 0, 2 * cap * kMaxWordStride * sizeof(unsigned long long), s));
    CHECK_CUDA(cudaMemsetAsync(flags, 0, cap * sizeof(unsigned long long), s));
    CHECK_CUDA(cudaMemsetAsync(counters, 0, 8 * sizeof(unsigned long long), s));
    CHECK_CUDA(cudaMemsetAsync(violations, 0, sizeof(unsigned long long), s));
    CHECK_CUDA(cudaMemsetAsync(err, 0, sizeof(ErrorRecord), s));
    CHECK_CUDA(cudaMemsetAsync(abort_flag, 0, sizeof(unsigned), s));
    CHECK_CUDA(cudaStreamSynchronize(s));
  }
};

class Runner {
 public:
  Runner(Experiment& ex, SyncState& st, unsigned seed, unsigned long long timeout_ticks)
      : ex_(ex), st_(st), seed_(seed), timeout_(timeout_ticks) {}

  // Blocks of `threads` that the occupancy calculator says fit on one SM for this kernel.
  int per_sm(const Scheme& s, int threads) const {
    int n = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, s.fn, threads, 0));
    return n;
  }
  // The largest co-resident grid of this scheme (cluster schemes: whole clusters that fit).
  int max_blocks(const Scheme& s, int threads) const {
    int b = per_sm(s, threads) * ex_.sm_count();
    if (s.kind == kCluster) b = std::min(b, max_clusters(s, threads) * s.cluster);
    return b;
  }
  int max_clusters(const Scheme& s, int threads) const {
#if !defined(PORT_HIP)
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = s.cluster;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(s.cluster * ex_.sm_count());
    cfg.blockDim = dim3(threads);
    cfg.attrs = at;
    cfg.numAttrs = 1;
    int n = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveClusters(&n, s.fn, &cfg));
    return n;
#else
    (void)s; (void)threads;
    return 0;
#endif
  }

  // One launch of `iters` synchronisations. Co-residency is proven first, every time.
  void launch(const Scheme& s, int blocks, int threads, int iters, int check, int fault = kNoFault,
              int work = 0, int split_mode = 0) {
    const int fit = per_sm(s, threads) * ex_.sm_count();
    if (blocks > fit || blocks > st_.cap)
      FAIL("refusing to launch %s: %d blocks of %d threads cannot all be co-resident (occupancy allows %d per SM, "
           "%d in all); a grid barrier among them would deadlock",
           s.name, blocks, threads, fit / ex_.sm_count(), fit);
    SyncArgs a = {};
    a.nblocks = blocks;
    a.iters = iters;
    a.check = check;
    a.scheme = s.kind;
    a.gen0 = gen_;
    a.seed = seed_;
    a.payload = st_.payload;
    a.words = st_.words;
    a.word_stride = s.word_stride;
    a.flags = st_.flags;
    a.counter = st_.counters + 0;
    a.gen_flag = st_.counters + 1;
    a.sense_count = st_.counters + 2;
    a.violations = st_.violations;
    a.err = st_.err;
    a.abort_flag = st_.abort_flag;
    a.timeout_ticks = timeout_;
    a.work = work;
    a.split_mode = split_mode;
    a.key = -12345.678f;
    a.sink = st_.sink;
    a.fault = fault;
    a.fault_gen = gen_ + 3;
    a.fanin = s.fanin;
    if (is_sparse(s) && (s.fanin % 2 || s.fanin >= blocks || s.fanin > threads))
      FAIL("refusing to launch %s: a fan-in of %d needs an even count under %d blocks and at most %d threads",
           s.name, s.fanin, blocks, threads);
    gen_ += iters;
    void* args[] = {&a};
    if (s.kind == kCluster) {
#if !defined(PORT_HIP)
      const int nc = max_clusters(s, threads);
      if (blocks % s.cluster || blocks / s.cluster > nc)
        FAIL("refusing to launch %s: %d blocks in clusters of %d need %d co-resident clusters; the occupancy "
             "calculator allows %d", s.name, blocks, s.cluster, blocks / s.cluster, nc);
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute at[2];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = s.cluster;
      at[0].val.clusterDim.y = 1;
      at[0].val.clusterDim.z = 1;
      at[1].id = cudaLaunchAttributeCooperative;
      at[1].val.cooperative = 1;
      cfg.gridDim = dim3(blocks);
      cfg.blockDim = dim3(threads);
      cfg.stream = ex_.stream();
      cfg.attrs = at;
      cfg.numAttrs = cluster_coop_ok_ ? 2 : 1;
      cudaError_t e = cudaLaunchKernelExC(&cfg, s.fn, args);
      if (e != cudaSuccess && cluster_coop_ok_) {
        // Cooperative + cluster refused: co-residency then rests on the cluster occupancy proof above.
        (void)cudaGetLastError();
        cluster_coop_ok_ = false;
        ex_.note(std::string("cooperative attribute with clusters refused (") + cudaGetErrorString(e) +
                 "): cluster schemes launch with cudaLaunchKernelEx alone, co-residency proven by "
                 "cudaOccupancyMaxActiveClusters before each launch");
        cfg.numAttrs = 1;
        e = cudaLaunchKernelExC(&cfg, s.fn, args);
      }
      CHECK_CUDA(e);
#endif
    } else {
      CHECK_CUDA(cudaLaunchCooperativeKernel(s.fn, dim3(blocks), dim3(threads), args, 0, ex_.stream()));
    }
  }

  // After a set of launches: a timeout or a violation ends the run (exit 1).
  void verify(const Scheme& s, const char* phase) {
    CHECK_CUDA(cudaStreamSynchronize(ex_.stream()));
    ErrorRecord e;
    unsigned long long v = 0;
    CHECK_CUDA(cudaMemcpy(&e, st_.err, sizeof e, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(&v, st_.violations, sizeof v, cudaMemcpyDeviceToHost));
    if (e.kind) {
      std::fprintf(stderr,
                   "error: %s (%s): spin wait timed out: block %d thread %d waited at generation %llu for %llu and "
                   "saw %llu; every block bailed out\n",
                   s.name, phase, e.block, e.thread, e.generation, e.want, e.seen);
      std::exit(kExitFailure);
    }
    violations_seen_ += v;
    if (v || e.vkind) {
      std::fprintf(stderr,
                   "error: %s (%s): %llu stale payload value(s); first: block %d read producer %d at generation %llu: "
                   "got 0x%llx, expected 0x%llx\n",
                   s.name, phase, v, e.vblock, e.vproducer, e.vgeneration, e.vseen, e.vwant);
      std::exit(kExitFailure);
    }
  }

  unsigned long long violations_seen() const { return violations_seen_; }
  void reset() {
    st_.reset(ex_.stream());
    gen_ = 0;
  }

  // Per-synchronisation microseconds, one entry per launch of `iters`.
  Summary time(const Scheme& s, int blocks, int threads, int iters, int check, const TimingPlan& plan,
               int work = 0, int split_mode = 0) {
    auto v = time_launches([&](int) { launch(s, blocks, threads, iters, check, kNoFault, work, split_mode); }, plan,
                           ex_.stream());
    for (auto& x : v) x = x * 1e3 / iters;
    return summarize(v);
  }
  // Barriers per launch so that one launch takes about target_ms (the launch cost amortised).
  int pick_iters(const Scheme& s, int blocks, int threads, double target_ms, int work = 0, int split_mode = 0) {
    const int probe = 128;
    EventPair ev;
    launch(s, blocks, threads, 16, 0, kNoFault, work, split_mode);
    ev.start(ex_.stream());
    launch(s, blocks, threads, probe, 0, kNoFault, work, split_mode);
    const double us = ev.stop_ms(ex_.stream()) * 1e3 / probe;
    verify(s, "probe");
    if (sanitizing()) return 16;  // every code path still runs; instrumented barriers cost ms each
    int it = static_cast<int>(target_ms * 1e3 / std::max(us, 1e-3));
    return std::max(64, std::min(10000, it / 16 * 16));
  }

 private:
  Experiment& ex_;
  SyncState& st_;
  unsigned seed_;
  unsigned long long timeout_;
  unsigned long long gen_ = 0;
  bool cluster_coop_ok_ = true;
  unsigned long long violations_seen_ = 0;
};

struct Measured {
  const Scheme* s;
  int blocks, threads;
  Summary bare, payload;
  bool has_payload;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ','))
    if (!x.empty()) out.push_back(x);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Experiment ex("05-sync", "Grid-wide barriers, readiness polling and data-carried readiness against kernel boundaries.");
  std::string only, fault_name;
  long long timeout_ms = sanitizing() ? 60000 : 2000;  // instrumented spins under a sanitizer are slow
  bool skip_boundaries = false;
  ex.flags().add_string("only", &only, "comma-separated scheme names to run (default: all)");
  ex.flags().add_int("timeout-ms", &timeout_ms, 10, 60000, "spin-wait timeout on the constant-rate clock");
  ex.flags().add_bool("skip-boundaries", &skip_boundaries, "leave out the kernel-boundary family (partial reruns)");
  ex.flags().add_string("plant-fault", &fault_name, "hang | stale: plant a fault in the first scheme; the run must exit 1");
  std::vector<Scheme> schemes_all = all_schemes(), schemes;
  ex.validate_flags([&]() -> std::string {
    if (!fault_name.empty() && fault_name != "hang" && fault_name != "stale")
      return "--plant-fault must be hang or stale, not '" + fault_name + "'";
    for (auto& w : split_list(only)) {
      bool found = false;
      for (auto& s : schemes_all) found = found || w == s.name;
      if (!found) return "--only: unknown scheme '" + w + "'";
    }
    return "";
  });
  ex.start(argc, argv);
  const int fault = fault_name == "hang" ? kFaultHang : fault_name == "stale" ? kFaultStale : kNoFault;
  const std::vector<std::string> wanted = split_list(only);  // after parsing
  for (auto& s : schemes_all)
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), s.name) != wanted.end()) schemes.push_back(s);

  const bool quick = ex.quick();
  const int sms = ex.sm_count();
  const bool hopper = build_sm() >= 90 && ex.prop().major >= 9;
  const std::vector<int> thread_counts = quick ? std::vector<int>{256} : std::vector<int>{128, 256, 512, 1024};
  // 0 = max co-resident. Under a sanitizer only 1 per SM: racecheck spends minutes per scheme
  // at 1056 blocks, and the code paths are the same at every grid.
  const std::vector<int> grid_kinds = sanitizing() ? std::vector<int>{1}
                                      : quick      ? std::vector<int>{1, 0}
                                                   : std::vector<int>{1, 2, 0};
  const TimingPlan plan = quick ? TimingPlan{1, 3, 1} : TimingPlan{1, 7, 1};
  const double target_ms = quick ? 1.5 : 3.0;
  // checked crossings per scheme at the headline point (under a sanitizer: enough for two launches)
  const long long endurance = sanitizing() ? 512 : quick ? 20000 : 1000000;
  const int head_threads = 256;
  // FMA steps between arrive and wait (split table); a straggler's steps, a subset of those
  // (the split table's work-alone time is the straggler's own)
  const std::vector<int> split_works = quick ? std::vector<int>{0, 256, 1024} : std::vector<int>{0, 64, 256, 1024, 4096};
  const std::vector<int> straggler_works = quick ? std::vector<int>{0, 1024} : std::vector<int>{0, 256, 1024, 4096};

  if (ex.list()) {
    std::printf("# 05-sync would run %zu schemes x threads {", schemes.size());
    for (int t : thread_counts) std::printf(" %d", t);
    std::printf(" } x blocks { 1/SM (%d), 2/SM (%d), max co-resident (occupancy at run time) }\n", sms, 2 * sms);
    for (auto& s : schemes)
      std::printf("scheme: %-20s %-16s %s%s\n", s.name, order_name(s.order), s.barrier ? "barrier" : "readiness",
                  s.kind == kCluster ? " (sm_90 clusters)" : "");
    std::printf("split arrive/wait: monotonic acq/rel, work {");
    for (int w : split_works) std::printf(" %d", w);
    std::printf(" } FMA steps, %d blocks x %d threads\n", sms, head_threads);
    std::printf("a straggler each generation: monotonic_acqrel, data_carried_padded, sparse2_data; one block's work {");
    for (int w : straggler_works) std::printf(" %d", w);
    std::printf(" } FMA steps, %d blocks x %d threads\n", sms, head_threads);
    std::printf("boundaries: empty and 32 MB read x {stream, stream+PDL, graph, graph+PDL}, fused 8x32 MB read\n");
    std::printf("crossings checked per correct scheme at %d x %d: >= %lld\n", sms, head_threads, endurance);
    return kExitOk;
  }

  // The constant-rate clock's rate, measured (never assumed): two reads a host-timed 100 ms apart.
  double clock_hz = 0;
  {
    unsigned long long* d = nullptr;
    unsigned long long h[2] = {0, 0};
    CHECK_CUDA(cudaMalloc(&d, 2 * sizeof(unsigned long long)));
    read_const_clock<<<1, 1>>>(d);
    CHECK_CUDA(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    read_const_clock<<<1, 1>>>(d);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    read_const_clock<<<1, 1>>>(d + 1);
    CHECK_CUDA(cudaDeviceSynchronize());
    const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    (void)cudaFree(d);
    clock_hz = (h[1] - h[0]) / host_s;
    if (!(clock_hz > 1e6)) FAIL("the constant-rate clock did not advance (%llu -> %llu)", h[0], h[1]);
  }
  const unsigned long long timeout_ticks = static_cast<unsigned long long>(timeout_ms * 1e-3 * clock_hz);
  int coop = 0, dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  if (!coop) FAIL("device %d does not support cooperative launch: grid barriers cannot be proven co-resident", dev);

  const uint64_t seed64 = fresh_seed();
  const unsigned seed = static_cast<unsigned>(seed64 ^ (seed64 >> 32));
  SyncState st;
  {
    int cap = 0;
    for (auto& s : schemes_all)
      for (int t : {128, 256, 512, 1024}) {
        int n = 0;
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, s.fn, t, 0));
        cap = std::max(cap, n * sms);
      }
    st.alloc(std::max(cap, 2 * sms));
  }
  Runner run(ex, st, seed, timeout_ticks);
  ex.note("seed " + std::to_string(seed) + "; spin timeout " + std::to_string(timeout_ms) +
          " ms on the constant-rate clock (measured at " + std::to_string(clock_hz / 1e6).substr(0, 7) + " MHz); every figure is microseconds per synchronisation, the median of " +
          std::to_string(plan.reps) + " launches of ~" + std::to_string(static_cast<int>(target_ms)) +
          " ms each (the barriers per launch are in the iters column)");
  ex.note("bare: the synchronisation alone; +payload: every block then reads all blocks' payloads and checks them "
          "(for ready_* and data_carried that read is the wait itself; sparseF_* read only their F producers')");
  if (!hopper) ex.note("cluster schemes and PDL need sm_90: compiled out or refused on this build/device");

  // Planted fault: the first scheme that can carry it, one checked launch; verify() must exit 1.
  if (fault != kNoFault) {
    for (auto& s : schemes) {
      if (s.kind == kCgGrid && fault == kFaultHang) continue;  // the library's wait has no timeout to prove
      if (s.kind == kCluster && !hopper) continue;
      run.reset();
      std::fprintf(stderr, "05-sync: planting '%s' in %s (%d x %d); this run must fail\n", fault_name.c_str(), s.name,
                   sms, head_threads);
      run.launch(s, whole_clusters(s, sms), head_threads, 64, 1, fault);
      run.verify(s, "planted fault");
      FAIL("planted fault '%s' in %s was not detected", fault_name.c_str(), s.name);
    }
    FAIL("no scheme selected can carry the planted fault");
  }

  // ---- sweep -----------------------------------------------------------------------------------
  std::vector<Measured> all;
  std::map<std::string, long long> crossings;
  struct Job { const Scheme* s; int blocks, threads, per_sm_label; };
  std::vector<Job> jobs;
  for (int t : thread_counts)
    for (int gk : grid_kinds)
      for (auto& s : schemes) {
        if (s.kind == kCluster && !hopper) continue;
        const int maxb = whole_clusters(s, run.max_blocks(s, t));
        const int b = whole_clusters(s, gk == 0 ? maxb : gk * sms);
        if (gk == 0 && (maxb == whole_clusters(s, sms) || maxb == whole_clusters(s, 2 * sms)) &&
            std::find(grid_kinds.begin(), grid_kinds.end(), maxb == whole_clusters(s, sms) ? 1 : 2) != grid_kinds.end())
          continue;  // max co-resident equals a row already run
        if (b > maxb) {
          ex.note(std::string(s.name) + ": " + std::to_string(b) + " blocks of " + std::to_string(t) +
                  " threads cannot be co-resident (max " + std::to_string(maxb) + "): skipped");
          continue;
        }
        jobs.push_back({&s, b, t, gk});
      }
  int done = 0;
  for (auto& j : jobs) {
    const Scheme& s = *j.s;
    ex.progress(done++, static_cast<int>(jobs.size()), "%s, %d blocks x %d threads", s.name, j.blocks, j.threads);
    run.reset();
    const int iters = run.pick_iters(s, j.blocks, j.threads, target_ms);
    Measured m{&s, j.blocks, j.threads, {}, {}, false};
    if (is_correct_scheme(s)) {
      // Correct before timed: one whole launch with every payload checked.
      run.launch(s, j.blocks, j.threads, iters, 1);
      run.verify(s, "validation");
      crossings[s.name] += iters;
    }
    m.bare = run.time(s, j.blocks, j.threads, iters, 0, plan);
    run.verify(s, "timed, bare");
    if (is_correct_scheme(s)) {
      m.payload = run.time(s, j.blocks, j.threads, iters, 1, plan);
      run.verify(s, "timed, with payload");
      m.has_payload = true;
      crossings[s.name] += static_cast<long long>(iters) * (plan.warmup + plan.reps * plan.iters);
    }
    all.push_back(m);
    Row r;
    r.add("scheme", s.name)
        .add("order", order_name(s.order))
        .add("blocks", j.blocks)
        .add("threads", j.threads)
        .add("grid", j.per_sm_label ? std::to_string(j.per_sm_label) + "/SM" : std::string("max"))
        .add("iters", iters)
        .add("bare_median_us", m.bare.median, 3, "bare µs")
        .add("bare_min_us", m.bare.min, 3, "min")
        .add("bare_sd_us", m.bare.sd, 3, "sd")
        .add("payload_median_us", m.has_payload ? Json(m.payload.median) : Json(), 3, "+payload µs")
        .add("payload_min_us", m.has_payload ? Json(m.payload.min) : Json(), 3, "min")
        .add("payload_sd_us", m.has_payload ? Json(m.payload.sd) : Json(), 3, "sd")
        .extra("kind", s.barrier ? "barrier" : "readiness")
        .extra("correct", is_correct_scheme(s))
        .extra("n", m.bare.n);
    ex.add("per-synchronisation cost against blocks and threads", r);
  }

  // ---- endurance: >= 10^6 checked crossings per correct scheme at the headline point ----------
  for (auto& s : schemes) {
    if (!is_correct_scheme(s) || (s.kind == kCluster && !hopper)) continue;
    run.reset();
    long long left = endurance;
    const int per = sanitizing() ? 256 : 10000;  // barriers per launch: ~15 ms at ~1.5 us each
    ex.progress(done, static_cast<int>(jobs.size()), "%s: %lld checked crossings at %d x %d", s.name, endurance,
                whole_clusters(s, sms), head_threads);
    while (left > 0) {
      const int it = static_cast<int>(std::min<long long>(per, left));
      run.launch(s, whole_clusters(s, sms), head_threads, it, 1);
      left -= it;
    }
    run.verify(s, "endurance");
    crossings[s.name] += endurance;
  }

  // ---- headline table (1 block per SM, 256 threads) -------------------------------------------
  auto find = [&](const std::string& name, int blocks, int threads) -> const Measured* {
    for (auto& m : all)
      if (m.s->name == name && m.blocks == blocks && m.threads == threads) return &m;
    return nullptr;
  };
  const Measured* cgm = find("cg_grid_sync", sms, head_threads);
  const Measured *best_barrier = nullptr, *best_sync = nullptr;
  for (auto& m : all) {
    const Scheme& s = *m.s;
    if (m.blocks != whole_clusters(s, sms) || m.threads != head_threads) continue;
    const Measured* twin = s.relaxed_twin[0] ? find(s.relaxed_twin, m.blocks, head_threads) : nullptr;
    Row r;
    r.add("scheme", s.name)
        .add("order", order_name(s.order))
        .add("blocks", m.blocks)
        .add("kind", s.barrier ? "barrier" : "readiness")
        .add("bare_median_us", m.bare.median, 3, "bare µs")
        .add("relaxed_floor_us", twin ? Json(twin->bare.median) : Json(), 3, "relaxed floor µs")
        .add("ordering_us", twin ? Json(m.bare.median - twin->bare.median) : Json(), 3, "ordering µs")
        .add("payload_median_us", m.has_payload ? Json(m.payload.median) : Json(), 3, "+payload µs")
        .add("vs_cg", m.has_payload && cgm ? Json(m.payload.median / cgm->payload.median) : Json(), 2, "vs cg (+payload)")
        .add("crossings_checked", crossings.count(s.name) ? Json(crossings[s.name]) : Json(), -1, "crossings checked")
        .add("violations", is_correct_scheme(s) ? Json(0) : Json(), -1, "violations");
    ex.add("headline: 1 block per SM, 256 threads (one thread per block arrives)", r);
    if (!is_correct_scheme(s)) continue;
    if (s.barrier && (!best_barrier || m.bare.median < best_barrier->bare.median)) best_barrier = &m;
    if (is_sparse(s)) continue;  // a sparse dependency is not the all-to-all exchange best_sync names
    if (!best_sync || m.payload.median < best_sync->payload.median) best_sync = &m;
  }

  // ---- split arrive/wait: how much work hides the barrier --------------------------------------
  const Scheme split = {"split_monotonic_acqrel", kSplit, kAcqRel, 0, (const void*)sync_split, true, ""};
  std::map<int, double> work_alone;  // FMA steps -> µs a generation with the work alone (mode 2)
  {
    for (int w : split_works) {
      Summary sums[3];  // by mode: 0 split, 1 joined, 2 work only
      int iters = 0;
      for (int mode : {1, 0, 2}) {
        run.reset();
        iters = run.pick_iters(split, sms, head_threads, target_ms, w, mode);
        run.launch(split, sms, head_threads, iters, 1, kNoFault, w, mode);
        run.verify(split, "validation");
        Summary sm = run.time(split, sms, head_threads, iters, 1, plan, w, mode);
        run.verify(split, "timed");
        sums[mode] = sm;
      }
      const double t[3] = {sums[0].median, sums[1].median, sums[2].median};
      work_alone[w] = t[2];
      const double barrier_alone = t[1] - t[2];  // joined minus work alone
      Row r;
      r.add("work_fma", w, -1, "FMA steps between")
          .add("work_only_us", t[2], 3, "work alone µs")
          .add("joined_us", t[1], 3, "work then barrier µs")
          .add("split_us", t[0], 3, "arrive, work, wait µs")
          .add("hidden_fraction", barrier_alone > 0 ? (t[1] - t[0]) / barrier_alone : 0.0, 2, "barrier hidden")
          .extra("blocks", sms)
          .extra("threads", head_threads)
          .extra("iters", iters)
          .extra("work_only_min_us", sums[2].min)
          .extra("work_only_sd_us", sums[2].sd)
          .extra("joined_min_us", sums[1].min)
          .extra("joined_sd_us", sums[1].sd)
          .extra("split_min_us", sums[0].min)
          .extra("split_sd_us", sums[0].sd)
          .extra("n", sums[0].n);
      ex.add("split arrive/wait (monotonic acq/rel, +payload check, 1 block per SM x 256)", r);
    }
  }

  // ---- a straggler each generation: what a barrier, an all-to-all exchange and a sparse one
  // add to one block's extra work (a different block each generation) --------------------------
  {
    // The schemes of all_schemes() by these names, each launched through its *_skew kernel.
    std::vector<Scheme> skewed;
    for (auto [name, fn] : {std::pair<const char*, const void*>{"monotonic_acqrel", (const void*)sync_monotonic_acqrel_skew},
                            {"data_carried_padded", (const void*)sync_data_carried_skew},
                            {"sparse2_data", (const void*)sync_sparse_data_skew}})
      for (const Scheme& s : schemes_all)
        if (std::strcmp(s.name, name) == 0) {
          skewed.push_back(s);
          skewed.back().fn = fn;
        }
    if (skewed.size() != 3) FAIL("internal: the straggler's schemes are not all in the scheme table");
    for (int w : straggler_works) {
      const double alone = work_alone.at(w);  // every block does W, no synchronisation
      for (const Scheme& s : skewed) {
        run.reset();
        const int iters = run.pick_iters(s, sms, head_threads, target_ms, w);
        run.launch(s, sms, head_threads, iters, 1, kNoFault, w);
        run.verify(s, "straggler, validation");
        const Summary sm = run.time(s, sms, head_threads, iters, 1, plan, w);
        run.verify(s, "straggler, timed");
        Row r;
        r.add("scheme", s.name)
            .add("work_fma", w, -1, "straggler's FMA steps")
            .add("work_alone_us", alone, 3, "its work alone µs")
            .add("per_generation_us", sm.median, 3, "µs a generation (+payload)")
            .add("beyond_work_us", sm.median - alone, 3, "beyond the work µs")
            .extra("blocks", sms)
            .extra("threads", head_threads)
            .extra("iters", iters)
            .extra("min_us", sm.min)
            .extra("sd_us", sm.sd)
            .extra("n", sm.n);
        ex.add("a straggler each generation (one block does the work first, a different one each time; 1 block per SM x 256)", r);
        if (w == 1024) ex.summary().set(std::string("straggler_") + s.name + "_beyond_work_us", sm.median - alone);
      }
    }
  }

  // ---- kernel boundaries -----------------------------------------------------------------------
  double stream_us = NAN, graph_us = NAN, pdl_us = NAN;
  if (!skip_boundaries) {
    const Ceiling ceiling = obtain_ceiling(ex);
    const size_t vec_per_buf = (32u << 20) / sizeof(uint4);  // 32 MB per launch
    const int nbuf = 8;                                      // 256 MB rotating: > 4x the 60 MB L2
    if (static_cast<double>(nbuf) * vec_per_buf * 16 < 4.0 * ex.l2_bytes())
      FAIL("refusing: %d x 32 MB is not 4x the %.0f MB L2", nbuf, ex.l2_bytes() / 1e6);
    uint4* buf = nullptr;
    unsigned long long *sums = nullptr, *counter = nullptr;
    const int chain = quick ? 32 : 64;  // launches per stream batch / per graph
    CHECK_CUDA(cudaMalloc(&buf, nbuf * vec_per_buf * sizeof(uint4)));
    CHECK_CUDA(cudaMalloc(&sums, (chain + 1) * sizeof(unsigned long long)));
    CHECK_CUDA(cudaMalloc(&counter, sizeof(unsigned long long)));
    fill_random_u32(reinterpret_cast<uint32_t*>(buf), nbuf * vec_per_buf * 4, seed64);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<unsigned long long> expect(nbuf, 0);
    for (int k = 0; k < nbuf; ++k)
      for (size_t w = 0; w < vec_per_buf * 4; ++w) expect[k] += hash32(seed64, k * vec_per_buf * 4 + w);
    const int read_blocks = 2 * sms, read_threads = 512, empty_blocks = sms, empty_threads = 256;
    cudaStream_t s = ex.stream();

    // mode: 0 stream, 1 stream+PDL, 2 graph, 3 graph+PDL
    auto launch_one = [&](int kernel, int k, bool pdl, cudaStream_t str) {
      const int blocks = kernel ? read_blocks : empty_blocks, threads = kernel ? read_threads : empty_threads;
      const uint4* p = buf + static_cast<size_t>(k % nbuf) * vec_per_buf;
      unsigned long long* out = sums + (k % chain);
      size_t n = vec_per_buf;
#if !defined(PORT_HIP)
      if (pdl) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(threads);
        cfg.stream = str;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        if (kernel) CHECK_CUDA(cudaLaunchKernelEx(&cfg, boundary_read32, p, n, out));
        else CHECK_CUDA(cudaLaunchKernelEx(&cfg, boundary_empty, counter));
        return;
      }
#endif
      (void)pdl;
      if (kernel) boundary_read32<<<blocks, threads, 0, str>>>(p, n, out);
      else boundary_empty<<<blocks, threads, 0, str>>>(counter);
    };
    const char* mode_names[4] = {"stream", "stream + PDL", "graph", "graph + PDL"};
    // Correct before timed: a chain of `chain` launches leaves the counter at `chain` and every
    // read launch's exact sum of its buffer.
    auto validate = [&](int kernel, int mode) {
      CHECK_CUDA(cudaMemsetAsync(sums, 0, (chain + 1) * sizeof(unsigned long long), s));
      CHECK_CUDA(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), s));
      const bool pdl = mode == 1 || mode == 3;
      if (mode >= 2) {
        Graph g;
        g.capture([&](cudaStream_t cs) { for (int k = 0; k < chain; ++k) launch_one(kernel, k, pdl, cs); }, s);
        g.launch(s);
      } else {
        for (int k = 0; k < chain; ++k) launch_one(kernel, k, pdl, s);
      }
      CHECK_LAUNCH();
      CHECK_CUDA(cudaStreamSynchronize(s));
      std::vector<unsigned long long> got(chain + 1);
      unsigned long long c = 0;
      CHECK_CUDA(cudaMemcpy(got.data(), sums, got.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(&c, counter, sizeof c, cudaMemcpyDeviceToHost));
      if (kernel == 0 && c != static_cast<unsigned long long>(chain))
        FAIL("boundary %s: counter %llu after %d ordered launches", mode_names[mode], c, chain);
      if (kernel == 1)
        for (int k = 0; k < chain; ++k)
          if (got[k] != expect[k % nbuf])
            FAIL("boundary 32 MB read, %s: launch %d summed %llu, expected %llu", mode_names[mode], k, got[k],
                 expect[k % nbuf]);
    };
    // Fused reference: one launch reads all 8 buffers; per 32 MB it has (almost) no boundary.
    CHECK_CUDA(cudaMemsetAsync(sums + chain, 0, sizeof(unsigned long long), s));
    boundary_read32<<<read_blocks, read_threads, 0, s>>>(buf, nbuf * vec_per_buf, sums + chain);
    CHECK_LAUNCH();
    {
      unsigned long long got = 0, want = 0;
      for (auto e : expect) want += e;
      CHECK_CUDA(cudaMemcpyAsync(&got, sums + chain, sizeof got, cudaMemcpyDeviceToHost, s));
      CHECK_CUDA(cudaStreamSynchronize(s));
      if (got != want) FAIL("fused 256 MB read summed %llu, expected %llu", got, want);
    }
    const TimingPlan fplan = quick ? TimingPlan{3, 3, 10} : TimingPlan{10, 7, 20};
    const Summary fused = summarize(time_launches(
        [&](int) { boundary_read32<<<read_blocks, read_threads, 0, s>>>(buf, nbuf * vec_per_buf, sums + chain); },
        fplan, s));
    const double fused_per_us = fused.median * 1e3 / nbuf;
    const double fused_gbps = gbps(nbuf * vec_per_buf * 16.0, fused.median);  // 256 MB per launch
    ex.require_below_ceiling(fused_gbps, ceiling.gbps, "fused 256 MB read");
    {
      Row r;
      r.add("kernel", "fused 8 x 32 MB read, one launch (reference)")
          .add("mode", "stream")
          .add("per_launch_us", fused_per_us, 3, "µs per 32 MB")
          .add("min_us", fused.min * 1e3 / nbuf, 3, "min")
          .add("sd_us", fused.sd * 1e3 / nbuf, 3, "sd")
          .add("boundary_us", 0.0, 3, "boundary µs")
          .add("gbps", fused_gbps, 1, "GB/s")
          .add("pct_of_ceiling", 100.0 * fused_gbps / ceiling.gbps, 1, "% of ceiling");
      ex.add("kernel boundaries (per launch)", r);
    }
    for (int kernel : {0, 1})
      for (int mode = 0; mode < 4; ++mode) {
        const bool pdl = mode == 1 || mode == 3;
        if (pdl && !hopper) continue;
        validate(kernel, mode);
        const TimingPlan bplan = quick ? TimingPlan{chain, 3, chain} : TimingPlan{2 * chain, 9, chain};
        std::vector<double> v;
        if (mode >= 2) {
          Graph g;
          g.capture([&](cudaStream_t cs) { for (int k = 0; k < chain; ++k) launch_one(kernel, k, pdl, cs); }, s);
          v = time_graph(g, TimingPlan{3, bplan.reps, 1}, s);
          for (auto& x : v) x /= chain;
        } else {
          v = time_launches([&](int k) { launch_one(kernel, k, pdl, s); }, bplan, s);
        }
        for (auto& x : v) x *= 1e3;  // ms -> us per launch
        const Summary sm = summarize(v);
        const double boundary = kernel ? sm.median - fused_per_us : sm.median;
        Row r;
        r.add("kernel", kernel ? "32 MB read" : "empty (one counter increment)")
            .add("mode", mode_names[mode])
            .add("per_launch_us", sm.median, 3, "µs per launch")
            .add("min_us", sm.min, 3, "min")
            .add("sd_us", sm.sd, 3, "sd")
            .add("boundary_us", boundary, 3, "boundary µs")
            .add("gbps", kernel ? Json(gbps(vec_per_buf * 16.0, sm.median * 1e-3)) : Json(), 1, "GB/s")
            .add("pct_of_ceiling", kernel ? Json(100.0 * gbps(vec_per_buf * 16.0, sm.median * 1e-3) / ceiling.gbps) : Json(), 1, "% of ceiling");
        ex.add("kernel boundaries (per launch)", r);
        if (kernel == 1) ex.require_below_ceiling(gbps(vec_per_buf * 16.0, sm.median * 1e-3), ceiling.gbps, "32 MB read");
        if (kernel == 0 && mode == 0) stream_us = sm.median;
        if (kernel == 0 && mode == 2) graph_us = sm.median;
        if (kernel == 0 && mode == 3) pdl_us = sm.median;
      }
    ex.note("boundaries: empty kernel " + std::to_string(empty_blocks) + " x " + std::to_string(empty_threads) +
            ", read kernel " + std::to_string(read_blocks) + " x " + std::to_string(read_threads) + "; chains of " +
            std::to_string(chain) + " launches; 32 MB read boundary = per-launch time minus the fused read's time per "
            "32 MB; ceiling " + std::to_string(static_cast<int>(ceiling.gbps)) + " GB/s from " + ceiling.source);
    (void)cudaFree(buf);
    (void)cudaFree(sums);
    (void)cudaFree(counter);
  }

  // ---- summary ---------------------------------------------------------------------------------
  long long min_cross = -1;
  for (auto& kv : crossings) min_cross = min_cross < 0 ? kv.second : std::min(min_cross, kv.second);
  if (cgm) {
    ex.summary().set("cg_grid_sync_us", cgm->bare.median);
    ex.summary().set("cg_grid_sync_payload_us", cgm->payload.median);
  }
  if (best_barrier) {
    ex.summary().set("best_barrier_us", best_barrier->bare.median);
    ex.summary().set("best_barrier_name", best_barrier->s->name);
    const char* twin = best_barrier->s->relaxed_twin;
    const Measured* floor = twin[0] ? find(twin, best_barrier->blocks, head_threads) : nullptr;
    if (!floor)  // cg_grid_sync has no relaxed twin: the cheapest relaxed barrier stands in
      for (auto& m : all)
        if (m.blocks == whole_clusters(*m.s, sms) && m.threads == head_threads && m.s->barrier && !is_correct_scheme(*m.s) &&
            (!floor || m.bare.median < floor->bare.median))
          floor = &m;
    if (floor) {
      ex.summary().set("relaxed_floor_us", floor->bare.median);
      ex.summary().set("relaxed_floor_name", floor->s->name);
    }
  }
  if (best_sync) {
    ex.summary().set("best_sync_us", best_sync->payload.median);
    ex.summary().set("best_sync_name", best_sync->s->name);
    if (cgm) ex.summary().set("best_sync_vs_cg", best_sync->payload.median / cgm->payload.median);
  }
  // Sparse readiness beside the all-to-all one, payload checked, 1 block per SM x 256.
  for (const char* f : {"2", "8", "32"}) {
    if (const Measured* m = find(std::string("sparse") + f + "_acqrel", sms, head_threads))
      ex.summary().set(std::string("sparse") + f + "_us", m->payload.median);
    if (const Measured* m = find(std::string("sparse") + f + "_data", sms, head_threads))
      ex.summary().set(std::string("sparse") + f + "_data_us", m->payload.median);
  }
  {
    const Measured *sp = find("sparse2_acqrel", sms, head_threads), *rd = find("ready_acqrel", sms, head_threads);
    if (sp && rd) ex.summary().set("sparse2_vs_ready", sp->payload.median / rd->payload.median);
  }
  if (!skip_boundaries) {
    ex.summary().set("stream_boundary_us", stream_us);
    ex.summary().set("graph_boundary_us", graph_us);
    if (hopper) ex.summary().set("pdl_boundary_us", pdl_us);
  }
  ex.summary().set("violations", run.violations_seen());  // any violation has already exited 1
  ex.summary().set("crossings_checked_min", min_cross);
  ex.summary().set("blocks", sms);
  ex.summary().set("threads", head_threads);
  return ex.finish();
}
