// The guest's virtio-vsock driver (net/vmw_vsock/virtio_transport.c): the
// send work item, rx buffer refill, and the interrupt context running
// vring_interrupt, virtio_transport_rx_work and virtio_transport_tx_work.
#include "transports/virtio_vsock/internal.hpp"

#include <algorithm>

namespace vsim::virtio_vsock::detail {

// ---------------------------------------------------------------------------
// Guest driver routines (virtio_transport.c), run in a GuestCtx.
//
// The driver's private state (the free descriptor list, the send list, the
// socket queues) is touched at the start of a piece of work, whose CPU time
// is charged afterwards (the kernel's bookkeeping is thereby placed at the
// start of the work item rather than spread over it).

// virtio_transport_send_pkt_work(): move queued packets onto the tx queue,
// kick once if vhost wants it.
Task<> guest_send_work(Shared& s, GuestCtx& c)
{
  const Costs& k = s.k;
  // A work item never runs concurrently with itself (and tx_lock serialises
  // the rest): if it is running in another context, that run goes round once
  // more instead.
  if (s.send_work_running) {
    s.send_work_again = true;
    co_return;
  }
  s.send_work_running = true;
  double cost = k.virtio_guest_work_run;
  for (;;) {
    s.n.guest_work_runs.add();
    s.send_work_again = false;
    bool added = false;
    while (!s.guest_send.empty()) {
      const Queued q = s.guest_send.front();
      // Header and payload: two buffers (one descriptor with INDIRECT_DESC).
      if (!s.txq->add(c.at(), s.slab[q.id].len > 0 ? 2 : 1, q.id))
        break;  // the tx queue is full: tx work re-queues us when buffers come back
      s.guest_send.pop_front();
      cost += k.virtio_guest_vq_add;
      added = true;
    }
    c.charge(cost, Cat::Sys);
    co_await c.t.settle();  // kick_prepare reads vhost's avail_event as of the work's end
    if (added && s.txq->kick_prepare()) {
      c.charge(k.virtio_guest_kick, Cat::Hypervisor);  // still under tx_lock
      co_await c.t.settle();
      s.n.kicks.add();
      s.vhost->ring(c.at() + c.lat(k.virtio_host_kick_latency), kTx);
    }
    if (!s.send_work_again)
      break;
    cost = k.virtio_guest_work_run;  // the work item, queued again while it ran, runs once more
  }
  s.send_work_running = false;
}


// virtio_vsock_rx_fill(): allocate rx buffers until the queue is full;
// returns how many.
std::uint32_t add_rx_buffers(Shared& s, Time t)
{
  const std::uint16_t need = s.rxq->descriptors_for(2);
  std::uint32_t added = 0;
  while (s.rxq->num_free() >= need) {
    s.rxq->add(t, 2, s.slab.alloc(Pkt{}));
    ++s.rx_buf_nr;
    ++added;
  }
  s.rx_buf_max_nr = std::max(s.rx_buf_max_nr, s.rx_buf_nr);
  return added;
}

// The same in a context (with its costs), then a kick if vhost wants one.
Task<> guest_rx_fill(Shared& s, GuestCtx& c)
{
  const Costs& k = s.k;
  const std::uint32_t added = add_rx_buffers(s, c.at());
  s.n.allocations.add(2 * added);
  c.charge(added * (2 * k.virtio_guest_alloc + k.virtio_guest_vq_add), Cat::Sys);
  co_await c.t.settle();
  if (s.rxq->kick_prepare()) {
    c.charge(k.virtio_guest_kick, Cat::Hypervisor);
    co_await c.t.settle();
    s.n.kicks.add();
    s.vhost->ring(c.at() + c.lat(k.virtio_host_kick_latency), kRx);
  }
}

Task<> GuestIrq::body()
{
  const Costs& k = s_.k;
  for (;;) {
    co_await wait();
    for (;;) {
      unsigned due = inbox_.take_due(now());
      if (!due)
        break;
      // MSI injection, then vring_interrupt -> callbacks -> queue_work
      // (run with the first work item's start in one step).
      charge(k.virtio_guest_irq_exit, Cat::Hypervisor);
      charge(k.virtio_guest_isr, Cat::Irq);
      if (due & (1u << kRx)) {
        s_.n.rx_interrupts.add();
        co_await rx_work();
      }
      if (due & (1u << kTx)) {
        s_.n.tx_interrupts.add();
        co_await tx_work();
      }
      co_await settle();
    }
  }
}


// virtio_transport_rx_work(): take used rx buffers, hand packets to their
// sockets (no copy), refill when fewer than half the buffers remain.
Task<> GuestIrq::rx_work()
{
  const Costs& k = s_.k;
  Virtqueue& vq = *s_.rxq;
  charge(k.virtio_guest_work_run, Cat::Sys);
  co_await settle();
  s_.n.guest_work_runs.add();
  vq.disable_cb();
  // The kernel's loop takes used buffers one by one, so buffers vhost
  // publishes while it works are taken in the same run. Here: take every
  // buffer used so far, process them, look again; re-arm the callback only
  // when a look finds nothing (and look once more after).
  for (;;) {
    co_await settle();  // the buffers' work before: what vhost used meanwhile is taken too
    taken_.clear();
    while (auto u = vq.get_buf(now())) {
      --s_.rx_buf_nr;
      taken_.push_back(static_cast<std::uint32_t>(u->token));
    }
    if (taken_.empty()) {
      if (vq.enable_cb())
        break;
      vq.disable_cb();
      continue;
    }
    for (std::uint32_t id : taken_)
      co_await process_rx_buffer(id);
  }
  if (s_.rx_buf_nr < s_.rx_buf_max_nr / 2)
    co_await guest_rx_fill(s_, ctx_);
}

Task<> GuestIrq::process_rx_buffer(std::uint32_t id)
{
  charge(s_.k.virtio_guest_rx_buf, Cat::Sys);  // settled with what the packet's delivery does first
  const Pkt p = s_.slab[id];
  s_.slab.release(id);
  if (!s_.kn.mergeable_rx) {
    co_await deliver(p, p.len);
    co_return;
  }
  // Mergeable rx: one header, the payload over several buffers.
  if (!p.cont) {
    merging_ = p;
    merging_len_ = 0;
    in_merge_ = true;
  } else if (!in_merge_) {
    throw std::logic_error("invariant violated: a continuation rx buffer without its packet's header");
  }
  merging_len_ += p.len;
  if (!p.more) {
    in_merge_ = false;
    co_await deliver(merging_, merging_len_);
  }
}

// virtio_transport_recv_pkt(): credit fields, then queue data on the socket
// (or, with small_pkt_copy, copy a small payload into the previous buffer).
Task<> GuestIrq::deliver(const Pkt& p, std::uint32_t len)
{
  const Costs& k = s_.k;
  const Knobs& kn = s_.kn;
  charge(k.virtio_guest_rx_pkt, Cat::Sys);
  co_await settle();
  Conn& c = s_.conns[static_cast<std::size_t>(p.conn)];
  Sock& sk = c.guest;
  // virtio_transport_space_update(): the peer's credit fields.
  sk.peer_buf_alloc = p.buf_alloc;
  sk.peer_fwd_cnt = std::max(sk.peer_fwd_cnt, p.fwd_cnt);
  if (p.op == Op::CreditUpdate) {
    if (sk.app->waiting() && sk.credit_signed() > 0)  // sk_write_space
      sk.app->wake_at(now());
    s_.n.frees.add();
    charge(k.virtio_guest_free, Cat::Sys);
    co_return;
  }
  const bool small = kn.small_pkt_copy && len <= kn.small_pkt_max;
  if (small && !sk.rxq.empty() && sk.tail_cap > 0 && len <= sk.tail_cap - sk.tail_fill) {
    co_await run(k.guest_copy(len) + k.virtio_guest_free, Cat::Sys);
    s_.n.copies.add();
    s_.n.small_copies.add();
    s_.n.frees.add();
    sk.tail_fill += len;
    sk.rxq.push_back(Sock::Entry{len, 0, true});
  } else {
    sk.rxq.push_back(Sock::Entry{len, 0, false});
    sk.tail_fill = len;
    sk.tail_cap = kn.mergeable_rx ? len : kn.rx_buf_size;
  }
  if (sk.app->waiting())  // sk_data_ready
    sk.app->wake_at(now());
}

// virtio_transport_tx_work(): free the packets vhost has consumed; if any,
// queue the send work (the tx queue has room again).
Task<> GuestIrq::tx_work()
{
  const Costs& k = s_.k;
  Virtqueue& vq = *s_.txq;
  co_await settle();
  const Time t0 = now();
  std::uint32_t freed = 0;
  do {
    vq.disable_cb();
    while (auto u = vq.get_buf(t0)) {
      s_.slab.release(static_cast<std::uint32_t>(u->token));
      ++freed;
    }
  } while (!vq.enable_cb());
  s_.n.guest_work_runs.add();
  s_.n.frees.add(freed);
  co_await run(k.virtio_guest_work_run + freed * (k.virtio_guest_tx_done + k.virtio_guest_free), Cat::Sys);
  if (freed)
    co_await guest_send_work(s_, ctx_);
}

Task<bool> GuestApp::flush()
{
  co_await guest_send_work(s_, ctx_);
  co_return true;
}

}  // namespace vsim::virtio_vsock::detail
