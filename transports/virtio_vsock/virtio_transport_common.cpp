// The socket layer both ends run (net/vmw_vsock/af_vsock.c
// vsock_stream_sendmsg / vsock_stream_recvmsg over
// net/vmw_vsock/virtio_transport_common.c): packetisation, credit flow
// control, the receive queue and credit updates.
#include "transports/virtio_vsock/internal.hpp"

#include <algorithm>
#include <string>

namespace vsim::virtio_vsock::detail {

namespace {

// Block until woken; the wake-up latency and the context switch are the
// sleeper's, drawn from its own stream so that the draws do not depend on
// which thread woke it. `forget_others`: drop the wake-ups pending once it
// wakes (a thread whose wakers only wake it while it sleeps).
Task<> woken(Waiter w, bool forget_others)
{
  co_await w.t.settle(); // what it owes (an IPI of a wake-up it just made) before it sleeps
  // schedule() of a task that is not already woken again: a workqueue
  // worker tells its pool (wq_worker_sleeping), and once it runs again
  // (wq_worker_running, after the wake-up's latency).
  const bool blocks = w.hooks && !w.t.wakeup_due();
  if (blocks)
    w.hooks->sleeping();
  const bool slept = co_await w.t.wait();
  if (forget_others)
    w.t.clear_wakeups();
  if (slept) {
    // A vCPU with nothing to run has halted (HLT exits to KVM's
    // kvm_vcpu_halt). Within its halt-polling window KVM is still polling
    // and the wake-up's IPI resumes it at once: poll_wakeup more; past the
    // window its thread was scheduled out (kvm_vcpu_block) and must be
    // brought back (kvm_vcpu_kick, the host scheduler, C-state exit, VM
    // entry) before the woken thread runs: halted_wakeup more.
    // An idle host CPU, or a halted vCPU's core once KVM has stopped
    // polling, is in the idle state the host's governor chose for it: its
    // exit latency comes first (idle_exit).
    Cpu& cpu = w.t.cpu();
    const Time t = w.t.now();
    const bool halted = cpu.idle_at(t);
    double extra = 0;
    if (halted) {
      extra = w.halted_wakeup;
      if (w.shared) {
        Shared& s = *w.shared;
        const bool polled = s.halt_poll.at(static_cast<std::size_t>(cpu.index())).wake(t - cpu.idle_since());
        (polled ? s.n.halt_polls_caught : s.n.halt_polls_missed).add();
        extra = polled ? w.poll_wakeup : extra + idle_exit(cpu, t, s.round_trips);
      } else if (cpu.side() == Side::Host) {
        extra += idle_exit(cpu, t, w.round_trips);
      }
    }
    co_await w.t.sleep(w.lat(w.wakeup_latency + extra));
    w.t.charge(w.context_switch, Cat::Sys); // settled by the caller's next look at shared state
  }
  if (blocks)
    w.hooks->running();
}

} // namespace

Task<> sleep_until_woken(Waiter w)
{
  co_await woken(w, true);
}

namespace {

// Take a sleeping lock (net/core/sock.c lock_sock_nested, __lock_sock;
// kernel/locking/mutex.c __mutex_lock_slowpath): sleep on the lock's wait
// queue while another thread owns it; a release wakes one waiter, which
// looks again (another thread may have taken it first). Other wake-ups the
// thread gets meanwhile (data, credit, queued work) make it look again too;
// none is forgotten, so a service thread's later work still wakes it.
Task<> sleep_lock(Waiter w, SleepLock& l, const char* what)
{
  co_await w.t.settle();
  if (l.owner == &w.t)
    throw std::logic_error(std::string("invariant violated: ") + what + " taken twice by " + w.t.name());
  if (l.owner)
    ++l.lock_waits;
  while (l.owner) {
    if (std::find(l.lock_waiters.begin(), l.lock_waiters.end(), &w.t) == l.lock_waiters.end())
      l.lock_waiters.push_back(&w.t);
    co_await woken(w, false);
    co_await w.t.settle();
  }
  if (auto it = std::find(l.lock_waiters.begin(), l.lock_waiters.end(), &w.t); it != l.lock_waiters.end())
    l.lock_waiters.erase(it);
  l.owner = &w.t;
}

// The owner drops the lock and wakes one waiter.
Task<> sleep_unlock(SimThread& t, SleepLock& l, const char* what)
{
  co_await t.settle();
  if (l.owner != &t)
    throw std::logic_error(std::string("invariant violated: ") + what + " by " + t.name() +
                           ", which does not hold the lock");
  l.owner = nullptr;
  if (!l.lock_waiters.empty()) {
    SimThread* w = l.lock_waiters.front();
    l.lock_waiters.pop_front();
    w->wake_at(t.now());
  }
}

} // namespace

Task<> lock_sock(Waiter w, Sock& sk)
{
  co_await sleep_lock(w, sk, "lock_sock");
}

Task<> lock_sock_for_recv(Waiter w, Sock& sk, const Pkt& p, bool credit_locked)
{
  if (!credit_locked)
    sk.space_update(p); // before the lock: a writer inside sendmsg sees it
  co_await lock_sock(w, sk);
  if (credit_locked)
    sk.space_update(p);
}

Task<> release_sock(SimThread& t, Sock& sk)
{
  co_await sleep_unlock(t, sk, "release_sock");
}

Task<> mutex_lock(SimThread& t, Latency& lat, SleepLock& m)
{
  co_await sleep_lock(Waiter{t, lat, 0, 0, 0}, m, "mutex_lock");
}

Task<> mutex_unlock(SimThread& t, SleepLock& m)
{
  co_await sleep_unlock(t, m, "mutex_unlock");
}

bool mutex_trylock(SimThread& t, SleepLock& m)
{
  if (m.owner)
    return false;
  m.owner = &t;
  return true;
}

// kmalloc_size_roundup() (mm/slab_common.c): kmalloc-8 .. kmalloc-8k, with
// the 96- and 192-byte caches; above, whole pages of order get_order(size).
std::uint64_t kmalloc_size_roundup(std::uint64_t bytes)
{
  if (bytes > kKmallocMaxCacheSize) {
    std::uint64_t block = 4096;
    while (block < bytes)
      block *= 2;
    return block;
  }
  if (bytes > 64 && bytes <= 96)
    return 96;
  if (bytes > 128 && bytes <= 192)
    return 192;
  std::uint64_t obj = 8;
  while (obj < bytes)
    obj *= 2;
  return obj;
}

std::uint64_t pkt_kmalloc_bytes(bool skb, std::uint32_t len)
{
  if (!skb)
    return len;
  const std::uint64_t data = (kHeaderBytes + len + 63) / 64 * 64; // SKB_DATA_ALIGN, 64-byte cache lines
  return data + kSkbSharedInfoBytes;
}

unsigned page_order(std::uint64_t bytes)
{
  unsigned order = 0;
  while ((std::uint64_t{4096} << order) < bytes)
    ++order;
  return order;
}

// kmalloc() -> kmalloc_large() -> alloc_pages() -> rmqueue(): a block of
// order <= PAGE_ALLOC_COSTLY_ORDER comes from the per-CPU lists once
// pcp_allowed_order() admits high orders (5.13), else (order 0 aside, which
// kmalloc_large never asks for) from the zone under zone->lock.
PktAllocs pkt_allocs(const Knobs& kn, std::uint32_t len)
{
  const std::uint64_t bytes = pkt_kmalloc_bytes(kn.skb, len);
  if (bytes == 0)
    return {1, 0, 0, 0};
  const std::uint64_t block = kmalloc_size_roundup(bytes);
  if (bytes <= kKmallocMaxCacheSize)
    return {2, 0, 0, block};
  if (kn.pcp_high_order && page_order(bytes) <= kPageAllocCostlyOrder)
    return {1, 0, 1, block};
  return {1, 1, 0, block};
}

std::uint32_t rx_buffer_room(const Knobs& kn)
{
  if (!kn.skb)
    return kn.rx_buf_size;
  // __alloc_skb: the head is what kmalloc returned less skb_shared_info;
  // skb_reserve(VIRTIO_VSOCK_SKB_HEADROOM) keeps the header before the data.
  const std::uint64_t head = kmalloc_size_roundup(pkt_kmalloc_bytes(true, kn.rx_buf_size));
  return static_cast<std::uint32_t>(head - kSkbSharedInfoBytes - kHeaderBytes);
}

// virtio_transport_send_pkt_info() for one packet: allocate, fill (queue:
// the caller). The payload copy from user memory is charged by the caller.
std::uint32_t new_pkt(Slab& slab, Sock& sock, int conn, Pkt p)
{
  p.conn = conn;
  p.fwd_cnt = sock.fwd_cnt; // virtio_transport_inc_tx_pkt(): piggyback fwd_cnt
  p.buf_alloc = sock.buf_alloc;
  p.stream_end = sock.tx_cnt;
  sock.last_fwd_cnt = sock.fwd_cnt;
  return slab.alloc(p);
}

void queue_pkt(std::deque<Queued>& list, Slab& slab, Sock& sock, int conn, Pkt p)
{
  list.push_back(Queued{new_pkt(slab, sock, conn, p)});
}

Task<> AppThread::body()
{
  co_await sleep(c_.index * s_.kn.start_interval); // connections opened one after another
  switch (role_) {
  case Role::Writer:
    co_await send_all();
    break;
  case Role::Reader:
    co_await receive_all();
    break;
  case Role::Initiator:
    co_await initiate(*this, *this, s_.kn.rt, *s_.round_trips, s_.seed, s_.iteration, c_.index);
    break;
  case Role::Responder:
    co_await respond(*this, s_.kn.rt);
    break;
  }
  if (role_ == Role::Initiator || role_ == Role::Responder) {
    co_await settle();
    c_.done_at = std::max(c_.done_at, now());
  }
}

Task<> AppThread::send_message(std::uint64_t bytes)
{
  if (s_.kn.zerocopy)
    co_await read_errqueue();
  co_await send_call(bytes, true); // blocking: returns once every byte is queued
}

Task<> AppThread::receive_message(std::uint64_t bytes)
{
  for (std::uint64_t left = bytes; left > 0;)
    left -= co_await recv_call(left, true);
}

namespace {
// iperf3's iperf_send(): up to test->multisend (10, iperf_defaults) write()s
// per select() when no rate is set.
constexpr int kMultisend = 10;
} // namespace

Task<> AppThread::send_all()
{
  const Knobs& kn = s_.kn;
  // The bytes still to send: up to the connection's target, which the
  // run-length monitor may lower (never below what is committed).
  std::uint64_t sent = 0;
  auto next = [&] {
    const std::uint64_t len = std::min(c_.target - sent, kn.message_size);
    c_.committed = std::max(c_.committed, sent + len);
    return len;
  };
  if (!kn.iperf3) {
    while (sent < c_.target) {
      if (kn.zerocopy)
        co_await read_errqueue();
      sent += co_await send_call(next(), true);
    }
    co_return;
  }
  // iperf_run_client() with its streams non-blocking: select() for
  // writing, then iperf_send(): per pass of its multisend loop one
  // iperf_tcp_send() of a block, whose Nwrite() (src/net.c) write()s the
  // block's rest again after a partial write until all of it is taken or a
  // write() finds no credit (EAGAIN: Nwrite returns what it wrote, 0 too,
  // and the multisend loop goes on regardless). iperf3's own work is once
  // per block.
  while (sent < c_.target) {
    co_await select_until(true);
    for (int i = 0; i < kMultisend && sent < c_.target; ++i) {
      bool first = true;
      for (std::uint64_t block = next(); block > 0; first = false) {
        const std::uint64_t took = co_await send_call(block, false, first);
        if (took == 0) {
          s_.n.eagain_writes.add();
          break;
        }
        sent += took;
        block -= took;
      }
    }
  }
}

// The kernel's preemption model (guest.preemption; kernel/Kconfig.preempt).
// With CONFIG_PREEMPT_VOLUNTARY (the default here) a task in a system call
// gives its CPU to a woken one at its next might_sleep() (_cond_resched():
// the GFP_KERNEL allocation of each packet in virtio_transport_alloc_pkt,
// lock_sock), which the CPU's turn-taking step by step stands for. With
// CONFIG_PREEMPT_NONE it keeps the CPU until it sleeps or returns to user
// space (exit_to_usermode_loop: schedule() on TIF_NEED_RESCHED): the
// send work virtio_transport_send_pkt queues on the writer's vCPU runs
// only after the send() returns, then takes every packet it queued. The
// guest only: the host's threads have CPUs of their own here.
Task<> AppThread::syscall_entry()
{
  if (!s_.kn.preempt_none || &sk_ != &c_.guest)
    co_return;
  co_await settle(); // the user work before it is preemptible
  keep_cpu();
}

Task<> AppThread::syscall_exit()
{
  if (!keeps_cpu())
    co_return;
  co_await settle();
  release_cpu();
}

Task<std::uint64_t> AppThread::send_call(std::uint64_t len, bool blocking, bool app_work)
{
  const Knobs& kn = s_.kn;
  s_.stamp(c_.index, &sk_ == &c_.guest ? Stage::GuestSend : Stage::HostSend, world().now());
  // The application's own work per call: the plain loop's, or iperf3's per
  // block (StackCosts, by workload.app).
  if (app_work)
    charge(sc_.user_per_call, Cat::User);
  co_await syscall_entry();
  charge(sc_.send_syscall, Cat::Sys);
  s_.n.syscalls.add();
  co_await lock_sock(waiter(), sk_); // held for the whole call, except while waiting
  std::uint64_t sent = 0;
  // MSG_ZEROCOPY: the bytes left of the current enqueue call (since 6.7
  // virtio_transport_send_pkt_info sends min(rest, credit) in packets) and
  // whether it sends pinned pages.
  std::uint64_t call_left = 0;
  bool zcopy = false;
  while (sent < len) {
    co_await settle();
    const std::uint64_t credit = sk_.credit();
    if (credit == 0) {
      if (!blocking)
        break; // -EAGAIN, or the bytes written so far
      // No credit: release the lock and sleep until a credit update
      // arrives (what was queued so far goes out meanwhile). A message
      // (SOCK_SEQPACKET) cut here goes on with its next packet.
      s_.n.credit_stalls.add();
      mark("virtio_transport_get_credit: none, sleep");
      sk_.prepared = true; // prepare_to_wait() before release_sock(): a credit update from now on wakes it
      co_await release_sock(*this, sk_);
      co_await sleep_until_woken(waiter());
      sk_.prepared = false;
      co_await lock_sock(waiter(), sk_);
      continue;
    }
    if (kn.zerocopy && call_left == 0) {
      call_left = std::min(len - sent, credit); // never more than the credit, which only grows meanwhile
      zcopy = can_zcopy(len - sent, credit, sent == 0);
      (zcopy ? s_.n.zerocopy_sends : s_.n.zerocopy_fallbacks).add();
    }
    const std::uint64_t chunk = zcopy ? std::min<std::uint64_t>(max_pkt_, kMaxSkbFrags * kPageSize) : max_pkt_;
    const auto n =
        static_cast<std::uint32_t>(std::min<std::uint64_t>({len - sent, chunk, kn.zerocopy ? call_left : credit}));
    // virtio_transport_alloc_skb(): EOM on the packet that ends the message.
    Pkt p{.len = n, .eom = kn.seqpacket && sent + n == len};
    if (kn.zerocopy)
      call_left -= n;
    co_await fill_pkt(p, zcopy, kn.zerocopy && call_left == 0);
    sk_.tx_cnt += n;
    mark("virtio_transport_send_pkt_info", "bytes", n);
    trace_credit(*this, c_, sk_);
    co_await queue_packet(p);
    s_.n.packets.add();
    sent += n;
  }
  co_await release_sock(*this, sk_);
  co_await syscall_exit();
  co_return sent;
}

// virtio_transport_alloc_skb() and virtio_transport_fill_skb() for one
// packet: the packet and its buffer allocated and the payload copied from
// user memory, or (zerocopy) a header-only packet referencing the user's
// pages, pinned (__zerocopy_sg_from_iter, get_user_pages_fast). The last
// packet of an enqueue call with MSG_ZEROCOPY carries the call's
// notification (virtio_transport_init_zcopy_skb: msg_zerocopy_realloc
// allocates it), whether the call went zerocopy or not.
Task<> AppThread::fill_pkt(Pkt& p, bool zcopy, bool notify)
{
  double cost = 0;
  if (zcopy) {
    p.frags = static_cast<std::uint16_t>(pages_of(p.len));
    // a header-only packet (an sk_buff whose data are the pinned pages)
    const PktAllocs a = pkt_allocs(s_.kn, 0);
    cost = sc_.pkt + sc_.allocs(a) + p.frags * sc_.pin_page;
    count_allocs(s_.n, a);
    s_.n.pages_pinned.add(p.frags);
    sk_.pinned_pages += p.frags;
  } else {
    // kzalloc pkt and kmalloc buf, or (6.3) virtio_transport_alloc_skb; copy_from_iter
    const PktAllocs a = pkt_allocs(s_.kn, p.len);
    cost = sc_.pkt + sc_.allocs(a) + sc_.copy(p.len);
    count_allocs(s_.n, a);
    s_.n.copies.add();
    // into this core's L2: the block zeroed whole, or the payload's lines
    const double zeroed = sc_.init_on_alloc > 0 ? static_cast<double>(a.zero_bytes) : 0.0;
    p.wrote = note_write(cpu(), p.len, std::max(zeroed, static_cast<double>(p.len)));
  }
  if (notify) {
    cost += sc_.alloc;
    s_.n.allocations.add();
    p.zc_notify = true;
    p.zc_id = sk_.zc_next_id++;
  }
  co_await run(cost, Cat::Sys);
}

// virtio_transport_can_zcopy(): only from the start of the user's buffer
// (iov_offset 0: the send()'s first enqueue call), only if the whole rest
// fits this call's credit, and in the guest only if its pages (at most
// MAX_SKB_FRAGS) and the header fit the tx queue
// (virtio_transport_can_msgzerocopy; vhost has no such check).
bool AppThread::can_zcopy(std::uint64_t rest, std::uint64_t credit, bool first) const
{
  if (!first || rest > credit)
    return false;
  if (&sk_ == &c_.host)
    return true;
  const std::uint32_t pages = std::min(pages_of(rest), kMaxSkbFrags);
  return pages + 1 <= s_.kn.queue_size;
}

// Before each send(), the benchmark reads the notifications queued so far:
// one recvmsg(MSG_ERRQUEUE) per error queue entry (sock_recv_errqueue; as
// after a poll() that reported POLLERR, whose cost is not charged). An
// entry covers a range of notification ids (__msg_zerocopy_callback
// extends the tail entry), so one read may complete many send()s.
Task<> AppThread::read_errqueue()
{
  co_await settle();
  while (!sk_.errqueue.empty()) {
    sk_.errqueue.pop_front();
    s_.n.errqueue_reads.add();
    s_.n.syscalls.add();
    co_await run(sc_.errqueue_recv, Cat::Sys);
  }
}

double zerocopy_free(Counters& n, const Pkt& p, Sock& sender, double unpin_page, double notify)
{
  if (sender.pinned_pages < p.frags)
    throw std::logic_error("invariant violated: MSG_ZEROCOPY unpins only pages it pinned");
  sender.pinned_pages -= p.frags;
  if (!p.zc_notify)
    return p.frags * unpin_page;
  if (p.zc_id != sender.zc_done_id)
    throw std::logic_error("invariant violated: MSG_ZEROCOPY notifications complete in the order of the sends");
  ++sender.zc_done_id;
  if (!sender.errqueue.empty() && sender.errqueue.back().second + 1 == p.zc_id)
    sender.errqueue.back().second = p.zc_id; // skb_zerocopy_notify_extend
  else
    sender.errqueue.emplace_back(p.zc_id, p.zc_id); // sock_queue_err_skb
  n.zerocopy_completions.add();
  return p.frags * unpin_page + notify;
}

// virtio_transport_stream_do_dequeue(): bytes from the queued packets, in
// order, a packet freed once wholly read.
Task<std::uint64_t> AppThread::dequeue_stream(std::uint64_t len)
{
  std::uint64_t got = 0;
  for (;;) {
    if (got >= len)
      break;
    co_await settle();
    if (sk_.rxq.empty())
      break;
    Sock::Entry& e = sk_.rxq.front(); // stays put: nobody else touches the queue under the lock
    auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(len - got, e.len - e.off));
    const CopySplit sp = where(e.wrote, cpu(), e.off, n, sc_.l2_bytes);
    cpu().fill_cache(n - sp.hot); // the source's lines; the user's buffer stays hot
    s_.n.l3_copy_bytes.add(static_cast<std::uint64_t>(sp.l3));
    co_await run((e.merged ? 0 : sc_.dequeue_pkt) + sc_.rx_copy(n, sp), Cat::Sys); // memcpy_to_msg
    s_.n.copies.add();
    e.off += n;
    got += n;
    if (e.off == e.len) {
      // virtio_transport_dec_rx_pkt(): fwd_cnt counts a packet once it is
      // wholly read, not the bytes read of it so far.
      sk_.fwd_cnt += e.len;
      bool merged = e.merged; // its buffer was freed when it was copied
      sk_.rxq.pop_front();
      if (!merged) {
        charge(sc_.free, Cat::Sys); // virtio_transport_free_pkt: struct and buffer
        s_.n.frees.add();
      }
    }
  }
  co_return got;
}

