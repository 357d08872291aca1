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
//   family "launch size"                  : the same buffer read in launches of 4 MiB to 512 MiB, 200
//                                           back to back in a CUDA graph, plain and with PDL (each
//                                           launch releases the next at once, none waits): what a
//                                           decode-sized kernel reaches (common/launch_size.h)
// Working set: 8 GiB (>= 32x the LLC read from the device). Every configuration is
// validated (exact 64-bit sum of the words read, odd length so the tail runs) before
// it is timed. Median of 5 batches of 20 reads after 10 warm-up reads.
#include <algorithm>
#include "../common/ceiling.h"
#include "../common/launch_size.h"

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

  // Family "launch size": MiB per launch (32 MiB = the 4096x4096 FP16 GEMV's weights).
  const std::vector<size_t> launch_mib = quick ? std::vector<size_t>{8, 32} : std::vector<size_t>{4, 8, 16, 32, 64, 128, 512};
  const std::vector<LaunchSizeConfig> launch_cfgs = launch_size_configs(ex.prop(), ex.has_gpu());
  const bool launch_pdl = launch_size_pdl_available(ex.prop());
  auto launch_vec = [](size_t mib) { return (mib << 20) / sizeof(vec4u); };  // 16-byte vectors per launch
  size_t launch_runs = 0;  // distinct grids per size (two per-SM counts capped alike are one)
  for (size_t mib : launch_mib) launch_runs += launch_size_distinct(launch_cfgs, launch_vec(mib), sms).size();
  const int launches_per_graph = sanitizing() ? 4 : 200;  // under a sanitizer the tools need every kernel once, not 200 times

  if (ex.list()) {
    std::printf("# 01-ceiling would run %zu + %zu + %zu + %zu + %zu configurations\n", family_a.size(), family_b_size,
                family_c.size(), family_d.size(), launch_runs * (launch_pdl ? 2 : 1));
    for (auto& c : family_c) std::printf("layout: %s\n", describe(c).c_str());
    for (auto& c : family_d) std::printf("bulk copy: %s\n", describe(c).c_str());
    for (auto& c : family_a) std::printf("grid x load flavour: %s\n", describe(c).c_str());
    for (size_t mib : launch_mib)
      for (auto& c : launch_size_distinct(launch_cfgs, launch_vec(mib), sms))
        std::printf("launch size: %zu MiB per launch, %s, graph%s\n", mib,
                    describe(c, launch_size_blocks(c, launch_vec(mib), sms)).c_str(),
                    launch_pdl ? " and graph+PDL" : "");
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
  const SpecBandwidth spec = device_spec_bandwidth(ex);
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

  const std::string launch_family = "launch size: back-to-back launches in a graph";
  const bool run_launch = only.empty() || launch_family.find(only) != std::string::npos;
  if (all.empty() && !run_launch) {
    std::fprintf(stderr, "01-ceiling: --family '%s' matches no family\n", only.c_str());
    return kExitUsage;
  }
  double launch_best_gbps = 0;  // the best launch-size read, any size or mode
  Json launch_best = Json::object();
  if (run_launch) {
    // The fraction is of this run's ceiling, or of the committed one when only this family ran.
    double ceiling = 0;
    std::string ceiling_source = "this run's best configuration above";
    for (auto& m : all) ceiling = std::max(ceiling, m.gbps);
    if (all.empty()) {
      const Ceiling c = obtain_ceiling(ex);
      ceiling = c.gbps;
      ceiling_source = c.source;
    }
    LaunchSizeBench bench(buf, sms, ex.l2_bytes());
    const TimingPlan graph_plan = quick ? TimingPlan{1, 3, 2} : TimingPlan{2, 5, 3};
    Json per_size = Json::object();
    int ldone = 0;
    const int ltotal = static_cast<int>(launch_runs);
    for (size_t mib : launch_mib) {
      const size_t chunk_vec = launch_vec(mib);
      double best_gbps[2] = {0, 0};
      std::string best_cfg[2];
      for (auto& c : launch_size_distinct(launch_cfgs, chunk_vec, sms)) {
        ex.progress(ldone++, ltotal, "launch size %zu MiB: %s", mib, c.kernel->name);
        if (!bench.validate(c, chunk_vec, ex.stream())) std::exit(kExitFailure);
        const int blocks = launch_size_blocks(c, chunk_vec, sms);
        for (int pdl = 0; pdl <= (launch_pdl ? 1 : 0); ++pdl) {
          const Summary st = summarize(bench.time(c, chunk_vec, launches_per_graph, pdl != 0, graph_plan, ex.stream()));
          const double g = gbps(stream_read_bytes(chunk_vec), st.median);
          ex.require_below_ceiling(g, spec.gbps, describe(c, blocks), 1.0);
          Row r;
          r.add("mib_per_launch", static_cast<unsigned long long>(mib), -1, "MiB/launch")
              .add("mode", pdl ? "graph+PDL, no wait" : "graph")
              .add("kernel", c.kernel->name)
              .add("blocks", blocks)
              .add("threads", c.threads)
              .add("median_us", st.median * 1e3, 2, "median µs")
              .add("min_us", st.min * 1e3, 2, "min µs")
              .add("gbps", g, 1, "GB/s")
              .add("of_ceiling", ceiling > 0 ? g / ceiling : 0.0, 3, "of ceiling")
              .extra("n", st.n)
              .extra("sd_us", st.sd * 1e3)
              .extra("launches_per_graph", launches_per_graph)
              .extra("chunks_rotated", static_cast<unsigned long long>(bench.chunks(chunk_vec)))
              .extra("bytes_per_launch", stream_read_bytes(chunk_vec));
          ex.add(launch_family, r);
          if (g > best_gbps[pdl]) { best_gbps[pdl] = g; best_cfg[pdl] = describe(c, blocks); }
          if (g > launch_best_gbps) {
            launch_best_gbps = g;
            launch_best = Json::object();
            launch_best.set("family", "launch size");
            launch_best.set("kernel", c.kernel->name);
            launch_best.set("mib_per_launch", static_cast<unsigned long long>(mib));
            launch_best.set("mode", pdl ? "graph+PDL, no wait" : "graph");
            launch_best.set("blocks", blocks);
            launch_best.set("threads", c.threads);
            launch_best.set("median_us", st.median * 1e3);
          }
        }
      }
      Json one = Json::object();
      one.set("graph_gbps", best_gbps[0]);
      one.set("graph_of_ceiling", ceiling > 0 ? best_gbps[0] / ceiling : 0.0);
      one.set("graph_best", best_cfg[0]);
      if (launch_pdl) {
        one.set("pdl_gbps", best_gbps[1]);
        one.set("pdl_of_ceiling", ceiling > 0 ? best_gbps[1] / ceiling : 0.0);
        one.set("pdl_best", best_cfg[1]);
      }
      per_size.set(std::to_string(mib) + "_mib", one);
      if (mib == 32) {
        ex.summary().set("read_32mib_graph_of_ceiling", ceiling > 0 ? best_gbps[0] / ceiling : 0.0);
        if (launch_pdl) ex.summary().set("read_32mib_pdl_of_ceiling", ceiling > 0 ? best_gbps[1] / ceiling : 0.0);
      }
    }
    ex.summary().set("launch_size", per_size);
    ex.summary().set("launch_size_ceiling_source", ceiling_source);
    ex.note("launch size: " + std::to_string(launches_per_graph) + " launches per graph, launch i reads chunk i mod "
            "chunks of the working set; median of " + std::to_string(graph_plan.reps) + " batches of " +
            std::to_string(graph_plan.iters) + " replays; fractions of " + ceiling_source);
  }
  if (all.empty()) return ex.finish();
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
  // The ceiling is the best validated streaming read of any family: where back-to-back launches
  // (the launch-size family) read faster than one 8 GiB launch, they are the ceiling, so that no
  // MBU figure divides by less than a read this run reached.
  const double ceiling = std::max(best->gbps, launch_best_gbps);
  ex.summary().set("ceiling_gbps", ceiling);
  ex.summary().set("single_launch_ceiling_gbps", best->gbps);
  ex.summary().set("ceiling_from", launch_best_gbps > best->gbps ? "launch size" : "one launch over the working set");
  if (launch_best_gbps > 0) ex.summary().set("launch_size_best", launch_best);
  ex.summary().set("spec_gbps", spec.gbps);
  ex.summary().set("spec_source", spec.source);
  ex.summary().set("ceiling_fraction_of_spec", ceiling / spec.gbps);
  ex.summary().set("working_set_bytes", static_cast<unsigned long long>(n * sizeof(vec4u)));
  ex.summary().set("working_set_over_llc", ws_ratio);
  ex.summary().set("best_config", cfg);
  ex.summary().set("configurations", static_cast<int>(all.size()));
  return ex.finish();
}
