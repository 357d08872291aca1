// 06-decode: one batch-1 decode step of a Llama-shaped decoder, against the bandwidth floor.
//
//   make 06-decode/decode && 06-decode/decode [--quick] [--model 1b|8b|all] [--steps N] [--json PATH]
//                                             [--prediction PATH] [--prefetch-kb N] [--ring-slots N]
//                                             [--timeout-ms N]
//   make 06-decode/decode.s      PTX (+ SASS where cuobjdump exists) of every kernel
//   make ARCH=gfx942 O=build/gfx942/ build/gfx942/06-decode/decode.s     AMDGCN (device code only)
//
// The step (FP16 weights from a fresh seed, FP32 residual stream and FP32 accumulation, batch 1,
// a KV cache of 1024 random positions; the new token's K/V are appended at position 1024):
//   embed -> per layer: RMSNorm, QKV GEMV, RoPE + K/V append, grouped-query attention over 1025
//   positions, O GEMV + residual, RMSNorm, gate/up GEMV + SiLU, down GEMV + residual
//   -> final RMSNorm, logits GEMV (tied embeddings, both models), argmax.
// Models: Llama-3.2-1B shapes (16 x 2048, 32/8 heads of 64, MLP 8192) and Llama-3.1-8B shapes
// (32 x 4096, 32/8 heads of 128, MLP 14336), vocabulary 128256. The 8B is given tied embeddings
// too: its real lm_head is a separate matrix of the same shape, so a step reads the same bytes.
//
// Engines (every one validated against the CPU reference before it is timed, and again after):
//   stream       one kernel per operation, 9 per layer + 4, on a stream               (op_*)
//   graph        the same launches captured in a CUDA graph, plain edges              (op_*)
//   graph_pdl    the same graph with programmatic dependent launch: every kernel calls
//                griddepcontrol.launch_dependents first, requests its weights (the first
//                chunk into registers, or its K/V into L2), then griddepcontrol.wait  (op_*_pdl)
//   persistent   one cooperative kernel, 5 grid barriers per layer (a monotonic counter:
//                red.release.gpu arrive, ld.acquire.gpu spin with a timeout). RMSNorm is
//                recomputed by every block from the residual, RoPE and the K/V append sit in
//                the QKV epilogue, the attention combine is done by the last block of each KV
//                head to finish, the argmax by the last block; before each barrier every warp
//                prefetches the start of its next-stage rows into L2       (decode_persistent_hd*)
//   persistent_ring  the same step and barriers, weights streamed by cp.async.bulk into a
//                ring of 4 KB slots per warp in shared memory, each warp's refills running ahead
//                of its computation across stages and barriers (sm_90)      (decode_ring_hd*)
// Attention everywhere: flash-decoding split, one item per (KV head, position chunk) with the
// 4 query heads of the group together, partial (max, sum, output) per item, then a combine.
// Where the time goes: the persistent kernel with one stage kind enabled at a time (and with
// none: the barriers alone), and the stream engine's launches of one kind at a time.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>
#include "../common/ceiling.h"
#include "../common/chain.h"
#include "../common/const_clock.h"
#include "../common/device_scope.h"

// ---------------------------------------------------------------------------------------------
// Device side: building blocks
// ---------------------------------------------------------------------------------------------
constexpr int kG = 4;                       // query heads per KV head (32 / 8 in both models)
constexpr int kMaxChunk = 128;              // attention positions per item, at most
constexpr int kMaxHd = 128;                 // head dimension, at most (the ring engine's RoPE copy)
constexpr int kLanes = PORT_WARP_SIZE;
constexpr int kVecPerLane = 256 / kLanes;   // 16-byte weight vectors per lane per row per chunk
constexpr int kKStep = kVecPerLane * kLanes * 8;  // halves of a row per chunk: 2048 on both widths
constexpr int kPersistentThreads = 512;
constexpr int kGemvThreads = 256;
constexpr int kAttnThreads = 256;
constexpr int kNormThreads = 1024;
constexpr int kBarriersPerLayer = 5;

// Stage kinds of the persistent kernel (a mask selects which run; the barriers always do).
enum StageBits { kStQkv = 1, kStAttn = 2, kStO = 4, kStGateUp = 8, kStDown = 16, kStLogits = 32, kStAll = 63 };

struct LayerLayout {  // offsets in halves inside one layer's block of weights
  size_t attn_gain, qkv, o, mlp_gain, gate_up, down, size;
};

struct SpinError {  // the first barrier wait that timed out
  unsigned kind;
  int block, layer, where;
  unsigned long long want, seen;
};

// A GEMV stage kind of the ring engine (QKV, -, O, gate/up, down, logits), set by the host for
// each launch (Persistent::launch): layer l's matrix at W + l layer_stride (W null: no GEMV, or
// masked off), K columns (the output length for the fused down), `pairs` split over the blocks
// with pair_range at stage st + rot, S pieces a pair, tile > 0 for the fused down (RingStage).
struct RingKind {
  const __half* W;
  size_t layer_stride;
  int K, pairs, S, tile, rot;
};

// Everything a kernel of any engine needs, by value (a few hundred bytes of parameters).
struct DecodeArgs {
  int layers, hidden, q_dim, kv_dim, hd, mlp, vocab;
  int cap, pos, chunks, token;  // cache rows per head, the new position, attention chunks per head
  float eps;
  LayerLayout off;
  const __half* layer_w;     // layers x off.size
  const __half* emb;         // vocab x hidden (the logits matrix too)
  const __half* final_gain;  // hidden
  const __half* down_t;      // layers x the down projection, tiled for the ring's fused MLP (down_tile_index)
  __half* kc;                // layers x kv_heads x cap x hd
  __half* vc;
  const float* rope;         // (cos, sin) per dimension pair at `pos`
  float *resid, *xn, *qkv, *q, *attn, *h, *logits, *part_o, *part_ml;
  int* token_out;
  float* best_out;
  int2* block_best;
  unsigned long long *bar, *att_count, *arg_count;
  SpinError* err;
  unsigned* abort_flag;
  unsigned long long gen0, timeout_ticks;  // barriers before this launch; spin timeout
  int stages;
  unsigned prefetch_bytes;  // per block, split over its warps
  int ring_slots;           // the ring engine's slots per warp (one 4 KB piece each)
  int ring_mode;            // the ring engine's RingMode bits
  RingKind ring_kinds[kBarriersPerLayer + 1];  // the ring engine's stage kinds (ring_stage)
  // The timeline (null but in the one step that records it): per block, the constant-rate clock
  // at each barrier's arrival and departure (tl_stride, below).
  unsigned long long* tl;
  // Attention layers run by earlier persistent launches (each adds chunks to every KV head's
  // att_count): the group-O mode's blocks wait for att_count to reach (att0 + l + 1) chunks.
  unsigned long long att0;
  // QKV layers counted by earlier head-count launches (kRingHeadCount: each adds (kG + 2) hd rows
  // to every KV head's qkv count, att_count + kv_heads): its items wait for (qkv0 + l + 1) of them.
  unsigned long long qkv0;
};

// The head-count mode's accounting (hc_arrive): how many of the QKV output rows [r0, r1) KV head g's
// attention reads (its kG query heads' rows, its K row and its V row; q, then k, then v, hd rows a
// head). Every head's rows over all blocks' ranges must add up to (kG + 2) hd, the count an item
// waits for: the host checks that sum for every layer's split before the mode is offered.
__host__ __device__ __forceinline__ int span_overlap(int r0, int r1, int lo, int hi) { return max(0, min(r1, hi) - max(r0, lo)); }
__host__ __device__ __forceinline__ int qkv_rows_of_head(const DecodeArgs& a, int r0, int r1, int g) {
  const int hd = a.hd;
  return span_overlap(r0, r1, g * kG * hd, (g + 1) * kG * hd) +
         span_overlap(r0, r1, a.q_dim + g * hd, a.q_dim + (g + 1) * hd) +
         span_overlap(r0, r1, a.q_dim + a.kv_dim + g * hd, a.q_dim + a.kv_dim + (g + 1) * hd);
}

// Where a block's stamps sit in the timeline: [0] its SM, [1] kernel start, [2k] arrival at
// grid barrier k and [2k + 1] departure from it (k = 1 .. B, B = barriers per launch), [2B + 2]
// the end, then per layer l: its attention item done and counted, at [2B + 3 + 2l], or at
// [2B + 4 + 2l] when that made it the KV head's combining block (whose combine then ends at its
// arrival at the next barrier); then per stage k = 1 .. B + 1 (B + 1: the logits) with a GEMV,
// at tl_gemv(L, k): its prologue done (x in shared memory), and at tl_gemv(L, k) + 1 its last
// piece summed by every warp (the epilogue follows); then per layer l, inside the block's
// attention item, at tl_attn(L, l) + j: j = 0 q in shared memory, 1 scores and softmax done,
// 2 the partial output and (max, sum) stored (the count follows). 0: no stamp.
// DECODE_ATTN_FINE=1 (an experiment's build, never the product's: make XDEFS=-DDECODE_ATTN_FINE=1
// O=build/fine/ build/fine/06-decode/decode) puts four more stamps inside the item (thread 0:
// its warp's score pass done, the scores synced; its warp's P.V pass done, its shuffles done),
// so j = 0 q, 1 score pass, 2 scores synced, 3 softmax, 4 P.V pass, 5 P.V shuffles, 6 stored.
#ifndef DECODE_ATTN_FINE
#define DECODE_ATTN_FINE 0
#endif
__host__ __device__ constexpr int tl_gemv(int layers, int k) {
  return 2 * kBarriersPerLayer * layers + 3 + 2 * layers + 2 * (k - 1);
}
constexpr int kAttnFineStamps = 7;
constexpr int kAttnStamps = DECODE_ATTN_FINE ? kAttnFineStamps : 3;
constexpr int kAttnSoftmaxStamp = DECODE_ATTN_FINE ? 3 : 1, kAttnStoredStamp = DECODE_ATTN_FINE ? 6 : 2;
__host__ __device__ constexpr int tl_attn(int layers, int l) {
  return tl_gemv(layers, kBarriersPerLayer * layers + 2) + kAttnStamps * l;
}
__host__ __device__ constexpr int tl_stride(int layers) { return tl_attn(layers, layers); }
constexpr int kMaxSmid = 256;  // SM ids the timeline analysis expects (below this)

// Pairs [p0, p0 + np) of a stage's `pairs` for block b of nb at stage st: an even split whose
// ranges rotate with the stage, so no block holds the larger share every time. Host and device
// alike (the host's timeline analysis counts each block's bytes with it).
// 32-bit arithmetic (pairs x blocks stays far below 2^32: 64128 x 132 at most here): the 64-bit
// division this had was inlined at every place the ring's issuer starts a stage, and made up a
// fifth of the ring kernel's code.
__host__ __device__ inline void pair_range(int pairs, int st, int b, int nb, int* p0, int* np) {
  const unsigned rb = static_cast<unsigned>(b + st * 41) % static_cast<unsigned>(nb), n = static_cast<unsigned>(nb);
  *p0 = static_cast<int>(rb * static_cast<unsigned>(pairs) / n);
  *np = static_cast<int>((rb + 1) * static_cast<unsigned>(pairs) / n) - *p0;
}

__device__ __forceinline__ int sm_id() {
#if defined(PORT_HIP)
  return 0;
#else
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return static_cast<int>(s);
#endif
}
// Thread 0 of a block: one timeline stamp (nothing unless the timeline is on).
__device__ __forceinline__ void tl_stamp(const DecodeArgs& a, int i) {
  if (a.tl != nullptr) a.tl[static_cast<size_t>(blockIdx.x) * tl_stride(a.layers) + i] = port_const_clock();
}

__device__ __forceinline__ vec4u zero_vec() {
  vec4u v;
  v.x = v.y = v.z = v.w = 0u;
  return v;
}

// Data another block wrote in this kernel (activations, the appended K/V): from L2, never
// from a possibly stale L1 line or the read-only path. On gfx942 the acquire that ordered the
// read has invalidated the L1 already, so a plain load is right.
__device__ __forceinline__ float act_load(const float* p) {
#if defined(PORT_HIP)
  return *p;
#else
  return __ldcg(p);
#endif
}
__device__ __forceinline__ float4 act_load4(const float* p) {
#if defined(PORT_HIP)
  return *reinterpret_cast<const float4*>(p);
#else
  return __ldcg(reinterpret_cast<const float4*>(p));
#endif
}
__device__ __forceinline__ vec4u cache_load(const __half* p) {
#if defined(PORT_HIP)
  return *reinterpret_cast<const vec4u*>(p);
#else
  return __ldcg(reinterpret_cast<const uint4*>(p));
#endif
}

// Asks L2 for [p, p + bytes) (16-byte aligned, a multiple of 16): one bulk prefetch on sm_90,
// one line at a time on sm_80; nothing on gfx942 (no L2 prefetch instruction).
__device__ __forceinline__ void l2_prefetch(const void* p, unsigned bytes) {
#if !defined(PORT_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#elif !defined(PORT_HIP) && defined(__CUDA_ARCH__)
  for (unsigned off = 0; off < bytes; off += 128)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(static_cast<const char*>(p) + off));
#else
  (void)p;
  (void)bytes;
#endif
}
// The lanes of a warp share a range: 1 KB pieces, lane-strided.
__device__ __forceinline__ void warp_prefetch(const void* base, size_t bytes) {
  const int lane = threadIdx.x % kLanes;
  for (size_t off = static_cast<size_t>(lane) * 1024; off < bytes; off += static_cast<size_t>(kLanes) * 1024)
    l2_prefetch(static_cast<const char*>(base) + off, static_cast<unsigned>(bytes - off < 1024 ? bytes - off : 1024));
}

__device__ __forceinline__ float2 halves(uint32_t w) {
#if defined(PORT_HIP)
  typedef _Float16 h2 __attribute__((ext_vector_type(2)));
  const h2 h = __builtin_bit_cast(h2, w);
  return make_float2(static_cast<float>(h.x), static_cast<float>(h.y));
#else
  __half2 h;
  memcpy(&h, &w, sizeof h);
  return __half22float2(h);
#endif
}
// Eight FP16 weights against eight FP32 activations (16-byte aligned), into two chains.
__device__ __forceinline__ void fma8(const vec4u& w, const float* x, float& a, float& b) {
  const float4 x0 = *reinterpret_cast<const float4*>(x);
  const float4 x1 = *reinterpret_cast<const float4*>(x + 4);
  float2 f = halves(w.x);
  a = fmaf(f.x, x0.x, a);
  a = fmaf(f.y, x0.y, a);
  f = halves(w.y);
  b = fmaf(f.x, x0.z, b);
  b = fmaf(f.y, x0.w, b);
  f = halves(w.z);
  a = fmaf(f.x, x1.x, a);
  a = fmaf(f.y, x1.y, a);
  f = halves(w.w);
  b = fmaf(f.x, x1.z, b);
  b = fmaf(f.y, x1.w, b);
}

// Butterfly sums: over aligned groups of WIDTH lanes (every lane of the group gets the same
// bits), and across the groups of width G (lanes equal modulo G). Wave64-correct: the widths
// come from PORT_WARP_SIZE, never a literal.
template <int WIDTH>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = WIDTH / 2; o > 0; o >>= 1) v += __shfl_xor_sync(PORT_FULL_MASK, v, o);
  return v;
}
template <int G>
__device__ __forceinline__ float across_groups_sum(float v) {
#pragma unroll
  for (int o = G; o < kLanes; o <<= 1) v += __shfl_xor_sync(PORT_FULL_MASK, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = kLanes / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(PORT_FULL_MASK, v, o));
  return v;
}
// Argmax order: larger value, then the lower index (so every engine breaks ties alike).
__device__ __forceinline__ void keep_better(float& v, int& i, float v2, int i2) {
  if (v2 > v || (v2 == v && i2 < i)) {
    v = v2;
    i = i2;
  }
}
__device__ __forceinline__ void warp_argmax(float& v, int& i) {
#pragma unroll
  for (int o = kLanes / 2; o > 0; o >>= 1) {
    const float v2 = __shfl_xor_sync(PORT_FULL_MASK, v, o);
    const int i2 = __shfl_xor_sync(PORT_FULL_MASK, i, o);
    keep_better(v, i, v2, i2);
  }
}
__device__ __forceinline__ float silu(float g) { return g / (1.0f + expf(-g)); }

// ---------------------------------------------------------------------------------------------
// The GEMV: rows in pairs, a warp per pair, 16-byte loads, a chunk's loads all in flight.
// ---------------------------------------------------------------------------------------------
// Rows come in pairs because two epilogues need them together: RoPE rotates (2j, 2j+1), and the
// gate/up matrix is stored interleaved (gate_i, up_i) so SiLU(gate) * up needs no exchange.
// A warp owns a pair; lane l reads vectors l, l + lanes, ... of both rows, so one load
// instruction of the warp is 512 (wave64: 1024) contiguous bytes. One chunk = kVecPerLane
// vectors per row per lane (2 x 8 = 16 loads in flight per lane on sm_90, 2 x 4 on gfx942),
// all issued before the first FMA. x sits in shared memory as FP32 (staged by the prologue).
// Host contract: K % kKStep == 0 (2048, 4096, 8192, 14336 all are), rows even.
__device__ __forceinline__ void issue_chunk(const __half* W, int K, int pair, int ch, int lane,
                                            vec4u (&w)[2][kVecPerLane]) {
  const __half* r0 = W + static_cast<size_t>(2 * pair) * K + static_cast<size_t>(ch) * kKStep + 8 * lane;
#pragma unroll
  for (int c = 0; c < kVecPerLane; ++c) {
    w[0][c] = chain_weight_load(r0 + c * 8 * kLanes);
    w[1][c] = chain_weight_load(r0 + K + c * 8 * kLanes);
  }
}
__device__ __forceinline__ void use_chunk(const vec4u (&w)[2][kVecPerLane], const float* xs, int ch, int lane,
                                          float (&acc)[2][2]) {
  const float* x = xs + ch * kKStep + 8 * lane;
#pragma unroll
  for (int c = 0; c < kVecPerLane; ++c) {
    fma8(w[0][c], x + c * 8 * kLanes, acc[0][0], acc[0][1]);
    fma8(w[1][c], x + c * 8 * kLanes, acc[1][0], acc[1][1]);
  }
}
// Pairs first, first + stride, ... of W[rows, K]. The first chunk of the first pair is requested
// before prologue() runs (the prologue stages x, and in the PDL kernels waits for the previous
// grid first), so the weights are in flight while x is still being produced or staged.
// prologue: called by every thread of the block, ends with a block barrier.
// epilogue(row0, y[row0], y[row0 + 1]): every lane holds the same sums.
template <class Prologue, class Epilogue>
__device__ __forceinline__ void gemv_pairs(const __half* __restrict__ W, int rows, int K, const float* xs, int first,
                                           int stride, Prologue&& prologue, Epilogue&& epilogue) {
  const int lane = threadIdx.x % kLanes;
  const int pairs = rows / 2, chunks = K / kKStep;
  vec4u w[2][kVecPerLane];
  if (first < pairs) issue_chunk(W, K, first, 0, lane, w);
  prologue();
  bool loaded = true;
  for (int p = first; p < pairs; p += stride) {
    float acc[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
#pragma unroll 1
    for (int ch = 0; ch < chunks; ++ch) {
      if (!loaded) issue_chunk(W, K, p, ch, lane, w);
      loaded = false;
      use_chunk(w, xs, ch, lane, acc);
    }
    epilogue(2 * p, group_sum<kLanes>(acc[0][0] + acc[0][1]), group_sum<kLanes>(acc[1][0] + acc[1][1]));
  }
}

// x into shared memory (n floats, n % 4 == 0), then a block barrier.
__device__ __forceinline__ void stage_copy(float* xs, const float* src, int n) {
  for (int i = 4 * threadIdx.x; i < n; i += 4 * blockDim.x) *reinterpret_cast<float4*>(xs + i) = act_load4(src + i);
  __syncthreads();
}
// resid[r], resid[r + 1] += s0, s1 in a persistent kernel's epilogue: one reduction each at L2
// (the return value unused: RED, no round trip), where a load, add and store waited for the
// load. Exactly one thread adds to an element per stage, so the sum is the same single FP32
// addition either way; the barrier's release orders it before the next stage's reads.
__device__ __forceinline__ void resid_add_pair(float* resid, int r, float s0, float s1) {
  atomicAdd(resid + r, s0);
  atomicAdd(resid + r + 1, s1);
}
// A thread's gain values for stage_rmsnorm (4 at 4 t + 4 j blockDim.x, j < kGainRegs), loaded
// while the block waits at the grid barrier before the norm: the gain is a weight, so nothing
// orders it after the barrier, and its first read of a step comes from DRAM, where the residual
// it is loaded with is an L2 hit. Elements beyond kGainRegs per thread load in the norm.
constexpr int kGainRegs = 2;
struct GainRegs {
  uint2 g[kGainRegs];
  bool have = false;
};
__device__ __forceinline__ void gain_issue(GainRegs& r, const __half* gain, int n) {
#pragma unroll
  for (int j = 0; j < kGainRegs; ++j) {
    const int i = 4 * threadIdx.x + 4 * j * blockDim.x;
    if (i < n) r.g[j] = *reinterpret_cast<const uint2*>(gain + i);
  }
  r.have = true;
}
// xs = gain * v / rms(v), v the residual (FP32) or, when emb_row is given, that FP16 row.
// Every block that needs the normalised vector computes it: no barrier for a norm stage.
// pre: the gain already in registers (gain_issue with the same gain and n), or null.
__device__ __forceinline__ void stage_rmsnorm(float* xs, float* red, const float* resid, const __half* emb_row,
                                              const __half* gain, int n, float eps, const GainRegs* pre = nullptr) {
  // The gain is loaded with v (not after the block reduction: one L2 round trip less) and
  // applied at once; the reduction's 1/rms scales the products afterwards.
  float ss = 0.f;
  for (int i = 4 * threadIdx.x, j = 0; i < n; i += 4 * blockDim.x, ++j) {
    float4 v;
    if (emb_row) {
      const uint2 raw = *reinterpret_cast<const uint2*>(emb_row + i);
      const float2 a = halves(raw.x), b = halves(raw.y);
      v = make_float4(a.x, a.y, b.x, b.y);
    } else {
      v = act_load4(resid + i);
    }
    uint2 g;
    if (pre != nullptr && pre->have && j < kGainRegs) {  // selects, not pre->g[j]: a runtime index would put g in local memory
      g = pre->g[0];
#pragma unroll
      for (int q = 1; q < kGainRegs; ++q)
        if (j == q) g = pre->g[q];
    } else {
      g = *reinterpret_cast<const uint2*>(gain + i);
    }
    const float2 g0 = halves(g.x), g1 = halves(g.y);
    ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    *reinterpret_cast<float4*>(xs + i) = make_float4(v.x * g0.x, v.y * g0.y, v.z * g1.x, v.w * g1.y);
  }
  ss = group_sum<kLanes>(ss);
  const int warp = threadIdx.x / kLanes, nw = blockDim.x / kLanes;
  if (threadIdx.x % kLanes == 0) red[warp] = ss;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < nw; ++w) total += red[w];
  const float inv = rsqrtf(total / n + eps);
  for (int i = 4 * threadIdx.x; i < n; i += 4 * blockDim.x) {  // the same elements this thread wrote
    float4 v = *reinterpret_cast<float4*>(xs + i);
    v.x *= inv;
    v.y *= inv;
    v.z *= inv;
    v.w *= inv;
    *reinterpret_cast<float4*>(xs + i) = v;
  }
  __syncthreads();  // xs complete; red free for the next use
}

