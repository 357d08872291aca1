// loaded_latency: what one dependent load costs while the GPU streams, on an SM that streams and
// on one that does not. An exploratory probe beside 05-sync, not a suite result: its figures are
// quoted on results/05-sync.md with the raw output they come from, never in 05-sync.json.
//
// The question comes from 06-decode and from release_probe: in a decode step every stage waits on
// a few dependent round trips (the barrier's poll, the residual's read, x into shared memory), and
// with the weight stream running each one took microseconds, not the half microsecond of an idle
// GPU (release_probe: a relaxed barrier's wait 0.54 us with nothing in flight, 4.69 us at 128 KB a
// block). Is that the SM's own queue (its round trip waits behind the bytes it asked for itself),
// or the memory system's (everyone's round trips wait behind everyone's bytes)? If it is the SM's
// own, a kernel that leaves some SMs out of the stream can run its dependent chain there at the
// idle latency; if it is the system's, no placement helps and only fewer bytes in flight do.
//
// One block of 512 threads per SM (shared memory sized so that no second block fits). Blocks
// 0..S-1 stream a 1 GiB source with warps 1..15, summing what they load, until every block's chase
// is done: either 16-byte ld.global.nc, D loads per thread in flight (D x 7.5 KB a block), or
// 06-decode's ring, each warp keeping D pieces of P bytes in flight by cp.async.bulk into its own
// shared-memory slots (15 D P bytes a block) and refilling a slot once it has summed its piece.
// In every block, warp 0's lane 0 waits 20 us (the stream ramps up), then times two pointer chases
// with %globaltimer (ns): `hops` dependent loads in a 64 KB ring that L2 holds (every block walks
// the same ring from the same line, the previous launch warmed it, and the stream's loads carry
// L2::evict_first so that they do not push it out), and `hops` in a 256 MB ring (4x the L2 of an H200), 128-byte lines in a random single-cycle order (Sattolo),
// so each hop is a miss with no locality. Blocks S.. do nothing else: the idle SMs.
//
// Correct before timed: every chase's last index must equal the host's walk of the same ring, and
// every streaming thread's word sum what it loaded (the source is all 0x01 bytes). The streamers
// stop on a counter of finished chases, and every spin has a %globaltimer timeout (error, exit 1).
//
//   mkdir -p build && nvcc -O3 -std=c++17 -arch=sm_90 -o build/loaded_latency 05-sync/probes/loaded_latency.cu
//   build/loaded_latency [--quick]
// sm_90 only (PTX inline); no HIP build.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "../../common/bulk_copy.h"  // bulk_load / bulk_wait: 06-decode's ring
#include "../../common/probe.h"     // PROBE_CK, probe_start, probe_chase_ring, probe_hop
#include "../../common/port.h"  // port_const_clock: %globaltimer

constexpr int kThreads = 512;

struct Args {
  const uint4* src;                  // 1 GiB of 0x01 bytes
  size_t src_vecs;
  const unsigned* ring_l2;           // next line index at each line's first word
  const unsigned* ring_dram;
  unsigned l2_lines, dram_lines;
  const unsigned* dram_start;        // per block: where its DRAM chase starts (apart on the cycle)
  int streamers, hops;
  unsigned* done;                    // chases finished (fresh: 0)
  unsigned long long* out;           // per block: [0] l2 chase ns, [1] dram chase ns, [2] l2 end, [3] dram end,
                                     // [4] bytes streamed, [5] word sum, [6] stream ns, [7] timeout
  unsigned long long timeout_ns;
};

