// The run driver: one forked child per iteration, exact transport of metrics,
// determinism across job counts, failures and cleanup. No simulation needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"
#include "app/run/stop.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

// Points 0..n-1, point k with iterations[k] iterations and parameter "k" = k.
Experiment make_experiment(const std::vector<std::int64_t>& iterations)
{
  Experiment ex;
  ex.name = "runner-test";
  ex.grid_keys = {"k"};
  for (std::size_t k = 0; k < iterations.size(); ++k) {
    Point p;
    p.index = k;
    p.params.set("iterations", iterations[k]);
    p.params.set("k", static_cast<std::int64_t>(k));
    p.label = {{"k", std::to_string(k)}};
    ex.points.push_back(std::move(p));
  }
  return ex;
}

std::uint64_t bits(double d)
{
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

bool same_bits(const Metrics& a, const Metrics& b)
{
  if (a.size() != b.size())
    return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || bits(ia->second) != bits(ib->second))
      return false;
  return true;
}

bool same_bits(const std::vector<PointResult>& a, const std::vector<PointResult>& b)
{
  if (a.size() != b.size())
    return false;
  for (std::size_t p = 0; p < a.size(); ++p) {
    if (a[p].index != b[p].index || a[p].iterations.size() != b[p].iterations.size())
      return false;
    for (std::size_t i = 0; i < a[p].iterations.size(); ++i)
      if (!same_bits(a[p].iterations[i], b[p].iterations[i]))
        return false;
  }
  return true;
}

// True when this process has no child left, zombie or alive.
bool no_children()
{
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

RunOptions quiet(unsigned jobs)
{
  RunOptions o;
  o.jobs = jobs;
  o.progress = false;
  return o;
}

double volatile_sum(double a, double b)
{
  volatile double x = a;
  volatile double y = b;
  return x + y;
}

// Deterministic values that are hard to carry through decimal text.
Metrics tricky(const Params& p, std::uint32_t i)
{
  double k = static_cast<double>(p.integer("k"));
  return {
      {"iteration", static_cast<double>(i)},
      {"k", k},
      {"sum", volatile_sum(0.1, 0.2) * (k + 1) + i},
      {"tiny", 1e-300 * (i + 1)},
      {"denormal", std::numeric_limits<double>::denorm_min() * (i + 1)},
      {"negative_zero", -0.0},
      {"infinity", std::numeric_limits<double>::infinity()},
      {"third", 1.0 / 3.0 + k},
  };
}

// A child that dies does not leave a core file behind.
void no_core()
{
  rlimit r{0, 0};
  ::setrlimit(RLIMIT_CORE, &r);
}

} // namespace

TEST_CASE("run_points returns every iteration in order, bit-exact", "[runner]")
{
  Experiment ex = make_experiment({2, 4, 1, 3});
  auto res = run_points(ex, tricky, quiet(1));
  REQUIRE(res.size() == 4);
  for (std::size_t p = 0; p < res.size(); ++p) {
    CHECK(res[p].index == p);
    REQUIRE(res[p].iterations.size() == static_cast<std::size_t>(ex.points[p].params.integer("iterations")));
    for (std::uint32_t i = 0; i < res[p].iterations.size(); ++i) {
      const Metrics& m = res[p].iterations[i];
      CHECK(m.at("iteration") == i);
      CHECK(m.at("k") == p);
      CHECK(same_bits(m, tricky(ex.points[p].params, i)));
    }
  }
  const Metrics& first = res[0].iterations[0];
  CHECK(bits(first.at("sum")) == bits(0.30000000000000004));
  CHECK(first.at("tiny") == 1e-300);
  CHECK(first.at("denormal") == std::numeric_limits<double>::denorm_min());
  CHECK(std::signbit(first.at("negative_zero")));
  CHECK(std::isinf(first.at("infinity")));
  CHECK(no_children());
}

TEST_CASE("run_points gives the same results for any number of jobs", "[runner]")
{
  Experiment ex = make_experiment({3, 0, 5, 2, 4});
  auto one = run_points(ex, tricky, quiet(1));
  auto three = run_points(ex, tricky, quiet(3));
  auto zero = run_points(ex, tricky, quiet(0)); // counts as 1
  auto many = run_points(ex, tricky, quiet(64));
  CHECK(same_bits(one, three));
  CHECK(same_bits(one, zero));
  CHECK(same_bits(one, many));
  CHECK(one[1].iterations.empty());
  CHECK(no_children());
}

TEST_CASE("run_points runs every iteration in its own process", "[runner]")
{
  Experiment ex = make_experiment({3, 3});
  const double parent = static_cast<double>(::getpid());
  auto res = run_points(
      ex,
      [](const Params&, std::uint32_t) {
        return Metrics{{"pid", static_cast<double>(::getpid())}};
      },
      quiet(2));
  std::vector<double> pids;
  for (const auto& r : res)
    for (const auto& m : r.iterations) {
      CHECK(m.at("pid") != parent);
      pids.push_back(m.at("pid"));
    }
  std::sort(pids.begin(), pids.end());
  CHECK(std::adjacent_find(pids.begin(), pids.end()) == pids.end());
}

