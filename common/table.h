// table.h: one measurement = one Row; Rows print as fixed-column markdown tables
// and serialise as JSON objects. Units live in the key names (median_us, gbps, mbu).
#pragma once
#include <cstdio>
#include <string>
#include <vector>
#include "json.h"

struct Cell {
  std::string key, header, text;
  Json value;
  bool in_table = true;
};

class Row {
 public:
  // precision < 0: integers / strings as they are; >= 0: fixed decimals in the table.
  Row& add(const std::string& key, Json v, int precision = -1, const std::string& header = "") {
    Cell c;
    c.key = key;
    c.header = header.empty() ? key : header;
    c.value = v;
    c.text = format(v, precision);
    cells_.push_back(c);
    return *this;
  }
  // JSON only: kept out of the printed table.
  Row& extra(const std::string& key, Json v) {
    add(key, v);
    cells_.back().in_table = false;
    return *this;
  }
  const std::vector<Cell>& cells() const { return cells_; }
  Json to_json() const {
    Json o = Json::object();
    for (auto& c : cells_) o.set(c.key, c.value);
    return o;
  }
  static std::string format(const Json& v, int precision) {
    switch (v.kind()) {
      case Json::String: return v.str();
      case Json::Null: return "-";
      case Json::Bool: return v.dump();
      case Json::Integer: return v.dump();
      default: {
        char buf[64];
        if (precision < 0) precision = 3;
        std::snprintf(buf, sizeof buf, "%.*f", precision, v.number());
        return buf;
      }
    }
  }

 private:
  std::vector<Cell> cells_;
};

class Table {
 public:
  explicit Table(std::string title = "") : title_(std::move(title)) {}
  void add(const Row& r) { rows_.push_back(r); }
  bool empty() const { return rows_.empty(); }
  const std::string& title() const { return title_; }
  // Columns are the table cells of the first row, in order; every row must match.
  std::string render() const {
    if (rows_.empty()) return "";
    std::vector<std::string> headers;
    for (auto& c : rows_[0].cells())
      if (c.in_table) headers.push_back(c.header);
    std::vector<std::vector<std::string>> body;
    for (auto& r : rows_) {
      std::vector<std::string> line;
      for (auto& c : r.cells())
        if (c.in_table) line.push_back(c.text);
      line.resize(headers.size(), "-");
      body.push_back(line);
    }
    std::vector<size_t> w(headers.size(), 3);
    for (size_t i = 0; i < headers.size(); ++i) {
      w[i] = std::max(w[i], headers[i].size());
      for (auto& l : body) w[i] = std::max(w[i], l[i].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::string o = "|";
      for (size_t i = 0; i < cells.size(); ++i)
        o += " " + cells[i] + std::string(w[i] - cells[i].size(), ' ') + " |";
      return o + "\n";
    };
    std::string o;
    if (!title_.empty()) o += "\n### " + title_ + "\n\n";
    o += line(headers);
    std::string sep = "|";
    for (size_t i = 0; i < headers.size(); ++i) sep += std::string(w[i] + 2, '-') + "|";
    o += sep + "\n";
    for (auto& l : body) o += line(l);
    return o;
  }

 private:
  std::string title_;
  std::vector<Row> rows_;
};
