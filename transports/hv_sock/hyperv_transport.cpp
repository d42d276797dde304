// The Linux guest's side of hv_sock (net/vmw_vsock/af_vsock.c over
// net/vmw_vsock/hyperv_transport.c, drivers/hv/ring_buffer.c): the
// application's writer and reader threads, and vCPU 0's interrupt context
// (vmbus_isr, the vmbus_on_event tasklet, hvs_channel_cb).
#include "transports/hv_sock/internal.hpp"

#include <algorithm>
#include <stdexcept>

#include "transports/hv_sock/ring_math.hpp"

namespace vsim::hv_sock::detail {

Task<> GuestIrq::body()
{
  const Costs& k = s_.k;
  for (;;) {
    co_await wait();
    while (!requests_.empty() && requests_.top().t <= now()) {
      Channel& ch = *requests_.top().ch;
      const bool data = requests_.top().data;
      requests_.pop();
      if (data)
        s_.stamp(ch.index, Stage::GuestIrq, now());
      charge(k.guest_irq_exit, Cat::Hypervisor);
      co_await run(k.guest_isr + k.guest_tasklet, Cat::Irq);
      mark("hvs_channel_cb");
      channel_callback(ch, data);
    }
  }
}

// hvs_channel_cb(): wake a reader if data is readable (sk_data_ready), a
// writer if the outbound ring has room (sk_write_space).
void GuestIrq::channel_callback(Channel& ch, bool data)
{
  bool readable = ch.inbound.bytes_to_read() >= models::hvs_packet_len(0);
  bool writable = ch.outbound.bytes_to_write() > 0;
  if ((readable || writable) && ch.guest->waiting()) {
    if (data && readable)
      s_.stamp(ch.index, Stage::ReaderWakeup, now());
    ch.guest->wake_at(now() + lat_(s_.k.guest_wakeup_latency));
  }
}

namespace {

// The Linux application's socket: the send() path into the outbound ring,
// the recv() path from the inbound one.
class LinuxSocket : public ChannelThread {
protected:
  LinuxSocket(World& w, Cpu& cpu, Shared& s, Channel& ch, const char* role)
      : ChannelThread(w, cpu, s, ch, role, "guest_signal")
  {
  }

  // The start of one recv() call: vsock_stream_recvmsg's entry.
  void recv_call()
  {
    charge(s_.k.guest_user_per_call, Cat::User);
    charge(s_.k.guest_recv_syscall, Cat::Sys);
    ch_.n.syscalls.add();
  }

  // vsock_stream_sendmsg(): wait for space, enqueue, until the message is out.
  Task<> send(std::uint64_t msg)
  {
    const Costs& k = s_.k;
    stamp(Stage::GuestSend);
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
    co_await run(s_.k.guest_space_check, Cat::Sys); // with what was charged before
    ch_.n.space_checks.add();
    co_return writable_bytes(ch_.outbound.bytes_to_write());
  }

  Task<> write_pending(std::uint32_t v)
  {
    co_await run(s_.k.guest_pending_send_sz_write, Cat::Sys);
    ch_.n.pending_send_sz_writes.add();
    ch_.outbound.set_pending_send_sz(v);
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
    ch_.n.ring_full_stalls.add();
    mark("vsock_stream_sendmsg: ring full, sleep");
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
      auto r = ch_.outbound.write(now(), n);
      if (!r.written)
        throw std::logic_error("hv_sock: writer's packet refused by a ring it had checked for room");
      ch_.n.packets.add();
      mark("hv_ringbuffer_write", "bytes", n);
      if (r.signal)
        co_await signal_host(true);
      written += n;
      if (!s_.knobs.send_loop || written == rem)
        break;
    }
    co_return written;
  }
  // vsock_stream_recvmsg(): sleep until hvs_stream_has_data().
  Task<> wait_for_data()
  {
    for (;;) {
      if (packet_left_ > 0) // the rest of a packet already taken
        co_return;
      co_await settle();
      if (ch_.inbound.unconsumed_packets() > 0) {
        stamp(Stage::GuestRecv);
        co_return;
      }
      ch_.n.reader_sleeps.add();
      mark("vsock_stream_recvmsg: no data, sleep");
      if (co_await wait())
        charge(s_.k.guest_context_switch, Cat::Sys);
    }
  }

