// `validate` as a library: metric expressions, loading studies, running them
// through the run driver with a stand-in simulation (no SimGrid), the error
// arithmetic and the report. The command line is tested in tests/cli/test_validate.cpp.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/validation/effects.hpp"
#include "app/validation/measurements.hpp"
#include "app/validation/validate.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

const std::string kDir = std::string(VSIM_SOURCE_DIR) + "/tests/data/validate";

std::string accept_all(const std::string&)
{
  return "";
}

double eval(const std::string& text, const Metrics& m, const Params& p = {})
{
  const std::optional<double> v = MetricExpr::parse(text, accept_all).eval(m, p);
  REQUIRE(v.has_value());
  return *v;
}

MetricExpr::Error parse_error(const std::string& text,
                              const std::function<std::string(const std::string&)>& check = accept_all)
{
  try {
    MetricExpr::parse(text, check);
  } catch (const MetricExpr::Error& e) {
    return e;
  }
  FAIL("no error for '" << text << "'");
  return {};
}

// Stand-in for simulate_iteration, run in the driver's children: figures
// that follow from the point and the iteration alone.
Metrics fake_iteration(const Params& p, std::uint32_t iteration)
{
  const double i = iteration;
  if (p.text("direction") == "host_to_guest") // tiny-units: 600 and 700 MB/s, CPU 200% + 40%
    return {{"throughput_MBps", 600 + 100 * i}, {"host_cpu_percent", 200}, {"guest_cpu_percent", 40}};
  if (!p.boolean("hv_sock.send_loop")) // 540 and 560 MB/s
    return {{"throughput_MBps", 540 + 20 * i}, {"writer_sys_seconds", 1}};
  // 380 and 420 MB/s; 0.0001 s and 0.0002 s per 200 kB = 0.0005 and 0.001 s per MB
  return {{"throughput_MBps", 380 + 40 * i}, {"writer_sys_seconds", 0.0001 * (1 + i)}};
}

} // namespace

TEST_CASE("validate: metric expressions follow arithmetic precedence and read metrics and keys", "[validate]")
{
  const Metrics m = {{"a", 2}, {"b", 3}, {"throughput_MBps", 1000}};
  Params p;
  p.set("workload.total_bytes", std::int64_t{200000});
  p.set("x.ratio", 0.5);
  CHECK(eval("a", m) == 2);
  CHECK(eval("1 + 2 * 3", m) == 7);
  CHECK(eval("(1+2)*3", m) == 9);
  CHECK(eval("a - b - 1", m) == -2); // left to right
  CHECK(eval("12 / a / b", m) == 2);
  CHECK(eval("-a * -b", m) == 6);
  CHECK(eval("1e3 * .5", m) == 500);
  CHECK(eval("throughput_MBps*0.008", m) == Approx(8));
  CHECK(eval("throughput_MBps*8/(a+b)", m) == Approx(1600));
  CHECK(eval("a*1e6/workload.total_bytes", m, p) == Approx(10));
  CHECK(eval("x.ratio*b", m, p) == 1.5);

  const MetricExpr e = MetricExpr::parse("b*a/b+workload.total_bytes", accept_all);
  CHECK(e.names() == std::vector<std::string>{"b", "a", "workload.total_bytes"});
  CHECK_FALSE(e.is_name());
  CHECK(MetricExpr::parse(" a ", accept_all).is_name());
  CHECK_FALSE(MetricExpr::parse("workload.total_bytes", accept_all).is_name());

  std::string missing;
  CHECK_FALSE(MetricExpr::parse("a+c", accept_all).eval(m, p, &missing).has_value());
  CHECK(missing == "c");
  Params words;
  words.set("hv_sock.sndbuf", std::string("default"));
  CHECK_FALSE(MetricExpr::parse("a/hv_sock.sndbuf", accept_all).eval(m, words, &missing).has_value());
  CHECK(missing == "hv_sock.sndbuf");
}

