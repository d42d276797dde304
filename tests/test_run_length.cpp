// Run-length control (sim.run_length: auto, sim/run_length.hpp): the
// statistics on synthetic series with known answers, the stopping rule, the
// extrapolation, and end-to-end agreement of auto and full on
// representative points of both transports.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/run/runner.hpp"
#include "sim/run_length.hpp"
#include "transports/simulate.hpp"

using namespace vsim;

namespace {

// A deterministic noise in [-1, 1) (a linear congruential generator), so
// the series are the same on every machine.
struct Noise {
  std::uint64_t s = 12345;
  double next()
  {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) / 9007199254740992.0 * 2 - 1;
  }
};

// Drives a monitor with one delivery of `chunk` bytes per observation, the
// i-th taking time(i); the figures are functions of (t, d).
struct Driver {
  RunLengthConfig cfg;
  std::function<Figures(Time, std::uint64_t)> figures;
  std::function<FigureKind(const std::string&)> kind = [](const std::string& n) {
    if (n == "cpu_seconds")
      return FigureKind{Scaling::Total, "s"};
    if (n == "events_per_MB")
      return FigureKind{Scaling::PerByte, "1/MB"};
    if (n == "busy_percent")
      return FigureKind{Scaling::PerTime, "%"};
    if (n == "throughput")
      return FigureKind{Scaling::BytesOver, "B/s"};
    return FigureKind{Scaling::AsIs, ""};
  };
  bool stop_called = false;
  std::size_t delivered_obs = 0;
  Time t = 0;

  std::optional<RunLength> rl;
  void start()
  {
    rl.emplace(cfg, figures, kind, [this] { stop_called = true; });
  }
  // Feeds observations until the monitor stops or n are fed.
  void feed(std::size_t n, const std::function<double(std::size_t)>& time_of, int conns = 1,
            const std::function<std::uint64_t(int, std::size_t)>& bytes_of = nullptr)
  {
    for (std::size_t i = 0; i < n && !rl->stopped(); ++i) {
      t += time_of(delivered_obs);
      for (int c = 0; c < conns; ++c)
        rl->delivered(c, bytes_of ? bytes_of(c, delivered_obs) : cfg.chunk / static_cast<std::uint64_t>(conns), t);
      ++delivered_obs;
    }
  }
};

// Figures that grow with the bytes only (their steady-state rates are
// exact at once, so only the throughput decides when to stop).
Figures byte_figures(Time t, std::uint64_t d)
{
  const double dd = static_cast<double>(d);
  return {{"cpu_seconds", 1e-6 * dd}, {"events_per_MB", 3000.0}, {"throughput", dd / t}, {"ring", 7}};
}

Figures linear_figures(Time t, std::uint64_t d)
{
  const double dd = static_cast<double>(d);
  return {{"cpu_seconds", 0.25 * t},
          {"events_per_MB", 3.0 * dd / 1000 / (dd / 1e6)},
          {"busy_percent", 100.0 * (0.5 * t) / t},
          {"throughput", dd / t},
          {"ring", 7}};
}

} // namespace

TEST_CASE("run length: MSER-5 finds a known transient", "[run_length]")
{
  Noise noise;
  std::vector<double> x;
  for (int i = 0; i < 400; ++i)
    x.push_back((i < 60 ? 3.0 - 2.0 * i / 60.0 : 1.0) + 0.05 * noise.next());
  const auto cut = mser5_cut(x);
  REQUIRE(cut);
  CHECK(*cut % 5 == 0);
  CHECK(*cut >= 45);
  CHECK(*cut <= 70);

  // No transient: nothing cut; a constant series: nothing cut (ties keep the earliest).
  std::vector<double> flat;
  for (int i = 0; i < 400; ++i)
    flat.push_back(1.0 + 0.05 * noise.next());
  CHECK(mser5_cut(flat) == std::optional<std::size_t>(0));
  CHECK(mser5_cut(std::vector<double>(300, 2.5)) == std::optional<std::size_t>(0));

  // A trend that goes on through the whole series: the warm-up is not over.
  std::vector<double> trend;
  for (int i = 0; i < 400; ++i)
    trend.push_back(10.0 - i * 0.02);
  CHECK_FALSE(mser5_cut(trend));
  // Too short to judge.
  CHECK_FALSE(mser5_cut({1, 2, 3, 4, 5, 6, 7}));
}

