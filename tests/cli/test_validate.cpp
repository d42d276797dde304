// vsocksim validate: the validation experiments against their published
// figures (tests/data/validate), text and Markdown, bad input. (Stop requests:
// test_stop.cpp; a failing point: test_failures.cpp.)
#include "cli_support.hpp"

#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

// The number of "..., mean absolute error X%, ..." in a line.
double mae_of(const std::string& line)
{
  const std::string tag = "mean absolute error ";
  const std::size_t at = line.find(tag);
  REQUIRE(at != std::string::npos);
  return std::stod(line.substr(at + tag.size()));
}

// A copy of a tiny validation study under dir.ws, edited: `edit` turns the
// experiment's and the figures' text into the copies'. Returns the copy of
// the experiment.
std::string tiny_study_copy(const TempDir& dir, const std::string& stem,
                            const std::function<void(std::string& yaml, std::string& csv)>& edit)
{
  std::string yaml = read_file(kValidate + "/" + stem + ".yaml");
  std::string csv = read_file(kValidate + "/" + stem + ".csv");
  edit(yaml, csv);
  fs::create_directories(dir.ws + "/study");
  write_file(dir.ws + "/study/" + stem + ".yaml", yaml);
  write_file(dir.ws + "/study/" + stem + ".csv", csv);
  return dir.ws + "/study/" + stem + ".yaml";
}

