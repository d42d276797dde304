// The run driver: every iteration of every point of an experiment runs in its
// own forked child process (SimGrid allows one simulation per process), up to
// `jobs` children at once. Results are placed by (point, iteration), so they do
// not depend on the number of jobs or on the order in which children finish.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "sim/params.hpp"

namespace vsim::app {

// One iteration's metrics, by name.
using Metrics = std::map<std::string, double>;

// Runs one iteration of one point; called in a child process. Throwing makes
// that point fail (PointResult::failed) with the exception's message.
using IterationFn = std::function<Metrics(const Params&, std::uint32_t iteration)>;

struct PointResult;

// Why a point failed (PointResult::failed).
enum class FailureKind {
  Internal, // a violated model invariant, a crash, any other internal error
  BadInput, // an InputError: bad input found only by simulating
  // The simulated system's own hang (sim/world.hpp ModelledHang): a result
  // the transport explains by a kernel rule, not a defect of the model.
  Hang,
};

struct RunOptions {
  unsigned jobs = 1;    // children at once; 0 counts as 1
  bool progress = true; // progress lines on stderr (a single \r-updated line on a terminal)
  // Called (in the parent) as soon as every iteration of a point is done;
  // not for a point that failed.
  std::function<void(const PointResult&)> on_point;
  // When it returns true (a stop request, app/run/stop.hpp), the run stops:
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

// One member of the ensemble a point ran (Point::members).
struct MemberResult {
  double weight = 0;
  // Its simulation's metrics (iteration 0's random streams; without the
  // run_length.*, rtt_histogram.* and rtt_stage.* entries); empty if it failed.
  Metrics metrics;
  // Why it failed ("" when it ran): a failed member leaves the point and
  // the other members standing.
  std::string failed;
};

struct PointResult {
  std::size_t index;               // Point::index
  std::vector<Metrics> iterations; // iterations 0..n-1, in order
  // How each iteration's figures were obtained (sim.run_length): the
  // run_length.* entries a simulation reports, without the prefix
  // (extrapolated, reason, simulated_bytes, ...); empty maps if none.
  std::vector<Metrics> run_length;
  // Round-trip workloads: each iteration's histogram of round trips, its
  // bucket (sim/histogram.hpp, as text) -> count; empty maps if none.
  std::vector<Metrics> rtt_histograms;
  // Round-trip workloads: each iteration's stage times (the rtt_stage.*
  // entries of transports/simulate.hpp without the prefix); empty maps if none.
  std::vector<Metrics> rtt_stages;
  // sim.ensemble: each member of the ensemble, in the profile's order; empty
  // for a run without one (and when the point failed).
  std::vector<MemberResult> members;
  // Empty when every iteration ran. Else why the point failed, its lowest
  // failed iteration's "iteration I: <message or signal>"; then iterations
  // and run_length are empty.
  std::string failed;
  // What kind of failure `failed` is (meaningful only when it is not empty).
  FailureKind kind = FailureKind::Internal;
  bool bad_input() const { return !failed.empty() && kind == FailureKind::BadInput; }
  bool hang() const { return !failed.empty() && kind == FailureKind::Hang; }
};

// How the message of a point whose simulated system hangs (PointResult::hang)
// begins, before the transport's reason.
inline constexpr const char* kHangPrefix = "the simulated system hangs, as the kernel it models would: ";

// The message of a failure injected by VSOCKSIM_TEST_FAIL_POINTS (below).
inline constexpr const char* kInjectedFailure = "injected failure (VSOCKSIM_TEST_FAIL_POINTS)";

// Moves the entries of an iteration's metrics named `prefix`... into `out`
// (without the prefix): run_length.* (how the figures were obtained) and
// rtt_histogram.* (the round trips' histogram, transports/simulate.hpp) and
// rtt_stage.* (their stage times).
void split_prefixed(Metrics& metrics, const std::string& prefix, Metrics& out);

// Runs params.integer("iterations") iterations of every point of `ex`, each in
// a forked child which calls fn(point.params, i) and sends the metrics back
// through a pipe, bit-exact, and then each of its ensemble members
// (Point::members) once, as fn(member.params, 0). Returns one PointResult per
// point, in the order of ex.points. A member that fails is filed in
// MemberResult::failed; the point does not fail with it.
//
// In the child, stdout is redirected to stderr so nothing a simulation prints
// can mix with the results the parent writes to stdout. Each child runs in a
// process group of its own (stop::enter_child) and dies with the parent.
//
// A point fails when fn throws, or a child dies by a signal, exits non-zero
// or exits without a result, in any of its iterations: its PointResult then
// holds no metrics and says why in `failed` (the lowest failed iteration's
// message, so the same for any `jobs`); its later iterations are not run
// (or killed when running). Every other point runs as if nothing had failed.
//
// For tests only: the environment variable VSOCKSIM_TEST_FAIL_POINTS, a
// comma-separated list of point indices (Point::index), makes every
// iteration of those points throw std::logic_error(kInjectedFailure) in the
// child instead of calling fn. A malformed list throws std::invalid_argument
// before anything runs.
//
// Errors of the run itself (pipe, fork, poll, read, waitpid, or on_point
// throwing) kill and reap the children and are thrown.
std::vector<PointResult> run_points(const Experiment& ex, const IterationFn& fn, const RunOptions& opt);

// Runs fn once in a forked child, as run_points runs an iteration, and
// returns the bytes it returned. An InputError fn throws comes back as
// InputError (exit 2: bad input found only by simulating), any other error or
// a dead child as std::runtime_error. A stop request (app/run/stop.hpp) kills the
// child and throws Interrupted.
std::string run_in_child(const std::function<std::string()>& fn);

// The bit-exact wire format of metrics (what children send back).
std::string encode_metrics(const Metrics& m);
bool decode_metrics(const std::string& in, Metrics& m);

} // namespace vsim::app
