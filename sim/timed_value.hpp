// A shared variable whose changes are stamped with the simulated time at
// which they become visible.
//
// Threads in vsocksim run ahead of SimGrid's clock (see sim/thread.hpp): a
// thread may publish a change stamped in the future of the engine's clock.
// A reader at local time t must see the value as of t, not the latest write,
// so each variable keeps the short history of changes not yet seen by every
// reader. Writes must come in non-decreasing time order.
#pragma once

#include <cassert>
#include <deque>
#include <optional>
#include <stdexcept>
#include <utility>

namespace vsim {

using Time = double;  // simulated time, in cycles of the platform clock

template <typename T>
class TimedValue {
public:
  explicit TimedValue(T initial = T{}) { history_.emplace_back(-1.0, std::move(initial)); }

  // Publish v at time t (t >= time of the previous write).
  void set(Time t, T v)
  {
    if (t < history_.back().first)
      throw std::logic_error("TimedValue: write stamped before the previous write");
    if (history_.back().first == t)
      history_.back().second = std::move(v);
    else
      history_.emplace_back(t, std::move(v));
  }

  // The value visible at time t: the last write stamped <= t.
  const T& at(Time t) const
  {
    for (auto it = history_.rbegin(); it != history_.rend(); ++it)
      if (it->first <= t)
        return it->second;
    return history_.front().second;
  }

  const T& latest() const { return history_.back().second; }
  Time latest_time() const { return history_.back().first; }

  // Forget changes superseded before time t (no reader will look before t).
  void forget_before(Time t)
  {
    while (history_.size() > 1 && history_[1].first <= t)
      history_.pop_front();
  }

  std::size_t history_size() const { return history_.size(); }
  // The first write stamped after t whose value satisfies pred, if any.
  template <typename Pred>
  std::optional<Time> first_after(Time t, Pred pred) const
  {
    for (const auto& [when, v] : history_)
      if (when > t && pred(v))
        return when;
    return std::nullopt;
  }

private:
  std::deque<std::pair<Time, T>> history_;
};

}  // namespace vsim
