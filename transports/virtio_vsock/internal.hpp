// The virtio-vsock model's pieces, shared by the files named after what
// they model: the guest driver (virtio_transport.cpp), the socket layer and
// credit both ends run (virtio_transport_common.cpp), vhost-vsock
// (vhost_vsock.cpp), the costs (costs.hpp/.cpp) and the run set-up and
// figures (virtio_vsock.cpp). Not part of the transport's interface
// (virtio_vsock.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/halt_poll.hpp"
#include "models/virtqueue.hpp"
#include "sim/count.hpp"
#include "sim/rng.hpp"
#include "sim/run_length.hpp"
#include "sim/world.hpp"
#include "transports/round_trip_app.hpp"
#include "transports/simulate.hpp"
#include "transports/virtio_vsock/costs.hpp"
#include "transports/virtio_vsock/stages.hpp"
#include "transports/virtio_vsock/virtio_vsock.hpp"

namespace vsim::virtio_vsock::detail {

using models::Virtqueue;
using virtio_vsock::kHeaderBytes;
using virtio_vsock::kMrgHeaderBytes;

struct Knobs {
  std::uint64_t message_size, total_bytes;
  std::uint32_t rx_buf_size, max_pkt_size, host_pkt_size;
  bool mergeable_rx, host_split, credit_every_read, small_pkt_copy, batch_used, event_idx, indirect;
  bool credit_rcvlowat; // credit_update threshold_rcvlowat (6.8)
  bool skb;             // packet_type sk_buff (6.3) instead of struct virtio_vsock_pkt
  bool tx_fast_path;    // virtio_transport_send_pkt's fast path (6.12)
  bool pcp_high_order;  // orders <= PAGE_ALLOC_COSTLY_ORDER from the per-CPU lists (5.13)
  bool credit_locked;   // credit fields taken under lock_sock (ce7536bc7398, 5.12)
  bool shared_irq;      // msix_vectors shared: one MSI-X vector for every virtqueue (vp_find_vqs' fallback)
  bool iperf3;          // workload.app: iperf3's client and server instead of blocking loops
  bool seqpacket;       // workload.socket_type: one message per send() and per recv()
  bool zerocopy;        // workload.zerocopy: MSG_ZEROCOPY on every send()
  bool preempt_none;    // guest.preemption none: CONFIG_PREEMPT_NONE, a task in the kernel keeps its vCPU
  bool firecracker;     // transport firecracker_vsock: Firecracker's device (transports/firecracker_vsock)
  std::uint16_t queue_size;
  std::uint32_t weight_packets;
  std::uint64_t weight_bytes;
  std::uint32_t buf_alloc, credit_threshold, small_pkt_max;
  double start_interval; // cycles between the starts of successive connections
  RoundTripKnobs rt;     // workload.pattern ping_pong, request_response: one application thread per side
};

// Event counts (sim/count.hpp); those reported are named as the metric they
// are reported as (counter_metrics()).
struct Counters {
  Count syscalls, allocations, frees, copies, kicks, interrupts_to_guest;
  Count kick_wakeups; // kicks whose ioeventfd woke the sleeping vhost worker (an IPI in the exit)
  Count rx_interrupts, tx_interrupts, credit_updates, worker_wakeups, worker_runs;
  Count packets, rx_buffers, credit_stalls, reader_sleeps, small_pkt_copies;
  Count rx_buffer_stalls, guest_work_runs, polls, eagain_writes;
  Count messages; // SOCK_SEQPACKET: whole messages a reader took
  // MSG_ZEROCOPY: enqueue calls sent from pinned pages or copied, notifications
  // queued on the error queue, recvmsg(MSG_ERRQUEUE) calls, pages pinned.
  Count zerocopy_sends, zerocopy_fallbacks, zerocopy_completions, errqueue_reads, pages_pinned;
  Count page_allocs; // allocations kmalloc passed to the page allocator (above KMALLOC_MAX_CACHE_SIZE)
  Count tx_fast_path_sends, tx_fast_path_fallbacks, tx_lock_contended;
  // The workqueue's concurrency management: times a kworker blocking in
  // lock_sock woke an idle kworker of its pool for the pool's pending items
  // (wq_worker_sleeping), and items a kworker found running on another
  // worker and left to it (process_one_work's collision).
  Count kworker_handoffs, work_collisions;
  // Bytes copied with their source evicted to the L3 (models/cache_reuse.hpp).
  Count l3_copy_bytes;
  // Guest interrupts: host signals that found their vector already pending
  // (merged in the IRR), interrupts whose handler queued both the rx and the
  // tx work (one shared vector), interrupts that found no new used entry.
  Count irq_signals_merged, irq_both_queues, irq_spurious;
  // Guest threads woken on a halted vCPU: within KVM's halt-polling window, or after it.
  Count halt_polls_caught, halt_polls_missed;
  // Firecracker: packet tails its host stream did not take, kept in the TxBuf.
  Count txbuf_pushes;
  // Firecracker on x86: the VMM's writes to the irqfd, and the injections the
  // host's kworker ran for them (costs.fc_irqfd_inject; a write while one is
  // queued shares it).
  Count irqfd_writes, irqfd_injections;
};

// The counter table: each count as the metric it is reported as (per MB
// delivered), in documentation order. No counter: made of other counts and
// the engine's wake-up IPIs where the figures are made (virtio_vsock.cpp).
inline const std::vector<CounterMetric<Counters>>& counter_metrics()
{
  static const std::vector<CounterMetric<Counters>> table = {
      {&Counters::syscalls, shared_count("syscalls")},
      {&Counters::allocations, shared_count("allocations")},
      {&Counters::copies, shared_count("copies")},
      {&Counters::kicks, per_MB("kicks", "virtio_vsock: guest virtqueue notifications (VM exits to ioeventfd) per MB")},
      {&Counters::interrupts_to_guest, shared_count("interrupts_to_guest")},
      {nullptr, per_MB("vm_exits", "virtio_vsock: kicks, interrupt injections and guest wake-up IPIs per MB")},
      {nullptr, per_MB("guest_wake_ipis", "virtio_vsock: guest threads woken from sleep on another vCPU (a reschedule "
                                          "IPI, a VM exit for the waker) per MB")},
      {nullptr,
       per_MB("host_wake_ipis",
              "virtio_vsock: host threads woken from sleep on another CPU (a reschedule IPI for the waker; a guest "
              "kick's ioeventfd wake-up of the vhost worker counts, its IPI the kicking vCPU's) per MB")},
      {&Counters::credit_updates, per_MB("credit_updates", "virtio_vsock: explicit CREDIT_UPDATE packets per MB")},
      {&Counters::worker_wakeups,
       per_MB("worker_wakeups", "virtio_vsock: times the vhost worker woke from sleep per MB")},
      {&Counters::worker_runs,
       per_MB("worker_runs", "virtio_vsock: vhost work item runs (handle_tx_kick, send_pkt_work) per MB")},
      {&Counters::packets, shared_count("packets")},
      {&Counters::rx_buffers, per_MB("rx_buffers", "virtio_vsock: guest rx buffers filled by vhost per MB")},
      {&Counters::credit_stalls,
       per_MB("credit_stalls", "virtio_vsock: times a writer found zero credit and slept, per MB")},
      {&Counters::reader_sleeps, shared_count("reader_sleeps")},
      {&Counters::l3_copy_bytes,
       per_MB("l3_copy_bytes", "virtio_vsock: bytes copied out of the shared L3, their writer's L2 having evicted "
                               "them (costs.virtio_l2_bytes; vhost's and the readers' copies), per MB")},
      {&Counters::small_pkt_copies,
       per_MB("small_pkt_copies", "virtio_vsock: small packets copied into the previous buffer per MB")},
      {&Counters::rx_buffer_stalls,
       per_MB("rx_buffer_stalls", "virtio_vsock: times vhost found no guest rx buffer per MB")},
      {&Counters::polls,
       per_MB("polls", "virtio_vsock: select() calls of the benchmark (workload.app iperf3), both ends, per MB")},
      {&Counters::eagain_writes,
       per_MB("eagain_writes", "virtio_vsock: non-blocking write()s that found no credit (EAGAIN), per MB")},
      {&Counters::guest_work_runs,
       per_MB("guest_work_runs", "virtio_vsock: guest workqueue item runs (send, rx, tx) per MB")},
      {&Counters::messages,
       per_MB("messages", "virtio_vsock: whole messages a reader took (workload.socket_type seqpacket) per MB")},
      {&Counters::zerocopy_sends,
       per_MB("zerocopy_sends", "virtio_vsock: enqueue calls (virtio_transport_send_pkt_info) that sent pinned user "
                                "pages without a copy (workload.zerocopy) per MB")},
      {&Counters::zerocopy_fallbacks,
       per_MB("zerocopy_fallbacks", "virtio_vsock: enqueue calls with MSG_ZEROCOPY that copied instead "
                                    "(virtio_transport_can_zcopy false) per MB")},
      {&Counters::zerocopy_completions,
       per_MB("zerocopy_completions", "virtio_vsock: MSG_ZEROCOPY notifications queued on the sender's error queue "
                                      "(one per enqueue call, when its last packet is freed) per MB")},
      {&Counters::errqueue_reads,
       per_MB("errqueue_reads", "virtio_vsock: the benchmark's recvmsg(MSG_ERRQUEUE) calls per MB")},
      {&Counters::pages_pinned,
       per_MB("pages_pinned", "virtio_vsock: user pages pinned for MSG_ZEROCOPY packets per MB")},
      {&Counters::page_allocs,
       per_MB("page_allocations", "virtio_vsock: allocations above KMALLOC_MAX_CACHE_SIZE (8 KiB), which kmalloc "
                                  "passes to the page allocator (kmalloc_large), both ends, per MB")},
      {&Counters::tx_fast_path_sends,
       per_MB("tx_fast_path_sends", "virtio_vsock: guest packets the sender added to the tx queue itself "
                                    "(virtio_transport_send_skb_fast_path, tx_fast_path) per MB")},
      {&Counters::tx_fast_path_fallbacks,
       per_MB("tx_fast_path_fallbacks", "virtio_vsock: guest packets that with tx_fast_path still went through "
                                        "send_pkt_queue and the send work (queue not empty, tx_lock held or tx "
                                        "queue full) per MB")},
      {&Counters::halt_polls_caught,
       per_MB("halt_poll_wakeups", "virtio_vsock: guest threads woken on a halted vCPU that KVM was still polling "
                                   "for (kvm_vcpu_halt, within the vCPU's halt_poll_ns window) per MB")},
      {&Counters::halt_polls_missed,
       per_MB("halted_vcpu_wakeups", "virtio_vsock: guest threads woken on a halted vCPU whose thread KVM had "
                                     "scheduled out (past the halt-polling window: kvm_vcpu_block) per MB")},
      {&Counters::tx_lock_contended,
       per_MB("tx_lock_contended", "virtio_vsock: times the guest's tx_lock was found held (a fast path's "
                                   "mutex_trylock failing, or a work item sleeping in mutex_lock) per MB")},
      {&Counters::kworker_handoffs,
       per_MB("kworker_handoffs", "virtio_vsock: times a guest kworker blocking on a socket lock (lock_sock in "
                                  "the rx work) woke another kworker of its vCPU's pool to run the pool's pending "
                                  "work items (wq_worker_sleeping) per MB")},
      {&Counters::irq_signals_merged,
       per_MB("interrupts_merged", "virtio_vsock: host signals that reached the guest while their MSI-X vector "
                                   "was still pending, merged into that interrupt (not counted in "
                                   "interrupts_to_guest) per MB")},
      {&Counters::txbuf_pushes,
       per_MB("txbuf_pushes", "firecracker_vsock: packets (or their tails) the host AF_UNIX stream did not "
                              "take at once, kept in the connection's TxBuf until EPOLLOUT, per MB")},
      {&Counters::irqfd_writes,
       per_MB("irqfd_writes", "firecracker_vsock: interrupts the VMM signalled (IrqTrigger::trigger_irq's write to "
                              "the irqfd) per MB")},
      {&Counters::irqfd_injections,
       per_MB("irqfd_injections", "firecracker_vsock: interrupt injections the host's kworker ran for them "
                                  "(costs.fc_irqfd_inject above 0; a write while one is queued shares it) per MB")},
      {&Counters::irq_both_queues,
       per_MB("interrupts_both_queues", "virtio_vsock: guest interrupts whose handler queued both the rx and the "
                                        "tx work (virtio_vsock.msix_vectors shared: vp_vring_interrupt finds new "
                                        "used entries on both queues) per MB")},
  };
  return table;
}

// CreditRequest: only Firecracker's device sends one (a connection whose
// peer credit is 0, VsockConnection::recv_pkt); Linux drops it.
enum class Op : std::uint8_t { Rw, CreditUpdate, CreditRequest };

// A packet (struct virtio_vsock_pkt) or a guest rx buffer's contents.
struct Pkt {
  int conn = 0;
  Op op = Op::Rw;
  std::uint32_t len = 0;     // payload bytes
  std::uint64_t fwd_cnt = 0; // piggybacked credit fields of the sender
  std::uint32_t buf_alloc = 0;
  std::uint64_t stream_end = 0; // the sender's tx_cnt once this payload was counted (in-order check)
  bool more = false;            // mergeable rx: the packet continues in the next buffer
  bool cont = false;            // mergeable rx: this buffer continues a packet (no header)
  bool eom = false;             // SOCK_SEQPACKET: VIRTIO_VSOCK_SEQ_EOM, the last packet of a message
  // MSG_ZEROCOPY: user pages referenced as fragments (0: the payload was
  // copied), and whether the packet holds its enqueue call's notification
  // (the ubuf_info of virtio_transport_init_zcopy_skb), with its id.
  std::uint16_t frags = 0;
  bool zc_notify = false;
  std::uint64_t zc_id = 0;
  // Who wrote the payload, for the reader's copy (models/cache_reuse.hpp).
  WriteStamp wrote;
};

// MSG_ZEROCOPY's chunk: min(VIRTIO_VSOCK_MAX_PKT_BUF_SIZE, MAX_SKB_FRAGS *
// PAGE_SIZE) (virtio_transport_send_pkt_info), and the pages a packet of
// `len` bytes of a page-aligned user buffer references.
inline constexpr std::uint32_t kPageSize = 4096;
inline constexpr std::uint32_t kMaxSkbFrags = 17;
inline std::uint32_t pages_of(std::uint64_t len)
{
  return static_cast<std::uint32_t>((len + kPageSize - 1) / kPageSize);
}

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
  std::uint32_t off = 0; // bytes already copied out (host_split, mergeable_rx)
};

