// The guest's virtio-vsock driver (net/vmw_vsock/virtio_transport.c): the
// interrupt (vring_interrupt), and the work items a vCPU's kworker runs:
// virtio_transport_send_pkt_work, virtio_transport_rx_work (with rx buffer
// refill) and virtio_transport_tx_work.
#include "transports/virtio_vsock/internal.hpp"

#include <algorithm>
#include <string>

namespace vsim::virtio_vsock::detail {

// ---------------------------------------------------------------------------
// Work items and worker pools (kernel/workqueue.c: __queue_work,
// worker_thread, process_one_work, wq_worker_sleeping, wq_worker_running).

void queue_work(Shared& s, GuestWork w, WorkerPool& local, Time t)
{
  WorkItem& it = s.work[static_cast<std::size_t>(w)];
  if (it.pending)
    return; // already queued: test_and_set_bit(WORK_STRUCT_PENDING) fails
  it.pending = true;
  // __queue_work(): to the pool where the item still runs (work items are
  // not reentrant), else to the queueing CPU's.
  (it.running_on ? it.running_on->pool() : local).insert(w, t);
}

void WorkerPool::insert(GuestWork w, Time t)
{
  worklist.push_back(w);
  if (need_more_worker())
    wake_up_worker(t);
}

bool WorkerPool::wake_up_worker(Time t)
{
  if (idle.empty())
    return false;
  idle.back()->wake_at(t); // it leaves the idle list when it runs (worker_leave_idle)
  return true;
}

CpuTime WorkerPool::cpu_time() const
{
  CpuTime sum;
  for (const Kworker* w : workers)
    for (int c = 0; c < kCats; ++c)
      sum.cycles[static_cast<std::size_t>(c)] += w->cpu_time().cycles[static_cast<std::size_t>(c)];
  return sum;
}

namespace {

Kworker& add_kworker(World& w, Shared& s, WorkerPool& pool)
{
  const std::string name = pool.workers.empty() ? "kworker_" + pool.cpu->name()
                                                : fmt::format("kworker_{}_{}", pool.cpu->name(), pool.workers.size());
  Kworker& k = w.spawn<Kworker>(*pool.cpu, s, pool, name);
  pool.workers.push_back(&k);
  // create_worker(): a new worker enters idle. Spares go to the far end of
  // the idle list, so the first kworker is the one woken while it is idle.
  pool.idle.insert(pool.idle.begin(), &k);
  return k;
}

} // namespace

void add_halt_polling(Shared& s, const Cpu& vcpu)
{
  if (static_cast<std::size_t>(vcpu.index()) != s.halt_poll.size())
    throw std::logic_error("invariant violated: the guest's vCPUs are the world's first CPUs, in order");
  const double cycles_per_ns = s.k.clock_ghz;
  s.halt_poll.emplace_back(s.k.virtio_kvm_halt_poll_ns * cycles_per_ns, 10000 * cycles_per_ns,
                           s.k.virtio_kvm_halt_poll_ns_shrink);
}

WorkerPool& add_worker_pool(World& w, Shared& s, Cpu& cpu)
{
  WorkerPool& pool = *s.pools.emplace_back(std::make_unique<WorkerPool>());
  pool.cpu = &cpu;
  add_kworker(w, s, pool);
  return pool;
}

void add_spare_kworkers(World& w, Shared& s)
{
  for (auto& pool : s.pools)
    while (static_cast<int>(pool->workers.size()) < WorkerPool::kWorkers)
      add_kworker(w, s, *pool);
}

Task<> Kworker::body()
{
  const Costs& k = s_.k;
  WorkerPool& pool = pool_;
  for (;;) {
    // worker_thread(): idle until wake_up_worker; a wake-up switches the
    // kworker in, and going idle again switches to whatever runs next (an
    // application thread it preempted): a context switch each.
    if (co_await wait())
      charge(k.guest_context_switch, Cat::Sys);
    // Its wakers wake it only while it is idle; then worker_leave_idle.
    clear_wakeups();
    pool.idle.erase(std::find(pool.idle.begin(), pool.idle.end(), this));
    // Work only if no other worker of the pool runs (need_more_worker): a
    // worker woken for a blocked one that is running again by now goes
    // back to sleep. Then, counted in nr_running, items until none is left
    // or another worker runs too (keep_working).
    if (pool.need_more_worker()) {
      ++pool.nr_running; // worker_clr_flags(WORKER_PREP)
      do {
        const GuestWork w = pool.worklist.front();
        pool.worklist.pop_front();
        co_await process_one_work(w);
        while (!scheduled_.empty()) { // process_scheduled_works()
          const GuestWork more = scheduled_.front();
          scheduled_.pop_front();
          co_await process_one_work(more);
        }
      } while (pool.keep_working());
      --pool.nr_running; // worker_set_flags(WORKER_PREP)
    }
    pool.idle.push_back(this); // worker_enter_idle
    co_await run(k.guest_context_switch, Cat::Sys);
  }
}

Task<> Kworker::process_one_work(GuestWork w)
{
  const Costs& k = s_.k;
  WorkItem& it = s_.work[static_cast<std::size_t>(w)];
  // find_worker_executing_work(): another worker of the pool runs it; it
  // runs there once more when that run is over (move_linked_works onto
  // collision->scheduled), still pending until then.
  if (Kworker* other = it.running_on) {
    if (&other->pool_ != &pool_ || other == this)
      throw std::logic_error("invariant violated: a work item runs on a worker of the pool it is queued on");
    other->scheduled_.push_back(w);
    s_.n.work_collisions.add();
    co_return;
  }
  it.pending = false; // cleared before the function runs: queueing it again now re-runs it
  it.running_on = this;
  if (s_.kn.preempt_none)
    keep_cpu(); // CONFIG_PREEMPT_NONE: the item runs to its end, or until it sleeps (process_one_work's cond_resched)
  s_.n.guest_work_runs.add();
  charge(k.virtio_guest_work_run, Cat::Sys); // process_one_work(), settled with the work's first step
  switch (w) {
  case GuestWork::Rx:
    co_await rx_work();
    break;
  case GuestWork::Tx:
    co_await tx_work();
    break;
  case GuestWork::Send:
    co_await send_work();
    break;
  }
  co_await settle();
  it.running_on = nullptr;
  if (keeps_cpu())
    release_cpu();
}

// wq_worker_sleeping(): a running worker blocks; if no other worker of the
// pool runs and items are pending, the first idle worker is woken to run
// them (4.19: returned to schedule(), which wakes it; 5.x on: woken here).
void Kworker::sleeping()
{
  if (sleeping_ || pool_.nr_running < 1)
    throw std::logic_error("invariant violated: wq_worker_sleeping of a kworker that is not running");
  sleeping_ = true;
  --pool_.nr_running;
  if (pool_.need_more_worker() && pool_.wake_up_worker(now()))
    s_.n.kworker_handoffs.add();
}

// wq_worker_running(): it runs again, counted in nr_running (both workers
// are then runnable on the vCPU, which they share step by step).
void Kworker::running()
{
  if (!sleeping_)
    throw std::logic_error("invariant violated: wq_worker_running of a kworker that did not sleep");
  sleeping_ = false;
  ++pool_.nr_running;
}

Waiter Kworker::waiter()
{
  const Costs& k = s_.k;
  return Waiter{*this,
                lat_,
                k.guest_wakeup_latency,
                k.guest_context_switch,
                k.virtio_guest_halted_wakeup,
                k.virtio_guest_halt_poll_wakeup,
                &s_,
                this};
}

bool tx_add(Shared& s, Time t, std::uint32_t id)
{
  // Header and payload: two buffers (one descriptor with INDIRECT_DESC);
  // a MSG_ZEROCOPY packet: the header and one buffer per page
  // (virtio_transport_send_skb, out_sgs[MAX_SKB_FRAGS + 1]).
  const Pkt& p = s.slab[id];
  const auto buffers = static_cast<std::uint16_t>(p.frags > 0 ? 1 + p.frags : (p.len > 0 ? 2 : 1));
  return s.txq->add(t, buffers, id);
}

// virtio_transport_send_pkt_work(): under tx_lock, move queued packets onto
// the tx queue, then kick once if vhost wants it.
Task<> Kworker::send_work()
{
  const Costs& k = s_.k;
  co_await settle();
  if (s_.tx_lock.owner)
    s_.n.tx_lock_contended.add();
  co_await mutex_lock(*this, lat_, s_.tx_lock);
  bool added = false;
  double cost = 0;
  int data_conn = -1; // the connection of the first data packet added (round trips' stages)
  while (!s_.guest_send.empty()) {
    const Queued q = s_.guest_send.front();
    if (!tx_add(s_, now(), q.id))
      break; // the tx queue is full: tx work re-queues us when buffers come back
    s_.guest_send.pop_front();
    cost += k.virtio_guest_vq_add;
    added = true;
    if (const Pkt& p = s_.slab[q.id]; data_conn < 0 && p.op == Op::Rw && p.len > 0) {
      data_conn = p.conn;
      s_.stamp(p, Stage::GuestSendWork, world().now());
    }
  }
  co_await run(cost, Cat::Sys); // kick_prepare reads vhost's avail_event as of the work's end
  if (added && s_.txq->kick_prepare()) {
    if (data_conn >= 0)
      s_.stamp(data_conn, Stage::KickToVhost, world().now());
    co_await notify_vhost(*this, s_, lat_, kTx); // still under tx_lock
  }
  co_await mutex_unlock(*this, s_.tx_lock);
}

Task<bool> send_fast_path(SimThread& t, Shared& s, Latency& lat, std::uint32_t id)
{
  if (!mutex_trylock(t, s.tx_lock)) {
    s.n.tx_lock_contended.add();
    co_return false; // -EBUSY: "Inside RCU, can't sleep!"
  }
  const bool added = tx_add(s, t.now(), id);
  if (added) {
    const Pkt p = s.slab[id];
    co_await t.run(s.k.virtio_guest_vq_add, Cat::Sys);
    if (s.txq->kick_prepare()) { // virtqueue_kick(): EVENT_IDX still decides
      s.stamp(p, Stage::KickToVhost, t.world().now());
      co_await notify_vhost(t, s, lat, kTx);
    }
  }
  co_await mutex_unlock(t, s.tx_lock);
  co_await t.settle(); // the IPI of waking a waiter for tx_lock
  co_return added;
}

// virtio_transport_send_pkt(): with the 6.12 fast path, a packet goes
// straight onto the tx queue while send_pkt_queue is empty
// (skb_queue_empty_lockless), so it never overtakes a queued one; else, or
// when the fast path fails, onto the queue with queue_work(send_pkt_work).
Task<> guest_send_pkt(SimThread& t, Shared& s, Latency& lat, WorkerPool& local, std::uint32_t id)
{
  if (s.kn.tx_fast_path) {
    if (s.guest_send.empty() && co_await send_fast_path(t, s, lat, id)) {
      s.n.tx_fast_path_sends.add();
      co_return;
    }
    s.n.tx_fast_path_fallbacks.add();
  }
  s.guest_send.push_back(Queued{id});
  queue_work(s, GuestWork::Send, local, t.now());
}

Task<> GuestApp::queue_packet(const Pkt& p)
{
  co_await guest_send_pkt(*this, s_, lat_, pool_, new_pkt(s_.slab, sk_, c_.index, p));
}

// virtqueue_notify(): the notify write exits to KVM, whose ioeventfd
// handler signals the eventfd; its wait-queue entry (vhost_poll_wakeup)
// queues the vhost work and, if the worker sleeps, wakes it. That
// try_to_wake_up() runs inside the exit, on the vCPU's thread, so its
// remote enqueue and IPI (virtio_host_wake_ipi) are the kicking vCPU's time
// too (hypervisor time to the guest).
Task<> notify_vhost(SimThread& t, Shared& s, Latency& lat, VqKind vq)
{
  const Costs& k = s.k;
  const bool wakes = s.device->asleep();
  co_await t.run(k.virtio_guest_kick + (wakes ? k.virtio_host_wake_ipi : 0.0), Cat::Hypervisor);
  t.mark(vq == kTx ? "virtqueue_kick: tx" : "virtqueue_kick: rx");
  s.n.kicks.add();
  if (wakes)
    s.n.kick_wakeups.add();
  s.device->ring(t.now() + lat(k.virtio_host_kick_latency), vq);
}

// virtio_vsock_rx_fill(): allocate rx buffers until the queue is full;
// returns how many.
std::uint32_t add_rx_buffers(Shared& s, Time t)
{
  const std::uint16_t sgs = rx_buffer_sgs(s.kn);
  const std::uint16_t need = s.rxq->descriptors_for(sgs);
  std::uint32_t added = 0;
  while (s.rxq->num_free() >= need) {
    s.rxq->add(t, sgs, s.slab.alloc(Pkt{}));
    ++s.rx_buf_nr;
    ++added;
  }
  s.rx_buf_max_nr = std::max(s.rx_buf_max_nr, s.rx_buf_nr);
  return added;
}

// virtio_transport_rx_work() refills only below half the most buffers the
// queue ever held: "if (vsock->rx_buf_nr < vsock->rx_buf_max_nr / 2)
// virtio_vsock_rx_fill(vsock)" (net/vmw_vsock/virtio_transport.c, 4.19
// through 6.x). A queue that holds one rx buffer (queue_size 2 without
// indirect descriptors: a header and a payload descriptor) has
// rx_buf_max_nr 1, and 0 < 1 / 2 never holds: once vhost has used that
// buffer the driver never posts another, and nothing the host sends (data
// or credit updates) reaches the guest again.
//
// virtio_transport_stream_do_dequeue() (5.4, the series "reduce credit update
// messages"; docs/kernel-notes.md) sends a credit update only when the free
// space the peer knows of, buf_alloc - (fwd_cnt - last_fwd_cnt), is below
// VIRTIO_VSOCK_MAX_PKT_BUF_SIZE (virtio_vsock.credit_threshold here). With a
// threshold of 0 nothing is below it: no update is ever sent, and a sender
// that has used its peer's whole window waits for ever (Linux never sends
// a CREDIT_REQUEST on its own).
std::string kernel_hang_reason(const Shared& s)
{
  if (!s.kn.credit_every_read && !s.kn.credit_rcvlowat && !s.kn.seqpacket && s.kn.credit_threshold == 0)
    for (const Conn& c : s.conns)
      for (const Sock* sk : {&c.guest, &c.host})
        if (sk->tx_cnt > 0 && sk->credit_signed() <= 0)
          return fmt::format(
              "virtio_vsock.credit_threshold is 0: virtio_transport_stream_do_dequeue sends a credit update only "
              "when the free space the peer knows of is below the threshold, which it never is, so once the {} "
              "writer of connection {} had used its peer's whole window ({} bytes) no credit update came and it "
              "waits for ever (Linux never asks for credit itself)",
              sk == &c.guest ? "guest" : "host", c.index, sk->peer_buf_alloc);
  // Round trips with requests in flight (workload.outstanding > 1): the
  // initiator sends its next request before it reads the responses, the
  // responder sends its response before it reads the next request, each
  // with a blocking send() on its one thread. Once each has its peer's
  // whole window unread, both wait in vsock_stream_sendmsg for space
  // (vsock_stream_has_space: virtio_transport_get_credit is 0) and neither
  // reads, so no credit update can come: the same programs deadlock on
  // Linux.
  if (s.round_trips)
    for (const Conn& c : s.conns)
      if (c.guest.app && c.host.app && c.guest.app->waiting() && c.host.app->waiting() &&
          c.guest.credit_signed() <= 0 && c.host.credit_signed() <= 0)
        return fmt::format(
            "both applications wait in send() with no credit (vsock_stream_sendmsg: vsock_stream_has_space is 0 "
            "on both sockets): with {} requests in flight (workload.outstanding) the initiator sends before it "
            "reads the responses and the responder before it reads the next request, so once each has its "
            "peer's whole window (buf_alloc: guest {} bytes, host {} bytes) unread neither reads and no credit "
            "update can come; the same programs deadlock on Linux (a larger virtio_vsock.buf_alloc, or "
            "workload.outstanding 1, runs)",
            s.kn.rt.outstanding, c.host.peer_buf_alloc, c.guest.peer_buf_alloc);
  if (s.rx_buf_nr == 0 && s.rx_buf_max_nr < 2)
    return fmt::format(
        "the guest's rx queue holds {} rx buffer (virtio_vsock.queue_size {}, {} descriptors per buffer); "
        "virtio_transport_rx_work refills only when rx_buf_nr < rx_buf_max_nr / 2 = 0, so after vhost used it "
        "no rx buffer is posted again and the host's packets (data or credit updates) never reach the guest: "
        "Linux's virtio-vsock driver hangs here too (net/vmw_vsock/virtio_transport.c)",
        s.rx_buf_max_nr, s.kn.queue_size, s.rxq->descriptors_for(rx_buffer_sgs(s.kn)));
  return {};
}

// The same from the rx work (with its costs), then a kick if vhost wants one.
Task<> Kworker::rx_fill()
{
  const Costs& k = s_.k;
  co_await settle();
  const std::uint32_t added = add_rx_buffers(s_, now());
  const PktAllocs a = pkt_allocs(s_.kn, s_.kn.rx_buf_size); // per buffer: virtio_vsock_alloc_skb (6.3)
  count_allocs(s_.n, a, added);
  const double cycles = added * (guest_allocs(k, a) + k.virtio_guest_vq_add);
  if (k.virtio_guest_init_on_alloc > 0)
    cpu().fill_cache(static_cast<double>(added) * static_cast<double>(a.zero_bytes)); // the blocks zeroed
  co_await run(cycles, Cat::Sys);
  // A batched refill is a cause of the round trip in flight when it ends:
  // the one whose packet waits for it on this vCPU (RoundTrips::note).
  if (s_.round_trips && added > 0)
    s_.round_trips->note(s_.cause_rx_refill, cycles);
  if (s_.rxq->kick_prepare())
    co_await notify_vhost(*this, s_, lat_, kRx);
}

// vhost's signal (eventfd_signal on the queue's call eventfd) reaches the
// guest through KVM's irqfd as an MSI on the queue's vector: its own with
// per-vq vectors, else the one vector every queue shares.
void GuestIrq::raise(Time t, VqKind vq)
{
  inbox_.push(t, s_.kn.shared_irq ? 0 : vq);
  wake_at(t);
}

// vring_interrupt() (drivers/virtio/virtio_ring.c): nothing to do unless
// the device used entries the driver has not taken (more_used: IRQ_NONE);
// else the queue's callback, virtio_vsock_rx_done or virtio_vsock_tx_done,
// queues its work. The callbacks being disabled does not matter here (that
// only asks the device not to interrupt).
bool GuestIrq::vring_interrupt(VqKind vq)
{
  if (!(vq == kRx ? *s_.rxq : *s_.txq).more_used())
    return false;
  mark(vq == kRx ? "vring_interrupt: rx" : "vring_interrupt: tx");
  if (vq == kRx) {
    s_.n.rx_interrupts.add();
    queue_work(s_, GuestWork::Rx, pool_, now()); // virtio_vsock_rx_done
  } else {
    s_.n.tx_interrupts.add();
    queue_work(s_, GuestWork::Tx, pool_, now()); // virtio_vsock_tx_done
  }
  return true;
}

// The injected interrupts: per pending vector, the VM exit and injection
// and the handler. A vector is pending once however many MSIs set it before
// its handler starts (the APIC's IRR holds one bit per vector: irqfd's
// kvm_set_msi on a set bit merges); one that arrives while the handler
// runs is the next interrupt. The handler: vring_interrupt on the vector's
// queue, or with the shared vector vp_vring_interrupt
// (drivers/virtio/virtio_pci_common.c), vring_interrupt on every queue in
// the order virtio_find_vqs made them (rx, tx; the event queue has nothing
// here), so one interrupt queues the rx and the tx work when both queues
// have used entries.
Task<> GuestIrq::body()
{
  const Costs& k = s_.k;
  unsigned pending = 0; // the vectors' IRR bits
  for (;;) {
    co_await wait();
    // An interrupt ends a halt of its vCPU, a wake event like any other
    // (kvm_vcpu_block: the injected interrupt makes kvm_vcpu_check_block
    // true): the halt's polled part is the vCPU thread's CPU time, and the
    // window adapts to the halt's length as after a thread's wake-up
    // (HaltPoll::wake).
    if (const Cpu& cpu = this->cpu(); cpu.idle_at(now()))
      s_.halt_poll.at(static_cast<std::size_t>(cpu.index())).wake(now() - cpu.idle_since());
    for (;;) {
      inbox_.take_due(now(), [&](int vector) {
        if (pending & (1u << vector))
          s_.n.irq_signals_merged.add();
        pending |= 1u << vector;
      });
      if (!pending)
        break;
      const int vector = (pending & 1u) ? 0 : 1; // the rx queue's first with per-vq vectors
      pending &= ~(1u << vector);                // accepted: one more MSI now is another interrupt
      s_.n.interrupts_to_guest.add();
      charge(k.virtio_guest_irq_exit, Cat::Hypervisor);
      // Firecracker's virtio-mmio (drivers/virtio/virtio_mmio.c
      // vm_interrupt): the handler reads INTERRUPT_STATUS and writes
      // INTERRUPT_ACK, two MMIO exits to the VMM's vCPU thread.
      if (s_.kn.firecracker)
        charge(2 * k.fc_vcpu_mmio_exit, Cat::Hypervisor);
      co_await run(k.virtio_guest_isr, Cat::Irq);
      int found = 0;
      if (s_.kn.shared_irq) {
        found += vring_interrupt(kRx) ? 1 : 0;
        found += vring_interrupt(kTx) ? 1 : 0;
        if (found == 2)
          s_.n.irq_both_queues.add();
      } else {
        found = vring_interrupt(static_cast<VqKind>(vector)) ? 1 : 0;
      }
      if (!found)
        s_.n.irq_spurious.add();
    }
  }
}

// virtio_transport_rx_work(): under rx_lock, take used rx buffers, hand
// packets to their sockets (no copy), refill when fewer than half the
// buffers remain.
Task<> Kworker::rx_work()
{
  Virtqueue& vq = *s_.rxq;
  vq.disable_cb();
  // The kernel's loop takes used buffers one by one, so buffers vhost
  // publishes while it works are taken in the same run. Here: take every
  // buffer used so far, process them, look again; re-arm the callback only
  // when a look finds nothing (and look once more after).
  for (;;) {
    co_await settle(); // the buffers' work before: what vhost used meanwhile is taken too
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
    co_await rx_fill();
}

Task<> Kworker::process_rx_buffer(std::uint32_t id)
{
  const Pkt p = s_.slab[id];
  if (!p.cont)
    s_.stamp(p, Stage::GuestRxWork, world().now());
  charge(s_.k.virtio_guest_rx_buf, Cat::Sys); // settled with what the packet's delivery does first
  s_.slab.release(id);
  if (!s_.kn.mergeable_rx) {
    co_await deliver(p, p.len);
    co_return;
  }
  // Mergeable rx: one header, the payload over several buffers.
  if (!p.cont) {
    s_.rx_merging = p;
    s_.rx_merging_len = 0;
    s_.rx_in_merge = true;
  } else if (!s_.rx_in_merge) {
    throw std::logic_error("invariant violated: a continuation rx buffer without its packet's header");
  }
  s_.rx_merging_len += p.len;
  if (p.cont && p.wrote.cpu == s_.rx_merging.wrote.cpu) {
    // the packet's payload as one write, from its first buffer's to its last
    s_.rx_merging.wrote.fill1 = p.wrote.fill1;
    s_.rx_merging.wrote.len = s_.rx_merging_len;
  }
  if (!p.more) {
    s_.rx_in_merge = false;
    s_.rx_merging.eom = p.eom; // the packet's last buffer carries its EOM
    const Pkt whole = s_.rx_merging;
    co_await deliver(whole, s_.rx_merging_len);
  }
}

// virtio_transport_recv_pkt(): the credit fields (before the socket lock,
// or with credit_locked under it), then under the socket lock queue data
// on the socket (or, with small_pkt_copy, copy a small payload into the
// previous buffer).
Task<> Kworker::deliver(const Pkt& p, std::uint32_t len)
{
  const Costs& k = s_.k;
  const Knobs& kn = s_.kn;
  Conn& c = s_.conns[static_cast<std::size_t>(p.conn)];
  Sock& sk = c.guest;
  co_await run(k.virtio_guest_rx_pkt, Cat::Sys);
  co_await lock_sock_for_recv(waiter(), sk, p, kn.credit_locked);
  if (p.op == Op::CreditRequest) {
    // virtio_transport_recv_connected() has no case for it (4.14-6.x):
    // -EINVAL, the packet freed; its credit fields were taken above.
    s_.n.frees.add();
    charge(k.virtio_guest_free, Cat::Sys);
    co_await release_sock(*this, sk);
    co_return;
  }
  if (p.op == Op::CreditUpdate) {
    credit_update_received(*this, c, sk);
    s_.n.frees.add();
    charge(k.virtio_guest_free, Cat::Sys);
    co_await release_sock(*this, sk);
    co_return;
  }
  // virtio_transport_recv_enqueue(): with SOCK_SEQPACKET a packet ending a
  // message counts one more whole message, and a small packet is never
  // copied into a tail that ends one (VIRTIO_VSOCK_SEQ_EOM).
  if (p.eom)
    ++sk.msg_count;
  const bool small = kn.small_pkt_copy && len <= kn.small_pkt_max;
  if (small && !sk.rxq.empty() && !sk.rxq.back().eom && sk.tail_cap > 0 && len <= sk.tail_cap - sk.tail_fill) {
    const CopySplit sp = where(p.wrote, cpu(), 0, len, k.virtio_l2_bytes);
    const WriteStamp copied = note_write(cpu(), len, 2.0 * len - sp.hot);
    s_.n.l3_copy_bytes.add(static_cast<std::uint64_t>(sp.l3));
    co_await run(k.guest_rx_copy(len, sp) + k.virtio_guest_free, Cat::Sys); // the rx buffer vhost wrote
    s_.n.copies.add();
    s_.n.small_pkt_copies.add();
    s_.n.frees.add();
    sk.tail_fill += len;
    sk.rxq.push_back(Sock::Entry{len, 0, true, p.eom, copied});
  } else {
    sk.rxq.push_back(Sock::Entry{len, 0, false, p.eom, p.wrote});
    sk.tail_fill = len;
    sk.tail_cap = kn.mergeable_rx ? len : rx_buffer_room(kn);
  }
  if (wake_due(sk)) { // sk_data_ready
    s_.stamp(p, Stage::GuestWakeup, now());
    sk.app->wake_at(now());
  }
  co_await release_sock(*this, sk);
}

// virtio_transport_tx_work(): under tx_lock, free the packets vhost has
// consumed (a MSG_ZEROCOPY packet's pages unpinned, its notification queued
// on the sender's error queue only now); if any, queue the send work (the
// tx queue has room again).
Task<> Kworker::tx_work()
{
  const Costs& k = s_.k;
  Virtqueue& vq = *s_.txq;
  co_await settle();
  if (s_.tx_lock.owner)
    s_.n.tx_lock_contended.add();
  co_await mutex_lock(*this, lat_, s_.tx_lock);
  const Time t0 = now();
  std::uint32_t freed = 0;
  double zerocopy = 0;
  do {
    vq.disable_cb();
    while (auto u = vq.get_buf(t0)) {
      const auto id = static_cast<std::uint32_t>(u->token);
      const Pkt& p = s_.slab[id];
      if (p.frags > 0 || p.zc_notify)
        zerocopy += zerocopy_free(s_.n, p, s_.conns[static_cast<std::size_t>(p.conn)].guest,
                                  k.virtio_guest_zcopy_unpin_page, k.virtio_guest_zcopy_notify);
      s_.slab.release(id);
      ++freed;
    }
  } while (!vq.enable_cb());
  s_.n.frees.add(freed);
  co_await run(freed * (k.virtio_guest_tx_done + k.virtio_guest_free) + zerocopy, Cat::Sys);
  co_await mutex_unlock(*this, s_.tx_lock);
  co_await settle(); // the IPI of waking a waiter for tx_lock
  if (freed)
    queue_work(s_, GuestWork::Send, pool_, now());
}

} // namespace vsim::virtio_vsock::detail
