// Firecracker's vsock device (firecracker.hpp says what it models; function
// names are Firecracker's, src/vmm/src/devices/virtio/vsock/, and Linux's
// net/unix/af_unix.c for the host sockets).
#include "transports/virtio_vsock/firecracker.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace vsim::virtio_vsock::detail {

namespace {

// unix_stream_sendmsg(): an skb holds at most SKB_MAX_HEAD(0) in its head
// and UNIX_SKB_FRAGS_SZ (32 KiB) in page fragments, and never more than
// half the send buffer less 64 bytes ("keep two messages in the pipe").
constexpr std::uint32_t kSkbMaxHead = 3776; // SKB_MAX_HEAD(0) on x86-64 with 4 KiB pages
constexpr std::uint32_t kSkbFrags = 32768;
// Bytes an skb charges to its writer's sk_wmem_alloc (skb->truesize): its
// fragments' whole pages and its head's kmalloc with struct sk_buff and
// skb_shared_info (SKB_TRUESIZE).
std::uint64_t truesize(std::uint32_t len)
{
  const std::uint32_t head = std::min(len, kSkbMaxHead);
  const std::uint32_t frags = len - head;
  return 1024 + std::uint64_t{(frags + kPageSize - 1) / kPageSize} * kPageSize + head;
}

// MAX_PKT_BUF_SIZE: the largest payload the device reads into or takes
// from one packet.
constexpr std::uint32_t kMaxPktBuf = 65536;

// One AF_UNIX stream socket's receive queue, filled by its peer's writes:
// the skbs queued and what they charge the writer (sk_wmem_alloc).
struct UnixQueue {
  std::deque<std::uint32_t> skbs; // payload bytes of each skb
  std::uint32_t head_used = 0;    // bytes already read from the first (UNIXCB(skb).consumed)
  std::uint64_t bytes = 0;        // unread bytes
  std::uint64_t wmem = 0;         // the writer's sk_wmem_alloc: truesize of the skbs queued
  std::uint64_t written = 0, read = 0;
};

// VsockConnection (csm/connection.rs) with its host stream: the device's
// credit view is the Conn's host Sock (fwd_cnt: bytes written to the host
// stream; tx_cnt: bytes sent to the guest, Firecracker's rx_cnt;
// peer_buf_alloc/peer_fwd_cnt: the guest's).
struct FcConn {
  Conn* c = nullptr;
  UnixQueue to_host; // the VMM writes, the host application reads (guest to host)
  UnixQueue to_vmm;  // the host application writes, the VMM reads (host to guest)
  SimThread* app = nullptr;
  std::uint64_t txbuf = 0; // bytes in the connection's TxBuf (csm/txbuf.rs)
  std::uint64_t last_fwd_cnt_to_peer = 0;
  bool rw = false, credit_update = false; // PendingRx::Rw, PendingRx::CreditUpdate
  bool in_rxq = false;                    // queued on the muxer's rxq
  bool poll_in = true, poll_out = false;  // the socket's polled evset (get_polled_evset)
};

// The injected interrupt reaches the guest's handler after
// virtio_host_interrupt_latency (the vCPU's kick and VM entry): how both
// the VMM's inline injection and the irqfd kworker's end.
void deliver_interrupt(Shared& s, Latency& lat, Time now)
{
  s.irq->raise(now + lat(s.k.virtio_host_interrupt_latency), kRx);
}

// x86 KVM's injection of a Firecracker device's interrupt. The devices sit
// on legacy GSIs (arch/x86_64/layout.rs: 5-23) routed to the in-kernel
// IOAPIC, and kvm_arch_set_irq_inatomic() (arch/x86/kvm/irq_comm.c) injects
// only MSI and Hyper-V SINT routes from the eventfd's wake-up, so
// irqfd_wakeup() (virt/kvm/eventfd.c) schedule_work()s irqfd->inject: a
// kworker of the system workqueue on the writer's core (the VMM's: the
// VMM thread is pinned) runs irqfd_inject(), kvm_set_irq() up and down
// through the IOAPIC, which kicks the vCPU. The woken kworker takes the
// core when the VMM's write returns (wake-up preemption) and its time is
// its own, not the VMM thread's. schedule_work() on an item still pending
// (queued, not started) is a no-op; process_one_work() clears PENDING
// before it runs the item, so a write meanwhile queues it again.
class IrqfdWorker : public SimThread {
public:
  IrqfdWorker(World& w, Cpu& cpu, Shared& s)
      : SimThread(w, "kworker_irqfd", cpu), s_(s), lat_(s.seed, s.iteration, "kworker_irqfd", s.k.latency_jitter)
  {
    set_daemon();
  }
  // schedule_work(&irqfd->inject), by a thread whose time is the engine's.
  void schedule()
  {
    if (pending_)
      return;
    pending_ = true;
    wake_at(world().now());
  }

protected:
  Task<> body() override
  {
    for (;;) {
      if (!pending_) {
        if (co_await wait())
          charge(s_.k.guest_context_switch, Cat::Sys); // switched to on the busy core: no idle exit, no IPI
        continue;
      }
      pending_ = false;
      co_await run(s_.k.fc_irqfd_inject, Cat::Sys);
      s_.n.irqfd_injections.add();
      deliver_interrupt(s_, lat_, now());
    }
  }

private:
  Shared& s_;
  Latency lat_;
  bool pending_ = false;
};

} // namespace

