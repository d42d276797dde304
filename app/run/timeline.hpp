// `vsocksim run FILE --trace OUT.json [--trace-window START:LENGTH] [--point K]
// [--iteration I]`: the timeline of one iteration of one point in the Trace
// Event Format (sim/trace.hpp; docs/trace.md), and `vsocksim plot --timeline`.
//
// The traced iteration is simulated once more, in a child process of its
// own, with the recorder attached; its figures must equal those of the
// normal run (the recorder only observes: a difference is an internal
// error). The file is written atomically once everything is checked: bad
// options exit 2 and write nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

inline constexpr std::size_t kTraceMaxEvents = 200000;
inline constexpr double kTraceDefaultLengthUs = 200;

struct TraceOptions {
  std::string path;         // --trace
  std::string window;       // --trace-window START:LENGTH, empty: the default
  long long point = 0;      // --point: the point's index (as run --list prints)
  bool point_given = false; // --point was given: only that point is simulated
  long long iteration = 0;  // --iteration
  long long max_events = static_cast<long long>(kTraceMaxEvents);
};

// START:LENGTH in microseconds of simulated time (units: parse_duration_us);
// START may be left out (":500us": the default start). Throws InputError.
struct TraceWindow {
  std::optional<double> start_us;
  double length_us = kTraceDefaultLengthUs;
};
TraceWindow parse_trace_window(const std::string& text);

// Everything that can be checked before anything runs: the window's syntax,
// the point and iteration in range, the path writable. Throws InputError.
void check_trace_options(const TraceOptions& opt, const Experiment& ex);

// The traced iteration's figures and its timeline (JSON text).
struct TracedRun {
  Metrics metrics; // with the run_length.* entries
  std::string json;
};

// Where the default window starts, in microseconds: the end of the warm-up
// the run-length monitor found in the normal run of that iteration
// (run_length.warmup_bytes, at the iteration's mean rate), or else 10% of
// its simulated time.
double default_trace_start_us(const Metrics& metrics, const Metrics& run_length, double total_bytes);

// Simulates the iteration with the recorder attached, in a child process.
// Throws InputError when the window starts at or after the run's end.
TracedRun trace_iteration(const TraceOptions& opt, const Experiment& ex, double start_us, const std::string& rule);

// Checks that tracing changed no figure of the iteration (std::logic_error
// naming the first that differs; untraced nullptr: no check), then writes
// the trace atomically.
// rtt_histogram, rtt_stages: the iteration's round-trip histogram and
// stage times, which the run driver moved out of its figures (nullptr: none).
void finish_trace(const TraceOptions& opt, const TracedRun& run, const Metrics* untraced, const Metrics* run_length,
                  const Metrics* rtt_histogram, const Metrics* rtt_stages = nullptr);

} // namespace vsim::app
