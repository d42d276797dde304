// The Windows host's side of hv_sock: not public, modelled as the simplest
// mechanism consistent with the VMBus protocol (docs/model.md): a DPC-driven
// reader and a packet writer.
#include "transports/hv_sock/internal.hpp"

#include <algorithm>
#include <stdexcept>

#include "transports/hv_sock/ring_math.hpp"

namespace vsim::hv_sock::detail {

namespace {

// The Windows side of one channel. Receiving, guest-to-host: the channel's
// DPC (scheduled by the guest's signal) drains the ring with
// interrupt_mask set, hands the data to the reading application, publishes
// read_index when drained (signalling the guest if that crossed
// pending_send_sz), unmasks and checks once more. Sending, host-to-guest:
// the application's send() cut into packets of up to
// hv_sock.host_packet_size. With hv_sock.host_fill (default) a packet that
// does not fit is cut to what does, as Linux's hvs_stream_enqueue() cuts
// its own (min(left, hvs_channel_writable_bytes, packet)); otherwise the
// writer waits for room for the whole packet. With no room at all it
// advertises pending_send_sz (the room it needs: host_room_needed) and
// sleeps until the guest's signal.
class HostSocket : public ChannelThread {
protected:
  HostSocket(World& w, Cpu& cpu, Shared& s, Channel& ch, const char* role, const char* stream)
      : ChannelThread(w, cpu, s, ch, role, stream)
  {
  }

  // The application took `bytes` the DPC delivered (at the engine's time).
  virtual void received(std::uint64_t bytes) = 0;

  // One DPC run, after the guest's signal woke the thread.
  Task<> dpc()
  {
    ch_.n.host_dpc_runs.add();
    stamp(Stage::HostRecv);
    mark("host_dpc");
    co_await run(s_.k.host_dpc, Cat::Sys);
    ch_.outbound.set_interrupt_mask(true);
    co_await drain();
  }

  // One send() of `msg` bytes.
  Task<> send(std::uint64_t msg)
  {
    const Costs& k = s_.k;
    stamp(Stage::HostSend);
    co_await run(k.host_send_call, Cat::Sys);
    // A packet must fit an empty ring with the headroom Linux also keeps.
    const std::uint32_t max_pkt = std::min(s_.knobs.host_packet, writable_bytes(ch_.inbound.data_size()));
    for (std::uint64_t rem = msg; rem > 0;) {
      const auto want = static_cast<std::uint32_t>(std::min<std::uint64_t>(rem, max_pkt));
      const std::uint32_t n = co_await room_for(want);
      co_await run(k.host_tx_packet + k.host_tx_copy(n), Cat::Sys);
      auto r = ch_.inbound.write(now(), n);
      if (!r.written)
        throw std::logic_error("hv_sock: host packet refused by a ring it had checked for room");
      ch_.n.packets.add();
      mark("hv_ringbuffer_write", "bytes", n);
      if (r.signal)
        co_await signal_guest(true);
      rem -= n;
    }
  }

private:
  Task<> drain()
  {
    const Costs& k = s_.k;
    VmbusRing& ring = ch_.outbound;
    for (;;) {
      std::uint32_t n = ring.unconsumed_packets();
      if (n > 0) {
        // The packets visible now, read one after the other: the private
        // read index moves, the writer sees nothing until iter_close, so the
        // batch is one step.
        charge(k.host_recv_call, Cat::Sys);
        std::uint32_t sizes = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
          const std::uint32_t p = ring.peek_payload(i);
          charge(k.host_rx_packet + k.host_rx_copy(p), Cat::Sys);
          sizes += p;
        }
        co_await settle();
        for (std::uint32_t i = 0; i < n; ++i)
          ring.consume(now());
        received(sizes);
        continue;
      }
      const bool signal = ring.iter_close(now());
      mark("hv_pkt_iter_close");
      if (signal)
        co_await signal_guest(false); // room for the guest's writer
      ring.set_interrupt_mask(false);
      if (ring.unconsumed_packets() == 0)
        co_return;
      ring.set_interrupt_mask(true);
    }
  }

  // Payload of the packet that can go into the ring now (0: none).
  std::uint32_t fits(std::uint32_t want) const
  {
    if (s_.knobs.host_fill)
      return std::min(want, writable_bytes(ch_.inbound.bytes_to_write()));
    return ch_.inbound.bytes_to_write() > models::hvs_packet_len(want) ? want : 0;
  }

