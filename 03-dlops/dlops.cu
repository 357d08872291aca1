// 03-dlops: dependent-instruction chains timed with calibrated in-kernel clocks.
//
//   make 03-dlops/dlops && 03-dlops/dlops [--quick] [--json PATH] [--chain NAME] [--iters N]
//   make 03-dlops/dlops.s     PTX + SASS (sm_90), or AMDGCN (ARCH=gfx942) of every chain
//
// Chains (sm_90, inline PTX in asm volatile on dependent registers, so neither nvcc nor the
// order of the source can fold or reorder them; ptxas's output is checked in asm.rules):
//   ffma_dependent        fma.rn.f32 a, a, b, c             one accumulator      (FFMA)
//   ffma_dependent_imm    fma.rn.f32 a, a, b, 0.5           c an immediate: two register reads
//   ffma_2/4/8_chains     the same over 2, 4, 8 accumulators: the issue floor
//   ffma_8_bank_conflict  8 chains, every instruction three distinct registers: no reuse cache
//   ffma_fmul_mixed       fma then mul.f32 on the same accumulator: the opcode switch
//   fmul_dependent        mul.rn.f32 a, a, b
//   hfma2_dependent       fma.rn.f16x2                                             (HFMA2)
//   gemv_step             the GEMV inner step as nvcc compiles it from C: 16-byte shared
//                         loads, half->float conversions (HADD2.F32) feeding one FFMA chain
//   imad_dependent        mad.lo.u32                                               (IMAD)
//   dp4a_dependent        dp4a.u32.u32, accumulator dependent                      (IDP.4A)
//   dp2a_dependent        dp2a.lo.u32.u32, accumulator dependent                   (IDP.2A)
//   hmma_dependent        mma.sync m16n8k16 f32.f16.f16.f32, D fed back as C       (HMMA.16816.F32)
// Chains (gfx942: built and assembly-checked, not run here: we have no AMD GPU):
//   dot2_pure             v_dot2c_f32_f16 with shared SrcC, 16 back to back
//   dot2_2_chains         two independent dot2 chains
//   dot2_mul_mixed        dot2 interleaved with v_mul_f32 on the accumulator (s_nop 2 expected)
//
// Method: one block of W warps (W = 1, 4, 8, 16, 32) on one SM; each warp's lane 0 reads the
// SM cycle counter and the constant-rate clock around `iters` (100,000) iterations of an
// unrolled body. Each chain is built with a 16-, a 32- and a 64-instruction body; the block's
// cycles (first warp's start to last warp's end) give cycles/instruction =
// (cycles(64) - cycles(32)) / (iters * 32), which takes out the loop's own overhead and the
// prologue. Each is the minimum of 5 runs (a latency floor: noise only adds). Before timing,
// every chain at every warp count runs on fresh random inputs with NaN-poisoned outputs and is
// compared against a CPU double-precision reference (exactly for the integer chains).
#include <cinttypes>
#include <cstring>
#include "../common/experiment.h"
#include "../common/validate.h"
#include "clocks.h"

namespace {

constexpr int kInWords = 32;   // per-thread input words (bit patterns) every chain may read
constexpr int kOutWords = 8;   // per-thread output words
constexpr int kTableWords = 1024;  // shared table for gemv_step: 64 x 16-byte w and x vectors

// Per-warp timing record written by lane 0: the SM cycle counter and the constant-rate clock
// read at the start and the end of the timed loop. All warps of the block share one SM, so
// their cycle counts are one counter: the block's time is the last end minus the first start.
struct WarpTiming {
  unsigned long long c0, c1, g0, g1;
};

__device__ __forceinline__ float as_f(uint32_t w) { return __uint_as_float(w); }
__device__ __forceinline__ uint32_t as_u(float f) { return __float_as_uint(f); }

// The timed region every chain shares: load state, clocks, `iters` bodies, clocks, store.
template <class Chain, int R>
__device__ __forceinline__ void run_chain(const uint32_t* __restrict__ in, const uint32_t* __restrict__ table,
                                          uint32_t* __restrict__ out, WarpTiming* timing, int iters) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  Chain c;
  c.load(in + (size_t)t * kInWords, table);
  __syncthreads();
  const unsigned long long g0 = port_const_clock();
  const unsigned long long c0 = port_cycle_clock();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) c.template body<R>(i);
  const unsigned long long c1 = port_cycle_clock();
  const unsigned long long g1 = port_const_clock();
  c.store(out + (size_t)t * kOutWords);
  if (threadIdx.x % PORT_WARP_SIZE == 0) {
    WarpTiming w{c0, c1, g0, g1};
    timing[threadIdx.x / PORT_WARP_SIZE] = w;
  }
}

// Host-side description of a chain: how to make inputs, the reference, how to read outputs.
struct HostChain {
  const char* name;
  const char* what;        // the instruction in SASS / AMDGCN
  int insts_per_iter;      // instructions in one "iteration" of the table (1 for a dependent chain)
  const char* expected;    // documented or expected latency, with its source, or "-"
  void (*make)(uint64_t seed, size_t thread, uint32_t* in);  // kInWords words
  // reference for one warp: in[32][kInWords] -> ref values; `steps` instructions per chain body
  void (*ref)(const uint32_t* in, const uint32_t* table, long iters, int R, std::vector<double>& ref);
  void (*decode)(const uint32_t* out, std::vector<double>& got);  // one warp's outputs
  double tol;              // rel L2 (0 = exact)
};