TEST_CASE("validate: malformed metric expressions name the byte at fault", "[validate]")
{
  CHECK(parse_error("").offset == 0);
  CHECK(parse_error("a*").offset == 2);
  CHECK(parse_error("a*").what == "expected a metric name, a number or '(' at the end");
  CHECK(parse_error("(a+b").offset == 4);
  CHECK(parse_error("(a+b").what == "expected ')'");
  CHECK(parse_error("a)").offset == 1);
  CHECK(parse_error("a % b").offset == 2);
  CHECK(parse_error("a % b").what == "unexpected '%' (allowed: metric names, numbers, + - * /, parentheses)");
  const auto only_a = [](const std::string& name) { return name == "a" ? "" : "unknown metric '" + name + "'"; };
  const MetricExpr::Error e = parse_error("a + speed", only_a);
  CHECK(e.offset == 4);
  CHECK(e.what == "unknown metric 'speed'");
}

TEST_CASE("validate: a directory stands for its experiment files, sorted, each once", "[validate]")
{
  const std::vector<std::string> files = validation_files({kDir, kDir + "/tiny-loop.yaml"});
  CHECK(files == std::vector<std::string>{kDir + "/tiny-loop.yaml", kDir + "/tiny-units.yaml"});
  CHECK_THROWS_WITH(validation_files({kDir + "/nosuch"}),
                    Catch::StartsWith(kDir + "/nosuch: error: no such file or directory (allowed: "));
}

TEST_CASE("validate: error = predicted / measured - 1, per row, with the study's and the overall mean", "[validate]")
{
  std::vector<Study> studies = load_studies(validation_files({kDir}), {});
  REQUIRE(studies.size() == 2);
  RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  run_studies(studies, fake_iteration, opt);

  const Comparison& loop = studies[0].comparison;
  REQUIRE(loop.rows.size() == 3);
  CHECK(loop.rows[0].stat == "mean");
  CHECK(loop.rows[0].predicted == 550); // mean of 540 and 560
  CHECK(loop.rows[0].error_percent == Approx(10));
  CHECK(loop.rows[1].predicted == 400); // the mean: published, so compared
  CHECK(loop.rows[1].error_percent == 0);
  CHECK(loop.rows[2].stat == "median"); // only the median published
  CHECK(loop.rows[2].predicted == Approx(0.00075));
  CHECK(loop.rows[2].error_percent == Approx(-25));
  CHECK(loop.mean_abs_error_percent == Approx(35.0 / 3));
  CHECK(loop.worst == 2);

  const Comparison& units = studies[1].comparison;
  REQUIRE(units.rows.size() == 2);
  CHECK(units.rows[0].predicted == Approx(5.2)); // 650 MB/s in Gbit/s
  CHECK(units.rows[0].error_percent == Approx(108));
  CHECK(units.rows[1].predicted == Approx((600 * 8 / 240.0 + 700 * 8 / 240.0) / 2)); // Mbit/s per %CPU
  CHECK(units.rows[1].error_percent == Approx(25.0 / 3));

  const std::string text = validation_text(studies);
  CHECK_THAT(text, Catch::Contains("tiny-loop   false               throughput_MBps                               MB/s"
                                   "       mean     500        550         +10.0%\n"));
  CHECK_THAT(text, Catch::Contains("tiny-loop: 3 row(s), mean absolute error 11.7%, worst -25.0% "
                                   "(hv_sock.send_loop=true: writer_sys_seconds*1e6/workload.total_bytes)\n"));
  CHECK_THAT(text, Catch::Contains("tiny-units: 2 row(s), mean absolute error 58.2%, worst +108.0% "
                                   "(direction=host_to_guest: throughput_MBps*0.008)\n"));
  // (10 + 0 + 25 + 108 + 8.33) / 5
  CHECK_THAT(text, Catch::Contains("\noverall: 5 row(s) in 2 studies, mean absolute error 30.3%, worst +108.0% "
                                   "(tiny-units: direction=host_to_guest: throughput_MBps*0.008)\n"));
  // One design effect: send_loop false -> true, throughput 500 -> 400 measured (x0.8), 550 -> 400
  // predicted (x0.727, 9.1% under the measured ratio).
  CHECK_THAT(text,
             Catch::Contains("hv_sock.send_loop: false -> true   throughput_MBps   0.800            0.727             "
                             "-9.1%         right\n"));
  CHECK_THAT(text, Catch::EndsWith("\noverall design effects: 1 design effect(s), 1 larger than 10%: direction right "
                                   "for 100% (1), size within 20% for 100% (1)\n"));

  const std::string md = validation_markdown(studies, "build/vsocksim validate --markdown > docs/validation.md");
  CHECK_THAT(md, Catch::StartsWith("<!-- Generated by `vsocksim validate --markdown`"));
  CHECK_THAT(md, Catch::Contains("\n    build/vsocksim validate --markdown > docs/validation.md\n"));
  CHECK_THAT(md, Catch::Contains("| tiny-loop | 3 | 11.7% | hv_sock.send_loop=true: "
                                 "`writer_sys_seconds*1e6/workload.total_bytes` | -25.0% |\n"));
  CHECK_THAT(md, Catch::Contains("| true | `writer_sys_seconds*1e6/workload.total_bytes` | s per MB | median | "
                                 "0.001 | 0.00075 | -25.0% |\n"));
}

