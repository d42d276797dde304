// `vsocksim run FILE.yaml ...`: every point of the experiment's sweep, every
// iteration, simulated (app/run/runner.hpp) and printed as a table, JSON or
// CSV; `--output DIR` keeps each finished point and resumes; `--shard I/N`
// runs a part of the sweep; `--trace OUT.json` also writes a timeline
// (app/run/timeline.hpp); `--list` prints the expanded points.
//
// The steps of a run, in RunCommand::run: load and check everything (the
// experiment, the measurements, --output, the shard, the trace, the size),
// reuse the points a former run left in --output, simulate the rest (each
// finished point's file written at once), trace, merge into the result,
// write and print it, and report the failed points.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "app/cli/command.hpp"
#include "app/cli/common.hpp"
#include "app/experiment/effective.hpp"
#include "app/experiment/estimate.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/search_spec.hpp"
#include "app/report/calibration_span.hpp"
#include "app/report/results.hpp"
#include "app/run/output_dir.hpp"
#include "app/run/shard.hpp"
#include "app/run/stop.hpp"
#include "app/run/timeline.hpp"
#include "transports/simulate.hpp"

namespace vsim::app::cli {

namespace {

struct RunArgs {
  std::string file;
  std::vector<std::string> sets;
  std::string format = "table", output, shard;
  unsigned jobs = default_jobs();
  bool quiet = false, list = false, allow_large = false, force = false, ensemble = false;
  TraceOptions trace;
  CLI::Option* trace_opt = nullptr;
  CLI::Option* point_opt = nullptr;

  // --trace's options when given, with whether --point was.
  std::optional<TraceOptions> trace_given() const
  {
    if (trace_opt == nullptr || !trace_opt->count())
      return std::nullopt;
    TraceOptions t = trace;
    t.point_given = point_opt->count() > 0;
    return t;
  }
};

// A search's file is run by `vsocksim search`: `run` has no sweep to run.
void refuse_search(const Experiment& ex, const std::string& file)
{
  if (ex.search)
    load::fail(ex.search->at.positioned() ? ex.search->at : load::in_file(file), "search",
               load::with_allowed("this experiment is a search: `vsocksim search " + file + "` runs it",
                                  "run on an experiment without search:"));
}

// `run --list`: the expanded sweep, one line per point with its index and
// swept values; the indices are a pure function of the file and the --set
// entries.
int list_points(const RunArgs& a)
{
  Experiment ex = load_experiment(a.file, a.sets, registry());
  refuse_search(ex, a.file);
  prepare(ex, a.file);
  for (const Point& p : ex.points) {
    std::string line = fmt::format("{:>5}", p.index);
    for (const auto& [key, value] : p.label)
      line += fmt::format("  {}={}", key, value);
    std::cout << line << '\n';
  }
  return 0;
}

class RunCommand {
public:
  RunCommand(const RunArgs& a, const Context& ctx) : a_(a), ctx_(ctx), trace_(a.trace_given()) {}
  // A run of `plan` (run_plan): nothing reused, the result JSON handed to
  // *result instead of printed.
  RunCommand(const RunArgs& a, const Context& ctx, RunPlan plan, nlohmann::ordered_json* result)
      : a_(a), ctx_(ctx), plan_(std::move(plan)), result_(result)
  {
  }

  int run()
  {
    if (plan_)
      take_plan();
    else
      load();
    reuse_points();
    try {
      if (stop::requested())
        throw Interrupted("stop requested");
      trace_given_window();
      const auto started = std::chrono::system_clock::now();
      simulate();
      if (stop::requested()) // nothing is printed or merged after a request
        throw Interrupted("stop requested");
      for (const Point& p : ex_.points)
        results_.push_back(done_.at(p.index));
      trace_point();
      manifest_.wall_started_utc = format_utc(started);
      manifest_.wall_seconds = std::chrono::duration<double>(std::chrono::system_clock::now() - started).count();
    } catch (const Interrupted&) {
      return stopped(finished(), ex_.points.size(), a_.output);
    }
    print(result_json());
    return report_failures();
  }

private:
  // Everything checked before anything runs or is written.
  void load()
  {
    ex_ = load_experiment(a_.file, a_.sets, registry());
    refuse_search(ex_, a_.file);
    check_output();
    prep_ = prepare(ex_, a_.file);
    points_total_ = ex_.points.size();
    shard_ = a_.shard.empty() ? shard_from_slurm() : parse_shard(a_.shard);
    if (shard_)
      keep_shard(ex_, *shard_);
    if (trace_)
      check_trace_options(*trace_, ex_); // InputError before anything runs
    if (trace_ && trace_->point_given)
      keep_traced_point();
    if (Estimate e = estimate(ex_); e.core_seconds > kLargeCoreSeconds && !a_.allow_large)
      throw InputError(fmt::format("{}: error: this run is large: {} (more than {:.0f} hours on one core); "
                                   "pass --allow-large to run it anyway, or shrink it (iterations, "
                                   "workload.total_bytes, the sweep, --shard)",
                                   a_.file, describe_estimate(e, a_.jobs), kLargeCoreSeconds / 3600));
    for (const std::string& w : effective_warnings(ex_)) // swept values the transport clamps or ignores
      std::cerr << fmt::format("{}: warning: {}\n", a_.file, w);
    if (trace_ && trace_->point_given)
      traced_point_ = trace_->point;
    manifest_ = make_manifest(ex_, ctx_.command_line, {prep_.measurements_file, prep_.measurements_text});
    index_points();
  }

