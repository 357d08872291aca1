// paced_ring: can a producer warp that paces the weight stream keep the memory busy through a
// decode layer's dependent chains without lengthening them? An exploratory probe beside
// 06-decode, not a suite result: its figures go on results/06-decode.md with the raw output they
// come from, never in 06-decode.json.
//
// The question comes from 06's timelines (results/06-decode.md, "What the timeline led to", last
// item): under hold, the time beyond the floor is the memory's idle time (about 14 of the 1B
// layer's 17-19 us: prologues, attention, streams over pieces already landed), and the two ways
// to fill it that were tried lost. Opening the ring later made the streams start cold. Narrower
// pieces cost more per piece than they saved. The ring's warps issue only when they consume, so
// the requests come in bursts, and a burst queues ahead of every round trip (05-sync's loaded-latency
// probe: full bandwidth at 30-60 KB in flight an SM with an L2 hop of 0.4-1.0 us, 2.7 us at 180 KB).
// A producer warp could keep a fixed amount in flight at every moment while the consumers
// compute or wait, into a buffer deeper than what is in flight.
//
// The model of a layer, one block of 16 consumer warps per SM (06's shape) plus a producer warp:
// three stages of 4 KB weight pieces per consumer warp (2, 1 and 12: the 1B's QKV, O and MLP bytes
// a block, 95, 64 and 763 KB), each followed, with --chain, by a dependent chain on thread 0: a
// grid barrier (06's: red.release.gpu, a poll of ld.acquire.gpu) and `hops` dependent L2 loads
// (06's prologues), the other consumer warps waiting at a named barrier. Two ways to feed the
// consumers:
//   ring    06's: each consumer warp's lane 0 refills the slot it has just read with its piece m
//           ahead (m slots of 4 KB a warp), whatever stage that piece belongs to
//   paced   warp 16's lanes 0..15 feed consumer warps 0..15: a slot is refilled once its reader
//           has marked it read, and only while fewer than `cap` pieces of the block are in flight
//           (issued, not yet seen landed): a deep buffer (m slots) with little in flight
// Each variant also runs with the chains left out (the stream alone): its time is the bytes'
// floor on this card for that feeder, and what the chains add is the difference.
// A second table takes the chain apart under 06's feed (the ring at 2 slots): the hops swept (0, 2,
// 6), each with the stream and with no pieces at all (the chains alone, on an idle memory system),
// so the barrier's and a hop's share of the time the chains add can be read off, loaded and idle.
//
// Correct before timed: piece p of the source holds the word p in all its 1024 words, so every
// piece a consumer reads must sum to 1024 p (one read of a slot before its copy landed, or after
// the next copy began, sums otherwise); the pieces read must be the pieces asked; any wait past
// its timeout traps or ends the run with exit 1.
//
//   mkdir -p build && nvcc -O3 -std=c++17 -arch=sm_90 -o build/paced_ring 06-decode/probes/paced_ring.cu
//   build/paced_ring [--quick]
// sm_90 only (bulk copies, mbarriers); no HIP build.
#include <cuda_runtime.h>
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>
#include "../../common/bulk_copy.h"     // bulk_bar_init, bulk_arm, bulk_copy_to, bulk_wait, bulk_refill_fence
#include "../../common/device_scope.h"  // scope_release_increment_u64, scope_acquire_load_u64: 06's barrier
#include "../../common/port.h"          // port_const_clock: %globaltimer, ns
#include "../../common/probe.h"         // PROBE_CK, probe_start, probe_chase_ring, probe_hop

constexpr int kConsumers = 16;                       // consumer warps (06's 512 threads)
constexpr int kThreads = (kConsumers + 1) * 32;      // and the producer warp (idle in ring mode)
constexpr unsigned kPiece = 4096;                    // 06's ring piece
constexpr unsigned kWords = kPiece / 4;
constexpr int kMaxSlots = 3;                         // 16 x 3 x 4 KB = 192 KB of shared memory
constexpr int kStages = 3;
// per consumer warp: the 1B's QKV, O and MLP
__host__ __device__ constexpr int stage_pieces(int st) { return st == 0 ? 2 : st == 1 ? 1 : 12; }
constexpr int kLayerPieces = stage_pieces(0) + stage_pieces(1) + stage_pieces(2);

struct Args {
  const unsigned* src;               // piece p: 1024 words of value p
  unsigned src_pieces;
  const unsigned* ring;              // 64 KB of lines in one random cycle: the chains' L2 hops
  int layers, hops, m, cap;          // cap: pieces in flight per block (paced); 0: the ring
  int chain;                         // 0: the stream alone
  int stream;                        // 0: the chains alone (no pieces)
  unsigned long long* counter;       // the grid barrier's monotonic count (fresh: 0)
  unsigned long long* out;           // per block: [0] kernel ns, [1] chain ns (thread 0), [2] bad pieces,
                                     // [3] pieces read, [4] timeouts, [5] hop end index
  unsigned long long timeout_ns;
};

