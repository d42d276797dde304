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

namespace {

// A one-connection pipeline: the writer keeps `in_flight` bytes ahead of the
// reader (up to the connection's target), the reader gets 1000 bytes per
// observation, 50 cycles each after a 20-observation warm-up of 400, and the
// last `in_flight` bytes drain at 80 cycles per 1000. Its figures: the
// reader's CPU time (a quarter of the time), and a count the writer makes
// per 1000 bytes it sends (sent_per_MB: 1000 in a whole run).
struct Pipeline {
  std::uint64_t total, in_flight, target, delivered = 0;
  Time t = 0;
  std::uint64_t committed() const { return std::min(target, delivered + in_flight); }
  Figures figures(Time now, std::uint64_t d) const
  {
    const double dd = static_cast<double>(d);
    return {{"cpu_seconds", 0.25 * now}, {"sent_per_MB", static_cast<double>(committed()) / 1000 / (dd / 1e6)}};
  }
  // Feeds the monitor until the transfer (the target) is delivered.
  void run(RunLength& rl)
  {
    for (std::size_t i = 0; delivered < target; ++i) {
      const bool drain = delivered + in_flight >= target && committed() == target;
      t += i < 20 ? 400.0 : drain ? 80.0 : 50.0;
      const std::uint64_t b = std::min<std::uint64_t>(1000, target - delivered);
      delivered += b;
      rl.delivered(0, b, t);
    }
  }
};

FigureKind pipeline_kind(const std::string& n)
{
  return n == "cpu_seconds" ? FigureKind{Scaling::Total, "s"} : FigureKind{Scaling::PerByte, "1/MB"};
}

} // namespace

TEST_CASE("run length: a shortened run drains as a whole one does, and its middle is inserted exactly", "[run_length]")
{
  // The whole run by hand: 20 x 400 cycles, then 50 per 1000 bytes until
  // the last in_flight bytes, which take 80 per 1000.
  const std::uint64_t total = 1000ull * 100000, in_flight = 50000;
  const double t_whole = 20 * 400.0 + (100000 - 20 - 50) * 50.0 + 50 * 80.0;
  RunLengthConfig cfg;
  cfg.total_bytes = total;
  cfg.chunk = 1000;

  Pipeline shortened{total, in_flight, total};
  RunLength rl(
      cfg, [&](Time now, std::uint64_t d) { return shortened.figures(now, d); }, pipeline_kind,
      [] { FAIL("a run with shorten() is not stopped"); },
      [&](const std::vector<double>& shares) {
        CHECK(shares == std::vector<double>{1.0});
        // The transport's rule: end after what is begun and one more message.
        const std::uint64_t target = std::min(shortened.target, shortened.committed() + 1000);
        const std::vector<std::uint64_t> left_out{shortened.target - target};
        shortened.target = target;
        return left_out;
      },
      [&] { return shortened.committed(); });
  shortened.run(rl);
  REQUIRE(rl.stopped());
  CHECK_FALSE(rl.ended_early());
  const Figures info = rl.info();
  CHECK(info.at("run_length.extrapolated") == 1);
  CHECK(info.at("run_length.simulated_bytes") == static_cast<double>(shortened.target));
  CHECK(shortened.target < total / 10); // the drain of a short run
  const Figures x = rl.finish(shortened.figures(shortened.t, shortened.delivered), shortened.t);
  CHECK(x.at("cpu_seconds") == Approx(0.25 * t_whole).epsilon(1e-12));
  CHECK(x.at("sent_per_MB") == Approx(1000).epsilon(1e-12));

  // Stopped instead (no shorten): the steady state is continued to the end,
  // without the drain, and the writer's bytes in flight at the stop count
  // twice: in_flight / total too many sent.
  Pipeline stopped{total, in_flight, total};
  RunLength rs(
      cfg, [&](Time now, std::uint64_t d) { return stopped.figures(now, d); }, pipeline_kind, [] {});
  for (std::size_t i = 0; !rs.stopped(); ++i) {
    stopped.t += i < 20 ? 400.0 : 50.0;
    stopped.delivered += 1000;
    rs.delivered(0, 1000, stopped.t);
  }
  CHECK(rs.ended_early());
  const Figures y = rs.finish({}, 0);
  CHECK(y.at("sent_per_MB") == Approx(1000.0 * (1 + static_cast<double>(in_flight) / total)).epsilon(1e-12));
  CHECK(y.at("cpu_seconds") == Approx(0.25 * (t_whole - 50 * 30.0)).epsilon(1e-12));
}

