// The calibrated span of each platform profile (PlatformProfile::calibrated)
// against the data it was fitted on, and the flag on points outside it
// (app/report/calibration_span.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "app/calibrate/calibrate.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/calibration_span.hpp"
#include "app/validation/measurements.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

using Span = std::map<std::string, std::map<std::string, std::pair<double, double>>>;

// The span of one calibration experiment: the calibration's own derivation
// (app/calibrate: what `vsocksim calibrate` writes), over every row of its
// figures.
Span derive_file(const std::string& file)
{
  const Experiment ex = load_experiment(file, {}, registry());
  const std::string csv =
      (std::filesystem::path(file).parent_path() / ex.base.text("validation.measurements")).string();
  const std::vector<Measurement> rows = load_measurements(csv, registry());
  const std::vector<long> at = match_measurements(ex, rows, csv);
  std::vector<std::size_t> use;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (at[i] >= 0)
      use.push_back(i);
  return calibrated_span(ex, rows, at, use);
}

// The span of experiments/calibration/<profile>.yaml and of its further
// steps, <profile>-<step>.yaml (kvm-2024-latency.yaml).
Span derive(const std::string& profile)
{
  const std::filesystem::path dir = std::filesystem::path(VSIM_SOURCE_DIR) / "experiments" / "calibration";
  Span s = derive_file((dir / (profile + ".yaml")).string());
  std::vector<std::string> steps;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(profile + "-") && name.ends_with(".yaml"))
      steps.push_back(e.path().string());
  }
  std::sort(steps.begin(), steps.end());
  for (const std::string& f : steps)
    s = merged_spans(s, derive_file(f));
  return s;
}

std::string initializer(const Span& s)
{
  std::string out = "{\n";
  for (const auto& [dir, q] : s) {
    out += fmt::format("    {{\"{}\",\n     {{\n", dir);
    for (const auto& [name, r] : q)
      out += fmt::format("         {{\"{}\", {{{:.6g}, {:.6g}}}}},\n", name, r.first, r.second);
    out += "     }},\n";
  }
  return out + "}";
}

} // namespace

TEST_CASE("each profile's calibrated span is that of its calibration experiment and figures", "[calibration]")
{
  for (const PlatformProfile& p : platform_profiles()) {
    INFO(p.name);
    // A profile of start values only (none fitted) claims no span.
    const bool fitted = std::any_of(p.provenance.begin(), p.provenance.end(),
                                    [](const auto& kv) { return kv.second.source == "fitted"; });
    if (!fitted) {
      CHECK(p.calibrated.empty());
      continue;
    }
    const Span derived = derive(p.name);
    INFO("derived span, to paste into transports/profiles.cpp:\n" << initializer(derived));
    CHECK(derived.size() == p.calibrated.size());
    if (derived.size() != p.calibrated.size())
      continue;
    for (const auto& [dir, q] : derived) {
      REQUIRE(p.calibrated.count(dir) == 1);
      REQUIRE(p.calibrated.at(dir).size() == q.size());
      for (const auto& [name, r] : q) {
        INFO(dir << " " << name);
        REQUIRE(p.calibrated.at(dir).count(name) == 1);
        CHECK(p.calibrated.at(dir).at(name).first == Approx(r.first).epsilon(1e-5));
        CHECK(p.calibrated.at(dir).at(name).second == Approx(r.second).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("a point outside its profile's calibrated span is flagged, one inside is not", "[calibration]")
{
  auto point = [](const std::vector<std::string>& sets) {
    return load_experiment_text("platform: kvm-2019\ntransport: virtio_vsock\nworkload: {message_size: 64KiB}\n",
                                "t.yaml", sets, registry())
        .points.at(0)
        .params;
  };
  CHECK(outside_calibration(point({})).empty());
  const auto big = outside_calibration(point({"virtio_vsock.buf_alloc=1MiB"}));
  REQUIRE(big.size() == 1);
  CHECK(big[0] == "effective.buf_alloc_bytes 1MiB: kvm-2019 was fitted on 256KiB only");
  const auto conns = outside_calibration(point({"workload.connections=4"}));
  REQUIRE(conns.size() == 1);
  CHECK(conns[0] == "workload.connections 4: kvm-2019 was fitted on 1 only");
  const auto tiny = outside_calibration(point({"workload.message_size=8B"}));
  REQUIRE(tiny.size() == 1);
  CHECK(tiny[0] == "workload.message_size 8B: kvm-2019 was fitted on 32B to 512KiB");
  // A predicted throughput beyond the fitted figures by more than 10%.
  const double top = find_profile("kvm-2019")->calibrated.at("guest_to_host").at("throughput_MBps").second;
  CHECK(outside_calibration(point({}), {{{"throughput_MBps", top * 1.05}}}).empty());
  const auto fast = outside_calibration(point({}), {{{"throughput_MBps", top * 2}}});
  REQUIRE(fast.size() == 1);
  CHECK(fast[0].rfind("throughput_MBps ", 0) == 0);
  // A round-trip run's throughput is not set against the streams' (issue
  // 51, item 6): a ping-pong far below them says nothing of it.
  const auto ping = outside_calibration(point({"workload.pattern=ping_pong", "workload.transactions=100"}),
                                        {{{"throughput_MBps", 3.5}}});
  CHECK(ping.empty());
  CHECK(outside_calibration(point({}), {{{"throughput_MBps", 3.5}}}).size() == 1); // a stream that slow is flagged
}