// Consumer warp w's j-th piece of the launch, block b of n: where it lies in the source.
__device__ __forceinline__ unsigned piece_of(int j, int w, int b, int n, unsigned src_pieces) {
  return static_cast<unsigned>((static_cast<unsigned long long>(j) * n + b) * kConsumers + w) % src_pieces;
}
__device__ __forceinline__ bool mbar_done(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile("{ .reg .pred q; mbarrier.test_wait.parity.shared::cta.b64 q, [%1], %2; selp.u32 %0, 1, 0, q; }"
               : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 32) : "memory"); }

__global__ void __launch_bounds__(kThreads, 1) probe(Args a) {
  extern __shared__ __align__(128) unsigned slots[];  // [kConsumers][m][kWords]
  __shared__ __align__(8) unsigned long long bars[kConsumers * kMaxSlots];
  __shared__ int consumed[kConsumers];                // pieces each consumer warp has read
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, b = blockIdx.x, n = gridDim.x, m = a.m;
  const int total = a.stream ? a.layers * kLayerPieces : 0;  // pieces per consumer warp
  unsigned long long* o = a.out + static_cast<size_t>(b) * 8;
  const unsigned long long t0 = port_const_clock();
  if (tid == 0) {
    for (int i = 0; i < kConsumers * m; ++i) bulk_bar_init(smem_u32(&bars[i]));
    bulk_bar_init_fence();
  }
  if (tid < kConsumers) consumed[tid] = 0;
  __syncthreads();
  // Piece j of warp w into its slot j % m (the copy completes phase (j / m) & 1 of the slot's mbarrier).
  auto issue = [&](int w, int j) {
    const int s = j % m;
    const unsigned bar = smem_u32(&bars[w * m + s]);
    bulk_refill_fence();  // the slot's last reads (seen through consumed[] or __syncwarp) before the overwrite
    bulk_arm(bar, kPiece);
    bulk_copy_to(smem_u32(slots + (static_cast<size_t>(w) * m + s) * kWords),
                 a.src + static_cast<size_t>(piece_of(j, w, b, n, a.src_pieces)) * kWords, kPiece, bar);
  };
  if (warp == kConsumers) {  // the producer (paced only): lane w feeds consumer warp w
    if (a.cap == 0) return;
    const int w = lane;
    int issued = 0, landed = 0;
    for (unsigned spin = 0;; ++spin) {
      if (w < kConsumers) {
        const int cons = *reinterpret_cast<volatile int*>(&consumed[w]);
        landed = max(landed, cons);  // read means landed
        while (landed < issued && mbar_done(smem_u32(&bars[w * m + landed % m]), (landed / m) & 1)) ++landed;
      }
      const int inflight = __reduce_add_sync(0xffffffffu, w < kConsumers ? issued - landed : 0);
      const int cons = w < kConsumers ? *reinterpret_cast<volatile int*>(&consumed[w]) : 0;
      const bool want = w < kConsumers && issued < total && issued - cons < m;
      // Within the cap, the lanes that want take turns from a rotating first lane, so no consumer
      // warp waits on the others' refills for long.
      const unsigned wants = __ballot_sync(0xffffffffu, want) & 0xffffu, rot = spin & 15u;
      const unsigned turn = ((wants >> rot) | (wants << (16u - rot))) & 0xffffu, pos = (lane - rot) & 15u;
      if (want && inflight + __popc(turn & ((1u << pos) - 1u)) < a.cap) issue(w, issued++);
      if (__all_sync(0xffffffffu, w >= kConsumers || issued == total)) break;
      if ((spin & 1023) == 1023 && port_const_clock() - t0 > a.timeout_ns) {
        if (lane == 0) atomicAdd(&o[4], 1ull);
        __trap();
      }
    }
    return;
  }
  // A consumer warp.
  if (a.cap == 0 && lane == 0)
    for (int j = 0; j < m && j < total; ++j) issue(warp, j);
  unsigned long long bad = 0, chain_ns = 0;
  unsigned idx = 0;
  int j = 0;
  for (int l = 0; l < a.layers; ++l)
    for (int st = 0; st < kStages; ++st) {
      for (int i = 0; i < (a.stream ? stage_pieces(st) : 0); ++i, ++j) {
        const int s = j % m;
        bulk_wait(smem_u32(&bars[warp * m + s]), (j / m) & 1, t0, a.timeout_ns);
        const uint4* v = reinterpret_cast<const uint4*>(slots + (static_cast<size_t>(warp) * m + s) * kWords);
        unsigned long long sum = 0;
#pragma unroll
        for (int k = 0; k < static_cast<int>(kWords / 4 / 32); ++k) {
          const uint4 x = v[lane + 32 * k];
          sum += static_cast<unsigned long long>(x.x) + x.y + x.z + x.w;
        }
        for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
        __syncwarp();  // every lane's reads of the slot are done
        if (lane == 0) {
          bad += sum != static_cast<unsigned long long>(kWords) * piece_of(j, warp, b, n, a.src_pieces);
          if (a.cap == 0) {
            if (j + m < total) issue(warp, j + m);
          } else {
            __threadfence_block();
            *reinterpret_cast<volatile int*>(&consumed[warp]) = j + 1;
          }
        }
      }
      if (a.chain) {  // thread 0: the grid barrier and the hops; the other consumers wait
        consumers_sync();
        if (tid == 0) {
          const unsigned long long c0 = port_const_clock();
          const unsigned long long want = static_cast<unsigned long long>(l * kStages + st + 1) * n;
          scope_release_increment_u64(a.counter);
          for (unsigned spin = 0; scope_acquire_load_u64(a.counter) < want; ++spin)
            if ((spin & 255) == 255 && port_const_clock() - t0 > a.timeout_ns) {
              atomicAdd(&o[4], 1ull);
              __trap();
            }
          for (int h = 0; h < a.hops; ++h) idx = probe_hop(a.ring, idx);
          chain_ns += port_const_clock() - c0;
        }
        consumers_sync();
      }
    }
  if (lane == 0) {
    atomicAdd(&o[2], bad);
    atomicAdd(&o[3], static_cast<unsigned long long>(j));
  }
  consumers_sync();
  if (tid == 0) {
    o[0] = port_const_clock() - t0;
    o[1] = chain_ns;
    o[5] = idx;
  }
}

