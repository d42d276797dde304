#include "transports/virtio_vsock/costs.hpp"

#include <string>

namespace vsim::virtio_vsock::detail {

Costs Costs::from(const Params& p)
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

}  // namespace vsim::virtio_vsock::detail
