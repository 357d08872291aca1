// pdl_loaded: what a kernel boundary costs while the GPU streams. An exploratory probe beside
// 05-sync, not a suite result: its figures are quoted on results/05-sync.md with the raw output
// they come from, never in 05-sync.json.
//
// The question comes from 02-gemv. A chained GEMV's griddepcontrol.wait returns 0.4-0.6 us after
// its predecessor's last warp when little is in flight, and about 1 us where the launch two ahead
// issues its first 8.6 MB of rows just as the predecessor's blocks leave (02's chain probe, `rows`
// set, on an H100). 05-sync measures the boundary between empty kernels on an idle GPU; 05's
// loaded-latency probe found that every dependent round trip waits behind the bytes all SMs have
// in flight. Is a kernel boundary such a round trip? If it is, a boundary gets longer the more the
// GPU streams beside it, and a decode chain cannot both keep the memory busy across a boundary
// and keep the boundary short. If it is not (a path outside the memory system's queues), the
// boundary stays at its idle cost under any stream.
//
// A streamer holds every SM (one block of 256 threads a SM, held there by 120 KB of dynamic shared
// memory it does not use) and streams a 1 GiB source with D 16-byte loads per thread in flight
// (4 D KB a SM; D = 1, 2, 4, 6, 8, 12, 16), until the chain's last launch tells it to stop. Beside
// it, on another stream, a chain of 200 launches of an empty kernel (one block of 128 threads a
// SM, no shared memory, so it fits beside the streamer), captured into a CUDA graph: with
// programmatic dependent launch (griddepcontrol.launch_dependents first, then
// griddepcontrol.wait) or as plain graph edges.
// Each block stamps %globaltimer when it starts, when its wait returns (PDL) and when it ends.
// Per launch, the boundary is the first block's wait return (PDL) or start (plain) after the
// previous launch's last block end; the mean over launches 20..179, the median of 5 chains.
// D = 0: no streamer.
//
// Correct before timed: block b of launch i reads the word its namesake in launch i - 1 wrote and
// must find i there (the wait, or the graph edge, made it visible), then writes i + 1; every
// streaming thread's word sum must be what it loaded (the source is all 0x01 bytes); the streamer
// stops on the chain's word or, past its %globaltimer timeout (2 s), ends the run with exit 1.
//
//   mkdir -p build && nvcc -O3 -std=c++17 -arch=sm_90 -o build/pdl_loaded 05-sync/probes/pdl_loaded.cu
//   build/pdl_loaded [--quick]
// sm_90 only (PTX inline); no HIP build.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>
#include "../../common/chain.h"  // chain_weight_load, chain_release / chain_acquire, chain_launch
#include "../../common/port.h"   // port_const_clock: %globaltimer, ns
#include "../../common/probe.h"  // PROBE_CK, probe_start, probe_ones_source, kProbeWordOnes

constexpr int kStreamThreads = 256, kLinkThreads = 128;
constexpr size_t kStreamSmem = 120 * 1024;  // one streamer block a SM; a link block (none) fits beside it
constexpr int kLaunches = 200, kFirst = 20, kLast = 180;

struct StreamArgs {
  const uint4* src;
  size_t vecs;
  const unsigned* stop;        // set by the chain's last launch
  unsigned long long* out;     // per block: [0] loads, [1] word sum, [2] ns streamed, [3] timed out
  unsigned long long timeout_ns;
};
struct LinkArgs {
  unsigned* token;             // per block index: the launch that may read it next
  unsigned long long* stamps;  // [launch][block][3]: start, wait return (PDL; plain: start), end
  unsigned* bad;               // tokens found wrong
  unsigned* stop;
  int launch, last;
};

