// vhost-vsock on the host (drivers/vhost/vsock.c, drivers/vhost/vhost.c):
// the worker running handle_tx_kick and send_pkt_work.
#include "transports/virtio_vsock/internal.hpp"

#include <algorithm>

namespace vsim::virtio_vsock::detail {

// ---------------------------------------------------------------------------
// vhost worker

Task<> Vhost::body()
{
  const Costs& k = s_.k;
  for (;;) {
    // Asleep in vhost_worker's schedule(): the wake-up (from a kick's
    // eventfd or vhost_work_queue) takes the scheduler's latency.
    co_await settle(); // the IPI of a wake-up its last work made
    if (co_await wait()) {
      // ... after the exit from the idle state its core's governor chose.
      co_await sleep(lat_(k.host_wakeup_latency) + idle_exit(cpu(), now(), s_.round_trips));
      s_.n.worker_wakeups.add();
    }
    // vhost_worker(): the work list in the order it was queued; an item
    // queued while the worker runs goes to the end.
    for (;;) {
      inbox_.take_due(now(), [&](int kind) { queue(static_cast<VqKind>(kind)); });
      if (list_.empty())
        break;
      const VqKind w = list_.front();
      list_.pop_front();
      queued_[w] = false; // cleared before the item runs
      co_await run(k.virtio_host_worker_run, Cat::Sys);
      mark(w == kTx ? "vhost_vsock_handle_tx_kick" : "vhost_transport_do_send_pkt");
      s_.n.worker_runs.add();
      if (w == kTx)
        co_await handle_tx();
      else
        co_await do_send_pkt(); // vhost_vsock_handle_rx_kick and send_pkt_work alike
    }
  }
}

Task<> Vhost::signal_guest(VqKind vq)
{
  co_await run(s_.k.virtio_host_signal, Cat::Sys);
  mark(vq == kRx ? "vhost_signal: rx" : "vhost_signal: tx");
  s_.irq->raise(now() + lat_(s_.k.virtio_host_interrupt_latency), vq);
}

// virtio_transport_recv_pkt() on the host, from the worker: the credit
// fields (before the lock, or with credit_locked under it), then under the
// host socket's lock (the worker sleeps while an application holds it)
// data onto the host socket.
Task<> Vhost::deliver_to_host(const Pkt& p)
{
  Conn& c = s_.conns[static_cast<std::size_t>(p.conn)];
  Sock& sk = c.host;
  co_await lock_sock_for_recv(
      Waiter{*this, lat_, s_.k.host_wakeup_latency, s_.k.guest_context_switch, 0, 0, nullptr, nullptr, s_.round_trips},
      sk, p, s_.kn.credit_locked);
  if (p.op == Op::CreditUpdate) {
    credit_update_received(*this, c, sk);
    charge(s_.k.virtio_host_free, Cat::Sys);
    co_await release_sock(*this, sk);
    co_return;
  }
  if (p.stream_end != sk.received + p.len)
    throw std::logic_error(fmt::format("invariant violated: a connection's packets arrive in order (connection {}: "
                                       "a packet ending at byte {} after {} bytes received)",
                                       c.index, p.stream_end, sk.received));
  sk.received = p.stream_end;
  if (p.eom)
    ++sk.msg_count; // virtio_transport_recv_enqueue: one more whole message (SOCK_SEQPACKET)
  sk.rxq.push_back(Sock::Entry{.len = p.len, .eom = p.eom, .wrote = p.wrote});
  if (wake_due(sk)) {
    s_.stamp(p, Stage::HostWakeup, now());
    sk.app->wake_at(now());
  }
  co_await release_sock(*this, sk);
}

// vhost_vsock_handle_tx_kick(): guest packets from the tx queue into host
// sockets, one used entry each, one interrupt per run if the guest wants it.
Task<> Vhost::handle_tx()
{
  const Costs& k = s_.k;
  Virtqueue& vq = *s_.txq;
  vq.disable_notify();
  bool added = false;
  std::uint64_t pkts = 0, bytes = 0;
  for (;;) {
    // vhost_vsock_more_replies(): no replies are queued in a stream transfer,
    // so the back-pressure test never stops the loop here.
    co_await settle();
    auto a = vq.pop(); // vhost_get_vq_desc()
    if (!a) {
      if (vq.enable_notify()) {
        vq.disable_notify();
        continue;
      }
      break;
    }
    const Pkt p = s_.slab[a->token];
    s_.stamp(p, Stage::VhostTx, world().now());
    // vhost_vsock_alloc_pkt(): kzalloc + kmalloc, or (6.3)
    // vhost_vsock_alloc_skb(): a linear skb; header and payload copied in.
    const PktAllocs allocs = pkt_allocs(s_.kn, p.len);
    // The guest's payload read (models/cache_reuse.hpp) and vhost's skb
    // written: the source's lines and the block zeroed whole or the
    // payload's lines come into vhost's L2.
    const CopySplit sp = where(p.wrote, cpu(), 0, p.len, k.virtio_l2_bytes);
    Pkt h = p;
    const double zeroed = k.virtio_host_init_on_alloc > 0 ? static_cast<double>(allocs.zero_bytes) : 0.0;
    h.wrote = note_write(cpu(), p.len, p.len - sp.hot + std::max(zeroed, static_cast<double>(p.len)));
    s_.n.l3_copy_bytes.add(static_cast<std::uint64_t>(sp.l3));
    co_await run(k.virtio_host_tx_pkt + host_allocs(k, allocs) + k.vhost_copy(p.len, sp), Cat::Sys);
    count_allocs(s_.n, allocs);
    if (p.len > 0)
      s_.n.copies.add();
    co_await deliver_to_host(h);
    co_await settle();
    vq.push_used(a->head, kHeaderBytes + p.len);
    added = true;
    bytes += p.len;
    ++pkts;
    if (exceeds_weight(pkts, bytes)) {
      queue(kTx); // vhost_exceeds_weight(): vhost_poll_queue, behind what others queued
      break;
    }
  }
  if (added && vq.signal_needed())
    co_await signal_guest(kTx);
}

// vhost_transport_do_send_pkt(): host packets into guest rx buffers.
Task<> Vhost::do_send_pkt()
{
  const Costs& k = s_.k;
  const Knobs& kn = s_.kn;
  Virtqueue& vq = *s_.rxq;
  vq.disable_notify();
  bool added = false;
  int data_conn = -1; // a connection whose data went into an rx buffer (round trips' stages)
  std::uint64_t pkts = 0, bytes = 0;
  for (;;) {
    if (s_.host_send.empty()) {
      vq.enable_notify();
      break;
    }
    auto a = vq.pop();
    if (!a) {
      s_.n.rx_buffer_stalls.add();
      mark("vhost_transport_do_send_pkt: no rx buffer");
      if (vq.enable_notify()) {
        vq.disable_notify();
        continue;
      }
      break; // the packet stays queued until the guest adds rx buffers and kicks
    }
    Queued& q = s_.host_send.front(); // stays put: host threads only append
    const Pkt p = s_.slab[q.id];      // a copy: the slab may grow while this thread waits for its CPU
    s_.stamp(p, Stage::VhostRx, world().now());
    const bool header = !(kn.mergeable_rx && q.off > 0);
    // Without mergeable rx the header has a descriptor of its own; with it
    // the first buffer of a packet carries the header (kMrgHeaderBytes), so
    // a 4 KiB packet spans two page-sized buffers.
    const std::uint32_t cap = kn.mergeable_rx && header ? kn.rx_buf_size - kMrgHeaderBytes : kn.rx_buf_size;
    const std::uint32_t n = std::min(p.len - q.off, cap);
    Pkt b = p;
    b.len = n;
    b.cont = !header;
    b.more = kn.mergeable_rx && q.off + n < p.len;
    b.eom = p.eom && q.off + n == p.len; // vhost clears EOM on all but the last piece
    b.frags = 0; // the guest's buffer holds a copy; the zerocopy state stays with the host's packet
    b.zc_notify = false;
    // The host's payload read and the guest's buffer written: both come
    // into vhost's L2 (models/cache_reuse.hpp).
    const CopySplit sp = where(p.wrote, cpu(), q.off, n, k.virtio_l2_bytes);
    b.wrote = note_write(cpu(), n, 2.0 * n - sp.hot);
    s_.n.l3_copy_bytes.add(static_cast<std::uint64_t>(sp.l3));
    s_.slab[a->token] = b;
    const std::uint32_t hdr = header ? (kn.mergeable_rx ? kMrgHeaderBytes : kHeaderBytes) : 0;
    co_await run(k.virtio_host_rx_buf + k.vhost_copy(n + hdr, sp), Cat::Sys); // copy_to_iter
    if (n > 0)
      s_.n.copies.add();
    s_.n.rx_buffers.add();
    vq.push_used(a->head, hdr + n);
    if (p.op == Op::Rw && p.len > 0)
      data_conn = p.conn;
    if (!kn.batch_used && vq.signal_needed()) {
      if (data_conn >= 0)
        s_.stamp(data_conn, Stage::InterruptToGuest, world().now());
      co_await signal_guest(kRx); // vhost_add_used_and_signal per buffer
    }
    added = true;
    q.off += n;
    bytes += n;
    if (q.off == p.len) {
      // The packet freed: a MSG_ZEROCOPY one's pages unpinned and its
      // notification queued on the host sender's error queue only now that
      // vhost copied it (skb_copy_datagram_iter) into guest buffers.
      const double zerocopy = p.frags > 0 || p.zc_notify
                                  ? zerocopy_free(s_.n, p, s_.conns[static_cast<std::size_t>(p.conn)].host,
                                                  k.virtio_host_zcopy_unpin_page, k.virtio_host_zcopy_notify)
                                  : 0.0;
      co_await run(k.virtio_host_free + zerocopy, Cat::Sys);
      s_.slab.release(q.id);
      s_.host_send.pop_front();
      ++pkts;
    }
    if (exceeds_weight(pkts, bytes)) {
      queue(kRx);
      break;
    }
  }
  if (added && kn.batch_used && vq.signal_needed()) {
    if (data_conn >= 0)
      s_.stamp(data_conn, Stage::InterruptToGuest, world().now());
    co_await signal_guest(kRx);
  }
}

} // namespace vsim::virtio_vsock::detail
