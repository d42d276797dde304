#include "transports/virtio_vsock/costs.hpp"

#include <string>

namespace vsim::virtio_vsock::detail {

namespace {

// Every field of Costs and the `costs.*` parameter it comes from: the same
// name, written once.
#define VSIM_COST(name) {#name, &Costs::name}
const struct {
  const char* key;
  double Costs::*field;
} kFields[] = {
    VSIM_COST(clock_ghz),
    VSIM_COST(guest_user_per_call),
    VSIM_COST(guest_copy_fixed),
    VSIM_COST(guest_copy_bytes_per_cycle),
    VSIM_COST(guest_wakeup_latency),
    VSIM_COST(guest_context_switch),
    VSIM_COST(virtio_guest_send_syscall),
    VSIM_COST(virtio_guest_recv_syscall),
    VSIM_COST(virtio_guest_alloc),
    VSIM_COST(virtio_guest_free),
    VSIM_COST(virtio_guest_pkt),
    VSIM_COST(virtio_guest_vq_add),
    VSIM_COST(virtio_guest_kick),
    VSIM_COST(virtio_guest_work_run),
    VSIM_COST(virtio_guest_rx_buf),
    VSIM_COST(virtio_guest_rx_pkt),
    VSIM_COST(virtio_guest_tx_done),
    VSIM_COST(virtio_guest_irq_exit),
    VSIM_COST(virtio_guest_isr),
    VSIM_COST(virtio_guest_dequeue_pkt),
    VSIM_COST(virtio_host_user_per_call),
    VSIM_COST(virtio_host_send_syscall),
    VSIM_COST(virtio_host_recv_syscall),
    VSIM_COST(virtio_host_alloc),
    VSIM_COST(virtio_host_free),
    VSIM_COST(virtio_host_pkt),
    VSIM_COST(virtio_host_copy_fixed),
    VSIM_COST(virtio_host_copy_bytes_per_cycle),
    VSIM_COST(virtio_host_dequeue_pkt),
    VSIM_COST(virtio_host_worker_run),
    VSIM_COST(virtio_host_tx_pkt),
    VSIM_COST(virtio_host_rx_buf),
    VSIM_COST(virtio_host_guest_copy_bytes_per_cycle),
    VSIM_COST(virtio_host_signal),
    VSIM_COST(virtio_host_kick_latency),
    VSIM_COST(virtio_host_interrupt_latency),
    VSIM_COST(host_wakeup_latency),
    VSIM_COST(latency_jitter),
    VSIM_COST(iteration_jitter),
};
#undef VSIM_COST

}  // namespace

Costs Costs::from(const Params& p)
{
  Costs k{};
  for (const auto& f : kFields)
    k.*(f.field) = p.number(std::string("costs.") + f.key);
  return k;
}

}  // namespace vsim::virtio_vsock::detail
