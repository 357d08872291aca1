// 02-gemv: batch-1 FP16 GEMV y = W x, from the original three versions to the bandwidth ceiling,
// next to the vendor library.
//
//   make 02-gemv/gemv && 02-gemv/gemv [--quick] [--json PATH] [--shape NxK] [--launches N]
//   make 02-gemv/gemv.s          PTX (+ SASS where cuobjdump exists) of every kernel
//   make ARCH=gfx942 O=build/gfx942/ build/gfx942/02-gemv/gemv.s     AMDGCN (device code only)
//
// The ladder (every rung runs in every invocation):
//   0a cuBLAS     cublasGemmEx, n = 1, FP32 compute                      (CUDA)
//   0b cuBLASLt   cublasLtMatmul, the heuristic's first algorithm          (CUDA; hipBLASLt on HIP
//                 behind HAVE_HIPBLASLT, never built here)
//   1  gemv_one_accumulator     warp per row, 4-byte loads, one accumulator: a wait per iteration
//   2  gemv_four_accumulators   four accumulators: four loads issued before the first is used
//   3  gemv_wide_loads          as 2 with 16-byte loads per lane
//   4  gemv_rows_in_flight_rR   R rows per warp, all 16 loads per lane of a chunk in flight,
//                               streaming cache policy, grid from the shape, SM count, occupancy
//      gemv_rows_lean_r1c8      one row per warp, 8 loads per lane per chunk, <= 85 registers: three
//                               blocks of 256 per SM, room for the next chained GEMV beside them
//   5  gemv_split_k_rR          a block per R rows, K split across the block (tall-K shapes)
//   6  gemv_tensor_core_ksS     mma.sync m16n8k16, x in column 0 of B; S warps split K (CUDA)
//      gemv_tensor_rows_rR      mma.sync with rows in flight's loads: the lane's weights in A row
//                               g, its x in B column g, D's diagonal kept (CUDA)
//      gemv_tensor_rows_lean_r1c8  the same with v4 lean's shape (CUDA)
//   8  gemv_bulk_ring           a block's row groups streamed by the copy engine into a shared-memory ring (CUDA)
//   9  gemv_preload_l2[last]    one block per SM; most of its share of rows requested before the wait (copy
//                               engine into one-row slots, and registers), the rest through the freed slots (CUDA)
//   7  *_pdl                    4, 5, 6 in chained mode: programmatic dependent launch, weights
//                               requested before griddepcontrol.wait, x read after it (sm_90);
//                               4 and 6 rows also as *_late1_pdl (the next kernel released late)
//                               and *_nowait_pdl (no wait: the zero-cost-dependency bound)
// Modes: isolated = a CUDA graph of 200 launches over rotating weight copies (20x L2), time
// per GEMV = graph time / launches; chained = the same graph with PDL edges.
// Every configuration is validated (CPU double reference, fresh random inputs, NaN-poisoned y,
// rel L2 <= 1e-3) before it is timed; after timing, one more replay is validated too.
// Counters (separate run, never under the timing): see results/02-gemv.md for the ncu command.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>
#include "../common/ceiling.h"
#include "../common/chain.h"
#include "../common/launch_size.h"
#include "../common/two_buffer.h"
#include <cstdint>
#include <cstring>

// ---------------------------------------------------------------------------------------------
// The hand-written kernels.
// ---------------------------------------------------------------------------------------------
//
// Every kernel computes y[N] = W[N,K] x[K], W row-major FP16, x and y FP16, FP32 accumulation,
// and has the one signature GemvKernel. Each is an extern "C" symbol (templates are stamped
// into named wrappers) so that 02-gemv/asm.rules can name it.
//
// Bytes moved per GEMV: gemv_bytes(N, K) = 2NK + 2K + 2N (common/sizes.h), the one declaration
// every GB/s and MBU figure derives from. Napkin: 4096x4096 -> 33.55 MB, 99.95% of it weights.

typedef void (*GemvKernel)(const __half*, const __half*, __half*, int, int);

#define GEMV_ARGS const __half* __restrict__ W, const __half* __restrict__ x, __half* __restrict__ y, int N, int K

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------
// The ring rungs' geometry (v6 ring, v8; kernels below): stages of up to 32 KB of whole rows.
constexpr int kRingStageBytes = 32768;
constexpr int kRingMaxStages = 8;
constexpr int kRingPlannedMaxStages = 6;  // the largest ring the planner asks for (192 KB)
constexpr int kRingThreads = 256;
constexpr int kRingMaxRows = 8;
__host__ __device__ inline int ring_rows_per_stage(int K) {
  const int r = kRingStageBytes / (2 * K);
  return r < 1 ? 1 : (r > kRingMaxRows ? kRingMaxRows : r);
}
inline size_t ring_smem_bytes(int K, int stages) { return static_cast<size_t>(stages) * ring_rows_per_stage(K) * 2 * K; }
// CUDA on sm_90 only (the copy engine); K a multiple of 2048 (whole 16-byte columns per
// thread) and a row within one stage.
inline bool ring_applies(int K) {
#if defined(PORT_HIP)
  (void)K;
  return false;
#else
  return K % 2048 == 0 && K <= 16384;
#endif
}
// The preloaded-share rung's geometry (v9, kernels below).
constexpr int kPreThreads = 256;
constexpr int kPreRegVecs = 20;      // 16-byte weight vectors a thread holds across the wait (80 registers)
constexpr int kPreMaxRows = 64;      // rows a block may own (its partial sums live in shared memory)
constexpr int kPreMaxSlots = 32;     // one-row shared-memory slots at most (26 at K = 2048), an mbarrier each
constexpr int kPreGroup = 4;         // rows summed together (their butterflies interleaved)
constexpr unsigned kPreSmemBytes = 104 * 1024;  // two blocks per SM: 2 x (104 + 2 static + 1 reserved) KB
// Rows of a block's share held in shared memory: as many whole rows as kPreSmemBytes holds.
inline int pre_smem_rows(int K, int rows) { return std::min(rows, static_cast<int>(kPreSmemBytes / (2u * K))); }
inline int pre_rows_per_block(int N, int grid) { return (N + grid - 1) / grid; }
inline size_t pre_smem_bytes(int N, int K, int grid) {
  return static_cast<size_t>(pre_smem_rows(K, pre_rows_per_block(N, grid))) * 2 * K;
}
inline bool preload_applies(int N, int K, int sms) {
#if defined(PORT_HIP)
  (void)N; (void)K; (void)sms;
  return false;
#else
  return (K == 2048 || K == 4096 || K == 8192) && pre_rows_per_block(N, std::min(N, sms)) <= kPreMaxRows;
#endif
}
#if defined(PORT_HIP)
typedef _Float16 gemv_half2_t __attribute__((ext_vector_type(2)));
#endif

__device__ __forceinline__ vec4u zero4() {
#if defined(PORT_HIP)
  return vec4u{0u, 0u, 0u, 0u};
#else
  return make_uint4(0u, 0u, 0u, 0u);
#endif
}

// acc + w.lo*x.lo + w.hi*x.hi with FP32 accumulation. gfx942: one v_dot2(c)_f32_f16, as in
// the original; sm_90 has no mixed FP16->FP32 dot, so two conversions and two FFMAs per word.
__device__ __forceinline__ float dot2(uint32_t w, uint32_t xv, float acc) {
#if defined(PORT_HIP)
  return __builtin_amdgcn_fdot2(__builtin_bit_cast(gemv_half2_t, w), __builtin_bit_cast(gemv_half2_t, xv), acc, false);
#else
  __half2 wh, xh;
  static_assert(sizeof wh == sizeof w, "half2 is 4 bytes");
  memcpy(&wh, &w, 4);
  memcpy(&xh, &xv, 4);
  const float2 wf = __half22float2(wh), xf = __half22float2(xh);
  return fmaf(wf.y, xf.y, fmaf(wf.x, xf.x, acc));
#endif
}

// Eight halves (one 16-byte vector) into two partial sums: two chains halve the FMA latency
// each row's accumulation waits on.
__device__ __forceinline__ void dot8(const vec4u& w, const vec4u& xv, float& a0, float& a1) {
  a0 = dot2(w.x, xv.x, a0);
  a1 = dot2(w.y, xv.y, a1);
  a0 = dot2(w.z, xv.z, a0);
  a1 = dot2(w.w, xv.w, a1);
}

// Sum over the warp (wave); the total is valid in every lane.
// sm_90: butterfly shuffles (SHFL.BFLY). gfx942: the original's DPP chain: an inclusive scan
// inside each 16-lane row (row_shr 1, 2, 4, 8), then row_bcast:15 and row_bcast:31 carry the row
// sums up to lane 63, which readlane broadcasts. No LDS traffic, no ds_swizzle.
__device__ __forceinline__ float warp_sum(float v) {
#if defined(PORT_HIP)
  static_assert(PORT_WARP_SIZE == 64, "the DPP row_bcast chain is written for wave64");
  int s = __builtin_bit_cast(int, v);
#define GEMV_DPP_ADD(CTRL, ROWS, BANKS, BOUND)                                                         \
  s = __builtin_bit_cast(int, __builtin_bit_cast(float, s) +                                            \
                                   __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, s, CTRL, ROWS, BANKS, BOUND)))
  GEMV_DPP_ADD(0x111, 0xf, 0xf, true);   // row_shr:1
  GEMV_DPP_ADD(0x112, 0xf, 0xf, true);   // row_shr:2
  GEMV_DPP_ADD(0x114, 0xf, 0xf, true);   // row_shr:4
  GEMV_DPP_ADD(0x118, 0xf, 0xf, true);   // row_shr:8: lane 15 of each row holds the row's sum
  GEMV_DPP_ADD(0x142, 0xa, 0xf, false);  // row_bcast:15 into rows 1 and 3
  GEMV_DPP_ADD(0x143, 0xc, 0xf, false);  // row_bcast:31 into rows 2 and 3: lane 63 holds the total
#undef GEMV_DPP_ADD
  return __builtin_bit_cast(float, __builtin_amdgcn_readlane(s, 63));
#else
#pragma unroll
  for (int o = PORT_WARP_SIZE / 2; o > 0; o >>= 1) v += __shfl_xor_sync(PORT_FULL_MASK, v, o);
  return v;
#endif
}

// Weights stream once: no L1 allocation (nothing reuses them). gfx942: non-temporal (nt).
// volatile: the loads stay in program order ahead of griddepcontrol.wait in the chained kernels.
// (common/chain.h's chain_weight_load is the same instruction; routed through it, ptxas
// allocates gemv_tensor_core_ks2 differently and spills 12 bytes, so this copy stays.)
// No L2::256B hint on the weights: with it, every GEMV's no-wait chain stopped at 0.91-0.92 of the
// ceiling while a plain read of the same launches reached 1.00, and without it the same kernel
// passed 1.0 (H200, 1e989f3's diagnostic build; results/02-gemv.md); 01-ceiling measures reads
// with the hint 4% under plain ones. GEMV_WEIGHTS_L2_256B=1 builds the hinted loads (a diagnostic).
#if defined(GEMV_WEIGHTS_L2_256B) && GEMV_WEIGHTS_L2_256B == 1
#define GEMV_WEIGHTS_LD "ld.global.nc.L1::no_allocate.L2::256B.v4.u32"
#else
#define GEMV_WEIGHTS_LD "ld.global.nc.L1::no_allocate.v4.u32"
#endif
__device__ __forceinline__ vec4u load_weights16(const __half* p) {
#if defined(PORT_HIP)
  return __builtin_nontemporal_load(reinterpret_cast<const vec4u*>(p));
#else
  vec4u v;
  asm volatile(GEMV_WEIGHTS_LD " {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
#endif
}
// x is re-read by every warp: keep it in L1 (the read-only path on sm_90).
__device__ __forceinline__ vec4u load_x16(const __half* p) {
#if defined(PORT_HIP)
  return *reinterpret_cast<const vec4u*>(p);
#else
  return __ldg(reinterpret_cast<const uint4*>(p));
#endif
}

// Programmatic dependent launch (sm_90, common/chain.h): let the next kernel in the stream
// launch now, and wait for the previous one before reading what it wrote. No-ops where PDL
// does not exist (sm_80, gfx942); the host never enables chaining there.
template <bool PDL>
__device__ __forceinline__ void pdl_launch_dependents() { chain_release<PDL>(); }
template <bool PDL>
__device__ __forceinline__ void pdl_wait() { chain_acquire<PDL>(); }

// Ask L2 for the 128-byte lines of bytes [p, p + bytes) without waiting or using a register:
// lane l takes lines l, l + 32, ... The chained kernels call it before griddepcontrol.wait for
// the part of their first row group that the registers cannot hold, so those bytes stream
// from DRAM during the previous kernel's tail. No-op on HIP (the host never chains there).
__device__ __forceinline__ void prefetch_l2_line(const void* p) {
#if !defined(PORT_HIP)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p) : "memory");
#else
  (void)p;
#endif
}
__device__ __forceinline__ void prefetch_l2(const __half* p, size_t bytes, int lane) {
  const char* c = reinterpret_cast<const char*>(p);
  for (size_t off = static_cast<size_t>(lane) * 128; off < bytes; off += 32 * 128) prefetch_l2_line(c + off);
}

// ---------------------------------------------------------------------------------------------
// The original three: one warp (wave) per row, lanes striding across the row, grid-stride rows.
// ---------------------------------------------------------------------------------------------

// v1: one accumulator. The loop cannot start the next loads before the FMA that needs this
// iteration's, so the compiler waits on both loads every iteration (gfx942: vmcnt(0) in the loop).
extern "C" __global__ void __launch_bounds__(1024) gemv_one_accumulator(GEMV_ARGS) {
  const int lane = threadIdx.x % PORT_WARP_SIZE;
  const int warps = blockDim.x / PORT_WARP_SIZE;
  const int all_warps = gridDim.x * warps;
  const int n2 = K / 2;  // half2 words per row
  const uint32_t* xw = reinterpret_cast<const uint32_t*>(x);
  for (int row = blockIdx.x * warps + threadIdx.x / PORT_WARP_SIZE; row < N; row += all_warps) {
    const uint32_t* w = reinterpret_cast<const uint32_t*>(W + static_cast<size_t>(row) * K);
    float acc = 0.f;
#pragma unroll 1
    for (int i = lane; i < n2; i += PORT_WARP_SIZE) acc = dot2(w[i], xw[i], acc);
    acc = warp_sum(acc);
    if (lane == 0) y[row] = __float2half(acc);
  }
}

// v2: four independent accumulators: the four weight words (and four x words) of an iteration
// are all requested before the first is consumed (gfx942: 8 loads, then vmcnt(3)..vmcnt(0)).
extern "C" __global__ void __launch_bounds__(1024) gemv_four_accumulators(GEMV_ARGS) {
  const int lane = threadIdx.x % PORT_WARP_SIZE;
  const int warps = blockDim.x / PORT_WARP_SIZE;
  const int all_warps = gridDim.x * warps;
  const int n2 = K / 2;
  const uint32_t* xw = reinterpret_cast<const uint32_t*>(x);
  for (int row = blockIdx.x * warps + threadIdx.x / PORT_WARP_SIZE; row < N; row += all_warps) {
    const uint32_t* w = reinterpret_cast<const uint32_t*>(W + static_cast<size_t>(row) * K);
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
    int i = lane;
#pragma unroll 1
    for (; i + 3 * PORT_WARP_SIZE < n2; i += 4 * PORT_WARP_SIZE) {
      const uint32_t w0 = w[i], w1 = w[i + PORT_WARP_SIZE], w2 = w[i + 2 * PORT_WARP_SIZE], w3 = w[i + 3 * PORT_WARP_SIZE];
      const uint32_t x0 = xw[i], x1 = xw[i + PORT_WARP_SIZE], x2 = xw[i + 2 * PORT_WARP_SIZE], x3 = xw[i + 3 * PORT_WARP_SIZE];
      a0 = dot2(w0, x0, a0);
      a1 = dot2(w1, x1, a1);
      a2 = dot2(w2, x2, a2);
      a3 = dot2(w3, x3, a3);
    }
#pragma unroll 1
    for (; i < n2; i += PORT_WARP_SIZE) a0 = dot2(w[i], xw[i], a0);
    const float acc = warp_sum((a0 + a1) + (a2 + a3));
    if (lane == 0) y[row] = __float2half(acc);
  }
}

// v3: v2 with 16-byte loads: each lane reads eight halves per load, so one load instruction
// of a warp is 512 (wave64: 1024) contiguous bytes and the loop is four times shorter.
extern "C" __global__ void __launch_bounds__(1024) gemv_wide_loads(GEMV_ARGS) {
  const int lane = threadIdx.x % PORT_WARP_SIZE;
  const int warps = blockDim.x / PORT_WARP_SIZE;
  const int all_warps = gridDim.x * warps;
  const int n8 = K / 8;  // 16-byte vectors per row (the host requires K % 8 == 0)
  const vec4u* xv = reinterpret_cast<const vec4u*>(x);
  for (int row = blockIdx.x * warps + threadIdx.x / PORT_WARP_SIZE; row < N; row += all_warps) {
    const vec4u* w = reinterpret_cast<const vec4u*>(W + static_cast<size_t>(row) * K);
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
    int i = lane;
#pragma unroll 1
    for (; i + 3 * PORT_WARP_SIZE < n8; i += 4 * PORT_WARP_SIZE) {
      const vec4u w0 = w[i], w1 = w[i + PORT_WARP_SIZE], w2 = w[i + 2 * PORT_WARP_SIZE], w3 = w[i + 3 * PORT_WARP_SIZE];
      const vec4u x0 = xv[i], x1 = xv[i + PORT_WARP_SIZE], x2 = xv[i + 2 * PORT_WARP_SIZE], x3 = xv[i + 3 * PORT_WARP_SIZE];
      dot8(w0, x0, a0, a1);
      dot8(w1, x1, a2, a3);
      dot8(w2, x2, a0, a1);
      dot8(w3, x3, a2, a3);
    }
#pragma unroll 1
    for (; i < n8; i += PORT_WARP_SIZE) dot8(w[i], xv[i], a0, a1);
    const float acc = warp_sum((a0 + a1) + (a2 + a3));
    if (lane == 0) y[row] = __float2half(acc);
  }
}

// ---------------------------------------------------------------------------------------------
// v4: rows in flight. A warp owns R rows; per chunk it issues all R*C 16-byte weight loads
// (R*C = 16: 64 registers of loads, 8 KB per warp in flight) before the first FMA, with the
// streaming cache policy. The host sizes the grid from N, R, the SM count and the occupancy so
// that every warp gets the same number of row groups (no half-empty last wave).
// PDL: the first chunk's weights are requested before griddepcontrol.wait, x only after it.
// ---------------------------------------------------------------------------------------------
// One chunk: vectors v0 + c * stride + idx (c < C) of R rows. TAIL guards v < nvec; the main loop
// runs only whole chunks and needs no guard (a branch per load would split the batch).
// What a chunk's loads are consumed by. FmaAcc: CUDA cores, two FP32 partial sums per row
// (dot8), one butterfly per row at the end.
template <int R>
struct FmaAcc {
  float a[R][2];
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int r = 0; r < R; ++r) a[r][0] = a[r][1] = 0.f;
  }
  template <int C>
  __device__ __forceinline__ void take(const vec4u (&w)[R][C], int c, const vec4u& xv) {
#pragma unroll
    for (int r = 0; r < R; ++r) dot8(w[r][c], xv, a[r][0], a[r][1]);
  }
  __device__ __forceinline__ float total(int r, int) const { return warp_sum(a[r][0] + a[r][1]); }
};

