// What the speed benchmarks share: run one iteration of an experiment text in
// a forked child (one SimGrid engine per process) and report wall time, a
// metric, simcalls and the child's peak memory; print one table row.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "app/experiment.hpp"
#include "app/registry.hpp"
#include "transports/simulate.hpp"

namespace vsim::bench {

struct Outcome {
  double wall_seconds;
  double throughput_MBps;
  double simcalls;
  long max_rss_kib;
};

// Runs one iteration in a child; returns wall time, a metric, and peak RSS.
inline Outcome measure(const char* base, const std::vector<std::string>& sets)
{
  vsim::app::Experiment ex = vsim::app::load_experiment_text(base, "bench.yaml", sets, vsim::app::registry());
  int fds[2];
  if (pipe(fds) != 0)
    std::perror("pipe");
  std::fflush(nullptr);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto m = vsim::simulate_iteration(ex.points.at(0).params, 0);
    double out[2] = {m.at("throughput_MBps"), m.at("sim_simcalls")};
    if (write(fds[1], out, sizeof out) != sizeof out)
      _exit(1);
    _exit(0);
  }
  close(fds[1]);
  double in[2] = {0, 0};
  if (read(fds[0], in, sizeof in) != sizeof in)
    std::fprintf(stderr, "bench: child failed\n");
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {wall, in[0], in[1], ru.ru_maxrss};
}

inline void row(const char* label, double messages, double bytes, const Outcome& o)
{
  std::printf("%-44s %10.3f %12.0f %10.3f %9.2f %8.1f %9ld\n", label, o.wall_seconds, messages / o.wall_seconds,
              bytes / o.wall_seconds / 1e9, o.simcalls / messages, o.throughput_MBps, o.max_rss_kib / 1024);
}

}  // namespace vsim::bench
