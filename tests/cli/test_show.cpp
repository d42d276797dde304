// vsocksim show: a result re-printed with other metrics and formats, the
// golden tables (with compare's), --metrics all grouped and fitted to COLUMNS.
// (show of failed points: test_failures.cpp.)
#include "cli_support.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace cli_test;

namespace {

// The tables of a grouped `show`: per table its title and rows; and every
// metric name its columns stand for (the title's PREFIX<column>SUFFIX
// around each header, a header's " (unit)" left out).
struct Grouped {
  std::vector<std::string> titles;
  std::vector<std::vector<std::string>> tables; // the lines of each table, header first
  std::set<std::string> metrics;
};

Grouped parse_grouped(const std::string& text)
{
  Grouped g;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!starts_with(lines[i + 1], "point   ") && lines[i + 1] != "point")
      continue;
    const std::string& title = lines[i];
    g.titles.push_back(title);
    std::string prefix, suffix;
    if (const std::size_t col = title.find("<column>"); col != std::string::npos) {
      prefix = title.substr(title.rfind(' ', col) + 1, col - title.rfind(' ', col) - 1);
      suffix = title.substr(col + 8, title.find_first_of(" ,", col) - col - 8);
    }
    std::vector<std::string> table;
    for (std::size_t k = i + 1; k < lines.size() && !lines[k].empty(); ++k)
      table.push_back(lines[k]);
    const std::vector<std::string> headers = cells_of(table[0]);
    for (std::size_t h = 1; h < headers.size(); ++h)
      g.metrics.insert(prefix + headers[h].substr(0, headers[h].find(" (")) + suffix);
    g.tables.push_back(std::move(table));
  }
  return g;
}

} // namespace

TEST_CASE("cli: show re-prints a result with other metrics and formats, without simulating", "[cli][show]")
{
  TempDir dir;
  const std::string out_dir = dir.ws + "/out";
  const Run table = run_cli(dir, {"run", kTiny, "-q", "--output", out_dir});
  REQUIRE(table.status == 0);
  const Run json = run_cli(dir, {"run", kTiny, "-q", "--format", "json"});
  const Run csv = run_cli(dir, {"run", kTiny, "-q", "--format", "csv"});
  // The same tables as the run printed, from the directory or its result.json.
  const Run shown = run_cli(dir, {"show", out_dir});
  REQUIRE(shown.status == 0);
  CHECK(shown.out == table.out);
  CHECK(run_cli(dir, {"show", out_dir + "/result.json", "--format", "csv"}).out == csv.out);
  // JSON: the run's, apart from the wall-clock facts.
  const Run shown_json = run_cli(dir, {"show", out_dir, "--format", "json"});
  CHECK(without_run_facts(parse_json(shown_json.out)) == without_run_facts(parse_json(json.out)));
  // Another metric, with its unit in the header.
  const Run other = run_cli(dir, {"show", out_dir, "--metrics", "syscalls_per_MB"});
  CHECK(other.out.find("syscalls_per_MB (1/MB), min/max/avg/median over 2 iterations") != std::string::npos);
  CHECK(other.out.find("throughput_MBps") == std::string::npos);
  // Errors: a metric the result lacks, a file that is not a result.
  CHECK_THAT(
      bad_input_message(run_cli(dir, {"show", out_dir, "--metrics", "speed"})),
      Catch::StartsWith(out_dir + "/result.json: error: --metrics: 'speed' is not in this result (allowed: all, "));
  CHECK(bad_input_message(run_cli(dir, {"show", kTiny})) ==
        kTiny + ": error: not valid JSON (allowed: the JSON of `vsocksim run --format json`, or a `run --output` "
                "directory)");
}