// ---------------------------------------------------------------------------------------------
// RoPE and the K/V append (rows of the fused QKV output, in pairs)
// ---------------------------------------------------------------------------------------------
// Pairs (2j, 2j+1) of a head rotate by pos * theta^(-2j/hd) (the table holds cos, sin per j).
// q rows go to q (FP32); k rows, rotated, and v rows go into this layer's cache at `pos`.
// rope: a.rope, or the ring engine's copy of it in shared memory.
__device__ __forceinline__ void rope_append_pair(const DecodeArgs& a, const float* rope, int layer, int r, float x0, float x1) {
  const int hd = a.hd;
  const size_t kv_heads = a.kv_dim / hd;
  const size_t layer_base = static_cast<size_t>(layer) * kv_heads * a.cap * hd;
  if (r < a.q_dim + a.kv_dim) {
    const int d = r % hd;  // q_dim is a multiple of hd: the k rows start at dimension 0 too
    const float c = rope[d], s = rope[d + 1];
    const float y0 = x0 * c - x1 * s, y1 = x0 * s + x1 * c;
    if (r < a.q_dim) {
      *reinterpret_cast<float2*>(a.q + r) = make_float2(y0, y1);
    } else {
      const int kr = r - a.q_dim;
      *reinterpret_cast<__half2*>(a.kc + layer_base + (static_cast<size_t>(kr / hd) * a.cap + a.pos) * hd + d) =
          __floats2half2_rn(y0, y1);
    }
  } else {
    const int vr = r - a.q_dim - a.kv_dim;
    *reinterpret_cast<__half2*>(a.vc + layer_base + (static_cast<size_t>(vr / hd) * a.cap + a.pos) * hd + vr % hd) =
        __floats2half2_rn(x0, x1);
  }
}

// ---------------------------------------------------------------------------------------------
// Attention: flash-decoding items and their combine
// ---------------------------------------------------------------------------------------------
// Item = (KV head, chunk of positions). The 4 query heads of the group share every K and V
// load. Scores: HD/8 lanes cover one position's K row with 16-byte loads, so a warp scores
// lanes/(HD/8) positions per pass for all 4 heads at once. Softmax per head over the chunk (one
// warp per head). Output: the same lane grouping over V, 4 heads x 8 dimensions per lane,
// summed across the warp's position groups with shuffles and across warps in shared memory.
// Writes the unnormalised partial output and (max, sum) per head.
__host__ __device__ constexpr int attn_smem_floats(int hd, int threads) {
  return kG * hd + kG * kMaxChunk + 2 * kG + (threads / PORT_WARP_SIZE) * kG * hd;
}

// An attention item: KV head kvh, positions [p0, p0 + n) of the T = pos + 1 attended, and the
// offset of its first K (or V) row in this layer's cache.
struct ItemSpan {
  int kvh, p0, n;
  size_t base;
};
template <int HD>
__device__ __forceinline__ ItemSpan item_span(const DecodeArgs& a, int layer, int item) {
  const int T = a.pos + 1, len = (T + a.chunks - 1) / a.chunks;
  ItemSpan s;
  s.kvh = item / a.chunks;
  s.p0 = (item % a.chunks) * len;
  s.n = max(0, min(T, s.p0 + len) - s.p0);
  s.base = ((static_cast<size_t>(layer) * (a.kv_dim / HD) + s.kvh) * a.cap + s.p0) * HD;
  return s;
}

// A thread's K and V vectors for the first kKvPasses<HD> passes over an item's positions
// (pass p: position warp * PPW + lane / LG + p * warps * PPW), all requested together, with
// nothing consuming them until the scores: one memory latency for the item, not two per pass
// (a pass loading K, then V after the softmax). `have` bit p: pass p is in registers (or out
// of range: zeros). kv_issue(before = true) runs before the barrier that precedes attention
// (the ring engine's K/V preload): positions below the new one are never written in a step, so
// they can be in flight while the grid waits; the new position's row waits for the barrier.
// Passes beyond kKvPasses (more positions per item than warps x PPW x kKvPasses: not with the
// H200's chunking) load one pass at a time, as before.
template <int HD>
constexpr int kKvPasses = HD <= 64 ? 2 : 3;
template <int HD>
struct KvRegs {
  vec4u k[kKvPasses<HD>], v[kKvPasses<HD>];
  unsigned have;
};
template <int HD>
__device__ __forceinline__ KvRegs<HD> kv_none() {
  KvRegs<HD> r;
#pragma unroll
  for (int p = 0; p < kKvPasses<HD>; ++p) r.k[p] = r.v[p] = zero_vec();
  r.have = 0;
  return r;
}
template <int HD>
__device__ __forceinline__ void kv_issue(const DecodeArgs& a, int layer, int item, KvRegs<HD>& r, bool before) {
  constexpr int LG = HD / 8, PPW = kLanes / LG;
  const int nw = blockDim.x / kLanes, warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const ItemSpan it = item_span<HD>(a, layer, item);
  const int p0 = it.p0, n = it.n;
  const size_t head = it.base + 8 * (lane % LG);
#pragma unroll
  for (int p = 0; p < kKvPasses<HD>; ++p) {
    const int i = warp * PPW + lane / LG + p * nw * PPW;
    if (r.have >> p & 1u) continue;
    if (i >= n) {
      r.have |= 1u << p;  // out of range: stays zero
      continue;
    }
    if (before && p0 + i >= a.pos) continue;  // the new position: after the barrier
    r.k[p] = cache_load(a.kc + head + static_cast<size_t>(i) * HD);
    r.v[p] = cache_load(a.vc + head + static_cast<size_t>(i) * HD);
    r.have |= 1u << p;
  }
}

// fn(position, its K or V vector) for each of a thread's passes over an item (pass p covers
// first + p * step + slot): the first kKvPasses from registers, any further pass loaded then
// (src: the item's K or V rows at this lane's dimensions).
template <int HD, class Fn>
__device__ __forceinline__ void each_pass(const vec4u (&regs)[kKvPasses<HD>], const __half* src, int first, int step,
                                          int n, int slot, Fn&& fn) {
#pragma unroll
  for (int p = 0; p < kKvPasses<HD>; ++p)
    if (first + p * step < n) fn(first + p * step + slot, regs[p]);
  for (int base = first + kKvPasses<HD> * step; base < n; base += step) {
    const int i = base + slot;
    fn(i, i < n ? cache_load(src + static_cast<size_t>(i) * HD) : zero_vec());
  }
}

// tl_at: the timeline index of its first sub-phase stamp (tl_attn), or -1 for none.
template <int HD>
__device__ __forceinline__ void attention_item(const DecodeArgs& a, int layer, int item, float* sm,
                                               KvRegs<HD> kv = kv_none<HD>(), int tl_at = -1) {
  constexpr int LG = HD / 8;          // lanes per position
  constexpr int PPW = kLanes / LG;    // positions per warp per pass
  const int nw = blockDim.x / kLanes, warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const ItemSpan it = item_span<HD>(a, layer, item);
  const int kvh = it.kvh, n = it.n;
  float* qs = sm;                    // [kG][HD], pre-scaled by 1/sqrt(HD)
  float* ps = qs + kG * HD;          // [kG][kMaxChunk]: scores, then probabilities
  float* ml = ps + kG * kMaxChunk;   // [kG][2]: max, sum
  float* red = ml + 2 * kG;          // [nw][kG][HD]
  kv_issue<HD>(a, layer, item, kv, false);  // whatever is not in registers yet, all at once
  const float scale = rsqrtf(static_cast<float>(HD));
  for (int i = threadIdx.x; i < kG * HD; i += blockDim.x) qs[i] = act_load(a.q + kvh * kG * HD + i) * scale;
  __syncthreads();
  if (tl_at >= 0 && threadIdx.x == 0) tl_stamp(a, tl_at);
  const int sub = lane % LG, slot = lane / LG;
  const __half* kp = a.kc + it.base + 8 * sub;
  const __half* vp = a.vc + it.base + 8 * sub;
  // Warp-uniform trip counts: the shuffles need every lane, so out-of-range slots use zeros.
  auto score = [&](int i, const vec4u& k) {
    float d[kG];
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      float s0 = 0.f, s1 = 0.f;
      fma8(k, qs + g * HD + 8 * sub, s0, s1);
      d[g] = group_sum<LG>(s0 + s1);
    }
    if (i < n && sub == 0)
#pragma unroll
      for (int g = 0; g < kG; ++g) ps[g * kMaxChunk + i] = d[g];
  };
  each_pass<HD>(kv.k, kp, warp * PPW, nw * PPW, n, slot, score);
  if (DECODE_ATTN_FINE && tl_at >= 0 && threadIdx.x == 0) tl_stamp(a, tl_at + 1);
  __syncthreads();
  if (DECODE_ATTN_FINE && tl_at >= 0 && threadIdx.x == 0) tl_stamp(a, tl_at + 2);
  if (warp < kG) {
    float m = -INFINITY;
    for (int i = lane; i < n; i += kLanes) m = fmaxf(m, ps[warp * kMaxChunk + i]);
    m = warp_max(m);
    float l = 0.f;
    for (int i = lane; i < n; i += kLanes) {
      const float e = expf(ps[warp * kMaxChunk + i] - m);
      ps[warp * kMaxChunk + i] = e;
      l += e;
    }
    l = group_sum<kLanes>(l);
    if (lane == 0) {
      ml[2 * warp] = m;
      ml[2 * warp + 1] = l;
    }
  }
  __syncthreads();
  if (tl_at >= 0 && threadIdx.x == 0) tl_stamp(a, tl_at + kAttnSoftmaxStamp);
  float acc[kG][8];
#pragma unroll
  for (int g = 0; g < kG; ++g)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[g][j] = 0.f;
  auto accumulate = [&](int i, const vec4u& v) {
    const float2 v0 = halves(v.x), v1 = halves(v.y), v2 = halves(v.z), v3 = halves(v.w);
    const float vals[8] = {v0.x, v0.y, v1.x, v1.y, v2.x, v2.y, v3.x, v3.y};
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      const float pr = i < n ? ps[g * kMaxChunk + i] : 0.f;
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[g][j] = fmaf(pr, vals[j], acc[g][j]);
    }
  };
  each_pass<HD>(kv.v, vp, warp * PPW, nw * PPW, n, slot, accumulate);
  if (DECODE_ATTN_FINE && tl_at >= 0 && threadIdx.x == 0) tl_stamp(a, tl_at + 4);
#pragma unroll
  for (int g = 0; g < kG; ++g)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[g][j] = across_groups_sum<LG>(acc[g][j]);
  if (DECODE_ATTN_FINE && tl_at >= 0 && threadIdx.x == 0) tl_stamp(a, tl_at + 5);
  if (slot == 0)
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
      for (int j = 0; j < 8; ++j) red[(warp * kG + g) * HD + 8 * sub + j] = acc[g][j];
  __syncthreads();
  float* po = a.part_o + static_cast<size_t>(item) * kG * HD;
  for (int t = threadIdx.x; t < kG * HD; t += blockDim.x) {
    float s = 0.f;
    for (int w = 0; w < nw; ++w) s += red[w * kG * HD + t];
    po[t] = s;
  }
  if (threadIdx.x < 2 * kG) a.part_ml[static_cast<size_t>(item) * 2 * kG + threadIdx.x] = ml[threadIdx.x];
  if (tl_at >= 0 && threadIdx.x == 0) tl_stamp(a, tl_at + kAttnStoredStamp);
  __syncthreads();  // shared memory free for whatever comes next
}

// out[head][d] for the 4 heads of KV head kvh: the chunks' partials rescaled to a common max.
// Up to kCombineChunks chunks (16 on the H200), a thread per output, every load is issued at
// once: each thread's partials into registers and the chunks' (max, sum) pairs into shared
// memory: one L2 latency, where a runtime-bounded loop waits for its loads a few at a time.
constexpr int kCombineChunks = 16;
template <int HD>
__device__ __forceinline__ void attention_combine(const DecodeArgs& a, int kvh) {
  __shared__ float s_ml[kCombineChunks * 2 * kG];
  const size_t item0 = static_cast<size_t>(kvh) * a.chunks;
  const int t = threadIdx.x;
  if (a.chunks <= kCombineChunks && static_cast<int>(blockDim.x) >= kG * HD) {  // block-uniform
    const bool mine = t < kG * HD;
    float o[kCombineChunks];
#pragma unroll
    for (int c = 0; c < kCombineChunks; ++c)
      o[c] = mine && c < a.chunks ? act_load(a.part_o + (item0 + c) * kG * HD + t) : 0.f;
    for (int i = t; i < a.chunks * 2 * kG; i += blockDim.x) s_ml[i] = act_load(a.part_ml + item0 * 2 * kG + i);
    __syncthreads();
    if (mine) {
      const int g = t / HD;
      float mx = -INFINITY;
#pragma unroll
      for (int c = 0; c < kCombineChunks; ++c)
        if (c < a.chunks) mx = fmaxf(mx, s_ml[c * 2 * kG + 2 * g]);
      float num = 0.f, den = 0.f;
#pragma unroll
      for (int c = 0; c < kCombineChunks; ++c)
        if (c < a.chunks) {
          const float w = expf(s_ml[c * 2 * kG + 2 * g] - mx);
          num += w * o[c];
          den += w * s_ml[c * 2 * kG + 2 * g + 1];
        }
      a.attn[kvh * kG * HD + t] = num / den;
    }
    __syncthreads();  // s_ml is free again
    return;
  }
  for (int u = t; u < kG * HD; u += blockDim.x) {
    const int g = u / HD;
    float mx = -INFINITY;
    for (int c = 0; c < a.chunks; ++c) mx = fmaxf(mx, act_load(a.part_ml + (item0 + c) * 2 * kG + 2 * g));
    float num = 0.f, den = 0.f;
    for (int c = 0; c < a.chunks; ++c) {
      const float* mlc = a.part_ml + (item0 + c) * 2 * kG + 2 * g;
      const float w = expf(act_load(mlc) - mx);
      num += w * act_load(a.part_o + (item0 + c) * kG * HD + u);
      den += w * act_load(mlc + 1);
    }
    a.attn[kvh * kG * HD + u] = num / den;
  }
}

// The K and V rows of an item, into L2 (read-only hint; L2 is coherent, so a prefetch made
// before the new position is written can never serve a stale value).
template <int HD>
__device__ __forceinline__ void prefetch_item(const DecodeArgs& a, int layer, int item) {
  const ItemSpan it = item_span<HD>(a, layer, item);
  const int warp = threadIdx.x / kLanes;
  if (warp == 0) warp_prefetch(a.kc + it.base, static_cast<size_t>(it.n) * HD * 2);
  if (warp == 1) warp_prefetch(a.vc + it.base, static_cast<size_t>(it.n) * HD * 2);
}

// ---------------------------------------------------------------------------------------------
// Engine (a)/(b): one kernel per operation. PDL=true: the graph_pdl variants.
// ---------------------------------------------------------------------------------------------
template <bool PDL>
__device__ __forceinline__ void embed_body(const DecodeArgs& a) {
  chain_release<PDL>();
  chain_acquire<PDL>();  // the previous step's last kernel may still read the residual
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < a.hidden) a.resid[i] = __half2float(a.emb[static_cast<size_t>(a.token) * a.hidden + i]);
}

template <bool PDL>
__device__ __forceinline__ void rmsnorm_body(const float* in, const __half* gain, float* out, int n, float eps) {
  extern __shared__ float4 dyn4[];
  __shared__ float red[32];
  float* xs = reinterpret_cast<float*>(dyn4);
  chain_release<PDL>();
  chain_acquire<PDL>();
  stage_rmsnorm(xs, red, in, nullptr, gain, n, eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = xs[i];
}

enum GemvOut { kOutStore, kOutAdd, kOutSilu };
template <int OUT, bool PDL>
__device__ __forceinline__ void gemv_body(const __half* W, int rows, int K, const float* x, float* y) {
  extern __shared__ float4 dyn4[];
  float* xs = reinterpret_cast<float*>(dyn4);
  chain_release<PDL>();
  const int warps = blockDim.x / kLanes, lane = threadIdx.x % kLanes;
  gemv_pairs(
      W, rows, K, xs, blockIdx.x * warps + threadIdx.x / kLanes, gridDim.x * warps,
      [&] {
        chain_acquire<PDL>();
        stage_copy(xs, x, K);
      },
      [&](int r, float s0, float s1) {
        if (lane != 0) return;
        if (OUT == kOutStore) {
          *reinterpret_cast<float2*>(y + r) = make_float2(s0, s1);
        } else if (OUT == kOutAdd) {
          const float2 o = *reinterpret_cast<const float2*>(y + r);
          *reinterpret_cast<float2*>(y + r) = make_float2(o.x + s0, o.y + s1);
        } else {
          y[r / 2] = silu(s0) * s1;
        }
      });
}

template <bool PDL>
__device__ __forceinline__ void rope_body(const DecodeArgs& a, int layer) {
  chain_release<PDL>();
  chain_acquire<PDL>();
  const int pair = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * pair < a.q_dim + 2 * a.kv_dim) {
    const float2 v = *reinterpret_cast<const float2*>(a.qkv + 2 * pair);
    rope_append_pair(a, a.rope, layer, 2 * pair, v.x, v.y);
  }
}

template <int HD, bool PDL>
__device__ __forceinline__ void attention_body(const DecodeArgs& a, int layer) {
  extern __shared__ float4 dyn4[];
  chain_release<PDL>();
  if (PDL) prefetch_item<HD>(a, layer, blockIdx.x);  // the cache, before the wait
  chain_acquire<PDL>();
  attention_item<HD>(a, layer, blockIdx.x, reinterpret_cast<float*>(dyn4));
}

template <int HD, bool PDL>
__device__ __forceinline__ void combine_body(const DecodeArgs& a) {
  chain_release<PDL>();
  chain_acquire<PDL>();
  attention_combine<HD>(a, blockIdx.x);
}

template <bool PDL>
__device__ __forceinline__ void argmax_body(const DecodeArgs& a) {
  __shared__ float sv[32];
  __shared__ int si[32];
  chain_release<PDL>();
  chain_acquire<PDL>();
  float v = -INFINITY;
  int idx = 0x7fffffff;
  for (int i = threadIdx.x; i < a.vocab; i += blockDim.x) keep_better(v, idx, a.logits[i], i);
  warp_argmax(v, idx);
  const int warp = threadIdx.x / kLanes, nw = blockDim.x / kLanes;
  if (threadIdx.x % kLanes == 0) {
    sv[warp] = v;
    si[warp] = idx;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < nw; ++w) keep_better(v, idx, sv[w], si[w]);
    *a.token_out = idx;
    *a.best_out = v;
  }
}

#define OP_PAIR(NAME, BOUNDS, PARAMS, CALL_FALSE, CALL_TRUE)                                    \
  extern "C" __global__ void __launch_bounds__(BOUNDS) NAME PARAMS { CALL_FALSE; }              \
  extern "C" __global__ void __launch_bounds__(BOUNDS) NAME##_pdl PARAMS { CALL_TRUE; }
#define GEMV_PARAMS (const __half* W, int rows, int K, const float* x, float* y)
OP_PAIR(op_embed, 256, (DecodeArgs a), embed_body<false>(a), embed_body<true>(a))
OP_PAIR(op_rmsnorm, kNormThreads, (const float* in, const __half* gain, float* out, int n, float eps),
        (rmsnorm_body<false>(in, gain, out, n, eps)), (rmsnorm_body<true>(in, gain, out, n, eps)))
OP_PAIR(op_gemv_store, kGemvThreads, GEMV_PARAMS, (gemv_body<kOutStore, false>(W, rows, K, x, y)),
        (gemv_body<kOutStore, true>(W, rows, K, x, y)))
OP_PAIR(op_gemv_add, kGemvThreads, GEMV_PARAMS, (gemv_body<kOutAdd, false>(W, rows, K, x, y)),
        (gemv_body<kOutAdd, true>(W, rows, K, x, y)))
OP_PAIR(op_gemv_silu, kGemvThreads, GEMV_PARAMS, (gemv_body<kOutSilu, false>(W, rows, K, x, y)),
        (gemv_body<kOutSilu, true>(W, rows, K, x, y)))
OP_PAIR(op_rope_append, 256, (DecodeArgs a, int layer), rope_body<false>(a, layer), rope_body<true>(a, layer))
OP_PAIR(op_attention_hd64, kAttnThreads, (DecodeArgs a, int layer), (attention_body<64, false>(a, layer)),
        (attention_body<64, true>(a, layer)))
OP_PAIR(op_attention_hd128, kAttnThreads, (DecodeArgs a, int layer), (attention_body<128, false>(a, layer)),
        (attention_body<128, true>(a, layer)))
OP_PAIR(op_combine_hd64, 512, (DecodeArgs a), (combine_body<64, false>(a)), (combine_body<64, true>(a)))
OP_PAIR(op_combine_hd128, 512, (DecodeArgs a), (combine_body<128, false>(a)), (combine_body<128, true>(a)))
OP_PAIR(op_argmax, 1024, (DecodeArgs a), argmax_body<false>(a), argmax_body<true>(a))
#undef OP_PAIR
#undef GEMV_PARAMS

// ---------------------------------------------------------------------------------------------
// Engine (c): the persistent cooperative kernel
// ---------------------------------------------------------------------------------------------
// Failure path, out of line, on plain values (a reference to the kernel's parameter block
// would force a local copy of the whole block).
__device__ __noinline__ void report_timeout(SpinError* err, unsigned* abort_flag, int layer, int where,
                                            unsigned long long want, unsigned long long seen) {
  if (atomicCAS(&err->kind, 0u, 1u) == 0u) {
    err->block = blockIdx.x;
    err->layer = layer;
    err->where = where;
    err->want = want;
    err->seen = seen;
  }
  atomicExch(abort_flag, 1u);
}
// Thread 0 only: arrive, then spin until every block of this barrier generation has arrived.
// The constant-rate clock bounds the wait; someone else's timeout (the abort flag) ends it too.
// As in 05-sync's spin: the flag and the clock are read every 16 polls, not after each one (an
// acquire orders the flag's load after it: one more L2 round trip per poll, and a late arrival
// was seen up to a round trip later).
// barrier_wait: the spin alone, for a caller that arrived already.
__device__ __forceinline__ bool barrier_wait(unsigned long long* bar, unsigned* abort_flag, SpinError* err,
                                             unsigned long long timeout, unsigned long long want, int layer, int where) {
  unsigned long long seen = scope_acquire_load_u64(bar);
  if (seen >= want) return true;
  const unsigned long long start = port_const_clock();
  for (unsigned n = 1;; ++n) {
    seen = scope_acquire_load_u64(bar);
    if (seen >= want) return true;
    if ((n & 15) == 0) {
      if (*reinterpret_cast<volatile unsigned*>(abort_flag)) return false;
      if (port_const_clock() - start > timeout) {
        report_timeout(err, abort_flag, layer, where, want, seen);
        return false;
      }
    }
  }
}
__device__ __forceinline__ bool barrier_arrive_wait(unsigned long long* bar, unsigned* abort_flag, SpinError* err,
                                                    unsigned long long timeout, unsigned long long want, int layer,
                                                    int where) {
  scope_release_increment_u64(bar);
  return barrier_wait(bar, abort_flag, err, timeout, want, layer, where);
}

