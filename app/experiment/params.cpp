// Experiment-level keys: labels, platform and transport choice, the workload,
// the machine's CPU counts, simulation mode and report selection.
#include "app/experiment/registry.hpp"

#include <sstream>

#include <fmt/format.h>

#include "transports/simulate.hpp"
#include "transports/profiles.hpp"
#include "transports/transport.hpp"

namespace vsim::app {

namespace {

ParamSpec spec(const char* path, ParamKind kind, const char* unit, const char* def)
{
  ParamSpec s;
  s.path = path;
  s.kind = kind;
  s.unit = unit;
  s.default_text = def;
  return s;
}

ParamSpec choice(const char* path, const char* def, std::vector<std::string> choices, const char* doc)
{
  ParamSpec s = spec(path, ParamKind::Choice, "", def);
  s.choices = std::move(choices);
  s.doc = doc;
  return s;
}

ParamSpec text(const char* path, const char* doc)
{
  ParamSpec s = spec(path, ParamKind::Text, "", "");
  s.doc = doc;
  return s;
}

ParamSpec ranged(const char* path, ParamKind kind, const char* unit, const char* def, double min, double max,
                 const char* doc)
{
  ParamSpec s = spec(path, kind, unit, def);
  s.min = min;
  s.max = max;
  s.doc = doc;
  return s;
}

}  // namespace

void declare_experiment_params(ParamRegistry& reg)
{
  std::vector<std::string> platforms;
  for (const auto& p : platform_profiles())
    platforms.push_back(p.name);

  reg.declare(text("name", "experiment name in results; empty means the experiment file's name without extension"));
  reg.declare(text("description", "free text copied into the results"));
  reg.declare(choice("platform", "hyperv-2019", platforms,
                     "calibrated platform profile: gives every `costs.*` parameter its default"));
  reg.declare(choice("transport", "hv_sock", transport_names(),
                     "socket transport between guest and host; must match the platform's"));
  reg.declare(choice("direction", "guest_to_host", {"guest_to_host", "host_to_guest"},
                     "`guest_to_host`: guest threads write, host threads read; `host_to_guest`: the reverse"));
  reg.declare(ranged("seed", ParamKind::Integer, "", "1", 0, 9007199254740992.0 /* 2^53 */,
                     "iteration i of a point draws its randomness from (seed, i) only"));
  reg.declare(ranged("iterations", ParamKind::Integer, "runs", "10", 1, 1000,
                     "runs per point; statistics (min/max/mean/median) are over these"));
  reg.declare(ranged("workload.message_size", ParamKind::Size, "bytes", "64KiB", 1, 1ll << 30,
                     "bytes per send() call"));
  reg.declare(ranged("workload.total_bytes", ParamKind::Size, "bytes", "1GB", 1, 1e12,
                     "bytes sent per connection per iteration"));
  reg.declare(ranged("workload.connections", ParamKind::Integer, "connections", "1", 1, 64,
                     "parallel connections, each with one writer and one reader thread"));
  reg.declare(ranged("workload.start_interval", ParamKind::Number, "us", "10", 0, 1e6,
                     "connection i's threads start at i x this (a program opening its connections one after "
                     "another); identical connections starting at the same cycle would tie"));
  ParamSpec app = choice("workload.app", "loop", {"loop", "iperf3"},
                         "the benchmark, with its own user time: `loop` sends and receives in blocking loops, "
                         "`costs.guest_user_per_call` (guest) or `costs.virtio_host_user_per_call` (host) per "
                         "send()/recv(); `iperf3` is iperf3's client sending (non-blocking: select(), then up to "
                         "10 write()s per select) and its server receiving (select(), then blocking read()s until "
                         "a whole block), `costs.virtio_guest_iperf3_user_per_call` (guest) or "
                         "`costs.virtio_host_iperf3_user_per_call` (host) per write() and per block received");
  app.scope = "virtio_vsock";
  reg.declare(app);
  reg.declare(ranged("guest.vcpus", ParamKind::Integer, "vCPUs", "2", 1, 64,
                     "guest vCPUs: interrupts go to vCPU 0; connection i's guest thread runs on vCPU (1+i) mod vcpus"));
  reg.declare(ranged("host.cpus", ParamKind::Integer, "CPUs", "8", 1, 256, "host logical CPUs"));
  reg.declare(choice("sim.run_length", "auto", {"auto", "full"},
                     "`auto`: simulate until the throughput's steady state is known to `sim.precision` (MSER-5 "
                     "warm-up, batch means), then extrapolate the rest of the transfer; `full`: every byte"));
  reg.declare(ranged("sim.precision", ParamKind::Number, "", "0.005", 0.0001, 0.5,
                     "relative half-width of the 95% confidence interval of throughput at which `auto` stops"));
  reg.declare(choice("report.stat", "all", {"all", "mean", "ci", "range"},
                     "what a table cell shows over the iterations: `all` min/max/avg/median, `mean`, `ci` mean +- "
                     "the half-width of its 95% confidence interval (Student t), `range` mean [min, max]"));
  reg.declare(ranged("report.baseline", ParamKind::Integer, "", "-1", -1, 1e6,
                     "a point index: table cells also show each point's change of the mean against that point's "
                     "(`run --list` gives the indices); -1: none"));
  ParamSpec metrics = text("report.metrics", "comma-separated metric names shown by the table format");
  metrics.default_text = "throughput_MBps";
  metrics.check = [](const std::string& text) -> std::string {
    std::string item;
    std::stringstream ss(text);
    while (std::getline(ss, item, ','))
      if (find_metric(item) == nullptr)
        return fmt::format("unknown metric '{}' (allowed: {})", item, known_metrics_list());
    return "";
  };
  reg.declare(metrics);
}

void declare_validation_params(ParamRegistry& reg)
{
  reg.declare({"validation.measurements", ParamKind::Text, "path", "", 0, 0, {},
               "CSV of published figures to compare with (relative to the experiment file); empty: none"});
}

}  // namespace vsim::app