TEST_CASE("run length: batch means and the t quantile", "[run_length]")
{
  CHECK(student_t975(1) == Approx(12.7062047).epsilon(1e-7));
  CHECK(student_t975(19) == Approx(2.0930241).epsilon(1e-7));
  CHECK(student_t975(200) == Approx(1.9718962).epsilon(1e-7));
  CHECK_THROWS(student_t975(0));

  // 9 observations from 1, 4 batches of 2: the first one is dropped.
  const std::vector<double> num{100, 1, 3, 2, 2, 5, 1, 4, 4}, den{1, 1, 1, 1, 1, 1, 1, 1, 1};
  const BatchMeansResult b = batch_means(num, den, 1, 4);
  CHECK(b.batches == 4);
  CHECK(b.batch_size == 2);
  CHECK(b.first == 1);
  // Batch ratios 2, 2, 3, 4 (sums over sums): mean 2.75, s^2 = 2.75 / 3.
  CHECK(b.mean == Approx(2.75));
  const double hw = student_t975(3) * std::sqrt((0.5625 + 0.5625 + 0.0625 + 1.5625) / 3 / 4);
  CHECK(b.relative_half_width == Approx(hw / 2.75));
  // Ratios, not means of ratios: unequal denominators.
  const BatchMeansResult r = batch_means({2, 6, 1, 1}, {1, 3, 1, 1}, 0, 2);
  CHECK(r.mean == Approx((8.0 / 4 + 2.0 / 2) / 2));
  CHECK(batch_means({1, 2}, {1, 1}, 0, 4).batches == 0); // too few observations
}

TEST_CASE("run length: the stopping rule stops at the first check where the half-width is met", "[run_length]")
{
  for (double precision : {0.02, 0.005}) {
    INFO("precision " << precision);
    Driver d;
    d.cfg.precision = precision;
    d.cfg.total_bytes = 1ull << 40;
    d.cfg.chunk = 1000;
    d.cfg.max_observations = 40000; // no merging: the check below replays the series as it is
    d.figures = byte_figures;
    d.start();
    Noise noise;
    std::vector<double> times;
    for (int i = 0; i < 20000; ++i)
      times.push_back(100.0 * (1 + 0.3 * noise.next()));
    d.feed(times.size(), [&](std::size_t i) { return times[i]; });
    REQUIRE(d.rl->stopped());
    CHECK(d.stop_called);
    const Figures info = d.rl->info();
    CHECK(info.at("run_length.extrapolated") == 1);
    CHECK(info.at("run_length.reason") == static_cast<int>(RunEnd::Extrapolated));
    CHECK(info.at("run_length.half_width") <= precision);
    // The same statistics computed here, at the checks the monitor makes
    // (after 200 observations, then each time the series grew by a tenth):
    // the first check meeting the precision is where it stopped.
    const auto n = static_cast<std::size_t>(info.at("run_length.simulated_bytes") / 1000);
    CHECK(n == d.delivered_obs);
    std::size_t check = 200, first_met = 0;
    while (check <= times.size()) {
      std::vector<double> x(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(check));
      std::vector<double> per_byte(x.size()), ones(x.size(), 1000.0);
      for (std::size_t i = 0; i < x.size(); ++i)
        per_byte[i] = x[i] / 1000;
      const auto cut = mser5_cut(per_byte);
      if (cut && batch_means(x, ones, *cut, 20).relative_half_width <= precision) {
        first_met = check;
        break;
      }
      check = std::max(check + 1, static_cast<std::size_t>(std::ceil(static_cast<double>(check) * 1.1)));
    }
    CHECK(first_met == n);
    CHECK(info.at("run_length.batches") == 20);
  }
}

