#include "app/experiment/estimate.hpp"

#include <fmt/format.h>

#include "transports/simulate.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

Estimate point_estimate(const Params& p)
{
  auto value = [&](const char* key, double otherwise) {
    return p.has(key) ? static_cast<double>(p.integer(key)) : otherwise;
  };
  Estimate e;
  e.simulations = 1;
  // A round trip is two messages (request and response): one of half its bytes on average.
  const bool round_trips = p.has("workload.pattern") && round_trip_bytes(p) > 0;
  const double message = round_trips ? static_cast<double>(round_trip_bytes(p)) / 2 : value("workload.message_size", 1);
  e.bytes = (round_trips ? static_cast<double>(workload_bytes(p)) : value("workload.total_bytes", 0)) *
            value("workload.connections", 1);
  if (p.has("sim.run_length") && run_length_auto(p)) { // what an `auto` run typically simulates
    RunLengthConfig c =
        run_length_config(p, static_cast<std::uint64_t>(e.bytes), static_cast<int>(value("workload.connections", 1)));
    e.bytes = static_cast<double>(expected_auto_bytes(c, static_cast<std::uint64_t>(message)));
  }
  e.messages = e.bytes / message;
  const Transport* t = find_transport(p.has("transport") ? p.text("transport") : "hv_sock");
  if (!t)
    t = &transports().front();
  e.core_seconds = e.messages / t->messages_per_second + e.bytes / t->bytes_per_second + 0.005;
  return e;
}

Estimate estimate(const Experiment& ex)
{
  Estimate e;
  for (const Point& p : ex.points) {
    double it = static_cast<double>(p.params.integer("iterations"));
    Estimate one = point_estimate(p.params);
    e.simulations += it;
    e.bytes += it * one.bytes;
    e.messages += it * one.messages;
    e.core_seconds += it * one.core_seconds;
  }
  return e;
}

std::string describe_estimate(const Estimate& e, unsigned jobs)
{
  double wall = e.core_seconds / std::max(1u, jobs);
  std::string t = wall < 120    ? fmt::format("{:.0f} s", wall)
                  : wall < 7200 ? fmt::format("{:.0f} min", wall / 60)
                                : fmt::format("{:.1f} h", wall / 3600);
  return fmt::format("{:.0f} simulation(s), {:.3g} GB and {:.3g} messages simulated in all; about {} with {} job(s)",
                     e.simulations, e.bytes / 1e9, e.messages, t, jobs);
}

} // namespace vsim::app
