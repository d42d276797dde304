#include "app/report/result_json.hpp"

#include <cmath>
#include <map>

#include "app/experiment/effective.hpp"
#include "app/experiment/params_json.hpp"
#include "app/experiment/platforms.hpp"
#include "app/report/calibration_span.hpp"
#include "app/report/stats.hpp"
#include "app/report/text.hpp"
#include "sim/histogram.hpp"
#include "sim/run_length.hpp"
#include "transports/simulate.hpp"

namespace vsim::app {
namespace {

// A whole number as an integer (sizes, counts), anything else as is.
nlohmann::ordered_json whole_or_real(double v)
{
  if (v == std::floor(v) && std::abs(v) < 9007199254740992.0)
    return static_cast<std::int64_t>(v);
  return v;
}

nlohmann::ordered_json stats_json(const std::vector<double>& values)
{
  Stats s = summarize(values);
  return nlohmann::ordered_json{{"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"median", s.median}};
}

// How the point's figures were obtained: the run-length mode, and per
// iteration what the simulation reported (bytes simulated, warm-up,
// batches, half-width, why it was or was not extrapolated).
// A round-trip workload's histogram (sim/histogram.hpp): the buckets over
// every iteration, [lower, upper, count] in us, and each iteration's own
// (bucket number -> count, what a resumed run reads back); null if none.
nlohmann::ordered_json rtt_histogram_json(const PointResult& r)
{
  using json = nlohmann::ordered_json;
  std::map<std::int64_t, std::uint64_t> all;
  json iterations = json::array();
  for (const Metrics& h : r.rtt_histograms) {
    json one = json::object();
    for (const auto& [bucket, n] : h) {
      all[std::stoll(bucket)] += static_cast<std::uint64_t>(n);
      one[bucket] = n;
    }
    iterations.push_back(std::move(one));
  }
  if (all.empty())
    return nullptr;
  json buckets = json::array();
  for (const auto& [b, n] : all)
    buckets.push_back(json::array({Histogram::lower(b), Histogram::upper(b), n}));
  return json{{"unit", "us"}, {"buckets", std::move(buckets)}, {"iterations", std::move(iterations)}};
}

// A round-trip workload's stage times (transports/simulate.hpp
// append_round_trip_stages): per stage on the path, its mean over the
// attributed round trips near the median and at or beyond the 99th
// percentile, pooled over the iterations (each iteration's band mean
// weighted by its round trips), and each iteration's own entries (what a
// resumed run reads back); null if no round trip was attributed.
nlohmann::ordered_json round_trip_stages_json(const PointResult& r)
{
  using json = nlohmann::ordered_json;
  struct Stage {
    std::string name;
    std::map<std::string, double> sum; // band -> sum over iterations of mean x round trips
  };
  std::map<int, Stage> stages;         // by place on the path
  std::map<std::string, double> trips; // band -> round trips over the iterations
  // The causes that landed in the round trips (RoundTrips::note), as the
  // stages: "<band>.cause.<name>" (us per round trip), "<band>.cause_share.<name>".
  std::map<std::string, std::map<std::string, double>> cause_us, cause_share;   // name -> band -> sum
  std::map<std::string, std::map<int, std::map<std::string, double>>> cause_in; // name -> stage -> band -> sum
  json iterations = json::array();
  for (const Metrics& it : r.rtt_stages) {
    json one = json::object();
    for (const auto& [key, v] : it) {
      one[key] = whole_or_real(v);
      const std::size_t dot = key.find('.');
      const std::string band = key.substr(0, dot), rest = key.substr(dot + 1);
      if (rest == "round_trips")
        continue;
      if (rest.starts_with("cause_in.")) { // "cause_in.<NN>.<name>"
        cause_in[rest.substr(12)][std::stoi(rest.substr(9, 2))][band] += v * it.at(band + ".round_trips");
        continue;
      }
      if (rest.starts_with("cause.") || rest.starts_with("cause_share.")) {
        const bool share = rest.starts_with("cause_share.");
        (share ? cause_share : cause_us)[rest.substr(rest.find('.') + 1)][band] += v * it.at(band + ".round_trips");
        continue;
      }
      Stage& s = stages[std::stoi(rest.substr(0, 2))];
      s.name = rest.substr(3);
      s.sum[band] += v * it.at(band + ".round_trips");
    }
    for (const auto& [key, v] : it)
      if (key.ends_with(".round_trips"))
        trips[key.substr(0, key.find('.'))] += v;
    iterations.push_back(std::move(one));
  }
  if (stages.empty())
    return nullptr;
  json out = json::object();
  out["unit"] = "us";
  for (const RttStageBand& b : kRttStageBands)
    out[std::string(b.name) + "_round_trips"] = whole_or_real(trips[b.name]);
  json list = json::array();
  for (const auto& [place, s] : stages) {
    json one = json{{"stage", s.name}};
    for (const RttStageBand& b : kRttStageBands) {
      const auto f = s.sum.find(b.name);
      one[std::string(b.name) + "_us"] = f == s.sum.end() ? json(nullptr) : json(f->second / trips[b.name]);
    }
    list.push_back(std::move(one));
  }
  out["stages"] = std::move(list);
  if (!cause_us.empty()) {
    json causes = json::array();
    for (const auto& [name, by_band] : cause_us) {
      json one = json{{"cause", name}};
      for (const RttStageBand& b : kRttStageBands) {
        const auto f = by_band.find(b.name);
        const bool any = f != by_band.end() && trips[b.name] > 0;
        one[std::string(b.name) + "_us"] = any ? json(f->second / trips[b.name]) : json(nullptr);
        one[std::string(b.name) + "_share"] = any ? json(cause_share[name][b.name] / trips[b.name]) : json(nullptr);
      }
      // Where it landed: per stage (by its name), us per round trip of each band.
      json in = json::array();
      for (const auto& [place, by] : cause_in[name]) {
        json st = json{{"stage", stages.count(place) ? stages[place].name : std::to_string(place)}};
        for (const RttStageBand& b : kRttStageBands) {
          const auto f = by.find(b.name);
          st[std::string(b.name) + "_us"] =
              f != by.end() && trips[b.name] > 0 ? json(f->second / trips[b.name]) : json(0.0);
        }
        in.push_back(std::move(st));
      }
      one["stages"] = std::move(in);
      causes.push_back(std::move(one));
    }
    out["causes"] = std::move(causes);
  }
  out["iterations"] = std::move(iterations);
  return out;
}

// The ensemble's spread of one metric (sim.ensemble), null when no member has it.
nlohmann::ordered_json metric_ensemble_json(const PointResult& r, const std::string& metric)
{
  using json = nlohmann::ordered_json;
  const std::optional<EnsembleSpread> e = ensemble_spread(member_values(r, metric), member_weights(r));
  if (!e)
    return nullptr;
  json values = json::array();
  for (const std::optional<double>& v : e->values)
    values.push_back(v ? json(*v) : json(nullptr));
  return json{{"members", e->members}, {"p10", e->p10}, {"p50", e->p50}, {"p90", e->p90}, {"values", values}};
}

// The point's ensemble (sim.ensemble): how many members, their weights,
// each member's costs that differ from the point's (what a rerun needs),
// and the members that failed with why.
nlohmann::ordered_json point_ensemble_json(const Point& p, const PointResult& r)
{
  using json = nlohmann::ordered_json;
  json weights = json::array();
  json costs = json::array();
  json failed = json::array();
  for (std::size_t m = 0; m < r.members.size(); ++m) {
    weights.push_back(r.members[m].weight);
    json own = json::object();
    if (m < p.members.size())
      for (const auto& [key, value] : p.members[m].params.all())
        if (key.starts_with("costs.") && (!p.params.has(key) || p.params.get(key) != value))
          own[key.substr(6)] = value_json(value);
    costs.push_back(std::move(own));
    if (!r.members[m].failed.empty())
      failed.push_back(json{{"member", m}, {"why", r.members[m].failed}});
  }
  json out{{"members", r.members.size()}, {"weights", std::move(weights)}, {"costs", std::move(costs)}};
  if (!failed.empty())
    out["failed"] = std::move(failed);
  // The model's own error on an effect, as the point's profile tells it
  // (effect_discrepancy): what compare adds to a change's interval.
  if (const PlatformProfile* profile = find_profile(p.params.text("platform")))
    if (const auto d = effect_discrepancy(*profile))
      out["model_error"] = json{{"sigma", d->sigma}, {"pairs", d->pairs}, {"inflation", d->inflation}};
  return out;
}

nlohmann::ordered_json run_length_json(const Point& p, const PointResult& r)
{
  using json = nlohmann::ordered_json;
  json rl = json::object();
  const bool auto_mode = p.params.has("sim.run_length") && p.params.text("sim.run_length") == "auto";
  rl["mode"] = auto_mode ? "auto" : "full";
  if (auto_mode && p.params.has("sim.precision"))
    rl["precision"] = p.params.number("sim.precision");
  rl["extrapolated_iterations"] = extrapolated_iterations(r);
  std::map<std::string, std::vector<double>> values;
  json iterations = json::array();
  for (const auto& info : r.run_length) {
    json one = json::object();
    for (const auto& [name, v] : info) {
      values[name].push_back(v);
      if (name.starts_with("held_by.")) { // the figure that did not settle
        one["held_by"] = name.substr(8);
        one["held_by_half_width"] = v;
        continue;
      }
      if (name == "extrapolated")
        one[name] = v != 0;
      else
        one[name] = name == "half_width" ? nlohmann::ordered_json(v) : whole_or_real(v); // counts and bytes whole
    }
    if (auto f = info.find("reason"); f != info.end())
      one["why"] = run_end_text(static_cast<RunEnd>(static_cast<int>(f->second)));
    iterations.push_back(std::move(one));
  }
  for (const char* name : {"simulated_bytes", "warmup_bytes", "batches", "half_width"})
    if (auto f = values.find(name); f != values.end())
      rl[name] = stats_json(f->second);
  rl["iterations"] = std::move(iterations);
  return rl;
}

} // namespace

nlohmann::ordered_json to_json(const Experiment& ex, const std::vector<PointResult>& results, const Manifest& m)
{
  using json = nlohmann::ordered_json;
  check_results(ex, results);

  json manifest = json::object();
  manifest["version"] = m.version;
  manifest["git_commit"] = m.git_commit;
  manifest["config_sha256"] = m.config_sha256;
  manifest["seed"] = m.seed;
  manifest["simgrid_version"] = m.simgrid_version;
  manifest["command_line"] = m.command_line;
  json deps = json::object();
  for (const auto& [name, version] : m.dependencies)
    deps[name] = version;
  manifest["dependencies"] = std::move(deps);
  manifest["platforms"] = m.platforms;
  manifest["experiment"] = m.experiment;
  json wall = json::object();
  wall["started_utc"] = m.wall_started_utc;
  wall["seconds"] = m.wall_seconds;
  manifest["wall"] = std::move(wall);

  json points = json::array();
  json failed = json::array(); // the points that failed: what they are and why, no figures
  for (std::size_t i = 0; i < ex.points.size(); ++i) {
    const Point& p = ex.points[i];
    const PointResult& r = results[i];
    json point = json::object();
    point["index"] = p.index;
    point["params"] = params_json(p.params);
    json label = json::object();
    for (const auto& [key, text] : p.label)
      label[key] = text;
    point["label"] = std::move(label);
    json effective = json::object(); // what the transport actually uses (app/experiment/effective.hpp)
    for (const Effective& e : effective_values(p.params))
      effective[e.name] = whole_or_real(e.value);
    point["effective"] = std::move(effective);
    if (const auto outside = outside_calibration(p.params, r.iterations); r.failed.empty() && !outside.empty())
      point["extrapolated_from_calibration"] = outside; // app/report/calibration_span.hpp
    if (!r.failed.empty()) {
      point["failed"] = r.failed;
      if (r.hang())
        point["hang"] = true;
      failed.push_back(std::move(point));
      continue;
    }
    json metrics = json::object();
    for (const auto& [name, values] : metric_values(r)) {
      Stats s = summarize(values);
      metrics[name] = json{{"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"median", s.median}};
      if (!r.members.empty())
        if (json e = metric_ensemble_json(r, name); !e.is_null())
          metrics[name]["ensemble"] = std::move(e);
    }
    point["metrics"] = std::move(metrics);
    if (!r.members.empty())
      point["ensemble"] = point_ensemble_json(p, r);
    json iterations = json::array();
    for (const auto& it : r.iterations) {
      json one = json::object();
      for (const auto& [name, value] : it)
        one[name] = value;
      iterations.push_back(std::move(one));
    }
    point["iterations"] = std::move(iterations);
    point["run_length"] = run_length_json(p, r);
    if (json h = rtt_histogram_json(r); !h.is_null())
      point["rtt_histogram"] = std::move(h);
    if (json st = round_trip_stages_json(r); !st.is_null())
      point["round_trip_stages"] = std::move(st);
    points.push_back(std::move(point));
  }

  // The unit of every metric the points carry (MB = 10^6 bytes; CPU
  // percentages sum over CPUs).
  json units = json::object();
  for (const std::string& n : metric_names(results))
    units[n] = metric_unit(n);
  json out = json::object();
  out["experiment"] = ex.name;
  out["manifest"] = std::move(manifest);
  out["points"] = std::move(points);
  if (!failed.empty())
    out["failed_points"] = std::move(failed);
  out["units"] = std::move(units);
  return out;
}

} // namespace vsim::app
