#include "app/calibrate/optimiser.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>

#include <nlopt.hpp>

namespace vsim::app {

namespace {

struct Known {
  const char* name;
  nlopt::algorithm algorithm;
  const char* label;
};

const std::vector<Known>& known()
{
  static const std::vector<Known> k = {
      {"bobyqa", nlopt::LN_BOBYQA, "NLopt LN_BOBYQA"},
      {"sbplx", nlopt::LN_SBPLX, "NLopt LN_SBPLX"},
      {"cobyla", nlopt::LN_COBYLA, "NLopt LN_COBYLA"},
      {"newuoa", nlopt::LN_NEWUOA_BOUND, "NLopt LN_NEWUOA_BOUND"},
      {"neldermead", nlopt::LN_NELDERMEAD, "NLopt LN_NELDERMEAD"},
  };
  return k;
}

const Known* find_known(const std::string& name)
{
  for (const Known& k : known())
    if (name == k.name)
      return &k;
  return nullptr;
}

// The initial step on each coordinate: a tenth of the plausible range (a
// factor of 1.4 for a range of 30:1), large enough to see past the
// evaluations' noise.
constexpr double kInitialStep = 0.1;
// Stop when a step moves no coordinate by more than this (0.3% of a value
// for a 30:1 range) or improves the objective by less than this fraction.
constexpr double kXtol = 1e-3;
constexpr double kFtolRel = 1e-4;

struct Search {
  const std::vector<FitCost>& costs;
  const std::function<double(const std::vector<double>&)>& objective;
  SearchResult best;
  unsigned budget;
  std::exception_ptr error = nullptr; // thrown by the objective, rethrown after NLopt returns
  bool spent = false;                 // the budget is used up

  double operator()(const std::vector<double>& u)
  {
    std::vector<double> v;
    for (std::size_t i = 0; i < costs.size(); ++i)
      v.push_back(from_unit(costs[i], std::clamp(u[i], 0.0, 1.0)));
    const double f = objective(v);
    ++best.evaluations;
    keep({f, v});
    return f;
  }

  // Inserts a candidate into the kept best, ties to the earlier one.
  void keep(const Candidate& c)
  {
    auto& b = best.best;
    for (const Candidate& k : b)
      if (k.values == c.values)
        return;
    auto at = b.begin();
    while (at != b.end() && at->objective <= c.objective)
      ++at;
    b.insert(at, c);
    if (b.size() > kKeptCandidates)
      b.pop_back();
  }
};

// NLopt's C callback: an exception must not cross NLopt's C code, so the
// objective's (a stop request, an error) is kept and NLopt stopped; the
// budget is enforced here too, whatever NLopt counts.
double call(unsigned, const double* x, double*, void* data)
{
  auto* s = static_cast<Search*>(data);
  if (s->best.evaluations >= s->budget) {
    s->spent = true;
    throw nlopt::forced_stop();
  }
  try {
    return (*s)(std::vector<double>(x, x + s->costs.size()));
  } catch (...) {
    s->error = std::current_exception();
    throw nlopt::forced_stop();
  }
}

} // namespace

const std::vector<std::string>& optimiser_names()
{
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Known& k : known())
      n.push_back(k.name);
    return n;
  }();
  return names;
}

std::string optimiser_label(const std::string& name)
{
  const Known* k = find_known(name);
  return k ? k->label : "";
}

double to_unit(const FitCost& c, double value)
{
  const double lo = c.decl.plausible_min, hi = c.decl.plausible_max;
  const double v = std::clamp(value, lo, hi);
  return c.log_scale() ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
}

double from_unit(const FitCost& c, double u)
{
  const double lo = c.decl.plausible_min, hi = c.decl.plausible_max;
  const double v = c.log_scale() ? lo * std::exp(u * std::log(hi / lo)) : lo + u * (hi - lo);
  return std::clamp(v, lo, hi); // exp/log round-off must not step outside
}

SearchResult search(const std::vector<FitCost>& costs, const std::string& optimiser, unsigned budget,
                    const std::function<double(const std::vector<double>&)>& objective)
{
  const Known* k = find_known(optimiser);
  const unsigned n = static_cast<unsigned>(costs.size());
  Search s{costs, objective, {}, budget};
  std::vector<double> u;
  for (const FitCost& c : costs)
    u.push_back(to_unit(c, c.start));
  if (budget == 0 || n == 0 || k == nullptr) {
    s(u);
    s.best.stop = "no search";
    return s.best;
  }
  // NEWUOA needs two coordinates at least; with one, BOBYQA is its bounded form.
  nlopt::opt opt(n == 1 && k->algorithm == nlopt::LN_NEWUOA_BOUND ? nlopt::LN_BOBYQA : k->algorithm, n);
  opt.set_lower_bounds(std::vector<double>(n, 0.0));
  opt.set_upper_bounds(std::vector<double>(n, 1.0));
  opt.set_min_objective(call, &s);
  opt.set_maxeval(static_cast<int>(budget));
  opt.set_xtol_abs(kXtol);
  opt.set_ftol_rel(kFtolRel);
  std::vector<double> step;
  for (double x : u)
    step.push_back(x + kInitialStep <= 1 ? kInitialStep : -kInitialStep);
  opt.set_initial_step(step);
  double f = 0;
  try {
    const nlopt::result r = opt.optimize(u, f);
    s.best.stop = r == nlopt::MAXEVAL_REACHED ? "evaluation budget"
                  : r == nlopt::XTOL_REACHED  ? "xtol"
                  : r == nlopt::FTOL_REACHED  ? "ftol"
                                              : "converged";
  } catch (const nlopt::roundoff_limited&) {
    s.best.stop = "round-off";
  } catch (const nlopt::forced_stop&) {
    if (s.error)
      std::rethrow_exception(s.error);
    s.best.stop = "evaluation budget";
  } catch (const std::invalid_argument& e) {
    throw std::logic_error(std::string("NLopt: ") + e.what());
  }
  return s.best;
}

} // namespace vsim::app
