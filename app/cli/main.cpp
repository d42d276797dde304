// vsocksim command line: run, check, describe (see docs and
// ../shared/spec/interface.md for the contract).
//
// Exit status: 0 success; 2 bad usage or bad experiment (nothing is written
// under --output); 1 internal error (a model invariant or a crash), also when
// only some points of run or validate failed (the others are printed and
// kept; 2 if every failure was bad input found only by simulating).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <map>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/report/calibration_span.hpp"
#include "app/validation/measurements.hpp"
#include "app/experiment/describe.hpp"
#include "app/experiment/estimate.hpp"
#include "app/experiment/experiment.hpp"
#include "app/run/output_dir.hpp"
#include "app/report/plot.hpp"
#include "app/experiment/registry.hpp"
#include "app/report/results.hpp"
#include "app/run/runner.hpp"
#include "app/experiment/effective.hpp"
#include "app/report/show.hpp"
#include "app/run/shard.hpp"
#include "app/report/merge.hpp"
#include "app/run/stop.hpp"
#include "app/report/explain.hpp"
#include "app/run/timeline.hpp"
#include "app/validation/validate.hpp"
#include "transports/simulate.hpp"

namespace fs = std::filesystem;
using namespace vsim;
using namespace vsim::app;

namespace {

// SIGINT, SIGTERM and SIGHUP are handled from before main() on, so a stop
// request is never lost, however early it comes (app/run/stop.hpp): the handler
// is installed from the executable's pre-initialisation array, which the
// dynamic loader runs before any shared library's initialisers (SimGrid's
// and the C++ runtime's take tens of milliseconds; a shell that starts
// `vsocksim run ... &` makes SIGINT ignored until then). Only system calls
// run there. Commands that run no simulation go back to the default
// dispositions in main().
void install_stop_handler(int, char**, char**) { stop::install(); }
[[gnu::section(".preinit_array"), gnu::used]] void (*const preinit_stop_handler)(int, char**, char**) =
    install_stop_handler;

const char* signal_name(int sig)
{
  switch (sig) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  default: return "a signal";
  }
}

// The end of a command stopped by a request: the line on stderr and the exit
// status (130 SIGINT, 143 SIGTERM, 129 SIGHUP). Finished points under
// --output are complete files a later run reuses.
int stopped(std::size_t finished, std::size_t total, const std::string& output)
{
  // (`finished` counts the points that ran to the end, not those that failed.)
  std::string line = fmt::format("vsocksim: interrupted by {}", signal_name(stop::requested()));
  if (!output.empty())
    line += fmt::format("; {} of {} points finished and kept in {}", finished, total, output);
  std::cerr << line << '\n';
  return stop::exit_status();
}

// The end of a run or validate in which points failed (PointResult::failed):
// on stderr, one line per failed point (its index, swept values and why),
// then `summary`. The exit status: 2 when every failure was bad input found
// only by simulating (an InputError), else 1 (an internal error, or a point
// whose simulated system hangs as its kernel would: PointResult::hang).
int points_failed(const std::vector<std::pair<std::string, const PointResult*>>& failed, const std::string& summary)
{
  bool all_bad_input = true;
  for (const auto& [name, r] : failed) {
    std::cerr << fmt::format("vsocksim: {}{}: {}\n", r->bad_input || r->hang ? "" : "internal error: ", name,
                             r->failed);
    all_bad_input = all_bad_input && r->bad_input;
  }
  std::cerr << "vsocksim: " << summary << '\n';
  return all_bad_input ? 2 : 1;
}

RunOptions run_options(unsigned jobs, bool quiet)
{
  RunOptions opt;
  opt.jobs = jobs;
  opt.progress = !quiet;
  opt.stop = [] { return stop::requested() != 0; };
  opt.stop_fd = stop::wake_fd();
  return opt;
}

std::string join_args(int argc, char** argv)
{
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i)
      s += ' ';
    s += argv[i];
  }
  return s;
}

// What `run` needs besides the experiment, validated before anything runs
// (so `check` rejects exactly what `run` would).
struct Prepared {
  std::vector<std::string> metrics;
  std::string measurements_file;
  std::vector<Measurement> measurements;
};

