// Round trips of request/response workloads (workload.pattern ping_pong and
// request_response): what a transport's initiating thread reports when the
// recv() that completes a response returns, for every transport alike. It
// keeps the histogram of round-trip times (in us) and tells the run-length
// monitor (sim/run_length.hpp) of each, as one round trip's worth of bytes.
//
// Stages. A transport names the stages of its round trip once, in the order
// a round trip passes them (set_stages: the names of its critical path,
// Transport::round_trip_path), and its threads stamp where each begins
// (stamp(conn, stage, t)) as they reach it. A round trip's first stage
// begins at its request's send() (begin()), its last ends at completed().
// Stamps only move forward: a stamp of the current stage or of one before
// it is ignored (the first time a stage is reached is its start: a
// message of several packets reaches the reader's stage with its first),
// and stages a stamp skips last zero. Each stage lasts until the next one
// begins, so the stages of a round trip sum to it exactly.
//
// Only round trips that were alone in flight on their connection from
// begin() to completed() are attributed: with several requests in flight,
// a stamp cannot tell which request it belongs to (one DPC or recv() serves
// several). Attributed round trips are not kept one by one: per bucket of
// their own round-trip histogram, the sum of each stage's time, from which
// band() gives each stage's mean over the round trips of a quantile band.
//
// The timeline (sim/trace.hpp): with a recorder (trace_as), every round
// trip is a slice on its connection's track in the "round trips" process,
// from its request's send() to its response's last recv(), and an
// attributed round trip's stages are slices nested in it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/histogram.hpp"
#include "sim/run_length.hpp"
#include "sim/time.hpp"

namespace vsim {

class Trace;

class RoundTrips {
public:
  // clock_ghz: cycles per ns of the platform; bytes: payload of one round
  // trip (request and response); monitor: the run's, or nullptr.
  RoundTrips(double clock_ghz, std::uint64_t bytes, RunLength* monitor)
      : clock_ghz_(clock_ghz), bytes_(bytes), monitor_(monitor)
  {
  }

  // The stages of a round trip, in the order it passes them; a stage's id
  // for stamp() is its position. Set once, before the first begin().
  void set_stages(std::vector<std::string> names);
  const std::vector<std::string>& stages() const { return stages_; }
  // The id of stage `name`; throws std::logic_error when it is not one.
  int stage_id(const std::string& name) const;

  // Mechanisms that can land in a round trip and spread it (a tick, an
  // idle state's exit, a batched refill): each noted with the time it
  // took, summed per round trip over the attributed ones. Set once, before
  // the first begin(); a cause's id for note() is its position.
  int add_cause(const std::string& name);
  const std::vector<std::string>& causes() const { return causes_; }
  // Cause `cause` took `cycles`, noted now (the engine's time): it lands in
  // every attributed round trip in flight, in its current stage (with one
  // connection, the round trip whose path the CPUs are on).
  void note(int cause, double cycles);

  // Connection conn's initiator calls send() for a request at `now`.
  void begin(int conn, Time now);
  // A thread of connection conn reaches the start of stage `stage` at `now`
  // (the engine's time: stamps come in time order).
  void stamp(int conn, int stage, Time now);
  // Connection conn's round trip whose request's send() was called at
  // `sent` has its response's last recv() returning at `now`. A transport
  // that never calls begin() gets the round trip counted, not attributed.
  void completed(int conn, Time sent, Time now);

  const Histogram& histogram() const { return rtt_us_; }
  std::uint64_t count() const { return rtt_us_.count(); }
  std::uint64_t bytes() const { return rtt_us_.count() * bytes_; }

  // Each stage's mean time (us) over the attributed round trips whose round
  // trip falls in the buckets from the q_lo-quantile's to the q_hi-quantile's
  // (of the attributed round trips; q_hi 1: to the largest), and how many
  // those are. Empty `mean_us` when none is attributed.
  // cause_us: each cause's time per round trip (us, the band's mean);
  // cause_share: the fraction of the band's round trips it landed in;
  // cause_stage_us: per stage (the stage the round trip was in when it
  // was noted), each cause's time per round trip, at stage * causes + cause.
  struct Band {
    std::uint64_t round_trips = 0;
    std::vector<double> mean_us;
    std::vector<double> cause_us, cause_share, cause_stage_us;
  };
  Band band(double q_lo, double q_hi) const;
  std::uint64_t attributed() const { return attributed_us_.count(); }

  // Records every round trip on the timeline `trace` (nullptr: none), on a
  // track named "<initiator> round trips" for connection conn.
  void trace_as(Trace* trace, int conn, const std::string& initiator);

private:
  struct Conn {
    int in_flight = 0;          // begun, not completed
    bool alone = false;         // the current round trip has been alone in flight since its begin()
    int stage = 0;              // the current stage
    Time stage_start = 0;       // when it began
    std::vector<Time> starts;   // each stage's start in the current round trip (-1: skipped)
    std::vector<double> causes; // the current round trip's cycles by stage and cause (stage * causes + cause)
    std::vector<Time> lane_end; // the timeline: when each lane's last round trip ended
    std::string track;          // the timeline's track name ("": not traced)
  };
  Conn& conn(int c);
  void attribute(Conn& c, Time sent, Time now, double us);
  void trace_round_trip(Conn& c, int conn, Time sent, Time now, double us, bool staged);
  double us(Time cycles) const { return cycles / (clock_ghz_ * 1e3); }

  double clock_ghz_;
  std::uint64_t bytes_;
  RunLength* monitor_;
  Histogram rtt_us_;
  std::vector<std::string> stages_;
  std::map<int, Conn> conns_;
  Histogram attributed_us_;                                   // the attributed round trips
  std::map<std::int64_t, std::vector<double>> stage_sums_us_; // per bucket of attributed_us_: each stage's sum
  std::vector<std::string> causes_;
  // Per bucket of attributed_us_: each cause's sum (us) by stage and cause,
  // then how many of the bucket's round trips each cause landed in.
  std::map<std::int64_t, std::vector<double>> cause_sums_us_, cause_hits_;
  Trace* trace_ = nullptr;
  std::uint64_t seq_ = 0; // round trips completed, for their names on the timeline
};

} // namespace vsim
