// release_probe: what a grid barrier's arrival costs while the block has bytes in flight. An
// exploratory probe beside 05-sync, not a suite result: its figures are quoted on
// results/05-sync.md and results/06-decode.md with the raw output they come from, never in
// 05-sync.json.
//
// The question comes from 06-decode's ring engine: there a grid barrier costs 2-4 us a layer,
// where 05-sync's acquire-release barrier takes 1.1 us with nothing else in flight, and with
// nobody waiting (06's head_count) the arriving thread's release alone took 3.6 us a layer. The
// candidate: a release (red.release.gpu: MEMBAR.ALL.GPU + RED in the SASS) waits for the block's
// earlier memory operations, and the ring keeps 128-192 KB a SM of weight copies in flight.
//
// One cooperative kernel, one block of 512 threads per SM (06's shape), `iters` barriers per
// launch (06's form: __syncthreads, thread 0 red.release.gpu on one monotonic counter, thread 0
// polls it with ld.acquire.gpu). Before each barrier the block puts `bytes` in flight, of a kind:
//   none        nothing (the bare barrier)
//   loads       every thread: 16-byte ld.global.nc into registers (bytes / 8 KB of them each)
//   loads_w1+   the same bytes, loaded by warps 1..15 only: the arriving warp 0 has none in flight
//   bulk_t0     cp.async.bulk copies of 4 KB into shared memory issued by thread 0 (the arriving
//               thread; 06's ring issuer is thread 0 too), completing on one mbarrier
//   bulk_w1     the same copies issued by warp 1's lane 0
//   red_shared  every thread: float4 REDs (atomicAdd of a float4, result unused) into one 8 KB array all
//               blocks share (06's residual add before the barrier after O and down)
//   red_own     the same REDs into an array of the block's own
//   pf_bulk     thread 0 asks L2 for the bytes (cp.async.bulk.prefetch.L2, 4 KB each); nothing comes
//               back to the SM. Using them: every thread then loads them (16-byte ld.global.nc)
//   pf_lines    the same by every thread, prefetch.global.L2 of one 128-byte line at a time
// and in one of three orders:
//   inflight    issue, arrive (release), wait, then use the bytes: what 06 does
//   landed      issue, use the bytes (wait for them; REDs: every thread's __threadfence), arrive,
//               wait: serial, the no-overlap bound
//   relaxed     issue, arrive with red.relaxed (no release: not a correct barrier, the floor of
//               the overlap), wait, use
//   first       arrive (release) with nothing in flight, then issue, wait, use: the arrival before
//               the refill (what 06 could do at a stage's end)
// Thread 0 reads clock64 around its arrival and around its wait; the table gives per barrier the
// launch's time over iters (events, median of 5 launches), and the mean over blocks of the arrival
// and of the wait. If the release waits for the bytes in flight, inflight's arrival grows with
// `bytes` toward the time they take to land and inflight approaches landed; if not, the arrival
// stays flat and inflight approaches relaxed.
//
// Correct before timed: every launch's payloads (each block writes a value of the generation before
// it arrives; after the wait it reads its neighbour's and counts a stale one) must show no stale
// value in the release orders; the loaded words (the source is all 0x01 bytes) and the bulk copies'
// words are summed and must add up to what was moved; every RED target must hold blocks x iters x
// its count. Every spin times out on %globaltimer (error record, abort flag, exit 1); the mbarrier
// wait traps on its own timeout (a launch error, exit 1).
//
//   mkdir -p build && nvcc -O3 -std=c++17 -arch=sm_90 -o build/release_probe 05-sync/probes/release_probe.cu
//   build/release_probe [--quick]
// sm_90 only (PTX inline); no HIP build.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "../../common/bulk_copy.h"     // bulk_arm / bulk_copy_to / bulk_wait: the ring's copy engine
#include "../../common/device_scope.h"  // scope_release_increment_u64 / scope_acquire_load_u64: 06's barrier
#include "../../common/probe.h"     // PROBE_CK, probe_start

