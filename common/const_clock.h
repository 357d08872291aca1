// const_clock.h: the rate of the constant-rate clock (port_const_clock), measured against the
// host's steady clock at start-up, never assumed (STYLE.md). Spin timeouts are set from it.
#pragma once
#include <chrono>
#include <thread>
#include "check.h"

__global__ void const_clock_sample_kernel(unsigned long long* out) { *out = port_const_clock(); }

// Two device samples a host-timed interval apart; exits 1 if the clock does not advance.
inline double measure_const_clock_hz(int interval_ms = 50) {
  unsigned long long* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, 2 * sizeof(unsigned long long)));
  const_clock_sample_kernel<<<1, 1>>>(d);  // first launch: module load, not part of the interval
  CHECK_CUDA(cudaDeviceSynchronize());
  const auto host0 = std::chrono::steady_clock::now();
  const_clock_sample_kernel<<<1, 1>>>(d);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  const_clock_sample_kernel<<<1, 1>>>(d + 1);
  CHECK_CUDA(cudaDeviceSynchronize());
  const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - host0).count();
  unsigned long long t[2] = {0, 0};
  CHECK_CUDA(cudaMemcpy(t, d, sizeof t, cudaMemcpyDeviceToHost));
  (void)cudaFree(d);
  const double hz = (t[1] - t[0]) / host_s;
  if (!(hz > 1e6)) FAIL("the constant-rate clock did not advance (%llu -> %llu)", t[0], t[1]);
  return hz;
}
