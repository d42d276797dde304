// vsocksim calibrate: the report, the profile file (written whole, the same
// bytes for any --jobs), and bad input (exit 2 before anything runs, nothing
// written). The fit itself: tests/test_calibrate.cpp.
#include "cli_support.hpp"

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cli_test;

namespace {

const std::string kCalibrate = kSource + "/tests/data/calibrate";

// A copy of tests/data/calibrate/tiny.{yaml,csv} under dir.ws/study, edited.
std::string tiny_copy(const TempDir& dir, const std::function<void(std::string& yaml, std::string& csv)>& edit)
{
  std::string yaml = read_file(kCalibrate + "/tiny.yaml");
  std::string csv = read_file(kCalibrate + "/tiny.csv");
  edit(yaml, csv);
  fs::create_directories(dir.ws + "/study");
  write_file(dir.ws + "/study/tiny.yaml", yaml);
  write_file(dir.ws + "/study/tiny.csv", csv);
  return dir.ws + "/study/tiny.yaml";
}

void replace_once(std::string& text, const std::string& from, const std::string& to)
{
  const std::size_t at = text.find(from);
  if (at == std::string::npos)
    throw std::logic_error("test bug: '" + from + "' not in the text");
  text.replace(at, from.size(), to);
}

// A quick calibration: two costs, a small budget.
std::vector<std::string> quick(const std::string& file, const std::string& output, const std::string& jobs)
{
  return {"calibrate",
          file,
          "--output",
          output,
          "--fit",
          "host_signal_latency,guest_copy_bytes_per_cycle",
          "--max-evaluations",
          "8",
          "--fold-evaluations",
          "4",
          "--folds",
          "2",
          "--jobs",
          jobs};
}

} // namespace

TEST_CASE("cli: calibrate prints the rows before and after, the errors and the costs moved", "[cli][calibrate]")
{
  TempDir dir;
  const Run r = run_cli(dir, quick(kCalibrate + "/tiny.yaml", dir.in_ws("fitted.yaml"), "2"));
  INFO("stderr: " << r.err << "\nstdout:\n" << r.out);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("workload.message_size=256: throughput_MBps") != std::string::npos);
  CHECK(r.out.find("fit rows: 4 row(s), mean absolute error 36.7% before, ") != std::string::npos);
  CHECK(r.out.find("2-fold cross-validation: mean absolute error ") != std::string::npos);
  CHECK(r.out.find("costs moved:") != std::string::npos);
  CHECK(r.out.find("host_signal_latency") != std::string::npos);
  CHECK(r.out.find("optimiser: NLopt LN_BOBYQA") != std::string::npos);
  // Progress on stderr: evaluations of the budget, the time left.
  CHECK(r.err.find("calibrate: search") != std::string::npos);
  CHECK(r.err.find("s left") != std::string::npos);
  CHECK(fs::exists(dir.in_ws("fitted.yaml")));
  const std::string profile = read_file(dir.in_ws("fitted.yaml"));
  CHECK(profile.find("source: fitted, note: \"NLopt LN_BOBYQA on 4 row(s) of ") != std::string::npos);
  // The profile reads back, and validate on it gives the fit's error.
  const std::size_t at = r.out.find("mean absolute error 36.7% before, ");
  REQUIRE(at != std::string::npos);
  const std::string after = r.out.substr(at + 34, r.out.find(" after", at) - at - 34);
  const Run v = run_cli(dir, {"validate", kCalibrate + "/tiny.yaml", "--set", "platform=" + dir.in_ws("fitted.yaml"),
                              "-q", "--jobs", "2"});
  INFO("validate:\n" << v.out << v.err);
  REQUIRE(v.status == 0);
  CHECK(v.out.find("tiny-calibration: 4 row(s), mean absolute error " + after + ",") != std::string::npos);

  const Run q = run_cli(dir, [&] {
    auto a = quick(kCalibrate + "/tiny.yaml", dir.in_ws("quiet.yaml"), "2");
    a.push_back("-q");
    return a;
  }());
  REQUIRE(q.status == 0);
  CHECK(q.err.empty());

  // A held-out row: not fitted, reported apart; the folds over the others.
  // Without the 64 KiB row the guest's copy goes to its bound: the report is
  // printed, the profile refused (exit 1, nothing written) unless asked.
  const auto held = [&](bool allow) {
    auto a = quick(kCalibrate + "/tiny.yaml", dir.in_ws("held.yaml"), "2");
    a.insert(a.end(), {"--hold-out", "workload.message_size=64KiB", "-q"});
    if (allow)
      a.push_back("--allow-bound");
    return a;
  };
  const Run refused = run_cli(dir, held(false));
  INFO("stderr: " << refused.err);
  CHECK(refused.status == 1);
  CHECK(refused.out.find("costs moved:") != std::string::npos);
  CHECK(refused.err.find("held.yaml not written: the fit breaks 1 rule(s)") != std::string::npos);
  CHECK(refused.err.find("costs.guest_copy_bytes_per_cycle = 1 sits on a bound of its plausible range 1 .. 32 "
                         "bytes/cycle") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.in_ws("held.yaml")));
  const Run h = run_cli(dir, held(true));
  INFO("stdout:\n" << h.out);
  REQUIRE(h.status == 0);
  CHECK(h.out.find("4 row(s), 3 fit, 1 held out") != std::string::npos);
  CHECK(h.out.find("held-out rows: 1 row(s), mean absolute error 39.2% before, ") != std::string::npos);
  CHECK(h.out.find("fit rows: 3 row(s)") != std::string::npos);
  REQUIRE(fs::exists(dir.in_ws("held.yaml")));
  CHECK(read_file(dir.in_ws("held.yaml")).find("guest_copy_bytes_per_cycle: {value: 1, source: held") !=
        std::string::npos);
}