// Producer side of a last-block-finishes pattern: true in the block that made the count reach a
// multiple of n (counters only grow, across layers and steps: no reset needed).
__device__ __forceinline__ bool last_to_finish(unsigned long long* count, unsigned long long n, int* s_last) {
  __syncthreads();  // every thread's writes of this block are done
  if (threadIdx.x == 0) {
    // ... and visible device-wide before the count says so (release); in the last block, the
    // other blocks' writes visible before it reads them (acquire). One acq_rel atom where a
    // sequentially consistent fence stood before a relaxed add and another after it.
    const unsigned long long old = scope_acq_rel_increment_u64(count);
    *s_last = (old % n) == n - 1;
  }
  __syncthreads();
  return *s_last != 0;
}

// Every thread: the block's arrival at barrier k (1, 2, ...) of this launch and the wait for the
// whole grid (thread 0 spins). False: a wait timed out somewhere and the block must bail out.
__device__ __forceinline__ bool grid_barrier(const DecodeArgs& a, int k, int layer, int where, int* s_stop) {
  __syncthreads();
  if (threadIdx.x == 0) {
    tl_stamp(a, 2 * k);
    *s_stop = !barrier_arrive_wait(a.bar, a.abort_flag, a.err, a.timeout_ticks, (a.gen0 + k) * gridDim.x, layer, where);
    tl_stamp(a, 2 * k + 1);
  }
  __syncthreads();
  return *s_stop == 0;
}

// Barrier k's place where nothing waits (the fused MLP's, between gate/up and down, whose blocks
// read only their own h): the arrival is still counted, so the later barriers' generations hold,
// and the timeline gets an arrival and a departure at the same moment.
__device__ __forceinline__ void barrier_pass(const DecodeArgs& a, int k) {
  __syncthreads();
  if (threadIdx.x == 0) {
    tl_stamp(a, 2 * k);
    atomicAdd(a.bar, 1ull);  // relaxed, result unused (RED): nobody waits on this count
    tl_stamp(a, 2 * k + 1);
  }
}

// grid_barrier with work between the block's arrival and its wait: between() runs on every thread
// after the block barrier, thread 0's after its arrival. Only thread 0's own loads in between()
// are sure to come after its release: the other warps run between() while the release may still
// be pending, and 05-sync's release probe found that requests made then, by any warp, hold it too
// (group_o's hold mode puts a block barrier after the arrival, in hold_open).
template <class F>
__device__ __forceinline__ bool grid_barrier_then(const DecodeArgs& a, int k, int layer, int where, int* s_stop, F&& between) {
  __syncthreads();
  if (threadIdx.x == 0) {
    tl_stamp(a, 2 * k);
    scope_release_increment_u64(a.bar);
  }
  between();
  if (threadIdx.x == 0) {
    *s_stop = !barrier_wait(a.bar, a.abort_flag, a.err, a.timeout_ticks, (a.gen0 + k) * gridDim.x, layer, where);
    tl_stamp(a, 2 * k + 1);
  }
  __syncthreads();
  return *s_stop == 0;
}

// The logits' argmax after the block's rows: best of the n per-thread (or per-warp) candidates
// in s_bv/s_bi into block_best[block]; the last block to finish picks the token.
__device__ __forceinline__ void block_argmax_finish(const DecodeArgs& a, float* s_bv, int* s_bi, int n, int* s_last) {
  const int nb = gridDim.x, b = blockIdx.x, nw = blockDim.x / kLanes, warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  __syncthreads();
  if (threadIdx.x == 0) {
    float bv = s_bv[0];
    int bi = s_bi[0];
    for (int w = 1; w < n; ++w) keep_better(bv, bi, s_bv[w], s_bi[w]);
    a.block_best[b] = make_int2(__float_as_int(bv), bi);
  }
  if (last_to_finish(a.arg_count, nb, s_last)) {
    float v = -INFINITY;
    int idx = 0x7fffffff;
    for (int i = threadIdx.x; i < nb; i += blockDim.x) {
#if defined(PORT_HIP)
      const int2 e = a.block_best[i];
#else
      const int2 e = __ldcg(a.block_best + i);
#endif
      keep_better(v, idx, __int_as_float(e.x), e.y);
    }
    warp_argmax(v, idx);
    __syncthreads();
    if (lane == 0) {
      s_bv[warp] = v;
      s_bi[warp] = idx;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < nw; ++w) keep_better(v, idx, s_bv[w], s_bi[w]);
      *a.token_out = idx;
      *a.best_out = v;
    }
  }
}

template <int HD>
__device__ __forceinline__ void persistent_body(const DecodeArgs& a) {
  extern __shared__ float4 dyn4[];
  float* sm = reinterpret_cast<float*>(dyn4);
  __shared__ float red[32];
  __shared__ float s_bv[32];
  __shared__ int s_bi[32];
  __shared__ int s_stop, s_last;
  const int nb = gridDim.x, b = blockIdx.x;
  const int nw = blockDim.x / kLanes, warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  // Pair p of every GEMV stage goes to warp (p / nb) of block (p % nb): consecutive pairs land
  // on different SMs, so even a 1024-pair stage keeps every SM streaming.
  const int first = warp * nb + b, stride = nb * nw;
  const int H = a.hidden, items = (a.kv_dim / HD) * a.chunks;
  const size_t per_warp_pf = (a.prefetch_bytes / nw) & ~static_cast<size_t>(15);
  int k = 0;  // barriers passed in this launch
  auto grid_sync = [&](int layer, int where) -> bool { return grid_barrier(a, ++k, layer, where, &s_stop); };
  // This warp's first pair of the next GEMV stage, the first per_warp_pf bytes of it.
  auto prefetch_pairs = [&](const __half* W, int rows, int K) {
    if (per_warp_pf && first < rows / 2)
      warp_prefetch(W + static_cast<size_t>(2 * first) * K, min(per_warp_pf, static_cast<size_t>(4) * K));
  };
  for (int l = 0; l < a.layers; ++l) {
    const __half* lw = a.layer_w + static_cast<size_t>(l) * a.off.size;
    // -- QKV, RoPE, K/V append. Layer 0 normalises the embedding row itself and seeds the
    //    residual (first read two barriers later, by the O stage).
    if (a.stages & kStQkv) {
      const __half* emb_row = l == 0 ? a.emb + static_cast<size_t>(a.token) * H : nullptr;
      if (l == 0)
        for (int i = b * blockDim.x + threadIdx.x; i < H; i += nb * blockDim.x) a.resid[i] = __half2float(emb_row[i]);
      gemv_pairs(
          lw + a.off.qkv, a.q_dim + 2 * a.kv_dim, H, sm, first, stride,
          [&] { stage_rmsnorm(sm, red, a.resid, emb_row, lw + a.off.attn_gain, H, a.eps); },
          [&](int r, float s0, float s1) {
            if (lane == 0) rope_append_pair(a, a.rope, l, r, s0, s1);
          });
    }
    if ((a.stages & kStAttn) && b < items && a.prefetch_bytes) prefetch_item<HD>(a, l, b);
    if (!grid_sync(l, 0)) return;
    // -- attention; the last chunk of a KV head to finish combines the head's partials.
    if (a.stages & kStAttn)
      for (int item = b; item < items; item += nb) {
        attention_item<HD>(a, l, item, sm);
        if (last_to_finish(a.att_count + item / a.chunks, a.chunks, &s_last)) attention_combine<HD>(a, item / a.chunks);
      }
    if (a.stages & kStO) prefetch_pairs(lw + a.off.o, H, a.q_dim);
    if (!grid_sync(l, 1)) return;
    // -- O projection + residual
    if (a.stages & kStO)
      gemv_pairs(
          lw + a.off.o, H, a.q_dim, sm, first, stride, [&] { stage_copy(sm, a.attn, a.q_dim); },
          [&](int r, float s0, float s1) {
            if (lane == 0) resid_add_pair(a.resid, r, s0, s1);
          });
    if (a.stages & kStGateUp) prefetch_pairs(lw + a.off.gate_up, 2 * a.mlp, H);
    if (!grid_sync(l, 2)) return;
    // -- RMSNorm (per block) + gate/up + SiLU
    if (a.stages & kStGateUp)
      gemv_pairs(
          lw + a.off.gate_up, 2 * a.mlp, H, sm, first, stride,
          [&] { stage_rmsnorm(sm, red, a.resid, nullptr, lw + a.off.mlp_gain, H, a.eps); },
          [&](int r, float s0, float s1) {
            if (lane == 0) a.h[r / 2] = silu(s0) * s1;
          });
    if (a.stages & kStDown) prefetch_pairs(lw + a.off.down, H, a.mlp);
    if (!grid_sync(l, 3)) return;
    // -- down projection + residual
    if (a.stages & kStDown)
      gemv_pairs(
          lw + a.off.down, H, a.mlp, sm, first, stride, [&] { stage_copy(sm, a.h, a.mlp); },
          [&](int r, float s0, float s1) {
            if (lane == 0) resid_add_pair(a.resid, r, s0, s1);
          });
    if (l + 1 < a.layers) {
      if (a.stages & kStQkv) prefetch_pairs(lw + a.off.size + a.off.qkv, a.q_dim + 2 * a.kv_dim, H);
    } else if (a.stages & kStLogits) {
      prefetch_pairs(a.emb, a.vocab, H);
    }
    if (!grid_sync(l, 4)) return;
  }
  // -- final RMSNorm + logits + argmax: per warp, per block, then the last block over blocks.
  if (a.stages & kStLogits) {
    // Each warp's best so far lives in shared memory (registers are all taken by the loads).
    if (lane == 0) {
      s_bv[warp] = -INFINITY;
      s_bi[warp] = 0x7fffffff;
    }
    gemv_pairs(
        a.emb, a.vocab, H, sm, first, stride, [&] { stage_rmsnorm(sm, red, a.resid, nullptr, a.final_gain, H, a.eps); },
        [&](int r, float s0, float s1) {
          if (lane != 0) return;
          *reinterpret_cast<float2*>(a.logits + r) = make_float2(s0, s1);
          float v = s_bv[warp];
          int i = s_bi[warp];
          keep_better(v, i, s0, r);
          keep_better(v, i, s1, r + 1);
          s_bv[warp] = v;
          s_bi[warp] = i;
        });
    block_argmax_finish(a, s_bv, s_bi, nw, &s_last);
  }
}

extern "C" __global__ void __launch_bounds__(kPersistentThreads, 1) decode_persistent_hd64(DecodeArgs a) {
  persistent_body<64>(a);
}
extern "C" __global__ void __launch_bounds__(kPersistentThreads, 1) decode_persistent_hd128(DecodeArgs a) {
  persistent_body<128>(a);
}

// ---------------------------------------------------------------------------------------------
// Engine (c), ring-fed: the persistent kernel whose weights stream through shared memory (sm_90)
// ---------------------------------------------------------------------------------------------
// Weights never depend on activations, so each warp can read its share of the whole step's
// weights as one stream, running ahead of the computation across every barrier. A stage's
// rows are a contiguous range of pairs per block, each pair S pieces of kRingSeg columns of
// both rows (4 KB, two cp.async.bulk copies completing on one mbarrier); the warps share the
// pieces by whole pairs or by equal runs of pieces (RingMode, below). Every warp has its own ring of m slots in shared memory: the warp waits for
// its next piece, reads it (16-byte lane-strided reads against x in shared memory), and its
// lane 0 refills that slot at once with the warp's piece m ahead, whatever stage or layer that
// piece belongs to. No slot is shared between warps, so a piece costs no block barrier, and a
// slot's phases can never run more than one ahead of its only reader. During a grid barrier, a
// norm or the attention, up to 16 m pieces per block stay requested (192 KB per SM for m = 3).
// Attention reads K/V from L2 / HBM as the registers engine does, optionally (RingMode) loading
// each thread's first K/V vectors into registers before the barrier that precedes it.
constexpr int kRingThreads = 512;
constexpr int kRingWarps = kRingThreads / PORT_WARP_SIZE;
// The piece's width is a build-time knob for experiments (DECODE_RING_SEG, e.g. make
// XDEFS=-DDECODE_RING_SEG=512 O=build/seg512/ build/seg512/06-decode/decode): a narrower piece
// keeps fewer bytes in flight at the same number of slots (05-sync's loaded-latency probe: in
// flight beyond ~30 KB an SM lengthens every round trip and buys no bandwidth). The product is
// built with 1024: on an H100 (6945f60, results/h100-80gb-hbm3/variants-6945f60) 2 KB and 1 KB
// pieces shortened the barriers but lost 20-130 us a 1B step (a wait and a refill a piece).
#ifndef DECODE_RING_SEG
#define DECODE_RING_SEG 1024
#endif
constexpr int kRingSeg = DECODE_RING_SEG;                            // columns of a row per piece
static_assert(kRingSeg % (8 * 32) == 0 && kRingSeg <= 1024, "a piece's row: whole 16-byte lane reads of a warp, at most 2 KB");
constexpr int kRingPieceBytes = 2 * kRingSeg * static_cast<int>(sizeof(__half));  // both rows: 4 KB (product)
constexpr int kRingMaxSlots = 4 * (1024 / kRingSeg);                 // per warp: at most 16 KB
// The default: 2 slots per warp, not as many as fit. On two lent H100s (2e64fc7 and 129ddc0,
// interleaved runs) the 1B's best mode ran 3-9 us faster with 2 than with 3 (05-sync's
// loaded-latency probe: past ~30 KB an SM in flight, depth lengthens every round trip and buys no
// bandwidth); the 8B fits 2 anyway, and 1 lost 80-90 us there.
constexpr int kRingDefaultSlots = 2;
// The fused MLP's down projection, tiled (DecodeArgs.down_t): output n = w * tile + c of the
// row-major down weight [hidden][mlp], column j, sits at [w][j][c] of its layer's block, with
// tile = hidden / kRingWarps. Warp w's rows j of its tile are then one contiguous run (tile
// halves each), so a block's rows [p0, p0 + np) are one run per warp, cut into 4 KB pieces.
__host__ __device__ constexpr int down_rows_per_piece(int tile) { return kRingPieceBytes / (2 * tile); }
__host__ __device__ inline size_t down_tile_index(int hidden, int mlp, int n, int j) {
  const int tile = hidden / kRingWarps;
  return (static_cast<size_t>(n / tile) * mlp + j) * tile + n % tile;
}
enum RingMode { kRingBalanced = 1, kRingPreloadKv = 2, kRingFusedMlp = 4, kRingGroupO = 8, kRingHeadCount = 16, kRingHold = 32 };  // bits of DecodeArgs.ring_mode
constexpr int kRingModes = 8;  // the bits below kRingGroupO, swept in every combination (group_o: its own kernel)

// A GEMV stage as one block sees it: pairs [p0, p0 + np) of W[rows, K], S pieces per pair.
// W is null for a stage that has no GEMV (attention) or is masked off.
// tile > 0: the fused MLP's down projection (kRingFusedMlp): W is the layer's down_t, the block's
// rows of it are its own gate/up pairs [p0, p0 + np) (its h), and warp w streams the w-th tile of
// `tile` output columns of those rows, kDownRows(tile) rows a piece; K is then the output length.
struct RingStage {
  const __half* W;
  int K, p0, np, S, tile;
};
// Stage st of a launch: 5 per layer (QKV, attention, O, gate/up, down), then the logits, from
// the host's table of stage kinds (DecodeArgs.ring_kinds, which also says what is masked off and
// whether down is fused). The pair ranges rotate with the stage so no block holds the larger
// share every time. Inlined wherever the ring's issuer starts a stage, so kept small: one
// selection among six kinds and two 32-bit divisions.
// GO: the group-O kernel's O stage (a tile kind there): block b < 16 G (G = q_dim / (4 hd) KV
// heads' groups of inputs) takes group b / 16's inputs against output tile b % 16, its rows of
// wo_t at p0 = b C / 16 (C = 4 hd inputs a group, C / 16 a warp); the other blocks none.
template <bool GO = false>
__device__ __forceinline__ RingStage ring_stage(const DecodeArgs& a, int st) {
  RingStage r{nullptr, 0, 0, 0, 0, 0};
  const int l = st / kBarriersPerLayer, k = l == a.layers ? kBarriersPerLayer : st - l * kBarriersPerLayer;
  RingKind d = a.ring_kinds[0];
#pragma unroll
  for (int i = 1; i <= kBarriersPerLayer; ++i)
    if (k == i) d = a.ring_kinds[i];
  if (d.W == nullptr) return r;
  r.W = d.W + static_cast<size_t>(l) * d.layer_stride;
  r.K = d.K;
  r.S = d.S;
  r.tile = d.tile;
  if constexpr (GO) {
    if (k == 2) {
      const int per = kG * a.hd / kRingWarps, slots = a.q_dim / (kG * a.hd) * kRingWarps;
      r.np = static_cast<int>(blockIdx.x) < slots ? per : 0;
      r.p0 = r.np > 0 ? static_cast<int>(blockIdx.x) * per : 0;
      return r;
    }
  }
  pair_range(d.pairs, st + d.rot, blockIdx.x, gridDim.x, &r.p0, &r.np);
  return r;
}

#if !defined(PORT_HIP)
// Warp w's pieces of a stage, in order: piece (pair p, segment s) of the block's np pairs x S
// segments. Two assignments (DecodeArgs.ring_mode bit kRingBalanced):
//   pairs     warp w takes whole pairs w, w + 16, ...: with fewer than 16 pairs some warps idle;
//   balanced  warp w takes the w-th sixteenth of the np S pieces (whole pairs and cut pairs
//             alike), so every warp streams the same bytes whatever np is.
struct PieceCursor {
  int p, s, step, left;  // pair, segment, pair step, pieces left
  __device__ void begin(const RingStage& r, int warp, int mode) {
    const bool balanced = (mode & kRingBalanced) != 0;
    if (r.np <= 0) {
      p = s = left = 0;
      step = 1;
    } else if (r.tile > 0) {  // the fused down projection: every warp its own tile, all np rows
      p = s = 0;
      step = 1;
      left = (r.np * r.tile + kRingPieceBytes / 2 - 1) / (kRingPieceBytes / 2);  // ceil(np / rows a piece)
    } else if (balanced) {
      const int E = r.np * r.S, e0 = warp * E / kRingWarps;
      p = e0 / r.S;
      s = e0 - p * r.S;
      step = 1;
      left = (warp + 1) * E / kRingWarps - e0;
    } else {
      p = warp;
      s = 0;
      step = kRingWarps;
      left = warp < r.np ? ((r.np - 1 - warp) / kRingWarps + 1) * r.S : 0;
    }
  }
  __device__ void next(const RingStage& r) {
    if (++s == r.S) {
      s = 0;
      p += step;
    }
    --left;
  }
};

// The block's hold gate (kRingHold): the last ring stage its warps may refill from before the next
// waited barrier's arrival; INT_MAX without hold. Written by thread 0 before a block barrier.
__device__ __forceinline__ int& ring_gate() {
  __shared__ int gate;
  return gate;
}

template <bool GO>
struct WarpRing {
  const DecodeArgs& a;
  __half* slots;
  unsigned long long* bars;
  int m, warp, lane;
  int cslot = 0;
  unsigned cphase = 0, inflight = 0;
  int ist = 0, nst = 0;
  int mode;  // DecodeArgs.ring_mode
  PieceCursor ic{};  // the issuer's next piece in stage ist
  RingStage irs{};
  __device__ WarpRing(const DecodeArgs& a_, __half* slots_, unsigned long long* bars_, int m_, int nst_)
      : a(a_), slots(slots_), bars(bars_), m(m_), warp(threadIdx.x / kLanes), lane(threadIdx.x % kLanes), nst(nst_),
        mode(a_.ring_mode) {
    begin_stage();
    settle();
  }
  __device__ void begin_stage() {
    irs = ring_stage<GO>(a, ist);
    ic.begin(irs, warp, mode);
  }
  // Move the issuer past stages in which this warp has no piece left.
  __device__ void settle() {
    while (ist < nst && ic.left <= 0)
      if (++ist < nst) begin_stage();
  }
  // The warp's next piece into `slot` (free: never issued, or its last piece read by every lane).
  __device__ void issue(int slot) {
    if (ist >= nst) return;
    if (lane == 0) {
      const unsigned dst = smem_u32(slots + static_cast<size_t>(slot) * (kRingPieceBytes / 2));
      const unsigned bar = smem_u32(&bars[slot]);
      bulk_refill_fence();  // the lanes' reads of the slot's last piece come before the overwrite
      if (irs.tile > 0) {  // rows [j0, j0 + n) of this warp's tile: one run, the last piece short
        const int G = down_rows_per_piece(irs.tile), j0 = irs.p0 + G * ic.p, n = min(G, irs.np - G * ic.p);
        const unsigned bytes = static_cast<unsigned>(n * irs.tile) * 2u;
        bulk_arm(bar, bytes);
        bulk_copy_to(dst, irs.W + (static_cast<size_t>(warp) * a.mlp + j0) * irs.tile, bytes, bar);
      } else {
        const __half* row0 = irs.W + static_cast<size_t>(2 * (irs.p0 + ic.p)) * irs.K + static_cast<size_t>(ic.s) * kRingSeg;
        bulk_arm(bar, kRingPieceBytes);
        bulk_copy_to(dst, row0, kRingPieceBytes / 2, bar);
        bulk_copy_to(dst + kRingPieceBytes / 2, row0 + irs.K, kRingPieceBytes / 2, bar);
      }
    }
    ++inflight;
    ic.next(irs);
    if (ic.left <= 0) settle();
  }
  // kRingHold (group_o's kernels only): a waited grid barrier's release waits for every byte the
  // block has in flight, whoever requested it (05-sync's release probe), and the ring keeps up to
  // 16 m pieces requested across every barrier. With hold, the warp does not refill past the
  // block's gate (the last ring stage before the next waited barrier: ring_gate(), shared by the
  // block): a slot freed past it stays empty until open(), which the barrier runs once thread 0
  // has arrived. The empty slots are always the m - inflight after the ones in flight, so no
  // other state is needed. Without hold the gate is INT_MAX and nothing is held.
  __device__ bool held() const { return ist < nst && ist > ring_gate(); }
  __device__ void open(int gate) {
    if constexpr (GO)
      while (static_cast<int>(inflight) < m && ist < nst && ist <= gate) {
        const int slot = cslot + static_cast<int>(inflight);
        issue(slot < m ? slot : slot - m);
      }
  }
  __device__ void start() {
    if constexpr (GO) {
      for (int i = 0; i < m && !held(); ++i) issue(i);
    } else {
      for (int i = 0; i < m; ++i) issue(i);
    }
  }
  // The warp's next piece, once it has landed.
  __device__ const __half* wait() const {
    bulk_wait(smem_u32(&bars[cslot]), cphase, port_const_clock(), a.timeout_ticks);
    return slots + static_cast<size_t>(cslot) * (kRingPieceBytes / 2);
  }
  __device__ void advance() {
    --inflight;
    if (++cslot == m) {
      cslot = 0;
      cphase ^= 1u;
    }
  }
  // Done with the piece from wait(): refill its slot with the piece m ahead.
  __device__ void release() {
    __syncwarp();
    if constexpr (GO) {
      if (!held()) issue(cslot);
    } else {
      issue(cslot);
    }
    advance();
  }
  // A barrier timed out: wait out the copies still in flight into this warp's slots.
  __device__ void drain() {
    while (inflight > 0) {
      wait();
      advance();
    }
  }
};

