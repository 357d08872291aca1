// 04-reduce: cross-lane reductions, and what they cost a GEMV.
//
//   make 04-reduce/reduce && 04-reduce/reduce [--quick] [--json PATH] [--method NAME]
//   make 04-reduce/reduce.s    PTX + SASS (sm_90), or AMDGCN (ARCH=gfx942)
//
// Methods, one row of a warp (wave) reduced to a sum (sm_90):
//   butterfly        shfl.sync.bfly x5, every lane gets the sum                       (SHFL.BFLY)
//   shfl_down_tree   shfl.sync.down x5, the sum in lane 0                             (SHFL.DOWN)
//   cg_reduce        cooperative_groups::reduce(tile<32>, v, plus<float>)
//   smem_tree        one warp through shared memory, __syncwarp between levels        (STS/LDS)
//   block_256        a block of 8 warps: butterfly, shared memory, butterfly over 8; 1 barrier
//   redux_u32        redux.sync.add.u32 (integer: exact; there is no float redux on sm_90)
//   butterfly_u32    the butterfly on integers, redux's like-for-like comparison
// Methods (gfx942, built and assembly-checked, not run here):
//   dpp_chain        row_shr:1,2,4,8 then row_bcast:15 / row_bcast:31, sum in lane 63 (no LDS)
//   ds_swizzle       ds_swizzle_b32 xor 1..16 inside 32-lane halves, then the two halves
//   ds_bpermute      __shfl_xor = ds_bpermute_b32
// Multi-row (32 rows at once, each lane holding one partial per row; wave64: 64 rows):
//   rows_butterfly        32 butterflies: 5 shuffles per row, 160 in all
//   rows_transpose_xor    recursive halving over an xor-swizzled layout (lane l keeps row k^l
//                         in register k): 16+8+4+2+1 = 31 shuffles, no selects; lane l ends
//                         with row l
//   rows_transpose_select the same halving over the natural layout (register k = row k): the
//                         lane's half is chosen with 2 selects per exchanged value
// In the GEMV (stand-in for 02-gemv's best version, which another helper is writing): warp per
// row, 16-byte loads, 4096 x 4096 FP16, the butterfly once, or twice with the second one
// feeding the output (sum of 32 copies of total/32 == total, exactly, so the output is unchanged
// and the compiler cannot remove it): the difference is the reduction's share of GEMV time.
//
// Latency: one warp, each reduction's input is the previous one's output (x = reduce(x)/32 + p);
// cycles per reduction from clock64 over two loop lengths, minus the same loop with no
// reduction (the FFMA glue and the loop). Throughput: 8 blocks of 8 warps per SM, median of
// event-timed batches. Every method is first checked against a CPU sum (exact for integers,
// double-precision within rounding for floats) on fresh random inputs with poisoned outputs.
#include <cinttypes>
#include <cstring>
#include "../common/ceiling.h"
#include "../common/experiment.h"
#include "../common/validate.h"
#include "../03-dlops/clocks.h"
#if !defined(PORT_HIP)  // (port.h, through the headers above, decides)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#endif