double u01(uint64_t seed, uint64_t i) { return (hash64(seed, i) >> 11) * (1.0 / 9007199254740992.0); }
float range(uint64_t seed, uint64_t i, float lo, float hi) { return lo + (hi - lo) * (float)u01(seed, i); }
uint32_t fbits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float ffrom(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
uint16_t hbits(float f) { __half_raw r = __float2half_rn(f); return r.x; }
double hval(uint16_t u) { __half_raw r; r.x = u; return (double)__half2float(__half(r)); }

// ---------------------------------------------------------------------------------------------
#if !defined(PORT_HIP)
// FFMA dependent: a = a*b + c. |b| < 1 keeps the chain finite for any length.
struct FfmaDep {
  float a, b, c;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = as_f(p[0]); b = as_f(p[1]); c = as_f(p[2]); }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a) : "f"(b), "f"(c));
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); }
};
// The same chain with c an immediate (a = a*b + 0.5): two register sources per FFMA instead of
// three. Beside ffma_dependent it separates the FMA pipe from the register reads: if several
// warps per scheduler, each issuing one dependent FFMA at a time, are held to one FFMA every
// two cycles by reading three registers (the reuse cache cannot help when every instruction
// comes from another warp), this chain is not. 0.5 / (1 - b) bounds a for b < 1.
struct FfmaDepImm {
  float a, b;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = as_f(p[0]); b = as_f(p[1]); }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("fma.rn.f32 %0, %0, %1, 0f3F000000;" : "+f"(a) : "f"(b));
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); }
};
// N independent accumulators sharing b and c: the same b and c in the same slots every
// instruction lets ptxas mark them .reuse (operand reuse cache).
template <int N>
struct FfmaChains {
  float a[N], b, c;
  __device__ void load(const uint32_t* p, const uint32_t*) {
    for (int k = 0; k < N; ++k) a[k] = as_f(p[k]);
    b = as_f(p[8]); c = as_f(p[9]);
  }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R / N; ++j)
#pragma unroll
      for (int k = 0; k < N; ++k) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a[k]) : "f"(b), "f"(c));
  }
  __device__ void store(uint32_t* p) { for (int k = 0; k < N; ++k) p[k] = as_u(a[k]); }
};
// 8 chains, each with its own b and c: three distinct registers per FFMA and none repeated in
// the same slot of the next instruction, so the reuse cache cannot serve them; with two
// register banks, two of three sources always share one.
struct FfmaConflict {
  float a[8], b[8], c[8];
  __device__ void load(const uint32_t* p, const uint32_t*) {
    for (int k = 0; k < 8; ++k) { a[k] = as_f(p[k]); b[k] = as_f(p[8 + k]); c[k] = as_f(p[16 + k]); }
  }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R / 8; ++j)
#pragma unroll
      for (int k = 0; k < 8; ++k) asm volatile("fma.rn.f32 %0, %1, %0, %2;" : "+f"(a[k]) : "f"(b[k]), "f"(c[k]));
  }
  __device__ void store(uint32_t* p) { for (int k = 0; k < 8; ++k) p[k] = as_u(a[k]); }
};
// FFMA then FMUL on the same accumulator: on AMD this opcode switch breaks SrcC forwarding.
struct FfmaFmul {
  float a, b, c, d;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = as_f(p[0]); b = as_f(p[1]); c = as_f(p[2]); d = as_f(p[3]); }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R / 2; ++j) {
      asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a) : "f"(b), "f"(c));
      asm volatile("mul.rn.f32 %0, %0, %1;" : "+f"(a) : "f"(d));
    }
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); }
};
struct FmulDep {
  float a, b;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = as_f(p[0]); b = as_f(p[1]); }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("mul.rn.f32 %0, %0, %1;" : "+f"(a) : "f"(b));
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); }
};
struct Hfma2Dep {
  uint32_t a, b, c;  // packed f16x2
  __device__ void load(const uint32_t* p, const uint32_t*) { a = p[0]; b = p[1]; c = p[2]; }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(a) : "r"(b), "r"(c));
  }
  __device__ void store(uint32_t* p) { p[0] = a; }
};
// The GEMV inner step in plain C, as 02-gemv's kernels write it: 16-byte loads of weights and
// activations (here from shared memory, so the memory system is not what is timed), each half
// converted to float (HADD2.F32 on sm_90) and accumulated into one float with FFMA.
struct GemvStep {
  float a;
  const uint4* w;
  const uint4* x;
  __device__ void load(const uint32_t* p, const uint32_t* table) {
    __shared__ uint4 sm[kTableWords / 4];
    for (int i = threadIdx.x; i < kTableWords / 4; i += blockDim.x)
      sm[i] = reinterpret_cast<const uint4*>(table)[i];
    a = as_f(p[0]);
    w = sm;
    x = sm + 64;
  }
  template <int R> __device__ void body(int i) {
#pragma unroll
    for (int v = 0; v < R / 8; ++v) {
      const int idx = (i * (R / 8) + v) & 63;  // moves every iteration: the loads stay in the loop
      uint4 wv = w[idx], xv = x[idx];
      const uint32_t ws[4] = {wv.x, wv.y, wv.z, wv.w}, xs[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        __half2 wh = *reinterpret_cast<const __half2*>(&ws[k]), xh = *reinterpret_cast<const __half2*>(&xs[k]);
        float2 wf = __half22float2(wh), xf = __half22float2(xh);
        a = fmaf(wf.x, xf.x, a);
        a = fmaf(wf.y, xf.y, a);
      }
    }
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); }
};
struct ImadDep {
  uint32_t a, b, c;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = p[0]; b = p[1]; c = p[2]; }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(a) : "r"(b), "r"(c));
  }
  __device__ void store(uint32_t* p) { p[0] = a; }
};
struct Dp4aDep {
  uint32_t acc, x, y;
  __device__ void load(const uint32_t* p, const uint32_t*) { acc = p[0]; x = p[1]; y = p[2]; }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("dp4a.u32.u32 %0, %1, %2, %0;" : "+r"(acc) : "r"(x), "r"(y));
  }
  __device__ void store(uint32_t* p) { p[0] = acc; }
};
struct Dp2aDep {
  uint32_t acc, x, y;
  __device__ void load(const uint32_t* p, const uint32_t*) { acc = p[0]; x = p[1]; y = p[2]; }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("dp2a.lo.u32.u32 %0, %1, %2, %0;" : "+r"(acc) : "r"(x), "r"(y));
  }
  __device__ void store(uint32_t* p) { p[0] = acc; }
};
// mma.sync m16n8k16: D = A*B + D with D fed back as C each time (a dependent accumulator).
struct HmmaDep {
  uint32_t a0, a1, a2, a3, b0, b1;
  float d0, d1, d2, d3;
  __device__ void load(const uint32_t* p, const uint32_t*) {
    a0 = p[0]; a1 = p[1]; a2 = p[2]; a3 = p[3]; b0 = p[4]; b1 = p[5];
    d0 = as_f(p[6]); d1 = as_f(p[7]); d2 = as_f(p[8]); d3 = as_f(p[9]);
  }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
          : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(d0); p[1] = as_u(d1); p[2] = as_u(d2); p[3] = as_u(d3); }
};
#else  // PORT_HIP: the original's three gfx942 chains, in builtins so the compiler's hazard
       // recognizer (not inline asm) decides the wait states the check looks for.