TEST_CASE("validate: a metric the run does not report is bad input naming the CSV cell", "[validate]")
{
  std::vector<Study> studies = load_studies({kDir + "/tiny-loop.yaml"}, {});
  RunOptions opt;
  opt.progress = false;
  const auto without_sys = [](const Params& p, std::uint32_t i) {
    Metrics m = fake_iteration(p, i);
    m.erase("writer_sys_seconds");
    return m;
  };
  CHECK_THROWS_WITH(run_studies(studies, without_sys, opt),
                    kDir + "/tiny-loop.csv:6:6: error: metric: the run of " + kDir +
                        "/tiny-loop.yaml (point 1, transport hv_sock) reports no metric 'writer_sys_seconds' "
                        "(allowed: the metrics that transport reports)");
}

TEST_CASE("design effects pair rows of the same workload that differ in design keys", "[validate][effects]")
{
  auto measurement = [](std::vector<std::pair<std::string, std::string>> keys, const std::string& metric) {
    Measurement m;
    m.keys = std::move(keys);
    m.metric = metric;
    return m;
  };
  // Two message sizes x two ring sizes, plus a row of another metric and a
  // row that differs only in the workload.
  const std::vector<Measurement> ms = {
      measurement({{"direction", "host_to_guest"}, {"hv_sock.rcvbuf", "default"}, {"workload.message_size", "4096"}},
                  "throughput_MBps"),
      measurement({{"direction", "host_to_guest"}, {"hv_sock.rcvbuf", "65536"}, {"workload.message_size", "4096"}},
                  "throughput_MBps"),
      measurement({{"direction", "host_to_guest"}, {"hv_sock.rcvbuf", "default"}, {"workload.message_size", "128"}},
                  "throughput_MBps"),
      measurement({{"direction", "host_to_guest"}, {"hv_sock.rcvbuf", "65536"}, {"workload.message_size", "128"}},
                  "throughput_MBps"),
      measurement({{"direction", "host_to_guest"}, {"hv_sock.rcvbuf", "65536"}, {"workload.message_size", "128"}},
                  "cpu_seconds"),
  };
  Comparison c;
  auto row = [&](std::size_t i, double measured, double predicted) {
    c.rows.push_back(ComparisonRow{&ms[i], i, "mean", measured, predicted, 100 * (predicted / measured - 1)});
  };
  row(0, 400, 380);  // base, 4 KiB
  row(1, 1200, 800); // x3 measured, x2.105 predicted: right direction, size off by 30%
  row(2, 70, 70);    // base, 128 B
  row(3, 63, 70.7);  // x0.9 measured (not larger than 10%), +1% predicted
  row(4, 5, 5);      // another metric: no pair
  const std::vector<DesignEffect> e = design_effects(c);
  REQUIRE(e.size() == 2);
  CHECK(e[0].change == "hv_sock.rcvbuf: default -> 65536");
  CHECK(e[0].context == "direction=host_to_guest, workload.message_size=4096: throughput_MBps");
  CHECK(e[0].measured_ratio == Approx(3.0));
  CHECK(e[0].predicted_ratio == Approx(800.0 / 380.0));
  CHECK(e[0].large());
  CHECK(e[0].direction_right());
  CHECK_FALSE(e[0].size_within_20());
  CHECK(e[1].change == "hv_sock.rcvbuf: default -> 65536");
  CHECK_FALSE(e[1].large());
  CHECK_FALSE(e[1].direction_right()); // +1% predicted is no change
  const EffectSummary s = summarize(e);
  CHECK(s.effects == 2);
  CHECK(s.large == 1);
  CHECK(s.direction_right == 1);
  CHECK(s.within_20 == 0);
  CHECK(effect_summary_text(s) ==
        "2 design effect(s), 1 larger than 10%: direction right for 100% (1), size within 20% for 0% (0)");
  // A predicted change under 2% never has a direction; within 20% is a ratio test.
  DesignEffect flat{nullptr, nullptr, "", "", 2.0, 1.01};
  CHECK_FALSE(flat.direction_right());
  DesignEffect close{nullptr, nullptr, "", "", 2.0, 2.35};
  CHECK(close.size_within_20());
  CHECK(close.direction_right());
  DesignEffect down{nullptr, nullptr, "", "", 0.5, 0.7};
  CHECK(down.direction_right());
  CHECK_FALSE(down.size_within_20());
}

