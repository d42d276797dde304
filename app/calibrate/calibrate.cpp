// The fit's steps (calibrate.hpp): which costs, the search, the folds, the
// final comparison with the experiment's own iterations.
#include "app/calibrate/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "app/calibrate/evaluate.hpp"
#include "app/calibrate/identify.hpp"
#include "app/calibrate/optimiser.hpp"
#include "sim/rng.hpp"

namespace vsim::app {

unsigned default_evaluations(std::size_t n)
{
  // BOBYQA's first model takes 2n+1 evaluations; then about as many again
  // to move on it.
  return static_cast<unsigned>(std::max<std::size_t>(12, 4 * n + 4));
}

namespace {

// The ensemble (find_members): the step of the slopes' differences and the
// prior's standard deviation, in unit coordinates (fractions of a cost's
// plausible range, log-spaced).
constexpr double kStep = 0.1;
constexpr double kPrior = 0.25;

// A fit is kept only if its K-fold error is below the start's error by at
// least this share of it (1%: more than the summation's rounding, when every
// fold kept the start and the two are the same figure summed otherwise).
constexpr double kCvMargin = 0.01;

// The objective's value for a prediction that is no number (a failed
// point): worse than any fit.
constexpr double kFailedRow = 100;

// Mean squared log ratio predicted / measured over `rows`: smooth, and
// symmetric in over- and under-prediction.
double objective(const std::vector<double>& predicted, const std::vector<double>& measured,
                 const std::vector<std::size_t>& rows)
{
  double sum = 0;
  for (std::size_t r : rows) {
    const double p = predicted.at(r);
    const double l = p > 0 && std::isfinite(p) ? std::log(p / measured.at(r)) : std::sqrt(kFailedRow);
    sum += l * l;
  }
  return sum / static_cast<double>(rows.size());
}

// Progress on stderr: evaluations done of the plan, seconds each, time left.
class Progress {
public:
  Progress(const CalibrateHooks& hooks, const Evaluator& ev, double planned) : hooks_(hooks), ev_(ev), planned_(planned)
  {
  }
  // `done` iteration sets (evaluations times iterations per point) of the plan.
  void step(const std::string& what, unsigned evals, unsigned budget, double iteration_sets)
  {
    done_ += iteration_sets;
    if (!hooks_.progress)
      return;
    const double each = ev_.seconds_per_iteration_set();
    const double left = std::max(0.0, planned_ - done_) * each;
    hooks_.progress(fmt::format("calibrate: {} {}/{} evaluation(s), {:.2f} s per evaluation of one iteration, "
                                "about {:.0f} s left",
                                what, evals, budget, each, left));
  }
  void replan(double planned) { planned_ = planned; }

private:
  const CalibrateHooks& hooks_;
  const Evaluator& ev_;
  double planned_;
  double done_ = 0;
};

struct Driver {
  const CalibrationInput& in;
  const CalibrateOptions& opt;
  Evaluator ev;
  std::vector<double> measured;
  // Iterations per point: the search's (0: each experiment's own) and, for
  // the progress plan, the most any experiment runs.
  unsigned search_iters, full_iters, main_budget = 0, fold_budget = 0;
  Progress progress;
  CalibrationResult r;

  // Iterations per point of one search evaluation, for the progress plan.
  double search_iters_planned() const { return search_iters > 0 ? search_iters : full_iters; }

  static unsigned most_iterations(const CalibrationInput& i)
  {
    unsigned most = 1;
    for (const Study& s : i.studies)
      most = std::max(most, static_cast<unsigned>(s.ex.base.integer("iterations")));
    return most;
  }

  Driver(const CalibrationInput& i, const CalibrateOptions& o, const CalibrateHooks& hooks)
      : in(i), opt(o), ev(i, hooks), measured(measured_values(i)), search_iters(o.search_iterations),
        full_iters(most_iterations(i)), progress(hooks, ev, 0)
  {
  }