  // A run made elsewhere (reproduce): its points, measurements, manifest and
  // sweep, checked there; --output as for an experiment file.
  void take_plan()
  {
    ex_ = std::move(plan_->ex);
    check_output();
    prep_ = std::move(plan_->prep);
    manifest_ = std::move(plan_->manifest);
    shard_ = plan_->shard;
    traced_point_ = plan_->traced_point;
    points_total_ = plan_->points_total != 0 ? plan_->points_total : ex_.points.size();
    index_points();
  }

  void check_output() const
  {
    if (a_.output.empty())
      return;
    check_output_dir(a_.output); // InputError before anything is created
    if (auto other = other_experiment_in(a_.output, ex_.name); other && !a_.force)
      throw InputError(fmt::format("--output '{}': error: holds the results of experiment '{}', not '{}' "
                                   "(allowed: an empty or new directory, one of experiment '{}', or --force to "
                                   "replace them)",
                                   a_.output, *other, ex_.name, ex_.name));
  }

  // What a point file is reused by, and each point by index.
  void index_points()
  {
    identity_ = {{"config_sha256", manifest_.config_sha256},
                 {"version", manifest_.version},
                 {"git_commit", manifest_.git_commit}};
    for (const Point& p : ex_.points)
      by_index_[p.index] = &p;
  }

  // With --point, only the traced point is simulated, every iteration of it
  // (the trace's default window and its check need the traced iteration's
  // normal run): the result, and --output, then hold that point alone.
  // Without it the whole sweep runs and point 0 is traced (`run --trace`
  // also writes a timeline).
  void keep_traced_point()
  {
    const std::size_t points_run = ex_.points.size(); // the sweep's, or the shard's
    std::erase_if(ex_.points, [&](const Point& p) { return static_cast<long long>(p.index) != trace_->point; });
    if (!a_.quiet)
      std::cerr << fmt::format("--trace: simulating point {} only (of {}{})\n", trace_->point, points_run,
                               shard_ ? fmt::format(" in shard {}/{}", shard_->index, shard_->count) : "");
  }

  // Points an earlier run of the same configuration and code left in DIR
  // are not simulated again (a killed sweep resumes where it stopped); a
  // plan's rerun simulates every point.
  void reuse_points()
  {
    if (!a_.output.empty()) {
      remove_temporaries(a_.output);
      if (!plan_)
        done_ = reusable_points(a_.output, ex_, identity_);
    }
    if (!done_.empty() && !a_.quiet)
      std::cerr << fmt::format("reusing {} finished point(s) of {} from {}\n", done_.size(), ex_.points.size(),
                               a_.output);
    trace_reused_ = trace_ && done_.count(static_cast<std::size_t>(trace_->point));
  }

  std::size_t finished() const
  {
    return static_cast<std::size_t>(
        std::count_if(done_.begin(), done_.end(), [](const auto& d) { return d.second.failed.empty(); }));
  }

  // An explicit window is traced first: one that starts after the run's end
  // is found before anything is written.
  void trace_given_window()
  {
    if (trace_ && !trace_->window.empty())
      if (const std::optional<double> start = parse_trace_window(trace_->window).start_us)
        traced_ = trace_iteration(*trace_, ex_, *start, "given (--trace-window)");
  }

