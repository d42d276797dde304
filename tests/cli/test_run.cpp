// vsocksim run: determinism, the JSON contract, --set, csv and table, --list,
// progress, the limit on large runs. (--output and resuming:
// test_output_dir.cpp; stop requests: test_stop.cpp; --shard and merge:
// test_merge_shard.cpp; --trace: test_trace.cpp; failed points:
// test_failures.cpp.)
#include "cli_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <set>
#include <signal.h>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

// Parameter paths listed by `vsocksim describe` (lines that are not indented,
// before the platform section).
std::set<std::string> described_paths()
{
  TempDir dir;
  const Run r = run_cli(dir, {"describe"});
  REQUIRE(r.status == 0);
  std::set<std::string> paths;
  for (const std::string& line : lines_of(r.out)) {
    if (starts_with(line, "Platforms"))
      break;
    if (!line.empty() && line[0] != ' ' && !starts_with(line, "search.")) // search.*: no parameters
      paths.insert(line);
  }
  return paths;
}

const char* const kRequiredMetrics[] = {
    "throughput_MBps",     "writer_sys_seconds", "writer_user_seconds", "reader_sys_seconds",
    "reader_user_seconds", "guest_cpu_percent",  "host_cpu_percent",
};

} // namespace

TEST_CASE("cli: the same run twice gives byte-identical JSON apart from manifest.wall", "[cli]")
{
  TempDir dir;
  // Without -q: progress goes to stderr and must not disturb stdout.
  const Run a = tiny_run(dir, {"--format", "json"});
  const Run b = tiny_run(dir, {"--format", "json"});
  ojson ja = parse_json(a.out), jb = parse_json(b.out);
  // The parsed document prints back to exactly what the program wrote, so
  // comparing dumps compares the bytes.
  CHECK(ja.dump(2) + "\n" == a.out);
  REQUIRE(ja["manifest"].contains("wall"));
  ja["manifest"].erase("wall");
  jb["manifest"].erase("wall");
  CHECK(ja.dump(2) == jb.dump(2));
}

TEST_CASE("cli: --jobs 1 and --jobs 2 give identical JSON", "[cli]")
{
  TempDir dir;
  ojson one = parse_json(tiny_run(dir, {"--format", "json", "-q", "--jobs", "1"}).out);
  ojson two = parse_json(tiny_run(dir, {"--format", "json", "-q", "--jobs", "2"}).out);
  REQUIRE(one["points"].size() == 2);
  CHECK(one["manifest"]["command_line"] != two["manifest"]["command_line"]);
  for (ojson* j : {&one, &two}) {
    (*j)["manifest"].erase("wall");
    (*j)["manifest"].erase("command_line");
  }
  CHECK(one.dump(2) == two.dump(2));
}