class FcVmm : public Device {
public:
  FcVmm(World& w, Cpu& cpu, Shared& s, const FcKnobs& fk)
      : Device(w, "fc_vmm", cpu), s_(s), fk_(fk), lat_(s.seed, s.iteration, "fc_vmm", s.k.latency_jitter)
  {
    set_daemon();
  }

  // A guest kick: the queue's ioeventfd becomes readable in the VMM's epoll.
  void ring(Time t, VqKind kind) override
  {
    inbox_.push(t, kind);
    wake_at(t);
  }

  // Connection i (made before the run, when its host application is).
  FcConn& conn(int i)
  {
    while (conns_.size() < s_.conns.size()) {
      conns_.emplace_back();
      conns_.back().c = &s_.conns[conns_.size() - 1];
    }
    return conns_.at(static_cast<std::size_t>(i));
  }
  const FcKnobs& knobs() const { return fk_; }
  // The VMM thread sleeps in epoll_wait: something it polls became ready.
  void poke()
  {
    if (waiting())
      wake_at(now());
  }

  // write() on an AF_UNIX stream, non-blocking, of up to `len` bytes into
  // `q` (unix_stream_sendmsg): skbs until the writer's sk_wmem_alloc
  // reaches sk_sndbuf; returns the bytes taken (0: EAGAIN). `vmm`: the
  // VMM thread writing from guest memory (its seccomp filter, a remote
  // copy), else the host application from its own buffer.
  Task<std::uint64_t> unix_write(SimThread& t, UnixQueue& q, std::uint64_t len, bool vmm, SimThread* reader);
  // read() on an AF_UNIX stream, non-blocking, of up to `len` bytes from
  // `q` (unix_stream_read_generic); each skb consumed is freed and
  // uncharged from its writer (sock_wfree -> unix_write_space).
  Task<std::uint64_t> unix_read(SimThread& t, UnixQueue& q, std::uint64_t len, bool vmm);
  // unix_writable(): the writer may write again (sk_wmem_alloc << 2 <= sk_sndbuf).
  bool writable(const UnixQueue& q) const { return q.wmem * 4 <= fk_.unix_sndbuf; }

protected:
  Task<> body() override;

private:
  double sys(double c) const { return c + s_.k.fc_seccomp; } // a VMM syscall with its seccomp filter
  // The guest's credit for data to it (VsockConnection::peer_avail_credit).
  std::uint64_t peer_credit(const FcConn& fc) const { return fc.c->host.credit(); }
  bool readable(const FcConn& fc) const { return fc.poll_in && fc.to_vmm.bytes > 0; }
  bool out_ready(const FcConn& fc) const { return fc.poll_out && writable(fc.to_host); }
  // The muxer's nested epoll fd is readable: a connection it polls is ready.
  bool backend_ready() const
  {
    return std::any_of(conns_.begin(), conns_.end(), [&](const FcConn& fc) { return readable(fc) || out_ready(fc); });
  }
  bool has_pending_rx() const { return !rxq_.empty(); }
  void queue_rx(int i)
  {
    FcConn& fc = conn(i);
    if (!fc.in_rxq) {
      fc.in_rxq = true;
      rxq_.push_back(i);
    }
  }
  // apply_conn_mutation()'s epoll_ctl(MOD) when the polled evset changed.
  Task<> update_evset(FcConn& fc);
  // VsockConnection::peer_needs_credit_update(): more than tx_buf_size -
  // threshold bytes forwarded since the guest was last told.
  bool peer_needs_credit_update(const FcConn& fc) const
  {
    return fk_.tx_buf_size - (fc.c->host.fwd_cnt - fc.last_fwd_cnt_to_peer) < fk_.credit_threshold;
  }
  Task<bool> process_tx();
  Task<bool> process_rx();
  Task<> send_bytes(FcConn& fc, const Pkt& p);
  Task<> flush_txbuf(FcConn& fc);
  Task<> notify_backend();
  Task<> signal_used_queue();

