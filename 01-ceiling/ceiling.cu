// 01-ceiling: the streaming-read bandwidth ceiling, the denominator of every MBU figure.
//
//   make 01-ceiling/ceiling && 01-ceiling/ceiling [--quick] [--json PATH]
//   make 01-ceiling/ceiling.s     the PTX/SASS (sm_90) or AMDGCN (gfx942) of every kernel
//
// One kernel family (common/stream_read.h): a grid-stride read of 16-byte vectors,
// U loads in flight per thread, folded behind a never-taken branch. Sweeps:
//   family "grid x load flavour"          : every flavour, U = 4, 256 threads, grids from
//                                           0.5x to 16x the SM count and the original's 64..1024
//   family "block size x loads in flight" : 256/512/1024 threads x U = 1/2/4/8 x 1, 2, 4 per SM,
//                                           for plain loads and the best flavour of the first family
//   family "layout"                       : each warp reading U*512 contiguous bytes per iteration
//                                           instead of loads a grid apart (plain, nc; U = 4, 8)
//   family "bulk copy"                    : sm_90 only: the copy engine (cp.async.bulk) fills a
//                                           4 x 16 KB shared-memory ring per block; 1, 2 blocks per SM
// Working set: 8 GiB (>= 32x the LLC read from the device). Every configuration is
// validated (exact 64-bit sum of the words read, odd length so the tail runs) before
// it is timed. Median of 5 batches of 20 reads after 10 warm-up reads.
#include <algorithm>
#include "../common/ceiling.h"

namespace {

std::vector<int> grid_sizes(int sms, bool quick) {
  std::vector<int> g;
  if (quick) return {sms, 2 * sms, 4 * sms};
  for (double m : {0.5, 1.0, 2.0, 4.0, 8.0, 16.0}) g.push_back(static_cast<int>(m * sms));
  for (int b : {64, 128, 256, 512, 1024}) g.push_back(b);  // the original MI300X table's grids
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  return g;
}

struct Measured {
  StreamConfig cfg;
  Summary ms;
  double gbps;
};

}  // namespace

int main(int argc, char** argv) {
  Experiment ex("01-ceiling", "Streaming-read bandwidth ceiling: the measured denominator of every MBU figure.");
  long long bytes_flag = 0;
  ex.flags().add_size("bytes", &bytes_flag, 1 << 20, 1LL << 40,
                      "working-set bytes (default 8G; 2G with --quick); must be >= 32x the LLC");
  std::string only;
  ex.flags().add_string("family", &only, "run only the families whose title contains this text (e.g. bulk)");
  ex.start(argc, argv);

  const int sms = ex.sm_count();
  const bool quick = ex.quick();
  const uint64_t target = bytes_flag ? static_cast<uint64_t>(bytes_flag)
                                     : std::max<uint64_t>(quick ? (uint64_t(2) << 30) : (uint64_t(8) << 30),
                                                          32 * static_cast<uint64_t>(ex.l2_bytes()));
  if (bytes_flag) {
    WorkingSetVerdict v = check_working_set(target, ex.l2_bytes(), 32);
    if (!v.ok) {
      std::fprintf(stderr, "01-ceiling: --bytes: %s\n", v.message.c_str());
      return kExitUsage;
    }
  }
  const TimingPlan plan = quick ? TimingPlan{3, 3, 5} : TimingPlan{10, 5, 20};
  const std::vector<int> grids = grid_sizes(sms, quick);
  const std::vector<int> blocks = quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 512, 1024};
  const std::vector<int> unrolls = quick ? std::vector<int>{1, 4} : std::vector<int>{1, 2, 4, 8};
  const std::vector<int> per_sm = quick ? std::vector<int>{2} : std::vector<int>{1, 2, 4};
  const std::vector<int> flavours = stream_flavours();

  std::vector<StreamConfig> family_a;
  for (int f : flavours)
    for (int g : grids) family_a.push_back({find_stream_kernel(f, 4), g, 256});
  const size_t family_b_size = 2 * blocks.size() * unrolls.size() * per_sm.size();
  std::vector<StreamConfig> family_c;
  for (int f : {static_cast<int>(kLoadPlain), flavours.size() > 1 ? flavours[1] : flavours[0]})
    for (int u : quick ? std::vector<int>{8} : std::vector<int>{4, 8})
      for (int m : quick ? std::vector<int>{4} : std::vector<int>{2, 4})
        for (int t : quick ? std::vector<int>{1024} : std::vector<int>{512, 1024})
          family_c.push_back({find_stream_kernel(f, u, kWarpChunk), m * sms, t});
  std::vector<StreamConfig> family_d;
#if !defined(PORT_HIP)
  const StreamKernel* bulk = nullptr;
  for (auto& k : stream_kernels())
    if (k.flavour == kLoadBulkCopy) bulk = &k;
  if (bulk && ex.prop().major >= 9) {
    for (int m : quick ? std::vector<int>{2} : std::vector<int>{1, 2})
      for (int t : quick ? std::vector<int>{512} : std::vector<int>{256, 512, 1024}) family_d.push_back({bulk, m * sms, t});
  } else {
    ex.note("bulk copy (TMA) family skipped: it needs sm_90 or newer");
  }
