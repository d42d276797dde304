#include "app/validation/validate.hpp"
#include "app/report/results.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/experiment/platforms.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/units.hpp"
#include "app/report/plot.hpp"
#include "app/report/text.hpp"
#include "app/validation/effects.hpp"
#include "transports/simulate.hpp"

namespace fs = std::filesystem;

namespace vsim::app {

namespace {

// ---- loading -----------------------------------------------------------------

// Where the top-level map of an experiment file starts ("LINE:COL"): what an
// error about a key the file lacks points at.
std::string top_of(const std::string& file)
{
  try {
    const YAML::Mark m = YAML::LoadFile(file).Mark();
    if (!m.is_null())
      return fmt::format("{}:{}", m.line + 1, m.column + 1);
  } catch (const YAML::Exception&) {
  }
  return "1:1";
}

bool is_yaml(const fs::path& p)
{
  return p.extension() == ".yaml" || p.extension() == ".yml";
}

// ---- the report ----------------------------------------------------------------

// Figures as read: integers from 1000 up, else four significant digits.
std::string number(double v)
{
  return std::fabs(v) >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
}

std::string error_text(double percent)
{
  return fmt::format("{:+.1f}%", percent);
}

// The experiment keys a study's rows name, in order of first use.
std::vector<std::string> key_columns(const Study& s)
{
  std::vector<std::string> keys;
  for (const Measurement& m : s.measurements)
    for (const auto& [k, v] : m.keys)
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        keys.push_back(k);
  return keys;
}

// A metric as shown: in Markdown as code (an expression's '*' is no emphasis).
std::string metric_text(const Measurement& m, bool md)
{
  return md ? "`" + m.metric + "`" : m.metric;
}

// "key=value, ...: metric": a row in a sentence.
std::string row_name(const ComparisonRow& r, bool md)
{
  const std::string keys = r.m->keys_text();
  return keys + (keys.empty() ? "" : ": ") + metric_text(*r.m, md);
}

// Sources the rows cite, sorted.
std::string sources(const Study& s)
{
  std::set<std::string> ids;
  for (const Measurement& m : s.measurements)
    if (!m.source.empty())
      ids.insert(m.source);
  std::string out;
  for (const std::string& id : ids)
    out += (out.empty() ? "" : ", ") + id;
  return out.empty() ? "not named" : out;
}

// Distinct values of a key over the points ("10", or "1 / 10" when swept).
std::string point_values(const Study& s, const std::string& key, bool size)
{
  std::vector<std::string> values;
  for (const Point& p : s.ex.points) {
    if (!p.params.has(key))
      continue;
    std::string v = size ? format_size(p.params.integer(key)) : value_to_string(p.params.get(key));
    if (std::find(values.begin(), values.end(), v) == values.end())
      values.push_back(v);
  }
  std::string out;
  for (const std::string& v : values)
    out += (out.empty() ? "" : " / ") + v;
  return out;
}

std::string run_size(const Study& s)
{
  const bool round_trips = std::any_of(s.ex.points.begin(), s.ex.points.end(),
                                       [](const Point& p) { return round_trip_bytes(p.params) > 0; });
  return fmt::format("{} point(s), {} iteration(s) of {} per point", s.ex.points.size(),
                     point_values(s, "iterations", false),
                     round_trips ? point_values(s, "workload.transactions", false) + " round trip(s)"
                                 : point_values(s, "workload.total_bytes", true));
}

std::string description(const Study& s)
{
  return s.ex.base.has("description") ? s.ex.base.text("description") : "";
}

// The table of one study: header and one line per compared row.
std::vector<std::vector<std::string>> study_rows(const Study& s, bool with_study, bool md)
{
  const std::vector<std::string> keys = key_columns(s);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head;
  if (with_study)
    head.push_back("study");
  head.insert(head.end(), keys.begin(), keys.end());
  for (const char* h : {"metric", "unit", "stat", "measured", "predicted", "error"})
    head.push_back(h);
  rows.push_back(head);
  for (const ComparisonRow& r : s.comparison.rows) {
    std::vector<std::string> row;
    if (with_study)
      row.push_back(s.ex.name);
    for (const std::string& k : keys)
      row.push_back(r.m->value_of(k));
    for (const std::string& cell : {metric_text(*r.m, md), r.m->unit, r.stat, fmt::format("{}", r.measured),
                                    number(r.predicted), error_text(r.error_percent)})
      row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

struct Overall {
  std::size_t rows = 0;
  double mae = 0;
  const Study* worst_study = nullptr;
  const ComparisonRow* worst = nullptr;
};

Overall overall(const std::vector<Study>& studies)
{
  Overall o;
  double sum = 0;
  for (const Study& s : studies)
    for (const ComparisonRow& r : s.comparison.rows) {
      ++o.rows;
      sum += std::fabs(r.error_percent);
      if (o.worst == nullptr || std::fabs(r.error_percent) > std::fabs(o.worst->error_percent)) {
        o.worst = &r;
        o.worst_study = &s;
      }
    }
  if (o.rows > 0)
    o.mae = sum / static_cast<double>(o.rows);
  return o;
}

const char* plural_studies(std::size_t n)
{
  return n == 1 ? "study" : "studies";
}

std::string summary_line(const Study& s, bool md)
{
  const Comparison& c = s.comparison;
  if (c.rows.empty())
    return fmt::format("{}: no rows compared", s.ex.name);
  const ComparisonRow& w = c.rows[c.worst];
  return fmt::format("{}: {} row(s), mean absolute error {:.1f}%, worst {} ({})", s.ex.name, c.rows.size(),
                     c.mean_abs_error_percent, error_text(w.error_percent), row_name(w, md));
}

// The rows not compared because their point failed, a line each ("" when
// none).
std::string failed_lines(const Study& s, bool md)
{
  std::string out;
  for (const FailedRow& f : s.comparison.failed) {
    const std::string keys = f.m->keys_text();
    out += fmt::format("{}not compared, point {} failed: {}{}{}\n", md ? "- " : "", f.point, keys,
                       keys.empty() ? "" : ": ", metric_text(*f.m, md));
  }
  return out;
}

// "N row(s) not compared: their points failed" over every study ("" when
// none).
std::string failed_total_line(const std::vector<Study>& studies)
{
  std::size_t n = 0;
  for (const Study& s : studies)
    n += s.comparison.failed.size();
  return n == 0 ? "" : fmt::format("{} row(s) not compared: their points failed\n", n);
}

std::string overall_line(const std::vector<Study>& studies, bool md)
{
  const Overall o = overall(studies);
  if (o.worst == nullptr)
    return fmt::format("overall: no rows compared in {} {}", studies.size(), plural_studies(studies.size()));
  return fmt::format("overall: {} row(s) in {} {}, mean absolute error {:.1f}%, worst {} ({}: {})", o.rows,
                     studies.size(), plural_studies(studies.size()), o.mae, error_text(o.worst->error_percent),
                     o.worst_study->ex.name, row_name(*o.worst, md));
}

std::string markdown_table(const std::vector<std::vector<std::string>>& rows)
{
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line = "|";
    for (const std::string& cell : rows[r])
      line += " " + cell + " |";
    out += line + "\n";
    if (r == 0) {
      std::string rule = "|";
      for (std::size_t i = 0; i < rows[r].size(); ++i)
        rule += "---|";
      out += rule + "\n";
    }
  }
  return out;
}

std::string file_stem(const std::string& name)
{
  std::string s = name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      c = '_';
  return s;
}

} // namespace

std::vector<std::string> validation_files(const std::vector<std::string>& paths)
{
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto add = [&](const std::string& f) {
    if (seen.insert(fs::path(f).lexically_normal().string()).second)
      files.push_back(f);
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st))
      throw InputError(
          fmt::format("{}: error: no such file or directory (allowed: directories of validation experiments, or their "
                      ".yaml files{})",
                      path,
                      path == kValidationDir ? "; the default is relative to the current directory: run validate from "
                                               "the repository's top directory, or name the directory"
                                             : ""));
    if (!fs::is_directory(st)) {
      add(path);
      continue;
    }
    std::vector<std::string> here;
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file() && is_yaml(e.path()))
        here.push_back((fs::path(path) / e.path().filename()).string());
    if (here.empty())
      throw InputError(fmt::format("{}: error: no validation experiments in this directory (allowed: a directory "
                                   "holding .yaml experiment files)",
                                   path));
    std::sort(here.begin(), here.end());
    for (const std::string& f : here)
      add(f);
  }
  return files;
}

