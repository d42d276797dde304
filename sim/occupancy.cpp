#include "sim/occupancy.hpp"

#include "sim/trace.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vsim {

Occupancy::Occupancy(double capacity) : capacity_(capacity)
{
  if (!(capacity > 0))
    throw std::invalid_argument("Occupancy: needs a positive capacity");
}

void Occupancy::change(Time t, double delta)
{
  if (t < acc_.cursor)
    throw std::logic_error("invariant violated: occupancy changes in time order");
  advance(acc_, capacity_, t);
  acc_.level += delta;
  if (trace_)
    trace_->counter(trace_name_, trace_unit_, t, acc_.level);
}

void Occupancy::trace_as(Trace* trace, std::string name, std::string unit)
{
  trace_ = trace;
  trace_name_ = std::move(name);
  trace_unit_ = std::move(unit);
  if (trace_)
    trace_->counter(trace_name_, trace_unit_, acc_.cursor, acc_.level);
}

void Occupancy::advance(Acc& a, double capacity, Time t)
{
  if (t <= a.cursor)
    return;
  const double dt = t - a.cursor;
  a.area += a.level * dt;
  if (a.level <= 0) {
    a.empty += dt;
  } else {
    a.max = std::max(a.max, a.level);
    // (0,10%] -> bin 0, ..., (90%,100%] and above -> bin 9.
    int b = static_cast<int>(std::ceil(a.level / capacity * kBins)) - 1;
    a.bins[static_cast<std::size_t>(std::clamp(b, 0, kBins - 1))] += dt;
  }
  a.cursor = t;
}

Occupancy::Summary Occupancy::summarize(Time end) const
{
  Acc a = acc_;
  advance(a, capacity_, end);
  Summary s;
  s.capacity = capacity_;
  s.duration = std::max<Time>(end, 0);
  s.max = a.max;
  if (s.duration > 0) {
    s.mean = a.area / s.duration;
    s.empty_fraction = a.empty / s.duration;
    for (int i = 0; i < kBins; ++i)
      s.bin_fraction[static_cast<std::size_t>(i)] = a.bins[static_cast<std::size_t>(i)] / s.duration;
  }
  return s;
}

} // namespace vsim
