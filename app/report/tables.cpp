#include "app/report/tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "app/experiment/effective.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/text.hpp"
#include "app/report/stats.hpp"
#include "app/report/text.hpp"
#include "sim/run_length.hpp"

namespace vsim::app {
namespace {

// The value text of one key at a point: its label, else its parameter.
std::string key_text(const Point& p, const std::string& key)
{
  for (const auto& [k, v] : p.label)
    if (k == key)
      return v;
  if (p.params.has(key))
    return value_to_string(p.params.get(key));
  return "";
}

// A sweep axis: all zip keys together, or one grid key.
struct Axis {
  std::vector<std::string> keys;
  std::string name() const { return join(keys, ", "); }
  std::string value(const Point& p) const
  {
    std::vector<std::string> v;
    for (const auto& k : keys)
      v.push_back(key_text(p, k));
    return join(v, ", ");
  }
  std::string assignment(const Point& p) const // "k1=v1, k2=v2"
  {
    std::vector<std::string> v;
    for (const auto& k : keys)
      v.push_back(k + "=" + key_text(p, k));
    return join(v, ", ");
  }
};

std::vector<Axis> sweep_axes(const Experiment& ex)
{
  std::vector<Axis> axes;
  if (!ex.zip_keys.empty())
    axes.push_back(Axis{ex.zip_keys});
  for (const auto& k : ex.grid_keys)
    axes.push_back(Axis{{k}});
  return axes;
}

std::string csv_field(const std::string& s)
{
  if (s.find_first_of(",\"\r\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

// Exact: the shortest text that reads back as the same double.
std::string exact_number(double v)
{
  return fmt::format("{}", v);
}

// Table cells: integers from 100 up, else 3 significant digits.
std::string short_number(double v)
{
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  std::string s = std::fabs(v) >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
  if (s == "-0")
    s = "0";
  return s;
}

// The cell of a point: min/max/mean/median, with a '*' when extrapolated.
// What a table cell holds (report.stat).
std::string stat_title(const std::string& stat)
{
  if (stat == "mean")
    return "mean";
  if (stat == "ci")
    return "mean +- half-width of the 95% confidence interval";
  if (stat == "range")
    return "mean [min, max]";
  return "min/max/avg/median";
}

std::string cell_text(const PointResult& r, const std::string& metric, const std::string& stat = "all",
                      const PointResult* baseline = nullptr)
{
  if (!r.failed.empty())
    return r.hang() ? "hangs" : "failed";
  std::vector<double> values;
  for (const auto& it : r.iterations)
    if (auto f = it.find(metric); f != it.end())
      values.push_back(f->second);
  if (values.empty())
    return "-";
  const std::size_t n = values.size();
  double var = 0;
  Stats s = summarize(values);
  for (double v : values)
    var += (v - s.mean) * (v - s.mean);
  std::string text;
  if (stat == "mean")
    text = short_number(s.mean);
  else if (stat == "ci")
    text = n < 2 ? short_number(s.mean)
                 : short_number(s.mean) + " +- " +
                       short_number(student_t975(n - 1) *
                                    std::sqrt(var / static_cast<double>(n - 1) / static_cast<double>(n)));
  else if (stat == "range")
    text = short_number(s.mean) + " [" + short_number(s.min) + ", " + short_number(s.max) + "]";
  else
    text = short_number(s.min) + "/" + short_number(s.max) + "/" + short_number(s.mean) + "/" + short_number(s.median);
  if (baseline && baseline != &r) { // report.baseline: the change of the mean against that point's
    std::vector<double> base;
    for (const auto& it : baseline->iterations)
      if (auto f = it.find(metric); f != it.end())
        base.push_back(f->second);
    if (!base.empty() && summarize(base).mean != 0)
      text += fmt::format(" ({:+.1f}%)", (s.mean / summarize(base).mean - 1) * 100);
  }
  text += extrapolated_iterations(r) ? "*" : "";
  if (!r.members.empty()) // sim.ensemble: the members' p50 [p10, p90]
    if (const auto e = ensemble_spread(member_values(r, metric), member_weights(r)))
      text += " ens " + short_number(e->p50) + " [" + short_number(e->p10) + ", " + short_number(e->p90) + "]";
  return text;
}

// Distinct values in order of first appearance.
void add_unique(std::vector<std::string>& list, const std::string& v)
{
  if (std::find(list.begin(), list.end(), v) == list.end())
    list.push_back(v);
}

std::string iterations_text(const std::vector<PointResult>& results)
{
  std::set<std::size_t> counts;
  for (const auto& r : results)
    if (r.failed.empty())
      counts.insert(r.iterations.size());
  if (counts.empty())
    return "0 iterations";
  std::size_t lo = *counts.begin(), hi = *counts.rbegin();
  if (lo == hi)
    return fmt::format("{} iteration{}", lo, lo == 1 ? "" : "s");
  return fmt::format("{} to {} iterations", lo, hi);
}

// What a table cell shows (report.stat; "all" when the result has none).
std::string report_stat(const Experiment& ex)
{
  return !ex.points.empty() && ex.points[0].params.has("report.stat") ? ex.points[0].params.text("report.stat") : "all";
}

// The point every cell is compared with (report.baseline), if any.
const PointResult* report_baseline(const Experiment& ex, const std::vector<PointResult>& results)
{
  if (ex.points.empty() || !ex.points[0].params.has("report.baseline"))
    return nullptr;
  const std::int64_t b = ex.points[0].params.integer("report.baseline");
  for (std::size_t i = 0; i < ex.points.size(); ++i)
    if (b >= 0 && ex.points[i].index == static_cast<std::size_t>(b))
      return &results[i];
  return nullptr;
}

// What `ens` in a cell is, when points ran an ensemble; else, when a
// point's profile has one, that it exists and how to run it.
std::string ensemble_footer(const Experiment& ex, const std::vector<PointResult>& results)
{
  std::size_t ran = 0, members = 0, failed = 0;
  std::set<std::string> unused; // profiles with an ensemble the run did not use
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].members.empty()) {
      ++ran;
      members = std::max(members, results[i].members.size());
      for (const MemberResult& m : results[i].members)
        failed += !m.failed.empty();
    } else if (ex.points[i].params.has("platform")) {
      const PlatformProfile* prof = find_profile(ex.points[i].params.text("platform"));
      if (prof && has_ensemble(*prof))
        unused.insert(prof->name);
    }
  }
  std::string out;
  if (ran)
    out += fmt::format("\nens: the p50 [p10, p90] over the {} members of the platform's ensemble (sim.ensemble: "
                       "cost vectors that fit its calibration rows within their noise), each simulated once with "
                       "iteration 0's random streams, on {} of {} point(s){}\n",
                       members, ran, results.size(),
                       failed ? fmt::format("; {} member simulation(s) failed (the JSON says why)", failed) : "");
  if (!unused.empty())
    out += fmt::format("\nplatform {} has an ensemble (costs that fit its rows equally well): this run used its "
                       "central member; --ensemble (or sim.ensemble: true) runs every member and gives each figure "
                       "its p10..p90 interval\n",
                       join(std::vector<std::string>(unused.begin(), unused.end()), ", "));
  return out;
}

// What ends the tables: the failed points named, how many points were
// extrapolated, and the ensemble.
std::string table_footer(const Experiment& ex, const std::vector<PointResult>& results)
{
  std::string out;
  std::size_t extrapolated = 0;
  double precision = 0;
  std::vector<std::string> failed;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].failed.empty())
      failed.push_back(point_name(ex.points[i]));
    if (extrapolated_iterations(results[i])) {
      ++extrapolated;
      if (ex.points[i].params.has("sim.precision"))
        precision = std::max(precision, ex.points[i].params.number("sim.precision"));
    }
  }
  if (!failed.empty())
    out += fmt::format("\nfailed: {} of {} point(s), no figures: {}\n", failed.size(), results.size(),
                       fmt::join(failed, ", "));
  if (extrapolated)
    out += fmt::format("\n* {} of {} point(s) extrapolated from the steady state (sim.run_length: auto): 95% "
                       "confidence interval of throughput (round trips: also of the round trip's mean and p99) "
                       "within +-{:g}%; --set sim.run_length=full simulates every byte\n",
                       extrapolated, results.size(), precision * 100);
  return out + ensemble_footer(ex, results) + caveat_notes(ex);
}

} // namespace

