// The costs the virtio-vsock model charges, in cycles of the platform clock
// (values: the platform profiles, transports/profiles.cpp; ranges and
// sources: docs/cost-sources.md). Each field is named after its `costs.*`
// parameter, declared once in costs.cpp's table, which fills it.
#pragma once

#include <cmath>

#include "models/cache_reuse.hpp"
#include "sim/params.hpp"
#include "transports/costs.hpp"

namespace vsim::virtio_vsock::detail {

struct Costs : SharedCosts {
  // guest driver
  double virtio_guest_send_syscall, virtio_guest_recv_syscall, virtio_guest_alloc, virtio_guest_free, virtio_guest_pkt,
      virtio_guest_vq_add, virtio_guest_kick, virtio_guest_work_run, virtio_guest_rx_buf, virtio_guest_rx_pkt,
      virtio_guest_tx_done, virtio_guest_irq_exit, virtio_guest_isr, virtio_guest_dequeue_pkt,
      virtio_guest_poll_syscall, virtio_guest_wake_ipi, virtio_guest_halted_wakeup, virtio_guest_halt_poll_wakeup,
      virtio_kvm_halt_poll_ns, virtio_kvm_halt_poll_ns_shrink, virtio_guest_iperf3_user_per_call,
      virtio_guest_zcopy_pin_page, virtio_guest_zcopy_unpin_page, virtio_guest_zcopy_notify, virtio_guest_errqueue_recv,
      virtio_guest_page_alloc, virtio_guest_page_alloc_pcp;
  // host: its socket layer and vhost
  double virtio_host_user_per_call, virtio_host_send_syscall, virtio_host_recv_syscall, virtio_host_alloc,
      virtio_host_free, virtio_host_pkt, virtio_host_copy_fixed, virtio_host_copy_bytes_per_cycle,
      virtio_host_dequeue_pkt, virtio_host_worker_run, virtio_host_tx_pkt, virtio_host_rx_buf,
      virtio_host_guest_copy_bytes_per_cycle, virtio_host_signal, virtio_host_kick_latency,
      virtio_host_interrupt_latency, virtio_host_poll_syscall, virtio_host_wake_ipi, virtio_host_iperf3_user_per_call,
      virtio_host_zcopy_pin_page, virtio_host_zcopy_unpin_page, virtio_host_zcopy_notify, virtio_host_errqueue_recv,
      virtio_host_page_alloc, virtio_host_page_alloc_pcp;
  // init_on_alloc: whether each side's kernel zeroes what it allocates (0 or
  // 1), and the rate of that zeroing (one rate: guest and host run on the
  // same cores under KVM).
  double virtio_guest_init_on_alloc, virtio_host_init_on_alloc, virtio_zero_bytes_per_cycle;
  // A reader's copy out of a received packet, whose data another core wrote
  // (vhost's worker into the guest's rx buffer, or into the host's skb).
  double virtio_guest_rx_copy_bytes_per_cycle, virtio_host_rx_copy_bytes_per_cycle;
  // Where another core's data are when copied (models/cache_reuse.hpp): each
  // core's L2 size (0: not modelled) and the rate of a copy out of the L3.
  double virtio_l2_bytes, virtio_l3_copy_bytes_per_cycle;
  // Firecracker's device (transport firecracker_vsock): the VMM thread's
  // event loop, queue handlers and AF_UNIX syscalls, the host application's
  // AF_UNIX stream, the guest's virtio-mmio interrupt exits.
  double fc_loop_iter, fc_eventfd_read, fc_muxer_epoll, fc_epoll_ctl, fc_tx_pkt, fc_rx_pkt, fc_rx_probe, fc_irq,
      fc_irqfd_inject, fc_seccomp, fc_unix_syscall, fc_unix_skb, fc_vcpu_mmio_exit, fc_host_copy_bytes_per_cycle,
      fc_host_rx_copy_bytes_per_cycle;

  static Costs from(const Params& p);
  // The declarations of virtio-vsock's own costs (the shared ones:
  // transports/costs.hpp).
  static std::vector<CostDecl> decls();
  // The same with the field each fills.
  static const std::vector<CostField<Costs>>& fields();
  // The ties among them (and the shared guest_copy_bytes_per_cycle) in
  // virtio-vsock profiles.
  static const std::vector<CostTie>& ties();
  // The ties in firecracker_vsock profiles.
  static const std::vector<CostTie>& firecracker_ties();

  // Whole cycles, so that sums of costs stay exact.
  double guest_copy(double bytes) const { return guest_copy_fixed + std::ceil(bytes / guest_copy_bytes_per_cycle); }
  // The guest reader's copy, its source split by where its lines are (no
  // split: all in another core's L2).
  double guest_rx_copy(double bytes, CopySplit s = {}) const
  {
    return guest_copy_fixed + std::ceil(split_cycles(bytes, s, virtio_guest_rx_copy_bytes_per_cycle,
                                                     guest_copy_bytes_per_cycle, virtio_l3_copy_bytes_per_cycle));
  }
  // vhost's copy, its source split by where its lines are (hot: vhost wrote
  // them itself; l3: evicted from their writer's L2; no split: all in
  // another core's L2).
  double vhost_copy(double bytes, CopySplit s = {}) const
  {
    return std::ceil(split_cycles(bytes, s, virtio_host_guest_copy_bytes_per_cycle, virtio_host_copy_bytes_per_cycle,
                                  virtio_l3_copy_bytes_per_cycle));
  }
  // The cycles of a copy of `bytes` split as `s`, the rest at `remote`; a
  // copy with nothing hot or in the L3 takes exactly bytes / remote.
  static double split_cycles(double bytes, CopySplit s, double remote, double hot, double l3)
  {
    const double rest = bytes - s.hot - s.l3;
    return rest / remote + (s.hot > 0 ? s.hot / hot : 0.0) + (s.l3 > 0 ? s.l3 / l3 : 0.0);
  }
  // Zeroing `bytes` just allocated (mm/page_alloc.c post_alloc_hook ->
  // kernel_init_pages, mm/slub.c slab_post_alloc_hook: memset of the whole
  // object) on a side whose init_on_alloc flag is `on`.
  double zero(double on, double bytes) const { return zero_cycles(on, bytes, virtio_zero_bytes_per_cycle); }
  static double zero_cycles(double on, double bytes, double bytes_per_cycle)
  {
    return on > 0 && bytes > 0 ? std::ceil(bytes / bytes_per_cycle) : 0.0;
  }
  double seconds(double cycles) const { return cycles / (clock_ghz * 1e9); }
};

} // namespace vsim::virtio_vsock::detail
