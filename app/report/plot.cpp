#include "app/report/plot.hpp"

#include "app/report/plot_support.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/units.hpp"
#include "app/report/result_file.hpp"
#include "app/report/results.hpp"
#include "app/run/output_dir.hpp"
#include "transports/simulate.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace vsim::app {

namespace {

using namespace plotting;

const char* kSize = "workload.message_size";
// An axis is logarithmic when its values span more than this (largest over
// smallest): then 128 B and 64 KiB points, or CPU costs of 0.4 and 19 s per
// GB, all show.
constexpr double kLogSpan = 20;
// A legend title longer than this goes a key per line.
constexpr std::size_t kKeyTitleWidth = 36;
// The series' colours (Tableau 10, the lightest last) and point types.
constexpr std::array<const char*, 10> kColours = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                  "#b07aa1", "#9c755f", "#ff9da7", "#79706e", "#edc948"};
constexpr std::array<int, 10> kPointTypes = {7, 5, 9, 11, 13, 6, 4, 8, 10, 12};
// What CPU cost per GB is worked out from.
constexpr std::array<const char*, 3> kCpuInputs = {"throughput_MBps", "guest_cpu_percent", "host_cpu_percent"};

// A figure's title, centred on the whole figure (gnuplot's title centres on
// the plot area, beside which the legend stands), the plot below it.
std::string title_settings(const std::string& text)
{
  const auto lines = static_cast<double>(std::count(text.begin(), text.end(), '\n') + 1);
  return fmt::format("set label 1 {} at screen 0.5, screen 0.965 center\nset tmargin {}", quote_text(text),
                     lines + 2.5);
}

// The design choice a point stands for: its swept values but those on the
// x axis (the keys go in the legend's title).
std::string series_of(const json& point, const std::set<std::string>& on_x)
{
  std::string s;
  const json label = point.value("label", json::object());
  for (const auto& [key, value] : label.items())
    if (!on_x.count(key))
      s += (s.empty() ? "" : ", ") + value.get<std::string>();
  return s.empty() ? "all points" : s;
}

std::string series_keys(const json& point, const std::set<std::string>& on_x)
{
  std::vector<std::string> keys;
  const json label = point.value("label", json::object());
  for (const auto& [key, value] : label.items())
    if (!on_x.count(key))
      keys.push_back(key);
  std::string s = fmt::format("{}", fmt::join(keys, ", "));
  // Longer than a legend entry: a key per line, so that the legend does not
  // squeeze the plot (issue 51, item 7).
  return s.size() > kKeyTitleWidth ? fmt::format("{}", fmt::join(keys, ",\n")) : s;
}

// The x axis: the key asked for, else the swept key with the most distinct
// values.
std::string x_key_of(const json& points, const std::string& asked, const std::string& path)
{
  std::vector<std::string> keys;
  std::map<std::string, std::set<std::string>> values;
  for (const json& p : points) {
    const json label = p.value("label", json::object()); // items() must not outlive it
    for (const auto& [key, value] : label.items()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        keys.push_back(key);
      values[key].insert(value.dump());
    }
  }
  if (!asked.empty()) {
    if (std::find(keys.begin(), keys.end(), asked) == keys.end()) {
      std::string list;
      for (const auto& k : keys)
        list += (list.empty() ? "" : ", ") + k;
      throw InputError(fmt::format("{}: error: --x {}: not a swept key of this result (allowed: {})", path, asked,
                                   list.empty() ? "none: the result has no sweep" : list));
    }
    return asked;
  }
  // Ties go to the message size (the published figures' x axis), then to
  // the first key.
  std::string best;
  for (const auto& k : keys)
    if (best.empty() || values[k].size() > values[best].size() ||
        (values[k].size() == values[best].size() && k == kSize))
      best = k;
  return best;
}

// A point's figures of a metric over the iterations (min, max, mean,
// median), or nullptr when the point has not got the metric.
const json* stats_of(const json& point, const std::string& metric)
{
  const auto metrics = point.find("metrics");
  if (metrics == point.end() || !metrics->is_object())
    return nullptr;
  const auto it = metrics->find(metric);
  return it == metrics->end() ? nullptr : &*it;
}

// A ratio for the notes: 24.8, 512, 16384.
std::string span_text(double ratio)
{
  return ratio < 100 ? fmt::format("{:.3g}", ratio) : fmt::format("{:.0f}", ratio);
}

// The x axis of the metric figures: the swept key, each point's place on
// it, gnuplot's settings and what was chosen (for the note on stderr).
struct XAxis {
  std::string key; // empty: no sweep (the points in order)
  // The key and the keys swept with it (zipped: one value for each of its
  // values), which therefore split no line.
  std::set<std::string> on_x;
  std::string label;     // of the axis
  std::vector<double> x; // per point, in the result's order
  std::string settings;
  std::string note;
  // One place per value (the key's values are not numbers): the places are
  // categories, which no line joins (issue 51, item 7).
  bool categorical = false;
};

// The keys swept with `key`: a value for each of its values.
std::set<std::string> swept_with(const json& points, const std::string& key)
{
  std::map<std::string, std::map<std::string, std::set<std::string>>> values; // other key -> key's value -> its
  for (const json& p : points) {
    const json label = p.value("label", json::object()); // items() must not outlive it
    for (const auto& [k, v] : label.items())
      if (k != key)
        values[k][label.value(key, std::string())].insert(v.get<std::string>());
  }
  std::set<std::string> with;
  for (const auto& [k, by_value] : values)
    if (std::all_of(by_value.begin(), by_value.end(), [](const auto& e) { return e.second.size() == 1; }))
      with.insert(k);
  return with;
}

