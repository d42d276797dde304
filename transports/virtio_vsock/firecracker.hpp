// Firecracker's userspace vsock device (transport firecracker_vsock): the
// VMM thread that runs the virtio queues in its event loop and bridges each
// connection to a host AF_UNIX stream, and the host application on the
// other end of that stream (iperf3 with vsock support, as Firecracker's CI
// runs it). The guest side is the Linux driver of virtio_transport.cpp.
// Sources: firecracker-microvm/firecracker at af054d7c612b (2023-09-20),
// src/vmm/src/devices/virtio/vsock/; docs/firecracker-notes.md.
#pragma once

#include <cstdint>

#include "transports/virtio_vsock/internal.hpp"

namespace vsim::virtio_vsock::detail {

// The device's knobs (firecracker_vsock.*).
struct FcKnobs {
  std::uint32_t tx_buf_size = 65536;     // CONN_TX_BUF_SIZE: the TxBuf and the buf_alloc told to the guest
  std::uint32_t credit_threshold = 4096; // CONN_CREDIT_UPDATE_THRESHOLD
  std::uint32_t unix_sndbuf = 212992;    // the AF_UNIX sockets' sk_sndbuf (net.core.wmem_default)
  bool rx_drain = false;                 // rx: every readable connection drained per wake-up (048128270)
};

class FcVmm;

// The point's firecracker_vsock.* knobs (virtio_vsock.cpp).
FcKnobs read_fc_knobs(const Params& p);

// The VMM thread on `cpu`; it is the Shared's device.
FcVmm& add_firecracker_vmm(World& w, Cpu& cpu, Shared& s, const FcKnobs& fk);
// Connection c's host application (iperf3's server on the AF_UNIX stream)
// on `cpu`: the writer when the guest reads, else the reader.
SimThread& add_firecracker_host_app(World& w, Cpu& cpu, Shared& s, FcVmm& vmm, Conn& c, bool writer);
// The VMM thread (for its CPU figure).
const SimThread& vmm_thread(const FcVmm& vmm);

} // namespace vsim::virtio_vsock::detail
