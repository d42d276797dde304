// Ties among costs (transports/costs.hpp CostTie): which ties a profile
// keeps, calibrate fitting a tie as one cost and recovering it from figures
// the model produced, and the refusal of a fit that breaks a tie or ends on
// a bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "app/calibrate/calibrate.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/experiment/registry.hpp"
#include "transports/simulate.hpp"
#include "transports/transport.hpp"

#include "calibrate_support.hpp"

namespace fs = std::filesystem;
using namespace vsim;
using namespace vsim::app;

namespace {

const std::string kData = test::kCalibrateData;
const std::vector<std::string> kRemote = {"virtio_guest_rx_copy_bytes_per_cycle", "virtio_host_rx_copy_bytes_per_cycle",
                                          "virtio_host_guest_copy_bytes_per_cycle"};

using test::Scratch;
using test::write;

const TieState& state_of(const std::vector<TieState>& states, const std::string& tie)
{
  for (const TieState& s : states)
    if (s.tie->name == tie)
      return s;
  throw std::logic_error("test bug: no tie " + tie);
}

CalibrateHooks hooks()
{
  return test::calibrate_hooks();
}

// tiny-virtio.yaml with 32 MB per point and its figures made by the model
// itself with `costs` set: dir/made.yaml and dir/made.csv.
std::string made_up_study(const fs::path& dir, const std::map<std::string, double>& costs)
{
  std::string text = test::read_text(kData + "/tiny-virtio.yaml");
  text.replace(text.find("measurements: tiny-virtio.csv"), 29, "measurements: made.csv");
  text.replace(text.find("total_bytes: 4MB"), 16, "total_bytes: 32MB");
  const fs::path yaml = dir / "made.yaml";
  write(yaml, text);
  test::write_model_figures(yaml, dir / "made.csv", costs, {"direction", "workload.message_size"});
  return yaml.string();
}

// hv_sock's tiny study with figures the model made from hyperv-2019's own
// costs (made.yaml, made.csv in the scratch directory); the experiment's path.
std::string made_study(const Scratch& s)
{
  std::string text = test::read_text(kData + "/tiny.yaml");
  text.replace(text.find("measurements: tiny.csv"), 22, "measurements: made.csv");
  write(s.dir / "made.yaml", text);
  test::write_model_figures(s.dir / "made.yaml", s.dir / "made.csv", {}, {"workload.message_size"});
  return (s.dir / "made.yaml").string();
}

} // namespace

TEST_CASE("ties: a profile keeps a tie when its members agree inside the situation's range", "[ties]")
{
  const PlatformProfile* kvm2024 = find_profile("kvm-2024");
  REQUIRE(kvm2024 != nullptr);
  std::map<std::string, double> v = kvm2024->costs;
  const auto states = tie_states("virtio_vsock", v);
  REQUIRE(states.size() == 2);
  CHECK(state_of(states, "copy_hot").kept);
  CHECK(state_of(states, "copy_remote").kept);
  // One member apart: broken, the values named.
  v["virtio_host_rx_copy_bytes_per_cycle"] = 7;
  const TieState differ = state_of(tie_states("virtio_vsock", v), "copy_remote");
  CHECK_FALSE(differ.kept);
  CHECK(differ.why.find("values differ") != std::string::npos);
  CHECK(differ.why.find("virtio_host_rx_copy_bytes_per_cycle 7") != std::string::npos);
  CHECK(differ.why.find("outside") == std::string::npos); // 7 is inside 2.5 .. 16
  // Apart and one of them outside the situation's range: both faults named.
  v["virtio_host_guest_copy_bytes_per_cycle"] = 1.37;
  const TieState both = state_of(tie_states("virtio_vsock", v), "copy_remote");
  CHECK_FALSE(both.kept);
  CHECK(both.why.find("values differ") == 0);
  CHECK(both.why.find("; virtio_host_guest_copy_bytes_per_cycle outside the situation's range 2.5 .. 16") !=
        std::string::npos);
  // All equal, below the situation's range (another core's lines: at least
  // 2.5 bytes/cycle): broken too.
  for (const std::string& m : kRemote)
    v[m] = 1.41;
  const TieState slow = state_of(tie_states("virtio_vsock", v), "copy_remote");
  CHECK_FALSE(slow.kept);
  CHECK(slow.why.find("outside the situation's range 2.5 .. 16") != std::string::npos);
  // A member missing.
  v.erase("virtio_host_copy_bytes_per_cycle");
  CHECK(state_of(tie_states("virtio_vsock", v), "copy_hot").why == "virtio_host_copy_bytes_per_cycle has no value");
  // hv_sock has no ties; the shared guest copy is tied only under virtio.
  CHECK(tie_states("hv_sock", kvm2024->costs).empty());
  CHECK(tie_of("guest_copy_bytes_per_cycle", "hv_sock") == nullptr);
  REQUIRE(tie_of("guest_copy_bytes_per_cycle", "virtio_vsock") != nullptr);
  CHECK(std::string(tie_of("guest_copy_bytes_per_cycle", "virtio_vsock")->name) == "copy_hot");
}