  // The points not reused, each point's file written as soon as it is done.
  void simulate()
  {
    Experiment todo = ex_;
    todo.points.clear();
    for (const Point& p : ex_.points)
      if (!done_.count(p.index))
        todo.points.push_back(p);
    RunOptions opt = run_options(a_.jobs, a_.quiet);
    // The experiment without its points, and each point by index: writing a
    // finished point's file costs the same whatever the sweep's size.
    Experiment shell = ex_;
    shell.points.clear();
    if (!a_.output.empty())
      opt.on_point = [&](const PointResult& r) {
        Experiment one = shell;
        one.points.push_back(*by_index_.at(r.index));
        write_point_file(a_.output, to_json(one, {r}, manifest_)["points"][0], identity_, ex_.name);
        done_.emplace(r.index, r);
      };
    for (PointResult& r : run_points(todo, simulate_iteration, opt))
      done_.emplace(r.index, std::move(r));
  }

  // The traced iteration, in the default window unless one was given, and
  // its figures checked against the run's.
  void trace_point()
  {
    if (!trace_)
      return;
    const PointResult& r = done_.at(static_cast<std::size_t>(trace_->point));
    if (!r.failed.empty()) {
      std::cerr << fmt::format("vsocksim: --trace '{}': not written: point {} failed\n", trace_->path, trace_->point);
      return;
    }
    const auto i = static_cast<std::size_t>(trace_->iteration);
    if (!traced_) {
      const Point& p = *by_index_.at(r.index);
      const double total = static_cast<double>(workload_bytes(p.params) *
                                               static_cast<std::uint64_t>(p.params.integer("workload.connections")));
      traced_ = trace_iteration(*trace_, ex_, default_trace_start_us(r.iterations.at(i), r.run_length.at(i), total),
                                "default: from the end of the warm-up the run-length monitor found (warmup_bytes "
                                "at the iteration's mean rate), else from 10% of the simulated time");
    }
    if (stop::requested())
      throw Interrupted("stop requested");
    // A point reused from --output was read back from JSON: its figures are
    // compared only when simulated now.
    finish_trace(*trace_, *traced_, trace_reused_ ? nullptr : &r.iterations.at(i), &r.run_length.at(i),
                 i < r.rtt_histograms.size() ? &r.rtt_histograms[i] : nullptr,
                 i < r.rtt_stages.size() ? &r.rtt_stages[i] : nullptr);
  }

  nlohmann::ordered_json result_json()
  {
    nlohmann::ordered_json json = to_json(ex_, results_, manifest_);
    if (shard_) {
      json["manifest"]["shard"] = fmt::format("{}/{}", shard_->index, shard_->count);
      json["manifest"]["points_total"] = points_total_;
    }
    if (traced_point_) { // the one point run of the sweep's (or shard's)
      json["manifest"]["traced_point"] = *traced_point_;
      json["manifest"]["points_total"] = points_total_;
    }
    if (!prep_.measurements_file.empty()) {
      comparison_ = compare(ex_, results_, prep_.measurements, prep_.measurements_file);
      json["validation"] = comparison_json(*comparison_);
    }
    return json;
  }

  void print(const nlohmann::ordered_json& json)
  {
    if (!a_.output.empty()) {
      write_output_dir(a_.output, json);
      if (!shard_ && !traced_point_ && !trace_)            // (the other points' files of a traced run are kept)
        remove_stale_points(a_.output, ex_.points.size()); // a larger sweep's points beyond this one's
    }
    if (result_ != nullptr)
      *result_ = json;
    else if (a_.format == "json")
      std::cout << json.dump(2) << '\n';
    else if (a_.format == "csv")
      std::cout << to_csv(ex_, results_);
    else {
      std::cout << to_table(ex_, results_, prep_.metrics) << table_notes(ex_)
                << calibration_notes(ex_.points, results_);
      if (comparison_)
        std::cout << '\n' << comparison_table(*comparison_);
    }
  }

  int report_failures()
  {
    FailedPoints failed; // point_name, result
    for (std::size_t k = 0; k < results_.size(); ++k)
      if (!results_[k].failed.empty())
        failed.emplace_back(point_name(ex_.points[k]), &results_[k]);
    if (failed.empty())
      return 0;
    std::cout.flush();
    const std::size_t ran = results_.size() - failed.size();
    std::string summary = fmt::format("{} of {} point(s) failed; ", failed.size(), results_.size());
    summary += ran == 0 ? "no point ran to the end" : fmt::format("the results of the other {} are printed", ran);
    if (!a_.output.empty())
      summary += fmt::format("{} in {}, where a rerun simulates only the failed point(s)",
                             ran == 0 ? ", nothing kept" : " and kept", a_.output);
    return points_failed(failed, summary);
  }