  std::vector<std::vector<std::size_t>> folds() const
  {
    std::vector<std::vector<std::size_t>> out;
    for (const auto& positions : fold_rows(in.fit_rows.size(), opt.folds)) {
      out.emplace_back();
      for (std::size_t j : positions)
        out.back().push_back(in.fit_rows[j]);
    }
    return out;
  }

  std::vector<std::size_t> training(const std::vector<std::size_t>& fold) const
  {
    std::vector<std::size_t> out;
    for (std::size_t row : in.fit_rows)
      if (std::find(fold.begin(), fold.end(), row) == fold.end())
        out.push_back(row);
    return out;
  }

  // The most costs every fit can take: no more than the rows it fits on.
  std::size_t max_costs() const
  {
    std::size_t m = in.fit_rows.size();
    for (const auto& f : folds())
      m = std::min(m, training(f).size());
    return m;
  }

  void plan(std::size_t candidates, std::size_t costs)
  {
    main_budget = opt.max_evaluations > 0 ? opt.max_evaluations : default_evaluations(costs);
    fold_budget = opt.fold_evaluations > 0 ? opt.fold_evaluations : std::max(1u, main_budget / 3);
    const double s = search_iters_planned();
    progress.replan(s * static_cast<double>(candidates + (candidates > 0 ? 1 : 0)) / kSensitivityShrink +
                    s * main_budget + s * opt.folds * fold_budget +
                    s * (opt.ensemble > 0 ? 1 + static_cast<double>(costs) + 2.0 * opt.ensemble : 0.0) +
                    static_cast<double>(full_iters) * static_cast<double>(1 + kKeptCandidates * (1 + opt.folds)));
  }

  // The probe value of a cost for its elasticity, and the log of its ratio.
  std::pair<double, double> probe(const CostDecl& d, double v) const
  {
    const double up = v * kPerturbation;
    return up <= d.max ? std::make_pair(up, std::log(kPerturbation))
                       : std::make_pair(v / kPerturbation, -std::log(kPerturbation));
  }

  void choose_by_sensitivity()
  {
    std::vector<CostValues> sets = {{}};
    std::vector<FitCost> probed;
    const std::string transport = in.study().ex.base.text("transport");
    for (const CostDecl& d : in.candidates) {
      const double v = in.study().ex.base.number(std::string("costs.") + d.name);
      if (v <= 0) {
        r.not_fitted.emplace_back(d.name, "its value is 0: no elasticity to measure (name it in --fit)");
        continue;
      }
      probed.push_back(fit_cost(d, v, transport));
      sets.push_back(fitted_values({probed.back()}, {probe(d, v).first}));
    }
    plan(probed.size(), std::min<std::size_t>(opt.max_costs, probed.size()));
    const auto preds = ev.run(sets, search_iters, kSensitivityShrink);
    progress.step("sensitivity", static_cast<unsigned>(sets.size()), static_cast<unsigned>(sets.size()),
                  static_cast<double>(sets.size()) * search_iters_planned() / kSensitivityShrink);
    for (const FitCost& c : probed)
      r.elasticity_costs.push_back(c.decl.name);
    for (std::size_t row : in.fit_rows) {
      r.elasticity.emplace_back();
      for (std::size_t c = 0; c < probed.size(); ++c) {
        const double base = preds[0][row], moved = preds[c + 1][row];
        const double e =
            base > 0 && moved > 0 ? std::log(moved / base) / probe(probed[c].decl, probed[c].start).second : 0;
        r.elasticity.back().push_back(e);
      }
    }
    const Identification id =
        identify(r.elasticity, r.elasticity_costs, std::min<std::size_t>(opt.max_costs, max_costs()));
    std::vector<bool> chosen(probed.size(), false);
    for (std::size_t c : id.chosen)
      chosen[c] = true;
    for (std::size_t c = 0; c < probed.size(); ++c)
      if (chosen[c])
        r.fitted.push_back(probed[c]);
    for (const auto& [c, why] : id.out)
      r.not_fitted.emplace_back(probed[c].decl.name, why);
    // What the ensemble may vary beyond the fitted costs (opt.ensemble_costs).
    for (std::size_t c = 0; c < probed.size(); ++c) {
      if (chosen[c])
        continue;
      double largest = 0;
      for (const auto& row : r.elasticity)
        largest = std::max(largest, std::fabs(row[c]));
      if (opt.ensemble_costs == "all" || (opt.ensemble_costs == "seen" && largest >= kElasticityFloor))
        unfitted_for_ensemble.push_back(probed[c]);
    }
  }

