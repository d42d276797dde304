#include "transports/hv_sock/hv_sock.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/vmbus_ring.hpp"
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

namespace {

using models::VmbusRing;

// Event counts per channel (sim/count.hpp).
struct Counters {
  Count syscalls;             // send()/recv() calls on the Linux side
  Count space_checks;         // hvs_channel_writable_bytes evaluations
  Count pending_writes;       // pending_send_sz set/clear (Linux side)
  Count allocations;          // 4 KiB send buffers (kmalloc)
  Count copies;               // guest kernel copies
  Count signals_to_host;      // vmbus_setevent from the guest
  Count interrupts_to_guest;
  Count writer_blocks;        // writer found the ring full and slept
  Count reader_blocks;        // reader found the ring empty and slept
  Count host_dpc_runs;
  Count packets;
};

struct Knobs {
  bool send_loop;
  bool per_check; // pending_send_sz protocol before June 2019
  std::uint64_t message_size;
  std::uint64_t total_bytes;
  std::uint32_t host_packet;
  double start_interval;  // cycles between the starts of successive connections
};

class GuestIrq;

// One hv_sock connection: a VMBus channel with its two rings.
struct Channel {
  Channel(int i, std::uint32_t out_size, std::uint32_t in_size) : index(i), outbound(out_size), inbound(in_size) {}
  int index;
  VmbusRing outbound;         // guest -> host
  VmbusRing inbound;          // host -> guest
  SimThread* guest = nullptr; // the Linux socket's thread (writer or reader)
  SimThread* host = nullptr;  // the Windows side
  Counters n;
  std::uint64_t delivered = 0;
  Time done_at = 0;

};

// What every thread of one simulation shares.
struct Shared {
  Costs k;
  Knobs knobs;
  GuestIrq* irq = nullptr;
  std::uint64_t seed;
  std::uint32_t iteration;
};

// Interrupt context of guest vCPU 0: the synthetic interrupt (an exit and
// re-entry charged as hypervisor time), vmbus_isr, then the vmbus_on_event
// tasklet running hvs_channel_cb for the channel. Interrupts preempt any
// thread on vCPU 0.
class GuestIrq : public SimThread {
public:
  GuestIrq(World& w, Cpu& cpu, Shared& s)
      : SimThread(w, "vmbus_isr", cpu), s_(s), lat_(s.seed, s.iteration, "guest_wakeup", s.k.latency_jitter)
  {
    set_daemon();
    become_interrupt_context();
  }

  // The host signals channel ch; the interrupt arrives on vCPU 0 at t.
  void raise(Time t, Channel& ch)
  {
    ch.n.interrupts_to_guest.add();
    requests_.push(Request{t, seq_++, &ch});
    wake_at(t);
  }

protected:
  Task<> body() override
  {
    const Costs& k = s_.k;
    for (;;) {
      co_await wait();
      while (!requests_.empty() && requests_.top().t <= now()) {
        Channel& ch = *requests_.top().ch;
        requests_.pop();
        charge(k.guest_irq_exit, Cat::Hypervisor);
        co_await run(k.guest_isr + k.guest_tasklet, Cat::Irq);
        channel_callback(ch);
      }
    }
  }

private:
  struct Request {
    Time t;
    std::uint64_t seq;
    Channel* ch;
    bool operator>(const Request& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  // hvs_channel_cb(): wake a reader if data is readable (sk_data_ready), a
  // writer if the outbound ring has room (sk_write_space).
  void channel_callback(Channel& ch)
  {
    bool readable = ch.inbound.bytes_to_read() >= models::hvs_packet_len(0);
    bool writable = ch.outbound.bytes_to_write() > 0;
    if ((readable || writable) && ch.guest->waiting())
      ch.guest->wake_at(now() + lat_(s_.k.guest_wakeup_latency));
  }

  Shared& s_;
  Latency lat_;
  std::uint64_t seq_ = 0;
  std::priority_queue<Request, std::vector<Request>, std::greater<Request>> requests_;
};

// A thread working on one channel: the Linux socket's thread or the host's.
// `stream` names its random stream (latencies it draws).
class ChannelThread : public SimThread {
protected:
  ChannelThread(World& w, Cpu& cpu, Shared& s, Channel& ch, VmbusRing& ring, const char* role, const char* stream)
      : SimThread(w, fmt::format("{}{}", role, ch.index), cpu), s_(s), ch_(ch), ring_(ring),
        lat_(s.seed, s.iteration, fmt::format("conn{}.{}", ch.index, stream), s.k.latency_jitter)
  {
  }

