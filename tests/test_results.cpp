// Statistics and the three output formats (JSON, CSV, table).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "app/experiment/experiment.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/sha256.hpp"
#include "app/report/profile_json.hpp"
#include "app/report/results.hpp"

using namespace vsim;
using namespace vsim::app;
using json = nlohmann::ordered_json;

namespace {

using Label = std::vector<std::pair<std::string, std::string>>;

// One point per label, in order; each label key is also a (text) parameter.
Experiment make_experiment(const std::string& name, std::vector<std::string> zip, std::vector<std::string> grid,
                           const std::vector<Label>& labels, std::int64_t iterations = 3)
{
  Experiment ex;
  ex.file = "test.yaml";
  ex.name = name;
  ex.zip_keys = std::move(zip);
  ex.grid_keys = std::move(grid);
  ex.base.set("iterations", iterations);
  ex.base.set("seed", std::int64_t{42});
  ex.config_sha256 = std::string(64, 'a');
  for (std::size_t k = 0; k < labels.size(); ++k) {
    Point p;
    p.index = k;
    p.params = ex.base;
    for (const auto& [key, text] : labels[k])
      p.params.set(key, text);
    p.label = labels[k];
    ex.points.push_back(std::move(p));
  }
  return ex;
}

// Point k: throughput (10(k+1)) + {0, 2, 7} -> "a/a+7/a+3/a+2";
// writer_sys_seconds (k+1) * {0.5, 0.25, 0.125}.
std::vector<PointResult> make_results(const Experiment& ex)
{
  std::vector<PointResult> out;
  for (std::size_t k = 0; k < ex.points.size(); ++k) {
    PointResult r{ex.points[k].index, {}};
    double a = 10.0 * static_cast<double>(k + 1);
    double f = static_cast<double>(k + 1);
    r.iterations.push_back({{"throughput_MBps", a + 7}, {"writer_sys_seconds", 0.5 * f}});
    r.iterations.push_back({{"throughput_MBps", a}, {"writer_sys_seconds", 0.25 * f}});
    r.iterations.push_back({{"throughput_MBps", a + 2}, {"writer_sys_seconds", 0.125 * f}});
    out.push_back(std::move(r));
  }
  return out;
}

Manifest fixed_manifest()
{
  Manifest m;
  m.version = "0.1.0";
  m.git_commit = "0123456789abcdef";
  m.config_sha256 = std::string(64, 'a');
  m.simgrid_version = "3.32.0";
  m.command_line = "vsocksim run test.yaml";
  m.seed = 42;
  m.dependencies = {{"fmt", "9.1.0"}, {"boost", "1.74.0"}};
  m.wall_seconds = 1.5;
  m.wall_started_utc = "2024-01-02T03:04:05Z";
  return m;
}

const std::vector<std::string> kThroughput{"throughput_MBps"};

} // namespace

// ---- summarize ----------------------------------------------------------------------

TEST_CASE("summarize of one value", "[results]")
{
  Stats s = summarize({3.25});
  CHECK(s.min == 3.25);
  CHECK(s.max == 3.25);
  CHECK(s.mean == 3.25);
  CHECK(s.median == 3.25);
}

TEST_CASE("summarize of an odd, unsorted count", "[results]")
{
  Stats s = summarize({5, 1, 3, 9, 2});
  CHECK(s.min == 1);
  CHECK(s.max == 9);
  CHECK(s.mean == 4);
  CHECK(s.median == 3);
}

TEST_CASE("summarize of an even count takes the mean of the middle two", "[results]")
{
  Stats s = summarize({4, 1, 3, 2});
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.mean == 2.5);
  CHECK(s.median == 2.5);
  CHECK(summarize({7, 7}).median == 7);
  CHECK(summarize({-1, 1}).median == 0);
}

TEST_CASE("summarize does not depend on the order of the values", "[results]")
{
  std::vector<double> v{0.1, 1e16, 0.2, -3.5, 0.3, 1e-9, 7};
  std::sort(v.begin(), v.end());
  Stats ref = summarize(v);
  do {
    Stats s = summarize(v);
    CHECK(s.mean == ref.mean);
    CHECK(s.median == ref.median);
  } while (std::next_permutation(v.begin(), v.end()));
  CHECK(ref.median == 0.2);
}

