// Run-length control (sim.run_length: auto): simulate a transfer only until
// its steady state is known to a stated precision, then extrapolate the rest
// of the transfer at the steady-state rates.
//
// The monitor watches the bytes delivered to the readers. Every `chunk`
// bytes make one observation: the simulated time the chunk took. At checks
// (once there are min_observations, then each time the series has grown by
// a tenth) it
//   1. finds the warm-up with MSER-5 (White 1997; White, Cobb and Spratt,
//      "A comparison of five steady-state truncation heuristics", WSC 2000):
//      observations averaged in groups of 5, the cut d minimising
//      sum_{i>d}(x_i - mean_d)^2 / (n-d)^2, searched over the first half; a
//      minimum at the end of that half means the warm-up is not over;
//   2. cuts what is left after the warm-up into `batches` batches (batch
//      means; Law, "Simulation Modeling and Analysis", 5th ed., 9.5.3) and
//      computes the relative half-width of the 95% confidence interval of
//      the mean time per byte, t(0.975, batches-1) s / sqrt(batches) / mean;
//   3. stops the run if that half-width is at most `precision`, with
//      several connections each connection's share of the throughput is
//      steady (known to twice the precision of an equal share by batch
//      means) and, for a run that is stopped rather than shortened, within
//      the precision of an equal share, and every figure that grows with the
//      run and is judged (CPU time, counts) has a steady-state rate per
//      byte known to twice the precision of what it is part of (batch
//      means over the snapshots since the cut; figure_scales: a category
//      of a CPU's busy time to 1% of the larger of itself and half that
//      busy time, a busy time to 1% of the larger of itself and half a
//      CPU, a count per MB to 1% of the larger of itself and 5% of all
//      the counts per MB).
// The series stays bounded: at max_observations neighbours merge in pairs
// and the chunk doubles (the batches grow with the run, as they must for a
// series whose period exceeds a chunk).
//
// Extrapolation: each figure the transport reports is turned into a
// quantity that grows with the transfer (Scaling), which is taken where the
// batches start (w: the warm-up cut, or the first snapshot after it that
// both the throughput's and the figures' batches use) and at the stop (k)
// and continued at its steady-state rate per byte to the transfer's end:
// X = X_k + (X_k - X_w) (D - D_k) / (D_k - D_w). A byte stream is
// shortened instead of stopped (Shorten): it runs on to an early natural
// end, and the bytes it left out are inserted at those rates.
// A constant-rate run is extrapolated exactly.
//
// The monitor knows nothing of transports: it sees bytes, times and a map
// of named figures.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace vsim {

// How a reported figure relates to the quantity that grows with the run.
enum class Scaling {
  Total,     // grows with the run itself (seconds of CPU, elapsed seconds)
  PerByte,   // a total / bytes delivered (counts per MB)
  PerTime,   // a total / elapsed time (CPU percentages, time-weighted levels, shares of time)
  BytesOver, // bytes delivered / a total (throughput; Mbit/s per %CPU)
  AsIs,      // not extrapolated: sizes, maxima, the simulator's own counts
};

struct RunLengthConfig {
  double precision = 0.005;      // relative half-width of the 95% CI of throughput to stop at
  std::uint64_t total_bytes = 0; // bytes of the whole transfer, all connections
  int connections = 1;
  std::uint64_t chunk = 16384;         // bytes per observation at first
  std::size_t min_observations = 200;  // before the first check
  std::size_t max_observations = 1000; // then pairs merge and the chunk doubles (even, multiple of 10)
  std::size_t batches = 20;
  // Relative half-width a judged figure's steady-state rate needs, as a
  // multiple of `precision`, of the figure's scale (figure_scales).
  double figure_tolerance = 2.0;
  // A figure is judged on the larger of itself and this share of the scale
  // of what it is part of (Whole::Figure, Whole::OneCpu): a category of a
  // CPU's busy time on half that busy time, a busy time on half a CPU.
  double part_share = 0.5;
  // ... and for Whole::Group, this share of the sum of its group (a count
  // per MB on 5% of all the counts per MB together).
  double group_share = 0.05;
  // A round-trip workload (RoundTrips): an observation per round trip, and
  // the run stops only once the round trip's mean and 99th percentile are
  // known to `precision` too (round_trip_interval).
  bool round_trips = false;
  std::size_t quantile_batch = 100; // round trips per batch at least, for a batch's 99th percentile
  // Round trips kept for the intervals, at most (16 MB): later ones are not
  // judged (a run that has not settled by then runs in full).
  std::size_t max_round_trips = std::size_t{1} << 20;
};