// Tick labels at the given places, turned when they would not fit side by
// side (at the default font, about this many characters fit across the
// figure), gnuplot's automatic margin making room for them.
constexpr std::size_t kTicsSideBySide = 90;
// cpu_per_GB draws a bar pair per point up to this many points, lines
// against the x axis beyond.
constexpr std::size_t kMostBars = 16;
std::string x_tics(const std::vector<std::pair<std::string, double>>& ticks)
{
  std::size_t longest = 0;
  for (const auto& t : ticks)
    longest = std::max(longest, t.first.size());
  std::string s = ticks.size() * (longest + 2) > kTicsSideBySide ? "set xtics rotate by -30 (" : "set xtics (";
  for (std::size_t k = 0; k < ticks.size(); ++k)
    s += fmt::format("{}{} {}", k ? ", " : "", quote(ticks[k].first), ticks[k].second);
  return s + ")";
}

// Where series i of n stands within a category's place (-0.5 .. 0.5 wide):
// side by side, centred, so that no two hide each other.
double category_shift(std::size_t i, std::size_t n)
{
  if (n < 2)
    return 0;
  const double step = std::min(0.12, 0.7 / static_cast<double>(n));
  return (static_cast<double>(i) - static_cast<double>(n - 1) / 2) * step;
}

XAxis x_axis(const json& points, const std::string& key)
{
  XAxis a;
  a.key = key;
  if (!key.empty()) {
    a.on_x = swept_with(points, key);
    std::string with;
    for (const auto& k : a.on_x)
      with += (with.empty() ? "" : ", ") + k;
    a.label = with.empty() ? key : key + " (" + with + " swept with it)";
    a.on_x.insert(key);
  } else {
    a.label = "point";
  }
  bool numeric = !key.empty();
  for (const json& p : points) {
    const json params = p.value("params", json::object());
    numeric = numeric && params.contains(key) && params[key].is_number();
  }
  if (!numeric) { // a place per value, in order of appearance
    std::vector<std::pair<std::string, double>> ticks;
    for (const json& p : points) {
      const std::string text = key.empty() ? std::to_string(p.value("index", 0))
                                           : p.value("label", json::object()).value(key, std::string("?"));
      auto it = std::find_if(ticks.begin(), ticks.end(), [&](const auto& t) { return t.first == text; });
      a.x.push_back(static_cast<double>(it - ticks.begin()));
      if (it == ticks.end())
        ticks.emplace_back(text, static_cast<double>(ticks.size()));
    }
    a.settings = x_tics(ticks) + fmt::format("\nset xrange [-0.5:{}]", static_cast<double>(ticks.size()) - 0.5);
    a.note = key.empty() ? "the points in order" : key + ", one place per value";
    a.categorical = true;
    return a;
  }
  std::map<double, std::string> ticks;
  const bool sizes = key == kSize || key.ends_with("_size") || key.ends_with("buf") || key.ends_with("bytes") ||
                     key.ends_with("buf_alloc");
  for (const json& p : points) {
    const json& v = p["params"][key];
    a.x.push_back(v.get<double>());
    ticks[a.x.back()] = sizes && v.is_number_integer()
                            ? format_size(v.get<std::int64_t>())
                            : p.value("label", json::object()).value(key, fmt::format("{}", a.x.back()));
  }
  const double lo = ticks.begin()->first, hi = ticks.rbegin()->first;
  const bool log = lo > 0 && hi / lo > kLogSpan;
  std::vector<std::pair<std::string, double>> places;
  for (const auto& [x, text] : ticks)
    places.emplace_back(text, x);
  a.settings = (log ? "set logscale x 2\n" : "") + x_tics(places);
  if (log)
    a.settings += fmt::format("\nset xrange [{}:{}]", lo / 1.5, hi * 1.5);
  else if (ticks.size() > 1)
    a.settings += fmt::format("\nset xrange [{}:{}]", lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05);
  a.note = fmt::format("{}, {}", key, log ? "log" : "linear");
  if (lo > 0 && ticks.size() > 1)
    a.note +=
        fmt::format(" (its values span {}x, {} {:g}x)", span_text(hi / lo), log ? "more than" : "at most", kLogSpan);
  return a;
}

// The y scale of a figure drawing these values (the means, or the bars).
struct YScale {
  bool log = false;
  std::string why;
};

YScale y_scale(const std::vector<double>& values, PlotOptions::Scale asked)
{
  if (asked != PlotOptions::Scale::Auto)
    return {asked == PlotOptions::Scale::Log, asked == PlotOptions::Scale::Log ? "--log" : "--linear"};
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (*lo <= 0)
    return {false, fmt::format("a value is {:g}, which a log axis cannot show", *lo)};
  const double span = *hi / *lo;
  if (span > kLogSpan)
    return {true,
            fmt::format("the values span {}x, more than {:g}x; --linear forces linear", span_text(span), kLogSpan)};
  return {false, fmt::format("the values span {}x, at most {:g}x; --log forces log", span_text(span), kLogSpan)};
}

// gnuplot's settings of an axis ('x' or 'y') for values from lo to hi
// (under log: the smallest positive value drawn, bar ends included). Log:
// with room below and above, ticks at 1, 2 and 5 times the powers of ten
// (only the powers over more than four of them, every digit when that
// gives less than three); linear: from 0 unless a value is negative.
std::string axis_settings(char axis, bool log, double lo, double hi)
{
  if (!log && lo == 0 && hi == 0)
    return fmt::format("set {}range [0:1]", axis); // not an empty range
  if (!log)
    return fmt::format("set {}range [{}:*]", axis, lo < 0 ? "*" : "0");
  const double bottom = lo / 1.5, top = hi * 1.5;
  std::vector<int> digits = top / bottom > 1e4 ? std::vector<int>{1} : std::vector<int>{1, 2, 5};
  std::string tics;
  for (int pass = 0; pass < 2 && std::count(tics.begin(), tics.end(), ',') < 2; ++pass) {
    if (pass == 1)
      digits = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    tics.clear();
    for (int e = static_cast<int>(std::floor(std::log10(bottom))); e <= static_cast<int>(std::ceil(std::log10(top)));
         ++e)
      for (int d : digits) {
        const double v = std::stod(fmt::format("{}e{}", d, e)); // exactly the decimal number
        if (v >= bottom && v <= top)
          tics += fmt::format("{}{:g}", tics.empty() ? "" : ", ", v);
      }
  }
  return fmt::format("set logscale {0}\nset {0}range [{1}:{2}]\nset {0}tics ({3})\nset format {0} '%g'", axis, bottom,
                     top, tics);
}