  friend FcVmm& add_firecracker_vmm(World& w, Cpu& cpu, Shared& s, const FcKnobs& fk);

  Shared& s_;
  FcKnobs fk_;
  Latency lat_;
  IrqfdWorker* irqfd_ = nullptr; // fc_irqfd_inject above 0: the injection's kworker
  Inbox inbox_;
  std::vector<FcConn> conns_;
  std::deque<int> rxq_; // MuxerRxQ: connections with pending rx, in order
  bool rx_evt_ = false, tx_evt_ = false;
};

FcVmm& add_firecracker_vmm(World& w, Cpu& cpu, Shared& s, const FcKnobs& fk)
{
  FcVmm& v = w.spawn<FcVmm>(cpu, s, fk);
  s.device = &v;
  if (s.k.fc_irqfd_inject > 0)
    v.irqfd_ = &w.spawn<IrqfdWorker>(cpu, s);
  return v;
}

const SimThread& vmm_thread(const FcVmm& vmm)
{
  return vmm;
}

Task<std::uint64_t> FcVmm::unix_write(SimThread& t, UnixQueue& q, std::uint64_t len, bool vmm, SimThread* reader)
{
  const Costs& k = s_.k;
  // The syscall's entry (with the caller's charged work), then the send
  // buffer as of then.
  co_await t.run(k.fc_unix_syscall + (vmm ? k.fc_seccomp : 0.0), Cat::Sys);
  s_.n.syscalls.add();
  const double bpc = vmm ? k.fc_host_rx_copy_bytes_per_cycle : k.fc_host_copy_bytes_per_cycle;
  const std::uint32_t half = fk_.unix_sndbuf / 2 > 64 ? fk_.unix_sndbuf / 2 - 64 : 1u;
  const std::uint32_t most = std::min(kSkbMaxHead + kSkbFrags, half);
  std::uint64_t written = 0;
  while (written < len && q.wmem < fk_.unix_sndbuf) { // sock_alloc_send_pskb: EAGAIN at a full send buffer
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(len - written, most));
    co_await t.run(k.fc_unix_skb + std::ceil(n / bpc), Cat::Sys); // the skb, skb_copy_datagram_from_iter
    s_.n.allocations.add();
    s_.n.copies.add();
    q.skbs.push_back(n);
    q.bytes += n;
    q.wmem += truesize(n);
    q.written += n;
    written += n;
    // other->sk_data_ready(): the reader, if it sleeps in select()/epoll.
    if (reader != nullptr && reader->waiting())
      reader->wake_at(t.now());
  }
  co_return written;
}

