// Host unit tests of the harness (no GPU): statistics, JSON, tables, flags, byte
// accounting, the working-set rule, names. Each TEST prints PASS/FAIL; the runner counts.
// The JSON written to argv[1] is parsed by tests/run_tests.py (proves it is valid).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
#include "../common/flags.h"
#include "../common/json.h"
#include "../common/names.h"
#include "../common/sizes.h"
#include "../common/stats.h"
#include "../common/table.h"

static int g_pass = 0, g_fail = 0;
static bool g_ok;
#define EXPECT(cond)                                                              \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::printf("    expectation failed: %s (line %d)\n", #cond, __LINE__);     \
      g_ok = false;                                                               \
    }                                                                             \
  } while (0)
#define NEAR(a, b, eps) EXPECT(std::fabs((a) - (b)) <= (eps))
#define TEST(name) static void name(); static Registrar reg_##name(#name, name); static void name()
struct Registrar {
  static std::vector<std::pair<const char*, void (*)()>>& all() { static std::vector<std::pair<const char*, void (*)()>> v; return v; }
  Registrar(const char* n, void (*f)()) { all().push_back({n, f}); }
};

TEST(median_odd_even) {
  EXPECT(median_of({3, 1, 2}) == 2);
  NEAR(median_of({4, 1, 3, 2}), 2.5, 1e-12);  // even count: mean of the two middles
  NEAR(median_of({1, 2}), 1.5, 1e-12);
  EXPECT(std::isnan(median_of({})));
}
TEST(summary_sd_min_max) {
  Summary s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  NEAR(s.mean, 5.0, 1e-12);
  NEAR(s.sd, std::sqrt(32.0 / 7.0), 1e-12);  // sample sd, n-1
  EXPECT(s.min == 2 && s.max == 9 && s.n == 8);
  NEAR(s.median, 4.5, 1e-12);
  EXPECT(summarize({7}).sd == 0);
}
TEST(json_escaping) {
  EXPECT(Json::escape("a\"b\\c\n\t\x01") == "\"a\\\"b\\\\c\\n\\t\\u0001\"");
  Json j = Json::object();
  j.set("nan", NAN).set("inf", INFINITY).set("i", 3).set("s", "x");
  std::string d = j.dump(0);
  EXPECT(d == "{\"nan\":null,\"inf\":null,\"i\":3,\"s\":\"x\"}");
  j.set("i", 4);  // replace keeps one key
  EXPECT(j.dump(0).find("\"i\":4") != std::string::npos && j.size() == 4);
}
TEST(json_find_number_reads_summary) {
  double v = 0;
  EXPECT(json_find_number("{\"summary\": {\"ceiling_gbps\": 4458.5, \"x\": 1}}", "ceiling_gbps", &v));
  NEAR(v, 4458.5, 1e-9);
  EXPECT(!json_find_number("{\"a\": 1}", "ceiling_gbps", &v));
  EXPECT(!json_find_number("{\"ceiling_gbps\": \"no\"}", "ceiling_gbps", &v));
}
TEST(json_find_string_reads_provenance) {
  std::string v;
  EXPECT(json_find_string("{\"provenance\": {\"device_uuid\" :  \"GPU-ab\", \"x\": 1}}", "device_uuid", &v) && v == "GPU-ab");
  EXPECT(!json_find_string("{\"device_uuid\": 7}", "device_uuid", &v));
  EXPECT(!json_find_string("{\"a\": \"b\"}", "device_uuid", &v));
  EXPECT(!json_find_string("{\"device_uuid\"", "device_uuid", &v));
}
TEST(ceiling_card_names_whose_ceiling) {
  EXPECT(ceiling_card("GPU-1", "GPU-1") == "same");
  EXPECT(ceiling_card("GPU-1", "GPU-2") == "other card (GPU-1)");
  EXPECT(ceiling_card("", "GPU-2") == "card not recorded");
  EXPECT(ceiling_card("unavailable", "unavailable") == "card not recorded");
  EXPECT(ceiling_card("GPU-1", "unavailable") == "this card's id unavailable");
}
TEST(table_fixed_columns) {
  Table t("t");
  Row a, b;
  a.add("blocks", 64).add("gbps", 1313.25, 1, "GB/s");
  b.add("blocks", 1024).add("gbps", 4406.8, 1, "GB/s");
  t.add(a);
  t.add(b);
  std::string r = t.render();
  EXPECT(r.find("| blocks | GB/s   |") != std::string::npos);
  EXPECT(r.find("| 64     | 1313.2 |") != std::string::npos || r.find("| 64     | 1313.3 |") != std::string::npos);
  EXPECT(r.find("| 1024   | 4406.8 |") != std::string::npos);
}
static Flags::Result parse(std::vector<std::string> args, bool* q, long long* n, std::string* err) {
  Flags f("x", "test");
  f.add_bool("quick", q, "");
  f.add_size("bytes", n, 1, 1LL << 40, "");
  std::vector<char*> argv;
  static std::string prog = "x";
  argv.push_back(&prog[0]);
  for (auto& a : args) argv.push_back(&a[0]);
  return f.parse(static_cast<int>(argv.size()), argv.data(), err);
}
TEST(flags_accept_and_refuse) {
  bool q = false;
  long long n = 0;
  std::string err;
  EXPECT(parse({"--quick", "--bytes", "8G"}, &q, &n, &err) == Flags::kOk && q && n == (8LL << 30));
  EXPECT(parse({"--bytes=512K"}, &q, &n, &err) == Flags::kOk && n == 512 * 1024);
  EXPECT(parse({"--nope"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"--bytes"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"--bytes", "-5"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"--bytes", "12x"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"--bytes", "99999999999999999999999"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"--bytes", "4096G"}, &q, &n, &err) == Flags::kError);  // above the range
  EXPECT(parse({"--quick=1"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"--quick", "--quick"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"stray"}, &q, &n, &err) == Flags::kError);
  EXPECT(parse({"--help"}, &q, &n, &err) == Flags::kHelp);
}
TEST(byte_accounting) {
  // 4096x4096 FP16 GEMV: 2*N*K weights + 2*K in + 2*N out.
  EXPECT(gemv_bytes(4096, 4096) == 2.0 * 4096 * 4096 + 2 * 4096 + 2 * 4096);
  NEAR(gemv_bytes(4096, 4096) / 1e6, 33.570816, 1e-9);
  // 8 GiB in 1.926 ms is 4460 GB/s (napkin check of the unit: 1e9 bytes per second).
  NEAR(gbps(8589934592.0, 1.926), 4460.0, 0.5);
  EXPECT(gbps(1e9, 0) == 0);
}
TEST(working_set_rule_refuses_cache_resident) {
  const uint64_t l2 = 62914560;  // H200's 60 MiB
  EXPECT(!check_working_set(32ull << 20, l2, 32).ok);  // a 32 MiB set fits in L2: refused
  EXPECT(!check_working_set(l2 * 31, l2, 32).ok);
  EXPECT(check_working_set(l2 * 32, l2, 32).ok);
  EXPECT(check_working_set(8ull << 30, l2, 32).ok);
  NEAR(check_working_set(8ull << 30, l2, 32).ratio, 136.533, 1e-3);
  EXPECT(!check_working_set(8ull << 30, 0, 32).ok);  // unknown cache size: refuse, never assume
  EXPECT(fit_working_set(8ull << 30, 4ull << 30, 1ull << 30, 1ull << 20) == (3ull << 30));
  EXPECT(fit_working_set(8ull << 30, 100ull << 30, 1ull << 30, 1ull << 20) == (8ull << 30));
  EXPECT(fit_working_set(8ull << 30, 1ull << 29, 1ull << 30, 1ull << 20) == 0);
}
TEST(names_and_spec) {
  EXPECT(gpu_slug("NVIDIA H200") == "h200");
  EXPECT(gpu_slug("AMD Instinct MI300X") == "mi300x");
  EXPECT(gpu_slug("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3");
  EXPECT(gpu_label("NVIDIA H100 80GB HBM3") == "H100 80GB HBM3");
  EXPECT(gpu_label("AMD Instinct MI300X") == "MI300X");
  EXPECT(spec_bandwidth("NVIDIA H200", 1).gbps == 4800);
  EXPECT(spec_bandwidth("AMD Instinct MI300X", 1).gbps == 5300);
  EXPECT(spec_bandwidth("Mystery GPU", 1234).gbps == 1234);
}

int main(int argc, char** argv) {
  for (auto& t : Registrar::all()) {
    g_ok = true;
    t.second();
    std::printf("%s unit:%s\n", g_ok ? "PASS" : "FAIL", t.first);
    (g_ok ? g_pass : g_fail)++;
  }
  if (argc > 1) {  // a document with every kind of value, for the runner's JSON parser
    Json j = Json::object();
    Json rows = Json::array();
    Row r;
    r.add("median_us", 1.5, 2).add("name", "q\"uo\\te\n").add("n", 5).add("bad", NAN);
    rows.push(r.to_json());
    j.set("schema", 1).set("rows", rows).set("summary", Json::object()).set("empty", Json::array());
    std::ofstream(argv[1]) << j.dump(2);
  }
  std::printf("unit: %d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
