// The costs the virtio-vsock model charges, in cycles of the platform clock
// (values: the platform profiles, transports/profiles.cpp; ranges and
// sources: docs/cost-sources.md).
#pragma once

#include <cmath>

#include "sim/params.hpp"

namespace vsim::virtio_vsock::detail {

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

  static Costs from(const Params& p);

  // Whole cycles, so that sums of costs stay exact.
  double guest_copy(double bytes) const { return copy_fixed + std::ceil(bytes / copy_bpc); }
  double vhost_copy(double bytes) const { return std::ceil(bytes / h_guest_copy_bpc); }
  double seconds(double cycles) const { return cycles / (clock_ghz * 1e9); }
};

}  // namespace vsim::virtio_vsock::detail