TEST_CASE("run length: steady_span leaves out one span of the steady state, within each connection's room",
          "[run_length]")
{
  // One connection: its room.
  CHECK(steady_span({5000}, {1.0}) == std::vector<std::uint64_t>{5000});
  // Shares 0.7 / 0.3: the span is the smaller of 7000 / 0.7 and 9000 / 0.3.
  CHECK(steady_span({7000, 9000}, {0.7, 0.3}) == std::vector<std::uint64_t>{7000, 3000});
  CHECK(steady_span({9000, 1500}, {0.7, 0.3}) == std::vector<std::uint64_t>{3500, 1500});
  // Equal shares: every connection leaves out the least room.
  CHECK(steady_span({800, 600, 700, 900}, {0.25, 0.25, 0.25, 0.25}) == std::vector<std::uint64_t>(4, 600));
  // A connection with no room (its writer is on its last message): nothing is left out.
  CHECK(steady_span({0, 9000}, {0.5, 0.5}) == std::vector<std::uint64_t>{0, 0});
  // A connection with no share bounds nothing and leaves out nothing.
  CHECK(steady_span({0, 9000}, {0.0, 1.0}) == std::vector<std::uint64_t>{0, 9000});
  CHECK_THROWS(steady_span({1, 2}, {1.0}));
}

namespace {

// Two connections by hand: while both run, connection 0 gets 7 bytes and
// connection 1 gets 3 per time unit (shares 0.7 / 0.3; with `swing`,
// connection 0's share swings by that much either side of 0.5, with a
// period of 40,000 units); once one has its target, the other
// gets 10 per unit alone. A shortened run must give the time of the whole
// run: the faster connection ends first, the slower goes on alone.
struct TwoStreams {
  std::uint64_t target[2], delivered[2] = {0, 0};
  double t = 0;
  double swing = 0;
  Figures figures(Time now, std::uint64_t) const { return {{"cpu_seconds", 0.25 * now}}; }
  // The transports' rule (stream_run_length_monitor): no writer ends before
  // what it has begun and one more message (70 bytes here).
  std::vector<std::uint64_t> shorten(const std::vector<double>& shares)
  {
    std::vector<std::uint64_t> room;
    for (int c = 0; c < 2; ++c)
      room.push_back(target[c] - std::min(target[c], delivered[c] + 70));
    const std::vector<std::uint64_t> out = steady_span(room, shares);
    for (int c = 0; c < 2; ++c)
      target[c] -= out[static_cast<std::size_t>(c)];
    return out;
  }
  void run(RunLength* rl)
  {
    double carry = 0;
    while (delivered[0] < target[0] || delivered[1] < target[1]) {
      t += 1;
      const bool both = delivered[0] < target[0] && delivered[1] < target[1];
      const double share0 = swing > 0 ? 0.5 + swing * std::sin(2 * M_PI * t / 40000) : 0.7;
      for (int c = 0; c < 2; ++c) {
        const double want = both ? (c == 0 ? 10 * share0 + carry : 10 - std::floor(10 * share0 + carry)) : 10;
        std::uint64_t b = static_cast<std::uint64_t>(std::floor(want));
        if (c == 0 && both)
          carry = want - std::floor(want);
        b = std::min(b, target[c] - delivered[c]);
        if (b == 0)
          continue;
        delivered[c] += b;
        if (rl)
          rl->delivered(c, b, t);
      }
    }
  }
};

} // namespace

