// run_search: the evaluator (batches of points through the runner, reused
// from --output when finished there) and the methods that ask it for
// points: every combination in order, or pagmo2's NSGA-II or MOEA/D.
#include "app/search/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <pagmo/algorithms/moead.hpp>
#include <pagmo/algorithms/nsga2.hpp>
#include <pagmo/batch_evaluators/member_bfe.hpp>
#include <pagmo/bfe.hpp>
#include <pagmo/population.hpp>
#include <pagmo/problem.hpp>
#include <tbb/global_control.h>

#include "app/report/results.hpp"
#include "app/report/stats.hpp"
#include "app/run/output_dir.hpp"
#include "app/search/report.hpp"
#include "app/search/space.hpp"
#include "sim/run_length.hpp"

namespace vsim::app {

namespace {

using search::Choice;
using search::Space;

// Objective values pagmo sees for a point that is no design: beyond any
// real figure, so every feasible point dominates it; among points that break
// a constraint, the one that breaks it less dominates.
constexpr double kPenalty = 1e20;
// The method stops once this many generations in a row brought no new point
// (its population has converged on points already evaluated), or once it
// has proposed this many times the budget's points.
constexpr std::size_t kStagnantGenerations = 25;
constexpr double kMaxProposalsPerBudget = 40;

// pagmo's seeds are 32 bits: the search's seed mixed down (splitmix64).
unsigned seed32(std::uint64_t seed)
{
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<unsigned>((z ^ (z >> 31)) & 0xffffffffu);
}

ObjectiveValue summarise(const std::vector<double>& v)
{
  ObjectiveValue o;
  double sum = 0;
  for (double x : v)
    sum += x;
  o.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v)
      ss += (x - o.mean) * (x - o.mean);
    const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    o.half_width = student_t975(v.size() - 1) * sd / std::sqrt(static_cast<double>(v.size()));
  }
  return o;
}

// The points a search evaluates, each once, in the order asked for, within
// the budget; each point's objectives and constraints from its figures.
class Evaluator {
public:
  Evaluator(Space& space, const SearchPlan& plan, const std::string& output, const SearchHooks& hooks,
            const Manifest& manifest)
      : space_(space), plan_(plan), output_(output), hooks_(hooks),
        manifest_(manifest), identity_{{"config_sha256", manifest.config_sha256},
                                       {"version", manifest.version},
                                       {"git_commit", manifest.git_commit}},
        finished_(output.empty() ? FinishedPoints("", identity_) : FinishedPoints(output, identity_)),
        started_(std::chrono::steady_clock::now())
  {
    shell_ = space.experiment();
    shell_.points.clear();
  }

  bool spent() const { return evaluated_.size() >= static_cast<std::size_t>(plan_.budget); }
  const std::vector<Evaluated>& evaluated() const { return evaluated_; }
  std::vector<Evaluated>& evaluated() { return evaluated_; }
  std::size_t simulated() const { return simulated_; }
  std::size_t reused() const { return reused_; }
  std::size_t proposals() const { return proposals_; }

  // Evaluates the combinations not seen before (in order, each once, until
  // the budget is spent); returns how many points it evaluated.
  std::size_t evaluate(const std::vector<Choice>& choices)
  {
    proposals_ += choices.size();
    std::vector<Choice> todo;
    for (const Choice& c : choices) {
      if (evaluated_at_.count(c) || pending(todo, c))
        continue;
      const Space::Candidate& cand = space_.candidate(c);
      if (!cand.resolved || cand.violation > 0)
        continue;
      if (evaluated_.size() + todo.size() >= static_cast<std::size_t>(plan_.budget))
        break;
      todo.push_back(c);
    }
    if (todo.empty())
      return 0;
    run(todo);
    progress();
    return todo.size();
  }

  // The objectives pagmo minimises for a combination (`nobj` of them: a
  // single objective is padded with a constant one).
  std::vector<double> fitness(const Choice& c, std::size_t nobj)
  {
    if (auto it = evaluated_at_.find(c); it != evaluated_at_.end()) {
      const Evaluated& e = evaluated_[it->second];
      if (e.feasible) {
        std::vector<double> f(nobj, 0.0);
        for (std::size_t j = 0; j < e.objectives.size(); ++j)
          f[j] = space_.spec().objectives[j].maximise ? -e.objectives[j].mean : e.objectives[j].mean;
        return f;
      }
      if (!e.result.failed.empty() || e.objectives.empty())
        return std::vector<double>(nobj, kPenalty * 100);
      return std::vector<double>(nobj, kPenalty * (1 + std::log1p(violation(e))));
    }
    const Space::Candidate& cand = space_.candidate(c);
    if (cand.resolved && cand.violation > 0)
      return std::vector<double>(nobj, kPenalty * (1 + std::log1p(cand.violation)));
    return std::vector<double>(nobj, kPenalty * 100); // refused, or not evaluated (the budget is spent)
  }

private:
  static bool pending(const std::vector<Choice>& todo, const Choice& c)
  {
    return std::find(todo.begin(), todo.end(), c) != todo.end();
  }