// The result at path (or path/result.json), as read_json words its errors.
json read_plotted_result(const std::string& path)
{
  try {
    return read_result_json(path).doc;
  } catch (const ResultFileError& e) {
    if (e.kind == ResultFileError::Kind::Unreadable)
      throw InputError(fmt::format("{}: error: cannot read the result", e.file));
    throw InputError(fmt::format("{}: error: not a JSON result: {}", e.file, e.detail));
  }
}

// Whether a point of the result is a round-trip point: it carries the
// round trips' histogram (docs/results.md).
bool has_round_trips(const json& points)
{
  return std::any_of(points.begin(), points.end(), [](const json& p) { return p.contains("rtt_histogram"); });
}

// The round-trip percentiles drawn against the message size, and their names in the legend.
constexpr std::array<std::pair<const char*, const char*>, 4> kRttPercentiles = {
    {{"rtt_p50_us", "p50"}, {"rtt_p90_us", "p90"}, {"rtt_p99_us", "p99"}, {"rtt_p999_us", "p99.9"}}};

// A point's swept values, for a line of its own (the point's index when none).
std::string point_title(const json& point)
{
  std::string label;
  const json swept = point.value("label", json::object());
  for (const auto& [key, value] : swept.items())
    label += (label.empty() ? "" : ", ") + value.get<std::string>();
  return label.empty() ? fmt::format("point {}", point.value("index", 0)) : label;
}

bool has_cpu_inputs(const json& points)
{
  for (const json& p : points)
    for (const char* m : kCpuInputs)
      if (!stats_of(p, m))
        return false;
  return true;
}

// The figures to draw, by metric name (or kCpuPerGbFigure): those asked
// for, each of which the result must have; else the run's report.metrics
// (throughput_MBps for a result without) that the result has, and the CPU
// cost when the result has what it needs.
std::vector<std::string> figures_of(const json& points, const std::vector<std::string>& asked, const std::string& path,
                                    std::ostream& err)
{
  std::set<std::string> present;
  for (const json& p : points) {
    const json metrics = p.value("metrics", json::object()); // items() must not outlive it
    for (const auto& [name, stats] : metrics.items())
      present.insert(name);
  }
  const bool cpu = has_cpu_inputs(points);
  const bool rtt = has_round_trips(points);
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end())
      names.push_back(n);
  };
  for (const std::string& n : asked) {
    if (n == kCpuPerGbFigure && !cpu)
      throw InputError(fmt::format("{}: error: --metrics {}: needs {}, {} and {} in every point", path, n,
                                   kCpuInputs[0], kCpuInputs[1], kCpuInputs[2]));
    if ((n == kRttCdfFigure || n == kRttPercentilesFigure) && !rtt)
      throw InputError(
          fmt::format("{}: error: --metrics {}: needs a round-trip result (points with rtt_histogram)", path, n));
    const bool figure = n == kCpuPerGbFigure || n == kRttCdfFigure || n == kRttPercentilesFigure;
    if (!figure && !present.count(n)) {
      std::string list = cpu ? kCpuPerGbFigure : "";
      if (rtt)
        list += std::string(list.empty() ? "" : ", ") + kRttCdfFigure + ", " + kRttPercentilesFigure;
      for (const auto& m : present)
        list += (list.empty() ? "" : ", ") + m;
      throw InputError(fmt::format("{}: error: --metrics: '{}' is not a metric of this result (allowed: {})", path, n,
                                   list.empty() ? "none: the result has no metrics" : list));
    }
    add(n);
  }
  if (!asked.empty())
    return names;
  const json params = points[0].value("params", json::object());
  const std::vector<std::string> reported = params.contains("report.metrics") && params["report.metrics"].is_string()
                                                ? split_commas(params["report.metrics"].get<std::string>())
                                                : std::vector<std::string>{"throughput_MBps"};
  for (const std::string& n : reported)
    if (present.count(n))
      add(n);
    else
      err << fmt::format("vsocksim plot: warning: report.metrics names {}, which this result has not got: no figure "
                         "of it\n",
                         n);
  if (cpu)
    add(kCpuPerGbFigure);
  if (rtt) {
    add(kRttCdfFigure);
    add(kRttPercentilesFigure);
  }
  return names;
}

// The figures of one result, their data files and one gnuplot script.
class ResultFigures {
public:
  ResultFigures(const json& r, const std::string& path, const std::string& out_dir, const PlotOptions& opt,
                std::ostream& err)
      : r_(r), points_(r["points"]), path_(path), dir_(out_dir), opt_(opt), err_(err),
        x_(x_axis(points_, x_key_of(points_, opt.x_key, path)))
  {
    const std::string name = r.value("experiment", std::string("result"));
    const json params = points_[0].value("params", json::object());
    const std::string description = params.value("description", std::string());
    head_ = !description.empty() && name.size() + 2 + description.size() <= 110 ? name + ": " + description : name;
    gp_ = "# Generated by `vsocksim plot`; rerun with: gnuplot plot.gp\n";
    for (std::size_t i = 0; i < kColours.size(); ++i)
      gp_ += fmt::format("set linetype {} lc rgb '{}' lw 1.5 pt {} ps 1.1\n", i + 1, kColours[i], kPointTypes[i]);
  }

