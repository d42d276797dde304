// What the speed benchmarks share: run one iteration of an experiment text in
// a forked child (one SimGrid engine per process) and report wall time, a
// metric, simcalls and the child's peak memory; print one table row.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <xbt/log.h>

#include <functional>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "transports/simulate.hpp"

namespace vsim::bench {

struct Outcome {
  double wall_seconds;
  double throughput_MBps;
  double simcalls; // SimGrid main-loop iterations (time advances)
  double events;   // simulated-thread resumptions
  long max_rss_kib;
  std::map<std::string, double> metrics; // every metric of the run
};

// Runs one iteration in a child; returns wall time, its metrics, and peak RSS.
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
    std::string text;
    for (const auto& [name, value] : vsim::simulate_iteration(ex.points.at(0).params, 0))
      text += fmt::format("{} {:.17g}\n", name, value);
    for (std::size_t done = 0; done < text.size();) {
      ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0)
        _exit(1);
      done += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Outcome o{wall, 0, 0, 0, ru.ru_maxrss, {}};
  std::istringstream in(text);
  std::string name;
  double value;
  while (in >> name >> value)
    o.metrics[name] = value;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || o.metrics.empty())
    std::fprintf(stderr, "bench: child failed\n");
  o.throughput_MBps = o.metrics.count("throughput_MBps") ? o.metrics.at("throughput_MBps") : 0;
  o.simcalls = o.metrics.count("sim_simcalls") ? o.metrics.at("sim_simcalls") : 0;
  o.events = o.metrics.count("sim_events") ? o.metrics.at("sim_events") : 0;
  return o;
}

// SimGrid's speed on this machine, for reading the figures: wall
// nanoseconds per kernel-timer firing that sets the next one a time unit
// later (what vsocksim's engine pays per time advance, sim/world.cpp); per
// hand-off between two actors blocked on semaphores; and per sleep_until of
// one actor. Measured in a forked child.
struct EngineFloor {
  double timer_ns;
  double handoff_ns;
  double sleep_ns;
};

// Runs f in a forked child (a SimGrid engine of its own); returns its numbers.
inline std::vector<double> in_child(const std::function<std::vector<double>()>& f, std::size_t n)
{
  int fds[2];
  if (pipe(fds) != 0)
    std::perror("pipe");
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    xbt_log_control_set("root.thresh:critical");
    std::vector<double> out = f();
    const auto bytes = static_cast<ssize_t>(out.size() * sizeof(double));
    _exit(write(fds[1], out.data(), static_cast<std::size_t>(bytes)) == bytes ? 0 : 1);
  }
  close(fds[1]);
  std::vector<double> in(n, 0.0);
  if (read(fds[0], in.data(), n * sizeof(double)) != static_cast<ssize_t>(n * sizeof(double)))
    std::fprintf(stderr, "bench: engine floor child failed\n");
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return in;
}

inline EngineFloor engine_floor(int rounds = 200000)
{
  namespace sg4 = simgrid::s4u;
  using clk = std::chrono::steady_clock;
  static int argc = 1;
  static char name[] = "bench";
  static char* argv[] = {name, nullptr};
  // A chain of kernel timers, each setting the next one time unit later, on
  // an engine without hosts: what sim/world.cpp pays per time advance.
  const auto timer = in_child(
      [rounds] {
        static char cfg1[] = "--cfg=network/model:Constant";
        static char* targv[] = {name, cfg1, nullptr};
        static int targc = std::getenv("BENCH_CONST") ? 2 : 1;
        sg4::Engine engine(&targc, targv);
        sg4::create_full_zone("z")->seal();
        int left = rounds;
        std::function<void()> next = [&] {
          if (--left > 0)
            simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + 1.0, next);
        };
        simgrid::kernel::timer::Timer::set(0.0, next);
        const auto t0 = clk::now();
        engine.run();
        return std::vector<double>{std::chrono::duration<double, std::nano>(clk::now() - t0).count() / rounds};
      },
      1);
  const auto actors = in_child(
      [rounds] {
        sg4::Engine engine(&argc, argv);
        auto* zone = sg4::create_full_zone("z");
        sg4::Host* a = zone->create_host("a", 1.0);
        sg4::Host* b = zone->create_host("b", 1.0);
        zone->seal();
        auto sa = sg4::Semaphore::create(0), sb = sg4::Semaphore::create(0);
        clk::time_point t0, t1, t2;
        sg4::Actor::create("ping", a, [&] {
          t0 = clk::now();
          for (int i = 0; i < rounds; ++i) {
            sb->release();
            sa->acquire();
          }
          t1 = clk::now();
          for (int i = 0; i < rounds; ++i)
            sg4::this_actor::sleep_until(sg4::Engine::get_clock() + 1.0);
          t2 = clk::now();
        });
        sg4::Actor::create("pong", b, [&] {
          for (int i = 0; i < rounds; ++i) {
            sb->acquire();
            sa->release();
          }
        });
        engine.run();
        return std::vector<double>{std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * rounds),
                                   std::chrono::duration<double, std::nano>(t2 - t1).count() / rounds};
      },
      2);
  return {timer[0], actors[0], actors[1]};
}

// `extra`: further columns, printed after the common ones.
inline void row(const char* label, double messages, double bytes, const Outcome& o, const std::string& extra = "")
{
  std::printf("%-44s %10.3f %12.0f %10.3f %9.2f %9.2f %8.1f %9ld%s\n", label, o.wall_seconds, messages / o.wall_seconds,
              bytes / o.wall_seconds / 1e9, o.events / messages, o.simcalls / messages, o.throughput_MBps,
              o.max_rss_kib / 1024, extra.c_str());
}

inline void header(const char* extra = "")
{
  std::printf("%-44s %10s %12s %10s %9s %9s %8s %9s%s\n", "case", "wall s", "msgs/s", "GB/s sim", "events/m",
              "simcall/m", "MB/s", "RSS MiB", extra);
}

inline void calibration_line(const EngineFloor& fl)
{
  std::printf("SimGrid on this machine: %.0f ns per kernel-timer firing (one time advance of vsocksim's engine), "
              "%.0f ns per semaphore hand-off between two actors, %.0f ns per sleep_until\n",
              fl.timer_ns, fl.handoff_ns, fl.sleep_ns);
}

// Wall time and the children's CPU time (user + sys) of one vsocksim
// command (its stdout to /dev/null), and its exit status.
struct CliOutcome {
  double wall;
  double cpu;
  int status;
};

inline CliOutcome run_cli(const std::string& bin, const std::vector<std::string>& args)
{
  struct rusage before {};
  getrusage(RUSAGE_CHILDREN, &before);
  std::fflush(nullptr); // the child must not inherit (and repeat) buffered output
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr)
      _exit(126);
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct rusage after {};
  getrusage(RUSAGE_CHILDREN, &after);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  double cpu = secs(after.ru_utime) - secs(before.ru_utime) + secs(after.ru_stime) - secs(before.ru_stime);
  return {wall, cpu, status};
}

} // namespace vsim::bench