TEST_CASE("cli: show and compare print exactly these tables for a fixed result (golden)", "[cli][show][compare]")
{
  TempDir dir;
  const std::string result = kData + "/result-small.json"; // hand-made: the figures below are worked by hand
  const Run shown = run_cli(dir, {"show", result, "--stat", "ci"});
  REQUIRE(shown.status == 0);
  // 100, 104, 96: mean 100, s = 4, t(0.975, 2) = 4.3027: +- 9.94; 150, 160, 155: s = 5: +- 12.4.
  CHECK(shown.out ==
        "golden — throughput_MBps (MB/s), mean +- half-width of the 95% confidence interval over 3 iterations\n"
        "hv_sock.sndbuf   throughput_MBps\n"
        "default          100 +- 9.94\n"
        "64KiB            155 +- 12.4\n"
        "\n"
        "golden — writer_sys_seconds (s), mean +- half-width of the 95% confidence interval over 3 iterations\n"
        "hv_sock.sndbuf   writer_sys_seconds\n"
        "default          2 +- 0.248\n"
        "64KiB            2 +- 0.124\n"
        "\n"
        "What the transport used where the points differ (effective values):\n"
        "point   effective.ring_bytes_guest_to_host\n"
        "0       24576\n"
        "1       131072\n"
        "\n"
        "MB = 10^6 bytes; CPU percentages sum over CPUs (200% is two CPUs busy); `vsocksim describe metrics` says "
        "what each metric is.\n");
  const Run compared = run_cli(dir, {"compare", result, "--points", "0,1"});
  REQUIRE(compared.status == 0);
  // +55%: 155 / 100; spreads (max - min) / mean: 8/100, 10/155; the ranges
  // 96-104 and 150-160 do not overlap; 1.9-2.1 and 1.95-2.05 do.
  CHECK(compared.out ==
        "A: golden point 0 (hv_sock.sndbuf=default)\n"
        "B: golden point 1 (hv_sock.sndbuf=64KiB)\n"
        "metric               unit   A mean   B mean   change    A spread   B spread   beyond the spread\n"
        "throughput_MBps      MB/s   100      155      +55.00%   8.00%      6.45%      yes\n"
        "writer_sys_seconds   s      2        2        +0.00%    10.00%     5.00%      no\n");

  // Issue 51, item 8: a change under 0.5% is never beyond the spread, even
  // where the ranges do not overlap (2.000-2.002 against 2.005-2.007)...
  ojson small = parse_json(read_file(result));
  for (int i = 0; i < 3; ++i) {
    small["points"][0]["iterations"][i]["writer_sys_seconds"] = 2.0 + 0.001 * i;
    small["points"][1]["iterations"][i]["writer_sys_seconds"] = 2.005 + 0.001 * i;
  }
  write_file(dir.ws + "/small.json", small.dump());
  const Run tiny = run_cli(dir, {"compare", dir.ws + "/small.json", "--points", "0,1"});
  REQUIRE(tiny.status == 0);
  CHECK(tiny.out.find("writer_sys_seconds   s      2.001    2.006    +0.25%    0.10%      0.10%      no\n") !=
        std::string::npos);
  CHECK(tiny.out.find("(a change under 0.5% is never called beyond the spread, though the ranges do not overlap)") !=
        std::string::npos);
  // ... and with one iteration a side there is no spread to judge by.
  ojson single = parse_json(read_file(result));
  for (auto& p : single["points"])
    p["iterations"] = ojson::array({p["iterations"][0]});
  write_file(dir.ws + "/single.json", single.dump());
  const Run one = run_cli(dir, {"compare", dir.ws + "/single.json", "--points", "0,1"});
  REQUIRE(one.status == 0);
  CHECK(one.out.find("+50.00%   0.00%      0.00%      -\n") != std::string::npos);
  CHECK(one.out.find(" yes") == std::string::npos);
  CHECK(one.out.find("(a point with one iteration has no spread to compare with: \"-\")") != std::string::npos);
}

