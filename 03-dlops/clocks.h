// clocks.h: the two named clocks of port.h, calibrated at start-up (never assumed).
//   ClockCalibration cal = calibrate_clocks(stream, quick);
//     cal.const_hz      constant-rate clock (%globaltimer; s_memrealtime on gfx942) ticks per
//                       second, against a host-timed interval of steady_clock
//     cal.tick_ns       its smallest non-zero step seen in a tight read loop
//     cal.sm_clock_mhz  the SM cycle counter (clock64; s_memtime) over elapsed time, in one
//                       dependent-arithmetic kernel (the clock moves: report it per run too)
//   cal.seconds(ticks), cal.mhz(cycles, ticks)    conversions every experiment uses
// Used by 03-dlops and 04-reduce (the lead may move it to common/).
#pragma once
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>
#include "../common/check.h"
#include "../common/json.h"
#include "../common/stats.h"

// One read of both clocks by one thread. The calibration brackets a host sleep with two of these.
__global__ void clocks_read_kernel(unsigned long long* out) {
  out[0] = port_const_clock();
  out[1] = port_cycle_clock();
}

// Reads the constant-rate clock n times back to back: the smallest non-zero step is its tick.
// Bounded by n (no condition to wait on), so it cannot hang.
__global__ void clocks_tick_kernel(unsigned long long* out, int n) {
  unsigned long long prev = port_const_clock(), min_step = ~0ull, distinct = 0;
  for (int i = 0; i < n; ++i) {
    unsigned long long t = port_const_clock();
    if (t != prev) {
      min_step = t - prev < min_step ? t - prev : min_step;
      ++distinct;
    }
    prev = t;
  }
  out[0] = min_step;
  out[1] = distinct;
}

// A dependent FP32 chain long enough (a few ms) for cycles over elapsed time to be the SM clock.
__global__ void clocks_sm_rate_kernel(unsigned long long* out, float* sink, int iters, float b) {
  float a = b;
  unsigned long long g0 = port_const_clock(), c0 = port_cycle_clock();
  for (int i = 0; i < iters; ++i) a = a * b + 0.25f;
  unsigned long long c1 = port_cycle_clock(), g1 = port_const_clock();
  out[0] = c1 - c0;
  out[1] = g1 - g0;
  if (a == 12345.0f) sink[0] = a;  // never true for b < 1: keeps the chain alive
}

struct ClockCalibration {
  double const_hz = 0;         // constant-rate clock ticks per second (measured)
  double const_hz_spread = 0;  // relative half-range of the repeated calibrations
  double host_interval_s = 0;  // the host-timed interval each calibration spans
  double tick_ns = 0;          // smallest non-zero step of the constant-rate clock
  long long distinct_reads = 0;
  double sm_clock_mhz = 0;     // cycles over elapsed, in the calibration kernel
  double seconds(unsigned long long ticks) const { return const_hz > 0 ? ticks / const_hz : 0; }
  double ns(unsigned long long ticks) const { return seconds(ticks) * 1e9; }
  // The SM clock seen by a kernel that counted `cycles` while the constant clock moved `ticks`.
  double mhz(double cycles, double ticks) const { return ticks > 0 ? cycles / (ticks / const_hz) / 1e6 : 0; }
  Json to_json() const {
    Json j = Json::object();
    j.set("const_clock_hz", const_hz);
    j.set("const_clock_hz_relative_spread", const_hz_spread);
    j.set("host_interval_s", host_interval_s);
    j.set("const_clock_tick_ns", tick_ns);
    j.set("tick_loop_distinct_values", distinct_reads);
    j.set("sm_clock_mhz", sm_clock_mhz);
    return j;
  }
};

inline ClockCalibration calibrate_clocks(cudaStream_t s, bool quick) {
  ClockCalibration cal;
  unsigned long long *d = nullptr, h[2][2];
  float* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&d, 4 * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMalloc(&sink, sizeof(float)));
  using clk = std::chrono::steady_clock;
  // Each read is bracketed by host timestamps; the midpoints carry an error of at most half
  // a launch + sync (tens of µs) against an interval of 100+ ms: below 0.05%.
  auto stamp = [&](int k, double* mid, double* width) {
    auto a = clk::now();
    clocks_read_kernel<<<1, 1, 0, s>>>(d);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaMemcpyAsync(h[k], d, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    auto b = clk::now();
    *mid = std::chrono::duration<double>(a.time_since_epoch()).count() +
           0.5 * std::chrono::duration<double>(b - a).count();
    *width = std::chrono::duration<double>(b - a).count();
  };
  const int sleep_ms = quick ? 50 : 150;
  std::vector<double> rates;
  double m0, w0, m1, w1;
  stamp(0, &m0, &w0);  // first launch warms the module; not used
  for (int rep = 0; rep < 3; ++rep) {
    stamp(0, &m0, &w0);
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    stamp(1, &m1, &w1);
    if (h[1][0] <= h[0][0]) FAIL("constant-rate clock did not advance across %d ms", sleep_ms);
    rates.push_back(static_cast<double>(h[1][0] - h[0][0]) / (m1 - m0));
    cal.host_interval_s = m1 - m0;
  }
  Summary r = summarize(rates);
  cal.const_hz = r.median;
  cal.const_hz_spread = (r.max - r.min) / 2 / r.median;
  clocks_tick_kernel<<<1, 1, 0, s>>>(d, quick ? 20000 : 200000);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaMemcpyAsync(h[0], d, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  if (h[0][1] == 0) FAIL("constant-rate clock never changed in the tick loop");
  cal.tick_ns = h[0][0] / cal.const_hz * 1e9;
  cal.distinct_reads = static_cast<long long>(h[0][1]);
  std::vector<double> mhz;
  for (int rep = 0; rep < 3; ++rep) {
    clocks_sm_rate_kernel<<<1, 1, 0, s>>>(d, sink, quick ? 200000 : 2000000, 0.5f);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaMemcpyAsync(h[0], d, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    mhz.push_back(cal.mhz(static_cast<double>(h[0][0]), static_cast<double>(h[0][1])));
  }
  cal.sm_clock_mhz = median_of(mhz);
  CHECK_CUDA(cudaFree(d));
  CHECK_CUDA(cudaFree(sink));
  return cal;
}