  double violation(const Evaluated& e) const
  {
    double v = 0;
    for (std::size_t i = 0; i < e.constraints.size(); ++i)
      v += space_.spec().constraints[i].violation(e.constraints[i]);
    return v;
  }

  // The points of `todo` (new, within the budget) under the next indices:
  // those --output holds are read back, the others simulated in one batch,
  // each one's file written as soon as it is done.
  void run(const std::vector<Choice>& todo)
  {
    Experiment batch = shell_;
    std::vector<Evaluated> fresh;
    for (const Choice& c : todo) {
      Evaluated e;
      e.point = *space_.candidate(c).point;
      e.point.index = evaluated_.size() + fresh.size();
      e.choice = c;
      if (std::optional<PointResult> r = finished_.find(e.point)) {
        e.result = std::move(*r);
        e.reused = true;
      } else {
        batch.points.push_back(e.point);
      }
      fresh.push_back(std::move(e));
    }
    std::map<std::size_t, PointResult> done;
    if (!batch.points.empty()) {
      RunOptions opt = hooks_.run;
      opt.progress = false;
      if (!output_.empty())
        opt.on_point = [&](const PointResult& r) {
          Experiment one = shell_;
          for (const Point& p : batch.points)
            if (p.index == r.index)
              one.points.push_back(p);
          write_point_file(output_, to_json(one, {r}, manifest_)["points"][0], identity_, shell_.name);
        };
      for (PointResult& r : run_points(batch, hooks_.iteration, opt))
        done.emplace(r.index, std::move(r));
    }
    for (Evaluated& e : fresh) {
      if (!e.reused) {
        e.result = std::move(done.at(e.point.index));
        ++simulated_;
      } else {
        ++reused_;
      }
      score(e);
      evaluated_at_.emplace(e.choice, evaluated_.size());
      evaluated_.push_back(std::move(e));
    }
  }

  // Its objectives (mean and 95% interval over the iterations) and
  // constraints (the mean): a point lacking a metric they read is not
  // feasible.
  void score(Evaluated& e) const
  {
    if (!e.result.failed.empty())
      return;
    const SearchSpec& s = space_.spec();
    auto values = [&](const MetricExpr& expr) -> std::optional<std::vector<double>> {
      std::vector<double> v;
      for (const Metrics& m : e.result.iterations) {
        const std::optional<double> x = expr.eval(m, e.point.params);
        if (!x || std::isnan(*x))
          return std::nullopt;
        v.push_back(*x);
      }
      return v;
    };
    std::vector<ObjectiveValue> objectives;
    for (const SearchObjective& o : s.objectives) {
      const auto v = values(o.expr);
      if (!v)
        return;
      objectives.push_back(summarise(*v));
      if (s.rank != "central") {
        const std::optional<double> x = member_rank(e, o);
        if (!x)
          return;
        objectives.back().mean = *x; // the half width stays the iterations' (the central member's noise)
      }
    }
    e.objectives = std::move(objectives);
    e.feasible = true;
    for (const SearchConstraint& c : s.constraints) {
      const auto v = values(c.expr);
      const double mean = v ? summarise(*v).mean : std::numeric_limits<double>::quiet_NaN();
      e.constraints.push_back(mean);
      e.feasible = e.feasible && c.holds(mean);
    }
  }

  // search.rank "median" or "pessimistic": the objective over the point's
  // ensemble members (each member's run, PointResult::members), weighted
  // as the profile weighs them (ensemble_spread); nullopt when no member
  // has a value.
  std::optional<double> member_rank(const Evaluated& e, const SearchObjective& o) const
  {
    MemberValues values;
    for (const MemberResult& m : e.result.members) {
      std::optional<double> x;
      if (m.failed.empty())
        x = o.expr.eval(m.metrics, e.point.params);
      values.push_back(x && !std::isnan(*x) ? x : std::nullopt);
    }
    const std::optional<EnsembleSpread> sp = ensemble_spread(values, member_weights(e.result));
    if (!sp)
      return std::nullopt;
    if (space_.spec().rank == "median")
      return sp->p50;
    return o.maximise ? sp->p10 : sp->p90; // pessimistic: the worse decile
  }