// A sleeping lock: the socket lock (lock_sock/release_sock, net/core/sock.c)
// or a mutex (kernel/locking/mutex.c, without its optimistic spinning);
// waiters sleep and one is woken per release.
struct SleepLock {
  SimThread* owner = nullptr;
  std::deque<SimThread*> lock_waiters;
  std::uint64_t lock_waits = 0; // lock calls that found it held
};

// One end of a connection (struct virtio_vsock_sock): what it sent, what it
// received, and its view of the peer's credit (virtio_transport_has_space).
// It is its own socket lock: held by sendmsg/recvmsg for the whole call
// except while they wait, and by virtio_transport_recv_pkt for each packet.
struct Sock : SleepLock {
  // sender
  std::uint64_t tx_cnt = 0;
  std::uint64_t peer_fwd_cnt = 0; // from the peer's packet headers
  std::uint32_t peer_buf_alloc = 0;
  // receiver
  std::uint64_t fwd_cnt = 0, last_fwd_cnt = 0;
  std::uint32_t buf_alloc = 0;
  struct Entry {
    std::uint32_t len; // payload bytes
    std::uint32_t off = 0;
    bool merged = false; // small_pkt_copy: copied into the previous buffer
    bool eom = false;    // SOCK_SEQPACKET: ends a message
    WriteStamp wrote;    // who wrote the payload the reader copies
  };
  std::deque<Entry> rxq;
  std::uint32_t tail_fill = 0; // bytes in the buffer of the last queued packet
  std::uint32_t tail_cap = 0;  // its capacity
  std::uint64_t received = 0;  // payload bytes that reached this socket, in stream order
  SimThread* app = nullptr;    // the thread using this socket
  // prepare_to_wait() on the socket's wait queue: its thread found it must
  // sleep (no credit, no data) and is about to, the socket lock released;
  // a wake-up from then on is not lost (wake_due()).
  bool prepared = false;
  std::uint32_t msg_count = 0; // SOCK_SEQPACKET: whole messages queued (vvs->msg_count)
  // MSG_ZEROCOPY (the sender): the next notification id (sk->sk_zckey), the
  // next one to complete (they complete in order), the error queue's
  // entries as id ranges [lo, hi] (__msg_zerocopy_callback extends the tail
  // entry with the next id), and the pages pinned now.
  std::uint64_t zc_next_id = 0, zc_done_id = 0;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> errqueue;
  std::uint64_t pinned_pages = 0;