TEST_CASE("cli: calibrate writes the same profile, byte for byte, for any --jobs", "[cli][calibrate]")
{
  TempDir dir;
  auto named = [&](const std::string& output, const std::string& jobs) {
    auto a = quick(kCalibrate + "/tiny.yaml", dir.in_ws(output), jobs);
    a.insert(a.end(), {"--name", "tiny-fit"});
    return a;
  };
  const Run one = run_cli(dir, named("one.yaml", "1"));
  const Run two = run_cli(dir, named("two.yaml", "2"));
  INFO("stderr: " << one.err << two.err);
  REQUIRE(one.status == 0);
  REQUIRE(two.status == 0);
  CHECK(one.out == two.out);
  CHECK(read_file(dir.in_ws("one.yaml")) == read_file(dir.in_ws("two.yaml")));
}

TEST_CASE("cli: calibrate rejects bad input before anything runs, writing nothing", "[cli][calibrate][bad_input]")
{
  struct Case {
    const char* what;
    std::function<void(std::string&, std::string&)> edit;
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"a row that matches no point",
       [](std::string&, std::string& csv) { replace_once(csv, "\n4096,", "\n8192,"); },
       {},
       "tiny.csv:6:1: error: workload.message_size: no point of"},
      {"an unknown cost in --fit",
       nullptr,
       {"--fit", "guest_send_syscall,nope"},
       "--fit nope: error: unknown cost (allowed for hv_sock: clock_ghz, guest_user_per_call,"},
      {"a cost of another transport",
       nullptr,
       {"--fit", "virtio_guest_kick"},
       "--fit virtio_guest_kick: error: a cost of virtio_vsock and firecracker_vsock, not of hv_sock"},
      {"no validation.measurements",
       [](std::string& yaml, std::string&) { replace_once(yaml, "measurements: tiny.csv", "{}"); },
       {},
       "error: validation.measurements: missing"},
      {"a measurements row without a figure",
       [](std::string&, std::string& csv) { replace_once(csv, "1024,throughput_MBps,500,", "1024,throughput_MBps,,"); },
       {},
       "tiny.csv:5:1: error: a row needs a metric and a mean or median"},
      {"a measurements file without rows",
       [](std::string&, std::string& csv) { csv = "workload.message_size,metric,mean,source\n"; },
       {},
       "tiny.csv: error: no rows"},
      {"a --hold-out with an unknown key",
       nullptr,
       {"--hold-out", "workload.message_sise=256"},
       "--hold-out workload.message_sise=256: error: unknown key 'workload.message_sise'"},
      {"a --hold-out leaving no fit row",
       nullptr,
       {"--hold-out", "direction=guest_to_host"},
       "--hold-out: error: the filters hold out all 4 row(s)"},
      {"more folds than fit rows", nullptr, {"--folds", "5"}, "--folds 5: error: more folds than fit rows"},
      {"an unknown optimiser", nullptr, {"--optimiser", "lbfgs"}, "--optimiser: lbfgs not in"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.what)
    {
      TempDir dir;
      const std::string file = c.edit ? tiny_copy(dir, c.edit) : kCalibrate + "/tiny.yaml";
      std::vector<std::string> args = {"calibrate", file, "--output", dir.in_ws("out.yaml"), "-q"};
      args.insert(args.end(), c.extra.begin(), c.extra.end());
      const Run r = run_cli(dir, args);
      INFO("stderr: " << r.err);
      CHECK(r.status == 2);
      CHECK(r.err.find(c.message) != std::string::npos);
      CHECK(r.out.empty());
      CHECK_FALSE(fs::exists(dir.in_ws("out.yaml")));
    }
  }
  SECTION("no --output")
  {
    TempDir dir;
    const Run r = run_cli(dir, {"calibrate", kCalibrate + "/tiny.yaml"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--output is required") != std::string::npos);
  }
}