  const RunArgs& a_;
  const Context& ctx_;
  const std::optional<TraceOptions> trace_;
  std::optional<RunPlan> plan_;
  nlohmann::ordered_json* result_ = nullptr;
  std::optional<long long> traced_point_;
  Experiment ex_;
  Prepared prep_;
  std::size_t points_total_ = 0;
  std::optional<Shard> shard_;
  Manifest manifest_;
  nlohmann::ordered_json identity_;
  std::map<std::size_t, const Point*> by_index_;
  std::map<std::size_t, PointResult> done_;
  bool trace_reused_ = false;
  std::optional<TracedRun> traced_;
  std::vector<PointResult> results_;
  std::optional<Comparison> comparison_;
};

} // namespace

int run_plan(RunPlan plan, const std::string& output, unsigned jobs, bool quiet, nlohmann::ordered_json& result)
{
  static const Context none; // the plan's manifest holds its command line
  RunArgs a;
  a.output = output;
  a.jobs = jobs;
  a.quiet = quiet;
  a.format = "json";
  return RunCommand(a, none, std::move(plan), &result).run();
}

Command add_run(CLI::App& app, const Context& ctx)
{
  auto a = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "run an experiment: every point of its sweep, every iteration");
  run->add_option("file", a->file, "experiment file (YAML)")->required();
  run->footer("\nExperiment keys (YAML, or --set KEY=VALUE): `vsocksim describe` lists every key with its type, unit, "
              "default, range and meaning (`describe hv_sock`, `describe workload`, `describe sim`, ...; "
              "docs/parameters.md); `vsocksim describe metrics` lists what a run reports. sim.run_length: auto "
              "(the default) stops each simulation once its steady state is known and extrapolates the rest; full "
              "simulates every byte (docs/run-length.md). Examples: experiments/*.yaml.");
  run->add_option("--set", a->sets, "override a key before the sweep is expanded: KEY=VALUE (repeatable)");
  run->add_option("--format", a->format, "result format on stdout")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  run->add_option("--output", a->output, "also write the results to this directory (per point, merged, manifest)");
  run->add_option("--jobs", a->jobs, "simulations run at once (results are identical for any value)")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  run->add_flag("--quiet,-q", a->quiet, "no progress lines on stderr");
  run->add_option("--shard", a->shard,
                  "run only the points whose index is I modulo N (I/N, 0 <= I < N); default: from "
                  "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT when set");
  run->add_flag("--allow-large", a->allow_large, "run even if the estimated time exceeds two days on one core");
  run->add_flag("--force", a->force, "write into an --output directory that holds another experiment's results");
  run->add_flag("--list", a->list, "print the expanded points with their indices and stop");
  run->add_flag("--ensemble", a->ensemble,
                "run every member of the platform profile's ensemble too (sim.ensemble: true; a profile written by "
                "calibrate --ensemble): each figure gains its p10..p90 interval over the members");
  a->trace_opt = run->add_option(
      "--trace", a->trace.path,
      "also write a timeline of one iteration of one point in the Trace Event Format (open it in "
      "ui.perfetto.dev or chrome://tracing; draw it with plot --timeline): what ran on each CPU, wake-ups, kicks, "
      "interrupts, signals, credit updates, ring and queue levels (docs/trace.md). With --point K only point K "
      "is simulated (every iteration): the result holds it alone, with the figures the whole run gives it; "
      "without, the whole sweep runs and point 0 is traced");
  run->add_option("--trace-window", a->trace.window,
                  "START:LENGTH of simulated time to trace (ns, us, ms, s; no unit: us), e.g. 500us:200us; default: "
                  "200 us from the end of the warm-up the run-length monitor found (else from 10% of the run)")
      ->needs(a->trace_opt);
  a->point_opt = run->add_option("--point", a->trace.point,
                                 "the point to trace (its index, as --list prints); only it is simulated")
                     ->needs(a->trace_opt)
                     ->capture_default_str();
  run->add_option("--iteration", a->trace.iteration, "the iteration of that point to trace")
      ->needs(a->trace_opt)
      ->capture_default_str();
  run->add_option("--trace-max-events", a->trace.max_events,
                  "stop recording after this many events (the trace then ends early and says so)")
      ->needs(a->trace_opt)
      ->capture_default_str();
  Command c{run, [a, &ctx] {
              if (a->ensemble)
                a->sets.push_back("sim.ensemble=true");
              return a->list ? list_points(*a) : RunCommand(*a, ctx).run();
            }};
  c.handles_stop = [a] { return !a->list; };
  return c;
}

} // namespace vsim::app::cli
