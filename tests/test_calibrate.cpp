// The calibration layer (app/calibrate): a known profile recovered from
// figures the model itself produced, the identifiability analysis, the
// hold-out and fold arithmetic, the checks made before anything runs.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "app/calibrate/calibrate.hpp"
#include "app/calibrate/identify.hpp"
#include "app/calibrate/optimiser.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/experiment/registry.hpp"
#include "transports/simulate.hpp"

#include "calibrate_support.hpp"

namespace fs = std::filesystem;
using namespace vsim;
using namespace vsim::app;

namespace {

using test::Scratch;
using test::write;
const std::string kTinyData = test::kCalibrateData;

// tiny.yaml with its measurements in `csv`.
std::string experiment_text(const std::string& csv)
{
  std::string text = test::read_text(kTinyData + "/tiny.yaml");
  const std::string from = "measurements: tiny.csv";
  text.replace(text.find(from), from.size(), "measurements: " + csv);
  return text;
}

CalibrateHooks hooks()
{
  return test::calibrate_hooks();
}

// "Measurements": the model's own throughput with `costs` set, one row per
// point of tiny.yaml, written to dir/made.csv; returns the experiment file.
std::string made_up_study(const fs::path& dir, const std::map<std::string, double>& costs)
{
  const fs::path yaml = dir / "made.yaml";
  write(yaml, experiment_text("made.csv"));
  test::write_model_figures(yaml, dir / "made.csv", costs, {"workload.message_size"});
  return yaml.string();
}

double start_of(const std::string& yaml, const std::string& cost)
{
  return load_experiment(yaml, {}, registry()).base.number("costs." + cost);
}

} // namespace

TEST_CASE("calibrate recovers perturbed costs from figures the model produced", "[calibrate]")
{
  Scratch s("calibrate");
  const std::string base = kTinyData + "/tiny.yaml";
  // Two costs the rows identify (one per message, one per byte), moved 25%.
  const double copy = start_of(base, "guest_copy_bytes_per_cycle") * 1.25;
  const double signal = start_of(base, "host_signal_latency") / 1.25; // inside the plausible range
  const std::string yaml =
      made_up_study(s.dir, {{"guest_copy_bytes_per_cycle", copy}, {"host_signal_latency", signal}});
  CalibrateOptions opt;
  opt.fit = {"host_signal_latency", "guest_copy_bytes_per_cycle"};
  opt.folds = 0;
  opt.max_evaluations = 40;
  opt.name = "recovered";
  const CalibrationInput in = load_calibration(yaml, opt);
  const CalibrationResult r = calibrate(in, opt, hooks());
  REQUIRE(r.moves.size() == 2);
  // Declaration order: the shared copy bandwidth first.
  CHECK(r.moves[0].name == "guest_copy_bytes_per_cycle");
  CHECK(r.moves[0].after == Approx(copy).epsilon(0.03)); // tolerance: 3% of the true value
  CHECK(r.moves[1].name == "host_signal_latency");
  CHECK(r.moves[1].after == Approx(signal).epsilon(0.03));
  CHECK(r.mae_before > 5);
  CHECK(r.mae_fit < 1);
  CHECK_FALSE(r.kept_start);

  // The profile: every cost, the fitted ones "fitted" with a note naming
  // the experiment, the others as the starting profile had them.
  const PlatformProfile p = calibrated_profile(in, opt, r);
  CHECK(p.name == "recovered");
  CHECK(p.costs.at("host_signal_latency") == r.moves[1].after);
  CHECK(p.provenance.at("host_signal_latency").source == "fitted");
  CHECK(p.provenance.at("host_signal_latency").note.find(yaml) == std::string::npos); // the experiment as given
  CHECK(p.costs.at("guest_send_syscall") == in.start->costs.at("guest_send_syscall"));
  CHECK(p.costs.size() == in.start->costs.size());
  // Another name: another machine, and nothing was given of it (issue 51, item 3).
  CHECK(std::all_of(p.hardware.begin(), p.hardware.end(), [](const auto& h) { return h.second == "not given"; }));
  REQUIRE(p.fit.has_value());
  CHECK(p.fit->rows.size() == 4);
  CHECK(p.fit->fitted == std::vector<std::string>{"guest_copy_bytes_per_cycle", "host_signal_latency"});
  CHECK(p.calibrated.at("guest_to_host").at("workload.message_size") == std::make_pair(256.0, 65536.0));
}