typedef _Float16 half2_t __attribute__((ext_vector_type(2)));
__device__ __forceinline__ half2_t as_h2(uint32_t w) { return __builtin_bit_cast(half2_t, w); }
struct Dot2Pure {
  float a;
  half2_t x, y;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = as_f(p[0]); x = as_h2(p[1]); y = as_h2(p[2]); }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R; ++j) a = __builtin_amdgcn_fdot2(x, y, a, false);
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); }
};
struct Dot2TwoChains {
  float a, b;
  half2_t x, y;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = as_f(p[0]); b = as_f(p[1]); x = as_h2(p[8]); y = as_h2(p[9]); }
  // (p[1] doubles as chain b's start: a float bit pattern of two halves, finite by construction)
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R / 2; ++j) {
      a = __builtin_amdgcn_fdot2(x, y, a, false);
      b = __builtin_amdgcn_fdot2(x, y, b, false);
    }
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); p[1] = as_u(b); }
};
struct Dot2Mul {
  float a, d;
  half2_t x, y;
  __device__ void load(const uint32_t* p, const uint32_t*) { a = as_f(p[0]); d = as_f(p[3]); x = as_h2(p[1]); y = as_h2(p[2]); }
  template <int R> __device__ void body(int) {
#pragma unroll
    for (int j = 0; j < R / 2; ++j) {
      a = __builtin_amdgcn_fdot2(x, y, a, false);
      a = a * d;
    }
  }
  __device__ void store(uint32_t* p) { p[0] = as_u(a); }
};
#endif

// extern "C" names so asm.rules can name each kernel: dlops_<chain>_<body length>.
#define DLOPS_KERNEL(NAME, CHAIN, R)                                                                     \
  extern "C" __global__ void __launch_bounds__(1024) dlops_##NAME##_##R(                                \
      const uint32_t* in, const uint32_t* table, uint32_t* out, WarpTiming* timing, int iters) {        \
    run_chain<CHAIN, R>(in, table, out, timing, iters);                                                 \
  }
#define DLOPS_CHAIN(NAME, CHAIN) DLOPS_KERNEL(NAME, CHAIN, 16) DLOPS_KERNEL(NAME, CHAIN, 32) DLOPS_KERNEL(NAME, CHAIN, 64)

#if !defined(PORT_HIP)
DLOPS_CHAIN(ffma_dependent, FfmaDep)
DLOPS_CHAIN(ffma_dependent_imm, FfmaDepImm)
DLOPS_CHAIN(ffma_2_chains, FfmaChains<2>)
DLOPS_CHAIN(ffma_4_chains, FfmaChains<4>)
DLOPS_CHAIN(ffma_8_chains, FfmaChains<8>)
DLOPS_CHAIN(ffma_8_bank_conflict, FfmaConflict)
DLOPS_CHAIN(ffma_fmul_mixed, FfmaFmul)
DLOPS_CHAIN(fmul_dependent, FmulDep)
DLOPS_CHAIN(hfma2_dependent, Hfma2Dep)
DLOPS_CHAIN(gemv_step, GemvStep)
DLOPS_CHAIN(imad_dependent, ImadDep)
DLOPS_CHAIN(dp4a_dependent, Dp4aDep)
DLOPS_CHAIN(dp2a_dependent, Dp2aDep)
DLOPS_CHAIN(hmma_dependent, HmmaDep)
#else
DLOPS_CHAIN(dot2_pure, Dot2Pure)
DLOPS_CHAIN(dot2_2_chains, Dot2TwoChains)
DLOPS_CHAIN(dot2_mul_mixed, Dot2Mul)
#endif

// ---------------------------------------------------------------------------------------------
// Host side: inputs, double-precision references, decoders.
const int W = PORT_HOST_WARP_SIZE;

