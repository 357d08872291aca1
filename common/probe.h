// probe.h: what the exploratory probes beside the experiments (NN-name/probes/*.cu, sm_90, not
// in make) share: a CUDA-call check and the start of main. The experiments themselves use
// experiment.h; the probes keep to a plain command line.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
// Returns -1 to go on (quick set), else the exit status to return from main.
inline int probe_start(int argc, char** argv, const char* name, bool* quick) {
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
  return -1;
}

// The probes' stream source: `bytes` of 0x01 (every 32-bit word 0x01010101, so a sum of the words
// loaded says what was moved), by default 1 GiB, over 4x any L2 here.
constexpr unsigned kProbeWordOnes = 0x01010101u;
inline uint4* probe_ones_source(size_t bytes = size_t(1) << 30) {
  uint4* src = nullptr;
  PROBE_CK(cudaMalloc(&src, bytes));
  PROBE_CK(cudaMemset(src, 0x01, bytes));
  return src;
}
