// Running a profile's ensemble from the command line (issue 50, item 4):
// `run --ensemble` on a profile file with a two-member ensemble, one member
// the profile's own costs, so its figures must be the central run's
// iteration 0 exactly; the table, explain, --output's resume and reproduce;
// a profile without an ensemble refused.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli_support.hpp"

using namespace cli_test;

namespace {

// Two members: member 0 the profile's own guest copy rate (hyperv-2019's
// 1.948 B/cycle), member 1 a slower one.
const std::string kProfile = "name: two-members\ntransport: hv_sock\nbase: hyperv-2019\ncosts: {}\n"
                             "ensemble:\n  noise_percent: 5\n  method: \"made up for a test\"\n  members:\n"
                             "    - {weight: 0.5, costs: {guest_copy_bytes_per_cycle: 1.948}}\n"
                             "    - {weight: 0.5, costs: {guest_copy_bytes_per_cycle: 1.2}}\n";
const std::string kStudy = "platform: two-members.yaml\ntransport: hv_sock\niterations: 2\nseed: 5\n"
                           "workload: {total_bytes: 200kB, message_size: 16KiB}\n"
                           "report: {metrics: 'throughput_MBps,writer_sys_seconds'}\n"
                           "sweep:\n  grid:\n    hv_sock.send_loop: [false, true]\n";

void write_study(const TempDir& dir)
{
  write_file(dir.in_ws("two-members.yaml"), kProfile);
  write_file(dir.in_ws("study.yaml"), kStudy);
}

} // namespace

TEST_CASE("cli: run --ensemble gives every metric its members' values and percentiles", "[cli][ensemble]")
{
  TempDir dir;
  write_study(dir);
  const Run r = run_cli(dir, {"run", "study.yaml", "--ensemble", "--format", "json", "-q"});
  REQUIRE(r.status == 0);
  const ojson j = parse_json(r.out);
  REQUIRE(j["points"].size() == 2);
  for (const ojson& p : j["points"]) {
    INFO(p["index"]);
    CHECK(p["params"]["sim.ensemble"] == true);
    CHECK(p["ensemble"]["members"] == 2);
    CHECK(p["ensemble"]["weights"] == ojson::array({0.5, 0.5}));
    CHECK(p["ensemble"]["costs"][1]["guest_copy_bytes_per_cycle"] == 1.2);
    for (const char* metric : {"throughput_MBps", "writer_sys_seconds"}) {
      INFO(metric);
      const ojson& e = p["metrics"][metric]["ensemble"];
      REQUIRE(e["values"].size() == 2);
      CHECK(e["members"] == 2);
      // Member 0 has the profile's costs and iteration 0's streams.
      CHECK(e["values"][0] == p["iterations"][0][metric]);
      CHECK(e["p10"].get<double>() <= e["p50"].get<double>());
      CHECK(e["p50"].get<double>() <= e["p90"].get<double>());
    }
    // The slower copy costs the writer more system time.
    CHECK(p["metrics"]["writer_sys_seconds"]["ensemble"]["values"][1].get<double>() >
          p["metrics"]["writer_sys_seconds"]["ensemble"]["values"][0].get<double>());
  }
  // The same with a cost the experiment sets: every member runs it.
  const Run set = run_cli(dir, {"run", "study.yaml", "--ensemble", "--format", "json", "-q", "--set",
                                "costs.guest_copy_bytes_per_cycle=1.5"});
  REQUIRE(set.status == 0);
  const ojson js = parse_json(set.out);
  for (const ojson& p : js["points"]) {
    const ojson& v = p["metrics"]["throughput_MBps"]["ensemble"]["values"];
    CHECK(v[0] == v[1]);
    CHECK(v[0] == p["iterations"][0]["throughput_MBps"]);
  }
}

TEST_CASE("cli: the table shows the members' p50 [p10, p90], and without --ensemble says one exists", "[cli][ensemble]")
{
  TempDir dir;
  write_study(dir);
  const Run with = run_cli(dir, {"run", "study.yaml", "--ensemble", "-q"});
  REQUIRE(with.status == 0);
  CHECK(with.out.find(" ens ") != std::string::npos);
  CHECK(with.out.find("ens: the p50 [p10, p90] over the 2 members") != std::string::npos);
  const Run without = run_cli(dir, {"run", "study.yaml", "-q"});
  REQUIRE(without.status == 0);
  CHECK(without.out.find(" ens ") == std::string::npos);
  CHECK(without.out.find("platform two-members has an ensemble") != std::string::npos);
}