// Float chains: in[0..7] accumulators in [-1, 1); in[1] = b in [0.5, 0.9) and in[2] = c for the
// one-accumulator chains (b < 1 contracts, so any length stays finite); in[3] = d in [0.9, 1.1)
// for the mixed chain (b*d < 1); in[8..15] = b's in [0.5, 0.9) (in[8] shared by FfmaChains),
// in[16..23] = c's; FfmaChains' shared c is in[9].
void make_ffma(uint64_t s, size_t t, uint32_t* in) {
  for (int k = 0; k < kInWords; ++k) in[k] = 0;
  for (int k = 0; k < 8; ++k) in[k] = fbits(range(s, t * 64 + k, -1.f, 1.f));
  in[1] = fbits(range(s, t * 64 + 40, 0.5f, 0.9f));
  in[3] = fbits(range(s, t * 64 + 42, 0.9f, 1.1f));
  for (int k = 0; k < 8; ++k) in[8 + k] = fbits(range(s, t * 64 + 8 + k, 0.5f, 0.9f));
  for (int k = 0; k < 8; ++k) in[16 + k] = fbits(range(s, t * 64 + 16 + k, -1.f, 1.f));
}
void ref_ffma_dep(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    double a = ffrom(p[0]), b = ffrom(p[1]), c = ffrom(p[2]);
    for (long i = 0; i < iters * R; ++i) a = a * b + c;
    ref.push_back(a);
  }
}
void ref_ffma_dep_imm(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    double a = ffrom(p[0]), b = ffrom(p[1]);
    for (long i = 0; i < iters * R; ++i) a = a * b + 0.5;
    ref.push_back(a);
  }
}
template <int N>
void ref_ffma_chains(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    for (int k = 0; k < N; ++k) {
      double a = ffrom(p[k]), b = ffrom(p[8]), c = ffrom(p[9]);
      for (long i = 0; i < iters * R / N; ++i) a = a * b + c;
      ref.push_back(a);
    }
  }
}
void ref_ffma_conflict(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    for (int k = 0; k < 8; ++k) {
      double a = ffrom(p[k]), b = ffrom(p[8 + k]), c = ffrom(p[16 + k]);
      for (long i = 0; i < iters * R / 8; ++i) a = b * a + c;
      ref.push_back(a);
    }
  }
}
void ref_ffma_fmul(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    double a = ffrom(p[0]), b = ffrom(p[1]), c = ffrom(p[2]), d = ffrom(p[3]);
    for (long i = 0; i < iters * R / 2; ++i) a = (a * b + c) * d;  // |b*d| < 1: contracts
    ref.push_back(a);
  }
}
void make_fmul(uint64_t s, size_t t, uint32_t* in) {
  make_ffma(s, t, in);
  // |log b| <= 1e-6: 1.6 M dependent multiplies move a by at most e^1.6, so it stays normal
  in[1] = fbits(range(s, t * 64 + 45, 1.0f - 1e-6f, 1.0f + 1e-6f));
}
void ref_fmul(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    double a = ffrom(p[0]), b = ffrom(p[1]);
    for (long i = 0; i < iters * R; ++i) a = a * b;
    ref.push_back(a);
  }
}
void decode_f32(const uint32_t* out, int n, std::vector<double>& got) {
  got.clear();
  for (int l = 0; l < W; ++l)
    for (int k = 0; k < n; ++k) got.push_back(ffrom(out[l * kOutWords + k]));
}
void dec1(const uint32_t* o, std::vector<double>& g) { decode_f32(o, 1, g); }
void dec2(const uint32_t* o, std::vector<double>& g) { decode_f32(o, 2, g); }
void dec4(const uint32_t* o, std::vector<double>& g) { decode_f32(o, 4, g); }
void dec8(const uint32_t* o, std::vector<double>& g) { decode_f32(o, 8, g); }
void dec_u32(const uint32_t* o, std::vector<double>& g) {
  g.clear();
  for (int l = 0; l < W; ++l) g.push_back((double)o[l * kOutWords]);
}
void dec_h2(const uint32_t* o, std::vector<double>& g) {
  g.clear();
  for (int l = 0; l < W; ++l) {
    uint32_t w = o[l * kOutWords];
    g.push_back(hval(w & 0xffff));
    g.push_back(hval(w >> 16));
  }
}
void make_hfma2(uint64_t s, size_t t, uint32_t* in) {
  for (int k = 0; k < kInWords; ++k) in[k] = 0;
  for (int k = 0; k < 3; ++k) {
    float lo = k == 1 ? 0.5f : -1.f, hi = k == 1 ? 0.9f : 1.f;
    in[k] = hbits(range(s, t * 64 + 2 * k, lo, hi)) | (uint32_t)hbits(range(s, t * 64 + 2 * k + 1, lo, hi)) << 16;
  }
}
// The reference keeps double precision; the device rounds to half every step, and the
// contraction (b < 0.9) bounds the accumulated difference to a few half ulps of |a| <= 10.
void ref_hfma2(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    for (int h = 0; h < 2; ++h) {
      double a = hval((p[0] >> (16 * h)) & 0xffff), b = hval((p[1] >> (16 * h)) & 0xffff), c = hval((p[2] >> (16 * h)) & 0xffff);
      for (long i = 0; i < iters * R; ++i) a = a * b + c;
      ref.push_back(a);
    }
  }
}
void make_int(uint64_t s, size_t t, uint32_t* in) {
  for (int k = 0; k < kInWords; ++k) in[k] = hash32(s, t * 64 + k);
}
void ref_imad(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    uint32_t a = p[0];
    for (long i = 0; i < iters * R; ++i) a = a * p[1] + p[2];
    ref.push_back((double)a);
  }
}
void ref_dp4a(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    uint32_t dot = 0;
    for (int k = 0; k < 4; ++k) dot += ((p[1] >> (8 * k)) & 0xff) * ((p[2] >> (8 * k)) & 0xff);
    ref.push_back((double)(uint32_t)(p[0] + (uint32_t)(dot * (uint64_t)(iters * R))));
  }
}
void ref_dp2a(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    // dp2a.lo: the two 16-bit halves of a times bytes 0 and 1 of b
    uint32_t dot = (p[1] & 0xffff) * (p[2] & 0xff) + (p[1] >> 16) * ((p[2] >> 8) & 0xff);
    ref.push_back((double)(uint32_t)(p[0] + (uint32_t)(dot * (uint64_t)(iters * R))));
  }
}
void make_gemv(uint64_t s, size_t t, uint32_t* in) {
  for (int k = 0; k < kInWords; ++k) in[k] = 0;
  in[0] = fbits(range(s, t * 64, -1.f, 1.f));
}
void ref_gemv(const uint32_t* in, const uint32_t* table, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    double a = ffrom(in[l * kInWords]);
    for (long i = 0; i < iters; ++i)
      for (int v = 0; v < R / 8; ++v) {
        long idx = (i * (R / 8) + v) & 63;
        for (int k = 0; k < 8; ++k) {
          uint32_t ww = table[idx * 4 + k / 2], xw = table[(64 + idx) * 4 + k / 2];
          a += hval((ww >> (16 * (k & 1))) & 0xffff) * hval((xw >> (16 * (k & 1))) & 0xffff);
        }
      }
    ref.push_back(a);
  }
}
void make_hmma(uint64_t s, size_t t, uint32_t* in) {
  for (int k = 0; k < kInWords; ++k) in[k] = 0;
  for (int k = 0; k < 6; ++k)
    in[k] = hbits(range(s, t * 64 + 2 * k, -1.f, 1.f)) | (uint32_t)hbits(range(s, t * 64 + 2 * k + 1, -1.f, 1.f)) << 16;
  for (int k = 0; k < 4; ++k) in[6 + k] = fbits(range(s, t * 64 + 20 + k, -1.f, 1.f));
}
// Fragment layout of mma.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"): g = lane/4,
// q = lane%4. A (row-major 16x16): a0 (g, 2q..2q+1), a1 (g+8, 2q..), a2 (g, 2q+8..), a3 (g+8, 2q+8..).
// B (16x8, column): b0 rows 2q..2q+1 of column g, b1 rows 2q+8..2q+9. C/D: c0,c1 (g, 2q..2q+1),
// c2,c3 (g+8, 2q..2q+1).
void ref_hmma(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  double A[16][16], B[16][8], C[16][8];
  auto lo = [](uint32_t w) { return hval(w & 0xffff); };
  auto hi = [](uint32_t w) { return hval(w >> 16); };
  for (int l = 0; l < 32; ++l) {
    const uint32_t* p = in + l * kInWords;
    int g = l / 4, q = l % 4;
    A[g][2 * q] = lo(p[0]); A[g][2 * q + 1] = hi(p[0]);
    A[g + 8][2 * q] = lo(p[1]); A[g + 8][2 * q + 1] = hi(p[1]);
    A[g][2 * q + 8] = lo(p[2]); A[g][2 * q + 9] = hi(p[2]);
    A[g + 8][2 * q + 8] = lo(p[3]); A[g + 8][2 * q + 9] = hi(p[3]);
    B[2 * q][g] = lo(p[4]); B[2 * q + 1][g] = hi(p[4]);
    B[2 * q + 8][g] = lo(p[5]); B[2 * q + 9][g] = hi(p[5]);
    C[g][2 * q] = ffrom(p[6]); C[g][2 * q + 1] = ffrom(p[7]);
    C[g + 8][2 * q] = ffrom(p[8]); C[g + 8][2 * q + 1] = ffrom(p[9]);
  }
  const double n = (double)iters * R;
  ref.clear();
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, q = l % 4;
    const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {2 * q, 2 * q + 1, 2 * q, 2 * q + 1};
    for (int e = 0; e < 4; ++e) {
      double ab = 0;
      for (int k = 0; k < 16; ++k) ab += A[rows[e]][k] * B[k][cols[e]];
      ref.push_back(C[rows[e]][cols[e]] + n * ab);
    }
  }
}
#if defined(PORT_HIP)
void make_dot2(uint64_t s, size_t t, uint32_t* in) {
  make_hfma2(s, t, in);  // in[1], in[2]: half2 operands of the pure and mixed chains
  in[0] = fbits(range(s, t * 64 + 50, -1.f, 1.f));
  in[3] = fbits(range(s, t * 64 + 52, 0.5f, 0.9f));
  in[8] = in[1];
  in[9] = in[2];
}
void ref_dot2(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    double dot = hval(p[1] & 0xffff) * hval(p[2] & 0xffff) + hval(p[1] >> 16) * hval(p[2] >> 16);
    ref.push_back(ffrom(p[0]) + dot * iters * R);
  }
}
void ref_dot2_two(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    double dot = hval(p[8] & 0xffff) * hval(p[9] & 0xffff) + hval(p[8] >> 16) * hval(p[9] >> 16);
    for (int k = 0; k < 2; ++k) ref.push_back(ffrom(p[k]) + dot * iters * R / 2);
  }
}
void ref_dot2_mul(const uint32_t* in, const uint32_t*, long iters, int R, std::vector<double>& ref) {
  ref.clear();
  for (int l = 0; l < W; ++l) {
    const uint32_t* p = in + l * kInWords;
    double dot = hval(p[1] & 0xffff) * hval(p[2] & 0xffff) + hval(p[1] >> 16) * hval(p[2] >> 16), a = ffrom(p[0]);
    for (long i = 0; i < iters * R / 2; ++i) a = (a + dot) * ffrom(p[3]);
    ref.push_back(a);
  }
}
#endif