Task<std::uint64_t> FcVmm::unix_read(SimThread& t, UnixQueue& q, std::uint64_t len, bool vmm)
{
  const Costs& k = s_.k;
  // The syscall's entry (with the caller's charged work), then the queue as
  // of then.
  co_await t.run(k.fc_unix_syscall + (vmm ? k.fc_seccomp : 0.0), Cat::Sys);
  s_.n.syscalls.add();
  std::uint64_t got = 0;
  while (got < len && q.bytes > 0) {
    const std::uint32_t skb = q.skbs.front();
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(len - got, skb - q.head_used));
    co_await t.run(std::ceil(n / k.fc_host_rx_copy_bytes_per_cycle), Cat::Sys); // skb_copy_datagram_iter
    q.head_used += n;
    q.bytes -= n;
    q.read += n;
    got += n;
    if (q.head_used == skb) { // consume_skb: sock_wfree uncharges the writer
      q.skbs.pop_front();
      q.head_used = 0;
      q.wmem -= truesize(skb);
      s_.n.frees.add();
    }
  }
  co_return got;
}

Task<> FcVmm::update_evset(FcConn& fc)
{
  const bool in = peer_credit(fc) > 0; // get_polled_evset: no IN while the guest has no room
  const bool out = fc.txbuf > 0;
  if (in == fc.poll_in && out == fc.poll_out)
    co_return;
  fc.poll_in = in;
  fc.poll_out = out;
  charge(sys(s_.k.fc_epoll_ctl), Cat::Sys); // settled with the next step
  s_.n.syscalls.add();
}

// EventManager::run() with the vsock device's subscriber (event_handler.rs
// Vsock::process): one epoll_wait per pass, then each ready fd's handler
// in the order they were registered (register_runtime_events: the rx
// queue's eventfd, the tx queue's, the event queue's, the backend's nested
// epoll fd). All are level-triggered.
Task<> FcVmm::body()
{
  const Costs& k = s_.k;
  for (;;) {
    co_await settle();
    inbox_.take_due(now(), [&](int kind) { (kind == kTx ? tx_evt_ : rx_evt_) = true; });
    const bool backend = backend_ready();
    if (!rx_evt_ && !tx_evt_ && !backend) {
      // Asleep in epoll_wait: a kick's ioeventfd or a host socket wakes it.
      if (co_await wait()) {
        // The scheduler's latency, then the switch to the thread (its CPU
        // time, as every woken thread's here).
        co_await sleep(lat_(k.host_wakeup_latency) + idle_exit(cpu(), now(), s_.round_trips));
        charge(k.guest_context_switch, Cat::Sys);
        s_.n.worker_wakeups.add();
      }
      continue;
    }
    s_.n.worker_runs.add();
    charge(sys(k.fc_loop_iter), Cat::Sys); // settled with the first handler's first step
    s_.n.syscalls.add();
    mark("EventManager::run");
    if (rx_evt_) { // handle_rxq_event
      rx_evt_ = false;
      charge(sys(k.fc_eventfd_read), Cat::Sys); // settled with the handler's first step
      if (has_pending_rx() && co_await process_rx())
        co_await signal_used_queue();
    }
    if (tx_evt_) { // handle_txq_event
      tx_evt_ = false;
      charge(sys(k.fc_eventfd_read), Cat::Sys); // settled with the handler's first step
      bool used = co_await process_tx();
      if (has_pending_rx())
        used = co_await process_rx() || used;
      if (used)
        co_await signal_used_queue();
    }
    if (backend) { // notify_backend
      co_await notify_backend();
      bool used = co_await process_tx();
      if (has_pending_rx())
        used = co_await process_rx() || used;
      if (used)
        co_await signal_used_queue();
    }
  }
}