  // The probed costs the ensemble varies besides the fitted ones.
  std::vector<FitCost> unfitted_for_ensemble;

  CostValues values_of(const std::vector<double>& v) const { return fitted_values(r.fitted, v); }

  SearchResult fit_on(const std::vector<std::size_t>& rows, unsigned budget, const std::string& what)
  {
    unsigned n = 0;
    double best = -1;
    return search(r.fitted, opt.optimiser, budget, [&](const std::vector<double>& v) {
      const auto preds = ev.run({values_of(v)}, search_iters);
      const double mae = mae_percent(preds[0], measured, rows);
      best = best < 0 ? mae : std::min(best, mae);
      progress.step(fmt::format("{} (best {:.2f}%)", what, best), ++n, budget, search_iters_planned());
      return objective(preds[0], measured, rows);
    });
  }

  void moves(const std::vector<double>& after)
  {
    for (std::size_t i = 0; i < r.fitted.size(); ++i) {
      const FitCost& c = r.fitted[i];
      const double u = to_unit(c, after[i]);
      r.moves.push_back({c.decl.name, c.decl.unit, c.start, after[i], c.decl.plausible_min, c.decl.plausible_max,
                         u <= 1e-3 || u >= 1 - 1e-3, c.tie, c.tied});
    }
  }

  std::vector<double> start_values() const
  {
    std::vector<double> v;
    for (const FitCost& c : r.fitted)
      v.push_back(c.start);
    return v;
  }

  // The final sets, run together with the experiment's own iterations: the
  // start (set 0), then each search's kept candidates; `first[k]` is where
  // search k's begin.
  struct Finals {
    std::vector<CostValues> sets = {{}};
    std::vector<std::vector<double>> values = {{}};
    std::vector<std::size_t> first, count;
  };

  void add(Finals& f, const SearchResult& s) const
  {
    f.first.push_back(f.sets.size());
    f.count.push_back(s.best.size());
    for (const Candidate& c : s.best) {
      f.sets.push_back(values_of(c.values));
      f.values.push_back(c.values);
    }
  }

  // Of the start and search k's candidates, the set with the lowest mean
  // absolute error on `rows` with the experiment's iterations: the figure
  // reported, measured as validate measures it (the start on a tie: a fit
  // must earn its move).
  std::size_t choose(const Finals& f, std::size_t k, const std::vector<std::vector<double>>& preds,
                     const std::vector<std::size_t>& rows) const
  {
    std::size_t best = 0;
    double low = mae_or_worst(preds[0], rows);
    for (std::size_t i = f.first[k]; i < f.first[k] + f.count[k]; ++i)
      if (const double e = mae_or_worst(preds[i], rows); e < low) {
        low = e;
        best = i;
      }
    return best;
  }

  // A set with a failed row is worse than any other.
  double mae_or_worst(const std::vector<double>& p, const std::vector<std::size_t>& rows) const
  {
    for (std::size_t row : rows)
      if (!std::isfinite(p[row]))
        return std::numeric_limits<double>::infinity();
    return mae_percent(p, measured, rows);
  }