using ChainKernel = void (*)(const uint32_t*, const uint32_t*, uint32_t*, WarpTiming*, int);
constexpr int kBodies[] = {16, 32, 64};  // instructions per loop body, one kernel each
struct ChainEntry {
  HostChain host;
  ChainKernel k[3];  // the kernels of kBodies, in order
};

std::vector<ChainEntry> chains() {
  const char* ffma_src = "4 (FP32 FMA: Jia et al. 2018, arXiv:1804.06826, Volta; 2019 arXiv:1903.07486, Turing)";
  return {
#if !defined(PORT_HIP)
    {{"ffma_dependent", "FFMA", 1, ffma_src, make_ffma, ref_ffma_dep, dec1, 1e-5},
     {dlops_ffma_dependent_16, dlops_ffma_dependent_32, dlops_ffma_dependent_64}},
    {{"ffma_dependent_imm", "FFMA, c immediate", 1, "4; at 4+ warps per scheduler: ffma_dependent's figure if the FMA pipe limits, fmul_dependent's if three register reads do",
      make_ffma, ref_ffma_dep_imm, dec1, 1e-5},
     {dlops_ffma_dependent_imm_16, dlops_ffma_dependent_imm_32, dlops_ffma_dependent_imm_64}},
    {{"ffma_2_chains", "FFMA x2", 2, "-", make_ffma, ref_ffma_chains<2>, dec2, 1e-5},
     {dlops_ffma_2_chains_16, dlops_ffma_2_chains_32, dlops_ffma_2_chains_64}},
    {{"ffma_4_chains", "FFMA x4", 4, "-", make_ffma, ref_ffma_chains<4>, dec4, 1e-5},
     {dlops_ffma_4_chains_16, dlops_ffma_4_chains_32, dlops_ffma_4_chains_64}},
    {{"ffma_8_chains", "FFMA x8 (.reuse)", 8, "-", make_ffma, ref_ffma_chains<8>, dec8, 1e-5},
     {dlops_ffma_8_chains_16, dlops_ffma_8_chains_32, dlops_ffma_8_chains_64}},
    {{"ffma_8_bank_conflict", "FFMA x8, 3 distinct regs", 8, "-", make_ffma, ref_ffma_conflict, dec8, 1e-5},
     {dlops_ffma_8_bank_conflict_16, dlops_ffma_8_bank_conflict_32, dlops_ffma_8_bank_conflict_64}},
    {{"ffma_fmul_mixed", "FFMA+FMUL", 2, "-", make_ffma, ref_ffma_fmul, dec1, 1e-5},
     {dlops_ffma_fmul_mixed_16, dlops_ffma_fmul_mixed_32, dlops_ffma_fmul_mixed_64}},
    // FMUL does not contract: the 64-instruction body's 512 validation multiplies round 512 times,
    // each within 2^-24 relative, 3.1e-5 at worst (the 16 and 32 bodies passed 1e-5).
    {{"fmul_dependent", "FMUL", 1, "-", make_fmul, ref_fmul, dec1, 4e-5},
     {dlops_fmul_dependent_16, dlops_fmul_dependent_32, dlops_fmul_dependent_64}},
    {{"hfma2_dependent", "HFMA2", 1, "-", make_hfma2, ref_hfma2, dec_h2, 2e-2},
     {dlops_hfma2_dependent_16, dlops_hfma2_dependent_32, dlops_hfma2_dependent_64}},
    {{"gemv_step", "HADD2.F32 -> FFMA", 1, "-", make_gemv, ref_gemv, dec1, 1e-4},
     {dlops_gemv_step_16, dlops_gemv_step_32, dlops_gemv_step_64}},
    {{"imad_dependent", "IMAD", 1, "-", make_int, ref_imad, dec_u32, 0},
     {dlops_imad_dependent_16, dlops_imad_dependent_32, dlops_imad_dependent_64}},
    {{"dp4a_dependent", "IDP.4A", 1, "-", make_int, ref_dp4a, dec_u32, 0},
     {dlops_dp4a_dependent_16, dlops_dp4a_dependent_32, dlops_dp4a_dependent_64}},
    {{"dp2a_dependent", "IDP.2A", 1, "-", make_int, ref_dp2a, dec_u32, 0},
     {dlops_dp2a_dependent_16, dlops_dp2a_dependent_32, dlops_dp2a_dependent_64}},
    {{"hmma_dependent", "HMMA.16816.F32", 1, "-", make_hmma, ref_hmma, dec4, 1e-3},
     {dlops_hmma_dependent_16, dlops_hmma_dependent_32, dlops_hmma_dependent_64}},
#else
    {{"dot2_pure", "v_dot2c_f32_f16", 1, "~1 (CDNA3 ISA Table 37)", make_dot2, ref_dot2, dec1, 1e-4},
     {dlops_dot2_pure_16, dlops_dot2_pure_32, dlops_dot2_pure_64}},
    {{"dot2_2_chains", "v_dot2c_f32_f16 x2", 2, "~1 (CDNA3 ISA Table 37)", make_dot2, ref_dot2_two, dec2, 1e-4},
     {dlops_dot2_2_chains_16, dlops_dot2_2_chains_32, dlops_dot2_2_chains_64}},
    {{"dot2_mul_mixed", "v_dot2 + v_mul_f32", 2, "~4 (CDNA3 ISA Table 37)", make_dot2, ref_dot2_mul, dec1, 1e-4},
     {dlops_dot2_mul_mixed_16, dlops_dot2_mul_mixed_32, dlops_dot2_mul_mixed_64}},
#endif
  };
}

