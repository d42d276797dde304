#include "transports/hv_sock/hv_sock.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/breakdown.hpp"
#include "sim/count.hpp"
#include "sim/rng.hpp"
#include "sim/summary.hpp"
#include "sim/world.hpp"
#include "transports/hv_sock/bound.hpp"
#include "transports/hv_sock/costs.hpp"
#include "transports/hv_sock/internal.hpp"
#include "transports/hv_sock/params.hpp"
#include "transports/hv_sock/ring_math.hpp"
#include "transports/simulate.hpp"

namespace vsim::hv_sock {

using namespace detail;

namespace {

// Per-iteration variability: the Windows host's CPU costs (host_*, in
// cycles) scaled by one factor drawn from the iteration's own stream, its
// copy bandwidths divided by it; the Linux guest's (guest_*, its own and the
// shared ones) by another, from a stream of its own.
void apply_iteration_jitter(Costs& k, std::uint64_t seed, std::uint32_t iteration)
{
  vsim::apply_iteration_jitter(k, Costs::fields(), "host_", "guest_", seed, iteration);
}

// The point's knobs.
Knobs read_knobs(const Params& p)
{
  Knobs kn{};
  kn.send_loop = p.boolean("hv_sock.send_loop");
  kn.per_check = p.text("hv_sock.pending_send_size") == "per_check";
  kn.message_size = static_cast<std::uint64_t>(p.integer("workload.message_size"));
  kn.total_bytes = static_cast<std::uint64_t>(p.integer("workload.total_bytes"));
  kn.start_interval = connection_start_interval(p);
  kn.host_packet = static_cast<std::uint32_t>(p.integer("hv_sock.host_packet_size"));
  kn.host_fill = p.boolean("hv_sock.host_fill");
  static_cast<RoundTripKnobs&>(kn) = read_round_trip_knobs(p);
  return kn;
}

// hv_sock's figures besides its counts (those: counter_metrics(), internal.hpp).
const std::vector<MetricDecl> kFigures = {
    {MetricPlace::Size,
     {"ring_bytes_guest_to_host", "B", Scaling::AsIs, "size of the guest-to-host ring (header page included)"}},
    {MetricPlace::Size,
     {"ring_bytes_host_to_guest", "B", Scaling::AsIs, "size of the host-to-guest ring (header page included)"}},
};

// One run: the CPUs, and per connection a VMBus channel with its two threads.
struct Platform {
  World world;
  bool g2h = false;
  std::uint32_t out_size = 0, in_size = 0; // the rings (hv_sock.sndbuf, hv_sock.rcvbuf)
  std::deque<Channel> channels;
  std::vector<SimThread*> writers, readers;
};

void set_up(Platform& r, const Params& p, Shared& s, Trace* trace)
{
  r.g2h = p.text("direction") == "guest_to_host";
  const int conns = static_cast<int>(p.integer("workload.connections"));
  const int vcpus = static_cast<int>(p.integer("guest.vcpus"));
  const int hcpus = static_cast<int>(p.integer("host.cpus"));

  World& world = r.world;
  world.set_trace(trace);
  const std::vector<Cpu*> guest = world.add_cpus(Side::Guest, "vcpu", vcpus);
  const std::vector<Cpu*> host = world.add_cpus(Side::Host, "hcpu", hcpus);

  s.irq = &world.spawn<GuestIrq>(*guest[0], s);
  r.out_size = ring_size(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send);
  r.in_size = ring_size(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive);
  s.channels = &r.channels;
  s.end_together = p.text("direction") == "bidirectional";
  for (int i = 0; i < conns; ++i) {
    Channel& ch = r.channels.emplace_back(i, r.out_size, r.in_size);
    ch.g2h = connection_g2h(p.text("direction"), i, conns);
    ch.target = s.knobs.total_bytes;
    ch.outbound.trace_as(trace, fmt::format("vmbus_ring{} guest_to_host", i), "bytes");
    ch.inbound.trace_as(trace, fmt::format("vmbus_ring{} host_to_guest", i), "bytes");
    Cpu& gcpu = *guest[static_cast<std::size_t>(guest_cpu_of(i, vcpus))];
    Cpu& hcpu = *host[static_cast<std::size_t>(host_cpu_of(i, hcpus))];
    if (s.knobs.pattern != Pattern::Stream) { // the initiator is the writing side of `direction`
      ch.guest = &spawn_linux_app(world, gcpu, s, ch, r.g2h);
      ch.host = &spawn_host_app(world, hcpu, s, ch, !r.g2h);
      r.writers.push_back(r.g2h ? ch.guest : ch.host);
      r.readers.push_back(r.g2h ? ch.host : ch.guest);
    } else if (ch.g2h) {
      ch.guest = &spawn_linux_writer(world, gcpu, s, ch);
      ch.host = &spawn_host_reader(world, hcpu, s, ch);
      r.writers.push_back(ch.guest);
      r.readers.push_back(ch.host);
    } else {
      ch.host = &spawn_host_writer(world, hcpu, s, ch);
      ch.guest = &spawn_linux_reader(world, gcpu, s, ch);
      r.writers.push_back(ch.host);
      r.readers.push_back(ch.guest);
    }
  }
}

// Every figure, as if the run ended at `elapsed` with `delivered` bytes: at
// its end, or at the run-length monitor's snapshots.
Metrics figures(const Platform& r, const Shared& s, Time elapsed, std::uint64_t delivered)
{
  Metrics m;
  append_run_metrics(m, r.world, elapsed, s.k.clock_ghz, delivered, r.writers, r.readers);
  const double mb = static_cast<double>(delivered) / 1e6;
  for (const CounterMetric<Counters>& c : counter_metrics()) {
    std::uint64_t v = 0;
    for (const Channel& ch : r.channels)
      v += (ch.n.*c.count).value();
    m[c.doc.name] = static_cast<double>(v) / mb;
  }
  if (s.end_together) // direction bidirectional
    append_direction_metrics(m, s.k.seconds(elapsed), r.channels);
  m["ring_bytes_guest_to_host"] = r.out_size;
  m["ring_bytes_host_to_guest"] = r.in_size;
  if (s.round_trips)
    append_round_trip_metrics(m, *s.round_trips);
  append_breakdown(m, r.world, elapsed, {s.irq}, [&] { // explanation: busy fractions, data ring occupancy
    std::vector<NamedQueue> q;
    for (const Channel& ch : r.channels)
      q.push_back({"vmbus_ring", &(ch.g2h ? ch.outbound : ch.inbound).occupancy()});
    return q;
  }());
  return m;
}

// Round trips: every request and response byte went through its ring
// exactly once (a run the monitor ended early, not `whole`: no more than
// was written). A run that ended short with both threads asleep and both
// rings without room is the kernel's own deadlock: both applications
// blocked in send(), neither reading; the Linux reader publishes read_index
// only once it finds the ring drained (hv_pkt_iter_next), so requests in
// flight fill the host-to-guest ring with packets already read.
std::pair<Time, std::uint64_t> check_round_trips(const Platform& r, const Shared& s, bool whole)
{
  const Knobs& kn = s.knobs;
  const std::uint64_t out = kn.transactions * (r.g2h ? kn.request : kn.response);
  const std::uint64_t in = kn.transactions * (r.g2h ? kn.response : kn.request);
  const std::uint64_t host_message = std::min<std::uint64_t>(kn.host_packet, r.g2h ? kn.response : kn.request);
  Time elapsed = whole ? 0 : r.world.end();
  std::uint64_t delivered = 0;
  for (const Channel& ch : r.channels) {
    ch.outbound.check_invariants();
    ch.inbound.check_invariants();
    auto exact = [&](const VmbusRing& ring, std::uint64_t n) {
      return whole ? ring.payload_written() == n && ring.payload_consumed() == n
                   : ring.payload_consumed() <= ring.payload_written() && ring.payload_written() <= n;
    };
    if (whole && ch.delivered != out + in && ch.guest->waiting() && ch.host->waiting() &&
        writable_bytes(ch.outbound.bytes_to_write()) == 0 && writable_bytes(ch.inbound.bytes_to_write()) < host_message)
      throw ModelledHang(fmt::format(
          "connection {}: both applications blocked in send() with no room in either ring (vsock_stream_sendmsg "
          "in hvs_stream_has_space, the Windows writer waiting for room): neither reads while it sends, and the "
          "Linux reader gives ring space back only when it drains the ring (hv_pkt_iter_next -> "
          "hv_pkt_iter_close), which requests in flight can keep from happening",
          ch.index));
    if (!exact(ch.outbound, out) || !exact(ch.inbound, in) || (whole && ch.delivered != out + in))
      throw std::logic_error(fmt::format(
          "invariant violated: round-trip bytes in == bytes out (connection {}: expected {} + {}, guest-to-host "
          "wrote {} read {}, host-to-guest wrote {} read {}, delivered {}; guest thread {}, host thread {})",
          ch.index, out, in, ch.outbound.payload_written(), ch.outbound.payload_consumed(),
          ch.inbound.payload_written(), ch.inbound.payload_consumed(), ch.delivered,
          ch.guest->waiting() ? "asleep" : "running", ch.host->waiting() ? "asleep" : "running"));
    if (whole)
      elapsed = std::max(elapsed, ch.done_at);
    delivered += ch.delivered;
  }
  return {elapsed, delivered};
}

// Conservation: every byte sent was received, exactly once (a run the
// monitor ended early, not `whole`: no more than was written). Returns the
// run's end and the bytes delivered.
std::pair<Time, std::uint64_t> check_conservation(const Platform& r, const Shared& s, bool whole)
{
  Time elapsed = whole ? 0 : r.world.end();
  std::uint64_t delivered = 0;
  for (const Channel& ch : r.channels) {
    const VmbusRing& ring = ch.g2h ? ch.outbound : ch.inbound;
    ring.check_invariants();
    // A run the monitor shortened ends whole, with fewer bytes (ch.target).
    const bool lost =
        ch.target > s.knobs.total_bytes || ch.target < ch.committed ||
        (whole ? (ch.delivered != ch.target || ring.payload_written() != ch.target ||
                  ring.payload_consumed() != ch.target)
               : (ch.delivered != ring.payload_consumed() || ring.payload_consumed() > ring.payload_written() ||
                  ring.payload_written() > ch.target));
    if (lost)
      throw std::logic_error(fmt::format(
          "invariant violated: bytes in == bytes out (connection {}: sent {}, ring wrote {}, read {}, delivered {}; "
          "the simulation stalled: guest thread {} at t={} {}, host thread {} at t={} {}, free ring bytes {}, "
          "pending_send_sz {}, interrupt_mask {})",
          ch.index, ch.target, ring.payload_written(), ring.payload_consumed(), ch.delivered, ch.guest->name(),
          ch.guest->now(), ch.guest->waiting() ? "asleep" : "running", ch.host->name(), ch.host->now(),
          ch.host->waiting() ? "asleep" : "running", ring.bytes_to_write(), ring.pending_send_sz(),
          ring.interrupt_mask()));
    if (whole)
      elapsed = std::max(elapsed, ch.done_at);
    delivered += ch.delivered;
  }
  return {elapsed, delivered};
}

// The round trip's stages: those of explain's critical path, in its order
// (bound.cpp round_trip_path), each Stage's id for the threads' stamps.
void set_up_stages(RoundTrips& rt, Shared& s, const Params& p)
{
  std::vector<std::string> names;
  for (const RoundTripStage& st : round_trip_path(p))
    names.push_back(st.stage);
  rt.set_stages(std::move(names));
  for (std::size_t i = 0; i < kStageNames.size(); ++i)
    s.stage_ids[i] = rt.stage_id(kStageNames[i]);
}

} // namespace

std::vector<MetricDecl> metrics()
{
  return metric_decls(kFigures, counter_metrics());
}

Metrics simulate(const Params& p, std::uint32_t iteration, Trace* trace)
{
  Shared s;
  s.k = Costs::from(p);
  s.seed = static_cast<std::uint64_t>(p.integer("seed"));
  s.iteration = iteration;
  apply_iteration_jitter(s.k, s.seed, iteration);
  s.knobs = read_knobs(p);

  Platform r;
  set_up(r, p, s, trace);
  const int conns = static_cast<int>(r.channels.size());
  const std::uint64_t total = workload_bytes(p) * static_cast<std::uint64_t>(conns);
  const std::unique_ptr<RunLength> monitor = stream_run_length_monitor(
      p, total, [&](Time elapsed, std::uint64_t delivered) { return figures(r, s, elapsed, delivered); }, r.world,
      r.channels, s.knobs.message_size);
  std::optional<RoundTrips> round_trips;
  if (s.knobs.pattern != Pattern::Stream) { // the monitor hears of round trips, not of bytes
    s.round_trips = &round_trips.emplace(s.k.clock_ghz, round_trip_bytes(p), monitor.get());
    set_up_stages(*s.round_trips, s, p);
    for (const Channel& ch : r.channels)
      s.round_trips->trace_as(trace, ch.index, (r.g2h ? ch.guest : ch.host)->name());
  } else
    s.run_length = monitor.get();
  set_up_cpu_noise(r.world, s.k, s.seed, s.iteration, s.round_trips);

  r.world.run();
  const bool whole = !(monitor && monitor->ended_early());
  const auto [elapsed, delivered] = s.round_trips ? check_round_trips(r, s, whole) : check_conservation(r, s, whole);
  // No CPU can have been busy longer than the whole run lasted.
  check_cpu_busy(r.world, elapsed);
  Metrics out = finish_figures(monitor.get(), whole ? figures(r, s, elapsed, delivered) : Metrics{}, elapsed, total);
  if (s.round_trips) {
    append_round_trip_histogram(out, *s.round_trips);
    append_round_trip_stages(out, *s.round_trips);
  }
  return out;
}

} // namespace vsim::hv_sock