  // The metric's mean against the x axis, one line per design choice, the
  // min-max over the iterations as error bars.
  void metric(const std::string& m)
  {
    if (!opt_.quiet && !x_noted_)
      err_ << "vsocksim plot: x axis: " << x_.note << '\n';
    x_noted_ = true;
    std::vector<double> means;
    for (const json& p : points_)
      if (const json* s = stats_of(p, m))
        means.push_back(s->at("mean").get<double>());
    const YScale y = y_scale(means, opt_.y_scale);
    std::map<std::string, std::vector<std::array<double, 4>>> series; // (x, mean, min, max); ordered: deterministic
    std::vector<std::string> order, dropped;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const json* s = stats_of(points_[i], m);
      if (!s)
        continue;
      const std::array<double, 3> v = {s->at("mean").get<double>(), s->at("min").get<double>(),
                                       s->at("max").get<double>()};
      if (y.log && v[0] <= 0) {
        dropped.push_back(std::to_string(points_[i].value("index", 0)));
        continue;
      }
      const std::string name = series_of(points_[i], x_.on_x);
      if (!series.count(name))
        order.push_back(name);
      series[name].push_back({x_.x[i], v[0], v[1], v[2]});
      for (double e : v)
        if (!y.log || e > 0) {
          lo = std::min(lo, e);
          hi = std::max(hi, e);
        }
    }
    note(m, y);
    left_out(m, dropped, order.empty());
    std::string stem = m; // metric names are [A-Za-z0-9_.]; a hand-made result's may be anything
    for (char& c : stem)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-')
        c = '_';
    const std::string data = dir_ + "/" + stem + ".dat";
    std::ofstream d(data);
    std::string plots;
    for (std::size_t i = 0; i < order.size(); ++i) {
      d << "# " << order[i] << ": x, mean, min, max over the iterations\n";
      auto pts = series[order[i]];
      std::sort(pts.begin(), pts.end());
      // Categories: the series side by side within each category's place.
      const double shift = x_.categorical ? category_shift(i, order.size()) : 0;
      for (auto q : pts) {
        if (y.log && q[2] <= 0)
          q[2] = lo / 1.5; // a bar reaching 0 or below ends at the axis
        d << fmt::format("{}\t{}\t{}\t{}\n", q[0] + shift, q[1], q[2], q[3]);
      }
      d << "\n\n";
      plots += fmt::format("{}{} index {} using 1:2:3:4 with {} lt {} dt {} title {}", i ? ", " : "plot ", quote(data),
                           i, x_.categorical ? "yerrorbars" : "yerrorlines", i % kColours.size() + 1,
                           i / kColours.size() % 4 + 1, quote(order[i]));
    }
    const std::string unit = metric_unit(m);
    const MetricDoc* doc = find_metric(m);
    const std::string about = m + (unit.empty() ? "" : " (" + unit + ")");
    render(stem, fmt::format("{}\nset key title {}\nset xlabel {}\nset ylabel {}\n{}\n{}\n{}",
                             title_settings(head_ + "\n" + wrap(doc ? about + ": " + doc->doc : about, 110)),
                             quote_text(series_keys(points_[0], x_.on_x)), quote_text(x_.label),
                             quote_text(about + "; mean, bars: min to max over the iterations"), x_.settings,
                             axis_settings('y', y.log, lo, hi), plots));
  }

  // CPU time per GB moved of more points than bars can be told apart by
  // (kMostBars): against the x axis as the metrics are, a line per design
  // choice of guest + host (solid, in the legend) and of the guest alone
  // (dashed, same colour).
  void cpu_per_gb_lines(const std::vector<std::array<double, 2>>& costs)
  {
    std::vector<double> values;
    for (const auto& c : costs)
      values.insert(values.end(), {c[0] + c[1], c[0]});
    const YScale y = y_scale(values, opt_.y_scale);
    std::map<std::string, std::vector<std::array<double, 3>>> series; // (x, guest + host, guest)
    std::vector<std::string> order, dropped;
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const double total = costs[i][0] + costs[i][1];
      if (y.log && (costs[i][0] <= 0 || total <= 0)) {
        dropped.push_back(std::to_string(points_[i].value("index", 0)));
        continue;
      }
      const std::string name = series_of(points_[i], x_.on_x);
      if (!series.count(name))
        order.push_back(name);
      series[name].push_back({x_.x[i], total, costs[i][0]});
    }
    note(kCpuPerGbFigure, y);
    left_out(kCpuPerGbFigure, dropped, order.empty());
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    const std::string data = dir_ + "/" + kCpuPerGbFigure + ".dat";
    std::ofstream d(data);
    std::string plots;
    for (std::size_t i = 0; i < order.size(); ++i) {
      d << "# " << order[i] << ": x, guest + host, guest (s/GB)\n";
      auto pts = series[order[i]];
      std::sort(pts.begin(), pts.end());
      const double shift = x_.categorical ? category_shift(i, order.size()) : 0;
      for (const auto& q : pts) {
        d << fmt::format("{}\t{}\t{}\n", q[0] + shift, q[1], q[2]);
        for (double v : {q[1], q[2]})
          if (!y.log || v > 0) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
          }
      }
      d << "\n\n";
      const std::string style = x_.categorical ? "points" : "linespoints";
      plots += fmt::format("{}{} index {} using 1:2 with {} lt {} dt 1 title {}, {} index {} using 1:3 with {} lt {} "
                           "dt 2 notitle",
                           i ? ", " : "plot ", quote(data), i, style, i % kColours.size() + 1, quote(order[i]),
                           quote(data), i, style, i % kColours.size() + 1);
    }
    render(kCpuPerGbFigure,
           fmt::format("{}\nset key title {}\nset xlabel {}\nset ylabel {}\n{}\n{}\n{}",
                       title_settings(head_ + "\nCPU cost per GB moved (guest_cpu_percent and host_cpu_percent over "
                                              "throughput_MBps)"),
                       quote_text(series_keys(points_[0], x_.on_x)), quote_text(x_.label),
                       quote_text("CPU time per GB moved (s/GB); solid: guest + host, dashed: guest"), x_.settings,
                       axis_settings('y', y.log, lo, hi), plots));
  }

  // CPU time per GB moved, guest and host, a bar each per point (stacked on
  // a linear axis, side by side on a log one), labelled by the point's
  // swept values.
  void cpu_per_gb()
  {
    std::vector<std::array<double, 2>> costs; // (guest, host) per point
    std::vector<double> values;
    for (const json& p : points_) {
      const double mbps = stats_of(p, kCpuInputs[0])->at("mean").get<double>();
      auto per_gb = [&](const char* m) { return stats_of(p, m)->at("mean").get<double>() / 100.0 * 1000.0 / mbps; };
      costs.push_back({per_gb(kCpuInputs[1]), per_gb(kCpuInputs[2])});
      values.insert(values.end(), costs.back().begin(), costs.back().end());
    }
    if (points_.size() > kMostBars) { // a bar per point would be unreadable
      cpu_per_gb_lines(costs);
      return;
    }
    const YScale y = y_scale(values, opt_.y_scale);
    std::vector<std::string> dropped;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    std::ofstream d(dir_ + "/" + kCpuPerGbFigure + ".dat");
    std::size_t longest = 0; // of the labels
    for (std::size_t i = 0; i < points_.size(); ++i) {
      std::string label;
      const json swept = points_[i].value("label", json::object());
      for (const auto& [key, value] : swept.items())
        label += (label.empty() ? "" : ", ") + value.get<std::string>();
      if (label.empty())
        label = fmt::format("point {}", points_[i].value("index", 0));
      std::array<std::string, 2> cells;
      for (std::size_t k = 0; k < 2; ++k) {
        const double v = costs[i][k];
        if (y.log && v <= 0) {
          dropped.push_back(fmt::format("{} ({})", points_[i].value("index", 0), k ? "host" : "guest"));
          cells[k] = "NaN";
          continue;
        }
        cells[k] = fmt::format("{}", v);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      d << fmt::format("{}\t{}\t{}\n", quote(label), cells[0], cells[1]);
      longest = std::max(longest, label.size());
    }
    // Labels side by side at the default font when they fit, else turned
    // (gnuplot's automatic margin makes room): never shrunk.
    const bool labels_fit = points_.size() * (longest + 2) <= kTicsSideBySide;
    note(kCpuPerGbFigure, y);
    left_out(kCpuPerGbFigure, dropped, lo > hi);
    std::string keys;
    const json first = points_[0].value("label", json::object());
    for (const auto& [key, value] : first.items())
      keys += (keys.empty() ? "" : ", ") + key;
    render(kCpuPerGbFigure,
           fmt::format("{}\nset xlabel {}\nset ylabel 'CPU time per GB moved (s/GB)'\n{}\n"
                       "set style data histograms\nset style histogram {}\nset style fill solid 0.8 border -1\n"
                       "set boxwidth 0.8\n{}\n"
                       "plot {} using 2:xtic(1) lt 1 title 'guest', '' using 3 lt 2 title 'host'",
                       title_settings(head_ + "\nCPU cost per GB moved (guest_cpu_percent and host_cpu_percent over "
                                              "throughput_MBps)"),
                       quote_text(keys.empty() ? "point" : keys), axis_settings('y', y.log, lo, hi),
                       y.log ? "clustered gap 1" : "rowstacked", labels_fit ? "set xtics" : "set xtics rotate by -30",
                       quote(dir_ + "/" + kCpuPerGbFigure + ".dat")));
  }

  // Each round-trip point's distribution: the share of its round trips at
  // or below each histogram bucket's upper bound (pooled over the
  // iterations), one line per point, on a log x axis.
  void rtt_cdf()
  {
    const std::string data = dir_ + "/" + kRttCdfFigure + ".dat";
    std::ofstream d(data);
    std::string plots;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    std::size_t n = 0;
    for (const json& p : points_) {
      const auto h = p.find("rtt_histogram");
      if (h == p.end() || !h->contains("buckets"))
        continue;
      std::vector<std::array<double, 3>> buckets; // lower, upper, count
      double total = 0;
      for (const json& b : (*h)["buckets"])
        if (b.at(1).get<double>() > 0) { // a log axis cannot show the [0, 0] bucket
          buckets.push_back({b.at(0).get<double>(), b.at(1).get<double>(), b.at(2).get<double>()});
          total += buckets.back()[2];
        }
      if (total <= 0)
        continue;
      const std::string title = point_title(p);
      d << "# " << title << ": round trip (us, the bucket's upper bound), share of round trips at or below it\n";
      d << fmt::format("{}\t0\n", buckets.front()[0]);
      double seen = 0;
      for (const auto& b : buckets) {
        seen += b[2];
        d << fmt::format("{}\t{}\n", b[1], seen / total);
      }
      d << "\n\n";
      lo = std::min(lo, buckets.front()[0]);
      hi = std::max(hi, buckets.back()[1]);
      plots += fmt::format("{}{} index {} using 1:2 with lines lt {} dt {} title {}", n ? ", " : "plot ", quote(data),
                           n, n % kColours.size() + 1, n / kColours.size() % 4 + 1, quote(title));
      ++n;
    }
    if (!n)
      throw InputError(fmt::format("{}: error: {}: no point has round trips to draw", path_, kRttCdfFigure));
    if (!opt_.quiet)
      err_ << fmt::format("vsocksim plot: {}: x axis log (round trips from {:g} to {:g} us), one line per point\n",
                          kRttCdfFigure, lo, hi);
    std::string keys;
    const json first = points_[0].value("label", json::object());
    for (const auto& [key, value] : first.items())
      keys += (keys.empty() ? "" : ", ") + key;
    render(kRttCdfFigure,
           fmt::format("{}\nset key title {}\nset xlabel 'round trip (us)'\nset ylabel 'share of round trips at or "
                       "below'\n{}\nset yrange [0:1]\nset ytics 0.1\n{}",
                       title_settings(head_ + "\nround-trip distribution of each point (CDF of rtt_histogram over "
                                              "the iterations; buckets within 0.4%)"),
                       quote_text(keys), axis_settings('x', true, lo, hi), plots));
  }

  // rtt_p50/p90/p99/p999_us (means over the iterations) against the
  // message size: workload.message_size, request_size or response_size,
  // whichever is swept with the most values (--x: that key); a line per
  // percentile and combination of the other swept values.
  void rtt_percentiles()
  {
    const XAxis x = x_axis(points_, rtt_x_key());
    if (!opt_.quiet)
      err_ << fmt::format("vsocksim plot: {}: x axis: {}\n", kRttPercentilesFigure, x.note);
    std::vector<double> values;
    std::map<std::string, std::vector<std::array<double, 2>>> lines; // "<series>\t<percentile>" -> (x, mean)
    std::vector<std::string> order;                                  // series, in order of appearance
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const std::string series = series_of(points_[i], x.on_x);
      for (const auto& [metric, name] : kRttPercentiles)
        if (const json* s = stats_of(points_[i], metric)) {
          if (std::find(order.begin(), order.end(), series) == order.end())
            order.push_back(series);
          lines[series + "\t" + name].push_back({x.x[i], s->at("mean").get<double>()});
          values.push_back(s->at("mean").get<double>());
        }
    }
    if (values.empty())
      throw InputError(fmt::format("{}: error: {}: no point has rtt_p50_us to draw", path_, kRttPercentilesFigure));
    const YScale y = y_scale(values, opt_.y_scale);
    note(kRttPercentilesFigure, y);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    const std::string data = dir_ + "/" + kRttPercentilesFigure + ".dat";
    std::ofstream d(data);
    std::string plots;
    std::size_t block = 0;
    for (std::size_t s = 0; s < order.size(); ++s)
      for (std::size_t q = 0; q < kRttPercentiles.size(); ++q) {
        auto pts = lines[order[s] + "\t" + kRttPercentiles[q].second];
        std::erase_if(pts, [&](const auto& v) { return y.log && v[1] <= 0; });
        if (pts.empty())
          continue;
        std::sort(pts.begin(), pts.end());
        const std::string title =
            (order.size() > 1 || order[s] != "all points" ? order[s] + " " : "") + kRttPercentiles[q].second;
        d << "# " << title << ": x, mean over the iterations (us)\n";
        const double shift = x.categorical ? category_shift(s, order.size()) : 0; // a series per column
        for (const auto& v : pts) {
          d << fmt::format("{}\t{}\n", v[0] + shift, v[1]);
          lo = std::min(lo, v[1]);
          hi = std::max(hi, v[1]);
        }
        d << "\n\n";
        plots += fmt::format("{}{} index {} using 1:2 with {} lt {} dt {} pt {} title {}", block ? ", " : "plot ",
                             quote(data), block, x.categorical ? "points" : "linespoints", s % kColours.size() + 1,
                             q + 1, kPointTypes[q], quote(title));
        ++block;
      }
    left_out(kRttPercentilesFigure, {}, block == 0);
    render(kRttPercentilesFigure,
           fmt::format("{}\nset key title {}\nset xlabel {}\nset ylabel 'round trip (us); mean over the "
                       "iterations'\n{}\n{}\n{}",
                       title_settings(head_ +
                                      "\nround-trip percentiles (rtt_p50_us, rtt_p90_us, rtt_p99_us, "
                                      "rtt_p999_us) against " +
                                      (x.key.empty() ? std::string("the points") : x.key)),
                       quote_text(series_keys(points_[0], x.on_x)), quote_text(x.label), x.settings,
                       axis_settings('y', y.log, lo, hi), plots));
  }

  // Predicted against measured, where the result carries published
  // figures: a series per metric of the rows, both axes on one scale.
  void validation()
  {
    const json& v = r_["validation"];
    std::vector<std::string> metrics;
    std::vector<double> values;
    for (const json& row : v["rows"]) {
      const std::string m = row["metric"].get<std::string>();
      if (std::find(metrics.begin(), metrics.end(), m) == metrics.end())
        metrics.push_back(m);
      values.insert(values.end(), {row["measured"].get<double>(), row["predicted"].get<double>()});
    }
    const YScale scale = y_scale(values, opt_.y_scale);
    const std::string data = dir_ + "/predicted_vs_measured.dat";
    std::ofstream d(data);
    std::vector<std::string> dropped;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    std::string plots = "plot x title 'predicted = measured' with lines lt 9, x*1.15 title '+15%' with lines lt 9 dt "
                        "2, x*0.85 title '-15%' with lines lt 9 dt 3";
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      d << "# " << metrics[i] << ": measured, predicted\n";
      for (const json& row : v["rows"]) {
        const double m = row["measured"].get<double>(), p = row["predicted"].get<double>();
        if (row["metric"] != metrics[i])
          continue;
        if (scale.log && (m <= 0 || p <= 0)) {
          dropped.push_back(fmt::format("{} ({})", row.value("point", 0), metrics[i]));
          continue;
        }
        lo = std::min({lo, m, p});
        hi = std::max({hi, m, p});
        d << fmt::format("{}\t{}\n", m, p);
      }
      d << "\n\n";
      const std::string unit = metric_unit(metrics[i]);
      plots += fmt::format(", {} index {} using 1:2 title {} with points lt {} pt {} ps 1.3", quote(data), i,
                           quote_text("published: " + metrics[i] + (unit.empty() ? "" : " (" + unit + ")")),
                           i % kColours.size() + 1, kPointTypes[i % kPointTypes.size()]);
    }
    note("predicted_vs_measured", scale, "x and y axes");
    left_out("predicted_vs_measured", dropped, lo > hi);
    const std::string axes =
        scale.log ? axis_settings('x', true, lo, hi) + "\n" + axis_settings('y', true, lo, hi)
                  : fmt::format("set xrange [{0}:{1}]\nset yrange [{0}:{1}]", std::min(lo, 0.0) * 1.1, hi * 1.1);
    render("predicted_vs_measured",
           fmt::format("{}\nset xlabel 'measured (published)'\nset ylabel 'predicted'\nset size square\n"
                       "set samples 400\n{}\n{}",
                       title_settings(fmt::format("{}\npredicted against measured (MAE {:.1f}%)", head_,
                                                  v["mean_abs_error_percent"].get<double>())),
                       axes, plots));
  }

  // Writes the script, runs gnuplot; returns the figures written.
  std::vector<std::string> finish()
  {
    const std::string script = dir_ + "/plot.gp";
    write_file_atomic(script, gp_);
    run_gnuplot(script);
    return written_;
  }