TEST_CASE("cli: explain says what limits the members, resume and reproduce keep the members", "[cli][ensemble]")
{
  TempDir dir;
  write_study(dir);
  const Run first = run_cli(dir, {"run", "study.yaml", "--ensemble", "--format", "json", "-q", "--output", "out"});
  REQUIRE(first.status == 0);
  const Run ex = run_cli(dir, {"explain", "out/result.json", "--point", "0"});
  REQUIRE(ex.status == 0);
  CHECK(ex.out.find("ensemble: 2 members") != std::string::npos);
  CHECK(ex.out.find("what limits the members:") != std::string::npos);
  // A rerun into the same directory reuses both points, members and all.
  const Run again = run_cli(dir, {"run", "study.yaml", "--ensemble", "--format", "json", "--output", "out"});
  REQUIRE(again.status == 0);
  CHECK(again.err.find("reusing 2 finished point(s)") != std::string::npos);
  CHECK(without_run_facts(parse_json(again.out))["points"] == without_run_facts(parse_json(first.out))["points"]);
  // reproduce reruns the members from the result alone.
  const Run rep = run_cli(dir, {"reproduce", "out/result.json", "-q"});
  CHECK(rep.status == 0);
  CHECK(starts_with(rep.out, "identical: 2 points"));
}

TEST_CASE("cli: --ensemble on a profile without an ensemble is bad input", "[cli][ensemble]")
{
  TempDir dir;
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "--ensemble"} + kTinySets);
  CHECK(bad_input_message(r).find("sim.ensemble: platform hyperv-2019 has no ensemble to run (allowed: false, or a "
                                  "profile written by `vsocksim calibrate --ensemble N`") != std::string::npos);
}

TEST_CASE("cli: compare takes a change member by member, with the profile's own error on an effect on top",
          "[cli][ensemble]")
{
  TempDir dir;
  write_study(dir);
  const Run r = run_cli(dir, {"run", "study.yaml", "--ensemble", "--format", "json", "-q", "--output", "out"});
  REQUIRE(r.status == 0);
  const ojson j = parse_json(r.out);
  const Run c = run_cli(dir, {"compare", "out/result.json", "--points", "0,1"});
  REQUIRE(c.status == 0);
  CHECK(c.out.find("ensemble change p50 [p10, p90]") != std::string::npos);
  CHECK(c.out.find("within each of the 2 members") != std::string::npos);
  // Member 0's change, the p10 of two equal members (it sits at 0.25, below
  // the first place of the sorted two): the lower of the two ratios.
  std::vector<double> ratios;
  for (int m = 0; m < 2; ++m)
    ratios.push_back(j["points"][1]["metrics"]["throughput_MBps"]["ensemble"]["values"][m].get<double>() /
                     j["points"][0]["metrics"]["throughput_MBps"]["ensemble"]["values"][m].get<double>());
  const double lo = std::min(ratios[0], ratios[1]);
  CHECK(c.out.find(fmt::format("[{:+.1f}%,", (lo - 1) * 100)) != std::string::npos);
  // A profile without a fit report cannot tell its model error: no column.
  CHECK(c.out.find("with model error") == std::string::npos);

  // With a fit report of three rows of one metric and direction (log errors
  // 0, log 1.2, log 0.8), the model error's sigma is their pairs' rms.
  write_file(dir.in_ws("two-members.yaml"),
             kProfile + "fit:\n  experiment: made-up.yaml\n  measurements: made-up.csv\n  optimiser: none\n"
                        "  fitted: []\n  not_fitted: {}\n  hold_out: []\n  folds: 0\n  evaluations: 0\n"
                        "  mae_before_percent: 10\n  mae_fit_percent: 10\n  mae_held_out_percent: -1\n"
                        "  mae_cv_percent: -1\n  rows:\n"
                        "    - {keys: \"direction=guest_to_host\", metric: m, role: fit, measured: 1, before: 1, "
                        "after: 1}\n"
                        "    - {keys: \"direction=guest_to_host\", metric: m, role: fit, measured: 1, before: 1, "
                        "after: 1.2}\n"
                        "    - {keys: \"direction=guest_to_host\", metric: m, role: fit, measured: 1, before: 1, "
                        "after: 0.8}\n");
  const Run again = run_cli(dir, {"run", "study.yaml", "--ensemble", "--format", "json", "-q", "--output", "out2"});
  REQUIRE(again.status == 0);
  const Run c2 = run_cli(dir, {"compare", "out2/result.json", "--points", "0,1"});
  REQUIRE(c2.status == 0);
  const double a = std::log(1.2), b = std::log(0.8);
  const double sigma = std::sqrt((a * a + b * b + (a - b) * (a - b)) / 3);
  CHECK(c2.out.find("with model error") != std::string::npos);
  CHECK(c2.out.find(fmt::format("sigma {:.1f}% in log ratio", 100 * sigma)) != std::string::npos);
  const Run d = run_cli(dir, {"describe", "platforms", "two-members.yaml"});
  REQUIRE(d.status == 0);
  CHECK(d.out.find(fmt::format("model error on an effect: sigma {:.1f}%", 100 * sigma)) != std::string::npos);
}

TEST_CASE("cli: describe platforms NAME shows a shipped profile", "[cli][ensemble]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"describe", "platforms", "kvm-2019"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("kvm-2019") != std::string::npos);
  CHECK(r.out.find("model error on an effect: sigma") != std::string::npos);
  CHECK(r.out.find("ensemble: 15 members") != std::string::npos);
}