namespace {

constexpr int kUnroll = 4;  // reductions per loop iteration in the chain kernels

struct Clocks {
  unsigned long long cycles, ticks;
};

// ------------------------------------------------------------------------------------------
// Single-row reductions. Each has a device op (the sum arrives in the lanes the comment says)
// and a host emulation over one warp's (or block's) lane values.
struct Butterfly {
  __device__ static float op(float v) {
#pragma unroll
    for (int o = PORT_WARP_SIZE / 2; o > 0; o /= 2) v += __shfl_xor_sync(PORT_FULL_MASK, v, o);
    return v;
  }
};

#if !defined(PORT_HIP)
struct ShflDownTree {
  __device__ static float op(float v) {
#pragma unroll
    for (int o = PORT_WARP_SIZE / 2; o > 0; o /= 2) v += __shfl_down_sync(PORT_FULL_MASK, v, o);
    return v;  // the sum in lane 0; other lanes hold partial sums (the chain feeds them on)
  }
};
struct CgReduce {
  __device__ static float op(float v) {
    namespace cg = cooperative_groups;
    auto tile = cg::tiled_partition<PORT_WARP_SIZE>(cg::this_thread_block());
    return cg::reduce(tile, v, cg::plus<float>());
  }
};
// One warp through shared memory: the pre-shuffle way. Each warp owns 32 floats.
struct SmemTree {
  __device__ static float op(float v) {
    __shared__ float sm[32 * PORT_WARP_SIZE];
    volatile float* s = sm + (threadIdx.x / PORT_WARP_SIZE) * PORT_WARP_SIZE;
    const int l = threadIdx.x % PORT_WARP_SIZE;
    s[l] = v;
    __syncwarp();
#pragma unroll
    for (int o = PORT_WARP_SIZE / 2; o > 0; o /= 2) {
      if (l < o) s[l] = s[l] + s[l + o];
      __syncwarp();
    }
    float r = s[0];
    __syncwarp();  // every lane has read s[0] before the next call overwrites it
    return r;
  }
};
// A block of 8 warps: butterfly in each warp, lane 0 writes its warp's sum, one barrier, then
// every warp sums the 8 partials with a 3-step butterfly. The partials are double-buffered by
// call parity, so one barrier per reduction is enough (the next write to a buffer is two calls
// later, behind the next call's barrier).
struct Block256 {
  __device__ static float op(float v, int parity) {
    __shared__ float part[2][8];
    const int l = threadIdx.x % PORT_WARP_SIZE, w = threadIdx.x / PORT_WARP_SIZE;
    v = Butterfly::op(v);
    if (l == 0) part[parity][w] = v;
    __syncthreads();
    float p = part[parity][l % 8];
#pragma unroll
    for (int o = 4; o > 0; o /= 2) p += __shfl_xor_sync(PORT_FULL_MASK, p, o);
    return p;
  }
};
struct ReduxU32 {
  __device__ static uint32_t op(uint32_t v) { return __reduce_add_sync(PORT_FULL_MASK, v); }
};
#endif
struct ButterflyU32 {
  __device__ static uint32_t op(uint32_t v) {
#pragma unroll
    for (int o = PORT_WARP_SIZE / 2; o > 0; o /= 2) v += __shfl_xor_sync(PORT_FULL_MASK, v, o);
    return v;
  }
};

#if defined(PORT_HIP)
// The original's DPP chain: Hillis-Steele inside each 16-lane row (row_shr 1, 2, 4, 8 with
// identity 0 for lanes shifted in from outside the row), then row_bcast:15 adds row 0's total
// to row 1 and row 2's to row 3, row_bcast:31 adds lane 31 to rows 2 and 3: lane W-1 holds the
// sum. Masked-off lanes receive `old` = 0, the identity. No LDS traffic at all.
template <int W>
__device__ __forceinline__ float reduce_dpp(float v) {
  auto step = [](float x, float y) { return x + y; };
  int b = __builtin_bit_cast(int, v);
  v = step(v, __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, b, 0x111, 0xf, 0xf, false)));  // row_shr:1
  b = __builtin_bit_cast(int, v);
  v = step(v, __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, b, 0x112, 0xf, 0xf, false)));  // row_shr:2
  b = __builtin_bit_cast(int, v);
  v = step(v, __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, b, 0x114, 0xf, 0xf, false)));  // row_shr:4
  b = __builtin_bit_cast(int, v);
  v = step(v, __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, b, 0x118, 0xf, 0xf, false)));  // row_shr:8
  b = __builtin_bit_cast(int, v);
  v = step(v, __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, b, 0x142, 0xa, 0xf, false)));  // row_bcast:15
  if constexpr (W > 32) {
    b = __builtin_bit_cast(int, v);
    v = step(v, __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, b, 0x143, 0xc, 0xf, false)));  // row_bcast:31
  }
  return __builtin_bit_cast(float, __builtin_amdgcn_readlane(__builtin_bit_cast(int, v), W - 1));
}
struct DppChain {
  __device__ static float op(float v) { return reduce_dpp<PORT_WARP_SIZE>(v); }
};
// ds_swizzle in bitmask mode (offset bit 15 = 0): and_mask 0x1f, xor_mask in bits 14:10. It
// works inside 32-lane halves; the two halves are then added with two readlanes.
template <int X>
__device__ __forceinline__ float swz(float v) {
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_swizzle(__builtin_bit_cast(int, v), 0x1f | (X << 10)));
}
template <int W>
__device__ __forceinline__ float reduce_swizzle(float v) {
  v += swz<16>(v);
  v += swz<8>(v);
  v += swz<4>(v);
  v += swz<2>(v);
  v += swz<1>(v);
  if constexpr (W > 32) {
    int b = __builtin_bit_cast(int, v);
    v = __builtin_bit_cast(float, __builtin_amdgcn_readlane(b, 0)) + __builtin_bit_cast(float, __builtin_amdgcn_readlane(b, 32));
  }
  return v;
}
struct DsSwizzle {
  __device__ static float op(float v) { return reduce_swizzle<PORT_WARP_SIZE>(v); }
};
#endif

// The chain kernel shared by every single-row method: x = reduce(x) * scale + p, so each
// reduction waits for the previous one. `scale` = 1 / lanes summed keeps x bounded.
template <class M>
__device__ __forceinline__ void chain_f32(const float* in, float* out, int iters, Clocks* clk, float scale) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  float x = in[2 * t], p = in[2 * t + 1];
  __syncthreads();
  const unsigned long long g0 = port_const_clock(), c0 = port_cycle_clock();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x = M::op(x) * scale + p;
  }
  const unsigned long long c1 = port_cycle_clock(), g1 = port_const_clock();
  out[t] = x;
  if (threadIdx.x == 0) clk[blockIdx.x] = Clocks{c1 - c0, g1 - g0};
}
template <class M>
__device__ __forceinline__ void chain_u32(const uint32_t* in, uint32_t* out, int iters, Clocks* clk) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t x = in[2 * t], p = in[2 * t + 1];
  __syncthreads();
  const unsigned long long g0 = port_const_clock(), c0 = port_cycle_clock();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x = M::op(x) + p;
  }
  const unsigned long long c1 = port_cycle_clock(), g1 = port_const_clock();
  out[t] = x;
  if (threadIdx.x == 0) clk[blockIdx.x] = Clocks{c1 - c0, g1 - g0};
}
struct NoReduce {
  __device__ static float op(float v) { return v; }
};
struct NoReduceU32 {
  __device__ static uint32_t op(uint32_t v) { return v; }
};

typedef void (*ChainFn)(const void*, void*, int, Clocks*);

#define REDUCE_F32(NAME, M, SCALE)                                                                       \
  extern "C" __global__ void __launch_bounds__(256) reduce_##NAME(const void* in, void* out, int iters, \
                                                                  Clocks* clk) {                         \
    chain_f32<M>(static_cast<const float*>(in), static_cast<float*>(out), iters, clk, SCALE);           \
  }
#define REDUCE_U32(NAME, M)                                                                              \
  extern "C" __global__ void __launch_bounds__(256) reduce_##NAME(const void* in, void* out, int iters, \
                                                                  Clocks* clk) {                         \
    chain_u32<M>(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), iters, clk);            \
  }