std::vector<Study> load_studies(const std::vector<std::string>& files, const std::vector<std::string>& sets,
                                bool ensemble)
{
  std::vector<Study> studies;
  for (const std::string& file : files) {
    Study s;
    s.file = file;
    s.ex = load_experiment(file, sets, registry());
    const bool profile_has_one = std::any_of(s.ex.points.begin(), s.ex.points.end(), [](const Point& p) {
      const PlatformProfile* prof = find_profile(p.params.text("platform"));
      return prof && has_ensemble(*prof);
    });
    if (ensemble && profile_has_one && !s.ex.base.boolean("sim.ensemble")) {
      std::vector<std::string> with = sets;
      with.push_back("sim.ensemble=true");
      s.ex = load_experiment(file, with, registry());
    }
    const std::string rel = s.ex.base.text("validation.measurements");
    if (rel.empty())
      throw InputError(fmt::format("{}:{}: error: validation.measurements: missing; validate compares each "
                                   "experiment with published figures (allowed: the path of a CSV of figures, "
                                   "relative to the experiment file)",
                                   file, top_of(file)));
    s.measurements_file = (fs::path(file).parent_path() / rel).lexically_normal().string();
    s.measurements = load_measurements(s.measurements_file, registry());
    if (s.measurements.empty())
      throw InputError(fmt::format("{}: error: no rows (allowed: a header, then one row per published figure)",
                                   s.measurements_file));
    const std::vector<long> matches = match_measurements(s.ex, s.measurements, s.measurements_file);
    for (std::size_t i = 0; i < matches.size(); ++i)
      if (matches[i] < 0)
        throw InputError(unmatched_row_message(s.ex, s.measurements[i], s.measurements_file));
    studies.push_back(std::move(s));
  }
  return studies;
}

