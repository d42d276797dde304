#include "transports/hv_sock/hv_sock.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "transports/hv_sock/internal.hpp"
#include "sim/breakdown.hpp"
#include "sim/count.hpp"
#include "sim/rng.hpp"
#include "sim/summary.hpp"
#include "sim/world.hpp"
#include "transports/hv_sock/costs.hpp"
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

}  // namespace

Metrics simulate(const Params& p, std::uint32_t iteration, Trace* trace)
{
  Shared s;
  s.k = Costs::from(p);
  s.seed = static_cast<std::uint64_t>(p.integer("seed"));
  s.iteration = iteration;
  apply_iteration_jitter(s.k, s.seed, iteration);
  s.knobs.send_loop = p.boolean("hv_sock.send_loop");
  s.knobs.per_check = p.text("hv_sock.pending_send_size") == "per_check";
  s.knobs.message_size = static_cast<std::uint64_t>(p.integer("workload.message_size"));
  s.knobs.total_bytes = static_cast<std::uint64_t>(p.integer("workload.total_bytes"));
  s.knobs.start_interval = connection_start_interval(p);
  s.knobs.host_packet = static_cast<std::uint32_t>(p.integer("hv_sock.host_packet_size"));
  s.knobs.host_fill = p.boolean("hv_sock.host_fill");
  const bool g2h = p.text("direction") == "guest_to_host";
  const int conns = static_cast<int>(p.integer("workload.connections"));
  const int vcpus = static_cast<int>(p.integer("guest.vcpus"));
  const int hcpus = static_cast<int>(p.integer("host.cpus"));

  World world;
  world.set_trace(trace);
  const std::vector<Cpu*> guest = world.add_cpus(Side::Guest, "vcpu", vcpus);
  const std::vector<Cpu*> host = world.add_cpus(Side::Host, "hcpu", hcpus);

  s.irq = &world.spawn<GuestIrq>(*guest[0], s);
  const std::uint32_t out_size = ring_size(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send);
  const std::uint32_t in_size = ring_size(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive);
  std::deque<Channel> channels;
  std::vector<SimThread*> writers, readers;
  for (int i = 0; i < conns; ++i) {
    Channel& ch = channels.emplace_back(i, out_size, in_size);
    ch.outbound.trace_as(trace, fmt::format("vmbus_ring{} guest_to_host", i), "bytes");
    ch.inbound.trace_as(trace, fmt::format("vmbus_ring{} host_to_guest", i), "bytes");
    Cpu& gcpu = *guest[static_cast<std::size_t>(guest_cpu_of(i, vcpus))];
    Cpu& hcpu = *host[static_cast<std::size_t>(host_cpu_of(i, hcpus))];
    if (g2h) {
      ch.guest = &spawn_linux_writer(world, gcpu, s, ch);
      ch.host = &spawn_host_reader(world, hcpu, s, ch);
      writers.push_back(ch.guest);
      readers.push_back(ch.host);
    } else {
      ch.host = &spawn_host_writer(world, hcpu, s, ch);
      ch.guest = &spawn_linux_reader(world, gcpu, s, ch);
      writers.push_back(ch.host);
      readers.push_back(ch.guest);
    }
  }

  // Every figure, as if the run ended at `elapsed` with `delivered` bytes:
  // at its end, or at the run-length monitor's snapshots.
  auto figures = [&](Time elapsed, std::uint64_t delivered) {
    Metrics m;
    append_run_metrics(m, world, elapsed, s.k.clock_ghz, delivered, writers, readers);
    const double mb = static_cast<double>(delivered) / 1e6;
    auto per_mb = [&](const char* name, Count Counters::*count) {
      std::uint64_t v = 0;
      for (const Channel& ch : channels)
        v += (ch.n.*count).value();
      m[std::string(name) + "_per_MB"] = static_cast<double>(v) / mb;
    };
    per_mb("syscalls", &Counters::syscalls);
    per_mb("space_checks", &Counters::space_checks);
    per_mb("pending_send_sz_writes", &Counters::pending_writes);
    per_mb("allocations", &Counters::allocations);
    per_mb("copies", &Counters::copies);
    per_mb("signals_to_host", &Counters::signals_to_host);
    per_mb("interrupts_to_guest", &Counters::interrupts_to_guest);
    per_mb("ring_full_stalls", &Counters::writer_blocks);
    per_mb("reader_sleeps", &Counters::reader_blocks);
    per_mb("host_dpc_runs", &Counters::host_dpc_runs);
    per_mb("packets", &Counters::packets);
    m["ring_bytes_guest_to_host"] = out_size;
    m["ring_bytes_host_to_guest"] = in_size;
    append_breakdown(m, world, elapsed, {s.irq}, [&] {  // explanation: busy fractions, data ring occupancy
      std::vector<NamedQueue> q;
      for (const Channel& ch : channels)
        q.push_back({"vmbus_ring", &(g2h ? ch.outbound : ch.inbound).occupancy()});
      return q;
    }());
    return m;
  };
  const std::uint64_t total = s.knobs.total_bytes * static_cast<std::uint64_t>(conns);
  const std::unique_ptr<RunLength> monitor = run_length_monitor(p, total, conns, figures, world);
  s.run_length = monitor.get();

  world.run();
  const bool whole = !(monitor && monitor->stopped());

  // Conservation: every byte sent was received, exactly once (a run the
  // monitor ended early: no more than was written).
  Time elapsed = whole ? 0 : world.end();
  std::uint64_t delivered = 0;
  for (const Channel& ch : channels) {
    const VmbusRing& ring = g2h ? ch.outbound : ch.inbound;
    ring.check_invariants();
    const bool lost = whole ? (ch.delivered != s.knobs.total_bytes || ring.payload_written() != s.knobs.total_bytes ||
                               ring.payload_consumed() != s.knobs.total_bytes)
                            : (ch.delivered != ring.payload_consumed() ||
                               ring.payload_consumed() > ring.payload_written() ||
                               ring.payload_written() > s.knobs.total_bytes);
    if (lost)
      throw std::logic_error(fmt::format(
          "invariant violated: bytes in == bytes out (connection {}: sent {}, ring wrote {}, read {}, delivered {}; "
          "the simulation stalled: guest thread {} at t={} {}, host thread {} at t={} {}, free ring bytes {}, "
          "pending_send_sz {}, interrupt_mask {})",
          ch.index, s.knobs.total_bytes, ring.payload_written(), ring.payload_consumed(), ch.delivered,
          ch.guest->name(), ch.guest->now(), ch.guest->waiting() ? "asleep" : "running", ch.host->name(),
          ch.host->now(), ch.host->waiting() ? "asleep" : "running", ring.bytes_to_write(),
          ring.pending_send_sz(), ring.interrupt_mask()));
    if (whole)
      elapsed = std::max(elapsed, ch.done_at);
    delivered += ch.delivered;
  }
  // No CPU can have been busy longer than the whole run lasted.
  check_cpu_busy(world, elapsed);
  return finish_figures(monitor.get(), whole ? figures(elapsed, delivered) : Metrics{}, total);
}

} // namespace vsim::hv_sock