__device__ __forceinline__ unsigned ld_flag(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <int D>
__global__ void __launch_bounds__(kStreamThreads, 1) streamer(StreamArgs a) {
  const unsigned long long t0 = port_const_clock();
  const size_t step = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long sum = 0, loads = 0, timed_out = 0;
  for (;;) {
    vec4u v[D];
#pragma unroll
    for (int d = 0; d < D; ++d) {
      v[d] = chain_weight_load(a.src + i);  // the decode chain's weight load: 16 bytes, no L1
      i += step;
      if (i >= a.vecs) i -= a.vecs;
    }
    const unsigned stop = ld_flag(a.stop);
#pragma unroll
    for (int d = 0; d < D; ++d) sum += static_cast<unsigned long long>(v[d].x) + v[d].y + v[d].z + v[d].w;
    loads += D;
    if (stop) break;
    if (port_const_clock() - t0 > a.timeout_ns) {
      timed_out = 1;
      break;
    }
  }
  const unsigned long long t1 = port_const_clock();
  atomicAdd(&a.out[blockIdx.x * 4 + 0], loads);
  atomicAdd(&a.out[blockIdx.x * 4 + 1], sum);
  if (threadIdx.x == 0) a.out[blockIdx.x * 4 + 2] = t1 - t0;
  if (timed_out) atomicAdd(&a.out[blockIdx.x * 4 + 3], 1ull);
}

template <bool PDL>
__global__ void __launch_bounds__(kLinkThreads) link(LinkArgs a) {
  const unsigned long long t_start = port_const_clock();
  chain_release<PDL>();
  chain_acquire<PDL>();
  const unsigned long long t_wait = PDL ? port_const_clock() : t_start;
  if (threadIdx.x == 0) {
    volatile unsigned* tok = a.token + blockIdx.x;
    if (*tok != static_cast<unsigned>(a.launch)) atomicAdd(a.bad, 1u);
    *tok = a.launch + 1;
    if (a.launch == a.last && blockIdx.x == 0) atomicExch(a.stop, 1u);
    unsigned long long* s = a.stamps + (static_cast<size_t>(a.launch) * gridDim.x + blockIdx.x) * 3;
    s[0] = t_start;
    s[1] = t_wait;
    s[2] = port_const_clock();
  }
}

int main(int argc, char** argv) {
  bool quick;
  cudaDeviceProp prop;
  if (int rc = probe_start(argc, argv, "pdl_loaded", &quick, &prop); rc >= 0) return rc;
  const int sms = prop.multiProcessorCount, reps = quick ? 2 : 5;
  const size_t src_bytes = size_t(1) << 30;
  uint4* src = probe_ones_source(src_bytes);
  unsigned *token, *bad, *stop;
  unsigned long long *stamps, *out;
  PROBE_CK(cudaMalloc(&token, sms * 4));
  PROBE_CK(cudaMalloc(&bad, 4));
  PROBE_CK(cudaMalloc(&stop, 4));
  PROBE_CK(cudaMalloc(&stamps, static_cast<size_t>(kLaunches) * sms * 3 * 8));
  PROBE_CK(cudaMalloc(&out, sms * 4 * 8));
  cudaStream_t s_chain, s_stream;
  PROBE_CK(cudaStreamCreateWithFlags(&s_chain, cudaStreamNonBlocking));
  PROBE_CK(cudaStreamCreateWithFlags(&s_stream, cudaStreamNonBlocking));
  constexpr int kDepths = 8;
  void (*streamers[kDepths])(StreamArgs) = {nullptr, streamer<1>, streamer<2>, streamer<4>, streamer<6>, streamer<8>, streamer<12>, streamer<16>};
  const int depths[kDepths] = {0, 1, 2, 4, 6, 8, 12, 16};
  for (int k = 1; k < kDepths; ++k)
    PROBE_CK(cudaFuncSetAttribute(streamers[k], cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kStreamSmem)));
  cudaEvent_t e0, e1;
  PROBE_CK(cudaEventCreate(&e0));
  PROBE_CK(cudaEventCreate(&e1));

  // The chain, captured once per mode into a graph (05-sync's graph + PDL boundary: stream launches
  // from the host come 3-4 us apart, slower than the boundary itself), replayed once untimed.
  cudaGraphExec_t chain[2];
  for (int pdl = 0; pdl < 2; ++pdl) {
    cudaGraph_t g;
    PROBE_CK(cudaStreamBeginCapture(s_chain, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kLaunches; ++i)
      chain_launch(pdl, pdl ? link<true> : link<false>, dim3(sms), dim3(kLinkThreads), 0, s_chain,
                   LinkArgs{token, stamps, bad, stop, i, kLaunches - 1});
    PROBE_CK(cudaStreamEndCapture(s_chain, &g));
    PROBE_CK(cudaGraphInstantiate(&chain[pdl], g, 0));
    PROBE_CK(cudaGraphDestroy(g));
    PROBE_CK(cudaMemset(token, 0, sms * 4));
    PROBE_CK(cudaDeviceSynchronize());
    PROBE_CK(cudaGraphLaunch(chain[pdl], s_chain));
    PROBE_CK(cudaStreamSynchronize(s_chain));
  }
  std::printf("pdl_loaded: %s, %d SMs; a streamer block of %d threads on every SM beside a chain of %d launches of an "
              "empty kernel (%d x %d); boundary = first wait return (PDL) or start (plain) after the previous launch's "
              "last block end, mean of launches %d..%d, median of %d chains\n",
              prop.name, sms, kStreamThreads, kLaunches, sms, kLinkThreads, kFirst, kLast - 1, reps);
  std::printf("%5s %9s %12s | %14s %14s %12s | %14s %14s\n", "D", "KB a SM", "stream GB/s", "PDL us/launch",
              "PDL boundary", "PDL wait>start", "plain us/launch", "plain boundary");
  std::vector<unsigned long long> host(static_cast<size_t>(kLaunches) * sms * 3), hout(sms * 4);
  bool ok = true;
  for (int k = 0; k < kDepths; ++k) {
    const int D = depths[k];
    double gbs = 0;
    std::vector<double> col[2][3];  // [pdl][period, boundary, wait after start]
    for (int pdl = 1; pdl >= 0; --pdl)
      for (int r = 0; r < reps; ++r) {
        PROBE_CK(cudaMemset(token, 0, sms * 4));
        PROBE_CK(cudaMemset(bad, 0, 4));
        PROBE_CK(cudaMemset(stop, 0, 4));
        PROBE_CK(cudaMemset(out, 0, sms * 4 * 8));
        PROBE_CK(cudaDeviceSynchronize());
        if (D) {
          StreamArgs sa{src, src_bytes / 16, stop, out, 2000000000ull};
          streamers[k]<<<sms, kStreamThreads, kStreamSmem, s_stream>>>(sa);
          PROBE_CK(cudaGetLastError());
          std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the stream is up and steady
        }
        PROBE_CK(cudaEventRecord(e0, s_chain));
        PROBE_CK(cudaGraphLaunch(chain[pdl], s_chain));
        PROBE_CK(cudaEventRecord(e1, s_chain));
        PROBE_CK(cudaDeviceSynchronize());
        PROBE_CK(cudaGetLastError());
        float ms = 0;
        PROBE_CK(cudaEventElapsedTime(&ms, e0, e1));
        unsigned hbad = 0;
        PROBE_CK(cudaMemcpy(&hbad, bad, 4, cudaMemcpyDeviceToHost));
        PROBE_CK(cudaMemcpy(host.data(), stamps, host.size() * 8, cudaMemcpyDeviceToHost));
        PROBE_CK(cudaMemcpy(hout.data(), out, hout.size() * 8, cudaMemcpyDeviceToHost));
        if (hbad) {
          std::fprintf(stderr, "error: D %d %s: %u blocks found their predecessor's token wrong\n", D, pdl ? "PDL" : "plain", hbad);
          ok = false;
        }
        if (D) {
          unsigned long long loads = 0, ns = 0;
          for (int b = 0; b < sms; ++b) {
            const unsigned long long* o = &hout[b * 4];
            if (o[3] || o[1] != o[0] * 4 * static_cast<unsigned long long>(kProbeWordOnes)) {
              std::fprintf(stderr, "error: D %d streamer block %d: %llu threads timed out, sum %llu for %llu loads\n", D, b, o[3],
                           o[1], o[0]);
              ok = false;
            }
            loads += o[0];
            ns = std::max(ns, o[2]);
          }
          if (ns) gbs = std::max(gbs, loads * 16.0 / ns);
          if (ns < 1e6 * ms) {  // the stream must span the whole chain, or the row measures an idle boundary
            std::fprintf(stderr, "error: D %d: the stream ran %.1f us, the chain %.1f us\n", D, ns / 1e3, 1e3 * ms);
            ok = false;
          }
        }
        std::vector<double> bnd, wait_after;
        for (int i = kFirst; i < kLast; ++i) {
          unsigned long long prev_end = 0, first = ~0ull, first_start = ~0ull;
          for (int b = 0; b < sms; ++b) {
            prev_end = std::max(prev_end, host[(static_cast<size_t>(i - 1) * sms + b) * 3 + 2]);
            first = std::min(first, host[(static_cast<size_t>(i) * sms + b) * 3 + 1]);
            first_start = std::min(first_start, host[(static_cast<size_t>(i) * sms + b) * 3 + 0]);
          }
          bnd.push_back((static_cast<double>(first) - static_cast<double>(prev_end)) / 1000.0);
          wait_after.push_back((static_cast<double>(first) - static_cast<double>(first_start)) / 1000.0);
        }
        // the mean over launches: %globaltimer ticks in steps (256 ns on an H100), a median would
        // be one of those steps; launches fall anywhere against the ticks, so the mean resolves finer
        auto mean = [](const std::vector<double>& v) { double t = 0; for (double x : v) t += x; return t / v.size(); };
        col[pdl][0].push_back(1000.0 * ms / kLaunches);
        col[pdl][1].push_back(mean(bnd));
        col[pdl][2].push_back(mean(wait_after));
      }
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    std::printf("%5d %9d %12.0f | %14.3f %14.3f %14.3f | %14.3f %14.3f\n", D, D * 16 * kStreamThreads / 1024, gbs,
                med(col[1][0]), med(col[1][1]), med(col[1][2]), med(col[0][0]), med(col[0][1]));
  }
  std::printf("pdl_loaded: %s\n", ok ? "every chain checked (each block's predecessor token, the streamers' sums, no timeout)"
                                     : "FAILED (see the errors above)");
  return ok ? 0 : kExitFailure;
}