private:
  // The x axis of the percentiles: --x, else the swept size key with the
  // most values (message, request, response), else the metric figures'.
  std::string rtt_x_key() const
  {
    if (!opt_.x_key.empty())
      return x_.key;
    std::string best;
    std::size_t most = 0;
    for (const char* key : {"workload.message_size", "workload.request_size", "workload.response_size"}) {
      std::set<std::string> values;
      for (const json& p : points_)
        if (const json label = p.value("label", json::object()); label.contains(key))
          values.insert(label[key].dump());
      if (values.size() > most) {
        most = values.size();
        best = key;
      }
    }
    return most ? best : x_.key;
  }

  // Each figure starts from gnuplot's defaults (but the line types above).
  void render(const std::string& stem, const std::string& body)
  {
    for (const char* ext : {"svg", "png"}) {
      gp_ += terminal(ext);
      gp_ += fmt::format("set output {}\nreset\nset datafile separator '\\t'\nset grid\n"
                         "set key outside right top vertical\n{}\nunset output\n",
                         quote(dir_ + "/" + stem + "." + ext), body);
      written_.push_back(dir_ + "/" + stem + "." + ext);
    }
  }

  void note(const std::string& figure, const YScale& y, const char* axes = "y axis")
  {
    if (!opt_.quiet)
      err_ << fmt::format("vsocksim plot: {}: {} {} ({})\n", figure, axes, y.log ? "log" : "linear", y.why);
  }

  // The warning for the values --log leaves out (`dropped`: the points,
  // and which value of theirs when they have more than one); InputError
  // when none is left.
  void left_out(const std::string& figure, const std::vector<std::string>& dropped, bool nothing_left)
  {
    if (nothing_left)
      throw InputError(
          fmt::format("{}: error: --log: {} has no value above 0 to draw on a log axis (use --linear)", path_, figure));
    if (dropped.empty())
      return;
    std::string list;
    for (const auto& p : dropped)
      list += (list.empty() ? "" : ", ") + p;
    err_ << fmt::format("vsocksim plot: warning: {}: --log leaves out {} value(s) not above 0, which a log axis "
                        "cannot show ({} {})\n",
                        figure, dropped.size(), dropped.size() == 1 ? "point" : "points", list);
  }

  const json& r_;
  const json& points_;
  std::string path_, dir_;
  const PlotOptions& opt_;
  std::ostream& err_;
  std::string head_, gp_;
  const XAxis x_;
  bool x_noted_ = false;
  std::vector<std::string> written_;
};

} // namespace