// The stream's 16-byte load, marked evict-first in L2 (a cache policy: sm_90's ptxas takes the
// L2::evict_first qualifier on ld only for 32-byte vectors).
__device__ __forceinline__ unsigned long long evict_first_policy() {
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ uint4 ld_stream(const uint4* p, unsigned long long pol) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ unsigned long long chase(const unsigned* ring, unsigned& idx, int hops) {
  const unsigned long long t0 = port_const_clock();
  for (int h = 0; h < hops; ++h) idx = probe_hop(ring, idx);
  return port_const_clock() - t0;
}

// Warps 1..15, LDG: D 16-byte loads per thread in flight, then summed, then the next D.
template <int D>
__device__ void stream_ldg(const Args& a, unsigned long long* o, unsigned long long t0) {
  const int tid = threadIdx.x, b = blockIdx.x, n = gridDim.x;
  const int li = tid - 32, loaders = kThreads - 32;
  const size_t per_round = static_cast<size_t>(loaders) * D;
  size_t off = (static_cast<size_t>(b) * 7919 * per_round) % (a.src_vecs - per_round);
  unsigned long long words = 0, rounds = 0;
  const unsigned long long pol = evict_first_policy();
  for (;;) {
    uint4 v[D];
#pragma unroll
    for (int j = 0; j < D; ++j) v[j] = ld_stream(a.src + off + static_cast<size_t>(j) * loaders + li, pol);
#pragma unroll
    for (int j = 0; j < D; ++j) words += static_cast<unsigned long long>(v[j].x) + v[j].y + v[j].z + v[j].w;
    ++rounds;
    off += static_cast<size_t>(n) * per_round;
    if (off + per_round > a.src_vecs) off %= a.src_vecs - per_round;
    if ((rounds & 7) == 0) {
      if (*reinterpret_cast<volatile unsigned*>(a.done) >= static_cast<unsigned>(n)) break;
      if (port_const_clock() - t0 > a.timeout_ns) { o[7] = 1; break; }
    }
  }
  const unsigned long long t1 = port_const_clock();
  for (int s = 16; s > 0; s /= 2) {
    words += __shfl_xor_sync(0xffffffffu, words, s);
    rounds += __shfl_xor_sync(0xffffffffu, rounds, s);
  }
  if ((tid & 31) == 0) {
    atomicAdd(&o[4], rounds * D * 16);
    atomicAdd(&o[5], words);
    atomicMax(&o[6], t1 - t0);  // the block's last warp
  }
}

// Warps 1..15, bulk copies (06-decode's ring): each warp's lane 0 keeps D pieces of P bytes in flight
// into the warp's D shared-memory slots (cp.async.bulk, one mbarrier a slot); the warp sums each
// piece once it has landed and its lane 0 refills the slot with the warp's next piece. The copies
// carry the LDG stream's evict-first policy (06's carry none), so that the L2 ring stays in L2.
template <int D, int P>
__device__ void stream_bulk(const Args& a, unsigned long long* o, unsigned long long t0, uint4* smem,
                            unsigned long long* bars) {
  constexpr int kVecs = P / 16;
  const int tid = threadIdx.x, b = blockIdx.x, n = gridDim.x, lane = tid & 31, wi = tid / 32 - 1;
  uint4* slots = smem + static_cast<size_t>(wi) * D * kVecs;
  const unsigned long long pol = evict_first_policy();  // as the LDG stream's: the L2 ring stays
  unsigned long long* bar = bars + wi * D;
  if (lane == 0) {
    for (int s = 0; s < D; ++s) bulk_bar_init(smem_u32(&bar[s]));
    bulk_bar_init_fence();
  }
  __syncwarp();
  auto src_of = [&](unsigned long long k) {  // the warp's k-th piece
    return a.src + ((k * n + b) * 15 + wi) * kVecs % (a.src_vecs - kVecs);
  };
  auto issue = [&](int s, unsigned long long k) {
    if (lane == 0) {
      bulk_refill_fence();  // the lanes' reads of the slot (before the __syncwarp) come before the overwrite
      bulk_arm(smem_u32(&bar[s]), P);
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
          ::"r"(smem_u32(slots + s * kVecs)), "l"(src_of(k)), "r"(P), "r"(smem_u32(&bar[s])), "l"(pol) : "memory");
    }
  };
  for (int s = 0; s < D; ++s) issue(s, s);
  unsigned long long words = 0, pieces = 0, k = D;
  bool stop = false;
  for (unsigned long long i = 0;; ++i) {
    const int s = static_cast<int>(i % D);
    bulk_wait(smem_u32(&bar[s]), static_cast<unsigned>(i / D) & 1u, t0, a.timeout_ns);
    for (int v = lane; v < kVecs; v += 32) {
      const uint4 x = slots[s * kVecs + v];
      words += static_cast<unsigned long long>(x.x) + x.y + x.z + x.w;
    }
    ++pieces;
    __syncwarp();
    if (!stop && (i & 7) == 7) {
      stop = *reinterpret_cast<volatile unsigned*>(a.done) >= static_cast<unsigned>(n);
      if (port_const_clock() - t0 > a.timeout_ns) { o[7] = 1; stop = true; }
      stop = __shfl_sync(0xffffffffu, stop, 0);
    }
    if (!stop) issue(s, k++);
    else if (pieces == k) break;  // every piece issued has landed and been summed
  }
  const unsigned long long t1 = port_const_clock();
  for (int m = 16; m > 0; m /= 2) words += __shfl_xor_sync(0xffffffffu, words, m);
  if (lane == 0) {
    atomicAdd(&o[4], pieces * P);
    atomicAdd(&o[5], words);
    atomicMax(&o[6], t1 - t0);  // the block's last warp
  }
}