TEST_CASE("run length: connections with unequal steady shares are shortened by one span of time, and end as a "
          "whole run does",
          "[run_length]")
{
  // The whole run by hand, N bytes each: connection 0 ends at N / 7, when
  // connection 1 has 3N / 7; its 4N / 7 left take 4N / 70. Time: N / 5.
  const std::uint64_t n = 7'000'000;
  RunLengthConfig cfg;
  cfg.total_bytes = 2 * n;
  cfg.chunk = 1000;
  cfg.connections = 2;
  TwoStreams two{{n, n}};
  std::vector<double> shares_seen;
  RunLength rl(
      cfg, [&](Time now, std::uint64_t d) { return two.figures(now, d); }, pipeline_kind,
      [] { FAIL("a run with shorten() is not stopped"); },
      [&](const std::vector<double>& shares) {
        shares_seen = shares;
        return two.shorten(shares);
      });
  two.run(&rl);
  REQUIRE(rl.stopped());
  CHECK(rl.info().at("run_length.reason") == static_cast<int>(RunEnd::Extrapolated));
  REQUIRE(shares_seen.size() == 2);
  CHECK(shares_seen[0] == Approx(0.7).epsilon(1e-3));
  CHECK(two.target[0] + two.target[1] < n);     // half the transfer was left out at least
  CHECK(two.target[1] - two.target[0] > n / 2); // unequally: connection 1 goes on alone for 4N / 7
  const Figures x = rl.finish(two.figures(two.t, two.delivered[0] + two.delivered[1]), two.t);
  CHECK(x.at("cpu_seconds") == Approx(0.25 * n / 5).epsilon(1e-4));

  // Shares that swing between 0.7 / 0.3 and 0.3 / 0.7 every 40,000 units
  // (the throughput steady): held until the batches average the swings
  // out, then within the precision of the whole run.
  TwoStreams whole{{n, n}};
  whole.swing = 0.2;
  whole.run(nullptr);
  TwoStreams swinging{{n, n}};
  swinging.swing = 0.2;
  std::uint64_t delivered_at_stop = 0;
  RunLength rs(
      cfg, [&](Time now, std::uint64_t d) { return swinging.figures(now, d); }, pipeline_kind, [] {},
      [&](const std::vector<double>& shares) {
        delivered_at_stop = swinging.delivered[0] + swinging.delivered[1];
        return swinging.shorten(shares);
      });
  swinging.run(&rs);
  CHECK(delivered_at_stop > 2 * 40000 * 10); // not within the first two swings
  const Figures y = rs.finish(swinging.figures(swinging.t, 0), swinging.t);
  CHECK(y.at("cpu_seconds") == Approx(0.25 * whole.t).epsilon(0.005));

  // Steady unequal shares without shorten(): a stopped run has no end where
  // the slower connection goes on alone, so it is not extrapolated.
  TwoStreams unstoppable{{n, n}};
  RunLength ru(
      cfg, [&](Time now, std::uint64_t d) { return unstoppable.figures(now, d); }, pipeline_kind,
      [] { FAIL("unequal shares are not continued by a stopped run"); });
  unstoppable.run(&ru);
  CHECK_FALSE(ru.stopped());
  CHECK(ru.info().at("run_length.reason") == static_cast<int>(RunEnd::UnequalConnections));
}