std::string to_csv(const Experiment& ex, const std::vector<PointResult>& results)
{
  check_results(ex, results);
  std::vector<std::string> keys = ex.zip_keys;
  keys.insert(keys.end(), ex.grid_keys.begin(), ex.grid_keys.end());

  std::vector<std::string> header{"index"};
  for (const auto& k : keys)
    header.push_back(csv_field(k));
  for (const char* h : {"metric", "unit", "min", "max", "mean", "median"})
    header.push_back(h);
  std::string out = join(header, ",") + "\n";

  for (std::size_t i = 0; i < ex.points.size(); ++i) {
    const Point& p = ex.points[i];
    std::vector<std::string> prefix{std::to_string(p.index)};
    for (const auto& k : keys)
      prefix.push_back(csv_field(key_text(p, k)));
    if (!results[i].failed.empty()) { // one row: metric "failed", no unit, no figures
      std::vector<std::string> row = prefix;
      row.insert(row.end(), {"failed", "", "", "", "", ""});
      out += join(row, ",") + "\n";
      continue;
    }
    for (const auto& [name, values] : metric_values(results[i])) {
      Stats s = summarize(values);
      std::vector<std::string> row = prefix;
      row.push_back(csv_field(name));
      row.push_back(csv_field(metric_unit(name)));
      for (double v : {s.min, s.max, s.mean, s.median})
        row.push_back(exact_number(v));
      out += join(row, ",") + "\n";
    }
  }
  return out;
}

