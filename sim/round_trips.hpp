// Round trips of request/response workloads (workload.pattern ping_pong and
// request_response): what a transport's initiating thread reports when the
// recv() that completes a response returns, for every transport alike. It
// keeps the histogram of round-trip times (in us) and tells the run-length
// monitor (sim/run_length.hpp) of each, as one round trip's worth of bytes.
#pragma once

#include <cstdint>

#include "sim/histogram.hpp"
#include "sim/run_length.hpp"
#include "sim/time.hpp"

namespace vsim {

class RoundTrips {
public:
  // clock_ghz: cycles per ns of the platform; bytes: payload of one round
  // trip (request and response); monitor: the run's, or nullptr.
  RoundTrips(double clock_ghz, std::uint64_t bytes, RunLength* monitor)
      : clock_ghz_(clock_ghz), bytes_(bytes), monitor_(monitor)
  {
  }

  // Connection conn's round trip whose request's send() was called at
  // `sent` has its response's last recv() returning at `now`.
  void completed(int conn, Time sent, Time now)
  {
    const double us = (now - sent) / (clock_ghz_ * 1e3);
    rtt_us_.record(us);
    if (monitor_) {
      monitor_->round_trip(us, now);
      monitor_->delivered(conn, bytes_, now);
    }
  }

  const Histogram& histogram() const { return rtt_us_; }
  std::uint64_t count() const { return rtt_us_.count(); }
  std::uint64_t bytes() const { return rtt_us_.count() * bytes_; }

private:
  double clock_ghz_;
  std::uint64_t bytes_;
  RunLength* monitor_;
  Histogram rtt_us_;
};

} // namespace vsim