// The 95% confidence interval of the mean and of the 99th percentile of
// round trips x, over `batches` batches of the last batches x floor(n /
// batches) values: batch means for the mean; batch quantiles for the
// percentile (each batch's nearest-rank 99th percentile, their mean and its
// t interval), a distribution-free interval needing only independent
// batches. Relative half-widths; infinite with fewer than `min_batch`
// values per batch.
struct RoundTripInterval {
  double mean = 0, p99 = 0;
  double mean_half_width = INFINITY, p99_half_width = INFINITY;
};
RoundTripInterval round_trip_interval(const std::vector<double>& x, std::size_t batches, std::size_t min_batch);

// Bytes an `auto` run typically simulates before it stops, when the
// reader gets `delivery` bytes at a time (for estimates of run time).
std::uint64_t expected_auto_bytes(const RunLengthConfig& cfg, std::uint64_t delivery);

// Why a run was, or was not, extrapolated (the code is reported as
// run_length.reason).
enum class RunEnd {
  Extrapolated = 0,        // the precision was reached; the rest was extrapolated
  Full = 1,                // sim.run_length: full
  TooShort = 2,            // the transfer ended before the first check (too few observations)
  PrecisionNotMet = 3,     // the half-width stayed above the precision until the transfer ended
  NoSteadyState = 4,       // the warm-up never ended in the first half of the run
  UnequalConnections = 5,  // the connections' shares of the throughput were not steady, or unequal in a stopped run
  FiguresNotSteady = 6,    // a figure's steady-state rate (CPU time, a count) was not known to the precision
  RoundTripsNotSteady = 7, // the round trip's mean or 99th percentile was not known to the precision
};
const char* run_end_text(RunEnd e);

// MSER-5 on a series: the number of leading observations to drop (a
// multiple of 5), or nothing when the minimum lies at the end of the
// searched first half (the warm-up is not over) or the series has fewer
// than 2 groups of 5.
std::optional<std::size_t> mser5_cut(const std::vector<double>& x);

// Two-sided 95% Student t quantile, t(0.975, df), df >= 1.
double student_t975(std::size_t df);

struct BatchMeansResult {
  std::size_t batches = 0;
  std::size_t batch_size = 0;     // observations per batch
  std::size_t first = 0;          // first observation used (the remainder before it is dropped)
  double mean = 0;                // mean of the batch ratios
  double relative_half_width = 0; // of the 95% CI of the mean, over the mean
};
// Batch means over observations [from, n): each batch's ratio is the sum
// of num over the sum of den of its observations (time per byte). Needs at
// least `batches` observations.
BatchMeansResult batch_means(const std::vector<double>& num, const std::vector<double>& den, std::size_t from,
                             std::size_t batches);

using Figures = std::map<std::string, double>;

// What a judged figure is a part of, which sets the precision it is held
// to (figure_scales): a figure that is small against its whole does not
// hold the run once the whole is known well enough.
enum class Whole {
  Itself, // judged against itself alone (the elapsed time)
  Figure, // a part of the figure FigureKind::whole_figure names (a category of a CPU's or a
          // thread's busy time; CPU seconds of the elapsed seconds: of one CPU)
  OneCpu, // CPU time in percent, a part of one CPU busy for the whole run (100%)
  Group,  // a part of the sum of the figures of its group (a count per MB of all the counts per MB)
};