  // virtio_transport_space_update(): the peer's credit fields from a packet
  // it sent (taken before the socket lock, under tx_lock only).
  void space_update(const Pkt& p)
  {
    peer_buf_alloc = p.buf_alloc;
    peer_fwd_cnt = std::max(peer_fwd_cnt, p.fwd_cnt);
  }
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
  bool g2h = true; // the guest writes (direction; bidirectional: the first half of the connections)
  Sock guest, host;
  std::uint64_t delivered = 0;
  Time done_at = 0;
  // The bytes this connection moves: workload.total_bytes, fewer once the
  // run-length monitor shortened the run (sim/run_length.hpp, Shorten);
  // and the bytes its writer has begun to send (every send() call begun,
  // in full: the transfer is never shortened below them).
  std::uint64_t target = 0;
  std::uint64_t committed = 0;
};

// A stream connection's reader got its last byte at `t`: its end, and with
// end_together every connection's (end_streams_together).
inline void stream_done(std::deque<Conn>& conns, Conn& c, Time t, bool end_together, std::uint64_t message_size)
{
  c.done_at = t;
  if (end_together)
    end_streams_together(conns, message_size);
}

// Whether a wake-up of the socket's thread is due: it sleeps, or it has
// prepared to (sk_write_space / sk_data_ready wake a task on the wait
// queue whether or not it has reached schedule() yet).
inline bool wake_due(const Sock& sk)
{
  return sk.app->waiting() || sk.prepared;
}

// The timeline's credit track of a sending end (sim/trace.hpp): what it may
// still send (virtio_transport_get_credit), after each change (it sent, or
// a credit update came in).
inline void trace_credit(const SimThread& t, const Conn& c, const Sock& sk)
{
  if (Trace* tr = t.trace())
    tr->counter(fmt::format("credit{} {} writer", c.index, &sk == &c.guest ? "guest" : "host"), "bytes",
                t.world().now(), static_cast<double>(sk.credit_signed()));
}

// virtio_transport_recv_pkt() of a CREDIT_UPDATE at either end, under the
// socket lock: the timeline's mark and credit level, and sk_write_space
// (a writer waiting for credit is woken once there is some).
inline void credit_update_received(SimThread& t, const Conn& c, Sock& sk)
{
  t.mark("virtio_transport_recv_pkt: credit update", "credit", static_cast<double>(sk.credit_signed()));
  trace_credit(t, c, sk);
  if (wake_due(sk) && sk.credit_signed() > 0)
    sk.app->wake_at(t.world().now());
}

