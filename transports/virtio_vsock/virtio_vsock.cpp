#include "transports/virtio_vsock/virtio_vsock.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/virtqueue.hpp"
#include "sim/breakdown.hpp"
#include "sim/count.hpp"
#include "sim/rng.hpp"
#include "sim/summary.hpp"
#include "sim/world.hpp"
#include "transports/simulate.hpp"

namespace vsim::virtio_vsock {

namespace {

using models::Virtqueue;

struct Costs {
  double clock_ghz;
  // guest
  double user_per_call, copy_fixed, copy_bpc, wakeup_latency, context_switch;
  double send_syscall, recv_syscall, alloc, free, pkt, vq_add, kick, work_run;
  double rx_buf, rx_pkt, tx_done, irq_exit, isr, dequeue_pkt;
  // host
  double h_user_per_call, h_send_syscall, h_recv_syscall, h_alloc, h_free, h_pkt, h_copy_fixed, h_copy_bpc;
  double h_dequeue_pkt, h_worker_run, h_tx_pkt, h_rx_buf, h_guest_copy_bpc, h_signal, h_kick_latency;
  double h_interrupt_latency, h_wakeup_latency;
  double latency_jitter, iteration_jitter;

  static Costs from(const Params& p)
  {
    auto c = [&](const char* name) { return p.number(std::string("costs.") + name); };
    Costs k{};
    k.clock_ghz = c("clock_ghz");
    k.user_per_call = c("guest_user_per_call");
    k.copy_fixed = c("guest_copy_fixed");
    k.copy_bpc = c("guest_copy_bytes_per_cycle");
    k.wakeup_latency = c("guest_wakeup_latency");
    k.context_switch = c("guest_context_switch");
    k.send_syscall = c("virtio_guest_send_syscall");
    k.recv_syscall = c("virtio_guest_recv_syscall");
    k.alloc = c("virtio_guest_alloc");
    k.free = c("virtio_guest_free");
    k.pkt = c("virtio_guest_pkt");
    k.vq_add = c("virtio_guest_vq_add");
    k.kick = c("virtio_guest_kick");
    k.work_run = c("virtio_guest_work_run");
    k.rx_buf = c("virtio_guest_rx_buf");
    k.rx_pkt = c("virtio_guest_rx_pkt");
    k.tx_done = c("virtio_guest_tx_done");
    k.irq_exit = c("virtio_guest_irq_exit");
    k.isr = c("virtio_guest_isr");
    k.dequeue_pkt = c("virtio_guest_dequeue_pkt");
    k.h_user_per_call = c("virtio_host_user_per_call");
    k.h_send_syscall = c("virtio_host_send_syscall");
    k.h_recv_syscall = c("virtio_host_recv_syscall");
    k.h_alloc = c("virtio_host_alloc");
    k.h_free = c("virtio_host_free");
    k.h_pkt = c("virtio_host_pkt");
    k.h_copy_fixed = c("virtio_host_copy_fixed");
    k.h_copy_bpc = c("virtio_host_copy_bytes_per_cycle");
    k.h_dequeue_pkt = c("virtio_host_dequeue_pkt");
    k.h_worker_run = c("virtio_host_worker_run");
    k.h_tx_pkt = c("virtio_host_tx_pkt");
    k.h_rx_buf = c("virtio_host_rx_buf");
    k.h_guest_copy_bpc = c("virtio_host_guest_copy_bytes_per_cycle");
    k.h_signal = c("virtio_host_signal");
    k.h_kick_latency = c("virtio_host_kick_latency");
    k.h_interrupt_latency = c("virtio_host_interrupt_latency");
    k.h_wakeup_latency = c("host_wakeup_latency");
    k.latency_jitter = c("latency_jitter");
    k.iteration_jitter = c("iteration_jitter");
    return k;
  }