TEST_CASE("run length: extrapolating a constant-rate run after a warm-up is exact", "[run_length]")
{
  Driver d;
  d.cfg.total_bytes = 1000ull * 100000; // 100000 observations' worth
  d.cfg.chunk = 1000;
  d.figures = linear_figures;
  d.start();
  // 20 slow observations, then a constant 50 cycles per observation.
  auto time_of = [](std::size_t i) { return i < 20 ? 400.0 : 50.0; };
  d.feed(100000, time_of);
  REQUIRE(d.rl->stopped());
  const Figures info = d.rl->info();
  CHECK(info.at("run_length.warmup_bytes") >= 20000);
  CHECK(info.at("run_length.simulated_bytes") < 1e6);
  const double t_total = 20 * 400.0 + (100000 - 20) * 50.0;
  const double d_total = 1e8;
  const Figures x = d.rl->extrapolate();
  CHECK(x.at("cpu_seconds") == Approx(0.25 * t_total).epsilon(1e-12));
  CHECK(x.at("events_per_MB") == Approx(3000.0).epsilon(1e-12));
  CHECK(x.at("busy_percent") == Approx(50.0).epsilon(1e-12));
  CHECK(x.at("throughput") == Approx(d_total / t_total).epsilon(1e-12));
  CHECK(x.at("ring") == 7);
}

TEST_CASE("run length: runs that are not extrapolated, and why", "[run_length]")
{
  SECTION("a transfer too short for the first check")
  {
    Driver d;
    d.cfg.total_bytes = 150 * 1000;
    d.cfg.chunk = 1000;
    d.figures = linear_figures;
    d.start();
    d.feed(150, [](std::size_t) { return 10.0; });
    CHECK_FALSE(d.rl->stopped());
    CHECK(d.rl->info().at("run_length.reason") == static_cast<int>(RunEnd::TooShort));
    CHECK_THROWS(d.rl->extrapolate());
  }
  SECTION("a point shorter than its warm-up: a transient through the whole run")
  {
    Driver d;
    d.cfg.total_bytes = 3000 * 1000;
    d.cfg.chunk = 1000;
    d.figures = linear_figures;
    d.start();
    d.feed(3000, [](std::size_t i) { return 1000.0 - 0.3 * static_cast<double>(i); });
    CHECK_FALSE(d.stop_called);
    CHECK(d.rl->info().at("run_length.extrapolated") == 0);
    CHECK(d.rl->info().at("run_length.reason") == static_cast<int>(RunEnd::NoSteadyState));
  }
  SECTION("a period longer than the batches keeps the interval wide")
  {
    Driver d;
    d.cfg.precision = 0.001;
    d.cfg.total_bytes = 3000 * 1000;
    d.cfg.chunk = 1000;
    d.figures = linear_figures;
    d.start();
    d.feed(3000, [](std::size_t i) { return 20.0 + 10.0 * std::sin(2 * M_PI * static_cast<double>(i) / 37.3); });
    CHECK_FALSE(d.stop_called);
    CHECK(d.rl->info().at("run_length.reason") != static_cast<int>(RunEnd::Extrapolated));
  }
  SECTION("connections at unequal rates")
  {
    Driver d;
    d.cfg.total_bytes = 1ull << 40;
    d.cfg.chunk = 1000;
    d.cfg.connections = 2;
    d.figures = linear_figures;
    d.start();
    d.feed(
        5000, [](std::size_t) { return 10.0; }, 2,
        [](int c, std::size_t) -> std::uint64_t { return c == 0 ? 700 : 300; });
    CHECK_FALSE(d.stop_called);
    CHECK(d.rl->info().at("run_length.reason") == static_cast<int>(RunEnd::UnequalConnections));
  }
  SECTION("a figure whose rate swings although the throughput is steady")
  {
    Driver d;
    d.cfg.total_bytes = 1ull << 40;
    d.cfg.chunk = 1000;
    d.figures = [](Time t, std::uint64_t b) {
      Figures f = byte_figures(t, b);
      // CPU time per byte that keeps growing: never a steady rate.
      f["cpu_seconds"] = std::pow(static_cast<double>(b) / 1e6, 2);
      return f;
    };
    d.start();
    d.feed(8000, [](std::size_t) { return 10.0; });
    CHECK_FALSE(d.stop_called);
    CHECK(d.rl->info().at("run_length.reason") == static_cast<int>(RunEnd::FiguresNotSteady));
  }
  SECTION("deliveries out of time order are a bug")
  {
    Driver d;
    d.cfg.total_bytes = 1000000;
    d.figures = linear_figures;
    d.start();
    d.rl->delivered(0, 10, 5.0);
    CHECK_THROWS_AS(d.rl->delivered(0, 10, 4.0), std::logic_error);
    CHECK_THROWS_AS(d.rl->delivered(3, 10, 6.0), std::logic_error);
  }
}