// What the monitor needs to know of a figure: how it scales, the group of
// figures of the same unit it belongs to, and what it is a part of.
struct FigureKind {
  Scaling scaling;
  std::string group;
  bool judged = true; // false: extrapolated, but its steady state does not hold the run (explanations)
  Whole whole = Whole::Group;
  std::string whole_figure{}; // for Whole::Figure
};

// The scale each judged figure's precision is relative to, for every
// judged figure of x that grows with the run (Total, PerByte, PerTime):
//   Itself:  |x_F|
//   Figure:  max(|x_F|, part_share x scale(whole_figure))
//   OneCpu:  max(|x_F|, part_share x one_cpu)
//   Group:   max(|x_F|, group_share x sum of |x_G| over F's group)
// x holds either steady-state rates per byte (the monitor; one_cpu is then
// 100% of a CPU per byte, 100 x time per byte) or a run's figures (one_cpu
// = 100): a figure and its whole always scale alike, so both give the same
// judgement. A whole_figure missing from x is a bug (std::logic_error).
std::map<std::string, double> figure_scales(const Figures& x, const std::function<FigureKind(const std::string&)>& kind,
                                            const RunLengthConfig& cfg, double one_cpu);

// Asks the transport to end the transfers early by one span of the steady
// state: connection c leaves out shares[c] x S bytes (shares: each
// connection's part of the steady-state throughput, summing to 1), S the
// largest span every connection has room for (steady_span). Returns, per
// connection, the bytes that will no longer be sent.
using Shorten = std::function<std::vector<std::uint64_t>(const std::vector<double>& shares)>;

// The bytes each connection leaves out when a run is shortened by one span
// of its steady state: shares[c] x S, with S the largest span for which no
// connection leaves out more than room[c] (what its writer has not begun,
// less one more message). Connections that share the throughput unequally
// then leave out unequal bytes, as a stretch of time cut out of the middle
// of a full run would: the faster ones still end first, and the end where
// the slower ones go on alone is simulated, not extrapolated. One
// connection leaves out its room.
std::vector<std::uint64_t> steady_span(const std::vector<std::uint64_t>& room, const std::vector<double>& shares);
// The bytes the writers have begun to send, all connections (with the
// bytes delivered: the bytes in flight).
using Committed = std::function<std::uint64_t()>;

class RunLength {
public:
  // snapshot(now, delivered): the transport's figures as if the run ended
  // now with `delivered` bytes; kind(name): how a figure scales; stop():
  // end the simulation at once. With `shorten` (byte streams), a steady run
  // is not stopped but shortened: the transport ends every transfer soon
  // (shorten(shares), by one span of the steady state), the simulation runs on to that natural end (the bytes in
  // flight drain, the writers and readers finish as in a full run), and
  // finish() inserts the bytes left out at the steady state's rates, where
  // they were left out. A stopped run instead continues its steady state to
  // the transfer's end, and the work of the side that runs ahead (the
  // writer's, for the bytes in flight at the stop) is counted twice.
  // With `committed`, the bytes in flight must be steady too: their change
  // between where the batches start and the last snapshot at most
  // figure_tolerance x precision of the bytes delivered meanwhile (the
  // writer's work on bytes not yet delivered counts in the sending side's
  // figures: a buffer still filling at a steady throughput makes them look
  // steady and too high; held_by "bytes_in_flight", with that change over
  // the bytes delivered).
  RunLength(RunLengthConfig cfg, std::function<Figures(Time, std::uint64_t)> snapshot,
            std::function<FigureKind(const std::string&)> kind, std::function<void()> stop, Shorten shorten = nullptr,
            Committed committed = nullptr);

  // `bytes` reached connection conn's reader at time now (in time order).
  void delivered(int conn, std::uint64_t bytes, Time now);
  // A round trip of `value` (any unit) completed at time now, before its
  // bytes are delivered() (round-trip workloads).
  void round_trip(double value, Time now);

