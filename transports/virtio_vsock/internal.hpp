// The virtio-vsock model's pieces, shared by the files named after what
// they model: the guest driver (virtio_transport.cpp), the socket layer and
// credit both ends run (virtio_transport_common.cpp), vhost-vsock
// (vhost_vsock.cpp), the costs (costs.hpp/.cpp) and the run set-up and
// figures (virtio_vsock.cpp). Not part of the transport's interface
// (virtio_vsock.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/virtqueue.hpp"
#include "sim/count.hpp"
#include "sim/rng.hpp"
#include "sim/world.hpp"
#include "transports/virtio_vsock/costs.hpp"
#include "transports/virtio_vsock/virtio_vsock.hpp"

namespace vsim::virtio_vsock::detail {

using models::Virtqueue;
using virtio_vsock::kHeaderBytes;

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

// Event counts (sim/count.hpp).
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

// The knobs of a point (virtio_vsock.cpp), as the simulation and the
// analytic bound (bound.cpp) both use them.
Knobs read_knobs(const Params& p);

// Where connection i's threads run: guest vCPU (1 + i) mod vcpus (vCPU 0
// takes the device's interrupts), host CPU (1 + i) mod host CPUs (vhost on
// CPU 0).
inline int guest_cpu_of(int i, int vcpus) { return (1 + i) % vcpus; }
inline int host_cpu_of(int i, int host_cpus) { return (1 + i) % host_cpus; }

// Sleep until woken (virtio_transport_common.cpp).
Task<> sleep_until_woken(SimThread& t, Latency& lat, double wakeup_latency, double ctx_switch);
// virtio_transport_send_pkt_info() for one packet (virtio_transport_common.cpp).
void queue_pkt(std::deque<Queued>& list, Slab& slab, Sock& sock, int conn, Op op, std::uint32_t len);
// The guest driver's routines (virtio_transport.cpp).
Task<> guest_send_work(Shared& s, GuestCtx& c);
std::uint32_t add_rx_buffers(Shared& s, Time t);
Task<> guest_rx_fill(Shared& s, GuestCtx& c);

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
  Task<> body() override;

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
    return {k.guest_user_per_call, k.virtio_guest_send_syscall, k.virtio_guest_recv_syscall, k.virtio_guest_alloc, k.virtio_guest_free, k.virtio_guest_pkt, k.virtio_guest_dequeue_pkt,
            k.guest_wakeup_latency, k.guest_context_switch, k.guest_copy_fixed, k.guest_copy_bytes_per_cycle};
  }
  static StackCosts host(const Costs& k)
  {
    return {k.virtio_host_user_per_call, k.virtio_host_send_syscall, k.virtio_host_recv_syscall, k.virtio_host_alloc, k.virtio_host_free, k.virtio_host_pkt, k.virtio_host_dequeue_pkt,
            k.host_wakeup_latency, k.guest_context_switch, k.virtio_host_copy_fixed, k.virtio_host_copy_bytes_per_cycle};
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

  Task<> body() override;

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
  Task<> send_all();

  // recv() in a loop with a buffer of message_size bytes:
  // virtio_transport_stream_do_dequeue, then the credit update policy.
  Task<> receive_all();
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
  Task<bool> flush() override;

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

}  // namespace vsim::virtio_vsock::detail