Experiment combined(const std::vector<Study>& studies)
{
  Experiment all;
  all.name = "validate";
  for (const Study& s : studies)
    for (const Point& p : s.ex.points) {
      all.points.push_back(p);
      all.points.back().index = all.points.size() - 1;
    }
  return all;
}

void run_studies(std::vector<Study>& studies, const IterationFn& fn, const RunOptions& opt)
{
  RunOptions o = opt;
  o.on_point = nullptr;
  std::vector<PointResult> results = run_points(combined(studies), fn, o);
  std::size_t next = 0;
  for (Study& s : studies) {
    s.results.clear();
    for (const Point& p : s.ex.points) {
      s.results.push_back(std::move(results.at(next++)));
      s.results.back().index = p.index;
    }
    s.comparison = compare(s.ex, s.results, s.measurements, s.measurements_file);
    if (!s.comparison.missing.empty())
      throw InputError(missing_metric_message(s.ex, s.comparison.missing.front(), s.measurements_file));
  }
}

namespace {

// The design effects of one study as a table: header, then one line per
// effect (base row first, then the changed one).
// With ensemble intervals (sim.ensemble), two more columns: the member-by-
// member ratio's p50 [p10, p90], and whether that covers the published ratio;
// and where the profile tells its effect discrepancy, two more: the same
// with the model's own error on top, and whether that covers it.
std::vector<std::vector<std::string>> effect_rows(const std::vector<DesignEffect>& effects)
{
  const bool ensemble =
      std::any_of(effects.begin(), effects.end(), [](const DesignEffect& e) { return e.interval.has_value(); });
  std::vector<std::vector<std::string>> rows = {
      {"change", "at", "measured ratio", "predicted ratio", "ratio error", "direction"}};
  const bool with_error =
      std::any_of(effects.begin(), effects.end(), [](const DesignEffect& e) { return e.with_error.has_value(); });
  if (ensemble)
    rows.front().insert(rows.front().end(), {"ensemble p50 [p10, p90]", "covers"});
  if (with_error)
    rows.front().insert(rows.front().end(), {"with model error [p10, p90]", "covers"});
  for (const DesignEffect& e : effects) {
    rows.push_back({e.change, e.context, fmt::format("{:.3f}", e.measured_ratio),
                    fmt::format("{:.3f}", e.predicted_ratio),
                    error_text(100 * (e.predicted_ratio / e.measured_ratio - 1)),
                    !e.large()            ? "(under 10%)"
                    : e.direction_right() ? "right"
                                          : "WRONG"});
    if (ensemble && e.interval)
      rows.back().insert(rows.back().end(),
                         {fmt::format("{:.3f} [{:.3f}, {:.3f}]", e.interval->p50, e.interval->p10, e.interval->p90),
                          e.covered() ? "yes" : "no"});
    else if (ensemble)
      rows.back().insert(rows.back().end(), {"-", "-"});
    if (with_error && e.with_error)
      rows.back().insert(rows.back().end(), {fmt::format("[{:.3f}, {:.3f}]", e.with_error->p10, e.with_error->p90),
                                             e.covered_with_error() ? "yes" : "no"});
    else if (with_error)
      rows.back().insert(rows.back().end(), {"-", "-"});
  }
  return rows;
}

// "held out: N row(s), mean absolute error X%" over the rows no profile was
// fitted on, or "" when the studies have none.
std::string held_out_line(const std::vector<const ComparisonRow*>& rows)
{
  std::size_t n = 0;
  double sum = 0;
  for (const ComparisonRow* r : rows)
    if (is_held_out(*r->m)) {
      ++n;
      sum += std::fabs(r->error_percent);
    }
  if (n == 0)
    return "";
  return fmt::format("held out (never fitted): {} row(s), mean absolute error {:.1f}%", n,
                     sum / static_cast<double>(n));
}

std::vector<const ComparisonRow*> rows_of(const Study& s)
{
  std::vector<const ComparisonRow*> rows;
  for (const ComparisonRow& r : s.comparison.rows)
    rows.push_back(&r);
  return rows;
}

std::vector<const ComparisonRow*> rows_of(const std::vector<Study>& studies)
{
  std::vector<const ComparisonRow*> rows;
  for (const Study& s : studies)
    for (const ComparisonRow* r : rows_of(s))
      rows.push_back(r);
  return rows;
}

std::string effects_lines(const std::vector<DesignEffect>& effects, const std::string& prefix)
{
  const EffectSummary all = summarize(effects);
  std::string out = prefix + effect_summary_text(all) + "\n";
  if (const std::string e = ensemble_summary_text(all); !e.empty())
    out += prefix + e + "\n";
  const EffectSummary h = summarize(effects, true);
  if (h.effects > 0)
    out += prefix + "held out (either row never fitted): " + effect_summary_text(h) + "\n";
  if (const std::string e = ensemble_summary_text(h); !e.empty() && h.effects > 0)
    out += prefix + "held out, " + e + "\n";
  return out;
}

std::vector<DesignEffect> all_effects(const std::vector<Study>& studies)
{
  std::vector<DesignEffect> all;
  for (const Study& s : studies)
    for (const DesignEffect& e : design_effects(s.comparison))
      all.push_back(e);
  return all;
}

// The study whose comparison holds an effect's rows.
const Study& study_of(const std::vector<Study>& studies, const DesignEffect& e)
{
  for (const Study& s : studies)
    for (const ComparisonRow& r : s.comparison.rows)
      if (&r == e.base)
        return s;
  throw std::logic_error("invariant violated: a design effect whose rows are in no study");
}

// The `n` worst effects larger than 10% of every study (worst_effects), as
// a table: the study, then effect_rows' columns.
std::vector<std::vector<std::string>> worst_rows(const std::vector<Study>& studies, std::size_t n)
{
  const std::vector<DesignEffect> worst = worst_effects(all_effects(studies), n);
  std::vector<std::vector<std::string>> rows = effect_rows(worst);
  rows.front().insert(rows.front().begin(), "study");
  for (std::size_t i = 0; i < worst.size(); ++i)
    rows[i + 1].insert(rows[i + 1].begin(), study_of(studies, worst[i]).ex.name);
  return rows;
}

// "N worst design effect(s) larger than 10% (...)", after "the" or "The".
std::string worst_heading(std::size_t rows)
{
  return fmt::format("{} worst design effect(s) larger than 10% (predicted size furthest from the published, "
                     "every study):",
                     rows);
}

} // namespace