// VsockMuxer::notify(): epoll_wait(0) on the nested fd (up to 32 events),
// then each ready connection's notify(): IN sets PendingRx::Rw, OUT
// flushes its TxBuf.
Task<> FcVmm::notify_backend()
{
  co_await run(sys(s_.k.fc_muxer_epoll), Cat::Sys);
  s_.n.syscalls.add();
  int events = 0;
  for (std::size_t i = 0; i < conns_.size() && events < 32; ++i) {
    FcConn& fc = conns_[i];
    const bool in = readable(fc), out = out_ready(fc);
    if (!in && !out)
      continue;
    ++events;
    if (in) {
      fc.rw = true;
      queue_rx(static_cast<int>(i));
    }
    if (out)
      co_await flush_txbuf(fc);
  }
}

// TxBuf::flush_to(): write() what the TxBuf holds (at most two writes,
// one with a wrap), then a credit update if the guest needs one.
Task<> FcVmm::flush_txbuf(FcConn& fc)
{
  Sock& dev = fc.c->host;
  for (int i = 0; i < 2 && fc.txbuf > 0; ++i) {
    const std::uint64_t w = co_await unix_write(*this, fc.to_host, fc.txbuf, true, fc.app);
    if (w == 0)
      break;
    fc.txbuf -= w;
    dev.fwd_cnt += w;
  }
  co_await update_evset(fc);
  if (peer_needs_credit_update(fc)) {
    fc.credit_update = true;
    queue_rx(fc.c->index);
  }
}

// VsockConnection::send_bytes(): straight to the host stream with one
// write() from guest memory, or behind what the TxBuf holds; what the
// stream does not take goes into the TxBuf (all or nothing: a push that
// does not fit kills the connection, which a guest within its credit
// cannot cause).
Task<> FcVmm::send_bytes(FcConn& fc, const Pkt& p)
{
  const Costs& k = s_.k;
  Sock& dev = fc.c->host;
  if (p.stream_end != dev.received + p.len)
    throw std::logic_error(fmt::format("invariant violated: a connection's packets arrive in order (connection {}: "
                                       "a packet ending at byte {} after {} bytes received)",
                                       fc.c->index, p.stream_end, dev.received));
  dev.received = p.stream_end;
  std::uint64_t rest = p.len;
  if (fc.txbuf == 0) {
    const std::uint64_t w = co_await unix_write(*this, fc.to_host, p.len, true, fc.app);
    dev.fwd_cnt += w;
    rest -= w;
  }
  if (rest > 0) {
    if (fc.txbuf + rest > fk_.tx_buf_size)
      throw std::logic_error(fmt::format("invariant violated: the TxBuf never overflows (connection {}: {} bytes "
                                         "held, {} more, room for {}): the guest sent past its credit",
                                         fc.c->index, fc.txbuf, rest, fk_.tx_buf_size));
    co_await run(std::ceil(static_cast<double>(rest) / k.fc_host_rx_copy_bytes_per_cycle), Cat::Sys); // TxBuf::push
    s_.n.copies.add();
    s_.n.txbuf_pushes.add();
    fc.txbuf += rest;
  }
  co_await update_evset(fc);
}

// Vsock::process_tx(): pop every available tx chain (no budget); each
// packet goes through VsockMuxer::send_pkt to its connection, whose
// credit fields every guest packet refreshes (VsockConnection::send_pkt).
Task<bool> FcVmm::process_tx()
{
  const Costs& k = s_.k;
  Virtqueue& vq = *s_.txq;
  bool used = false;
  for (;;) {
    co_await settle();
    auto a = vq.pop();
    if (!a)
      break;
    const Pkt p = s_.slab[a->token];
    charge(k.fc_tx_pkt, Cat::Sys); // settled with the write() or below
    FcConn& fc = conn(p.conn);
    fc.c->host.space_update(p);
    if (p.op == Op::Rw && p.len > 0)
      co_await send_bytes(fc, p);
    co_await update_evset(fc); // credit the guest gave back restores IN
    if (peer_needs_credit_update(fc)) {
      fc.credit_update = true;
      queue_rx(p.conn);
    }
    co_await settle();
    vq.push_used(a->head, 0);
    used = true;
  }
  co_return used;
}