TEST_CASE("ties: calibrate fits a tie as one cost inside the situation's range", "[ties][calibrate]")
{
  const CostDecl* vhost = nullptr;
  const std::vector<CostDecl> decls = all_cost_decls();
  for (const CostDecl& d : decls)
    if (std::string(d.name) == "virtio_host_guest_copy_bytes_per_cycle")
      vhost = &d;
  REQUIRE(vhost != nullptr);
  const FitCost c = fit_cost(*vhost, 10, "virtio_vsock");
  CHECK(c.tie == "copy_remote");
  CHECK(c.tied == std::vector<std::string>{kRemote[0], kRemote[1]});
  CHECK(c.decl.plausible_min == 2.5); // the situation's range, inside the member's own 1 .. 32
  CHECK(c.decl.plausible_max == 16);
  // The sensitivity analysis considers the tie's first member only.
  CHECK(candidate_rule(*vhost, "virtio_vsock").find("tied to virtio_guest_rx_copy_bytes_per_cycle") == 0);
  for (const CostDecl& d : decls)
    if (std::string(d.name) == kRemote[0])
      CHECK(candidate_rule(d, "virtio_vsock").empty());

  // --fit naming two members of one tie is refused before anything runs.
  CalibrateOptions opt;
  opt.fit = {"virtio_host_rx_copy_bytes_per_cycle", "virtio_host_guest_copy_bytes_per_cycle"};
  opt.folds = 0;
  CHECK_THROWS_WITH(load_calibration(kData + "/tiny-virtio.yaml", opt),
                    Catch::Contains("virtio_host_rx_copy_bytes_per_cycle and virtio_host_guest_copy_bytes_per_cycle "
                                    "are tied (copy_remote"));
}