TEST_CASE("the sensitivity analysis names the costs the rows cannot identify", "[calibrate]")
{
  Scratch s("calibrate");
  const std::string yaml = made_up_study(s.dir, {});
  CalibrateOptions opt;
  opt.folds = 0;
  opt.max_evaluations = 1; // the analysis is the point here
  const CalibrationInput in = load_calibration(yaml, opt);
  // The rule: the clock and the jitters are never candidates.
  CHECK(std::none_of(in.candidates.begin(), in.candidates.end(),
                     [](const CostDecl& d) { return std::string(d.name) == "clock_ghz"; }));
  const CalibrationResult r = calibrate(in, opt, hooks());
  auto why = [&](const std::string& name) {
    for (const auto& [n, w] : r.not_fitted)
      if (n == name)
        return w;
    return std::string("fitted");
  };
  // Guest to host, the guest only sends: its receive path is never charged.
  CHECK(why("guest_recv_syscall").find("no row moves it") == 0);
  CHECK(why("host_send_call").find("no row moves it") == 0);
  CHECK(r.fitted.size() <= in.fit_rows.size());
  CHECK_FALSE(r.fitted.empty());
  REQUIRE(r.elasticity.size() == in.fit_rows.size());
  CHECK(r.elasticity[0].size() == r.elasticity_costs.size());
}

TEST_CASE("identify keeps one of two collinear columns and drops a column no row moves", "[calibrate]")
{
  // Columns: a, b = -2a (moves the rows only together with a), c, d = 0.
  const std::vector<std::vector<double>> e = {
      {0.5, -1.0, 0.1, 0.0}, {0.2, -0.4, 0.6, 0.01}, {0.1, -0.2, -0.3, 0.0}, {0.4, -0.8, 0.2, 0.0}};
  const Identification id = identify(e, {"a", "b", "c", "d"}, 4);
  CHECK(id.chosen == std::vector<std::size_t>{1, 2}); // b first: the longest column
  REQUIRE(id.out.size() == 2);
  CHECK(id.out[0].first == 0);
  CHECK(id.out[0].second.find("together with") != std::string::npos);
  CHECK(id.out[0].second.find("closest b") != std::string::npos);
  CHECK(id.out[1].first == 3);
  CHECK(id.out[1].second.find("no row moves it") == 0);
  // At most as many as allowed: with one, c is left for want of rows.
  const Identification one = identify(e, {"a", "b", "c", "d"}, 1);
  CHECK(one.chosen == std::vector<std::size_t>{1});
  CHECK(one.out.size() == 3);
}

TEST_CASE("folds and errors: fit rows dealt round-robin, MAE in percent", "[calibrate]")
{
  const auto f = fold_rows(7, 3);
  REQUIRE(f.size() == 3);
  CHECK(f[0] == std::vector<std::size_t>{0, 3, 6});
  CHECK(f[1] == std::vector<std::size_t>{1, 4});
  CHECK(f[2] == std::vector<std::size_t>{2, 5});
  CHECK(fold_rows(5, 0).empty());
  CHECK(mae_percent({110, 90, 200}, {100, 100, 100}, {0, 1}) == Approx(10));
  CHECK(mae_percent({110, 90, 200}, {100, 100, 100}, {2}) == Approx(100));
  CHECK(mae_percent({1}, {1}, {}) == -1);
}

TEST_CASE("the search maps each cost to its plausible range, log-spaced when positive", "[calibrate]")
{
  FitCost c{CostDecl{"x", "cycles", 0, 1e7, "", "", 100, 10000, "", ""}, 1000, "", {}};
  CHECK(to_unit(c, 100) == Approx(0));
  CHECK(to_unit(c, 1000) == Approx(0.5));
  CHECK(to_unit(c, 1e6) == Approx(1)); // a start outside is moved to the bound
  CHECK(from_unit(c, 0.5) == Approx(1000));
  FitCost lin{CostDecl{"y", "cycles", 0, 1e7, "", "", 0, 400, "", ""}, 100, "", {}};
  CHECK(to_unit(lin, 100) == Approx(0.25));
  CHECK(from_unit(lin, 1) == Approx(400));
}

