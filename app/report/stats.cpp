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

} // namespace vsim::app