struct Measured {
  double cpi = 0;        // cycles per instruction, from the 32- and 64-instruction bodies
  double cpi_16_32 = 0;  // the same from the 16- and 32-instruction bodies (a check: equal unless
                         // the loop's overhead hides differently behind the two bodies)
  double sm_mhz = 0;     // cycles over elapsed, longest body's fastest run
  double ns_per_inst = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Experiment ex("03-dlops", "Dependent-instruction chains timed with calibrated in-kernel clocks.");
  long long iters_flag = 0;
  std::string only;
  ex.flags().add_int("iters", &iters_flag, 0, 10000000, "loop iterations per timed run (default 100000; 10000 with --quick)");
  ex.flags().add_string("chain", &only, "run only the chains whose name contains this text");
  ex.start(argc, argv);

  const bool quick = ex.quick();
  // Under a sanitizer only the code paths matter: a short loop (racecheck instruments every access).
  const long iters = iters_flag ? iters_flag : sanitizing() ? 200 : (quick ? 10000 : 100000);
  const int runs = quick ? 3 : 5;
  const long val_iters = 8;  // validation length: 128 or 256 instructions per chain
  const std::vector<int> warps = quick ? std::vector<int>{1, 32} : std::vector<int>{1, 4, 8, 16, 32};
  std::vector<ChainEntry> all;
  for (auto& c : chains())
    if (only.empty() || std::string(c.host.name).find(only) != std::string::npos) all.push_back(c);
  if (all.empty()) {
    std::fprintf(stderr, "03-dlops: --chain '%s' matches no chain\n", only.c_str());
    return kExitUsage;
  }
  if (ex.list()) {
    std::printf("# 03-dlops would run %zu chains x %zu warp counts, %ld iterations, bodies of 16, 32 and 64, min of %d\n",
                all.size(), warps.size(), iters, runs);
    for (auto& c : all)
      for (int w : warps) std::printf("%s (%s): %d warps per block\n", c.host.name, c.host.what, w);
    return kExitOk;
  }
#if !defined(PORT_HIP)
  if (ex.prop().major < 8) FAIL("03-dlops needs sm_80 or newer (mma.sync m16n8k16, dp4a)");
#endif