  // Guest side: vmbus_setevent() as the HvSignalEvent hypercall (hypervisor
  // time on this vCPU); the host's DPC or writer runs later.
  Task<> signal_host()
  {
    co_await run(s_.k.guest_signal_host, Cat::Hypervisor);  // with what was charged before
    ch_.n.signals_to_host.add();
    ch_.host->wake_at(now() + lat_(s_.k.host_signal_latency));
  }

  // Host side: signal the guest; it arrives as an interrupt on vCPU 0.
  Task<> signal_guest()
  {
    co_await run(s_.k.host_signal_guest, Cat::Sys);
    s_.irq->raise(now() + lat_(s_.k.host_interrupt_latency), ch_);
  }

  Shared& s_;
  Channel& ch_;
  VmbusRing& ring_;
  Latency lat_;
};

// The Linux application thread calling send() in a loop.
class LinuxWriter : public ChannelThread {
public:
  LinuxWriter(World& w, Cpu& cpu, Shared& s, Channel& ch)
      : ChannelThread(w, cpu, s, ch, ch.outbound, "linux_writer", "guest_signal")
  {
  }

protected:
  Task<> body() override
  {
    const Knobs& kn = s_.knobs;
    co_await sleep(ch_.index * kn.start_interval);  // connections opened one after another
    if (!kn.per_check) // since June 2019: set once when the channel opens
      ring_.set_pending_send_sz(kPendingSendSize);
    std::uint64_t left = kn.total_bytes;
    while (left > 0) {
      std::uint64_t msg = std::min(left, kn.message_size);
      co_await send(msg);
      left -= msg;
    }
  }

private:
  // vsock_stream_sendmsg(): wait for space, enqueue, until the message is out.
  Task<> send(std::uint64_t msg)
  {
    const Costs& k = s_.k;
    charge(k.guest_user_per_call, Cat::User);
    charge(k.guest_send_syscall, Cat::Sys);
    ch_.n.syscalls.add();
    std::uint64_t rem = msg;
    while (rem > 0) {
      // (No co_await in a loop condition: GCC 12 miscompiles it.)
      for (;;) {
        const std::uint32_t space = co_await has_space();
        if (space > 0)
          break;
        co_await block_for_space();
      }
      rem -= co_await enqueue(rem);
    }
  }

  // hvs_channel_writable_bytes().
  Task<std::uint32_t> writable_now()
  {
    co_await run(s_.k.guest_space_check, Cat::Sys);  // with what was charged before
    ch_.n.space_checks.add();
    co_return writable_bytes(ring_.bytes_to_write());
  }

  Task<> write_pending(std::uint32_t v)
  {
    co_await run(s_.k.guest_pending_send_sz_write, Cat::Sys);
    ch_.n.pending_writes.add();
    ring_.set_pending_send_sz(v);
  }

  // hvs_stream_has_space(). Before June 2019 it cleared pending_send_sz when
  // there was room, else set it and checked again (to close the race with
  // the host's read), clearing it if room had appeared.
  Task<std::uint32_t> has_space()
  {
    std::uint32_t w = co_await writable_now();
    if (!s_.knobs.per_check)
      co_return w;
    if (w > 0) {
      co_await write_pending(0);
      co_return w;
    }
    co_await write_pending(kPendingSendSize);
    w = co_await writable_now();
    if (w > 0)
      co_await write_pending(0);
    co_return w;
  }

