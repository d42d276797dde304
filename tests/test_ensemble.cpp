// Running a profile's ensemble (issue 50, item 4): the members' percentiles
// (ensemble_spread), member-by-member ratios and the effects' intervals,
// and the loader's member points.
#include <cmath>
#include <utility>

#include <catch2/catch.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/stats.hpp"
#include "app/validation/effects.hpp"
#include "transports/profiles.hpp"

using namespace vsim;
using namespace vsim::app;

namespace {

// A design effect's two published rows: the 6.12 tx fast path off (base)
// and on, guest to host, throughput.
std::pair<Measurement, Measurement> fast_path_rows()
{
  Measurement base, changed;
  base.keys = {{"direction", "guest_to_host"}, {"virtio_vsock.tx_fast_path", "false"}};
  changed.keys = {{"direction", "guest_to_host"}, {"virtio_vsock.tx_fast_path", "true"}};
  base.metric = changed.metric = "throughput_MBps";
  return {base, changed};
}

} // namespace

TEST_CASE("ensemble_spread: weighted percentiles, each member at the middle of its weight", "[ensemble]")
{
  MemberValues ten;
  for (int k = 10; k >= 1; --k) // any order
    ten.push_back(k);
  const auto s = ensemble_spread(ten, std::vector<double>(10, 0.1));
  REQUIRE(s);
  CHECK(s->members == 10);
  // Member k (1..10) sits at (k - 0.5) / 10: p10 halfway between 1 and 2.
  CHECK(s->p10 == Approx(1.5));
  CHECK(s->p50 == Approx(5.5));
  CHECK(s->p90 == Approx(9.5));
  CHECK(s->values == ten);

  // Unequal weights: 1 (weight 0.6) at 0.3, 2 (0.2) at 0.7, 3 (0.2) at 0.9.
  const auto w = ensemble_spread({3.0, 1.0, 2.0}, {0.2, 0.6, 0.2});
  REQUIRE(w);
  CHECK(w->p10 == 1.0); // below the first member's place: its value
  CHECK(w->p50 == Approx(1.5));
  CHECK(w->p90 == Approx(3.0));

  // A member without a value is left out of the percentiles, kept in place.
  const auto gap = ensemble_spread({1.0, std::nullopt, 3.0}, {1, 1, 1});
  REQUIRE(gap);
  CHECK(gap->members == 2);
  CHECK(gap->p50 == Approx(2.0));
  CHECK_FALSE(gap->values[1].has_value());

  CHECK_FALSE(ensemble_spread({std::nullopt, std::nullopt}, {1, 1}));
  CHECK_THROWS_AS(ensemble_spread({1.0}, {1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(ensemble_spread({1.0, 2.0}, {1, 0}), std::invalid_argument);
}

TEST_CASE("member_ratios: member by member, nothing across ensembles of different sizes", "[ensemble]")
{
  const MemberValues a = {100.0, 200.0, 0.0, std::nullopt};
  const MemberValues b = {150.0, 200.0, 5.0, 7.0};
  const MemberValues r = member_ratios(a, b);
  REQUIRE(r.size() == 4);
  CHECK(*r[0] == Approx(1.5));
  CHECK(*r[1] == Approx(1.0));
  CHECK_FALSE(r[2].has_value()); // from 0
  CHECK_FALSE(r[3].has_value()); // a member without a value
  CHECK(member_ratios(a, {1.0, 2.0}).empty());
}

TEST_CASE("a design effect's interval is its ratio taken within each member", "[ensemble]")
{
  const auto [base, changed] = fast_path_rows();
  Comparison c;
  c.rows.push_back(ComparisonRow{&base, 0, "mean", 100, 100, 0, {100.0, 80.0, 120.0}, {1.0 / 3, 1.0 / 3, 1.0 / 3}});
  c.rows.push_back(ComparisonRow{&changed, 1, "mean", 130, 110, 0, {110.0, 96.0, 156.0}, {1.0 / 3, 1.0 / 3, 1.0 / 3}});
  const std::vector<DesignEffect> e = design_effects(c);
  REQUIRE(e.size() == 1);
  REQUIRE(e[0].interval);
  // Within each member: 1.1, 1.2, 1.3 (not the ratio of the pooled figures).
  CHECK(e[0].interval->p50 == Approx(1.2));
  CHECK(e[0].interval->p10 == Approx(1.1)); // below the lowest member's place (1/6)
  CHECK(e[0].interval->p90 == Approx(1.3));
  CHECK(e[0].covered()); // 1.3 measured: at the p90
  CHECK(e[0].p50_direction_right());
  CHECK_FALSE(e[0].direction_right() == false); // the central 1.1 is right too
  const EffectSummary s = summarize(e);
  CHECK(s.with_interval == 1);
  CHECK(s.covered == 1);
  CHECK(s.median_half_width == Approx(0.1 / 1.2));
  CHECK(ensemble_summary_text(s).find("covers the published ratio for 100% (1)") != std::string::npos);

  // Measured outside the interval: not covered. Different ensembles: none.
  c.rows[1].measured = 150;
  CHECK_FALSE(design_effects(c)[0].covered());
  c.rows[1].weights = {0.5, 0.5};
  c.rows[1].members = {1.0, 2.0};
  CHECK_FALSE(design_effects(c)[0].interval.has_value());
  CHECK(ensemble_summary_text(summarize(design_effects(c))).empty());
}

TEST_CASE("spread_with_error: the members' mixture of log-normals of the model's error", "[ensemble]")
{
  // One member: a log-normal around it, p10 and p90 at -+1.2816 sigma.
  const auto one = spread_with_error({1.2}, {1}, 0.1);
  REQUIRE(one);
  CHECK(one->p50 == Approx(1.2).epsilon(1e-9));
  CHECK(one->p10 == Approx(1.2 * std::exp(-1.2815516 * 0.1)).epsilon(1e-6));
  CHECK(one->p90 == Approx(1.2 * std::exp(1.2815516 * 0.1)).epsilon(1e-6));
  // Two members of equal weight: the mixture is symmetric about their
  // geometric mean in log space, and wider than either member's own.
  const auto two = spread_with_error({1.0, 1.44}, {0.5, 0.5}, 0.05);
  REQUIRE(two);
  CHECK(two->p50 == Approx(1.2).epsilon(1e-9));
  CHECK(two->p10 * two->p90 == Approx(1.44).epsilon(1e-9));
  CHECK(two->p10 < 1.0);
  CHECK(two->p90 > 1.44);
  // Sigma 0: the members' own percentiles; nothing positive: none.
  const auto none = spread_with_error({1.0, 3.0}, {1, 1}, 0);
  REQUIRE(none);
  CHECK(none->p50 == Approx(2.0));
  CHECK_FALSE(spread_with_error({0.0, std::nullopt}, {1, 1}, 0.1));
  CHECK(spread_with_error({-1.0, 2.0}, {1, 1}, 0.1)->members == 1); // left out
  CHECK_THROWS_AS(spread_with_error({1.0}, {1}, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(spread_with_error({1.0}, {1, 1}, 0.1), std::invalid_argument);
}

TEST_CASE("effect_discrepancy: the rms error of the ratios between a profile's own fit rows", "[ensemble]")
{
  PlatformProfile p;
  CHECK_FALSE(effect_discrepancy(p)); // no fit report
  FitReport fit;
  auto row = [](const std::string& dir, const std::string& metric, double measured, double after,
                const std::string& role = "fit") {
    return FitRow{"direction=" + dir + ", workload.message_size=4096", metric, role, measured, 0, after};
  };
  // guest_to_host throughput: log errors 0, log 1.1, log 0.9; host_to_guest:
  // log 1.2 alone (no pair); a held-out row and another metric's lone row
  // pair with nothing.
  fit.rows = {row("guest_to_host", "throughput_MBps", 100, 100),
              row("guest_to_host", "throughput_MBps", 100, 110),
              row("host_to_guest", "throughput_MBps", 100, 120),
              row("guest_to_host", "throughput_MBps", 100, 90),
              row("guest_to_host", "throughput_MBps", 100, 300, "held-out"),
              row("guest_to_host", "efficiency", 5, 6)};
  fit.mae_fit = 4;
  fit.mae_cv = -1;
  p.fit = fit;
  const auto d = effect_discrepancy(p);
  REQUIRE(d);
  CHECK(d->pairs == 3);
  const double a = std::log(1.1), b = std::log(0.9);
  const double rms = std::sqrt((a * a + b * b + (b - a) * (b - a)) / 3);
  CHECK(d->pair_rms == Approx(rms));
  CHECK(d->inflation == 1);
  CHECK(d->sigma == Approx(rms));
  // Cross-validation worse than the fit: the rows unseen are predicted
  // that much worse, and so the effects.
  p.fit->mae_cv = 6;
  CHECK(effect_discrepancy(p)->inflation == Approx(1.5));
  CHECK(effect_discrepancy(p)->sigma == Approx(1.5 * rms));
  p.fit->mae_cv = 3; // better: never narrower than the pairs say
  CHECK(effect_discrepancy(p)->sigma == Approx(rms));
  // One pair is below the least the figure is taken from.
  p.fit->rows.resize(2);
  CHECK_FALSE(effect_discrepancy(p));
}

TEST_CASE("a design effect with the model's error on top: wider, and covering what the members miss", "[ensemble]")
{
  const auto [base, changed] = fast_path_rows();
  Comparison c;
  const std::vector<double> w = {0.5, 0.5};
  c.rows.push_back(ComparisonRow{&base, 0, "mean", 100, 100, 0, {100.0, 100.0}, w, 0.1});
  c.rows.push_back(ComparisonRow{&changed, 1, "mean", 135, 120, 0, {118.0, 122.0}, w, 0.1});
  std::vector<DesignEffect> e = design_effects(c);
  REQUIRE(e.size() == 1);
  REQUIRE(e[0].interval);
  REQUIRE(e[0].with_error);
  CHECK(e[0].discrepancy == 0.1);
  // 1.35 measured: outside the members' 1.18..1.22, inside their mixture
  // with sigma 0.1 (p90 about 1.2 x exp(1.28 x 0.1) = 1.36).
  CHECK_FALSE(e[0].covered());
  CHECK(e[0].covered_with_error());
  CHECK(e[0].with_error->p90 == Approx(1.365).epsilon(0.003));
  CHECK(e[0].with_error->p10 == Approx(1.2 * 1.2 / 1.365).epsilon(0.003));
  const EffectSummary s = summarize(e);
  CHECK(s.with_error == 1);
  CHECK(s.covered_with_error == 1);
  CHECK(s.discrepancy == 0.1);
  CHECK(s.median_half_width_with_error > s.median_half_width);
  CHECK(ensemble_summary_text(s).find("covers 100% (1 of 1)") != std::string::npos);
  // Without a discrepancy from the profile: the members' interval alone.
  c.rows[0].discrepancy = c.rows[1].discrepancy = 0;
  e = design_effects(c);
  CHECK(e[0].interval);
  CHECK_FALSE(e[0].with_error);
  CHECK(ensemble_summary_text(summarize(e)).find("model's own error") == std::string::npos);
}

TEST_CASE("sim.ensemble: one member point per member, the member's costs but those the experiment sets", "[ensemble]")
{
  const std::string text = "transport: virtio_vsock\nplatform: kvm-2024\nsim: {ensemble: true}\n"
                           "costs: {virtio_guest_vq_add: 300}\n";
  const Experiment ex = load_experiment_text(text, "e.yaml", {}, registry());
  REQUIRE(ex.points.size() == 1);
  const Point& p = ex.points[0];
  REQUIRE(p.members.size() == 16);
  bool differs = false;
  double weights = 0;
  for (const MemberPoint& m : p.members) {
    weights += m.weight;
    CHECK(m.params.number("costs.virtio_guest_vq_add") == 300); // set by the experiment
    differs = differs || m.params.number("costs.host_wakeup_latency") != p.params.number("costs.host_wakeup_latency");
    // Only costs differ from the point's parameters.
    for (const auto& [key, value] : m.params.all())
      if (!key.starts_with("costs."))
        CHECK(p.params.get(key) == value);
  }
  CHECK(differs);
  CHECK(weights == Approx(1.0));
  // Without the key: no member points.
  CHECK(load_experiment_text("transport: virtio_vsock\nplatform: kvm-2024\n", "e.yaml", {}, registry())
            .points[0]
            .members.empty());
  // A profile without an ensemble: refused, saying where.
  try {
    load_experiment_text("transport: hv_sock\nplatform: hyperv-2019\nsim:\n  ensemble: true\n", "e.yaml", {},
                         registry());
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).starts_with("e.yaml:4:13: error: sim.ensemble: platform hyperv-2019 has no "
                                            "ensemble to run"));
  }
}

#include "app/report/advise.hpp"

namespace {

// A point of an ensemble result: its label, and per metric the members' values.
nlohmann::json ensemble_point(const std::string& fast_path,
                              const std::vector<std::pair<std::string, std::vector<double>>>& metrics)
{
  nlohmann::json p;
  p["label"] = {{"virtio_vsock.tx_fast_path", fast_path}, {"workload.message_size", "64KiB"}};
  p["ensemble"] = {{"members", 4}, {"weights", {0.25, 0.25, 0.25, 0.25}}};
  for (const auto& [name, values] : metrics)
    p["metrics"][name] = {{"mean", values[0]}, {"ensemble", {{"values", values}}}};
  return p;
}

} // namespace

TEST_CASE("advise: the figure that tells the members apart as the effect does is the one to measure", "[ensemble]")
{
  // The fast path's gain is 1.1, 1.2, 1.3, 1.4 over the members; the host's
  // CPU at the base point follows it exactly (log-linearly), the guest's
  // does not move with it.
  nlohmann::json doc;
  doc["points"] = nlohmann::json::array({ensemble_point("false", {{"throughput_MBps", {100, 100, 100, 100}},
                                                                  {"host_cpu_percent", {50, 60, 70, 80}},
                                                                  {"guest_cpu_percent", {90, 91, 90, 91}}}),
                                         ensemble_point("true", {{"throughput_MBps", {110, 120, 130, 140}},
                                                                 {"host_cpu_percent", {55, 66, 77, 88}},
                                                                 {"guest_cpu_percent", {95, 95, 95, 95}}})});
  const std::string text = advise_text(doc, "r.json");
  INFO(text);
  CHECK(text.find("virtio_vsock.tx_fast_path: false -> true (points 0 -> 1") != std::string::npos);
  CHECK(text.find("throughput_MBps ratio p50 1.250") != std::string::npos);
  // host_cpu_percent wins (at either point: both follow the gain); not the guest's.
  const std::size_t measure = text.find("    measure host_cpu_percent at point");
  REQUIRE(measure != std::string::npos);
  CHECK(text.find("guest_cpu_percent", measure) == std::string::npos);
  // Without an ensemble: says so.
  nlohmann::json plain;
  plain["points"] =
      nlohmann::json::array({nlohmann::json{{"label", {{"a", "1"}}}, {"metrics", nlohmann::json::object()}}});
  CHECK(advise_text(plain, "r.json").starts_with("r.json: no advice: no point ran an ensemble"));
}