// virtio_transport_seqpacket_do_dequeue(): packets up to the one with EOM,
// each copied as far as the user's buffer goes (the rest is dropped), freed
// and counted in fwd_cnt; then one message fewer is queued.
Task<std::uint64_t> AppThread::dequeue_message(std::uint64_t len)
{
  std::uint64_t got = 0;
  for (bool eom = false; !eom;) {
    co_await settle();
    if (sk_.rxq.empty())
      throw std::logic_error("invariant violated: a message counted in msg_count is queued up to its EOM");
    const Sock::Entry e = sk_.rxq.front();
    sk_.rxq.pop_front();
    const std::uint64_t n = std::min<std::uint64_t>(len - got, e.len - e.off);
    const CopySplit sp = where(e.wrote, cpu(), e.off, static_cast<double>(n), sc_.l2_bytes);
    cpu().fill_cache(static_cast<double>(n) - sp.hot);
    s_.n.l3_copy_bytes.add(static_cast<std::uint64_t>(sp.l3));
    co_await run((e.merged ? 0 : sc_.dequeue_pkt) + (n > 0 ? sc_.rx_copy(static_cast<double>(n), sp) : 0.0), Cat::Sys);
    if (n > 0)
      s_.n.copies.add();
    got += n;
    sk_.fwd_cnt += e.len;
    if (!e.merged) {
      charge(sc_.free, Cat::Sys);
      s_.n.frees.add();
    }
    eom = e.eom;
  }
  --sk_.msg_count;
  s_.n.messages.add();
  co_return got;
}

