// A count of events (kicks, interrupts, copies, ...) whose increments are
// stamped with the time they happen, so that a run's figure leaves out what
// daemon threads did after its end (World::end(); see sim/horizon.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

#include "sim/horizon.hpp"

namespace vsim {

class Count {
public:
  void add(Time t, std::uint64_t k = 1)
  {
    total_ += k;
    const Time h = horizon();
    while (!recent_.empty() && recent_.front().first < h)
      recent_.pop_front();  // before the horizon: before the end of the run
    if (t >= h)
      recent_.emplace_back(t, k);
  }
  // The increments stamped up to `end` (an event at the very instant the
  // run ends, such as the last reader's final credit update, belongs to it).
  std::uint64_t until(Time end) const
  {
    std::uint64_t n = total_;
    for (const auto& [t, k] : recent_)
      if (t > end)
        n -= k;
    return n;
  }

private:
  std::uint64_t total_ = 0;
  std::deque<std::pair<Time, std::uint64_t>> recent_;  // stamped at or after the horizon when added
};

}  // namespace vsim