std::vector<std::string> plot_result(const std::string& result_path, const std::string& out_dir, const PlotOptions& opt,
                                     std::ostream& err)
{
  const json r = read_plotted_result(result_path);
  if (!r.contains("points") || !r["points"].is_array() || r["points"].empty())
    throw InputError(fmt::format("{}: error: not a result of `vsocksim run` (no points)", result_path));
  const std::vector<std::string> names = figures_of(r["points"], opt.metrics, result_path, err);
  const bool validation = r.contains("validation") && !r["validation"]["rows"].empty();
  if (names.empty() && !validation)
    throw InputError(fmt::format("{}: error: nothing to draw: the result has none of its report.metrics (use "
                                 "--metrics)",
                                 result_path));
  ResultFigures figures(r, result_path, out_dir, opt, err);
  fs::create_directories(out_dir);
  for (const std::string& n : names)
    if (n == kCpuPerGbFigure)
      figures.cpu_per_gb();
    else if (n == kRttCdfFigure)
      figures.rtt_cdf();
    else if (n == kRttPercentilesFigure)
      figures.rtt_percentiles();
    else
      figures.metric(n);
  if (validation)
    figures.validation();
  return figures.finish();
}

std::vector<std::string> plot_predicted_vs_measured(const std::vector<PvmFigure>& figures, const std::string& dir,
                                                    const std::string& script)
{
  fs::create_directories(dir);
  std::vector<std::string> written;
  std::string gp = fmt::format("# Generated by `vsocksim validate --plot`; rerun with: gnuplot {}\n"
                               "set datafile separator '\\t'\nset grid\nset size square\nset key outside right top\n",
                               script);
  for (const PvmFigure& f : figures) {
    const std::string data = dir + "/" + f.stem + ".dat";
    std::ofstream d(data);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    std::string plots = "plot x title 'predicted = measured' with lines lc 'black', "
                        "x*1.15 title '+15%' with lines dt 2 lc 'gray40', x*0.85 title '-15%' with lines dt 2 lc "
                        "'gray40'";
    for (std::size_t i = 0; i < f.series.size(); ++i) {
      d << "# " << f.series[i].title << "\n";
      for (const auto& [m, p] : f.series[i].points) {
        d << fmt::format("{}\t{}\n", m, p);
        lo = std::min({lo, m, p});
        hi = std::max({hi, m, p});
      }
      d << "\n\n";
      plots += fmt::format(", {} index {} using 1:2 title {} with points pt {} ps 1.3 lc {}", quote(data), i,
                           quote(f.series[i].title), 5 + 2 * static_cast<int>(i % 4), i % 8 + 1);
    }
    const bool log = lo > 0;
    const std::string axes =
        log ? fmt::format("set logscale xy\nset xrange [{0}:{1}]\nset yrange [{0}:{1}]\nset samples 400\n", lo / 1.5,
                          hi * 1.5)
            : fmt::format("unset logscale\nset xrange [{0}:{1}]\nset yrange [{0}:{1}]\n", std::min(lo, 0.0) * 1.1,
                          hi * 1.1);
    for (const char* ext : {"svg", "png"}) {
      const std::string out = dir + "/" + f.stem + "." + ext;
      gp += terminal(ext) + fmt::format("set output {}\nset title {}\nset xlabel 'measured (published)'\n"
                                        "set ylabel 'predicted'\n{}{}\nunset output\n",
                                        quote(out), quote(f.title), axes, plots);
      written.push_back(out);
    }
  }
  const std::string path = dir + "/" + script;
  write_file_atomic(path, gp);
  run_gnuplot(path);
  return written;
}