enum Kind { kNone, kLoads, kLoadsOthers, kBulkT0, kBulkW1, kRedShared, kRedOwn, kPfBulk, kPfLines };
enum Order { kInFlight, kLanded, kRelaxed, kFirst };
constexpr int kThreads = 512;
constexpr unsigned kPiece = 4096;     // one bulk copy (06's ring slot per warp)
constexpr int kMaxLoads = 16;         // 16-byte loads per thread at most (128 KB a block; warps 1..15: 120 KB)
constexpr unsigned kRedFloats = 2048;  // 8 KB: 06's residual (hidden 2048)

struct Args {
  const uint4* src;                  // all 0x01 bytes, > 4x L2: the rotating source of loads and copies
  size_t src_vecs;
  int iters, nblocks;
  unsigned bytes;                    // in flight per block per barrier
  unsigned long long* counter;       // the monotonic barrier counter (fresh per launch: 0)
  unsigned* payload;                 // [2][nblocks]
  float* red;                        // kRedShared: [kRedFloats]; kRedOwn: [nblocks][kRedFloats]
  unsigned long long* out;           // per block: [0] arrive cycles, [1] wait cycles, [2] stale, [3] word sum
  unsigned long long* clk;           // block 0: clock64 and %globaltimer at start and end
  unsigned* abort_flag;
  unsigned long long* err;           // [0] 1 on timeout, [1] block, [2] generation
  unsigned long long timeout_ns;
};

// 06's residual add: atomicAdd of a float4 whose result is unused (in the SASS of 85960666de27
// ATOMG.E.ADD.F32x4 with the result discarded, not a REDG).
__device__ __forceinline__ void red_v4(float* p, float v) {
  atomicAdd(reinterpret_cast<float4*>(p), make_float4(v, v, v, v));
}
__device__ __forceinline__ unsigned long long sum4(const uint4& v) {
  return static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
}
__device__ __forceinline__ unsigned payload_of(unsigned long long g, int b) {
  return static_cast<unsigned>(g * 2654435761ull + b * 40503u + 1u);
}

// The weight stream's 16-byte load (common/chain.h's chain_weight_load is the same instruction,
// but chain.h brings stream_read.h's 66 kernels with it).
__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

