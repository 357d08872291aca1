// device_info.h: what a figure was measured on. Device properties from the runtime;
// clocks, power limit and ECC from NVML, loaded at run time (dlopen) so that no
// build needs it and a machine without it reports "unavailable".
#pragma once
#include <dlfcn.h>
#include <cctype>
#include <cstring>
#include <ctime>
#include <string>
#include "check.h"
#include "json.h"
#include "names.h"

#ifndef SUITE_GIT_COMMIT
#define SUITE_GIT_COMMIT "unknown"
#endif
#ifndef SUITE_GIT_DIRTY
#define SUITE_GIT_DIRTY 1
#endif
#ifndef SUITE_BUILD_ARCH
#define SUITE_BUILD_ARCH "unknown"
#endif

// NVML, the few calls we need, declared here (no nvml.h on the build machines).
class Nvml {
 public:
  static Nvml& get() { static Nvml n; return n; }
  bool ok() const { return dev_ != nullptr; }
  void open(const char* pci_bus_id) {
    if (tried_) return;
    tried_ = true;
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib_) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    auto by_pci = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetClockInfo"));
    max_clock_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetMaxClockInfo"));
    power_ = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib_, "nvmlDeviceGetPowerManagementLimit"));
    ecc_ = reinterpret_cast<int (*)(void*, int*, int*)>(dlsym(lib_, "nvmlDeviceGetEccMode"));
    temp_ = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib_, "nvmlDeviceGetTemperature"));
    driver_ = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(lib_, "nvmlSystemGetDriverVersion"));
    if (!init || !by_pci || init() != 0) return;
    void* d = nullptr;
    if (by_pci(pci_bus_id, &d) == 0) dev_ = d;
  }
  // NVML clock types: 1 = SM, 2 = memory.
  long clock_mhz(int type) const { unsigned v; return ok() && clock_ && clock_(dev_, type, &v) == 0 ? (long)v : -1; }
  long max_clock_mhz(int type) const { unsigned v; return ok() && max_clock_ && max_clock_(dev_, type, &v) == 0 ? (long)v : -1; }
  double power_limit_w() const { unsigned v; return ok() && power_ && power_(dev_, &v) == 0 ? v / 1000.0 : -1; }
  int ecc() const { int c, p; return ok() && ecc_ && ecc_(dev_, &c, &p) == 0 ? c : -1; }
  long temperature_c() const { unsigned v; return ok() && temp_ && temp_(dev_, 0, &v) == 0 ? (long)v : -1; }
  std::string driver() const {
    char buf[96] = {0};
    return ok() && driver_ && driver_(buf, sizeof buf) == 0 ? buf : "unavailable";
  }

 private:
  bool tried_ = false;
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  int (*clock_)(void*, int, unsigned*) = nullptr;
  int (*max_clock_)(void*, int, unsigned*) = nullptr;
  int (*power_)(void*, unsigned*) = nullptr;
  int (*ecc_)(void*, int*, int*) = nullptr;
  int (*temp_)(void*, int, unsigned*) = nullptr;
  int (*driver_)(char*, unsigned) = nullptr;
};

inline std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

inline Json clocks_now() {
  Nvml& n = Nvml::get();
  Json c = Json::object();
  c.set("sm_clock_mhz", n.ok() ? Json(n.clock_mhz(1)) : Json("unavailable"));
  c.set("memory_clock_mhz", n.ok() ? Json(n.clock_mhz(2)) : Json("unavailable"));
  c.set("temperature_c", n.ok() ? Json(n.temperature_c()) : Json("unavailable"));
  c.set("utc", utc_now());
  return c;
}

inline std::string arch_name(const cudaDeviceProp& p) {
#if defined(PORT_HIP)
  return p.gcnArchName;
#else
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
}

// The device's UUID in nvidia-smi's spelling (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx): which
// physical card a figure came from, where the name and even the bus id of lent machines repeat.
inline std::string device_uuid(int device, const cudaDeviceProp& p) {
#if defined(PORT_HIP)
  (void)p;
  hipUUID u{};
  if (hipDeviceGetUuid(&u, device) != hipSuccess) return "unavailable";
  const unsigned char* b = reinterpret_cast<const unsigned char*>(u.bytes);
#else
  (void)device;
  const unsigned char* b = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
#endif
  char out[48];
  std::snprintf(out, sizeof out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return out;
}

inline Json provenance(int device, const cudaDeviceProp& p, const std::string& command) {
  char bus[64] = {0};
#if defined(PORT_HIP)
  (void)hipDeviceGetPCIBusId(bus, sizeof bus, device);
#else
  (void)cudaDeviceGetPCIBusId(bus, sizeof bus, device);
#endif
  Nvml& n = Nvml::get();
  n.open(bus);
  int drv = 0, rt = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0;
  CHECK_CUDA(cudaDriverGetVersion(&drv));
  CHECK_CUDA(cudaRuntimeGetVersion(&rt));
  (void)cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  (void)cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device);
  (void)cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  Json j = Json::object();
  j.set("device_name", p.name);
  j.set("device_index", device);
  j.set("pci_bus_id", bus);
  j.set("device_uuid", device_uuid(device, p));
  j.set("arch", arch_name(p));
  j.set("build_arch", SUITE_BUILD_ARCH);
  j.set("sm_count", p.multiProcessorCount);
  j.set("warp_size", p.warpSize);
  j.set("l2_bytes", static_cast<long long>(p.l2CacheSize));
  j.set("global_memory_bytes", static_cast<unsigned long long>(p.totalGlobalMem));
  j.set("memory_bus_width_bits", bus_bits);
  j.set("max_sm_clock_mhz_runtime", clock_khz / 1000);
  j.set("memory_clock_mhz_runtime", mem_khz / 1000);
  j.set("driver_api_version", drv);
  j.set("runtime_version", rt);
  j.set("driver_version", n.driver());
  j.set("max_sm_clock_mhz", n.ok() ? Json(n.max_clock_mhz(1)) : Json("unavailable"));
  j.set("max_memory_clock_mhz", n.ok() ? Json(n.max_clock_mhz(2)) : Json("unavailable"));
  j.set("power_limit_w", n.ok() ? Json(n.power_limit_w()) : Json("unavailable"));
  int ecc = n.ecc();
  j.set("ecc", ecc < 0 ? Json("unavailable") : Json(ecc == 1));
  j.set("clocks_at_start", clocks_now());
  j.set("git_commit", SUITE_GIT_COMMIT);
  j.set("git_dirty", SUITE_GIT_DIRTY != 0);
  j.set("command", command);
  j.set("utc_start", utc_now());
  return j;
}