TEST_CASE("cli: JSON result has the documented manifest, params and metrics", "[cli]")
{
  TempDir dir;
  const Run r = tiny_run(dir, {"--format", "json", "-q"});
  CHECK(r.err.empty());
  const ojson j = parse_json(r.out);
  REQUIRE(j.is_object());
  CHECK(j["experiment"] == "cli-tiny");

  REQUIRE(j.contains("manifest"));
  const ojson& m = j["manifest"];
  for (const char* key : {"version", "git_commit", "config_sha256", "simgrid_version"}) {
    INFO(key);
    REQUIRE(m.contains(key));
    REQUIRE(m[key].is_string());
    CHECK(!m[key].get<std::string>().empty());
  }
  const std::string sha = m["config_sha256"];
  CHECK(sha.size() == 64);
  CHECK(sha.find_first_not_of("0123456789abcdef") == std::string::npos);
  REQUIRE(m.contains("seed"));
  CHECK(m["seed"] == 11);
  REQUIRE(m.contains("wall"));

  // The config hash is the one `check` reports.
  const Run checked = run_cli(dir, std::vector<std::string>{"check", kTiny} + kTinySets);
  REQUIRE(checked.status == 0);
  CHECK_THAT(checked.out, Catch::Contains("config sha256 " + sha));

  // Every key of the hv_sock transport the tiny run uses (virtio_vsock's
  // keys, costs, workload.app, socket_type, zerocopy and guest.preemption
  // are not part of its points).
  std::set<std::string> every_key;
  for (const std::string& path : described_paths())
    if (!starts_with(path, "virtio_vsock.") && !starts_with(path, "costs.virtio_") &&
        !starts_with(path, "firecracker_vsock.") && !starts_with(path, "costs.fc_") && path != "workload.app" &&
        path != "workload.socket_type" && path != "workload.zerocopy" && path != "guest.preemption")
      every_key.insert(path);
  REQUIRE(every_key.size() > 20);
  REQUIRE(j.contains("points"));
  REQUIRE(j["points"].size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("point " << i);
    const ojson& p = j["points"][i];
    REQUIRE(p.contains("params"));
    const ojson& params = p["params"];
    std::set<std::string> keys;
    for (const auto& item : params.items())
      keys.insert(item.key());
    CHECK(keys == every_key);
    CHECK(params["workload.message_size"] == 16384);
    CHECK(params["workload.total_bytes"] == 200000);
    CHECK(params["iterations"] == 2);
    CHECK(params["hv_sock.sndbuf"] == "default");
    CHECK(params["costs.clock_ghz"] == 2.5);
    CHECK(params["costs.host_tx_copy_bytes_per_cycle"] == 0.3);
    CHECK(params["hv_sock.send_loop"] == (i == 1));

    REQUIRE(p.contains("metrics"));
    for (const char* metric : kRequiredMetrics) {
      INFO(metric);
      REQUIRE(p["metrics"].contains(metric));
      const ojson& s = p["metrics"][metric];
      for (const char* stat : {"min", "max", "mean", "median"}) {
        INFO(stat);
        REQUIRE(s.contains(stat));
        REQUIRE(s[stat].is_number());
      }
      const double lo = s["min"], hi = s["max"], mean = s["mean"], median = s["median"];
      CHECK(lo >= 0);
      CHECK(lo <= mean);
      CHECK(mean <= hi);
      CHECK(lo <= median);
      CHECK(median <= hi);
    }
    CHECK(p["metrics"]["throughput_MBps"]["min"].get<double>() > 0);
    CHECK(p["metrics"]["writer_sys_seconds"]["min"].get<double>() > 0);
    CHECK(p["metrics"]["guest_cpu_percent"]["min"].get<double>() > 0);
    CHECK(p["metrics"]["host_cpu_percent"]["min"].get<double>() > 0);
  }
}

TEST_CASE("cli: --set replaces a swept key by one value", "[cli]")
{
  TempDir dir;
  const ojson j = parse_json(
      tiny_run(dir, {"--format", "json", "-q", "--set", "hv_sock.send_loop=true", "--set", "hv_sock.sndbuf=32KiB"})
          .out);
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["params"]["hv_sock.send_loop"] == true);
  CHECK(j["points"][0]["params"]["hv_sock.sndbuf"] == 32768);
}

TEST_CASE("cli: csv has an index column and one row per point and metric", "[cli]")
{
  TempDir dir;
  const Run r = tiny_run(dir, {"--format", "csv", "-q"});
  CHECK(r.err.empty());
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() > 1);
  CHECK_THAT(lines[0], Catch::StartsWith("index,"));
  const auto commas = std::count(lines[0].begin(), lines[0].end(), ',');
  std::set<std::string> point0, point1;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(std::count(lines[i].begin(), lines[i].end(), ',') == commas);
    if (starts_with(lines[i], "0,"))
      point0.insert(lines[i]);
    else if (starts_with(lines[i], "1,"))
      point1.insert(lines[i]);
    else
      FAIL("row of no point");
  }
  for (const char* metric : kRequiredMetrics) {
    INFO(metric);
    auto has = [&](const std::set<std::string>& rows) {
      return std::any_of(rows.begin(), rows.end(), [&](const std::string& row) {
        return row.find("," + std::string(metric) + ",") != std::string::npos;
      });
    };
    CHECK(has(point0));
    CHECK(has(point1));
  }
}

