#include "app/validation/effects.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace vsim::app {
namespace {

bool is_context_key(const std::string& key)
{
  return key == "direction" || key.rfind("workload.", 0) == 0;
}

// Every key either row names, in order of first use.
std::vector<std::string> keys_of(const Measurement& a, const Measurement& b)
{
  std::vector<std::string> keys;
  for (const Measurement* m : {&a, &b})
    for (const auto& [k, v] : m->keys)
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        keys.push_back(k);
  return keys;
}

} // namespace

bool is_held_out(const Measurement& m)
{
  return m.source.ends_with("/held-out");
}

bool DesignEffect::held_out() const
{
  return is_held_out(*base->m) || is_held_out(*changed->m);
}

bool DesignEffect::large() const
{
  return std::fabs(measured_ratio - 1) > 0.1;
}

bool DesignEffect::direction_right() const
{
  // A predicted change under 2% is no change: it cannot get a direction right.
  return (measured_ratio > 1 && predicted_ratio > 1.02) || (measured_ratio < 1 && predicted_ratio < 0.98);
}

bool DesignEffect::size_within_20() const
{
  return size_error() <= 0.2;
}

bool DesignEffect::covered() const
{
  return interval && interval->p10 <= measured_ratio && measured_ratio <= interval->p90;
}

bool DesignEffect::p50_direction_right() const
{
  return interval && ((measured_ratio > 1 && interval->p50 > 1.02) || (measured_ratio < 1 && interval->p50 < 0.98));
}

double DesignEffect::size_error() const
{
  return std::fabs(predicted_ratio / measured_ratio - 1);
}

std::vector<DesignEffect> design_effects(const Comparison& c)
{
  std::vector<DesignEffect> out;
  for (std::size_t i = 0; i < c.rows.size(); ++i)
    for (std::size_t j = i + 1; j < c.rows.size(); ++j) {
      const ComparisonRow& a = c.rows[i];
      const ComparisonRow& b = c.rows[j];
      if (a.m->metric != b.m->metric || a.stat != b.stat || a.measured <= 0 || a.predicted <= 0)
        continue;
      bool same_workload = true;
      std::string change, context;
      for (const std::string& k : keys_of(*a.m, *b.m)) {
        const std::string va = a.m->value_of(k), vb = b.m->value_of(k);
        if (is_context_key(k)) {
          same_workload = same_workload && va == vb;
          context += fmt::format("{}{}={}", context.empty() ? "" : ", ", k, va);
        } else if (va != vb) {
          change += fmt::format("{}{}: {} -> {}", change.empty() ? "" : ", ", k, va, vb);
        }
      }
      if (!same_workload || change.empty())
        continue;
      context += (context.empty() ? "" : ": ") + a.m->metric;
      DesignEffect e{&a, &b, change, context, b.measured / a.measured, b.predicted / a.predicted};
      if (!a.members.empty() && a.weights == b.weights) { // the same ensemble: member by member
        const MemberValues ratios = member_ratios(a.members, b.members);
        e.interval = ensemble_spread(ratios, a.weights);
        e.discrepancy = std::max(a.discrepancy, b.discrepancy);
        if (e.interval && e.discrepancy > 0)
          e.with_error = spread_with_error(ratios, a.weights, e.discrepancy);
      }
      out.push_back(std::move(e));
    }
  return out;
}

bool DesignEffect::covered_with_error() const
{
  return with_error && with_error->p10 <= measured_ratio && measured_ratio <= with_error->p90;
}

namespace {

// The median (summarize's), 0 for none.
double median_of(const std::vector<double>& v)
{
  return v.empty() ? 0 : summarize(v).median;
}

double half_width(const EnsembleSpread& s)
{
  return (s.p90 - s.p10) / 2 / s.p50;
}

} // namespace

EffectSummary summarize(const std::vector<DesignEffect>& effects, bool held_out_only)
{
  EffectSummary s;
  std::vector<double> half_widths, half_widths_with_error;
  for (const DesignEffect& e : effects) {
    if (held_out_only && !e.held_out())
      continue;
    ++s.effects;
    if (e.interval && e.interval->p50 > 0)
      half_widths.push_back(half_width(*e.interval));
    if (e.with_error && e.with_error->p50 > 0)
      half_widths_with_error.push_back(half_width(*e.with_error));
    s.discrepancy = std::max(s.discrepancy, e.with_error ? e.discrepancy : 0.0);
    if (!e.large())
      continue;
    ++s.large;
    s.direction_right += e.direction_right();
    s.within_20 += e.size_within_20();
    if (e.interval) {
      ++s.with_interval;
      s.p50_direction_right += e.p50_direction_right();
      s.covered += e.covered();
    }
    if (e.with_error) {
      ++s.with_error;
      s.covered_with_error += e.covered_with_error();
    }
  }
  s.median_half_width = median_of(half_widths);
  s.median_half_width_with_error = median_of(half_widths_with_error);
  return s;
}

std::string effect_summary_text(const EffectSummary& s)
{
  if (s.large == 0)
    return fmt::format("{} design effect(s), none larger than 10%", s.effects);
  return fmt::format("{} design effect(s), {} larger than 10%: direction right for {:.0f}% ({}), size within 20% "
                     "for {:.0f}% ({})",
                     s.effects, s.large, 100.0 * static_cast<double>(s.direction_right) / static_cast<double>(s.large),
                     s.direction_right, 100.0 * static_cast<double>(s.within_20) / static_cast<double>(s.large),
                     s.within_20);
}

std::string ensemble_summary_text(const EffectSummary& s)
{
  if (s.with_interval == 0)
    return "";
  auto pct = [&](std::size_t k) { return 100.0 * static_cast<double>(k) / static_cast<double>(s.with_interval); };
  return fmt::format("ensemble: {} of the large effects with a member-by-member interval: direction right at the "
                     "p50 for {:.0f}% ({}), the p10..p90 interval covers the published ratio for {:.0f}% ({}); "
                     "median half-width of the intervals +-{:.1f}%",
                     s.with_interval, pct(s.p50_direction_right), s.p50_direction_right, pct(s.covered), s.covered,
                     100 * s.median_half_width) +
         (s.with_error == 0
              ? std::string()
              : fmt::format("; with the model's own error on top (the profile's effect discrepancy, sigma up to "
                            "{:.1f}% in log ratio): covers {:.0f}% ({} of {}), median half-width +-{:.1f}%",
                            100 * s.discrepancy,
                            100.0 * static_cast<double>(s.covered_with_error) / static_cast<double>(s.with_error),
                            s.covered_with_error, s.with_error, 100 * s.median_half_width_with_error));
}

std::vector<DesignEffect> worst_effects(const std::vector<DesignEffect>& effects, std::size_t n)
{
  std::vector<DesignEffect> large;
  for (const DesignEffect& e : effects)
    if (e.large())
      large.push_back(e);
  std::stable_sort(large.begin(), large.end(),
                   [](const DesignEffect& a, const DesignEffect& b) { return a.size_error() > b.size_error(); });
  if (large.size() > n)
    large.resize(n);
  return large;
}

} // namespace vsim::app