// P == 0: the LDG stream, D loads per thread; P > 0: the bulk-copy stream, D slots of P bytes a warp.
template <int D, int P>
__global__ void __launch_bounds__(kThreads, 1) probe(Args a) {
  extern __shared__ __align__(128) uint4 smem[];
  __shared__ __align__(8) unsigned long long bars[15 * (P ? D : 1)];
  const int tid = threadIdx.x, b = blockIdx.x;
  unsigned long long* o = a.out + static_cast<size_t>(b) * 8;
  const unsigned long long t0 = port_const_clock();
  if (tid == 0) {
    while (port_const_clock() - t0 < 20000) {}  // 20 us: the stream ramps up
    unsigned i2 = 0, id = a.dram_start[b];
    o[0] = chase(a.ring_l2, i2, a.hops);
    o[1] = chase(a.ring_dram, id, a.hops);
    o[2] = i2;
    o[3] = id;
    atomicAdd(a.done, 1u);
  } else if (tid >= 32 && b < a.streamers) {
    if constexpr (P == 0) stream_ldg<D>(a, o, t0);
    else stream_bulk<D, P>(a, o, t0, smem, bars);
  }
}

typedef void (*KernelFn)(Args);

int main(int argc, char** argv) {
  bool quick = false;
  cudaDeviceProp prop;
  if (const int rc = probe_start(argc, argv, "loaded_latency", &quick, &prop); rc >= 0) return rc;
  const int n = prop.multiProcessorCount;
  const int hops = quick ? 200 : 2000, reps = quick ? 2 : 5;
  const size_t src_bytes = size_t(1) << 30;
  uint4* src = probe_ones_source(src_bytes);
  std::mt19937_64 rng(20261206);
  const unsigned l2_lines = (64u << 10) / kProbeLine, dram_lines = (256u << 20) / kProbeLine;
  // Every block walks the L2 ring from line 0. In the DRAM ring block b of launch r starts at step
  // b * spacing + r * hops of the cycle: no two chases of a run meet, and no launch walks lines an
  // earlier one brought into L2.
  std::vector<unsigned> l2_order, dram_order;
  unsigned* ring_l2 = probe_chase_ring(l2_lines, rng, l2_order);
  unsigned* ring_dram = probe_chase_ring(dram_lines, rng, dram_order);
  const size_t spacing = dram_lines / n;
  const int max_launches = static_cast<int>(spacing / hops) - 1;
  if (max_launches < 1) {
    std::fprintf(stderr, "error: %u lines over %d SMs leave no room for %d hops\n", dram_lines, n, hops);
    return kExitFailure;
  }
  std::vector<unsigned> dram_start(n), dram_end(n);
  unsigned* d_dram_start;
  PROBE_CK(cudaMalloc(&d_dram_start, n * 4));
  int launch = 0;  // across the whole run
  unsigned* done;
  unsigned long long* out;
  PROBE_CK(cudaMalloc(&done, 4));
  PROBE_CK(cudaMalloc(&out, size_t(n) * 8 * 8));

  // The streams: LDG with 2-16 loads a thread in flight (15-120 KB a block), and the bulk-copy ring
  // with 1-4 KB pieces, 1-3 slots a warp (30-180 KB a block; 06-decode's ring: 4 KB, 2-3 slots).
  struct Config { const char* kind; int depth, piece; KernelFn fn; };
  const Config depths[] = {{"ldg", 2, 0, probe<2, 0>},          {"ldg", 4, 0, probe<4, 0>},
                           {"ldg", 8, 0, probe<8, 0>},          {"ldg", 16, 0, probe<16, 0>},
                           {"bulk 1K", 2, 1024, probe<2, 1024>}, {"bulk 1K", 4, 1024, probe<4, 1024>},
                           {"bulk 4K", 1, 4096, probe<1, 4096>}, {"bulk 4K", 2, 4096, probe<2, 4096>},
                           {"bulk 4K", 3, 4096, probe<3, 4096>}};
  std::vector<int> streamer_counts = {0, n / 4, n / 2, 3 * n / 4, n - 1, n};
  std::printf("loaded_latency: %s, %d SMs, one block of %d threads per SM (warps 1-15 stream), %d hops per chase, "
              "median of %d launches\n", prop.name, n, kThreads, hops, reps);
  std::printf("%-8s %9s %12s %9s %12s %12s %14s %14s\n", "stream", "streaming", "KB/SM asked", "GB/s", "L2 hop busy", "L2 hop idle",
              "DRAM hop busy", "DRAM hop idle");
  std::printf("%-8s %9s %12s %9s %12s %12s %14s %14s\n", "", "SMs", "", "", "ns", "ns", "ns", "ns");
  int failures = 0;
  for (const Config& c : depths) {
    // One block per SM: more shared memory than half an SM's, or the ring's slots if more.
    const int ring = c.piece ? 15 * c.depth * c.piece : 0;
    const int dyn = std::max(static_cast<int>(prop.sharedMemPerMultiprocessor / 2 + 1024), ring);
    PROBE_CK(cudaFuncSetAttribute(c.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn));
    int per_sm = 0;
    PROBE_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, c.fn, kThreads, dyn));
    if (per_sm != 1) {
      std::fprintf(stderr, "error: %d blocks per SM, not 1\n", per_sm);
      return kExitFailure;
    }
    for (int S : streamer_counts) {
      if (S == 0 && &c != &depths[0]) continue;  // nothing streams: once
      std::vector<double> l2b, l2i, drb, dri, gbs;
      std::vector<unsigned long long> h(size_t(n) * 8);
      for (int r = 0; r < reps + 1; ++r) {  // launch 0: warms L2 with the small ring, not timed
        const size_t step = static_cast<size_t>(launch++ % max_launches) * hops;
        for (int b = 0; b < n; ++b) {
          dram_start[b] = dram_order[b * spacing + step];
          dram_end[b] = dram_order[b * spacing + step + hops];
        }
        PROBE_CK(cudaMemcpy(d_dram_start, dram_start.data(), n * 4, cudaMemcpyHostToDevice));
        PROBE_CK(cudaMemset(done, 0, 4));
        PROBE_CK(cudaMemset(out, 0, size_t(n) * 8 * 8));
        Args a = {src, src_bytes / 16, ring_l2, ring_dram, l2_lines, dram_lines, d_dram_start, S, hops, done, out, 2000000000ull};
        void* args[] = {&a};
        // cooperative: every block resident at once, which the done counter needs
        PROBE_CK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(c.fn), dim3(n), dim3(kThreads), args, dyn, 0));
        PROBE_CK(cudaDeviceSynchronize());
        PROBE_CK(cudaMemcpy(h.data(), out, h.size() * 8, cudaMemcpyDeviceToHost));
        int bad = 0;
        unsigned long long bytes = 0, ns = 0;
        for (int b = 0; b < n; ++b) {
          const unsigned long long* o = &h[size_t(b) * 8];
          bad += o[2] != l2_order[hops % l2_lines] || o[3] != dram_end[b] || o[7] != 0;
          if (b < S) {
            bad += o[5] != o[4] / 4 * kProbeWordOnes || o[4] == 0;
            bytes += o[4];
            ns = std::max(ns, o[6]);
          }
        }
        if (bad) {
          std::fprintf(stderr, "error: %s depth %d, %d streaming: %d blocks with a wrong chase end, word sum or a timeout\n",
                       c.kind, c.depth, S, bad);
          ++failures;
          break;
        }
        if (r == 0) continue;
        double sb = 0, si = 0, db = 0, di = 0;
        int nb = 0, ni = 0;
        for (int b = 0; b < n; ++b) {
          const unsigned long long* o = &h[size_t(b) * 8];
          if (b < S) { sb += o[0]; db += o[1]; ++nb; }
          else { si += o[0]; di += o[1]; ++ni; }
        }
        l2b.push_back(nb ? sb / nb / hops : 0);
        l2i.push_back(ni ? si / ni / hops : 0);
        drb.push_back(nb ? db / nb / hops : 0);
        dri.push_back(ni ? di / ni / hops : 0);
        gbs.push_back(ns ? double(bytes) / ns : 0);
      }
      if (gbs.size() != static_cast<size_t>(reps)) continue;
      auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
      auto cell = [&](const std::vector<double>& v, bool have) { return have ? med(v) : -1.0; };
      const double kb = S == 0 ? 0.0 : c.piece ? ring / 1024.0 : c.depth * 7.5;
      std::printf("%-8s %9d %12.1f %9.0f %12.0f %12.0f %14.0f %14.0f\n", S ? c.kind : "-", S, kb, med(gbs),
                  cell(l2b, S > 0), cell(l2i, S < n), cell(drb, S > 0), cell(dri, S < n));
      std::fflush(stdout);
    }
  }
  std::printf("loaded_latency: %s\n", failures ? "FAILED" : "every launch checked (chase ends, word sums); -1: no such SM");
  return failures ? kExitFailure : kExitOk;
}