class GuestIrq;
class Kworker;
class Vhost;
class Device;

// The guest driver's work items (struct work_struct of struct virtio_vsock):
// virtio_transport_rx_work, virtio_transport_tx_work,
// virtio_transport_send_pkt_work.
enum class GuestWork : std::uint8_t { Rx = 0, Tx = 1, Send = 2 };
struct WorkItem {
  bool pending = false;          // WORK_STRUCT_PENDING: queued, not yet started
  Kworker* running_on = nullptr; // the kworker running it (find_worker_executing_work)
};

// A guest vCPU's worker pool of the per-CPU virtio_vsock workqueue
// (kernel/workqueue.c struct worker_pool, concurrency-managed): the items
// queued on it (worklist), its kworkers, the idle ones (idle_list) and how
// many run (nr_running: neither idle nor blocked). One worker runs the items
// while it does not block; when it blocks in lock_sock, wq_worker_sleeping
// wakes an idle one for the items still pending (virtio_transport.cpp).
struct WorkerPool {
  // The pool's kworkers, made before the run: one per work item, the most
  // that can be busy at once (an item never runs on two). The kernel creates
  // them on demand (manage_workers keeps one idle) and keeps them for
  // IDLE_WORKER_TIMEOUT (300 s): in a transfer they exist already, and
  // their creation is not charged.
  static constexpr int kWorkers = 3;

  Cpu* cpu = nullptr;
  std::deque<GuestWork> worklist;
  std::vector<Kworker*> workers; // in creation order; the first is kworker_<cpu>
  std::vector<Kworker*> idle;    // idle_list: the last one went idle most recently
  int nr_running = 0;

  // need_more_worker(): items pending and no worker running.
  bool need_more_worker() const { return !worklist.empty() && nr_running == 0; }
  // keep_working(): items pending and no worker running but the caller.
  bool keep_working() const { return !worklist.empty() && nr_running <= 1; }
  // insert_work() then kick_pool(): the item at the end of the worklist,
  // and if no worker runs, wake_up_worker().
  void insert(GuestWork w, Time t);
  // wake_up_worker(): wake the first idle worker (first_idle_worker: the
  // one that went idle last); false when none is idle.
  bool wake_up_worker(Time t);
  // CPU time of its kworkers, together.
  CpuTime cpu_time() const;
};

// What every thread of one simulation shares: the device (its two data
// virtqueues, the guest driver's and vhost's send lists), the connections.
struct Shared {
  Costs k;
  Knobs kn;
  std::uint64_t seed;
  std::uint32_t iteration;
  std::unique_ptr<Virtqueue> rxq, txq;
  Slab slab;
  std::deque<Queued> guest_send; // virtio_vsock.send_pkt_list (6.3: send_pkt_queue)
  SleepLock tx_lock;             // virtio_vsock.tx_lock: send work, tx work, the 6.12 fast path
  std::deque<Queued> host_send;  // vhost_vsock.send_pkt_list
  std::uint32_t rx_buf_nr = 0, rx_buf_max_nr = 0;
  // Mergeable rx: the packet being reassembled. The device's, not a
  // kworker's: the rx work may stop between a packet's buffers (vhost had
  // not used the rest yet) and run next on another kworker of the pool.
  Pkt rx_merging{};
  std::uint32_t rx_merging_len = 0;
  bool rx_in_merge = false;
  std::deque<Conn> conns;
  GuestIrq* irq = nullptr;
  Vhost* vhost = nullptr;   // vhost-vsock's worker (transport virtio_vsock)
  Device* device = nullptr; // the device the guest's kicks reach: vhost, or Firecracker's VMM thread
  std::vector<std::unique_ptr<WorkerPool>> pools; // one per guest vCPU, in vCPU order
  std::array<WorkItem, 3> work;                   // by GuestWork
  std::vector<SimThread*> host_apps;              // the host's application threads
  Counters n;
  RunLength* run_length = nullptr;         // sim.run_length: auto (told of every byte the readers get)
  RoundTrips* round_trips = nullptr;       // round-trip patterns: told of every response completed
  int cause_rx_refill = -1;                // round_trips' cause: the guest's batched rx refill
  std::vector<models::HaltPoll> halt_poll; // KVM's halt polling of each guest vCPU, by vCPU (Cpu::index())
  // direction bidirectional: the connections run together, as iperf3
  // clients do for a fixed time; once the first is done, every other ends
  // with the bytes its writer has begun (stream_done).
  bool end_together = false;
  // Each Stage's id in round_trips' stages (the order of `direction`).
  std::array<int, static_cast<std::size_t>(Stage::Count)> stage_ids{};
  // Connection conn's current round trip reaches stage st at t (the
  // engine's time); with packet p: only a data packet stamps.
  void stamp(int conn, Stage st, Time t) const
  {
    if (round_trips)
      round_trips->stamp(conn, stage_ids[static_cast<std::size_t>(st)], t);
  }
  void stamp(const Pkt& p, Stage st, Time t) const
  {
    if (p.op == Op::Rw && p.len > 0)
      stamp(p.conn, st, t);
  }
};

// Requests to a service thread that arrive at given times (doorbells,
// interrupts), consumed in time order once the thread's clock reaches them.
class Inbox {
public:
  void push(Time t, int kind) { q_.push(Req{t, seq_++, kind}); }
  // Pops every request due at or before t, in time order (then the order
  // they were made); calls f(kind) for each.
  template <class F> void take_due(Time t, F&& f)
  {
    while (!q_.empty() && q_.top().t <= t) {
      const int kind = q_.top().kind;
      q_.pop();
      f(kind);
    }
  }
  bool empty() const { return q_.empty(); }

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

// The device's thread as the guest driver sees it: a kick of a queue
// (virtqueue_notify's write, an ioeventfd) reaches it at t.
class Device : public SimThread {
public:
  using SimThread::SimThread;
  virtual void ring(Time t, VqKind kind) = 0;
};

// ---------------------------------------------------------------------------
// The vhost worker (drivers/vhost/vhost.c vhost_worker, drivers/vhost/vsock.c)
class Vhost : public Device {
public:
  Vhost(World& w, Cpu& cpu, Shared& s)
      : Device(w, "vhost", cpu), s_(s), lat_(s.seed, s.iteration, "vhost", s.k.latency_jitter)
  {
    set_daemon();
  }