Prepared prepare(const Experiment& ex, const std::string& file)
{
  Prepared p;
  p.metrics = split_commas(ex.base.text("report.metrics"));

  if (const std::string& rel = ex.base.text("validation.measurements"); !rel.empty()) {
    p.measurements_file = (fs::path(file).parent_path() / rel).lexically_normal().string();
    p.measurements = load_measurements(p.measurements_file, registry());
    match_measurements(ex, p.measurements, p.measurements_file);
  }
  return p;
}

int cmd_check(const std::string& file, const std::vector<std::string>& sets, unsigned jobs)
{
  Experiment ex = load_experiment(file, sets, registry());
  prepare(ex, file);
  std::cout << fmt::format("{}: ok: experiment '{}', {} point(s), {}; config sha256 {}\n", file, ex.name,
                           ex.points.size(), describe_estimate(estimate(ex), jobs), ex.config_sha256);
  for (const std::string& w : effective_warnings(ex))
    std::cout << fmt::format("{}: warning: {}\n", file, w);
  for (const std::string& line : same_run_lines(ex))
    std::cout << fmt::format("{}: note: {}\n", file, line);
  return 0;
}

// `run --list`: the expanded sweep, one line per point with its index and
// swept values; the indices are a pure function of the file and the --set
// entries.
int cmd_list(const std::string& file, const std::vector<std::string>& sets)
{
  Experiment ex = load_experiment(file, sets, registry());
  prepare(ex, file);
  for (const Point& p : ex.points) {
    std::string line = fmt::format("{:>5}", p.index);
    for (const auto& [key, value] : p.label)
      line += fmt::format("  {}={}", key, value);
    std::cout << line << '\n';
  }
  return 0;
}