TEST_CASE("run length: bytes in flight still growing hold the run", "[run_length]")
{
  // The writer's lead grows by 1.5% of the bytes delivered (a buffer
  // filling at a steady throughput) until it reaches 60000 bytes.
  RunLengthConfig cfg;
  cfg.total_bytes = 1ull << 40;
  cfg.chunk = 1000;
  std::uint64_t delivered = 0, target = cfg.total_bytes;
  auto committed = [&] { return std::min(target, delivered + std::min<std::uint64_t>(60000, delivered * 15 / 1000)); };
  bool stopped = false;
  RunLength rl(
      cfg,
      [&](Time, std::uint64_t d) {
        return Figures{{"sent_per_MB", static_cast<double>(committed()) / 1000 / (static_cast<double>(d) / 1e6)}};
      },
      pipeline_kind, [&] { stopped = true; }, nullptr, committed);
  Time t = 0;
  Noise noise;
  for (int i = 0; i < 20000 && !rl.stopped(); ++i) {
    t += 50 * (1 + 0.01 * noise.next());
    delivered += 1000;
    rl.delivered(0, 1000, t);
    if (delivered == 3'000'000) { // still filling: judged steady but for the bytes in flight
      CHECK_FALSE(rl.stopped());
      CHECK(rl.info().at("run_length.reason") == static_cast<int>(RunEnd::FiguresNotSteady));
      CHECK(rl.info().count("run_length.held_by.bytes_in_flight") == 1);
    }
  }
  // The lead stops growing at 60000 bytes after 4 MB; the window the rates
  // come from must then grow until the lead's change over it is within 1%
  // of the bytes it delivered.
  REQUIRE(rl.stopped());
  CHECK(stopped);
  CHECK(delivered > 4'000'000);
  const double sent = rl.finish({}, 0).at("sent_per_MB");
  CHECK(sent > 1000);
  CHECK(sent < 1000 * 1.01);
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

TEST_CASE("run length: what each figure is held to (figure_scales)", "[run_length]")
{
  RunLengthConfig cfg; // part_share 0.5, group_share 0.05
  SECTION("a category of a CPU's time against that CPU's busy time, a busy time against one CPU")
  {
    const Figures x = {{"cpu.vcpu0.busy_percent", 40},      {"cpu.vcpu0.hypervisor_percent", 2},
                       {"cpu.vcpu0.sys_percent", 38},       {"cpu.vcpu1.busy_percent", 90},
                       {"cpu.vcpu1.hypervisor_percent", 6}, {"cpu.vcpu1.sys_percent", 84},
                       {"thread.vhost.busy_percent", 0.5},  {"thread.vhost.sys_percent", 0.5},
                       {"guest_cpu_percent", 130},          {"elapsed_seconds", 2},
                       {"writer_sys_seconds", 0.1},         {"syscalls_per_MB", 480},
                       {"credit_updates_per_MB", 5},        {"kicks_per_MB", 15},
                       {"throughput_MBps", 1000},           {"queue.virtio_tx.mean_percent", 3}};
    const auto s = figure_scales(x, metric_kind, cfg, 100);
    CHECK(s.at("cpu.vcpu0.busy_percent") == 50);       // under half a CPU: half a CPU
    CHECK(s.at("cpu.vcpu0.hypervisor_percent") == 25); // half of its CPU's busy scale
    CHECK(s.at("cpu.vcpu0.sys_percent") == 38);        // large enough to be its own
    CHECK(s.at("cpu.vcpu1.busy_percent") == 90);
    CHECK(s.at("cpu.vcpu1.hypervisor_percent") == 45); // half of a 90% busy time
    CHECK(s.at("thread.vhost.sys_percent") == 25);     // an idle thread's category: a quarter of a CPU
    CHECK(s.at("guest_cpu_percent") == 130);
    CHECK(s.at("elapsed_seconds") == 2);        // itself only
    CHECK(s.at("writer_sys_seconds") == 1);     // half of one CPU for the 2 s
    CHECK(s.at("credit_updates_per_MB") == 25); // 5% of all the counts per MB (500)
    CHECK(s.at("syscalls_per_MB") == 480);
    CHECK(s.count("throughput_MBps") == 0);              // not a figure that grows with the run
    CHECK(s.count("queue.virtio_tx.mean_percent") == 0); // explained, not judged
  }
  SECTION("a whole that is not among the figures is a bug")
  {
    const Figures x = {{"cpu.vcpu0.hypervisor_percent", 2}};
    CHECK_THROWS_AS(figure_scales(x, metric_kind, cfg, 100), std::logic_error);
  }
}

namespace {

// A CPU figure of the form metric_kind knows (a vCPU's busy time and one
// category of it) whose category's CPU time grows at `pct` percent of the
// elapsed time plus a random walk of `walk` percent x sqrt(time): a rate
// whose interval narrows as 1/sqrt(run), as rare costly events make it.
struct NoisyCategory {
  double pct, walk;
  Noise noise{};
  double x = 0, last_t = 0;
  Figures operator()(Time t, std::uint64_t d)
  {
    const double dt = t - last_t;
    x += pct * dt + walk * std::sqrt(dt) * noise.next();
    last_t = t;
    const double dd = static_cast<double>(d);
    return {{"cpu.vcpu0.busy_percent", 40},
            {"cpu.vcpu0.hypervisor_percent", t > 0 ? x / t : 0},
            {"cpu.vcpu0.sys_percent", 40 - (t > 0 ? x / t : 0)},
            {"throughput_MBps", dd / t}};
  }
};

} // namespace

TEST_CASE("run length: a figure small against its whole does not hold the run, one that matters does", "[run_length]")
{
  // The same relative noise (the category's interval still above 1% of
  // itself after 8000 observations) on a small category (2% of a CPU 40%
  // busy) and on a large one (30%).
  auto run = [](double pct, double part_share) {
    Driver d;
    d.cfg.total_bytes = 1ull << 40;
    d.cfg.chunk = 1000;
    d.cfg.part_share = part_share;
    d.kind = metric_kind;
    d.figures = NoisyCategory{pct, 4 * pct};
    d.start();
    d.feed(8000, [](std::size_t) { return 10.0; });
    return d.rl->info();
  };
  const Figures small = run(2, 0.5);
  CHECK(small.at("run_length.reason") == static_cast<int>(RunEnd::Extrapolated));
  CHECK(small.at("run_length.simulated_bytes") < 1e6); // at one of the first checks
  const Figures large = run(30, 0.5);
  CHECK(large.at("run_length.reason") == static_cast<int>(RunEnd::FiguresNotSteady));
  CHECK(large.count("run_length.held_by.cpu.vcpu0.hypervisor_percent") == 1);
  // Judged against itself alone (its whole's share so small that its own
  // 2% is the larger), the small category holds the run as the large one
  // does: the noise itself is the same.
  const Figures small_alone = run(2, 0.01);
  CHECK(small_alone.at("run_length.reason") == static_cast<int>(RunEnd::FiguresNotSteady));
  CHECK(small_alone.count("run_length.held_by.cpu.vcpu0.hypervisor_percent") == 1);
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
      // At 2% (chosen when every figure was held to 1% of itself, before
      // issue 37): 16 KiB since the plain loop pays its own small user cost
      // (issue 31 item 8), a 4 KiB loop writer no longer fills its vCPU, and
      // its kicks (the vCPU's hypervisor time) did not settle to 2% in
      // 256 MB.
      {"virtio 4.19 g2h 16 KiB, precision 2%",
       "transport: virtio_vsock\nplatform: kvm-2019\ndirection: guest_to_host\niterations: 2\n"
       "workload: {message_size: 16KiB, total_bytes: 256MB}\nvirtio_vsock: {preset: linux-4.19}\n"
       "sim: {precision: 0.02}\n",
       0.02},
      // At the default precision (issue 37): with a category of a vCPU's
      // time held to 1% of half that vCPU's busy time instead of 1% of
      // itself, this point stops after a fifth to a third of its bytes.
      {"virtio 5.4 g2h 4 KiB, default precision",
       "transport: virtio_vsock\nplatform: kvm-2019\ndirection: guest_to_host\niterations: 2\n"
       "workload: {message_size: 4KiB, total_bytes: 256MB}\nvirtio_vsock: {preset: linux-5.4}\n"},
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
      // Every CPU figure and count per MB within twice the half-width the
      // monitor holds it to (2% at the default precision, the criterion of
      // scripts/run_length_check.py) of the scale it is judged on: the
      // larger of itself and a share of what it is a part of.
      const std::map<std::string, double> scales = figure_scales(mf, metric_kind, RunLengthConfig{}, 100);
      REQUIRE(ma.size() == mf.size());
      for (const auto& [n, v] : mf) {
        const bool cpu = is_cpu_figure(n), count = n.ends_with("_per_MB");
        if (!cpu && !count)
          continue;
        INFO(n << ": auto " << ma.at(n) << ", full " << v << ", scale " << scales.at(n));
        CHECK(std::abs(ma.at(n) - v) <= 2 * RunLengthConfig{}.figure_tolerance * c.precision * scales.at(n));
      }
    }
  }
}

