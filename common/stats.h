// stats.h: summary statistics of repeated timings. Host-only, unit-tested.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

struct Summary {
  int n = 0;
  double median = NAN, min = NAN, max = NAN, mean = NAN, sd = NAN;
};

// Median of an even count is the mean of the two middle values (not the upper one).
inline double median_of(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return (v.size() % 2) ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Sample standard deviation (n-1); a single sample has sd 0.
inline Summary summarize(const std::vector<double>& v) {
  Summary s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  s.median = median_of(v);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = s.n > 1 ? std::sqrt(ss / (s.n - 1)) : 0.0;
  return s;
}
