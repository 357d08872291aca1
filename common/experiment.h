// experiment.h: the contract of an experiment binary (DESIGN.md), once.
//   Experiment ex("02-gemv", "about text");
//   ex.flags().add_int(...);           // the experiment's own flags
//   ex.start(argc, argv);              // flags (exit 2/0), GPU (exit 77), provenance
//   ex.add("family title", row);       // one measurement
//   ex.summary().set("key", value);    // headline figures, under the keys
//   return ex.finish();                // tables on stdout, JSON to --json
#pragma once
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "device_info.h"
#include "flags.h"
#include "json.h"
#include "sizes.h"
#include "stats.h"
#include "table.h"
#include "timing.h"

class Experiment {
 public:
  Experiment(std::string id, std::string about) : id_(std::move(id)), flags_(id_, std::move(about)) {
    flags_.add_bool("quick", &quick_, "seconds, not minutes: smaller sweep (smoke runs, sanitizers)");
    flags_.add_string("json", &json_path_, "write the machine-readable result to this path");
    flags_.add_int("device", &device_, 0, 1023, "GPU index");
    flags_.add_bool("list", &list_, "print the configurations it would run, then exit");
    flags_.add_bool("print-results-dir", &print_dir_, "print results/<gpu> for this device, then exit");
    t0_ = std::chrono::steady_clock::now();
  }

  Flags& flags() { return flags_; }
  // A check of the experiment's own flag values, run right after parsing and before the GPU
  // is looked for, so bad input exits 2 on any machine. Returns "" or the message.
  void validate_flags(std::function<std::string()> check) { checks_.push_back(std::move(check)); }
  bool quick() const { return quick_; }
  bool list() const { return list_; }
  bool has_gpu() const { return has_gpu_; }
  const cudaDeviceProp& prop() const { return prop_; }
  int sm_count() const { return prop_.multiProcessorCount; }
  size_t l2_bytes() const { return static_cast<size_t>(prop_.l2CacheSize); }
  cudaStream_t stream() const { return stream_; }
  Json& summary() { return summary_; }
  Json& provenance_json() { return prov_; }
  const std::string& id() const { return id_; }
  // results/<gpu>; SUITE_RESULTS_ROOT moves the root (make run QUICK=1 writes under build/).
  std::string results_dir() const {
    const char* root = std::getenv("SUITE_RESULTS_ROOT");
    return std::string(root && *root ? root : "results") + "/" + gpu_slug(prop_.name);
  }

