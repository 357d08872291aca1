// validate.h: correct before timed (principle 3). Fresh random inputs from a
// counter-based hash (same values on host and device), NaN poison for outputs,
// and a tolerance compare against a double-precision reference that prints the
// first mismatches.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>
#include "check.h"

// A fresh seed per run (recorded in the JSON so a failure can be replayed).
inline uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// splitmix64 finaliser: a counter-based generator, value i of stream seed.
__host__ __device__ inline uint64_t hash64(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
__host__ __device__ inline uint32_t hash32(uint64_t seed, uint64_t i) {
  return static_cast<uint32_t>(hash64(seed, i) >> 32);
}
// Uniform in [-1, 1).
__host__ __device__ inline float uniform_pm1(uint64_t seed, uint64_t i) {
  return static_cast<float>(hash64(seed, i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fill_u32_kernel(uint32_t* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = hash32(seed, i);
}
__global__ void fill_half_kernel(__half* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = __float2half(scale * uniform_pm1(seed, i));
}
__global__ void fill_float_kernel(float* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = scale * uniform_pm1(seed, i);
}
inline void fill_random_u32(uint32_t* d, size_t n, uint64_t seed) {
  fill_u32_kernel<<<1024, 256>>>(d, n, seed);
  CHECK_LAUNCH();
}
inline void fill_random_half(__half* d, size_t n, uint64_t seed, float scale = 1.0f) {
  fill_half_kernel<<<1024, 256>>>(d, n, seed, scale);
  CHECK_LAUNCH();
}
inline void fill_random_float(float* d, size_t n, uint64_t seed, float scale = 1.0f) {
  fill_float_kernel<<<1024, 256>>>(d, n, seed, scale);
  CHECK_LAUNCH();
}

// All-ones bytes are NaN in FP16 and FP32: an element the kernel never writes fails.
inline void poison_nan(void* d, size_t bytes, cudaStream_t s = 0) {
  CHECK_CUDA(cudaMemsetAsync(d, 0xFF, bytes, s));
}

struct CompareResult {
  bool ok = false;
  double rel_l2 = NAN;  // ||got - ref|| / ||ref||
  double worst_abs = 0;
  size_t worst_index = 0;
  size_t nonfinite = 0;
};

// got[i] against ref[i]; fails on any non-finite element or rel_l2 > tol.
inline CompareResult compare_rel_l2(const std::vector<double>& ref, const std::vector<double>& got, double tol,
                                    const char* what, bool verbose = true) {
  CompareResult r;
  double num = 0, den = 0;
  size_t shown = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double g = i < got.size() ? got[i] : NAN;
    if (!std::isfinite(g)) {
      if (verbose && shown++ < 5) std::fprintf(stderr, "  %s: element %zu not written or not finite (ref %.6g)\n", what, i, ref[i]);
      r.nonfinite++;
      continue;
    }
    double d = g - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
    if (std::fabs(d) > r.worst_abs) { r.worst_abs = std::fabs(d); r.worst_index = i; }
  }
  r.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  r.ok = r.nonfinite == 0 && r.rel_l2 <= tol && got.size() == ref.size();
  if (!r.ok && verbose) {
    std::fprintf(stderr, "  %s: rel L2 error %.3e (tolerance %.1e), %zu non-finite; worst element %zu: got %.6g, ref %.6g\n",
                 what, r.rel_l2, tol, r.nonfinite, r.worst_index,
                 r.worst_index < got.size() ? got[r.worst_index] : NAN, ref.empty() ? NAN : ref[r.worst_index]);
  }
  return r;
}

inline std::vector<double> half_to_double(const std::vector<__half>& h) {
  std::vector<double> o(h.size());
  for (size_t i = 0; i < h.size(); ++i) o[i] = static_cast<double>(__half2float(h[i]));
  return o;
}