// DATA (the data-carried chain, sm_90 CUDA): no griddepcontrol.wait; x is the predecessor's y,
// read with common/chain.h's relaxed loads once lane 0 has seen the chunk's last vector written,
// all C of a chunk at once, then any still poisoned polled (sleeps doubling to 2 us).
#if !defined(PORT_HIP)
__device__ unsigned g_gemv_data_timeouts;  // polls that gave up (2 ms): the host fails the run
#endif
template <int R, int C, bool PDL, bool TAIL, class Acc, bool WAIT = true, bool DATA = false>
__device__ __forceinline__ void rows_chunk(const __half* W, const __half* x, int K, int row0, int N, int v0, int nvec,
                                           int stride, int idx, bool& waited, Acc& acc) {
  vec4u w[R][C];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int row = min(row0 + r, N - 1);  // a clamped row is read but never stored
    const __half* wr = W + static_cast<size_t>(row) * K;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int v = v0 + c * stride + idx;
      if (!TAIL || v < nvec) w[r][c] = load_weights16(wr + 8 * v);
      else w[r][c] = zero4();
    }
  }
  if (PDL && !waited) {
    pdl_wait<PDL && WAIT && !DATA>();
    waited = true;
  }
#if !defined(PORT_HIP)
  if (DATA) {
    // lane 0 gates the chunk on its last vector (chain_probe's m32), then every lane checks its own
    constexpr unsigned kMaxSleepNs = 2048;
    const int vg = v0 + (C - 1) * stride;
    chain_data_gate16(x + 8 * min(vg, nvec - 1), idx == 0, &g_gemv_data_timeouts, kMaxSleepNs);
    vec4u xs[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int v = v0 + c * stride + idx;
      xs[c] = (!TAIL || v < nvec) ? chain_data_load16(x + 8 * v) : zero4();
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int v = v0 + c * stride + idx;
      if ((!TAIL || v < nvec) && chain_data_poisoned(xs[c])) xs[c] = chain_data_poll16(x + 8 * v, &g_gemv_data_timeouts, kMaxSleepNs);
      acc.template take<C>(w, c, xs[c]);
    }
  } else
#endif
  {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int v = v0 + c * stride + idx;
      const vec4u xv = (!TAIL || v < nvec) ? load_x16(x + 8 * v) : zero4();
      acc.template take<C>(w, c, xv);
    }
  }
}

// Chained variants (PDL true). LATE: 0 = griddepcontrol.launch_dependents first, as every other
// chained kernel; L > 0 = only when this warp has L chunks left (an attempt to have the next
// GEMV's first loads issued during this one's drain rather than at its start). WAIT = false
// drops griddepcontrol.wait: not a valid chain (a later launch may overwrite y before an earlier
// one finishes), only the bound a zero-cost dependency would give; the host never counts it as
// a chained result. DATA: the data-carried chain (rows_chunk above): launch i's x is launch
// i-1's y, poisoned before the chain; y stored relaxed, never the poison (chain_data_store_half).
template <int R, int C, bool PDL, int LATE, class Acc, bool WAIT = true, bool DATA = false>
__device__ __forceinline__ void rows_in_flight(GEMV_ARGS) {
  const int lane = threadIdx.x % PORT_WARP_SIZE;
  const int warps = blockDim.x / PORT_WARP_SIZE;
  const int all_warps = gridDim.x * warps;
  const int nvec = K / 8;
  const int groups = (N + R - 1) / R;
  const int step = PORT_WARP_SIZE * C;  // vectors per row per chunk
  const int nch = (nvec + step - 1) / step;  // chunks per row group
  bool waited = !PDL;
  bool released = !PDL || LATE == 0;
  if (LATE == 0) pdl_launch_dependents<PDL>();
  auto release_if_late = [&](int left) {
    if (!released && left <= LATE) {
      pdl_launch_dependents<PDL>();
      released = true;
    }
  };
  for (int grp = blockIdx.x * warps + threadIdx.x / PORT_WARP_SIZE; grp < groups; grp += all_warps) {
    const int row0 = grp * R;
    int left = ((groups - 1 - grp) / all_warps + 1) * nch;  // this warp's chunks from here on
    Acc acc;
    acc.zero();
    int v0 = 0;
#pragma unroll 1
    for (; v0 + step <= nvec; v0 += step, --left) {
      release_if_late(left);
      rows_chunk<R, C, PDL, false, Acc, WAIT, DATA>(W, x, K, row0, N, v0, nvec, PORT_WARP_SIZE, lane, waited, acc);
    }
    if (v0 < nvec) {
      release_if_late(left);
      rows_chunk<R, C, PDL, true, Acc, WAIT, DATA>(W, x, K, row0, N, v0, nvec, PORT_WARP_SIZE, lane, waited, acc);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float s = acc.total(r, lane);
      if (lane != 0 || row0 + r >= N) continue;
#if !defined(PORT_HIP)
      if (DATA) chain_data_store_half(y + row0 + r, s);
      else
#endif
        y[row0 + r] = __float2half(s);
    }
  }
  if (!waited) pdl_wait<PDL && WAIT>();  // a warp with no rows still orders itself after its predecessor
}

#define GEMV_STAMP_ROWS_AS(NAME, R, C, ACC, MINB)                                                                  \
  extern "C" __global__ void __launch_bounds__(256, MINB) NAME(GEMV_ARGS) {                                        \
    rows_in_flight<R, C, false, 0, ACC>(W, x, y, N, K);                                                         \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, MINB) NAME##_pdl(GEMV_ARGS) {                                  \
    rows_in_flight<R, C, true, 0, ACC>(W, x, y, N, K);                                                          \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, MINB) NAME##_late1_pdl(GEMV_ARGS) {                            \
    rows_in_flight<R, C, true, 1, ACC>(W, x, y, N, K);                                                          \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, MINB) NAME##_nowait_pdl(GEMV_ARGS) {                           \
    rows_in_flight<R, C, true, 0, ACC, false>(W, x, y, N, K);                                                   \
  }
// NAME_data_pdl: the data-carried chain (sm_90 CUDA only; v4 and v6 r4 c4: where a chunk's x
// vectors fit beside its weights and accumulators without a spill; the r2 c8 forms spill).
#if !defined(PORT_HIP)
#define GEMV_STAMP_ROWS_DATA(NAME, R, C, ACC, MINB)                                                                \
  extern "C" __global__ void __launch_bounds__(256, MINB) NAME##_data_pdl(GEMV_ARGS) {                             \
    rows_in_flight<R, C, true, 0, ACC, false, true>(W, x, y, N, K);                                             \
  }
#else
#define GEMV_STAMP_ROWS_DATA(NAME, R, C, ACC, MINB)
#endif
#define GEMV_STAMP_ROWS(R, C) GEMV_STAMP_ROWS_AS(gemv_rows_in_flight_r##R, R, C, FmaAcc<R>, 2)
GEMV_STAMP_ROWS(1, 16)
GEMV_STAMP_ROWS(2, 8)
GEMV_STAMP_ROWS(4, 4)
GEMV_STAMP_ROWS_DATA(gemv_rows_in_flight_r4, 4, 4, FmaAcc<4>, 2)
// v4 lean: one row per warp, 8 loads per lane per chunk (4 KB per warp in flight, half of r1 c16),
// at most 85 registers (80 used) so that three blocks of 256 fit an SM. Why: 02's read-only bound streams the
// same 33.5 MB launches at the ceiling with many light warps (32 registers, 8 blocks per SM),
// where the 128-register rows kernels fill the register file with two blocks and the next
// chained GEMV finds no room beside them. Fewer bytes per warp, more warps, room to overlap.
GEMV_STAMP_ROWS_AS(gemv_rows_lean_r1c8, 1, 8, FmaAcc<1>, 3)

// ---------------------------------------------------------------------------------------------
// v4p: rows in flight, software-pipelined. A warp's work is a stream of chunks (row group,
// C 16-byte vectors per lane per row); the loads of chunk i+1 are issued before chunk i is
// consumed, so a warp is never without R*C loads in flight (two register buffers, unrolled by
// two so neither is copied). Needs K % (256 C) == 0: whole chunks, no guarded tail.
// PDL: chunk 0 in registers and the rest of the first group in L2 before griddepcontrol.wait.
// ---------------------------------------------------------------------------------------------
// Both pipelined rungs (v4p, v6p) stream through common/two_buffer.h's two_buffer_stream.
template <int R, int C>
__device__ __forceinline__ void pipe_load(const __half* W, int K, int N, int row0, int v0, int lane, vec4u (&b)[R][C]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const __half* wr = W + static_cast<size_t>(min(row0 + r, N - 1)) * K + 8 * (v0 + lane);
#pragma unroll
    for (int c = 0; c < C; ++c) b[r][c] = load_weights16(wr + 8 * PORT_WARP_SIZE * c);
  }
}
template <int R, int C>
__device__ __forceinline__ void pipe_consume(const __half* x, __half* y, int N, int row0, int v0, int lane, bool first,
                                             bool last, const vec4u (&b)[R][C], float (&acc)[R][2]) {
  if (first) {
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = 0.f;
  }
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const vec4u xv = load_x16(x + 8 * (v0 + lane + PORT_WARP_SIZE * c));
#pragma unroll
    for (int r = 0; r < R; ++r) dot8(b[r][c], xv, acc[r][0], acc[r][1]);
  }
  if (last) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float s = warp_sum(acc[r][0] + acc[r][1]);
      if (lane == 0 && row0 + r < N) y[row0 + r] = __float2half(s);
    }
  }
}

template <int R, int C, bool PDL>
__device__ __forceinline__ void rows_pipelined(GEMV_ARGS) {
  const int lane = threadIdx.x % PORT_WARP_SIZE;
  const int warps = blockDim.x / PORT_WARP_SIZE;
  const int all_warps = gridDim.x * warps;
  const int gw = blockIdx.x * warps + threadIdx.x / PORT_WARP_SIZE;
  const int step = PORT_WARP_SIZE * C;  // vectors per row per chunk
  const int nch = (K / 8) / step;       // chunks per row group
  const int groups = (N + R - 1) / R;
  const int items = gw < groups ? ((groups - 1 - gw) / all_warps + 1) * nch : 0;
  pdl_launch_dependents<PDL>();
  vec4u a[R][C], b[R][C];
  float acc[R][2];
  // item i: group gw + (i / nch) * all_warps, chunk i % nch
  auto row0_of = [&](int i) { return (gw + (i / nch) * all_warps) * R; };
  auto v0_of = [&](int i) { return (i % nch) * step; };
  if (items > 0) {
    pipe_load<R, C>(W, K, N, row0_of(0), 0, lane, a);
    if (PDL && nch > 1)
      for (int r = 0; r < R && row0_of(0) + r < N; ++r)
        prefetch_l2(W + static_cast<size_t>(row0_of(0) + r) * K + 8 * step, static_cast<size_t>(K / 8 - step) * 16, lane);
  }
  pdl_wait<PDL>();
  two_buffer_stream(
      items, a, b, [&](int i, vec4u(&buf)[R][C]) { pipe_load<R, C>(W, K, N, row0_of(i), v0_of(i), lane, buf); },
      [&](int i, const vec4u(&buf)[R][C]) {
        pipe_consume<R, C>(x, y, N, row0_of(i), v0_of(i), lane, i % nch == 0, i % nch == nch - 1, buf, acc);
      });
}

#define GEMV_STAMP_PIPE(R, C)                                                                                  \
  extern "C" __global__ void __launch_bounds__(256, 2) gemv_rows_pipelined_r##R##c##C(GEMV_ARGS) {                \
    rows_pipelined<R, C, false>(W, x, y, N, K);                                                                 \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, 2) gemv_rows_pipelined_r##R##c##C##_pdl(GEMV_ARGS) {          \
    rows_pipelined<R, C, true>(W, x, y, N, K);                                                                  \
  }
GEMV_STAMP_PIPE(1, 8)
GEMV_STAMP_PIPE(2, 4)
GEMV_STAMP_PIPE(4, 2)

// ---------------------------------------------------------------------------------------------
// v5: split-K, block per row group. A whole block shares R rows: each thread takes 16-byte
// vectors blockDim apart (C of them in flight per row), so a long row (K = 14336: 28 KB) is
// read by 256 threads at once instead of one warp; warps combine through shared memory.
// It wins when N is small against the machine (few rows, long rows).
// ---------------------------------------------------------------------------------------------
template <int R, int C, bool PDL>
__device__ __forceinline__ void split_k(GEMV_ARGS) {
  __shared__ float partial[R][256 / PORT_WARP_SIZE];  // launched with 256 threads
  // Indices read once: on gfx942 without device libraries each read is a call.
  const int tid = threadIdx.x, threads = blockDim.x, grid = gridDim.x;
  const int lane = tid % PORT_WARP_SIZE;
  const int warp = tid / PORT_WARP_SIZE;
  const int warps = threads / PORT_WARP_SIZE;
  const int nvec = K / 8;
  const int groups = (N + R - 1) / R;
  const int step = threads * C;  // vectors per row per chunk, block-wide
  bool waited = !PDL;
  pdl_launch_dependents<PDL>();
  for (int grp = blockIdx.x; grp < groups; grp += grid) {
    const int row0 = grp * R;
    FmaAcc<R> acc;
    acc.zero();
    int v0 = 0;  // block-uniform: every warp runs the same chunks
#pragma unroll 1
    for (; v0 + step <= nvec; v0 += step) rows_chunk<R, C, PDL, false>(W, x, K, row0, N, v0, nvec, threads, tid, waited, acc);
    if (v0 < nvec) rows_chunk<R, C, PDL, true>(W, x, K, row0, N, v0, nvec, threads, tid, waited, acc);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float s = acc.total(r, lane);
      if (lane == 0) partial[r][warp] = s;
    }
    __syncthreads();
    if (tid < R) {
      float s = 0.f;
      for (int w = 0; w < warps; ++w) s += partial[tid][w];
      if (row0 + tid < N) y[row0 + tid] = __float2half(s);
    }
    __syncthreads();  // partial[] is reused by the next row group
  }
  if (!waited) pdl_wait<PDL>();
}

#define GEMV_STAMP_SPLITK(R, C)                                                                                \
  extern "C" __global__ void __launch_bounds__(256, 2) gemv_split_k_r##R(GEMV_ARGS) { split_k<R, C, false>(W, x, y, N, K); } \
  extern "C" __global__ void __launch_bounds__(256, 2) gemv_split_k_r##R##_pdl(GEMV_ARGS) { split_k<R, C, true>(W, x, y, N, K); }
GEMV_STAMP_SPLITK(1, 8)
GEMV_STAMP_SPLITK(2, 4)

