#include "transports/virtio_vsock/bound.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "transports/virtio_vsock/firecracker.hpp"
#include "transports/virtio_vsock/internal.hpp"
#include "transports/virtio_vsock/params.hpp"

namespace vsim::virtio_vsock {

namespace {

// MSG_ZEROCOPY at best: every send() one enqueue call that pins its pages
// (virtio_transport_can_zcopy: the whole message within the credit, so at
// most buf_alloc; in the guest its pages + 1 within the tx queue), in
// packets of at most `chunk`. Otherwise each send() copies and still pays
// a notification. The error queue reads are left out: coalesced
// notifications make them as rare as one per many send()s.
struct ZerocopyPlan {
  bool pinned;
  std::uint64_t chunk;
};
ZerocopyPlan zerocopy_plan(const detail::Knobs& kn, bool guest)
{
  const std::uint32_t pages = std::min(detail::pages_of(kn.message_size), detail::kMaxSkbFrags);
  const bool fits = kn.message_size <= kn.buf_alloc && (!guest || pages + 1 <= kn.queue_size);
  const std::uint64_t max_pkt = guest ? kn.max_pkt_size : kn.host_pkt_size;
  return {kn.zerocopy && fits, std::min<std::uint64_t>(max_pkt, detail::kMaxSkbFrags * detail::kPageSize)};
}

} // namespace

// With the L2 modelled (virtio_l2_bytes) a copy of another core's data may
// run at the L3's rate or, on the core that wrote it, at the hot rate: the
// plan takes the fastest, so that its figures stay lower bounds.
static detail::Costs with_fastest_copies(detail::Costs k)
{
  if (k.virtio_l2_bytes <= 0)
    return k;
  const double fast =
      std::max({k.virtio_l3_copy_bytes_per_cycle, k.guest_copy_bytes_per_cycle, k.virtio_host_copy_bytes_per_cycle});
  for (double* r : {&k.virtio_guest_rx_copy_bytes_per_cycle, &k.virtio_host_rx_copy_bytes_per_cycle,
                    &k.virtio_host_guest_copy_bytes_per_cycle})
    *r = std::max(*r, fast);
  return k;
}

PlatformPlan platform_plan(const Params& p)
{
  // The simulation's own costs, knobs and pinning (transports/virtio_vsock/
  // internal.hpp), without the iteration's jitter.
  const detail::Costs k = with_fastest_copies(detail::Costs::from(p));
  const detail::Knobs kn = detail::read_knobs(p);
  // The application's own user time per call is its model's (workload.app):
  // the plain loop's or iperf3's (per block sent, however many write()s
  // its Nwrite makes of it, and per block received: one block per message
  // here).
  const detail::StackCosts guest = detail::StackCosts::guest(k, kn.iperf3);
  const detail::StackCosts host = detail::StackCosts::host(k, kn.iperf3);
  auto guest_copy = [&](double n) { return k.guest_copy(n); };
  auto guest_rx_copy = [&](double n) { return k.guest_rx_copy(n); };
  auto host_copy = [&](double n) { return host.copy(n); };
  auto vhost_copy = [&](double n) { return k.vhost_copy(n); };
  // A packet's allocations by size class (virtio_vsock_pkt or sk_buff).
  auto guest_alloc = [&](double n) { return detail::guest_allocs(k, detail::pkt_allocs(kn, std::uint32_t(n))); };
  auto host_alloc = [&](double n) { return detail::host_allocs(k, detail::pkt_allocs(kn, std::uint32_t(n))); };
  const double hcopy_fixed = k.virtio_host_copy_fixed, hbpc = k.virtio_host_rx_copy_bytes_per_cycle; // the reader's

  const std::uint64_t m = kn.message_size;
  const std::string direction = p.text("direction");
  const std::uint64_t rx_buf = kn.rx_buf_size, max_pkt = kn.max_pkt_size;
  const bool mergeable = kn.mergeable_rx;
  const bool every_read = kn.credit_every_read;
  const double chains = static_cast<double>(kn.queue_size / (kn.indirect ? 1 : 2)); // per full queue
  const double window = static_cast<double>(kn.buf_alloc - kn.credit_threshold);

  PlatformPlan plan;
  plan.vcpus = static_cast<int>(p.integer("guest.vcpus"));
  plan.host_cpus = static_cast<int>(p.integer("host.cpus"));
  plan.connections = static_cast<int>(p.integer("workload.connections"));
  plan.one_app_thread = kn.iperf3; // guest_cpu_of / host_cpu_of: every stream on the first's CPU
  plan.clock_ghz = k.clock_ghz;
  const double msgs = 1e6 / static_cast<double>(m); // messages (and at least as many recv() calls) per MB
  // CREDIT_UPDATE packets per MB: one per recv() (2018) and one per
  // message with SOCK_SEQPACKET, else one per (buf_alloc - credit_threshold)
  // bytes read.
  const double credits = every_read || kn.seqpacket ? msgs : 1e6 / std::max(window, 1.0);
  const ZerocopyPlan zg = zerocopy_plan(kn, true), zh = zerocopy_plan(kn, false);
  // Interrupt entry (vCPU 0's interrupt context) and a work item run (its
  // kworker), spread over a full queue.
  const double irq_only = (k.virtio_guest_irq_exit + k.virtio_guest_isr) / chains;
  const double irq_entry = irq_only + k.virtio_guest_work_run / chains;

  double vhost = 0, irq = 0, interrupts = 0;
  std::string vhost_what, irq_what;
  for (int i = 0; i < plan.connections; ++i) {
    const std::string gcpu = fmt::format("vcpu{}", detail::guest_cpu_of(i, plan.vcpus, kn.iperf3));
    const std::string hcpu = fmt::format("hcpu{}", detail::host_cpu_of(i, plan.host_cpus, kn.iperf3));
    const std::string kworker = "kworker_" + gcpu;
    if (connection_g2h(direction, i, plan.connections)) {
      // The guest writer (AppThread): send(), then per packet virtio_transport_send_pkt_info:
      // two allocations and the copy from user memory.
      // MSG_ZEROCOPY: header-only packets of pinned pages, one notification
      // (allocated at send, completed in the tx work with the unpinning).
      const Split sp =
          zg.pinned ? split(m, zg.chunk,
                            [&](double n) {
                              return k.virtio_guest_pkt + guest_alloc(0) +
                                     detail::pages_of(static_cast<std::uint64_t>(n)) * k.virtio_guest_zcopy_pin_page;
                            })
                    : split(m, max_pkt, [&](double n) { return k.virtio_guest_pkt + guest_alloc(n) + guest_copy(n); });
      const double notify = kn.zerocopy ? msgs * k.virtio_guest_alloc : 0.0;
      const double completion = (kn.zerocopy ? msgs * k.virtio_guest_zcopy_notify : 0.0) +
                                (zg.pinned ? 1e6 / detail::kPageSize * k.virtio_guest_zcopy_unpin_page : 0.0);
      // With the 6.12 fast path the writer adds its packets itself (at best
      // every one: no send work).
      const double fast_adds = kn.tx_fast_path ? sp.packets * k.virtio_guest_vq_add : 0;
      plan.loads.push_back({fmt::format("guest_writer{}", i), gcpu, "guest writer (send syscall, packets, copy)", i,
                            msgs * (guest.user_per_call + k.virtio_guest_send_syscall + sp.sum + fast_adds) + notify,
                            fmt::format("{:.0f} packets per MB", msgs * sp.packets)});
      // send_pkt_work after each syscall: one run, a tx entry per packet.
      if (!kn.tx_fast_path)
        plan.loads.push_back({kworker, gcpu, "guest kworker (send work onto the tx queue)", i,
                              msgs * (k.virtio_guest_work_run + sp.packets * k.virtio_guest_vq_add),
                              "a send work run per send(), a tx entry per packet"});
      // vhost handle_tx_kick: per packet vhost_vsock_alloc_pkt + copy in;
      // credit updates back through send_pkt_work: an rx buffer each.
      const Split vp =
          split(m, max_pkt, [&](double n) { return k.virtio_host_tx_pkt + host_alloc(n) + vhost_copy(n); });
      vhost += msgs * vp.sum + msgs * vp.packets / chains * k.virtio_host_worker_run +
               credits * (k.virtio_host_rx_buf + vhost_copy(kHeaderBytes) + k.virtio_host_free);
      vhost_what = fmt::format("{:.0f} tx packets per MB (alloc, copy in), {:.1f} credit updates per MB",
                               msgs * vp.packets * plan.connections, credits * plan.connections);
      // The host reader (AppThread): recv() of up to message_size bytes, a dequeue and copy
      // per packet (per chunk when a packet is larger than the buffer).
      const Split rp = split(m, max_pkt, [&](double n) {
        const double chunks = std::ceil(n / static_cast<double>(m));
        return chunks * (k.virtio_host_dequeue_pkt + hcopy_fixed) + std::ceil(n / hbpc) + k.virtio_host_free;
      });
      plan.loads.push_back({fmt::format("host_reader{}", i), hcpu, "host reader (recv syscall, copy out)", i,
                            msgs * (host.user_per_call + k.virtio_host_recv_syscall + rp.sum) +
                                credits * (k.virtio_host_pkt + host_alloc(0)),
                            fmt::format("{:.0f} recv() per MB", msgs)});
      // vCPU 0: tx completions (virtio_transport_tx_work frees every packet)
      // and the credit updates arriving in rx buffers (then refilled).
      irq += completion + msgs * sp.packets * (k.virtio_guest_tx_done + k.virtio_guest_free + irq_entry) +
             credits * (k.virtio_guest_rx_buf + k.virtio_guest_rx_pkt + k.virtio_guest_free + guest_alloc(rx_buf) +
                        k.virtio_guest_vq_add + irq_entry);
      irq_what = "tx completions (free each packet), credit updates received, rx refill";
      interrupts += (msgs * sp.packets + credits) * irq_only;
      plan.links.push_back({"vsock0.tx", i, fmt::format("guest_writer{}", i), fmt::format("host_reader{}", i)});
    } else {
      const std::uint64_t host_pkt = kn.host_pkt_size;
      const Split wp =
          zh.pinned ? split(m, zh.chunk,
                            [&](double n) {
                              return k.virtio_host_pkt + host_alloc(0) +
                                     detail::pages_of(static_cast<std::uint64_t>(n)) * k.virtio_host_zcopy_pin_page;
                            })
                    : split(m, host_pkt, [&](double n) { return k.virtio_host_pkt + host_alloc(n) + host_copy(n); });
      const double notify = kn.zerocopy ? msgs * k.virtio_host_alloc : 0.0;
      const double completion = (kn.zerocopy ? msgs * k.virtio_host_zcopy_notify : 0.0) +
                                (zh.pinned ? 1e6 / detail::kPageSize * k.virtio_host_zcopy_unpin_page : 0.0);
      plan.loads.push_back({fmt::format("host_writer{}", i), hcpu, "host writer (send syscall, packets, copy)", i,
                            msgs * (host.user_per_call + k.virtio_host_send_syscall + wp.sum) + notify,
                            fmt::format("{:.0f} packets per MB", msgs * wp.packets)});
      // vhost send_pkt_work: a guest rx buffer per rx_buf_size bytes, a
      // header in each (only the first with mergeable rx).
      auto bufs = [&](double n) { return std::ceil(n / static_cast<double>(rx_buf)); };
      const double buffers = split(m, host_pkt, bufs).sum;     // per message: rx buffers filled
      const double entries = mergeable ? wp.packets : buffers; // per message: packets the guest delivers
      const Split vp = split(m, host_pkt, [&](double n) {
        const double b = bufs(n);
        const double headers = mergeable ? 1 : b;
        return b * k.virtio_host_rx_buf + vhost_copy(n + headers * kHeaderBytes) + k.virtio_host_free;
      });
      vhost += completion + msgs * vp.sum + msgs * buffers / chains * k.virtio_host_worker_run +
               credits * (k.virtio_host_tx_pkt + host_alloc(0));
      vhost_what = fmt::format("{:.0f} rx buffers per MB filled (copy out), {:.1f} credit updates per MB",
                               msgs * buffers * plan.connections, credits * plan.connections);
      // vCPU 0: rx work per buffer (take, deliver, refill), tx completions of
      // the credit updates.
      irq += msgs * (buffers * (k.virtio_guest_rx_buf + guest_alloc(rx_buf) + k.virtio_guest_vq_add + irq_entry) +
                     entries * k.virtio_guest_rx_pkt) +
             credits * (k.virtio_guest_tx_done + k.virtio_guest_free + irq_entry);
      irq_what = "rx work per buffer (deliver, refill), credit update completions";
      interrupts += (msgs * buffers + credits) * irq_only;
      // The guest reader (AppThread): recv(), a dequeue and copy per queued packet, a free each.
      const double entry_bytes = static_cast<double>(m) / entries;
      const double per_entry = k.virtio_guest_dequeue_pkt +
                               guest_rx_copy(std::min(entry_bytes, static_cast<double>(m))) + k.virtio_guest_free;
      // Credit updates: the 6.12 fast path adds them from the reader.
      plan.loads.push_back(
          {fmt::format("guest_reader{}", i), gcpu, "guest reader (recv syscall, copy out)", i,
           msgs * (guest.user_per_call + k.virtio_guest_recv_syscall + entries * per_entry) +
               credits * (k.virtio_guest_pkt + guest_alloc(0) + (kn.tx_fast_path ? k.virtio_guest_vq_add : 0)),
           fmt::format("{:.0f} recv() per MB", msgs)});
      if (!kn.tx_fast_path)
        plan.loads.push_back({kworker, gcpu, "guest kworker (credit updates onto the tx queue)", i,
                              credits * (k.virtio_guest_work_run + k.virtio_guest_vq_add),
                              "a send work run per credit update"});
      plan.links.push_back({"vsock0.rx", i, fmt::format("host_writer{}", i), fmt::format("guest_reader{}", i)});
    }
  }
  // Shared by every connection: per MB of all the payload, i.e. the mean of
  // the per-connection figures above.
  const double n = std::max(plan.connections, 1);
  plan.loads.push_back({"vhost", "hcpu0", "host vhost worker", -1, vhost / n, vhost_what});
  const std::string irq_cpu = fmt::format("vcpu{}", p.integer("virtio_vsock.irq_vcpu") % plan.vcpus);
  plan.loads.push_back({"kworker_" + irq_cpu, irq_cpu, "guest kworker of the interrupt vCPU (rx and tx work)", -1,
                        (irq - interrupts) / n, irq_what});
  plan.loads.push_back({"virtio_irq", irq_cpu, "interrupts (the interrupt vCPU)", -1, interrupts / n,
                        "interrupt injection and vring_interrupt, spread over a full queue"});
  return plan;
}

} // namespace vsim::virtio_vsock

