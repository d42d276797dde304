#include "app/estimate.hpp"

#include <fmt/format.h>

namespace vsim::app {

namespace {
constexpr double kMessagesPerSecond = 0.5e6;
constexpr double kBytesPerSecond = 2.5e9;
}  // namespace

Estimate estimate(const Experiment& ex)
{
  Estimate e;
  for (const Point& p : ex.points) {
    double it = static_cast<double>(p.params.integer("iterations"));
    double bytes = static_cast<double>(p.params.integer("workload.total_bytes")) *
                   static_cast<double>(p.params.integer("workload.connections"));
    double messages = bytes / static_cast<double>(p.params.integer("workload.message_size"));
    e.simulations += it;
    e.bytes += it * bytes;
    e.messages += it * messages;
    e.core_seconds += it * (messages / kMessagesPerSecond + bytes / kBytesPerSecond + 0.005);
  }
  return e;
}

std::string describe_estimate(const Estimate& e, unsigned jobs)
{
  double wall = e.core_seconds / std::max(1u, jobs);
  std::string t = wall < 120 ? fmt::format("{:.0f} s", wall)
                 : wall < 7200 ? fmt::format("{:.0f} min", wall / 60)
                               : fmt::format("{:.1f} h", wall / 3600);
  return fmt::format("{:.0f} simulation(s), {:.3g} GB and {:.3g} messages simulated in all; about {} with {} job(s)",
                     e.simulations, e.bytes / 1e9, e.messages, t, jobs);
}

}  // namespace vsim::app