// One GEMV stage from the warps' rings: warp w streams its share of the block's pieces, keeps
// the running sums of the pair in hand in registers, and reduces across its lanes when the
// pair ends or its share does; lane 0 stores that (or zeros) as the piece's partial in shared
// memory (part, beside x). Once every warp is done, each pair's S partials are added in segment
// order (the same order every run) and epi(row0, y0, y1) runs, every thread taking pairs in
// turn: its global reads (the residual) are one L2 round trip per stage.
// xs: this stage's x, FP32, K long; part follows it (2 np S floats).
// tl_at: the timeline index of the stage's prologue stamp (tl_gemv), stamped on entry; the
// next one is stamped once every warp is done.
template <class Ring, class Epi>
__device__ __forceinline__ void ring_gemv(Ring& q, const RingStage& r, float* xs, int tl_at, Epi&& epi) {
  if (threadIdx.x == 0) tl_stamp(q.a, tl_at);
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  float2* part = reinterpret_cast<float2*>(xs + r.K);  // host contract: K + 2 np S floats fit
  PieceCursor c;
  c.begin(r, warp, q.mode);
  float a0 = 0.f, b0 = 0.f, a1 = 0.f, b1 = 0.f;
  while (c.left > 0) {
    const __half* w = q.wait();
    const float* x = xs + c.s * kRingSeg;
#pragma unroll
    for (int i = 0; i < kRingSeg / 8 / kLanes; ++i) {
      const int v = lane + i * kLanes;
      const vec4u w0 = *reinterpret_cast<const vec4u*>(w + 8 * v);
      const vec4u w1 = *reinterpret_cast<const vec4u*>(w + kRingSeg + 8 * v);
      fma8(w0, x + 8 * v, a0, b0);
      fma8(w1, x + 8 * v, a1, b1);
    }
    q.release();
    float2 y = make_float2(0.f, 0.f);
    if (c.s == r.S - 1 || c.left == 1) {  // warp-uniform: the pair or the warp's share ends here
      y = make_float2(group_sum<kLanes>(a0 + b0), group_sum<kLanes>(a1 + b1));
      a0 = b0 = a1 = b1 = 0.f;
    }
    if (lane == 0) part[c.p * r.S + c.s] = y;
    c.next(r);
  }
  __syncthreads();
  if (threadIdx.x == 0) tl_stamp(q.a, tl_at + 1);
  for (int t = threadIdx.x; t < r.np; t += blockDim.x) {
    float y0 = 0.f, y1 = 0.f;
    for (int j = 0; j < r.S; ++j) {
      y0 += part[t * r.S + j].x;
      y1 += part[t * r.S + j].y;
    }
    epi(2 * (r.p0 + t), y0, y1);
  }
}

// The fused MLP's down projection (kRingFusedMlp): this block's own h (hs: the np values its
// gate/up pairs gave, in shared memory) times its rows of down_t. Warp w streams the rows of its
// tile of output columns, CPL columns a lane summed in registers; once every warp is done (the
// stream stamp) each lane adds its CPL sums to the residual at L2 (RED, result unused). Every
// block adds to every residual element, in no fixed order: the residual after down is the same
// up to FP32 rounding from run to run (the split GEMV's order was fixed). What it buys: no block
// reads another's h, so no grid barrier between gate/up and down, and no prologue for down.
template <int CPL, class Ring>
__device__ __forceinline__ void ring_down_fused(Ring& q, const RingStage& r, const float* hs, int tl_at) {
  __syncthreads();  // every pair's h is in hs
  if (threadIdx.x == 0) tl_stamp(q.a, tl_at);
  static_assert(CPL == 4 || CPL == 8, "a lane's columns: 8 or 16 bytes of a tile row");
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes, G = down_rows_per_piece(r.tile);
  PieceCursor c;
  c.begin(r, warp, q.mode);
  float acc[CPL];
#pragma unroll
  for (int i = 0; i < CPL; ++i) acc[i] = 0.f;
  while (c.left > 0) {
    const __half* w = q.wait() + CPL * lane;
    const int j0 = G * c.p, n = min(G, r.np - j0);
#pragma unroll 4
    for (int j = 0; j < n; ++j) {
      const float hj = hs[j0 + j];
      float v[CPL];
      if constexpr (CPL == 4) {
        const uint2 u = *reinterpret_cast<const uint2*>(w + j * r.tile);
        const float2 a = halves(u.x), b = halves(u.y);
        v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
      } else {
        const vec4u u = *reinterpret_cast<const vec4u*>(w + j * r.tile);
        const float2 a = halves(u.x), b = halves(u.y), d = halves(u.z), e = halves(u.w);
        v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y, v[4] = d.x, v[5] = d.y, v[6] = e.x, v[7] = e.y;
      }
#pragma unroll
      for (int i = 0; i < CPL; ++i) acc[i] = fmaf(hj, v[i], acc[i]);
    }
    q.release();
    c.next(r);
  }
  __syncthreads();
  if (threadIdx.x == 0) tl_stamp(q.a, tl_at + 1);
  float4* out = reinterpret_cast<float4*>(q.a.resid + warp * r.tile + CPL * lane);
#pragma unroll
  for (int i = 0; i < CPL / 4; ++i) atomicAdd(out + i, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
}

// The group-O mode (kRingGroupO, its own kernels decode_ring_go_*): O split in two dimensions.
// Block b < 16 G (G KV heads) takes the C = kG HD inputs of KV head g = b / 16 (the attention
// outputs of its query heads) against the output tile t = b % 16 of tile = hidden / 16 rows; its
// warps split the C inputs, C / 16 each, and stream them against the tile from wo_t (W_O tiled
// per block and warp in down_t's layout, so the ring's issue path is the same). So a block needs
// only its group's attention output, which it combines itself from the chunks' partials as soon
// as that KV head has counted all its items (thread 0 waits on att_count, bounded like a grid
// barrier's spin): no combining block, no grid barrier after attention, no copy of the whole
// attention output; and each residual element takes G reductions at L2 (one per group), not
// one per block.
// have: this block takes part in O (b < 16 G). hs: kG HD floats. The combine as in
// attention_combine: a thread per input, the chunks' partials all requested at once.
template <int HD>
__device__ __forceinline__ bool group_o_inputs(const DecodeArgs& a, int l, bool have, float* hs, int* s_stop) {
  __shared__ float s_ml[kCombineChunks * 2 * kG];
  const int g = blockIdx.x / kRingWarps, t = threadIdx.x;
  if (!have) return true;
  if (a.stages & kStAttn) {  // (with attention masked off nobody counts: timing O alone)
    if (t == 0)
      *s_stop = !barrier_wait(a.att_count + g, a.abort_flag, a.err, a.timeout_ticks,
                              (a.att0 + l + 1) * static_cast<unsigned long long>(a.chunks), l, 1);
    __syncthreads();
    if (*s_stop) return false;
  }
  const size_t item0 = static_cast<size_t>(g) * a.chunks;
  for (int i = t; i < a.chunks * 2 * kG; i += blockDim.x) s_ml[i] = act_load(a.part_ml + item0 * 2 * kG + i);
  for (int c0 = 0; c0 < kG * HD; c0 += blockDim.x) {  // one pass when blockDim.x >= kG HD (512 threads)
    const int c = c0 + t, head = c / HD;
    float o[kCombineChunks];
#pragma unroll
    for (int ch = 0; ch < kCombineChunks; ++ch)
      o[ch] = c < kG * HD && ch < a.chunks ? act_load(a.part_o + (item0 + ch) * kG * HD + c) : 0.f;
    __syncthreads();  // s_ml in place
    if (c < kG * HD) {
      float mx = -INFINITY;
#pragma unroll
      for (int ch = 0; ch < kCombineChunks; ++ch)
        if (ch < a.chunks) mx = fmaxf(mx, s_ml[ch * 2 * kG + 2 * head]);
      float num = 0.f, den = 0.f;
#pragma unroll
      for (int ch = 0; ch < kCombineChunks; ++ch)
        if (ch < a.chunks) {
          const float w = expf(s_ml[ch * 2 * kG + 2 * head] - mx);
          num += w * o[ch];
          den += w * s_ml[ch * 2 * kG + 2 * head + 1];
        }
      hs[c] = num / den;
      // The validation's check of the attention output (no block reads a.attn): tile 0's blocks write it.
      if (blockIdx.x % kRingWarps == 0) a.attn[g * kG * HD + c] = num / den;
    }
  }
  return true;
}

// The head-count mode (kRingHeadCount, group_o's kernel with the barrier before attention made a
// count per KV head; kernels decode_ring_hc_*): an attention item reads only its KV head's rows of
// the QKV output (kG query heads, its K and V row, the last two appended to the cache), so it
// waits for those rows alone, counted as they are written, not for the whole grid's QKV stage.
// Each block arrives at the barrier as before (counted, nobody waits there) and adds its rows of
// each KV head to that head's count (release; a block's rows touch one to three heads); an item
// spins (thread 0, bounded like a grid barrier) until its head's count holds every layer's
// (kG + 2) hd rows up to this one. What still needs the whole grid: the residual. Every block
// reads it in the norm before QKV (and layer 0's blocks write it from the embedding), and O's
// blocks add to it; so before it passes the point after attention a block waits for every
// arrival at the barrier before attention (hc_grid_wait), by then long complete, and no block
// adds to the residual before every block has read it.
// Every thread: the block's arrival at barrier k, its QKV rows (r: pairs [p0, p0 + np)) counted
// per KV head first. Thread 0 stamps arrival and departure together, as barrier_pass does, so the
// timeline's "barrier" at this point is what the release reductions cost: on an H100 3.6 us a
// layer on the 1B, as much as group_o's whole barrier there. Tried in 1e41cd9 and dropped (H100,
// results/h100-80gb-hbm3/06-decode-f9df1dc-head-count-fence.txt): one fence.acq_rel.gpu before
// relaxed counts (slower: 1B 1106.8 against 1072.5 us for group_o), and that fence with the
// other warps held (a block barrier) until it is done, so no K/V load is in flight during it
// (1094.8: the fence 3.3 us a layer against 4.2, still no gain).
__device__ __forceinline__ void hc_arrive(const DecodeArgs& a, int k, const RingStage& r) {
  __syncthreads();  // every thread's QKV epilogue (q, the appended K/V rows) is written
  if (threadIdx.x == 0) {
    tl_stamp(a, 2 * k);
    if (r.W != nullptr && r.np > 0) {
      const int r0 = 2 * r.p0, r1 = 2 * (r.p0 + r.np), hd = a.hd, heads = a.kv_dim / hd;
      for (int g = 0; g < heads; ++g) {
        const int n = qkv_rows_of_head(a, r0, r1, g);
        if (n > 0) scope_release_add_u64(a.att_count + heads + g, static_cast<unsigned long long>(n));
      }
    }
    scope_release_increment_u64(a.bar);
    tl_stamp(a, 2 * k + 1);
  }
}
// Every thread: wait until KV head g's rows of layer l are all counted (none to wait for when QKV
// is masked off: nobody counts then). False: a wait timed out somewhere.
__device__ __forceinline__ bool hc_head_ready(const DecodeArgs& a, int l, int g, int* s_stop) {
  if (!(a.stages & kStQkv)) return true;
  if (threadIdx.x == 0) {
    const int heads = a.kv_dim / a.hd;
    *s_stop = !barrier_wait(a.att_count + heads + g, a.abort_flag, a.err, a.timeout_ticks,
                            (a.qkv0 + l + 1) * static_cast<unsigned long long>((kG + 2) * a.hd), l, 0);
  }
  __syncthreads();
  return *s_stop == 0;
}
// Every thread: wait until every block has arrived at barrier k (hc_arrive's).
__device__ __forceinline__ bool hc_grid_wait(const DecodeArgs& a, int k, int l, int* s_stop) {
  __syncthreads();
  if (threadIdx.x == 0)
    *s_stop = !barrier_wait(a.bar, a.abort_flag, a.err, a.timeout_ticks, (a.gen0 + k) * gridDim.x, l, 0);
  __syncthreads();
  return *s_stop == 0;
}

// The group-O mode's O stage: warp w streams its C / 16 inputs' rows of the block's output tile
// (CPL columns a lane, as ring_down_fused), the warps' sums meet in shared memory (red:
// kRingWarps x tile floats), and the block adds its tile to the residual: one reduction at L2 per
// element (RED, result unused), so G per element in all.
// Its stream loop is ring_down_fused's with per-warp inputs. Merged into one helper (2026-12-06,
// PTX the same but for virtual register numbering) the four ring kernels' SASS changed (cubin
// .text compared), which could not be timed then; kept apart until it can be.
template <int CPL, class Ring>
__device__ __forceinline__ void ring_o_group(Ring& q, const RingStage& r, const float* hs, float* red, int tl_at) {
  __syncthreads();  // hs complete
  if (threadIdx.x == 0) tl_stamp(q.a, tl_at);
  const int warp = threadIdx.x / kLanes, lane = threadIdx.x % kLanes, G = down_rows_per_piece(r.tile);
  const float* hw = hs + warp * r.np;  // this warp's inputs
  PieceCursor c;
  c.begin(r, warp, q.mode);
  float acc[CPL];
#pragma unroll
  for (int i = 0; i < CPL; ++i) acc[i] = 0.f;
  while (c.left > 0) {
    const __half* w = q.wait() + CPL * lane;
    const int j0 = G * c.p, n = min(G, r.np - j0);
#pragma unroll 4
    for (int j = 0; j < n; ++j) {
      const float hj = hw[j0 + j];
      float v[CPL];
      if constexpr (CPL == 4) {
        const uint2 u = *reinterpret_cast<const uint2*>(w + j * r.tile);
        const float2 a = halves(u.x), b = halves(u.y);
        v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
      } else {
        const vec4u u = *reinterpret_cast<const vec4u*>(w + j * r.tile);
        const float2 a = halves(u.x), b = halves(u.y), d = halves(u.z), e = halves(u.w);
        v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y, v[4] = d.x, v[5] = d.y, v[6] = e.x, v[7] = e.y;
      }
#pragma unroll
      for (int i = 0; i < CPL; ++i) acc[i] = fmaf(hj, v[i], acc[i]);
    }
    q.release();
    c.next(r);
  }
  if (r.np > 0) {
#pragma unroll
    for (int i = 0; i < CPL; i += 4)
      *reinterpret_cast<float4*>(red + warp * r.tile + CPL * lane + i) = make_float4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]);
  }
  __syncthreads();
  if (threadIdx.x == 0) tl_stamp(q.a, tl_at + 1);
  if (r.np > 0)
    for (int o = threadIdx.x; o < r.tile; o += blockDim.x) {
      float sum = 0.f;
      for (int w = 0; w < kRingWarps; ++w) sum += red[w * r.tile + o];
      atomicAdd(q.a.resid + (blockIdx.x % kRingWarps) * r.tile + o, sum);
    }
}
#endif  // !PORT_HIP

// The head-dim-128 group-O kernel compiles one tile width only, CPL = HD / 16 = 8 columns a lane
// (tile = 2 HD = 256, the 8B's; go_ok_ refuses other shapes for it). With both widths compiled in,
// the 8B's O epilogue jumped over the unused width's code to a cold instruction line: ncu on an
// H100 put 1.4% of the kernel's warp samples at that one instruction, stalled on instruction fetch
// (no_inst), about 2.4 us a layer, most of the 8B's O epilogue (3.4 us a layer against the 1B's
// 0.36, whose width lay just before the join). With one width the epilogue fell to 0.35 us a layer
// and the step by 12-14 us (H100, same call): the slowest block's skew took most of it back. The
// head-dim-64 kernel keeps both widths: compiled with one, its 1B ran 5 us slower in that call.
__host__ __device__ constexpr int go_cpl(int hd) { return hd / 16; }
__host__ __device__ constexpr bool go_one_width(int hd) { return hd == 128; }

// GO: the group-O mode's kernel (kRingGroupO; group_o_inputs), everything else as in the base one.
// HC (GO too): the head-count mode's (kRingHeadCount; hc_arrive, hc_head_ready, hc_grid_wait).
template <int HD, bool GO, bool HC = false>
__device__ __forceinline__ void ring_body(const DecodeArgs& a) {
  static_assert(GO || !HC, "the head-count mode is group_o's kernel with one barrier changed");
#if !defined(PORT_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ float4 dyn4[];
  __half* ring = reinterpret_cast<__half*>(dyn4);
  const int m = a.ring_slots;
  float* sm = reinterpret_cast<float*>(ring + static_cast<size_t>(kRingWarps) * m * (kRingPieceBytes / 2));
  __shared__ unsigned long long bars[kRingWarps * kRingMaxSlots];
  __shared__ float red[32];
  __shared__ float s_bv[kRingWarps];
  __shared__ int s_bi[kRingWarps];
  __shared__ int s_stop, s_last;
  // The RoPE table (cos, sin per dimension pair at this position), the same for every layer: read
  // once here, so the QKV epilogue's rotation waits on no global load (each one was an L2 round
  // trip behind the ring's copies).
  __shared__ float s_rope[kMaxHd];
  const int b = blockIdx.x, nb = gridDim.x, H = a.hidden, warp = threadIdx.x / kLanes;
  const int items = (a.kv_dim / a.hd) * a.chunks;
  for (int i = threadIdx.x; i < a.hd; i += blockDim.x) s_rope[i] = a.rope[i];
  if (threadIdx.x == 0) {
    if (a.tl != nullptr) a.tl[static_cast<size_t>(b) * tl_stride(a.layers)] = static_cast<unsigned long long>(sm_id());
    tl_stamp(a, 1);
    for (int i = 0; i < kRingWarps * m; ++i) bulk_bar_init(smem_u32(&bars[i]));
    bulk_bar_init_fence();
    if constexpr (GO) ring_gate() = (a.ring_mode & kRingHold) ? 0 : INT_MAX;  // hold: layer 0's QKV only
  }
  __syncthreads();
  WarpRing<GO> q(a, ring + static_cast<size_t>(warp) * m * (kRingPieceBytes / 2), bars + warp * m, m,
             kBarriersPerLayer * a.layers + 1);
  q.start();
  int k = 0;
  auto sync_or_drain = [&](int layer, int where) -> bool {
    if (grid_barrier(a, ++k, layer, where, &s_stop)) return true;
    q.drain();
    return false;
  };
  // hold (kRingHold, group_o's kernels): between a waited barrier's arrival and its wait, a block
  // barrier (so that no warp's request lands inside thread 0's pending release), the loads the
  // block needs next (issue()), then the ring's held slots, up to ring stage `gate`.
  // The base kernel's barrier calls keep their own spelling below (if constexpr): routed through
  // hold_open, even with hold a constant false there, NVVM emitted different PTX for it (9e08e08's
  // review, checked against the PTX of 43652a4); spelled apart, its PTX is unchanged.
  const bool hold = (a.ring_mode & kRingHold) != 0;
  auto hold_open = [&](int gate, auto&& issue) {
    if (hold) {
      if (threadIdx.x == 0) ring_gate() = gate;
      __syncthreads();
    }
    issue();
    if (hold) q.open(gate);
  };
  // The same barrier, loading the gain of the norm that follows it while the block waits. With
  // the MLP fused the waited barriers are after QKV (where 0), O (2) and down (4): after O the
  // ring may refill up to down (st + 4), after down up to the next layer's QKV (or the logits).
  GainRegs gpre;
  auto sync_gain_or_drain = [&](int layer, int where, const __half* gain) -> bool {
    if constexpr (GO) {
      const int gate = layer * kBarriersPerLayer + (where == 2 ? 4 : 5);
      if (grid_barrier_then(a, ++k, layer, where, &s_stop, [&] { hold_open(gate, [&] { gain_issue(gpre, gain, H); }); }))
        return true;
    } else {
      if (grid_barrier_then(a, ++k, layer, where, &s_stop, [&] { gain_issue(gpre, gain, H); })) return true;
    }
    q.drain();
    return false;
  };
  auto add_resid = [&](int r, float s0, float s1) { resid_add_pair(a.resid, r, s0, s1); };
  for (int l = 0; l < a.layers; ++l) {
    const __half* lw = a.layer_w + static_cast<size_t>(l) * a.off.size;
    const int st = l * kBarriersPerLayer;
    RingStage r = ring_stage(a, st);
    if (r.W) {
      const __half* emb_row = l == 0 ? a.emb + static_cast<size_t>(a.token) * H : nullptr;
      if (l == 0)
        for (int i = b * blockDim.x + threadIdx.x; i < H; i += nb * blockDim.x) a.resid[i] = __half2float(emb_row[i]);
      stage_rmsnorm(sm, red, a.resid, emb_row, lw + a.off.attn_gain, H, a.eps, &gpre);
      ring_gemv(q, r, sm, tl_gemv(a.layers, st + 1), [&](int row, float s0, float s1) { rope_append_pair(a, s_rope, l, row, s0, s1); });
    }
    // kv_preload: the item's K/V loads go in flight after this block's arrival, while it waits:
    // issued before it (up to 80373fc), they held up thread 0's release (the 1B's barrier after
    // QKV took 1.74 us a layer in 80373fc's timeline, 0.93 before its RoPE change shortened the
    // epilogue: the release then waited on the K/V loads instead).
    KvRegs<HD> pre = kv_none<HD>();
    const bool preload = (a.stages & kStAttn) && (a.ring_mode & kRingPreloadKv) && b < items;
    if constexpr (HC) {
      hc_arrive(a, ++k, r);
      if (preload) kv_issue<HD>(a, l, b, pre, true);
    } else if constexpr (GO) {
      if (!grid_barrier_then(a, ++k, l, 0, &s_stop, [&] {
            hold_open(st + 2, [&] {  // hold: the ring may refill up to O
              if (preload) kv_issue<HD>(a, l, b, pre, true);
            });
          })) {
        q.drain();
        return;
      }
    } else if (!grid_barrier_then(a, ++k, l, 0, &s_stop, [&] {
                 if (preload) kv_issue<HD>(a, l, b, pre, true);
               })) {
      q.drain();
      return;
    }
    if (a.stages & kStAttn)
      for (int item = b; item < items; item += nb) {
        if constexpr (HC) {
          if (!hc_head_ready(a, l, item / a.chunks, &s_stop)) {
            q.drain();
            return;
          }
        }
        attention_item<HD>(a, l, item, sm, pre, item == b ? tl_attn(a.layers, l) : -1);
        pre = kv_none<HD>();  // a block's later items (more items than blocks) load as usual
        if constexpr (GO) {
          // The item's partials are stored (attention_item ends with a block barrier): count it,
          // with release, for the blocks whose O inputs lie in this KV head.
          if (threadIdx.x == 0) {
            scope_release_increment_u64(a.att_count + item / a.chunks);
            tl_stamp(a, 2 * kBarriersPerLayer * a.layers + 3 + 2 * l);
          }
        } else {
          const bool combine = last_to_finish(a.att_count + item / a.chunks, a.chunks, &s_last);
          if (threadIdx.x == 0) tl_stamp(a, 2 * kBarriersPerLayer * a.layers + 3 + 2 * l + (combine ? 1 : 0));
          if (combine) attention_combine<HD>(a, item / a.chunks);
        }
      }
    if constexpr (GO) {
      if constexpr (HC) {  // the whole grid's QKV stage (its reads of the residual) before O adds to it
        if (!hc_grid_wait(a, k, l, &s_stop)) {
          q.drain();
          return;
        }
      }
      barrier_pass(a, ++k);  // counted, so the later barriers' generations hold; nobody waits here
      r = ring_stage<GO>(a, st + 2);
      if (r.W) {
        // hs: the group's kG HD inputs, then the warps' partial sums (kRingWarps x tile floats)
        if (!group_o_inputs<HD>(a, l, r.np > 0, sm, &s_stop)) {
          q.drain();
          return;
        }
        if constexpr (go_one_width(HD))
          ring_o_group<go_cpl(HD)>(q, r, sm, sm + kG * HD, tl_gemv(a.layers, st + 3));
        else if (r.tile == 4 * kLanes)
          ring_o_group<4>(q, r, sm, sm + kG * HD, tl_gemv(a.layers, st + 3));
        else
          ring_o_group<8>(q, r, sm, sm + kG * HD, tl_gemv(a.layers, st + 3));
      }
    } else {
      if (!sync_or_drain(l, 1)) return;
      r = ring_stage(a, st + 2);
      if (r.W) {
        stage_copy(sm, a.attn, a.q_dim);
        ring_gemv(q, r, sm, tl_gemv(a.layers, st + 3), add_resid);
      }
    }
    if (!sync_gain_or_drain(l, 2, lw + a.off.mlp_gain)) return;
    r = ring_stage(a, st + 3);
    if (a.ring_mode & kRingFusedMlp) {
      // h stays in this block's shared memory (hs, after gate/up's x and partials: host
      // contract) and the down projection follows with no grid barrier (ring_down_fused).
      float* hs = sm + a.mlp;
      const RingStage rd = ring_stage(a, st + 4);
      if (r.W) {
        stage_rmsnorm(sm, red, a.resid, nullptr, lw + a.off.mlp_gain, H, a.eps, &gpre);
        ring_gemv(q, r, sm, tl_gemv(a.layers, st + 4), [&](int row, float s0, float s1) { hs[row / 2 - r.p0] = silu(s0) * s1; });
      } else
        for (int t = threadIdx.x; t < rd.np; t += blockDim.x) hs[t] = 0.f;  // timing with gate/up masked off
      barrier_pass(a, ++k);
      if (rd.W) {
        if constexpr (GO && go_one_width(HD))  // one width compiled in: see go_cpl
          ring_down_fused<go_cpl(HD)>(q, rd, hs, tl_gemv(a.layers, st + 5));
        else if (rd.tile == 4 * kLanes)
          ring_down_fused<4>(q, rd, hs, tl_gemv(a.layers, st + 5));
        else
          ring_down_fused<8>(q, rd, hs, tl_gemv(a.layers, st + 5));
      }
    } else {
      if (r.W) {
        stage_rmsnorm(sm, red, a.resid, nullptr, lw + a.off.mlp_gain, H, a.eps, &gpre);
        ring_gemv(q, r, sm, tl_gemv(a.layers, st + 4), [&](int row, float s0, float s1) { a.h[row / 2] = silu(s0) * s1; });
      }
      if (!sync_or_drain(l, 3)) return;
      r = ring_stage(a, st + 4);
      if (r.W) {
        stage_copy(sm, a.h, a.mlp);
        ring_gemv(q, r, sm, tl_gemv(a.layers, st + 5), add_resid);
      }
    }
    // The next norm's gain: the next layer's attention norm, or the final norm.
    if (!sync_gain_or_drain(l, 4, l + 1 < a.layers ? lw + a.off.size + a.off.attn_gain : a.final_gain)) return;
  }
  const RingStage r = ring_stage(a, kBarriersPerLayer * a.layers);
  if (r.W) {
    stage_rmsnorm(sm, red, a.resid, nullptr, a.final_gain, H, a.eps, &gpre);
    float bv = -INFINITY;
    int bi = 0x7fffffff;
    ring_gemv(q, r, sm, tl_gemv(a.layers, kBarriersPerLayer * a.layers + 1), [&](int row, float s0, float s1) {
      *reinterpret_cast<float2*>(a.logits + row) = make_float2(s0, s1);
      keep_better(bv, bi, s0, row);
      keep_better(bv, bi, s1, row + 1);
    });
    warp_argmax(bv, bi);
    if (threadIdx.x % kLanes == 0) {
      s_bv[warp] = bv;
      s_bi[warp] = bi;
    }
    block_argmax_finish(a, s_bv, s_bi, kRingWarps, &s_last);
  }
  if (threadIdx.x == 0) tl_stamp(a, 2 * kBarriersPerLayer * a.layers + 2);
#else
  (void)a;
#endif
}

