// The run driver: every iteration of every point of an experiment runs in its
// own forked child process (SimGrid allows one simulation per process), up to
// `jobs` children at once. Results are placed by (point, iteration), so they do
// not depend on the number of jobs or on the order in which children finish.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/experiment.hpp"
#include "sim/params.hpp"

namespace vsim::app {

// One iteration's metrics, by name.
using Metrics = std::map<std::string, double>;

// Runs one iteration of one point; called in a child process. Throwing makes the
// whole run fail with the exception's message.
using IterationFn = std::function<Metrics(const Params&, std::uint32_t iteration)>;

struct PointResult;

struct RunOptions {
  unsigned jobs = 1;      // children at once; 0 counts as 1
  bool progress = true;   // progress lines on stderr (a single \r-updated line on a terminal)
  // Called (in the parent) as soon as every iteration of a point is done.
  std::function<void(const PointResult&)> on_point;
  // When it returns true (a stop request, app/stop.hpp), the run stops:
  // children are killed with their process groups and reaped, and Interrupted
  // is thrown. Asked before and after every fork and whenever the wait for
  // children returns.
  std::function<bool()> stop;
  // A descriptor that becomes readable when a stop is requested, watched
  // with the children's pipes so the wait returns at once; -1 for none.
  int stop_fd = -1;
};

// The run was stopped through RunOptions::stop.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PointResult {
  std::size_t index;                // Point::index
  std::vector<Metrics> iterations;  // iterations 0..n-1, in order
  // How each iteration's figures were obtained (sim.run_length): the
  // run_length.* entries a simulation reports, without the prefix
  // (extrapolated, reason, simulated_bytes, ...); empty maps if none.
  std::vector<Metrics> run_length;
};

// Moves the run_length.* entries of an iteration's metrics into `info`
// (without the prefix).
void split_run_length(Metrics& metrics, Metrics& info);

// Runs params.integer("iterations") iterations of every point of `ex`, each in
// a forked child which calls fn(point.params, i) and sends the metrics back
// through a pipe, bit-exact. Returns one PointResult per point, in the order of
// ex.points.
//
// In the child, stdout is redirected to stderr so nothing a simulation prints
// can mix with the results the parent writes to stdout. Each child runs in a
// process group of its own (stop::enter_child) and dies with the parent.
//
// If fn throws, or a child dies by a signal or exits non-zero, the remaining
// children are killed and reaped and std::runtime_error
// "point K iteration I: <message or signal>" is thrown.
std::vector<PointResult> run_points(const Experiment& ex, const IterationFn& fn, const RunOptions& opt);

// Runs fn once in a forked child, as run_points runs an iteration, and
// returns the bytes it returned. An InputError fn throws comes back as
// InputError (exit 2: bad input found only by simulating), any other error or
// a dead child as std::runtime_error. A stop request (app/stop.hpp) kills the
// child and throws Interrupted.
std::string run_in_child(const std::function<std::string()>& fn);

// The bit-exact wire format of metrics (what children send back).
std::string encode_metrics(const Metrics& m);
bool decode_metrics(const std::string& in, Metrics& m);

}  // namespace vsim::app