  Task<std::uint32_t> room_for(std::uint32_t want)
  {
    std::uint32_t n = fits(want);
    if (n > 0)
      co_return n;
    const std::uint32_t need = host_room_needed(want, s_.knobs.host_fill);
    ch_.inbound.set_pending_send_sz(need);
    mark("ring full: pending_send_sz set, sleep", "pending_send_sz", need);
    do {
      co_await wait();
      co_await run(s_.k.host_dpc, Cat::Sys); // woken by the guest's signal through a DPC
    } while ((n = fits(want)) == 0);
    ch_.inbound.set_pending_send_sz(0);
    co_return n;
  }
};

// Windows side, guest-to-host: the reading application behind the DPC.
class HostReader : public HostSocket {
public:
  HostReader(World& w, Cpu& cpu, Shared& s, Channel& ch) : HostSocket(w, cpu, s, ch, "host_reader", "host_signal") {}

protected:
  Task<> body() override
  {
    while (ch_.delivered < ch_.target) {
      co_await wait();
      co_await dpc();
    }
    stream_done(s_, ch_, now());
  }

  void received(std::uint64_t bytes) override
  {
    ch_.delivered += bytes;
    if (s_.run_length)
      s_.run_length->delivered(ch_.index, bytes, world().now());
  }
};

// Windows side, host-to-guest: the application's send() in a loop.
class HostWriter : public HostSocket {
public:
  HostWriter(World& w, Cpu& cpu, Shared& s, Channel& ch) : HostSocket(w, cpu, s, ch, "host_writer", "host_interrupt") {}

protected:
  Task<> body() override
  {
    const Knobs& kn = s_.knobs;
    co_await sleep(ch_.index * kn.start_interval); // connections opened one after another
    // Up to the connection's target, which the run-length monitor may
    // lower (never below what is committed).
    for (std::uint64_t sent = 0; sent < ch_.target;) {
      const std::uint64_t msg = std::min(ch_.target - sent, kn.message_size);
      ch_.committed = sent + msg;
      co_await send(msg);
      sent += msg;
    }
  }

  void received(std::uint64_t) override { throw std::logic_error("hv_sock: the host writer received data"); }
};

// The Windows application of a round-trip workload: one thread sending and
// receiving in turn. Its recv() takes what the channel's DPC delivered; the
// DPC runs on the guest's signal, or at once when the guest's packets wait
// in the ring (they arrived while the thread was sending: the signal that
// announced them was taken by a wait for room).
class HostApp : public HostSocket, public RoundTripSocket {
public:
  HostApp(World& w, Cpu& cpu, Shared& s, Channel& ch, bool initiator)
      : HostSocket(w, cpu, s, ch, "host_app", "host_interrupt"), initiator_(initiator)
  {
  }

  Task<> send_message(std::uint64_t bytes) override { co_await send(bytes); }

  Task<> receive_message(std::uint64_t bytes) override
  {
    while (have_ < bytes) {
      if (ch_.outbound.unconsumed_packets() == 0)
        co_await wait();
      co_await dpc();
    }
    have_ -= bytes;
  }

protected:
  Task<> body() override
  {
    co_await sleep(ch_.index * s_.knobs.start_interval); // connections opened one after another
    if (initiator_)
      co_await initiate(*this, *this, s_.knobs, *s_.round_trips, s_.seed, s_.iteration, ch_.index);
    else
      co_await respond(*this, s_.knobs);
    co_await settle();
    ch_.done_at = now();
  }

  void received(std::uint64_t bytes) override
  {
    have_ += bytes;
    ch_.delivered += bytes;
  }

private:
  bool initiator_;
  std::uint64_t have_ = 0; // delivered, not yet taken by a receive_message
};

} // namespace

SimThread& spawn_host_reader(World& w, Cpu& cpu, Shared& s, Channel& ch)
{
  return w.spawn<HostReader>(cpu, s, ch);
}
SimThread& spawn_host_writer(World& w, Cpu& cpu, Shared& s, Channel& ch)
{
  return w.spawn<HostWriter>(cpu, s, ch);
}
SimThread& spawn_host_app(World& w, Cpu& cpu, Shared& s, Channel& ch, bool initiator)
{
  return w.spawn<HostApp>(cpu, s, ch, initiator);
}

} // namespace vsim::hv_sock::detail