TEST_CASE("calibrate's checks before anything runs", "[calibrate]")
{
  const std::string tiny = kTinyData + "/tiny.yaml";
  auto fails = [&](CalibrateOptions opt, const std::string& what) {
    INFO(what);
    try {
      load_calibration(tiny, opt);
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains(what));
    }
  };
  CalibrateOptions o;
  o.fit = {"no_such_cost"};
  fails(o, "--fit no_such_cost: error: unknown cost (allowed for hv_sock: clock_ghz, ");
  o.fit = {"virtio_guest_kick"};
  fails(o, "a cost of virtio_vsock and firecracker_vsock, not of hv_sock");
  o.fit = {};
  o.hold_out = {"workload.message_size=256,nope=1"};
  fails(o, "--hold-out workload.message_size=256,nope=1: error: unknown key 'nope'");
  o.hold_out = {"direction=guest_to_host"};
  fails(o, "nothing is left to fit");
  o.hold_out = {"workload.message_size=8KiB"};
  fails(o, "matches no row");
  o.hold_out = {};
  o.folds = 5;
  fails(o, "--folds 5: error: more folds than fit rows");

  // Held out by the row's own cell, sizes in any spelling.
  o.folds = 0;
  o.hold_out = {"workload.message_size=4KiB", "workload.message_size=65536"};
  const CalibrationInput in = load_calibration(tiny, o);
  CHECK(in.fit_rows == std::vector<std::size_t>{0, 1});
  CHECK(in.held_rows == std::vector<std::size_t>{2, 3});
  o.fit = {"guest_send_syscall", "host_dpc", "host_rx_packet"};
  fails(o, "3 costs for 2 fit row(s)");
}

TEST_CASE("a fit that does not predict unseen rows better than the start keeps the start (issue 50)", "[calibrate]")
{
  Scratch s("calibrate-cv");
  // The model's own figures with the starting costs, each row then moved
  // by noise the costs cannot explain: +9%, -9%, -9%, +9% over the sizes.
  const std::string yaml = made_up_study(s.dir, {});
  const fs::path csv = s.dir / "made.csv";
  std::istringstream in_csv(test::read_text(csv.string()));
  std::string out_csv, line;
  const double noise[] = {1.09, 1 / 1.09, 1 / 1.09, 1.09};
  int row = -1;
  while (std::getline(in_csv, line)) {
    if (row >= 0) {
      const std::size_t a = line.find("throughput_MBps,") + 16, b = line.find(',', a);
      line = line.substr(0, a) + fmt::format("{:.17g}", std::stod(line.substr(a, b - a)) * noise[row]) + line.substr(b);
    }
    out_csv += line + "\n";
    ++row;
  }
  REQUIRE(row == 4);
  write(csv, out_csv);
  CalibrateOptions opt;
  opt.fit = {"host_signal_latency", "guest_copy_bytes_per_cycle"};
  opt.folds = 2;
  opt.max_evaluations = 12;
  opt.fold_evaluations = 6;
  opt.name = "noise";
  const CalibrationInput in = load_calibration(yaml, opt);
  const CalibrationResult r = calibrate(in, opt, hooks());
  INFO("before " << r.mae_before << "% cv " << r.mae_cv << "%");
  CHECK(r.mae_before == Approx(100 * (1 - 1 / 1.09) / 2 + 100 * 0.09 / 2).epsilon(0.05));
  CHECK(r.mae_cv >= r.mae_before);
  CHECK(r.kept_start);
  CHECK(r.kept_why == "cross-validation");
  CHECK(r.after == r.before);
  for (const CostMove& m : r.moves)
    CHECK(m.after == m.before);
  CHECK(calibration_text(in, r).find("the starting values are kept (--keep-unvalidated writes the fit)") !=
        std::string::npos);
  const PlatformProfile p = calibrated_profile(in, opt, r);
  CHECK(p.costs.at("host_signal_latency") == in.start->costs.at("host_signal_latency"));
  // Every value from its base: the file says `costs: {}` and reads back.
  const std::string text = write_profile(p);
  CHECK(text.find("\ncosts: {}\n") != std::string::npos);
  const PlatformProfile back =
      parse_profile(text, "noise.yaml", [](const std::string& name, const std::string&) -> const PlatformProfile& {
        return *find_profile(name);
      });
  CHECK(back.costs == p.costs);
  // Asked to, it writes the fit all the same.
  opt.keep_unvalidated = true;
  const CalibrationResult kept = calibrate(in, opt, hooks());
  CHECK_FALSE(kept.kept_start);
  CHECK(kept.kept_why.empty());
  CHECK(kept.mae_fit < kept.mae_before);
}
