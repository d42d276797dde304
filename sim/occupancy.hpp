// Time-weighted occupancy of a ring or queue: its mean level over a run and
// the share of time spent in each tenth of its capacity.
//
// Why streams: a shared ring changes level by the hand of two threads (the
// writer adds, the reader releases) whose clocks run ahead of the engine
// independently (sim/thread.hpp), so their updates do not reach the
// accumulator in time order. Each thread's own updates do come in
// non-decreasing time, though. The accumulator therefore keeps one queue of
// pending updates per stream and applies them merged in time order, up to
// the earliest of the streams' latest stamps: a later update from any stream
// cannot be stamped before that. The result is exact (the level is a step
// function of the stamps) and the pending queues stay short (bounded by what
// one side can do before the other must act: a ring's worth of packets).
//
// A stream's update stamped before that stream's previous one (a caller
// breaking the contract) is applied at the previous stamp and counted in
// late_updates(): the accumulator never throws, and the tests check it stays 0.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "sim/timed_value.hpp"

namespace vsim {

class Occupancy {
public:
  static constexpr int kBins = 10;  // (0,10%], (10,20%], ... (90,100%] of capacity

  // capacity: the level that counts as 100% (bytes of a ring, chains of a
  // queue); streams: how many threads update it (1 or 2 in practice).
  explicit Occupancy(double capacity = 1, int streams = 1);

  // The level changes by delta at time t, by the hand of `stream`. Updates
  // stamped after the horizon (sim/horizon.hpp) stay pending: the run may
  // end before them, and summarize(end) applies only those up to its end.
  void change(int stream, Time t, double delta);

  struct Summary {
    double capacity = 0;
    double duration = 0;         // cycles integrated over: [0, end)
    double mean = 0;             // time-weighted mean level
    double max = 0;              // highest level held for a non-zero time
    double empty_fraction = 0;   // share of time at level 0 (or below)
    std::array<double, kBins> bin_fraction{};  // share of time in each tenth of capacity (above 100%: last bin)
    std::uint64_t late_updates = 0;
  };
  // The statistics over [0, end) with every update stamped <= end applied
  // (the level after the last one is held until end). Does not change *this.
  Summary summarize(Time end) const;

  std::uint64_t late_updates() const { return late_; }

  std::size_t pending() const;  // updates waiting for the other streams (to check they stay few)

private:
  struct Acc {
    Time cursor = 0;  // integrated up to here
    double level = 0;
    double area = 0;
    double max = 0;
    double empty = 0;
    std::array<double, kBins> bins{};
  };
  static void advance(Acc& a, double capacity, Time t);  // hold the level from a.cursor to t
  void drain(Time upto);  // apply pending updates stamped <= upto, in time order

  double capacity_;
  std::vector<std::deque<std::pair<Time, double>>> pending_;
  std::vector<Time> last_;  // latest stamp per stream
  Acc acc_;
  std::uint64_t late_ = 0;
};

}  // namespace vsim