TEST_CASE("ties: calibrate recovers a tie from figures a known profile produced", "[ties][calibrate]")
{
  Scratch s("ties");
  // The truth: every copy of another core's lines at 3.5 bytes/cycle,
  // where it binds at 64 KiB (above ~6 another cost binds and the rows
  // cannot see it). The start breaks the tie: 7, 6 and 5.5.
  std::map<std::string, double> truth;
  for (const std::string& m : kRemote)
    truth[m] = 3.5;
  const std::string yaml = made_up_study(s.dir, truth);
  CalibrateOptions opt;
  opt.fit = {"virtio_host_guest_copy_bytes_per_cycle"};
  opt.sets = {"costs.virtio_guest_rx_copy_bytes_per_cycle=7", "costs.virtio_host_rx_copy_bytes_per_cycle=6",
              "costs.virtio_host_guest_copy_bytes_per_cycle=5.5"};
  opt.folds = 0;
  opt.max_evaluations = 16;
  opt.name = "recovered";
  const CalibrationInput in = load_calibration(yaml, opt);
  REQUIRE(in.named.size() == 1);
  CHECK(in.named[0].start == 5.5);
  const CalibrationResult r = calibrate(in, opt, hooks());
  REQUIRE(r.moves.size() == 1);
  CHECK(r.moves[0].tie == "copy_remote");
  CHECK(r.moves[0].after == Approx(3.5).epsilon(0.03)); // 3% of the truth
  CHECK(r.mae_before > 5);
  CHECK(r.mae_fit < 1);
  CHECK_FALSE(r.kept_start);
  // Every member takes the value; the profile keeps its ties.
  const PlatformProfile p = calibrated_profile(in, opt, r);
  for (const std::string& m : kRemote) {
    CHECK(p.costs.at(m) == r.moves[0].after);
    CHECK(p.provenance.at(m).source == "fitted");
  }
  CHECK(p.provenance.at(kRemote[0]).note.find("tied to virtio_host_guest_copy_bytes_per_cycle (copy_remote") == 0);
  for (const TieState& t : tie_states("virtio_vsock", p.costs))
    CHECK(t.kept);
  CHECK(refusals(r, p, opt).empty());
}

TEST_CASE("ties: a fit that breaks a tie or ends on a bound is refused unless asked", "[ties][calibrate]")
{
  const PlatformProfile* kvm2024 = find_profile("kvm-2024");
  REQUIRE(kvm2024 != nullptr);
  PlatformProfile p = *kvm2024;
  CalibrationResult r;
  r.moves.push_back({"virtio_zero_bytes_per_cycle", "bytes/cycle", 8, 2, 2, 32, true, "", {}});
  CalibrateOptions opt;
  std::vector<std::string> why = refusals(r, p, opt);
  REQUIRE(why.size() == 1);
  CHECK(why[0].find("costs.virtio_zero_bytes_per_cycle = 2 sits on a bound of its plausible range 2 .. 32") == 0);
  // A fit that kept the start moved nothing onto a bound.
  r.kept_start = true;
  CHECK(refusals(r, p, opt).empty());
  r.kept_start = false;
  opt.allow_bound = true;
  CHECK(refusals(r, p, opt).empty());
  // A broken tie, named.
  p.costs["virtio_host_copy_bytes_per_cycle"] = 30;
  why = refusals(r, p, opt);
  REQUIRE(why.size() == 1);
  CHECK(why[0].find("tie copy_hot is broken: values differ: guest_copy_bytes_per_cycle ") == 0);
  opt.allow_broken_ties = true;
  CHECK(refusals(r, p, opt).empty());
}

