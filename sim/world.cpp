#include "sim/world.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <simgrid/kernel/Timer.hpp>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::timer::Timer;

namespace vsim {

World::World()
{
  // SimGrid's own messages would go to stderr; results must not depend on
  // them and users should not see them.
  xbt_log_control_set("root.thresh:critical");
  static char name[] = "vsocksim";
  static char* argv[] = {name, nullptr};
  static int argc = 1;
  engine_ = std::make_unique<sg4::Engine>(&argc, argv);
  zone_ = sg4::create_full_zone("machine");
  if (const char* v = std::getenv("VSIM_ENGINE_TIMERS_ONLY"))
    direct_ = std::string(v) != "1";
}

World::~World() = default;

std::vector<Cpu*> World::add_cpus(Side side, const std::string& prefix, int n)
{
  std::vector<Cpu*> out;
  for (int i = 0; i < n; ++i)
    out.push_back(&add_cpu(side, prefix + std::to_string(i)));
  return out;
}

Cpu& World::add_cpu(Side side, const std::string& name)
{
  // The CPUs are the model's own (sim/cpu.hpp): SimGrid is the event engine
  // only, and a platform with hosts would make every main-loop iteration of
  // its resource models cost more.
  cpus_.push_back(std::make_unique<Cpu>(static_cast<int>(cpus_.size()), side, name));
  if (trace_)
    trace_->add_cpu(*cpus_.back());
  return *cpus_.back();
}

int World::register_thread(SimThread* t)
{
  registered_.push_back(t);
  return static_cast<int>(registered_.size()) - 1;
}

void World::fail(const std::string& what)
{
  if (error_.empty())
    error_ = what;
  stop();
}

void World::end_now()
{
  end_ = now_;
  stop();
}

void World::schedule(Time at, SimThread& t, std::uint64_t gen)
{
  if (at < now_)
    throw std::logic_error(
        fmt::format("invariant violated: thread {} scheduled at {}, before the engine's time {}", t.name(), at, now_));
  events_.push(Event{at, t.id(), seq_++, gen});
}

bool World::take_directly(Time t, const SimThread& th)
{
  if (!direct_ || stopped_)
    return false;
  // Stale events at the head of the queue do not count.
  while (!events_.empty()) {
    const Event& top = events_.top();
    if (registered_[static_cast<std::size_t>(top.thread)]->current(top.gen)) {
      if (top.t < t || (top.t == t && top.thread < th.id()))
        return false;
      break;
    }
    events_.pop();
    ++stats_.stale;
  }
  // Nothing can happen before t: no event is due earlier, and only events
  // make things happen. The step's end is the next event of the order.
  now_ = t;
  ++stats_.direct;
  return true;
}

void World::thread_finished(SimThread& t)
{
  if (!t.daemon() && --running_ == 0) {
    end_ = now_;
    stop();
  }
}

void World::stop()
{
  stopped_ = true;
  if (timer_) {
    timer_->remove();
    timer_ = nullptr;
  }
}

void World::arm()
{
  if (stopped_ || events_.empty())
    return;
  const Time t = events_.top().t;
  if (timer_) {
    if (armed_at_ <= t)
      return;
    timer_->remove();
  }
  armed_at_ = t;
  timer_ = Timer::set(t, [this] {
    timer_ = nullptr;
    fire();
  });
}

void World::fire()
{
  ++stats_.advances;
  // The engine's time is the time the timer was set for: SimGrid's clock
  // reaches it up to rounding (it adds up the delays it advances by), which
  // must not leak into the order of events.
  const Time clock = sg4::Engine::get_clock();
  if (std::abs(clock - armed_at_) > 1e-9 * std::max(1.0, std::abs(armed_at_)))
    throw std::logic_error(
        fmt::format("invariant violated: the timer set for {} fired with SimGrid's clock at {}", armed_at_, clock));
  if (armed_at_ < now_)
    throw std::logic_error(
        fmt::format("invariant violated: a timer set for {}, behind the engine's time {}", armed_at_, now_));
  now_ = armed_at_;
  // Every event due now, in order; steps taken directly (take_directly) may
  // move the time on meanwhile, to events no other one precedes.
  while (!stopped_ && !events_.empty() && events_.top().t <= now_) {
    const Event ev = events_.top();
    events_.pop();
    if (ev.t != now_)
      throw std::logic_error(fmt::format("invariant violated: an event due at {} found at engine time {}", ev.t, now_));
    SimThread* t = registered_[static_cast<std::size_t>(ev.thread)];
    current_ = t;
    t->on_event(ev.gen);
  }
  arm();
}

void World::wake_ipi_to(const SimThread& wakee)
{
  SimThread* waker = current_;
  if (!waker || &waker->cpu() == &wakee.cpu() || waker->cpu().side() != wakee.cpu().side())
    return;
  const auto side = static_cast<std::size_t>(wakee.cpu().side());
  const WakeIpi& ipi = wake_ipi_[side];
  if (ipi.cycles <= 0)
    return;
  waker->charge(ipi.cycles, ipi.cat);
  wake_ipis_[side].add();
}

void World::run()
{
  if (!sealed_) {
    zone_->seal();
    sealed_ = true;
  }
  for (auto& t : threads_)
    if (!t->daemon())
      ++running_;
  for (auto& t : threads_)
    t->start();
  arm();
  engine_->run();
  if (!error_.empty())
    throw std::logic_error(error_);
  if (running_ > 0) // no event left, yet threads wait: the transport reports what stalled
    end_ = now_;
  if (trace_)
    trace_->set_run_end(end_);
  // Work that started at the run's very end (a daemon acting at that
  // instant before the last thread finished) is not part of it.
  for (const auto& t : threads_)
    t->drop_work_from(end_);
}

} // namespace vsim
