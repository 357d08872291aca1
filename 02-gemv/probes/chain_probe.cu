// chain_probe: where a chained (programmatic dependent launch) GEMV loses time. An exploratory
// probe beside 02-gemv, not a suite result: its figures are quoted on results/02-gemv.md with the
// raw output they come from (results/h200/probes/), never in 02-gemv.json.
//
// One shape, 4096x4096 FP16 (the issue's chained criterion), one kernel design: 02-gemv's rows in
// flight r4 c4 (4 rows per warp, 4 chunks of 16 loads of 16 B per lane, 128-thread blocks,
// __launch_bounds__(128, 4)), 200 launches in a CUDA graph over 32 rotating copies of W (1.07 GB),
// timed by events over 15 replays (median and min per GEMV). Every chained or isolated variant is
// validated against a CPU double reference (relative L2 < 1e-3, else exit 1); the no-wait variants
// race on y by construction (they are bounds) and are only timed.
//
//   mkdir -p build && nvcc -O3 -std=c++17 -arch=sm_90 -o build/chain_probe 02-gemv/probes/chain_probe.cu
//   build/chain_probe prefetch|delay|timeline|smem|claimed|pipe|rows|half|data [COPIES]
//   COPIES: rotating copies of W, 2-64 (default 32, 1.07 GB); 02-gemv rotates enough for 4x the L2
//   (7 on an H100, 8 on an H200), and its pipelined r1 c8 chains closer to its bound than the pipe
//   set's restatement does on the same card: with 02's count the harness is the same as 02's there.
//
// The sets (each a question): prefetch (more of the next GEMV's weights requested around the wait:
// L2 prefetch or shared memory, before or after it), delay (the first loads issued later: after a
// fixed delay, or once the previous GEMV's warps are in their last chunks), timeline (%globaltimer
// stamps: block start, wait return and warp end per launch), smem (chunks 1-2 staged in shared
// memory before the wait by LDGSTS or the bulk copy engine), claimed (the chunks after the wait
// handed out at run time to even out the tail), pipe (02's v4 r1 c8 pipelined, with and without
// its L2 prefetch before the wait, stamped), rows (one row per warp at a time, dealt statically or
// claimed at run time, the SMs free or held to two launches' blocks), half (the first row only half
// or a quarter loaded before the wait), data (a real y->x chain, carried by the grid boundary or by
// the data: x poisoned and polled, no wait). sm_90 only (PTX inline); no HIP build.
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <iterator>
#include "../../common/bulk_copy.h"  // bulk_wait: the suite's bounded mbarrier wait
#include "../../common/two_buffer.h"  // two_buffer_stream: 02's pipelined schedule (the pipe set)
#include "../../common/chain.h"  // the data set's data-carried readiness (chain_data_*)
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)
struct v4 { uint32_t x, y, z, w; };
__device__ __forceinline__ v4 ldw(const void* p) { v4 v; asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)); return v; }
__device__ __forceinline__ void pf(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p) : "memory"); }
__device__ __forceinline__ void dot8(const v4& w, const v4& x, float& a0, float& a1) {
  const uint32_t ww[4] = {w.x, w.y, w.z, w.w}, xx[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) { float2 a = __half22float2(*reinterpret_cast<const __half2*>(&ww[i])); float2 b = __half22float2(*reinterpret_cast<const __half2*>(&xx[i])); a0 = fmaf(a.x, b.x, a0); a1 = fmaf(a.y, b.y, a1); }
}
// MODE 0 chunk0 regs pre-wait; 1 +L2 pf chunk1 after wait; 2 +L2 pf all rest after wait;
// 3 chunk1 cp.async->smem pre-wait; 4 = 3 + L2 pf rest after wait; 5 L2 pf chunk1 pre-wait;
// 6 chunk1 cp.async->smem right after wait; 30 data-carried (below), 31 its polls backing off,
// 32 its polls backing off and one lane gating each chunk
__device__ unsigned long long* g_ts;  // [launch][3][2048]: start per block, wait return per warp, end per warp
__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
// MODE 30 (the `data` set): the dependency carried by the data, not by the grid. x is the previous
// launch's y, poisoned with 0xFFFF halves (a NaN no FP16 arithmetic here produces) by the graph's
// first node; each lane reads its x vectors with relaxed gpu-scope loads (L2, not L1) and re-reads,
// with a short sleep, any vector still holding a poisoned half (2 ms: give up, counted, exit 1;
// common/chain.h's chain_data_load16 / chain_data_poll16);
// the 4 row sums of a group are stored together, relaxed, one 8-byte store. No griddepcontrol.wait:
// the launch's warps take x chunk by chunk as the previous launch's warps write it.
__device__ unsigned g_timeouts;  // polls that gave up (2 ms): any in a validated variant fails the run
// common/chain.h's data-carried primitives, on the probe's v4
__device__ __forceinline__ v4 as_v4(const vec4u& t) { return v4{t.x, t.y, t.z, t.w}; }
__device__ __forceinline__ vec4u as_vec4u(const v4& t) { vec4u u; u.x = t.x; u.y = t.y; u.z = t.z; u.w = t.w; return u; }
template <int MODE, bool PDL, bool WAIT, bool STAMP = false>
__global__ void __launch_bounds__(128, 4) kern(const __half* __restrict__ W, const __half* __restrict__ x, __half* y, int N, int K, unsigned* prog, unsigned target, int delay_ns) {
  extern __shared__ v4 sm[];
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
  const int nw = gridDim.x * wpb, groups = N / 4, nvec = K / 8, nch = nvec / 128;
  const int li = STAMP ? (int)(target / (unsigned)min(nw, groups)) : 0;
  unsigned long long* ts = STAMP ? g_ts + (size_t)li * 3 * 2048 : nullptr;
  if (STAMP && threadIdx.x == 0) { ts[blockIdx.x] = gt(); unsigned sid; asm("mov.u32 %0, %%smid;" : "=r"(sid)); ts[1024 + blockIdx.x] = sid; }
  if (PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  bool first = true;
  v4* my = sm + wib * (MODE == 12 ? 32 : 16) * 32;
  auto pf_chunk = [&](const __half* wr, int ch) {
    const char* b = reinterpret_cast<const char*>(wr);
#pragma unroll
    for (int L = lane; L < 64; L += 32) pf(b + (size_t)(L / 16) * K * 2 + ch * 2048 + (L % 16) * 128);
  };
  auto cp_chunk = [&](const __half* wr, int ch, int slot = 0) {
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const __half* src = wr + (size_t)r * K + 8 * (ch * 128 + c * 32 + lane);
        uint32_t dst = (uint32_t)__cvta_generic_to_shared(my + slot * 512 + (r * 4 + c) * 32 + lane);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
      }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  if (PDL && MODE == 7 && delay_ns > 0) {
    unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    unsigned long long t = t0;
    while (t - t0 < (unsigned long long)delay_ns) { __nanosleep(64); asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); }
  }
  if (PDL && (MODE == 8 || MODE == 9) && target > 0) {
    if (lane == 0) {
      unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
      for (;;) {
        unsigned v; asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(prog) : "memory");
        if ((int)(v - target) >= 0) break;
        unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > 20000) break;  // 20 us: give up waiting, a hint only
        __nanosleep(32);
      }
    }
    __syncwarp();
  }
  for (int g = blockIdx.x * wpb + wib; g < groups; g += nw) {
    const __half* wr = W + (size_t)g * 4 * K;
    float a[4][2] = {};
#pragma unroll 1
    for (int ch = 0; ch < nch; ++ch) {
      v4 w[4][4];
      const bool from_smem = first && ((ch == 1 && (MODE == 3 || MODE == 4 || MODE == 6 || MODE == 12)) || (ch == 2 && MODE == 12)) && ch < nch;
      if (from_smem) {
        asm volatile("cp.async.wait_all;" ::: "memory");
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int c = 0; c < 4; ++c) w[r][c] = my[(ch - 1) * 512 + (r * 4 + c) * 32 + lane];
      } else {
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int c = 0; c < 4; ++c) w[r][c] = ldw(wr + (size_t)r * K + 8 * (ch * 128 + c * 32 + lane));
      }
      if (PDL && lane == 0 && g + nw >= groups && ((MODE == 8 && ch == nch - 1) || (MODE == 9 && ch == (nch > 1 ? nch - 2 : 0))))
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(prog) : "memory");
      if (first && ch == 0) {
        if ((MODE == 3 || MODE == 4 || MODE == 12) && nch > 1) cp_chunk(wr, 1, 0);
        if (MODE == 12 && nch > 2) cp_chunk(wr, 2, 1);
        if (MODE == 5 && nch > 1) pf_chunk(wr, 1);
        if (PDL && WAIT) asm volatile("griddepcontrol.wait;" ::: "memory");
        if (STAMP && MODE < 30 && lane == 0) ts[2048 + blockIdx.x * wpb + wib] = gt();
        if (MODE == 6 && nch > 1) cp_chunk(wr, 1);
        if (MODE == 1 && nch > 1) pf_chunk(wr, 1);
        if (MODE == 2) for (int c2 = 1; c2 < nch; ++c2) pf_chunk(wr, c2);
        if (MODE == 4) for (int c2 = 2; c2 < nch; ++c2) pf_chunk(wr, c2);
      }
      v4 xs[4];
      if (MODE == 30 || MODE == 31 || MODE == 32) {
        const unsigned max_sleep = MODE == 30 ? 32u : 2048u;
        if (MODE == 32) chain_data_gate16(x + 8 * (ch * 128 + 3 * 32), lane == 0, &g_timeouts, max_sleep);  // lane 0's last vector of the chunk
#pragma unroll
        for (int c = 0; c < 4; ++c) xs[c] = as_v4(chain_data_load16(x + 8 * (ch * 128 + c * 32 + lane)));
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (chain_data_poisoned(as_vec4u(xs[c]))) xs[c] = as_v4(chain_data_poll16(x + 8 * (ch * 128 + c * 32 + lane), &g_timeouts, max_sleep));
        if (STAMP && first && ch == 0) { __syncwarp(); if (lane == 0) ts[2048 + blockIdx.x * wpb + wib] = gt(); }
      }
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const v4 xv = MODE >= 30 ? xs[c] : *reinterpret_cast<const v4*>(x + 8 * (ch * 128 + c * 32 + lane));
#pragma unroll
        for (int r = 0; r < 4; ++r) dot8(w[r][c], xv, a[r][0], a[r][1]);
      }
    }
    first = false;
    float out[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      float s = a[r][0] + a[r][1];
      for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
      out[r] = s;
      if (MODE < 30 && lane == 0) y[g * 4 + r] = __float2half(s);
    }
    if (MODE >= 30 && lane == 0)
      asm volatile("st.relaxed.gpu.global.v2.u32 [%0], {%1, %2};" ::"l"(y + g * 4), "r"(chain_data_bits(out[0]) | (unsigned)chain_data_bits(out[1]) << 16),
                   "r"(chain_data_bits(out[2]) | (unsigned)chain_data_bits(out[3]) << 16) : "memory");
    if (STAMP && lane == 0) ts[4096 + blockIdx.x * wpb + wib] = gt();
  }
  if (first && PDL && WAIT) asm volatile("griddepcontrol.wait;" ::: "memory");
}