__global__ void fill_pieces(unsigned* p, size_t words) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words; i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<unsigned>(i / kWords);
}

int main(int argc, char** argv) {
  bool quick = false;
  cudaDeviceProp prop;
  if (const int rc = probe_start(argc, argv, "paced_ring", &quick, &prop); rc >= 0) return rc;
  const int n = prop.multiProcessorCount, layers = quick ? 4 : 16, hops = 6, reps = quick ? 2 : 7;
  const unsigned src_pieces = (1u << 30) / kPiece;  // 1 GiB, over 4x any L2 here
  unsigned* src;
  PROBE_CK(cudaMalloc(&src, static_cast<size_t>(src_pieces) * kPiece));
  fill_pieces<<<1024, 256>>>(src, static_cast<size_t>(src_pieces) * kWords);
  PROBE_CK(cudaGetLastError());
  // The chains' L2 ring: 64 KB of lines in one random cycle; every block walks it from line 0.
  std::mt19937_64 rng(20261206);
  std::vector<unsigned> order;
  const unsigned lines = (64u << 10) / kProbeLine;
  const unsigned* ring = probe_chase_ring(lines, rng, order);
  unsigned long long *counter, *out;
  PROBE_CK(cudaMalloc(&counter, 8));
  PROBE_CK(cudaMalloc(&out, static_cast<size_t>(n) * 8 * 8));
  const size_t smem = static_cast<size_t>(kConsumers) * kMaxSlots * kPiece;
  PROBE_CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int per_sm = 0;
  PROBE_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, probe, kThreads, smem));
  if (per_sm < 1) {
    std::fprintf(stderr, "error: one block of %d threads and %zu B of shared memory does not fit an SM\n", kThreads, smem);
    return kExitFailure;
  }
  ProbeTimer timer;
  const double bytes = static_cast<double>(n) * kConsumers * layers * kLayerPieces * kPiece;
  std::printf("paced_ring: %s, %d SMs, one block of %d threads per SM (16 consumer warps + a producer), %d layers of "
              "%d/%d/%d pieces of 4 KB per consumer warp (%.0f MB a launch), chains of a grid barrier + %d L2 hops, "
              "median of %d launches\n",
              prop.name, n, kThreads, layers, stage_pieces(0), stage_pieces(1), stage_pieces(2), bytes / 1e6, hops, reps);
  std::printf("%-6s %5s %4s %6s %12s %9s %13s %16s %18s\n", "feed", "slots", "cap", "chains", "us a launch", "GB/s",
              "us a layer", "chain us a layer", "beyond stream us");
  int rc = 0;
  // One configuration, reps launches: the median launch (us) and the median block's chain time a
  // layer (us); every launch's blocks checked, a failure named and counted into rc. A configuration
  // asked for again (the second table repeats two of the first's) is measured once.
  std::map<std::array<int, 5>, std::pair<double, double>> measured;
  auto run = [&](int m, int cap, int chain, int stream, int h, double* chain_us) {
    const std::array<int, 5> key{m, cap, chain, stream, chain ? h : 0};  // no chains: no hops
    if (const auto it = measured.find(key); it != measured.end()) {
      *chain_us = it->second.second;
      return it->second.first;
    }
    Args a{src, src_pieces, ring, layers, h, m, cap, chain, stream, counter, out, 2000000000ull};
    const unsigned end = order[static_cast<size_t>(layers) * kStages * h % lines];
    const unsigned long long want_pieces = stream ? static_cast<unsigned long long>(kConsumers) * layers * kLayerPieces : 0;
    std::vector<float> ms;
    std::vector<unsigned long long> host(static_cast<size_t>(n) * 8);
    for (int r = 0; r < reps; ++r) {
      PROBE_CK(cudaMemset(counter, 0, 8));
      PROBE_CK(cudaMemset(out, 0, static_cast<size_t>(n) * 8 * 8));
      void* args[] = {&a};
      ms.push_back(timer.coop_ms(reinterpret_cast<const void*>(probe), n, kThreads, args, smem));
      PROBE_CK(cudaMemcpy(host.data(), out, host.size() * 8, cudaMemcpyDeviceToHost));
      for (int b = 0; b < n; ++b) {
        const unsigned long long* ob = &host[static_cast<size_t>(b) * 8];
        if (ob[2] == 0 && ob[3] == want_pieces && ob[4] == 0 && (!chain || ob[5] == end)) continue;
        std::fprintf(stderr, "error: %s m %d cap %d chains %d stream %d hops %d, block %d: %llu bad pieces, %llu of %llu "
                     "read, %llu timeouts, hop end %llu (host %u)\n", cap ? "paced" : "ring", m, cap, chain, stream, h, b,
                     ob[2], ob[3], want_pieces, ob[4], ob[5], end);
        rc = kExitFailure;
        break;
      }
    }
    std::sort(ms.begin(), ms.end());
    std::vector<double> chains;
    for (int b = 0; b < n; ++b) chains.push_back(host[static_cast<size_t>(b) * 8 + 1] / 1000.0 / layers);
    std::sort(chains.begin(), chains.end());
    *chain_us = chain ? chains[chains.size() / 2] : 0.0;
    const double us = 1000.0 * ms[ms.size() / 2];
    measured[key] = {us, *chain_us};
    return us;
  };
  struct Variant { int m, cap; };
  const Variant variants[] = {{2, 0}, {3, 0}, {3, 8}, {3, 16}, {3, 32}, {3, 48}};
  for (const Variant& v : variants) {
    double alone = 0;
    for (int chain = 0; chain < 2; ++chain) {
      double chain_us;
      const double us = run(v.m, v.cap, chain, 1, hops, &chain_us);
      if (!chain) alone = us;
      std::printf("%-6s %5d %4d %6s %12.1f %9.0f %13.2f %16.2f %18.1f\n", v.cap ? "paced" : "ring", v.m, v.cap,
                  chain ? "yes" : "no", us, bytes / us / 1e3, us / layers, chain_us, chain ? us - alone : 0.0);
    }
  }
  // What a chain is made of: the ring's feed at 2 slots (06's default), the chains' hops swept, each
  // with the stream and alone (no pieces: the barrier and the hops on an idle memory system).
  std::printf("\nthe chain's parts (ring, 2 slots): %d chains a layer, each a grid barrier + H dependent L2 hops\n", kStages);
  std::printf("%4s %18s %18s %22s %22s %18s\n", "hops", "chain us a layer", "alone us a layer", "us a launch (stream)",
              "us a launch (alone)", "beyond stream us");
  double no_chain;
  const double stream_alone = run(2, 0, 0, 1, 0, &no_chain);
  for (const int h : {0, 2, 6}) {
    double with_us, idle_us;
    const double with = run(2, 0, 1, 1, h, &with_us), idle = run(2, 0, 1, 0, h, &idle_us);
    std::printf("%4d %18.2f %18.2f %22.1f %22.1f %18.1f\n", h, with_us, idle_us, with, idle, with - stream_alone);
  }
  std::printf("paced_ring: every launch checked (each piece's sum, pieces read, the hops' end, no timeout)%s\n",
              rc ? ": FAILED" : "");
  return rc;
}
