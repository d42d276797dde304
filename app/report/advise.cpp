#include "app/report/advise.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "app/report/stats.hpp"

namespace vsim::app {

namespace {

using json = nlohmann::json;

// Effects shown at most, widest first; candidates named per effect.
constexpr std::size_t kEffectsShown = 10;
constexpr std::size_t kCandidatesShown = 2;

// One point's members' values of a metric (nullopt: none).
MemberValues values_of(const json& point, const std::string& metric)
{
  MemberValues out;
  const json& m = point.contains("metrics") ? point["metrics"] : json();
  if (!m.is_object() || !m.contains(metric) || !m[metric].is_object() || !m[metric].contains("ensemble"))
    return out;
  const json& v = m[metric]["ensemble"].value("values", json());
  if (!v.is_array())
    return out;
  for (const json& x : v)
    out.push_back(x.is_number() ? std::optional<double>(x.get<double>()) : std::nullopt);
  return out;
}

std::vector<double> weights_of(const json& point)
{
  std::vector<double> w;
  if (point.contains("ensemble") && point["ensemble"].is_object() && point["ensemble"].contains("weights") &&
      point["ensemble"]["weights"].is_array())
    for (const json& x : point["ensemble"]["weights"])
      w.push_back(x.is_number() ? x.get<double>() : 0.0);
  return w;
}

// The point's label as "key=value, ...", and its values by key.
std::string label_text(const json& point)
{
  std::string s;
  if (point.contains("label") && point["label"].is_object())
    for (auto it = point["label"].begin(); it != point["label"].end(); ++it)
      s += fmt::format("{}{}={}", s.empty() ? "" : ", ", it.key(),
                       it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  return s;
}

// The one key two labels differ in ("" when they differ in none or several,
// or name different keys).
std::string one_change(const json& a, const json& b)
{
  const json la = a.value("label", json::object()), lb = b.value("label", json::object());
  if (!la.is_object() || !lb.is_object() || la.size() != lb.size())
    return "";
  std::string key;
  for (auto it = la.begin(); it != la.end(); ++it) {
    if (!lb.contains(it.key()))
      return "";
    if (lb[it.key()] != it.value()) {
      if (!key.empty())
        return "";
      key = it.key();
    }
  }
  return key;
}

std::string value_text(const json& v)
{
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Weighted mean, variance and covariance over the members where both have a value.
struct Moments {
  double var_x = 0, var_y = 0, cov = 0;
  std::size_t n = 0;
};

Moments moments(const std::vector<std::optional<double>>& x, const std::vector<std::optional<double>>& y,
                const std::vector<double>& w)
{
  Moments m;
  double total = 0, mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size() && i < w.size(); ++i)
    if (x[i] && y[i]) {
      total += w[i];
      mx += w[i] * *x[i];
      my += w[i] * *y[i];
      ++m.n;
    }
  if (m.n < 3 || total <= 0)
    return m;
  mx /= total;
  my /= total;
  for (std::size_t i = 0; i < x.size() && i < y.size() && i < w.size(); ++i)
    if (x[i] && y[i]) {
      m.var_x += w[i] * (*x[i] - mx) * (*x[i] - mx);
      m.var_y += w[i] * (*y[i] - my) * (*y[i] - my);
      m.cov += w[i] * (*x[i] - mx) * (*y[i] - my);
    }
  m.var_x /= total;
  m.var_y /= total;
  m.cov /= total;
  return m;
}

std::vector<std::optional<double>> logs(const MemberValues& v)
{
  std::vector<std::optional<double>> out;
  for (const auto& x : v)
    out.push_back(x && *x > 0 ? std::optional<double>(std::log(*x)) : std::nullopt);
  return out;
}

// The metrics of a point a measurement could be of: the headline figures
// and each simulated thread's busy share.
std::vector<std::string> candidate_metrics(const json& point)
{
  std::vector<std::string> out;
  const json& m = point.value("metrics", json::object());
  for (const char* name : {"throughput_MBps", "rtt_mean_us", "rtt_p99_us", "guest_cpu_percent", "host_cpu_percent"})
    if (m.contains(name))
      out.push_back(name);
  for (auto it = m.begin(); it != m.end(); ++it)
    if (it.key().starts_with("thread.") && it.key().ends_with(".busy_percent"))
      out.push_back(it.key());
  return out;
}

struct Candidate {
  std::size_t point;
  std::string metric;
  double share; // of the effect's variance explained
};

struct Effect {
  std::size_t a, b;
  std::string key, metric;
  EnsembleSpread ratio;
  double half_width; // (p90 - p10) / 2 / p50
  std::vector<Candidate> best;
};

} // namespace

std::string advise_text(const json& doc, const std::string& file, double noise)
{
  const json& points = doc.value("points", json::array());
  std::vector<std::size_t> with; // positions of the points that ran an ensemble
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].is_object() && points[i].contains("ensemble"))
      with.push_back(i);
  if (with.empty())
    return fmt::format("{}: no advice: no point ran an ensemble (run with --ensemble, on a profile written by "
                       "calibrate --ensemble)\n",
                       file);
  std::vector<Effect> effects;
  for (std::size_t i = 0; i < with.size(); ++i)
    for (std::size_t j = i + 1; j < with.size(); ++j) {
      const json &a = points[with[i]], &b = points[with[j]];
      const std::string key = one_change(a, b);
      const std::vector<double> w = weights_of(a);
      if (key.empty() || w != weights_of(b))
        continue;
      for (const char* metric : {"throughput_MBps", "rtt_mean_us"}) {
        const MemberValues ratio = member_ratios(values_of(a, metric), values_of(b, metric));
        if (ratio.empty() || ratio.size() != w.size())
          continue;
        const std::optional<EnsembleSpread> s = ensemble_spread(ratio, w);
        if (!s || s->members < 3 || s->p50 <= 0)
          continue;
        effects.push_back({with[i], with[j], key, metric, *s, (s->p90 - s->p10) / 2 / s->p50, {}});
        break;
      }
    }
  if (effects.empty())
    return fmt::format("{}: no advice: no two points of the ensemble run differ in exactly one swept key (an "
                       "effect to narrow)\n",
                       file);
  std::stable_sort(effects.begin(), effects.end(),
                   [](const Effect& x, const Effect& y) { return x.half_width > y.half_width; });
  std::string out = fmt::format("What to measure next, judged from the ensemble ({} members; a measurement of "
                                "{:.0f}% noise; the share of an effect's spread among the members that the "
                                "measurement would explain, to first order):\n",
                                effects.front().ratio.values.size(), noise * 100);
  std::size_t narrow = 0, shown = 0;
  for (Effect& e : effects) {
    if (e.half_width < kAdviceWidth) {
      ++narrow;
      continue;
    }
    if (shown == kEffectsShown)
      continue;
    ++shown;
    const std::vector<double> w = weights_of(points[e.a]);
    const std::vector<std::optional<double>> eff = logs(e.ratio.values);
    // What can be measured before the change is built: the points with the
    // base's value of the changed key.
    for (std::size_t k = 0; k < points.size(); ++k) {
      const json& label = points[k].value("label", json::object());
      if (!label.is_object() || !label.contains(e.key) || label[e.key] != points[e.a]["label"][e.key])
        continue;
      for (const std::string& metric : candidate_metrics(points[k])) {
        const Moments m = moments(eff, logs(values_of(points[k], metric)), w);
        if (m.n < 3 || m.var_x <= 0 || m.var_y <= 0)
          continue;
        e.best.push_back({k, metric, m.cov * m.cov / (m.var_x * (m.var_y + noise * noise))});
      }
    }
    std::stable_sort(e.best.begin(), e.best.end(),
                     [](const Candidate& x, const Candidate& y) { return x.share > y.share; });
    const json &a = points[e.a], &b = points[e.b];
    std::string context = label_text(a);
    out += fmt::format("\n  {}: {} -> {} (points {} -> {}; {}): {} ratio p50 {:.3f} [p10 {:.3f}, p90 {:.3f}], "
                       "+-{:.1f}%\n",
                       e.key, value_text(a["label"][e.key]), value_text(b["label"][e.key]), e.a, e.b, context, e.metric,
                       e.ratio.p50, e.ratio.p10, e.ratio.p90, 100 * e.half_width);
    if (e.best.empty() || e.best.front().share < 0.05) {
      out += "    no single figure of these points tells the members apart as this effect does\n";
      continue;
    }
    for (std::size_t c = 0; c < e.best.size() && c < kCandidatesShown && e.best[c].share >= 0.05; ++c) {
      const Candidate& best = e.best[c];
      out += fmt::format("    {} {} at point {} ({}): to about +-{:.1f}% ({:.0f}% of its spread)\n",
                         c == 0 ? "measure" : "or     ", best.metric, best.point, label_text(points[best.point]),
                         100 * e.half_width * std::sqrt(std::max(0.0, 1 - best.share)), 100 * best.share);
    }
  }
  if (shown < effects.size() - narrow)
    out += fmt::format("\n  ({} more effect(s) not shown)\n", effects.size() - narrow - shown);
  if (narrow > 0)
    out += fmt::format("\n  {} effect(s) narrower than +-{:.0f}% already: no advice for them\n", narrow,
                       100 * kAdviceWidth);
  return out;
}

} // namespace vsim::app