// m12' / m13: chunk 0 in registers and chunks 1, 2 in shared memory before the wait (TMA: cp.async.bulk
// on a per-warp mbarrier; else LDGSTS); after the wait chunk 0 is consumed, chunk 3's loads issued,
// chunks 1, 2 consumed from shared memory, then chunk 3. K = 4096 only (4 chunks of 128 vectors).
template <bool TMA, bool PDL, bool WAIT, bool STAMP = false>
__global__ void __launch_bounds__(128, 3) kern2(const __half* __restrict__ W, const __half* __restrict__ x, __half* y, int N, int K, unsigned* prog, unsigned target, int) {
  extern __shared__ __align__(128) v4 sm2[];
  __shared__ __align__(8) unsigned long long bars[4];
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
  const int nw = gridDim.x * wpb, groups = N / 4;
  const int li = STAMP ? (int)(target / (unsigned)min(nw, groups)) : 0;
  unsigned long long* ts = STAMP ? g_ts + (size_t)li * 3 * 2048 : nullptr;
  if (STAMP && threadIdx.x == 0) { ts[blockIdx.x] = gt(); unsigned sid; asm("mov.u32 %0, %%smid;" : "=r"(sid)); ts[1024 + blockIdx.x] = sid; }
  if (PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  v4* my = sm2 + wib * 2 * 512;  // [chunk 1..2][row 0..3][128 vectors]
  const unsigned bar = (unsigned)__cvta_generic_to_shared(&bars[wib]);
  if (TMA && lane == 0) { asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory"); asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
  __syncwarp();
  int phase = 0;
  for (int g = blockIdx.x * wpb + wib; g < groups; g += nw) {
    const __half* wr = W + (size_t)g * 4 * K;
    float a[4][2] = {};
    v4 w[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) w[r][c] = ldw(wr + (size_t)r * K + 8 * (c * 32 + lane));
    if (TMA) {
      if (lane == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(16384u) : "memory");
#pragma unroll
        for (int ch = 1; ch <= 2; ++ch)
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            unsigned dst = (unsigned)__cvta_generic_to_shared(my + (ch - 1) * 512 + r * 128);
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(wr + (size_t)r * K + ch * 1024), "r"(2048u), "r"(bar) : "memory");
          }
      }
    } else {
#pragma unroll
      for (int ch = 1; ch <= 2; ++ch)
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            unsigned dst = (unsigned)__cvta_generic_to_shared(my + (ch - 1) * 512 + r * 128 + c * 32 + lane);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(wr + (size_t)r * K + 8 * (ch * 128 + c * 32 + lane)) : "memory");
          }
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
    if (PDL && WAIT && g < nw) asm volatile("griddepcontrol.wait;" ::: "memory");
    if (STAMP && lane == 0 && g < nw) ts[2048 + blockIdx.x * wpb + wib] = gt();
    auto consume = [&](int ch) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const v4 xv = *reinterpret_cast<const v4*>(x + 8 * (ch * 128 + c * 32 + lane));