int cmd_run(const std::string& file, const std::vector<std::string>& sets, const std::string& format,
            const std::string& output, unsigned jobs, bool quiet, const std::string& shard_text,
            bool allow_large, bool force, const std::string& command_line, const std::optional<TraceOptions>& trace)
{
  Experiment ex = load_experiment(file, sets, registry());
  if (!output.empty()) {
    check_output_dir(output);  // InputError before anything is created
    if (auto other = other_experiment_in(output, ex.name); other && !force)
      throw InputError(fmt::format("--output '{}': error: holds the results of experiment '{}', not '{}' (allowed: "
                                   "an empty or new directory, one of experiment '{}', or --force to replace them)",
                                   output, *other, ex.name, ex.name));
  }
  Prepared prep = prepare(ex, file);
  const std::size_t points_total = ex.points.size();
  std::optional<Shard> shard = shard_text.empty() ? shard_from_slurm() : parse_shard(shard_text);
  if (shard)
    keep_shard(ex, *shard);
  const std::size_t points_run = ex.points.size();  // the sweep's, or the shard's
  if (trace)
    check_trace_options(*trace, ex);  // InputError before anything runs
  if (trace && trace->point_given) {
    // With --point, only the traced point is simulated, every iteration of
    // it (the trace's default window and its check need the traced
    // iteration's normal run): the result, and --output, then hold that
    // point alone. Without it the whole sweep runs and point 0 is traced
    // (`run --trace` also writes a timeline).
    std::erase_if(ex.points, [&](const Point& p) { return static_cast<long long>(p.index) != trace->point; });
    if (!quiet)
      std::cerr << fmt::format("--trace: simulating point {} only (of {}{})\n", trace->point, points_run,
                               shard ? fmt::format(" in shard {}/{}", shard->index, shard->count) : "");
  }
  if (Estimate e = estimate(ex); e.core_seconds > kLargeCoreSeconds && !allow_large)
    throw InputError(fmt::format("{}: error: this run is large: {} (more than {:.0f} hours on one core); "
                                 "pass --allow-large to run it anyway, or shrink it (iterations, "
                                 "workload.total_bytes, the sweep, --shard)",
                                 file, describe_estimate(e, jobs), kLargeCoreSeconds / 3600));
  const std::vector<std::string>& metrics = prep.metrics;
  const std::string& measurements_file = prep.measurements_file;
  for (const std::string& w : effective_warnings(ex))  // swept values the transport clamps or ignores
    std::cerr << fmt::format("{}: warning: {}\n", file, w);

  Manifest manifest = make_manifest(ex, command_line);
  const nlohmann::ordered_json identity = {
      {"config_sha256", manifest.config_sha256}, {"version", manifest.version}, {"git_commit", manifest.git_commit}};

  // Points an earlier run of the same configuration and code left in DIR
  // are not simulated again (a killed sweep resumes where it stopped).
  std::map<std::size_t, PointResult> done;
  if (!output.empty()) {
    remove_temporaries(output);
    done = reusable_points(output, ex, identity);
  }
  auto finished = [&] {
    return static_cast<std::size_t>(
        std::count_if(done.begin(), done.end(), [](const auto& d) { return d.second.failed.empty(); }));
  };
  if (!done.empty() && !quiet)
    std::cerr << fmt::format("reusing {} finished point(s) of {} from {}\n", done.size(), ex.points.size(), output);
  const bool trace_reused = trace && done.count(static_cast<std::size_t>(trace->point));
  Experiment todo = ex;
  todo.points.clear();
  for (const Point& p : ex.points)
    if (!done.count(p.index))
      todo.points.push_back(p);

  if (stop::requested())
    return stopped(finished(), ex.points.size(), output);
  // An explicit window is traced first: one that starts after the run's end
  // is found before anything is written.
  std::optional<TracedRun> traced;
  try {
    if (trace && !trace->window.empty())
      if (const std::optional<double> start = parse_trace_window(trace->window).start_us)
        traced = trace_iteration(*trace, ex, *start, "given (--trace-window)");
  } catch (const Interrupted&) {
    return stopped(finished(), ex.points.size(), output);
  }
  auto started = std::chrono::system_clock::now();
  RunOptions opt = run_options(jobs, quiet);
  // The experiment without its points, and each point by index: writing a
  // finished point's file costs the same whatever the sweep's size.
  Experiment shell = ex;
  shell.points.clear();
  std::map<std::size_t, const Point*> by_index;
  for (const Point& p : ex.points)
    by_index[p.index] = &p;
  if (!output.empty())
    opt.on_point = [&](const PointResult& r) {
      Experiment one = shell;
      one.points.push_back(*by_index.at(r.index));
      write_point_file(output, to_json(one, {r}, manifest)["points"][0], identity, ex.name);
      done.emplace(r.index, r);
    };
  try {
    for (PointResult& r : run_points(todo, simulate_iteration, opt))
      done.emplace(r.index, std::move(r));
  } catch (const Interrupted&) {
    return stopped(finished(), ex.points.size(), output);
  }
  if (stop::requested())  // nothing is printed or merged after a request
    return stopped(finished(), ex.points.size(), output);
  std::vector<PointResult> results;
  std::vector<std::pair<std::string, const PointResult*>> failed;  // point_name, result
  for (const Point& p : ex.points)
    results.push_back(done.at(p.index));
  for (std::size_t k = 0; k < results.size(); ++k)
    if (!results[k].failed.empty())
      failed.emplace_back(point_name(ex.points[k]), &results[k]);
  if (trace && !done.at(static_cast<std::size_t>(trace->point)).failed.empty()) {
    std::cerr << fmt::format("vsocksim: --trace '{}': not written: point {} failed\n", trace->path, trace->point);
  } else if (trace) {
    const PointResult& r = done.at(static_cast<std::size_t>(trace->point));
    const auto i = static_cast<std::size_t>(trace->iteration);
    if (!traced) {
      const Point& p = *by_index.at(r.index);
      const double total = static_cast<double>(p.params.integer("workload.total_bytes") *
                                               p.params.integer("workload.connections"));
      try {
        traced = trace_iteration(*trace, ex, default_trace_start_us(r.iterations.at(i), r.run_length.at(i), total),
                                 "default: from the end of the warm-up the run-length monitor found (warmup_bytes "
                                 "at the iteration's mean rate), else from 10% of the simulated time");
      } catch (const Interrupted&) {
        return stopped(finished(), ex.points.size(), output);
      }
    }
    if (stop::requested())
      return stopped(finished(), ex.points.size(), output);
    // A point reused from --output was read back from JSON: its figures are
    // compared only when simulated now.
    finish_trace(*trace, *traced, trace_reused ? nullptr : &r.iterations.at(i), &r.run_length.at(i));
  }
  manifest.wall_started_utc = format_utc(started);
  manifest.wall_seconds = std::chrono::duration<double>(std::chrono::system_clock::now() - started).count();

  nlohmann::ordered_json json = to_json(ex, results, manifest);
  if (shard) {
    json["manifest"]["shard"] = fmt::format("{}/{}", shard->index, shard->count);
    json["manifest"]["points_total"] = points_total;
  }
  if (trace && trace->point_given) {  // the one point run of the sweep's (or shard's)
    json["manifest"]["traced_point"] = trace->point;
    json["manifest"]["points_total"] = points_total;
  }
  std::optional<Comparison> comparison;
  if (!measurements_file.empty()) {
    comparison = compare(ex, results, prep.measurements, measurements_file);
    json["validation"] = comparison_json(*comparison);
  }
  if (!output.empty()) {
    write_output_dir(output, json);
    if (!shard && !trace)  // (the other points' files of a traced run are kept for a later run)
      remove_stale_points(output, ex.points.size());  // a larger sweep's points beyond this one's
  }
  if (format == "json")
    std::cout << json.dump(2) << '\n';
  else if (format == "csv")
    std::cout << to_csv(ex, results);
  else {
    std::cout << to_table(ex, results, metrics) << table_notes(ex) << calibration_notes(ex.points, results);
    if (comparison)
      std::cout << '\n' << comparison_table(*comparison);
  }
  if (failed.empty())
    return 0;
  std::cout.flush();
  const std::size_t ran = results.size() - failed.size();
  std::string summary = fmt::format("{} of {} point(s) failed; ", failed.size(), results.size());
  summary += ran == 0 ? "no point ran to the end" : fmt::format("the results of the other {} are printed", ran);
  if (!output.empty())
    summary += fmt::format("{} in {}, where a rerun simulates only the failed point(s)",
                           ran == 0 ? ", nothing kept" : " and kept", output);
  return points_failed(failed, summary);
}

