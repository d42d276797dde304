#include "app/calibrate/identify.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace vsim::app {

namespace {

using Column = std::vector<double>;

double dot(const Column& a, const Column& b)
{
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

double norm(const Column& a)
{
  return std::sqrt(dot(a, a));
}

Column column(const std::vector<std::vector<double>>& e, std::size_t c)
{
  Column out;
  for (const auto& row : e)
    out.push_back(row.at(c));
  return out;
}

double largest(const Column& a)
{
  double m = 0;
  for (double v : a)
    m = std::max(m, std::fabs(v));
  return m;
}

// The chosen column whose direction is closest to `c`'s, with |cos|.
std::pair<std::size_t, double> closest(const std::vector<Column>& cols, const std::vector<std::size_t>& chosen,
                                       std::size_t c)
{
  std::size_t best = chosen.front();
  double cos = -1;
  for (std::size_t k : chosen) {
    const double v = std::fabs(dot(cols[c], cols[k])) / (norm(cols[c]) * norm(cols[k]));
    if (v > cos) {
      cos = v;
      best = k;
    }
  }
  return {best, cos};
}

} // namespace

Identification identify(const std::vector<std::vector<double>>& e, const std::vector<std::string>& names,
                        std::size_t max_chosen)
{
  Identification id;
  std::vector<Column> cols, residual;
  std::vector<std::size_t> open;
  for (std::size_t c = 0; c < names.size(); ++c) {
    cols.push_back(column(e, c));
    residual.push_back(cols.back());
    if (largest(cols[c]) < kElasticityFloor)
      id.out.emplace_back(
          c, fmt::format("no row moves it (largest |elasticity| {:.3f} < {})", largest(cols[c]), kElasticityFloor));
    else
      open.push_back(c);
  }
  while (!open.empty()) {
    auto pick = open.begin();
    for (auto it = open.begin(); it != open.end(); ++it)
      if (norm(residual[*it]) > norm(residual[*pick]))
        pick = it;
    const std::size_t c = *pick;
    const double kept = norm(residual[c]) / norm(cols[c]);
    if (kept < kCollinearResidual || id.chosen.size() >= max_chosen)
      break;
    id.chosen.push_back(c);
    open.erase(pick);
    // Project the chosen direction out of every open column.
    const Column q = residual[c];
    const double qq = dot(q, q);
    for (std::size_t k : open) {
      const double f = dot(residual[k], q) / qq;
      for (std::size_t i = 0; i < q.size(); ++i)
        residual[k][i] -= f * q[i];
    }
  }
  for (std::size_t c : open) {
    const double kept = norm(residual[c]) / norm(cols[c]);
    if (id.chosen.size() >= max_chosen && kept >= kCollinearResidual)
      id.out.emplace_back(c, fmt::format("not among the {} with the largest independent effects (at most {}: "
                                         "--max-costs, and no more than the rows of the smallest fit)",
                                         max_chosen, max_chosen));
    else {
      const auto [k, cos] = closest(cols, id.chosen, c);
      id.out.emplace_back(c, fmt::format("moves the rows only together with the fitted costs ({:.1f}% of its "
                                         "column is theirs; closest {}, |cos| {:.3f})",
                                         100 * (1 - kept * kept), names[k], cos));
    }
  }
  std::sort(id.out.begin(), id.out.end());
  return id;
}

} // namespace vsim::app
