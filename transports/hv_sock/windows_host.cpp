// The Windows host's side of hv_sock: not public, modelled as the simplest
// mechanism consistent with the VMBus protocol (docs/model.md): a DPC-driven
// reader and a packet writer.
#include "transports/hv_sock/internal.hpp"

#include <algorithm>
#include <stdexcept>

#include "transports/hv_sock/ring_math.hpp"

namespace vsim::hv_sock::detail {

namespace {

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
      mark("host_dpc");
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
        if (s_.run_length)
          s_.run_length->delivered(ch_.index, sizes, world().now());
        continue;
      }
      const bool signal = ring_.iter_close(now());
      mark("hv_pkt_iter_close");
      if (signal)
        co_await signal_guest();
      ring_.set_interrupt_mask(false);
      if (ring_.unconsumed_packets() == 0)
        co_return;
      ring_.set_interrupt_mask(true);
    }
  }
};

// Windows side, host-to-guest: the application's send() cut into packets of
// up to hv_sock.host_packet_size. With hv_sock.host_fill (default) a packet
// that does not fit is cut to what does, as Linux's hvs_stream_enqueue()
// cuts its own (min(left, hvs_channel_writable_bytes, packet)); otherwise
// the writer waits for room for the whole packet. With no room at all it
// advertises pending_send_sz (the room it needs: host_room_needed) and
// sleeps until the guest's signal.
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
    co_await sleep(ch_.index * kn.start_interval); // connections opened one after another
    // A packet must fit an empty ring with the headroom Linux also keeps.
    const std::uint32_t max_pkt = std::min(kn.host_packet, writable_bytes(ring_.data_size()));
    std::uint64_t left = kn.total_bytes;
    while (left > 0) {
      std::uint64_t msg = std::min(left, kn.message_size);
      co_await run(k.host_send_call, Cat::Sys);
      for (std::uint64_t rem = msg; rem > 0;) {
        const auto want = static_cast<std::uint32_t>(std::min<std::uint64_t>(rem, max_pkt));
        const std::uint32_t n = co_await room_for(want);
        co_await run(k.host_tx_packet + k.host_tx_copy(n), Cat::Sys);
        auto r = ring_.write(now(), n);
        if (!r.written)
          throw std::logic_error("hv_sock: host packet refused by a ring it had checked for room");
        ch_.n.packets.add();
        mark("hv_ringbuffer_write", "bytes", n);
        if (r.signal)
          co_await signal_guest();
        rem -= n;
      }
      left -= msg;
    }
  }

private:
  // Payload of the packet that can go into the ring now (0: none).
  std::uint32_t fits(std::uint32_t want) const
  {
    if (s_.knobs.host_fill)
      return std::min(want, writable_bytes(ring_.bytes_to_write()));
    return ring_.bytes_to_write() > models::hvs_packet_len(want) ? want : 0;
  }

  Task<std::uint32_t> room_for(std::uint32_t want)
  {
    std::uint32_t n = fits(want);
    if (n > 0)
      co_return n;
    const std::uint32_t need = host_room_needed(want, s_.knobs.host_fill);
    ring_.set_pending_send_sz(need);
    mark("ring full: pending_send_sz set, sleep", "pending_send_sz", need);
    do {
      co_await wait();
      co_await run(s_.k.host_dpc, Cat::Sys); // woken by the guest's signal through a DPC
    } while ((n = fits(want)) == 0);
    ring_.set_pending_send_sz(0);
    co_return n;
  }
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

} // namespace vsim::hv_sock::detail
