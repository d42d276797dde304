#include "sim/thread.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "sim/world.hpp"

namespace sg4 = simgrid::s4u;

namespace vsim {

namespace {
constexpr Time kNever = std::numeric_limits<Time>::infinity();
}

SimThread::SimThread(World& world, std::string name, Cpu& cpu)
    : world_(&world), name_(std::move(name)), cpu_(&cpu), sem_(sg4::Semaphore::create(0))
{
  id_ = world.register_thread(this);
  cpu.attach_thread();
}

Time SimThread::effective_time() const
{
  if (finished_)
    return kNever;
  if (waiting_)
    return wakeups_.empty() ? kNever : wakeups_.top();
  return now_;
}

bool SimThread::may_skip_sync() const
{
  return !world_->exact();
}

void SimThread::sync_engine()
{
  ++world_->stats().sleeps;
  if (now_ < world_->engine_clock())
    throw std::logic_error(fmt::format("invariant violated: thread {}'s clock ({}) is behind the engine's ({})", name_,
                                       now_, world_->engine_clock()));
  if (now_ > world_->engine_clock())
    sg4::this_actor::sleep_until(now_);
  else
    sg4::this_actor::yield();
}

bool SimThread::others_not_before(Time t) const
{
  for (const SimThread* p : world_->ordered_threads()) {
    if (p == this)
      continue;
    const Time e = p->effective_time();
    if (e < t || (e == t && p->id_ < id_))
      return false;
  }
  return true;
}

void SimThread::observe()
{
  ++world_->stats().observes;
  while (!others_not_before(now_))
    sync_engine();
}

void SimThread::remember(const Work& w)
{
  recent_.push_back(w);
  // Work started before the engine's clock is before the end of the run:
  // forget it, but only now and then (reading the clock per charge costs).
  if (recent_.size() < recent_limit_)
    return;
  const Time clock = world_->engine_clock();
  while (!recent_.empty() && recent_.front().start < clock)
    recent_.pop_front();
  recent_limit_ = std::max<std::size_t>(64, 2 * recent_.size());
}

void SimThread::drop_work_from(Time end)
{
  for (const Work& w : recent_) {
    if (w.start < end)
      continue;
    if (!w.account) {
      cpu_->unaccount_irq(w.c, w.cycles);
      continue;
    }
    (*w.account)[w.c] -= w.cycles;
    if (w.account != &time_)
      stood_in_[w.c] -= w.cycles;
    cpu_->account(w.c, -w.cycles);
  }
  recent_.clear();
}

void SimThread::charge_irq(Time start, double cycles, Cat c)
{
  cpu_->add_irq(start, cycles, c);
  remember({start, cycles, c, nullptr});
}

void SimThread::charge(double cycles, Cat c, CpuTime& account)
{
  account[c] += cycles;
  if (&account != &time_)
    stood_in_[c] += cycles;
  cpu_->account(c, cycles);
  remember({now_, cycles, c, &account});
  if (!world_->exact() && !cpu_->needs_sync()) {
    // Run ahead: nobody else uses this CPU's thread time, so the work's end
    // is known now; interrupts found later become stolen time.
    Time start = now_ + cpu_->take_stolen();
    now_ = cpu_->finish_time(start, cycles);
    cpu_->commit(now_);
    return;
  }
  // Reference path: reach the start in engine time, wait for the CPU if
  // another thread holds it, then hold it until the work (stretched by any
  // interrupt that arrives meanwhile) is done.
  sync_engine();
  // The holder may be about to find that an interrupt stretched its work:
  // wait until it has released the CPU, not merely until its planned end.
  while (cpu_->held() || cpu_->busy_until() > now_) {
    now_ = std::max(now_, cpu_->busy_until());
    sync_engine();
  }
  cpu_->set_held(true);
  Time start = now_ + cpu_->take_stolen();
  Time end = cpu_->finish_time(start, cycles);
  for (;;) {
    cpu_->set_busy_until(end);
    now_ = end;
    sync_engine();
    Time again = cpu_->finish_time(start, cycles);
    if (again <= end)
      break;
    end = again;
  }
  cpu_->commit(end);
  cpu_->set_held(false);
}

void SimThread::wake_at(Time t)
{
  wakeups_.push(t);
  // Releasing the semaphore costs a simcall and, unconsumed, would make the
  // sleeper's next blocks return at once: only when it moves the wake-up.
  if (waiting_ && t < armed_) {
    armed_ = t;
    ++world_->stats().releases;
    sem_->release();
  }
}

bool SimThread::wait()
{
  // A wake-up stamped at or before now arrived while this thread was
  // preparing to sleep (after its last check): like a wake_up() between
  // prepare_to_wait() and schedule(), it makes the sleep return at once.
  if (drop_due_wakeups())
    return false;
  waiting_ = true;
  for (;;) {
    if (wakeups_.empty()) {
      armed_ = kNever;
      ++world_->stats().waits;
      sem_->acquire();
      continue;
    }
    Time t = wakeups_.top();
    double clock = world_->engine_clock();
    if (t <= clock) {
      now_ = std::max(now_, t);
      break;
    }
    // Nobody can wake this thread before the earliest time another thread
    // may still act at: if that is not before t, t is its wake-up time and
    // the engine need not carry it there (see observe()).
    if (!world_->exact() && others_not_before(t)) {
      now_ = std::max(now_, t);
      break;
    }
    armed_ = t;
    ++world_->stats().waits;
    sem_->acquire_timeout(t - clock);
  }
  waiting_ = false;
  drop_due_wakeups();  // this one, and any for the same instant: one wake-up
  return true;
}

bool SimThread::drop_due_wakeups()
{
  bool any = false;
  while (!wakeups_.empty() && wakeups_.top() <= now_) {
    wakeups_.pop();
    any = true;
  }
  return any;
}

void SimThread::start()
{
  auto actor = sg4::Actor::create(name_, cpu_->host(), [this] {
    try {
      body();
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // SimGrid's own way of ending an actor
    } catch (const std::exception& e) {
      // An exception escaping an actor would abort the process: record it,
      // stop the simulation, and let World::run() report it.
      world_->fail(name_ + ": " + e.what());
      finished_ = true;
      sg4::Actor::kill_all();
      return;
    }
    // The run ends with its last non-daemon thread. Before this one
    // leaves, whatever other threads have to do before its end (a daemon
    // woken earlier, which the engine would otherwise never resume) is done.
    if (!daemon_)
      observe();
    finished_ = true;
    finished_at_ = now_;
  });
  if (daemon_)
    actor->daemonize();
}

}  // namespace vsim