  const ClockCalibration cal = calibrate_clocks(ex.stream(), quick);
  ex.provenance_json().set("clock_calibration", cal.to_json());
  std::fprintf(stderr, "03-dlops: constant clock %.6g Hz (spread %.2e), tick %.1f ns, SM clock %.0f MHz\n", cal.const_hz,
               cal.const_hz_spread, cal.tick_ns, cal.sm_clock_mhz);

  const int max_threads = warps.back() * W;
  uint32_t *d_in = nullptr, *d_out = nullptr, *d_table = nullptr;
  WarpTiming* d_tim = nullptr;
  CHECK_CUDA(cudaMalloc(&d_in, (size_t)max_threads * kInWords * 4));
  CHECK_CUDA(cudaMalloc(&d_out, (size_t)max_threads * kOutWords * 4));
  CHECK_CUDA(cudaMalloc(&d_table, kTableWords * 4));
  CHECK_CUDA(cudaMalloc(&d_tim, 64 * sizeof(WarpTiming)));
  std::vector<uint32_t> h_in((size_t)max_threads * kInWords), h_out((size_t)max_threads * kOutWords), h_table(kTableWords);
  std::vector<WarpTiming> h_tim(64);

  auto launch = [&](ChainKernel k, int nw, int it) {
    k<<<1, nw * W, 0, ex.stream()>>>(d_in, d_table, d_out, d_tim, it);
    CHECK_LAUNCH();
  };