  void progress() const
  {
    if (!hooks_.progress)
      return;
    std::vector<std::vector<double>> f;
    for (const Evaluated& e : evaluated_)
      if (e.feasible) {
        std::vector<double> one;
        for (std::size_t j = 0; j < e.objectives.size(); ++j)
          one.push_back(space_.spec().objectives[j].maximise ? -e.objectives[j].mean : e.objectives[j].mean);
        f.push_back(std::move(one));
      }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const std::size_t left = static_cast<std::size_t>(plan_.budget) - evaluated_.size();
    std::string eta = "";
    if (simulated_ > 0)
      eta = fmt::format(", at most about {:.0f} s left",
                        elapsed / static_cast<double>(simulated_) * static_cast<double>(left));
    hooks_.progress(fmt::format("search: {}/{} points evaluated ({} simulated, {} reused), front {} point(s){}",
                                evaluated_.size(), plan_.budget, simulated_, reused_, pareto_front(f).size(), eta));
  }

  Space& space_;
  const SearchPlan& plan_;
  const std::string output_;
  const SearchHooks& hooks_;
  const Manifest& manifest_;
  const nlohmann::ordered_json identity_;
  const FinishedPoints finished_;
  const std::chrono::steady_clock::time_point started_;
  Experiment shell_;
  std::vector<Evaluated> evaluated_;
  std::map<Choice, std::size_t> evaluated_at_;
  std::size_t simulated_ = 0, reused_ = 0, proposals_ = 0;
};

// Every combination in odometer order (the last knob fastest), a batch of
// 32 at a time (the batches change only how often progress is told).
void exhaustive(Space& space, Evaluator& ev)
{
  const auto n = static_cast<std::uint64_t>(space.combinations());
  std::vector<Choice> batch;
  for (std::uint64_t i = 0; i < n && !ev.spent(); ++i) {
    batch.push_back(space.nth(i));
    if (batch.size() == 32 || i + 1 == n) {
      ev.evaluate(batch);
      batch.clear();
    }
  }
}

// The search as a pagmo problem: one decision variable per knob, its
// value's index: an integer in [0, values - 1] for NSGA-II (pagmo's
// integer crossover and mutation), or, for MOEA/D, whose differential
// evolution works on reals, a real in [0, values) of which the index is the
// floor. Every fitness pagmo asks for goes through the evaluator; NSGA-II
// asks for a generation's offspring as one batch (pagmo's bfe).
struct Driver {
  Space* space = nullptr;
  Evaluator* ev = nullptr;
  bool integer = true;
  std::size_t nobj = 2;

  Choice decode(const double* x) const
  {
    Choice c(space->knobs());
    for (std::size_t k = 0; k < c.size(); ++k) {
      const double top = static_cast<double>(space->values(k) - 1);
      const double v = integer ? std::round(x[k]) : std::floor(x[k]);
      c[k] = static_cast<std::size_t>(std::clamp(v, 0.0, top));
    }
    return c;
  }

  pagmo::vector_double batch(const pagmo::vector_double& xs) const
  {
    const std::size_t n = space->knobs();
    std::vector<Choice> choices;
    for (std::size_t i = 0; i < xs.size() / n; ++i)
      choices.push_back(decode(xs.data() + i * n));
    ev->evaluate(choices);
    pagmo::vector_double out;
    for (const Choice& c : choices)
      for (double f : ev->fitness(c, nobj))
        out.push_back(f);
    return out;
  }
};

struct SearchProblem {
  Driver* d = nullptr;

  pagmo::vector_double fitness(const pagmo::vector_double& x) const { return d->batch(x); }
  pagmo::vector_double batch_fitness(const pagmo::vector_double& xs) const { return d->batch(xs); }
  bool has_batch_fitness() const { return true; }
  std::pair<pagmo::vector_double, pagmo::vector_double> get_bounds() const
  {
    pagmo::vector_double lb, ub;
    for (std::size_t k = 0; k < d->space->knobs(); ++k) {
      lb.push_back(0);
      const auto n = static_cast<double>(d->space->values(k));
      ub.push_back(d->integer ? n - 1 : std::nextafter(n, 0.0));
    }
    return {lb, ub};
  }
  pagmo::vector_double::size_type get_nobj() const { return d->nobj; }
  pagmo::vector_double::size_type get_nix() const { return d->integer ? d->space->knobs() : 0; }
  std::string get_name() const { return "vsocksim search"; }
};

