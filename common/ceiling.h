// ceiling.h: running a streaming-read configuration (validated, then timed), and the
// measured ceiling that every MBU figure divides by (principle 1).
#pragma once
#include <fstream>
#include <sstream>
#include "experiment.h"
#include "stream_read.h"
#include "validate.h"

struct StreamConfig {
  const StreamKernel* kernel;
  int blocks;
  int threads;
};

inline std::string describe(const StreamConfig& c) {
  char b[160];
  if (c.kernel->flavour == kLoadBulkCopy) {
    std::snprintf(b, sizeof b, "bulk copy (TMA) %d x 16 KB stages, %d blocks x %d threads", c.kernel->unroll, c.blocks,
                  c.threads);
    return b;
  }
  std::snprintf(b, sizeof b, "%s x%d%s, %d blocks x %d threads", load_flavour_name(c.kernel->flavour),
                c.kernel->unroll, c.kernel->layout == kWarpChunk ? " warp-chunked" : "", c.blocks, c.threads);
  return b;
}

// Kernels with a shared-memory ring above the default 48 KB must say so before their first launch.
template <class Fn>
inline void allow_dynamic_smem(Fn* kernel, int bytes) {
  if (bytes > 48 * 1024)
    CHECK_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    bytes));
}

// A buffer of random words, its validation prefix (an odd length, so the tail path
// runs) and the host's exact sum over that prefix.
class StreamBuffer {
 public:
  StreamBuffer(size_t n_vec4, uint64_t seed) : n_(n_vec4), seed_(seed) {
    CHECK_CUDA(cudaMalloc(&data_, n_ * sizeof(vec4u)));
    CHECK_CUDA(cudaMalloc(&sink_, 1024 * sizeof(unsigned)));
    CHECK_CUDA(cudaMalloc(&total_, sizeof(unsigned long long)));
    fill_random_u32(reinterpret_cast<uint32_t*>(data_), n_ * 4, seed_);
    CHECK_CUDA(cudaDeviceSynchronize());
    n_check_ = std::min<size_t>(n_, (size_t(1) << 22) + 12345);
    expected_ = 0;
    for (size_t w = 0; w < n_check_ * 4; ++w) expected_ += hash32(seed_, w);
  }
  ~StreamBuffer() { (void)cudaFree(data_); (void)cudaFree(sink_); (void)cudaFree(total_); }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  size_t n() const { return n_; }
  double bytes() const { return stream_read_bytes(n_); }

  // Every element of the prefix read exactly once: the device's sum equals the host's.
  bool validate(const StreamConfig& c, cudaStream_t s) {
    prepare(c);
    return check_sum(c.kernel->check, c.blocks, c.threads, c.kernel->smem_bytes, 0, n_check_, expected_, describe(c), s);
  }

  // The same exact-sum proof for any range [first, first + count) of the buffer and any check
  // kernel of the StreamCheckFn shape (the launch-size reads of common/launch_size.h).
  bool validate_range(StreamCheckFn check, int blocks, int threads, int smem, size_t first, size_t count,
                      const std::string& what, cudaStream_t s) {
    unsigned long long want = 0;
    for (size_t w = first * 4; w < (first + count) * 4; ++w) want += hash32(seed_, w);
    return check_sum(check, blocks, threads, smem, first, count, want, what, s);
  }
  const vec4u* data() const { return data_; }
  unsigned* sink() const { return sink_; }

  // ms per full read, one entry per timed batch.
  std::vector<double> time(const StreamConfig& c, const TimingPlan& plan, cudaStream_t s) {
    const unsigned key = 0x9e3779b9u;  // runtime value; the branch it guards is practically never taken
    prepare(c);
    return time_launches(
        [&](int) { c.kernel->read<<<c.blocks, c.threads, c.kernel->smem_bytes, s>>>(data_, n_, key, sink_); }, plan, s);
  }