  const int total = static_cast<int>(all.size() * warps.size());
  int done = 0;
  std::map<std::string, Measured> at1;  // one warp per block, per chain
  std::vector<double> mhz_all;
  std::map<std::string, std::vector<double>> cpi_by_warps;  // chain -> cycles/instr per warp count
  for (auto& c : all) {
    for (int nw : warps) {
      ex.progress(done++, total, "%s, %d warps", c.host.name, nw);
      const int threads = nw * W;
      // Correct before timed: fresh inputs, poisoned outputs, both body lengths, every warp.
      const uint64_t seed = fresh_seed();
      for (int t = 0; t < threads; ++t) c.host.make(seed, t, &h_in[(size_t)t * kInWords]);
      for (int i = 0; i < kTableWords; ++i) h_table[i] = hbits(range(seed, 1000000 + 2 * i, -1.f, 1.f)) |
                                                         (uint32_t)hbits(range(seed, 1000001 + 2 * i, -1.f, 1.f)) << 16;
      // On the experiment's stream: a pageable cudaMemcpy on the legacy stream would not order
      // itself before a launch on a non-blocking stream.
      CHECK_CUDA(cudaMemcpyAsync(d_in, h_in.data(), (size_t)threads * kInWords * 4, cudaMemcpyHostToDevice, ex.stream()));
      CHECK_CUDA(cudaMemcpyAsync(d_table, h_table.data(), kTableWords * 4, cudaMemcpyHostToDevice, ex.stream()));
      for (int b = 0; b < 3; ++b) {
        const int R = kBodies[b];
        poison_nan(d_out, (size_t)threads * kOutWords * 4, ex.stream());
        launch(c.k[b], nw, (int)val_iters);
        CHECK_CUDA(cudaMemcpyAsync(h_out.data(), d_out, (size_t)threads * kOutWords * 4, cudaMemcpyDeviceToHost, ex.stream()));
        CHECK_CUDA(cudaStreamSynchronize(ex.stream()));
        for (int w = 0; w < nw; ++w) {
          std::vector<double> ref, got;
          c.host.ref(&h_in[(size_t)w * W * kInWords], h_table.data(), val_iters, R, ref);
          c.host.decode(&h_out[(size_t)w * W * kOutWords], got);
          char what[128];
          std::snprintf(what, sizeof what, "%s body %d, %d warps, warp %d (seed %" PRIu64 ")", c.host.name, R, nw, w, seed);
          CompareResult cr = compare_rel_l2(ref, got, c.host.tol, what);
          if (!cr.ok) FAIL("validation failed: %s", what);
        }
      }
      // Timed: per body length, the block's time (first warp's start to last warp's end, one SM's
      // cycle counter) over `runs` runs, the minimum kept (noise only adds).
      double best[3] = {1e300, 1e300, 1e300}, best_ticks = 0;
      std::vector<double> spread64;
      for (int r = 0; r < runs; ++r)
        for (int b = 0; b < 3; ++b) {
          launch(c.k[b], nw, (int)iters);
          CHECK_CUDA(cudaMemcpyAsync(h_tim.data(), d_tim, nw * sizeof(WarpTiming), cudaMemcpyDeviceToHost, ex.stream()));
          CHECK_CUDA(cudaStreamSynchronize(ex.stream()));
          unsigned long long c0 = ~0ull, c1 = 0, g0 = ~0ull, g1 = 0;
          for (int w = 0; w < nw; ++w) {
            c0 = std::min(c0, h_tim[w].c0), c1 = std::max(c1, h_tim[w].c1);
            g0 = std::min(g0, h_tim[w].g0), g1 = std::max(g1, h_tim[w].g1);
          }
          const double cyc = (double)(c1 - c0), tk = (double)(g1 - g0);
          if (b == 2) spread64.push_back(cyc);
          if (cyc < best[b]) {
            best[b] = cyc;
            if (b == 2) best_ticks = tk;
          }
        }
      // napkin: 100,000 iterations x 32 extra instructions = 3.2 M instructions per warp in the difference
      Measured m;
      m.cpi = (best[2] - best[1]) / ((double)iters * (kBodies[2] - kBodies[1]));
      m.cpi_16_32 = (best[1] - best[0]) / ((double)iters * (kBodies[1] - kBodies[0]));
      m.sm_mhz = cal.mhz(best[2], best_ticks);
      m.ns_per_inst = m.cpi / m.sm_mhz * 1e3;
      mhz_all.push_back(m.sm_mhz);
      Summary s64 = summarize(spread64);
      if (nw == 1) at1[c.host.name] = m;
      Row row;
      row.add("chain", c.host.name)
          .add("instruction", c.host.what)
          .add("warps", nw)
          .add("cycles_per_instruction", m.cpi, 2, "cycles/instr")
          .add("cycles_per_instruction_16_32", m.cpi_16_32, 2, "from 16 -> 32")
          .add("cycles_per_iteration", m.cpi * c.host.insts_per_iter, 2, "cycles/iter")
          .add("scheduler_chain_instructions_per_cycle", std::max(1, nw / 4) * (double)kBodies[2] * (double)iters / best[2], 2,
               "chain instr/cycle/SMSP")
          .add("ns_per_instruction", m.ns_per_inst, 3, "ns/instr")
          .add("sm_clock_mhz", m.sm_mhz, 0, "SM MHz")
          .add("body64_sd_pct", 100.0 * s64.sd / s64.median, 2, "sd % (64)")
          .add("expected", c.host.expected)
          .extra("body16_min_cycles", best[0])
          .extra("body32_min_cycles", best[1])
          .extra("body64_min_cycles", best[2])
          .extra("iters", (long long)iters)
          .extra("runs", runs)
          .extra("seed", (unsigned long long)seed);
      cpi_by_warps[c.host.name].push_back(m.cpi);
      ex.add(nw == 1 ? "chains, one warp per block" : "the same chains at more warps per block (one block, one SM)", row);
    }
  }
  // The invariance table: is the floor per warp (flat) or per scheduler (rises with warps)?
  for (auto& c : all) {
    Row r;
    r.add("chain", c.host.name);
    const auto& v = cpi_by_warps[c.host.name];
    for (size_t i = 0; i < warps.size() && i < v.size(); ++i)
      r.add("cycles_per_instruction_w" + std::to_string(warps[i]), v[i], 2, std::to_string(warps[i]) + " warps");
    if (!v.empty()) r.add("max_over_min", *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end()), 3, "max/min");
    ex.add("occupancy invariance: cycles/instruction by warps per block", r);
  }
  ex.note("cycles/instr = (cycles of the 64-instruction body - cycles of the 32-instruction body) / (iters x 32), "
          "cycles = the block's (first warp's start to last warp's end on the SM's counter), minimum of " +
          std::to_string(runs) + " runs; " + std::to_string(iters) + " iterations; 'from 16 -> 32' is the same from the "
          "16- and 32-instruction bodies (the figure before 2026-12-04 evening)");
  ex.note("chain instr/cycle/SMSP = the chain's instructions one scheduler issued per cycle of the 64-instruction "
          "body's block time, loop overhead included in the time (so at most 1): warps per scheduler (warps/4, at least 1; "
          "warp w on scheduler w mod 4, as commonly reported, not documented) x 64 x iterations / cycles");
  ex.note("constant-rate clock calibrated against a host-timed interval: " + std::to_string(cal.const_hz) + " Hz, tick " +
          std::to_string(cal.tick_ns) + " ns");
  auto get = [&](const char* n) { return at1.count(n) ? Json(at1[n].cpi) : Json(); };
  ex.summary().set("ffma_dependent_cycles", get("ffma_dependent"));
  double floor = 0;
  for (const char* n : {"ffma_2_chains", "ffma_4_chains", "ffma_8_chains"})
    if (at1.count(n)) floor = floor == 0 ? at1[n].cpi : std::min(floor, at1[n].cpi);
  ex.summary().set("ffma_throughput_cycles", floor > 0 ? Json(floor) : Json());
  ex.summary().set("hfma2_dependent_cycles", get("hfma2_dependent"));
  // Dependent FFMA with 4 warps per scheduler (16 per block): three register sources, or c an
  // immediate (see FfmaDepImm).
  auto at_warps = [&](const char* n, int w) {
    const auto it = std::find(warps.begin(), warps.end(), w);
    const auto& v = cpi_by_warps[n];
    const size_t i = static_cast<size_t>(it - warps.begin());
    return it != warps.end() && i < v.size() ? Json(v[i]) : Json();
  };
  ex.summary().set("ffma_dependent_cycles_16_warps", at_warps("ffma_dependent", 16));
  ex.summary().set("ffma_dependent_imm_cycles_16_warps", at_warps("ffma_dependent_imm", 16));
  ex.summary().set("mixed_ffma_fmul_cycles_per_iteration",
                   at1.count("ffma_fmul_mixed") ? Json(at1["ffma_fmul_mixed"].cpi * 2) : Json());
  ex.summary().set("sm_clock_mhz", median_of(mhz_all));
  ex.summary().set("globaltimer_tick_ns", cal.tick_ns);
  ex.summary().set("chains", static_cast<int>(all.size()));
  CHECK_CUDA(cudaFree(d_in));
  CHECK_CUDA(cudaFree(d_out));
  CHECK_CUDA(cudaFree(d_table));
  CHECK_CUDA(cudaFree(d_tim));
  return ex.finish();
}
