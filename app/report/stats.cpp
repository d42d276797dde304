#include "app/report/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace vsim::app {

Stats summarize(std::vector<double> values)
{
  if (values.empty())
    throw std::invalid_argument("summarize: no values");
  for (double v : values)
    if (std::isnan(v))
      throw std::invalid_argument("summarize: NaN value");
  std::sort(values.begin(), values.end());
  Stats s;
  s.min = values.front();
  s.max = values.back();
  // Summed in sorted order, so the mean does not depend on the input order.
  long double sum = 0;
  for (double v : values)
    sum += v;
  s.mean = std::clamp(static_cast<double>(sum / static_cast<long double>(values.size())), s.min, s.max);
  std::size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : std::midpoint(values[n / 2 - 1], values[n / 2]);
  return s;
}

std::set<std::string> metric_names(const std::vector<PointResult>& results)
{
  std::set<std::string> names;
  for (const auto& r : results)
    for (const auto& it : r.iterations)
      for (const auto& entry : it)
        names.insert(entry.first);
  return names;
}

// Metric name -> values over the iterations that report it, in iteration order.
std::map<std::string, std::vector<double>> metric_values(const PointResult& r)
{
  std::map<std::string, std::vector<double>> out;
  for (const auto& it : r.iterations)
    for (const auto& [name, value] : it)
      out[name].push_back(value);
  return out;
}

void check_results(const Experiment& ex, const std::vector<PointResult>& results)
{
  if (results.size() != ex.points.size())
    throw std::invalid_argument(fmt::format("{} point results for {} points", results.size(), ex.points.size()));
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].index != ex.points[i].index)
      throw std::invalid_argument(
          fmt::format("point result {} has index {}, expected {}", i, results[i].index, ex.points[i].index));
}

// Iterations of the point whose figures were extrapolated from the steady
// state (sim.run_length: auto).
std::size_t extrapolated_iterations(const PointResult& r)
{
  std::size_t n = 0;
  for (const auto& info : r.run_length)
    if (auto f = info.find("extrapolated"); f != info.end() && f->second != 0)
      ++n;
  return n;
}

std::optional<EnsembleSpread> ensemble_spread(const MemberValues& values, const std::vector<double>& weights)
{
  if (values.size() != weights.size())
    throw std::invalid_argument(
        fmt::format("ensemble_spread: {} values for {} weights", values.size(), weights.size()));
  std::vector<std::pair<double, double>> sorted; // (value, weight)
  for (std::size_t m = 0; m < values.size(); ++m) {
    if (!(weights[m] > 0) || !std::isfinite(weights[m]))
      throw std::invalid_argument(fmt::format("ensemble_spread: member {} has weight {}", m, weights[m]));
    if (!values[m])
      continue;
    if (std::isnan(*values[m]))
      throw std::invalid_argument(fmt::format("ensemble_spread: member {} has a NaN value", m));
    sorted.emplace_back(*values[m], weights[m]);
  }
  if (sorted.empty())
    return std::nullopt;
  std::sort(sorted.begin(), sorted.end());
  long double total = 0;
  for (const auto& [v, w] : sorted)
    total += w;
  std::vector<double> at; // each sorted member's position in [0, 1]
  long double before = 0;
  for (const auto& [v, w] : sorted) {
    at.push_back(static_cast<double>((before + w / 2.0L) / total));
    before += w;
  }
  auto percentile = [&](double q) {
    if (q <= at.front())
      return sorted.front().first;
    for (std::size_t k = 1; k < sorted.size(); ++k)
      if (q <= at[k]) {
        const double f = (q - at[k - 1]) / (at[k] - at[k - 1]);
        return sorted[k - 1].first + f * (sorted[k].first - sorted[k - 1].first);
      }
    return sorted.back().first;
  };
  EnsembleSpread s;
  s.members = sorted.size();
  s.p10 = percentile(0.1);
  s.p50 = percentile(0.5);
  s.p90 = percentile(0.9);
  s.values = values;
  return s;
}

std::optional<EnsembleSpread> spread_with_error(const MemberValues& values, const std::vector<double>& weights,
                                                double sigma)
{
  if (!(sigma >= 0) || !std::isfinite(sigma))
    throw std::invalid_argument(fmt::format("spread_with_error: sigma {}", sigma));
  MemberValues positive = values;
  for (auto& v : positive)
    if (v && !std::isnan(*v) && !(*v > 0))
      v = std::nullopt;
  std::optional<EnsembleSpread> members = ensemble_spread(positive, weights); // checks sizes, weights, NaN
  if (!members || sigma == 0)
    return members;
  std::vector<std::pair<double, double>> logs; // (log value, weight), member order
  double total = 0, lo = 0, hi = 0;
  for (std::size_t m = 0; m < positive.size(); ++m)
    if (positive[m]) {
      const double y = std::log(*positive[m]);
      lo = logs.empty() ? y : std::min(lo, y);
      hi = logs.empty() ? y : std::max(hi, y);
      logs.emplace_back(y, weights[m]);
      total += weights[m];
    }
  // The mixture's distribution function at log value y.
  auto cdf = [&](double y) {
    double f = 0;
    for (const auto& [mu, w] : logs)
      f += w * 0.5 * std::erfc(-(y - mu) / (sigma * std::sqrt(2.0)));
    return f / total;
  };
  auto quantile = [&](double q) {
    double a = lo - 10 * sigma, b = hi + 10 * sigma;
    for (int k = 0; k < 200 && b - a > 1e-12; ++k) {
      const double mid = (a + b) / 2;
      (cdf(mid) < q ? a : b) = mid;
    }
    return std::exp((a + b) / 2);
  };
  members->p10 = quantile(0.1);
  members->p50 = quantile(0.5);
  members->p90 = quantile(0.9);
  return members;
}

MemberValues member_values(const PointResult& r, const std::string& metric)
{
  MemberValues out;
  for (const MemberResult& m : r.members) {
    const auto f = m.metrics.find(metric);
    out.push_back(m.failed.empty() && f != m.metrics.end() ? std::optional<double>(f->second) : std::nullopt);
  }
  return out;
}

std::vector<double> member_weights(const PointResult& r)
{
  std::vector<double> out;
  for (const MemberResult& m : r.members)
    out.push_back(m.weight);
  return out;
}

MemberValues member_ratios(const MemberValues& a, const MemberValues& b)
{
  if (a.size() != b.size())
    return {};
  MemberValues out;
  for (std::size_t m = 0; m < a.size(); ++m)
    out.push_back(a[m] && b[m] && *a[m] != 0 ? std::optional<double>(*b[m] / *a[m]) : std::nullopt);
  return out;
}

} // namespace vsim::app
