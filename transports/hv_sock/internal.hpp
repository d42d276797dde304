// The hv_sock model's pieces, shared by the files named after what they
// model: the Linux guest (hyperv_transport.cpp: the socket's writer and
// reader threads, and vmbus_isr with hvs_channel_cb on vCPU 0), the Windows
// host (windows_host.cpp) and the run set-up and figures (hv_sock.cpp).
// Not part of the transport's interface (hv_sock.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <queue>
#include <vector>

#include <fmt/format.h>

#include "models/vmbus_ring.hpp"
#include "sim/count.hpp"
#include "sim/rng.hpp"
#include "sim/round_trips.hpp"
#include "sim/run_length.hpp"
#include "sim/world.hpp"
#include "transports/hv_sock/costs.hpp"
#include "transports/hv_sock/stages.hpp"
#include "transports/round_trip_app.hpp"
#include "transports/simulate.hpp"

namespace vsim::hv_sock::detail {

using models::VmbusRing;

// Event counts per channel (sim/count.hpp), each named as the metric it is
// reported as (counter_metrics()).
struct Counters {
  Count syscalls;
  Count space_checks;
  Count pending_send_sz_writes;
  Count allocations;
  Count copies;
  Count signals_to_host;
  Count interrupts_to_guest;
  Count ring_full_stalls;
  Count reader_sleeps;
  Count host_dpc_runs;
  Count packets;
};

// The counter table: each count as the metric it is reported as (summed
// over the channels, per MB delivered), in documentation order.
inline const std::vector<CounterMetric<Counters>>& counter_metrics()
{
  static const std::vector<CounterMetric<Counters>> table = {
      {&Counters::syscalls, shared_count("syscalls")}, // send()/recv() calls on the Linux side
      {&Counters::space_checks, per_MB("space_checks", "hvs_channel_writable_bytes evaluations per MB")},
      {&Counters::pending_send_sz_writes,
       per_MB("pending_send_sz_writes", "pending_send_sz set/clear by the Linux writer per MB")},
      {&Counters::allocations, shared_count("allocations")}, // 4 KiB send buffers (kmalloc)
      {&Counters::copies, shared_count("copies")},           // guest kernel copies
      {&Counters::signals_to_host,                           // vmbus_setevent from the guest
       per_MB("signals_to_host", "guest signals to the host (HvSignalEvent) per MB")},
      {&Counters::interrupts_to_guest, shared_count("interrupts_to_guest")},
      {&Counters::ring_full_stalls, per_MB("ring_full_stalls", "times the writer found no room and slept, per MB")},
      {&Counters::reader_sleeps, shared_count("reader_sleeps")}, // the reader found the ring empty and slept
      {&Counters::host_dpc_runs, per_MB("host_dpc_runs", "host DPC runs draining the guest-to-host ring per MB")},
      {&Counters::packets, shared_count("packets")},
  };
  return table;
}

// The point's knobs; the round-trip ones (transports/round_trip_app.hpp:
// pattern, transactions, request and response bytes, requests in flight,
// think time) as every transport reads them.
struct Knobs : RoundTripKnobs {
  bool send_loop;
  bool per_check; // pending_send_sz protocol before June 2019
  bool host_fill; // the Windows writer writes what fits (else only whole packets)
  std::uint64_t message_size;
  std::uint64_t total_bytes;
  std::uint32_t host_packet;
  double start_interval; // cycles between the starts of successive connections
};

class GuestIrq;

// One hv_sock connection: a VMBus channel with its two rings.
struct Channel {
  Channel(int i, std::uint32_t out_size, std::uint32_t in_size) : index(i), outbound(out_size), inbound(in_size) {}
  int index;
  bool g2h = true;            // the guest writes (direction; bidirectional: the first half of the connections)
  VmbusRing outbound;         // guest -> host
  VmbusRing inbound;          // host -> guest
  SimThread* guest = nullptr; // the Linux socket's thread (writer, reader, or both in turn)
  SimThread* host = nullptr;  // the Windows side
  Counters n;
  std::uint64_t delivered = 0;
  Time done_at = 0;
  // The bytes this connection moves: workload.total_bytes, fewer once the
  // run-length monitor shortened the run (sim/run_length.hpp, Shorten);
  // and the bytes its writer has begun to send (every send() call begun,
  // in full: the transfer is never shortened below them).
  std::uint64_t target = 0;
  std::uint64_t committed = 0;
};

// What every thread of one simulation shares.
struct Shared {
  Costs k;
  Knobs knobs;
  GuestIrq* irq = nullptr;
  std::uint64_t seed;
  std::uint32_t iteration;
  RunLength* run_length = nullptr;   // sim.run_length: auto (told of every byte the readers get)
  RoundTrips* round_trips = nullptr; // round-trip patterns: told of every response completed
  // direction bidirectional: the channels run together, as iperf3 clients
  // do for a fixed time (stream_done).
  std::deque<Channel>* channels = nullptr;
  bool end_together = false;
  // Each Stage's id in round_trips' path (set_stages: the order of `direction`).
  std::array<int, static_cast<std::size_t>(Stage::Count)> stage_ids{};

