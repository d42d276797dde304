// A transport as the rest of the program sees it, declared once: its name,
// its parameters, how to simulate one iteration, its platform plan for the
// analytic bound, the roles of the threads it runs, and the speed the run
// estimate assumes. The app layer asks these instead of listing transports
// or matching thread names itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/params.hpp"
#include "sim/trace.hpp"
#include "transports/costs.hpp"
#include "transports/simulate.hpp"

namespace vsim {

// What a thread (by its name's prefix) is on the data path.
struct ThreadRole {
  std::string prefix; // e.g. "guest_writer" matches guest_writer0, guest_writer1, ...
  int rank;           // place on the data path: writers first, readers last
  bool writer;        // an application thread calling send()
  bool app;           // an application thread (send() or recv()); not a kernel or host service
  // When this thread limits throughput: why, in the kernel's words (empty:
  // the generic "the <stage> is the bottleneck").
  std::string bottleneck;
};

// A derived quantity that decides how a point behaves (reported as
// effective.<name> with each point): what the transport actually uses once
// the kernel's clamps and the knobs' interplay are applied.
struct Effective {
  std::string name; // e.g. ring_bytes_host_to_guest
  double value;
  std::string unit;
  std::string key;  // the parameter it mainly comes from
  std::string note; // non-empty: that parameter's value was clamped or ignored, in words
  // Other parameters whose choice makes the note worth a warning before the
  // run (the note is warned of when the user gave `key` or one of these).
  std::vector<std::string> note_keys = {};
};

struct Transport {
  std::string name;
  void (*declare_params)(ParamRegistry&);
  // trace: the timeline recorder to attach (sim/trace.hpp), or nullptr.
  std::map<std::string, double> (*simulate)(const Params&, std::uint32_t iteration, Trace* trace);
  PlatformPlan (*plan)(const Params&);
  std::vector<CostDecl> (*costs)(); // its own costs (the shared ones: shared_costs())
  // Its own metrics, where it counts them: its figures and its counter
  // table (the shared ones: shared_metrics(); all in order: metric_docs()).
  std::vector<MetricDecl> (*metrics)();
  std::vector<ThreadRole> threads;
  // For the run estimate before a sweep starts (app/experiment/estimate.cpp): simulated
  // messages and bytes per wall second on one core, as bench_hvsock and
  // bench_virtio measure them (rounded down: the estimate should not
  // promise too much).
  double messages_per_second;
  double bytes_per_second;
  // The point's effective values, and the parameters whose whole effect
  // they capture (points that differ only in those, with equal effective
  // values, are the same run).
  std::vector<Effective> (*effective)(const Params&);
  std::vector<std::string> absorbed;
  // What one connection of the point holds in memory, part by part (named
  // after the kernel structure each models, memory_*; also in `effective`):
  // memory_bytes_per_connection is their sum.
  std::vector<Effective> (*memory)(const Params&);
  // Round-trip workloads: the critical path of one round trip of the
  // point's messages, stage by stage in the order the initiator sees them
  // (nullptr: the transport does not model round trips yet).
  std::vector<RoundTripStage> (*round_trip_path)(const Params&);
  // The ties among its costs (transports/costs.hpp CostTie; nullptr: none).
  const std::vector<CostTie>& (*ties)() = nullptr;
  // Why the point cannot be simulated by this transport (a combination of
  // valid values it does not model), as {key, reason}; {"", ""} when it can.
  // nullptr: every combination runs.
  std::pair<std::string, std::string> (*refusal)(const Params&) = nullptr;
  // Keys whose default differs for this transport, key -> value as written
  // (firecracker_vsock: virtio_vsock.preset linux-5.10, the newest guest its
  // 2023 device takes).
  std::map<std::string, std::string> defaults = {};
};

// Every transport with a model, in a fixed order.
const std::vector<Transport>& transports();
const Transport* find_transport(const std::string& name);
std::vector<std::string> transport_names();
// Every cost declaration: the shared ones, then each transport's.
std::vector<CostDecl> all_cost_decls();
// The ties binding profiles of `transport` (empty: none).
std::vector<CostTie> cost_ties(const std::string& transport);
// The tie `cost` belongs to in profiles of `transport` (nullptr: none).
const CostTie* tie_of(const std::string& cost, const std::string& transport);
// How `values` (cost name -> value; a profile's) keep each tie of
// `transport`, in declaration order.
std::vector<TieState> tie_states(const std::string& transport, const std::map<std::string, double>& values);
// The role of a thread of any transport, by its name; nullptr if none.
const ThreadRole* thread_role(const std::string& thread);

} // namespace vsim