// ---------------------------------------------------------------------------------------------
// v6: tensor cores, mma.sync m16n8k16 (FP16 in, FP32 accumulate); sm_80 and newer, CUDA only.
// A warp multiplies a 16-row tile of W (the A operand, row-major, exactly W's layout) by a B
// operand whose column 0 is x and whose other seven columns are zero; D's column 0 is the 16
// partial results, already summed across the k of the tile by the hardware: no shuffles.
// The k order inside a 128-wide chunk is permuted so each lane reads 16 contiguous bytes: lane
// (g = lane/4, t = lane%4) reads halves k = 32v + 8t + j (v = 0..3, j = 0..7) of rows g and g+8.
// Half pairs j = {0,1},{2,3} feed one mma (as A columns 2t,2t+1 and 2t+8,2t+9), {4,5},{6,7} the
// next; B's lanes with g = 0 load x at the same k, so A and B agree on every k (a permutation of
// k leaves a dot product unchanged). KS warps of a block split the chunks of the tile's rows and
// add their 16 results through shared memory. Two chunks (16 loads per lane) are in flight.
// ---------------------------------------------------------------------------------------------
#if !defined(PORT_HIP)
__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                          uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

template <int KS, bool PDL>
__device__ __forceinline__ void tensor_core(GEMV_ARGS) {
  static_assert(PORT_WARP_SIZE == 32, "mma.sync fragments are laid out for 32 lanes");
  __shared__ float part[KS][16];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;  // blockDim.x == 32 * KS (the host launches it so)
  const int g = lane >> 2, t = lane & 3;
  const int nchunks = K / 128;  // the host requires K % 128 == 0
  const int tiles = (N + 15) / 16;
  bool waited = !PDL;
  pdl_launch_dependents<PDL>();
  const int grid = gridDim.x;
  for (int tile = blockIdx.x; tile < tiles; tile += grid) {
    const __half* w_lo = W + static_cast<size_t>(min(tile * 16 + g, N - 1)) * K + 8 * t;
    const __half* w_hi = W + static_cast<size_t>(min(tile * 16 + g + 8, N - 1)) * K + 8 * t;
    const __half* xp = x + 8 * t;
    float d[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll 1
    for (int ch = warp; ch < nchunks; ch += 2 * KS) {
      const bool second = ch + KS < nchunks;  // warp-uniform
      vec4u a[2][2][4];                        // [chunk][row g | row g+8][v]
#pragma unroll
      for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int k = (ch + u * KS) * 128 + 32 * v;
          const bool ok = u == 0 || second;
          a[u][0][v] = ok ? load_weights16(w_lo + k) : zero4();
          a[u][1][v] = ok ? load_weights16(w_hi + k) : zero4();
        }
      if (PDL && !waited) {
        pdl_wait<PDL>();
        waited = true;
      }
#pragma unroll
      for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int k = (ch + u * KS) * 128 + 32 * v;
          const vec4u b = (g == 0 && (u == 0 || second)) ? load_x16(xp + k) : zero4();
          mma_16816(d[v & 1], a[u][0][v].x, a[u][1][v].x, a[u][0][v].y, a[u][1][v].y, b.x, b.y);
          mma_16816(d[v & 1], a[u][0][v].z, a[u][1][v].z, a[u][0][v].w, a[u][1][v].w, b.z, b.w);
        }
    }
    // D fragment: d[0] is row g, column 2t; d[2] is row g+8, column 2t. Column 0 is lane t == 0.
    const float y_lo = d[0][0] + d[1][0], y_hi = d[0][2] + d[1][2];
    const int r_lo = tile * 16 + g, r_hi = r_lo + 8;
    if (KS == 1) {
      if (t == 0) {
        if (r_lo < N) y[r_lo] = __float2half(y_lo);
        if (r_hi < N) y[r_hi] = __float2half(y_hi);
      }
    } else {
      if (t == 0) {
        part[warp][g] = y_lo;
        part[warp][g + 8] = y_hi;
      }
      __syncthreads();
      if (threadIdx.x < 16) {
        float s = 0.f;
#pragma unroll
        for (int w = 0; w < KS; ++w) s += part[w][threadIdx.x];
        if (tile * 16 + static_cast<int>(threadIdx.x) < N) y[tile * 16 + threadIdx.x] = __float2half(s);
      }
      __syncthreads();
    }
  }
  if (!waited) pdl_wait<PDL>();
}

#define GEMV_STAMP_TENSOR(KS)                                                                                  \
  extern "C" __global__ void __launch_bounds__(32 * KS, 16 / KS) gemv_tensor_core_ks##KS(GEMV_ARGS) {                   \
    tensor_core<KS, false>(W, x, y, N, K);                                                                      \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(32 * KS, 16 / KS) gemv_tensor_core_ks##KS##_pdl(GEMV_ARGS) {             \
    tensor_core<KS, true>(W, x, y, N, K);                                                                       \
  }
GEMV_STAMP_TENSOR(1)
GEMV_STAMP_TENSOR(2)
GEMV_STAMP_TENSOR(4)
GEMV_STAMP_TENSOR(8)

// v6 rows: tensor cores with rows in flight's memory pattern. Lane l of a warp reads the same 16
// bytes as in rows in flight (512 contiguous bytes of one row per load instruction) and the x
// vector at the same k. In m16n8k16 lane (g = l/4, t = l%4) holds A[g][2t..2t+1], A[g][2t+8..+9]
// (and rows g+8), and B[2t..2t+1][g], B[2t+8..+9][g]: put the lane's weights in A row g (a second
// row's in row g+8) and the lane's x in B column g, and D[g][g] = sum over the four lanes of group
// g of weight . x, D[g+8][g] the same for the second row. Every product pairs a lane's weights
// with its own x; only D's diagonal is kept (16 of 128 outputs), and a butterfly adds the eight
// groups at the end of the row, as in rows in flight. Four accumulator sets per row pair (two
// for r4) shorten the chain of dependent mmas.
template <int R>
struct MmaAcc {
  static constexpr int P = (R + 1) / 2;  // row pairs: rows 2p (A rows g) and 2p + 1 (A rows g + 8)
  static constexpr int S = P > 1 ? 2 : 4;  // accumulator sets per pair (r4: 2, within 128 registers)
  float d[P][S][4];
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int p = 0; p < P; ++p)
#pragma unroll
      for (int s = 0; s < S; ++s) d[p][s][0] = d[p][s][1] = d[p][s][2] = d[p][s][3] = 0.f;
  }
  template <int C>
  __device__ __forceinline__ void take(const vec4u (&w)[R][C], int c, const vec4u& xv) {
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const vec4u lo = w[2 * p][c];
      const vec4u hi = 2 * p + 1 < R ? w[2 * p + 1][c] : zero4();
      mma_16816(d[p][(2 * c) % S], lo.x, hi.x, lo.y, hi.y, xv.x, xv.y);
      mma_16816(d[p][(2 * c + 1) % S], lo.z, hi.z, lo.w, hi.w, xv.z, xv.w);
    }
  }
  // D[g][g] sits in lane (g, t = g / 2), element g % 2 (row g + 8: element 2 + g % 2).
  __device__ __forceinline__ float total(int r, int lane) const {
    const int g = lane >> 2, t = lane & 3, e = 2 * (r & 1) + (g & 1);
    float s = 0.f;
#pragma unroll
    for (int q = 0; q < S; ++q) {  // selects, not dq[e]: a runtime index would put d in local memory
      const float* dq = d[r >> 1][q];
      s += e == 0 ? dq[0] : e == 1 ? dq[1] : e == 2 ? dq[2] : dq[3];
    }
    return warp_sum(t == (g >> 1) ? s : 0.f);
  }
};
#define GEMV_STAMP_TENSOR_ROWS(R, C) GEMV_STAMP_ROWS_AS(gemv_tensor_rows_r##R, R, C, MmaAcc<R>, 2)
GEMV_STAMP_TENSOR_ROWS(1, 16)
GEMV_STAMP_TENSOR_ROWS(2, 8)
GEMV_STAMP_TENSOR_ROWS(4, 4)
GEMV_STAMP_ROWS_DATA(gemv_tensor_rows_r4, 4, 4, MmaAcc<4>, 2)
// v6 lean: v4 lean's shape on the tensor cores (one row per warp, 8 loads per lane, 80 registers).
GEMV_STAMP_ROWS_AS(gemv_tensor_rows_lean_r1c8, 1, 8, MmaAcc<1>, 3)

// v6p: tensor cores, software-pipelined, y^T = x^T W^T (as the ring variant below): a team of KS
// warps owns 8 rows (mma's n = 8 columns of B are 8 rows of W, k-contiguous: W's own layout);
// A = x in row 0 (rows 1-15 zero), so D's row 0 holds the 8 results. Lane (g, t) reads row g's
// 16 bytes at k = k0 + 32c + 8t (c < 8) and feeds two m16n8k16 mmas, the k order permuted the
// same way in A and B. Member m of a team takes chunks m, m+KS, ...; the next chunk's 8 loads
// are issued before the current one is consumed; the team's KS partial sums meet in shared
// memory behind a named barrier (bar.sync 1 + team). No shuffles at all.
__device__ __forceinline__ void tcp_load(const __half* W, int K, int N, int row0, int k0, int g, int t, vec4u (&b)[8]) {
  const __half* wr = W + static_cast<size_t>(min(row0 + g, N - 1)) * K + k0 + 8 * t;
#pragma unroll
  for (int c = 0; c < 8; ++c) b[c] = load_weights16(wr + 32 * c);
}
__device__ __forceinline__ void tcp_consume(const __half* x, int k0, int g, int t, const vec4u (&b)[8], float (&d)[2][4]) {
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    const vec4u xv = g == 0 ? load_x16(x + k0 + 32 * c + 8 * t) : zero4();
    mma_16816(d[c & 1], xv.x, 0u, xv.y, 0u, b[c].x, b[c].y);
    mma_16816(d[c & 1], xv.z, 0u, xv.w, 0u, b[c].z, b[c].w);
  }
}
template <int KS, bool PDL>
__device__ __forceinline__ void tensor_core_pipelined(GEMV_ARGS) {
  __shared__ float part[2][8][KS][8];  // [group parity][team][member][row]: 256 threads = 8 / KS teams
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int teams = (blockDim.x >> 5) / KS;
  const int team = warp / KS, mem = warp % KS;
  const int all_teams = gridDim.x * teams;
  const int gt = blockIdx.x * teams + team;
  const int g = lane >> 2, t = lane & 3;
  const int per = (K / 256) / KS;  // chunks (256 columns) per member per group; host: K % (256 KS) == 0
  const int groups = (N + 7) / 8;
  const int items = gt < groups ? ((groups - 1 - gt) / all_teams + 1) * per : 0;
  auto row0_of = [&](int i) { return (gt + (i / per) * all_teams) * 8; };
  auto k0_of = [&](int i) { return ((i % per) * KS + mem) * 256; };
  pdl_launch_dependents<PDL>();
  vec4u a[8], b[8];
  float d[2][4] = {};
  int parity = 0;
  auto finish = [&](int i) {  // after the last chunk of a group: D row 0 -> y
    if (i % per != per - 1) return;
    const float y0 = d[0][0] + d[1][0], y1 = d[0][1] + d[1][1];  // columns 2t, 2t+1 of row 0 (lanes 0-3)
    const int row0 = row0_of(i);
    if (KS == 1) {
      if (g == 0) {
        if (row0 + 2 * t < N) y[row0 + 2 * t] = __float2half(y0);
        if (row0 + 2 * t + 1 < N) y[row0 + 2 * t + 1] = __float2half(y1);
      }
    } else {
      if (g == 0) {
        part[parity][team][mem][2 * t] = y0;
        part[parity][team][mem][2 * t + 1] = y1;
      }
      asm volatile("bar.sync %0, %1;" ::"r"(1 + team), "r"(32 * KS) : "memory");
      if (mem == 0 && lane < 8 && row0 + lane < N) {
        float s = 0.f;
#pragma unroll
        for (int m = 0; m < KS; ++m) s += part[parity][team][m][lane];
        y[row0 + lane] = __float2half(s);
      }
      parity ^= 1;
    }
#pragma unroll
    for (int u = 0; u < 2; ++u)
#pragma unroll
      for (int e = 0; e < 4; ++e) d[u][e] = 0.f;
  };
  if (items > 0) tcp_load(W, K, N, row0_of(0), k0_of(0), g, t, a);
  if (PDL && items > 1) {  // the rest of this member's first group, into L2
    const __half* wr = W + static_cast<size_t>(min(row0_of(0) + g, N - 1)) * K;
    for (int j = 1; j < per && j < items; ++j) prefetch_l2_line(wr + k0_of(j) + 64 * t);  // 4 lanes x 128 B per row
  }
  pdl_wait<PDL>();
  two_buffer_stream(
      items, a, b, [&](int i, vec4u(&buf)[8]) { tcp_load(W, K, N, row0_of(i), k0_of(i), g, t, buf); },
      [&](int i, const vec4u(&buf)[8]) {
        tcp_consume(x, k0_of(i), g, t, buf, d);
        finish(i);
      });
}
#define GEMV_STAMP_TCP(KS)                                                                                     \
  extern "C" __global__ void __launch_bounds__(256, 2) gemv_tensor_core_pipelined_ks##KS(GEMV_ARGS) {             \
    tensor_core_pipelined<KS, false>(W, x, y, N, K);                                                            \
  }                                                                                                            \
  extern "C" __global__ void __launch_bounds__(256, 2) gemv_tensor_core_pipelined_ks##KS##_pdl(GEMV_ARGS) {       \
    tensor_core_pipelined<KS, true>(W, x, y, N, K);                                                             \
  }
GEMV_STAMP_TCP(1)
GEMV_STAMP_TCP(2)
GEMV_STAMP_TCP(4)

// ---------------------------------------------------------------------------------------------
// v8 (and v6's ring variant): a bulk-copy ring. The copy engine (cp.async.bulk, common/
// bulk_copy.h) streams a block's row groups into a ring of S shared-memory stages of up to
// 32 KB (rps = 32 KB / 2K whole rows, contiguous in W); one thread re-arms a stage as soon as
// the block is done with it, so every SM keeps S x 32 KB in flight with no load instruction
// per 16 B and no register cost: the warps only compute. A block takes the row groups
// b, b + grid, ... (the host requires K % 2048 == 0 and K <= 16384).
//   CUDA cores (gemv_bulk_ring): thread t owns the 16-byte columns t + 256 q (q < K/2048) of
//   every row, x for them in registers; per stage a butterfly per row, warps meet in shared
//   memory.
//   Tensor cores (gemv_tensor_core_ring): y^T = x^T W^T: A = x in row 0 of a 16x16 tile (rows
//   1-15 zero), B = 8 rows of W as columns (mma's "col" B is k-contiguous per column: W's own
//   layout), D's row 0 = 8 results. Lane (g, t) reads row g's 16 bytes at k = 32q + 8t and
//   feeds two m16n8k16 mmas with the k order permuted identically in A and B; warp w takes
//   k-slice w of the stage; no shuffles, warps meet in shared memory.
// Chained (_pdl): the first S stages are requested before griddepcontrol.wait (weights do not
// depend on the previous kernel), x after it; with one block per SM and three stages the next
// kernel's block fits beside this one, so its first 96 KB per SM arrive during this one's tail.
// ---------------------------------------------------------------------------------------------
template <bool TC, bool PDL>
__device__ __forceinline__ void bulk_ring(GEMV_ARGS) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) vec4u ring_smem[];
  unsigned char* ring = reinterpret_cast<unsigned char*>(ring_smem);
  __shared__ __align__(8) unsigned long long bar[kRingMaxStages];
  __shared__ float part[2][kRingMaxRows][kRingThreads / 32];
  unsigned dyn;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
  const int rps = ring_rows_per_stage(K);
  const unsigned stage_bytes = static_cast<unsigned>(rps) * K * 2;
  const int S = min(kRingMaxStages, static_cast<int>(dyn / stage_bytes));
  const int groups = (N + rps - 1) / rps;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int G = gridDim.x, b = blockIdx.x;
  const int mine = b < groups ? (groups - 1 - b) / G + 1 : 0;  // row groups of this block
  pdl_launch_dependents<PDL>();
  auto issue = [&](int j) {  // this block's j-th row group into stage j % S
    const int grp = b + j * G;
    const int rows = min(rps, N - grp * rps);
    bulk_load(smem_u32(ring + (j % S) * stage_bytes), W + static_cast<size_t>(grp) * rps * K,
              static_cast<unsigned>(rows) * K * 2, smem_u32(&bar[j % S]));
  };
  if (tid == 0) {
    for (int s = 0; s < S; ++s) bulk_bar_init(smem_u32(&bar[s]));
    bulk_bar_init_fence();
    for (int j = 0; j < S && j < mine; ++j) issue(j);  // weights first: before the wait
  }
  __syncthreads();
  pdl_wait<PDL>();
  const int m = K / 2048;  // CUDA cores: 16-byte columns per thread per row
  vec4u xr[8];
  if (!TC) {
#pragma unroll
    for (int q = 0; q < 8; ++q) xr[q] = q < m ? load_x16(x + 8 * (tid + kRingThreads * q)) : zero4();
  }
  const int g = lane >> 2, t = lane & 3;
  const int kw = warp * (K / 8);  // tensor cores: this warp's k-slice of every row
  const unsigned long long t0 = port_const_clock();
  for (int j = 0; j < mine; ++j) {
    const int s = j % S;
    bulk_wait(smem_u32(&bar[s]), static_cast<unsigned>((j / S) & 1), t0, kBulkTimeoutTicks);
    const int grp = b + j * G;
    const int rows = min(rps, N - grp * rps);
    const unsigned char* st = ring + s * stage_bytes;
    if (!TC) {
      const vec4u* sv = reinterpret_cast<const vec4u*>(st);
#pragma unroll
      for (int r = 0; r < kRingMaxRows; ++r) {
        if (r >= rows) break;
        float a0 = 0.f, a1 = 0.f;
#pragma unroll
        for (int q = 0; q < 8; ++q)
          if (q < m) dot8(sv[r * (K / 8) + tid + kRingThreads * q], xr[q], a0, a1);
        const float sum = warp_sum(a0 + a1);
        if (lane == 0) part[j & 1][r][warp] = sum;
      }
    } else {
      float d[4][4] = {};  // four accumulators: four independent mma chains
      const __half* wrow = reinterpret_cast<const __half*>(st) + static_cast<size_t>(min(g, rows - 1)) * K + kw + 8 * t;
      const __half* xk = x + kw + 8 * t;
      const int nq = K / 256;  // 32-wide k groups in the slice: a multiple of 8
#pragma unroll 1
      for (int q0 = 0; q0 < nq; q0 += 4) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int q = q0 + u;
          const vec4u w = g < rows ? *reinterpret_cast<const vec4u*>(wrow + 32 * q) : zero4();
          const vec4u xv = g == 0 ? load_x16(xk + 32 * q) : zero4();
          mma_16816(d[u], xv.x, 0u, xv.y, 0u, w.x, w.y);
          mma_16816(d[u], xv.z, 0u, xv.w, 0u, w.z, w.w);
        }
      }
      if (g == 0) {  // D row 0: columns 2t, 2t+1 are rows 2t, 2t+1 of the stage
        const float y0 = (d[0][0] + d[1][0]) + (d[2][0] + d[3][0]);
        const float y1 = (d[0][1] + d[1][1]) + (d[2][1] + d[3][1]);
        if (2 * t < rows) part[j & 1][2 * t][warp] = y0;
        if (2 * t + 1 < rows) part[j & 1][2 * t + 1][warp] = y1;
      }
    }
    __syncthreads();  // the stage is consumed and part[j & 1] complete
    if (tid == 0 && j + S < mine) {
      bulk_refill_fence();
      issue(j + S);
    }
    if (tid < rows) {
      float sum = 0.f;
#pragma unroll
      for (int w = 0; w < kRingThreads / 32; ++w) sum += part[j & 1][tid][w];
      y[grp * rps + tid] = __float2half(sum);
    }
  }