template <int KIND, int ORDER>
__global__ void __launch_bounds__(kThreads, 1) probe(Args a) {
  extern __shared__ __align__(128) uint4 smem[];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ int s_fail;
  const int tid = threadIdx.x, b = blockIdx.x, n = a.nblocks;
  const bool t0 = tid == 0;
  constexpr bool kBulk = KIND == kBulkT0 || KIND == kBulkW1;
  const int issuer = KIND == kBulkW1 ? 32 : 0;
  const unsigned vecs = a.bytes / 16;                   // 16-byte vectors in flight per block
  const int loaders = KIND == kLoadsOthers ? kThreads - 32 : kThreads;
  const int per_thread = static_cast<int>(vecs) / loaders;  // host: a whole number, <= kMaxLoads
  if (t0) {
    s_fail = 0;
    if (kBulk) { bulk_bar_init(smem_u32(&bar)); bulk_bar_init_fence(); }
    if (b == 0) { a.clk[0] = clock64(); a.clk[1] = port_const_clock(); }
  }
  __syncthreads();
  unsigned long long words = 0, arrive = 0, wait = 0, stale = 0;
  float* red = KIND == kRedOwn ? a.red + static_cast<size_t>(b) * kRedFloats : a.red;
  const unsigned long long t_start = port_const_clock();
  for (int i = 0; i < a.iters; ++i) {
    const unsigned long long g = i;
    const size_t off = ((static_cast<size_t>(i) * n + b) * vecs) % (a.src_vecs - vecs);
    // kFirst: the block arrives (release, nothing of this round in flight) before it issues
    if (ORDER == kFirst) {
      if (t0) a.payload[(g & 1) * n + b] = payload_of(g, b);
      __syncthreads();
      if (t0) {
        const long long c0 = clock64();
        scope_release_increment_u64(a.counter);
        arrive += clock64() - c0;
      }
    }
    // 1. the bytes: put in flight
    uint4 v[kMaxLoads];
    const bool loader = KIND == kLoads || (KIND == kLoadsOthers && tid >= 32);
    if (loader) {
      const int li = KIND == kLoadsOthers ? tid - 32 : tid;
#pragma unroll
      for (int j = 0; j < kMaxLoads; ++j)
        if (j < per_thread) v[j] = ld_stream(a.src + off + static_cast<size_t>(j) * loaders + li);
    }
    if (kBulk && tid == issuer) {
      bulk_refill_fence();  // the previous round's reads of smem (after a __syncthreads) before the refill
      bulk_arm(smem_u32(&bar), a.bytes);
      for (unsigned p = 0; p < a.bytes / kPiece; ++p)
        bulk_copy_to(smem_u32(smem + p * (kPiece / 16)), a.src + off + p * (kPiece / 16), kPiece, smem_u32(&bar));
    }
    if (KIND == kRedShared || KIND == kRedOwn)
      for (unsigned k = tid; k < a.bytes / 16; k += kThreads) red_v4(red + (k % (kRedFloats / 4)) * 4, 1.0f);
    if (KIND == kPfBulk && t0)
      for (unsigned p = 0; p < a.bytes / kPiece; ++p)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a.src + off + p * (kPiece / 16)), "r"(kPiece)
                     : "memory");
    if (KIND == kPfLines)
      for (unsigned k = tid; k < a.bytes / 128; k += kThreads)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(a.src + off + k * 8) : "memory");
    // 2. use them (landed) or not yet
    auto use = [&]() {
      if (loader) {
#pragma unroll
        for (int j = 0; j < kMaxLoads; ++j)
          if (j < per_thread) words += sum4(v[j]);
      }
      if (kBulk) {
        bulk_wait(smem_u32(&bar), i & 1, t_start, a.timeout_ns);
        for (unsigned k = tid; k < vecs; k += kThreads) words += sum4(smem[k]);
      }
      if (KIND == kRedShared || KIND == kRedOwn) __threadfence();  // landed: this thread's REDs acknowledged
      if (KIND == kPfBulk || KIND == kPfLines) {  // the prefetched bytes, loaded (from L2 if they are there)
#pragma unroll
        for (int j = 0; j < kMaxLoads; ++j)
          if (j < per_thread) words += sum4(ld_stream(a.src + off + static_cast<size_t>(j) * kThreads + tid));
      }
    };
    if (ORDER == kLanded) use();
    if (ORDER != kFirst && t0) a.payload[(g & 1) * n + b] = payload_of(g, b);
    // 3. the barrier (06's form), thread 0 timing its arrival and its wait
    if (ORDER != kFirst) __syncthreads();
    if (t0) {
      const long long c0 = clock64();
      if (ORDER == kRelaxed) asm volatile("red.relaxed.gpu.global.add.u64 [%0], 1;" ::"l"(a.counter) : "memory");
      else if (ORDER != kFirst) scope_release_increment_u64(a.counter);
      const long long c1 = clock64();
      const unsigned long long want = (g + 1) * n, ts = port_const_clock();
      for (unsigned k = 0; scope_acquire_load_u64(a.counter) < want; ++k) {
        if ((k & 63) == 63 && (*reinterpret_cast<volatile unsigned*>(a.abort_flag) || port_const_clock() - ts > a.timeout_ns)) {
          if (atomicCAS(a.abort_flag, 0u, 1u) == 0u) { a.err[0] = 1; a.err[1] = b; a.err[2] = g; }
          s_fail = 1;
          break;
        }
      }
      const long long c2 = clock64();
      arrive += c1 - c0;
      wait += c2 - c1;
      if (ORDER != kRelaxed) stale += a.payload[(g & 1) * n + (b + 1) % n] != payload_of(g, (b + 1) % n);
    }
    __syncthreads();
    if (s_fail) break;
    if (ORDER != kLanded) use();
    if (kBulk) __syncthreads();  // every read of smem before the next round's refill
  }
  // the words each thread summed, into the block's total
  for (int o = 16; o > 0; o /= 2) words += __shfl_xor_sync(0xffffffffu, words, o);
  if ((tid & 31) == 0 && words) atomicAdd(&a.out[b * 4 + 3], words);
  if (t0) {
    a.out[b * 4 + 0] = arrive;
    a.out[b * 4 + 1] = wait;
    a.out[b * 4 + 2] = stale;
    if (b == 0) { a.clk[2] = clock64(); a.clk[3] = port_const_clock(); }
  }
}

typedef void (*KernelFn)(Args);
struct Config {
  const char* kind_name;
  int kind;
  const char* order_name;
  KernelFn fn;
  unsigned bytes;
};

