// json.h: a small JSON value and writer (valid output, strings escaped,
// non-finite numbers written as null). Host-only, unit-tested.
#pragma once
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

class Json {
 public:
  enum Kind { Null, Bool, Number, Integer, String, Array, Object };
  Json() : kind_(Null) {}
  Json(bool b) : kind_(Bool), b_(b) {}
  Json(int v) : kind_(Integer), i_(v) {}
  Json(long v) : kind_(Integer), i_(v) {}
  Json(long long v) : kind_(Integer), i_(v) {}
  Json(unsigned v) : kind_(Integer), i_(v) {}
  Json(unsigned long v) : kind_(Integer), i_(static_cast<long long>(v)) {}
  Json(unsigned long long v) : kind_(Integer), i_(static_cast<long long>(v)) {}
  Json(double v) : kind_(Number), d_(v) {}
  Json(const char* s) : kind_(String), s_(s) {}
  Json(std::string s) : kind_(String), s_(std::move(s)) {}
  static Json array() { Json j; j.kind_ = Array; return j; }
  static Json object() { Json j; j.kind_ = Object; return j; }

  Kind kind() const { return kind_; }
  // Object: set (replacing an existing key, keeping order of first insertion).
  Json& set(const std::string& key, Json v) {
    kind_ = Object;
    for (auto& kv : obj_)
      if (kv.first == key) { kv.second = std::move(v); return *this; }
    obj_.emplace_back(key, std::move(v));
    return *this;
  }
  const Json* get(const std::string& key) const {
    for (auto& kv : obj_)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
  Json& push(Json v) { kind_ = Array; arr_.push_back(std::move(v)); return *this; }
  size_t size() const { return kind_ == Array ? arr_.size() : obj_.size(); }
  double number() const { return kind_ == Integer ? static_cast<double>(i_) : d_; }
  const std::string& str() const { return s_; }

  static std::string escape(const std::string& s) {
    std::string o = "\"";
    for (unsigned char c : s) {
      switch (c) {
        case '"': o += "\\\""; break;
        case '\\': o += "\\\\"; break;
        case '\n': o += "\\n"; break;
        case '\r': o += "\\r"; break;
        case '\t': o += "\\t"; break;
        case '\b': o += "\\b"; break;
        case '\f': o += "\\f"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            o += buf;
          } else {
            o += static_cast<char>(c);
          }
      }
    }
    return o + "\"";
  }

  std::string dump(int indent = 2, int depth = 0) const {
    std::string pad = indent ? "\n" + std::string((depth + 1) * indent, ' ') : "";
    std::string end = indent ? "\n" + std::string(depth * indent, ' ') : "";
    switch (kind_) {
      case Null: return "null";
      case Bool: return b_ ? "true" : "false";
      case Integer: return std::to_string(i_);
      case Number: {
        if (!std::isfinite(d_)) return "null";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.10g", d_);
        return buf;
      }
      case String: return escape(s_);
      case Array: {
        if (arr_.empty()) return "[]";
        // Arrays of scalars stay on one line; rows of objects get one line each.
        std::string o = "[";
        for (size_t i = 0; i < arr_.size(); ++i) {
          o += (i ? "," : "") + pad + arr_[i].dump(0, 0);
        }
        return o + end + "]";
      }
      case Object: {
        if (obj_.empty()) return "{}";
        std::string o = "{";
        for (size_t i = 0; i < obj_.size(); ++i) {
          o += (i ? "," : "") + pad + escape(obj_[i].first) + (indent ? ": " : ":") +
               obj_[i].second.dump(indent, depth + 1);
        }
        return o + end + "}";
      }
    }
    return "null";
  }

 private:
  Kind kind_;
  bool b_ = false;
  long long i_ = 0;
  double d_ = 0;
  std::string s_;
  std::vector<Json> arr_;
  std::vector<std::pair<std::string, Json>> obj_;
};

// Reads one numeric or string field "key": value from a JSON text without a full parser:
// enough for a later experiment to pick up 01-ceiling's summary and provenance.
// Where the value of the first "key" starts (just past its colon), or npos.
inline size_t json_value_at(const std::string& text, const std::string& key) {
  const std::string pat = "\"" + key + "\"";
  const size_t p = text.find(pat);
  if (p == std::string::npos) return std::string::npos;
  const size_t colon = text.find(':', p + pat.size());
  return colon == std::string::npos ? std::string::npos : colon + 1;
}
inline bool json_find_string(const std::string& text, const std::string& key, std::string* out) {
  size_t p = json_value_at(text, key);
  if (p == std::string::npos) return false;
  p = text.find_first_not_of(" \t\r\n", p);
  if (p == std::string::npos || text[p] != '"') return false;
  const size_t e = text.find('"', p + 1);
  if (e == std::string::npos) return false;
  *out = text.substr(p + 1, e - p - 1);
  return true;
}
inline bool json_find_number(const std::string& text, const std::string& key, double* out) {
  const size_t p = json_value_at(text, key);
  if (p == std::string::npos) return false;
  const char* s = text.c_str() + p;
  char* e = nullptr;
  double v = std::strtod(s, &e);
  if (e == s) return false;
  *out = v;
  return true;
}