extern "C" __global__ void __launch_bounds__(kRingThreads, 1) decode_ring_hd64(DecodeArgs a) { ring_body<64, false>(a); }
extern "C" __global__ void __launch_bounds__(kRingThreads, 1) decode_ring_hd128(DecodeArgs a) { ring_body<128, false>(a); }
extern "C" __global__ void __launch_bounds__(kRingThreads, 1) decode_ring_go_hd64(DecodeArgs a) { ring_body<64, true>(a); }
extern "C" __global__ void __launch_bounds__(kRingThreads, 1) decode_ring_go_hd128(DecodeArgs a) { ring_body<128, true>(a); }
extern "C" __global__ void __launch_bounds__(kRingThreads, 1) decode_ring_hc_hd64(DecodeArgs a) { ring_body<64, true, true>(a); }
extern "C" __global__ void __launch_bounds__(kRingThreads, 1) decode_ring_hc_hd128(DecodeArgs a) { ring_body<128, true, true>(a); }

// Initialisation kernels (outside every timing): norm gains near 1, NaN into one cache slot, the
// fused MLP's tiled copy of a down projection (the same bits, reordered: down_tile_index).
__global__ void tile_down_kernel(__half* dst, const __half* src, int hidden, int mlp) {
  const size_t n = static_cast<size_t>(hidden) * mlp;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[down_tile_index(hidden, mlp, static_cast<int>(i / mlp), static_cast<int>(i % mlp))] = src[i];
}
// The group-O mode's copy of an O projection (src row-major [hidden][q_dim]), in down_t's layout
// (warp w's section of mlp rows of tile = hidden / 16 halves): block b = (group g = b / 16, output
// tile t = b % 16), warp w, input jl < per = C / 16 (C = 4 hd inputs a group) sits at row
// b per + jl of warp w's section, holding W_O[t tile + c][g C + w per + jl] at column c.
__global__ void tile_o_kernel(__half* dst, const __half* src, int hidden, int mlp, int q_dim, int C) {
  const int tile = hidden / kRingWarps, per = C / kRingWarps;
  const size_t n = static_cast<size_t>(hidden) * q_dim;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const int row = static_cast<int>(i / q_dim), col = static_cast<int>(i % q_dim);  // W_O[row][col]
    const int g = col / C, w = col % C / per, jl = col % per, t = row / tile, c = row % tile;
    const int b = g * kRingWarps + t;
    dst[(static_cast<size_t>(w) * mlp + static_cast<size_t>(b) * per + jl) * tile + c] = src[i];
  }
}
__global__ void fill_gain_kernel(__half* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = __float2half(1.0f + 0.1f * uniform_pm1(seed, i));
}
__global__ void poison_position_kernel(__half* kc, __half* vc, size_t rows, int cap, int pos, int hd) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // over rows x hd
  if (i >= rows * hd) return;
  const size_t at = (i / hd * cap + pos) * hd + i % hd;
  __half_raw nan_bits;
  nan_bits.x = 0xFFFF;
  kc[at] = __half(nan_bits);
  vc[at] = __half(nan_bits);
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------
namespace {

struct Shape {
  const char* flag;  // --model value
  const char* key;   // summary prefix
  const char* name;
  int layers, hidden, heads, kv_heads, hd, mlp, vocab;
  double rope_theta;
};
const Shape kShapes[] = {
    {"1b", "llama_3_2_1b", "Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, 128256, 500000.0},
    {"8b", "llama_3_1_8b", "Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256, 500000.0},
};
constexpr int kCachedPositions = 1024;  // the new token sits at position 1024: 1025 attended
constexpr float kEps = 1e-5f;
constexpr double kTolerance = 1e-2;     // relative L2 of logits (and of the checked intermediates)
const int kPrefetchSweepKb[] = {0, 32, 64, 128};
std::string ring_mode_name(int mode) {
  return std::string((mode & kRingBalanced) ? "balanced" : "pairs") + ((mode & kRingPreloadKv) ? "+kv_preload" : "") +
         ((mode & kRingFusedMlp) ? "+fused_mlp" : "") + ((mode & kRingGroupO) ? "+group_o" : "") +
         ((mode & kRingHeadCount) ? "+head_count" : "") + ((mode & kRingHold) ? "+hold" : "");
}

LayerLayout layout_of(const Shape& s) {
  const size_t H = s.hidden, q = static_cast<size_t>(s.heads) * s.hd, kv = static_cast<size_t>(s.kv_heads) * s.hd;
  LayerLayout l{};
  size_t o = 0;
  l.attn_gain = o, o += H;
  l.qkv = o, o += (q + 2 * kv) * H;
  l.o = o, o += H * q;
  l.mlp_gain = o, o += H;
  l.gate_up = o, o += 2 * static_cast<size_t>(s.mlp) * H;  // rows interleaved: gate_i, up_i
  l.down = o, o += H * s.mlp;
  l.size = o;
  return l;
}

// Bytes one step reads from memory, per stage: the one declaration every floor, GB/s and
// fraction derives from. Weights (every matrix and gain once) and the K/V of 1025 positions;
// activations (a few KB, L2-resident) are not counted. Napkin, 1B: 16 x 123.8 MB + 525.4 MB of
// logits matrix + 33.6 MB of K/V = 2.54 GB -> ~540 us at 4.7 TB/s.
struct StageBytes {
  double qkv, attn, o, gate_up, down, logits;
  double total() const { return qkv + attn + o + gate_up + down + logits; }
};
StageBytes stage_bytes(const Shape& s) {
  const double L = s.layers, H = s.hidden, q = double(s.heads) * s.hd, kv = double(s.kv_heads) * s.hd;
  StageBytes b;
  b.qkv = L * 2 * ((q + 2 * kv) * H + H);
  b.attn = L * 2 * 2 * kv * (kCachedPositions + 1);
  b.o = L * 2 * H * q;
  b.gate_up = L * 2 * (2.0 * s.mlp * H + H);
  b.down = L * 2 * H * s.mlp;
  b.logits = 2 * (double(s.vocab) * H + H + H);  // the matrix, the final gain, the embedding row
  return b;
}

// FP16 bits to double, decoded by hand (no reliance on a host half type).
double half_bits_to_double(uint16_t h) {
  const int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 0) v = std::ldexp(static_cast<double>(m), -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = std::ldexp(static_cast<double>(1024 + m), e - 25);
  return sign ? -v : v;
}
const std::vector<double>& half_table() {
  static const std::vector<double> t = [] {
    std::vector<double> v(65536);
    for (int i = 0; i < 65536; ++i) v[i] = half_bits_to_double(static_cast<uint16_t>(i));
    return v;
  }();
  return t;
}

// fn(begin, end) over [0, n) on every host core.
void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn) {
  const size_t threads = std::max<size_t>(1, std::min<size_t>(64, std::thread::hardware_concurrency()));
  const size_t per = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads && t * per < n; ++t) pool.emplace_back(fn, t * per, std::min(n, (t + 1) * per));
  for (auto& th : pool) th.join();
}

// Progress on stderr, with the time since start.
void say(const Experiment& ex, const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[06-decode %.0fs] %s\n", ex.elapsed_s(), buf);
}

template <class T>
T* device_alloc(size_t count) {
  T* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, count * sizeof(T)));
  return p;
}