  // Sleep in vsock_stream_sendmsg until hvs_channel_cb reports write space.
  Task<> block_for_space()
  {
    ch_.n.writer_blocks.add();
    if (co_await wait())
      charge(s_.k.guest_context_switch, Cat::Sys);
  }

  // hvs_stream_enqueue(): allocate the 4 KiB send buffer, then copy from user
  // and write one packet (two copies) -- or, with the 2019 send loop, keep
  // doing so while the ring has room and the message has bytes left.
  Task<std::uint64_t> enqueue(std::uint64_t rem)
  {
    const Costs& k = s_.k;
    charge(k.guest_enqueue_call, Cat::Sys);
    ch_.n.allocations.add();
    std::uint64_t written = 0;
    for (;;) {
      std::uint64_t want = std::min<std::uint64_t>(rem - written, kSendBufPayload);
      std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(want, co_await writable_now()));
      if (n == 0)
        break;
      // memcpy_from_msg into the send buffer, then hv_ringbuffer_write.
      co_await run(k.guest_copy(n) + k.guest_ring_write + k.guest_copy(models::hvs_packet_len(n)), Cat::Sys);
      ch_.n.copies.add(2);
      auto r = ring_.write(now(), n);
      if (!r.written)
        throw std::logic_error("hv_sock: writer's packet refused by a ring it had checked for room");
      ch_.n.packets.add();
      if (r.signal)
        co_await signal_host();
      written += n;
      if (!s_.knobs.send_loop || written == rem)
        break;
    }
    co_return written;
  }
};

// The Linux application thread calling recv() in a loop, with a buffer of
// workload.message_size bytes.
class LinuxReader : public ChannelThread {
public:
  LinuxReader(World& w, Cpu& cpu, Shared& s, Channel& ch)
      : ChannelThread(w, cpu, s, ch, ch.inbound, "linux_reader", "guest_signal")
  {
  }

protected:
  Task<> body() override
  {
    const Costs& k = s_.k;
    const std::uint64_t total = s_.knobs.total_bytes;
    co_await sleep(ch_.index * s_.knobs.start_interval);  // connections opened one after another
    while (ch_.delivered < total) {
      charge(k.guest_user_per_call, Cat::User);
      charge(k.guest_recv_syscall, Cat::Sys);
      ch_.n.syscalls.add();
      co_await wait_for_data();
      ch_.delivered += co_await dequeue();
    }
    co_await settle();
    ch_.done_at = now();
  }

private:
  // vsock_stream_recvmsg(): sleep until hvs_stream_has_data().
  Task<> wait_for_data()
  {
    for (;;) {
      if (packet_left_ > 0)  // the rest of a packet already taken
        co_return;
      co_await settle();
      if (ring_.unconsumed_packets() > 0)
        co_return;
      ch_.n.reader_blocks.add();
      if (co_await wait())
        charge(s_.k.guest_context_switch, Cat::Sys);
    }
  }

  // hvs_stream_dequeue(): copy at most the rest of one packet to the user
  // (recv() returns after one dequeue: SO_RCVLOWAT is 1).
  Task<std::uint64_t> dequeue()
  {
    const Costs& k = s_.k;
    // The packet being read is the reader's own: only the ring's state
    // beyond it (iter_next) needs the time settled.
    if (packet_left_ == 0) { // hv_pkt_iter_first + hvs_update_recv_data
      charge(k.guest_dequeue_packet, Cat::Sys);
      packet_left_ = ring_.peek_payload();
    }
    std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(packet_left_, s_.knobs.message_size));
    charge(k.guest_copy(n), Cat::Sys); // memcpy_to_msg straight from the ring
    ch_.n.copies.add();
    packet_left_ -= n;
    if (packet_left_ == 0) { // hv_pkt_iter_next, closing when drained
      co_await settle();
      auto r = ring_.iter_next(now());
      if (r.closed) {
        charge(k.guest_iter_close, Cat::Sys);
        if (r.signal)
          co_await signal_host();
      } else {
        charge(k.guest_dequeue_packet, Cat::Sys);
        packet_left_ = ring_.peek_payload();
      }
    }
    co_return n;
  }

