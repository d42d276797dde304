// The experiment's platform as a graph (Boost.Graph): the VM and the host,
// their CPUs, the threads pinned on them, the channels (VMBus channels,
// virtqueues) and the connections running writer -> channel -> reader. It is
// checked for consistency and gives the analytic bound on throughput: the
// most loaded CPU along the data path, from the cycles per MB each thread
// spends (transports/<t>/bound.cpp) against the CPU's clock.
#pragma once

#include <string>
#include <vector>

#include "transports/simulate.hpp"

namespace vsim::app {

// What the user asked for, against which the plan is checked: application
// threads (one per connection and side) a CPU may hold.
struct TopologyLimits {
  int guest_app_threads_per_cpu = 1;
  int host_app_threads_per_cpu = 1;
};
// The limits the experiment's own numbers imply: connections spread round
// robin over the CPUs of each side (with PlatformPlan::one_app_thread, all
// of a side's on one CPU).
TopologyLimits limits_for(const PlatformPlan& plan);

// Every inconsistency of the plan, one line each ("" entries never): a thread
// on a CPU that does not exist, a thread on two CPUs, a connection's channel
// without a writer or reader thread, a CPU holding more application threads
// than the limits allow. Empty when the plan is sound. Builds the graph.
std::vector<std::string> validate_topology(const PlatformPlan& plan, const TopologyLimits& limits);

struct CpuLoad {
  std::string cpu;
  double cycles_per_MB = 0; // per MB of the payload of all connections
  double bound_MBps = 0;    // clock / cycles_per_MB (infinite when unloaded)
  std::string top_thread;   // the thread spending the most there
  std::string top_stage, top_what;
};
struct Bound {
  double MBps = 0;                // all connections together
  double per_connection_MBps = 0; // MBps / connections
  CpuLoad binding;                // the most loaded CPU
  std::vector<CpuLoad> cpus;      // every loaded CPU, in graph order (guest CPUs, then host CPUs)
};
// The bound: every CPU's cycles per MB (a per-connection thread carries
// 1/connections of the payload, a shared one all of it). Throws
// std::invalid_argument when validate_topology finds a problem or no CPU is
// loaded.
Bound throughput_bound(const PlatformPlan& plan, const TopologyLimits& limits);

} // namespace vsim::app