std::string validation_text(const std::vector<Study>& studies, std::size_t worst)
{
  std::string out;
  for (const Study& s : studies) {
    out += fmt::format("{} ({}; figures: {}; source: {}; {})\n", s.ex.name, s.file, s.measurements_file, sources(s),
                       run_size(s));
    if (const std::string d = description(s); !d.empty())
      out += d + "\n";
    out += "\n" + render_columns(study_rows(s, true, false)) + summary_line(s, false) + "\n" + failed_lines(s, false);
    if (const std::string h = held_out_line(rows_of(s)); !h.empty())
      out += h + "\n";
    out += "\n";
    if (const std::vector<DesignEffect> effects = design_effects(s.comparison); !effects.empty())
      out += "design effects (rows that differ only in design keys; ratio = changed / base):\n" +
             render_columns(effect_rows(effects)) + effects_lines(effects, "") + "\n";
    if (const std::string c = caveat_notes(s.ex); !c.empty())
      out += c.substr(1) + "\n";
  }
  out += overall_line(studies, false) + "\n";
  if (const std::string f = failed_total_line(studies); !f.empty())
    out += "overall: " + f;
  if (const std::string h = held_out_line(rows_of(studies)); !h.empty())
    out += "overall " + h + "\n";
  out += effects_lines(all_effects(studies), "overall design effects: ");
  if (worst > 0) {
    const std::vector<std::vector<std::string>> rows = worst_rows(studies, worst);
    out += "\nthe " + worst_heading(rows.size() - 1) + "\n" + render_columns(rows);
  }
  return out;
}