  std::uint32_t packet_left_ = 0; // payload of the current packet not yet read
};

// Windows side, guest-to-host: the channel's DPC (scheduled by the guest's
// signal) drains the ring with interrupt_mask set, hands the data to the
// reading application, publishes read_index when drained (signalling the
// guest if that crossed pending_send_sz), unmasks and checks once more.
class HostReader : public ChannelThread {
public:
  HostReader(World& w, Cpu& cpu, Shared& s, Channel& ch)
      : ChannelThread(w, cpu, s, ch, ch.outbound, "host_reader", "host_signal")
  {
  }

protected:
  Task<> body() override
  {
    const Costs& k = s_.k;
    const std::uint64_t total = s_.knobs.total_bytes;
    while (ch_.delivered < total) {
      co_await wait();
      ch_.n.host_dpc_runs.add();
      co_await run(k.host_dpc, Cat::Sys);
      ring_.set_interrupt_mask(true);
      co_await drain();
    }
    ch_.done_at = now();
  }

private:
  Task<> drain()
  {
    const Costs& k = s_.k;
    for (;;) {
      std::uint32_t n = ring_.unconsumed_packets();
      if (n > 0) {
        // The packets visible now, read one after the other: the private
        // read index moves, the writer sees nothing until iter_close, so the
        // batch is one step.
        charge(k.host_recv_call, Cat::Sys);
        std::uint32_t sizes = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
          const std::uint32_t p = ring_.peek_payload(i);
          charge(k.host_rx_packet + k.host_rx_copy(p), Cat::Sys);
          sizes += p;
        }
        co_await settle();
        for (std::uint32_t i = 0; i < n; ++i)
          ring_.consume(now());
        ch_.delivered += sizes;
        continue;
      }
      if (ring_.iter_close(now()))
        co_await signal_guest();
      ring_.set_interrupt_mask(false);
      if (ring_.unconsumed_packets() == 0)
        co_return;
      ring_.set_interrupt_mask(true);
    }
  }
};

// Windows side, host-to-guest: the application's send() cut into packets of
// up to hv_sock.host_packet_size; when a packet does not fit, the writer
// advertises pending_send_sz and sleeps until the guest's signal.
class HostWriter : public ChannelThread {
public:
  HostWriter(World& w, Cpu& cpu, Shared& s, Channel& ch)
      : ChannelThread(w, cpu, s, ch, ch.inbound, "host_writer", "host_interrupt")
  {
  }

protected:
  Task<> body() override
  {
    const Costs& k = s_.k;
    const Knobs& kn = s_.knobs;
    co_await sleep(ch_.index * kn.start_interval);  // connections opened one after another
    // A packet must fit an empty ring with the headroom Linux also keeps.
    const std::uint32_t max_pkt = std::min(kn.host_packet, writable_bytes(ring_.data_size()));
    std::uint64_t left = kn.total_bytes;
    while (left > 0) {
      std::uint64_t msg = std::min(left, kn.message_size);
      co_await run(k.host_send_call, Cat::Sys);
      for (std::uint64_t rem = msg; rem > 0;) {
        std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(rem, max_pkt));
        co_await wait_for_room(models::hvs_packet_len(n));
        co_await run(k.host_tx_packet + k.host_tx_copy(n), Cat::Sys);
        auto r = ring_.write(now(), n);
        if (!r.written)
          throw std::logic_error("hv_sock: host packet refused by a ring it had checked for room");
        ch_.n.packets.add();
        if (r.signal)
          co_await signal_guest();
        rem -= n;
      }
      left -= msg;
    }
  }

private:
  Task<> wait_for_room(std::uint32_t need)
  {
    if (ring_.bytes_to_write() > need)
      co_return;
    ring_.set_pending_send_sz(need);
    while (ring_.bytes_to_write() <= need) {
      co_await wait();
      co_await run(s_.k.host_dpc, Cat::Sys); // woken by the guest's signal through a DPC
    }
    ring_.set_pending_send_sz(0);
  }
};


