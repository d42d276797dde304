// A count of events (kicks, interrupts, copies, ...) in a run. The engine
// stops at the run's end, so every count made is part of the run.
#pragma once

#include <cstdint>

namespace vsim {

class Count {
public:
  void add(std::uint64_t k = 1) { total_ += k; }
  std::uint64_t value() const { return total_; }

private:
  std::uint64_t total_ = 0;
};

} // namespace vsim
