// Time-weighted occupancy of a ring or queue: its mean level over a run and
// the share of time spent in each tenth of its capacity. Updates come in
// time order (the engine's one order of events); one out of order is a bug
// and throws std::logic_error.
#pragma once

#include <array>
#include <string>

#include "sim/time.hpp"

namespace vsim {

class Trace;

class Occupancy {
public:
  static constexpr int kBins = 10; // (0,10%], (10,20%], ... (90,100%] of capacity

  // capacity: the level that counts as 100% (bytes of a ring, chains of a
  // queue).
  explicit Occupancy(double capacity = 1);

  // The level changes by delta at time t (t >= the previous change's).
  void change(Time t, double delta);
  // Also show every level on the timeline (sim/trace.hpp) as counter `name`
  // in `unit`.
  void trace_as(Trace* trace, std::string name, std::string unit);

  struct Summary {
    double capacity = 0;
    double duration = 0;                      // cycles integrated over: [0, end)
    double mean = 0;                          // time-weighted mean level
    double max = 0;                           // highest level held for a non-zero time
    double empty_fraction = 0;                // share of time at level 0 (or below)
    std::array<double, kBins> bin_fraction{}; // share of time in each tenth of capacity (above 100%: last bin)
  };
  // The statistics over [0, end) (the level after the last change is held
  // until end). Does not change *this.
  Summary summarize(Time end) const;

private:
  struct Acc {
    Time cursor = 0; // integrated up to here
    double level = 0;
    double area = 0;
    double max = 0;
    double empty = 0;
    std::array<double, kBins> bins{};
  };
  static void advance(Acc& a, double capacity, Time t); // hold the level from a.cursor to t

  double capacity_;
  Acc acc_;
  Trace* trace_ = nullptr;
  std::string trace_name_, trace_unit_;
};

} // namespace vsim
