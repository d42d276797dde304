#include "sim/occupancy.hpp"

#include "sim/horizon.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace vsim {

Occupancy::Occupancy(double capacity, int streams)
    : capacity_(capacity), pending_(static_cast<std::size_t>(streams)),
      last_(static_cast<std::size_t>(streams), -std::numeric_limits<Time>::infinity())
{
  if (streams < 1 || !(capacity > 0))
    throw std::invalid_argument("Occupancy: needs a positive capacity and at least one stream");
}

namespace {
HorizonClock g_horizon = nullptr;
}

void set_horizon(HorizonClock clock)
{
  g_horizon = clock;
}

Time horizon()
{
  return g_horizon ? g_horizon() : std::numeric_limits<Time>::infinity();
}

void Occupancy::change(int stream, Time t, double delta)
{
  auto s = static_cast<std::size_t>(stream);
  if (t < last_[s]) {
    ++late_;
    t = last_[s];
  }
  last_[s] = t;
  pending_[s].emplace_back(t, delta);
  // One stream: its order is time order. Several: no update can come
  // stamped before the earliest of their latest stamps.
  Time upto = pending_.size() == 1 ? t : *std::min_element(last_.begin(), last_.end());
  upto = std::min(upto, horizon());
  drain(upto);
}

std::size_t Occupancy::pending() const
{
  std::size_t n = 0;
  for (const auto& q : pending_)
    n += q.size();
  return n;
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

void Occupancy::drain(Time upto)
{
  for (;;) {
    // The earliest pending update over every stream (ties: lower stream first).
    std::deque<std::pair<Time, double>>* best = nullptr;
    for (auto& q : pending_)
      if (!q.empty() && q.front().first <= upto && (!best || q.front().first < best->front().first))
        best = &q;
    if (!best)
      return;
    advance(acc_, capacity_, best->front().first);
    acc_.level += best->front().second;
    best->pop_front();
  }
}

Occupancy::Summary Occupancy::summarize(Time end) const
{
  Occupancy copy = *this;
  copy.drain(end);  // updates stamped after the end of the run do not count
  advance(copy.acc_, capacity_, end);
  const Acc& a = copy.acc_;
  Summary s;
  s.capacity = capacity_;
  s.duration = std::max<Time>(end, 0);
  s.late_updates = late_;
  s.max = a.max;
  if (s.duration > 0) {
    s.mean = a.area / s.duration;
    s.empty_fraction = a.empty / s.duration;
    for (int i = 0; i < kBins; ++i)
      s.bin_fraction[static_cast<std::size_t>(i)] = a.bins[static_cast<std::size_t>(i)] / s.duration;
  }
  return s;
}

}  // namespace vsim
