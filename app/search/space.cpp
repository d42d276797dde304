#include "app/search/space.hpp"

#include <cmath>
#include <limits>

#include "app/experiment/registry.hpp"
#include "transports/simulate.hpp"

namespace vsim::app::search {

Space::Space(const Experiment& ex, bool keep_points) : ex_(ex), keep_points_(keep_points)
{
  if (!ex.search)
    throw std::logic_error("search: the experiment has no search section");
  // The metrics the parameters decide alone, by name (those of the file's
  // own point: every transport reports the same ones).
  const std::map<std::string, double> known = params_metrics(ex.points.at(0).params);
  for (std::size_t c = 0; c < spec().constraints.size(); ++c) {
    bool early = true;
    for (const std::string& name : spec().constraints[c].expr.names())
      early = early && (MetricExpr::is_key(name) || known.count(name) != 0);
    if (early)
      static_.insert(c);
  }
}

double Space::combinations() const
{
  double n = 1;
  for (std::size_t k = 0; k < knobs(); ++k)
    n *= static_cast<double>(values(k));
  return n;
}

Choice Space::nth(std::uint64_t n) const
{
  Choice c(knobs(), 0);
  for (std::size_t k = knobs(); k-- > 0;) {
    c[k] = static_cast<std::size_t>(n % values(k));
    n /= values(k);
  }
  return c;
}

const Space::Candidate& Space::candidate(const Choice& c)
{
  if (auto it = cache_.find(c); it != cache_.end())
    return it->second;
  Candidate out;
  out.early.assign(spec().constraints.size(), std::numeric_limits<double>::quiet_NaN());
  try {
    out.point = search_point(ex_, c, 0, registry());
    out.resolved = true;
  } catch (const InputError& e) {
    out.refused = e.what();
  }
  if (out.resolved) {
    const std::map<std::string, double> metrics = params_metrics(out.point->params);
    for (std::size_t i : static_) {
      const SearchConstraint& con = spec().constraints[i];
      const std::optional<double> v = con.expr.eval(metrics, out.point->params);
      out.early[i] = v ? *v : std::numeric_limits<double>::quiet_NaN();
      out.violation += con.violation(out.early[i]);
    }
    if (!keep_points_ || out.violation > 0)
      out.point.reset();
  }
  return cache_.emplace(c, std::move(out)).first->second;
}

std::string Space::describe(const Choice& c) const
{
  std::string s;
  for (std::size_t k = 0; k < knobs(); ++k)
    s += (k ? ", " : "") + spec().space[k].key + "=" + spec().space[k].values[c[k]].raw;
  return s;
}

} // namespace vsim::app::search
