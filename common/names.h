// names.h: device names to results folders and datasheet figures. Host-only, unit-tested.
#pragma once
#include <cctype>
#include <cstring>
#include <string>

// The vendor's datasheet memory bandwidth, for comparison only (principle 1).
struct SpecBandwidth {
  double gbps;
  std::string source;
};
inline SpecBandwidth spec_bandwidth(const std::string& name, double computed_gbps) {
  struct Entry { const char* match; double gbps; const char* source; };
  static const Entry table[] = {
      {"H200", 4800, "NVIDIA H200 Tensor Core GPU datasheet: 4.8 TB/s HBM3e"},
      {"H100 NVL", 3900, "NVIDIA H100 datasheet (NVL): 3.9 TB/s"},
      {"H100 PCIe", 2000, "NVIDIA H100 datasheet (PCIe): 2.0 TB/s"},
      {"H100", 3350, "NVIDIA H100 datasheet (SXM): 3.35 TB/s"},
      {"B200", 8000, "NVIDIA B200 datasheet: 8 TB/s HBM3e"},
      {"A100-SXM4-80GB", 2039, "NVIDIA A100 datasheet (80GB SXM): 2039 GB/s"},
      {"A100", 1555, "NVIDIA A100 datasheet (40GB): 1555 GB/s"},
      {"MI300X", 5300, "AMD Instinct MI300X datasheet: 5.3 TB/s"},
  };
  for (auto& e : table)
    if (name.find(e.match) != std::string::npos) return {e.gbps, e.source};
  return {computed_gbps, "computed from the memory clock and bus width the runtime reports"};
}

// A device's name without its vendor words, for table headers: "NVIDIA H200" -> "H200",
// "AMD Instinct MI300X" -> "MI300X".
inline std::string gpu_label(std::string name) {
  for (const char* drop : {"NVIDIA ", "AMD ", "Instinct "}) {
    size_t p = name.find(drop);
    if (p != std::string::npos) name.erase(p, std::strlen(drop));
  }
  return name;
}

// results/<slug>/: "NVIDIA H200" -> "h200", "AMD Instinct MI300X" -> "mi300x".
inline std::string gpu_slug(const std::string& full_name) {
  const std::string name = gpu_label(full_name);
  std::string o;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(c));
    else if (!o.empty() && o.back() != '-') o += '-';
  }
  while (!o.empty() && o.back() == '-') o.pop_back();
  return o.empty() ? "unknown-gpu" : o;
}

// Whether a figure read from a file was measured on this very card: the UUID its provenance
// recorded ("" when it recorded none) against this device's ("unavailable" where the runtime
// could not say). A lent machine of the same name can be another card, and a results/<gpu>/
// file committed from elsewhere always is. Returns "same", "other card (<uuid>)", "card not
// recorded" or "this card's id unavailable".
inline std::string ceiling_card(const std::string& recorded_uuid, const std::string& this_uuid) {
  if (recorded_uuid.empty() || recorded_uuid == "unavailable") return "card not recorded";
  if (this_uuid.empty() || this_uuid == "unavailable") return "this card's id unavailable";
  return recorded_uuid == this_uuid ? "same" : "other card (" + recorded_uuid + ")";
}
