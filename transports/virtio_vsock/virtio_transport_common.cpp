// The socket layer both ends run (net/vmw_vsock/af_vsock.c
// vsock_stream_sendmsg / vsock_stream_recvmsg over
// net/vmw_vsock/virtio_transport_common.c): packetisation, credit flow
// control, the receive queue and credit updates.
#include "transports/virtio_vsock/internal.hpp"

#include <algorithm>

namespace vsim::virtio_vsock::detail {

// Sleep until woken; the wake-up latency and the context switch are the
// sleeper's, drawn from its own stream so that the draws do not depend on
// which thread woke it.
Task<> sleep_until_woken(SimThread& t, Latency& lat, double wakeup_latency, double ctx_switch)
{
  const bool slept = co_await t.wait();
  t.clear_wakeups();
  if (slept) {
    co_await t.sleep(lat(wakeup_latency));
    t.charge(ctx_switch, Cat::Sys);  // settled by the caller's next look at shared state
  }
}

// virtio_transport_send_pkt_info() for one packet: allocate, fill, queue.
// The payload copy from user memory is charged by the caller.
void queue_pkt(std::deque<Queued>& list, Slab& slab, Sock& sock, int conn, Op op, std::uint32_t len)
{
  Pkt p;
  p.conn = conn;
  p.op = op;
  p.len = len;
  p.fwd_cnt = sock.fwd_cnt;  // virtio_transport_inc_tx_pkt(): piggyback fwd_cnt
  p.buf_alloc = sock.buf_alloc;
  sock.last_fwd_cnt = sock.fwd_cnt;
  list.push_back(Queued{slab.alloc(p)});
}

Task<> AppThread::body()
{
  co_await sleep(c_.index * s_.kn.start_interval);  // connections opened one after another
  if (writer_)
    co_await send_all();
  else
    co_await receive_all();
}

// send() in a loop: virtio_transport_send_pkt_info cuts each message into
// packets of at most max_pkt_ bytes and the credit, each with two
// allocations (packet, buffer) and a copy from user memory.
Task<> AppThread::send_all()
{
  const Knobs& kn = s_.kn;
  for (std::uint64_t left = kn.total_bytes; left > 0;) {
    std::uint64_t msg = std::min(left, kn.message_size);
    charge(sc_.user_per_call, Cat::User);
    charge(sc_.send_syscall, Cat::Sys);
    s_.n.syscalls.add();
    for (std::uint64_t rem = msg; rem > 0;) {
      co_await settle();
      std::uint64_t credit = sk_.credit();
      if (credit == 0) {
        // Sleep in vsock_stream_sendmsg until a credit update arrives; what
        // was queued so far goes out meanwhile.
        if (co_await flush())
          credit = sk_.credit();
        if (credit == 0) {
          s_.n.credit_stalls.add();
          co_await sleep_until_woken(*this, lat_, sc_.wakeup_latency, sc_.context_switch);
        }
        continue;
      }
      auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>({rem, max_pkt_, credit}));
      co_await run(sc_.pkt + 2 * sc_.alloc + sc_.copy(n), Cat::Sys);  // kzalloc pkt, kmalloc buf, copy_from_iter
      s_.n.allocations.add(2);
      s_.n.copies.add();
      sk_.tx_cnt += n;
      queue_packet(Op::Rw, n);
      s_.n.data_packets.add();
      rem -= n;
    }
    co_await flush();
    left -= msg;
  }
}

// recv() in a loop with a buffer of message_size bytes:
// virtio_transport_stream_do_dequeue, then the credit update policy.
Task<> AppThread::receive_all()
{
  const Knobs& kn = s_.kn;
  while (c_.delivered < kn.total_bytes) {
    charge(sc_.user_per_call, Cat::User);
    charge(sc_.recv_syscall, Cat::Sys);
    s_.n.syscalls.add();
    for (;;) {
      co_await settle();  // the queue as of the work before
      if (!sk_.rxq.empty())
        break;
      s_.n.reader_sleeps.add();
      co_await sleep_until_woken(*this, lat_, sc_.wakeup_latency, sc_.context_switch);
    }
    std::uint64_t got = 0;
    for (;;) {
      if (got >= kn.message_size)
        break;
      co_await settle();
      if (sk_.rxq.empty())
        break;
      Sock::Entry& e = sk_.rxq.front();  // stays put: the interrupt context only appends
      auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kn.message_size - got, e.len - e.off));
      co_await run((e.merged ? 0 : sc_.dequeue_pkt) + sc_.copy(n), Cat::Sys);  // memcpy_to_msg
      s_.n.copies.add();
      e.off += n;
      got += n;
      if (e.off == e.len) {
        bool merged = e.merged;  // its buffer was freed when it was copied
        sk_.rxq.pop_front();
        if (!merged) {
          charge(sc_.free, Cat::Sys);  // virtio_transport_free_pkt: struct and buffer
          s_.n.frees.add();
        }
      }
    }
    sk_.fwd_cnt += got;
    c_.delivered += got;
    // virtio_transport_send_credit_update(): every read (2018) or when the
    // free space the peer knows of is below the threshold (5.4).
    if (kn.credit_every_read || sk_.buf_alloc - (sk_.fwd_cnt - sk_.last_fwd_cnt) < kn.credit_threshold) {
      co_await run(sc_.pkt + sc_.alloc, Cat::Sys);
      s_.n.allocations.add();
      s_.n.credit_updates.add();
      queue_packet(Op::CreditUpdate, 0);
      co_await flush();
    }
  }
  co_await settle();
  c_.done_at = now();
}

}  // namespace vsim::virtio_vsock::detail