// Per-iteration variability: the host's costs scaled by one factor drawn
// from the iteration's own stream.
void apply_iteration_jitter(Costs& k, std::uint64_t seed, std::uint32_t iteration)
{
  Rng rng(seed, iteration, "host_speed");
  double f = rng.factor(k.iteration_jitter);
  for (double* c :
       {&k.host_dpc, &k.host_rx_packet, &k.host_recv_call, &k.host_send_call, &k.host_tx_packet, &k.host_signal_guest})
    *c = std::round(*c * f);
  k.host_rx_copy_bytes_per_cycle /= f;
  k.host_tx_copy_bytes_per_cycle /= f;
}

} // namespace

Metrics simulate(const Params& p, std::uint32_t iteration)
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
  const bool g2h = p.text("direction") == "guest_to_host";
  const int conns = static_cast<int>(p.integer("workload.connections"));
  const int vcpus = static_cast<int>(p.integer("guest.vcpus"));
  const int hcpus = static_cast<int>(p.integer("host.cpus"));

  World world;
  const std::vector<Cpu*> guest = world.add_cpus(Side::Guest, "vcpu", vcpus);
  const std::vector<Cpu*> host = world.add_cpus(Side::Host, "hcpu", hcpus);

  s.irq = &world.spawn<GuestIrq>(*guest[0], s);
  const std::uint32_t out_size = ring_size(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send);
  const std::uint32_t in_size = ring_size(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive);
  std::deque<Channel> channels;
  std::vector<SimThread*> writers, readers;
  for (int i = 0; i < conns; ++i) {
    Channel& ch = channels.emplace_back(i, out_size, in_size);
    Cpu& gcpu = *guest[static_cast<std::size_t>(guest_cpu_of(i, vcpus))];
    Cpu& hcpu = *host[static_cast<std::size_t>(host_cpu_of(i, hcpus))];
    if (g2h) {
      ch.guest = &world.spawn<LinuxWriter>(gcpu, s, ch);
      ch.host = &world.spawn<HostReader>(hcpu, s, ch);
      writers.push_back(ch.guest);
      readers.push_back(ch.host);
    } else {
      ch.host = &world.spawn<HostWriter>(hcpu, s, ch);
      ch.guest = &world.spawn<LinuxReader>(gcpu, s, ch);
      writers.push_back(ch.host);
      readers.push_back(ch.guest);
    }
  }

  world.run();

  // Conservation: every byte sent was received, exactly once.
  Time elapsed = 0;
  std::uint64_t delivered = 0;
  for (const Channel& ch : channels) {
    const VmbusRing& ring = g2h ? ch.outbound : ch.inbound;
    ring.check_invariants();
    if (ch.delivered != s.knobs.total_bytes || ring.payload_written() != s.knobs.total_bytes ||
        ring.payload_consumed() != s.knobs.total_bytes)
      throw std::logic_error(fmt::format(
          "invariant violated: bytes in == bytes out (connection {}: sent {}, ring wrote {}, read {}, delivered {}; "
          "the simulation stalled: guest thread {} at t={} {}, host thread {} at t={} {}, free ring bytes {}, "
          "pending_send_sz {}, interrupt_mask {})",
          ch.index, s.knobs.total_bytes, ring.payload_written(), ring.payload_consumed(), ch.delivered,
          ch.guest->name(), ch.guest->now(), ch.guest->waiting() ? "asleep" : "running", ch.host->name(),
          ch.host->now(), ch.host->waiting() ? "asleep" : "running", ring.bytes_to_write(),
          ring.pending_send_sz(), ring.interrupt_mask()));
    elapsed = std::max(elapsed, ch.done_at);
    delivered += ch.delivered;
  }
  // No CPU can have been busy longer than the whole run lasted.
  check_cpu_busy(world, elapsed);
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
}

} // namespace vsim::hv_sock