#else
  (void)W; (void)x; (void)y; (void)N; (void)K;
  __trap();  // needs sm_90: the host never selects it on older devices
#endif
}

#define GEMV_STAMP_RING(NAME, TC)                                                                                \
  extern "C" __global__ void __launch_bounds__(kRingThreads, 2) NAME(GEMV_ARGS) { bulk_ring<TC, false>(W, x, y, N, K); } \
  extern "C" __global__ void __launch_bounds__(kRingThreads, 2) NAME##_pdl(GEMV_ARGS) { bulk_ring<TC, true>(W, x, y, N, K); }
GEMV_STAMP_RING(gemv_bulk_ring, false)
GEMV_STAMP_RING(gemv_tensor_core_ring, true)

// ---------------------------------------------------------------------------------------------
// v9: the preloaded share. One block per SM (grid = SMs) owns a contiguous slice of rows (its
// share: 31-32 rows, 248-256 KB, at 4096x4096). Before griddepcontrol.wait it requests as much
// of the share as the chip can hold for it while the previous GEMV's block still runs beside
// it: S rows into one-row shared-memory slots by the copy engine (at most kPreSmemBytes, so
// that two launches' blocks fit on one SM: 13 rows at K = 4096) and RR = kPreRegVecs / M rows
// into registers (M = K / 2048 16-byte columns a thread and row: 10 rows at K = 4096). After
// the wait it reads x, consumes the register rows, then the slots in order; a slot consumed
// is refilled at once with the next row of the share not yet requested (a ring of S slots).
// At 4096x4096 23 of 31-32 rows are requested before the wait and the other 8-9 within the
// first 9 slots' consumption after it.
// Why (results/02-gemv.md, "chained: what the dependency costs"): the rows rungs have a
// quarter of their bytes in flight when the wait returns and stream the rest in dependent
// round trips that queue behind the next launch's first loads; here a chain's critical path
// after the wait is arithmetic on bytes already on chip and one round trip for the rest.
// Measured on lent H100s (results/02-gemv.md, "v9"): chained 13.7-14.0 us against the rows rungs'
// 10.8 in the same run: the rest, requested after the wait, queues behind the next launch's
// preload, and the memory idles between launches. Kept as that counter-example.
// PF (the rows requested after the wait): their lines are asked of L2 before the wait, 1 with
// prefetch.global.L2, 2 with its evict_last form, so that the requests after it hit L2.
// CUDA on sm_90 only (the copy engine); K in {2048, 4096, 8192}; at most kPreMaxRows rows a block.
// ---------------------------------------------------------------------------------------------
template <int PF>
__device__ __forceinline__ void pre_prefetch_line(const char* p) {
  if (PF == 2) asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p) : "memory");
  else asm volatile("prefetch.global.L2 [%0];" ::"l"(p) : "memory");
}
template <int M, bool PDL, int PF>
__device__ __forceinline__ void preload_share(GEMV_ARGS, const vec4u* sm, unsigned long long* bar,
                                              float (*part)[kPreThreads / 32], int S) {
  static_assert(PF == 1 || PF == 2, "the L2 request of the rows after the wait: plain or evict_last");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int RR = kPreRegVecs / M;  // rows the registers hold
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int G = gridDim.x, b = blockIdx.x;
  const int r0 = static_cast<int>(static_cast<long long>(b) * N / G);
  const int rows = static_cast<int>(static_cast<long long>(b + 1) * N / G) - r0;
  const int rowv = K / 8;  // 16-byte vectors a row
  if (rows > kPreMaxRows) __trap();  // the host keeps every share within part[] (preload_applies)
  S = min(S, rows);                  // shared-memory slots, one row each
  if (S < min(kPreGroup, rows)) __trap();  // a group's items must not wait on refills the group itself triggers
  const int reg_rows = min(RR, rows - S);
  // The shared-memory rows are a ring of S one-row slots: item j is the row item_row(j) in slot
  // j % S, its mbarrier's phase j / S. Items 0..S-1 are the share's first S rows (requested
  // before the wait); items S.. are the rows after the register rows (requested as slots free).
  const int items = rows - reg_rows;
  auto item_row = [&](int j) { return j < S ? j : j + reg_rows; };
  auto request = [&](int j) {  // thread 0: item j into its slot
    bulk_load(smem_u32(sm + static_cast<size_t>(j % S) * rowv), W + static_cast<size_t>(r0 + item_row(j)) * K,
              static_cast<unsigned>(K) * 2, smem_u32(&bar[j % S]));
  };
  if (tid == 0) {
    for (int j = 0; j < S; ++j) bulk_bar_init(smem_u32(&bar[j]));
    bulk_bar_init_fence();
    for (int j = 0; j < S; ++j) request(j);
  }
  vec4u w[RR][M];
  {
    const __half* wb = W + static_cast<size_t>(r0 + S) * K + 8 * tid;
#pragma unroll
    for (int i = 0; i < RR; ++i)
#pragma unroll
      for (int q = 0; q < M; ++q) w[i][q] = i < reg_rows ? load_weights16(wb + i * K + 8 * kPreThreads * q) : zero4();
  }
  {  // the rows the ring streams after the wait: their lines into L2 now. The loop also holds the
     // register loads above griddepcontrol.wait in SASS: without it (a plain form, dropped) ptxas
     // sank 12-16 of the 20 below ACQBULK, and one prefetch did not stop it (H100, 8c2d6df, 8928f31)
    const char* c = reinterpret_cast<const char*>(W + static_cast<size_t>(r0 + S + reg_rows) * K);
    const long long bytes = static_cast<long long>(rows - S - reg_rows) * K * 2;
    for (long long off = static_cast<long long>(tid) * 128; off < bytes; off += kPreThreads * 128) pre_prefetch_line<PF>(c + off);
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them
  pdl_wait<PDL>();
  vec4u xr[M];
#pragma unroll
  for (int q = 0; q < M; ++q) xr[q] = load_x16(x + 8 * (tid + kPreThreads * q));
  // Rows go in groups of kPreGroup: their dot products, then their butterflies interleaved, so
  // that a warp waits for one shuffle chain per group, not one per row (the first build summed
  // row by row: every warp reads every row, so the chains ran back to back, ~300 cycles a row).
  auto sum_rows = [&](const int (&r)[kPreGroup], const vec4u (&v)[kPreGroup][M], int n) {
    float s[kPreGroup];
#pragma unroll
    for (int u = 0; u < kPreGroup; ++u) {
      float a0 = 0.f, a1 = 0.f;
#pragma unroll
      for (int q = 0; q < M; ++q) dot8(v[u][q], xr[q], a0, a1);
      s[u] = a0 + a1;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
      for (int u = 0; u < kPreGroup; ++u) s[u] += __shfl_xor_sync(0xffffffffu, s[u], o);
    if (lane == 0)
#pragma unroll
      for (int u = 0; u < kPreGroup; ++u)
        if (u < n) part[r[u]][warp] = s[u];
  };
#pragma unroll
  for (int i0 = 0; i0 < RR; i0 += kPreGroup) {  // the register rows
    int r[kPreGroup];
    vec4u v[kPreGroup][M];
#pragma unroll
    for (int u = 0; u < kPreGroup; ++u) {
      r[u] = S + i0 + u;
#pragma unroll
      for (int q = 0; q < M; ++q) v[u][q] = i0 + u < RR ? w[i0 + u < RR ? i0 + u : 0][q] : zero4();
    }
    if (i0 < reg_rows) sum_rows(r, v, reg_rows - i0);
  }
  const unsigned long long t0 = port_const_clock();
#pragma unroll 1
  for (int j = 0; j < items; j += kPreGroup) {  // the slots, kPreGroup items at a time
    int r[kPreGroup];
    vec4u v[kPreGroup][M];
#pragma unroll
    for (int u = 0; u < kPreGroup; ++u) {
      const int i = min(j + u, items - 1);  // past the end: the last item again, its sum not stored
      r[u] = item_row(i);
      bulk_wait(smem_u32(&bar[i % S]), static_cast<unsigned>((i / S) & 1), t0, kBulkTimeoutTicks);
#pragma unroll
      for (int q = 0; q < M; ++q) v[u][q] = sm[static_cast<size_t>(i % S) * rowv + tid + kPreThreads * q];
    }
    sum_rows(r, v, items - j);
    if (j + S < items) {  // slots needed again: once every warp has read them, refill them
      __syncthreads();
      if (tid == 0) {
        bulk_refill_fence();
        for (int u = 0; u < kPreGroup && j + u + S < items; ++u) request(j + u + S);
      }
    }
  }
  __syncthreads();
  for (int r = tid; r < rows; r += kPreThreads) {
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kPreThreads / 32; ++k) sum += part[r][k];
    y[r0 + r] = __float2half(sum);
  }
#else
  (void)W; (void)x; (void)y; (void)N; (void)K; (void)sm; (void)bar; (void)part; (void)S;
  __trap();  // needs sm_90: the host never selects it on older devices
#endif
}
// One kernel for the three widths (the host allows only these K); the shared-memory arrays are
// declared once here so that the three instances do not each reserve their own.
template <bool PDL, int PF>
__device__ __forceinline__ void preload_dispatch(GEMV_ARGS) {
  extern __shared__ __align__(128) vec4u pre_smem[];
  __shared__ __align__(8) unsigned long long bar[kPreMaxSlots];
  __shared__ float part[kPreMaxRows][kPreThreads / 32];
  pdl_launch_dependents<PDL>();  // the next GEMV's block may take the other half of this SM now
  unsigned dyn;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
  const int S = min(kPreMaxSlots, static_cast<int>(dyn / (2u * K)));
  if (K == 2048) preload_share<1, PDL, PF>(W, x, y, N, K, pre_smem, bar, part, S);
  else if (K == 4096) preload_share<2, PDL, PF>(W, x, y, N, K, pre_smem, bar, part, S);
  else preload_share<4, PDL, PF>(W, x, y, N, K, pre_smem, bar, part, S);
}
#define GEMV_STAMP_PRE(NAME, PF)                                                                                   \
  extern "C" __global__ void __launch_bounds__(kPreThreads, 2) NAME(GEMV_ARGS) { preload_dispatch<false, PF>(W, x, y, N, K); } \
  extern "C" __global__ void __launch_bounds__(kPreThreads, 2) NAME##_pdl(GEMV_ARGS) { preload_dispatch<true, PF>(W, x, y, N, K); }
GEMV_STAMP_PRE(gemv_preload_l2, 1)
GEMV_STAMP_PRE(gemv_preload_l2last, 2)
#endif  // !PORT_HIP

#if !defined(PORT_HIP)
#include <cublasLt.h>
#include <cublas_v2.h>
#define CHECK_CUBLAS(expr)                                                                              \
  do {                                                                                                  \
    cublasStatus_t st_ = (expr);                                                                        \
    if (st_ != CUBLAS_STATUS_SUCCESS) FAIL("%s failed: cuBLAS status %d", #expr, static_cast<int>(st_)); \
  } while (0)
#elif defined(HAVE_HIPBLASLT)
#include <hipblaslt/hipblaslt.h>
#define CHECK_HIPBLAS(expr)                                                                             \
  do {                                                                                                  \
    hipblasStatus_t st_ = (expr);                                                                       \
    if (st_ != HIPBLAS_STATUS_SUCCESS) FAIL("%s failed: hipBLAS status %d", #expr, static_cast<int>(st_)); \
  } while (0)
#endif

namespace {

constexpr const char* kNoWaitMode = "no-wait bound";  // chained without griddepcontrol.wait: never a result
constexpr double kTolerance = 1e-3;  // relative L2 against the double reference
// The rule (the issue's): the rotation's working set at least 4x the L2, refused below it.
constexpr double kWorkingSetOverL2 = 4.0;
// The rotation every figure is timed over by default: 20x the L2 (4096x4096: 32 copies, 1.07 GB,
// the original's, on an H100; 38 copies, 1.27 GB, on an H200); a decode step never reads a weight
// twice. At the rule's 4x, the L2 lent H100 chains 3-4%: 0.3-0.4 us a GEMV at 4096x4096, and at
// 8192x8192 (2 copies) a chain ran 1.5 us faster than over 8 copies, past 1.02x the card's
// ceiling, and stopped a make run (results/02-gemv.md). Isolated figures moved by under 0.5%.
// --working-set 4..19 times over a shallower rotation and then repeats the 4096x4096 chains over
// this one, side by side (mode "chained, deep rotation").
constexpr double kDeepWorkingSetOverL2 = 20.0;
constexpr const char* kDeepMode = "chained, deep rotation";

// ---------------------------------------------------------------------------------------------
// The hand-written rungs, one table (the launcher, the grid rules and the rows all read it).
// ---------------------------------------------------------------------------------------------
enum Kind { kWarpPerRow, kRowsInFlight, kSplitK, kTensor, kRing, kPipe, kTensorPipe, kPreload };
struct Hand {
  int rung;
  const char* version;  // the rung's name (what it does)
  const char* variant;
  const char* symbol;
  GemvKernel fn;
  GemvKernel pdl;  // chained variant, or nullptr
  Kind kind;
  int rows;  // rows per warp (4), per block (5); 16 per tile (6)
  int ks;    // warps per tile or per team (6, 6p); 16-byte vectors per lane per chunk (4p)
  // more chained variants (rows-shaped rungs): the next kernel released when a warp has one
  // chunk left; no griddepcontrol.wait at all (the zero-cost-dependency bound, not a chain)
  GemvKernel late_pdl = nullptr;
  GemvKernel nowait_pdl = nullptr;
  // the data-carried form of the chain (x polled, no wait; run on a real y->x chain only), or nullptr
  GemvKernel data_pdl = nullptr;
};

// A rows-in-flight-shaped rung: its isolated kernel NAME and the chained NAME_pdl,
// NAME_late1_pdl and NAME_nowait_pdl that GEMV_STAMP_ROWS_AS stamps beside it.
#define GEMV_HAND_ROWS_WITH(RUNG, VERSION, VARIANT, NAME, R, DATA) \
  { RUNG, VERSION, VARIANT, #NAME, NAME, NAME##_pdl, kRowsInFlight, R, 1, NAME##_late1_pdl, NAME##_nowait_pdl, DATA }
#define GEMV_HAND_ROWS(RUNG, VERSION, VARIANT, NAME, R) GEMV_HAND_ROWS_WITH(RUNG, VERSION, VARIANT, NAME, R, nullptr)
// ... and the rows rungs with a data-carried form (NAME_data_pdl, GEMV_STAMP_ROWS_DATA; CUDA only)
#if !defined(PORT_HIP)
#define GEMV_HAND_ROWS_DATA(RUNG, VERSION, VARIANT, NAME, R) \
  GEMV_HAND_ROWS_WITH(RUNG, VERSION, VARIANT, NAME, R, NAME##_data_pdl)
#else
#define GEMV_HAND_ROWS_DATA GEMV_HAND_ROWS
#endif

const std::vector<Hand>& hand_rungs() {
  static const std::vector<Hand> h = {
      {1, "one accumulator", "-", "gemv_one_accumulator", gemv_one_accumulator, nullptr, kWarpPerRow, 1, 1},
      {2, "four accumulators", "-", "gemv_four_accumulators", gemv_four_accumulators, nullptr, kWarpPerRow, 1, 1},
      {3, "wide loads", "-", "gemv_wide_loads", gemv_wide_loads, nullptr, kWarpPerRow, 1, 1},
      GEMV_HAND_ROWS(4, "rows in flight", "r1 c16", gemv_rows_in_flight_r1, 1),
      GEMV_HAND_ROWS(4, "rows in flight", "r2 c8", gemv_rows_in_flight_r2, 2),
      GEMV_HAND_ROWS_DATA(4, "rows in flight", "r4 c4", gemv_rows_in_flight_r4, 4),
      GEMV_HAND_ROWS(4, "rows in flight", "r1 c8 lean", gemv_rows_lean_r1c8, 1),
      {4, "rows in flight", "r1 c8 pipelined", "gemv_rows_pipelined_r1c8", gemv_rows_pipelined_r1c8,
       gemv_rows_pipelined_r1c8_pdl, kPipe, 1, 8},
      {4, "rows in flight", "r2 c4 pipelined", "gemv_rows_pipelined_r2c4", gemv_rows_pipelined_r2c4,
       gemv_rows_pipelined_r2c4_pdl, kPipe, 2, 4},
      {4, "rows in flight", "r4 c2 pipelined", "gemv_rows_pipelined_r4c2", gemv_rows_pipelined_r4c2,
       gemv_rows_pipelined_r4c2_pdl, kPipe, 4, 2},
      {5, "split-K block per row", "r1 c8", "gemv_split_k_r1", gemv_split_k_r1, gemv_split_k_r1_pdl, kSplitK, 1, 1},
      {5, "split-K block per row", "r2 c4", "gemv_split_k_r2", gemv_split_k_r2, gemv_split_k_r2_pdl, kSplitK, 2, 1},
#if !defined(PORT_HIP)
      {6, "tensor core mma.sync", "ks1", "gemv_tensor_core_ks1", gemv_tensor_core_ks1, gemv_tensor_core_ks1_pdl,
       kTensor, 16, 1},
      {6, "tensor core mma.sync", "ks2", "gemv_tensor_core_ks2", gemv_tensor_core_ks2, gemv_tensor_core_ks2_pdl,
       kTensor, 16, 2},
      {6, "tensor core mma.sync", "ks4", "gemv_tensor_core_ks4", gemv_tensor_core_ks4, gemv_tensor_core_ks4_pdl,
       kTensor, 16, 4},
      {6, "tensor core mma.sync", "ks8", "gemv_tensor_core_ks8", gemv_tensor_core_ks8, gemv_tensor_core_ks8_pdl,
       kTensor, 16, 8},
      {6, "tensor core mma.sync", "pipelined ks1", "gemv_tensor_core_pipelined_ks1", gemv_tensor_core_pipelined_ks1,
       gemv_tensor_core_pipelined_ks1_pdl, kTensorPipe, 8, 1},
      {6, "tensor core mma.sync", "pipelined ks2", "gemv_tensor_core_pipelined_ks2", gemv_tensor_core_pipelined_ks2,
       gemv_tensor_core_pipelined_ks2_pdl, kTensorPipe, 8, 2},
      {6, "tensor core mma.sync", "pipelined ks4", "gemv_tensor_core_pipelined_ks4", gemv_tensor_core_pipelined_ks4,
       gemv_tensor_core_pipelined_ks4_pdl, kTensorPipe, 8, 4},
      GEMV_HAND_ROWS(6, "tensor core mma.sync", "rows r1 c16", gemv_tensor_rows_r1, 1),
      GEMV_HAND_ROWS(6, "tensor core mma.sync", "rows r2 c8", gemv_tensor_rows_r2, 2),
      GEMV_HAND_ROWS_DATA(6, "tensor core mma.sync", "rows r4 c4", gemv_tensor_rows_r4, 4),
      GEMV_HAND_ROWS(6, "tensor core mma.sync", "rows r1 c8 lean", gemv_tensor_rows_lean_r1c8, 1),
      {6, "tensor core mma.sync", "bulk-copy ring", "gemv_tensor_core_ring", gemv_tensor_core_ring,
       gemv_tensor_core_ring_pdl, kRing, 0, 0},
      {8, "bulk-copy ring", "CUDA cores", "gemv_bulk_ring", gemv_bulk_ring, gemv_bulk_ring_pdl, kRing, 0, 0},
      {9, "preloaded share", "after the wait from L2", "gemv_preload_l2", gemv_preload_l2, gemv_preload_l2_pdl,
       kPreload, 0, 0},
      {9, "preloaded share", "after the wait from L2, evict_last", "gemv_preload_l2last", gemv_preload_l2last,
       gemv_preload_l2last_pdl, kPreload, 0, 0},
#endif
  };
  return h;
}

struct Shape {
  int n, k;
  std::string model;  // where the shape comes from
  bool sweep;         // part of the N = K size sweep
};

std::vector<Shape> all_shapes(bool quick) {
  if (quick) return {{4096, 4096, "original", true}, {4096, 14336, "Llama-3.1-8B down", false}, {1024, 1024, "size sweep", true}};
  std::vector<Shape> s = {
      {4096, 4096, "original; Llama-3.1-8B q/o", true},
      {6144, 4096, "Llama-3.1-8B qkv", false},
      {28672, 4096, "Llama-3.1-8B gate+up", false},
      {4096, 14336, "Llama-3.1-8B down", false},
      {128256, 4096, "Llama-3.1-8B lm_head", false},
      {3072, 2048, "Llama-3.2-1B qkv", false},
      {2048, 2048, "Llama-3.2-1B q/o", true},
      {16384, 2048, "Llama-3.2-1B gate+up", false},
      {2048, 8192, "Llama-3.2-1B down", false},
      {128256, 2048, "Llama-3.2-1B lm_head", false},
  };
  for (int nk : {512, 1024, 3072, 6144, 8192, 12288, 16384}) s.push_back({nk, nk, "size sweep", true});
  return s;
}

bool parse_shape(const std::string& t, int* n, int* k) {
  size_t p = t.find('x');
  if (p == std::string::npos) return false;
  long long a = 0, b = 0;
  if (!Flags::parse_int(t.substr(0, p), &a, false) || !Flags::parse_int(t.substr(p + 1), &b, false)) return false;
  if (a < 16 || b < 128 || a > (1 << 20) || b > (1 << 20) || b % 128 != 0) return false;
  *n = static_cast<int>(a);
  *k = static_cast<int>(b);
  return true;
}

// ---------------------------------------------------------------------------------------------
// One problem: rotating weight copies, x, y, and the CPU double reference for copy 0.
// ---------------------------------------------------------------------------------------------
struct Problem {
  int n = 0, k = 0;
  size_t copies = 0;
  int launches = 0;
  __half* w = nullptr;  // copies x N x K
  __half* x = nullptr;
  __half* y = nullptr;
  std::vector<double> ref;
  uint64_t seed = 0;
  const __half* weights(size_t c) const { return w + c * static_cast<size_t>(n) * k; }
  // Launch i of a graph reads copy (launches-1-i) % copies: the last launch reads copy 0, so
  // the graph's final y can be validated against the reference too.
  size_t copy_for_launch(int i) const { return static_cast<size_t>(launches - 1 - i) % copies; }
  ~Problem() {
    (void)cudaFree(w);
    (void)cudaFree(x);
    (void)cudaFree(y);
  }
};

// y = W x in double from the FP16 bits, rows spread over the host's threads.
std::vector<double> cpu_gemv_double(const std::vector<__half>& wh, const std::vector<__half>& xh, int n, int k) {
  std::vector<double> lut(65536);
  for (int b = 0; b < 65536; ++b) {
    __half_raw raw;
    raw.x = static_cast<unsigned short>(b);
    const __half h(raw);
    lut[b] = static_cast<double>(__half2float(h));
  }
  std::vector<double> xd(k);
  for (int i = 0; i < k; ++i) xd[i] = static_cast<double>(__half2float(xh[i]));
  std::vector<double> ref(n, 0.0);
  const int threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = t; r < n; r += threads) {
        const uint16_t* row = reinterpret_cast<const uint16_t*>(wh.data() + static_cast<size_t>(r) * k);
        double s = 0;
        for (int i = 0; i < k; ++i) s += lut[row[i]] * xd[i];
        ref[r] = s;
      }
    });
  for (auto& th : pool) th.join();
  return ref;
}

void cpu_reference(Problem& p) {
  const size_t nk = static_cast<size_t>(p.n) * p.k;
  std::vector<__half> wh(nk), xh(p.k);
  CHECK_CUDA(cudaMemcpy(wh.data(), p.w, nk * sizeof(__half), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(xh.data(), p.x, p.k * sizeof(__half), cudaMemcpyDeviceToHost));
  p.ref = cpu_gemv_double(wh, xh, p.n, p.k);
}

// Copies: enough that the rotation's working set is >= over_l2 x the L2 (default 20; the rule's floor 4),
// at least two.
size_t copies_for(const Experiment& ex, int n, int k, double over_l2) {
  const double wbytes = 2.0 * n * k;
  return std::max<size_t>(2, static_cast<size_t>(std::ceil(over_l2 * ex.l2_bytes() / wbytes)));
}

std::unique_ptr<Problem> make_problem(Experiment& ex, const Shape& s, int launches_flag, double over_l2) {
  auto p = std::make_unique<Problem>();
  p->n = s.n;
  p->k = s.k;
  p->copies = copies_for(ex, s.n, s.k, over_l2);
  // Every copy must be read once per replay for the rotation to defeat the L2.
  p->launches = std::max<int>(sanitizing() ? 0 : launches_flag, static_cast<int>(p->copies));
  const size_t nk = static_cast<size_t>(s.n) * s.k;
  const uint64_t ws = static_cast<uint64_t>(p->copies) * nk * sizeof(__half);
  WorkingSetVerdict v = check_working_set(ws, ex.l2_bytes(), kWorkingSetOverL2);
  if (!v.ok) FAIL("%dx%d: refusing to measure: %s", s.n, s.k, v.message.c_str());
  size_t free_b = 0, total_b = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (ws + (size_t(1) << 30) > free_b) FAIL("%dx%d: %.2f GB of weight copies do not fit in %.2f GB free", s.n, s.k, ws / 1e9, free_b / 1e9);
  CHECK_CUDA(cudaMalloc(&p->w, ws));
  CHECK_CUDA(cudaMalloc(&p->x, s.k * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&p->y, s.n * sizeof(__half)));
  p->seed = fresh_seed();
  for (size_t c = 0; c < p->copies; ++c) fill_random_half(p->w + c * nk, nk, p->seed + 7919 * (c + 1));
  fill_random_half(p->x, s.k, p->seed ^ 0x5bd1e995ull);
  CHECK_CUDA(cudaDeviceSynchronize());
  cpu_reference(*p);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Vendor rungs.
// ---------------------------------------------------------------------------------------------
struct Vendor {
#if !defined(PORT_HIP)
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = size_t(32) << 20;
  // Per-shape cuBLASLt state.
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool have_algo = false;
  int lt_results = 0;

  explicit Vendor(cudaStream_t s) {
    CHECK_CUBLAS(cublasCreate(&blas));
    CHECK_CUBLAS(cublasLtCreate(&lt));
    CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
    // Zeroed once: cuBLASLt's split-K reduction reads workspace words it has not written
    // (compute-sanitizer initcheck reports them), so give it defined memory.
    CHECK_CUDA(cudaMemset(workspace, 0, workspace_bytes));
    // A fixed workspace: cuBLAS must not allocate inside graph capture.
    CHECK_CUBLAS(cublasSetWorkspace(blas, workspace, workspace_bytes));
    CHECK_CUBLAS(cublasSetStream(blas, s));
  }
  ~Vendor() {
    drop_shape();
    if (blas) (void)cublasDestroy(blas);
    if (lt) (void)cublasLtDestroy(lt);
    (void)cudaFree(workspace);
  }
  void drop_shape() {
    if (desc) (void)cublasLtMatmulDescDestroy(desc);
    if (la) (void)cublasLtMatrixLayoutDestroy(la);
    if (lb) (void)cublasLtMatrixLayoutDestroy(lb);
    if (lc) (void)cublasLtMatrixLayoutDestroy(lc);
    desc = nullptr;
    la = lb = lc = nullptr;
    have_algo = false;
  }
  // Row-major W[N,K] is column-major K x N with ld K: y = op(A) x with op = T, m = N, n = 1, k = K.
  void cublas_gemv(const __half* w, const __half* x, __half* y, int n, int k) {
    const float alpha = 1.f, beta = 0.f;
    CHECK_CUBLAS(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, 1, k, &alpha, w, CUDA_R_16F, k, x, CUDA_R_16F, k, &beta,
                              y, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  // Returns false (and why) when the heuristic offers nothing for the shape.
  bool lt_prepare(int n, int k, std::string* why) {
    drop_shape();
    CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, k, n, k));
    CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, k, 1, k));
    CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, n, 1, n));
    cublasLtMatmulPreference_t pref = nullptr;
    CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                      sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t res[4] = {};
    lt_results = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 4, res, &lt_results);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || lt_results == 0 || res[0].state != CUBLAS_STATUS_SUCCESS) {
      *why = "cublasLtMatmulAlgoGetHeuristic returned no algorithm (status " + std::to_string(static_cast<int>(st)) + ")";
      return false;
    }
    algo = res[0].algo;  // the heuristic's first choice
    have_algo = true;
    return true;
  }
  void lt_gemv(const __half* w, const __half* x, __half* y, cudaStream_t s) {
    const float alpha = 1.f, beta = 0.f;
    CHECK_CUBLAS(cublasLtMatmul(lt, desc, &alpha, w, la, x, lb, &beta, y, lc, y, lc, &algo, workspace, workspace_bytes, s));
  }