// Vsock::process_rx(): fill rx chains while the muxer has something to
// send (VsockMuxer::recv_pkt: the rxq's first connection until it has
// nothing pending, VsockConnection::recv_pkt: Rw before CreditUpdate). A
// data packet is one read() of at most the buffer's size and the guest's
// credit; Rw is set again only by the next notify(IN), so a connection
// gives one data packet per wake-up (firecracker_vsock.rx_drain: as many
// as it has, as later Firecracker does).
Task<bool> FcVmm::process_rx()
{
  const Costs& k = s_.k;
  Virtqueue& vq = *s_.rxq;
  bool used = false;
  while (!rxq_.empty()) {
    co_await settle();
    FcConn& fc = conn(rxq_.front());
    if (!fc.rw && !fc.credit_update) {
      fc.in_rxq = false;
      rxq_.pop_front();
      continue;
    }
    auto a = vq.pop();
    if (!a) { // no rx buffer: the entry stays queued (undo_pop)
      co_await run(k.fc_rx_probe, Cat::Sys);
      s_.n.rx_buffer_stalls.add();
      mark("Vsock::process_rx: no rx buffer");
      break;
    }
    charge(k.fc_rx_pkt, Cat::Sys); // settled with the read() or below
    Sock& dev = fc.c->host;
    Pkt out{.conn = fc.c->index};
    if (fc.rw) {
      fc.rw = false;
      if (peer_credit(fc) == 0) {
        out.op = Op::CreditRequest; // need_credit_update_from_peer()
      } else {
        const std::uint64_t most = std::min<std::uint64_t>({s_.kn.rx_buf_size, peer_credit(fc), kMaxPktBuf});
        const std::uint64_t got = co_await unix_read(*this, fc.to_vmm, most, true);
        if (got == 0)
          throw std::logic_error("invariant violated: a connection marked readable has data (Firecracker's Rw)");
        dev.tx_cnt += got;
        out.op = Op::Rw;
        out.len = static_cast<std::uint32_t>(got);
        out.stream_end = dev.tx_cnt;
        dev.credit(); // throws if the device went past the guest's window
        if (fc.app != nullptr && fc.app->waiting() && writable(fc.to_vmm))
          fc.app->wake_at(now()); // unix_write_space: the host writer may write again
        if (fk_.rx_drain && readable(fc))
          fc.rw = true;
      }
    } else {
      fc.credit_update = false;
      out.op = Op::CreditUpdate;
      s_.n.credit_updates.add();
    }
    out.fwd_cnt = dev.fwd_cnt; // init_pkt: every packet carries the device's credit fields
    out.buf_alloc = fk_.tx_buf_size;
    fc.last_fwd_cnt_to_peer = dev.fwd_cnt;
    co_await update_evset(fc);
    co_await settle();
    s_.slab[a->token] = out;
    vq.push_used(a->head, kHeaderBytes + out.len);
    s_.n.rx_buffers.add();
    used = true;
    if (!fc.rw && !fc.credit_update) {
      fc.in_rxq = false;
      rxq_.pop_front();
    }
  }
  co_return used;
}

// signal_used_queue() -> IrqTrigger::trigger_irq(): the interrupt status
// bit and a write to the irqfd, once per handler call that used entries;
// the device offers no EVENT_IDX and ignores VRING_AVAIL_F_NO_INTERRUPT.
// With fc_irqfd_inject the write wakes the injection's kworker, which
// queues for the core behind the write (IrqfdWorker); else the injection
// is part of the write.
Task<> FcVmm::signal_used_queue()
{
  if (irqfd_ != nullptr) {
    co_await settle();
    irqfd_->schedule();
  }
  co_await run(sys(s_.k.fc_irq), Cat::Sys);
  s_.n.syscalls.add();
  s_.n.irqfd_writes.add();
  mark("IrqTrigger::trigger_irq");
  if (irqfd_ == nullptr)
    deliver_interrupt(s_, lat_, now());
}