std::string to_table(const Experiment& ex, const std::vector<PointResult>& results,
                     const std::vector<std::string>& metrics)
{
  check_results(ex, results);
  std::vector<std::string> names = metrics;
  if (names.empty()) {
    const std::set<std::string> all = metric_names(results);
    names.assign(all.begin(), all.end());
  }
  const std::vector<Axis> axes = sweep_axes(ex);
  const std::string over = iterations_text(results);
  const std::string stat = report_stat(ex);
  const PointResult* baseline = report_baseline(ex, results);

  std::string out;
  for (std::size_t mi = 0; mi < names.size(); ++mi) {
    const std::string& metric = names[mi];
    if (mi)
      out += "\n";
    std::string unit = metric_unit(metric);
    out += fmt::format("{} — {}{}, {} over {}{}\n", ex.name, metric, unit.empty() ? "" : " (" + unit + ")",
                       stat_title(stat), over,
                       baseline ? fmt::format("; (change of the mean against point {})", baseline->index) : "");

    if (axes.empty()) {
      std::vector<std::vector<std::string>> rows{{metric}};
      for (const auto& r : results)
        rows.push_back({cell_text(r, metric, stat, baseline)});
      out += render_columns(rows);
      continue;
    }

    if (axes.size() == 1) {
      std::vector<std::vector<std::string>> rows{{axes[0].name(), metric}};
      std::vector<std::string> seen;
      for (std::size_t i = 0; i < ex.points.size(); ++i) {
        std::string v = axes[0].value(ex.points[i]);
        if (std::find(seen.begin(), seen.end(), v) != seen.end())
          continue;
        seen.push_back(v);
        rows.push_back({v, cell_text(results[i], metric, stat, baseline)});
      }
      out += render_columns(rows);
      continue;
    }

    // Two or more axes: the last gives the columns, the one before the rows,
    // every earlier one a separate table.
    const Axis& row_axis = axes[axes.size() - 2];
    const Axis& col_axis = axes[axes.size() - 1];
    auto outer_key = [&](const Point& p) {
      std::vector<std::string> v;
      for (std::size_t a = 0; a + 2 < axes.size(); ++a)
        v.push_back(axes[a].value(p));
      return v;
    };
    std::vector<std::vector<std::string>> groups; // outer values, first appearance
    for (const auto& p : ex.points)
      if (auto k = outer_key(p); std::find(groups.begin(), groups.end(), k) == groups.end())
        groups.push_back(k);

    for (std::size_t g = 0; g < groups.size(); ++g) {
      std::vector<std::size_t> members;
      for (std::size_t i = 0; i < ex.points.size(); ++i)
        if (outer_key(ex.points[i]) == groups[g])
          members.push_back(i);
      if (g)
        out += "\n";
      if (axes.size() > 2) {
        std::vector<std::string> title;
        for (std::size_t a = 0; a + 2 < axes.size(); ++a)
          title.push_back(axes[a].assignment(ex.points[members.front()]));
        out += join(title, ", ") + "\n";
      }
      std::vector<std::string> row_values, col_values;
      for (std::size_t i : members) {
        add_unique(row_values, row_axis.value(ex.points[i]));
        add_unique(col_values, col_axis.value(ex.points[i]));
      }
      std::vector<std::vector<std::string>> rows;
      std::vector<std::string> head{row_axis.name() + " \\ " + col_axis.name()};
      head.insert(head.end(), col_values.begin(), col_values.end());
      rows.push_back(std::move(head));
      for (const auto& rv : row_values) {
        std::vector<std::string> row{rv};
        for (const auto& cv : col_values) {
          std::string cell = "-";
          for (std::size_t i : members)
            if (row_axis.value(ex.points[i]) == rv && col_axis.value(ex.points[i]) == cv) {
              cell = cell_text(results[i], metric, stat, baseline);
              break;
            }
          row.push_back(std::move(cell));
        }
        rows.push_back(std::move(row));
      }
      out += render_columns(rows);
    }
  }
  return out + table_footer(ex, results);
}

