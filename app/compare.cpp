#include "app/compare.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "app/results.hpp"
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

}  // namespace

void declare_validation_params(ParamRegistry& reg)
{
  reg.declare({"validation.measurements", ParamKind::Text, "path", "", 0, 0, {},
               "CSV of published figures to compare with (relative to the experiment file); empty: none"});
}

std::vector<Measurement> load_measurements(const std::string& path, const ParamRegistry& reg)
{
  std::ifstream f(path);
  if (!f)
    throw InputError(fmt::format("{}: error: cannot read the measurements file", path));
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
        if (h != "metric" && h != "source" && !is_stat(h) && reg.find(h) == nullptr)
          throw InputError(fmt::format("{}:{}:{}: error: unknown column '{}' (allowed: experiment keys, metric, "
                                       "min, max, mean, median, source)",
                                       path, lineno, col, h));
        col += static_cast<int>(h.size()) + 1;
      }
      continue;
    }
    if (cells.size() != header.size())
      throw InputError(fmt::format("{}:{}:1: error: {} cells, the header has {}", path, lineno, cells.size(),
                                   header.size()));
    Measurement m;
    m.line = lineno;
    int col = 1;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string& h = header[i];
      const std::string& v = cells[i];
      if (h == "metric") {
        if (find_metric(v) == nullptr)
          throw InputError(fmt::format("{}:{}:{}: error: metric: unknown metric '{}'", path, lineno, col, v));
        m.metric = v;
      } else if (h == "source") {
        m.source = v;
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
      }
      col += static_cast<int>(v.size()) + 1;
    }
    if (m.metric.empty() || (!m.stats.count("mean") && !m.stats.count("median")))
      throw InputError(fmt::format("{}:{}:1: error: a row needs a metric and a mean or median", path, lineno));
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
    const Point* match = &ex.points.at(static_cast<std::size_t>(matches[i]));
    std::vector<double> values;
    for (const auto& it : results.at(match->index).iterations) {
      auto f = it.find(m.metric);
      if (f != it.end())
        values.push_back(f->second);
    }
    if (values.empty())
      continue;
    Stats s = summarize(values);
    ComparisonRow r{&m, match->index, m.stats.count("mean") ? "mean" : "median", 0, 0, 0};
    r.measured = m.stats.at(r.stat);
    r.predicted = r.stat == "mean" ? s.mean : s.median;
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
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  std::string out = fmt::format("Predicted against measured ({}):\n", c.file);
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
      line += fmt::format("{:<{}}", row[i], width[i] + 3);
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  if (!c.rows.empty()) {
    const ComparisonRow& w = c.rows[c.worst];
    out += fmt::format("mean absolute error: {:.1f}% over {} row(s); worst: point {} ({:+.1f}%)\n",
                       c.mean_abs_error_percent, c.rows.size(), w.point, w.error_percent);
  }
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
    row["source"] = r.m->source;
    j["rows"].push_back(row);
  }
  j["mean_abs_error_percent"] = c.mean_abs_error_percent;
  j["unmatched_rows"] = c.unmatched;
  return j;
}

}  // namespace vsim::app