  // A guest kick (ioeventfd -> vhost_poll_wakeup) or a host send()
  // (vhost_work_queue) queues a work item; the worker wakes at t.
  void ring(Time t, VqKind kind) override
  {
    inbox_.push(t, kind);
    wake_at(t);
  }

protected:
  Task<> body() override;

private:
  // The worker's work items (struct vhost_work), one per kind it is rung
  // with: the tx queue's kick (handle_tx_kick), the rx queue's kick and the
  // send work (both vhost_transport_do_send_pkt). vhost_work_queue(): a
  // no-op while the item is queued; else at the end of the work list, which
  // vhost_worker runs first come first served.
  void queue(VqKind w)
  {
    if (!queued_[w]) {
      queued_[w] = true;
      list_.push_back(w);
    }
  }
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
  std::deque<VqKind> list_;      // dev->work_list, in queueing order
  std::array<bool, 3> queued_{}; // VHOST_WORK_QUEUED, by VqKind
};

// The knobs of a point (virtio_vsock.cpp), as the simulation and the
// analytic bound (bound.cpp) both use them.
Knobs read_knobs(const Params& p);

// Where connection i's threads run: guest vCPU (1 + i) mod vcpus (vCPU 0
// takes the device's interrupts), host CPU (1 + i) mod host CPUs (vhost on
// CPU 0). With workload.app iperf3 every connection's threads run where the
// first's do: iperf3 (before 3.16, and iperf-vsock) serves all of its
// streams from one thread (iperf_run_client's and iperf_run_server's
// select() loop), so its streams share one CPU each side (`one_thread`).
inline int guest_cpu_of(int i, int vcpus, bool one_thread = false)
{
  return (1 + (one_thread ? 0 : i)) % vcpus;
}
// firecracker_vsock: Firecracker's CI pins guest client i to vCPU i mod vcpus
// (test_vsock_throughput.py: taskset per client), interrupts or not.
inline int fc_guest_cpu_of(int i, int vcpus)
{
  return i % vcpus;
}
inline int host_cpu_of(int i, int host_cpus, bool one_thread = false)
{
  return (1 + (one_thread ? 0 : i)) % host_cpus;
}

// What schedule() tells the workqueue of a worker that blocks
// (sched_submit_work -> wq_worker_sleeping) and that runs again
// (sched_update_worker -> wq_worker_running): a kworker implements it.
struct SleepHooks {
  virtual void sleeping() = 0;
  virtual void running() = 0;

protected:
  ~SleepHooks() = default;
};

// How a thread waits: the wake-up latency and context switch of its side.
struct Waiter {
  SimThread& t;
  Latency& lat;
  double wakeup_latency, context_switch;
  // Added when the sleeper's vCPU is halted when the wake-up comes (a guest
  // thread whose vCPU runs nothing else): halted_wakeup, or poll_wakeup if
  // KVM was still polling for it (`shared`'s halt_poll); 0 on the host.
  double halted_wakeup = 0;
  double poll_wakeup = 0;
  Shared* shared = nullptr; // the guest's vCPUs' halt polling; nullptr on the host
  // Told when the thread blocks and when it runs again: a kworker's pool
  // (schedule()'s workqueue hooks); nullptr for other threads.
  SleepHooks* hooks = nullptr;
  // On the host: the round trips a host core's idle exit is noted in (or nullptr).
  RoundTrips* round_trips = nullptr;
};
// Per-iteration variability: every host CPU cost (virtio_host_*, in cycles
// of CPU; not the latencies) scaled by one factor drawn from the iteration's
// own stream, the host's copy bandwidths divided by it; every guest CPU cost
// (virtio_guest_* and the shared guest_*) by another (guest_iteration_jitter).
void apply_iteration_jitter(Costs& k, std::uint64_t seed, std::uint32_t iteration);

// Sleep until woken (virtio_transport_common.cpp), forgetting the other
// wake-ups pending by then.
Task<> sleep_until_woken(Waiter w);
// lock_sock(): settle, then take the socket lock, sleeping while another
// thread holds it (virtio_transport_common.cpp).
Task<> lock_sock(Waiter w, Sock& sk);
// virtio_transport_recv_pkt()'s start on a socket: the packet's credit
// fields (virtio_transport_space_update), then lock_sock; with
// credit_locked (ce7536bc7398, 5.12) the lock first, so a writer inside
// sendmsg sees the fields only once it has let the lock go.
Task<> lock_sock_for_recv(Waiter w, Sock& sk, const Pkt& p, bool credit_locked);
// release_sock(): settle, drop the lock, wake one waiter.
Task<> release_sock(SimThread& t, Sock& sk);
// mutex_lock() and mutex_unlock() of a SleepLock, the same way, except
// that a waiter resumes as the owner releases it, with no wake-up latency
// or context switch: mutex_optimistic_spin() spins while the owner runs on
// another CPU (the spinning's CPU time is not charged).
Task<> mutex_lock(SimThread& t, Latency& lat, SleepLock& m);
Task<> mutex_unlock(SimThread& t, SleepLock& m);
// mutex_trylock() (called settled): takes the lock if it is free.
bool mutex_trylock(SimThread& t, SleepLock& m);
// virtio_transport_send_pkt_info() for one packet `p` (its op, length and
// flags): the packet, with the
// sender's credit fields (virtio_transport_common.cpp); queue_pkt also puts
// it on `list`.
std::uint32_t new_pkt(Slab& slab, Sock& sock, int conn, Pkt p);
void queue_pkt(std::deque<Queued>& list, Slab& slab, Sock& sock, int conn, Pkt p);
// The free of a sent packet holding MSG_ZEROCOPY state (skb_release_data):
// its pinned pages released and, for the last packet of an enqueue call,
// the notification queued on the sender's error queue
// (virtio_transport_common.cpp). Returns what it costs at these prices.
double zerocopy_free(Counters& n, const Pkt& p, Sock& sender, double unpin_page, double notify);

// kmalloc() (mm/slub.c): sizes up to KMALLOC_MAX_CACHE_SIZE (two 4 KiB
// pages) come from SLUB's kmalloc caches, larger ones from the page
// allocator (kmalloc_large, order get_order(size)); 4.19 through 6.x.
inline constexpr std::uint64_t kKmallocMaxCacheSize = 8192;
// SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) on x86-64, at the end of
// every skb head.
inline constexpr std::uint64_t kSkbSharedInfoBytes = 320;
// kmalloc_size_roundup(): the size of the object kmalloc returns.
std::uint64_t kmalloc_size_roundup(std::uint64_t bytes);
// What a packet of `len` payload bytes asks kmalloc for: struct
// virtio_vsock_pkt's buffer, kmalloc(len) (none for 0), or the sk_buff's
// head (__alloc_skb: SKB_DATA_ALIGN(header + len) + skb_shared_info).
std::uint64_t pkt_kmalloc_bytes(bool skb, std::uint32_t len);
// PAGE_ALLOC_COSTLY_ORDER (include/linux/mmzone.h): the highest order the
// per-CPU lists hold from 5.13 (pcp_allowed_order, 44042b449872).
inline constexpr unsigned kPageAllocCostlyOrder = 3;
// get_order(): the buddy order of a block of `bytes` (4 KiB pages).
unsigned page_order(std::uint64_t bytes);
// A packet's allocations by class: the struct (kzalloc'd virtio_vsock_pkt,
// or the sk_buff from skbuff_head_cache) is a slab object; the buffer or
// head is one or goes to the page allocator, by its size: rmqueue() takes
// it from the per-CPU lists (`pcp`, order <= 3 with pcp_high_order) or from
// the zone's free lists under zone->lock (`page`).
// `zero_bytes`: what init_on_alloc zeroes of them, the buffer or head as
// kmalloc returned it (kmalloc_size_roundup: 8 KiB for a 4 KiB packet's skb
// head, 128 KiB for a 64 KiB one's); the struct is memset by its allocator
// either way (part of virtio_*_alloc).
struct PktAllocs {
  unsigned slab = 0, page = 0, pcp = 0;
  std::uint64_t zero_bytes = 0;
};
PktAllocs pkt_allocs(const Knobs& kn, std::uint32_t len);
inline void count_allocs(Counters& n, PktAllocs a, std::uint64_t times = 1)
{
  n.allocations.add(times * (a.slab + a.page + a.pcp));
  n.page_allocs.add(times * (a.page + a.pcp));
}
// Their cost on either side: virtio_*_alloc per slab object,
// virtio_*_page_alloc per zone->lock block, virtio_*_page_alloc_pcp per
// per-CPU-list block.
// With a side's init_on_alloc, the zeroing of what it allocated is part of
// the allocation (post_alloc_hook, slab_post_alloc_hook).
inline double guest_allocs(const Costs& k, PktAllocs a)
{
  return a.slab * k.virtio_guest_alloc + a.page * k.virtio_guest_page_alloc + a.pcp * k.virtio_guest_page_alloc_pcp +
         k.zero(k.virtio_guest_init_on_alloc, static_cast<double>(a.zero_bytes));
}
inline double host_allocs(const Costs& k, PktAllocs a)
{
  return a.slab * k.virtio_host_alloc + a.page * k.virtio_host_page_alloc + a.pcp * k.virtio_host_page_alloc_pcp +
         k.zero(k.virtio_host_init_on_alloc, static_cast<double>(a.zero_bytes));
}
// A write of `len` bytes of payload by `cpu` that brings `fill` bytes into
// its L2 (Cpu::cache_fills): its stamp, for whoever copies it out later.
inline WriteStamp note_write(Cpu& cpu, std::uint32_t len, double fill)
{
  WriteStamp w{&cpu, cpu.cache_fills(), 0, len};
  cpu.fill_cache(fill);
  w.fill1 = cpu.cache_fills();
  return w;
}
// Where the source of a copy of [off, off + n) of a payload stamped `w` is
// for `reader`, with each core's L2 of `l2` bytes (0: not modelled).
inline CopySplit where(const WriteStamp& w, const Cpu& reader, double off, double n, double l2)
{
  return split_copy(w, &reader, w.cpu ? w.cpu->cache_fills() : 0, off, n, l2);
}

// The payload a guest rx buffer holds (rx_buf_size), and with sk_buff the
// room its skb has once kmalloc rounded the head up: the tailroom
// virtio_transport_recv_enqueue copies small packets into.
std::uint32_t rx_buffer_room(const Knobs& kn);
// Scatter-gather entries of a guest rx buffer (virtio_vsock_rx_fill): a
// header and a payload buffer; one skb from 6.3.
inline std::uint16_t rx_buffer_sgs(const Knobs& kn)
{
  return kn.skb ? 1 : 2;
}

// virtqueue_notify() of a kick virtqueue_kick_prepare() asked for, by
// thread `t` (a kworker, or a sender on the 6.12 fast path)
// (virtio_transport.cpp).
Task<> notify_vhost(SimThread& t, Shared& s, Latency& lat, VqKind vq);
// virtio_transport_send_skb(): one packet's chain (header, payload) onto
// the tx queue at t; false when the queue is full.
bool tx_add(Shared& s, Time t, std::uint32_t id);
// virtio_transport_send_skb_fast_path() (6.12), called settled: with
// tx_lock taken by mutex_trylock, add packet `id` to the tx queue and kick
// if vhost wants it, all charged to `t`; false (nothing done) when tx_lock
// is held or the queue is full.
Task<bool> send_fast_path(SimThread& t, Shared& s, Latency& lat, std::uint32_t id);
// virtio_transport_send_pkt() of packet `id` by `t`, called settled: the
// fast path if tx_fast_path, else send_pkt_queue and the send work on
// `local`, the worker pool of t's vCPU.
Task<> guest_send_pkt(SimThread& t, Shared& s, Latency& lat, WorkerPool& local, std::uint32_t id);
// queue_work() of a guest work item (virtio_transport.cpp): a no-op while
// it is pending; it goes to the pool of the kworker still running it (work
// items are not reentrant), else to `local`, the pool of the queueing vCPU.
void queue_work(Shared& s, GuestWork w, WorkerPool& local, Time t);
// A guest vCPU's worker pool with its kworkers (WorkerPool::kWorkers):
// `first` makes the pool and its first kworker, kworker_<cpu>; `rest` its
// other kworkers (made after every other thread, so that the ids, which
// order simultaneous events, of the threads made before stay as they were).
WorkerPool& add_worker_pool(World& w, Shared& s, Cpu& cpu);
void add_spare_kworkers(World& w, Shared& s);
// kvm_vcpu_halt's polling of guest vCPU `vcpu` (the world's vCPUs are its
// first CPUs, added in order): virtio_kvm_halt_poll_ns at most, grown from
// halt_poll_ns_grow_start (10 us) (virtio_transport.cpp).
void add_halt_polling(Shared& s, const Cpu& vcpu);
// Why the simulated system cannot move any more, when a kernel rule
// explains it (the run driver reports the point as hanging, sim/world.hpp
// ModelledHang); empty when no rule does (a model defect: internal error).
std::string kernel_hang_reason(const Shared& s);
// virtio_vsock_rx_fill() at probe: rx buffers until the queue is full, no
// cost; returns how many (virtio_transport.cpp).
std::uint32_t add_rx_buffers(Shared& s, Time t);

// ---------------------------------------------------------------------------
// Interrupt context of the guest vCPU the device's MSI-X vectors land on
// (virtio_vsock.irq_vcpu, 0 by default): the injected interrupt and
// vring_interrupt, whose callbacks (virtio_vsock_rx_done,
// virtio_vsock_tx_done) queue the rx and tx work on this vCPU's worker pool.
// It preempts any thread on its vCPU. The vectors (drivers/virtio/
// virtio_pci_common.c vp_find_vqs): one per virtqueue (msix_vectors
// per_vq), or one for all of them (shared, VP_MSIX_VQ_VECTOR, QEMU's
// default), whose handler vp_vring_interrupt runs vring_interrupt on every
// queue.
class GuestIrq : public SimThread {
public:
  GuestIrq(World& w, Cpu& cpu, Shared& s, WorkerPool& pool) : SimThread(w, "virtio_irq", cpu), s_(s), pool_(pool)
  {
    set_daemon();
    become_interrupt_context();
  }

