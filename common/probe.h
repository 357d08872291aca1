// probe.h: what the exploratory probes beside the experiments (NN-name/probes/*.cu, sm_90, not
// in make) share: a CUDA-call check and the start of main. The experiments themselves use
// experiment.h; the probes keep to a plain command line.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>
#include <vector>
#include "exitcodes.h"

// A failed CUDA call: its text and line on stderr, exit 1.
#define PROBE_CK(x)                                                                               \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "error: %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_));   \
      std::exit(kExitFailure);                                                                    \
    }                                                                                             \
  } while (0)

// `name [--quick]`: anything else is a usage error (exit 2); no GPU is a skipped line (exit 77).
// Returns -1 to go on (quick set, and device 0's properties in *prop when asked), else the exit
// status to return from main.
inline int probe_start(int argc, char** argv, const char* name, bool* quick, cudaDeviceProp* prop = nullptr) {
  *quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) *quick = true;
    else {
      std::fprintf(stderr, "usage: %s [--quick]\n", name);
      return kExitUsage;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("%s: skipped (no GPU)\n", name);
    return kExitNoGpu;
  }
  if (prop) PROBE_CK(cudaGetDeviceProperties(prop, 0));
  return -1;
}

// A cooperative launch (every block resident at once, which the probes' grid-wide waits need) of
// fn over `blocks` blocks of `threads`, timed by two events on stream s: its milliseconds. The
// timer makes its two events once, and the launch is synchronized before coop_ms returns.
struct ProbeTimer {
  cudaEvent_t e0, e1;
  ProbeTimer() {
    PROBE_CK(cudaEventCreate(&e0));
    PROBE_CK(cudaEventCreate(&e1));
  }
  float coop_ms(const void* fn, int blocks, int threads, void** args, size_t smem, cudaStream_t s = 0) {
    PROBE_CK(cudaEventRecord(e0, s));
    PROBE_CK(cudaLaunchCooperativeKernel(fn, dim3(blocks), dim3(threads), args, smem, s));
    PROBE_CK(cudaEventRecord(e1, s));
    PROBE_CK(cudaEventSynchronize(e1));
    PROBE_CK(cudaGetLastError());
    float ms = 0;
    PROBE_CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
  }
};

// The probes' stream source: `bytes` of 0x01 (every 32-bit word 0x01010101, so a sum of the words
// loaded says what was moved), by default 1 GiB, over 4x any L2 here.
constexpr unsigned kProbeWordOnes = 0x01010101u;
inline uint4* probe_ones_source(size_t bytes = size_t(1) << 30) {
  uint4* src = nullptr;
  PROBE_CK(cudaMalloc(&src, bytes));
  PROBE_CK(cudaMemset(src, 0x01, bytes));
  return src;
}

// Pointer chases (loaded_latency, paced_ring): a ring of `lines` lines of kProbeLine bytes in one
// random cycle (Sattolo), each line's first word the index of the next, as device memory; `order`
// gets the cycle's lines in walking order from line 0 (order[(k + hops) % lines] is where a chase
// from order[k] ends).
constexpr unsigned kProbeLine = 128;
inline unsigned* probe_chase_ring(unsigned lines, std::mt19937_64& rng, std::vector<unsigned>& order) {
  std::vector<unsigned> next(lines);
  for (unsigned i = 0; i < lines; ++i) next[i] = i;
  for (unsigned i = lines - 1; i > 0; --i) std::swap(next[i], next[std::uniform_int_distribution<unsigned>(0, i - 1)(rng)]);
  std::vector<unsigned> img(static_cast<size_t>(lines) * (kProbeLine / 4), 0);
  for (unsigned i = 0; i < lines; ++i) img[static_cast<size_t>(i) * (kProbeLine / 4)] = next[i];
  order.resize(lines);
  unsigned at = 0;
  for (unsigned k = 0; k < lines; ++k, at = next[at]) order[k] = at;
  unsigned* d;
  PROBE_CK(cudaMalloc(&d, img.size() * 4));
  PROBE_CK(cudaMemcpy(d, img.data(), img.size() * 4, cudaMemcpyHostToDevice));
  return d;
}
// One hop of a chase: the next line's index, loaded with .cg (L2, never L1: every hop reaches L2
// or DRAM), its address depending on the previous hop's load.
__device__ __forceinline__ unsigned probe_hop(const unsigned* ring, unsigned idx) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(ring + static_cast<size_t>(idx) * (kProbeLine / 4)) : "memory");
  return v;
}