std::string validation_markdown(const std::vector<Study>& studies, const std::string& command, std::size_t worst)
{
  std::string out = fmt::format("<!-- Generated by `vsocksim validate --markdown`: edit the validation experiments "
                                "instead, then regenerate. -->\n"
                                "# Validation: predicted against published figures\n\n"
                                "Regenerate (from the repository's top directory, after building):\n\n"
                                "    {}\n\n",
                                command);
  out +=
      "Each study is an experiment of the validation directory paired with published figures (its "
      "`validation.measurements` CSV, whose rows cite their source in "
      "`../shared/calibration/measurements.csv`). The prediction is the same statistic over the simulated "
      "iterations as the published one (the mean when the mean was published); error = predicted / measured - 1.\n\n";
  out += "## Summary\n\n";
  std::vector<std::vector<std::string>> summary = {{"study", "rows", "mean absolute error", "worst row", "its error"}};
  for (const Study& s : studies) {
    const Comparison& c = s.comparison;
    if (c.rows.empty()) {
      summary.push_back({s.ex.name, "0", "-", "-", "-"});
      continue;
    }
    const ComparisonRow& w = c.rows[c.worst];
    summary.push_back({s.ex.name, std::to_string(c.rows.size()), fmt::format("{:.1f}%", c.mean_abs_error_percent),
                       row_name(w, true), error_text(w.error_percent)});
  }
  out += markdown_table(summary) + "\n" + overall_line(studies, true) + "\n";
  if (const std::string f = failed_total_line(studies); !f.empty())
    out += "\nOverall: " + f;
  if (const std::string h = held_out_line(rows_of(studies)); !h.empty())
    out += "\nOverall " + h + ".\n";
  out += "\nDesign effects: every pair of rows of a study with the same workload (`direction` and `workload.*`) "
         "that differ in design keys; ratio = changed row / base row, measured and predicted; a predicted change under "
         "2% has no direction.\n\n" +
         effects_lines(all_effects(studies), "- ");
  if (worst > 0) {
    const std::vector<std::vector<std::string>> rows = worst_rows(studies, worst);
    out += "\nThe " + worst_heading(rows.size() - 1) + "\n\n" + markdown_table(rows);
  }
  for (const Study& s : studies) {
    out += fmt::format("\n## {}\n\n", s.ex.name);
    if (const std::string d = description(s); !d.empty())
      out += d + "\n\n";
    out += fmt::format("Experiment `{}`, figures `{}` (source: {}); {}.\n\n", s.file, s.measurements_file, sources(s),
                       run_size(s));
    out += markdown_table(study_rows(s, false, true)) + "\n" + summary_line(s, true) + "\n";
    if (const std::string f = failed_lines(s, true); !f.empty())
      out += "\n" + f;
    if (const std::string h = held_out_line(rows_of(s)); !h.empty())
      out += "\n" + h + ".\n";
    if (const std::vector<DesignEffect> effects = design_effects(s.comparison); !effects.empty())
      out += "\nDesign effects (ratio = changed / base):\n\n" + markdown_table(effect_rows(effects)) + "\n" +
             effects_lines(effects, "- ");
    out += caveat_notes(s.ex);
  }
  return out;
}

std::vector<std::string> plot_validation(const std::vector<Study>& studies, const std::string& dir)
{
  std::vector<PvmFigure> figures;
  PvmFigure all{"validation-all", "", {}};
  for (const Study& s : studies) {
    PvmFigure f{
        "validation-" + file_stem(s.ex.name),
        fmt::format("{}: predicted against measured (MAE {:.1f}%)", s.ex.name, s.comparison.mean_abs_error_percent),
        {}};
    PvmSeries everything{s.ex.name, {}};
    for (const ComparisonRow& r : s.comparison.rows) {
      const std::string title = r.m->metric + (r.m->unit.empty() ? "" : " (" + r.m->unit + ")");
      auto it = std::find_if(f.series.begin(), f.series.end(), [&](const PvmSeries& x) { return x.title == title; });
      if (it == f.series.end())
        it = f.series.insert(f.series.end(), PvmSeries{title, {}});
      it->points.emplace_back(r.measured, r.predicted);
      everything.points.emplace_back(r.measured, r.predicted);
    }
    figures.push_back(f);
    all.series.push_back(everything);
  }
  all.title = fmt::format("validation: predicted against measured, every study (MAE {:.1f}%)", overall(studies).mae);
  figures.push_back(all);
  return plot_predicted_vs_measured(figures, dir, "validation.gp");
}

} // namespace vsim::app