  // vhost's signal of queue `vq` (its call eventfd, irqfd) reaches the
  // guest at t as an MSI on that queue's vector.
  void raise(Time t, VqKind vq);

protected:
  Task<> body() override;

private:
  // vring_interrupt(): the queue's callback if it has new used entries
  // (more_used); whether it had.
  bool vring_interrupt(VqKind vq);

  Shared& s_;
  WorkerPool& pool_;
  Inbox inbox_; // MSIs by vector
};

// ---------------------------------------------------------------------------
// A kworker of a guest vCPU's worker pool (process context: it sleeps on
// locks and interrupts preempt it; kernel/workqueue.c worker_thread). It
// runs the items of its pool's worklist first come first served while no
// other worker of the pool runs: rx and tx work queued by the interrupt,
// the send work queued by every packet a socket on this vCPU sends. Its CPU
// time is its own (not the application's).
class Kworker : public SimThread, public SleepHooks {
public:
  Kworker(World& w, Cpu& cpu, Shared& s, WorkerPool& pool, const std::string& name)
      : SimThread(w, name, cpu), s_(s), pool_(pool), lat_(s.seed, s.iteration, name, s.k.latency_jitter)
  {
    set_daemon();
  }
  // wq_worker_sleeping(): this worker, running a work item, blocks.
  void sleeping() override;
  // wq_worker_running(): it runs again.
  void running() override;
  WorkerPool& pool() const { return pool_; }

protected:
  Task<> body() override;

private:
  // process_one_work(): run the item, unless another worker of the pool is
  // running it (then it is moved to that worker's scheduled list).
  Task<> process_one_work(GuestWork w);
  Task<> send_work();
  Task<> rx_work();
  Task<> process_rx_buffer(std::uint32_t id);
  Task<> tx_work();
  Task<> rx_fill();
  Task<> deliver(const Pkt& p, std::uint32_t len);
  Waiter waiter();