  // Connection conn's current round trip reaches stage st at t (the
  // engine's time: a thread with work charged and not settled stamps the
  // start of that work, the step the stage begins in).
  void stamp(int conn, Stage st, Time t) const
  {
    if (round_trips)
      round_trips->stamp(conn, stage_ids[static_cast<std::size_t>(st)], t);
  }
};

// A stream channel's reader got its last byte at `t`: its end, and with
// end_together every channel's (end_streams_together).
inline void stream_done(Shared& s, Channel& ch, Time t)
{
  ch.done_at = t;
  if (s.end_together && s.channels != nullptr)
    end_streams_together(*s.channels, s.knobs.message_size);
}

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
  // data: the host signals data it wrote (a round trip's stage), not room.
  void raise(Time t, Channel& ch, bool data)
  {
    ch.n.interrupts_to_guest.add();
    requests_.push(Request{t, seq_++, &ch, data});
    wake_at(t);
  }

protected:
  Task<> body() override;

private:
  struct Request {
    Time t;
    std::uint64_t seq;
    Channel* ch;
    bool data;
    bool operator>(const Request& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  // hvs_channel_cb(): wake a reader if data is readable (sk_data_ready), a
  // writer if the outbound ring has room (sk_write_space). data: the
  // interrupt announced data (a round trip's reader wake-up begins).
  void channel_callback(Channel& ch, bool data);

  Shared& s_;
  Latency lat_;
  std::uint64_t seq_ = 0;
  std::priority_queue<Request, std::vector<Request>, std::greater<Request>> requests_;
};

// A thread working on one channel: the Linux socket's thread or the host's.
// `stream` names its random stream (latencies it draws).
class ChannelThread : public SimThread {
protected:
  ChannelThread(World& w, Cpu& cpu, Shared& s, Channel& ch, const char* role, const char* stream)
      : SimThread(w, fmt::format("{}{}", role, ch.index), cpu), s_(s), ch_(ch),
        lat_(s.seed, s.iteration, fmt::format("conn{}.{}", ch.index, stream), s.k.latency_jitter)
  {
  }

  // A stage of this connection's round trip begins (Shared::stamp).
  void stamp(Stage st) const { s_.stamp(ch_.index, st, world().now()); }

  // Guest side: vmbus_setevent() as the HvSignalEvent hypercall (hypervisor
  // time on this vCPU); the host's DPC or writer runs later. data: the
  // signal announces data written (a round trip's stages), not room.
  Task<> signal_host(bool data)
  {
    if (data)
      stamp(Stage::GuestSignal);
    co_await run(s_.k.guest_signal_host, Cat::Hypervisor); // with what was charged before
    mark("vmbus_setevent");
    ch_.n.signals_to_host.add();
    if (data)
      stamp(Stage::SignalToHost);
    ch_.host->wake_at(now() + lat_(s_.k.host_signal_latency));
  }

  // Host side: signal the guest; it arrives as an interrupt on vCPU 0.
  Task<> signal_guest(bool data)
  {
    if (data)
      stamp(Stage::HostSignal);
    co_await run(s_.k.host_signal_guest, Cat::Sys);
    mark("host_signal_guest");
    if (data)
      stamp(Stage::SignalToGuest);
    s_.irq->raise(now() + lat_(s_.k.host_interrupt_latency), ch_, data);
  }

  Shared& s_;
  Channel& ch_;
  Latency lat_;
};

// The threads of each side (hyperv_transport.cpp, windows_host.cpp).
SimThread& spawn_linux_writer(World& w, Cpu& cpu, Shared& s, Channel& ch);
SimThread& spawn_linux_reader(World& w, Cpu& cpu, Shared& s, Channel& ch);
SimThread& spawn_host_reader(World& w, Cpu& cpu, Shared& s, Channel& ch);
SimThread& spawn_host_writer(World& w, Cpu& cpu, Shared& s, Channel& ch);
// Round trips: one application thread per side sending and receiving in
// turn, the initiator's or the responder's part (transports/round_trip_app).
SimThread& spawn_linux_app(World& w, Cpu& cpu, Shared& s, Channel& ch, bool initiator);
SimThread& spawn_host_app(World& w, Cpu& cpu, Shared& s, Channel& ch, bool initiator);

} // namespace vsim::hv_sock::detail