  void run()
  {
    r.optimiser = optimiser_label(opt.optimiser);
    if (in.named.empty())
      choose_by_sensitivity();
    else {
      r.fitted = in.named;
      plan(0, r.fitted.size());
    }
    Finals f;
    if (opt.ensemble_only)
      r.search_stop = "no search: --ensemble-only keeps the start's values";
    else {
      const SearchResult main = fit_on(in.fit_rows, main_budget, "search");
      r.search_stop = main.stop;
      add(f, main);
    }
    const auto fs = opt.ensemble_only ? std::vector<std::vector<std::size_t>>{} : folds();
    for (std::size_t k = 0; k < fs.size(); ++k)
      add(f, fit_on(training(fs[k]), fold_budget, fmt::format("fold {}/{}", k + 1, fs.size())));
    const auto preds = ev.run(f.sets, 0); // each experiment's own iterations
    progress.step("final", static_cast<unsigned>(f.sets.size()), static_cast<unsigned>(f.sets.size()),
                  static_cast<double>(f.sets.size() * full_iters));
    std::size_t chosen = opt.ensemble_only ? 0 : choose(f, 0, preds, in.fit_rows);
    r.kept_why = chosen == 0 && !opt.ensemble_only ? "search" : "";
    r.before = preds[0];
    r.mae_before = mae_percent(r.before, measured, in.fit_rows);
    for (std::size_t k = 0; k < fs.size(); ++k)
      r.fold_after.push_back(preds[choose(f, k + 1, preds, training(fs[k]))]);
    cross_validation(fs);
    if (chosen != 0 && !fs.empty() && !opt.keep_unvalidated && !(r.mae_cv < r.mae_before * (1 - kCvMargin))) {
      // The fit does not predict the rows it did not see better than the
      // start predicts them: what it moved, the rows cannot pin down.
      chosen = 0;
      r.kept_why = "cross-validation";
    }
    r.kept_start = chosen == 0;
    r.after = preds[chosen];
    moves(chosen == 0 ? start_values() : f.values[chosen]);
    r.mae_fit = mae_percent(r.after, measured, in.fit_rows);
    r.mae_held_out = mae_percent(r.after, measured, in.held_rows);
    if (opt.ensemble > 0)
      find_members(chosen == 0 ? start_values() : f.values[chosen]);
    r.evaluations = ev.evaluations();
  }

