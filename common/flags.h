// flags.h: command-line flags with the contract of DESIGN.md. Host-only, fuzzed in CI.
// Forms: --name value | --name=value; booleans take no value. Anything unknown,
// malformed, out of range or repeated is a usage error (the caller exits 2).
#pragma once
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

class Flags {
 public:
  enum Result { kOk, kHelp, kError };
  Flags(std::string program, std::string about) : program_(std::move(program)), about_(std::move(about)) {}

  void add_bool(const std::string& name, bool* target, const std::string& help) {
    specs_.push_back({name, help, kBool, target, nullptr, nullptr, nullptr, 0, 0, 0, 0});
  }
  void add_int(const std::string& name, long long* target, long long lo, long long hi, const std::string& help) {
    specs_.push_back({name, help, kInt, nullptr, target, nullptr, nullptr, lo, hi, 0, 0});
  }
  // Byte sizes accept a K, M or G suffix (powers of 1024).
  void add_size(const std::string& name, long long* target, long long lo, long long hi, const std::string& help) {
    specs_.push_back({name, help, kSize, nullptr, target, nullptr, nullptr, lo, hi, 0, 0});
  }
  void add_double(const std::string& name, double* target, double lo, double hi, const std::string& help) {
    specs_.push_back({name, help, kDouble, nullptr, nullptr, target, nullptr, 0, 0, lo, hi});
  }
  void add_string(const std::string& name, std::string* target, const std::string& help) {
    specs_.push_back({name, help, kString, nullptr, nullptr, nullptr, target, 0, 0, 0, 0});
  }

  Result parse(int argc, char** argv, std::string* err) {
    std::vector<std::string> seen;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i] ? argv[i] : "";
      if (a == "--help" || a == "-h") return kHelp;
      if (a.size() < 3 || a.compare(0, 2, "--") != 0) return fail(err, "unexpected argument '" + a + "'");
      std::string name = a.substr(2), value;
      bool has_value = false;
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      Spec* s = find(name);
      if (!s) return fail(err, "unknown flag '--" + name + "'");
      for (auto& n : seen)
        if (n == name) return fail(err, "flag '--" + name + "' given twice");
      seen.push_back(name);
      if (s->kind == kBool) {
        if (has_value) return fail(err, "flag '--" + name + "' takes no value");
        *s->b = true;
        continue;
      }
      if (!has_value) {
        if (i + 1 >= argc) return fail(err, "flag '--" + name + "' needs a value");
        value = argv[++i] ? argv[i] : "";
      }
      std::string why;
      if (!assign(*s, value, &why)) return fail(err, "bad value '" + value + "' for '--" + name + "': " + why);
    }
    return kOk;
  }

  std::string usage() const {
    std::string o = "usage: " + program_ + " [flags]\n" + about_ + "\n\nflags:\n";
    o += "  --help             this text\n";
    for (auto& s : specs_) {
      std::string lhs = "  --" + s.name;
      if (s.kind == kInt || s.kind == kSize) lhs += " N";
      if (s.kind == kDouble) lhs += " X";
      if (s.kind == kString) lhs += " S";
      lhs += lhs.size() < 21 ? std::string(21 - lhs.size(), ' ') : std::string(2, ' ');  // long names keep a gap
      o += lhs + s.help;
      if (s.kind == kInt || s.kind == kSize)
        o += " [" + std::to_string(s.lo) + ".." + std::to_string(s.hi) + "]";
      o += "\n";
    }
    o += "\nexit codes: 0 ok, 1 validation or GPU error, 2 usage, 77 no GPU (skipped)\n";
    return o;
  }

  // Strict number parsing, exposed for tests.
  static bool parse_int(const std::string& v, long long* out, bool size_suffix) {
    if (v.empty() || v.size() > 40) return false;
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (errno == ERANGE || end == v.c_str()) return false;
    long long mult = 1;
    if (size_suffix && *end) {
      char c = *end++;
      if (c == 'K' || c == 'k') mult = 1LL << 10;
      else if (c == 'M' || c == 'm') mult = 1LL << 20;
      else if (c == 'G' || c == 'g') mult = 1LL << 30;
      else return false;
    }
    if (*end) return false;
    if (x != 0 && (x > (1LL << 62) / mult || x < -(1LL << 62) / mult)) return false;
    *out = x * mult;
    return true;
  }

 private:
  enum Kind { kBool, kInt, kSize, kDouble, kString };
  struct Spec {
    std::string name, help;
    Kind kind;
    bool* b;
    long long* i;
    double* d;
    std::string* s;
    long long lo, hi;
    double dlo, dhi;
  };
  Spec* find(const std::string& n) {
    for (auto& s : specs_)
      if (s.name == n) return &s;
    return nullptr;
  }
  static Result fail(std::string* err, const std::string& m) {
    if (err) *err = m;
    return kError;
  }
  static bool assign(Spec& s, const std::string& v, std::string* why) {
    switch (s.kind) {
      case kInt:
      case kSize: {
        long long x;
        if (!parse_int(v, &x, s.kind == kSize)) { *why = "not an integer"; return false; }
        if (x < s.lo || x > s.hi) { *why = "out of range [" + std::to_string(s.lo) + ", " + std::to_string(s.hi) + "]"; return false; }
        *s.i = x;
        return true;
      }
      case kDouble: {
        if (v.empty() || v.size() > 40) { *why = "not a number"; return false; }
        char* end = nullptr;
        errno = 0;
        double x = std::strtod(v.c_str(), &end);
        if (*end || end == v.c_str() || errno == ERANGE || !(x == x)) { *why = "not a number"; return false; }
        if (x < s.dlo || x > s.dhi) { *why = "out of range"; return false; }
        *s.d = x;
        return true;
      }
      case kString:
        if (v.empty()) { *why = "empty"; return false; }
        if (v.size() > 4096) { *why = "too long"; return false; }
        *s.s = v;
        return true;
      default: return false;
    }
  }
  std::string program_, about_;
  std::vector<Spec> specs_;
};