  // Whole cycles, so that sums of costs stay exact.
  double guest_copy(double bytes) const { return copy_fixed + std::ceil(bytes / copy_bpc); }
  double vhost_copy(double bytes) const { return std::ceil(bytes / h_guest_copy_bpc); }
  double seconds(double cycles) const { return cycles / (clock_ghz * 1e9); }
};

struct Knobs {
  std::uint64_t message_size, total_bytes;
  std::uint32_t rx_buf_size, max_pkt_size, host_pkt_size;
  bool mergeable_rx, host_split, credit_every_read, small_pkt_copy, batch_used, event_idx, indirect;
  std::uint16_t queue_size;
  std::uint32_t weight_packets;
  std::uint64_t weight_bytes;
  std::uint32_t buf_alloc, credit_threshold, small_pkt_max;
  double start_interval;  // cycles between the starts of successive connections
};

// Event counts, stamped (sim/count.hpp): what daemons do after the run's
// end is left out.
struct Counters {
  Count syscalls, allocations, frees, copies, kicks, interrupts;
  Count rx_interrupts, tx_interrupts, credit_updates, worker_wakeups, worker_runs;
  Count data_packets, rx_buffers, credit_stalls, reader_sleeps, small_copies;
  Count rx_buffer_stalls, guest_work_runs;
};

enum class Op : std::uint8_t { Rw, CreditUpdate };

// A packet (struct virtio_vsock_pkt) or a guest rx buffer's contents.
struct Pkt {
  int conn = 0;
  Op op = Op::Rw;
  std::uint32_t len = 0;   // payload bytes
  std::uint64_t fwd_cnt = 0;  // piggybacked credit fields of the sender
  std::uint32_t buf_alloc = 0;
  bool more = false;  // mergeable rx: the packet continues in the next buffer
  bool cont = false;  // mergeable rx: this buffer continues a packet (no header)
};

// Storage for packets and rx buffers in flight; ids are virtqueue tokens.
class Slab {
public:
  std::uint32_t alloc(const Pkt& p)
  {
    if (free_.empty()) {
      items_.push_back(p);
      return static_cast<std::uint32_t>(items_.size() - 1);
    }
    std::uint32_t id = free_.back();
    free_.pop_back();
    items_[id] = p;
    return id;
  }
  void release(std::uint32_t id) { free_.push_back(id); }
  Pkt& operator[](std::uint64_t id) { return items_[id]; }
  std::size_t live() const { return items_.size() - free_.size(); }

private:
  std::vector<Pkt> items_;
  std::vector<std::uint32_t> free_;
};

// A packet waiting on a send list (struct virtio_vsock / vhost_vsock
// send_pkt_list).
struct Queued {
  std::uint32_t id;
  std::uint32_t off = 0;  // bytes already copied out (host_split, mergeable_rx)
};

// One end of a connection (struct virtio_vsock_sock): what it sent, what it
// received, and its view of the peer's credit (virtio_transport_has_space).
struct Sock {
  // sender
  std::uint64_t tx_cnt = 0;
  std::uint64_t peer_fwd_cnt = 0;  // from the peer's packet headers
  std::uint32_t peer_buf_alloc = 0;
  // receiver
  std::uint64_t fwd_cnt = 0, last_fwd_cnt = 0;
  std::uint32_t buf_alloc = 0;
  struct Entry {
    std::uint32_t len;   // payload bytes
    std::uint32_t off = 0;
    bool merged = false;  // small_pkt_copy: copied into the previous buffer
  };
  std::deque<Entry> rxq;
  std::uint32_t tail_fill = 0;     // bytes in the buffer of the last queued packet
  std::uint32_t tail_cap = 0;      // its capacity
  SimThread* app = nullptr;        // the thread using this socket