TEST_CASE("calibrate: one joint fit of several experiments of one machine", "[ties][calibrate][joint]")
{
  Scratch s("joint");
  // tiny-virtio's figures made at copy_remote 3.5, its two directions as two
  // experiments (each its own file and rows): fitted as one.
  std::map<std::string, double> truth;
  for (const std::string& m : kRemote)
    truth[m] = 3.5;
  const std::string both = made_up_study(s.dir, truth);
  const std::string text = test::read_text(both), rows = test::read_text((s.dir / "made.csv").string());
  auto split = [&](const std::string& dir) {
    std::string t = text;
    t.replace(t.find("direction: [guest_to_host, host_to_guest]"), 41, "direction: [" + dir + "]");
    t.replace(t.find("measurements: made.csv"), 22, "measurements: " + dir + ".csv");
    t.replace(t.find("name: tiny-virtio-calibration"), 29, "name: tiny-" + dir);
    write(s.dir / (dir + ".yaml"), t);
    std::string csv = "direction,workload.message_size,metric,mean,source\n";
    std::size_t at = 0;
    while ((at = rows.find("\n" + dir + ",", at)) != std::string::npos) {
      const std::size_t end = rows.find('\n', at + 1);
      csv += rows.substr(at + 1, end - at);
      at = end;
    }
    write(s.dir / (dir + ".csv"), csv);
    return (s.dir / (dir + ".yaml")).string();
  };
  const std::vector<std::string> files = {split("guest_to_host"), split("host_to_guest")};
  CalibrateOptions opt;
  opt.fit = {"virtio_host_guest_copy_bytes_per_cycle"};
  opt.sets = {"costs.virtio_guest_rx_copy_bytes_per_cycle=5.5", "costs.virtio_host_rx_copy_bytes_per_cycle=5.5",
              "costs.virtio_host_guest_copy_bytes_per_cycle=5.5"};
  opt.folds = 2;
  opt.max_evaluations = 16;
  opt.fold_evaluations = 6;
  opt.name = "joint";
  opt.experiment_arg = files[0] + ", " + files[1];
  const CalibrationInput in = load_calibration(files, opt);
  REQUIRE(in.studies.size() == 2);
  REQUIRE(in.rows.size() == 4);
  CHECK(in.rows[2].study == 1);
  CHECK(in.row_label(0) == "tiny-guest_to_host: direction=guest_to_host, workload.message_size=4096: throughput_MBps");
  const CalibrationResult r = calibrate(in, opt, hooks());
  REQUIRE(r.moves.size() == 1);
  CHECK(r.moves[0].after == Approx(3.5).epsilon(0.03));
  CHECK(r.mae_fit < 1);
  // Each fold's fit predicts rows of both experiments it did not see.
  CHECK(r.fold_mae.size() == 2);
  const PlatformProfile p = calibrated_profile(in, opt, r);
  REQUIRE(p.fit.has_value());
  CHECK(p.fit->rows.size() == 4);
  CHECK(p.fit->rows[3].keys.find("tiny-host_to_guest: ") == 0);
  CHECK(p.fit->measurements == "guest_to_host.csv, host_to_guest.csv");
  CHECK(p.calibrated.count("guest_to_host") == 1);
  CHECK(p.calibrated.count("host_to_guest") == 1);

  // Experiments of different machines, or giving a cost different values,
  // are no joint fit (exit 2, before anything runs).
  std::string other = test::read_text(files[1]);
  other.replace(other.find("platform: kvm-2024"), 18, "platform: kvm-2019");
  write(s.dir / "other.yaml", other);
  CHECK_THROWS_WITH(load_calibration(std::vector<std::string>{files[0], (s.dir / "other.yaml").string()}, opt),
                    Catch::Contains("other.yaml: error: platform kvm-2019 (virtio_vsock) is not ") &&
                        Catch::Contains("(allowed: experiments of one machine in one fit"));
  std::string costs = test::read_text(files[1]);
  costs += "costs:\n  virtio_host_signal: 1234\n";
  write(s.dir / "costs.yaml", costs);
  CalibrateOptions plain = opt;
  plain.sets.clear();
  CHECK_THROWS_WITH(load_calibration(std::vector<std::string>{files[0], (s.dir / "costs.yaml").string()}, plain),
                    Catch::Contains("costs.yaml: error: costs.virtio_host_signal is 1234 there and "));
}

