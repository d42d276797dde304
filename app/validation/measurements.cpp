#include "app/validation/measurements.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "app/experiment/platforms.hpp"
#include "app/report/results.hpp"
#include "transports/simulate.hpp"

namespace vsim::app {

namespace {

std::vector<std::string> split_csv_line(const std::string& line)
{
  std::vector<std::string> out;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, ','))
    out.push_back(cell);
  if (!line.empty() && line.back() == ',')
    out.emplace_back();
  return out;
}

bool is_stat(const std::string& s)
{
  return s == "min" || s == "max" || s == "mean" || s == "median";
}

// Position in ex.points of the point with this index.
std::size_t position_of(const Experiment& ex, std::size_t index)
{
  for (std::size_t i = 0; i < ex.points.size(); ++i)
    if (ex.points[i].index == index)
      return i;
  throw std::out_of_range(fmt::format("no point with index {}", index));
}

// Column of the `unit` cell of a row.
int unit_column(const std::vector<std::string>& header, const std::vector<std::string>& cells)
{
  int col = 1;
  for (std::size_t i = 0; i < cells.size() && header[i] != "unit"; ++i)
    col += static_cast<int>(cells[i].size()) + 1;
  return col;
}

} // namespace

std::string Measurement::value_of(const std::string& key) const
{
  for (const auto& [k, v] : keys)
    if (k == key)
      return v;
  return "";
}

std::string Measurement::keys_text() const
{
  std::string s;
  for (const auto& [k, v] : keys)
    s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s;
}