#elif defined(HAVE_HIPBLASLT)
  // hipBLASLt: the same computation through AMD's library (compile-guarded; not built here).
  hipblasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = size_t(32) << 20;
  hipblasLtMatmulDesc_t desc = nullptr;
  hipblasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  hipblasLtMatmulAlgo_t algo{};
  bool have_algo = false;
  int lt_results = 0;
  explicit Vendor(cudaStream_t) {
    CHECK_HIPBLAS(hipblasLtCreate(&lt));
    CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
  }
  ~Vendor() {
    drop_shape();
    if (lt) (void)hipblasLtDestroy(lt);
    (void)cudaFree(workspace);
  }
  void drop_shape() {
    if (desc) (void)hipblasLtMatmulDescDestroy(desc);
    if (la) (void)hipblasLtMatrixLayoutDestroy(la);
    if (lb) (void)hipblasLtMatrixLayoutDestroy(lb);
    if (lc) (void)hipblasLtMatrixLayoutDestroy(lc);
    desc = nullptr;
    la = lb = lc = nullptr;
    have_algo = false;
  }
  bool lt_prepare(int n, int k, std::string* why) {
    drop_shape();
    CHECK_HIPBLAS(hipblasLtMatmulDescCreate(&desc, HIPBLAS_COMPUTE_32F, HIP_R_32F));
    hipblasOperation_t ta = HIPBLAS_OP_T, tb = HIPBLAS_OP_N;
    CHECK_HIPBLAS(hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_HIPBLAS(hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CHECK_HIPBLAS(hipblasLtMatrixLayoutCreate(&la, HIP_R_16F, k, n, k));
    CHECK_HIPBLAS(hipblasLtMatrixLayoutCreate(&lb, HIP_R_16F, k, 1, k));
    CHECK_HIPBLAS(hipblasLtMatrixLayoutCreate(&lc, HIP_R_16F, n, 1, n));
    hipblasLtMatmulPreference_t pref = nullptr;
    CHECK_HIPBLAS(hipblasLtMatmulPreferenceCreate(&pref));
    CHECK_HIPBLAS(hipblasLtMatmulPreferenceSetAttribute(pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                        sizeof workspace_bytes));
    hipblasLtMatmulHeuristicResult_t res[4] = {};
    lt_results = 0;
    hipblasStatus_t st = hipblasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 4, res, &lt_results);
    (void)hipblasLtMatmulPreferenceDestroy(pref);
    if (st != HIPBLAS_STATUS_SUCCESS || lt_results == 0) {
      *why = "hipblasLtMatmulAlgoGetHeuristic returned no algorithm";
      return false;
    }
    algo = res[0].algo;
    have_algo = true;
    return true;
  }
  void lt_gemv(const __half* w, const __half* x, __half* y, cudaStream_t s) {
    const float alpha = 1.f, beta = 0.f;
    CHECK_HIPBLAS(hipblasLtMatmul(lt, desc, &alpha, w, la, x, lb, &beta, y, lc, y, lc, &algo, workspace, workspace_bytes, s));
  }
#else
  explicit Vendor(cudaStream_t) {}
#endif
};

constexpr bool kHaveCublas =
#if !defined(PORT_HIP)
    true;
#else
    false;