  // Parses flags, finds the GPU, prints the provenance header. With --list and
  // no GPU it describes a nominal device (132 SMs, 60 MB L2) and says so.
  void start(int argc, char** argv) {
    for (int i = 0; i < argc; ++i) command_ += (i ? " " : "") + std::string(argv[i] ? argv[i] : "");
    std::string err;
    switch (flags_.parse(argc, argv, &err)) {
      case Flags::kHelp:
        std::printf("%s: %s", id_.c_str(), flags_.usage().c_str());
        std::exit(kExitOk);
      case Flags::kError:
        std::fprintf(stderr, "%s: %s (see --help)\n", id_.c_str(), err.c_str());
        std::exit(kExitUsage);
      default: break;
    }
    if (!json_path_.empty()) {  // an unwritable --json is bad input, found before the run, not after it
      const size_t slash = json_path_.find_last_of('/');
      const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : json_path_.substr(0, slash);
      struct stat st_dir {}, st_file {};
      if (stat(dir.c_str(), &st_dir) != 0 || !S_ISDIR(st_dir.st_mode) || access(dir.c_str(), W_OK) != 0 ||
          (stat(json_path_.c_str(), &st_file) == 0 && (S_ISDIR(st_file.st_mode) || access(json_path_.c_str(), W_OK) != 0))) {
        std::fprintf(stderr, "%s: --json %s: cannot write there (it must name a file, in a folder that exists and is writable: %s) (see --help)\n",
                     id_.c_str(), json_path_.c_str(), dir.c_str());
        std::exit(kExitUsage);
      }
    }
    for (auto& check : checks_) {
      std::string why = check();
      if (!why.empty()) {
        std::fprintf(stderr, "%s: %s (see --help)\n", id_.c_str(), why.c_str());
        std::exit(kExitUsage);
      }
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) count = 0;
    if (device_ > 0 && device_ >= count) {
      std::fprintf(stderr, "%s: --device %lld does not exist (%d device%s present)\n", id_.c_str(), device_, count,
                   count == 1 ? "" : "s");
      std::exit(kExitUsage);
    }
    if (count == 0) {
      (void)cudaGetLastError();
      if (list_) {
        nominal_device();
        std::printf("# %s: no GPU present; listing for a nominal %d-SM device with %.0f MB L2\n", id_.c_str(),
                    prop_.multiProcessorCount, prop_.l2CacheSize / 1e6);
        return;
      }
      std::fprintf(stderr, "%s: skipped: no GPU present (%s)\n", id_.c_str(),
                   e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
      std::exit(kExitNoGpu);
    }
    has_gpu_ = true;
    CHECK_CUDA(cudaSetDevice(static_cast<int>(device_)));
    CHECK_CUDA(cudaGetDeviceProperties(&prop_, static_cast<int>(device_)));
    if (print_dir_) {
      std::printf("%s\n", results_dir().c_str());
      std::exit(kExitOk);
    }
    if (prop_.warpSize != PORT_HOST_WARP_SIZE)
      FAIL("device warp size %d differs from the %d this build's kernels assume", prop_.warpSize, PORT_HOST_WARP_SIZE);
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    prov_ = provenance(static_cast<int>(device_), prop_, command_);
    prov_.set("quick", quick_);
    if (sanitizing()) prov_.set("sanitizing", true);  // timings under a sanitizer: not results
    if (!list_) print_header();
  }

  void print_header() const {
    std::printf("# %s\n\n", id_.c_str());
    std::printf("| device | %s (%s), %d SMs, %.1f MB L2, %.1f GB |\n", prop_.name, arch_name(prop_).c_str(),
                prop_.multiProcessorCount, prop_.l2CacheSize / 1e6, prop_.totalGlobalMem / 1e9);
    std::printf("|---|---|\n");
    auto s = [&](const char* k) { const Json* j = prov_.get(k); return j ? Row::format(*j, 0) : std::string("-"); };
    std::printf("| driver / runtime | %s / %s |\n", s("driver_version").c_str(), s("runtime_version").c_str());
    const Json* c = prov_.get("clocks_at_start");
    std::printf("| clocks at start | SM %s MHz, memory %s MHz (max SM %s) |\n",
                c && c->get("sm_clock_mhz") ? Row::format(*c->get("sm_clock_mhz"), 0).c_str() : "-",
                c && c->get("memory_clock_mhz") ? Row::format(*c->get("memory_clock_mhz"), 0).c_str() : "-",
                s("max_sm_clock_mhz").c_str());
    std::printf("| power limit / ECC | %s W / %s |\n", s("power_limit_w").c_str(), s("ecc").c_str());
    std::printf("| build | %s, commit %s%s |\n", SUITE_BUILD_ARCH, SUITE_GIT_COMMIT, SUITE_GIT_DIRTY ? " (dirty)" : "");
    std::printf("| command | `%s` |\n", command_.c_str());
    std::fflush(stdout);
  }

  // One measurement in a family (a family prints as one table).
  void add(const std::string& family, const Row& r) {
    if (!tables_.count(family)) {
      order_.push_back(family);
      tables_.emplace(family, Table(family));
    }
    tables_.at(family).add(r);
    Json j = r.to_json();
    j.set("family", family);
    rows_.push(j);
  }
  void note(const std::string& n) { notes_.push_back(n); }

  // Progress on stderr: which configuration of how many, elapsed and estimate.
  void progress(int done, int total, const char* fmt, ...) {
    double el = elapsed_s();
    va_list ap;
    va_start(ap, fmt);
    char buf[256];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    double eta = done > 0 ? el / done * (total - done) : 0;
    std::fprintf(stderr, "[%s %d/%d %.0fs, ~%.0fs left] %s\n", id_.c_str(), done, total, el, eta, buf);
  }
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

  // Principle 2: nothing may beat the measured ceiling; if it does, the
  // measurement is wrong (a cache hit, a miscounted byte), and the run fails.
  void require_below_ceiling(double achieved_gbps, double ceiling_gbps, const std::string& what,
                             double slack = 1.02) {
    if (sanitizing()) return;  // both figures are instrumented timings there: the rule means nothing
    if (ceiling_gbps > 0 && achieved_gbps > ceiling_gbps * slack)
      FAIL("%s: achieved %.1f GB/s is above the measured ceiling %.1f GB/s: the measurement is wrong "
           "(cache-resident data or miscounted bytes)", what.c_str(), achieved_gbps, ceiling_gbps);
  }

  int finish() {
    for (auto& f : order_) std::printf("%s", tables_.at(f).render().c_str());
    if (!notes_.empty()) {
      std::printf("\n");
      for (auto& n : notes_) std::printf("- %s\n", n.c_str());
    }
    std::printf("\n### summary\n\n```\n%s\n```\n", summary_.dump(2).c_str());
    if (has_gpu_) prov_.set("clocks_at_end", clocks_now());
    prov_.set("elapsed_s", elapsed_s());
    if (!json_path_.empty()) {
      Json j = Json::object();
      j.set("schema", 1);
      j.set("experiment", id_);
      j.set("provenance", prov_);
      j.set("rows", rows_);
      j.set("summary", summary_);
      Json notes = Json::array();
      for (auto& n : notes_) notes.push(n);
      j.set("notes", notes);
      std::ofstream out(json_path_);
      if (!out) FAIL("cannot write %s", json_path_.c_str());
      out << j.dump(2) << "\n";
      if (!out) FAIL("writing %s failed", json_path_.c_str());
      std::fprintf(stderr, "%s: wrote %s\n", id_.c_str(), json_path_.c_str());
    }
    std::fflush(stdout);
    return kExitOk;
  }

 private:
  void nominal_device() {
    std::memset(&prop_, 0, sizeof prop_);
    std::snprintf(prop_.name, sizeof prop_.name, "nominal (no GPU)");
    prop_.multiProcessorCount = 132;
    prop_.l2CacheSize = 60 * 1024 * 1024;
    prop_.warpSize = PORT_HOST_WARP_SIZE;
    prop_.totalGlobalMem = 141ull << 30;
    prop_.maxThreadsPerBlock = 1024;
    prop_.major = 9;
  }

  std::string id_;
  Flags flags_;
  bool quick_ = false, list_ = false, has_gpu_ = false, print_dir_ = false;
  std::string json_path_;
  long long device_ = 0;
  std::string command_;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  Json prov_ = Json::object();
  Json summary_ = Json::object();
  Json rows_ = Json::array();
  std::vector<std::string> order_, notes_;
  std::map<std::string, Table> tables_;
  std::vector<std::function<std::string()>> checks_;
  std::chrono::steady_clock::time_point t0_;
};
