// virtio-vsock points under the default run length (sim.run_length: auto,
// sim.precision 0.005) against the same points simulated in full (issue 37):
// wall time of each, the bytes auto simulated and why it stopped where it
// did, and how far its figures are from full's. Figures to read, never a
// test: the wall times are this machine's, one core per run (each run is one
// iteration in a forked child).
//
//   build/bench_virtio_auto            32 cases: 4 KiB (512 MB per connection) and
//                                      64 KiB (2 GB per connection), both directions,
//                                      linux-5.4 and linux-6.12, kvm-2019 and kvm-2024,
//                                      1 and 4 connections
//   build/bench_virtio_auto --quick    the 16 one-connection cases
//   build/bench_virtio_auto --large    also the 16 one-connection cases at 8 times
//                                      the bytes (4 GB and 16 GB): auto's time stays,
//                                      full's grows with the bytes
//
// First line: the wall time of a 1 MB point in full, what every run costs
// besides its bytes (the child, the engine, the platform, the figures).
//
// Columns: auto s and full s (wall), x (full / auto), sim MB (the bytes
// auto simulated, all connections), why (run_length.reason: 0 extrapolated,
// 3 the throughput's interval stayed wider than the precision, 5 unequal
// connections, 6 a figure held the run: held_by), tp (auto's throughput
// against full's), fig (the worst CPU figure or count per MB, |auto - full|
// over the scale the monitor judges it on, figure_scales: the check's 2%),
// pp (the worst CPU figure, |auto - full| in percentage points of a CPU).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "sim/run_length.hpp"

using namespace vsim::bench;

namespace {

bool is_cpu(const std::string& n)
{
  if (n.ends_with("_seconds"))
    return n != "elapsed_seconds";
  if (n.starts_with("queue."))
    return false;
  return (n.ends_with("_percent") && (n.starts_with("cpu.") || n.starts_with("thread."))) ||
         n.find("cpu_percent") != std::string::npos;
}

struct Accuracy {
  double fig = 0, pp = 0;
  std::string fig_name, pp_name;
};

Accuracy compare(const std::map<std::string, double>& a, const std::map<std::string, double>& f)
{
  Accuracy acc;
  const auto scales = vsim::figure_scales(f, vsim::metric_kind, vsim::RunLengthConfig{}, 100);
  for (const auto& [n, scale] : scales) {
    if (!(is_cpu(n) || n.ends_with("_per_MB")) || !a.count(n) || scale == 0)
      continue;
    const double d = std::abs(a.at(n) - f.at(n));
    if (d / scale > acc.fig) {
      acc.fig = d / scale;
      acc.fig_name = n;
    }
    if (is_cpu(n)) {
      const double pp = n.ends_with("_seconds")
                            ? std::abs(a.at(n) / a.at("elapsed_seconds") - f.at(n) / f.at("elapsed_seconds")) * 100
                            : d;
      if (pp > acc.pp) {
        acc.pp = pp;
        acc.pp_name = n;
      }
    }
  }
  return acc;
}

std::string why(const Outcome& o)
{
  const auto& m = o.metrics;
  std::string w = m.count("run_length.reason") ? std::to_string(static_cast<int>(m.at("run_length.reason"))) : "?";
  for (const auto& [n, v] : m)
    if (n.starts_with("run_length.held_by."))
      w += " " + n.substr(std::strlen("run_length.held_by.")) + fmt::format(" {:.2f}%", v * 100);
  return w;
}

} // namespace

int main(int argc, char** argv)
{
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool large = argc > 1 && std::strcmp(argv[1], "--large") == 0;
  std::printf("virtio_vsock: sim.run_length auto (precision 0.005) against full, one iteration per run, one core\n");
  const char* floor_yaml = "transport: virtio_vsock\nplatform: kvm-2019\niterations: 1\n"
                           "workload: {message_size: 4KiB, total_bytes: 1MB}\nsim: {run_length: full}\n";
  measure(floor_yaml, {}); // warm the page cache
  std::printf("a 1 MB point in full: %.3f s (the cost of any run besides its bytes)\n",
              measure(floor_yaml, {}).wall_seconds);
  std::printf("%-42s %8s %8s %6s %8s %8s %8s %7s  %s\n", "case", "auto s", "full s", "x", "sim MB", "tp", "fig", "pp",
              "why (held by, its half-width of its scale)");
  int fast = 0, cases = 0;
  struct Scale {
    const char *small, *big; // total_bytes per connection for 4 KiB and 64 KiB
    bool four;               // 4-connection cases too
  };
  std::vector<Scale> scales = {{"512MB", "2GB", !quick}};
  if (large)
    scales.push_back({"4GB", "16GB", false});
  for (const Scale& sc : scales)
    for (const char* size : {"4KiB", "64KiB"})
      for (const char* direction : {"guest_to_host", "host_to_guest"})
        for (const char* preset : {"linux-5.4", "linux-6.12"})
          for (const char* platform : {"kvm-2019", "kvm-2024"})
            for (int conns : {1, 4}) {
              if (conns != 1 && !sc.four)
                continue;
              const char* total = std::strcmp(size, "4KiB") == 0 ? sc.small : sc.big;
              const std::string yaml = fmt::format(
                  "transport: virtio_vsock\nplatform: {}\ndirection: {}\niterations: 1\n"
                  "workload: {{message_size: {}, total_bytes: {}, connections: {}}}\nvirtio_vsock: {{preset: {}}}\n",
                  platform, direction, size, total, conns, preset);
              const Outcome a = measure(yaml.c_str(), {});
              const Outcome f = measure(yaml.c_str(), {"sim.run_length=full"});
              const std::string label =
                  fmt::format("{} {} {} {} {} {}c", size, total,
                              std::strcmp(direction, "guest_to_host") == 0 ? "g2h" : "h2g", preset, platform, conns);
              const double x = f.wall_seconds / a.wall_seconds;
              const Accuracy acc = compare(a.metrics, f.metrics);
              const double simulated =
                  a.metrics.count("run_length.simulated_bytes") ? a.metrics.at("run_length.simulated_bytes") : 0;
              std::printf("%-42s %8.3f %8.3f %6.1f %8.0f %+7.3f%% %7.2f%% %7.3f  %s\n", label.c_str(), a.wall_seconds,
                          f.wall_seconds, x, simulated / 1e6, (a.throughput_MBps / f.throughput_MBps - 1) * 100,
                          acc.fig * 100, acc.pp, why(a).c_str());
              std::fflush(stdout);
              ++cases;
              fast += x >= 5;
            }
  std::printf("goal (issue 37): a virtio-vsock point at the default precision at least 5x faster than full on 512 MB "
              "or more; here %d of %d cases\n",
              fast, cases);
  return 0;
}