namespace {

// A group of metrics to_grouped_table shows in one table: the first group
// whose `member` takes a metric (by its name and declared unit) holds it.
struct MetricGroup {
  const char* title;
  const char* prefix; // left out of the column headers when every metric of the group has it
  const char* suffix;
  bool (*member)(const std::string& name, const std::string& unit);
};

const std::vector<MetricGroup>& metric_groups()
{
  using S = const std::string&;
  static const std::vector<MetricGroup> groups = {
      {"throughput", "", "", [](S n, S) { return n.starts_with("throughput_") || n == "efficiency"; }},
      {"time", "", "_seconds", [](S, S u) { return u == "s"; }},
      {"CPU", "", "", [](S n, S u) { return u == "%" && n.find('.') == std::string::npos; }},
      {"CPU per CPU and category", "cpu.", "_percent", [](S n, S) { return n.starts_with("cpu."); }},
      {"CPU per thread and category", "thread.", "_percent", [](S n, S) { return n.starts_with("thread."); }},
      {"counts per MB", "", "_per_MB", [](S, S u) { return u == "1/MB"; }},
      {"queue levels", "queue.", ".mean", [](S n, S) { return n.starts_with("queue.") && n.ends_with(".mean"); }},
      {"queue occupancy", "queue.", "_percent", [](S n, S) { return n.starts_with("queue."); }},
      {"memory", "", "", [](S n, S) { return n.starts_with("memory_"); }},
      {"ring sizes", "ring_bytes_", "", [](S n, S) { return n.starts_with("ring_bytes_"); }},
      {"simulator", "sim_", "", [](S n, S) { return n.starts_with("sim_"); }},
      {"other", "", "", [](S, S) { return true; }},
  };
  return groups;
}

// The column header of a metric in its group: without the group's prefix
// and suffix when `strip`, with its unit when the group's units differ.
std::string group_header(const MetricGroup& g, const std::string& metric, bool strip, bool units_differ)
{
  std::string h = metric;
  if (strip)
    h = metric.substr(std::strlen(g.prefix), metric.size() - std::strlen(g.prefix) - std::strlen(g.suffix));
  const std::string unit = metric_unit(metric);
  return units_differ && !unit.empty() ? h + " (" + unit + ")" : h;
}

} // namespace