TEST_CASE("calibrate --ensemble: members spread along what the rows cannot tell apart, not across it",
          "[calibrate][ensemble]")
{
  Scratch s("ensemble");
  // hv_sock's tiny study with figures the model made from hyperv-2019's own
  // costs. At small messages the Linux writer binds, and its user time per
  // call and its send syscall are charged one after the other: the rows
  // see their sum (707 cycles), not how it divides.
  const std::string made = made_study(s);
  CalibrateOptions opt;
  opt.fit = {"guest_user_per_call", "guest_send_syscall"};
  opt.folds = 0;
  opt.max_evaluations = 12;
  opt.ensemble = 8;
  opt.name = "ensemble";
  const CalibrationInput in = load_calibration(made, opt);
  const double user = in.start->costs.at("guest_user_per_call"), sys = in.start->costs.at("guest_send_syscall");
  const CalibrationResult r = calibrate(in, opt, hooks());
  REQUIRE(r.moves.size() == 2);
  CHECK(r.moves[0].name == "guest_user_per_call"); // declaration order: the shared cost first
  REQUIRE(r.members.size() >= 6);
  CHECK(r.draw_objectives.size() <= 24); // at most 3 batches of 8 draws
  CHECK(r.band > r.central_objective);
  // Each member's costs, and their sum.
  std::vector<double> u, k, sum;
  for (const auto& m : r.members) {
    u.push_back(m[0]);
    k.push_back(m[1]);
    sum.push_back(m[0] + m[1]);
  }
  auto spread = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.back() / v.front();
  };
  auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };
  INFO("user " << spread(u) << " syscall " << spread(k) << " sum " << spread(sum));
  CHECK(spread(u) > 1.5); // along: each part moves a lot
  CHECK(spread(k) > 1.5);
  CHECK(spread(sum) < 1.3); // across: the sum the rows see moves less than either part
  CHECK(spread(sum) < spread(u) / 1.3);
  CHECK(spread(sum) < spread(k) / 1.3);
  CHECK(mean(sum) == Approx(user + sys).epsilon(0.08));
  // The parts trade against each other.
  double cov = 0;
  for (std::size_t i = 0; i < u.size(); ++i)
    cov += (u[i] - mean(u)) * (k[i] - mean(k));
  CHECK(cov < 0);
  // The profile stores them, equal weights, and reads back.
  const PlatformProfile p = calibrated_profile(in, opt, r);
  REQUIRE(p.ensemble.has_value());
  CHECK(p.ensemble->members.size() == r.members.size());
  CHECK(p.ensemble->members[0].weight == Approx(1.0 / static_cast<double>(r.members.size())));
  CHECK(p.ensemble->members[0].costs.size() == 2);
  CHECK(p.ensemble->noise_percent == 5);
}

TEST_CASE("calibrate --ensemble-only: the start's profile as it is, with an ensemble around its values",
          "[calibrate][ensemble]")
{
  Scratch s("ensemble-only");
  const std::string made = made_study(s);
  CalibrateOptions opt;
  opt.fit = {"guest_user_per_call", "guest_send_syscall"};
  opt.folds = 0;
  opt.ensemble = 8;
  opt.ensemble_only = true;
  opt.name = "ensemble-only";
  const CalibrationInput in = load_calibration(made, opt);
  const CalibrationResult r = calibrate(in, opt, hooks());
  CHECK(r.kept_start);
  CHECK(r.search_stop == "no search: --ensemble-only keeps the start's values");
  REQUIRE(r.members.size() >= 2);
  CHECK(r.ensemble_centre ==
        std::vector<double>{in.start->costs.at("guest_user_per_call"), in.start->costs.at("guest_send_syscall")});
  const PlatformProfile p = calibrated_profile(in, opt, r);
  CHECK(p.name == "ensemble-only");
  CHECK(p.costs == in.start->costs);
  CHECK(p.provenance.at("guest_user_per_call").source == in.start->provenance.at("guest_user_per_call").source);
  CHECK(p.fit.has_value() == in.start->fit.has_value());
  REQUIRE(p.ensemble.has_value());
  CHECK(p.ensemble->members.size() == r.members.size());
  CHECK(p.ensemble->method.find("not moved: --ensemble-only") != std::string::npos);
}