// ---- end to end ---------------------------------------------------------------------

namespace {

using namespace vsim::app;

std::vector<PointResult> run_text(const std::string& yaml, const std::vector<std::string>& sets)
{
  Experiment ex = load_experiment_text(yaml, "t.yaml", sets, registry());
  RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  return run_points(ex, simulate_iteration, opt);
}

bool is_cpu_figure(const std::string& n)
{
  if (n.ends_with("_seconds"))
    return n != "elapsed_seconds";
  return n.ends_with("_percent") &&
         (n.starts_with("cpu.") || n.starts_with("thread.") || n.find("cpu_percent") != std::string::npos);
}

} // namespace

TEST_CASE("run length: auto agrees with full on representative points of both transports", "[run_length][e2e]")
{
  struct Case {
    const char* name;
    std::string yaml;
    double precision = 0.005;
  };
  const std::vector<Case> cases = {
      {"hv_sock g2h 4 KiB default rings",
       "transport: hv_sock\nplatform: hyperv-2019\ndirection: guest_to_host\niterations: 2\n"
       "workload: {message_size: 4KiB, total_bytes: 96MB}\n"},
      {"hv_sock h2g 64 KiB, SO_RCVBUF 64 KiB",
       "transport: hv_sock\nplatform: hyperv-2019\ndirection: host_to_guest\niterations: 2\n"
       "workload: {message_size: 64KiB, total_bytes: 256MB}\nhv_sock: {rcvbuf: 64KiB}\n"},
      // virtio-vsock's counts come in bursts (rx refills, credit updates):
      // at 0.5% they need most of a 256 MB run to settle; at 2% less. 16 KiB:
      // since the plain loop pays its own small user cost (issue 31 item 8),
      // a 4 KiB loop writer no longer fills its vCPU, and its kicks (the
      // vCPU's hypervisor time) come in bursts that do not settle to 2% in
      // 256 MB (auto then simulates it in full).
      {"virtio 4.19 g2h 16 KiB, precision 2%",
       "transport: virtio_vsock\nplatform: kvm-2019\ndirection: guest_to_host\niterations: 2\n"
       "workload: {message_size: 16KiB, total_bytes: 256MB}\nvirtio_vsock: {preset: linux-4.19}\n"
       "sim: {precision: 0.02}\n",
       0.02},
      {"virtio 5.4 h2g 64 KiB, precision 2%",
       "transport: virtio_vsock\nplatform: kvm-2019\ndirection: host_to_guest\niterations: 2\n"
       "workload: {message_size: 64KiB, total_bytes: 512MB}\nvirtio_vsock: {preset: linux-5.4}\n"
       "sim: {precision: 0.02}\n",
       0.02},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const auto a = run_text(c.yaml, {});
    const auto f = run_text(c.yaml, {"sim.run_length=full"});
    REQUIRE(a.size() == 1);
    for (std::size_t it = 0; it < 2; ++it) {
      INFO("iteration " << it);
      const Metrics& info = a[0].run_length.at(it);
      const Metrics& full_info = f[0].run_length.at(it);
      CHECK(full_info.at("reason") == static_cast<int>(RunEnd::Full));
      INFO("reason " << info.at("reason") << ", simulated " << info.at("simulated_bytes"));
      REQUIRE(info.at("extrapolated") == 1);
      CHECK(info.at("simulated_bytes") < 0.5 * f[0].run_length.at(it).at("simulated_bytes"));
      const Metrics& ma = a[0].iterations.at(it);
      const Metrics& mf = f[0].iterations.at(it);
      const double hw = info.at("half_width");
      CHECK(hw <= c.precision);
      // A 95% interval: one iteration in twenty may fall outside it; twice
      // the half-width holds with near certainty (scripts/run_length_check.py
      // compares every shipped experiment, point by point).
      CHECK(std::abs(ma.at("throughput_MBps") / mf.at("throughput_MBps") - 1) <= 2 * hw);
      // Every CPU figure and count per MB within twice the precision (1% at
      // the default; figures under 5% of the largest of their kind judged on
      // 5% of that largest, as the monitor judges them).
      double cpu_max = 0, count_max = 0;
      for (const auto& [n, v] : mf) {
        if (is_cpu_figure(n))
          cpu_max = std::max(cpu_max, std::abs(v));
        if (n.ends_with("_per_MB"))
          count_max = std::max(count_max, std::abs(v));
      }
      REQUIRE(ma.size() == mf.size());
      for (const auto& [n, v] : mf) {
        const bool cpu = is_cpu_figure(n), count = n.ends_with("_per_MB");
        if (!cpu && !count)
          continue;
        INFO(n << ": auto " << ma.at(n) << ", full " << v);
        CHECK(std::abs(ma.at(n) - v) <= 2 * c.precision * std::max(std::abs(v), 0.05 * (cpu ? cpu_max : count_max)));
      }
    }
  }
}