std::string to_grouped_table(const Experiment& ex, const std::vector<PointResult>& results,
                             const std::vector<std::string>& metrics, std::size_t width)
{
  check_results(ex, results);
  std::vector<std::string> names = metrics;
  std::vector<std::string> idle; // every metric: the CPUs' and threads' that are 0 everywhere, left out
  if (names.empty()) {
    for (const std::string& m : metric_names(results)) {
      const bool per_entity = m.starts_with("cpu.") || m.starts_with("thread.");
      const bool zero = std::all_of(results.begin(), results.end(), [&](const PointResult& r) {
        return std::all_of(r.iterations.begin(), r.iterations.end(), [&](const Metrics& it) {
          const auto f = it.find(m);
          return f == it.end() || f->second == 0;
        });
      });
      (per_entity && zero ? idle : names).push_back(m);
    }
  }
  const std::vector<MetricGroup>& groups = metric_groups();
  std::vector<std::vector<std::string>> members(groups.size());
  for (const std::string& m : names)
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (groups[g].member(m, metric_unit(m))) {
        members[g].push_back(m);
        break;
      }
  const std::size_t used =
      static_cast<std::size_t>(std::count_if(members.begin(), members.end(), [](const auto& m) { return !m.empty(); }));
  const std::string stat = report_stat(ex);
  const PointResult* baseline = report_baseline(ex, results);
  std::vector<std::string> keys = ex.zip_keys;
  keys.insert(keys.end(), ex.grid_keys.begin(), ex.grid_keys.end());
  std::string out =
      fmt::format("{} — {} metric{} in {} group{}, {} over {}{}\n", ex.name, names.size(), names.size() == 1 ? "" : "s",
                  used, used == 1 ? "" : "s", stat_title(stat), iterations_text(results),
                  baseline ? fmt::format("; (change of the mean against point {})", baseline->index) : "");
  out += keys.empty() ? "a row per point\n" : "a row per point (index: " + join(keys, ", ") + ")\n";
  if (!idle.empty()) {
    // "cpu.host3", "thread.vhost": an entity every metric of which is 0
    auto entity = [](const std::string& m) { return m.substr(0, m.find('.', m.find('.') + 1)); };
    std::set<std::string> busy; // entities with a metric shown
    for (const std::string& m : names)
      if (m.starts_with("cpu.") || m.starts_with("thread."))
        busy.insert(entity(m));
    std::set<std::string> idle_entities;
    std::size_t categories = 0; // zero metrics of entities that are not idle
    for (const std::string& m : idle) {
      if (busy.count(entity(m)))
        ++categories;
      else
        idle_entities.insert(entity(m));
    }
    out += fmt::format("left out, 0 in every point (--metrics NAME shows one): {}{}{}\n",
                       idle_entities.empty()
                           ? ""
                           : "idle " + join(std::vector<std::string>(idle_entities.begin(), idle_entities.end()), ", "),
                       !idle_entities.empty() && categories > 0 ? "; " : "",
                       categories > 0 ? fmt::format("{} busy categories of the others", categories) : "");
  }

  // The point column: "K: v1, v2" (the swept values, as the sweep wrote
  // them), K right-aligned so the values line up.
  std::size_t digits = 1;
  for (const Point& p : ex.points)
    digits = std::max(digits, std::to_string(p.index).size());
  std::vector<std::string> point_cells{"point"};
  for (const Point& p : ex.points) {
    std::vector<std::string> values;
    for (const auto& k : keys)
      values.push_back(key_text(p, k));
    point_cells.push_back(fmt::format("{:>{}}", p.index, digits) + (values.empty() ? "" : ": " + join(values, ", ")));
  }
  std::size_t point_width = 0;
  for (const auto& c : point_cells)
    point_width = std::max(point_width, text_width(c));

  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::vector<std::string>& group = members[g];
    if (group.empty())
      continue;
    const MetricGroup& def = groups[g];
    const std::size_t affixes = std::strlen(def.prefix) + std::strlen(def.suffix);
    const bool strip = affixes > 0 && std::all_of(group.begin(), group.end(), [&](const std::string& m) {
                         return m.size() > affixes && m.starts_with(def.prefix) && m.ends_with(def.suffix);
                       });
    const std::string unit = metric_unit(group.front());
    const bool units_differ =
        std::any_of(group.begin(), group.end(), [&](const std::string& m) { return metric_unit(m) != unit; });
    // Each metric's column: header, then a cell per point.
    std::vector<std::vector<std::string>> columns;
    std::vector<std::size_t> widths;
    for (const std::string& m : group) {
      std::vector<std::string> column{group_header(def, m, strip, units_differ)};
      for (const PointResult& r : results)
        column.push_back(cell_text(r, m, stat, baseline));
      std::size_t w = 0;
      for (const auto& c : column)
        w = std::max(w, text_width(c));
      columns.push_back(std::move(column));
      widths.push_back(w);
    }
    // Split into parts no wider than `width` (at least one metric each),
    // keeping a family (the header up to its last '.': one CPU, thread or
    // queue) in one part where it fits in one.
    std::vector<std::string> family;
    for (const auto& column : columns)
      family.push_back(column[0].substr(0, std::min(column[0].rfind('.'), column[0].find(' '))));
    auto family_fits = [&](std::size_t f) { // the family beginning at column f, in one part
      std::size_t line = point_width;
      for (std::size_t k = f; k < columns.size() && family[k] == family[f]; ++k)
        line += 3 + widths[k];
      return line <= width;
    };
    std::vector<std::size_t> part_starts{0};
    for (std::size_t c = 0, line = point_width; c < columns.size(); ++c) {
      while (c > part_starts.back() && line + 3 + widths[c] > width) {
        std::size_t f = c; // where c's family begins in this part
        while (f > part_starts.back() && !family[c].empty() && family[f - 1] == family[c])
          --f;
        part_starts.push_back(f > part_starts.back() && (f == 0 || family[f - 1] != family[f]) && family_fits(f) ? f
                                                                                                                 : c);
        line = point_width;
        for (std::size_t k = part_starts.back(); k < c; ++k)
          line += 3 + widths[k];
      }
      line += 3 + widths[c];
    }
    std::string title = def.title;
    if (strip)
      title += fmt::format(": {}<column>{}", def.prefix, def.suffix);
    if (!units_differ && !unit.empty())
      title += " (" + unit + ")";
    for (std::size_t part = 0; part < part_starts.size(); ++part) {
      const std::size_t begin = part_starts[part];
      const std::size_t end = part + 1 < part_starts.size() ? part_starts[part + 1] : columns.size();
      out += "\n" + title;
      if (part_starts.size() > 1)
        out += fmt::format(", part {} of {}", part + 1, part_starts.size());
      out += "\n";
      std::vector<std::vector<std::string>> rows;
      for (std::size_t row = 0; row < point_cells.size(); ++row) {
        std::vector<std::string> line{point_cells[row]};
        for (std::size_t c = begin; c < end; ++c)
          line.push_back(columns[c][row]);
        rows.push_back(std::move(line));
      }
      out += render_columns(rows);
    }
  }
  return out + table_footer(ex, results);
}