TEST_CASE("the worst design effects: larger than 10% only, furthest predicted size first, ties in order",
          "[validate][effects]")
{
  // measured, predicted ratios: size errors 0.5, 0.25 (not larger than 10%
  // as published), 0.5, 0.9, 0.1.
  const std::vector<DesignEffect> e = {{nullptr, nullptr, "a", "", 2.0, 3.0},
                                       {nullptr, nullptr, "small", "", 1.05, 1.3125},
                                       {nullptr, nullptr, "b", "", 0.5, 0.75},
                                       {nullptr, nullptr, "c", "", 3.0, 0.3},
                                       {nullptr, nullptr, "d", "", 1.5, 1.65}};
  CHECK(e[0].size_error() == Approx(0.5));
  CHECK(e[3].size_error() == Approx(0.9));
  auto names = [](const std::vector<DesignEffect>& w) {
    std::vector<std::string> n;
    for (const DesignEffect& x : w)
      n.push_back(x.change);
    return n;
  };
  CHECK(names(worst_effects(e, 10)) == std::vector<std::string>{"c", "a", "b", "d"});
  CHECK(names(worst_effects(e, 2)) == std::vector<std::string>{"c", "a"});
  CHECK(worst_effects(e, 0).empty());
}

TEST_CASE("validate --worst N lists the N worst effects of every study, with the study, after the report",
          "[validate][effects]")
{
  std::vector<Study> studies = load_studies({kDir + "/tiny-loop.yaml", kDir + "/tiny-units.yaml"}, {});
  RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  run_studies(studies, fake_iteration, opt);
  // The one design effect (tiny-loop's send loop, x0.8 measured, x0.727
  // predicted) is listed once, however many are asked for.
  const std::string text = validation_text(studies, 5);
  CHECK_THAT(text, Catch::Contains("\nthe 1 worst design effect(s) larger than 10% (predicted size furthest from the "
                                   "published, every study):\nstudy       change"));
  CHECK_THAT(text, Catch::EndsWith("\ntiny-loop   hv_sock.send_loop: false -> true   throughput_MBps   0.800"
                                   "            0.727             -9.1%         right\n"));
  CHECK(validation_text(studies, 0) == validation_text(studies));
  CHECK_THAT(validation_text(studies), !Catch::Contains("worst design effect"));
  const std::string md = validation_markdown(studies, "cmd", 5);
  CHECK_THAT(md, Catch::Contains("\nThe 1 worst design effect(s) larger than 10% (predicted size furthest from the "
                                 "published, every study):\n\n| study | change |"));
  CHECK_THAT(md, Catch::Contains("| tiny-loop | hv_sock.send_loop: false -> true | throughput_MBps | 0.800 | 0.727 | "
                                 "-9.1% | right |\n"));
}
