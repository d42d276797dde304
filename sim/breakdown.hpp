// The explanation metrics every run reports, computed from the engine's
// accounting once the simulation is over: busy fraction per CPU and per
// thread by category, and the time-weighted occupancy of the rings/queues.
//
// Names (declared as families in transports/simulate.cpp):
//   cpu.<cpu>.<cat>_percent        cat: user, sys, irq, hypervisor, busy
//   thread.<thread>.<cat>_percent  the same per thread; the interrupt
//                                  context of a CPU is credited with the
//                                  interrupt work registered there
//                                  (Cpu::add_irq)
//   queue.<queue>.mean, mean_percent, max_percent, empty_time_percent,
//   queue.<queue>.time_<lo>_<hi>_percent
// Percentages are of the elapsed time (busy) or of the queue's capacity
// (levels). Queues given several times under one name (one ring per
// connection) are averaged.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/occupancy.hpp"
#include "sim/world.hpp"

namespace vsim {

struct NamedQueue {
  std::string name; // e.g. "vmbus_ring", "virtio_tx"
  const Occupancy* occupancy;
};

// elapsed: cycles of the run (the denominator of every busy percentage);
// interrupt_contexts: the threads that stand for their CPU's interrupt work.
void append_breakdown(std::map<std::string, double>& m, const World& world, Time elapsed,
                      const std::vector<const SimThread*>& interrupt_contexts, const std::vector<NamedQueue>& queues);

// The categories in metric names, in Cat order, then "busy".
inline constexpr const char* kBusyCategoryNames[] = {"user", "sys", "irq", "hypervisor", "busy"};

} // namespace vsim