namespace vsim::virtio_vsock {

// firecracker_vsock's plan: the guest's threads as virtio_vsock's, the VMM
// thread's loop per packet (one pass and one interrupt per packet at least:
// a 64 KiB tx packet or a <= 4 KiB rx buffer), the host application's
// AF_UNIX calls; the virtio-mmio interrupt's two exits on the interrupt vCPU.
PlatformPlan firecracker_plan(const Params& p)
{
  const detail::Costs k = detail::Costs::from(p);
  const detail::Knobs kn = detail::read_knobs(p);
  const detail::FcKnobs fk = detail::read_fc_knobs(p);
  const detail::StackCosts guest = detail::StackCosts::guest(k, kn.iperf3);
  const std::uint64_t m = kn.message_size;
  const double msgs = 1e6 / static_cast<double>(m);
  const std::string direction = p.text("direction");
  const double chains = static_cast<double>(kn.queue_size / 2);
  auto skbs = [&](double n) { return std::ceil(n / 36544.0); };
  auto remote = [&](double n) { return std::ceil(n / k.fc_host_rx_copy_bytes_per_cycle); };
  const double irq = k.virtio_guest_irq_exit + k.virtio_guest_isr + 2 * k.fc_vcpu_mmio_exit;
  const double vmm_pass = k.fc_loop_iter + k.fc_seccomp + k.fc_irq + k.fc_seccomp; // a pass and its interrupt

  PlatformPlan plan;
  plan.vcpus = static_cast<int>(p.integer("guest.vcpus"));
  plan.host_cpus = static_cast<int>(p.integer("host.cpus"));
  plan.connections = static_cast<int>(p.integer("workload.connections"));
  plan.clock_ghz = k.clock_ghz;
  const std::string irq_cpu = fmt::format("vcpu{}", p.integer("virtio_vsock.irq_vcpu") % plan.vcpus);
  double vmm = 0, irq_work = 0, interrupts = 0; // interrupts injected per MB: one per device handler call
  for (int i = 0; i < plan.connections; ++i) {
    const bool g2h = connection_g2h(direction, i, plan.connections);
    const std::string gcpu = fmt::format("vcpu{}", detail::fc_guest_cpu_of(i, plan.vcpus));
    const std::string hcpu = fmt::format("hcpu{}", detail::host_cpu_of(i, plan.host_cpus));
    if (g2h) {
      const Split sp = split(m, kn.max_pkt_size, [&](double n) {
        return k.virtio_guest_pkt + detail::guest_allocs(k, detail::pkt_allocs(kn, std::uint32_t(n))) +
               k.guest_copy(n) + k.virtio_guest_vq_add + k.virtio_guest_kick;
      });
      plan.loads.push_back({fmt::format("guest_writer{}", i), gcpu, "guest writer (send syscall, packets, copy, kick)",
                            i, msgs * (guest.user_per_call + k.virtio_guest_send_syscall + sp.sum),
                            fmt::format("{:.0f} packets per MB, a kick each (no EVENT_IDX)", msgs * sp.packets)});
      // The VMM: a pass, the tx chain, its write() (skbs, the copy from
      // guest memory), an interrupt; a credit update per tx_buf_size.
      const double credits = 1e6 / static_cast<double>(fk.tx_buf_size - fk.credit_threshold);
      vmm += msgs * split(m, kn.max_pkt_size,
                          [&](double n) {
                            return vmm_pass + k.fc_eventfd_read + k.fc_seccomp + k.fc_tx_pkt + k.fc_unix_syscall +
                                   k.fc_seccomp + skbs(n) * k.fc_unix_skb + remote(n);
                          })
                        .sum +
             credits * k.fc_rx_pkt;
      irq_work +=
          msgs * split(m, kn.max_pkt_size, [&](double) { return k.virtio_guest_tx_done + k.virtio_guest_free; }).sum +
          credits * (k.virtio_guest_rx_buf + k.virtio_guest_rx_pkt + k.virtio_guest_free);
      interrupts += msgs * sp.packets;
      plan.loads.push_back(
          {fmt::format("host_reader{}", i), hcpu, "host reader (select, read() on AF_UNIX, copy)", i,
           msgs * (k.virtio_host_poll_syscall + k.virtio_host_iperf3_user_per_call + k.fc_unix_syscall) + remote(1e6),
           fmt::format("{:.0f} blocks per MB", msgs)});
      plan.links.push_back({"vsock0.tx", i, fmt::format("guest_writer{}", i), fmt::format("host_reader{}", i)});
    } else {
      const double bufs = 1e6 / static_cast<double>(std::min<std::uint64_t>(kn.rx_buf_size, 65536));
      plan.loads.push_back({fmt::format("host_writer{}", i), hcpu, "host writer (select, write() on AF_UNIX, copy)", i,
                            msgs * (k.virtio_host_poll_syscall / 10 + k.virtio_host_iperf3_user_per_call +
                                    k.fc_unix_syscall + skbs(static_cast<double>(m)) * k.fc_unix_skb) +
                                std::ceil(1e6 / k.fc_host_copy_bytes_per_cycle),
                            fmt::format("{:.0f} blocks per MB", msgs)});
      // The VMM: per rx buffer a pass (the nested epoll, an empty tx
      // check), the rx chain, one read() into guest memory, an interrupt.
      vmm += bufs * (vmm_pass + k.fc_muxer_epoll + k.fc_seccomp + k.fc_rx_pkt + k.fc_unix_syscall + k.fc_seccomp) +
             remote(1e6);
      irq_work +=
          bufs * (k.virtio_guest_rx_buf + k.virtio_guest_rx_pkt + k.virtio_guest_vq_add +
                  detail::guest_allocs(k, detail::pkt_allocs(kn, kn.rx_buf_size)) + k.virtio_guest_work_run / chains);
      interrupts += bufs;
      plan.loads.push_back({fmt::format("guest_reader{}", i), gcpu, "guest reader (recv syscall, copy out)", i,
                            msgs * (guest.user_per_call + k.virtio_guest_recv_syscall) +
                                bufs * (k.virtio_guest_dequeue_pkt + k.virtio_guest_free) + k.guest_rx_copy(1e6),
                            fmt::format("{:.0f} rx buffers per MB", bufs)});
      plan.links.push_back({"vsock0.rx", i, fmt::format("host_writer{}", i), fmt::format("guest_reader{}", i)});
    }
  }
  const double n = std::max(plan.connections, 1);
  plan.loads.push_back({"fc_vmm", "hcpu0", "Firecracker's VMM thread", -1, vmm / n,
                        "a loop pass, a queue chain, a write() or read() on AF_UNIX and an interrupt per packet"});
  // x86 KVM's injection of each of those interrupts, by a kworker on the
  // VMM's core (fc_irqfd_inject; its switch in left out: a bound).
  if (k.fc_irqfd_inject > 0)
    plan.loads.push_back({"kworker_irqfd", "hcpu0", "host kworker injecting the interrupts (irqfd_inject)", -1,
                          interrupts * k.fc_irqfd_inject / n,
                          "KVM's injection of each interrupt through the IOAPIC, on the VMM's core"});
  plan.loads.push_back({"kworker_" + irq_cpu, irq_cpu, "guest kworker of the interrupt vCPU (rx and tx work)", -1,
                        irq_work / n, "tx completions, rx buffers taken and refilled"});
  plan.loads.push_back({"virtio_irq", irq_cpu, "interrupts (the interrupt vCPU)", -1, interrupts * irq / n,
                        "an injected interrupt per device handler call, with virtio-mmio's two exits to the VMM"});
  return plan;
}

std::pair<std::string, std::string> firecracker_refusal(const Params& p)
{
  const Preset* preset = find_preset(p.text("virtio_vsock.preset"));
  if (preset != nullptr && preset->values.count("virtio_vsock.packet_type") &&
      preset->values.at("virtio_vsock.packet_type") == "sk_buff")
    return {"virtio_vsock.preset",
            fmt::format("{}'s guest driver (sk_buff, Linux 6.3 on) posts one-descriptor rx buffers, which "
                        "Firecracker's 2023 device rejects (VsockPacket::from_rx_virtq_head wants a header and a "
                        "data descriptor): not modelled (allowed: linux-4.14, linux-4.19, linux-5.4, linux-5.10, "
                        "linux-6.2)",
                        preset->name)};
  if (p.text("workload.pattern") != "stream")
    return {"workload.pattern", "round trips over Firecracker's device are not modelled yet (allowed: stream)"};
  if (p.integer("virtio_vsock.max_pkt_size") > 65536)
    return {"virtio_vsock.max_pkt_size",
            fmt::format("{} bytes: Firecracker's device rejects tx packets above MAX_PKT_BUF_SIZE (allowed: at most "
                        "64KiB)",
                        p.integer("virtio_vsock.max_pkt_size"))};
  return {"", ""};
}

} // namespace vsim::virtio_vsock