TEST_CASE("run length: a point too short to judge is simulated in full, identical to full", "[run_length][e2e]")
{
  const std::string yaml = "transport: hv_sock\nplatform: hyperv-2019\ndirection: guest_to_host\niterations: 1\n"
                           "workload: {message_size: 4KiB, total_bytes: 2MB}\n";
  const auto a = run_text(yaml, {});
  const auto f = run_text(yaml, {"sim.run_length=full"});
  CHECK(a[0].run_length[0].at("extrapolated") == 0);
  CHECK(a[0].run_length[0].at("reason") == static_cast<int>(RunEnd::TooShort));
  CHECK(a[0].run_length[0].at("simulated_bytes") == 2e6);
  CHECK(a[0].iterations[0] == f[0].iterations[0]); // bit for bit
}

TEST_CASE("round-trip intervals: batch means for the mean, batch 99th percentiles for the tail", "[run_length]")
{
  // 2 batches of 100: batch b holds 1..100 scaled by (1 + b); its nearest-rank
  // 99th percentile is its 99th value.
  std::vector<double> x;
  for (int b = 0; b < 2; ++b)
    for (int i = 1; i <= 100; ++i)
      x.push_back(i * (1.0 + b));
  const RoundTripInterval r = round_trip_interval(x, 2, 100);
  CHECK(r.mean == Approx((50.5 + 101.0) / 2));
  CHECK(r.p99 == Approx((99.0 + 198.0) / 2));
  // t(0.975, 1) = 12.706: half-width t s / sqrt(2) over the mean.
  CHECK(r.p99_half_width == Approx(12.7062 * (99.0 / std::sqrt(2.0)) / std::sqrt(2.0) / 148.5).epsilon(1e-4));
  CHECK(std::isinf(round_trip_interval(x, 2, 101).mean_half_width)); // batches too small for a 99th percentile
  // Identical batches: the interval has no width.
  std::vector<double> same;
  for (int b = 0; b < 20; ++b)
    for (int i = 0; i < 100; ++i)
      same.push_back(10 + i % 7);
  CHECK(round_trip_interval(same, 20, 100).p99_half_width == 0);
}

TEST_CASE("the run-length monitor keeps at most max_round_trips round trips", "[run_length]")
{
  // A steady series stops once 20 batches of 100 round trips follow the
  // warm-up; with fewer kept than that it never does.
  for (const std::size_t kept : {std::size_t{1} << 20, std::size_t{1000}}) {
    INFO(kept);
    RunLengthConfig cfg;
    cfg.round_trips = true;
    cfg.total_bytes = 1000000;
    cfg.chunk = 100;
    cfg.max_round_trips = kept;
    int stops = 0;
    RunLength rl(
        cfg, [](Time, std::uint64_t) { return Figures{}; }, [](const std::string&) { return FigureKind{}; },
        [&] { ++stops; });
    for (int i = 1; i <= 5000 && !rl.stopped(); ++i) {
      rl.round_trip(10.0 + i % 3, 10.0 * i);
      rl.delivered(0, 100, 10.0 * i);
    }
    CHECK(stops == (kept > 2000 ? 1 : 0));
    if (kept < 2000)
      CHECK(rl.info().at("run_length.reason") == static_cast<double>(static_cast<int>(RunEnd::RoundTripsNotSteady)));
  }
}