// The command that regenerates a Markdown report: what changes its content
// (the --set entries and the paths), not --jobs or --plot.
std::string markdown_command(const std::vector<std::string>& sets, const std::vector<std::string>& paths)
{
  std::string cmd = "build/vsocksim validate --markdown";
  for (const std::string& s : sets)
    cmd += " --set '" + s + "'";
  if (paths != std::vector<std::string>{kValidationDir})
    for (const std::string& p : paths)
      cmd += " " + p;
  return cmd + " > docs/validation.md";
}

int cmd_validate(std::vector<std::string> paths, const std::vector<std::string>& sets, unsigned jobs,
                 const std::string& plot_dir, bool markdown, bool quiet)
{
  if (paths.empty())
    paths.push_back(kValidationDir);
  std::vector<Study> studies = load_studies(validation_files(paths), sets);
  if (!plot_dir.empty())
    check_output_dir(plot_dir);
  if (!quiet)
    std::cerr << fmt::format("validate: {} {}, {}\n", studies.size(), studies.size() == 1 ? "study" : "studies",
                             describe_estimate(estimate(combined(studies)), jobs));
  if (stop::requested())
    return stopped(0, 0, "");
  try {
    run_studies(studies, simulate_iteration, run_options(jobs, quiet));
  } catch (const Interrupted&) {
    return stopped(0, 0, "");
  }
  if (stop::requested())
    return stopped(0, 0, "");
  std::cout << (markdown ? validation_markdown(studies, markdown_command(sets, paths)) : validation_text(studies));
  if (!plot_dir.empty())
    for (const std::string& f : plot_validation(studies, plot_dir))
      if (!quiet)
        std::cerr << "wrote " << f << '\n';
  std::vector<std::pair<std::string, const PointResult*>> failed;  // "FILE point K (...)", result
  std::size_t points = 0, rows = 0;
  for (const Study& s : studies) {
    points += s.results.size();
    rows += s.comparison.failed.size();
    for (std::size_t k = 0; k < s.results.size(); ++k)
      if (!s.results[k].failed.empty())
        failed.emplace_back(s.file + ": " + point_name(s.ex.points[k]), &s.results[k]);
  }
  if (failed.empty())
    return 0;
  std::cout.flush();
  return points_failed(failed, fmt::format("{} of {} point(s) failed; their {} row(s) were not compared, the "
                                           "others are printed",
                                           failed.size(), points, rows));
}

}  // namespace