TEST_CASE("calibrate: a profile of another name is another machine's, and says where its costs come from",
          "[calibrate]")
{
  Scratch s("new-machine");
  const std::string made = made_study(s);
  CalibrateOptions opt;
  opt.fit = {"guest_send_syscall"};
  opt.folds = 0;
  opt.max_evaluations = 6;
  opt.name = "my-host";
  opt.hardware = {{"host_kernel", "6.1"}, {"cpu", "a test CPU"}};
  const CalibrationInput in = load_calibration(made, opt);
  REQUIRE(in.start->name == "hyperv-2019");
  const CalibrationResult r = calibrate(in, opt, hooks());
  const PlatformProfile p = calibrated_profile(in, opt, r);
  // Only what was given of the machine, in the file's order of the keys.
  REQUIRE(p.hardware.size() == hardware_keys().size()); // every key, so that none is inherited from the base
  CHECK(p.hardware[0] == std::pair<std::string, std::string>{"cpu", "a test CPU"});
  CHECK(p.hardware[1] == std::pair<std::string, std::string>{"cpu_ghz", "not given"});
  CHECK(p.hardware[2] == std::pair<std::string, std::string>{"host_kernel", "6.1"});
  CHECK(p.doc.find(in.start->doc.substr(0, 40)) == std::string::npos);
  CHECK(p.doc.find("starting from profile hyperv-2019: the costs not fitted are hyperv-2019's") != std::string::npos);
  CHECK(p.base == "hyperv-2019");
  const CostProvenance& kept = p.provenance.at("guest_isr");
  CHECK(kept.source == "base");
  CHECK(kept.note.starts_with("profile hyperv-2019's value ("));
  // The same name: a refit of the same machine keeps its hardware, and --hardware amends it.
  opt.name = "hyperv-2019";
  opt.hardware = {{"notes", "refit"}};
  const PlatformProfile same = calibrated_profile(in, opt, r);
  CHECK(same.base == in.start->base);
  CHECK(same.provenance.at("guest_isr").source == in.start->provenance.at("guest_isr").source);
  REQUIRE(same.hardware.size() >= in.start->hardware.size());
  CHECK(same.hardware.back() == std::pair<std::string, std::string>{"notes", "refit"});
}

TEST_CASE("calibrate: a start given as a file describes the machine being fitted, whatever its name", "[calibrate]")
{
  // As kvm-2024's own start (experiments/calibration/platforms/
  // kvm-2024-start.yaml): a file on a shipped base, with the machine's
  // hardware and the costs it sets itself. The profile fitted from it keeps
  // them, written out (not left to the base, whose values differ).
  Scratch s("file-start");
  write(s.dir / "my-start.yaml", "name: my-start\n"
                                 "description: \"a test machine, as its start file says\"\n"
                                 "transport: hv_sock\n"
                                 "base: hyperv-2019\n"
                                 "hardware:\n"
                                 "  cpu: \"a file CPU\"\n"
                                 "costs:\n"
                                 "  guest_isr: {value: 777, source: given, note: \"set by the start file\"}\n");
  std::string text = test::read_text(made_study(s));
  text.replace(text.find("platform: hyperv-2019"), 21, "platform: my-start.yaml");
  write(s.dir / "made.yaml", text);
  CalibrateOptions opt;
  opt.fit = {"guest_send_syscall"};
  opt.folds = 0;
  opt.max_evaluations = 6;
  opt.name = "my-host";
  const CalibrationInput in = load_calibration((s.dir / "made.yaml").string(), opt);
  REQUIRE(in.start->name == "my-start");
  const CalibrationResult r = calibrate(in, opt, hooks());
  const PlatformProfile p = calibrated_profile(in, opt, r);
  CHECK(p.base == "hyperv-2019");
  CHECK(p.costs.at("guest_isr") == 777);
  CHECK(p.provenance.at("guest_isr").source == "given");
  CHECK(p.doc.starts_with("a test machine, as its start file says"));
  CHECK(std::find(p.hardware.begin(), p.hardware.end(), std::pair<std::string, std::string>{"cpu", "a file CPU"}) !=
        p.hardware.end());
  // Written and read back: the start's own cost is in the file, not taken
  // from the base.
  const PlatformProfile back = parse_profile(write_profile(p), "back.yaml",
                                             [](const std::string& name, const std::string&) -> const PlatformProfile& {
                                               const PlatformProfile* b = find_profile(name);
                                               REQUIRE(b != nullptr);
                                               return *b;
                                             });
  CHECK(back.costs.at("guest_isr") == 777);
}