REDUCE_F32(none_f32, NoReduce, 1.0f)
REDUCE_F32(butterfly, Butterfly, 1.0f / PORT_WARP_SIZE)
REDUCE_U32(none_u32, NoReduceU32)
REDUCE_U32(butterfly_u32, ButterflyU32)
#if !defined(PORT_HIP)
REDUCE_F32(shfl_down_tree, ShflDownTree, 1.0f / PORT_WARP_SIZE)
REDUCE_F32(cg_reduce, CgReduce, 1.0f / PORT_WARP_SIZE)
REDUCE_F32(smem_tree, SmemTree, 1.0f / PORT_WARP_SIZE)
REDUCE_U32(redux_u32, ReduxU32)
// The block method needs the call parity: its own kernel.
extern "C" __global__ void __launch_bounds__(256) reduce_block_256(const void* in_, void* out_, int iters, Clocks* clk) {
  const float* in = static_cast<const float*>(in_);
  float* out = static_cast<float*>(out_);
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  float x = in[2 * t], p = in[2 * t + 1];
  __syncthreads();
  const unsigned long long g0 = port_const_clock(), c0 = port_cycle_clock();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x = Block256::op(x, u & 1) * (1.0f / 256) + p;
  }
  const unsigned long long c1 = port_cycle_clock(), g1 = port_const_clock();
  out[t] = x;
  if (threadIdx.x == 0) clk[blockIdx.x] = Clocks{c1 - c0, g1 - g0};
}
#else
REDUCE_F32(dpp_chain, DppChain, 1.0f / PORT_WARP_SIZE)
REDUCE_F32(ds_swizzle, DsSwizzle, 1.0f / PORT_WARP_SIZE)
REDUCE_F32(ds_bpermute, Butterfly, 1.0f / PORT_WARP_SIZE)  // __shfl_xor on HIP is ds_bpermute_b32
#endif

// ------------------------------------------------------------------------------------------
// Multi-row: R = warp-width rows, lane l holding one partial per row in v[0..R-1].
// Inputs are made opaque every iteration with an empty asm (no instruction): the compiler
// must redo the reduction each time, and no glue arithmetic dilutes what is timed. Each
// result is likewise consumed by an empty asm, so nothing is dead.
__device__ __forceinline__ void opaque(float& v) {
#if defined(PORT_HIP)
  asm volatile("" : "+v"(v));
#else
  asm volatile("" : "+f"(v));
#endif
}
__device__ __forceinline__ void consume(float v) {
#if defined(PORT_HIP)
  asm volatile("" ::"v"(v));
#else
  asm volatile("" ::"f"(v));
#endif
}

// Recursive halving over the xor layout (register k of lane l is row k ^ l): at offset O
// each lane keeps registers [0, O) and receives the partner's [O, 2O), which hold the same
// rows. R-1 shuffles and R-1 adds; register 0 of lane l ends as row l's total. (Offsets are
// template parameters so every register index is a constant: no local memory.)
template <int O, int R>
__device__ __forceinline__ void halve_xor(float (&v)[R]) {
  if constexpr (O > 0) {
#pragma unroll
    for (int k = 0; k < O; ++k) v[k] += __shfl_xor_sync(PORT_FULL_MASK, v[k + O], O);
    halve_xor<O / 2>(v);
  }
}
// The same halving over the natural layout (register k is row k): which half a lane keeps
// depends on its lane bit, so each exchanged pair costs two selects. After the step at offset
// O, register k holds row k + (lane & O ? O : 0) + ...: lane l ends with row l.
template <int O, int R>
__device__ __forceinline__ void halve_select(float (&v)[R], int lane) {
  if constexpr (O > 0) {
    const bool upper = lane & O;
#pragma unroll
    for (int k = 0; k < O; ++k) {
      float send = upper ? v[k] : v[k + O], keep = upper ? v[k + O] : v[k];
      v[k] = keep + __shfl_xor_sync(PORT_FULL_MASK, send, O);
    }
    halve_select<O / 2>(v, lane);
  }
}
template <int R>
__device__ __forceinline__ float rows_transpose_xor(float (&v)[R]) {
  halve_xor<R / 2>(v);
  return v[0];
}
template <int R>
__device__ __forceinline__ float rows_transpose_select(float (&v)[R]) {
  halve_select<R / 2>(v, threadIdx.x % PORT_WARP_SIZE);
  return v[0];
}

template <int Mode>  // 0 butterfly per row, 1 transpose xor, 2 transpose select
__device__ __forceinline__ void rows_kernel(const float* in, float* out, int iters, Clocks* clk) {
  constexpr int R = PORT_WARP_SIZE;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v[R];
#pragma unroll
  for (int k = 0; k < R; ++k) v[k] = in[(size_t)t * R + k];
  float res[R];
  __syncthreads();
  const unsigned long long g0 = port_const_clock(), c0 = port_cycle_clock();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    float w[R];
#pragma unroll
    for (int k = 0; k < R; ++k) {
      opaque(v[k]);
      w[k] = v[k];
    }
    if constexpr (Mode == 0) {
#pragma unroll
      for (int k = 0; k < R; ++k) {
        res[k] = Butterfly::op(w[k]);
        consume(res[k]);
      }
    } else {
      if constexpr (Mode == 1) res[0] = rows_transpose_xor<R>(w);
      else res[0] = rows_transpose_select<R>(w);
      consume(res[0]);
    }
  }
  const unsigned long long c1 = port_cycle_clock(), g1 = port_const_clock();
  // Output: lane l writes row l's total (the butterfly has every row in every lane).
  const int lane = threadIdx.x % PORT_WARP_SIZE;
  float mine = res[0];
  if (Mode == 0) {
#pragma unroll
    for (int k = 0; k < R; ++k)
      if (k == lane) mine = res[k];
  }
  out[t] = mine;
  if (threadIdx.x == 0) clk[blockIdx.x] = Clocks{c1 - c0, g1 - g0};
}
extern "C" __global__ void __launch_bounds__(256) reduce_rows_butterfly(const void* in, void* out, int iters, Clocks* clk) {
  rows_kernel<0>(static_cast<const float*>(in), static_cast<float*>(out), iters, clk);
}
extern "C" __global__ void __launch_bounds__(256) reduce_rows_transpose_xor(const void* in, void* out, int iters, Clocks* clk) {
  rows_kernel<1>(static_cast<const float*>(in), static_cast<float*>(out), iters, clk);
}
extern "C" __global__ void __launch_bounds__(256) reduce_rows_transpose_select(const void* in, void* out, int iters, Clocks* clk) {
  rows_kernel<2>(static_cast<const float*>(in), static_cast<float*>(out), iters, clk);
}