 private:
  static void prepare(const StreamConfig& c) {
    allow_dynamic_smem(c.kernel->read, c.kernel->smem_bytes);
    allow_dynamic_smem(c.kernel->check, c.kernel->smem_bytes);
  }
  // One check kernel over [first, first + count): its 64-bit device sum against the host's `want`.
  bool check_sum(StreamCheckFn check, int blocks, int threads, int smem, size_t first, size_t count,
                 unsigned long long want, const std::string& what, cudaStream_t s) {
    CHECK_CUDA(cudaMemsetAsync(total_, 0, sizeof(unsigned long long), s));
    check<<<blocks, threads, smem, s>>>(data_ + first, count, 0u, sink_, total_);
    CHECK_LAUNCH();
    unsigned long long got = 0;
    CHECK_CUDA(cudaMemcpyAsync(&got, total_, sizeof got, cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    if (got != want) {
      std::fprintf(stderr, "validation failed: %s: device sum %llu, host sum %llu over vectors [%zu, %zu)\n",
                   what.c_str(), got, want, first, first + count);
      return false;
    }
    return true;
  }
  size_t n_, n_check_ = 0;
  uint64_t seed_;
  vec4u* data_ = nullptr;
  unsigned* sink_ = nullptr;
  unsigned long long* total_ = nullptr;
  unsigned long long expected_ = 0;
};

// Working set for a streaming read: `target` bytes (at least min_ratio x LLC), shrunk
// to free memory with a warning, refused (exit 1) below the rule.
inline size_t stream_working_set_vec4(const Experiment& ex, uint64_t target, double min_ratio) {
  size_t free_b = 0, total_b = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  uint64_t bytes = fit_working_set(target, free_b, uint64_t(1) << 30, uint64_t(1) << 20);
  WorkingSetVerdict v = check_working_set(bytes, ex.l2_bytes(), min_ratio);
  if (bytes < target)
    std::fprintf(stderr, "warning: only %.2f GB free: working set shrunk from %.2f GB to %.2f GB (%.1fx the LLC)\n",
                 free_b / 1e9, target / 1e9, bytes / 1e9, v.ratio);
  if (!v.ok) FAIL("refusing to measure: %s", v.message.c_str());
  return bytes / sizeof(vec4u);
}

// The datasheet figure for this device (common/names.h), else the one its memory clock and bus
// width give: for comparison, and as the hard limit no streaming read may pass (principle 2).
inline SpecBandwidth device_spec_bandwidth(const Experiment& ex) {
  int mem_khz = 0, bus_bits = 0, dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  (void)cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
  (void)cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  return spec_bandwidth(ex.prop().name, static_cast<int>(2.0 * mem_khz * 1e3 * bus_bits / 8 / 1e9));
}

struct Ceiling {
  double gbps = 0;
  std::string source;
};

// The ceiling from results/<gpu>/01-ceiling.json when present (said so), else a
// measurement made now with 01-ceiling's kernels (a short sweep of the best-known
// flavours), validated before it is timed.
inline Ceiling obtain_ceiling(Experiment& ex) {
  Ceiling c;
  std::string path = ex.results_dir() + "/01-ceiling.json";
  std::ifstream in(path);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    double v = 0;
    if (json_find_number(ss.str(), "ceiling_gbps", &v) && v > 0) {
      std::string recorded;  // the card 01-ceiling ran on, from its provenance (absent before 2026-12-06)
      (void)json_find_string(ss.str(), "device_uuid", &recorded);
      const Json* mine = ex.provenance_json().get("device_uuid");
      const std::string card = ceiling_card(recorded, mine ? mine->str() : "");
      c.gbps = v;
      c.source = card == "same" ? path : path + ", measured on another card of this kind: " + card;
      std::fprintf(stderr, "%s: ceiling %.1f GB/s read from %s (%s)\n", ex.id().c_str(), v, path.c_str(),
                   card == "same" ? "measured on this card" : card.c_str());
      if (card != "same")
        std::fprintf(stderr, "%s: note: MBU figures divide by that card's ceiling; run 01-ceiling here first (make run "
                     "does) for this card's own\n", ex.id().c_str());
      ex.summary().set("ceiling_card", card);
      return c;
    }
  }
  std::fprintf(stderr, "%s: no %s: measuring the ceiling now\n", ex.id().c_str(), path.c_str());
  size_t n = stream_working_set_vec4(ex, std::max<uint64_t>(uint64_t(2) << 30, 32 * (uint64_t)ex.l2_bytes()), 32);
  StreamBuffer buf(n, fresh_seed());
  TimingPlan plan{10, 5, 10};
  for (int f : stream_flavours()) {
    const StreamKernel* k = find_stream_kernel(f, 4);
    for (int mult : {2, 4}) {
      StreamConfig cfg{k, ex.sm_count() * mult, 512};
      if (!buf.validate(cfg, ex.stream())) std::exit(kExitFailure);
      double g = gbps(buf.bytes(), summarize(buf.time(cfg, plan, ex.stream())).median);
      c.gbps = std::max(c.gbps, g);
    }
  }
  c.source = "measured in this run (no 01-ceiling result present)";
  ex.summary().set("ceiling_card", "same");
  return c;
}
