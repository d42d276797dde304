// The one entry point the run driver calls: simulate one iteration of one
// point, whichever transport the point names; and the metrics a simulation
// reports (name, unit, meaning): those every transport shares declared here,
// each transport's where it counts them (Transport::metrics), all in one
// documentation order (metric_docs()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/count.hpp"
#include "sim/params.hpp"
#include "sim/round_trips.hpp"
#include "sim/run_length.hpp"
#include "sim/world.hpp"
#include "transports/costs.hpp"

namespace vsim {

std::map<std::string, double> simulate_iteration(const Params& params, std::uint32_t iteration);
// The same run with the timeline recorder `trace` attached (sim/trace.hpp):
// the same figures, and the timeline in `trace`.
std::map<std::string, double> simulate_traced(const Params& params, std::uint32_t iteration, Trace& trace);
// The metrics the point's parameters decide alone, known before it runs (both
// functions above report them too): memory_bytes_per_connection, the sum of
// the transport's memory parts (Transport::memory).
std::map<std::string, double> params_metrics(const Params& params);

// Cycles between the starts of successive connections (workload.start_interval
// at the platform's clock, whole cycles): connection i's threads start i x this.
double connection_start_interval(const Params& params);

// workload.pattern: the payload of one round trip (request and response;
// 0 under `stream`), and the payload one connection carries in an iteration
// (workload.total_bytes, or workload.transactions round trips).
std::uint64_t round_trip_bytes(const Params& params);
std::uint64_t workload_bytes(const Params& params);

// The figures of a round-trip workload, for every transport alike: the
// round-trip times (rtt_*_us), transactions_per_second and the CPU per
// transaction (from the guest_cpu_percent, host_cpu_percent and
// elapsed_seconds already in m).
void append_round_trip_metrics(std::map<std::string, double>& m, const RoundTrips& rt);
// The histogram of the round trips simulated, as rtt_histogram.<bucket> =
// count entries (sim/histogram.hpp's bucket numbers; the run driver moves
// them out of the metrics into the result's rtt_histogram). Only in a run's
// final figures: the run-length monitor's snapshots keep one set of names.
inline constexpr const char* kRttHistogramPrefix = "rtt_histogram.";
void append_round_trip_histogram(std::map<std::string, double>& m, const RoundTrips& rt);
// The stage times of the attributed round trips (sim/round_trips.hpp), as
// rtt_stage.<band>.round_trips = how many, and rtt_stage.<band>.<NN>.<stage>
// = each stage's mean (us; NN its place on the path, two digits), for the
// bands kRttStageBands: round trips near the median (from the 0.45- to the
// 0.55-quantile's bucket) and at or beyond the 99th percentile's bucket.
// Nothing when no round trip was attributed. Like the histogram, only in a
// run's final figures; the run driver moves them into the result's
// round_trip_stages.
inline constexpr const char* kRttStagePrefix = "rtt_stage.";
struct RttStageBand {
  const char* name;
  double q_lo, q_hi;
};
inline constexpr RttStageBand kRttStageBands[] = {{"median", 0.45, 0.55}, {"p99", 0.99, 1.0}};
void append_round_trip_stages(std::map<std::string, double>& m, const RoundTrips& rt);

// What spreads a round trip on every CPU of the world (issue 53; costs in
// transports/costs.cpp): on each guest vCPU the guest kernel's tick and the
// host's on the core under it, on each host CPU the host's tick, each grid
// at a phase drawn from the stream (seed, iteration, "tick:<cpu>:<side>");
// and the host cores' idle states (the vCPUs' cores' too), for
// Cpu::wake_from_idle. With `rt`, each tick that lands in thread work is
// noted as a cause of the round trips then in flight (kCause*).
void set_up_cpu_noise(World& w, const SharedCosts& k, std::uint64_t seed, std::uint32_t iteration, RoundTrips* rt);
// The causes set_up_cpu_noise registers with RoundTrips, in this order
// (a transport adds its own after them).
enum NoiseCause : int { kCauseGuestTick = 0, kCauseHostTick = 1, kCauseIdleExit = 2 };
// A wake-up on `cpu` (a host CPU, or a halted vCPU's core past its
// halt-polling window) finds it idle: the exit latency of the state the
// governor chose (Cpu::wake_from_idle), noted as a cause with `rt`.
double idle_exit(Cpu& cpu, Time now, RoundTrips* rt);

// One stage of a round trip's critical path (vsocksim explain): what runs
// or is waited for, the kernel functions modelled, and its cycles with
// every jitter off.
struct RoundTripStage {
  std::string stage;
  std::string kernel;
  double cycles = 0;
};

// The experiment's platform as a transport sets it up, with the CPU cost of
// each thread per MB of payload: the input of the analytic bound (app/topology).
struct ThreadLoad {
  std::string thread;       // as in thread.<name> metrics (kworker_<cpu>: a kworker's work)
  std::string cpu;          // the CPU it is pinned on: vcpuN or hcpuN
  std::string stage;        // the data-path stage it is, in plain words
  int connection = -1;      // the connection it serves; -1: every connection (shared)
  double cycles_per_MB = 0; // per MB of its connection's payload (shared: of all payload); a lower bound
  std::string what;         // what the cycles pay for
};
struct ChannelLink {
  std::string name; // the channel or device queue carrying the connection's data
  int connection = 0;
  std::string writer, reader; // threads at its two ends
};
struct PlatformPlan {
  int vcpus = 0, host_cpus = 0, connections = 0;
  // Each side's streams are served by one application thread (iperf3
  // before 3.16: the model puts every stream's thread on the first's CPU),
  // so a CPU holds all of that side's application threads.
  bool one_app_thread = false;
  double clock_ghz = 0;
  std::vector<ThreadLoad> loads;
  std::vector<ChannelLink> links;
};
// The plan of the point's transport (transports/<t>/bound.cpp).
PlatformPlan platform_plan(const Params& params);

// For the plans: a message of m bytes cut into packets of at most `max`
// bytes, their count and the sum of f(payload) over them.
struct Split {
  double packets = 0, sum = 0;
};
template <typename F> Split split(std::uint64_t m, std::uint64_t max, F f)
{
  Split s;
  s.packets = static_cast<double>(m / max);
  s.sum = s.packets * f(static_cast<double>(max));
  if (m % max) {
    s.packets += 1;
    s.sum += f(static_cast<double>(m % max));
  }
  return s;
}

struct MetricDoc {
  std::string name;
  std::string unit;
  // How it is continued when a run is extrapolated from its steady state
  // (sim.run_length: auto; sim/run_length.hpp).
  Scaling scaling;
  std::string doc;
};

// Where a declaration goes in the documentation order (metric_docs()): the
// places in this order; within one, the shared declarations, then each
// transport's in transports() order, a name declared twice listed once.
enum class MetricPlace : std::uint8_t {
  Run,    // what every transport reports of the run: time, throughput, CPU (sim/summary.hpp)
  Figure, // a transport's own figures of the run
  Count,  // events counted, per MB of payload
  Size,   // sizes the run was set up with
  Engine, // what the run cost the simulator (sim/summary.hpp)
  Family, // the families (sim/breakdown.hpp)
};
struct MetricDecl {
  MetricPlace place;
  MetricDoc doc;
};
// The declarations every transport shares (transports/simulate.cpp); the
// counts every transport makes are not among them: shared_count() gives
// them to the transports' counter tables, which place them.
const std::vector<MetricDecl>& shared_metrics();

// direction: whether connection i of n has the guest write (or initiate):
// every one with guest_to_host, none with host_to_guest, the first half
// (rounded up) with bidirectional, as Firecracker's CI alternates them.
bool connection_g2h(const std::string& direction, int i, int n);
// The figures of each direction of a bidirectional run
// (throughput_guest_to_host_Gbps, throughput_host_to_guest_Gbps): their
// declarations (metric_decls adds them), and the figures from the bytes each
// direction's streams (each with `g2h` and `delivered`) delivered in `secs`
// (reported with direction bidirectional only).
std::vector<MetricDecl> direction_metric_decls();
void append_direction_metrics(std::map<std::string, double>& m, double secs, std::uint64_t g2h_bytes,
                              std::uint64_t h2g_bytes);
template <class Streams>
void append_direction_metrics(std::map<std::string, double>& m, double secs, const Streams& streams)
{
  std::uint64_t g2h = 0, h2g = 0;
  for (const auto& st : streams)
    (st.g2h ? g2h : h2g) += st.delivered;
  append_direction_metrics(m, secs, g2h, h2g);
}
// direction bidirectional: the streams run together, as timed iperf3
// clients do; once one is done, every stream's transfer ends after its
// writer's current call and one more message (as the run-length monitor
// shortens a run, so that no reader is left waiting for bytes that never
// come).
template <class Streams> void end_streams_together(Streams& streams, std::uint64_t message_size)
{
  for (auto& st : streams)
    st.target = std::min(st.target, st.committed + message_size);
}

// A count reported per MB of payload as <count>_per_MB.
MetricDoc per_MB(const std::string& count, std::string doc);
// The declaration of <count>_per_MB, a count every transport makes (each
// transport's counter table names it where it lists it).
const MetricDoc& shared_count(const std::string& count);

// A row of a transport's counter table: the counter (a Count of its
// Counters, named as the metric without _per_MB) and the metric it is
// reported as. count nullptr: a figure made of other counts (the
// transport's figures compute it).
template <typename Counters> struct CounterMetric {
  Count Counters::*count;
  MetricDoc doc;
};
// A transport's declarations: its figures, the per-direction figures of a
// bidirectional run (every transport's), then its counter table's rows as
// MetricPlace::Count.
template <typename Counters>
std::vector<MetricDecl> metric_decls(std::vector<MetricDecl> figures,
                                     const std::vector<CounterMetric<Counters>>& counts)
{
  for (MetricDecl& d : direction_metric_decls())
    figures.push_back(std::move(d));
  for (const CounterMetric<Counters>& c : counts)
    figures.push_back({MetricPlace::Count, c.doc});
  return figures;
}

// Every metric any transport reports, in documentation order (the shared
// declarations and every transport's, by MetricPlace). A name with
// "<x>" (one or more of [A-Za-z0-9_]) or "{a|b}" (one of the words) declares
// a family: `cpu.<cpu>.{user|sys|irq|hypervisor|busy}_percent` covers
// cpu.vcpu0.sys_percent.
const std::vector<MetricDoc>& metric_docs();
// The declaration of a metric: the exact name, else the first family it matches.
const MetricDoc* find_metric(const std::string& name);
// Every metric name, comma-separated (for error messages).
std::string known_metrics_list();
bool is_metric_family(const MetricDoc& d);
bool metric_matches(const std::string& pattern, const std::string& name);
// How a reported figure scales, and its unit (AsIs for names no
// declaration covers): what the run-length monitor needs of it.
FigureKind metric_kind(const std::string& name);

// Whether the point runs under sim.run_length: auto, and its monitor's
// settings for a transfer of total_bytes over `connections`.
bool run_length_auto(const Params& params);
RunLengthConfig run_length_config(const Params& params, std::uint64_t total_bytes, int connections);
// The point's run-length monitor (nullptr under sim.run_length: full):
// `figures` gives the transport's figures as if the run ended at a time
// with so many bytes delivered; with `shorten` (byte streams: it ends every
// connection's transfer after its writer's next message, RunLength) the
// monitor shortens a steady run, else it ends `world`'s run; `committed`:
// the bytes the writers have begun to send (the bytes in flight must be
// steady too).
std::unique_ptr<RunLength> run_length_monitor(const Params& params, std::uint64_t total_bytes, int connections,
                                              std::function<std::map<std::string, double>(Time, std::uint64_t)> figures,
                                              World& world, Shorten shorten = nullptr, Committed committed = nullptr);
// The monitor of a byte-stream point: `streams` (one per connection, each
// with `target`, the bytes it moves, and `committed`, the bytes its writer
// has begun to send) are shortened by one span of their steady state
// (steady_span: no writer ends before its current send() and one more
// message of `message_size`), and their committed bytes are the ones the
// bytes in flight come from. The streams must outlive the monitor.
template <class Streams>
std::unique_ptr<RunLength>
stream_run_length_monitor(const Params& params, std::uint64_t total_bytes,
                          std::function<std::map<std::string, double>(Time, std::uint64_t)> figures, World& world,
                          Streams& streams, std::uint64_t message_size)
{
  auto shorten = [&streams, message_size](const std::vector<double>& shares) {
    std::vector<std::uint64_t> room;
    for (const auto& st : streams)
      room.push_back(st.target - std::min(st.target, st.committed + message_size));
    const std::vector<std::uint64_t> left_out = steady_span(room, shares);
    std::size_t i = 0;
    for (auto& st : streams)
      st.target -= left_out.at(i++);
    return left_out;
  };
  auto committed = [&streams] {
    std::uint64_t begun = 0;
    for (const auto& st : streams)
      begun += st.committed;
    return begun;
  };
  return run_length_monitor(params, total_bytes, static_cast<int>(streams.size()), std::move(figures), world, shorten,
                            committed);
}

// The figures of a finished run: `full` as simulated (at time end_time),
// or, when the monitor (nullptr under sim.run_length: full) stopped or
// shortened the run, the whole transfer's from it (RunLength::finish);
// either way with the run_length.* entries that say how they were obtained.
std::map<std::string, double> finish_figures(const RunLength* monitor, std::map<std::string, double> full,
                                             Time end_time, std::uint64_t total_bytes);

} // namespace vsim
