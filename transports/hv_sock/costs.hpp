// The platform costs hv_sock's algorithms charge, read once from the resolved
// `costs.*` parameters (values come from the platform profile), each field
// named after its parameter and declared once, in costs.cpp's table.
#pragma once

#include <cmath>

#include "sim/params.hpp"
#include "transports/costs.hpp"

namespace vsim::hv_sock {

struct Costs : SharedCosts {
  double guest_send_syscall, guest_space_check, guest_pending_send_sz_write, guest_enqueue_call, guest_ring_write,
      guest_signal_host, guest_recv_syscall, guest_dequeue_packet, guest_iter_close, guest_irq_exit, guest_isr,
      guest_tasklet, host_signal_latency, host_dpc, host_rx_packet, host_recv_call, host_send_call, host_tx_packet,
      host_rx_copy_bytes_per_cycle, host_tx_copy_bytes_per_cycle, host_signal_guest, host_interrupt_latency;

  static Costs from(const Params& p);
  // The declarations of hv_sock's own costs (the shared ones: transports/costs.hpp).
  static std::vector<CostDecl> decls();
  // The same with the field each fills.
  static const std::vector<CostField<Costs>>& fields();

  // Whole cycles, so that sums of costs stay exact.
  double guest_copy(double bytes) const { return guest_copy_fixed + std::ceil(bytes / guest_copy_bytes_per_cycle); }
  double host_rx_copy(double bytes) const { return std::ceil(bytes / host_rx_copy_bytes_per_cycle); }
  double host_tx_copy(double bytes) const { return std::ceil(bytes / host_tx_copy_bytes_per_cycle); }
  double seconds(double cycles) const { return cycles / (clock_ghz * 1e9); }
};

} // namespace vsim::hv_sock
