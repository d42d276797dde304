// One simulation: the SimGrid engine, the CPUs (as SimGrid hosts), the
// threads and the event queue that orders them. SimGrid allows one engine
// per process, so a World is created at most once per process (the run
// driver forks a process per iteration).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/count.hpp"
#include "sim/cpu.hpp"
#include "sim/thread.hpp"
#include "sim/trace.hpp"

namespace simgrid::s4u {
class Engine;
class NetZone;
} // namespace simgrid::s4u
namespace simgrid::kernel::timer {
class Timer;
}

namespace vsim {

struct SimStats {
  std::uint64_t events = 0;   // events taken from the queue (wake-ups, ends of work or of a latency)
  std::uint64_t direct = 0;   // steps that were the next event and went on at once (no queue, no timer)
  std::uint64_t advances = 0; // SimGrid kernel-timer firings
  std::uint64_t stale = 0;    // events found obsolete (a wake-up superseded by an earlier one)
};

// The simulated system itself stops making progress, as the kernel it models
// would: no thread can ever run again, and the transport has named the
// kernel rule that leaves it so. A result of the simulation (the point is
// reported as hanging, with the reason), not a defect of the model: a stall
// the transport cannot explain stays a std::logic_error (internal error).
struct ModelledHang : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class World {
public:
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Cpu& add_cpu(Side side, const std::string& name);
  // n CPUs named prefix0, prefix1, ...
  std::vector<Cpu*> add_cpus(Side side, const std::string& prefix, int n);
  // Takes ownership; the thread starts at time 0 when run() is called.
  template <typename T, typename... Args> T& spawn(Args&&... args)
  {
    auto t = std::make_unique<T>(*this, std::forward<Args>(args)...);
    T& ref = *t;
    threads_.push_back(std::move(t));
    return ref;
  }

  // Runs the simulation until every non-daemon thread has finished (or no
  // event is left); rethrows (std::logic_error) the first error a thread
  // reported.
  void run();
  // When the run ended: its last non-daemon thread's finish. What daemon
  // threads would do from then on is not part of it.
  Time end() const { return end_; }
  void fail(const std::string& what);
  // Ends the run at the engine's time, with threads still running (the run
  // length was reached: sim/run_length.hpp); end() is now().
  void end_now();

  // The time of the event being processed (SimGrid's clock during a run, up
  // to its rounding).
  Time now() const { return now_; }
  // Resume thread t's current suspension `gen` at time at (>= now()).
  void schedule(Time at, SimThread& t, std::uint64_t gen);
  // A running thread's step that ends at t: if it would be the next event
  // in the order, the engine's time moves there at once and the thread goes
  // on (true); otherwise it must be scheduled.
  bool take_directly(Time t, const SimThread& th);
  void thread_finished(SimThread& t);

  int register_thread(SimThread* t); // returns its id
  const std::vector<SimThread*>& ordered_threads() const { return registered_; }
  const std::vector<std::unique_ptr<Cpu>>& cpus() const { return cpus_; }
  // The timeline recorder (sim/trace.hpp), or nullptr (the normal case:
  // every hook is then one null check). Set before the CPUs are added and
  // the threads made (each thread keeps it).
  void set_trace(Trace* t)
  {
    if (!cpus_.empty() || !registered_.empty())
      throw std::logic_error("invariant violated: World::set_trace after CPUs or threads were made");
    trace_ = t;
    if (t)
      t->bind_clock(&now_);
  }
  Trace* trace() const { return trace_; }
  // The thread whose event is being processed (the waker of the wake-ups it
  // makes).
  SimThread* current() const { return current_; }
  SimStats& stats() { return stats_; }
  const SimStats& stats() const { return stats_; }

  // Waking a sleeping thread on another CPU of the same side sends it an
  // inter-processor interrupt (try_to_wake_up -> ttwu_queue ->
  // smp_send_reschedule): `cycles` of category `cat` charged to the waker.
  // In a guest the ICR write is a VM exit (Hypervisor time). Zero (the
  // default) leaves wake-ups free.
  struct WakeIpi {
    double cycles = 0;
    Cat cat = Cat::Sys;
  };
  void set_wake_ipi(Side s, WakeIpi ipi) { wake_ipi_[static_cast<std::size_t>(s)] = ipi; }
  // Called by a thread that is woken while it sleeps (once per sleep).
  void wake_ipi_to(const SimThread& wakee);
  // The IPIs charged so far, per side.
  const Count& wake_ipis(Side s) const { return wake_ipis_[static_cast<std::size_t>(s)]; }

private:
  // One event: thread `thread`'s suspension `gen` is due at t. Events are
  // processed in (t, thread, seq) order: one total order, the same on every
  // run and with every --jobs.
  struct Event {
    Time t;
    int thread;
    std::uint64_t seq;
    std::uint64_t gen;
    bool operator>(const Event& o) const
    {
      if (t != o.t)
        return t > o.t;
      if (thread != o.thread)
        return thread > o.thread;
      return seq > o.seq;
    }
  };
  void arm();  // the SimGrid timer at the earliest event
  void fire(); // the timer's callback: every event due at the engine's time
  void stop();

  std::unique_ptr<simgrid::s4u::Engine> engine_;
  simgrid::s4u::NetZone* zone_ = nullptr;
  bool sealed_ = false;
  std::vector<std::unique_ptr<Cpu>> cpus_;
  std::vector<std::unique_ptr<SimThread>> threads_;
  std::vector<SimThread*> registered_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::uint64_t seq_ = 0;
  simgrid::kernel::timer::Timer* timer_ = nullptr; // its header is SimGrid's internal one: world.cpp only
  Time armed_at_ = 0;
  Time now_ = 0;
  int running_ = 0; // non-daemon threads not finished
  bool stopped_ = false;
  bool direct_ = true; // VSIM_ENGINE_TIMERS_ONLY=1: every step through the queue and a timer
  SimStats stats_;
  Trace* trace_ = nullptr;
  SimThread* current_ = nullptr;
  std::array<WakeIpi, 2> wake_ipi_{};
  std::array<Count, 2> wake_ipis_{};
  Time end_ = 0;
  std::string error_;
};

inline void SimThread::mark(std::string_view kernel_fn) const
{
  if (Trace* t = trace())
    t->instant(*cpu_, world_->now(), kernel_fn, name_);
}

inline void SimThread::mark(std::string_view kernel_fn, std::string_view arg, double value) const
{
  if (Trace* t = trace())
    t->instant(*cpu_, world_->now(), kernel_fn, name_, arg, value);
}

} // namespace vsim