void replace_once(std::string& text, const std::string& from, const std::string& to)
{
  const std::size_t at = text.find(from);
  if (at == std::string::npos)
    throw std::logic_error("test bug: '" + from + "' not in the text");
  text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("cli: validate prints every row with its error, each study's mean absolute error and the overall one",
          "[cli][validate]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"validate", kValidate, "-q", "--jobs", "2"});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  INFO("stdout:\n" << r.out);

  // The run's own means, to check the prediction against.
  const ojson run = parse_json(run_cli(dir, {"run", kValidate + "/tiny-loop.yaml", "-q", "--format", "json"}).out);
  const double run_mean0 = run["points"][0]["metrics"]["throughput_MBps"]["mean"].get<double>();

  std::map<std::string, std::vector<double>> errors; // study -> printed errors
  std::vector<double> predicted_column;
  std::vector<std::string> summaries, overall;
  for (const std::string& line : lines_of(r.out)) {
    const std::vector<std::string> c = cells_of(line);
    if (c.empty())
      continue;
    if (starts_with(line, "overall: "))
      overall.push_back(line);
    else if (starts_with(line, "tiny-loop: ") || starts_with(line, "tiny-units: "))
      summaries.push_back(line);
    else if ((c[0] == "tiny-loop" || c[0] == "tiny-units") && c.size() >= 8) {
      const double measured = std::stod(c[c.size() - 3]);
      const double predicted = std::stod(c[c.size() - 2]);
      const double error = std::stod(c.back());
      INFO(line);
      CHECK(c.back().back() == '%');
      // predicted is printed to 4 significant digits, the error to 0.1%.
      CHECK(std::fabs(error - (predicted / measured - 1) * 100) <= 0.05 + 0.05 * predicted / measured + 1e-9);
      errors[c[0]].push_back(error);
      predicted_column.push_back(predicted);
    }
  }
  REQUIRE(errors["tiny-loop"].size() == 3);
  REQUIRE(errors["tiny-units"].size() == 2);

  // The first row is point 0's mean throughput, as `run` reports it.
  CHECK(predicted_column.at(0) == Approx(run_mean0).epsilon(5e-4));

  // Each study's line and the overall line: rows, mean of |error|, the worst.
  REQUIRE(summaries.size() == 2);
  REQUIRE(overall.size() == 1);
  std::vector<double> all;
  for (const std::string& s : summaries) {
    const std::string study = s.substr(0, s.find(':'));
    const std::vector<double>& e = errors[study];
    double sum = 0, worst = 0;
    for (double x : e) {
      sum += std::fabs(x);
      worst = std::fabs(x) > std::fabs(worst) ? x : worst;
      all.push_back(x);
    }
    INFO(s);
    CHECK_THAT(s, Catch::StartsWith(fmt::format("{}: {} row(s), mean absolute error ", study, e.size())));
    CHECK(std::fabs(mae_of(s) - sum / static_cast<double>(e.size())) <= 0.1);
    CHECK_THAT(s, Catch::Contains(fmt::format(", worst {:+.1f}% (", worst)));
  }
  double sum = 0;
  for (double x : all)
    sum += std::fabs(x);
  CHECK_THAT(overall[0], Catch::StartsWith("overall: 5 row(s) in 2 studies, mean absolute error "));
  CHECK(std::fabs(mae_of(overall[0]) - sum / 5) <= 0.1);
  const std::vector<std::string> out_lines = lines_of(r.out);
  REQUIRE(out_lines.size() >= 2);
  CHECK(out_lines[out_lines.size() - 2] == overall[0]);
  CHECK_THAT(out_lines.back(), Catch::StartsWith("overall design effects: 1 design effect(s), 1 larger than 10%: "));

  // Results do not depend on --jobs; progress goes to stderr only.
  const Run one = run_cli(dir, {"validate", kValidate, "--jobs", "1"});
  CHECK(one.status == 0);
  CHECK(one.out == r.out);
  CHECK_THAT(one.err, Catch::StartsWith("validate: 2 studies, 6 simulation(s)"));
  CHECK(snapshot(dir.ws).empty());
}

TEST_CASE("cli: validate --markdown prints the same rows as a document, --plot draws the figures", "[cli][validate]")
{
  TempDir dir;
  const Run md = run_cli(dir, {"validate", kValidate, "-q", "--markdown", "--plot", dir.ws + "/figs"});
  INFO("stderr: " << md.err);
  REQUIRE(md.status == 0);
  CHECK_THAT(md.out, Catch::StartsWith("<!-- Generated by `vsocksim validate --markdown`"));
  CHECK_THAT(md.out,
             Catch::Contains("\n    build/vsocksim validate --markdown " + kValidate + " > docs/validation.md\n"));
  const Run text = run_cli(dir, {"validate", kValidate, "-q"});
  REQUIRE(text.status == 0);
  // Every row and summary of the text report is in the document.
  std::size_t rows = 0;
  for (const std::string& line : lines_of(md.out))
    if (starts_with(line, "| ") && line.back() == '|' && line.find("%") != std::string::npos)
      ++rows;
  CHECK(rows == 5 + 2 + 1); // the rows, the summary table's line per study, the design effect (tiny-loop)
  CHECK_THAT(md.out, Catch::Contains("\n## tiny-loop\n") && Catch::Contains("\n## tiny-units\n"));
  CHECK_THAT(md.out, Catch::Contains("`throughput_MBps*0.008`"));
  CHECK_THAT(md.out, Catch::Contains("\noverall: 5 row(s) in 2 studies, mean absolute error "));

  for (const char* stem : {"validation-all", "validation-tiny-loop", "validation-tiny-units"}) {
    INFO(stem);
    CHECK(read_file(dir.ws + "/figs/" + stem + ".svg").find("<svg") != std::string::npos);
    CHECK(read_file(dir.ws + "/figs/" + stem + ".png").substr(1, 3) == "PNG");
  }
  CHECK(fs::exists(dir.ws + "/figs/validation.gp"));

  // --worst N: the worst effects in the summary, and in the command that
  // regenerates the document.
  const Run worst = run_cli(dir, {"validate", kValidate, "-q", "--markdown", "--worst", "3"});
  REQUIRE(worst.status == 0);
  CHECK_THAT(worst.out, Catch::Contains("\n    build/vsocksim validate --markdown --worst 3 " + kValidate +
                                        " > docs/validation.md\n"));
  CHECK_THAT(worst.out, Catch::Contains("\nThe 1 worst design effect(s) larger than 10%"));
  CHECK_THAT(md.out, !Catch::Contains("worst design effect"));
}

TEST_CASE("cli: validate refuses bad input with exit 2 and file:line:column before simulating", "[cli][validate]")
{
  TempDir dir;
  SECTION("default directory missing")
  {
    const std::string m = bad_input_message(run_cli(dir, {"validate"}));
    CHECK_THAT(m, Catch::StartsWith("experiments/validation: error: no such file or directory (allowed: ") &&
                      Catch::Contains("run validate from the repository's top directory"));
  }
  SECTION("named path missing")
  {
    const std::string m = bad_input_message(run_cli(dir, {"validate", dir.ws + "/nosuch"}));
    CHECK(starts_with(m, dir.ws + "/nosuch: error: no such file or directory (allowed: "));
  }
  SECTION("directory without experiments")
  {
    fs::create_directory(dir.ws + "/empty");
    const std::string m = bad_input_message(run_cli(dir, {"validate", dir.ws + "/empty"}));
    CHECK(starts_with(m, dir.ws + "/empty: error: no validation experiments in this directory (allowed: "));
  }
  SECTION("experiment without validation.measurements")
  {
    std::string yaml;
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string& y, std::string&) {
      replace_once(y, "validation:\n  measurements: tiny-loop.csv\n", "");
      yaml = y;
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == file + ":" + where(yaml, "name:") +
                   ": error: validation.measurements: missing; validate compares each experiment with published "
                   "figures (allowed: the path of a CSV of figures, relative to the experiment file)");
  }
  SECTION("a row with a value no point has")
  {
    std::string csv;
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string&, std::string& c) {
      replace_once(c, "hv_sock.send_loop,metric", "hv_sock.send_loop,workload.message_size,metric");
      replace_once(c, "false,throughput_MBps", "false,16384,throughput_MBps");
      replace_once(c, "true,throughput_MBps", "true,4096,throughput_MBps");
      replace_once(c, "true,writer_sys", "true,,writer_sys");
      csv = c;
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == dir.ws + "/study/tiny-loop.csv:" + where(csv, "4096") + ": error: workload.message_size: no point of " +
                   file + " has the value '4096' (its points have: 16384); the row matches no point");
  }
  SECTION("a row whose values each exist but not together")
  {
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string& y, std::string& c) {
      replace_once(y, "  message_size: 16KiB\n", "");
      replace_once(y, "  grid:\n    hv_sock.send_loop: [false, true]\n",
                   "  zip:\n    hv_sock.send_loop: [false, true]\n    workload.message_size: [4096, 16384]\n");
      c = "hv_sock.send_loop,workload.message_size,metric,mean\nfalse,4096,throughput_MBps,500\n"
          "true,16384,throughput_MBps,500\ntrue,4096,throughput_MBps,500\n";
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == dir.ws + "/study/tiny-loop.csv:4:1: error: no point of " + file +
                   " has this combination (hv_sock.send_loop=true, workload.message_size=4096); the row matches no "
                   "point");
  }
  SECTION("malformed metric expression")
  {
    const std::string file = tiny_study_copy(dir, "tiny-units", [&](std::string&, std::string& c) {
      replace_once(c, "throughput_MBps*0.008", "throughput_MBps*(0.008");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == dir.ws + "/study/tiny-units.csv:4:37: error: metric: expected ')'");
  }
  SECTION("unknown metric in an expression")
  {
    const std::string file = tiny_study_copy(dir, "tiny-units", [&](std::string&, std::string& c) {
      replace_once(c, "(host_cpu_percent +", "(host_cpu_prcent +");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK_THAT(m, Catch::StartsWith(dir.ws + "/study/tiny-units.csv:5:38: error: metric: unknown metric "
                                             "'host_cpu_prcent' (allowed: throughput_MBps, "));
  }
  SECTION("unit not the metric's")
  {
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string&, std::string& c) {
      replace_once(c, "true,throughput_MBps,MB/s", "true,throughput_MBps,Gbit/s");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK_THAT(m, Catch::StartsWith(dir.ws + "/study/tiny-loop.csv:5:22: error: unit: throughput_MBps is in MB/s, "
                                             "not 'Gbit/s' (allowed: MB/s; for another unit convert in the metric "
                                             "column"));
  }
  SECTION("an experiment key without a numeric value, found once the points ran")
  {
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string&, std::string& c) {
      replace_once(c, "false,throughput_MBps,,", "false,throughput_MBps/hv_sock.sndbuf,,");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file, "-q", "--plot", dir.ws + "/figs"}));
    CHECK(m == dir.ws + "/study/tiny-loop.csv:4:7: error: metric: hv_sock.sndbuf is 'default' at point 0 of " + file +
                   ", not a number (allowed: keys with numeric values at every matched point)");
    CHECK_FALSE(fs::exists(dir.ws + "/figs"));
  }
  SECTION("a bad --set entry")
  {
    const std::string m = bad_input_message(run_cli(dir, {"validate", kValidate, "--set", "iterations=0"}));
    CHECK_THAT(m, Catch::StartsWith("--set 'iterations=0': error: iterations: 0 is out of range"));
  }
}