#pragma unroll
        for (int r = 0; r < 4; ++r) dot8(w[r][c], xv, a[r][0], a[r][1]);
      }
    };
    consume(0);
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) w[r][c] = ldw(wr + (size_t)r * K + 8 * (3 * 128 + c * 32 + lane));
    if (TMA) {
      bulk_wait(bar, (unsigned)phase, gt(), kBulkTimeoutTicks);  // bounded: traps after 10 s (the host then exits 1)
      phase ^= 1;
    } else {
      asm volatile("cp.async.wait_all;" ::: "memory");
    }
#pragma unroll
    for (int ch = 1; ch <= 2; ++ch)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const v4 xv = *reinterpret_cast<const v4*>(x + 8 * (ch * 128 + c * 32 + lane));
#pragma unroll
        for (int r = 0; r < 4; ++r) dot8(my[(ch - 1) * 512 + r * 128 + c * 32 + lane], xv, a[r][0], a[r][1]);
      }
    consume(3);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      float s = a[r][0] + a[r][1];
      for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
      if (lane == 0) y[g * 4 + r] = __float2half(s);
    }
    if (TMA) { __syncwarp(); asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
    if (STAMP && lane == 0) ts[4096 + blockIdx.x * wpb + wib] = gt();
  }
  if (blockIdx.x * wpb + wib >= groups && PDL && WAIT) asm volatile("griddepcontrol.wait;" ::: "memory");
}