#endif
constexpr bool kHaveLt =
#if !defined(PORT_HIP) || defined(HAVE_HIPBLASLT)
    true;
#else
    false;
#endif
constexpr const char* kLtName =
#if !defined(PORT_HIP)
    "cuBLASLt";
#else
    "hipBLASLt";
#endif

// ---------------------------------------------------------------------------------------------
// Configurations and grid rules.
// ---------------------------------------------------------------------------------------------
// The chained kernels of a rung: the chain itself (Hand::pdl), its late-release variant, and
// the no-wait bound (Hand::late_pdl, Hand::nowait_pdl).
// kRealWait / kRealData: a real chain (y into x, run_real_chain), by the wait or by the data.
enum Chain { kReleaseFirst, kReleaseLate, kNoWait, kRealWait, kRealData };
struct Config {
  const Hand* hand = nullptr;  // nullptr: a vendor rung
  int vendor = 0;              // 1 cuBLAS, 2 cuBLASLt / hipBLASLt
  int grid = 0, threads = 0;
  int stages = 0;  // ring rungs: shared-memory stages (dynamic shared memory = stages x stage bytes)
  bool pdl = false;
  Chain chain = kReleaseFirst;  // which chained kernel (pdl only)
  std::string grid_rule;  // why this grid
};

std::string version_name(const Config& c) {
  if (!c.hand) return c.vendor == 1 ? "cuBLAS" : kLtName;
  return std::to_string(c.hand->rung) + " " + c.hand->version;
}
std::string variant_name(const Config& c) {
  if (!c.hand) return c.vendor == 1 ? "cublasGemmEx" : "heuristic #1";
  if (c.pdl && c.chain == kReleaseLate) return std::string(c.hand->variant) + " late release";
  if (c.pdl && c.chain == kNoWait) return std::string(c.hand->variant) + " no wait (bound)";
  if (c.pdl && c.chain == kRealWait) return std::string(c.hand->variant) + " y->x, wait";
  if (c.pdl && c.chain == kRealData) return std::string(c.hand->variant) + " y->x, data-carried";
  return c.hand->variant;
}
std::string symbol_name(const Config& c) {
  if (!c.hand) return c.vendor == 1 ? "cublasGemmEx" : (kHaveCublas ? "cublasLtMatmul" : "hipblasLtMatmul");
  if (!c.pdl) return c.hand->symbol;
  return std::string(c.hand->symbol) +
         (c.chain == kReleaseLate ? "_late1" : c.chain == kNoWait ? "_nowait" : c.chain == kRealData ? "_data" : "") + "_pdl";
}
std::string describe(const Config& c) {
  char b[200];
  if (!c.hand) std::snprintf(b, sizeof b, "%s", version_name(c).c_str());
  else
    std::snprintf(b, sizeof b, "%s %s, %d x %d%s%s", version_name(c).c_str(), variant_name(c).c_str(), c.grid, c.threads,
                  c.stages ? (", " + std::to_string(c.stages) + " stages").c_str() : "", c.pdl ? ", PDL" : "");
  return b;
}

class Planner {
 public:
  Planner(const Experiment& ex) : ex_(ex) {}
  int sms() const { return ex_.sm_count(); }
  // Resident blocks per SM for a kernel and block size (a nominal 2 without a GPU: --list only).
  int occupancy(const Hand& h, int threads) const {
    if (!ex_.has_gpu()) return 2;
    int b = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, reinterpret_cast<const void*>(h.fn), threads, 0));
    return std::max(b, 1);
  }
  // The configurations of one hand-written rung at one shape. full: the 4096x4096 sweep.
  std::vector<Config> configs(const Hand& h, int n, int k, bool full, bool quick) const {
    std::vector<Config> out;
    auto add = [&](int grid, int threads, const std::string& rule, int stages = 0) {
      grid = std::max(1, grid);
      for (auto& c : out)
        if (c.grid == grid && c.threads == threads && c.stages == stages) return;
      Config c;
      c.hand = &h;
      c.grid = grid;
      c.threads = threads;
      c.stages = stages;
      c.grid_rule = rule;
      out.push_back(c);
    };
    const int s = sms();
    switch (h.kind) {
      case kWarpPerRow: {
        const int threads = 256, wpb = threads / ex_.prop().warpSize;
        const int one_row_per_warp = (n + wpb - 1) / wpb;
        std::vector<double> mults = quick ? std::vector<double>{2, 8} : std::vector<double>{2, 8, 32};
        if (full) mults = {0.5, 1, 2, 3, 4, 8, 16, 32};
        for (double m : mults) add(std::min(one_row_per_warp, static_cast<int>(m * s)), threads, "SMs x " + fmt(m));
        if (full && !quick)
          for (int g : {64, 128, 256, 512, 1024, 2048}) add(std::min(one_row_per_warp, g), threads, "original's grid");
        add(one_row_per_warp, threads, "one row per warp");
        break;
      }
      case kRowsInFlight:
      case kPipe: {
        std::vector<int> tpbs = full && !quick ? std::vector<int>{128, 256} : std::vector<int>{256};  // __launch_bounds__(256, 2)
        for (int threads : tpbs) {
          const int wpb = threads / ex_.prop().warpSize;
          const int groups = (n + h.rows - 1) / h.rows;
          const int needed = (groups + wpb - 1) / wpb;  // blocks for one group per warp
          const int resident = occupancy(h, threads) * s;
          const int waves = (needed + resident - 1) / resident;
          add((needed + waves - 1) / waves, threads, "balanced waves");  // every warp the same number of groups
          if (threads == 256) {
            add(needed, threads, "one group per warp");
            add(std::min(needed, resident), threads, "resident blocks");
            // half the resident blocks: room on every SM for the next chained GEMV's blocks
            if (full && !quick && occupancy(h, threads) >= 3) add(std::min(needed, resident / 2), threads, "half the resident blocks");
            if (!quick) add(std::min(needed, s), threads, "one block per SM");
          }
        }
        break;
      }
      case kSplitK: {
        const int threads = 256;
        const int groups = (n + h.rows - 1) / h.rows;
        add(groups, threads, "one block per row group");
        if (!quick) add(std::min(groups, occupancy(h, threads) * s), threads, "resident blocks");
        break;
      }
      case kTensor: {
        const int threads = 32 * h.ks;
        const int tiles = (n + 15) / 16;
        add(tiles, threads, "one block per 16-row tile");
        if (full && !quick) add(std::min(tiles, occupancy(h, threads) * s), threads, "resident blocks");
        break;
      }
      case kTensorPipe: {
        const int threads = 256, teams = threads / ex_.prop().warpSize / h.ks;
        const int groups = (n + 7) / 8;
        const int needed = (groups + teams - 1) / teams;  // blocks for one group per team
        const int resident = occupancy(h, threads) * s;
        const int waves = (needed + resident - 1) / resident;
        add((needed + waves - 1) / waves, threads, "balanced waves");
        add(needed, threads, "one group per team");
        if (!quick) add(std::min(needed, s), threads, "one block per SM");
        break;
      }
      case kRing: {
        if (!ring_applies(k)) break;
        const int groups = (n + ring_rows_per_stage(k) - 1) / ring_rows_per_stage(k);
        // Stages per block: 6 fill one SM's shared memory; 3 leave room for a second block
        // (two per SM, or the next chained kernel's block beside this one).
        add(std::min(groups, s), kRingThreads, "one block per SM, 6 stages", kRingPlannedMaxStages);
        add(std::min(groups, 2 * s), kRingThreads, "two blocks per SM, 3 stages", 3);
        add(std::min(groups, s), kRingThreads, "one block per SM, 3 stages (room for the next kernel)", 3);
        if (full && !quick) add(std::min(groups, s), kRingThreads, "one block per SM, 4 stages", 4);
        break;
      }
      case kPreload: {
        if (!preload_applies(n, k, s)) break;
        add(std::min(n, s), kPreThreads, "one block per SM (a second launch's beside it)");
        break;
      }
    }
    return out;
  }
  static std::string fmt(double m) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", m);
    return b;
  }

 private:
  const Experiment& ex_;
};

// ---------------------------------------------------------------------------------------------
// Running one configuration: validate, then time, then validate the graph's output.
// ---------------------------------------------------------------------------------------------
struct Result {
  Config cfg;
  int n = 0, k = 0;
  bool sweep = false;
  std::string mode;
  Summary us;
  double gbps = 0, mbu = 0;
  CompareResult check;
};

class Runner {
 public:
  Runner(Experiment& ex, Vendor& vendor, double ceiling, double spec)
      : ex_(ex), vendor_(vendor), ceiling_(ceiling), spec_(spec) {}

  void enqueue(const Config& c, const Problem& p, size_t copy, cudaStream_t s) {
    const __half* w = p.weights(copy);
    if (!c.hand) {
#if !defined(PORT_HIP)
      if (c.vendor == 1) vendor_.cublas_gemv(w, p.x, p.y, p.n, p.k);
      else vendor_.lt_gemv(w, p.x, p.y, s);
#elif defined(HAVE_HIPBLASLT)
      vendor_.lt_gemv(w, p.x, p.y, s);
#else
      (void)w;
      FAIL("no vendor library in this build");
#endif
      return;
    }
    const size_t smem = c.hand->kind == kPreload ? pre_smem_bytes(p.n, p.k, c.grid) : c.stages ? ring_smem_bytes(p.k, c.stages) : 0;
    if (c.pdl) {
      GemvKernel f = c.chain == kReleaseLate ? c.hand->late_pdl : c.chain == kNoWait ? c.hand->nowait_pdl : c.hand->pdl;
      chain_launch(true, f, c.grid, c.threads, smem, s, w, static_cast<const __half*>(p.x), p.y, p.n, p.k);
      return;
    }
    c.hand->fn<<<c.grid, c.threads, smem, s>>>(w, p.x, p.y, p.n, p.k);
  }

  CompareResult validate_y(const Problem& p, const std::string& what) {
    std::vector<__half> got(p.n);
    CHECK_CUDA(cudaMemcpyAsync(got.data(), p.y, p.n * sizeof(__half), cudaMemcpyDeviceToHost, ex_.stream()));
    CHECK_CUDA(cudaStreamSynchronize(ex_.stream()));
    CompareResult r = compare_rel_l2(p.ref, half_to_double(got), kTolerance, what.c_str());
    if (!r.ok) {
      std::fprintf(stderr, "02-gemv: validation failed: %s at %dx%d (seed %llu): exiting before any further timing\n",
                   what.c_str(), p.n, p.k, static_cast<unsigned long long>(p.seed));
      std::exit(kExitFailure);
    }
    return r;
  }

  Result run(const Config& c, const Problem& p, const TimingPlan& plan) {
    cudaStream_t s = ex_.stream();
    const std::string what = describe(c);
    // Correct before timed: copy 0, y poisoned.
    poison_nan(p.y, p.n * sizeof(__half), s);
    enqueue(c, p, 0, s);
    CHECK_LAUNCH();
    Result r;
    r.check = validate_y(p, what);
    r.cfg = c;
    r.n = p.n;
    r.k = p.k;
    const bool no_wait = c.pdl && c.chain == kNoWait;
    r.mode = !c.pdl ? "isolated" : no_wait ? kNoWaitMode : "chained";
    Graph g;
    g.capture(
        [&](cudaStream_t cs) {
          for (int i = 0; i < p.launches; ++i) enqueue(c, p, p.copy_for_launch(i), cs);
        },
        s);
    std::vector<double> ms = time_graph(g, plan, s);
    std::vector<double> us;
    for (double m : ms) us.push_back(m * 1e3 / p.launches);
    r.us = summarize(us);
    // The timed graph's own output: its last launch read copy 0.
    poison_nan(p.y, p.n * sizeof(__half), s);
    g.launch(s);
    CHECK_LAUNCH();
    // Without the wait, launches overlap and any of them may write y last: only the single
    // launch above is validated (it has no predecessor to race with).
    if (!no_wait) (void)validate_y(p, what + " (graph replay)");
    else CHECK_CUDA(cudaStreamSynchronize(s));
    r.gbps = gbps(gemv_bytes(p.n, p.k), r.us.median * 1e-3);
    r.mbu = r.gbps / ceiling_;
    // The no-wait bound overlaps launches freely, as the read-only bound does: like it, it may pass
    // the one-launch ceiling a little and is held to the datasheet (timed over the deep rotation
    // only); every result to the ceiling.
    if (no_wait) ex_.require_below_ceiling(r.gbps, spec_, what, 1.0);
    else ex_.require_below_ceiling(r.gbps, ceiling_, what);
    return r;
  }

 private:
  Experiment& ex_;
  Vendor& vendor_;
  double ceiling_, spec_;
};

std::string shape_name(int n, int k) { return std::to_string(n) + "x" + std::to_string(k); }

// The read-only bound (common/launch_size.h): the weights' 2NK bytes read with no arithmetic, in
// the same graph of launches over as many rotating copies, plain and with PDL (released at once,
// never waiting). No GEMV can stream its weights faster than this in the same launch shape, so
// it bounds the isolated and chained rungs from above, measured beside them.
struct ReadBound {
  double us[2] = {0, 0}, mbu[2] = {0, 0};
  std::string best[2];
};
ReadBound read_only_bound(Experiment& ex, const Problem& p, double ceiling, double spec_gbps, bool pdl,
                          const TimingPlan& plan) {
  const size_t chunk_vec = static_cast<size_t>(p.n) * p.k * sizeof(__half) / sizeof(vec4u);
  // As many chunks as make >= 32x the LLC (the ceiling's rule, stricter than the GEMV's 4x): a
  // read with no arithmetic must find nothing of its chunk left in L2.
  const size_t chunk_bytes = chunk_vec * sizeof(vec4u);
  const size_t chunks = std::max<size_t>(p.copies, (32 * ex.l2_bytes() + chunk_bytes - 1) / chunk_bytes);
  StreamBuffer buf(chunks * chunk_vec, fresh_seed());
  LaunchSizeBench bench(buf, ex.sm_count(), ex.l2_bytes());
  ReadBound b;
  for (const LaunchSizeConfig& c : launch_size_distinct(launch_size_configs(ex.prop(), ex.has_gpu()), chunk_vec, ex.sm_count())) {
    if (!bench.validate(c, chunk_vec, ex.stream())) std::exit(kExitFailure);
    const int blocks = launch_size_blocks(c, chunk_vec, ex.sm_count());
    for (int m = 0; m <= (pdl ? 1 : 0); ++m) {
      const std::vector<double> ms = bench.time(c, chunk_vec, p.launches, m != 0, plan, ex.stream());
      std::vector<double> us;
      for (double v : ms) us.push_back(v * 1e3);
      const Summary st = summarize(us);
      const double g = gbps(stream_read_bytes(chunk_vec), st.median * 1e-3);
      // A chain of reads may pass the one-launch ceiling by a little (no ramp at all, launches
      // overlap); the datasheet it may not pass (01-ceiling's own rule for its reads).
      ex.require_below_ceiling(g, spec_gbps, describe(c, blocks), 1.0);
      Row row;
      row.add("kernel", c.kernel->name)
          .add("mode", m ? "graph+PDL, no wait" : "graph")
          .add("grid", blocks)
          .add("threads", c.threads)
          .add("median_us", st.median, 2, "median µs")
          .add("min_us", st.min, 2, "min µs")
          .add("sd_us", st.sd, 3, "sd µs")
          .add("mbu", g / ceiling, 3, "of ceiling")
          .extra("gbps", g)
          .extra("max_us", st.max)
          .extra("n", st.n)
          .extra("bytes_per_launch", stream_read_bytes(chunk_vec))
          .extra("launches_per_graph", p.launches)
          .extra("chunks_rotated", static_cast<unsigned long long>(chunks));
      ex.add("read-only bound at " + shape_name(p.n, p.k) + ": the weights' bytes read without arithmetic, same graph", row);
      if (b.us[m] == 0 || st.median < b.us[m]) {
        b.us[m] = st.median;
        b.mbu[m] = g / ceiling;
        b.best[m] = describe(c, blocks);
      }
    }
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// A real chain (N == K; run at 4096x4096): launch i reads launch i-1's y as its x, as a decode
// step's layers do (every other chained row keeps x constant: its dependency is the ordering).
// Two forms on the same buffers, side by side: the PDL chain (griddepcontrol.wait, Hand::pdl) and
// the data-carried one (no wait, x polled: Hand::data_pdl, common/chain.h). The graph's first
// node poisons every y of the chain (a memset of launches x 2N bytes a replay, inside the timed
// graph). Weights U(-a, a), a = sqrt(3 / K), so that |y| stays near |x| over the chain. Three
// launches (the first, the middle, the last) are checked against a CPU double GEMV of the input
// each one actually read, after the first replay and again after the timed ones; a poll that gave
// up fails the run. CUDA on sm_90 only (PDL).
// ---------------------------------------------------------------------------------------------
struct RealChain {
  int n = 0;
  size_t copies = 0;
  int launches = 0;
  __half* w = nullptr;     // copies x N x N
  __half* bufs = nullptr;  // (launches + 1) x N: bufs[0] the chain's input, bufs[i + 1] launch i's y
  uint64_t seed = 0;
  // the launches checked against the CPU (the first, the middle, the last) and their weights on
  // the host, copied once: every configuration checks them twice
  std::array<int, 3> checked{};
  std::array<std::vector<__half>, 3> checked_w;
  const __half* weights(int launch) const { return w + static_cast<size_t>(launch % copies) * n * n; }
  __half* buf(int i) const { return bufs + static_cast<size_t>(i) * n; }
  ~RealChain() {
    (void)cudaFree(w);
    (void)cudaFree(bufs);
  }
};

std::unique_ptr<RealChain> make_real_chain(Experiment& ex, int n, int launches_flag, double over_l2) {
  auto c = std::make_unique<RealChain>();
  c->n = n;
  c->copies = copies_for(ex, n, n, over_l2);
  c->launches = std::max<int>(sanitizing() ? 0 : launches_flag, static_cast<int>(c->copies));  // as make_problem
  const size_t nn = static_cast<size_t>(n) * n;
  const uint64_t ws = static_cast<uint64_t>(c->copies) * nn * sizeof(__half);
  WorkingSetVerdict v = check_working_set(ws, ex.l2_bytes(), kWorkingSetOverL2);
  if (!v.ok) FAIL("real chain %dx%d: refusing to measure: %s", n, n, v.message.c_str());
  CHECK_CUDA(cudaMalloc(&c->w, ws));
  CHECK_CUDA(cudaMalloc(&c->bufs, static_cast<size_t>(c->launches + 1) * n * sizeof(__half)));
  c->seed = fresh_seed();
  const float a = std::sqrt(3.0f / n);
  for (size_t i = 0; i < c->copies; ++i) fill_random_half(c->w + i * nn, nn, c->seed + 7919 * (i + 1), a);
  fill_random_half(c->bufs, n, c->seed ^ 0x5bd1e995ull);
  CHECK_CUDA(cudaDeviceSynchronize());
  c->checked = {0, c->launches / 2, c->launches - 1};
  for (size_t j = 0; j < c->checked.size(); ++j) {
    c->checked_w[j].resize(nn);
    CHECK_CUDA(cudaMemcpy(c->checked_w[j].data(), c->weights(c->checked[j]), nn * sizeof(__half), cudaMemcpyDeviceToHost));
  }
  return c;
}

#if !defined(PORT_HIP)
// The chain's three checked launches against the CPU; the worst of them (exit 1 on a failure).
CompareResult check_real_chain(const RealChain& c, const std::string& what) {
  unsigned timeouts = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&timeouts, g_gemv_data_timeouts, sizeof timeouts));
  if (timeouts) {
    std::fprintf(stderr, "02-gemv: %s: %u polls of x gave up after 2 ms: exiting\n", what.c_str(), timeouts);
    std::exit(kExitFailure);
  }
  std::vector<__half> all(static_cast<size_t>(c.launches + 1) * c.n);
  CHECK_CUDA(cudaMemcpy(all.data(), c.bufs, all.size() * sizeof(__half), cudaMemcpyDeviceToHost));
  CompareResult worst;
  worst.ok = true;
  worst.rel_l2 = 0;
  for (size_t j = 0; j < c.checked.size(); ++j) {
    const int i = c.checked[j];
    const std::vector<__half>& wh = c.checked_w[j];
    const std::vector<__half> xi(all.begin() + static_cast<size_t>(i) * c.n, all.begin() + static_cast<size_t>(i + 1) * c.n);
    const std::vector<__half> yi(all.begin() + static_cast<size_t>(i + 1) * c.n, all.begin() + static_cast<size_t>(i + 2) * c.n);
    const std::string at = what + ", launch " + std::to_string(i);
    CompareResult r = compare_rel_l2(cpu_gemv_double(wh, xi, c.n, c.n), half_to_double(yi), kTolerance, at.c_str());
    if (!r.ok) {
      std::fprintf(stderr, "02-gemv: validation failed: %s (seed %llu): exiting before any further timing\n", at.c_str(),
                   static_cast<unsigned long long>(c.seed));
      std::exit(kExitFailure);
    }
    if (!(r.rel_l2 <= worst.rel_l2)) worst = r;
  }
  return worst;
}

