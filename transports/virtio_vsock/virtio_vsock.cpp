#include "transports/virtio_vsock/virtio_vsock.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/breakdown.hpp"
#include "sim/count.hpp"
#include "sim/rng.hpp"
#include "sim/summary.hpp"
#include "sim/world.hpp"
#include "transports/simulate.hpp"
#include "transports/virtio_vsock/firecracker.hpp"
#include "transports/virtio_vsock/internal.hpp"

namespace vsim::virtio_vsock {

using namespace detail;

// internal.hpp says what it scales.
void detail::apply_iteration_jitter(Costs& k, std::uint64_t seed, std::uint32_t iteration)
{
  vsim::apply_iteration_jitter(k, Costs::fields(), "virtio_host_", "virtio_guest_", seed, iteration);
}

Knobs detail::read_knobs(const Params& p)
{
  Knobs kn{};
  kn.firecracker = p.text("transport") == "firecracker_vsock";
  auto u = [&](const char* key) { return static_cast<std::uint64_t>(p.integer(key)); };
  // Keys of vhost-vsock's device that Firecracker's has no counterpart of
  // are not a firecracker_vsock point's: the device's fixed behaviour.
  auto b = [&](const char* key, bool fc) { return kn.firecracker ? fc : p.boolean(key); };
  auto t = [&](const char* key, const char* fc) { return kn.firecracker ? std::string(fc) : p.text(key); };
  auto n = [&](const char* key, std::uint64_t fc) { return kn.firecracker ? fc : u(key); };
  kn.message_size = u("workload.message_size");
  kn.total_bytes = u("workload.total_bytes");
  kn.rx_buf_size = static_cast<std::uint32_t>(u("virtio_vsock.rx_buf_size"));
  kn.max_pkt_size = static_cast<std::uint32_t>(u("virtio_vsock.max_pkt_size"));
  // Firecracker (2023): no VIRTIO_VSOCK_F_MRG_RXBUF, EVENT_IDX or
  // INDIRECT_DESC offered (AVAIL_FEATURES), one interrupt line
  // (virtio-mmio), stream sockets only, no MSG_ZEROCOPY in 4.14-6.2 guests.
  kn.mergeable_rx = b("virtio_vsock.mergeable_rx", false);
  kn.host_split = b("virtio_vsock.host_split", false);
  // Without a way to spread a packet over several rx buffers, the host's
  // packets must fit one (virtio_transport_send_pkt_info caps them).
  kn.host_pkt_size = (kn.mergeable_rx || kn.host_split) ? kn.max_pkt_size : std::min(kn.max_pkt_size, kn.rx_buf_size);
  kn.credit_every_read = p.text("virtio_vsock.credit_update") == "every_read";
  kn.credit_rcvlowat = p.text("virtio_vsock.credit_update") == "threshold_rcvlowat";
  kn.small_pkt_copy = p.boolean("virtio_vsock.small_pkt_copy");
  kn.batch_used = b("virtio_vsock.batch_used", false);
  kn.event_idx = b("virtio_vsock.event_idx", false);
  kn.indirect = b("virtio_vsock.indirect_desc", false);
  kn.skb = t("virtio_vsock.packet_type", "virtio_vsock_pkt") == "sk_buff";
  kn.tx_fast_path = b("virtio_vsock.tx_fast_path", false);
  kn.pcp_high_order = p.boolean("virtio_vsock.pcp_high_order");
  kn.credit_locked = p.boolean("virtio_vsock.credit_locked");
  kn.shared_irq = t("virtio_vsock.msix_vectors", "shared") == "shared";
  kn.iperf3 = p.text("workload.app") == "iperf3";
  kn.seqpacket = t("workload.socket_type", "stream") == "seqpacket";
  kn.zerocopy = b("workload.zerocopy", false);
  kn.preempt_none = p.text("guest.preemption") == "none";
  kn.queue_size =
      static_cast<std::uint16_t>(u(kn.firecracker ? "firecracker_vsock.queue_size" : "virtio_vsock.queue_size"));
  kn.weight_packets = static_cast<std::uint32_t>(n("virtio_vsock.vhost_weight_packets", 0));
  kn.weight_bytes = n("virtio_vsock.vhost_weight_bytes", 0);
  kn.buf_alloc = static_cast<std::uint32_t>(u("virtio_vsock.buf_alloc"));
  kn.credit_threshold = static_cast<std::uint32_t>(u("virtio_vsock.credit_threshold"));
  kn.small_pkt_max = static_cast<std::uint32_t>(u("virtio_vsock.small_pkt_copy_max"));
  kn.start_interval = connection_start_interval(p);
  kn.rt = read_round_trip_knobs(p);
  return kn;
}

FcKnobs detail::read_fc_knobs(const Params& p)
{
  FcKnobs fk;
  fk.tx_buf_size = static_cast<std::uint32_t>(p.integer("firecracker_vsock.tx_buf_size"));
  fk.credit_threshold = static_cast<std::uint32_t>(p.integer("firecracker_vsock.credit_threshold"));
  fk.unix_sndbuf = static_cast<std::uint32_t>(p.integer("firecracker_vsock.unix_sndbuf"));
  fk.rx_drain = p.text("firecracker_vsock.rx_per_wakeup") == "drain";
  return fk;
}

namespace {

// workload.zerocopy: the largest send() virtio_transport_can_zcopy can let
// through (the whole send() within the credit, at most buf_alloc; from the
// guest also its pages, at most MAX_SKB_FRAGS, + 1 within the tx queue);
// larger ones copy. Not a warning: a study of copy against zerocopy sweeps
// sizes on both sides of it on purpose (experiments/vsock-zerocopy.yaml).
Effective zerocopy_effective(const Knobs& kn, bool g2h)
{
  std::uint64_t most = kn.zerocopy ? kn.buf_alloc : 0;
  if (kn.zerocopy && g2h && kn.queue_size <= kMaxSkbFrags)
    most = std::min<std::uint64_t>(most, std::uint64_t{kn.queue_size - 1u} * kPageSize);
  return {"zerocopy_max_send_bytes", static_cast<double>(most), "bytes", "workload.zerocopy", ""};
}

} // namespace

std::vector<Effective> effective(const Params& p)
{
  const Knobs kn = read_knobs(p);
  const auto vcpus = p.integer("guest.vcpus");
  const auto irq = p.integer("virtio_vsock.irq_vcpu");
  auto d = [](auto v) { return static_cast<double>(v); };
  std::string host_note;
  if (kn.host_pkt_size < kn.max_pkt_size)
    host_note = fmt::format("virtio_vsock.max_pkt_size={}: the host's packets are cut to one rx buffer, {} bytes "
                            "(neither mergeable_rx nor host_split)",
                            kn.max_pkt_size, kn.host_pkt_size);
  std::string threshold_note;
  if (kn.credit_every_read && p.has("virtio_vsock.credit_threshold"))
    threshold_note =
        fmt::format("virtio_vsock.credit_threshold={} is ignored: credit_update is every_read", kn.credit_threshold);
  else if (!kn.credit_every_read && !kn.credit_rcvlowat && kn.credit_threshold == 0)
    threshold_note = "virtio_vsock.credit_threshold=0: no free space is below it, so the receiver never sends a "
                     "credit update and the run hangs once a writer has sent buf_alloc bytes";
  // Round trips with requests in flight: once each side's unread bytes
  // fill its window, both wait in send() and neither reads
  // (kernel_hang_reason).
  std::string window_note;
  const RoundTripKnobs& rt = kn.rt;
  if (rt.pattern == Pattern::RequestResponse && rt.outstanding > 1 && rt.outstanding * rt.request > kn.buf_alloc &&
      rt.outstanding * rt.response > kn.buf_alloc)
    window_note = fmt::format("virtio_vsock.buf_alloc={}: {} requests in flight (workload.outstanding) of {} bytes "
                              "and their responses of {} bytes each exceed it, so both applications can end in a "
                              "blocking send() with no credit while neither reads: the run may hang, as these "
                              "programs do on Linux",
                              kn.buf_alloc, rt.outstanding, rt.request, rt.response);
  std::string irq_note;
  if (irq >= vcpus)
    irq_note = fmt::format("virtio_vsock.irq_vcpu={}: the guest has {} vCPUs, the interrupts land on vCPU {}", irq,
                           vcpus, irq % vcpus);
  // virtio_vsock_rx_fill(): rx buffers of a header and a payload buffer
  // (one skb from 6.3).
  const std::uint32_t rx_buffers = kn.queue_size / Virtqueue::descriptors_for(rx_buffer_sgs(kn), kn.indirect);
  std::string rx_note;
  if (rx_buffers < 2)
    rx_note = fmt::format("virtio_vsock.queue_size={}: the rx queue holds one rx buffer (no indirect descriptors), "
                          "which Linux's virtio_transport_rx_work never refills (only below half the most it held): "
                          "the run hangs once the host has sent a second packet",
                          kn.queue_size);
  std::vector<Effective> e = {
      {"guest_pkt_bytes", d(kn.max_pkt_size), "bytes", "virtio_vsock.max_pkt_size", ""},
      {"host_pkt_bytes", d(kn.host_pkt_size), "bytes", "virtio_vsock.max_pkt_size", host_note},
      {"rx_buf_bytes", d(kn.rx_buf_size), "bytes", "virtio_vsock.rx_buf_size", ""},
      {"queue_entries", d(kn.queue_size), "entries", "virtio_vsock.queue_size", ""},
      {"rx_buffers", d(rx_buffers), "buffers", "virtio_vsock.queue_size", rx_note},
      {"buf_alloc_bytes", d(kn.buf_alloc), "bytes", "virtio_vsock.buf_alloc", window_note, {"workload.outstanding"}},
      {"credit_threshold_bytes", kn.credit_every_read ? 0.0 : d(kn.credit_threshold), "bytes",
       "virtio_vsock.credit_threshold", threshold_note},
      {"irq_vcpu", d(irq % vcpus), "", "virtio_vsock.irq_vcpu", irq_note},
      zerocopy_effective(kn, p.text("direction") == "guest_to_host"),
  };
  for (Effective& part : memory(p))
    e.push_back(std::move(part));
  return e;
}

namespace {

// virtio_vsock's figures besides its counts (those: counter_metrics(),
// internal.hpp).
const std::vector<MetricDecl> kFigures = {
    {MetricPlace::Figure,
     {"throughput_Gbps", "Gbit/s", Scaling::BytesOver, "throughput in 10^9 bits/s (virtio_vsock)"}},
    {MetricPlace::Figure,
     {"efficiency", "Mbit/s per %CPU", Scaling::BytesOver,
      "virtio_vsock: Mbit/s / (%CPU of the host application + %CPU of the guest "
      "application), as the 2019 study computed it from iperf3"}},
    {MetricPlace::Figure,
     {"app_cpu_percent_host", "%", Scaling::PerTime,
      "virtio_vsock: CPU time of the host application threads / elapsed x 100"}},
    {MetricPlace::Figure,
     {"app_cpu_percent_guest", "%", Scaling::PerTime,
      "virtio_vsock: CPU time of the guest application threads / elapsed x 100"}},
    {MetricPlace::Figure,
     {"guest_kworker_seconds", "s", Scaling::Total,
      "virtio_vsock: CPU time of the guest's kworkers (send, rx and tx work)"}},
    {MetricPlace::Figure,
     {"socket_lock_waits_per_MB", "1/MB", Scaling::PerByte,
      "virtio_vsock: lock_sock calls that found the socket locked and slept (both ends) per MB"}},
    {MetricPlace::Figure,
     {"cpu_vcpus_total_percent", "%", Scaling::PerTime,
      "virtio_vsock, firecracker_vsock: CPU use of the vCPU threads as the host sees it, summed (100 = one CPU): "
      "the vCPUs' busy time (guest code, exits, interrupts) and KVM's halt polling of halted vCPUs"}},
};

// firecracker_vsock's figures besides virtio_vsock's.
const std::vector<MetricDecl> kFirecrackerFigures = {
    {MetricPlace::Figure,
     {"cpu_vmm_thread_percent", "%", Scaling::PerTime,
      "firecracker_vsock: CPU use of the VMM thread (its event loop, the queue handlers, the AF_UNIX syscalls) / "
      "elapsed x 100, as top shows the thread named firecracker"}},
    {MetricPlace::Figure,
     {"throughput_Mibps", "Mibit/s", Scaling::BytesOver,
      "firecracker_vsock: throughput in 2^20 bits/s (iperf3's \"Mbps\", as Firecracker's CI reports it)"}},
};

// The costs and knobs of the point's iteration.
void read_point(Shared& s, const Params& p, std::uint32_t iteration)
{
  s.k = Costs::from(p);
  s.seed = static_cast<std::uint64_t>(p.integer("seed"));
  s.iteration = iteration;
  apply_iteration_jitter(s.k, s.seed, iteration);
  s.kn = read_knobs(p);
}

// One run: the CPUs and the threads (the device and the connections are
// in Shared).
struct Platform {
  World world;
  std::string direction; // guest_to_host, host_to_guest, bidirectional
  std::vector<Cpu*> guest, host;
  std::vector<SimThread*> writers, readers, guest_apps;
  FcVmm* vmm = nullptr; // firecracker_vsock: the device's VMM thread (else s.vhost)
  FcKnobs fk;           // firecracker_vsock's knobs
};

// The guest's and the host's CPUs, and the device: its virtqueues, the
// guest's kworkers and interrupt context, the vhost worker, the probe's rx
// buffers.
void set_up_device(Platform& r, Shared& s, const Params& p, Trace* trace)
{
  const Knobs& kn = s.kn;
  const int vcpus = static_cast<int>(p.integer("guest.vcpus"));
  const int hcpus = static_cast<int>(p.integer("host.cpus"));
  World& world = r.world;
  world.set_trace(trace);
  r.guest = world.add_cpus(Side::Guest, "vcpu", vcpus);
  for (const Cpu* v : r.guest)
    add_halt_polling(s, *v);
  r.host = world.add_cpus(Side::Host, "hcpu", hcpus);
  world.set_wake_ipi(Side::Guest, {s.k.virtio_guest_wake_ipi, Cat::Hypervisor});
  world.set_wake_ipi(Side::Host, {s.k.virtio_host_wake_ipi, Cat::Sys});

  s.rxq = std::make_unique<Virtqueue>(kn.queue_size, kn.event_idx, kn.indirect);
  s.txq = std::make_unique<Virtqueue>(kn.queue_size, kn.event_idx, kn.indirect);
  s.rxq->trace_as(trace, "virtio_rx in flight", "chains");
  s.txq->trace_as(trace, "virtio_tx in flight", "chains");
  for (Cpu* v : r.guest)
    add_worker_pool(world, s, *v);
  const auto irq_vcpu = static_cast<std::size_t>(p.integer("virtio_vsock.irq_vcpu") % vcpus);
  s.irq = &world.spawn<GuestIrq>(*r.guest[irq_vcpu], s, *s.pools[irq_vcpu]);
  if (kn.firecracker) {
    r.fk = read_fc_knobs(p);
    r.vmm = &add_firecracker_vmm(world, *r.host[0], s, r.fk); // the VMM thread, pinned to CPU 0 as in the CI
  } else {
    s.vhost = &world.spawn<Vhost>(*r.host[0], s);
    s.device = s.vhost;
  }
  add_rx_buffers(s, 0); // virtio_vsock_probe(): rx buffers before any traffic, no cost
  // virtio_vsock_rx_fill() ends with virtqueue_kick(): before the device runs
  // the notification finds nothing to do, but virtqueue_kick_prepare() resets
  // num_added. Left out, a queue of 32768 buffers counted its first refill
  // on top of the probe's 32768: num_added wrapped to 0 and the refill's kick
  // was never sent (a stall found by the model fuzzer); smaller queues gave
  // the refill's kick test too wide a window.
  s.rxq->kick_prepare();
}

// Each connection: its two sockets (the credit window exchanged at connect)
// and its two application threads.
void set_up_connections(Platform& r, Shared& s, int conns)
{
  const Knobs& kn = s.kn;
  const int vcpus = static_cast<int>(r.guest.size());
  const int hcpus = static_cast<int>(r.host.size());
  // Firecracker's CI runs one iperf3 client and server process per
  // connection, each pinned to its own CPU: not iperf3's one thread.
  const bool one_thread = kn.iperf3 && !kn.firecracker;
  for (int i = 0; i < conns; ++i) {
    Conn& c = s.conns.emplace_back();
    c.index = i;
    c.g2h = connection_g2h(r.direction, i, conns);
    c.target = kn.total_bytes;
    for (Sock* sk : {&c.guest, &c.host}) {
      sk->buf_alloc = kn.buf_alloc;
      sk->peer_buf_alloc = kn.buf_alloc; // exchanged at connect (REQUEST/RESPONSE)
    }
  }
  if (r.vmm != nullptr) // Firecracker's device tells the guest its TxBuf's size (init_pkt)
    for (Conn& c : s.conns)
      c.guest.peer_buf_alloc = c.host.buf_alloc = r.fk.tx_buf_size;
  for (int i = 0; i < conns; ++i) {
    Conn& c = s.conns[static_cast<std::size_t>(i)];
    const auto gi =
        static_cast<std::size_t>(kn.firecracker ? fc_guest_cpu_of(i, vcpus) : guest_cpu_of(i, vcpus, one_thread));
    Cpu& gcpu = *r.guest[gi];
    Cpu& hcpu = *r.host[static_cast<std::size_t>(host_cpu_of(i, hcpus, one_thread))];
    // The writing side of `direction` writes, or initiates the round trips.
    const bool rt = kn.rt.pattern != Pattern::Stream;
    const Role first = rt ? Role::Initiator : Role::Writer, second = rt ? Role::Responder : Role::Reader;
    auto host_app = [&](Role role) -> SimThread& {
      if (r.vmm != nullptr)
        return add_firecracker_host_app(r.world, hcpu, s, *r.vmm, c, role == Role::Writer);
      return r.world.spawn<HostApp>(hcpu, s, c, role);
    };
    SimThread *g, *h;
    if (c.g2h) {
      g = &r.world.spawn<GuestApp>(gcpu, s, c, first, *s.pools[gi]);
      h = &host_app(second);
      r.writers.push_back(g);
      r.readers.push_back(h);
    } else {
      h = &host_app(first);
      g = &r.world.spawn<GuestApp>(gcpu, s, c, second, *s.pools[gi]);
      r.writers.push_back(h);
      r.readers.push_back(g);
    }
    r.guest_apps.push_back(g);
    s.host_apps.push_back(h);
  }
}

// A vCPU's kworkers are one thread in the figures, kworker_<cpu> (the
// pool's): the thread.<name>.* of the others added to its own and dropped.
void fold_pool_threads(Metrics& m, const Shared& s)
{
  for (const auto& pool : s.pools) {
    const std::string into = "thread." + pool->workers.front()->name() + ".";
    for (std::size_t i = 1; i < pool->workers.size(); ++i) {
      const std::string from = "thread." + pool->workers[i]->name() + ".";
      for (const char* cat : kBusyCategoryNames) {
        const std::string key = std::string(cat) + "_percent";
        if (auto it = m.find(from + key); it != m.end()) {
          m[into + key] += it->second;
          m.erase(it);
        }
      }
    }
  }
}

// Every figure, as if the run ended at `elapsed` with `delivered` bytes: at
// its end, or at the run-length monitor's snapshots.
Metrics figures(const Platform& r, const Shared& s, Time elapsed, std::uint64_t delivered)
{
  const Costs& k = s.k;
  const double secs = k.seconds(elapsed);
  Metrics m;
  append_run_metrics(m, r.world, elapsed, k.clock_ghz, delivered, r.writers, r.readers);
  m["throughput_Gbps"] = static_cast<double>(delivered) * 8 / secs / 1e9;
  // The 2019 study's efficiency: Mbit/s per (%CPU host + %CPU guest), with
  // the CPU of the benchmark's own processes (iperf3 reports getrusage).
  // iperf3 takes it from clock() (CLOCK_PROCESS_CPUTIME_ID: the scheduler's
  // runtime of the process), which includes the interrupts taken while it
  // ran (no separate interrupt-time accounting assumed).
  auto app_cycles = [](const std::vector<SimThread*>& t) {
    return thread_cycles(t, {Cat::User, Cat::Sys, Cat::Hypervisor}) + interrupted_cycles(t);
  };
  const double app_host = k.seconds(app_cycles(s.host_apps)) / secs * 100.0;
  const double app_guest = k.seconds(app_cycles(r.guest_apps)) / secs * 100.0;
  m["app_cpu_percent_host"] = app_host;
  m["app_cpu_percent_guest"] = app_guest;
  m["efficiency"] = m["throughput_Gbps"] * 1000.0 / (app_host + app_guest);
  double polled = 0;
  for (const models::HaltPoll& h : s.halt_poll)
    polled += h.polled();
  m["cpu_vcpus_total_percent"] = m.at("guest_cpu_percent") + k.seconds(polled) / secs * 100.0;
  if (s.end_together) // direction bidirectional
    append_direction_metrics(m, secs, s.conns);
  if (r.vmm != nullptr) {
    m["cpu_vmm_thread_percent"] =
        k.seconds(vmm_thread(*r.vmm).cpu_time().busy() + vmm_thread(*r.vmm).interrupted_time().busy()) / secs * 100.0;
    m["throughput_Mibps"] = static_cast<double>(delivered) * 8 / secs / 1048576.0;
  }
  if (s.round_trips)
    append_round_trip_metrics(m, *s.round_trips);
  const double mb = static_cast<double>(delivered) / 1e6;
  const Counters& n = s.n;
  for (const CounterMetric<Counters>& c : counter_metrics())
    if (c.count)
      m[c.doc.name] = static_cast<double>((n.*c.count).value()) / mb;
  // The counts made of others.
  auto per_mb = [&](const char* name, std::uint64_t v) {
    m[std::string(name) + "_per_MB"] = static_cast<double>(v) / mb;
  };
  per_mb("guest_wake_ipis", r.world.wake_ipis(Side::Guest).value());
  // and the kicks' (ioeventfd) wake-ups
  per_mb("host_wake_ipis", r.world.wake_ipis(Side::Host).value() + n.kick_wakeups.value());
  per_mb("vm_exits", n.kicks.value() + n.interrupts_to_guest.value());
  m["vm_exits_per_MB"] += m["guest_wake_ipis_per_MB"];
  std::uint64_t lock_waits = 0;
  for (const Conn& c : s.conns)
    lock_waits += c.guest.lock_waits + c.host.lock_waits;
  m["socket_lock_waits_per_MB"] = static_cast<double>(lock_waits) / mb;
  std::vector<SimThread*> kworkers;
  for (const auto& pool : s.pools)
    kworkers.insert(kworkers.end(), pool->workers.begin(), pool->workers.end());
  m["guest_kworker_seconds"] = k.seconds(thread_cycles(kworkers, {Cat::User, Cat::Sys, Cat::Hypervisor}));
  append_breakdown(m, r.world, elapsed, {s.irq},
                   {{"virtio_tx", &s.txq->occupancy()}, {"virtio_rx", &s.rxq->occupancy()}});
  fold_pool_threads(m, s);
  return m;
}

// Credit accounting: a sender never has more in flight than its peer's
// window.
void check_window(const Conn& c, const Sock& tx)
{
  if (tx.tx_cnt - tx.peer_fwd_cnt > tx.peer_buf_alloc)
    throw std::logic_error(fmt::format("invariant violated: credit never negative (connection {}: {} bytes in "
                                       "flight against a window of {})",
                                       c.index, tx.tx_cnt - tx.peer_fwd_cnt, tx.peer_buf_alloc));
}

// Conservation and credit accounting, per connection (a run the monitor
// ended early, not `whole`: no connection got more than was sent). Returns
// the run's end and the bytes delivered.
std::pair<Time, std::uint64_t> check_connections(const Platform& r, const Shared& s, bool whole)
{
  const Knobs& kn = s.kn;
  Time elapsed = whole ? 0 : r.world.end();
  std::uint64_t delivered = 0;
  for (const Conn& c : s.conns) {
    const Sock& tx = c.g2h ? c.guest : c.host;
    const Sock& rx = c.g2h ? c.host : c.guest;
    // A run the monitor shortened ends whole, with fewer bytes (c.target).
    const bool lost = c.target > kn.total_bytes || c.target < c.committed ||
                      (whole ? (c.delivered != c.target || tx.tx_cnt != c.target || rx.fwd_cnt != c.target)
                             : (c.delivered > tx.tx_cnt || rx.fwd_cnt > tx.tx_cnt || tx.tx_cnt > c.target));
    if (lost && whole) {
      if (const std::string why = detail::kernel_hang_reason(s); !why.empty())
        throw ModelledHang(
            fmt::format("connection {} stopped after {} of {} bytes: {}", c.index, c.delivered, c.target, why));
    }
    if (lost)
      throw std::logic_error(fmt::format(
          "invariant violated: bytes in == bytes out (connection {}: sent {} of {} begun, tx_cnt {}, receiver "
          "fwd_cnt {}, delivered {}; the simulation stalled)",
          c.index, c.target, c.committed, tx.tx_cnt, rx.fwd_cnt, c.delivered));
    check_window(c, tx);
    if (whole)
      elapsed = std::max(elapsed, c.done_at);
    delivered += c.delivered;
  }
  return {elapsed, delivered};
}

// Round trips: every request and response byte was sent once and read
// once, on each connection, and neither sender is past its peer's window
// (a run the monitor ended early, not `whole`: no more than was sent).
std::pair<Time, std::uint64_t> check_round_trips(const Platform& r, const Shared& s, bool whole)
{
  const RoundTripKnobs& kn = s.kn.rt;
  Time elapsed = whole ? 0 : r.world.end();
  std::uint64_t delivered = 0;
  for (const Conn& c : s.conns) {
    const Sock& initiator = c.g2h ? c.guest : c.host;
    const Sock& responder = c.g2h ? c.host : c.guest;
    const std::uint64_t out = kn.transactions * kn.request, in = kn.transactions * kn.response;
    auto exact = [&](const Sock& tx, const Sock& rx, std::uint64_t n) {
      return whole ? tx.tx_cnt == n && rx.fwd_cnt == n : rx.fwd_cnt <= tx.tx_cnt && tx.tx_cnt <= n;
    };
    const bool lost = !exact(initiator, responder, out) || !exact(responder, initiator, in) ||
                      (whole ? c.delivered != out + in : c.delivered > out + in);
    if (lost && whole) {
      if (const std::string why = detail::kernel_hang_reason(s); !why.empty())
        throw ModelledHang(
            fmt::format("connection {} stopped after {} of {} bytes: {}", c.index, c.delivered, out + in, why));
    }
    if (lost)
      throw std::logic_error(fmt::format(
          "invariant violated: round-trip bytes in == bytes out (connection {}: expected {} + {}, the initiator "
          "sent {} and the responder counted {}, the responder sent {} and the initiator counted {}, delivered {}; "
          "the simulation stalled)",
          c.index, out, in, initiator.tx_cnt, responder.fwd_cnt, responder.tx_cnt, initiator.fwd_cnt, c.delivered));
    check_window(c, initiator);
    check_window(c, responder);
    if (whole)
      elapsed = std::max(elapsed, c.done_at);
    delivered += c.delivered;
  }
  return {elapsed, delivered};
}

// The round trip's stages (stages.hpp): the initiator's message, then the
// response, each Stage's id for the threads' stamps.
void set_up_stages(RoundTrips& rt, Shared& s, bool g2h)
{
  std::vector<std::string> names(kStageNames.begin(), kStageNames.end()); // guest to host, then host to guest
  if (!g2h)
    std::rotate(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(Stage::HostSend), names.end());
  rt.set_stages(std::move(names));
  for (std::size_t i = 0; i < kStageNames.size(); ++i)
    s.stage_ids[i] = rt.stage_id(kStageNames[i]);
}

} // namespace

std::vector<MetricDecl> metrics()
{
  return metric_decls(kFigures, counter_metrics());
}

std::vector<MetricDecl> firecracker_metrics()
{
  std::vector<MetricDecl> figures = kFigures;
  figures.insert(figures.end(), kFirecrackerFigures.begin(), kFirecrackerFigures.end());
  return metric_decls(figures, counter_metrics());
}

Metrics simulate(const Params& p, std::uint32_t iteration, Trace* trace)
{
  Shared s;
  read_point(s, p, iteration);
  const int conns = static_cast<int>(p.integer("workload.connections"));
  Platform r;
  r.direction = p.text("direction");
  s.end_together = r.direction == "bidirectional";
  set_up_device(r, s, p, trace);
  set_up_connections(r, s, conns);
  add_spare_kworkers(r.world, s);

  const std::uint64_t total = workload_bytes(p) * static_cast<std::uint64_t>(conns);
  const std::unique_ptr<RunLength> monitor = stream_run_length_monitor(
      p, total, [&](Time elapsed, std::uint64_t delivered) { return figures(r, s, elapsed, delivered); }, r.world,
      s.conns, s.kn.message_size);
  std::optional<RoundTrips> round_trips;
  if (s.kn.rt.pattern != Pattern::Stream) { // the monitor hears of round trips, not of bytes
    s.round_trips = &round_trips.emplace(s.k.clock_ghz, round_trip_bytes(p), monitor.get());
    set_up_stages(*s.round_trips, s, r.direction == "guest_to_host");
    for (std::size_t i = 0; i < s.conns.size(); ++i)
      s.round_trips->trace_as(trace, static_cast<int>(i), r.writers.at(i)->name());
  } else
    s.run_length = monitor.get();
  set_up_cpu_noise(r.world, s.k, s.seed, s.iteration, s.round_trips);
  if (s.round_trips)
    s.cause_rx_refill = s.round_trips->add_cause("guest rx refill");

  r.world.run();
  const bool whole = !(monitor && monitor->ended_early());
  const auto [elapsed, delivered] = s.round_trips ? check_round_trips(r, s, whole) : check_connections(r, s, whole);
  s.rxq->check_invariants();
  s.txq->check_invariants();
  check_cpu_busy(r.world, elapsed);
  Metrics out = finish_figures(monitor.get(), whole ? figures(r, s, elapsed, delivered) : Metrics{}, elapsed, total);
  if (s.round_trips) {
    append_round_trip_histogram(out, *s.round_trips);
    append_round_trip_stages(out, *s.round_trips);
  }
  return out;
}

} // namespace vsim::virtio_vsock