std::string read_measurements_text(const std::string& path)
{
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw InputError(fmt::format("{}: error: cannot read the measurements file", path));
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

std::vector<Measurement> load_measurements(const std::string& path, const ParamRegistry& reg)
{
  return load_measurements_text(read_measurements_text(path), path, reg);
}

std::vector<Measurement> load_measurements_text(const std::string& text, const std::string& path,
                                                const ParamRegistry& reg)
{
  std::istringstream f(text);
  std::vector<std::string> header;
  std::vector<Measurement> out;
  std::string line;
  for (int lineno = 1; std::getline(f, line); ++lineno) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    std::vector<std::string> cells = split_csv_line(line);
    if (header.empty()) {
      header = cells;
      int col = 1;
      for (const std::string& h : header) {
        if (h != "metric" && h != "source" && h != "unit" && !is_stat(h) && reg.find(h) == nullptr)
          throw InputError(fmt::format("{}:{}:{}: error: unknown column '{}' (allowed: experiment keys, metric, "
                                       "min, max, mean, median, source, unit)",
                                       path, lineno, col, h));
        col += static_cast<int>(h.size()) + 1;
      }
      continue;
    }
    if (cells.size() != header.size())
      throw InputError(
          fmt::format("{}:{}:1: error: {} cells, the header has {}", path, lineno, cells.size(), header.size()));
    Measurement m;
    m.line = lineno;
    int col = 1;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string& h = header[i];
      const std::string& v = cells[i];
      if (h == "metric") {
        try {
          m.expr = MetricExpr::parse(v, [&reg](const std::string& name) { return check_metric_name(name, reg); });
        } catch (const MetricExpr::Error& e) {
          throw InputError(
              fmt::format("{}:{}:{}: error: metric: {}", path, lineno, col + static_cast<int>(e.offset), e.what));
        }
        m.metric = v;
        m.metric_column = col;
      } else if (h == "source") {
        m.source = v;
      } else if (h == "unit") {
        m.unit = v;
      } else if (is_stat(h)) {
        if (!v.empty()) {
          std::size_t used = 0;
          double d = 0;
          try {
            d = std::stod(v, &used);
          } catch (const std::exception&) {
            used = 0;
          }
          if (used != v.size() || !std::isfinite(d))
            throw InputError(fmt::format("{}:{}:{}: error: {}: expected a number, got '{}'", path, lineno, col, h, v));
          m.stats[h] = d;
        }
      } else if (!v.empty()) {
        m.keys.emplace_back(h, v);
        m.key_columns.push_back(col);
      }
      col += static_cast<int>(v.size()) + 1;
    }
    if (m.metric.empty() || (!m.stats.count("mean") && !m.stats.count("median")))
      throw InputError(fmt::format("{}:{}:1: error: a row needs a metric and a mean or median", path, lineno));
    if (m.expr.is_name()) {
      const MetricDoc* doc = find_metric(m.metric);
      if (m.unit.empty())
        m.unit = doc->unit;
      else if (m.unit != doc->unit)
        throw InputError(fmt::format("{}:{}:{}: error: unit: {} is in {}, not '{}' (allowed: {}; for another unit "
                                     "convert in the metric column, e.g. throughput_MBps*0.008 for Gbit/s)",
                                     path, lineno, unit_column(header, cells), m.metric, doc->unit, m.unit, doc->unit));
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<long> match_measurements(const Experiment& ex, const std::vector<Measurement>& measurements,
                                     const std::string& file)
{
  std::vector<long> out;
  for (const Measurement& m : measurements) {
    const Point* match = nullptr;
    for (const Point& p : ex.points) {
      bool all = true;
      for (const auto& [key, text] : m.keys)
        if (!p.params.has(key) || value_to_string(p.params.get(key)) != text) {
          all = false;
          break;
        }
      if (all) {
        if (match != nullptr)
          throw InputError(fmt::format("{}:{}:1: error: the row matches several points ({} and {}); name more keys",
                                       file, m.line, match->index, p.index));
        match = &p;
      }
    }
    out.push_back(match == nullptr ? -1 : static_cast<long>(match->index));
  }
  return out;
}

std::string unmatched_row_message(const Experiment& ex, const Measurement& m, const std::string& file)
{
  for (std::size_t k = 0; k < m.keys.size(); ++k) {
    const auto& [key, text] = m.keys[k];
    std::set<std::string> values; // sorted: deterministic
    for (const Point& p : ex.points)
      if (p.params.has(key))
        values.insert(value_to_string(p.params.get(key)));
    if (values.count(text))
      continue;
    std::string have;
    for (const std::string& v : values)
      have += (have.empty() ? "" : ", ") + v;
    return fmt::format("{}:{}:{}: error: {}: no point of {} has the value '{}' (its points have: {}); the row "
                       "matches no point",
                       file, m.line, m.key_columns.at(k), key, ex.file, text, have);
  }
  return fmt::format("{}:{}:1: error: no point of {} has this combination ({}); the row matches no point", file, m.line,
                     ex.file, m.keys_text());
}

std::string missing_metric_message(const Experiment& ex, const MissingMetric& mm, const std::string& file)
{
  const Params& params = ex.points.at(position_of(ex, mm.point)).params;
  if (MetricExpr::is_key(mm.metric))
    return fmt::format("{}:{}:{}: error: metric: {} is '{}' at point {} of {}, not a number (allowed: keys with "
                       "numeric values at every matched point)",
                       file, mm.m->line, mm.m->metric_column, mm.metric,
                       params.has(mm.metric) ? value_to_string(params.get(mm.metric)) : "", mm.point, ex.file);
  return fmt::format("{}:{}:{}: error: metric: the run of {} (point {}, transport {}) reports no metric '{}' "
                     "(allowed: the metrics that transport reports)",
                     file, mm.m->line, mm.m->metric_column, ex.file, mm.point, value_to_string(params.get("transport")),
                     mm.metric);
}

Comparison compare(const Experiment& ex, const std::vector<PointResult>& results,
                   const std::vector<Measurement>& measurements, const std::string& file)
{
  Comparison c;
  c.file = file;
  double sum = 0;
  std::vector<long> matches = match_measurements(ex, measurements, file);
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& m = measurements[i];
    if (matches[i] < 0) {
      ++c.unmatched;
      continue;
    }
    // Positions, not indices: a sharded run holds only some of the points.
    const std::size_t at = position_of(ex, static_cast<std::size_t>(matches[i]));
    const Point* match = &ex.points.at(at);
    if (!results.at(at).failed.empty()) {
      c.failed.push_back(FailedRow{&m, match->index});
      continue;
    }
    std::vector<double> values;
    std::string missing;
    for (const Metrics& it : results.at(at).iterations) {
      std::optional<double> v = m.expr.eval(it, match->params, &missing);
      if (!v)
        break;
      values.push_back(*v);
    }
    if (!missing.empty()) {
      c.missing.push_back(MissingMetric{&m, match->index, missing});
      continue;
    }
    if (values.empty())
      continue;
    Stats s = summarize(values);
    ComparisonRow r{&m, match->index, m.stats.count("mean") ? "mean" : "median", 0, 0, 0};
    r.measured = m.stats.at(r.stat);
    r.predicted = r.stat == "mean" ? s.mean : s.median;
    for (const MemberResult& member : results.at(at).members) { // sim.ensemble
      r.members.push_back(member.failed.empty() ? m.expr.eval(member.metrics, match->params) : std::nullopt);
      r.weights.push_back(member.weight);
    }
    if (!r.members.empty())
      if (const PlatformProfile* profile = find_profile(match->params.text("platform")))
        if (const auto d = effect_discrepancy(*profile))
          r.discrepancy = d->sigma;
    r.error_percent = (r.predicted - r.measured) / r.measured * 100.0;
    sum += std::fabs(r.error_percent);
    c.rows.push_back(r);
    if (std::fabs(r.error_percent) > std::fabs(c.rows[c.worst].error_percent))
      c.worst = c.rows.size() - 1;
  }
  if (!c.rows.empty())
    c.mean_abs_error_percent = sum / static_cast<double>(c.rows.size());
  return c;
}

std::string comparison_table(const Comparison& c)
{
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"point", "row", "metric", "stat", "measured", "predicted", "error"});
  for (const ComparisonRow& r : c.rows) {
    std::string keys;
    for (const auto& [k, v] : r.m->keys)
      keys += (keys.empty() ? "" : " ") + k + "=" + v;
    rows.push_back({std::to_string(r.point), keys, r.m->metric, r.stat, fmt::format("{:.4g}", r.measured),
                    fmt::format("{:.4g}", r.predicted), fmt::format("{:+.1f}%", r.error_percent)});
  }
  std::string out = fmt::format("Predicted against measured ({}):\n", c.file) + render_columns(rows);
  if (!c.rows.empty()) {
    const ComparisonRow& w = c.rows[c.worst];
    out += fmt::format("mean absolute error: {:.1f}% over {} row(s); worst: point {} ({:+.1f}%)\n",
                       c.mean_abs_error_percent, c.rows.size(), w.point, w.error_percent);
  }
  for (const MissingMetric& mm : c.missing)
    out += fmt::format("line {} ({}): not compared, '{}' has no value at point {}\n", mm.m->line, mm.m->metric,
                       mm.metric, mm.point);
  for (const FailedRow& f : c.failed)
    out += fmt::format("line {} ({}): not compared, point {} failed\n", f.m->line, f.m->metric, f.point);
  if (c.unmatched > 0)
    out += fmt::format("{} measured row(s) match no point of this run\n", c.unmatched);
  return out;
}