Result run_real_chain(Experiment& ex, Config cfg, const RealChain& c, const TimingPlan& plan, double ceiling) {
  cudaStream_t s = ex.stream();
  GemvKernel f = cfg.chain == kRealData ? cfg.hand->data_pdl : cfg.hand->pdl;
  const std::string what = describe(cfg);
  const unsigned zero = 0;
  CHECK_CUDA(cudaMemcpyToSymbol(g_gemv_data_timeouts, &zero, sizeof zero));
  Graph g;
  g.capture(
      [&](cudaStream_t cs) {
        poison_nan(c.buf(1), static_cast<size_t>(c.launches) * c.n * sizeof(__half), cs);
        for (int i = 0; i < c.launches; ++i)
          chain_launch(true, f, cfg.grid, cfg.threads, 0, cs, c.weights(i), static_cast<const __half*>(c.buf(i)), c.buf(i + 1),
                       c.n, c.n);
      },
      s);
  g.launch(s);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(s));
  Result r;
  r.cfg = cfg;
  r.n = r.k = c.n;
  r.check = check_real_chain(c, what);
  r.mode = "chained, real dependency";
  std::vector<double> us;
  for (double m : time_graph(g, plan, s)) us.push_back(m * 1e3 / c.launches);
  r.us = summarize(us);
  CHECK_CUDA(cudaStreamSynchronize(s));
  const CompareResult after = check_real_chain(c, what + " (after the timed replays)");
  if (!(after.rel_l2 <= r.check.rel_l2)) r.check = after;
  r.gbps = gbps(gemv_bytes(c.n, c.n), r.us.median * 1e-3);
  r.mbu = r.gbps / ceiling;
  ex.require_below_ceiling(r.gbps, ceiling, what);
  return r;
}
#endif

Row result_row(const Result& r, const Problem* p) {
  Row row;
  row.add("shape", shape_name(r.n, r.k))
      .add("version", version_name(r.cfg))
      .add("variant", variant_name(r.cfg))
      .add("mode", r.mode)
      .add("grid", r.cfg.hand ? Json(r.cfg.grid) : Json("-"))
      .add("threads", r.cfg.hand ? Json(r.cfg.threads) : Json("-"))
      .add("median_us", r.us.median, 2, "median µs")
      .add("min_us", r.us.min, 2, "min µs")
      .add("sd_us", r.us.sd, 3, "sd µs")
      .add("gbps", r.gbps, 0, "GB/s")
      .add("mbu", r.mbu, 3, "MBU")
      .add("rel_l2", r.check.rel_l2, 6, "rel L2")
      .add("worst_abs_err", r.check.worst_abs, 4, "worst |err|")
      .extra("worst_index", static_cast<unsigned long long>(r.check.worst_index))
      .extra("n", r.n)
      .extra("k", r.k)
      .extra("kernel", symbol_name(r.cfg))
      .extra("rung", r.cfg.hand ? r.cfg.hand->rung : 0)
      .extra("grid_rule", r.cfg.grid_rule)
      .extra("stages", r.cfg.stages)
      .extra("release", !r.cfg.pdl ? "-" : r.cfg.chain == kReleaseLate ? "when a warp has one chunk left" : "first")
      .extra("waits", !r.cfg.pdl                 ? "-"
                      : r.cfg.chain == kNoWait   ? "no (bound, not a chain)"
                      : r.cfg.chain == kRealData ? "no: polls x, the predecessor's y (data-carried)"
                                                 : "griddepcontrol.wait")
      .extra("x", r.cfg.chain == kRealWait || r.cfg.chain == kRealData ? "the predecessor's y" : "constant")
      .extra("validated", true)
      .extra("bytes", gemv_bytes(r.n, r.k))
      .extra("max_us", r.us.max)
      .extra("reps", r.us.n);
  if (p) row.extra("launches_per_graph", p->launches).extra("weight_copies", static_cast<unsigned long long>(p->copies));
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  Experiment ex("02-gemv",
                "Batch-1 FP16 GEMV y = W x: the original three versions, four more, and the vendor library, "
                "isolated and chained (PDL), MBU against the measured ceiling.");
  std::string only_shape;
  long long launches_flag = 200;
  ex.flags().add_string("shape", &only_shape, "run only this shape, NxK (K a multiple of 128), e.g. 4096x4096");
  ex.flags().add_int("launches", &launches_flag, 8, 4000, "launches per timed graph (default 200; raised to the copy count)");
  long long working_set = static_cast<long long>(kDeepWorkingSetOverL2);
  ex.flags().add_int("working-set", &working_set, static_cast<long long>(kWorkingSetOverL2), 64,
                     "weight copies' working set over the L2 (default 20, about the original's 32 copies of 4096x4096; "
                     "at least 4, the rule; under 20 the 4096x4096 chains are repeated over 20x beside it)");
  bool no_vendor = false;
  ex.flags().add_bool("no-vendor", &no_vendor,
                      "skip the cuBLAS / cuBLASLt rungs (make sanitize's racecheck: their kernels are not ours to check)");
  int only_n = 0, only_k = 0;
  ex.validate_flags([&]() -> std::string {
    if (!only_shape.empty() && !parse_shape(only_shape, &only_n, &only_k))
      return "--shape '" + only_shape + "' is not NxK with 16 <= N, 128 <= K <= 1048576 and K % 128 == 0";
    return "";
  });
  ex.start(argc, argv);
  const double over_l2 = static_cast<double>(working_set);
  const bool quick = ex.quick();

  std::vector<Shape> shapes = all_shapes(quick);
  if (!only_shape.empty()) {
    bool found = false;
    for (auto& s : shapes)
      if (s.n == only_n && s.k == only_k) {
        shapes = {s};
        found = true;
        break;
      }
    if (!found) shapes = {{only_n, only_k, "--shape", false}};
  }
  Planner planner(ex);
#if !defined(PORT_HIP)
  // The copy-engine rungs' dynamic shared memory. v9 also needs the next launch's block beside
  // its own: the largest carveout, and two blocks per SM with its 104 KB (said in the output, so
  // a run that lacks them shows it).
  if (ex.has_gpu() && ex.prop().major >= 9)
    for (auto& h : hand_rungs()) {
      if (h.kind != kRing && h.kind != kPreload) continue;
      int per_sm = 0;
      for (GemvKernel f : {h.fn, h.pdl}) {
        const void* k = reinterpret_cast<const void*>(f);
        CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        h.kind == kRing ? kRingPlannedMaxStages * kRingStageBytes : static_cast<int>(kPreSmemBytes)));
        if (h.kind != kPreload) continue;
        CHECK_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kPreThreads, kPreSmemBytes));
      }
      if (h.kind == kPreload)
        ex.note(std::string(h.symbol) + ": " + std::to_string(per_sm) + " blocks of " + std::to_string(kPreThreads) +
                " per SM with " + std::to_string(kPreSmemBytes / 1024) + " KB of dynamic shared memory (2 let the next launch's block in)");
    }
#endif
  const bool can_chain = kHaveCublas && ex.prop().major >= 9;  // PDL: CUDA on sm_90 and newer

  if (ex.list()) {
    std::printf("# 02-gemv would run %zu shapes; per shape: vendor rungs%s%s, then:\n", shapes.size(),
                kHaveCublas ? " cuBLAS" : "", kHaveLt ? (std::string(" ") + kLtName).c_str() : "");
    for (auto& s : shapes) {
      const bool full = s.n == 4096 && s.k == 4096;
      size_t total = 0;
      for (auto& h : hand_rungs()) {
        auto cs = planner.configs(h, s.n, s.k, full, quick);
        total += cs.size();
        for (auto& c : cs)
          std::printf("%s: %s (%s)\n", shape_name(s.n, s.k).c_str(), describe(c).c_str(), c.grid_rule.c_str());
      }
      std::printf("%s: %zu hand-written configurations, %zu weight copies, chained (PDL) %s\n", shape_name(s.n, s.k).c_str(),
                  total, copies_for(ex, s.n, s.k, over_l2), can_chain ? "for rungs 4-6 at their best isolated grid" : "not available");
      std::printf("%s: declared bytes per GEMV: read %.0f, written %.0f\n", shape_name(s.n, s.k).c_str(),
                  gemv_read_bytes(s.n, s.k), gemv_write_bytes(s.n, s.k));
    }
    return kExitOk;
  }

  const Ceiling ceiling = obtain_ceiling(ex);
  Vendor vendor(ex.stream());
  const double spec_gbps = ex.has_gpu() ? device_spec_bandwidth(ex).gbps : 0.0;
  Runner runner(ex, vendor, ceiling.gbps, spec_gbps);
  const TimingPlan small_plan = quick ? TimingPlan{1, 3, 1} : TimingPlan{2, 7, 1};
  const TimingPlan big_plan = TimingPlan{1, 3, 1};  // shapes over 256 MB per GEMV: each replay is long already
  ex.note("MBU = (2NK + 2K + 2N bytes / median time) over the measured ceiling " + Planner::fmt(std::round(ceiling.gbps)) +
          " GB/s (" + ceiling.source + ")");
  ex.note("isolated: one CUDA graph of max(" + std::to_string(launches_flag) +
          ", copies) launches over rotating weight copies (working set >= " + Planner::fmt(over_l2) +
          "x the L2; the rule's floor 4x), time per GEMV = replay time / launches; "
          "median of 7 replays after 2 warm-up (3 after 1 for shapes over 256 MB" +
          std::string(quick ? "; --quick: 3 after 1" : "") + ")");
  ex.note(can_chain ? "chained: the same graph, launches with cudaLaunchAttributeProgrammaticStreamSerialization; kernels "
                      "call griddepcontrol.launch_dependents first and griddepcontrol.wait after requesting their first "
                      "weights, before reading x (x itself is constant: the dependency is the ordering, not the values)"
                    : "chained (PDL) mode not run: it needs CUDA on sm_90 or newer");
#if defined(PORT_HIP)
  ex.note("tensor-core rung not built on HIP (no MFMA version written); cuBLAS rung absent; hipBLASLt " +
          std::string(kHaveLt ? "present" : "not built (HAVE_HIPBLASLT undefined)"));