  // virtio_transport_get_credit(): what may still be sent.
  std::int64_t credit_signed() const
  {
    return static_cast<std::int64_t>(peer_buf_alloc) - static_cast<std::int64_t>(tx_cnt - peer_fwd_cnt);
  }
  std::uint64_t credit() const
  {
    std::int64_t c = credit_signed();
    if (c < 0)
      throw std::logic_error("invariant violated: credit never negative (the sender is past its peer's window)");
    return static_cast<std::uint64_t>(c);
  }
};

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

struct Conn {
  int index;
  Sock guest, host;
  std::uint64_t delivered = 0;
  Time done_at = 0;
};

class GuestIrq;
class Vhost;

// What every thread of one simulation shares: the device (its two data
// virtqueues, the guest driver's and vhost's send lists), the connections.
struct Shared {
  Costs k;
  Knobs kn;
  std::uint64_t seed;
  std::uint32_t iteration;
  std::unique_ptr<Virtqueue> rxq, txq;
  Slab slab;
  std::deque<Queued> guest_send;  // virtio_vsock.send_pkt_list
  std::deque<Queued> host_send;   // vhost_vsock.send_pkt_list
  std::uint32_t rx_buf_nr = 0, rx_buf_max_nr = 0;
  std::deque<Conn> conns;
  GuestIrq* irq = nullptr;
  Vhost* vhost = nullptr;
  std::vector<SimThread*> host_apps;  // the host's application threads
  Counters n;
  CpuTime guest_kworker;  // send work run in application threads' stead
  bool send_work_running = false, send_work_again = false;
};

// Requests to a service thread that arrive at given times (doorbells,
// interrupts), consumed in time order once the thread's clock reaches them.
class Inbox {
public:
  void push(Time t, int kind) { q_.push(Req{t, seq_++, kind}); }
  // Pops every request due at or before t; returns their kinds as a bit set.
  unsigned take_due(Time t)
  {
    unsigned kinds = 0;
    while (!q_.empty() && q_.top().t <= t) {
      kinds |= 1u << q_.top().kind;
      q_.pop();
    }
    return kinds;
  }

private:
  struct Req {
    Time t;
    std::uint64_t seq;
    int kind;
    bool operator>(const Req& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::uint64_t seq_ = 0;
  std::priority_queue<Req, std::vector<Req>, std::greater<Req>> q_;
};

enum VqKind { kRx = 0, kTx = 1, kSend = 2 };

// Where guest-side work of the driver runs: an application thread (as the
// kworker of its vCPU, whose CPU time it is) or the interrupt context of
// vCPU 0. Both share the driver's routines below.
struct GuestCtx {
  SimThread& t;
  CpuTime* account;  // nullptr: the thread's own CPU time
  Latency& lat;
  void charge(double cycles, Cat c)
  {
    if (account)
      t.charge(cycles, c, *account);
    else
      t.charge(cycles, c);
  }
  Time at() const { return t.now(); }
};

// ---------------------------------------------------------------------------
// The vhost worker (drivers/vhost/vhost.c vhost_worker, drivers/vhost/vsock.c)
class Vhost : public SimThread {
public:
  Vhost(World& w, Cpu& cpu, Shared& s)
      : SimThread(w, "vhost", cpu), s_(s), lat_(s.seed, s.iteration, "vhost", s.k.latency_jitter)
  {
    set_daemon();
  }

  // A guest kick (ioeventfd -> vhost_poll_wakeup) or a host send()
  // (vhost_work_queue) queues a work item; the worker wakes at t.
  void ring(Time t, VqKind kind)
  {
    inbox_.push(t, kind);
    wake_at(t);
  }

protected:
  Task<> body() override;

private:
  Task<> handle_tx();
  Task<> do_send_pkt();
  // vhost_exceeds_weight(): this run has done its share; requeue and yield.
  bool exceeds_weight(std::uint64_t pkts, std::uint64_t bytes) const
  {
    const Knobs& kn = s_.kn;
    return (kn.weight_packets && pkts >= kn.weight_packets) || (kn.weight_bytes && bytes >= kn.weight_bytes);
  }
  Task<> signal_guest(VqKind vq);
  Task<> deliver_to_host(const Pkt& p);

  Shared& s_;
  Latency lat_;
  Inbox inbox_;
  bool tx_queued_ = false, send_queued_ = false;
};

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
  double cost = k.work_run;
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
      cost += k.vq_add;
      added = true;
    }
    c.charge(cost, Cat::Sys);
    co_await c.t.settle();  // kick_prepare reads vhost's avail_event as of the work's end
    if (added && s.txq->kick_prepare()) {
      c.charge(k.kick, Cat::Hypervisor);  // still under tx_lock
      co_await c.t.settle();
      s.n.kicks.add();
      s.vhost->ring(c.at() + c.lat(k.h_kick_latency), kTx);
    }
    if (!s.send_work_again)
      break;
    cost = k.work_run;  // the work item, queued again while it ran, runs once more
  }
  s.send_work_running = false;
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
  c.charge(added * (2 * k.alloc + k.vq_add), Cat::Sys);
  co_await c.t.settle();
  if (s.rxq->kick_prepare()) {
    c.charge(k.kick, Cat::Hypervisor);
    co_await c.t.settle();
    s.n.kicks.add();
    s.vhost->ring(c.at() + c.lat(k.h_kick_latency), kRx);
  }
}

// ---------------------------------------------------------------------------
// Interrupt context of guest vCPU 0: vring_interrupt, then the work items the
// callbacks queue (virtio_transport_rx_work, virtio_transport_tx_work), run
// by the kworker of that vCPU. They preempt any thread on vCPU 0.
class GuestIrq : public SimThread {
public:
  GuestIrq(World& w, Cpu& cpu, Shared& s)
      : SimThread(w, "virtio_irq", cpu), s_(s), lat_(s.seed, s.iteration, "guest_irq", s.k.latency_jitter)
  {
    set_daemon();
    become_interrupt_context();
  }

