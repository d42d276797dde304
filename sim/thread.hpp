// A simulated thread (a SimGrid actor pinned to one CPU) with its own clock.
//
// Why a local clock: every SimGrid simcall (sleep, semaphore, exec) costs
// 0.3-2 us of wall time, far too much to spend per 128-byte message. A
// thread therefore advances its own clock (`now()`) by the cycles it charges,
// without simcalls, and publishes shared state stamped with that clock
// (TimedValue, stamped ring packets). It synchronises with the engine only
// when it must *read* state other threads publish: `observe()` waits until
// every other thread is past this thread in the total order (time, id) or is
// blocked with no wake-up pending, so whatever it reads at `now()` is exactly
// what was visible at that time. Results are identical to running every
// operation as its own simcall (see `sim.mode: exact` and the tests that
// compare both), because no thread ever reads state before all writes
// stamped earlier have been made.
#pragma once

#include <deque>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include <simgrid/s4u/Semaphore.hpp>

#include "sim/cpu.hpp"

namespace vsim {

class World;

class SimThread {
public:
  SimThread(World& world, std::string name, Cpu& cpu);
  virtual ~SimThread() = default;
  SimThread(const SimThread&) = delete;
  SimThread& operator=(const SimThread&) = delete;

  const std::string& name() const { return name_; }
  Cpu& cpu() const { return *cpu_; }
  int id() const { return id_; }
  Time now() const { return now_; }
  World& world() const { return *world_; }

  // Service threads (interrupt contexts) are daemons: the simulation ends
  // when every non-daemon thread has returned from body().
  bool daemon() const { return daemon_; }
  void set_daemon() { daemon_ = true; }

  // --- used by the thread's own body ------------------------------------
  // CPU work of `cycles` in category c on this thread's CPU. It takes at
  // least `cycles` of time, more when interrupts on the CPU preempt it.
  void charge(double cycles, Cat c) { charge(cycles, c, time_); }
  // The same, but the CPU time is another task's that this thread stands
  // in for (e.g. a kworker running right after this thread on its CPU).
  void charge(double cycles, Cat c, CpuTime& account);
  // Interrupt work of `cycles` in category c that runs on this thread's CPU
  // from `start` (this thread being the CPU's interrupt context).
  void charge_irq(Time start, double cycles, Cat c);
  // Time passing without this thread using a CPU (a latency it waits out).
  void delay(double cycles) { now_ += cycles; }
  // Make state published by other threads up to now() visible (see above).
  void observe();
  // Block until the earliest pending wake-up; the clock moves to its time.
  // If a wake-up at or before now() is pending, return at once (it came
  // while the thread was deciding to sleep). Callers re-check their
  // condition after waking, as kernel wait loops do. Returns whether the
  // thread actually slept.
  bool wait();
  // Forget every pending wake-up. A thread whose wakers only wake it while
  // it sleeps calls this after waking: the other wake-ups issued during that
  // sleep found it already woken (and it re-derives, from stamped state,
  // any that would find it asleep again).
  void clear_wakeups() { wakeups_ = {}; }

  // --- used by other threads --------------------------------------------
  // Wake this thread at time t (no effect before t; t >= caller's now()).
  void wake_at(Time t);
  bool waiting() const { return waiting_; }
  // Optimisations that skip a synchronisation whose outcome is already
  // certain are allowed (off in exact mode, the reference).
  bool may_skip_sync() const;

  // Per-thread CPU time (what `time` would report for it).
  const CpuTime& cpu_time() const { return time_; }
  // CPU time this thread charged on another task's behalf (charge() with
  // another account: e.g. the kworker running send work after a syscall).
  const CpuTime& stood_in_time() const { return stood_in_; }
  Time finished_at() const { return finished_at_; }
  bool finished() const { return finished_; }

  // The ordering rule's view of this thread: when it may next change state.
  Time effective_time() const;

  // Runs body() as a SimGrid actor (called by World).
  void start();
  // Called by World once the run is over at `end` (the last non-daemon
  // thread's finish): takes back the CPU time of work that started at or
  // after it. A daemon running ahead of the engine may have done such work
  // in fast mode, and in exact mode it accounts its next piece before the
  // engine stops it; neither belongs to the run.
  void drop_work_from(Time end);

protected:
  virtual void body() = 0;

private:
  void sync_engine();  // sleep_until(now_) or yield: one simcall
  bool drop_due_wakeups();  // pops the wake-ups at or before now_; whether there were any
  // Whether every other thread is past t in the order (time, id) or asleep
  // with nothing pending before it: nothing can change before t any more
  // (observe() waits for this at now(); wait() uses it to skip the engine).
  bool others_not_before(Time t) const;

  World* world_;
  std::string name_;
  Cpu* cpu_;
  int id_;
  Time now_ = 0;
  bool daemon_ = false;
  bool waiting_ = false;
  // While waiting: the time the thread is blocked until (its earliest
  // wake-up when it blocked). A waker only needs to interrupt the block
  // with an earlier wake-up; later ones are found when it wakes.
  Time armed_ = 0;
  bool finished_ = false;
  Time finished_at_ = 0;
  CpuTime time_;
  CpuTime stood_in_;
  std::priority_queue<Time, std::vector<Time>, std::greater<Time>> wakeups_;
  // This thread's recent work, which may have started after the run's end,
  // in start order (remember() forgets what is surely before it).
  struct Work {
    Time start;
    double cycles;
    Cat c;
    CpuTime* account;  // nullptr: interrupt work (charge_irq)
  };
  std::deque<Work> recent_;
  std::size_t recent_limit_ = 64;
  void remember(const Work& w);
  simgrid::s4u::SemaphorePtr sem_;
};

}  // namespace vsim
