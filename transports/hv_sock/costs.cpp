#include "transports/hv_sock/costs.hpp"

namespace vsim::hv_sock {

Costs Costs::from(const Params& p)
{
  auto c = [&](const char* name) { return p.number(std::string("costs.") + name); };
  Costs k{};
  k.clock_ghz = c("clock_ghz");
  k.guest_user_per_call = c("guest_user_per_call");
  k.guest_send_syscall = c("guest_send_syscall");
  k.guest_space_check = c("guest_space_check");
  k.guest_pending_send_sz_write = c("guest_pending_send_sz_write");
  k.guest_enqueue_call = c("guest_enqueue_call");
  k.guest_ring_write = c("guest_ring_write");
  k.guest_copy_fixed = c("guest_copy_fixed");
  k.guest_copy_bytes_per_cycle = c("guest_copy_bytes_per_cycle");
  k.guest_signal_host = c("guest_signal_host");
  k.guest_recv_syscall = c("guest_recv_syscall");
  k.guest_dequeue_packet = c("guest_dequeue_packet");
  k.guest_iter_close = c("guest_iter_close");
  k.guest_irq_exit = c("guest_irq_exit");
  k.guest_isr = c("guest_isr");
  k.guest_tasklet = c("guest_tasklet");
  k.guest_wakeup_latency = c("guest_wakeup_latency");
  k.guest_context_switch = c("guest_context_switch");
  k.host_signal_latency = c("host_signal_latency");
  k.host_dpc = c("host_dpc");
  k.host_rx_packet = c("host_rx_packet");
  k.host_recv_call = c("host_recv_call");
  k.host_send_call = c("host_send_call");
  k.host_tx_packet = c("host_tx_packet");
  k.host_rx_copy_bytes_per_cycle = c("host_rx_copy_bytes_per_cycle");
  k.host_tx_copy_bytes_per_cycle = c("host_tx_copy_bytes_per_cycle");
  k.host_signal_guest = c("host_signal_guest");
  k.host_interrupt_latency = c("host_interrupt_latency");
  k.host_wakeup_latency = c("host_wakeup_latency");
  k.latency_jitter = c("latency_jitter");
  k.iteration_jitter = c("iteration_jitter");
  return k;
}

}  // namespace vsim::hv_sock
