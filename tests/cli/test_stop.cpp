// Stop requests (SIGINT, SIGTERM, SIGHUP) at any moment: run and validate end
// with everything they started, keep only complete files, and a run resumes
// exactly. (A stop during a traced run: test_trace.cpp.)
#include "cli_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fmt/format.h>
#include <signal.h>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

// The moments of the stop test: every 10 ms over the first second, then
// three inside the run wherever it ends (30%, 60% and 90% of the
// uninterrupted run's wall time, `run_ms`), so that some points are done
// before the signal however fast the build. VSIM_STOP_MOMENTS=N keeps every
// k-th of the first second so that N remain (the sanitizer suite, whose runs
// are several times slower, uses fewer).
std::vector<double> stop_moments_ms(double run_ms)
{
  std::vector<double> first;
  for (int i = 0; i < 100; ++i)
    first.push_back(10.0 * i);
  std::size_t keep = first.size();
  if (const char* e = std::getenv("VSIM_STOP_MOMENTS"))
    keep = std::clamp<std::size_t>(std::strtoul(e, nullptr, 10), 1, first.size());
  std::vector<double> out;
  for (std::size_t i = 0; i < keep; ++i)
    out.push_back(first[i * first.size() / keep]);
  for (double share : {0.3, 0.6, 0.9})
    out.push_back(share * run_ms);
  return out;
}

} // namespace

TEST_CASE("cli: a stop request at any moment stops the whole run, keeps complete files and resumes exactly",
          "[cli][resume][stop]")
{
  TempDir dir;
  // 16 points x 2 iterations of 150 MB: about a second and a half with 2
  // jobs (the moments below need a run longer than their first second).
  const std::vector<std::string> base =
      std::vector<std::string>{"run",
                               kTiny,
                               "-q",
                               "--jobs",
                               "2",
                               "--format",
                               "json",
                               "--set",
                               "workload.total_bytes=150MB",
                               "--set",
                               "sim.run_length=full",
                               "--set",
                               "iterations=2",
                               "--set",
                               "sweep.grid.workload.message_size=[1KiB,4KiB,16KiB,64KiB]",
                               "--set",
                               "sweep.grid.hv_sock.sndbuf=[default,64KiB]"};
  const std::string whole_dir = dir.ws + "/whole";
  const auto whole_started = std::chrono::steady_clock::now();
  const Run whole = run_cli(dir, base + std::vector<std::string>{"--output", whole_dir});
  const double run_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - whole_started).count();
  INFO("stderr: " << whole.err);
  REQUIRE(whole.status == 0);
  const std::string expected = without_run_facts(parse_json(whole.out)).dump();
  const auto reference = snapshot(whole_dir);
  REQUIRE(point_files(whole_dir) == 16);

  const int signals[] = {SIGINT, SIGTERM, SIGINT, SIGTERM, SIGHUP};
  const std::vector<double> moments = stop_moments_ms(run_ms);
  std::size_t stopped_count = 0, finished_count = 0, partial_count = 0, early_kills = 0;
  double slowest_ms = 0;
  for (std::size_t k = 0; k < moments.size(); ++k) {
    const int sig = signals[k % 5];
    const double at = moments[k];
    const std::string out = dir.ws + fmt::format("/out{}", k);
    const auto t0 = std::chrono::steady_clock::now();
    const Run r = run_cli(
        dir, base + std::vector<std::string>{"--output", out},
        [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >= at; },
        sig, /*background_job=*/true);
    INFO("signal " << sig << " at " << at << " ms (sent " << r.sent_ms << " ms); stderr: " << r.err);
    // The program and everything it started gone within a second (the
    // sanitizer build's slower start and end aside: kBuildSlowdown).
    if (r.sent_ms >= 0) {
      CHECK(r.gone_ms < 1000 * kBuildSlowdown);
      slowest_ms = std::max(slowest_ms, r.gone_ms);
    }
    if (r.status == 0) {
      // The signal came after the last point's check, while the results were
      // written (milliseconds), or the run had finished: it is complete. A
      // lost request would show as a run going on long after the signal.
      ++finished_count;
      CHECK(r.gone_ms < std::max(300.0, 0.05 * run_ms));
      CHECK(without_run_facts(parse_json(r.out)).dump() == expected);
    } else {
      CHECK(r.status == 128 + sig);
      CHECK(r.out.empty());
      ++stopped_count;
      early_kills += r.killed; // before the program's handler existed (the loader's first milliseconds)
    }
    // Every file under --output is complete: a point file is the reference's,
    // byte for byte; no temporary is left; result.json only once complete.
    if (fs::exists(out)) {
      for (const auto& [name, content] : snapshot(out)) {
        INFO(name);
        CHECK(name.find(".tmp") == std::string::npos);
        if (name.rfind("point-", 0) == 0) {
          REQUIRE(reference.count(name) == 1);
          CHECK(content == reference.at(name));
        } else if (name == "result.json") {
          CHECK(without_run_facts(parse_json(content)).dump() == expected);
        }
      }
      const std::size_t kept = point_files(out);
      partial_count += kept > 0 && kept < 16;
    }
    // A resume gives the uninterrupted result.
    const Run resumed = run_cli(dir, base + std::vector<std::string>{"--output", out});
    INFO("resume stderr: " << resumed.err);
    REQUIRE(resumed.status == 0);
    CHECK(without_run_facts(parse_json(resumed.out)).dump() == expected);
    fs::remove_all(out);
  }
  // The moments did hit every phase: runs stopped before any point and with
  // some points kept (late moments may find the run finished).
  INFO(stopped_count << " stopped, " << finished_count << " finished, " << partial_count
                     << " stopped with some points kept, " << early_kills
                     << " ended by the signal's default action; slowest end " << slowest_ms << " ms");
  CHECK(stopped_count >= moments.size() / 2);
  CHECK(partial_count >= 1);
  WARN(stopped_count << " stopped, " << finished_count << " finished, " << partial_count
                     << " with some points kept; slowest end " << slowest_ms << " ms");
}

TEST_CASE("cli: validate stops on SIGTERM or SIGINT at any moment, its simulations with it", "[cli][validate][stop]")
{
  TempDir dir;
  // The validation studies made long enough to be stopped while they run.
  const std::vector<std::string> args = {
      "validate", kValidate, "-q", "--jobs", "2", "--set", "workload.total_bytes=4GB", "--set", "sim.run_length=full"};
  for (double at : {0.0, 5.0, 20.0, 60.0, 150.0, 400.0}) {
    for (int sig : {SIGTERM, SIGINT}) {
      const auto t0 = std::chrono::steady_clock::now();
      const Run r = run_cli(
          dir, args,
          [&] {
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >= at;
          },
          sig, /*background_job=*/true);
      INFO("signal " << sig << " at " << at << " ms; stderr: " << r.err);
      REQUIRE(r.sent_ms >= 0);
      CHECK(r.status == 128 + sig);
      CHECK(r.out.empty());
      CHECK(r.gone_ms < 1000 * kBuildSlowdown);
    }
  }
}