// One model on the device: weights from the seed, the cache, activations, sync state.
class Model {
 public:
  Model(const Experiment& ex, const Shape& s, uint64_t seed) : shape(s), seed(seed) {
    off = layout_of(s);
    q_dim = s.heads * s.hd;
    kv_dim = s.kv_heads * s.hd;
    cap = kCachedPositions + 1;
    pos = kCachedPositions;
    chunks = std::max(9, std::min(64, ex.sm_count() / s.kv_heads));  // 1025 / chunks <= kMaxChunk
    items = s.kv_heads * chunks;
    token = static_cast<int>(hash64(seed, 0xC0FFEE) % static_cast<uint64_t>(s.vocab));
    blocks = ex.sm_count();
    const size_t L = s.layers, H = s.hidden;
    cache_elems = L * s.kv_heads * cap * s.hd;
    {  // a model cannot shrink to fit: refuse clearly rather than fail inside cudaMalloc
      size_t free_b = 0, total_b = 0;
      CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
      // (the ring engine's tiled copies of every down and O projection included)
      const double need = 2.0 * (static_cast<double>(L) * (off.size + 2 * H * s.mlp) + static_cast<double>(s.vocab) * H + 2.0 * cache_elems);
      if (need + double(size_t(1) << 30) > static_cast<double>(free_b))
        FAIL("%s: its weights and KV cache need %.2f GB and %.2f GB is free (1 GB kept in reserve): refusing to run it "
             "(run the other model with --model)", s.name, need / 1e9, free_b / 1e9);
    }
    layer_w = device_alloc<__half>(L * off.size);
    down_t = device_alloc<__half>(L * H * s.mlp);
    wo_t = device_alloc<__half>(L * H * s.mlp);
    emb = device_alloc<__half>(static_cast<size_t>(s.vocab) * H);
    final_gain = device_alloc<__half>(H);
    kc = device_alloc<__half>(cache_elems);
    vc = device_alloc<__half>(cache_elems);
    rope = device_alloc<float>(s.hd);
    resid = device_alloc<float>(H);
    xn = device_alloc<float>(H);
    qkv = device_alloc<float>(q_dim + 2 * kv_dim);
    q = device_alloc<float>(q_dim);
    attn = device_alloc<float>(q_dim);
    h = device_alloc<float>(s.mlp);
    logits = device_alloc<float>(s.vocab);
    part_o = device_alloc<float>(static_cast<size_t>(items) * kG * s.hd);
    part_ml = device_alloc<float>(static_cast<size_t>(items) * 2 * kG);
    token_out = device_alloc<int>(1);
    best_out = device_alloc<float>(1);
    block_best = device_alloc<int2>(std::max(blocks, 1024));
    counters = device_alloc<unsigned long long>(2 + 2 * s.kv_heads);  // bar, arg_count, att_count and the QKV counts per KV head
    err = device_alloc<SpinError>(1);
    abort_flag = device_alloc<unsigned>(1);
    CHECK_CUDA(cudaMemset(counters, 0, (2 + 2 * s.kv_heads) * sizeof(unsigned long long)));
    CHECK_CUDA(cudaMemset(err, 0, sizeof(SpinError)));
    CHECK_CUDA(cudaMemset(abort_flag, 0, sizeof(unsigned)));
    // Weights ~U(-1,1)/sqrt(fan_in) so every activation stays O(1); gains 1 +- 0.1.
    auto tensor_seed = [&](uint64_t tag) { return hash64(seed, tag); };
    for (size_t l = 0; l < L; ++l) {
      __half* w = layer_w + l * off.size;
      const uint64_t t = 1000 * (l + 1);
      fill_gain_kernel<<<64, 256>>>(w + off.attn_gain, H, tensor_seed(t + 1));
      fill_random_half(w + off.qkv, (q_dim + 2 * kv_dim) * H, tensor_seed(t + 2), 1.0f / std::sqrt(float(H)));
      fill_random_half(w + off.o, H * q_dim, tensor_seed(t + 3), 1.0f / std::sqrt(float(q_dim)));
      fill_gain_kernel<<<64, 256>>>(w + off.mlp_gain, H, tensor_seed(t + 4));
      fill_random_half(w + off.gate_up, 2 * H * s.mlp, tensor_seed(t + 5), 1.0f / std::sqrt(float(H)));
      fill_random_half(w + off.down, H * s.mlp, tensor_seed(t + 6), 1.0f / std::sqrt(float(s.mlp)));
      if (H % kRingWarps == 0) {
        tile_down_kernel<<<1024, 256>>>(down_t + l * H * s.mlp, w + off.down, s.hidden, s.mlp);
        if (q_dim <= s.mlp && (kG * s.hd) % kRingWarps == 0)
          tile_o_kernel<<<1024, 256>>>(wo_t + l * H * s.mlp, w + off.o, s.hidden, s.mlp, q_dim, kG * s.hd);
      }
    }
    fill_random_half(emb, static_cast<size_t>(s.vocab) * H, tensor_seed(7), 1.0f / std::sqrt(float(H)));
    fill_gain_kernel<<<64, 256>>>(final_gain, H, tensor_seed(8));
    fill_random_half(kc, cache_elems, tensor_seed(9), 1.0f);
    fill_random_half(vc, cache_elems, tensor_seed(10), 1.0f);
    CHECK_LAUNCH();
    std::vector<float> table(s.hd);
    for (int j = 0; j < s.hd / 2; ++j) {
      const double ang = pos * std::pow(s.rope_theta, -2.0 * j / s.hd);
      table[2 * j] = static_cast<float>(std::cos(ang));
      table[2 * j + 1] = static_cast<float>(std::sin(ang));
    }
    CHECK_CUDA(cudaMemcpy(rope, table.data(), s.hd * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  ~Model() {
    for (void* p : std::initializer_list<void*>{layer_w, down_t, wo_t, emb, final_gain, kc, vc, rope, resid, xn, qkv, q, attn, h, logits,
                                                part_o, part_ml, token_out, best_out, block_best, counters, err, abort_flag})
      (void)cudaFree(p);
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  DecodeArgs args(unsigned long long timeout_ticks) const {
    DecodeArgs a{};
    a.layers = shape.layers;
    a.hidden = shape.hidden;
    a.q_dim = q_dim;
    a.kv_dim = kv_dim;
    a.hd = shape.hd;
    a.mlp = shape.mlp;
    a.vocab = shape.vocab;
    a.cap = cap;
    a.pos = pos;
    a.chunks = chunks;
    a.token = token;
    a.eps = kEps;
    a.off = off;
    a.layer_w = layer_w;
    a.emb = emb;
    a.final_gain = final_gain;
    a.down_t = down_t;
    a.kc = kc;
    a.vc = vc;
    a.rope = rope;
    a.resid = resid;
    a.xn = xn;
    a.qkv = qkv;
    a.q = q;
    a.attn = attn;
    a.h = h;
    a.logits = logits;
    a.part_o = part_o;
    a.part_ml = part_ml;
    a.token_out = token_out;
    a.best_out = best_out;
    a.block_best = block_best;
    a.bar = counters;
    a.arg_count = counters + 1;
    a.att_count = counters + 2;
    a.err = err;
    a.abort_flag = abort_flag;
    a.timeout_ticks = timeout_ticks;
    a.stages = kStAll;
    return a;
  }
  // Every output a step must write, NaN (or -1) before a validation step.
  void poison(cudaStream_t s) const {
    const Shape& m = shape;
    poison_nan(resid, m.hidden * sizeof(float), s);
    poison_nan(xn, m.hidden * sizeof(float), s);
    poison_nan(qkv, (q_dim + 2 * kv_dim) * sizeof(float), s);
    poison_nan(q, q_dim * sizeof(float), s);
    poison_nan(attn, q_dim * sizeof(float), s);
    poison_nan(h, m.mlp * sizeof(float), s);
    poison_nan(logits, m.vocab * sizeof(float), s);
    poison_nan(part_o, static_cast<size_t>(items) * kG * m.hd * sizeof(float), s);
    poison_nan(token_out, sizeof(int), s);
    const size_t rows = static_cast<size_t>(m.layers) * m.kv_heads;
    poison_position_kernel<<<static_cast<unsigned>((rows * m.hd + 255) / 256), 256, 0, s>>>(kc, vc, rows, cap, pos, m.hd);
    CHECK_LAUNCH();
  }

  const Shape& shape;
  uint64_t seed;
  LayerLayout off;
  int q_dim, kv_dim, cap, pos, chunks, items, token, blocks;
  size_t cache_elems;
  __half *layer_w, *down_t, *wo_t, *emb, *final_gain, *kc, *vc;
  float *rope, *resid, *xn, *qkv, *q, *attn, *h, *logits, *part_o, *part_ml, *best_out;
  int* token_out;
  int2* block_best;
  unsigned long long* counters;
  SpinError* err;
  unsigned* abort_flag;
  mutable unsigned long long barrier_gen = 0;  // grid barriers completed by earlier launches (the counter never resets)
  mutable unsigned long long att_layers = 0;   // attention layers run by earlier persistent launches (att_count's base)
  mutable unsigned long long qkv_layers = 0;   // QKV layers counted by earlier head-count launches (the QKV counts' base)
};

// ---------------------------------------------------------------------------------------------
// The CPU reference: the same step in double precision, on every host core.
// ---------------------------------------------------------------------------------------------
struct Reference {
  std::vector<double> logits, attn_last, resid_final;
  int argmax = -1;
  double top1 = 0, top2 = 0;
  double seconds = 0;
};

template <class T>
void to_host(std::vector<T>& dst, const void* src, size_t count) {
  dst.resize(count);
  CHECK_CUDA(cudaMemcpy(dst.data(), src, count * sizeof(T), cudaMemcpyDeviceToHost));
}

Reference cpu_reference(const Model& md) {
  const auto t0 = std::chrono::steady_clock::now();
  const Shape& s = md.shape;
  const std::vector<double>& f16 = half_table();
  const int H = s.hidden, qd = md.q_dim, kvd = md.kv_dim, hd = s.hd, T = md.pos + 1;
  std::vector<uint16_t> w, emb, fgain, kc, vc;  // the device's own bits
  to_host(emb, md.emb, static_cast<size_t>(s.vocab) * H);
  to_host(fgain, md.final_gain, H);
  to_host(kc, md.kc, md.cache_elems);
  to_host(vc, md.vc, md.cache_elems);
  std::vector<double> x(H), xn(H), qkv(qd + 2 * kvd), att(qd), tmp(std::max(H, 2 * s.mlp)), act(s.mlp);
  for (int i = 0; i < H; ++i) x[i] = f16[emb[static_cast<size_t>(md.token) * H + i]];
  auto rmsnorm = [&](const std::vector<double>& v, const uint16_t* gain, std::vector<double>& out) {
    double ss = 0;
    for (int i = 0; i < H; ++i) ss += v[i] * v[i];
    const double inv = 1.0 / std::sqrt(ss / H + static_cast<double>(kEps));
    for (int i = 0; i < H; ++i) out[i] = v[i] * inv * f16[gain[i]];
  };
  auto gemv = [&](const uint16_t* W, int rows, int K, const double* in, double* out) {
    parallel_for(rows, [&](size_t r0, size_t r1) {
      for (size_t r = r0; r < r1; ++r) {
        const uint16_t* row = W + r * K;
        double a0 = 0, a1 = 0;
        for (int k = 0; k < K; k += 2) {
          a0 += f16[row[k]] * in[k];
          a1 += f16[row[k + 1]] * in[k + 1];
        }
        out[r] = a0 + a1;
      }
    });
  };
  const int groups = s.heads / s.kv_heads;
  for (int l = 0; l < s.layers; ++l) {
    to_host(w, md.layer_w + static_cast<size_t>(l) * md.off.size, md.off.size);
    rmsnorm(x, w.data() + md.off.attn_gain, xn);
    gemv(w.data() + md.off.qkv, qd + 2 * kvd, H, xn.data(), qkv.data());
    for (int r = 0; r < qd + kvd; r += 2) {  // RoPE on q and k, pairs (2j, 2j+1) of each head
      const int j = (r % hd) / 2;
      const double ang = md.pos * std::pow(s.rope_theta, -2.0 * j / hd), c = std::cos(ang), sn = std::sin(ang);
      const double a = qkv[r], b = qkv[r + 1];
      qkv[r] = a * c - b * sn;
      qkv[r + 1] = a * sn + b * c;
    }
    parallel_for(s.heads, [&](size_t h0, size_t h1) {
      std::vector<double> sc(T);
      for (size_t hh = h0; hh < h1; ++hh) {
        const int kvh = static_cast<int>(hh) / groups;
        const size_t base = (static_cast<size_t>(l) * s.kv_heads + kvh) * md.cap * hd;
        const double* qv = qkv.data() + hh * hd;
        const double* knew = qkv.data() + qd + kvh * hd;
        const double* vnew = qkv.data() + qd + kvd + kvh * hd;
        double mx = -INFINITY;
        for (int t = 0; t < T; ++t) {
          double d = 0;
          for (int e = 0; e < hd; ++e) d += qv[e] * (t < md.pos ? f16[kc[base + static_cast<size_t>(t) * hd + e]] : knew[e]);
          sc[t] = d / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, sc[t]);
        }
        double sum = 0;
        for (int t = 0; t < T; ++t) sum += (sc[t] = std::exp(sc[t] - mx));
        for (int e = 0; e < hd; ++e) {
          double o = 0;
          for (int t = 0; t < T; ++t) o += sc[t] * (t < md.pos ? f16[vc[base + static_cast<size_t>(t) * hd + e]] : vnew[e]);
          att[hh * hd + e] = o / sum;
        }
      }
    });
    gemv(w.data() + md.off.o, H, qd, att.data(), tmp.data());
    for (int i = 0; i < H; ++i) x[i] += tmp[i];
    rmsnorm(x, w.data() + md.off.mlp_gain, xn);
    gemv(w.data() + md.off.gate_up, 2 * s.mlp, H, xn.data(), tmp.data());
    for (int i = 0; i < s.mlp; ++i) act[i] = tmp[2 * i] / (1.0 + std::exp(-tmp[2 * i])) * tmp[2 * i + 1];
    gemv(w.data() + md.off.down, H, s.mlp, act.data(), tmp.data());
    for (int i = 0; i < H; ++i) x[i] += tmp[i];
  }
  Reference ref;
  ref.attn_last = att;
  ref.resid_final = x;
  rmsnorm(x, fgain.data(), xn);
  ref.logits.resize(s.vocab);
  gemv(emb.data(), s.vocab, H, xn.data(), ref.logits.data());
  ref.argmax = 0;
  for (int i = 1; i < s.vocab; ++i)
    if (ref.logits[i] > ref.logits[ref.argmax]) ref.argmax = i;
  ref.top1 = ref.logits[ref.argmax];
  ref.top2 = -INFINITY;
  for (int i = 0; i < s.vocab; ++i)
    if (i != ref.argmax) ref.top2 = std::max(ref.top2, ref.logits[i]);
  ref.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return ref;
}

// ---------------------------------------------------------------------------------------------
// Engines
// ---------------------------------------------------------------------------------------------
enum OpKind { kOpEmbed, kOpNorm, kOpQkv, kOpRope, kOpAttn, kOpCombine, kOpO, kOpGateUp, kOpDown, kOpLogits, kOpArgmax, kOpKinds };
const char* const kOpNames[kOpKinds] = {"embed", "rmsnorm", "qkv", "rope_append", "attention", "combine",
                                        "o_proj_residual", "gate_up_silu", "down_residual", "logits", "argmax"};

// One launch, plain (<<<>>>) or with the programmatic-stream-serialisation attribute (sm_90,
// common/chain.h's chain_launch); on HIP always plain (the host never asks for PDL there).
template <class... P, class... A>
void launch_op(void (*plain)(P...), void (*pdl_fn)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t s, bool pdl,
               A... args) {
#if defined(PORT_HIP)
  pdl = false;
#endif
  chain_launch(pdl, pdl ? pdl_fn : plain, grid, block, smem, s, static_cast<P>(args)...);
  CHECK_LAUNCH();
}

struct Op {
  int kind;
  std::function<void(cudaStream_t, bool)> go;
};

typedef void (*GemvFn)(const __half*, int, int, const float*, float*);

// The kernel-per-operation step: 4 + 9 per layer launches.
std::vector<Op> kernel_per_op(const Model& m, const DecodeArgs& a, int sms) {
  const Shape& s = m.shape;
  const int H = s.hidden;
  std::vector<Op> ops;
  auto gemv = [&](int kind, GemvFn plain, GemvFn pdl, const __half* W, int rows, int K, const float* x, float* y) {
    const size_t smem = static_cast<size_t>(K) * sizeof(float);
    int per_sm = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(plain), kGemvThreads, smem));
    const int warps = kGemvThreads / PORT_HOST_WARP_SIZE;
    const int grid = std::max(1, std::min((rows / 2 + warps - 1) / warps, std::max(1, per_sm) * sms));  // one wave
    ops.push_back({kind, [=](cudaStream_t st, bool p) { launch_op(plain, pdl, dim3(grid), dim3(kGemvThreads), smem, st, p, W, rows, K, x, y); }});
  };
  auto norm = [&](const float* in, const __half* gain, float* out) {
    const size_t smem = static_cast<size_t>(H) * sizeof(float);
    ops.push_back({kOpNorm, [=](cudaStream_t st, bool p) {
                     launch_op(op_rmsnorm, op_rmsnorm_pdl, dim3(1), dim3(kNormThreads), smem, st, p, in, gain, out, H, kEps);
                   }});
  };
  const bool hd64 = s.hd == 64;
  const int items = m.items, kv_heads = s.kv_heads;
  const size_t attn_smem = attn_smem_floats(s.hd, kAttnThreads) * sizeof(float);
  ops.push_back({kOpEmbed, [=](cudaStream_t st, bool p) { launch_op(op_embed, op_embed_pdl, dim3((H + 255) / 256), dim3(256), 0, st, p, a); }});
  for (int l = 0; l < s.layers; ++l) {
    const __half* lw = m.layer_w + static_cast<size_t>(l) * m.off.size;
    norm(m.resid, lw + m.off.attn_gain, m.xn);
    gemv(kOpQkv, op_gemv_store, op_gemv_store_pdl, lw + m.off.qkv, m.q_dim + 2 * m.kv_dim, H, m.xn, m.qkv);
    const int pairs = (m.q_dim + 2 * m.kv_dim) / 2;
    ops.push_back({kOpRope, [=](cudaStream_t st, bool p) {
                     launch_op(op_rope_append, op_rope_append_pdl, dim3((pairs + 255) / 256), dim3(256), 0, st, p, a, l);
                   }});
    ops.push_back({kOpAttn, [=](cudaStream_t st, bool p) {
                     if (hd64) launch_op(op_attention_hd64, op_attention_hd64_pdl, dim3(items), dim3(kAttnThreads), attn_smem, st, p, a, l);
                     else launch_op(op_attention_hd128, op_attention_hd128_pdl, dim3(items), dim3(kAttnThreads), attn_smem, st, p, a, l);
                   }});
    ops.push_back({kOpCombine, [=](cudaStream_t st, bool p) {
                     if (hd64) launch_op(op_combine_hd64, op_combine_hd64_pdl, dim3(kv_heads), dim3(kG * 64), 0, st, p, a);
                     else launch_op(op_combine_hd128, op_combine_hd128_pdl, dim3(kv_heads), dim3(kG * 128), 0, st, p, a);
                   }});
    gemv(kOpO, op_gemv_add, op_gemv_add_pdl, lw + m.off.o, H, m.q_dim, m.attn, m.resid);
    norm(m.resid, lw + m.off.mlp_gain, m.xn);
    gemv(kOpGateUp, op_gemv_silu, op_gemv_silu_pdl, lw + m.off.gate_up, 2 * s.mlp, H, m.xn, m.h);
    gemv(kOpDown, op_gemv_add, op_gemv_add_pdl, lw + m.off.down, H, s.mlp, m.h, m.resid);
  }
  norm(m.resid, m.final_gain, m.xn);
  gemv(kOpLogits, op_gemv_store, op_gemv_store_pdl, m.emb, s.vocab, H, m.xn, m.logits);
  ops.push_back({kOpArgmax, [=](cudaStream_t st, bool p) { launch_op(op_argmax, op_argmax_pdl, dim3(1), dim3(1024), 0, st, p, a); }});
  return ops;
}

// The persistent engines: grid = one block per SM, proven co-resident before every launch.
// ring = false: weights through registers (decode_persistent_*); true: through a shared-memory
// ring per warp of as many 4 KB slots as fit beside x (decode_ring_*, sm_90 builds only).
// The ring engine's stage kinds for a launch (ring_stage reads them): what each GEMV stage
// streams, given the stages enabled and whether down is fused (RingMode).
void set_ring_kinds(DecodeArgs& a, const Model& m, int stages, int mode) {
  const Shape& s = m.shape;
  const int H = s.hidden;
  auto kind = [&](int bit, const __half* W, size_t stride, int K, int rows) {
    return RingKind{(stages & bit) ? W : nullptr, stride, K, rows / 2, K / kRingSeg, 0, 0};
  };
  const size_t Ls = m.off.size;
  a.ring_kinds[0] = kind(kStQkv, m.layer_w + m.off.qkv, Ls, H, m.q_dim + 2 * m.kv_dim);
  a.ring_kinds[1] = RingKind{nullptr, 0, 0, 0, 0, 0, 0};  // attention
  a.ring_kinds[2] = (mode & kRingGroupO)
                        // by KV head group and output tile (ring_stage<true>): rows of wo_t (tile_o_kernel)
                        ? RingKind{(stages & kStO) ? m.wo_t : nullptr, static_cast<size_t>(H) * s.mlp, H, 0, 1,
                                   H / kRingWarps, 0}
                        : kind(kStO, m.layer_w + m.off.o, Ls, m.q_dim, H);
  a.ring_kinds[3] = kind(kStGateUp, m.layer_w + m.off.gate_up, Ls, H, 2 * s.mlp);
  a.ring_kinds[4] = (mode & kRingFusedMlp)
                        // the block's own gate/up pairs (stage st - 1's ranges): rows of down_t
                        ? RingKind{(stages & kStDown) ? m.down_t : nullptr, static_cast<size_t>(H) * s.mlp, H, s.mlp, 1,
                                   H / kRingWarps, -1}
                        : kind(kStDown, m.layer_w + m.off.down, Ls, s.mlp, H);
  a.ring_kinds[5] = kind(kStLogits, m.emb, 0, H, s.vocab);
}

class Persistent {
 public:
  // ring_slots: slots per warp of the ring engine (0: kRingDefaultSlots, at most as many as fit).
  Persistent(const Model& m, const DecodeArgs& base, const Experiment& ex, bool ring, int ring_slots = 0)
      : m_(m), base_(base), ring_(ring) {
    const bool hd64 = m.shape.hd == 64;
    fn_ = ring ? (hd64 ? reinterpret_cast<const void*>(decode_ring_hd64) : reinterpret_cast<const void*>(decode_ring_hd128))
               : (hd64 ? reinterpret_cast<const void*>(decode_persistent_hd64)
                       : reinterpret_cast<const void*>(decode_persistent_hd128));
    fn_go_ = ring ? (hd64 ? reinterpret_cast<const void*>(decode_ring_go_hd64) : reinterpret_cast<const void*>(decode_ring_go_hd128))
                  : nullptr;
    fn_hc_ = ring ? (hd64 ? reinterpret_cast<const void*>(decode_ring_hc_hd64) : reinterpret_cast<const void*>(decode_ring_hc_hd128))
                  : nullptr;
    threads_ = ring ? kRingThreads : kPersistentThreads;
    const int maxk = std::max({m.shape.hidden, m.q_dim, m.shape.mlp});
    smem_ = std::max<size_t>(static_cast<size_t>(maxk) * sizeof(float), attn_smem_floats(m.shape.hd, threads_) * sizeof(float));
    blocks_ = ex.sm_count();
    int coop = 0, dev = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    if (!coop) FAIL("refusing the persistent engine: device %d has no cooperative launch, so %d blocks cannot be proven co-resident", dev, blocks_);
    if (ring) {
#if defined(PORT_HIP)
      FAIL("refusing the ring engine: it needs the sm_90 bulk-copy engine");
#else
      if (m.shape.hd > kMaxHd) FAIL("refusing the ring engine: head dimension %d above its RoPE table's %d", m.shape.hd, kMaxHd);
      // Each GEMV stage keeps its block's partial sums (2 floats a piece) after its K floats of x.
      struct { int K, rows; } gemvs[] = {{m.shape.hidden, m.q_dim + 2 * m.kv_dim}, {m.q_dim, m.shape.hidden},
                                         {m.shape.hidden, 2 * m.shape.mlp}, {m.shape.mlp, m.shape.hidden},
                                         {m.shape.hidden, m.shape.vocab}};
      for (auto& g : gemvs) {
        if (g.K % kRingSeg != 0)
          FAIL("refusing the ring engine: a GEMV with K = %d does not cut into pieces of %d columns", g.K, kRingSeg);
        const size_t pairs = (g.rows / 2 + blocks_ - 1) / blocks_, pieces = pairs * (g.K / kRingSeg);
        const size_t need = (static_cast<size_t>(g.K) + 2 * pieces) * sizeof(float);
        if (need > smem_) smem_ = need;
      }
      // The fused MLP (kRingFusedMlp): a block's h after mlp floats, clear of gate/up's x and
      // partials; a lane's columns of a down tile 8 or 16 bytes (ring_down_fused<4 or 8>).
      const int H = m.shape.hidden, tile = H / kRingWarps;
      const size_t h_pairs = (m.shape.mlp + blocks_ - 1) / blocks_;
      fused_ok_ = H % kRingWarps == 0 && (tile == 4 * kLanes || tile == 8 * kLanes) &&
                  static_cast<size_t>(H) + 2 * h_pairs * (H / kRingSeg) <= static_cast<size_t>(m.shape.mlp);
      if (fused_ok_) smem_ = std::max(smem_, (static_cast<size_t>(m.shape.mlp) + h_pairs) * sizeof(float));
      // The group-O mode: O tiled like down_t (a tile per warp, its inputs as rows: at most mlp of
      // them), each block's inputs combined by kCombineChunks lanes each, one chunk a lane.
      const int C = kG * m.shape.hd;  // inputs of a KV head's group, split over the 16 warps
      go_ok_ = H % kRingWarps == 0 && (go_one_width(m.shape.hd) ? tile == go_cpl(m.shape.hd) * kLanes : tile == 4 * kLanes || tile == 8 * kLanes) && m.q_dim <= m.shape.mlp &&
               m.chunks <= kCombineChunks && m.q_dim % C == 0 && C % kRingWarps == 0 && C <= threads_ &&
               m.q_dim / C * kRingWarps <= blocks_ &&
               static_cast<size_t>(C + kRingWarps * tile) <= smem_ / sizeof(float);
      int optin = 0;
      CHECK_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
      cudaFuncAttributes fa{}, fa_go{}, fa_hc{};
      CHECK_CUDA(cudaFuncGetAttributes(&fa, fn_));
      CHECK_CUDA(cudaFuncGetAttributes(&fa_go, fn_go_));
      CHECK_CUDA(cudaFuncGetAttributes(&fa_hc, fn_hc_));
      fa.sharedSizeBytes = std::max({fa.sharedSizeBytes, fa_go.sharedSizeBytes, fa_hc.sharedSizeBytes});  // one slot count for the three kernels
      const long long per_slot = static_cast<long long>(kRingWarps) * kRingPieceBytes;  // one slot in every warp
      const long long room = static_cast<long long>(optin) - static_cast<long long>(fa.sharedSizeBytes) - static_cast<long long>(smem_);
      slots_ = static_cast<int>(std::min<long long>(kRingMaxSlots, std::max<long long>(0, room / per_slot)));
      if (slots_ < 2)
        FAIL("refusing the ring engine: %d B of shared memory per block leave room for %d slots per warp of %d B beside "
             "%zu B of activations (at least 2 needed)", optin, slots_, kRingPieceBytes, smem_);
      if (ring_slots > slots_) {
        std::fprintf(stderr, "error: --ring-slots %d: %d slots per warp of %d B fit beside %zu B of activations on this device\n",
                     ring_slots, slots_, kRingPieceBytes, smem_);
        std::exit(kExitUsage);
      }
      slots_ = ring_slots > 0 ? ring_slots : std::min(slots_, kRingDefaultSlots);
      smem_ += static_cast<size_t>(slots_) * per_slot;
#endif
    }
    CHECK_CUDA(cudaFuncSetAttribute(fn_, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)));
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_, fn_, threads_, smem_));
    if (go_ok_) {  // head_count's counts: every KV head's rows, over the blocks' QKV ranges of every layer
      const int pairs = (m.q_dim + 2 * m.kv_dim) / 2, want = (kG + 2) * m.shape.hd;
      for (int l = 0; l < m.shape.layers; ++l)
        for (int g = 0; g < m.shape.kv_heads; ++g) {
          int sum = 0;
          for (int b = 0; b < blocks_; ++b) {
            int p0 = 0, np = 0;
            pair_range(pairs, l * kBarriersPerLayer, b, blocks_, &p0, &np);
            sum += qkv_rows_of_head(base_, 2 * p0, 2 * (p0 + np), g);
          }
          if (sum != want)
            FAIL("head_count's accounting is wrong: KV head %d of layer %d gets %d QKV rows counted, its items wait for %d", g, l, sum, want);
        }
    }
    for (const void* fn : {fn_go_, fn_hc_}) {  // the group-O kernels must fit as the base one does, or their modes are not offered
      if (fn == nullptr) continue;
      int per_sm_go = 0;
      CHECK_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)));
      CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_go, fn, threads_, smem_));
      if (per_sm_go < 1) go_ok_ = false;
    }
    if (per_sm_ < 1)
      FAIL("refusing the persistent engine: the occupancy calculator fits %d blocks of %d threads with %zu B of shared "
           "memory per SM, so %d blocks (one per SM) cannot all be co-resident and a grid barrier would deadlock",
           per_sm_, threads_, smem_, blocks_);
  }
  void launch(cudaStream_t s, int stages, unsigned prefetch_bytes) {
    DecodeArgs a = base_;
    a.stages = stages;
    a.prefetch_bytes = prefetch_bytes;
    a.ring_slots = slots_;
    a.ring_mode = mode_;
    if (ring_) set_ring_kinds(a, m_, stages, mode_);
    a.gen0 = m_.barrier_gen;
    m_.barrier_gen += static_cast<unsigned long long>(kBarriersPerLayer) * m_.shape.layers;
    a.att0 = m_.att_layers;  // every persistent kernel with attention on counts chunks items per KV head per layer
    if (stages & kStAttn) m_.att_layers += static_cast<unsigned long long>(m_.shape.layers);
    a.qkv0 = m_.qkv_layers;  // only the head-count kernel counts QKV rows, when its QKV stage runs
    if ((mode_ & kRingHeadCount) && (stages & kStQkv)) m_.qkv_layers += static_cast<unsigned long long>(m_.shape.layers);
    if ((mode_ & kRingGroupO) && !(ring_ && go_ok_)) FAIL("the group-O mode is not available for this engine and shape");
    if ((mode_ & kRingHeadCount) && !(mode_ & kRingGroupO)) FAIL("the head-count mode is a group-O mode");
    // hold opens the ring at the three waited barriers of group_o with the fused MLP; head_count's
    // barrier before attention and the unfused MLP's barrier after gate/up do not open it
    if ((mode_ & kRingHold) && ((mode_ & (kRingGroupO | kRingFusedMlp | kRingHeadCount)) != (kRingGroupO | kRingFusedMlp)))
      FAIL("the hold mode is a group-O mode with the fused MLP, without head_count");
    void* args[] = {&a};
    const void* fn = (mode_ & kRingHeadCount) ? fn_hc_ : (mode_ & kRingGroupO) ? fn_go_ : fn_;
    CHECK_CUDA(cudaLaunchCooperativeKernel(fn, dim3(blocks_), dim3(threads_), args, smem_, s));
  }
  void set_timeline(unsigned long long* tl) { base_.tl = tl; }
  int blocks() const { return blocks_; }
  int threads() const { return threads_; }
  int slots() const { return slots_; }
  void set_ring_mode(int mode) { mode_ = mode; }
  int ring_mode() const { return mode_; }
  bool fused_ok() const { return fused_ok_; }  // the ring's fused MLP fits this shape
  bool go_ok() const { return go_ok_; }        // the ring's group-O mode fits this shape and device

 private:
  const Model& m_;
  DecodeArgs base_;
  bool ring_;
  const void* fn_ = nullptr;
  const void* fn_go_ = nullptr;  // the ring engine's group-O kernel (kRingGroupO)
  const void* fn_hc_ = nullptr;  // the ring engine's head-count kernel (kRingGroupO | kRingHeadCount)
  size_t smem_ = 0;
  int per_sm_ = 0, blocks_ = 0, threads_ = 0, slots_ = 0, mode_ = 0;
  bool fused_ok_ = false, go_ok_ = false;
};

// A spin that timed out ends the run (exit 1) with who waited where.
void check_spins(const Model& m, const char* what) {
  CHECK_CUDA(cudaDeviceSynchronize());
  SpinError e;
  CHECK_CUDA(cudaMemcpy(&e, m.err, sizeof e, cudaMemcpyDeviceToHost));
  if (e.kind) {
    static const char* const after[] = {"QKV + RoPE", "attention", "O projection", "gate/up", "down projection"};
    std::fprintf(stderr,
                 "error: %s: %s: grid barrier timed out: block %d waited at layer %d after the %s stage for %llu "
                 "arrivals and saw %llu; every block bailed out\n",
                 m.shape.name, what, e.block, e.layer, e.where >= 0 && e.where < 5 ? after[e.where] : "?", e.want, e.seen);
    std::exit(kExitFailure);
  }
}

struct Verdict {
  double logits_l2 = NAN, attn_l2 = NAN, resid_l2 = NAN, max_abs = 0;
  int token = -1;
  bool ambiguous = false;
};