  void raise(Time t, VqKind vq)
  {
    inbox_.push(t, vq);
    wake_at(t);
  }

protected:
  Task<> body() override
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
        charge(k.irq_exit, Cat::Hypervisor);
        charge(k.isr, Cat::Irq);
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

private:
  Task<> rx_work();
  Task<> process_rx_buffer(std::uint32_t id);
  Task<> tx_work();
  Task<> deliver(const Pkt& p, std::uint32_t len);

  Shared& s_;
  Latency lat_;
  GuestCtx ctx_{*this, nullptr, lat_};
  Inbox inbox_;
  std::vector<std::uint32_t> taken_;  // rx buffers taken in one rx work run
  Pkt merging_;  // mergeable rx: the packet being reassembled
  std::uint32_t merging_len_ = 0;
  bool in_merge_ = false;
};

// virtio_transport_rx_work(): take used rx buffers, hand packets to their
// sockets (no copy), refill when fewer than half the buffers remain.
Task<> GuestIrq::rx_work()
{
  const Costs& k = s_.k;
  Virtqueue& vq = *s_.rxq;
  charge(k.work_run, Cat::Sys);
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
  charge(s_.k.rx_buf, Cat::Sys);  // settled with what the packet's delivery does first
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
  charge(k.rx_pkt, Cat::Sys);
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
    charge(k.free, Cat::Sys);
    co_return;
  }
  const bool small = kn.small_pkt_copy && len <= kn.small_pkt_max;
  if (small && !sk.rxq.empty() && sk.tail_cap > 0 && len <= sk.tail_cap - sk.tail_fill) {
    co_await run(k.guest_copy(len) + k.free, Cat::Sys);
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
  co_await run(k.work_run + freed * (k.tx_done + k.free), Cat::Sys);
  if (freed)
    co_await guest_send_work(s_, ctx_);
}

// ---------------------------------------------------------------------------
// The application threads (one writer and one reader per connection). Both
// ends run the same socket layer (af_vsock.c vsock_stream_sendmsg /
// vsock_stream_recvmsg over virtio_transport_common.c); what differs is the
// costs and how a packet reaches the other side.

// The costs of one end's socket layer.
struct StackCosts {
  double user_per_call, send_syscall, recv_syscall, alloc, free, pkt, dequeue_pkt, wakeup_latency, context_switch;
  double copy_fixed, copy_bpc;
  double copy(double bytes) const { return copy_fixed + std::ceil(bytes / copy_bpc); }

  static StackCosts guest(const Costs& k)
  {
    return {k.user_per_call, k.send_syscall, k.recv_syscall, k.alloc, k.free, k.pkt, k.dequeue_pkt,
            k.wakeup_latency, k.context_switch, k.copy_fixed, k.copy_bpc};
  }
  static StackCosts host(const Costs& k)
  {
    return {k.h_user_per_call, k.h_send_syscall, k.h_recv_syscall, k.h_alloc, k.h_free, k.h_pkt, k.h_dequeue_pkt,
            k.h_wakeup_latency, k.context_switch, k.h_copy_fixed, k.h_copy_bpc};
  }
};

class AppThread : public SimThread {
protected:
  AppThread(World& w, Cpu& cpu, Shared& s, Conn& c, Sock& sk, bool writer, StackCosts sc, std::uint32_t max_pkt,
            const char* side)
      : SimThread(w, fmt::format("{}_{}{}", side, writer ? "writer" : "reader", c.index), cpu), s_(s), c_(c), sk_(sk),
        writer_(writer), sc_(sc), max_pkt_(max_pkt),
        lat_(s.seed, s.iteration, fmt::format("conn{}.{}_{}", c.index, side, writer ? "writer" : "reader"),
             s.k.latency_jitter)
  {
    sk.app = this;
  }