int main(int argc, char** argv)
{
  CLI::App app{"vsocksim: deterministic simulator of VM socket transports (hv_sock, virtio-vsock)", "vsocksim"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "all commands' options");
  app.set_version_flag("--version", [] { return vsim::app::version_text(); },
                       "print the version, the git commit and SimGrid's version, then exit");

  std::string file, format = "table", output, topic;
  std::vector<std::string> sets;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool quiet = false, markdown = false;

  auto* run = app.add_subcommand("run", "run an experiment: every point of its sweep, every iteration");
  run->add_option("file", file, "experiment file (YAML)")->required();
  run->footer("\nExperiment keys (YAML, or --set KEY=VALUE): `vsocksim describe` lists every key with its type, unit, "
              "default, range and meaning (`describe hv_sock`, `describe workload`, `describe sim`, ...; "
              "docs/parameters.md); `vsocksim describe metrics` lists what a run reports. sim.run_length: auto "
              "(the default) stops each simulation once its steady state is known and extrapolates the rest; full "
              "simulates every byte (docs/run-length.md). Examples: experiments/*.yaml.");
  run->add_option("--set", sets, "override a key before the sweep is expanded: KEY=VALUE (repeatable)");
  run->add_option("--format", format, "result format on stdout")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  run->add_option("--output", output, "also write the results to this directory (per point, merged, manifest)");
  run->add_option("--jobs", jobs, "simulations run at once (results are identical for any value)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  run->add_flag("--quiet,-q", quiet, "no progress lines on stderr");
  std::string shard_text;
  run->add_option("--shard", shard_text,
                  "run only the points whose index is I modulo N (I/N, 0 <= I < N); default: from "
                  "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT when set");

  std::string plot_result_path, plot_dir;
  auto* plot = app.add_subcommand("plot", "draw a result's figures, or a trace's timeline, with gnuplot (SVG and PNG)");
  auto* plot_result_opt =
      plot->add_option("result", plot_result_path, "JSON result (run --format json, or DIR/result.json)");
  std::string plot_timeline_path;
  plot->add_option("--timeline", plot_timeline_path,
                   "instead of a result, draw the trace of run --trace: one row per CPU (boxes coloured by thread, "
                   "a strip by category), kernel functions marked, ring, queue and credit levels below (docs/trace.md)")
      ->excludes(plot_result_opt);
  plot->add_option("--output,-o", plot_dir,
                   "directory for the figures (default: RESULT without .json, plus -plots); with --timeline: the "
                   "figure (FILE.png or FILE.svg) or the stem of both (default: TRACE without .json)");
  PlotOptions plot_opt;
  plot->add_option("--x", plot_opt.x_key, "the swept key on the x axis (default: the one with the most values)");
  std::string plot_metrics;
  plot->add_option("--metrics", plot_metrics,
                   "comma-separated metrics to draw, a figure each, in their units; cpu_per_GB for the CPU cost "
                   "(default: the run's report.metrics, and cpu_per_GB)");
  bool plot_log = false, plot_linear = false;
  auto* plot_log_opt = plot->add_flag("--log", plot_log,
                                      "every y axis on a log scale, leaving out values not above 0 (default: log "
                                      "when the values drawn span more than 20x, else linear)");
  plot->add_flag("--linear", plot_linear, "every y axis on a linear scale, from 0")->excludes(plot_log_opt);
  plot->add_flag("--quiet,-q", plot_opt.quiet, "no note on stderr of the scales chosen");

  std::vector<std::string> merge_dirs;
  auto* merge = app.add_subcommand("merge", "combine the --output directories of a sharded run into one result");
  merge->add_option("dirs", merge_dirs, "result directories (of run --shard I/N --output DIR)")->required();
  merge->add_option("--output", output, "also write the merged result to this directory");
  bool list = false;
  bool allow_large = false;
  run->add_flag("--allow-large", allow_large, "run even if the estimated time exceeds two days on one core");
  bool force = false;
  run->add_flag("--force", force, "write into an --output directory that holds another experiment's results");
  run->add_flag("--list", list, "print the expanded points with their indices and stop");
  TraceOptions trace_opt;
  auto* trace_path = run->add_option(
      "--trace", trace_opt.path,
      "also write a timeline of one iteration of one point in the Trace Event Format (open it in "
      "ui.perfetto.dev or chrome://tracing; draw it with plot --timeline): what ran on each CPU, wake-ups, kicks, "
      "interrupts, signals, credit updates, ring and queue levels (docs/trace.md). With --point K only point K "
      "is simulated (every iteration): the result holds it alone, with the figures the whole run gives it; "
      "without, the whole sweep runs and point 0 is traced");
  run->add_option("--trace-window", trace_opt.window,
                  "START:LENGTH of simulated time to trace (ns, us, ms, s; no unit: us), e.g. 500us:200us; default: "
                  "200 us from the end of the warm-up the run-length monitor found (else from 10% of the run)")
      ->needs(trace_path);
  auto* point_opt = run->add_option("--point", trace_opt.point,
                                    "the point to trace (its index, as --list prints); only it is simulated")
                        ->needs(trace_path)
                        ->capture_default_str();
  run->add_option("--iteration", trace_opt.iteration, "the iteration of that point to trace")
      ->needs(trace_path)
      ->capture_default_str();
  run->add_option("--trace-max-events", trace_opt.max_events,
                  "stop recording after this many events (the trace then ends early and says so)")
      ->needs(trace_path)
      ->capture_default_str();

  auto* check = app.add_subcommand("check", "validate an experiment without simulating");
  check->add_option("file", file, "experiment file (YAML)")->required();
  check->add_option("--set", sets, "override a key: KEY=VALUE (repeatable)");
  check->add_option("--jobs", jobs, "jobs the time estimate assumes")->check(CLI::Range(1u, 1024u))->capture_default_str();

  auto* describe = app.add_subcommand("describe", "list every parameter: path, type, unit, default, allowed, meaning");
  describe->add_option("topic", topic, "a key prefix (hv_sock, workload, costs, ...) or 'platforms'");
  describe->add_flag("--markdown", markdown, "Markdown reference (docs/parameters.md is made with this)");

  std::vector<std::string> validate_paths;
  std::string validate_plot;
  auto* validate = app.add_subcommand(
      "validate", "run the validation experiments and print predicted against published figures, per row and study");
  validate->add_option("paths", validate_paths,
                       fmt::format("directories of validation experiments (every .yaml in them) or experiment files "
                                   "(default: {}, relative to the current directory)",
                                   kValidationDir));
  validate->add_option("--set", sets, "override a key in every experiment: KEY=VALUE (repeatable)");
  validate->add_option("--jobs", jobs, "simulations run at once (results are identical for any value)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  validate->add_option("--plot", validate_plot,
                       "also draw predicted against measured (SVG and PNG) into this directory");
  validate->add_flag("--markdown", markdown, "print the report as a Markdown document (docs/validation.md)");
  validate->add_flag("--quiet,-q", quiet, "no progress lines on stderr");

  std::string show_path, show_metrics, show_format = "table";
  auto* show = app.add_subcommand("show", "re-print a result (JSON or --output directory) without simulating");
  show->add_option("result", show_path, "RESULT.json (run --format json) or a run --output directory")->required();
  show->add_option("--metrics", show_metrics, "comma-separated metrics to show (default: the run's report.metrics; "
                                              "'all': every metric)");
  std::string show_stat;
  show->add_option("--stat", show_stat, "what a table cell shows (default: the run's report.stat)")
      ->check(CLI::IsMember({"all", "mean", "ci", "range"}));
  show->add_option("--format", show_format, "output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();

  std::vector<std::string> compare_paths;
  std::string compare_points, compare_metrics;
  auto* compare = app.add_subcommand(
      "compare", "each metric of two results (or two points of one) side by side, with the relative change");
  compare->add_option("results", compare_paths, "RESULT_A [RESULT_B] (JSON or --output directories)")
      ->required()
      ->expected(1, 2);
  compare->add_option("--points", compare_points, "I,J: compare points I and J of the one result given");
  compare->add_option("--metrics", compare_metrics,
                      "comma-separated metrics (default: the run's report.metrics; 'all': every metric)");

  std::string explain_path;
  long long explain_point_index = -1;
  auto* explain = app.add_subcommand(
      "explain", "say per point what limits it: the saturated resource, the waits, the stages, the analytic bound");
  explain->add_option("result", explain_path, "RESULT.json: the JSON of run --format json, or result.json of --output")
      ->required();
  auto* explain_point_opt =
      explain->add_option("--point", explain_point_index, "only this point (its position in the result, from 0)");

  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "vsocksim: error: unknown command '" << argv[1] << "' (allowed: " << names << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "vsocksim: error: " << e.what() << "\n(run 'vsocksim --help' for usage)\n";
    return 2;
  }

  // Only run (not --list) and validate act on stop requests; the other
  // commands end as the signal's default action ends them.
  if (!((*run && !list) || *validate))
    stop::restore_default();

  try {
    if (*run && list)
      return cmd_list(file, sets);
    if (*run)
      return cmd_run(file, sets, format, output, jobs, quiet, shard_text, allow_large, force, join_args(argc, argv),
                     trace_path->count() ? std::optional<TraceOptions>([&] {
                       TraceOptions t = trace_opt;
                       t.point_given = point_opt->count() > 0;
                       return t;
                     }())
                                         : std::nullopt);
    if (*plot && !plot_timeline_path.empty()) {
      if (plot_dir.empty())
        plot_dir = (fs::path(plot_timeline_path).parent_path() / fs::path(plot_timeline_path).stem()).string();
      for (const std::string& f : plot_timeline(plot_timeline_path, plot_dir))
        std::cout << f << '\n';
      return 0;
    }
    if (*plot && plot_result_path.empty())
      throw InputError("vsocksim: error: plot needs a RESULT (or --timeline TRACE)");
    if (*plot) {
      if (plot_dir.empty())
        plot_dir = (fs::path(plot_result_path).parent_path() / fs::path(plot_result_path).stem()).string() + "-plots";
      plot_opt.metrics = split_commas(plot_metrics);
      plot_opt.y_scale = plot_log      ? PlotOptions::Scale::Log
                         : plot_linear ? PlotOptions::Scale::Linear
                                       : PlotOptions::Scale::Auto;
      for (const std::string& f : plot_result(plot_result_path, plot_dir, plot_opt))
        std::cout << f << '\n';
      return 0;
    }
    if (*merge) {
      if (!output.empty())
        check_output_dir(output);
      nlohmann::ordered_json merged = merge_results(merge_dirs);
      if (!output.empty())
        write_output_dir(output, merged);
      std::cout << merged.dump(2) << '\n';
      return 0;
    }
    if (*check)
      return cmd_check(file, sets, jobs);
    if (*show) {
      std::cout << show_result(show_path, split_commas(show_metrics), show_format, show_stat, terminal_columns());
      return 0;
    }
    if (*compare) {
      std::optional<std::pair<std::size_t, std::size_t>> pts;
      if (!compare_points.empty()) {
        const std::vector<std::string> ij = split_commas(compare_points);
        std::size_t i = 0, j = 0;
        auto number = [](const std::string& t, std::size_t& out) {
          if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 9)
            return false;
          out = std::stoul(t);
          return true;
        };
        if (ij.size() != 2 || !number(ij[0], i) || !number(ij[1], j))
          throw InputError(fmt::format("--points '{}': error: needs two point indices (allowed: I,J, e.g. 0,3)",
                                       compare_points));
        pts = std::make_pair(i, j);
      }
      std::cout << compare_results(compare_paths.at(0), compare_paths.size() > 1 ? compare_paths[1] : "", pts,
                                   split_commas(compare_metrics));
      return 0;
    }
    if (*validate)
      return cmd_validate(validate_paths, sets, jobs, validate_plot, markdown, quiet);
    if (*explain) {
      std::optional<long long> k;
      if (explain_point_opt->count())
        k = explain_point_index;
      std::cout << explain_result(explain_path, k);
      return 0;
    }
    if (*describe) {
      std::cout << (markdown ? describe_markdown(registry()) : describe_text(registry(), topic));
      return 0;
    }
  } catch (const InputError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "vsocksim: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