// NSGA-II's population: a multiple of 4 of at least 8, larger for larger
// budgets (about twice the square root of the budget), at most 64.
std::size_t population_for(std::int64_t budget)
{
  const auto root = static_cast<std::size_t>(std::lround(2 * std::sqrt(static_cast<double>(budget))));
  return std::clamp<std::size_t>((root + 3) / 4 * 4, 8, 64);
}

std::size_t evolve(Space& space, Evaluator& ev, const SearchPlan& plan, const SearchOptions& opt)
{
  // pagmo2 runs parts of its algorithms on oneTBB, whose worker threads
  // would then be alive while the evaluator forks the simulations (a child
  // of a multi-threaded process can hang on a lock a worker held: the
  // sanitizer suite's search with --jobs 2 did, once in a CI run). One
  // thread for the rest of the process: TBB starts no worker (a limit
  // lifted at the end of the search would start them, and they would stay
  // for the next search), and pagmo's results do not depend on it.
  static const tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  Driver d{&space, &ev, plan.chosen == "nsga2", std::max<std::size_t>(2, space.spec().objectives.size())};
  const unsigned seed = seed32(plan.seed);
  const std::size_t size = opt.population.value_or(population_for(plan.budget));
  pagmo::problem prob{SearchProblem{&d}};
  pagmo::population pop{prob, pagmo::bfe{pagmo::member_bfe{}}, size, seed};
  std::size_t generations = 0, stagnant = 0;
  const auto max_proposals = static_cast<std::size_t>(kMaxProposalsPerBudget * static_cast<double>(plan.budget));
  auto more = [&] { return !ev.spent() && stagnant < kStagnantGenerations && ev.proposals() < max_proposals; };
  if (d.integer) {
    // One knob mutated per offspring on average; pagmo's defaults otherwise.
    pagmo::nsga2 algo(1u, 0.95, 10., 1.0 / static_cast<double>(space.knobs()), 50., seed);
    algo.set_bfe(pagmo::bfe{pagmo::member_bfe{}});
    while (more()) {
      const std::size_t before = ev.evaluated().size();
      pop = algo.evolve(pop);
      ++generations;
      stagnant = ev.evaluated().size() == before ? stagnant + 1 : 0;
    }
  } else {
    const auto neighbours = std::max<std::size_t>(2, std::min<std::size_t>(20, size / 4));
    pagmo::moead algo(1u, "low discrepancy", "tchebycheff", neighbours, 1.0, 0.5, 20., 0.9, 2u, true, seed);
    while (more()) {
      const std::size_t before = ev.evaluated().size();
      pop = algo.evolve(pop);
      ++generations;
      stagnant = ev.evaluated().size() == before ? stagnant + 1 : 0;
    }
  }
  return generations;
}

// Minimised objective vectors of the feasible points, and where each is.
std::vector<std::vector<double>> minimised(const SearchSpec& s, const std::vector<Evaluated>& ev,
                                           std::vector<std::size_t>& at)
{
  std::vector<std::vector<double>> f;
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].feasible) {
      std::vector<double> one;
      for (std::size_t j = 0; j < ev[i].objectives.size(); ++j)
        one.push_back(s.objectives[j].maximise ? -ev[i].objectives[j].mean : ev[i].objectives[j].mean);
      f.push_back(std::move(one));
      at.push_back(i);
    }
  return f;
}

// The front sorted along the first objective (best first), and per front
// point the others whose 95% intervals overlap its own in every objective.
void front_of(SearchResult& r)
{
  const SearchSpec& s = *r.ex.search;
  std::vector<std::size_t> at;
  const auto f = minimised(s, r.evaluated, at);
  for (std::size_t k : pareto_front(f))
    r.front.push_back(at[k]);
  std::stable_sort(r.front.begin(), r.front.end(), [&](std::size_t a, std::size_t b) {
    const double x = r.evaluated[a].objectives[0].mean, y = r.evaluated[b].objectives[0].mean;
    return s.objectives[0].maximise ? x > y : x < y;
  });
  r.ties.assign(r.front.size(), {});
  for (std::size_t a = 0; a < r.front.size(); ++a)
    for (std::size_t b = 0; b < r.front.size(); ++b) {
      if (a == b)
        continue;
      bool overlap = true;
      for (std::size_t j = 0; j < s.objectives.size(); ++j) {
        const ObjectiveValue& x = r.evaluated[r.front[a]].objectives[j];
        const ObjectiveValue& y = r.evaluated[r.front[b]].objectives[j];
        overlap = overlap && std::abs(x.mean - y.mean) <= x.half_width + y.half_width;
      }
      if (overlap)
        r.ties[a].push_back(b);
    }
}