nlohmann::ordered_json comparison_json(const Comparison& c)
{
  nlohmann::ordered_json j;
  j["measurements"] = c.file;
  j["rows"] = nlohmann::ordered_json::array();
  for (const ComparisonRow& r : c.rows) {
    nlohmann::ordered_json row;
    row["point"] = r.point;
    for (const auto& [k, v] : r.m->keys)
      row["match"][k] = v;
    row["metric"] = r.m->metric;
    row["stat"] = r.stat;
    row["measured"] = r.measured;
    row["predicted"] = r.predicted;
    row["error_percent"] = r.error_percent;
    if (const auto e = r.members.empty() ? std::nullopt : ensemble_spread(r.members, r.weights))
      row["ensemble"] = {{"members", e->members}, {"p10", e->p10}, {"p50", e->p50}, {"p90", e->p90}};
    row["source"] = r.m->source;
    j["rows"].push_back(row);
  }
  j["mean_abs_error_percent"] = c.mean_abs_error_percent;
  j["unmatched_rows"] = c.unmatched;
  if (!c.failed.empty()) { // left out when no point failed
    j["failed_point_rows"] = nlohmann::ordered_json::array();
    for (const FailedRow& f : c.failed) {
      nlohmann::ordered_json row;
      row["point"] = f.point;
      for (const auto& [k, v] : f.m->keys)
        row["match"][k] = v;
      row["metric"] = f.m->metric;
      j["failed_point_rows"].push_back(row);
    }
  }
  return j;
}

} // namespace vsim::app
