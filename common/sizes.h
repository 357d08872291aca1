// sizes.h: the working-set rule and the byte accounting every figure derives from.
// Host-only, unit-tested (CI proves the rule refuses a cache-resident working set).
#pragma once
#include <cstdint>
#include <string>

// Principle 2: a working set must be at least min_ratio x the last-level cache.
struct WorkingSetVerdict {
  bool ok;
  double ratio;
  std::string message;
};
inline WorkingSetVerdict check_working_set(uint64_t bytes, uint64_t llc_bytes, double min_ratio) {
  WorkingSetVerdict v;
  v.ratio = llc_bytes ? static_cast<double>(bytes) / static_cast<double>(llc_bytes) : 0.0;
  v.ok = llc_bytes > 0 && v.ratio + 1e-9 >= min_ratio;
  char buf[256];
  std::snprintf(buf, sizeof buf, "working set %.3f GB is %.1fx the %.1f MB last-level cache (rule: >= %.0fx)",
                bytes / 1e9, v.ratio, llc_bytes / 1e6, min_ratio);
  v.message = buf;
  return v;
}

// Shrinks a desired working set to fit free memory (keeping a reserve), in whole
// units of `granule` bytes. Returns 0 when even one granule does not fit.
inline uint64_t fit_working_set(uint64_t desired, uint64_t free_bytes, uint64_t reserve, uint64_t granule) {
  if (free_bytes <= reserve || granule == 0) return 0;
  uint64_t avail = free_bytes - reserve;
  uint64_t b = desired < avail ? desired : avail;
  return b / granule * granule;
}

// Achieved bandwidth in GB/s (1e9 bytes per second) from bytes and milliseconds.
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0; }

// Batch-1 FP16 GEMV y[N] = W[N,K] x[K]: every weight once, x once, y once (2 bytes each).
// Napkin: 4096x4096 -> 33.55 MB of weights, 16 KB of vectors: weights are 99.95%.
// Read (W and x) and written (y) apart, for the profiler's DRAM read and write counters
// (scripts/counters.py takes them from `02-gemv/gemv --list`, never from a second formula).
inline double gemv_read_bytes(uint64_t n, uint64_t k) { return 2.0 * n * k + 2.0 * k; }
inline double gemv_write_bytes(uint64_t n, uint64_t /*k*/) { return 2.0 * n; }
inline double gemv_bytes(uint64_t n, uint64_t k) { return gemv_read_bytes(n, k) + gemv_write_bytes(n, k); }
