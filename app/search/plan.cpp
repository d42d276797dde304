// plan_search: the search checked and planned before anything runs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "app/experiment/describe.hpp"
#include "app/search/search.hpp"
#include "app/search/space.hpp"

namespace vsim::app {

namespace {

using search::Choice;
using search::Space;

// Spaces up to this many combinations are resolved whole before a search
// starts; larger ones are sampled this many times.
constexpr double kEnumerate = 20000;

std::string bound_text(const SearchConstraint& c, double v)
{
  return fmt::format("{} is {}", c.expr_text, format_number(v));
}

// The constraint no candidate meets: the first that none meets alone, else
// the first (none meets them all together); with the best value a candidate
// reaches, for the message.
[[noreturn]] void no_point_meets(Space& space, const std::vector<Choice>& tried, bool whole)
{
  const SearchSpec& s = space.spec();
  for (std::size_t c = 0; c < s.constraints.size(); ++c) {
    if (!space.before_simulating(c))
      continue;
    const SearchConstraint& con = s.constraints[c];
    double best = std::numeric_limits<double>::quiet_NaN(), least = std::numeric_limits<double>::infinity();
    Choice where;
    bool met = false;
    for (const Choice& ch : tried) {
      const Space::Candidate& cand = space.candidate(ch);
      if (!cand.resolved)
        continue;
      const double v = cand.early[c];
      met = met || con.holds(v);
      if (con.violation(v) < least) {
        least = con.violation(v);
        best = v;
        where = ch;
      }
    }
    if (!met)
      load::fail(con.at, "search.constraints",
                 load::with_allowed(fmt::format("no point of the space meets '{}'{}: the nearest is {}, where {}",
                                                con.text, whole ? "" : " (of those resolved)", space.describe(where),
                                                bound_text(con, best)),
                                    "a bound some point of search.space meets"));
  }
  const SearchConstraint& first = s.constraints.front();
  load::fail(first.at, "search.constraints",
             load::with_allowed("no point of the space meets every constraint together",
                                "bounds some point of search.space meets all at once"));
}

} // namespace

SearchPlan plan_search(const Experiment& ex, const SearchOptions& opt, std::vector<std::string>* warnings)
{
  if (!ex.search)
    throw std::logic_error("plan_search: the experiment has no search section");
  const SearchSpec& s = *ex.search;
  SearchPlan plan;
  plan.budget = opt.budget.value_or(s.budget);
  if (opt.budget && (*opt.budget < 1 || *opt.budget > 100000))
    throw InputError(fmt::format("--budget {}: error: {} (allowed: 1 .. 100000 simulated points)", *opt.budget,
                                 *opt.budget < 1 ? fmt::format("a budget of {} simulates no point", *opt.budget)
                                                 : std::string("out of range")));
  plan.seed = opt.seed.value_or(static_cast<std::uint64_t>(ex.base.integer("seed")));
  plan.method = opt.method.value_or(s.method);
  Space space(ex, false);
  plan.combinations = space.combinations();
  std::vector<Choice> tried;
  if (plan.combinations <= kEnumerate) {
    plan.enumerated = true;
    for (std::uint64_t n = 0; n < static_cast<std::uint64_t>(plan.combinations); ++n)
      tried.push_back(space.nth(n));
  } else {
    // A sample, from a stream of its own seeded by the search's seed.
    std::mt19937_64 rng(plan.seed ^ 0x5eed5a3b1e5ull);
    for (int i = 0; i < kEnumerate; ++i) {
      Choice c(space.knobs());
      for (std::size_t k = 0; k < space.knobs(); ++k)
        c[k] = std::uniform_int_distribution<std::size_t>(0, space.values(k) - 1)(rng);
      tried.push_back(std::move(c));
    }
  }
  std::size_t resolved = 0, candidates = 0;
  std::string first_refusal;
  bool checked_before = false;
  for (std::size_t c = 0; c < s.constraints.size(); ++c)
    checked_before = checked_before || space.before_simulating(c);
  if (checked_before)
    for (std::size_t k = 0; k < space.knobs(); ++k)
      plan.can_meet.emplace_back(space.values(k), false);
  for (const Choice& c : tried) {
    const Space::Candidate& cand = space.candidate(c);
    if (!cand.resolved) {
      if (first_refusal.empty())
        first_refusal = cand.refused;
      continue;
    }
    ++resolved;
    if (cand.violation == 0) {
      ++candidates;
      for (std::size_t k = 0; k < plan.can_meet.size(); ++k)
        plan.can_meet[k][c[k]] = true;
    }
  }
  plan.resolved_before = resolved;
  if (plan.enumerated) {
    plan.candidates = candidates;
    plan.refused = tried.size() - resolved;
    plan.out_of_bounds = resolved - candidates;
  }
  if (resolved == 0 && plan.enumerated)
    load::fail(
        s.at, "search.space",
        load::with_allowed(fmt::format("the experiment refuses every combination of the knobs, the first because {}",
                                       first_refusal.substr(first_refusal.find("error: ") + 7)),
                           "knob values the experiment takes together"));
  if (candidates == 0 && resolved > 0) {
    if (plan.enumerated)
      no_point_meets(space, tried, true);
    if (warnings != nullptr)
      warnings->push_back(fmt::format("none of {} combinations drawn from the space meets the constraints checked "
                                      "before simulating; the search may find no feasible point",
                                      tried.size()));
  }
  const bool fits = plan.enumerated ? static_cast<double>(plan.candidates) <= static_cast<double>(plan.budget)
                                    : plan.combinations <= static_cast<double>(plan.budget);
  if (plan.method == "exhaustive" && !fits) {
    const std::string size = plan.enumerated ? fmt::format("{} points to simulate", plan.candidates)
                                             : fmt::format("{} combinations", format_number(plan.combinations));
    const load::Origin at = s.method_at.positioned() ? s.method_at : s.at;
    load::fail(
        at, "search.method",
        load::with_allowed(fmt::format("exhaustive: the space has {}, more than the budget ({})", size, plan.budget),
                           "a budget at least that large, or method auto, nsga2 or moead"));
  }
  plan.chosen = plan.method == "auto" ? (fits ? "exhaustive" : "nsga2") : plan.method;
  return plan;
}

} // namespace vsim::app