  Shared& s_;
  WorkerPool& pool_;
  Latency lat_;
  std::deque<GuestWork> scheduled_;  // worker->scheduled: items left to it by a collision
  bool sleeping_ = false;            // worker->sleeping: blocked, not counted in nr_running
  std::vector<std::uint32_t> taken_; // rx buffers taken in one look
};

// ---------------------------------------------------------------------------
// The application threads (one writer and one reader per connection). Both
// ends run the same socket layer (af_vsock.c vsock_stream_sendmsg /
// vsock_stream_recvmsg over virtio_transport_common.c); what differs is the
// costs and how a packet reaches the other side.

// The costs of one end's socket layer.
struct StackCosts {
  double user_per_call, send_syscall, recv_syscall, poll_syscall, alloc, page_alloc, page_alloc_pcp, free, pkt,
      dequeue_pkt, wakeup_latency, context_switch, halted_wakeup, poll_wakeup, pin_page, errqueue_recv;
  double copy_fixed, copy_bpc;
  double init_on_alloc, zero_bpc; // the side's init_on_alloc flag, the zeroing rate
  double rx_copy_bpc;             // a reader's copy out of a packet another core wrote
  double l2_bytes, l3_copy_bpc;   // where another core's data are (models/cache_reuse.hpp)
  // A writer's copy of its own (cache-hot) buffer into a new packet.
  double copy(double bytes) const { return copy_fixed + std::ceil(bytes / copy_bpc); }
  // A reader's copy out of a received packet (memcpy_to_msg), its source
  // split by where its lines are.
  double rx_copy(double bytes, CopySplit s = {}) const
  {
    return copy_fixed + std::ceil(Costs::split_cycles(bytes, s, rx_copy_bpc, copy_bpc, l3_copy_bpc));
  }
  double allocs(PktAllocs a) const
  {
    return a.slab * alloc + a.page * page_alloc + a.pcp * page_alloc_pcp +
           Costs::zero_cycles(init_on_alloc, static_cast<double>(a.zero_bytes), zero_bpc);
  }

