// What the calibration tests share (tests/test_calibrate.cpp,
// tests/test_ties.cpp): the tiny experiments' directory, a scratch
// directory, the hooks that run the fit's simulations quietly.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "app/calibrate/calibrate.hpp"
#include "app/experiment/registry.hpp"
#include "transports/simulate.hpp"

namespace vsim::test {

inline const std::string kCalibrateData = std::string(VSIM_SOURCE_DIR) + "/tests/data/calibrate";

// A fresh directory, removed at scope exit.
struct Scratch {
  std::filesystem::path dir;
  explicit Scratch(const std::string& what)
  {
    dir = std::filesystem::temp_directory_path() / fmt::format("vsim-{}-{}", what, ::getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

inline void write(const std::filesystem::path& p, const std::string& text)
{
  std::ofstream(p) << text;
}

inline std::string read_text(const std::string& path)
{
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The fit's simulations on 2 jobs, no progress.
inline app::CalibrateHooks calibrate_hooks()
{
  app::RunOptions run;
  run.jobs = 2;
  run.progress = false;
  return {simulate_iteration, run, nullptr};
}

// "Measurements" made by the model itself: the experiment `yaml` run with
// `costs` set, and its measurements file `csv` written with one
// throughput_MBps row per point, the point's values of `keys` as its
// columns (sizes in whole bytes). `csv` exists (headers only) while the
// experiment that names it is loaded.
inline void write_model_figures(const std::filesystem::path& yaml, const std::filesystem::path& csv,
                                const std::map<std::string, double>& costs, const std::vector<std::string>& keys)
{
  std::string head;
  for (const std::string& k : keys)
    head += k + ",";
  head += "metric,mean,source\n";
  write(csv, head);
  std::vector<std::string> sets;
  for (const auto& [name, v] : costs)
    sets.push_back(fmt::format("costs.{}={:.17g}", name, v));
  const app::Experiment ex = app::load_experiment(yaml.string(), sets, app::registry());
  const std::vector<app::PointResult> results = app::run_points(ex, simulate_iteration, calibrate_hooks().run);
  std::string text = head;
  for (std::size_t k = 0; k < ex.points.size(); ++k) {
    for (const std::string& key : keys)
      text += value_to_string(ex.points[k].params.get(key)) + ",";
    text += fmt::format("throughput_MBps,{:.17g},model\n", results[k].iterations.at(0).at("throughput_MBps"));
  }
  write(csv, text);
}

} // namespace vsim::test