// How much each knob moves each objective, from the feasible points
// evaluated: the objective's mean per value of the knob (over the points
// with that value), the spread of those means, and the share of the
// objective's variance they explain (the correlation ratio, a first-order
// variance-based index; exact for an exhaustive search of a full grid).
void sensitivity_of(SearchResult& r)
{
  const SearchSpec& s = *r.ex.search;
  for (std::size_t k = 0; k < s.space.size(); ++k)
    for (std::size_t j = 0; j < s.objectives.size(); ++j) {
      std::map<std::size_t, std::pair<double, double>> by_value; // value -> (sum, count)
      double sum = 0, n = 0;
      for (const Evaluated& e : r.evaluated)
        if (e.feasible) {
          const double y = e.objectives[j].mean;
          by_value[e.choice[k]].first += y;
          by_value[e.choice[k]].second += 1;
          sum += y;
          n += 1;
        }
      SensitivityRow row{s.space[k].key, j, by_value.size(), s.space[k].values.size(), 0, 0};
      if (n > 0) {
        const double mean = sum / n;
        double total = 0, between = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const Evaluated& e : r.evaluated)
          if (e.feasible)
            total += (e.objectives[j].mean - mean) * (e.objectives[j].mean - mean);
        for (const auto& [v, sc] : by_value) {
          const double m = sc.first / sc.second;
          lo = std::min(lo, m);
          hi = std::max(hi, m);
          between += sc.second * (m - mean) * (m - mean);
        }
        row.moves = hi - lo;
        row.share = total > 0 ? between / total : 0;
      }
      r.sensitivity.push_back(row);
    }
}

} // namespace

std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& f)
{
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < f.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < f.size() && !dominated; ++j) {
      if (i == j)
        continue;
      bool no_worse = true, better = false;
      for (std::size_t m = 0; m < f[i].size(); ++m) {
        no_worse = no_worse && f[j][m] <= f[i][m];
        better = better || f[j][m] < f[i][m];
      }
      dominated = no_worse && better;
    }
    if (!dominated)
      out.push_back(i);
  }
  return out;
}

SearchResult run_search(const Experiment& ex, const SearchOptions& opt, const std::string& output,
                        const SearchHooks& hooks)
{
  SearchResult r;
  r.plan = plan_search(ex, opt);
  if (!output.empty()) {
    check_output_dir(output);
    remove_temporaries(output);
  }
  const auto started = std::chrono::system_clock::now();
  Manifest manifest = make_manifest(ex, hooks.command_line);
  Space space(ex);
  Evaluator ev(space, r.plan, output, hooks, manifest);
  if (r.plan.chosen == "exhaustive")
    exhaustive(space, ev);
  else
    r.generations = evolve(space, ev, r.plan, opt);
  r.simulated = ev.simulated();
  r.reused = ev.reused();
  r.proposals = ev.proposals();
  r.evaluated = std::move(ev.evaluated());
  // The result: every evaluated point, by index, as `run` gives a sweep's.
  r.ex = ex;
  r.ex.points.clear();
  std::vector<PointResult> results;
  for (const Evaluated& e : r.evaluated) {
    r.ex.points.push_back(e.point);
    results.push_back(e.result);
  }
  r.manifest = make_manifest(r.ex, hooks.command_line);
  r.manifest.wall_started_utc = format_utc(started);
  r.manifest.wall_seconds = std::chrono::duration<double>(std::chrono::system_clock::now() - started).count();
  r.result = to_json(r.ex, results, r.manifest);
  front_of(r);
  sensitivity_of(r);
  if (!output.empty()) {
    write_output_dir(output, r.result);
    remove_stale_points(output, r.evaluated.size());
    write_file_atomic(output + "/search.json", search_json(r).dump(2) + "\n");
    if (std::string warning = search::write_figures(r, output); !warning.empty() && hooks.progress)
      hooks.progress(warning);
  }
  return r;
}

} // namespace vsim::app