TEST_CASE("cli: table shows min/max/avg/median cells and with measurements ends with the mean absolute error", "[cli]")
{
  TempDir dir;
  SECTION("table is the default format")
  {
    const Run r = tiny_run(dir, {"-q"});
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("min/max/avg/median"));
    CHECK_THAT(r.out, Catch::Contains("throughput_MBps") && Catch::Contains("writer_sys_seconds"));
    CHECK_THAT(r.out, !Catch::Contains("mean absolute error"));
    const Run explicit_table = tiny_run(dir, {"-q", "--format", "table"});
    CHECK(explicit_table.out == r.out);
  }
  SECTION("with validation.measurements")
  {
    const Run r = tiny_run(dir, {"-q", "--set", "validation.measurements=tiny-measurements.csv"});
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("min/max/avg/median"));
    const std::vector<std::string> lines = lines_of(r.out);
    REQUIRE(!lines.empty());
    CHECK_THAT(lines.back(), Catch::StartsWith("mean absolute error:") && Catch::Contains("over 2 row(s)"));

    const ojson j = parse_json(
        tiny_run(dir, {"-q", "--format", "json", "--set", "validation.measurements=tiny-measurements.csv"}).out);
    REQUIRE(j.contains("validation"));
    CHECK(j["validation"]["rows"].size() == 2);
    CHECK(j["validation"]["unmatched_rows"] == 0);
  }
}

TEST_CASE("cli: run --list prints the expanded points with their indices and simulates nothing", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "--list", "--output", dir.ws + "/out"});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 2); // tiny.yaml has two points
  CHECK(starts_with(lines[0], "    0  "));
  CHECK(starts_with(lines[1], "    1  "));
  CHECK(lines[0] != lines[1]);
  CHECK(r.err.empty());
  CHECK_FALSE(std::filesystem::exists(dir.ws + "/out"));
  // Indices are a pure function of the file and the --set entries.
  const Run again = run_cli(dir, std::vector<std::string>{"run", kTiny, "--list"});
  CHECK(again.out == r.out);
}

TEST_CASE("cli: progress goes to stderr only, ending with every simulation and point done", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "--format", "json"} + kTinySets);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const auto lines = lines_of(r.err);
  REQUIRE_FALSE(lines.empty());
  CHECK(starts_with(lines.back(), "[4/4 simulations, 2/2 points] "));
  CHECK(lines.back().find("GB simulated, elapsed") != std::string::npos);
  CHECK_NOTHROW(parse_json(r.out)); // nothing but the result on stdout
}

TEST_CASE("cli: runs estimated at days are refused unless --allow-large, and check prints the estimate",
          "[cli][limits]")
{
  TempDir dir;
  // Every byte simulated: under sim.run_length auto the same run is small.
  const std::vector<std::string> huge = {"--set", "iterations=1000",    "--set", "workload.total_bytes=1000GB",
                                         "--set", "sim.run_length=full"};
  const Run c = run_cli(dir, std::vector<std::string>{"check", kTiny} + huge);
  REQUIRE(c.status == 0);
  CHECK(c.out.find("simulation(s)") != std::string::npos);
  CHECK(c.out.find(" h with ") != std::string::npos);
  const Run refused = run_cli(dir, std::vector<std::string>{"run", kTiny, "--output", dir.ws + "/out"} + huge);
  CHECK(refused.status == 2);
  CHECK(refused.err.find("error: this run is large:") != std::string::npos);
  CHECK(refused.err.find("--allow-large") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.ws + "/out"));
  // With --allow-large it starts (and is interrupted once it runs).
  const auto started = std::chrono::steady_clock::now();
  const Run allowed = run_cli(
      dir, std::vector<std::string>{"run", kTiny, "-q", "--allow-large"} + huge,
      [&] { return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(300); }, SIGINT,
      /*background_job=*/true); // the signal waits for the program's handler, however slow its start
  CHECK(allowed.status == 130);
  // The default experiments are far from the limit.
  const Run small = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q"} + kTinySets);
  CHECK(small.status == 0);
}