Task<> AppThread::select_until(bool writable)
{
  // do_select(): poll the socket (vsock_poll takes the socket lock); if it
  // is not ready, sleep until a wake-up on the socket, then poll again.
  co_await syscall_entry();
  charge(sc_.poll_syscall, Cat::Sys);
  s_.n.polls.add();
  for (;;) {
    co_await lock_sock(waiter(), sk_);
    const bool ready = writable ? sk_.credit() > 0 : !sk_.rxq.empty();
    sk_.prepared = !ready; // poll_wait() under the lock: a wake-up from then on is not lost
    co_await release_sock(*this, sk_);
    if (ready)
      break;
    if (writable)
      s_.n.credit_stalls.add();
    else
      s_.n.reader_sleeps.add();
    co_await sleep_until_woken(waiter());
    sk_.prepared = false;
  }
  co_await syscall_exit();
}

Task<> AppThread::receive_all()
{
  const Knobs& kn = s_.kn;
  while (c_.delivered < c_.target) {
    if (!kn.iperf3) {
      co_await recv_call(kn.message_size, true);
      continue;
    }
    // iperf_run_server(): select() for reading, then iperf_tcp_recv():
    // Nread() reads until a whole block has come (blocking read()s in a
    // tight loop: iperf3's own work is once per block, not per read()).
    co_await select_until(false);
    charge(sc_.user_per_call, Cat::User); // iperf3's own work per block (virtio_*_iperf3_user_per_call)
    std::uint64_t block = std::min(kn.message_size, c_.target - c_.delivered);
    while (block > 0)
      block -= co_await recv_call(block, false);
  }
  co_await settle();
  stream_done(s_.conns, c_, now(), s_.end_together, s_.kn.message_size);
}