#endif

  if (ex.list()) {
    std::printf("# 01-ceiling would run %zu + %zu + %zu + %zu configurations\n", family_a.size(), family_b_size,
                family_c.size(), family_d.size());
    for (auto& c : family_c) std::printf("layout: %s\n", describe(c).c_str());
    for (auto& c : family_d) std::printf("bulk copy: %s\n", describe(c).c_str());
    for (auto& c : family_a) std::printf("grid x load flavour: %s\n", describe(c).c_str());
    for (int f : {0, 1})
      for (int t : blocks)
        for (int u : unrolls)
          for (int m : per_sm)
            std::printf("block size x loads in flight: %s x%d, %d blocks x %d threads\n",
                        f == 0 ? "plain" : "best flavour of the first family", u, m * sms, t);
    return kExitOk;
  }

  const size_t n = stream_working_set_vec4(ex, target, 32);
  const double ws_ratio = static_cast<double>(n * sizeof(vec4u)) / ex.l2_bytes();
  const uint64_t seed = fresh_seed();
  StreamBuffer buf(n, seed);
  int spec_computed = 0, mem_khz = 0, bus_bits = 0, dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  (void)cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
  (void)cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  spec_computed = static_cast<int>(2.0 * mem_khz * 1e3 * bus_bits / 8 / 1e9);
  const SpecBandwidth spec = spec_bandwidth(ex.prop().name, spec_computed);
  ex.note("working set " + std::to_string(n * sizeof(vec4u)) + " bytes, " + std::to_string(ws_ratio).substr(0, 5) +
          "x the " + std::to_string(ex.l2_bytes()) + "-byte L2; every element read exactly once per launch");
  ex.note("timing: " + std::to_string(plan.warmup) + " warm-up launches, median of " + std::to_string(plan.reps) +
          " batches of " + std::to_string(plan.iters) + " launches; seed " + std::to_string(seed));
  ex.note("spec " + std::to_string(static_cast<int>(spec.gbps)) + " GB/s: " + spec.source + " (comparison only)");

  std::vector<Measured> all;
  const int total = static_cast<int>(family_a.size() + family_b_size + family_c.size() + family_d.size());
  int done = 0;
  auto run = [&](const StreamConfig& c, const std::string& family) {
    if (!only.empty() && family.find(only) == std::string::npos) return;
    ex.progress(done++, total, "%s", describe(c).c_str());
    if (!buf.validate(c, ex.stream())) std::exit(kExitFailure);
    Summary s = summarize(buf.time(c, plan, ex.stream()));
    double g = gbps(buf.bytes(), s.median);
    // Principle 2: a streaming read over >= 32x the LLC cannot beat the datasheet.
    ex.require_below_ceiling(g, spec.gbps, describe(c), 1.0);
    Row r;
    r.add("blocks", c.blocks)
        .add("threads", c.threads)
        .add("loads", load_flavour_name(c.kernel->flavour))
        .add("in_flight", c.kernel->unroll, -1, "in flight")
        .add("layout", c.kernel->layout == kWarpChunk ? "warp-chunked" : "grid-stride")
        .add("median_ms", s.median, 3, "median ms")
        .add("gbps", g, 1, "GB/s")
        .add("sd_ms", s.sd, 3, "sd ms")
        .add("min_ms", s.min, 3, "min ms")
        .add("pct_of_spec", 100.0 * g / spec.gbps, 1, "% of spec")
        .extra("n", s.n)
        .extra("max_ms", s.max)
        .extra("bytes", buf.bytes());
    ex.add(family, r);
    all.push_back({c, s, g});
  };

  for (auto& c : family_a) run(c, "grid x load flavour (4 loads in flight, 256 threads)");
  // The second family sweeps the other axes for plain loads and for the best flavour so far.
  int best_flavour = kLoadPlain;
  double best_a = 0;
  for (auto& m : all)
    if (m.gbps > best_a && m.cfg.kernel->flavour != kLoadPlain) { best_a = m.gbps; best_flavour = m.cfg.kernel->flavour; }
  for (int f : {static_cast<int>(kLoadPlain), best_flavour})
    for (int t : blocks)
      for (int u : unrolls)
        for (int m : per_sm) run({find_stream_kernel(f, u), m * sms, t}, "block size x loads in flight");
  for (auto& c : family_c) run(c, "layout: warp-chunked against grid-stride");
  for (auto& c : family_d) run(c, "bulk copy (TMA) into a shared-memory ring");

  if (all.empty()) {
    std::fprintf(stderr, "01-ceiling: --family '%s' matches no family\n", only.c_str());
    return kExitUsage;
  }
  const Measured* best = &all[0];
  for (auto& m : all)
    if (m.gbps > best->gbps) best = &m;
  Json cfg = Json::object();
  cfg.set("loads", load_flavour_name(best->cfg.kernel->flavour));
  cfg.set("kernel", best->cfg.kernel->symbol);
  cfg.set("blocks", best->cfg.blocks);
  cfg.set("threads", best->cfg.threads);
  cfg.set("in_flight", best->cfg.kernel->unroll);
  cfg.set("layout", best->cfg.kernel->layout == kWarpChunk ? "warp-chunked" : "grid-stride");
  cfg.set("median_ms", best->ms.median);
  ex.summary().set("ceiling_gbps", best->gbps);
  ex.summary().set("spec_gbps", spec.gbps);
  ex.summary().set("spec_source", spec.source);
  ex.summary().set("ceiling_fraction_of_spec", best->gbps / spec.gbps);
  ex.summary().set("working_set_bytes", static_cast<unsigned long long>(n * sizeof(vec4u)));
  ex.summary().set("working_set_over_llc", ws_ratio);
  ex.summary().set("best_config", cfg);
  ex.summary().set("configurations", static_cast<int>(all.size()));
  return ex.finish();
}