template <int KIND>
void add_orders(std::vector<Config>& c, const char* name, unsigned bytes) {
  c.push_back({name, KIND, "inflight", probe<KIND, kInFlight>, bytes});
  c.push_back({name, KIND, "landed", probe<KIND, kLanded>, bytes});
  c.push_back({name, KIND, "relaxed", probe<KIND, kRelaxed>, bytes});
  c.push_back({name, KIND, "first", probe<KIND, kFirst>, bytes});
}

int main(int argc, char** argv) {
  bool quick = false;
  cudaDeviceProp prop;
  if (const int rc = probe_start(argc, argv, "release_probe", &quick, &prop); rc >= 0) return rc;
  const int n = prop.multiProcessorCount;
  const int iters = quick ? 200 : 2000, reps = quick ? 2 : 5;
  // The source: 1 GiB of 0x01 bytes (> 4x any L2 here), so each round's bytes come from DRAM.
  const size_t src_bytes = size_t(1) << 30;
  uint4* src = probe_ones_source(src_bytes);
  unsigned long long *counter, *out, *clk, *err;
  unsigned *payload, *abort_flag;
  float* red;
  PROBE_CK(cudaMalloc(&counter, 8));
  PROBE_CK(cudaMalloc(&out, n * 4 * 8));
  PROBE_CK(cudaMalloc(&clk, 4 * 8));
  PROBE_CK(cudaMalloc(&err, 3 * 8));
  PROBE_CK(cudaMalloc(&payload, 2 * n * 4));
  PROBE_CK(cudaMalloc(&abort_flag, 4));
  PROBE_CK(cudaMalloc(&red, size_t(n) * kRedFloats * 4));

  std::vector<Config> cs;
  add_orders<kNone>(cs, "none", 0);
  for (unsigned kb : {16u, 64u, 128u}) {
    add_orders<kLoads>(cs, "loads", kb * 1024);
    add_orders<kBulkT0>(cs, "bulk_t0", kb * 1024);
    add_orders<kBulkW1>(cs, "bulk_w1", kb * 1024);
  }
  for (unsigned kb : {60u, 120u}) add_orders<kLoadsOthers>(cs, "loads_w1+", kb * 1024);  // 15 warps: whole loads
  add_orders<kRedShared>(cs, "red_shared", kRedFloats * 4);
  add_orders<kRedOwn>(cs, "red_own", kRedFloats * 4);
  for (unsigned kb : {64u, 128u}) {
    add_orders<kPfBulk>(cs, "pf_bulk", kb * 1024);
    add_orders<kPfLines>(cs, "pf_lines", kb * 1024);
  }

  cudaStream_t s;
  PROBE_CK(cudaStreamCreate(&s));
  ProbeTimer timer;
  std::printf("release_probe: %s, %d SMs, one block of %d threads per SM, %d barriers per launch, median of %d launches\n",
              prop.name, n, kThreads, iters, reps);
  std::printf("%-11s %-9s %9s %10s %11s %10s %10s\n", "kind", "order", "KB/block", "us/barrier", "arrive us", "wait us",
              "GB/s moved");
  int failures = 0;
  for (const Config& c : cs) {
    const bool bulk = c.kind == kBulkT0 || c.kind == kBulkW1;
    const size_t dyn = bulk ? c.bytes : 0;
    const int loaders = c.kind == kLoadsOthers ? kThreads - 32 : kThreads;
    const bool loads = c.kind == kLoads || c.kind == kLoadsOthers || c.kind == kPfBulk || c.kind == kPfLines;
    if (loads && (c.bytes / 16 % loaders || c.bytes / 16 / loaders > kMaxLoads)) {
      std::fprintf(stderr, "error: %s %u bytes is not a whole number of loads per thread\n", c.kind_name, c.bytes);
      return kExitUsage;
    }
    PROBE_CK(cudaFuncSetAttribute(c.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(dyn)));
    int per_sm = 0;
    PROBE_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, c.fn, kThreads, dyn));
    if (per_sm < 1) {
      std::fprintf(stderr, "error: %s %s does not fit on an SM\n", c.kind_name, c.order_name);
      return kExitFailure;
    }
    std::vector<double> us;
    std::vector<unsigned long long> h(n * 4), hc(4), herr(3);
    double arrive_us = 0, wait_us = 0;
    for (int r = 0; r < reps + 1; ++r) {  // launch 0: the check's warm-up, not timed
      PROBE_CK(cudaMemsetAsync(counter, 0, 8, s));
      PROBE_CK(cudaMemsetAsync(out, 0, n * 4 * 8, s));
      PROBE_CK(cudaMemsetAsync(err, 0, 3 * 8, s));
      PROBE_CK(cudaMemsetAsync(abort_flag, 0, 4, s));
      PROBE_CK(cudaMemsetAsync(payload, 0xFF, 2 * n * 4, s));  // poisoned: no generation's payload
      PROBE_CK(cudaMemsetAsync(red, 0, size_t(n) * kRedFloats * 4, s));
      Args a = {src, src_bytes / 16, iters, n, c.bytes, counter, payload, red, out, clk, abort_flag, err,
                10000000000ull};
      void* args[] = {&a};
      const float ms = timer.coop_ms(reinterpret_cast<const void*>(c.fn), n, kThreads, args, dyn, s);
      PROBE_CK(cudaMemcpy(herr.data(), err, 3 * 8, cudaMemcpyDeviceToHost));
      if (herr[0]) {
        std::fprintf(stderr, "error: %s %s: barrier wait timed out (block %llu, generation %llu)\n", c.kind_name,
                     c.order_name, herr[1], herr[2]);
        return kExitFailure;
      }
      PROBE_CK(cudaMemcpy(h.data(), out, n * 4 * 8, cudaMemcpyDeviceToHost));
      PROBE_CK(cudaMemcpy(hc.data(), clk, 4 * 8, cudaMemcpyDeviceToHost));
      // the checks, every launch
      unsigned long long stale = 0;
      const bool moves = c.kind != kNone && c.kind != kRedShared && c.kind != kRedOwn;
      const unsigned long long want_words = moves ? static_cast<unsigned long long>(iters) * (c.bytes / 4) * kProbeWordOnes : 0;
      int bad_words = 0;
      for (int b = 0; b < n; ++b) {
        stale += h[b * 4 + 2];
        bad_words += h[b * 4 + 3] != want_words;
      }
      int bad_red = 0;
      if (c.kind == kRedShared || c.kind == kRedOwn) {
        const size_t nf = c.kind == kRedShared ? kRedFloats : size_t(n) * kRedFloats;
        std::vector<float> hr(nf);
        PROBE_CK(cudaMemcpy(hr.data(), red, nf * 4, cudaMemcpyDeviceToHost));
        const double per = double(c.bytes / 16) / (kRedFloats / 4);  // REDs per target float per block per barrier
        const double want = per * iters * (c.kind == kRedShared ? n : 1);
        for (float x : hr) bad_red += x != static_cast<float>(want);
      }
      if (stale || bad_words || bad_red) {
        std::fprintf(stderr, "error: %s %s: %llu stale payloads, %d blocks with a wrong word sum, %d wrong RED targets\n",
                     c.kind_name, c.order_name, stale, bad_words, bad_red);
        ++failures;
        break;
      }
      if (r == 0) continue;
      us.push_back(ms * 1e3 / iters);
      const double cyc_per_us = double(hc[2] - hc[0]) / (double(hc[3] - hc[1]) * 1e-3);
      double ar = 0, wa = 0;
      for (int b = 0; b < n; ++b) { ar += h[b * 4]; wa += h[b * 4 + 1]; }
      arrive_us += ar / n / iters / cyc_per_us / reps;
      wait_us += wa / n / iters / cyc_per_us / reps;
    }
    if (us.size() != static_cast<size_t>(reps)) continue;
    std::sort(us.begin(), us.end());
    const double med = us[us.size() / 2];
    const double moved = c.kind == kNone ? 0 : double(c.bytes) * n / (med * 1e-6) / 1e9;
    std::printf("%-11s %-9s %9u %10.3f %11.3f %10.3f %10.0f\n", c.kind_name, c.order_name, c.bytes / 1024, med, arrive_us,
                wait_us, moved);
    std::fflush(stdout);
  }
  std::printf("release_probe: %s\n", failures ? "FAILED" : "every launch checked (payloads, words, RED targets)");
  return failures ? kExitFailure : kExitOk;
}