  // How a packet this end built reaches the other side.
  virtual void queue_packet(Op op, std::uint32_t len) = 0;
  // Work queued by the syscall that runs once it returns (guest: the send
  // work item); before a writer sleeps for credit, and after a message or
  // a credit update. Whether there was any.
  virtual Task<bool> flush() { co_return false; }

  Task<> body() override
  {
    co_await sleep(c_.index * s_.kn.start_interval);  // connections opened one after another
    if (writer_)
      co_await send_all();
    else
      co_await receive_all();
  }

  Shared& s_;
  Conn& c_;
  Sock& sk_;
  bool writer_;
  StackCosts sc_;
  std::uint32_t max_pkt_;
  Latency lat_;

private:
  // send() in a loop: virtio_transport_send_pkt_info cuts each message into
  // packets of at most max_pkt_ bytes and the credit, each with two
  // allocations (packet, buffer) and a copy from user memory.
  Task<> send_all()
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
  Task<> receive_all()
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
};

// A guest application thread. The send work item queued by a syscall runs as
// the kworker of this vCPU right after the syscall (CPU time not charged to
// this thread).
class GuestApp : public AppThread {
public:
  GuestApp(World& w, Cpu& cpu, Shared& s, Conn& c, bool writer)
      : AppThread(w, cpu, s, c, c.guest, writer, StackCosts::guest(s.k), s.kn.max_pkt_size, "guest")
  {
  }

protected:
  void queue_packet(Op op, std::uint32_t len) override
  {
    queue_pkt(s_.guest_send, s_.slab, sk_, c_.index, op, len);
  }
  Task<bool> flush() override
  {
    co_await guest_send_work(s_, ctx_);
    co_return true;
  }

private:
  GuestCtx ctx_{*this, &s_.guest_kworker, lat_};
};

// The host's own af_vsock + virtio_transport_common, with
// vhost_transport_send_pkt handing packets to the worker.
class HostApp : public AppThread {
public:
  HostApp(World& w, Cpu& cpu, Shared& s, Conn& c, bool writer)
      : AppThread(w, cpu, s, c, c.host, writer, StackCosts::host(s.k), s.kn.host_pkt_size, "host")
  {
  }

protected:
  void queue_packet(Op op, std::uint32_t len) override
  {
    queue_pkt(s_.host_send, s_.slab, sk_, c_.index, op, len);
    s_.vhost->ring(now(), kSend);  // vhost_work_queue
  }
};

// ---------------------------------------------------------------------------
// vhost worker

Task<> Vhost::body()
{
  const Costs& k = s_.k;
  for (;;) {
    // Asleep in vhost_worker's schedule(): the wake-up (from a kick's
    // eventfd or vhost_work_queue) takes the scheduler's latency.
    if (co_await wait()) {
      co_await sleep(lat_(k.h_wakeup_latency));
      s_.n.worker_wakeups.add();
    }
    for (;;) {
      unsigned due = inbox_.take_due(now());
      tx_queued_ |= (due & (1u << kTx)) != 0;
      send_queued_ |= (due & ((1u << kRx) | (1u << kSend))) != 0;  // rx kick and send work both run do_send_pkt
      if (tx_queued_) {
        tx_queued_ = false;
        co_await run(k.h_worker_run, Cat::Sys);
        s_.n.worker_runs.add();
        co_await handle_tx();
      } else if (send_queued_) {
        send_queued_ = false;
        co_await run(k.h_worker_run, Cat::Sys);
        s_.n.worker_runs.add();
        co_await do_send_pkt();
      } else {
        break;
      }
    }
  }
}

Task<> Vhost::signal_guest(VqKind vq)
{
  co_await run(s_.k.h_signal, Cat::Sys);
  s_.n.interrupts.add();
  s_.irq->raise(now() + lat_(s_.k.h_interrupt_latency), vq);
}

// virtio_transport_recv_pkt() on the host, from the worker: credit fields,
// then data onto the host socket.
Task<> Vhost::deliver_to_host(const Pkt& p)
{
  Conn& c = s_.conns[static_cast<std::size_t>(p.conn)];
  Sock& sk = c.host;
  sk.peer_buf_alloc = p.buf_alloc;
  sk.peer_fwd_cnt = std::max(sk.peer_fwd_cnt, p.fwd_cnt);
  if (p.op == Op::CreditUpdate) {
    if (sk.app->waiting() && sk.credit_signed() > 0)
      sk.app->wake_at(now());
    charge(s_.k.h_free, Cat::Sys);  // settled before the next look at the queue
    co_return;
  }
  sk.rxq.push_back(Sock::Entry{p.len});
  if (sk.app->waiting())
    sk.app->wake_at(now());
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
    auto a = vq.pop();  // vhost_get_vq_desc()
    if (!a) {
      if (vq.enable_notify()) {
        vq.disable_notify();
        continue;
      }
      break;
    }
    const Pkt p = s_.slab[a->token];
    // vhost_vsock_alloc_pkt(): kzalloc + kmalloc, header and payload copied in.
    co_await run(k.h_tx_pkt + (p.len > 0 ? 2 : 1) * k.h_alloc + k.vhost_copy(p.len), Cat::Sys);
    s_.n.allocations.add(p.len > 0 ? 2 : 1);
    if (p.len > 0)
      s_.n.copies.add();
    co_await deliver_to_host(p);
    co_await settle();
    vq.push_used(a->head, kHeaderBytes + p.len);
    added = true;
    bytes += p.len;
    ++pkts;
    if (exceeds_weight(pkts, bytes)) {
      tx_queued_ = true;  // vhost_exceeds_weight(): requeue and let others run
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
  std::uint64_t pkts = 0, bytes = 0;
  for (;;) {
    if (s_.host_send.empty()) {
      vq.enable_notify();
      break;
    }
    auto a = vq.pop();
    if (!a) {
      s_.n.rx_buffer_stalls.add();
      if (vq.enable_notify()) {
        vq.disable_notify();
        continue;
      }
      break;  // the packet stays queued until the guest adds rx buffers and kicks
    }
    Queued& q = s_.host_send.front();  // stays put: host threads only append
    const Pkt p = s_.slab[q.id];  // a copy: the slab may grow while this thread waits for its CPU
    const std::uint32_t n = std::min(p.len - q.off, kn.rx_buf_size);
    const bool header = !(kn.mergeable_rx && q.off > 0);
    Pkt b = p;
    b.len = n;
    b.cont = !header;
    b.more = kn.mergeable_rx && q.off + n < p.len;
    s_.slab[a->token] = b;
    co_await run(k.h_rx_buf + k.vhost_copy(n + (header ? kHeaderBytes : 0)), Cat::Sys);  // copy_to_iter
    if (n > 0)
      s_.n.copies.add();
    s_.n.rx_buffers.add();
    vq.push_used(a->head, (header ? kHeaderBytes : 0) + n);
    if (!kn.batch_used && vq.signal_needed())
      co_await signal_guest(kRx);  // vhost_add_used_and_signal per buffer
    added = true;
    q.off += n;
    bytes += n;
    if (q.off == p.len) {
      co_await run(k.h_free, Cat::Sys);
      s_.slab.release(q.id);
      s_.host_send.pop_front();
      ++pkts;
    }
    if (exceeds_weight(pkts, bytes)) {
      send_queued_ = true;
      break;
    }
  }
  if (added && kn.batch_used && vq.signal_needed())
    co_await signal_guest(kRx);
}

// Per-iteration variability: the host's costs scaled by one factor drawn
// from the iteration's own stream.
void apply_iteration_jitter(Costs& k, std::uint64_t seed, std::uint32_t iteration)
{
  Rng rng(seed, iteration, "host_speed");
  double f = rng.factor(k.iteration_jitter);
  for (double* c : {&k.h_user_per_call, &k.h_send_syscall, &k.h_recv_syscall, &k.h_alloc, &k.h_free, &k.h_pkt,
                    &k.h_copy_fixed, &k.h_dequeue_pkt, &k.h_worker_run, &k.h_tx_pkt, &k.h_rx_buf, &k.h_signal})
    *c = std::round(*c * f);
  k.h_copy_bpc /= f;
  k.h_guest_copy_bpc /= f;
}

Knobs read_knobs(const Params& p)
{
  Knobs kn{};
  auto u = [&](const char* key) { return static_cast<std::uint64_t>(p.integer(key)); };
  kn.message_size = u("workload.message_size");
  kn.total_bytes = u("workload.total_bytes");
  kn.rx_buf_size = static_cast<std::uint32_t>(u("virtio_vsock.rx_buf_size"));
  kn.max_pkt_size = static_cast<std::uint32_t>(u("virtio_vsock.max_pkt_size"));
  kn.mergeable_rx = p.boolean("virtio_vsock.mergeable_rx");
  kn.host_split = p.boolean("virtio_vsock.host_split");
  // Without a way to spread a packet over several rx buffers, the host's
  // packets must fit one (virtio_transport_send_pkt_info caps them).
  kn.host_pkt_size = (kn.mergeable_rx || kn.host_split) ? kn.max_pkt_size : std::min(kn.max_pkt_size, kn.rx_buf_size);
  kn.credit_every_read = p.text("virtio_vsock.credit_update") == "every_read";
  kn.small_pkt_copy = p.boolean("virtio_vsock.small_pkt_copy");
  kn.batch_used = p.boolean("virtio_vsock.batch_used");
  kn.event_idx = p.boolean("virtio_vsock.event_idx");
  kn.indirect = p.boolean("virtio_vsock.indirect_desc");
  kn.queue_size = static_cast<std::uint16_t>(u("virtio_vsock.queue_size"));
  kn.weight_packets = static_cast<std::uint32_t>(u("virtio_vsock.vhost_weight_packets"));
  kn.weight_bytes = u("virtio_vsock.vhost_weight_bytes");
  kn.buf_alloc = static_cast<std::uint32_t>(u("virtio_vsock.buf_alloc"));
  kn.credit_threshold = static_cast<std::uint32_t>(u("virtio_vsock.credit_threshold"));
  kn.small_pkt_max = static_cast<std::uint32_t>(u("virtio_vsock.small_pkt_copy_max"));
  kn.start_interval = connection_start_interval(p);
  return kn;
}

}  // namespace

Metrics simulate(const Params& p, std::uint32_t iteration)
{
  Shared s;
  s.k = Costs::from(p);
  s.seed = static_cast<std::uint64_t>(p.integer("seed"));
  s.iteration = iteration;
  apply_iteration_jitter(s.k, s.seed, iteration);
  s.kn = read_knobs(p);
  const Knobs& kn = s.kn;
  const bool g2h = p.text("direction") == "guest_to_host";
  const int conns = static_cast<int>(p.integer("workload.connections"));
  const int vcpus = static_cast<int>(p.integer("guest.vcpus"));
  const int hcpus = static_cast<int>(p.integer("host.cpus"));

  World world;
  const std::vector<Cpu*> guest = world.add_cpus(Side::Guest, "vcpu", vcpus);
  const std::vector<Cpu*> host = world.add_cpus(Side::Host, "hcpu", hcpus);

  s.rxq = std::make_unique<Virtqueue>(kn.queue_size, kn.event_idx, kn.indirect);
  s.txq = std::make_unique<Virtqueue>(kn.queue_size, kn.event_idx, kn.indirect);
  s.irq = &world.spawn<GuestIrq>(*guest[0], s);
  s.vhost = &world.spawn<Vhost>(*host[0], s);
  add_rx_buffers(s, 0);  // virtio_vsock_probe(): rx buffers before any traffic, no cost

  std::vector<SimThread*> writers, readers, guest_apps;
  for (int i = 0; i < conns; ++i) {
    Conn& c = s.conns.emplace_back();
    c.index = i;
    for (Sock* sk : {&c.guest, &c.host}) {
      sk->buf_alloc = kn.buf_alloc;
      sk->peer_buf_alloc = kn.buf_alloc;  // exchanged at connect (REQUEST/RESPONSE)
    }
    Cpu& gcpu = *guest[(1 + i) % vcpus];
    Cpu& hcpu = *host[(1 + i) % hcpus];
    SimThread *g, *h;
    if (g2h) {
      g = &world.spawn<GuestApp>(gcpu, s, c, true);
      h = &world.spawn<HostApp>(hcpu, s, c, false);
      writers.push_back(g);
      readers.push_back(h);
    } else {
      h = &world.spawn<HostApp>(hcpu, s, c, true);
      g = &world.spawn<GuestApp>(gcpu, s, c, false);
      writers.push_back(h);
      readers.push_back(g);
    }
    guest_apps.push_back(g);
    s.host_apps.push_back(h);
  }

  world.run();

  // Conservation and credit accounting, per connection.
  Time elapsed = 0;
  std::uint64_t delivered = 0;
  for (const Conn& c : s.conns) {
    const Sock& tx = g2h ? c.guest : c.host;
    const Sock& rx = g2h ? c.host : c.guest;
    if (c.delivered != kn.total_bytes || tx.tx_cnt != kn.total_bytes || rx.fwd_cnt != kn.total_bytes)
      throw std::logic_error(fmt::format(
          "invariant violated: bytes in == bytes out (connection {}: sent {}, tx_cnt {}, receiver fwd_cnt {}, "
          "delivered {}; the simulation stalled)",
          c.index, kn.total_bytes, tx.tx_cnt, rx.fwd_cnt, c.delivered));
    if (tx.tx_cnt - tx.peer_fwd_cnt > tx.peer_buf_alloc)
      throw std::logic_error(fmt::format("invariant violated: credit never negative (connection {}: {} bytes in "
                                         "flight against a window of {})",
                                         c.index, tx.tx_cnt - tx.peer_fwd_cnt, tx.peer_buf_alloc));
    elapsed = std::max(elapsed, c.done_at);
    delivered += c.delivered;
  }
  s.rxq->check_invariants();
  s.txq->check_invariants();
  check_cpu_busy(world, elapsed);

  const Costs& k = s.k;
  const double secs = k.seconds(elapsed);
  Metrics m;
  append_run_metrics(m, world, elapsed, k.clock_ghz, delivered, writers, readers);
  m["throughput_Gbps"] = static_cast<double>(delivered) * 8 / secs / 1e9;
  // The 2019 study's efficiency: Mbit/s per (%CPU host + %CPU guest), with
  // the CPU of the benchmark's own processes (iperf3 reports getrusage).
  const double app_host = k.seconds(thread_cycles(s.host_apps, {Cat::User, Cat::Sys, Cat::Hypervisor})) / secs * 100.0;
  const double app_guest = k.seconds(thread_cycles(guest_apps, {Cat::User, Cat::Sys, Cat::Hypervisor})) / secs * 100.0;
  m["app_cpu_percent_host"] = app_host;
  m["app_cpu_percent_guest"] = app_guest;
  m["efficiency"] = m["throughput_Gbps"] * 1000.0 / (app_host + app_guest);
  const double mb = static_cast<double>(delivered) / 1e6;
  auto per_mb = [&](const char* name, const Count& c, const Count* plus = nullptr) {
    const std::uint64_t v = c.value() + (plus ? plus->value() : 0);
    m[std::string(name) + "_per_MB"] = static_cast<double>(v) / mb;
  };
  const Counters& n = s.n;
  per_mb("syscalls", n.syscalls);
  per_mb("allocations", n.allocations);
  per_mb("copies", n.copies);
  per_mb("kicks", n.kicks);
  per_mb("interrupts_to_guest", n.interrupts);
  per_mb("vm_exits", n.kicks, &n.interrupts);
  per_mb("credit_updates", n.credit_updates);
  per_mb("worker_wakeups", n.worker_wakeups);
  per_mb("worker_runs", n.worker_runs);
  per_mb("packets", n.data_packets);
  per_mb("rx_buffers", n.rx_buffers);
  per_mb("credit_stalls", n.credit_stalls);
  per_mb("reader_sleeps", n.reader_sleeps);
  per_mb("small_pkt_copies", n.small_copies);
  per_mb("rx_buffer_stalls", n.rx_buffer_stalls);
  per_mb("guest_work_runs", n.guest_work_runs);
  m["guest_kworker_seconds"] = k.seconds(s.guest_kworker.busy());
  append_breakdown(m, world, elapsed, {s.irq}, {{"virtio_tx", &s.txq->occupancy()}, {"virtio_rx", &s.rxq->occupancy()}});
  return m;
}

}  // namespace vsim::virtio_vsock