// ------------------------------------------------------------------------------------------
// GEMV stand-in: y[n] = W[n,:] . x, one warp per row, 16-byte loads (8 halves), 4 in flight
// per lane, FP32 accumulation, butterfly at the end; Twice adds a second butterfly whose
// result is the output (exactly equal to the first: 32 x (total/32) summed pairwise).
template <int Reductions>
__device__ __forceinline__ void gemv_rows(const uint4* __restrict__ w, const uint4* __restrict__ x, __half* __restrict__ y,
                                          int n, int k) {
  const int lane = threadIdx.x % PORT_WARP_SIZE;
  const int row = blockIdx.x * (blockDim.x / PORT_WARP_SIZE) + threadIdx.x / PORT_WARP_SIZE;
  if (row >= n) return;
  const int k8 = k / 8;  // 16-byte vectors per row
  const uint4* wr = w + (size_t)row * k8;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int j = lane; j < k8; j += 4 * PORT_WARP_SIZE) {
    uint4 wv[4], xv[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      wv[u] = __ldg(wr + j + u * PORT_WARP_SIZE);
      xv[u] = __ldg(x + j + u * PORT_WARP_SIZE);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const __half2* wh = reinterpret_cast<const __half2*>(&wv[u]);
      const __half2* xh = reinterpret_cast<const __half2*>(&xv[u]);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float2 a = __half22float2(wh[e]), b = __half22float2(xh[e]);
        acc[u] = fmaf(a.x, b.x, acc[u]);
        acc[u] = fmaf(a.y, b.y, acc[u]);
      }
    }
  }
  float s = Butterfly::op((acc[0] + acc[1]) + (acc[2] + acc[3]));
  if (Reductions == 2) s = Butterfly::op(s * (1.0f / PORT_WARP_SIZE));
  if (lane == 0) y[row] = __float2half(s);
}
extern "C" __global__ void __launch_bounds__(256) gemv_reduce_once(const uint4* w, const uint4* x, __half* y, int n, int k) {
  gemv_rows<1>(w, x, y, n, k);
}
extern "C" __global__ void __launch_bounds__(256) gemv_reduce_twice(const uint4* w, const uint4* x, __half* y, int n, int k) {
  gemv_rows<2>(w, x, y, n, k);
}
// napkin: 4096 x 4096 x 2 B = 33.6 MB of weights + 16 KB in + 8 KB out per call
double gemv_call_bytes(int n, int k) { return gemv_bytes((uint64_t)n, (uint64_t)k); }

// ------------------------------------------------------------------------------------------
// Host: emulations of each method over one group of lanes (warp, or block for block_256).
const int W = PORT_HOST_WARP_SIZE;

enum Emul { kAllLanesSum, kDownTree };
struct Method {
  const char* name;
  const char* primitive;  // what the SASS / AMDGCN shows
  ChainFn fn;
  bool integer;
  int group;      // lanes one reduction spans (32, or 256 for block_256)
  Emul emul;
  double scale;   // float chain scale (1 / group)
};

std::vector<Method> methods() {
  std::vector<Method> m = {
      {"butterfly", "SHFL.BFLY x5", (ChainFn)reduce_butterfly, false, W, kAllLanesSum, 1.0 / W},
#if !defined(PORT_HIP)
      {"shfl_down_tree", "SHFL.DOWN x5", (ChainFn)reduce_shfl_down_tree, false, W, kDownTree, 1.0 / W},
      {"cg_reduce", "cooperative_groups::reduce", (ChainFn)reduce_cg_reduce, false, W, kAllLanesSum, 1.0 / W},
      {"smem_tree", "STS/LDS + WARPSYNC", (ChainFn)reduce_smem_tree, false, W, kAllLanesSum, 1.0 / W},
      {"block_256", "SHFL + STS + BAR + LDS + SHFL", (ChainFn)reduce_block_256, false, 256, kAllLanesSum, 1.0 / 256},
      {"redux_u32", "REDUX.SUM (u32)", (ChainFn)reduce_redux_u32, true, W, kAllLanesSum, 1},
#else
      {"dpp_chain", "row_shr + row_bcast", (ChainFn)reduce_dpp_chain, false, W, kAllLanesSum, 1.0 / W},
      {"ds_swizzle", "ds_swizzle_b32", (ChainFn)reduce_ds_swizzle, false, W, kAllLanesSum, 1.0 / W},
      {"ds_bpermute", "ds_bpermute_b32", (ChainFn)reduce_ds_bpermute, false, W, kAllLanesSum, 1.0 / W},
#endif
      {"butterfly_u32", "SHFL.BFLY x5 (u32)", (ChainFn)reduce_butterfly_u32, true, W, kAllLanesSum, 1},
  };
  return m;
}