TEST_CASE("run length: a shortened virtio run drains as the full one does", "[run_length][e2e]")
{
  // vsock-throughput-2019's 512-byte host-to-guest point before the series
  // (7.68 MB, a credit update per read): iteration 1 judges its steady
  // state after 93% of the bytes. Stopped there and continued at the steady
  // rates (before issue 37) the host writer's CPU came out 3.5% high (46.07%
  // against 44.50%): its 256 KiB in flight were counted twice and the
  // reader's drain, with the writer idle, was left out. Shortened, the run
  // drains as the full one does.
  const std::string yaml =
      "transport: virtio_vsock\nplatform: kvm-2019\ndirection: host_to_guest\nseed: 2019\niterations: 2\n"
      "workload: {app: iperf3, message_size: 512, total_bytes: 7680000}\n"
      "virtio_vsock: {preset: linux-4.19, small_pkt_copy: false, credit_update: every_read, max_pkt_size: 4KiB, "
      "host_split: false}\n";
  const auto a = run_text(yaml, {});
  const auto f = run_text(yaml, {"sim.run_length=full"});
  const Metrics& info = a[0].run_length.at(1);
  REQUIRE(info.at("extrapolated") == 1);
  CHECK(info.at("simulated_bytes") < 7680000);
  const Metrics &ma = a[0].iterations.at(1), &mf = f[0].iterations.at(1);
  for (const char* n : {"cpu.hcpu1.sys_percent", "host_cpu_percent", "throughput_MBps", "allocations_per_MB"}) {
    INFO(n << ": auto " << ma.at(n) << ", full " << mf.at(n));
    CHECK(std::abs(ma.at(n) / mf.at(n) - 1) < 0.002);
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