// Correct before timed: one step on poisoned buffers, against the reference.
Verdict validate(Experiment& ex, const Model& m, const Reference& ref, const std::string& engine,
                 const std::function<void()>& step) {
  m.poison(ex.stream());
  CHECK_CUDA(cudaStreamSynchronize(ex.stream()));
  step();
  CHECK_LAUNCH();
  check_spins(m, engine.c_str());
  std::vector<float> lg, at, rs;
  to_host(lg, m.logits, m.shape.vocab);
  to_host(at, m.attn, m.q_dim);
  to_host(rs, m.resid, m.shape.hidden);
  int token = -2;
  CHECK_CUDA(cudaMemcpy(&token, m.token_out, sizeof token, cudaMemcpyDeviceToHost));
  const std::string what = std::string(m.shape.name) + " " + engine;
  auto as_double = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  const std::vector<double> lgd = as_double(lg);
  Verdict v;
  const CompareResult cl = compare_rel_l2(ref.logits, lgd, kTolerance, (what + " logits").c_str());
  const CompareResult ca = compare_rel_l2(ref.attn_last, as_double(at), kTolerance, (what + " last layer's attention").c_str());
  const CompareResult cr = compare_rel_l2(ref.resid_final, as_double(rs), kTolerance, (what + " final residual").c_str());
  v.logits_l2 = cl.rel_l2;
  v.attn_l2 = ca.rel_l2;
  v.resid_l2 = cr.rel_l2;
  v.max_abs = cl.worst_abs;
  v.token = token;
  if (!cl.ok || !ca.ok || !cr.ok) FAIL("%s: wrong result (see above); nothing of it is timed", what.c_str());
  int own = 0;  // the argmax of the GPU's own logits, lowest index on ties
  for (int i = 1; i < m.shape.vocab; ++i)
    if (lgd[i] > lgd[own]) own = i;
  if (token != own) FAIL("%s: argmax stage returned token %d, but the largest of its own logits is token %d", what.c_str(), token, own);
  // The reference's top two closer than twice the measured error: either token is a right answer.
  const double gap = ref.top1 - ref.top2, bound = 2 * cl.worst_abs;
  v.ambiguous = gap <= bound;
  if (token != ref.argmax) {
    if (!v.ambiguous || ref.logits[token] < ref.top1 - bound)
      FAIL("%s: token %d, the reference's argmax is %d (logit %.6f vs %.6f; top-2 gap %.3g, error bound %.3g)",
           what.c_str(), token, ref.argmax, ref.logits[token], ref.top1, gap, bound);
  }
  if (v.ambiguous)
    ex.note(what + ": argmax ambiguous: the reference's top-2 logit gap " + std::to_string(gap) +
            " is below twice the measured max logit error " + std::to_string(cl.worst_abs) + "; GPU token " +
            std::to_string(token) + ", reference token " + std::to_string(ref.argmax) + " (accepted as a tie)");
  return v;
}

Summary time_steps(const std::function<void(int)>& enqueue, const TimingPlan& plan, cudaStream_t s) {
  std::vector<double> ms = time_launches(enqueue, plan, s);
  for (auto& x : ms) x *= 1e3;  // us per step
  return summarize(ms);
}

std::string fmt(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

// ---------------------------------------------------------------------------------------------
// The ring engine's timeline: one step's barrier arrivals and departures per block
// ---------------------------------------------------------------------------------------------
struct Timeline {
  int blocks = 0, stride = 0, nbar = 0, layers = 0;
  bool fused_mlp = false;  // the ring's fused MLP: nothing waits at the barrier after gate/up
  bool group_o = false;    // the ring's group-O mode: nothing waits at the barrier after attention
  bool head_count = false; // the head-count mode: nothing waits at the barrier before attention (items wait per KV head)
  double us_per_tick = 0;
  std::vector<unsigned long long> t;
  double at(int b, int i) const { return static_cast<double>(t[static_cast<size_t>(b) * stride + i]); }
  int smid(int b) const { return static_cast<int>(t[static_cast<size_t>(b) * stride]); }
  // Block b's stage k (1 .. nbar: ending at barrier k; nbar + 1: the logits, ending at the end
  // stamp): from its departure from the previous barrier (or its start) to its arrival, in us.
  double begin(int b, int k) const { return at(b, 2 * k - 1); }
  double end(int b, int k) const { return k <= nbar ? at(b, 2 * k) : at(b, 2 * nbar + 2); }
  double work_us(int b, int k) const { return (end(b, k) - begin(b, k)) * us_per_tick; }
};

// One step of the ring engine with the timeline on (after one step without it), checked.
// stages: the StageBits enabled (kStAttn alone: the attention items with no ring copy in flight;
// the GEMV stamps are then absent and not checked).
Timeline record_timeline(const Model& m, Persistent& ring, cudaStream_t st, double clock_hz, int stages = kStAll) {
  Timeline tl;
  tl.blocks = ring.blocks();
  tl.layers = m.shape.layers;
  tl.nbar = kBarriersPerLayer * m.shape.layers;
  tl.fused_mlp = (ring.ring_mode() & kRingFusedMlp) != 0;
  tl.group_o = (ring.ring_mode() & kRingGroupO) != 0;
  tl.head_count = (ring.ring_mode() & kRingHeadCount) != 0;
  tl.stride = tl_stride(m.shape.layers);
  tl.us_per_tick = 1e6 / clock_hz;
  tl.t.assign(static_cast<size_t>(tl.blocks) * tl.stride, 0);
  unsigned long long* d = device_alloc<unsigned long long>(tl.t.size());
  CHECK_CUDA(cudaMemsetAsync(d, 0, tl.t.size() * sizeof(unsigned long long), st));
  ring.launch(st, stages, 0);
  ring.set_timeline(d);
  ring.launch(st, stages, 0);
  ring.set_timeline(nullptr);
  check_spins(m, "timeline");
  CHECK_CUDA(cudaMemcpy(tl.t.data(), d, tl.t.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(d));
  for (int b = 0; b < tl.blocks; ++b)
    for (int k = 1; k <= tl.nbar + 1; ++k)
      if (tl.at(b, 2 * k - 1) == 0 || (k <= tl.nbar && tl.at(b, 2 * k) == 0) || tl.end(b, k) < tl.begin(b, k) ||
          (stages == kStAll && (k > tl.nbar || (k - 1) % kBarriersPerLayer != 1) &&
           !(tl.begin(b, k) <= tl.at(b, tl_gemv(tl.layers, k)) && tl.at(b, tl_gemv(tl.layers, k)) <= tl.at(b, tl_gemv(tl.layers, k) + 1) &&
             tl.at(b, tl_gemv(tl.layers, k) + 1) <= tl.end(b, k))))
        FAIL("%s: the timeline of block %d lacks (or misorders) its stamps of stage %d", m.shape.name, b, k);
  return tl;
}

// The GEMV of stage k (1-based, as in Timeline), rows and K; rows 0 for the attention stage.
void stage_gemv(const Model& m, const Timeline& tl, int k, int* rows, int* K) {
  const Shape& s = m.shape;
  *rows = 0;
  *K = s.hidden;
  if (k > tl.nbar) {
    *rows = s.vocab;
    return;
  }
  switch ((k - 1) % kBarriersPerLayer) {
    case 0: *rows = m.q_dim + 2 * m.kv_dim; break;
    case 2: *rows = s.hidden, *K = m.q_dim; break;
    case 3: *rows = 2 * s.mlp; break;
    case 4: *rows = s.hidden, *K = s.mlp; break;
    default: break;
  }
}
// Bytes of weights block b streamed in stage k (pair_range, as the kernel splits them).
double block_stage_bytes(const Model& m, const Timeline& tl, int b, int k) {
  int rows, K, p0, np;
  stage_gemv(m, tl, k, &rows, &K);
  if (rows == 0) return 0;
  if (tl.fused_mlp && k <= tl.nbar && (k - 1) % kBarriersPerLayer == 4) {  // down: the block's gate/up pairs' rows
    pair_range(m.shape.mlp, k - 2, b, tl.blocks, &p0, &np);
    return 1.0 * np * m.shape.hidden * sizeof(uint16_t);
  }
  if (tl.group_o && k <= tl.nbar && (k - 1) % kBarriersPerLayer == 2)  // O: a group's inputs against an output tile
    return b < m.q_dim / (kG * m.shape.hd) * kRingWarps ? 1.0 * kG * m.shape.hd * (m.shape.hidden / kRingWarps) * sizeof(uint16_t) : 0.0;
  pair_range(rows / 2, k - 1, b, tl.blocks, &p0, &np);
  return 2.0 * np * K * sizeof(uint16_t);
}
// The big GEMV stages (QKV, gate/up, down, logits: at least 8 pieces per block), whose per-block
// times say how fast each SM receives its bytes.
bool rate_stage(const Timeline& tl, int k) {
  if (k > tl.nbar) return true;
  const int kind = (k - 1) % kBarriersPerLayer;
  return kind == 0 || kind == 3 || kind == 4;
}
// Per SM: its time in the big GEMV stages of the given parity of layer (-1: all), over the bytes
// it streamed there (us per MB).
std::vector<double> us_per_mb(const Model& m, const Timeline& tl, int parity) {
  std::vector<double> r(tl.blocks);
  for (int b = 0; b < tl.blocks; ++b) {
    double us = 0, bytes = 0;
    for (int k = 1; k <= tl.nbar; ++k)
      if (rate_stage(tl, k) && (parity < 0 || ((k - 1) / kBarriersPerLayer) % 2 == parity)) {
        us += tl.work_us(b, k);
        bytes += block_stage_bytes(m, tl, b, k);
      }
    r[b] = us / (bytes / 1e6);
  }
  return r;
}
double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx), syy += (y[i] - my) * (y[i] - my);
  return sxy / std::sqrt(sxx * syy);
}
// The attention stage per layer, from a timeline: the items (median and slowest block, to their
// count), the combine (the last combining block, from its count to its arrival), and the item's
// phases (median block): from the departure to q in shared memory, to the softmax done, to the
// partials stored, to the count.
struct AttnPhases {
  double items_med = 0, items_max = 0, combine = 0, phase[kAttnStamps + 1] = {};
};
AttnPhases attention_phases(const Timeline& tl) {
  AttnPhases r;
  for (int l = 0; l < tl.layers; ++l) {
    const int k = l * kBarriersPerLayer + 2;
    std::vector<double> it, ph[kAttnStamps + 1];
    double cmax = 0, imax = 0;
    for (int b = 0; b < tl.blocks; ++b) {
      const double s0 = tl.at(b, 2 * tl.nbar + 3 + 2 * l), s1 = tl.at(b, 2 * tl.nbar + 4 + 2 * l), st = tl.begin(b, k);
      const double done = std::max(s0, s1);
      double prev = st;
      for (int j = 0; j <= kAttnStamps && done > 0; ++j) {
        const double t = j < kAttnStamps ? tl.at(b, tl_attn(tl.layers, l) + j) : done;
        if (t <= 0) break;
        ph[j].push_back((t - prev) * tl.us_per_tick);
        prev = t;
      }
      if (s0 > 0) it.push_back((s0 - st) * tl.us_per_tick);
      if (s1 > 0) {
        it.push_back((s1 - st) * tl.us_per_tick);
        cmax = std::max(cmax, (tl.end(b, k) - s1) * tl.us_per_tick);
      }
      imax = std::max(imax, std::max(s0, s1) > 0 ? (std::max(s0, s1) - st) * tl.us_per_tick : 0.0);
    }
    r.items_med += median_of(it) / tl.layers;
    r.items_max += imax / tl.layers;
    r.combine += cmax / tl.layers;
    for (int j = 0; j <= kAttnStamps; ++j) r.phase[j] += (ph[j].empty() ? 0.0 : median_of(ph[j])) / tl.layers;
  }
  return r;
}

// The item's phases as columns of a row (the same in the full step's table and the items alone).
void add_attn_phases(Row& row, const AttnPhases& ap) {
  if (DECODE_ATTN_FINE) {  // the experiment's build: thread 0's view between the syncs
    static const char* const keys[kAttnFineStamps + 1] = {
        "attn_q_us",         "attn_f_score_pass_us", "attn_f_score_sync_us", "attn_f_softmax_us",
        "attn_f_pv_pass_us", "attn_f_pv_shfl_us",    "attn_f_stored_us",     "attn_count_us"};
    static const char* const heads[kAttnFineStamps + 1] = {
        "of an item: to q in smem µs", "warp 0's score pass µs", "scores synced µs",   "softmax µs",
        "warp 0's P.V pass µs",        "its shuffles µs",        "partials stored µs", "count µs"};
    for (int j = 0; j <= kAttnStamps; ++j) row.add(keys[j], ap.phase[j], 2, heads[j]);
    return;
  }
  row.add("attn_q_us", ap.phase[0], 2, "of an item: to q in smem µs")
      .add("attn_softmax_us", ap.phase[1], 2, "scores + softmax µs")
      .add("attn_pv_us", ap.phase[2], 2, "P.V + partials stored µs")
      .add("attn_count_us", ap.phase[3], 2, "count µs");
}

// Where one timeline step's time goes, per stage kind summed over layers. With D the median
// departure from a barrier and A the arrivals at the next: work = median A - previous D (the
// median block's stage), skew = last A - median A (the slowest block beyond it), barrier = D -
// last A. The three add up to the step. Rows into the experiment's table; the per-SM rate
// spread and its stability (even against odd layers) into a second table.
void report_timeline(Experiment& ex, const Model& m, const Timeline& tl, const std::string& mode, const StageBytes& sb,
                     double ceiling_gbps) {
  static const char* const kinds[] = {"qkv_rope_append", "attention_combine", "o_proj_residual", "gate_up_silu",
                                      "down_residual", "logits_argmax"};
  const double stage_mb[] = {sb.qkv, sb.attn, sb.o, sb.gate_up, sb.down, sb.logits};
  double work[6] = {}, skew[6] = {}, bar[6] = {}, pro[6] = {}, str[6] = {}, epi[6] = {};
  int count[6] = {};
  std::vector<double> v(tl.blocks);
  auto med = [&](auto f) {
    for (int b = 0; b < tl.blocks; ++b) v[b] = f(b);
    return median_of(v);
  };
  auto mx = [&](auto f) {
    double r = -INFINITY;
    for (int b = 0; b < tl.blocks; ++b) r = std::max(r, f(b));
    return r;
  };
  double d_prev = med([&](int b) { return tl.at(b, 1); });
  const double d_first = d_prev;
  for (int k = 1; k <= tl.nbar + 1; ++k) {
    const int kind = k > tl.nbar ? 5 : (k - 1) % kBarriersPerLayer;
    const double a_med = med([&](int b) { return tl.end(b, k); }), a_max = mx([&](int b) { return tl.end(b, k); });
    const double d = k > tl.nbar ? a_max : med([&](int b) { return tl.at(b, 2 * k + 1); });
    work[kind] += (a_med - d_prev) * tl.us_per_tick;
    if (kind != 1) {  // a GEMV stage: its median block's prologue, stream and epilogue
      const int g = tl_gemv(tl.layers, k);
      pro[kind] += med([&](int b) { return tl.at(b, g) - tl.begin(b, k); }) * tl.us_per_tick;
      str[kind] += med([&](int b) { return tl.at(b, g + 1) - tl.at(b, g); }) * tl.us_per_tick;
      epi[kind] += med([&](int b) { return tl.end(b, k) - tl.at(b, g + 1); }) * tl.us_per_tick;
    }
    // no wait there: arrival and departure stamped together
    if ((tl.fused_mlp && kind == 3) || (tl.group_o && kind == 1) || (tl.head_count && kind == 0)) {
      bar[kind] += (d - a_med) * tl.us_per_tick;
    } else {
      skew[kind] += (a_max - a_med) * tl.us_per_tick;
      bar[kind] += (d - a_max) * tl.us_per_tick;
    }
    ++count[kind];
    d_prev = d;
  }
  const double step_us = (d_prev - d_first) * tl.us_per_tick;
  const std::string title = "persistent_ring timeline: one step's barrier arrivals and departures per block, by stage kind "
                            "(work: the median block; skew: the slowest block beyond it; barrier: last arrival to the "
                            "median departure; summed over layers)";
  for (int i = 0; i < 6; ++i) {
    Row row;
    row.add("model", m.shape.name)
        .add("mode", mode)
        .add("stage", kinds[i])
        .add("stages", count[i])
        .add("floor_us", stage_mb[i] / (ceiling_gbps * 1e3), 1, "floor µs")
        .add("work_us", work[i], 1, "work µs")
        .add("prologue_us", i == 1 ? NAN : pro[i], 1, "of it: prologue µs")
        .add("stream_us", i == 1 ? NAN : str[i], 1, "stream µs")
        .add("epilogue_us", i == 1 ? NAN : epi[i], 1, "epilogue µs")
        .add("skew_us", skew[i], 1, "skew µs")
        .add("barrier_us", bar[i], 1, "barrier µs")
        .add("total_us", work[i] + skew[i] + bar[i], 1, "total µs")
        .add("fraction_of_step", (work[i] + skew[i] + bar[i]) / step_us, 3, "of step");
    ex.add(title, row);
  }
  const AttnPhases ap = attention_phases(tl);
  // Per SM: time per MB in the big GEMV stages; its spread, and whether the slow SMs of even
  // layers are the slow ones of odd layers (a property of the SM, not of the moment).
  const std::vector<double> all = us_per_mb(m, tl, -1), even = us_per_mb(m, tl, 0), odd = us_per_mb(m, tl, 1);
  const double lo = *std::min_element(all.begin(), all.end()), hi = *std::max_element(all.begin(), all.end());
  std::vector<int> slow_count(kMaxSmid, 0);
  int nstages = 0;
  for (int k = 1; k <= tl.nbar + 1; ++k) {
    if (!rate_stage(tl, k)) continue;
    int sb_ = 0;
    for (int b = 1; b < tl.blocks; ++b)
      if (tl.end(b, k) > tl.end(sb_, k)) sb_ = b;
    ++slow_count[tl.smid(sb_)];
    ++nstages;
  }
  const int top = static_cast<int>(std::max_element(slow_count.begin(), slow_count.end()) - slow_count.begin());
  Row row;
  row.add("model", m.shape.name)
      .add("mode", mode)
      .add("step_us", step_us, 1, "step µs (timeline)")
      .add("attn_items_us", ap.items_med, 2, "attention items µs/layer (median block)")
      .add("attn_items_max_us", ap.items_max, 2, "slowest item µs/layer");
  add_attn_phases(row, ap);
  row.add("attn_combine_us", ap.combine, 2, "combine µs/layer")
      .add("sm_gbps_min", 1e3 / hi, 1, "slowest SM GB/s")
      .add("sm_gbps_max", 1e3 / lo, 1, "fastest SM GB/s")
      .add("sm_rate_corr_even_odd", pearson(even, odd), 2, "SM time/MB corr. even vs odd layers")
      .add("slowest_sm", top, -1, "most often slowest SM")
      .add("slowest_sm_share", slow_count[top] / double(nstages), 2, "of big stages");
  ex.add("persistent_ring timeline: the attention stage per layer, and the SMs' rates in the big GEMV stages (QKV, "
         "gate/up, down, logits; bytes of the block's pairs over its time from departure to arrival)",
         row);
}

struct RunOptions {
  TimingPlan plan;
  unsigned prefetch_bytes;
  bool sweep_prefetch;
  int ring_slots;     // 0: kRingDefaultSlots
  bool breakdown;     // the stage-alone and launch-kind tables (not under a sanitizer)
  unsigned long long timeout_ticks;
  double clock_hz;    // the constant-rate clock (the timeline's stamps)
  double ceiling_gbps;
  std::string prediction_text;  // report.json, or empty
  std::string prediction_path;
};

// Everything for one model: build, reference, validate and time each engine, tables, summary.
void run_model(Experiment& ex, const Shape& s, const RunOptions& o) {
  const uint64_t seed = fresh_seed();
  say(ex, "%s: seed %llu; generating %.2f GB of weights on the GPU", s.name, static_cast<unsigned long long>(seed),
      stage_bytes(s).total() / 1e9);
  Model m(ex, s, seed);
  const StageBytes sb = stage_bytes(s);
  const double bytes = sb.total();
  const double floor_us = bytes / (o.ceiling_gbps * 1e3);  // 1 GB/s = 1e3 bytes per us
  const WorkingSetVerdict ws = check_working_set(static_cast<uint64_t>(bytes), ex.l2_bytes(), 4.0);
  if (!ws.ok) FAIL("%s: refusing to time: %s", s.name, ws.message.c_str());
  ex.note(std::string(s.name) + ": seed " + std::to_string(seed) + ", input token " + std::to_string(m.token) +
          " at position " + std::to_string(m.pos) + "; a step reads " + fmt(bytes / 1e9, 3) + " GB (" + ws.message + ")");

  say(ex, "%s: CPU double-precision reference", s.name);
  const Reference ref = cpu_reference(m);
  say(ex, "%s: reference in %.1f s: token %d, top-2 gap %.4g", s.name, ref.seconds, ref.argmax, ref.top1 - ref.top2);
  const DecodeArgs base = m.args(o.timeout_ticks);
  const int sms = ex.sm_count();
  for (GemvFn f : {op_gemv_store, op_gemv_store_pdl, op_gemv_add, op_gemv_add_pdl, op_gemv_silu, op_gemv_silu_pdl})
    CHECK_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(f), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(std::max({s.hidden, m.q_dim, s.mlp}) * sizeof(float))));
  const std::vector<Op> ops = kernel_per_op(m, base, sms);
  cudaStream_t st = ex.stream();
  auto enqueue_ops = [&](bool pdl, int only_kind) {
    for (auto& op : ops)
      if (only_kind < 0 || op.kind == only_kind) op.go(st, pdl);
  };
#if defined(PORT_HIP)
  const bool have_pdl = false;
#else
  const bool have_pdl = ex.prop().major >= 9 && std::strncmp(SUITE_BUILD_ARCH, "sm_", 3) == 0 && std::atoi(SUITE_BUILD_ARCH + 3) >= 90;
