// The virtio-vsock experiment the end-to-end tests start from: every cost
// set here, not taken from the calibrated profiles, so their pins do not
// move when a profile is re-fitted (tests/test_virtio_vsock.cpp,
// tests/test_virtio_sockets.cpp).
#pragma once

namespace vsim::testing {

inline constexpr const char* kVirtioBase = R"(
transport: virtio_vsock
platform: kvm-2019
seed: 11
iterations: 1
virtio_vsock.preset: linux-4.19
workload:
  message_size: 64KiB
  total_bytes: 1MB
costs:

  clock_ghz: 2.5
  guest_user_per_call: 300
  guest_copy_fixed: 60
  guest_copy_bytes_per_cycle: 4
  guest_wakeup_latency: 5000
  guest_context_switch: 2000
  host_wakeup_latency: 5000
  latency_jitter: 0.2
  iteration_jitter: 0.03
  guest_iteration_jitter: 0
  virtio_guest_send_syscall: 800
  virtio_guest_recv_syscall: 800
  virtio_guest_alloc: 150
  virtio_guest_free: 100
  virtio_guest_pkt: 400
  virtio_guest_vq_add: 150
  virtio_guest_kick: 2500
  virtio_guest_work_run: 1000
  virtio_guest_rx_buf: 300
  virtio_guest_rx_pkt: 500
  virtio_guest_tx_done: 200
  virtio_guest_irq_exit: 1500
  virtio_guest_isr: 700
  virtio_guest_dequeue_pkt: 200
  virtio_guest_poll_syscall: 1000
  virtio_guest_iperf3_user_per_call: 300
  virtio_host_user_per_call: 300
  virtio_host_iperf3_user_per_call: 300
  virtio_host_send_syscall: 800
  virtio_host_recv_syscall: 800
  virtio_host_alloc: 150
  virtio_host_free: 100
  virtio_host_pkt: 400
  virtio_host_copy_fixed: 60
  virtio_host_copy_bytes_per_cycle: 4
  virtio_host_dequeue_pkt: 200
  virtio_host_worker_run: 800
  virtio_host_tx_pkt: 500
  virtio_host_rx_buf: 400
  virtio_host_guest_copy_bytes_per_cycle: 3
  virtio_host_signal: 1000
  virtio_host_kick_latency: 5000
  virtio_host_interrupt_latency: 3000
  virtio_host_poll_syscall: 1000
  virtio_guest_rx_copy_bytes_per_cycle: 4
  virtio_host_rx_copy_bytes_per_cycle: 4
)";

} // namespace vsim::testing