  // hvs_stream_dequeue(): copy at most the rest of one packet to the user's
  // buffer of `buffer` bytes (recv() returns after one dequeue: SO_RCVLOWAT is 1).
  Task<std::uint64_t> dequeue(std::uint64_t buffer)
  {
    const Costs& k = s_.k;
    // The packet being read is the reader's own: only the ring's state
    // beyond it (iter_next) needs the time settled.
    if (packet_left_ == 0) { // hv_pkt_iter_first + hvs_update_recv_data
      charge(k.guest_dequeue_packet, Cat::Sys);
      packet_left_ = ch_.inbound.peek_payload();
    }
    std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(packet_left_, buffer));
    charge(k.guest_copy(n), Cat::Sys); // memcpy_to_msg straight from the ring
    ch_.n.copies.add();
    packet_left_ -= n;
    if (packet_left_ == 0) { // hv_pkt_iter_next, closing when drained
      co_await settle();
      auto r = ch_.inbound.iter_next(now());
      if (r.closed) {
        mark("hv_pkt_iter_close");
        charge(k.guest_iter_close, Cat::Sys);
        if (r.signal)
          co_await signal_host(false); // room for the host's writer
      } else {
        charge(k.guest_dequeue_packet, Cat::Sys);
        packet_left_ = ch_.inbound.peek_payload();
      }
    }
    co_return n;
  }

  std::uint32_t packet_left_ = 0; // payload of the current packet not yet read
};

// The Linux application thread calling send() in a loop.
class LinuxWriter : public LinuxSocket {
public:
  LinuxWriter(World& w, Cpu& cpu, Shared& s, Channel& ch) : LinuxSocket(w, cpu, s, ch, "linux_writer") {}

protected:
  Task<> body() override
  {
    const Knobs& kn = s_.knobs;
    co_await sleep(ch_.index * kn.start_interval); // connections opened one after another
    if (!kn.per_check)                             // since June 2019: set once when the channel opens
      ch_.outbound.set_pending_send_sz(kPendingSendSize);
    // Up to the connection's target, which the run-length monitor may
    // lower (never below what is committed).
    for (std::uint64_t sent = 0; sent < ch_.target;) {
      const std::uint64_t msg = std::min(ch_.target - sent, kn.message_size);
      ch_.committed = sent + msg;
      co_await send(msg);
      sent += msg;
    }
  }
};

// The Linux application thread calling recv() in a loop, with a buffer of
// workload.message_size bytes.
class LinuxReader : public LinuxSocket {
public:
  LinuxReader(World& w, Cpu& cpu, Shared& s, Channel& ch) : LinuxSocket(w, cpu, s, ch, "linux_reader") {}

protected:
  Task<> body() override
  {
    co_await sleep(ch_.index * s_.knobs.start_interval); // connections opened one after another
    while (ch_.delivered < ch_.target) {
      recv_call();
      co_await wait_for_data();
      const std::uint64_t got = co_await dequeue(s_.knobs.message_size);
      ch_.delivered += got;
      if (s_.run_length)
        s_.run_length->delivered(ch_.index, got, world().now());
    }
    co_await settle();
    stream_done(s_, ch_, now());
  }
};

// The Linux application of a round-trip workload: one thread sending and
// receiving in turn on one socket (as sockperf's and netperf's TCP_RR
// client and server do), the initiator's part or the responder's.
class LinuxApp : public LinuxSocket, public RoundTripSocket {
public:
  LinuxApp(World& w, Cpu& cpu, Shared& s, Channel& ch, bool initiator)
      : LinuxSocket(w, cpu, s, ch, "linux_app"), initiator_(initiator)
  {
  }

  Task<> send_message(std::uint64_t bytes) override { co_await send(bytes); }

  // recv() calls until `bytes` have been read, each with a buffer of the
  // bytes still missing.
  Task<> receive_message(std::uint64_t bytes) override
  {
    for (std::uint64_t left = bytes; left > 0;) {
      recv_call();
      co_await wait_for_data();
      const std::uint64_t got = co_await dequeue(left);
      left -= got;
      ch_.delivered += got;
    }
  }

protected:
  Task<> body() override
  {
    co_await sleep(ch_.index * s_.knobs.start_interval); // connections opened one after another
    if (!s_.knobs.per_check)
      ch_.outbound.set_pending_send_sz(kPendingSendSize);
    if (initiator_)
      co_await initiate(*this, *this, s_.knobs, *s_.round_trips, s_.seed, s_.iteration, ch_.index);
    else
      co_await respond(*this, s_.knobs);
    co_await settle();
    ch_.done_at = now();
  }

private:
  bool initiator_;
};

} // namespace

SimThread& spawn_linux_writer(World& w, Cpu& cpu, Shared& s, Channel& ch)
{
  return w.spawn<LinuxWriter>(cpu, s, ch);
}
SimThread& spawn_linux_reader(World& w, Cpu& cpu, Shared& s, Channel& ch)
{
  return w.spawn<LinuxReader>(cpu, s, ch);
}
SimThread& spawn_linux_app(World& w, Cpu& cpu, Shared& s, Channel& ch, bool initiator)
{
  return w.spawn<LinuxApp>(cpu, s, ch, initiator);
}

} // namespace vsim::hv_sock::detail
