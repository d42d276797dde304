#include "app/cli/common.hpp"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "app/experiment/registry.hpp"
#include "app/report/results.hpp"
#include "app/run/stop.hpp"

namespace fs = std::filesystem;

namespace vsim::app::cli {

namespace {

const char* signal_name(int sig)
{
  switch (sig) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGHUP:
    return "SIGHUP";
  default:
    return "a signal";
  }
}

} // namespace

unsigned default_jobs()
{
  return std::max(1u, std::thread::hardware_concurrency());
}

int stopped(std::size_t finished, std::size_t total, const std::string& output)
{
  std::string line = fmt::format("vsocksim: interrupted by {}", signal_name(stop::requested()));
  if (!output.empty())
    line += fmt::format("; {} of {} points finished and kept in {}", finished, total, output);
  std::cerr << line << '\n';
  return stop::exit_status();
}

int points_failed(const FailedPoints& failed, const std::string& summary)
{
  bool all_bad_input = true;
  for (const auto& [name, r] : failed) {
    std::cerr << fmt::format("vsocksim: {}{}: {}\n", r->bad_input() || r->hang() ? "" : "internal error: ", name,
                             r->failed);
    all_bad_input = all_bad_input && r->bad_input();
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

Prepared prepare(const Experiment& ex, const std::string& file)
{
  if (const std::string& rel = ex.base.text("validation.measurements"); !rel.empty()) {
    const std::string path = (fs::path(file).parent_path() / rel).lexically_normal().string();
    return prepare_with(ex, {path, read_measurements_text(path)});
  }
  return prepare_with(ex, {});
}

Prepared prepare_with(const Experiment& ex, const MeasurementsText& measurements)
{
  Prepared p;
  p.metrics = split_commas(ex.base.text("report.metrics"));
  if (!measurements.file.empty()) {
    p.measurements_file = measurements.file;
    p.measurements_text = measurements.text;
    p.measurements = load_measurements_text(measurements.text, measurements.file, registry());
    match_measurements(ex, p.measurements, p.measurements_file);
  }
  return p;
}

} // namespace vsim::app::cli