  // The steady state was judged known (the run was then stopped or
  // shortened); no more observations.
  bool stopped() const { return stopped_; }
  // The simulation was ended by stop() before its transfer was over.
  bool ended_early() const { return stopped_ && !shortened_; }
  // The figures of the whole transfer, extrapolated from the steady state
  // (only once stopped(), not shortened).
  Figures extrapolate() const;
  // The figures of the whole transfer from `end`, the transport's figures
  // at the run's end (time `end_time`; empty for a run that ended early):
  // `end` itself for a run not stopped, extrapolate() for one that ended
  // early, and for a shortened one `end` with the bytes left out inserted
  // at the steady state's rates per byte.
  Figures finish(const Figures& end, Time end_time) const;
  // run_length.* entries: extrapolated (0/1), reason (RunEnd), simulated_bytes,
  // warmup_bytes, batches, half_width (relative), observation_bytes; for
  // FiguresNotSteady also held_by.<figure> = that figure's half-width over its scale.
  Figures info() const;
  // The entries of a run simulated in full on request (no monitor).
  static Figures full_info(std::uint64_t total_bytes);

private:
  struct Snap {
    Time t = 0;
    std::uint64_t d = 0;
    std::vector<std::uint64_t> per_conn;
    std::uint64_t committed = 0; // the writers' bytes begun (d without a Committed)
    std::vector<double> values;  // by names_; empty for the start of the run (everything zero)
  };
  Snap take(Time now);
  std::vector<std::string> names_; // the figures' names, from the first snapshot
  std::vector<FigureKind> kinds_;  // and their kinds
  std::size_t index_of(const std::string& name) const;
  void observe(Time now);
  void merge_pairs();
  void check(Time now);
  bool figures_steady(std::size_t from_snap);
  bool in_flight_steady();
  bool connections_steady(const Snap& w, std::size_t from_snap);
  // Batch means, over the snapshot intervals since from_snap, of the growth
  // of x(snapshot) per byte delivered (a figure's or a connection's rate).
  template <class X> BatchMeansResult rate_per_byte(std::size_t from_snap, const X& x) const;
  std::vector<double> shares_; // each connection's share of the steady-state throughput (at the stop)
  bool round_trips_steady(Time from);
  std::vector<Time> rtt_t_;  // each round trip's completion
  std::vector<double> rtt_;  // and its value
  RoundTripInterval rtt_ci_; // at the last check that reached it

  RunLengthConfig cfg_;
  std::function<Figures(Time, std::uint64_t)> snapshot_;
  std::function<FigureKind(const std::string&)> kind_;
  std::function<void()> stop_;
  Shorten shorten_;
  Committed committed_;
  bool shortened_ = false;
  std::uint64_t skipped_ = 0; // bytes the shortened run left out, all connections
  std::uint64_t chunk_;
  std::uint64_t total_ = 0; // delivered so far
  std::vector<std::uint64_t> per_conn_;
  std::uint64_t next_boundary_;
  Time last_t_ = 0; // of the last observation's end
  Time last_delivery_ = 0;
  std::uint64_t last_d_ = 0;
  std::vector<double> dt_, dd_; // per observation: time taken, bytes delivered
  std::vector<Snap> snaps_;     // snaps_[j]: after observation 5j (snaps_[0]: the start)
  std::size_t next_check_;
  bool stopped_ = false;
  RunEnd reason_ = RunEnd::TooShort;
  std::size_t cut_obs_ = 0;   // observations in the warm-up by MSER-5 (at the last check)
  std::size_t base_snap_ = 0; // the snapshot the steady-state rates are taken from: the cut, or where the batches start
  std::uint64_t warmup_bytes_ = 0; // bytes before base_snap_
  std::string held_by_; // the figure that did not settle at the last check, and its half-width over its scale
  double held_by_half_width_ = 0;
  BatchMeansResult last_{};
  Snap stop_snap_;
};

} // namespace vsim