std::string table_notes(const Experiment& ex, std::vector<std::vector<Effective>> eff)
{
  std::string out;
  // Effective values that differ between points, one row per point.
  if (eff.empty())
    for (const Point& p : ex.points)
      eff.push_back(effective_values(p.params));
  std::vector<std::string> differing;
  if (!eff.empty())
    for (const Effective& e : eff[0]) {
      if (e.name.starts_with("memory_")) // the parts of memory_bytes_per_connection, a metric of its own
        continue;
      for (const auto& other : eff) {
        auto it = std::find_if(other.begin(), other.end(), [&](const Effective& o) { return o.name == e.name; });
        if (it == other.end() || it->value != e.value) {
          differing.push_back(e.name);
          break;
        }
      }
    }
  if (!differing.empty()) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head{"point"};
    for (const auto& n : differing)
      head.push_back("effective." + n);
    rows.push_back(std::move(head));
    for (std::size_t i = 0; i < ex.points.size(); ++i) {
      std::vector<std::string> row{std::to_string(ex.points[i].index)};
      for (const auto& n : differing) {
        auto it = std::find_if(eff[i].begin(), eff[i].end(), [&](const Effective& o) { return o.name == n; });
        row.push_back(it == eff[i].end() ? "-" : short_number(it->value));
      }
      rows.push_back(std::move(row));
    }
    out += "\nWhat the transport used where the points differ (effective values):\n" + render_columns(rows);
  }
  out += "\nMB = 10^6 bytes; CPU percentages sum over CPUs (200% is two CPUs busy); `vsocksim describe metrics` "
         "says what each metric is.\n";
  return out;
}

} // namespace vsim::app