TEST_CASE("cli: show --metrics all prints a table per group of metrics, points as rows, fitted to COLUMNS",
          "[cli][show]")
{
  TempDir dir;
  const std::string out_dir = dir.ws + "/out";
  const Run run = run_cli(dir, {"run", kTiny, "-q", "--output", out_dir, "--format", "json"});
  REQUIRE(run.status == 0);
  // Every metric but the CPUs' and threads' that are 0 in every iteration
  // of every point: those are left out, and named in one line.
  std::set<std::string> metrics, idle;
  const ojson result = parse_json(run.out);
  for (const auto& [name, unit] : result["units"].items()) {
    bool zero = name.starts_with("cpu.") || name.starts_with("thread.");
    for (const auto& p : result["points"])
      for (const auto& it : p["iterations"])
        zero = zero && (!it.contains(name) || it[name] == 0);
    (zero ? idle : metrics).insert(name);
  }
  REQUIRE(metrics.size() > 50);
  REQUIRE(idle.count("cpu.hcpu7.busy_percent") == 1);
  REQUIRE(idle.count("cpu.hcpu0.busy_percent") == 0);

  for (const int columns : {100, 200}) {
    ScopedEnv env("COLUMNS", std::to_string(columns));
    const Run all = run_cli(dir, {"show", out_dir, "--metrics", "all"});
    INFO("COLUMNS=" << columns << "\n" << all.out);
    REQUIRE(all.status == 0);
    CHECK(starts_with(all.out, fmt::format("cli-tiny — {} metrics in 11 groups, min/max/avg/median over 2 "
                                           "iterations\na row per point (index: hv_sock.send_loop)\n"
                                           "left out, 0 in every point (--metrics NAME shows one): idle cpu.hcpu1, "
                                           "cpu.hcpu2, cpu.hcpu3, cpu.hcpu4, cpu.hcpu5, cpu.hcpu6, cpu.hcpu7; ",
                                           metrics.size())));
    CHECK(all.out.find("\n\nthroughput (MB/s)\n") != std::string::npos);
    const Grouped g = parse_grouped(all.out);
    // Every metric once, in far fewer tables than one per metric.
    CHECK(g.metrics == metrics);
    CHECK(g.tables.size() < metrics.size() / 2);
    CHECK(std::find(g.titles.begin(), g.titles.end(), "CPU (%)") != g.titles.end());
    std::size_t widest = 0;
    for (const auto& table : g.tables) {
      // A row per point, the point column first.
      REQUIRE(table.size() == 3);
      CHECK(starts_with(table[1], "0: false   "));
      CHECK(starts_with(table[2], "1: true    "));
      for (const std::string& line : table) {
        CHECK(line.size() <= static_cast<std::size_t>(columns));
        widest = std::max(widest, line.size());
      }
    }
    // The width is used: 200 columns hold lines 100 could not.
    CHECK((columns == 100 ? widest > 80 : widest > 100));
    // The same inputs, the same bytes.
    CHECK(run_cli(dir, {"show", out_dir, "--metrics", "all"}).out == all.out);
  }
  {
    // Not on a terminal and no COLUMNS: 100.
    ScopedUnset unset("COLUMNS");
    const Run plain = run_cli(dir, {"show", out_dir, "--metrics", "all"});
    ScopedEnv env("COLUMNS", "100");
    CHECK(plain.out == run_cli(dir, {"show", out_dir, "--metrics", "all"}).out);
  }
  // More than three metrics are grouped; three or fewer keep a table per metric.
  ScopedEnv env("COLUMNS", "100");
  const Run four = run_cli(
      dir, {"show", out_dir, "--metrics", "throughput_MBps,writer_sys_seconds,syscalls_per_MB,guest_cpu_percent"});
  REQUIRE(four.status == 0);
  const Grouped g4 = parse_grouped(four.out);
  CHECK(starts_with(four.out, "cli-tiny — 4 metrics in 4 groups, "));
  CHECK(g4.titles == std::vector<std::string>{"throughput (MB/s)", "time: <column>_seconds (s)", "CPU (%)",
                                              "counts per MB: <column>_per_MB (1/MB)"});
  const Run three = run_cli(dir, {"show", out_dir, "--metrics", "throughput_MBps,writer_sys_seconds,syscalls_per_MB"});
  CHECK(starts_with(three.out, "cli-tiny — throughput_MBps (MB/s), min/max/avg/median over 2 iterations\n"
                               "hv_sock.send_loop   throughput_MBps\n"));
  // --stat still chooses the cells.
  const Run mean = run_cli(dir, {"show", out_dir, "--metrics", "all", "--stat", "mean"});
  CHECK(mean.out.find("mean over 2 iterations\n") != std::string::npos);
  for (const auto& table : parse_grouped(mean.out).tables)
    for (std::size_t row = 1; row < table.size(); ++row)
      CHECK(table[row].find('/') == std::string::npos); // no min/max/avg/median cell
}
