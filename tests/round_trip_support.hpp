// What the round-trip tests of both transports share: an experiment from a
// base text and more keys, its points run (each simulation in a child
// process, run_points forks), and a point's figure.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/run/runner.hpp"
#include "transports/simulate.hpp"

namespace vsim::test {

inline app::Experiment load_with(const char* base, const std::string& extra, const std::vector<std::string>& sets)
{
  return app::load_experiment_text(std::string(base) + extra, "t.yaml", sets, app::registry());
}

inline std::vector<app::PointResult> run_all(const app::Experiment& ex)
{
  app::RunOptions opt;
  opt.jobs = 2;
  opt.progress = false;
  return app::run_points(ex, simulate_iteration, opt);
}

// Iteration `it`'s figure `name` of a point that did not fail.
inline double figure(const app::PointResult& r, const char* name, std::size_t it = 0)
{
  INFO(r.failed);
  REQUIRE(r.failed.empty());
  return r.iterations.at(it).at(name);
}

} // namespace vsim::test