TEST_CASE("summarize keeps the mean of equal values and stays in range", "[results]")
{
  CHECK(summarize({0.1, 0.1, 0.1}).mean == 0.1);
  Stats s = summarize({1e308, 1e308});
  CHECK(s.mean == 1e308);
  CHECK(s.median == 1e308);
}

TEST_CASE("summarize rejects empty input and NaN", "[results]")
{
  CHECK_THROWS_AS(summarize({}), std::invalid_argument);
  CHECK_THROWS_AS(summarize({1, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
}

// ---- manifest -----------------------------------------------------------------------

TEST_CASE("make_manifest records versions, hash, seed and command line", "[results]")
{
  Experiment ex = make_experiment("m", {}, {}, {{}});
  Manifest m = make_manifest(ex, "vsocksim run x.yaml --jobs 2");
  CHECK_FALSE(m.version.empty());
  CHECK_FALSE(m.git_commit.empty());
  CHECK(m.config_sha256 == ex.config_sha256);
  CHECK(m.seed == 42);
  CHECK_THAT(m.simgrid_version, Catch::StartsWith("3."));
  CHECK(m.command_line == "vsocksim run x.yaml --jobs 2");
  std::vector<std::string> names;
  for (const auto& [name, version] : m.dependencies) {
    CAPTURE(name);
    names.push_back(name);
    CHECK_THAT(version, Catch::Matches(R"(\d+\.\d+\.\d+)"));
  }
  CHECK(names == std::vector<std::string>{"boost", "fmt", "nlohmann_json", "openssl", "yaml-cpp"});
  CHECK(m.wall_started_utc.empty()); // wall-clock facts come from the caller
  CHECK(m.wall_seconds == 0);
}

TEST_CASE("make_manifest holds each platform profile the points use, whole, and the experiment", "[results]")
{
  Experiment ex = make_experiment("m", {}, {"platform"}, {{{"platform", "kvm-2019"}}, {{"platform", "hyperv-2019"}}});
  ex.canonical = R"({"params":{"seed":42},"sweep":{"grid":[],"zip":[]}})";
  Manifest m = make_manifest(ex, "vsocksim run x.yaml", {"x/figures.csv", "metric,mean\n"});
  std::vector<std::string> names;
  for (const auto& [name, profile] : m.platforms.items())
    names.push_back(name);
  CHECK(names == std::vector<std::string>{"hyperv-2019", "kvm-2019"}); // in name order
  for (const std::string& name : names) {
    CAPTURE(name);
    const PlatformProfile& shipped = *find_profile(name);
    const json& j = m.platforms[name];
    CHECK(j["transport"] == shipped.transport);
    CHECK(j["description"] == shipped.doc);
    REQUIRE(j["costs"].size() == shipped.costs.size());
    for (const auto& [cost, value] : shipped.costs)
      CHECK(j["costs"][cost] == value);
    CHECK(j["implausible"].size() == implausible_costs(shipped).size());
    // What reproduce rebuilds is the profile itself.
    const PlatformProfile back = profile_from_json(name, j, "test");
    CHECK(back.costs == shipped.costs);
    CHECK(back.calibrated == shipped.calibrated);
    CHECK(profile_json(back) == j);
  }
  CHECK(m.experiment["file"] == "test.yaml");
  CHECK(m.experiment["config"].dump() == ex.canonical);
  CHECK(m.experiment["measurements"]["file"] == "x/figures.csv");
  CHECK(m.experiment["measurements"]["text"] == "metric,mean\n");
  CHECK(m.experiment["measurements"]["sha256"] == sha256_hex("metric,mean\n"));
}

TEST_CASE("profile_json carries a fit report, provenance and out-of-range values back", "[results]")
{
  PlatformProfile p = *find_profile("hyperv-2019");
  p.origin = "profiles/mine.yaml";
  p.sha256 = std::string(64, 'b');
  p.base = "hyperv-2019";
  p.hardware = {{"cpu", "Xeon"}, {"cpu_ghz", "2.5"}};
  p.costs["host_dpc"] = 1e9; // far outside its plausible range
  p.provenance["host_dpc"] = {"given", "measured", "a slow host"};
  p.fit = FitReport{"cal.yaml",
                    "cal.csv",
                    "NLopt LN_BOBYQA",
                    {"host_dpc"},
                    {{"guest_isr", "no row moves it"}},
                    {"direction=host_to_guest"},
                    3,
                    120,
                    20,
                    5,
                    7,
                    8,
                    {{"k=v", "throughput_MBps", "fit", 1, 2, 3}}};
  const json j = profile_json(p);
  REQUIRE(j["implausible"].size() == implausible_costs(p).size());
  CHECK(j["implausible"].back()["key"] == "host_dpc");
  CHECK(j["implausible"].back()["value"] == 1e9);
  const PlatformProfile back = profile_from_json(p.name, j, "test");
  CHECK(profile_json(back) == j);
  CHECK(back.hardware == p.hardware);
  REQUIRE(back.fit);
  CHECK(back.fit->rows.size() == 1);
  CHECK(back.fit->mae_cv == 8);
  json broken = j;
  broken["costs"]["host_dpc"] = "fast";
  CHECK_THROWS_AS(profile_from_json(p.name, broken, "test"), InputError);
}

TEST_CASE("format_utc writes ISO 8601 UTC", "[results]")
{
  CHECK(format_utc(std::chrono::system_clock::from_time_t(0)) == "1970-01-01T00:00:00Z");
  CHECK(format_utc(std::chrono::system_clock::from_time_t(1700000000)) == "2023-11-14T22:13:20Z");
}

// ---- JSON -----------------------------------------------------------------------------

TEST_CASE("to_json of a small run, exactly", "[results]")
{
  Experiment ex = make_experiment("tiny", {}, {}, {{}}, 2);
  ex.points[0].params.set("hv_sock.send_loop", true);
  ex.points[0].params.set("platform.ratio", 0.25);
  ex.points[0].params.set("sim.run_length", std::string("auto"));
  ex.points[0].params.set("sim.precision", 0.005);
  // Iteration 0 extrapolated from its steady state, iteration 1 too short to judge.
  std::vector<PointResult> res{
      {0,
       {{{"throughput_MBps", 100.5}, {"guest_cpu_percent", 0.1}},
        {{"throughput_MBps", 99.5}, {"guest_cpu_percent", 0.2}}},
       {{{"extrapolated", 1},
         {"reason", 0},
         {"simulated_bytes", 4e6},
         {"warmup_bytes", 1e6},
         {"batches", 20},
         {"half_width", 0.004},
         {"observation_bytes", 16384}},
        {{"extrapolated", 0}, {"reason", 2}, {"simulated_bytes", 2e6}, {"observation_bytes", 16384}}}}};
  Manifest m = fixed_manifest();
  m.dependencies = {{"fmt", "9.1.0"}};
  const char* expected = R"({
  "experiment": "tiny",
  "manifest": {
    "version": "0.1.0",
    "git_commit": "0123456789abcdef",
    "config_sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "seed": 42,
    "simgrid_version": "3.32.0",
    "command_line": "vsocksim run test.yaml",
    "dependencies": {
      "fmt": "9.1.0"
    },
    "platforms": {},
    "experiment": {},
    "wall": {
      "started_utc": "2024-01-02T03:04:05Z",
      "seconds": 1.5
    }
  },
  "points": [
    {
      "index": 0,
      "params": {
        "hv_sock.send_loop": true,
        "iterations": 2,
        "platform.ratio": 0.25,
        "seed": 42,
        "sim.precision": 0.005,
        "sim.run_length": "auto"
      },
      "label": {},
      "effective": {},
      "metrics": {
        "guest_cpu_percent": {
          "min": 0.1,
          "max": 0.2,
          "mean": 0.15000000000000002,
          "median": 0.15000000000000002
        },
        "throughput_MBps": {
          "min": 99.5,
          "max": 100.5,
          "mean": 100.0,
          "median": 100.0
        }
      },
      "iterations": [
        {
          "guest_cpu_percent": 0.1,
          "throughput_MBps": 100.5
        },
        {
          "guest_cpu_percent": 0.2,
          "throughput_MBps": 99.5
        }
      ],
      "run_length": {
        "mode": "auto",
        "precision": 0.005,
        "extrapolated_iterations": 1,
        "simulated_bytes": {
          "min": 2000000.0,
          "max": 4000000.0,
          "mean": 3000000.0,
          "median": 3000000.0
        },
        "warmup_bytes": {
          "min": 1000000.0,
          "max": 1000000.0,
          "mean": 1000000.0,
          "median": 1000000.0
        },
        "batches": {
          "min": 20.0,
          "max": 20.0,
          "mean": 20.0,
          "median": 20.0
        },
        "half_width": {
          "min": 0.004,
          "max": 0.004,
          "mean": 0.004,
          "median": 0.004
        },
        "iterations": [
          {
            "batches": 20,
            "extrapolated": true,
            "half_width": 0.004,
            "observation_bytes": 16384,
            "reason": 0,
            "simulated_bytes": 4000000,
            "warmup_bytes": 1000000,
            "why": "steady state reached the precision; the rest of the transfer extrapolated"
          },
          {
            "extrapolated": false,
            "observation_bytes": 16384,
            "reason": 2,
            "simulated_bytes": 2000000,
            "why": "simulated in full: the transfer was too short to judge its steady state"
          }
        ]
      }
    }
  ],
  "units": {
    "guest_cpu_percent": "%",
    "throughput_MBps": "MB/s"
  }
})";
  CHECK(to_json(ex, res, m).dump(2) == expected);
}

TEST_CASE("to_json: shape, types, label order and byte-identical dumps", "[results]")
{
  Experiment ex = make_experiment("grid", {}, {"hv_sock.sndbuf", "direction"},
                                  {{{"hv_sock.sndbuf", "default"}, {"direction", "guest_to_host"}},
                                   {{"hv_sock.sndbuf", "default"}, {"direction", "host_to_guest"}},
                                   {{"hv_sock.sndbuf", "32KiB"}, {"direction", "guest_to_host"}},
                                   {{"hv_sock.sndbuf", "32KiB"}, {"direction", "host_to_guest"}}});
  for (auto& p : ex.points) {
    p.params.set("hv_sock.send_loop", false);
    p.params.set("workload.message_size", std::int64_t{1024});
    p.params.set("x.ratio", 0.1 + 0.2);
  }
  auto res = make_results(ex);
  Manifest m = fixed_manifest();
  json j = to_json(ex, res, m);

  std::vector<std::string> top;
  for (auto& [k, v] : j.items())
    top.push_back(k);
  CHECK(top == std::vector<std::string>{"experiment", "manifest", "points", "units"});
  CHECK(j["units"]["throughput_MBps"] == "MB/s");
  std::vector<std::string> man;
  for (auto& [k, v] : j["manifest"].items())
    man.push_back(k);
  CHECK(man == std::vector<std::string>{"version", "git_commit", "config_sha256", "seed", "simgrid_version",
                                        "command_line", "dependencies", "platforms", "experiment", "wall"});
  CHECK(j["manifest"]["wall"]["seconds"] == 1.5);

  REQUIRE(j["points"].size() == 4);
  const json& p2 = j["points"][2];
  std::vector<std::string> pk;
  for (auto& [k, v] : p2.items())
    pk.push_back(k);
  CHECK(pk == std::vector<std::string>{"index", "params", "label", "effective", "metrics", "iterations", "run_length"});
  CHECK(p2["index"] == 2);
  CHECK(p2["params"]["hv_sock.send_loop"].is_boolean());
  CHECK(p2["params"]["workload.message_size"].is_number_integer());
  CHECK(p2["params"]["x.ratio"].is_number_float());
  CHECK(p2["params"]["x.ratio"].get<double>() == 0.1 + 0.2);
  CHECK(p2["params"]["hv_sock.sndbuf"] == "32KiB");
  std::vector<std::string> params;
  for (auto& [k, v] : p2["params"].items())
    params.push_back(k);
  CHECK(std::is_sorted(params.begin(), params.end()));
  // Label keeps axis order, not alphabetical order.
  CHECK(p2["label"].dump() == R"({"hv_sock.sndbuf":"32KiB","direction":"guest_to_host"})");
  CHECK(p2["metrics"]["throughput_MBps"].dump() == R"({"min":30.0,"max":37.0,"mean":33.0,"median":32.0})");
  CHECK(p2["iterations"].size() == 3);
  CHECK(p2["iterations"][0]["throughput_MBps"] == 37.0);

  // Same inputs, same bytes; the wall clock changes manifest.wall only.
  CHECK(to_json(ex, res, m).dump(2) == j.dump(2));
  Manifest later = m;
  later.wall_seconds = 99;
  later.wall_started_utc = "2030-01-01T00:00:00Z";
  json a = j, b = to_json(ex, res, later);
  CHECK(a.dump(2) != b.dump(2));
  a["manifest"].erase("wall");
  b["manifest"].erase("wall");
  CHECK(a.dump(2) == b.dump(2));
}

TEST_CASE("to_json and friends reject results that do not match the points", "[results]")
{
  Experiment ex = make_experiment("x", {}, {"a"}, {{{"a", "1"}}, {{"a", "2"}}});
  auto res = make_results(ex);
  res.pop_back();
  CHECK_THROWS_AS(to_json(ex, res, fixed_manifest()), std::invalid_argument);
  CHECK_THROWS_AS(to_csv(ex, res), std::invalid_argument);
  CHECK_THROWS_AS(to_table(ex, res, {}), std::invalid_argument);
}

// ---- CSV ------------------------------------------------------------------------------

TEST_CASE("to_csv: header, one row per point and metric, quoting", "[results]")
{
  Experiment ex =
      make_experiment("csv", {"workload.message_size", "note"}, {"direction"},
                      {{{"workload.message_size", "128"}, {"note", "a,b"}, {"direction", "guest_to_host"}},
                       {{"workload.message_size", "1KiB"}, {"note", "say \"hi\""}, {"direction", "guest_to_host"}}});
  auto res = make_results(ex);
  res[1].iterations[0]["throughput_MBps"] = 0.1 + 0.2; // exact text
  CHECK(to_csv(ex, res) ==
        "index,workload.message_size,note,direction,metric,unit,min,max,mean,median\n"
        "0,128,\"a,b\",guest_to_host,throughput_MBps,MB/s,10,17,13,12\n"
        "0,128,\"a,b\",guest_to_host,writer_sys_seconds,s,0.125,0.5,0.2916666666666667,0.25\n"
        "1,1KiB,\"say \"\"hi\"\"\",guest_to_host,throughput_MBps,MB/s,0.30000000000000004,22,14.1,20\n"
        "1,1KiB,\"say \"\"hi\"\"\",guest_to_host,writer_sys_seconds,s,0.25,1,0.5833333333333334,0.5\n");
}

TEST_CASE("to_csv without sweep axes", "[results]")
{
  Experiment ex = make_experiment("csv0", {}, {}, {{}});
  auto res = make_results(ex);
  CHECK(to_csv(ex, res) == "index,metric,unit,min,max,mean,median\n"
                           "0,throughput_MBps,MB/s,10,17,13,12\n"
                           "0,writer_sys_seconds,s,0.125,0.5,0.2916666666666667,0.25\n");
}

// ---- table ----------------------------------------------------------------------------

TEST_CASE("metric units", "[results]")
{
  CHECK(metric_unit("throughput_MBps") == "MB/s");
  CHECK(metric_unit("reader_user_seconds") == "s");
  CHECK(metric_unit("host_cpu_percent") == "%");
  CHECK(metric_unit("packets") == "");
}

TEST_CASE("to_table with no sweep axis: one row", "[results]")
{
  Experiment ex = make_experiment("t0", {}, {}, {{}});
  CHECK(to_table(ex, make_results(ex), kThroughput) ==
        "t0 — throughput_MBps (MB/s), min/max/avg/median over 3 iterations\n"
        "throughput_MBps\n"
        "10/17/13/12\n");
}

TEST_CASE("to_table with one axis (a zip of two keys): one column", "[results]")
{
  Experiment ex = make_experiment("t1", {"workload.message_size", "workload.total_bytes"}, {},
                                  {{{"workload.message_size", "128"}, {"workload.total_bytes", "1MiB"}},
                                   {{"workload.message_size", "1KiB"}, {"workload.total_bytes", "8MiB"}},
                                   {{"workload.message_size", "64KiB"}, {"workload.total_bytes", "64MiB"}}});
  CHECK(to_table(ex, make_results(ex), kThroughput) ==
        "t1 — throughput_MBps (MB/s), min/max/avg/median over 3 iterations\n"
        "workload.message_size, workload.total_bytes   throughput_MBps\n"
        "128, 1MiB                                     10/17/13/12\n"
        "1KiB, 8MiB                                    20/27/23/22\n"
        "64KiB, 64MiB                                  30/37/33/32\n");
}

TEST_CASE("to_table with two axes: rows by the first, columns by the second", "[results]")
{
  Experiment ex = make_experiment("t2", {}, {"hv_sock.sndbuf", "workload.message_size"},
                                  {{{"hv_sock.sndbuf", "default"}, {"workload.message_size", "128"}},
                                   {{"hv_sock.sndbuf", "default"}, {"workload.message_size", "1KiB"}},
                                   {{"hv_sock.sndbuf", "32KiB"}, {"workload.message_size", "128"}},
                                   {{"hv_sock.sndbuf", "32KiB"}, {"workload.message_size", "1KiB"}}});
  CHECK(to_table(ex, make_results(ex), {"throughput_MBps", "writer_sys_seconds"}) ==
        "t2 — throughput_MBps (MB/s), min/max/avg/median over 3 iterations\n"
        "hv_sock.sndbuf \\ workload.message_size   128           1KiB\n"
        "default                                  10/17/13/12   20/27/23/22\n"
        "32KiB                                    30/37/33/32   40/47/43/42\n"
        "\n"
        "t2 — writer_sys_seconds (s), min/max/avg/median over 3 iterations\n"
        "hv_sock.sndbuf \\ workload.message_size   128                    1KiB\n"
        "default                                  0.125/0.5/0.292/0.25   0.25/1/0.583/0.5\n"
        "32KiB                                    0.375/1.5/0.875/0.75   0.5/2/1.17/1\n");
}

TEST_CASE("to_table with three axes: one table per outer value", "[results]")
{
  std::vector<Label> labels;
  for (auto [dir, tr] : {std::pair{"guest_to_host", "hv_sock"}, std::pair{"host_to_guest", "virtio_vsock"}})
    for (const char* buf : {"default", "32KiB"})
      for (const char* size : {"128", "1KiB"})
        labels.push_back(
            {{"direction", dir}, {"transport", tr}, {"hv_sock.sndbuf", buf}, {"workload.message_size", size}});
  Experiment ex =
      make_experiment("t3", {"direction", "transport"}, {"hv_sock.sndbuf", "workload.message_size"}, labels);
  auto res = make_results(ex);
  res[7].iterations = {{{"throughput_MBps", 1234.5678}}, {{"throughput_MBps", 2345.4}}}; // 2 iterations
  res[6].iterations.clear();                                                             // no value: "-"
  CHECK(to_table(ex, res, kThroughput) ==
        "t3 — throughput_MBps (MB/s), min/max/avg/median over 0 to 3 iterations\n"
        "direction=guest_to_host, transport=hv_sock\n"
        "hv_sock.sndbuf \\ workload.message_size   128           1KiB\n"
        "default                                  10/17/13/12   20/27/23/22\n"
        "32KiB                                    30/37/33/32   40/47/43/42\n"
        "\n"
        "direction=host_to_guest, transport=virtio_vsock\n"
        "hv_sock.sndbuf \\ workload.message_size   128           1KiB\n"
        "default                                  50/57/53/52   60/67/63/62\n"
        "32KiB                                    -             1235/2345/1790/1790\n");
}

TEST_CASE("to_table with no metric list shows every metric, and small numbers keep 3 digits", "[results]")
{
  Experiment ex = make_experiment("t", {}, {}, {{}});
  std::vector<PointResult> res{{0, {{{"b_percent", 0.012345}, {"a", -0.0}}, {{"b_percent", 99.94}, {"a", 0.0}}}}};
  CHECK(to_table(ex, res, {}) == "t — a, min/max/avg/median over 2 iterations\n"
                                 "a\n"
                                 "0/0/0/0\n"
                                 "\n"
                                 "t — b_percent (%), min/max/avg/median over 2 iterations\n"
                                 "b_percent\n"
                                 "0.0123/99.9/50/50\n");
}

TEST_CASE("to_table: report.stat chooses what a cell shows", "[results]")
{
  Experiment ex = make_experiment("t", {}, {}, {{}});
  // 4 iterations: mean 11, t(0.975, 3) = 3.182446.
  std::vector<PointResult> res{
      {0, {{{"throughput_MBps", 10}}, {{"throughput_MBps", 12}}, {{"throughput_MBps", 14}}, {{"throughput_MBps", 8}}}}};
  auto table = [&](const char* stat) {
    ex.points[0].params.set("report.stat", std::string(stat));
    return to_table(ex, res, {"throughput_MBps"});
  };
  CHECK(table("all") ==
        "t — throughput_MBps (MB/s), min/max/avg/median over 4 iterations\nthroughput_MBps\n8/14/11/11\n");
  CHECK(table("mean") == "t — throughput_MBps (MB/s), mean over 4 iterations\nthroughput_MBps\n11\n");
  CHECK(table("range") ==
        "t — throughput_MBps (MB/s), mean [min, max] over 4 iterations\nthroughput_MBps\n11 [8, 14]\n");
  // mean 11, deviations -1 1 3 -3: s^2 = 20/3, half-width 3.182446 * sqrt(20/3/4) = 4.11
  CHECK(table("ci") == "t — throughput_MBps (MB/s), mean +- half-width of the 95% confidence interval over 4 "
                       "iterations\nthroughput_MBps\n11 +- 4.11\n");
}

TEST_CASE("to_table: report.baseline adds each point's change against one point", "[results]")
{
  Experiment ex =
      make_experiment("b", {}, {"hv_sock.sndbuf"}, {{{"hv_sock.sndbuf", "default"}}, {{"hv_sock.sndbuf", "64KiB"}}});
  std::vector<PointResult> res{{0, {{{"throughput_MBps", 100}}, {{"throughput_MBps", 110}}}},
                               {1, {{{"throughput_MBps", 200}}, {{"throughput_MBps", 220}}}}};
  for (auto& p : ex.points) {
    p.params.set("report.stat", std::string("mean"));
    p.params.set("report.baseline", std::int64_t{0});
  }
  CHECK(to_table(ex, res, {"throughput_MBps"}) ==
        "b — throughput_MBps (MB/s), mean over 2 iterations; (change of the mean against point 0)\n"
        "hv_sock.sndbuf   throughput_MBps\n"
        "default          105\n"
        "64KiB            210 (+100.0%)\n");
}

// ---- grouped table (show --metrics all) -------------------------------------------------

namespace {

// Two points (sndbuf default, 32KiB), two iterations, report.stat mean:
// metrics of several groups, each figure the point's number times `base`.
std::pair<Experiment, std::vector<PointResult>> grouped_case()
{
  Experiment ex =
      make_experiment("g", {}, {"hv_sock.sndbuf"}, {{{"hv_sock.sndbuf", "default"}}, {{"hv_sock.sndbuf", "32KiB"}}}, 2);
  for (auto& p : ex.points)
    p.params.set("report.stat", std::string("mean"));
  const std::vector<std::pair<std::string, double>> base = {{"throughput_MBps", 100},
                                                            {"writer_sys_seconds", 2},
                                                            {"reader_sys_seconds", 3},
                                                            {"thread.aa.sys_percent", 4},
                                                            {"thread.aa.user_percent", 5},
                                                            {"thread.b.sys_percent", 6},
                                                            {"thread.b.user_percent", 7},
                                                            {"syscalls_per_MB", 8},
                                                            {"sim_events", 9},
                                                            {"mystery", 1}};
  std::vector<PointResult> res;
  for (std::size_t k = 0; k < 2; ++k) {
    PointResult r{};
    r.index = k;
    for (int it = 0; it < 2; ++it) {
      Metrics m;
      for (const auto& [name, v] : base)
        m[name] = v * static_cast<double>(k + 1);
      r.iterations.push_back(m);
    }
    res.push_back(std::move(r));
  }
  return {ex, res};
}

} // namespace

TEST_CASE("to_grouped_table: one table per group of metrics, points as rows, metrics as columns", "[results]")
{
  auto [ex, res] = grouped_case();
  std::vector<std::string> names;
  for (const auto& [name, v] : res[0].iterations[0])
    names.push_back(name);
  // Wide enough for every group in one table; the groups in their order,
  // the metrics of a group in the order asked (here by name), the prefix
  // and suffix they share in the title.
  CHECK(to_grouped_table(ex, res, names, 100) == "g — 10 metrics in 6 groups, mean over 2 iterations\n"
                                                 "a row per point (index: hv_sock.sndbuf)\n"
                                                 "\n"
                                                 "throughput (MB/s)\n"
                                                 "point        throughput_MBps\n"
                                                 "0: default   100\n"
                                                 "1: 32KiB     200\n"
                                                 "\n"
                                                 "time: <column>_seconds (s)\n"
                                                 "point        reader_sys   writer_sys\n"
                                                 "0: default   3            2\n"
                                                 "1: 32KiB     6            4\n"
                                                 "\n"
                                                 "CPU per thread and category: thread.<column>_percent (%)\n"
                                                 "point        aa.sys   aa.user   b.sys   b.user\n"
                                                 "0: default   4        5         6       7\n"
                                                 "1: 32KiB     8        10        12      14\n"
                                                 "\n"
                                                 "counts per MB: <column>_per_MB (1/MB)\n"
                                                 "point        syscalls\n"
                                                 "0: default   8\n"
                                                 "1: 32KiB     16\n"
                                                 "\n"
                                                 "simulator: sim_<column>\n"
                                                 "point        events\n"
                                                 "0: default   9\n"
                                                 "1: 32KiB     18\n"
                                                 "\n"
                                                 "other\n"
                                                 "point        mystery\n"
                                                 "0: default   1\n"
                                                 "1: 32KiB     2\n");
}

TEST_CASE("to_grouped_table: a group wider than the width is split, each part repeating the point column", "[results]")
{
  auto [ex, res] = grouped_case();
  // 37 columns: "0: default" (10) + aa.sys, aa.user, b.sys (3 + 6, 3 + 7, 3 + 5) would fit, but thread b is kept
  // whole in the next part, where it fits.
  const std::string narrow = to_grouped_table(
      ex, res, {"thread.aa.sys_percent", "thread.aa.user_percent", "thread.b.sys_percent", "thread.b.user_percent"},
      37);
  CHECK(narrow == "g — 4 metrics in 1 group, mean over 2 iterations\n"
                  "a row per point (index: hv_sock.sndbuf)\n"
                  "\n"
                  "CPU per thread and category: thread.<column>_percent (%), part 1 of 2\n"
                  "point        aa.sys   aa.user\n"
                  "0: default   4        5\n"
                  "1: 32KiB     8        10\n"
                  "\n"
                  "CPU per thread and category: thread.<column>_percent (%), part 2 of 2\n"
                  "point        b.sys   b.user\n"
                  "0: default   6       7\n"
                  "1: 32KiB     12      14\n");
  // Narrower than one metric column: one metric per part, never none.
  const std::string tiny = to_grouped_table(ex, res, {"writer_sys_seconds", "reader_sys_seconds"}, 5);
  CHECK(tiny.find("time: <column>_seconds (s), part 2 of 2\npoint        reader_sys\n") != std::string::npos);
  // Every table line fits the width it is given.
  for (std::size_t width : {30, 40, 60}) {
    std::vector<std::string> names;
    for (const auto& [name, v] : res[0].iterations[0])
      names.push_back(name);
    std::istringstream lines(to_grouped_table(ex, res, names, width));
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("point") || line.starts_with("0: ") || line.starts_with("1: "))
        CHECK(line.size() <= width);
  }
}

TEST_CASE("to_grouped_table: units of a mixed group in the headers, failed points and notes as to_table's", "[results]")
{
  Experiment ex = make_experiment("m", {}, {}, {{}, {}});
  std::vector<PointResult> res(2);
  res[0].iterations = {{{"throughput_MBps", 100}, {"throughput_Gbps", 0.8}}};
  res[1].index = 1;
  res[1].failed = "iteration 0: it broke";
  CHECK(to_grouped_table(ex, res, {"throughput_MBps", "throughput_Gbps"}, 100) ==
        "m — 2 metrics in 1 group, min/max/avg/median over 1 iteration\n"
        "a row per point\n"
        "\n"
        "throughput\n"
        "point   throughput_MBps (MB/s)   throughput_Gbps (Gbit/s)\n"
        "0       100/100/100/100          0.8/0.8/0.8/0.8\n"
        "1       failed                   failed\n"
        "\n"
        "failed: 1 of 2 point(s), no figures: point 1\n");
}