// One reduction over a group's lanes, in double (floats) or wrapping u32 (integers).
void emulate(const Method& m, std::vector<double>& v) {
  const size_t g = m.group;
  if (m.emul == kDownTree) {
    for (int o = W / 2; o > 0; o /= 2) {
      std::vector<double> n(v);
      for (int l = 0; l < W; ++l) n[l] = v[l] + (l + o < W ? v[l + o] : v[l]);
      v = n;
    }
    return;
  }
  if (m.integer) {
    uint32_t s = 0;
    for (size_t l = 0; l < g; ++l) s += (uint32_t)v[l];
    for (size_t l = 0; l < g; ++l) v[l] = s;
  } else {
    double s = 0;
    for (size_t l = 0; l < g; ++l) s += v[l];
    for (size_t l = 0; l < g; ++l) v[l] = s;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Experiment ex("04-reduce", "Cross-lane reductions: latency, throughput, multi-row amortisation, share of a GEMV.");
  std::string only;
  long long gemv_n = 4096, gemv_k = 4096;
  ex.flags().add_string("method", &only, "run only the methods whose name contains this text (the GEMV always runs)");
  ex.flags().add_int("gemv-n", &gemv_n, 8, 65536, "GEMV rows");
  ex.flags().add_int("gemv-k", &gemv_k, 1024, 65536, "GEMV columns (a multiple of 1024)");
  ex.validate_flags([&]() { return gemv_k % 1024 ? std::string("--gemv-k must be a multiple of 1024") : std::string(); });
  auto selected = [&](const Method& m) { return only.empty() || std::string(m.name).find(only) != std::string::npos; };
  ex.validate_flags([&]() -> std::string {  // a --method that matches nothing would run no method and exit 0
    std::string names;
    for (auto& m : methods()) {
      if (selected(m)) return "";
      names += std::string(names.empty() ? "" : ", ") + m.name;
    }
    return "--method " + only + " matches no method (" + names + ")";
  });
  ex.start(argc, argv);

  const bool quick = ex.quick();
  std::vector<Method> ms;
  for (auto& m : methods())
    if (selected(m)) ms.push_back(m);
  const int lat_iters = quick ? 500 : 2000;       // x kUnroll reductions, and twice that
  const int thr_iters = quick ? 256 : 2048;
  const int rows_lat_iters = quick ? 250 : 1000;  // 32-row reductions per warp
  const int rows_thr_iters = quick ? 64 : 512;
  const int runs = quick ? 3 : 5;
  const int sms = ex.sm_count();
  const int thr_blocks = 8 * sms, thr_threads = 256;  // 64 warps per SM where registers allow
  if (ex.list()) {
    std::printf("# 04-reduce would run %zu single-row methods (latency: 1 warp, %d and %d x %d dependent reductions; "
                "throughput: %d blocks x %d threads), 3 multi-row methods, and the GEMV %lldx%lld once and twice\n",
                ms.size(), lat_iters, 2 * lat_iters, kUnroll, thr_blocks, thr_threads, gemv_n, gemv_k);
    for (auto& m : ms) std::printf("method: %s (%s)\n", m.name, m.primitive);
    for (const char* r : {"rows_butterfly", "rows_transpose_xor", "rows_transpose_select"}) std::printf("multi-row: %s\n", r);
    return kExitOk;
  }

  const ClockCalibration cal = calibrate_clocks(ex.stream(), quick);
  ex.provenance_json().set("clock_calibration", cal.to_json());
  std::fprintf(stderr, "04-reduce: constant clock %.6g Hz, tick %.1f ns, SM clock %.0f MHz\n", cal.const_hz, cal.tick_ns,
               cal.sm_clock_mhz);

  const size_t max_threads = (size_t)thr_blocks * thr_threads;
  void *d_in = nullptr, *d_out = nullptr;
  Clocks* d_clk = nullptr;
  CHECK_CUDA(cudaMalloc(&d_in, max_threads * W * sizeof(float)));  // the multi-row kernels read W per thread
  CHECK_CUDA(cudaMalloc(&d_out, max_threads * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_clk, thr_blocks * sizeof(Clocks)));
  std::vector<uint32_t> h_in(max_threads * W), h_out(max_threads);
  // Throughput runs read every thread's inputs: random everywhere (validation overwrites a prefix).
  fill_random_float(static_cast<float*>(d_in), max_threads * W, fresh_seed());
  CHECK_CUDA(cudaDeviceSynchronize());

  // Fresh inputs: x0 and p per thread (floats in [-1, 1), or random words).
  auto fill_chain_inputs = [&](bool integer, size_t threads, uint64_t seed) {
    for (size_t i = 0; i < 2 * threads; ++i) {
      if (integer) h_in[i] = hash32(seed, i);
      else {
        float f = uniform_pm1(seed, i);
        std::memcpy(&h_in[i], &f, 4);
      }
    }
    CHECK_CUDA(cudaMemcpyAsync(d_in, h_in.data(), 2 * threads * 4, cudaMemcpyHostToDevice, ex.stream()));
  };
  auto as_double = [&](uint32_t w, bool integer) {
    if (integer) return (double)w;
    float f;
    std::memcpy(&f, &w, 4);
    return (double)f;
  };
  auto launch = [&](ChainFn fn, int blocks, int threads, int iters) {
    fn<<<blocks, threads, 0, ex.stream()>>>(d_in, d_out, iters, d_clk);
    CHECK_LAUNCH();
  };
  auto block0_clocks = [&]() {
    Clocks c;
    CHECK_CUDA(cudaMemcpyAsync(&c, d_clk, sizeof c, cudaMemcpyDeviceToHost, ex.stream()));
    CHECK_CUDA(cudaStreamSynchronize(ex.stream()));
    return c;
  };

  // Validation of a single-row method: one block of `threads`, `steps` dependent reductions.
  auto validate_chain = [&](const Method& m, int threads, int iters) {
    const uint64_t seed = fresh_seed();
    fill_chain_inputs(m.integer, threads, seed);
    poison_nan(d_out, threads * 4, ex.stream());
    launch(m.fn, 1, threads, iters);
    CHECK_CUDA(cudaMemcpyAsync(h_out.data(), d_out, threads * 4, cudaMemcpyDeviceToHost, ex.stream()));
    CHECK_CUDA(cudaStreamSynchronize(ex.stream()));
    for (int g0 = 0; g0 < threads; g0 += m.group) {
      std::vector<double> x(m.group), ref, got;
      for (int l = 0; l < m.group; ++l) x[l] = as_double(h_in[2 * (g0 + l)], m.integer);
      for (int s = 0; s < iters * kUnroll; ++s) {
        emulate(m, x);
        for (int l = 0; l < m.group; ++l) {
          double p = as_double(h_in[2 * (g0 + l) + 1], m.integer);
          x[l] = m.integer ? (double)(uint32_t)((uint32_t)x[l] + (uint32_t)p) : x[l] * m.scale + p;
        }
      }
      for (int l = 0; l < m.group; ++l) {
        ref.push_back(x[l]);
        got.push_back(as_double(h_out[g0 + l], m.integer));
      }
      char what[160];
      std::snprintf(what, sizeof what, "%s, %d threads, group at %d (seed %" PRIu64 ")", m.name, threads, g0, seed);
      if (!compare_rel_l2(ref, got, m.integer ? 0.0 : 1e-4, what).ok) FAIL("validation failed: %s", what);
    }
  };

  // Latency: min over runs of cycles at 2N minus at N, per reduction; minus the empty chain.
  auto latency = [&](ChainFn fn, int threads) {
    double best[2] = {1e300, 1e300};
    for (int r = 0; r < runs; ++r)
      for (int b = 0; b < 2; ++b) {
        launch(fn, 1, threads, lat_iters * (b + 1));
        best[b] = std::min(best[b], (double)block0_clocks().cycles);
      }
    return (best[1] - best[0]) / ((double)lat_iters * kUnroll);
  };
  const Method none_f{"none_f32", "-", (ChainFn)reduce_none_f32, false, W, kAllLanesSum, 1};
  const Method none_u{"none_u32", "-", (ChainFn)reduce_none_u32, true, W, kAllLanesSum, 1};
  const double glue_f32 = latency(none_f.fn, W), glue_u32 = latency(none_u.fn, W);
  const double glue_f32_block = latency(none_f.fn, 256);

  // Throughput: many warps per SM, event-timed; the SM clock from block 0's own clocks.
  auto throughput = [&](ChainFn fn, int iters, double per_thread_units, double* sm_mhz) {
    const TimingPlan plan = quick ? TimingPlan{2, 3, 3} : TimingPlan{3, 7, 5};
    Summary s = summarize(time_launches([&](int) { launch(fn, thr_blocks, thr_threads, iters); }, plan, ex.stream()));
    Clocks c = block0_clocks();
    *sm_mhz = cal.mhz((double)c.cycles, (double)c.ticks);
    // units (reductions or rows) per SM per µs
    const double units = per_thread_units * thr_blocks * thr_threads / W;
    return std::make_pair(units / sms / (s.median * 1e3), s);
  };

  const int total = static_cast<int>(ms.size() + 3 + 1);
  int done = 0;
  std::map<std::string, double> lat;
  double butterfly_lat = 0;
  for (auto& m : ms) {
    ex.progress(done++, total, "%s", m.name);
    const int threads = m.group;
    validate_chain(m, threads, 4);
    validate_chain(m, thr_threads, 4);  // 8 warps in a block: groups do not interfere
    const double raw = latency(m.fn, threads);
    const double glue = m.integer ? glue_u32 : (m.group > W ? glue_f32_block : glue_f32);
    const double cyc = raw - glue;
    double mhz = 0;
    auto tp = throughput(m.fn, thr_iters, (double)thr_iters * kUnroll * W / m.group, &mhz);
    lat[m.name] = cyc;
    if (std::string(m.name) == "butterfly") butterfly_lat = cyc;
    Row r;
    r.add("method", m.name)
        .add("primitive", m.primitive)
        .add("type", m.integer ? "u32" : "f32")
        .add("lanes", m.group)
        .add("latency_cycles", cyc, 1, "latency cycles")
        .add("raw_cycles", raw, 1, "with glue")
        .add("glue_cycles", glue, 1, "glue")
        .add("reductions_per_sm_per_us", tp.first, 1, "red/SM/µs")
        .add("throughput_sd_pct", 100 * tp.second.sd / tp.second.median, 2, "sd %")
        .add("sm_clock_mhz", mhz, 0, "SM MHz")
        .extra("throughput_median_ms", tp.second.median)
        .extra("throughput_min_ms", tp.second.min)
        .extra("throughput_n", tp.second.n)
        .extra("throughput_blocks", thr_blocks)
        .extra("throughput_threads", thr_threads)
        .extra("latency_iters", lat_iters * kUnroll);
    ex.add("single-row reductions: latency (1 warp; block_256: 8 warps) and throughput (8 x 256 threads per SM)", r);
  }

  // ---- multi-row ----
  struct RowsMethod {
    const char* name;
    ChainFn fn;
    int shuffles;
    int mode;
  };
  const std::vector<RowsMethod> rms = {{"rows_butterfly", (ChainFn)reduce_rows_butterfly, 5 * W, 0},
                                       {"rows_transpose_xor", (ChainFn)reduce_rows_transpose_xor, W - 1, 1},
                                       {"rows_transpose_select", (ChainFn)reduce_rows_transpose_select, W - 1, 2}};
  std::map<std::string, double> rows_sm, rows_warp;
  for (auto& rm : rms) {
    ex.progress(done++, total, "%s", rm.name);
    // validate: 8 warps, fresh inputs, lane l's output is row l's total over the warp
    const int threads = thr_threads;
    const uint64_t seed = fresh_seed();
    for (size_t i = 0; i < (size_t)threads * W; ++i) {
      float f = uniform_pm1(seed, i);
      std::memcpy(&h_in[i], &f, 4);
    }
    CHECK_CUDA(cudaMemcpyAsync(d_in, h_in.data(), (size_t)threads * W * 4, cudaMemcpyHostToDevice, ex.stream()));
    poison_nan(d_out, threads * 4, ex.stream());
    launch(rm.fn, 1, threads, 3);
    CHECK_CUDA(cudaMemcpyAsync(h_out.data(), d_out, threads * 4, cudaMemcpyDeviceToHost, ex.stream()));
    CHECK_CUDA(cudaStreamSynchronize(ex.stream()));
    std::vector<double> ref, got;
    for (int t = 0; t < threads; ++t) {
      const int warp0 = t / W * W, lane = t % W;
      double s = 0;
      // xor layout: register k of lane j holds row k ^ j, so row `lane` is register lane ^ j.
      // natural layouts (butterfly, select): row `lane` is register `lane` in every lane.
      for (int j = 0; j < W; ++j) s += as_double(h_in[(size_t)(warp0 + j) * W + (rm.mode == 1 ? (lane ^ j) : lane)], false);
      ref.push_back(s);
      got.push_back(as_double(h_out[t], false));
    }
    char what[128];
    std::snprintf(what, sizeof what, "%s (seed %" PRIu64 ")", rm.name, seed);
    if (!compare_rel_l2(ref, got, 1e-5, what).ok) FAIL("validation failed: %s", what);
    // one warp: cycles per row
    double best[2] = {1e300, 1e300};
    for (int r = 0; r < runs; ++r)
      for (int b = 0; b < 2; ++b) {
        launch(rm.fn, 1, W, rows_lat_iters * (b + 1));
        best[b] = std::min(best[b], (double)block0_clocks().cycles);
      }
    const double warp_cpr = (best[1] - best[0]) / ((double)rows_lat_iters * W);
    double mhz = 0;
    auto tp = throughput(rm.fn, rows_thr_iters, (double)rows_thr_iters * W, &mhz);
    const double sm_cpr = mhz / tp.first;  // SM cycles per row = (cycles per µs) / (rows per µs)
    rows_sm[rm.name] = sm_cpr;
    rows_warp[rm.name] = warp_cpr;
    Row r;
    r.add("method", rm.name)
        .add("rows", W)
        .add("shuffles", rm.shuffles)
        .add("one_warp_cycles_per_row", warp_cpr, 2, "1 warp: cycles/row")
        .add("rows_per_sm_per_us", tp.first, 1, "rows/SM/µs")
        .add("sm_cycles_per_row", sm_cpr, 3, "SM cycles/row")
        .add("throughput_sd_pct", 100 * tp.second.sd / tp.second.median, 2, "sd %")
        .add("sm_clock_mhz", mhz, 0, "SM MHz")
        .extra("throughput_median_ms", tp.second.median)
        .extra("throughput_min_ms", tp.second.min)
        .extra("throughput_n", tp.second.n);
    ex.add("multi-row: 32 rows per warp at once (amortised cost per row)", r);
  }

  // ---- the GEMV: reduction once against twice ----
  ex.progress(done++, total, "GEMV %lldx%lld", gemv_n, gemv_k);
  const int n = (int)gemv_n, k = (int)gemv_k;
  const size_t wbytes = (size_t)n * k * 2;
  const int copies = std::max<int>(2, (int)((4 * ex.l2_bytes() + wbytes - 1) / wbytes));  // >= 4x the L2
  WorkingSetVerdict wv = check_working_set((uint64_t)copies * wbytes, ex.l2_bytes(), 4);
  if (!wv.ok) FAIL("refusing to measure: %s", wv.message.c_str());
  std::vector<__half*> wcopies(copies);
  __half *d_x = nullptr, *d_y = nullptr;
  const uint64_t gseed = fresh_seed();
  for (int c = 0; c < copies; ++c) {
    CHECK_CUDA(cudaMalloc(&wcopies[c], wbytes));
    fill_random_half(wcopies[c], (size_t)n * k, gseed + 1000 + c);
  }
  CHECK_CUDA(cudaMalloc(&d_x, (size_t)k * 2));
  CHECK_CUDA(cudaMalloc(&d_y, (size_t)n * 2));
  fill_random_half(d_x, k, gseed);
  CHECK_CUDA(cudaDeviceSynchronize());
  const int gthreads = 256, gblocks = (n + gthreads / W - 1) / (gthreads / W);
  typedef void (*GemvFn)(const uint4*, const uint4*, __half*, int, int);
  auto glaunch = [&](GemvFn f, int c) {
    f<<<gblocks, gthreads, 0, ex.stream()>>>(reinterpret_cast<const uint4*>(wcopies[c]), reinterpret_cast<const uint4*>(d_x),
                                             d_y, n, k);
    CHECK_LAUNCH();
  };
  {
    std::vector<__half> hx(k), hw((size_t)n * k), hy(n);
    CHECK_CUDA(cudaMemcpy(hx.data(), d_x, (size_t)k * 2, cudaMemcpyDeviceToHost));
    for (int c : {0, copies - 1}) {
      CHECK_CUDA(cudaMemcpy(hw.data(), wcopies[c], wbytes, cudaMemcpyDeviceToHost));
      std::vector<double> ref(n);
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int j = 0; j < k; ++j) s += (double)__half2float(hw[(size_t)i * k + j]) * (double)__half2float(hx[j]);
        ref[i] = s;
      }
      for (GemvFn f : {(GemvFn)gemv_reduce_once, (GemvFn)gemv_reduce_twice}) {
        poison_nan(d_y, (size_t)n * 2, ex.stream());
        glaunch(f, c);
        CHECK_CUDA(cudaMemcpyAsync(hy.data(), d_y, (size_t)n * 2, cudaMemcpyDeviceToHost, ex.stream()));
        CHECK_CUDA(cudaStreamSynchronize(ex.stream()));
        if (!compare_rel_l2(ref, half_to_double(hy), 2e-3, "gemv").ok)
          FAIL("validation failed: GEMV (%s), weight copy %d", f == (GemvFn)gemv_reduce_once ? "once" : "twice", c);
      }
    }
  }
  // Interleaved batches (once, twice, once, ...) so clock or thermal drift hits both alike.
  const Ceiling ceil = obtain_ceiling(ex);
  const int batches = quick ? 5 : 21, per_batch = quick ? 20 : 100;
  std::vector<double> t_once, t_twice;
  int rot = 0;
  for (int b = 0; b < batches; ++b)
    for (GemvFn f : {(GemvFn)gemv_reduce_once, (GemvFn)gemv_reduce_twice}) {
      auto v = time_launches([&](int) { glaunch(f, rot++ % copies); }, TimingPlan{2, 1, per_batch}, ex.stream());
      (f == (GemvFn)gemv_reduce_once ? t_once : t_twice).push_back(v[0]);
    }
  const Summary s1 = summarize(t_once), s2 = summarize(t_twice);
  const double bytes = gemv_call_bytes(n, k);
  for (int which = 0; which < 2; ++which) {
    const Summary& s = which ? s2 : s1;
    const double g = gbps(bytes, s.median);
    ex.require_below_ceiling(g, ceil.gbps, which ? "gemv_reduce_twice" : "gemv_reduce_once");
    Row r;
    r.add("kernel", which ? "gemv_reduce_twice" : "gemv_reduce_once")
        .add("shape", std::to_string(n) + "x" + std::to_string(k))
        .add("median_us", s.median * 1e3, 3, "median µs")
        .add("min_us", s.min * 1e3, 3, "min µs")
        .add("sd_us", s.sd * 1e3, 3, "sd µs")
        .add("gbps", g, 1, "GB/s")
        .add("mbu", g / ceil.gbps, 3, "MBU")
        .extra("batches", s.n)
        .extra("launches_per_batch", per_batch)
        .extra("weight_copies", copies)
        .extra("working_set_bytes", (unsigned long long)copies * wbytes)
        .extra("ceiling_gbps", ceil.gbps)
        .extra("ceiling_source", ceil.source);
    ex.add("GEMV stand-in (warp per row, 16-byte loads): butterfly once and twice", r);
  }
  const double frac = (s2.median - s1.median) / s1.median;
  for (auto* p : wcopies) CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaFree(d_x));
  CHECK_CUDA(cudaFree(d_y));

  ex.note("latency = (cycles at " + std::to_string(2 * lat_iters * kUnroll) + " minus at " +
          std::to_string(lat_iters * kUnroll) + " dependent reductions) / " + std::to_string(lat_iters * kUnroll) +
          ", minimum of " + std::to_string(runs) + " runs, minus the same chain with no reduction (glue)");
  ex.note("GEMV: " + std::to_string(copies) + " rotated weight copies (" + wv.message + "), " + std::to_string(batches) +
          " interleaved batches of " + std::to_string(per_batch) + " launches; the stand-in for 02-gemv's best version");
  // ---- summary ----
  ex.summary().set("butterfly_latency_cycles", lat.count("butterfly") ? Json(butterfly_lat) : Json());
  std::string best_m;
  double best_l = 1e300;
  for (auto& kv : lat)
    if (kv.first != "block_256" && kv.second < best_l) { best_l = kv.second; best_m = kv.first; }
  ex.summary().set("best_latency_cycles", best_m.empty() ? Json() : Json(best_l));
  ex.summary().set("best_method", best_m.empty() ? Json() : Json(best_m));
  const double best_rows = std::min(rows_sm["rows_transpose_xor"], rows_sm["rows_transpose_select"]);
  ex.summary().set("amortized_cycles_per_row_best", best_rows);
  ex.summary().set("amortized_speedup_vs_butterfly", rows_sm["rows_butterfly"] / best_rows);
  ex.summary().set("amortized_speedup_vs_butterfly_one_warp",
                   rows_warp["rows_butterfly"] / std::min(rows_warp["rows_transpose_xor"], rows_warp["rows_transpose_select"]));
  ex.summary().set("gemv_reduction_fraction_4096", frac);
  ex.summary().set("sm_clock_mhz", cal.sm_clock_mhz);
  CHECK_CUDA(cudaFree(d_in));
  CHECK_CUDA(cudaFree(d_out));
  CHECK_CUDA(cudaFree(d_clk));
  return ex.finish();
}