// virtio_transport_stream_do_dequeue()'s test for
// virtio_transport_send_credit_update(): every read (2018); when the free
// space the peer knows of is below the threshold (5.4); from 6.8 only if
// fwd_cnt moved, and then also when fewer than SO_RCVLOWAT bytes (1: none)
// remain queued (low_rx_bytes).
bool AppThread::credit_update_due() const
{
  const Knobs& kn = s_.kn;
  const std::uint64_t delta = sk_.fwd_cnt - sk_.last_fwd_cnt;
  const bool low_space = sk_.buf_alloc - delta < kn.credit_threshold;
  if (kn.credit_every_read)
    return true;
  if (kn.credit_rcvlowat)
    return delta > 0 && (low_space || sk_.rxq.empty());
  return low_space;
}

Task<std::uint64_t> AppThread::recv_call(std::uint64_t len, bool user_work)
{
  const Knobs& kn = s_.kn;
  if (user_work)
    charge(sc_.user_per_call, Cat::User); // the plain loop's per recv()
  co_await syscall_entry();
  charge(sc_.recv_syscall, Cat::Sys);
  s_.n.syscalls.add();
  co_await lock_sock(waiter(), sk_); // the queue as of the work before
  // vsock_connectible_wait_data(): data, or with SOCK_SEQPACKET a whole
  // message (virtio_transport_seqpacket_has_data: msg_count).
  while (kn.seqpacket ? sk_.msg_count == 0 : sk_.rxq.empty()) {
    s_.n.reader_sleeps.add();
    sk_.prepared = true; // prepare_to_wait() before release_sock(): data from now on wakes it
    co_await release_sock(*this, sk_);
    co_await sleep_until_woken(waiter());
    sk_.prepared = false;
    co_await lock_sock(waiter(), sk_);
  }
  s_.stamp(c_.index, &sk_ == &c_.guest ? Stage::GuestRecv : Stage::HostRecv, world().now());
  std::uint64_t got = 0;
  if (kn.seqpacket)
    got = co_await dequeue_message(len);
  else
    got = co_await dequeue_stream(len);
  c_.delivered += got;
  if (s_.run_length)
    s_.run_length->delivered(c_.index, got, world().now());
  // virtio_transport_send_credit_update(): by the kernel's rule
  // (credit_update_due), and with SOCK_SEQPACKET after every message
  // (virtio_transport_seqpacket_do_dequeue).
  if (kn.seqpacket || credit_update_due()) {
    const PktAllocs a = pkt_allocs(kn, 0);
    co_await run(sc_.pkt + sc_.allocs(a), Cat::Sys);
    count_allocs(s_.n, a);
    s_.n.credit_updates.add();
    mark("virtio_transport_send_credit_update");
    co_await queue_packet(Pkt{.op = Op::CreditUpdate});
  }
  co_await release_sock(*this, sk_);
  co_await syscall_exit();
  co_return got;
}

} // namespace vsim::virtio_vsock::detail