namespace {

// iperf3's server on the host end of the connection's AF_UNIX stream
// (iperf-vsock -B: a Unix socket at <uds_path>_<port>): non-blocking, driven
// by select(); Nwrite() writes a block until EAGAIN, Nread() reads one until
// it is whole or EAGAIN.
class UnixApp : public SimThread {
public:
  UnixApp(World& w, Cpu& cpu, Shared& s, FcVmm& vmm, Conn& c, bool writer)
      : SimThread(w, fmt::format("host_{}{}", writer ? "writer" : "reader", c.index), cpu), s_(s), vmm_(vmm), c_(c),
        fc_(vmm.conn(c.index)), writer_(writer),
        lat_(s.seed, s.iteration, fmt::format("conn{}.host_{}", c.index, writer ? "writer" : "reader"),
             s.k.latency_jitter)
  {
    fc_.app = this;
  }

protected:
  Task<> body() override
  {
    co_await sleep(c_.index * s_.kn.start_interval);
    if (writer_)
      co_await send_all();
    else
      co_await receive_all();
  }

private:
  static constexpr int kMultisend = 10; // iperf_send(): write()s per select()
  Waiter waiter()
  {
    return Waiter{*this,   lat_,          s_.k.host_wakeup_latency, s_.k.guest_context_switch, 0, 0, nullptr,
                  nullptr, s_.round_trips};
  }
  // select() until `ready` holds (unix_poll).
  template <class F> Task<> select_until(F ready)
  {
    co_await run(s_.k.virtio_host_poll_syscall, Cat::Sys);
    s_.n.polls.add();
    while (!ready())
      co_await sleep_until_woken(waiter());
  }

  Task<> send_all()
  {
    std::uint64_t sent = 0;
    while (sent < c_.target) {
      co_await select_until([&] { return vmm_.writable(fc_.to_vmm); });
      for (int i = 0; i < kMultisend && sent < c_.target; ++i) {
        std::uint64_t block = std::min(c_.target - sent, s_.kn.message_size);
        c_.committed = std::max(c_.committed, sent + block);
        charge(s_.k.virtio_host_iperf3_user_per_call, Cat::User);
        while (block > 0) {
          const std::uint64_t took = co_await vmm_.unix_write(*this, fc_.to_vmm, block, false, nullptr);
          if (took > 0)
            vmm_.poke(); // the VMM's nested epoll: the stream is readable
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

  Task<> receive_all()
  {
    while (c_.delivered < c_.target) {
      co_await select_until([&] { return fc_.to_host.bytes > 0; });
      charge(s_.k.virtio_host_iperf3_user_per_call, Cat::User);
      std::uint64_t block = std::min(s_.kn.message_size, c_.target - c_.delivered);
      while (block > 0) {
        const std::uint64_t got = co_await vmm_.unix_read(*this, fc_.to_host, block, false);
        if (got == 0)
          break;
        if (fc_.poll_out && vmm_.writable(fc_.to_host))
          vmm_.poke(); // unix_write_space: the VMM's TxBuf may flush
        c_.delivered += got;
        if (s_.run_length)
          s_.run_length->delivered(c_.index, got, world().now());
        block -= got;
      }
    }
    co_await settle();
    stream_done(s_.conns, c_, now(), s_.end_together, s_.kn.message_size);
  }

  Shared& s_;
  FcVmm& vmm_;
  Conn& c_;
  FcConn& fc_;
  bool writer_;
  Latency lat_;
};

} // namespace

SimThread& add_firecracker_host_app(World& w, Cpu& cpu, Shared& s, FcVmm& vmm, Conn& c, bool writer)
{
  return w.spawn<UnixApp>(cpu, s, vmm, c, writer);
}

} // namespace vsim::virtio_vsock::detail
