// One simulation: the SimGrid engine, the CPUs (as SimGrid hosts) and the
// threads. SimGrid allows one engine per process, so a World is created at
// most once per process (the run driver forks a process per iteration).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cpu.hpp"
#include "sim/thread.hpp"

namespace simgrid::s4u {
class Engine;
class NetZone;
}

namespace vsim {

struct SimStats {
  std::uint64_t sleeps = 0;     // sleep_until / yield simcalls
  std::uint64_t waits = 0;      // semaphore acquires (blocking waits)
  std::uint64_t releases = 0;   // semaphore releases (wake-ups of a blocked thread)
  std::uint64_t observes = 0;   // observe() calls
  std::uint64_t simcalls() const { return sleeps + waits + releases; }
};

class World {
public:
  // exact: every thread synchronises with the engine around every operation
  // (slow, the reference); otherwise threads on exclusive CPUs run ahead.
  explicit World(bool exact);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Cpu& add_cpu(Side side, const std::string& name);
  // n CPUs named prefix0, prefix1, ...
  std::vector<Cpu*> add_cpus(Side side, const std::string& prefix, int n);
  // Takes ownership; the thread's actor starts when run() is called.
  template <typename T, typename... Args>
  T& spawn(Args&&... args)
  {
    auto t = std::make_unique<T>(*this, std::forward<Args>(args)...);
    T& ref = *t;
    threads_.push_back(std::move(t));
    return ref;
  }

  // Runs the simulation; rethrows (std::logic_error) the first error a
  // thread reported.
  void run();
  // When the run ended: its last non-daemon thread's finish. What daemon
  // threads did from then on is not part of it (their CPU time is taken
  // back; stamped counts and statistics are cut there).
  Time end() const { return end_; }
  void fail(const std::string& what)
  {
    if (error_.empty())
      error_ = what;
  }

  bool exact() const { return exact_; }
  int register_thread(SimThread* t);  // returns its id
  const std::vector<SimThread*>& ordered_threads() const { return registered_; }
  const std::vector<std::unique_ptr<Cpu>>& cpus() const { return cpus_; }
  SimStats& stats() { return stats_; }
  const SimStats& stats() const { return stats_; }
  double engine_clock() const;

private:
  bool exact_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  simgrid::s4u::NetZone* zone_ = nullptr;
  bool sealed_ = false;
  std::vector<std::unique_ptr<Cpu>> cpus_;
  std::vector<std::unique_ptr<SimThread>> threads_;
  std::vector<SimThread*> registered_;
  SimStats stats_;
  Time end_ = 0;
  std::string error_;
};

}  // namespace vsim