std::vector<std::string> plot_objective_space(const std::vector<ObjectiveSpaceFigure>& figures, const std::string& dir,
                                              const std::string& script)
{
  fs::create_directories(dir);
  std::vector<std::string> written;
  std::string gp = fmt::format("# Generated by `vsocksim search`; rerun with: gnuplot {}\n"
                               "set datafile separator '\\t'\nset grid\nset key outside right top\n",
                               script);
  for (const ObjectiveSpaceFigure& f : figures) {
    const std::string data = dir + "/" + f.stem + ".dat";
    std::ofstream d(data);
    const std::array<std::pair<const char*, const std::vector<std::pair<double, double>>*>, 3> sets = {
        {{"feasible points evaluated", &f.feasible},
         {"points that broke a constraint", &f.infeasible},
         {"Pareto front", &f.front}}};
    const std::array<std::string, 3> styles = {"with points pt 7 ps 0.6 lc rgb '#9c9c9c'",
                                               "with points pt 2 ps 0.7 lc rgb '#e15759'",
                                               "with linespoints pt 7 ps 1.2 lw 2 lc rgb '#4e79a7'"};
    std::string plots = "plot";
    std::size_t block = 0; // gnuplot's index: the data blocks written, empty sets left out
    for (std::size_t i = 0; i < sets.size(); ++i) {
      if (sets[i].second->empty())
        continue;
      d << "# " << sets[i].first << "\n";
      for (const auto& [x, y] : *sets[i].second)
        d << fmt::format("{}\t{}\n", x, y);
      d << "\n\n";
      plots += fmt::format("{}{} index {} using 1:2 title {} {}", block ? ", " : " ", quote(data), block,
                           quote(sets[i].first), styles[i]);
      ++block;
    }
    std::string bounds;
    for (double b : f.x_bounds)
      bounds += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 2 lw 2 lc rgb '#59a14f'\n", b);
    for (double b : f.y_bounds)
      bounds +=
          fmt::format("set arrow from graph 0, first {0} to graph 1, first {0} nohead dt 2 lw 2 lc rgb '#59a14f'\n", b);
    if (!f.x_bounds.empty() || !f.y_bounds.empty())
      bounds += "set label 2 'dashed: a constraint bound' at screen 0.74, screen 0.8 tc rgb '#59a14f'\n";
    // An axis with a bound spans the points and the bound (gnuplot's
    // autoscale would leave a bound beyond the points out of the figure).
    auto range = [&](char axis, const std::vector<double>& marks, bool first) {
      if (marks.empty())
        return fmt::format("set {}range [*:*]\n", axis);
      double lo = *std::min_element(marks.begin(), marks.end()), hi = *std::max_element(marks.begin(), marks.end());
      for (const auto& [title, points] : sets)
        for (const auto& p : *points) {
          lo = std::min(lo, first ? p.first : p.second);
          hi = std::max(hi, first ? p.first : p.second);
        }
      const double pad = (hi - lo) * 0.05 + (hi == lo ? 1 : 0);
      return fmt::format("set {}range [{}:{}]\n", axis, lo - pad, hi + pad);
    };
    const std::string ranges = range('x', f.x_bounds, true) + range('y', f.y_bounds, false);
    for (const char* ext : {"svg", "png"}) {
      const std::string out = dir + "/" + f.stem + "." + ext;
      gp +=
          terminal(ext) + fmt::format("set output {}\n{}\nset xlabel {}\nset ylabel {}\nunset arrow\nunset label 2\n{}"
                                      "{}{}\nunset output\n",
                                      quote(out), title_settings(f.title), quote_text(f.x_label), quote_text(f.y_label),
                                      bounds, ranges, plots == "plot" ? "plot 1/0 notitle" : plots);
      written.push_back(out);
    }
  }
  const std::string path = dir + "/" + script;
  write_file_atomic(path, gp);
  run_gnuplot(path);
  return written;
}

} // namespace vsim::app