#endif
  Graph graph, graph_pdl;
  graph.capture([&](cudaStream_t) { enqueue_ops(false, -1); }, st);
  if (have_pdl) graph_pdl.capture([&](cudaStream_t) { enqueue_ops(true, -1); }, st);
  Persistent pers(m, base, ex, false);
  std::unique_ptr<Persistent> ring;
  if (have_pdl) ring.reset(new Persistent(m, base, ex, true, o.ring_slots));  // cp.async.bulk: sm_90 builds
  Persistent& head = ring ? *ring : pers;  // the engine (c) of the headline and the stage breakdown
  const char* head_name = ring ? "persistent_ring" : "persistent";

  struct Eng {
    std::string name, what;
    std::function<void()> step;
    Summary us;
    Verdict v;
  };
  std::vector<Eng> engines;
  engines.push_back({"stream", "one kernel per operation, " + std::to_string(ops.size()) + " launches on a stream",
                     [&] { enqueue_ops(false, -1); }, {}, {}});
  engines.push_back({"graph", "the same launches in one CUDA graph", [&] { graph.launch(st); }, {}, {}});
  if (have_pdl)
    engines.push_back({"graph_pdl", "the graph with programmatic dependent launch", [&] { graph_pdl.launch(st); }, {}, {}});
  unsigned pf = o.prefetch_bytes;
  engines.push_back({"persistent",
                     "one cooperative kernel, " + std::to_string(pers.blocks()) + " blocks x " +
                         std::to_string(kPersistentThreads) + " threads, " +
                         std::to_string(kBarriersPerLayer * s.layers) + " grid barriers",
                     [&] { pers.launch(st, kStAll, pf); }, {}, {}});
  if (ring)
    engines.push_back({"persistent_ring",
                       "one cooperative kernel, " + std::to_string(ring->blocks()) + " blocks x " +
                           std::to_string(ring->threads()) + " threads, weights streamed through a ring of " +
                           std::to_string(ring->slots()) + " x " + std::to_string(kRingPieceBytes / 1024) + " KB of shared memory per warp, " +
                           std::to_string(kBarriersPerLayer * s.layers) + " grid barriers",
                       [&] { ring->launch(st, kStAll, 0); }, {}, {}});
  for (auto& e : engines) {
    say(ex, "%s: validating %s", s.name, e.name.c_str());
    e.v = validate(ex, m, ref, e.name, e.step);
  }
  // Persistent: the prefetch size, swept (full runs), best one kept for the headline.
  std::vector<std::pair<unsigned, Summary>> sweep;
  if (o.sweep_prefetch) {
    for (int kb : kPrefetchSweepKb) {
      const unsigned b = static_cast<unsigned>(kb) * 1024;
      say(ex, "%s: persistent, prefetch %d KB per block", s.name, kb);
      // validated at this size before it is timed, as every ring mode is (the engine's own
      // validation above ran at the default size only)
      validate(ex, m, ref, "persistent prefetch " + std::to_string(kb) + " KB", [&] { pers.launch(st, kStAll, b); });
      sweep.push_back({b, time_steps([&](int) { pers.launch(st, kStAll, b); }, o.plan, st)});
      check_spins(m, "prefetch sweep");
    }
    size_t best = 0;
    for (size_t i = 1; i < sweep.size(); ++i)
      if (sweep[i].second.median < sweep[best].second.median) best = i;
    pf = sweep[best].first;
  }
  // Ring: the piece assignment and the K/V preload, swept (every run: four short timings, and
  // under a sanitizer every mode's code path runs), each mode validated before it is timed; the
  // best one is kept for the headline.
  std::vector<std::pair<int, Summary>> ring_sweep;
  if (ring) {
    std::vector<int> modes;
    for (int mode = 0; mode < kRingModes; ++mode) modes.push_back(mode);
    // group_o beside the two deals with the K/V preload and the fused MLP (the kept modes of every run since a5c52b2)
    // (and each with the barrier before attention made a count per KV head: head_count)
    // (and each with the ring held at every waited barrier until the block has arrived: hold)
    for (int hc : {0, static_cast<int>(kRingHeadCount), static_cast<int>(kRingHold)})
      for (int mode : {kRingPreloadKv | kRingFusedMlp, kRingBalanced | kRingPreloadKv | kRingFusedMlp})
        if (ring->go_ok()) modes.push_back(mode | kRingGroupO | hc);
    for (int mode : modes) {
      if ((mode & kRingFusedMlp) && !ring->fused_ok()) continue;
      ring->set_ring_mode(mode);
      say(ex, "%s: persistent_ring, %s", s.name, ring_mode_name(mode).c_str());
      validate(ex, m, ref, "persistent_ring " + ring_mode_name(mode), [&] { ring->launch(st, kStAll, 0); });
      ring_sweep.push_back({mode, time_steps([&](int) { ring->launch(st, kStAll, 0); }, o.plan, st)});
      check_spins(m, "ring sweep");
    }
    size_t best = 0;
    for (size_t i = 1; i < ring_sweep.size(); ++i)
      if (ring_sweep[i].second.median < ring_sweep[best].second.median) best = i;
    ring->set_ring_mode(ring_sweep[best].first);
    // One step's timeline of the kept mode, and of pairs+kv_preload (the plain deal) beside it
    // when another mode won: what the kept mode changed, stage by stage.
    const int kept = ring->ring_mode();
    std::vector<int> tl_modes;
    if (kept != kRingPreloadKv) tl_modes.push_back(kRingPreloadKv);
    tl_modes.push_back(kept);
    // (and of the best head_count mode, the best hold mode and the best group_o mode with neither,
    // each when it ran and lost)
    for (int hc : {0, static_cast<int>(kRingHeadCount), static_cast<int>(kRingHold)}) {
      int best_go = -1;
      for (const auto& p : ring_sweep)
        if ((p.first & kRingGroupO) && (p.first & (kRingHeadCount | kRingHold)) == hc &&
            (best_go < 0 || p.second.median < ring_sweep[best_go].second.median))
          best_go = static_cast<int>(&p - ring_sweep.data());
      if (best_go >= 0 && ring_sweep[best_go].first != kept) tl_modes.push_back(ring_sweep[best_go].first);
    }
    for (int mode : tl_modes) {
      ring->set_ring_mode(mode);
      report_timeline(ex, m, record_timeline(m, *ring, st, o.clock_hz), ring_mode_name(mode), sb, o.ceiling_gbps);
    }
    // The same items with every GEMV stage masked off (barriers and attention only): no ring
    // copy in flight. Beside the full step's split it says which of the item's phases wait on
    // the memory system and which are the block's own arithmetic.
    {
      const AttnPhases alone = attention_phases(record_timeline(m, *ring, st, o.clock_hz, kStAttn));
      Row row;
      row.add("model", m.shape.name)
          .add("mode", ring_mode_name(ring->ring_mode()))
          .add("attn_items_us", alone.items_med, 2, "attention items µs/layer (median block)");
      add_attn_phases(row, alone);
      row.add("attn_combine_us", alone.combine, 2, "combine µs/layer");
      ex.add("persistent_ring timeline: the attention items alone (every GEMV stage masked off: no ring copy in flight)", row);
    }
    ring->set_ring_mode(kept);
    validate(ex, m, ref, "persistent_ring " + ring_mode_name(ring->ring_mode()) + " (kept)", [&] { ring->launch(st, kStAll, 0); });
    // the barriers after gate/up (fused_mlp), after attention (group_o) and before it (head_count) are
    // counted passes: say how many wait
    const int passes = ((kept & kRingFusedMlp) ? 1 : 0) + ((kept & kRingGroupO) ? 1 : 0) + ((kept & kRingHeadCount) ? 1 : 0);
    if (passes > 0)
      for (auto& e : engines)
        if (e.name == "persistent_ring")
          e.what += " (" + std::to_string((kBarriersPerLayer - passes) * s.layers) + " waited at: " + ring_mode_name(kept) + ")";
  }
  for (auto& e : engines) {
    say(ex, "%s: timing %s (%d x %d steps)", s.name, e.name.c_str(), o.plan.reps, o.plan.iters);
    e.us = time_steps([&](int) { e.step(); }, o.plan, st);
    check_spins(m, e.name.c_str());
    ex.require_below_ceiling(bytes / (e.us.median * 1e3), o.ceiling_gbps, std::string(s.name) + " " + e.name);
    validate(ex, m, ref, e.name + " (after timing)", e.step);  // the timed configuration, once more
  }
  const std::string model_col = s.name;
  for (auto& e : engines) {
    Row row;
    row.add("model", model_col)
        .add("engine", e.name)
        .add("median_us", e.us.median, 1, "median µs")
        .add("min_us", e.us.min, 1, "min µs")
        .add("sd_us", e.us.sd, 2, "sd µs")
        .add("gbps", bytes / (e.us.median * 1e3), 0, "GB/s")
        .add("fraction_of_floor", floor_us / e.us.median, 3, "floor / time")
        .add("tokens_per_s", 1e6 / e.us.median, 0, "tokens/s")
        .add("what", e.what)
        .extra("n_steps", e.us.n * o.plan.iters)
        .extra("bytes", bytes)
        .extra("logits_rel_l2", e.v.logits_l2)
        .extra("prefetch_bytes_per_block", e.name == "persistent" ? Json(pf) : Json())
        .extra("ring_mode", e.name == "persistent_ring" ? Json(ring_mode_name(ring->ring_mode())) : Json());
    ex.add("engines: one decode step (median of " + std::to_string(o.plan.reps) + " batches of " +
               std::to_string(o.plan.iters) + " steps)",
           row);
  }
  for (auto& e : engines) {
    Row row;
    row.add("model", model_col)
        .add("engine", e.name)
        .add("logits_rel_l2", e.v.logits_l2, 7, "logits rel L2")
        .add("attn_rel_l2", e.v.attn_l2, 7, "last attention rel L2")
        .add("resid_rel_l2", e.v.resid_l2, 7, "final residual rel L2")
        .add("max_abs_logit_error", e.v.max_abs, 7, "max |logit error|")
        .add("token", e.v.token)
        .add("reference_token", ref.argmax, -1, "reference token")
        .add("top2_gap", ref.top1 - ref.top2, 5, "reference top-2 gap")
        .add("argmax_ambiguous", e.v.ambiguous, -1, "ambiguous");
    ex.add("validation against the CPU double-precision reference (tolerance rel L2 " + fmt(kTolerance, 2) + ")", row);
  }
  for (auto& p : sweep) {
    Row row;
    row.add("model", model_col)
        .add("prefetch_kb_per_block", static_cast<int>(p.first / 1024), -1, "prefetch KB / block")
        .add("l2_prefetched_mb", p.first * double(pers.blocks()) / 1e6, 1, "MB in L2 at most")
        .add("median_us", p.second.median, 1, "median µs")
        .add("min_us", p.second.min, 1, "min µs")
        .add("fraction_of_floor", floor_us / p.second.median, 3, "floor / time")
        .extra("sd_us", p.second.sd)
        .extra("n", p.second.n);
    ex.add("persistent: L2 prefetch of the next stage's weights before each barrier", row);
  }

  for (auto& p : ring_sweep) {
    Row row;
    row.add("model", model_col)
        .add("mode", ring_mode_name(p.first))
        .add("median_us", p.second.median, 1, "median µs")
        .add("min_us", p.second.min, 1, "min µs")
        .add("fraction_of_floor", floor_us / p.second.median, 3, "floor / time")
        .add("kept", p.first == ring->ring_mode(), -1, "kept")
        .extra("sd_us", p.second.sd)
        .extra("n", p.second.n);
    ex.add("persistent_ring: piece assignment (whole pairs per warp, or balanced runs of pieces), K/V preload and the fused MLP", row);
  }

  auto find_engine_us = [&](const char* n) -> double {
    for (auto& e : engines)
      if (e.name == n) return e.us.median;
    return NAN;
  };
  Summary none{};
  if (o.breakdown) {
    // Where the microseconds go: the persistent kernel with one stage kind at a time (all
    // barriers kept), against none (the barriers alone); the stream engine one launch kind at a time.
    struct StageRow { const char* name; int bits; double bytes; };
    const StageRow stages[] = {{"qkv_rope_append", kStQkv, sb.qkv}, {"attention_combine", kStAttn, sb.attn},
                               {"o_proj_residual", kStO, sb.o},     {"gate_up_silu", kStGateUp, sb.gate_up},
                               {"down_residual", kStDown, sb.down}, {"logits_argmax", kStLogits, sb.logits}};
    say(ex, "%s: stages alone", s.name);
    none = time_steps([&](int) { head.launch(st, 0, pf); }, o.plan, st);
    check_spins(m, "barriers only");
    const int nbar = kBarriersPerLayer * s.layers;
    {
      Row row;
      row.add("model", model_col)
          .add("stage", "barriers only (no stage)")
          .add("mb", 0.0, 1, "MB read")
          .add("floor_us", 0.0, 1, "floor µs")
          .add("alone_us", none.median, 1, "alone µs (with barriers)")
          .add("work_us", 0.0, 1, "alone - barriers µs")
          .add("over_floor_us", 0.0, 1, "work - floor µs")
          .extra("barriers", nbar)
          .extra("us_per_barrier", none.median / nbar)
          .extra("alone_min_us", none.min)
          .extra("alone_sd_us", none.sd)
          .extra("n", none.n);
      ex.add(std::string("persistent kernel (") + head_name + "), one stage kind enabled at a time (where the microseconds go)", row);
    }
    double work_sum = none.median;
    std::string cached;  // stages whose bytes per step are under 4x the last-level cache
    for (auto& sr : stages) {
      const Summary t = time_steps([&](int) { head.launch(st, sr.bits, pf); }, o.plan, st);
      check_spins(m, sr.name);
      const double f = sr.bytes / (o.ceiling_gbps * 1e3);
      work_sum += t.median - none.median;
      Row row;
      row.add("model", model_col)
          .add("stage", sr.name)
          .add("mb", sr.bytes / 1e6, 1, "MB read")
          .add("floor_us", f, 1, "floor µs")
          .add("alone_us", t.median, 1, "alone µs (with barriers)")
          .add("work_us", t.median - none.median, 1, "alone - barriers µs")
          .add("over_floor_us", t.median - none.median - f, 1, "work - floor µs")
          .add("llc_ratio", sr.bytes / static_cast<double>(ex.l2_bytes()), 1, "x LLC")
          .extra("alone_min_us", t.min)
          .extra("alone_sd_us", t.sd)
          .extra("n", t.n);
      ex.add(std::string("persistent kernel (") + head_name + "), one stage kind enabled at a time (where the microseconds go)", row);
      if (sr.bytes < 4.0 * static_cast<double>(ex.l2_bytes())) cached += std::string(cached.empty() ? "" : ", ") + sr.name;
    }
    // Principle 2 holds for the whole step (checked above); a stage run alone re-reads only its
    // own bytes step after step, and those of a small stage can stay in L2 between steps.
    if (!cached.empty())
      ex.note(std::string(s.name) + ": stages alone whose bytes per step are under 4x the last-level cache (" + cached +
              "): repeated steps may read part of them from L2, so their alone figures can be below what they cost "
              "inside the step (a lower bound on their DRAM cost, not a measurement of it)");
    ex.note(std::string(s.name) + ": persistent stages alone: " + std::to_string(nbar) + " barriers alone " +
            fmt(none.median, 1) + " us (" + fmt(none.median / nbar, 2) + " us each); barriers + every stage's work " +
            fmt(work_sum, 1) + " us against " + fmt(find_engine_us(head_name), 1) +
            " us all together (the difference is overlap between stages)");
    for (int k = 0; k < kOpKinds; ++k) {
      int count = 0;
      for (auto& op : ops) count += op.kind == k;
      const Summary t = time_steps([&](int) { enqueue_ops(false, k); }, o.plan, st);
      Row row;
      row.add("model", model_col)
          .add("kernel", kOpNames[k])
          .add("launches", count, -1, "launches / step")
          .add("median_us", t.median, 1, "µs / step")
          .add("us_per_launch", t.median / count, 2, "µs / launch")
          .extra("min_us", t.min)
          .extra("sd_us", t.sd)
          .extra("n", t.n);
      ex.add("stream engine, one kind of launch at a time", row);
    }
  }
  // Summary, under the issue's keys.
  const std::string key = s.key;
  auto find_engine = [&](const char* n) -> const Eng* {
    for (auto& e : engines)
      if (e.name == n) return &e;
    return nullptr;
  };
  const Eng* pe = find_engine(head_name);
  const Eng* pr = find_engine("persistent");
  const Eng* gp = find_engine("graph_pdl");
  Json& sm = ex.summary();
  sm.set(key + "_floor_us", floor_us);
  sm.set(key + "_stream_us", find_engine("stream")->us.median);
  sm.set(key + "_graph_pdl_us", gp ? Json(gp->us.median) : Json());
  sm.set(key + "_persistent_us", pe->us.median);
  sm.set(key + "_persistent_fraction_of_floor", floor_us / pe->us.median);
  double predicted = 0;
  const bool have_pred = !o.prediction_text.empty() && json_find_number(o.prediction_text, key + "_predicted_single_kernel_us", &predicted) && predicted > 0;
  sm.set(key + "_predicted_us", have_pred ? Json(predicted) : Json());
  sm.set(key + "_prediction_error", have_pred ? Json((pe->us.median - predicted) / predicted) : Json());
  if (!have_pred)
    ex.note(std::string(s.name) + ": no prediction: " +
            (o.prediction_text.empty() ? o.prediction_path + " not found" : key + "_predicted_single_kernel_us absent from " + o.prediction_path) +
            " (predicted_us and prediction_error are null)");
  sm.set(key + "_graph_us", find_engine("graph")->us.median);
  sm.set(key + "_bytes_per_step", bytes);
  sm.set(key + "_persistent_prefetch_kb", static_cast<int>(pf / 1024));
  sm.set(key + "_persistent_engine", head_name);
  sm.set(key + "_persistent_registers_us", pr->us.median);
  sm.set(key + "_ring_slots_per_warp", ring ? Json(ring->slots()) : Json());
  sm.set(key + "_ring_mode", ring ? Json(ring_mode_name(ring->ring_mode())) : Json());
  sm.set(key + "_barriers_alone_us", o.breakdown ? Json(none.median) : Json());
  sm.set(key + "_seed", std::to_string(seed));
  bool amb = false;
  for (auto& e : engines) amb = amb || e.v.ambiguous;
  sm.set(key + "_argmax_ambiguous", amb);
}

}  // namespace

int main(int argc, char** argv) {
  Experiment ex("06-decode",
                "One batch-1 decode step of Llama-3.2-1B and Llama-3.1-8B shapes (FP16 weights, KV cache of 1024): "
                "kernel per op on a stream, a CUDA graph with PDL, and one persistent cooperative kernel, against "
                "the bandwidth floor.");
  std::string model_flag, prediction;
  long long steps = 0, prefetch_kb = 64, ring_slots = 0, timeout_ms = sanitizing() ? 60000 : 2000;  // sanitizers slow every spin
  ex.flags().add_string("model", &model_flag, "1b | 8b | all (default all; --quick: 1b)");
  ex.flags().add_int("steps", &steps, 1, 1000, "decode steps per timed batch (default 10; --quick 3)");
  ex.flags().add_string("prediction", &prediction, "report.json holding <model>_predicted_single_kernel_us (default <results dir>/report.json)");
  ex.flags().add_int("prefetch-kb", &prefetch_kb, 0, 128, "persistent engine: L2 prefetch per block before each barrier (default 64; full runs sweep 0-128)");
  ex.flags().add_int("ring-slots", &ring_slots, 0, kRingMaxSlots, kRingSeg == 1024 ? "ring engine: 4 KB shared-memory slots per warp (default 0: 2; at most as many as fit, up to 4)" : "ring engine: shared-memory slots per warp, of the narrower pieces of this build (DECODE_RING_SEG; default 0: 2)");
  ex.flags().add_int("timeout-ms", &timeout_ms, 10, 60000, "grid-barrier spin timeout on the constant-rate clock (default 2000)");
  ex.validate_flags([&]() -> std::string {
    if (!model_flag.empty() && model_flag != "1b" && model_flag != "8b" && model_flag != "all")
      return "--model must be 1b, 8b or all, not '" + model_flag + "'";
    return "";
  });
  ex.start(argc, argv);
  const bool quick = ex.quick();
  if (model_flag.empty()) model_flag = quick ? "1b" : "all";
  // Under a sanitizer every kernel still runs, on 2 layers instead of 16 or 32 (the same code
  // paths: every stage kind, barrier and piece shape), and without the stage breakdown.
  std::vector<Shape> models;
  for (auto& s : kShapes)
    if (model_flag == "all" || model_flag == s.flag) {
      models.push_back(s);
      if (sanitizing()) models.back().layers = std::min(models.back().layers, 2);
    }
  RunOptions o;
  o.plan = TimingPlan{2, quick ? 3 : 7, static_cast<int>(steps ? steps : (quick ? 3 : 10))};
  o.prefetch_bytes = static_cast<unsigned>(prefetch_kb) * 1024;
  o.sweep_prefetch = !quick;
  o.ring_slots = static_cast<int>(ring_slots);
  o.breakdown = !sanitizing();

  if (ex.list()) {
    std::printf("# 06-decode would run %zu model(s); per model: a CPU double reference, then each engine validated, timed "
                "(%d warm-up steps, %d batches x %d steps, median), validated again:\n",
                models.size(), o.plan.warmup, o.plan.reps, o.plan.iters);
    for (auto& shape : models) {
      const Shape* s = &shape;
      const StageBytes b = stage_bytes(*s);
      std::printf("%s: %d layers, hidden %d, %d/%d heads of %d, MLP %d, vocab %d; %.3f GB per step\n", s->name, s->layers,
                  s->hidden, s->heads, s->kv_heads, s->hd, s->mlp, s->vocab, b.total() / 1e9);
      std::printf("%s: engine stream: %d launches per step\n", s->name, 4 + 9 * s->layers);
      std::printf("%s: engine graph, graph_pdl (sm_90): the same launches in a CUDA graph\n", s->name);
      std::printf("%s: engine persistent: %d blocks x %d threads, %d grid barriers, prefetch %s\n", s->name,
                  ex.sm_count(), kPersistentThreads, kBarriersPerLayer * s->layers,
                  o.sweep_prefetch ? "swept over 0, 32, 64, 128 KB per block" : (std::to_string(prefetch_kb) + " KB per block").c_str());
      std::printf("%s: engine persistent_ring (sm_90): %d blocks x %d threads, %s %d KB shared-memory slots per warp; "
                  "piece assignment {pairs, balanced} x K/V preload {off, on} swept, best kept; one step's timeline of the kept "
                  "mode (and of pairs+kv_preload when another is kept)\n",
                  s->name, ex.sm_count(), kRingThreads, std::to_string(ring_slots ? ring_slots : kRingDefaultSlots).c_str(),
                  kRingPieceBytes / 1024);
      if (o.breakdown)
        std::printf("%s: stages alone: barriers only + 6 stage kinds (headline persistent engine), 11 launch kinds (stream)\n", s->name);
    }
    return kExitOk;
  }

  const Ceiling ceiling = obtain_ceiling(ex);
  o.ceiling_gbps = ceiling.gbps;
  const double hz = measure_const_clock_hz();
  o.timeout_ticks = static_cast<unsigned long long>(timeout_ms * 1e-3 * hz);
  o.clock_hz = hz;
  o.prediction_path = prediction.empty() ? ex.results_dir() + "/report.json" : prediction;
  {
    std::ifstream in(o.prediction_path);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      o.prediction_text = ss.str();
    }
  }
  ex.note("floor = bytes read per step (every weight matrix and gain once, K and V of 1025 positions) / the measured "
          "ceiling " + fmt(ceiling.gbps, 0) + " GB/s (" + ceiling.source + ")");
  ex.note("timing: " + std::to_string(o.plan.warmup) + " warm-up steps, then " + std::to_string(o.plan.reps) +
          " batches of " + std::to_string(o.plan.iters) + " steps between events; median over batches (N = " +
          std::to_string(o.plan.reps * o.plan.iters) + " steps per figure). Every step reads all weights (GBs, far above L2)");
  ex.note("every step decodes the same input token at position 1024 (the argmax is not fed back), so steps are "
          "identical and the last one is validated again after timing");
  ex.note("the 8B is given tied embeddings (its real lm_head is a separate matrix of the same shape: the same bytes)");
  ex.note("spin timeout " + std::to_string(timeout_ms) + " ms on the constant-rate clock (measured at " + fmt(hz / 1e6, 1) + " MHz)");
#if defined(PORT_HIP)
  ex.note("HIP build: no programmatic dependent launch (graph_pdl not run), no L2 prefetch instruction (prefetch is a no-op)");
#endif
  if (sanitizing()) ex.note("under a sanitizer: " + std::to_string(models[0].layers) + " layers per model, no stage breakdown");
  for (size_t i = 0; i < models.size(); ++i) run_model(ex, models[i], o);
  ex.summary().set("ceiling_gbps", ceiling.gbps);
  ex.summary().set("ceiling_source", ceiling.source);
  ex.summary().set("steps_per_figure", o.plan.reps * o.plan.iters);
  return ex.finish();
}