  // user_per_call: the application's own user time per call, as its model
  // (workload.app) charges it: the plain loop's per send()/recv(), or
  // iperf3's per block sent (however many write()s) and per block received.
  static StackCosts guest(const Costs& k, bool iperf3)
  {
    return {iperf3 ? k.virtio_guest_iperf3_user_per_call : k.guest_user_per_call,
            k.virtio_guest_send_syscall,
            k.virtio_guest_recv_syscall,
            k.virtio_guest_poll_syscall,
            k.virtio_guest_alloc,
            k.virtio_guest_page_alloc,
            k.virtio_guest_page_alloc_pcp,
            k.virtio_guest_free,
            k.virtio_guest_pkt,
            k.virtio_guest_dequeue_pkt,
            k.guest_wakeup_latency,
            k.guest_context_switch,
            k.virtio_guest_halted_wakeup,
            k.virtio_guest_halt_poll_wakeup,
            k.virtio_guest_zcopy_pin_page,
            k.virtio_guest_errqueue_recv,
            k.guest_copy_fixed,
            k.guest_copy_bytes_per_cycle,
            k.virtio_guest_init_on_alloc,
            k.virtio_zero_bytes_per_cycle,
            k.virtio_guest_rx_copy_bytes_per_cycle,
            k.virtio_l2_bytes,
            k.virtio_l3_copy_bytes_per_cycle};
  }
  static StackCosts host(const Costs& k, bool iperf3)
  {
    return {iperf3 ? k.virtio_host_iperf3_user_per_call : k.virtio_host_user_per_call,
            k.virtio_host_send_syscall,
            k.virtio_host_recv_syscall,
            k.virtio_host_poll_syscall,
            k.virtio_host_alloc,
            k.virtio_host_page_alloc,
            k.virtio_host_page_alloc_pcp,
            k.virtio_host_free,
            k.virtio_host_pkt,
            k.virtio_host_dequeue_pkt,
            k.host_wakeup_latency,
            k.guest_context_switch,
            0,
            0,
            k.virtio_host_zcopy_pin_page,
            k.virtio_host_errqueue_recv,
            k.virtio_host_copy_fixed,
            k.virtio_host_copy_bytes_per_cycle,
            k.virtio_host_init_on_alloc,
            k.virtio_zero_bytes_per_cycle,
            k.virtio_host_rx_copy_bytes_per_cycle,
            k.virtio_l2_bytes,
            k.virtio_l3_copy_bytes_per_cycle};
  }
};

// What an application thread does: stream (write or read), or the
// initiator's or the responder's part of a round-trip workload (one thread
// sending and receiving in turn on its socket).
enum class Role : std::uint8_t { Writer, Reader, Initiator, Responder };
inline const char* role_name(Role r)
{
  return r == Role::Writer ? "writer" : r == Role::Reader ? "reader" : "app";
}

class AppThread : public SimThread, public RoundTripSocket {
protected:
  AppThread(World& w, Cpu& cpu, Shared& s, Conn& c, Sock& sk, Role role, StackCosts sc, std::uint32_t max_pkt,
            const char* side)
      : SimThread(w, fmt::format("{}_{}{}", side, role_name(role), c.index), cpu), s_(s), c_(c), sk_(sk), role_(role),
        sc_(sc), max_pkt_(max_pkt),
        lat_(s.seed, s.iteration, fmt::format("conn{}.{}_{}", c.index, side, role_name(role)), s.k.latency_jitter)
  {
    sk.app = this;
  }

  // How a packet this end built reaches the other side (called settled).
  virtual Task<> queue_packet(const Pkt& p) = 0;
  Waiter waiter()
  {
    return Waiter{*this,
                  lat_,
                  sc_.wakeup_latency,
                  sc_.context_switch,
                  sc_.halted_wakeup,
                  sc_.poll_wakeup,
                  &sk_ == &c_.guest ? &s_ : nullptr,
                  nullptr,
                  s_.round_trips};
  }

  Task<> body() override;
  Task<> syscall_entry();
  Task<> syscall_exit();

  Shared& s_;
  Conn& c_;
  Sock& sk_;
  Role role_;
  StackCosts sc_;
  std::uint32_t max_pkt_;
  Latency lat_;

private:
  // Round trips (transports/round_trip_app.hpp): one blocking send() of a
  // whole message; blocking recv()s until `bytes` more have come.
  Task<> send_message(std::uint64_t bytes) override;
  Task<> receive_message(std::uint64_t bytes) override;
  // The benchmark's sender: blocking send() calls in a loop, or iperf3's
  // client (select(), then up to kMultisend non-blocking write()s).
  Task<> send_all();
  // The benchmark's receiver: blocking recv() calls of message_size bytes
  // in a loop, or iperf3's server (select(), then read()s until a block).
  Task<> receive_all();
  // One send() of up to `len` bytes (vsock_stream_sendmsg): packets of at
  // most max_pkt_ bytes and the credit, each with two allocations and a
  // copy from user memory. Blocking: sleeps for credit until all is sent;
  // non-blocking: returns what the credit allowed (0: EAGAIN). `app_work`:
  // the application's own work before it (false for the rest of an iperf3
  // block that Nwrite() writes again).
  Task<std::uint64_t> send_call(std::uint64_t len, bool blocking, bool app_work = true);
  // One packet's allocation and payload: copied, or pinned pages (zcopy);
  // `notify`: it carries its enqueue call's MSG_ZEROCOPY notification.
  Task<> fill_pkt(Pkt& p, bool zcopy, bool notify);
  // virtio_transport_can_zcopy() for an enqueue call of `rest` bytes, the
  // rest of the send(), with `credit` to send them.
  bool can_zcopy(std::uint64_t rest, std::uint64_t credit, bool first) const;
  // The benchmark's recvmsg(MSG_ERRQUEUE) before a send(): one per entry
  // the error queue holds (workload.zerocopy).
  Task<> read_errqueue();
  // What a stream recv() takes (virtio_transport_stream_do_dequeue).
  Task<std::uint64_t> dequeue_stream(std::uint64_t len);
  // The whole message recv() takes with SOCK_SEQPACKET
  // (virtio_transport_seqpacket_do_dequeue).
  Task<std::uint64_t> dequeue_message(std::uint64_t len);
  // One blocking recv() of up to `len` bytes (vsock_stream_recvmsg,
  // virtio_transport_stream_do_dequeue, then the credit update policy),
  // with the application's own work per call or without it.
  Task<std::uint64_t> recv_call(std::uint64_t len, bool user_work);
  // select() on the socket until `ready` holds (vsock_poll under the lock).
  Task<> select_until(bool writable);
  // Whether this recv() ends with a CREDIT_UPDATE (called settled, under
  // the socket lock).
  bool credit_update_due() const;
};

// A guest application thread. virtio_transport_send_pkt() queues each packet
// on the driver's send list and queues the send work on this vCPU's pool;
// with the 6.12 fast path it first tries to add the packet itself.
class GuestApp : public AppThread {
public:
  GuestApp(World& w, Cpu& cpu, Shared& s, Conn& c, Role role, WorkerPool& pool)
      : AppThread(w, cpu, s, c, c.guest, role, StackCosts::guest(s.k, s.kn.iperf3), s.kn.max_pkt_size, "guest"),
        pool_(pool)
  {
  }

protected:
  Task<> queue_packet(const Pkt& p) override;

private:
  WorkerPool& pool_;
};

// The host's own af_vsock + virtio_transport_common, with
// vhost_transport_send_pkt handing packets to the worker.
class HostApp : public AppThread {
public:
  HostApp(World& w, Cpu& cpu, Shared& s, Conn& c, Role role)
      : AppThread(w, cpu, s, c, c.host, role, StackCosts::host(s.k, s.kn.iperf3), s.kn.host_pkt_size, "host")
  {
  }

protected:
  Task<> queue_packet(const Pkt& p) override
  {
    s_.stamp(Pkt{.conn = c_.index, .op = p.op, .len = p.len}, Stage::VhostWakeup, world().now());
    queue_pkt(s_.host_send, s_.slab, sk_, c_.index, p);
    s_.vhost->ring(now(), kSend); // vhost_work_queue
    co_return;
  }
};

} // namespace vsim::virtio_vsock::detail