// The claimed kernels' pieces: one chunk of a 4-row group into registers, its 4 row sums
// (butterfly: every lane holds them), and a run-time claim (lane 0's atomic, broadcast).
__device__ __forceinline__ void load_group_chunk(v4 (&w)[4][4], const __half* W, int K, int g, int ch, int lane) {
  const __half* wr = W + (size_t)g * 4 * K;
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) w[r][c] = ldw(wr + (size_t)r * K + 8 * (ch * 128 + c * 32 + lane));
}
__device__ __forceinline__ void chunk_sums(const v4 (&w)[4][4], const __half* x, int ch, int lane, float (&s)[4]) {
  float a[4][2] = {};
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const v4 xv = *reinterpret_cast<const v4*>(x + 8 * (ch * 128 + c * 32 + lane));
#pragma unroll
    for (int r = 0; r < 4; ++r) dot8(w[r][c], xv, a[r][0], a[r][1]);
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    s[r] = a[r][0] + a[r][1];
    for (int o = 16; o; o >>= 1) s[r] += __shfl_xor_sync(~0u, s[r], o);
  }
}
// claim_ask: lane 0 takes the next index (other lanes 0); read it with claim_take, as late as the
// caller can (krows overlaps the round trip with a row's arithmetic); claim_next does both at once.
__device__ __forceinline__ unsigned claim_ask(unsigned* claim, int lane) {
  unsigned u = 0;
  if (lane == 0) asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(u) : "l"(claim) : "memory");
  return u;
}
__device__ __forceinline__ int claim_take(unsigned asked) { return (int)__shfl_sync(~0u, asked, 0); }
__device__ __forceinline__ int claim_next(unsigned* claim, int lane) { return claim_take(claim_ask(claim, lane)); }
// m20 / m21: chunk 0 of the warp's own group in registers before the wait (static); after it, the
// other chunks of every group are claimed at run time (8 counters per launch). Where a claimed
// chunk's 4 row sums go:
//   m20 (STORED false): added at L2 into y32; the warp whose count completes a group's 4th chunk
//       writes y (FP16) and zeroes y32 and the group's count for the next launch;
//   m21 (STORED true): no atomics on the results: stored into part[group][chunk][row] (plain
//       relaxed stores; each value is its own readiness flag against a NaN sentinel), and the
//       group's owner (the warp that did its chunk 0) collects them at its end.
// K = 4096 (4 chunks) only.
__device__ float* g_y32;
__device__ unsigned* g_done;
__device__ unsigned* g_claim;  // [launch][8]
__device__ float* g_part;      // [groups][4][4]
__device__ __forceinline__ float ld_relaxed_f(const float* p) { float v; asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_relaxed_f(float* p, float v) { asm volatile("st.relaxed.gpu.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory"); }
#define SENT 0x7fc0deadu
template <bool STORED, bool PDL, bool WAIT, bool STAMP = false>
__global__ void __launch_bounds__(128, 4) kern_claimed(const __half* __restrict__ W, const __half* __restrict__ x, __half* y, int N, int K, unsigned* prog, unsigned target, int launch) {
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
  const int groups = N / 4;
  unsigned long long* ts = STAMP ? g_ts + (size_t)launch * 3 * 2048 : nullptr;
  if (STAMP && threadIdx.x == 0) { ts[blockIdx.x] = gt(); unsigned sid; asm("mov.u32 %0, %%smid;" : "=r"(sid)); ts[1024 + blockIdx.x] = sid; }
  if (PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int gw = blockIdx.x * wpb + wib;  // this warp; owns group gw's chunk 0 (nw == groups)
  unsigned* claim = g_claim + (size_t)launch * 8 + (gw & 7);
  const int part0 = (gw & 7) * (groups / 8), units = 3 * (groups / 8);  // its partition: groups [part0, part0 + groups/8) x chunks 1..3
  v4 w[4][4];
  float s[4], own[4] = {};
  auto settle = [&](int g, int ch) {  // chunk ch of group g summed into s: take it to the group's total
    if (STORED) {
      if (ch == 0) {
#pragma unroll
        for (int r = 0; r < 4; ++r) own[r] = s[r];
      } else if (lane < 4) {
        st_relaxed_f(g_part + (g * 4 + ch) * 4 + lane, lane == 0 ? s[0] : lane == 1 ? s[1] : lane == 2 ? s[2] : s[3]);
      }
    } else if (lane == 0) {
      float* yy = g_y32 + g * 4;
#pragma unroll
      for (int r = 0; r < 4; ++r) asm volatile("red.relaxed.gpu.global.add.f32 [%0], %1;" ::"l"(yy + r), "f"(s[r]) : "memory");
      unsigned old;
      asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(g_done + g) : "memory");
      if (old == 3) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          y[g * 4 + r] = __float2half(ld_relaxed_f(yy + r));
          yy[r] = 0.f;
        }
        g_done[g] = 0;
      }
    }
  };

  if (gw < groups) load_group_chunk(w, W, K, gw, 0, lane);
  if (PDL && WAIT) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (STAMP && lane == 0) ts[2048 + gw] = gt();
  if (gw >= groups) return;
  int u = claim_next(claim, lane);
  chunk_sums(w, x, 0, lane, s);
  settle(gw, 0);
  while (u < units) {
    const int g = part0 + u % (groups / 8), ch = 1 + u / (groups / 8);
    load_group_chunk(w, W, K, g, ch, lane);
    const int un = claim_next(claim, lane);
    chunk_sums(w, x, ch, lane, s);
    settle(g, ch);
    u = un;
  }
  if (STORED) {
    // collect this warp's group: lanes 0..11 poll (chunk 1..3) x (row 0..3)
    float v = 0.f;
    if (lane < 12) {
      float* p = g_part + (gw * 4 + 1 + lane / 4) * 4 + lane % 4;
      unsigned long long t0 = gt();
      for (;;) {
        v = ld_relaxed_f(p);
        if (__float_as_uint(v) != SENT) break;
        if (gt() - t0 > 2000000ull) { v = __int_as_float(0x7fffffff); atomicAdd(&g_timeouts, 1u); break; }  // 2 ms: give up, NaN out, counted (exit 1)
      }
      st_relaxed_f(p, __uint_as_float(SENT));
    }
    // row r's sum: own[r] + lanes r, 4 + r, 8 + r
    float t = v + __shfl_down_sync(~0u, v, 4) + __shfl_down_sync(~0u, v, 8);
    if (lane < 4) y[gw * 4 + lane] = __float2half((lane == 0 ? own[0] : lane == 1 ? own[1] : lane == 2 ? own[2] : own[3]) + t);
  }
  if (STAMP && lane == 0) ts[4096 + gw] = gt();
}
// pipe: 02-gemv's v4 rows in flight r1 c8 pipelined (gemv_rows_pipelined_r1c8[_pdl]), restated
// here with the probe's stamps: one row per warp, chunks of 8 loads of 16 B per lane (4 KB per
// warp), chunk i+1's loads issued before chunk i is consumed (02's two_buffer_stream, from
// common/two_buffer.h). PDL: chunk 0
// in registers, and (PF) the rest of the warp's first row prefetched into L2 (prefetch.global.L2,
// one 128-byte line per lane and step), before griddepcontrol.wait. The question (2026-12-06,
// results/02-gemv.md "chained: what the dependency costs", last point): in 02's runs this kernel
// chains 0.32 us beyond its floor on an H100 and 1.85 us on an H200, while r4 c4 is 1.06 beyond on
// both. `launch` is the launch index (the stamps' row).
template <bool PDL, bool WAIT, bool PF, bool STAMP = false>
__global__ void __launch_bounds__(256, 2) kpipe(const __half* __restrict__ W, const __half* __restrict__ x, __half* y, int N, int K, unsigned*, unsigned, int launch) {
  constexpr int C = 8, step = 32 * C;  // vectors (16 B) per row per chunk
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
  const int nw = gridDim.x * wpb, gw = blockIdx.x * wpb + wib, nch = (K / 8) / step;
  const int items = gw < N ? ((N - 1 - gw) / nw + 1) * nch : 0;
  unsigned long long* ts = STAMP ? g_ts + (size_t)launch * 3 * 2048 : nullptr;
  if (STAMP && threadIdx.x == 0) { ts[blockIdx.x] = gt(); unsigned sid; asm("mov.u32 %0, %%smid;" : "=r"(sid)); ts[1024 + blockIdx.x] = sid; }
  if (PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  auto row_of = [&](int i) { return gw + (i / nch) * nw; };
  auto load = [&](int i, v4 (&buf)[C]) {
    const __half* wr = W + (size_t)row_of(i) * K + 8 * ((i % nch) * step + lane);
#pragma unroll
    for (int c = 0; c < C; ++c) buf[c] = ldw(wr + 8 * 32 * c);
  };
  float a0 = 0.f, a1 = 0.f;
  auto consume = [&](int i, const v4 (&buf)[C]) {
    const int v0 = (i % nch) * step + lane;
#pragma unroll
    for (int c = 0; c < C; ++c) dot8(buf[c], *reinterpret_cast<const v4*>(x + 8 * (v0 + 32 * c)), a0, a1);
    if (i % nch == nch - 1) {
      float t = a0 + a1;
      for (int o = 16; o; o >>= 1) t += __shfl_xor_sync(~0u, t, o);
      if (lane == 0) y[row_of(i)] = __float2half(t);
      a0 = a1 = 0.f;
    }
  };
  v4 a[C], b[C];
  if (items > 0) {
    load(0, a);
    if (PDL && PF && nch > 1) {
      const char* c = reinterpret_cast<const char*>(W + (size_t)row_of(0) * K + 8 * step);
      for (int off = lane * 128; off < (K / 8 - step) * 16; off += 32 * 128) pf(c + off);
    }
  }
  if (PDL && WAIT) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (STAMP && lane == 0 && gw < 2048) ts[2048 + gw] = gt();
  two_buffer_stream(items, a, b, load, consume);
  if (STAMP && lane == 0 && gw < 2048) ts[4096 + gw] = gt();
}
// rows (2026-12-07): one row per warp at a time (r1 c16: 16 loads of 16 B per lane, the row's 8 KB in
// one batch), the warp's first row (gw) loaded before the wait. After the wait the other rows are
// either dealt statically (gw + nw, gw + 2 nw, ...: 02's v4 r1 c16) or, CLAIM, handed out at run
// time from the launch's own counter (g_claim[launch * 8], zeroed by the graph's first node), the
// next claim asked for while the current row's loads are in flight. Whole rows: no partial sums,
// one atomic per row. The question: does a tail evened out at run time let the launch two ahead
// become resident only when its predecessor's blocks leave (with the residency limited to two
// launches, by registers or by dynamic shared memory the kernel does not use), so that its first loads fill the
// wait instead of landing long before it? PF: the dealt form with its second row asked of L2 before
// the wait (on an H100 the pipelined rung's L2 prefetch chains to within 0.32 us of its floor, on an
// H200 it loses; with two launches resident the prefetch is issued one GEMV ahead, not two or
// three). `launch` is the launch index.
// x through an asm load: a plain one is loop-invariant, and the compiler hoists all 16 of a lane's
// vectors out of the row loop (64 registers beside the row's 64: 128 and spills)
__device__ __forceinline__ v4 ldx(const void* p) { v4 v; asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p)); return v; }
// Loads C0..C1-1 of a lane's 16 vectors of one row (compile-time bounds: the array stays in registers).
template <int C0, int C1>
__device__ __forceinline__ void row_chunks(v4 (&w)[16], const __half* wr) {
#pragma unroll
  for (int c = C0; c < C1; ++c) w[c] = ldw(wr + 8 * 32 * c);
}
// PRE (the `half` set, 2026-12-07): of the first row only loads 0..PRE-1 before the wait (16: all
// of it, 8 KB a warp; 8: 4 KB; 4: 2 KB), the rest after it. 05-sync's PDL-boundary probe found a
// boundary queueing behind what is in flight (0.48 us idle, 0.66 at 32 KB an SM, 2.0 at 64 KB, H100).
template <bool PDL, bool WAIT, bool CLAIM, bool STAMP = false, bool PF = false, int PRE = 16>
__global__ void __launch_bounds__(128, 4) krows(const __half* __restrict__ W, const __half* __restrict__ x, __half* y, int N, int K, unsigned*, unsigned, int launch) {
  constexpr int C = 16;
  static_assert(PRE >= 1 && PRE <= C, "PRE: 1..16 vectors a lane before the wait");
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
  const int nw = gridDim.x * wpb, gw = blockIdx.x * wpb + wib;
  unsigned long long* ts = STAMP ? g_ts + (size_t)launch * 3 * 2048 : nullptr;
  if (STAMP && threadIdx.x == 0) { ts[blockIdx.x] = gt(); unsigned sid; asm("mov.u32 %0, %%smid;" : "=r"(sid)); ts[1024 + blockIdx.x] = sid; }
  if (PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned* claim = g_claim + (size_t)launch * 8;
  v4 w[C];
  auto row_at = [&](int row) { return W + (size_t)row * K + 8 * lane; };
  auto load = [&](int row) { row_chunks<0, C>(w, row_at(row)); };
  auto consume = [&](int row) {
    float a0 = 0.f, a1 = 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c) dot8(w[c], ldx(x + 8 * (lane + 32 * c)), a0, a1);
    float t = a0 + a1;
    for (int o = 16; o; o >>= 1) t += __shfl_xor_sync(~0u, t, o);
    if (lane == 0) y[row] = __float2half(t);
  };
  const int D = N - nw;  // rows after each warp's first
  if (gw < N) row_chunks<0, PRE>(w, row_at(gw));
  // PF (dealt rows only): the warp's second row asked of L2 before the wait, 2 lines of 128 B a lane
  if (PF && !CLAIM && gw + nw < N)
    for (int L = lane; L < K * 2 / 128; L += 32) pf(reinterpret_cast<const char*>(W + (size_t)(gw + nw) * K) + (size_t)L * 128);
  if (PDL && WAIT) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (STAMP && lane == 0 && gw < 2048) ts[2048 + gw] = gt();
  if (gw >= N) return;
  if (PRE < C) row_chunks<PRE, C>(w, row_at(gw));
  if (CLAIM) {
    // lane 0's atomic is issued first and read (broadcast) only after the row in hand is summed,
    // so its round trip overlaps that row's arithmetic (and, in the loop, the next row's loads)
    unsigned asked = claim_ask(claim, lane);
    consume(gw);
    for (int u = claim_take(asked); u < D;) {
      const int row = nw + u;
      load(row);
      asked = claim_ask(claim, lane);
      consume(row);
      u = claim_take(asked);
    }
  } else {
    consume(gw);
    for (int row = gw + nw; row < N; row += nw) { load(row); consume(row); }
  }
  if (STAMP && lane == 0 && gw < 2048) ts[4096 + gw] = gt();
}
__global__ void fill_sent(float* p, int n) { for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = __uint_as_float(SENT); }
__global__ void fill(__half* p, size_t n, uint32_t seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed; h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    p[i] = __float2half(((h & 0xffffff) / 16777216.f * 2.f - 1.f) * scale);
  }
}
static unsigned* g_claim_host;
typedef void (*KF)(const __half*, const __half*, __half*, int, int, unsigned*, unsigned, int);
int main(int argc, char** argv) {
  int copies = 32;
  {
    const std::string a = argc == 2 || argc == 3 ? argv[1] : "";
    static const char* const kSets[] = {"prefetch", "delay", "timeline", "smem", "claimed", "pipe", "rows", "half", "data"};
    if (std::find(std::begin(kSets), std::end(kSets), a) == std::end(kSets)) {
      fprintf(stderr, "usage: chain_probe SET [COPIES], SET one of:");
      for (const char* n : kSets) fprintf(stderr, " %s", n);
      fprintf(stderr, "\n");
      return 2;
    }
    if (argc == 3) {
      char* end = nullptr;
      const long c = strtol(argv[2], &end, 10);
      if (end == argv[2] || *end != '\0' || c < 2 || c > 64) {
        fprintf(stderr, "chain_probe: bad COPIES '%s': an integer in [2, 64]\n", argv[2]);
        return 2;
      }
      copies = static_cast<int>(c);
    }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) { printf("chain_probe: skipped (no GPU)\n"); return 77; }
  }
  const int N = 4096, K = 4096, launches = 200;
  printf("chain_probe: %d rotating copies of W (%.2f GB)\n", copies, 2.0 * N * K * copies / 1e9);
  const size_t per = (size_t)N * K;
  __half *W, *x, *y;
  CK(cudaMalloc(&W, per * copies * 2)); CK(cudaMalloc(&x, K * 2)); CK(cudaMalloc(&y, N * 2));
  // the data set chains y into x 200 times: weights of 1.7/64 keep |y| near |x| (a gain of about 1
  // a GEMV: 64 * 1.7/64 / sqrt(3)); 1/64 elsewhere, as before
  const std::string set = argc > 1 ? argv[1] : "";
  fill<<<1024, 256>>>(W, per * copies, 1234u, (set == "data" ? 1.7f : 1.f) / 64); fill<<<8, 256>>>(x, K, 99u, 1.f);
  __half* bufs;  // [launches + 1][K]: bufs[0] = x, bufs[i + 1] = launch i's y (the dep variants)
  CK(cudaMalloc(&bufs, (size_t)(launches + 1) * K * 2));
  CK(cudaMemcpy(bufs, x, K * 2, cudaMemcpyDeviceToDevice));
  CK(cudaDeviceSynchronize());
  std::vector<__half> hx(K); CK(cudaMemcpy(hx.data(), x, K * 2, cudaMemcpyDeviceToHost));
  std::vector<__half> hw(per);
  unsigned* prog; CK(cudaMalloc(&prog, 4));
  unsigned long long* ts; const size_t nts = (size_t)launches * 3 * 2048; CK(cudaMalloc(&ts, nts * 8)); CK(cudaMemcpyToSymbol(g_ts, &ts, sizeof ts));
  std::vector<unsigned long long> hts(nts);
  { float* y32; unsigned *done, *claim; CK(cudaMalloc(&y32, N * 4)); CK(cudaMalloc(&done, N)); CK(cudaMalloc(&claim, launches * 8 * 4));
    CK(cudaMemset(y32, 0, N * 4)); CK(cudaMemset(done, 0, N)); CK(cudaMemset(claim, 0, launches * 32));
    CK(cudaMemcpyToSymbol(g_y32, &y32, sizeof y32)); CK(cudaMemcpyToSymbol(g_done, &done, sizeof done)); CK(cudaMemcpyToSymbol(g_claim, &claim, sizeof claim)); g_claim_host = claim;
    float* part; CK(cudaMalloc(&part, N * 4 * 4)); fill_sent<<<64, 256>>>(part, N * 4); CK(cudaMemcpyToSymbol(g_part, &part, sizeof part)); }
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // R: rows per warp (pipe: 1). dep: a real chain, launch i reads launch i-1's y (bufs[i]) and
  // writes bufs[i + 1], the graph's first node poisoning bufs[1..] with 0xFFFF halves
  struct V { const char* name; KF f; bool pdl; int grid, threads; size_t smem; int delay; int R = 4; bool dep = false; };
  std::vector<V> vs;
  // The variant sets, one per question (each set's raw output is committed under results/h200/probes/).
  const int G = 256, T = 128;
  if (set == "prefetch") {  // more of the next GEMV's weights in flight, before or after the wait
    vs.push_back({"isolated m0", kern<0, false, true>, false, G, T, 0, 0});
    vs.push_back({"nowait m0", kern<0, true, false>, true, G, T, 0, 0});
    vs.push_back({"chain m0 base", kern<0, true, true>, true, G, T, 0, 0});
    vs.push_back({"chain m1 pf1 after", kern<1, true, true>, true, G, T, 0, 0});
    vs.push_back({"chain m2 pfall after", kern<2, true, true>, true, G, T, 0, 0});
    vs.push_back({"chain m3 smem1 pre", kern<3, true, true>, true, G, T, 32768, 0});
    vs.push_back({"chain m4 smem1 pre+pf", kern<4, true, true>, true, G, T, 32768, 0});
    vs.push_back({"chain m5 pf1 pre", kern<5, true, true>, true, G, T, 0, 0});
    vs.push_back({"chain m6 smem1 after", kern<6, true, true>, true, G, T, 32768, 0});
    vs.push_back({"nowait m3", kern<3, true, false>, true, G, T, 32768, 0});
  } else if (set == "delay") {  // the next GEMV's first loads issued later: after a delay, or when the previous one is in its last chunk
    vs.push_back({"isolated m0", kern<0, false, true>, false, G, T, 0, 0});
    vs.push_back({"nowait m0", kern<0, true, false>, true, G, T, 0, 0});
    vs.push_back({"chain m0 base", kern<0, true, true>, true, G, T, 0, 0});
    static const char* dn[] = {"chain m7 delay 1us", "chain m7 delay 2us", "chain m7 delay 3us", "chain m7 delay 4us", "chain m7 delay 5us", "chain m7 delay 6us", "chain m7 delay 7us"};
    for (int d = 1; d <= 7; ++d) vs.push_back({dn[d - 1], kern<7, true, true>, true, G, T, 0, d * 1000});
    for (int grid : {256, 128, 512}) {
      vs.push_back({"chain m8 gate last", kern<8, true, true>, true, grid, T, 0, 0});
      vs.push_back({"chain m9 gate last-1", kern<9, true, true>, true, grid, T, 0, 0});
      vs.push_back({"chain m0 base", kern<0, true, true>, true, grid, T, 0, 0});
      vs.push_back({"nowait m0", kern<0, true, false>, true, grid, T, 0, 0});
    }
  } else if (set == "timeline") {  // when blocks start, when the wait returns, when warps end
    for (int grid : {256, 264, 128}) {
      vs.push_back({"isolated stamp", kern<0, false, true, true>, false, grid, T, 0, 0});
      vs.push_back({"nowait stamp", kern<0, true, false, true>, true, grid, T, 0, 0});
      vs.push_back({"chain stamp", kern<0, true, true, true>, true, grid, T, 0, 0});
      vs.push_back({"chain m0 base", kern<0, true, true>, true, grid, T, 0, 0});
    }
  } else if (set == "smem") {  // chunks 1 and 2 in shared memory before the wait (LDGSTS or the bulk copy engine)
    vs.push_back({"chain stamp", kern<0, true, true, true>, true, G, T, 0, 0});
    vs.push_back({"nowait stamp", kern<0, true, false, true>, true, G, T, 0, 0});
    vs.push_back({"chain m12' ldgsts stamp", kern2<false, true, true, true>, true, G, T, 65536, 0});
    vs.push_back({"chain m13 tma stamp", kern2<true, true, true, true>, true, G, T, 65536, 0});
    vs.push_back({"nowait m13 tma stamp", kern2<true, true, false, true>, true, G, T, 65536, 0});
    vs.push_back({"isolated m13 tma", kern2<true, false, true, false>, false, G, T, 65536, 0});
    vs.push_back({"chain m12 smem12 pre stamp", kern<12, true, true, true>, true, G, T, 65536, 0});
    vs.push_back({"chain base again", kern<0, true, true, false>, true, G, T, 0, 0});
  } else if (set == "claimed") {  // the chunks after the wait handed out at run time (balance the tail)
    vs.push_back({"chain stamp", kern<0, true, true, true>, true, G, T, 0, 0});
    vs.push_back({"isolated stamp", kern<0, false, true, true>, false, G, T, 0, 0});
    vs.push_back({"chain m20 claimed stamp", kern_claimed<false, true, true, true>, true, G, T, 0, -1});
    vs.push_back({"isolated m20 claimed", kern_claimed<false, false, true, false>, false, G, T, 0, -1});
    vs.push_back({"chain m21 claimed stamp", kern_claimed<true, true, true, true>, true, G, T, 0, -1});
    vs.push_back({"isolated m21 claimed", kern_claimed<true, false, true, false>, false, G, T, 0, -1});
    vs.push_back({"nowait m0", kern<0, true, false>, true, G, T, 0, 0});
    vs.push_back({"chain base", kern<0, true, true>, true, G, T, 0, 0});
  } else if (set == "pipe") {  // 02's v4 r1 c8 pipelined: chained with and without its L2 prefetch, isolated, no wait
    vs.push_back({"chain m0 base", kern<0, true, true>, true, G, T, 0, 0});  // r4 c4, the timeline set's kernel, for reference
    for (auto gt2 : {std::make_pair(512, 128), std::make_pair(256, 256), std::make_pair(132, 256)}) {  // at most 2048 warps: the stamps' rows
      const int g2 = gt2.first, t2 = gt2.second;
      vs.push_back({"pipe isolated stamp", kpipe<false, true, false, true>, false, g2, t2, 0, -1, 1});
      vs.push_back({"pipe chain pf stamp", kpipe<true, true, true, true>, true, g2, t2, 0, -1, 1});
      vs.push_back({"pipe chain nopf stamp", kpipe<true, true, false, true>, true, g2, t2, 0, -1, 1});
      vs.push_back({"nowait pipe pf stamp", kpipe<true, false, true, true>, true, g2, t2, 0, -1, 1});
      vs.push_back({"pipe chain pf", kpipe<true, true, true, false>, true, g2, t2, 0, -1, 1});
    }
  } else if (set == "rows") {  // r1 c16 rows, dealt statically or claimed at run time, with two launches resident or more
    // krows takes 122 registers: 4 blocks of 128 an SM. At 264 blocks (2 an SM) that is exactly two
    // launches; at 132 (1 an SM) four, or two where 113 KB of unused dynamic shared memory a block
    // holds the SM to 2 blocks; at 512 (3.9 an SM) one launch and the next one's first blocks.
    vs.push_back({"chain m0 base", kern<0, true, true>, true, G, T, 0, 0});  // r4 c4, the timeline set's kernel, for reference
    for (int g2 : {264, 132, 512}) {
      vs.push_back({"rows isolated", krows<false, true, false>, false, g2, T, 0, -1, 1});
      vs.push_back({"rows claim isolated", krows<false, true, true>, false, g2, T, 0, -1, 1});
      vs.push_back({"nowait rows", krows<true, false, false>, true, g2, T, 0, -1, 1});
      vs.push_back({"rows static chain stamp", krows<true, true, false, true>, true, g2, T, 0, -1, 1});
      vs.push_back({"rows claim chain stamp", krows<true, true, true, true>, true, g2, T, 0, -1, 1});
      vs.push_back({"rows static pf chain stamp", krows<true, true, false, true, true>, true, g2, T, 0, -1, 1});
      if (g2 == 132) {
        vs.push_back({"rows static chain two-launch stamp", krows<true, true, false, true>, true, g2, T, 113 * 1024, -1, 1});
        vs.push_back({"rows claim chain two-launch stamp", krows<true, true, true, true>, true, g2, T, 113 * 1024, -1, 1});
        vs.push_back({"rows static pf chain two-launch stamp", krows<true, true, false, true, true>, true, g2, T, 113 * 1024, -1, 1});
      }
      vs.push_back({"rows static chain", krows<true, true, false>, true, g2, T, 0, -1, 1});
      vs.push_back({"rows claim chain", krows<true, true, true>, true, g2, T, 0, -1, 1});
    }
  } else if (set == "half") {  // rows dealt, two launches resident, with all, half or a quarter of the first row before the wait
    // At 264 blocks (two launches by registers) a launch two ahead puts 64 KB an SM in flight as its
    // predecessor's blocks leave with whole first rows, 32 with halves, 16 with quarters.
    for (int g2 : {264, 132}) {
      const size_t sm = g2 == 132 ? 113 * 1024 : 0;  // 132: held to two launches by unused shared memory
      vs.push_back({"rows isolated", krows<false, true, false>, false, g2, T, sm, -1, 1});
      vs.push_back({"nowait rows", krows<true, false, false>, true, g2, T, sm, -1, 1});
      vs.push_back({"rows static chain stamp", krows<true, true, false, true>, true, g2, T, sm, -1, 1});
      vs.push_back({"rows half chain stamp", krows<true, true, false, true, false, 8>, true, g2, T, sm, -1, 1});
      vs.push_back({"rows quarter chain stamp", krows<true, true, false, true, false, 4>, true, g2, T, sm, -1, 1});
      vs.push_back({"rows static chain", krows<true, true, false>, true, g2, T, sm, -1, 1});
      vs.push_back({"rows half chain", krows<true, true, false, false, false, 8>, true, g2, T, sm, -1, 1});
      vs.push_back({"rows quarter chain", krows<true, true, false, false, false, 4>, true, g2, T, sm, -1, 1});
    }
  } else if (set == "data") {  // the dependency carried by the data (poisoned x, polled) against the grid boundary
    // Every launch's x is its predecessor's y. The plain r4 c4 chain (same x every launch) and its
    // no-wait bound for reference; then, per grid, the real chain by griddepcontrol.wait and by the
    // data, each also stamped (the data form's "wait return" is when a warp has its first chunk of x).
    vs.push_back({"chain m0 base", kern<0, true, true>, true, G, T, 0, 0});
    vs.push_back({"nowait m0", kern<0, true, false>, true, G, T, 0, 0});
    for (int g2 : {256, 128, 264}) {
      vs.push_back({"real chain m0", kern<0, true, true>, true, g2, T, 0, 0, 4, true});
      vs.push_back({"data chain m30", kern<30, true, false>, true, g2, T, 0, 0, 4, true});
      vs.push_back({"real chain m0 stamp", kern<0, true, true, true>, true, g2, T, 0, 0, 4, true});
      vs.push_back({"data chain m30 stamp", kern<30, true, false, true>, true, g2, T, 0, 0, 4, true});
    }
    // (added after the first run, where the data chain ran 1.9-3x slower than the wait) fewer
    // polls: every lane polling with its sleep doubling to 2 us (m31), and one lane gating the
    // warp's read of each chunk, sleeping the same (m32)
    for (int g2 : {256, 128}) {
      vs.push_back({"data chain m31 backoff", kern<31, true, false>, true, g2, T, 0, 0, 4, true});
      vs.push_back({"data chain m32 gate", kern<32, true, false>, true, g2, T, 0, 0, 4, true});
      vs.push_back({"data chain m32 gate stamp", kern<32, true, false, true>, true, g2, T, 0, 0, 4, true});
    }
  } else {  // every name of kSets has a branch above
    fprintf(stderr, "chain_probe: set '%s' has no variants\n", set.c_str());
    return 2;
  }
  for (auto& v : vs) if (v.smem > 48 * 1024) CK(cudaFuncSetAttribute(v.f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
  int last = (launches - 1) % copies;
  CK(cudaMemcpy(hw.data(), W + per * last, per * 2, cudaMemcpyDeviceToHost));
  // y = W x in double (W on the host), and a result's relative L2 error against such a reference
  auto cpu_gemv = [&](const __half* w, const __half* xin) {
    std::vector<double> o(N);
    for (int n = 0; n < N; ++n) { double acc = 0; for (int k = 0; k < K; ++k) acc += (double)__half2float(w[(size_t)n * K + k]) * __half2float(xin[k]); o[n] = acc; }
    return o;
  };
  auto rel_l2 = [&](const std::vector<double>& ref, const __half* got) {
    double e2 = 0, r2 = 0;
    for (int n = 0; n < N; ++n) { const double d = __half2float(got[n]) - ref[n]; e2 += d * d; r2 += ref[n] * ref[n]; }
    return std::sqrt(e2 / r2);
  };
  const std::vector<double> r = cpu_gemv(hw.data(), hx.data());
  // the real chains' three checked launches (the first, the middle, the last) and their weights,
  // copied to the host once for every variant of the set that checks them
  const int checked[3] = {0, launches / 2, launches - 1};
  std::vector<std::vector<__half>> hwc;
  if (std::any_of(vs.begin(), vs.end(), [](const V& v) { return v.dep; }))
    for (int i : checked) {
      hwc.emplace_back(per);
      CK(cudaMemcpy(hwc.back().data(), W + per * (i % copies), per * 2, cudaMemcpyDeviceToHost));
    }
  bool bad = false;
  for (auto& v : vs) {
    { int nb = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, v.f, v.threads, v.smem)); printf("[%s: %d blocks/SM]\n", v.name, nb); }
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemsetAsync(prog, 0, 4, s));
    CK(cudaMemsetAsync(g_claim_host, 0, launches * 32, s));
    if (v.dep) CK(cudaMemsetAsync(bufs + K, 0xff, (size_t)launches * K * 2, s));  // poison every y of the chain
    const unsigned wtot = (unsigned)std::min(v.grid * (v.threads / 32), N / 4);
    for (int i = 0; i < launches; ++i) {
      cudaLaunchConfig_t lc = {}; lc.gridDim = v.grid; lc.blockDim = v.threads; lc.dynamicSmemBytes = v.smem; lc.stream = s;
      cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
      lc.attrs = at; lc.numAttrs = v.pdl ? 1 : 0;
      const __half* xi = v.dep ? bufs + (size_t)i * K : x;
      __half* yi = v.dep ? bufs + (size_t)(i + 1) * K : y;
      CK(cudaLaunchKernelEx(&lc, v.f, (const __half*)(W + per * (i % copies)), xi, yi, N, K, prog, (unsigned)i * wtot, v.delay < 0 ? i : v.delay));
    }
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
    { const unsigned zero = 0; CK(cudaMemcpyToSymbol(g_timeouts, &zero, sizeof zero)); }
    CK(cudaMemset(y, 0xff, N * 2));
    CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
    double rel = 0;
    if (!v.dep) {
      std::vector<__half> hy(N); CK(cudaMemcpy(hy.data(), y, N * 2, cudaMemcpyDeviceToHost));
      rel = rel_l2(r, hy.data());
    } else {  // each checked launch against a CPU double GEMV of the input it actually read
      std::vector<__half> hb((size_t)(launches + 1) * K);
      CK(cudaMemcpy(hb.data(), bufs, hb.size() * 2, cudaMemcpyDeviceToHost));
      for (int j = 0; j < 3; ++j) {
        const int i = checked[j];
        const double ri = rel_l2(cpu_gemv(hwc[j].data(), &hb[(size_t)i * K]), &hb[(size_t)(i + 1) * K]);
        if (std::isnan(ri) || ri > rel) rel = ri;  // the worst of the three, NaN sticking
      }
    }
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int rep = 0; rep < 15; ++rep) { CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms); }
    std::sort(t.begin(), t.end());
    double us = t[t.size() / 2] * 1000.0 / launches, mn = t[0] * 1000.0 / launches;
    const bool bound = strncmp(v.name, "nowait", 6) == 0;
    if (!bound && !(rel < 1e-3)) bad = true;
    // y is validated after the first replay only, and each launch overwrites it: a poll that gave
    // up in any other launch or replay is caught by the count instead (the stamp replay's below).
    unsigned timeouts = 0;
    CK(cudaMemcpyFromSymbol(&timeouts, g_timeouts, sizeof timeouts));
    if (timeouts && !bound) { printf("%s: %u partial polls gave up after 2 ms\n", v.name, timeouts); bad = true; }
    printf("%-26s %4d x %-4d smem %6zu  median %.3f us  min %.3f us  %.0f GB/s  %s\n", v.name, v.grid, v.threads, v.smem, us, mn,
           (per * 2 + K * 2 + N * 2) / us / 1e3, bound ? "(no wait: y raced, not validated)" : rel < 1e-3 ? "valid" : "INVALID");
    if (bound) (void)rel;
    if (strstr(v.name, "stamp")) {
      CK(cudaMemset(ts, 0, nts * 8)); CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
      { unsigned n = 0; CK(cudaMemcpyFromSymbol(&n, g_timeouts, sizeof n));
        if (n > timeouts && !bound) { printf("%s: %u partial polls gave up after 2 ms (stamp replay)\n", v.name, n - timeouts); bad = true; } }
      CK(cudaMemcpy(hts.data(), ts, nts * 8, cudaMemcpyDeviceToHost));
      const int nb = v.grid, nwp = std::min(v.grid * v.threads / 32, N / v.R), wpb = v.threads / 32;
      if (nwp > 2048 || nb > 1024) { printf("%s: %d warps / %d blocks exceed the stamp rows (2048 / 1024)\n", v.name, nwp, nb); return 2; }
      double acc[9] = {}; int cnt = 0;
      for (int i = 50; i < 150; ++i) {
        auto L = [&](int li, int part, int n, bool mx) { unsigned long long m = mx ? 0ull : ~0ull; for (int j = 0; j < n; ++j) { auto t = hts[(size_t)li * 3 * 2048 + part * 2048 + j]; m = mx ? std::max(m, t) : std::min(m, t); } return (double)m; };
        double pe_last = L(i - 1, 2, nwp, true), pe_first = L(i - 1, 2, nwp, false), pe_med;
        { std::vector<double> e; for (int j = 0; j < nwp; ++j) e.push_back((double)hts[(size_t)(i - 1) * 6144 + 4096 + j]); std::sort(e.begin(), e.end()); pe_med = e[e.size() / 2]; }
        double p_wret_last = L(i - 1, 1, nwp, true);
        double s_first = L(i, 0, nb, false), s_last = L(i, 0, nb, true), w_first = L(i, 1, nwp, false), w_last = L(i, 1, nwp, true), e_last = L(i, 2, nwp, true);
        double d[9] = {s_first - pe_last, s_last - pe_last, w_first - pe_last, w_last - pe_last, e_last - pe_last, pe_last - pe_first, pe_last - pe_med, s_first - p_wret_last, s_last - L(i, 0, nb, false)};
        for (int k = 0; k < 9; ++k) acc[k] += d[k]; ++cnt;
      }
      {
        double sum_end[8] = {}, max_end[8] = {}; int nk[8] = {}; int hist[8] = {};
        for (int i = 50; i < 150; ++i) {
          const unsigned long long* b = &hts[(size_t)i * 6144];
          int per_sm[256] = {};
          for (int j = 0; j < nb; ++j) per_sm[b[1024 + j] & 255]++;
          double e0 = 1e30; for (int j = 0; j < nwp; ++j) e0 = std::min(e0, (double)b[4096 + j]);
          double ws = 1e30; for (int j = 0; j < nwp; ++j) ws = std::min(ws, (double)b[2048 + j]);
          for (int sm_ = 0; sm_ < 132; ++sm_) hist[std::min(per_sm[sm_], 7)]++;
          for (int j = 0; j < nwp; ++j) {
            int k = std::min(per_sm[b[1024 + j / wpb] & 255], 7);
            double e = (double)b[4096 + j] - ws;
            sum_end[k] += e; nk[k]++; max_end[k] = std::max(max_end[k], e);
          }
        }
        printf("   blocks of one launch per SM: ");
        for (int k = 0; k < 8; ++k) if (hist[k]) printf("%d:%.1f SMs ", k, hist[k] / 100.0);
        printf("\n   warp end after first wait return, by how many blocks of its launch share its SM: ");
        for (int k = 0; k < 8; ++k) if (nk[k]) printf("k=%d mean %.0f max %.0f ns (%d warps) | ", k, sum_end[k] / nk[k], max_end[k], nk[k]);
        printf("\n");
      }
      printf("   timeline (ns, vs previous launch's last warp end): first block start %.0f, last block start %.0f, first wait return %.0f, last wait return %.0f, last end (period) %.0f; prev tail: last-first end %.0f, last-median end %.0f; first start after prev's last wait return %.0f; start spread %.0f\n",
             acc[0] / cnt, acc[1] / cnt, acc[2] / cnt, acc[3] / cnt, acc[4] / cnt, acc[5] / cnt, acc[6] / cnt, acc[7] / cnt, acc[8] / cnt);
    }
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
  }
  if (bad) { printf("chain_probe: a chained or isolated variant failed validation\n"); return 1; }
  return 0;
}