TEST_CASE("run_points carries results bigger than a pipe buffer", "[runner]")
{
  Experiment ex = make_experiment({2, 2});
  auto big = [](const Params& p, std::uint32_t i) {
    Metrics m;
    for (int j = 0; j < 5000; ++j)
      m["metric_with_a_rather_long_name_" + std::to_string(j)] = j * 0.001 + i + 10.0 * p.integer("k");
    return m;
  };
  auto res = run_points(ex, big, quiet(2));
  for (std::size_t p = 0; p < 2; ++p)
    for (std::uint32_t i = 0; i < 2; ++i)
      CHECK(same_bits(res[p].iterations[i], big(ex.points[p].params, i)));
}

TEST_CASE("run_points refuses to fork from a process with a second thread, and forks again once it is gone", "[runner]")
{
  const Experiment ex = make_experiment({1});
  std::thread other([] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  try {
    run_points(ex, tricky, quiet(1));
    FAIL("run_points forked beside a second thread");
  } catch (const std::logic_error& e) {
    CHECK(std::string(e.what()) == "invariant violated: a simulation would be forked from a process of 2 threads "
                                   "(its child could wait for ever on a lock another thread held)");
  }
  other.join();
  CHECK(no_children());
  CHECK(run_points(ex, tricky, quiet(1)).size() == 1);
}

TEST_CASE("run_points with no points or no iterations runs nothing", "[runner]")
{
  Experiment empty;
  CHECK(run_points(empty, tricky, quiet(2)).empty());
  auto res = run_points(make_experiment({0, 0}), tricky, RunOptions{});
  REQUIRE(res.size() == 2);
  CHECK(res[0].iterations.empty());
  CHECK(res[1].iterations.empty());
}

TEST_CASE("run_points reports an exception with its point and iteration, and returns the other points", "[runner]")
{
  Experiment ex = make_experiment({3, 3, 3});
  auto fn = [](const Params& p, std::uint32_t i) -> Metrics {
    if (p.integer("k") == 1 && i == 2)
      throw std::runtime_error("ring buffer exploded");
    return {{"x", 1.0}};
  };
  for (unsigned jobs : {1u, 3u}) {
    CAPTURE(jobs);
    const auto res = run_points(ex, fn, quiet(jobs));
    REQUIRE(res.size() == 3);
    CHECK(res[1].failed == "iteration 2: ring buffer exploded");
    CHECK_FALSE(res[1].bad_input());
    CHECK(res[1].iterations.empty()); // a failed point has no figures
    CHECK(res[1].run_length.empty());
    for (std::size_t p : {0u, 2u}) {
      CHECK(res[p].failed.empty());
      REQUIRE(res[p].iterations.size() == 3);
      for (const Metrics& m : res[p].iterations)
        CHECK(m == Metrics{{"x", 1.0}});
    }
    CHECK(no_children());
  }
}

TEST_CASE("run_points with failing points returns the others bit-exact, the same for any number of jobs", "[runner]")
{
  // Point 1 fails in iterations 1 (late) and 2 (at once): the failure kept
  // is iteration 1's, whichever ends first. Point 3 fails in its first.
  Experiment ex = make_experiment({3, 3, 2, 3, 1});
  auto fn = [](const Params& p, std::uint32_t i) -> Metrics {
    const std::int64_t k = p.integer("k");
    if (k == 1 && i == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      throw std::runtime_error("late failure");
    }
    if (k == 1 && i == 2)
      throw std::runtime_error("early failure");
    if (k == 3 && i == 0)
      throw std::logic_error("invariant violated");
    return tricky(p, i);
  };
  for (unsigned jobs : {1u, 2u, 4u, 16u}) {
    CAPTURE(jobs);
    RunOptions o = quiet(jobs);
    std::vector<std::size_t> filed;
    o.on_point = [&](const PointResult& r) { filed.push_back(r.index); };
    const auto res = run_points(ex, fn, o);
    REQUIRE(res.size() == 5);
    CHECK(res[1].failed == "iteration 1: late failure");
    CHECK(res[3].failed == "iteration 0: invariant violated");
    for (std::size_t p : {1u, 3u})
      CHECK(res[p].iterations.empty());
    for (std::size_t p : {0u, 2u, 4u}) {
      CAPTURE(p);
      CHECK(res[p].index == p);
      CHECK(res[p].failed.empty());
      REQUIRE(res[p].iterations.size() == static_cast<std::size_t>(ex.points[p].params.integer("iterations")));
      for (std::uint32_t i = 0; i < res[p].iterations.size(); ++i)
        CHECK(same_bits(res[p].iterations[i], tricky(ex.points[p].params, i)));
    }
    // on_point: every point that ran to the end, none that failed.
    std::sort(filed.begin(), filed.end());
    CHECK(filed == std::vector<std::size_t>{0, 2, 4});
    CHECK(no_children());
  }
}

TEST_CASE("run_points does not run a failed point's later iterations", "[runner]")
{
  char pattern[] = "/tmp/vsim-runner-XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  const std::string dir = pattern;
  Experiment ex = make_experiment({4, 2});
  auto fn = [&](const Params& p, std::uint32_t i) -> Metrics {
    std::ofstream(dir + "/ran-" + std::to_string(p.integer("k")) + "-" + std::to_string(i)) << "x";
    if (p.integer("k") == 0 && i == 1)
      throw std::runtime_error("broken");
    return {{"x", 1.0}};
  };
  const auto res = run_points(ex, fn, quiet(1));
  CHECK(res[0].failed == "iteration 1: broken");
  CHECK(res[1].iterations.size() == 2);
  std::set<std::string> ran;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    ran.insert(e.path().filename().string());
  CHECK(ran == std::set<std::string>{"ran-0-0", "ran-0-1", "ran-1-0", "ran-1-1"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("run_points reports a child killed by a signal and kills that point's later iterations", "[runner]")
{
  Experiment ex = make_experiment({4, 1});
  auto fn = [](const Params& p, std::uint32_t i) -> Metrics {
    if (p.integer("k") == 0 && i == 1) {
      no_core();
      std::signal(SIGABRT, SIG_DFL); // not the test framework's handler
      std::abort();
    }
    if (p.integer("k") == 0 && i > 1)
      std::this_thread::sleep_for(std::chrono::seconds(20));
    return {{"x", 1.0}};
  };
  auto start = std::chrono::steady_clock::now();
  const auto res = run_points(ex, fn, quiet(5));
  CHECK_THAT(res[0].failed, Catch::StartsWith("iteration 1: ") && Catch::Contains("SIGABRT"));
  CHECK(res[1].failed.empty());
  CHECK(res[1].iterations.size() == 1);
  // The sleeping later iterations were killed, not waited for.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(no_children());
}

TEST_CASE("run_points reports a child's non-zero exit status", "[runner]")
{
  Experiment ex = make_experiment({1, 1});
  auto fn = [](const Params& p, std::uint32_t) -> Metrics {
    if (p.integer("k") == 1)
      ::_exit(7);
    return {{"x", 1.0}};
  };
  const auto res = run_points(ex, fn, quiet(1));
  CHECK(res[1].failed == "iteration 0: child exited with status 7");
  CHECK(res[0].failed.empty());
  CHECK(res[0].iterations.size() == 1);
  CHECK(no_children());
}

TEST_CASE("run_points reports a child exiting 0 without a result", "[runner]")
{
  Experiment ex = make_experiment({1});
  auto fn = [](const Params&, std::uint32_t) -> Metrics { ::_exit(0); };
  CHECK(run_points(ex, fn, quiet(1))[0].failed == "iteration 0: child exited without a valid result");
  CHECK(no_children());
}

TEST_CASE("run_points marks a point whose simulation finds bad input", "[runner]")
{
  Experiment ex = make_experiment({2, 2});
  auto fn = [](const Params& p, std::uint32_t) -> Metrics {
    if (p.integer("k") == 0)
      throw InputError("exp.yaml:3:5: error: k: too small");
    return {{"x", 1.0}};
  };
  const auto res = run_points(ex, fn, quiet(2));
  CHECK(res[0].failed == "iteration 0: exp.yaml:3:5: error: k: too small");
  CHECK(res[0].bad_input());
  CHECK(res[1].failed.empty());
  CHECK_FALSE(res[1].bad_input());
}

namespace {

// Sets an environment variable for a scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const std::string& n, const std::string& value) : name(n) { ::setenv(n.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

} // namespace

TEST_CASE("VSOCKSIM_TEST_FAIL_POINTS makes the points it names fail in the child", "[runner]")
{
  Experiment ex = make_experiment({2, 2, 2, 2});
  ex.points[3].index = 7; // indices, not positions (a shard keeps the sweep's indices)
  {
    ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "1,7");
    const auto res = run_points(ex, tricky, quiet(2));
    CHECK(res[1].failed == "iteration 0: injected failure (VSOCKSIM_TEST_FAIL_POINTS)");
    CHECK(res[3].failed == "iteration 0: injected failure (VSOCKSIM_TEST_FAIL_POINTS)");
    CHECK(res[0].failed.empty());
    CHECK(res[2].failed.empty());
    CHECK(res[2].iterations.size() == 2);
  }
  {
    ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "1,x");
    CHECK_THROWS_AS(run_points(ex, tricky, quiet(2)), std::invalid_argument);
    CHECK(no_children());
  }
  {
    ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "");
    for (const PointResult& r : run_points(ex, tricky, quiet(2)))
      CHECK(r.failed.empty());
  }
  for (const PointResult& r : run_points(ex, tricky, quiet(2))) // unset
    CHECK(r.failed.empty());
}

TEST_CASE("run_points with progress on still returns the results", "[runner]")
{
  Experiment ex = make_experiment({2, 2});
  RunOptions o;
  o.jobs = 2;
  o.progress = true; // lines go to stderr
  auto res = run_points(ex, tricky, o);
  CHECK(same_bits(res, run_points(ex, tricky, quiet(1))));
}

TEST_CASE("run_points stops at once when the stop descriptor becomes readable, its children ended", "[runner][stop]")
{
  // Every child sleeps for a minute: only the stop can end the run early.
  Experiment ex = make_experiment({4, 4});
  auto fn = [](const Params&, std::uint32_t) -> Metrics {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return {{"x", 1.0}};
  };
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  RunOptions o = quiet(2);
  o.stop = [&] { // requested once the descriptor is readable
    pollfd p{fds[0], POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  };
  o.stop_fd = fds[0];
  // The request comes from another process: run_points forks only from a
  // process of one thread.
  const pid_t stopper = ::fork();
  REQUIRE(stopper >= 0);
  if (stopper == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::_exit(::write(fds[1], "s", 1) == 1 ? 0 : 1);
  }
  auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(run_points(ex, fn, o), Interrupted);
  int status = 0;
  REQUIRE(::waitpid(stopper, &status, 0) == stopper);
  CHECK(status == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(no_children());
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("run_points asks for a stop before starting anything", "[runner][stop]")
{
  Experiment ex = make_experiment({2});
  auto fn = [](const Params&, std::uint32_t) -> Metrics {
    ::_exit(9); // never reached: nothing may start
  };
  RunOptions o = quiet(1);
  o.stop = [] { return true; };
  CHECK_THROWS_AS(run_points(ex, fn, o), Interrupted);
  CHECK(no_children());
}

namespace {

// The state letter of /proc/PID/stat, or 0 when the process is gone.
char process_state(pid_t pid)
{
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line))
    return 0;
  return line[line.rfind(')') + 2];
}

} // namespace

TEST_CASE("stop: the first request is recorded, a second ends the process: children killed, temporary removed",
          "[stop]")
{
  char dir_pattern[] = "/tmp/vsim-stop-XXXXXX";
  REQUIRE(::mkdtemp(dir_pattern) != nullptr);
  const std::string tmp = std::string(dir_pattern) + "/result.json.tmp";
  int report[2];
  REQUIRE(::pipe(report) == 0);
  const pid_t p = ::fork();
  REQUIRE(p >= 0);
  if (p == 0) {
    // The process under test: a stop-aware command with one simulation child.
    stop::install();
    const pid_t c = ::fork();
    if (c == 0) {
      stop::enter_child(::getppid());
      for (;;)
        ::pause();
    }
    ::setpgid(c, c);
    stop::track(c);
    std::ofstream(tmp) << "{\"half";
    stop::writing(tmp.c_str());
    ::raise(SIGTERM); // the first request: recorded, the descriptor readable
    char byte = 0;
    const bool readable = ::read(stop::wake_fd(), &byte, 1) == 1;
    const int first = stop::requested();
    const int status = stop::exit_status();
    const std::string facts = std::to_string(c) + " " + std::to_string(first) + " " + std::to_string(status) + " " +
                              std::to_string(readable) + "\n";
    [[maybe_unused]] ssize_t n = ::write(report[1], facts.data(), facts.size());
    ::raise(SIGINT); // the second: ends the process now
    ::_exit(99);     // not reached
  }
  ::close(report[1]);
  std::string facts;
  char buf[256];
  for (ssize_t n; (n = ::read(report[0], buf, sizeof buf)) > 0;)
    facts.append(buf, static_cast<std::size_t>(n));
  ::close(report[0]);
  int status = 0;
  REQUIRE(::waitpid(p, &status, 0) == p);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM); // the first request's status
  std::istringstream in(facts);
  pid_t child = 0;
  int first = 0, first_status = 0, readable = 0;
  in >> child >> first >> first_status >> readable;
  CHECK(first == SIGTERM);
  CHECK(first_status == 143);
  CHECK(readable == 1);
  CHECK_FALSE(std::filesystem::exists(tmp));
  // The simulation child was killed with its group (a zombie until init reaps it).
  REQUIRE(child > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (process_state(child) != 0 && process_state(child) != 'Z' && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const char state = process_state(child);
  CHECK((state == 0 || state == 'Z'));
  std::filesystem::remove_all(dir_pattern);
}
