#include "app/report/calibration_span.hpp"

#include <cmath>

#include <fmt/format.h>

#include "app/experiment/effective.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/units.hpp"

namespace vsim::app {

namespace {

bool is_size(const std::string& name)
{
  return name != "workload.connections" && name != "throughput_MBps";
}

std::string quantity_text(const std::string& name, double v)
{
  if (name == "throughput_MBps")
    return fmt::format("{:.4g} MB/s", v);
  if (is_size(name))
    return format_size(static_cast<std::int64_t>(std::llround(v)));
  return fmt::format("{:g}", v);
}

} // namespace

std::map<std::string, double> calibration_quantities(const Params& p, const std::vector<Metrics>& iterations)
{
  std::map<std::string, double> q;
  for (const char* key : {"workload.message_size", "workload.connections"})
    if (p.has(key))
      q[key] = static_cast<double>(p.integer(key));
  const std::string ring = "ring_bytes_" + (p.has("direction") ? p.text("direction") : std::string());
  for (const Effective& e : effective_values(p))
    if (e.name == ring || e.name == "buf_alloc_bytes")
      q["effective." + e.name] = e.value;
  double sum = 0;
  std::size_t n = 0;
  for (const Metrics& m : iterations)
    if (auto it = m.find("throughput_MBps"); it != m.end()) {
      sum += it->second;
      ++n;
    }
  // A round-trip run's throughput is its messages' bytes per second, no
  // measure of the streams a profile's throughput span comes from (issue
  // 51, item 6): compared only for streams.
  const bool stream = !p.has("workload.pattern") || p.text("workload.pattern") == "stream";
  if (n > 0 && stream)
    q["throughput_MBps"] = sum / static_cast<double>(n);
  return q;
}

std::vector<std::string> outside_calibration(const Params& p, const std::vector<Metrics>& iterations)
{
  const PlatformProfile* profile = p.has("platform") ? find_profile(p.text("platform")) : nullptr;
  if (!profile || profile->calibrated.empty() || !p.has("direction"))
    return {};
  const std::string direction = p.text("direction");
  auto span = profile->calibrated.find(direction);
  if (span == profile->calibrated.end())
    return {fmt::format("direction {}: not in the calibration data of {}", direction, profile->name)};
  std::vector<std::string> out;
  for (const auto& [name, v] : calibration_quantities(p, iterations)) {
    auto it = span->second.find(name);
    if (it == span->second.end())
      continue;
    const auto [lo, hi] = it->second;
    const double slack = name == "throughput_MBps" ? 0.1 : 0.0;
    if (v < lo * (1 - slack) || v > hi * (1 + slack))
      out.push_back(lo == hi ? fmt::format("{} {}: {} was fitted on {} only", name, quantity_text(name, v),
                                           profile->name, quantity_text(name, lo))
                             : fmt::format("{} {}: {} was fitted on {} to {}", name, quantity_text(name, v),
                                           profile->name, quantity_text(name, lo), quantity_text(name, hi)));
  }
  return out;
}

std::string calibration_notes(const std::vector<Point>& points, const std::vector<PointResult>& results)
{
  std::map<std::string, std::vector<std::size_t>> by_reason;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < points.size() && i < results.size(); ++i) {
    if (!results[i].failed.empty())
      continue;
    for (const std::string& why : outside_calibration(points[i].params, results[i].iterations)) {
      auto& pts = by_reason[why];
      if (pts.empty())
        order.push_back(why);
      pts.push_back(points[i].index);
    }
  }
  if (order.empty())
    return "";
  std::string out = "\nOutside the data the platform profile was fitted on (an extrapolation: "
                    "extrapolated_from_calibration in JSON):\n";
  for (const std::string& why : order) {
    std::string pts;
    const auto& v = by_reason[why];
    for (std::size_t k = 0; k < v.size(); ++k)
      pts += (k == 0 ? "" : ", ") + std::to_string(v[k]);
    out += fmt::format("  {} (point{} {})\n", why, v.size() == 1 ? "" : "s", pts);
  }
  return out;
}

} // namespace vsim::app
