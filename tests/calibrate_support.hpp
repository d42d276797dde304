// What the calibration tests share (tests/test_calibrate.cpp,
// tests/test_ties.cpp): the tiny experiments' directory, a scratch
// directory, the hooks that run the fit's simulations quietly.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <fmt/format.h>

#include "app/calibrate/calibrate.hpp"
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

} // namespace vsim::test