  // The ensemble: cost vectors that fit the rows within their noise, drawn
  // from the fit's linearised posterior and each checked by a simulation.
  // In the costs' unit coordinates u (log-spaced over the plausible range),
  // the rows' log predictions near the central fit are J (u - u0), J by
  // one-sided differences of kStep; with every row's noise sigma and a
  // Gaussian prior of kPrior on each coordinate (the plausible range bounds
  // what no row sees), the posterior's covariance is
  // (J'J / sigma^2 + I / kPrior^2)^-1: wide along what the rows cannot tell
  // apart, narrow across it. Draws (normal, from the stream "ensemble" of
  // the first experiment's seed, batch by batch) are clipped to the range
  // and kept when their objective (mean squared log ratio over the fit
  // rows) is within the band the noise allows: at most the central fit's
  // plus (costs varied) x sigma^2 / (fit rows), a likelihood-ratio bound of
  // one sigma per cost. Batches of the members asked for, at most 3.
  // sigma is the rows' noise (--noise), or the central fit's root mean
  // squared log error when that is larger: where the model misses its rows
  // by more than their noise, that miss is part of what is not known (the
  // residual scaling of a least-squares fit, sqrt(chi^2 / rows)).
  void find_members(const std::vector<double>& fit)
  {
    // The costs varied: the fitted ones at the fit, then the others the
    // options add at their start values.
    r.ensemble_costs = r.fitted;
    r.ensemble_centre = fit;
    for (const FitCost& c : unfitted_for_ensemble) {
      r.ensemble_costs.push_back(c);
      r.ensemble_centre.push_back(c.start);
    }
    const std::vector<FitCost>& costs = r.ensemble_costs;
    const std::vector<double>& centre = r.ensemble_centre;
    auto values_of = [&](const std::vector<double>& v) { return fitted_values(costs, v); };
    const std::size_t n = costs.size(), rows = in.fit_rows.size();
    double sigma = opt.noise_percent / 100;
    std::vector<double> u0(n), step(n);
    std::vector<CostValues> sets = {values_of(centre)};
    for (std::size_t i = 0; i < n; ++i) {
      u0[i] = to_unit(costs[i], centre[i]);
      step[i] = u0[i] + kStep <= 1 ? kStep : -kStep;
      std::vector<double> v = centre;
      v[i] = from_unit(costs[i], u0[i] + step[i]);
      sets.push_back(values_of(v));
    }
    const auto preds = ev.run(sets, search_iters);
    progress.step("ensemble: the slopes at the fit", static_cast<unsigned>(sets.size()),
                  static_cast<unsigned>(sets.size()), static_cast<double>(sets.size()) * search_iters_planned());
    r.central_objective = objective(preds[0], measured, in.fit_rows);
    sigma = std::max(sigma, std::sqrt(r.central_objective));
    r.noise_used = sigma;
    r.band = r.central_objective + static_cast<double>(n) * sigma * sigma / static_cast<double>(rows);
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(n));
    for (std::size_t k = 0; k < rows; ++k)
      for (std::size_t i = 0; i < n; ++i) {
        const double a = preds[0][in.fit_rows[k]], b = preds[i + 1][in.fit_rows[k]];
        if (a > 0 && b > 0 && std::isfinite(a) && std::isfinite(b))
          J(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(i)) = std::log(b / a) / step[i];
      }
    const Eigen::MatrixXd precision =
        J.transpose() * J / (sigma * sigma) +
        Eigen::MatrixXd::Identity(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n)) / (kPrior * kPrior);
    const Eigen::MatrixXd L = precision.inverse().llt().matrixL();
    const auto seed = static_cast<std::uint64_t>(in.study().ex.base.integer("seed"));
    for (unsigned batch = 0; batch < 3 && r.members.size() < opt.ensemble; ++batch) {
      Rng rng(seed, batch, "ensemble");
      std::vector<std::vector<double>> draws;
      std::vector<CostValues> draw_sets;
      for (unsigned d = 0; d < opt.ensemble; ++d) {
        Eigen::VectorXd z(static_cast<Eigen::Index>(n));
        for (std::size_t i = 0; i < n; ++i) { // Box-Muller: a standard normal from two uniforms, in order
          const double u1 = rng.uniform(), u2 = rng.uniform();
          z(static_cast<Eigen::Index>(i)) = std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * std::numbers::pi * u2);
        }
        const Eigen::VectorXd dz = L * z;
        std::vector<double> v(n);
        for (std::size_t i = 0; i < n; ++i)
          v[i] = from_unit(costs[i], std::clamp(u0[i] + dz(static_cast<Eigen::Index>(i)), 0.0, 1.0));
        draws.push_back(v);
        draw_sets.push_back(values_of(v));
      }
      const auto dp = ev.run(draw_sets, search_iters);
      progress.step(fmt::format("ensemble: draws, {} kept of {}", r.members.size(), opt.ensemble),
                    static_cast<unsigned>(draw_sets.size()), static_cast<unsigned>(draw_sets.size()),
                    static_cast<double>(draw_sets.size()) * search_iters_planned());
      for (std::size_t d = 0; d < draws.size(); ++d) {
        const double o = objective(dp[d], measured, in.fit_rows);
        r.draw_objectives.push_back(o);
        if (o <= r.band && r.members.size() < opt.ensemble) {
          r.members.push_back(draws[d]);
          r.member_mae.push_back(mae_percent(dp[d], measured, in.fit_rows));
        }
      }
    }
  }

  // Each fold's error with its own fit, and the pooled error over every
  // fold's rows (each fit row is in exactly one fold).
  void cross_validation(const std::vector<std::vector<std::size_t>>& fs)
  {
    if (fs.empty())
      return;
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < fs.size(); ++k) {
      r.fold_mae.push_back(mae_percent(r.fold_after[k], measured, fs[k]));
      sum += r.fold_mae.back() * static_cast<double>(fs[k].size());
      n += fs[k].size();
    }
    r.mae_cv = sum / static_cast<double>(n);
  }
};

} // namespace

CalibrationResult calibrate(const CalibrationInput& in, const CalibrateOptions& opt, const CalibrateHooks& hooks)
{
  Driver d(in, opt, hooks);
  d.run();
  return d.r;
}

} // namespace vsim::app