#endif

  std::vector<Result> results;
  ReadBound read_bound;
  int done = 0, total_est = 0;
  for (auto& s : shapes) {
    const bool full = s.n == 4096 && s.k == 4096;
    for (auto& h : hand_rungs()) total_est += static_cast<int>(planner.configs(h, s.n, s.k, full, quick).size()) + 1;
    total_est += 2;
  }

  for (auto& s : shapes) {
    const bool full = s.n == 4096 && s.k == 4096;
    auto prob = make_problem(ex, s, static_cast<int>(launches_flag), over_l2);
    const Problem& p = *prob;
    const double bytes = gemv_bytes(p.n, p.k);
    const TimingPlan plan = bytes > 256e6 ? big_plan : small_plan;
    std::vector<Result> here;
    std::vector<Config> nowait;  // the no-wait bound's configurations (4096x4096)
    auto record = [&](const Result& r) {
      here.push_back(r);
      here.back().sweep = s.sweep;
      ex.add("every configuration (validated, then timed)", result_row(r, &p));
    };
    // Vendor rungs.
    if (kHaveCublas && !no_vendor) {
      Config c;
      c.vendor = 1;
      ex.progress(done++, total_est, "%s %s", shape_name(p.n, p.k).c_str(), describe(c).c_str());
      record(runner.run(c, p, plan));
    }
#if !defined(PORT_HIP) || defined(HAVE_HIPBLASLT)
    if (!no_vendor) {
      std::string why;
      if (vendor.lt_prepare(p.n, p.k, &why)) {
        Config c;
        c.vendor = 2;
        ex.progress(done++, total_est, "%s %s", shape_name(p.n, p.k).c_str(), describe(c).c_str());
        record(runner.run(c, p, plan));
      } else {
        ex.note(shape_name(p.n, p.k) + ": " + kLtName + " skipped: " + why);
      }
    }
#endif
    // Hand-written rungs, isolated.
    for (auto& h : hand_rungs()) {
      if (p.k % 128 != 0 && h.kind == kTensor) continue;  // parse_shape and the shape list keep K % 128 == 0
      if (h.kind == kRing && (!ring_applies(p.k) || ex.prop().major < 9)) continue;
      if (h.kind == kPreload && (!preload_applies(p.n, p.k, ex.sm_count()) || ex.prop().major < 9)) continue;
      if (h.kind == kPipe && (p.k / 8) % (PORT_HOST_WARP_SIZE * h.ks) != 0) continue;  // whole chunks only
      if (h.kind == kTensorPipe && p.k % (256 * h.ks) != 0) continue;
      for (auto& c : planner.configs(h, p.n, p.k, full, quick)) {
        ex.progress(done++, total_est, "%s %s", shape_name(p.n, p.k).c_str(), describe(c).c_str());
        record(runner.run(c, p, plan));
      }
    }
    // Chained: every PDL-capable kernel at its best isolated configuration (at 4096x4096 every
    // configuration of those rungs).
    if (can_chain) {
      std::vector<Config> chain;
      for (auto& h : hand_rungs()) {
        if (!h.pdl) continue;
        const Result* best = nullptr;
        for (auto& r : here)
          if (r.cfg.hand == &h && r.mode == "isolated" && (!best || r.us.median < best->us.median)) best = &r;
        if (!best) continue;
        if (full) {
          for (auto& r : here)
            if (r.cfg.hand == &h && r.mode == "isolated") chain.push_back(r.cfg);
        } else {
          chain.push_back(best->cfg);
        }
      }
      for (auto c : chain) {
        c.pdl = true;
        for (Chain v : {kReleaseFirst, kReleaseLate}) {
          // the diagnostic variant: 4096x4096 only, rungs that have it
          if (v == kReleaseLate && (!full || !c.hand->late_pdl)) continue;
          c.chain = v;
          ex.progress(done, total_est, "%s %s", shape_name(p.n, p.k).c_str(), describe(c).c_str());
          record(runner.run(c, p, plan));
        }
        if (full && c.hand->nowait_pdl) {  // the other, the no-wait bound: timed over the deep rotation, below
          c.chain = kNoWait;
          nowait.push_back(c);
        }
      }
    }
#if !defined(PORT_HIP)
    // At 4096x4096, a real chain (y into x) of the rungs with a data-carried form, at every grid
    // they ran isolated (--quick: their best), by the wait and by the data, side by side.
    if (full && can_chain && p.n == p.k) {
      auto rc = make_real_chain(ex, p.n, static_cast<int>(launches_flag), over_l2);
      for (auto& h : hand_rungs()) {
        if (!h.data_pdl) continue;
        const Result* best = nullptr;
        std::vector<Config> cs;
        for (auto& r : here)
          if (r.cfg.hand == &h && r.mode == "isolated") {
            cs.push_back(r.cfg);
            if (!best || r.us.median < best->us.median) best = &r;
          }
        if (quick && best) cs.assign(1, best->cfg);
        for (auto c : cs)
          for (Chain v : {kRealWait, kRealData}) {
            c.pdl = true;
            c.chain = v;
            ex.progress(done, total_est, "%s %s (real chain)", shape_name(p.n, p.k).c_str(), describe(c).c_str());
            record(run_real_chain(ex, c, *rc, plan, ceiling.gbps));
          }
      }
    }
#endif
    if (full) read_bound = read_only_bound(ex, p, ceiling.gbps, spec_gbps, can_chain, plan);
    results.insert(results.end(), here.begin(), here.end());
    // At 4096x4096, with a rotation shallower than 20x the L2 (--working-set 4..19), the chained
    // configurations again over 20x, side by side: how much of the chained figure the shallow
    // rotation lends (the chain probe found 0.78 us per GEMV on an H100 between 7 and 32 copies).
    // --quick: the best chained configuration only. The no-wait bound runs over 20x or more only:
    // its launches overlap freely, and over the rule's 4x an H100 (d3476be's make check) ran one at
    // 3377 GB/s, past the 3350 its memory can deliver. Its wait cost is taken against the chain of
    // the same configuration over the same rotation.
    if (full && can_chain) {
      std::vector<Config> deep;
      const Result* best = nullptr;
      for (auto& r : here)
        if (r.mode == "chained" && r.cfg.hand && (!best || r.us.median < best->us.median)) best = &r;
      if (over_l2 < kDeepWorkingSetOverL2)
        for (auto& r : here)
          if (r.mode == "chained" && r.cfg.hand && (!quick || &r == best)) deep.push_back(r.cfg);
      if (!deep.empty() || !nowait.empty()) {
        std::unique_ptr<Problem> own;
        if (over_l2 < kDeepWorkingSetOverL2) own = make_problem(ex, s, static_cast<int>(launches_flag), kDeepWorkingSetOverL2);
        const Problem& dp = own ? *own : p;  // at 20x or more (the default) the run's own rotation is the deep one
        deep.insert(deep.end(), nowait.begin(), nowait.end());
        for (auto& c : deep) {
          ex.progress(done, total_est, "%s %s (deep rotation)", shape_name(p.n, p.k).c_str(), describe(c).c_str());
          Result r = runner.run(c, dp, plan);
          if (c.chain != kNoWait) r.mode = kDeepMode;
          r.sweep = s.sweep;
          ex.add("every configuration (validated, then timed)", result_row(r, &dp));
          results.push_back(r);
        }
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Tables and the summary, all from this run's results.
  // ------------------------------------------------------------------------------------------
  auto best_of = [&](int n, int k, const std::string& mode, std::function<bool(const Result&)> pick) -> const Result* {
    const Result* b = nullptr;
    for (auto& r : results)
      if (r.n == n && r.k == k && r.mode == mode && pick(r) && (!b || r.us.median < b->us.median)) b = &r;
    return b;
  };
  auto is_hand = [](const Result& r) { return r.cfg.hand != nullptr; };
  auto is_vendor = [](const Result& r) { return r.cfg.hand == nullptr; };
  auto rung_is = [](int rung) { return [rung](const Result& r) { return r.cfg.hand && r.cfg.hand->rung == rung; }; };

  // The original three at 4096x4096 next to the MI300X figures (cited from the original write-up).
  struct Orig {
    int rung;
    const char* what;
    double us, gbps, mbu;
    int grid;
  };
  const Orig orig[] = {{1, "baseline", 29.3, 1146, 0.238, 256},
                       {2, "loads issued as a batch", 11.6, 2897, 0.601, 1024},
                       {3, "16 B per lane instead of 4", 9.5, 3523, 0.731, 256}};
  // This device's name in the headers (they said "H200" whatever ran, so an H100's run was mislabelled).
  const std::string dev = gpu_label(ex.prop().name);
  for (auto& o : orig) {
    const Result* r = best_of(4096, 4096, "isolated", rung_is(o.rung));
    if (!r) continue;
    Row row;
    row.add("version", version_name(r->cfg))
        .add("grid", r->cfg.grid, -1, dev + " best grid")
        .add("median_us", r->us.median, 2, dev + " µs")
        .add("gbps", r->gbps, 0, dev + " GB/s")
        .add("mbu", r->mbu, 3, dev + " MBU")
        .add("mi300x_grid", o.grid, -1, "MI300X grid")
        .add("mi300x_us", o.us, 1, "MI300X µs")
        .add("mi300x_gbps", o.gbps, 0, "MI300X GB/s")
        .add("mi300x_mbu", o.mbu, 3, "MI300X MBU")
        .add("what_changed", o.what, -1, "what changed")
        .extra("n", 4096)
        .extra("k", 4096)
        .extra("mode", "isolated");
    ex.add("the original three at 4096x4096, isolated: this run's device next to MI300X (original write-up)", row);
  }

  // Every configuration at 4096x4096 (the grid sweep).
  for (auto& r : results)
    if (r.n == 4096 && r.k == 4096 && r.cfg.hand) {
      Row row;
      row.add("version", version_name(r.cfg))
          .add("variant", variant_name(r.cfg))
          .add("mode", r.mode)
          .add("grid", r.cfg.grid)
          .add("threads", r.cfg.threads)
          .add("grid_rule", r.cfg.grid_rule, -1, "grid rule")
          .add("median_us", r.us.median, 2, "median µs")
          .add("min_us", r.us.min, 2, "min µs")
          .add("sd_us", r.us.sd, 3, "sd µs")
          .add("mbu", r.mbu, 3, "MBU");
      ex.add("grids at 4096x4096 (every hand-written configuration)", row);
    }

  // The ladder per shape: the best configuration of each rung, isolated, against the best vendor rung.
  double min_speedup_named = INFINITY, min_speedup_sweep = INFINITY;
  std::string min_named_shape, min_sweep_shape;
  std::vector<std::pair<int, int>> seen;
  for (auto& r0 : results) {
    std::pair<int, int> nk{r0.n, r0.k};
    if (std::find(seen.begin(), seen.end(), nk) != seen.end()) continue;
    seen.push_back(nk);
    const bool sweep_only = [&] {
      for (auto& s : shapes)
        if (s.n == r0.n && s.k == r0.k) return s.model == "size sweep";
      return false;
    }();
    const Result* bv = best_of(r0.n, r0.k, "isolated", is_vendor);
    const Result* bh = best_of(r0.n, r0.k, "isolated", is_hand);
    for (int rung = 0; rung <= 8; ++rung) {
      std::vector<std::string> names;
      if (rung == 0) names = {"cuBLAS", kLtName};
      for (size_t vi = 0; vi < (rung == 0 ? names.size() : 1); ++vi) {
        const Result* b = rung == 0 ? best_of(r0.n, r0.k, "isolated", [&](const Result& r) {
          return !r.cfg.hand && version_name(r.cfg) == names[vi];
        })
                                    : best_of(r0.n, r0.k, "isolated", rung_is(rung));
        if (!b) continue;
        const Result* chained = b->cfg.hand && b->cfg.hand->pdl
                                    ? best_of(r0.n, r0.k, "chained", [&](const Result& r) { return r.cfg.hand == b->cfg.hand; })
                                    : nullptr;
        Row row;
        row.add("shape", shape_name(b->n, b->k))
            .add("version", version_name(b->cfg))
            .add("variant", variant_name(b->cfg))
            .add("grid", b->cfg.hand ? Json(b->cfg.grid) : Json("-"))
            .add("threads", b->cfg.hand ? Json(b->cfg.threads) : Json("-"))
            .add("median_us", b->us.median, 2, "median µs")
            .add("gbps", b->gbps, 0, "GB/s")
            .add("mbu", b->mbu, 3, "MBU")
            .add("vs_best_vendor", bv ? bv->us.median / b->us.median : NAN, 2, "speed-up vs best vendor")
            .add("chained_mbu", chained ? Json(chained->mbu) : Json(), 3, "chained MBU")
            .extra("n", b->n)
            .extra("k", b->k)
            .extra("mode", "isolated")
            .extra("bytes", gemv_bytes(b->n, b->k));
        ex.add(sweep_only ? "size sweep N = K (isolated, best configuration per rung)" : "the ladder per shape (isolated, best configuration per rung)", row);
        // The sweep plot also wants the named N = K shapes.
        if (!sweep_only && b->n == b->k) ex.add("size sweep N = K (isolated, best configuration per rung)", row);
      }
    }
    if (bv && bh) {
      const double sp = bv->us.median / bh->us.median;
      if (sweep_only) {
        if (sp < min_speedup_sweep) { min_speedup_sweep = sp; min_sweep_shape = shape_name(r0.n, r0.k); }
      } else if (sp < min_speedup_named) {
        min_speedup_named = sp;
        min_named_shape = shape_name(r0.n, r0.k);
      }
    }
  }

  // Chained against isolated, per shape and kernel.
  for (auto& r : results)
    if (r.mode == "chained" || r.mode == kNoWaitMode || r.mode == kDeepMode) {
      const Result* iso = nullptr;
      for (auto& q : results)
        if (q.n == r.n && q.k == r.k && q.mode == "isolated" && q.cfg.hand == r.cfg.hand && q.cfg.grid == r.cfg.grid &&
            q.cfg.threads == r.cfg.threads && q.cfg.stages == r.cfg.stages)
          iso = &q;
      Row row;
      row.add("shape", shape_name(r.n, r.k))
          .add("version", version_name(r.cfg))
          .add("variant", variant_name(r.cfg))
          .add("grid", r.cfg.grid)
          .add("threads", r.cfg.threads)
          .add("isolated_us", iso ? Json(iso->us.median) : Json(), 2, "isolated µs")
          .add("waits", r.mode == kNoWaitMode ? "no (bound), deep rotation" : r.mode == kDeepMode ? "yes, deep rotation" : "yes", -1,
               "waits")
          .add("median_us", r.us.median, 2, "chained µs")
          .add("mbu", r.mbu, 3, "chained MBU")
          .add("saved_us", iso ? Json(iso->us.median - r.us.median) : Json(), 2, "saved µs")
          .extra("n", r.n)
          .extra("k", r.k)
          .extra("mode", r.mode);
      ex.add("chained with programmatic dependent launch, against the same configuration isolated", row);
    }

  // Summary keys (exactly the issue's), then supporting figures.
  const Result* h4 = best_of(4096, 4096, "isolated", is_hand);
  const Result* cb4 = best_of(4096, 4096, "isolated", [&](const Result& r) { return !r.cfg.hand && r.cfg.vendor == 1; });
  const Result* ch4 = best_of(4096, 4096, "chained", is_hand);
  const Result* tc4 = best_of(4096, 4096, "isolated", rung_is(6));
  const Result* cc4 = best_of(4096, 4096, "isolated", [](const Result& r) { return r.cfg.hand && r.cfg.hand->rung != 6; });
  Json& sm = ex.summary();
  sm.set("mbu_4096_isolated_best", h4 ? Json(h4->mbu) : Json());
  sm.set("us_4096_isolated_best", h4 ? Json(h4->us.median) : Json());
  sm.set("us_4096_cublas_isolated", cb4 ? Json(cb4->us.median) : Json());
  sm.set("speedup_vs_cublas_4096_isolated", h4 && cb4 ? Json(cb4->us.median / h4->us.median) : Json());
  sm.set("mbu_4096_chained_best", ch4 ? Json(ch4->mbu) : Json());
  sm.set("min_speedup_vs_cublas_all_shapes", std::isfinite(min_speedup_named) ? Json(min_speedup_named) : Json());
  sm.set("tensor_core_validated", tc4 != nullptr);  // a tensor-core failure exits 1 before this point
  sm.set("tensor_core_mbu_4096_isolated", tc4 ? Json(tc4->mbu) : Json());
  // Supporting figures.
  sm.set("ceiling_gbps", ceiling.gbps);
  sm.set("ceiling_source", ceiling.source);
  if (h4) sm.set("best_4096_isolated", describe(h4->cfg));
  if (ch4) sm.set("best_4096_chained", describe(ch4->cfg));
  // A best configuration's three keys: mbu_4096_<figure>, us_4096_<figure>, best_4096_<config>.
  auto set_best = [&](const Result* r, const std::string& figure, const std::string& config) {
    if (!r) return;
    sm.set("mbu_4096_" + figure, r->mbu);
    sm.set("us_4096_" + figure, r->us.median);
    sm.set("best_4096_" + config, describe(r->cfg));
  };
  // What the dependency costs: the best chained kernel against the same kernel and grid with no
  // griddepcontrol.wait at all (launches free to overlap), side by side in this run, both over the
  // deep rotation (20x the L2: the default run's own; the no-wait bound never runs over less).
  const Result* nw4 = best_of(4096, 4096, kNoWaitMode, is_hand);
  set_best(nw4, "chained_nowait_bound", "nowait_bound");
  if (nw4) sm.set("nowait_bound_working_set_over_l2", std::max(over_l2, kDeepWorkingSetOverL2));
  // same_cfg(a, chain): the same kernel and grid as a; with chain, its release too (a late release
  // is the same kernel and grid; the no-wait bound has its own chain by definition).
  auto same_cfg = [&](const Result* a, bool chain) {
    return [a, chain](const Result& r) {
      return r.cfg.hand == a->cfg.hand && r.cfg.grid == a->cfg.grid && r.cfg.threads == a->cfg.threads &&
             (!chain || r.cfg.chain == a->cfg.chain);
    };
  };
  const Result* same = ch4 ? best_of(4096, 4096, kNoWaitMode, same_cfg(ch4, false)) : nullptr;
  const Result* same_chain =
      !ch4 ? nullptr : over_l2 < kDeepWorkingSetOverL2 ? best_of(4096, 4096, kDeepMode, same_cfg(ch4, true)) : ch4;
  if (same && same_chain) sm.set("us_4096_dependency_cost_best_chained", same_chain->us.median - same->us.median);
  // The same chains over the deep rotation (20x the L2), in this run.
  const Result* dp4 = best_of(4096, 4096, kDeepMode, is_hand);
  set_best(dp4, "chained_best_deep_rotation", "chained_deep_rotation");
  if (dp4) sm.set("deep_rotation_working_set_over_l2", kDeepWorkingSetOverL2);
  sm.set("working_set_over_l2", over_l2);
  // The real chain (y into x) by the grid boundary and by the data, side by side in this run.
  auto real_is = [](Chain v) { return [v](const Result& r) { return r.cfg.hand && r.cfg.chain == v; }; };
  set_best(best_of(4096, 4096, "chained, real dependency", real_is(kRealWait)), "chained_real_wait_best", "chained_real_wait");
  set_best(best_of(4096, 4096, "chained, real dependency", real_is(kRealData)), "chained_data_best", "chained_data");
  // The read-only bound beside them: the same bytes, no arithmetic, no dependency.
  if (read_bound.us[0] > 0) {
    sm.set("mbu_4096_read_only_isolated_bound", read_bound.mbu[0]);
    sm.set("us_4096_read_only_isolated_bound", read_bound.us[0]);
    sm.set("best_4096_read_only_isolated_bound", read_bound.best[0]);
  }
  if (read_bound.us[1] > 0) {
    sm.set("mbu_4096_read_only_chained_bound", read_bound.mbu[1]);
    sm.set("us_4096_read_only_chained_bound", read_bound.us[1]);
    sm.set("best_4096_read_only_chained_bound", read_bound.best[1]);
  }
  if (tc4 && cc4) sm.set("tensor_core_over_best_cuda_core_mbu_4096", tc4->mbu / cc4->mbu);
  if (!min_named_shape.empty()) sm.set("min_speedup_shape", min_named_shape);
  if (std::isfinite(min_speedup_sweep)) {
    sm.set("min_speedup_vs_cublas_size_sweep", min_speedup_sweep);
    sm.set("min_speedup_size_sweep_shape", min_sweep_shape);
  }
  sm.set("configurations_timed", static_cast<int>(results.size()));
  return ex.finish();
}
