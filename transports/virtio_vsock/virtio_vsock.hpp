// virtio-vsock over virtqueues with vhost: a Linux guest's virtio transport
// (net/vmw_vsock/virtio_transport.c, virtio_transport_common.c) and the
// host's vhost-vsock device (drivers/vhost/vsock.c, vhost.c) exchanging a
// stream per connection over one device's rx and tx virtqueues.
//
// Guest threads:
//   GuestWriter / GuestReader  the application's send()/recv() loop; the
//                send_pkt_work item queued by a syscall runs right after it
//                on the same vCPU (charged to a kworker, not to the thread)
//   GuestIrq     vCPU 0: the virtqueue interrupt (irqfd MSI), then the rx
//                and tx work items the callbacks queue (kworker on vCPU 0)
// Host threads:
//   Vhost        the device's single vhost worker: handle_tx_kick and
//                send_pkt_work (which also serves rx kicks)
//   HostWriter / HostReader  the host application's send()/recv() loop
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sim/params.hpp"

namespace vsim::virtio_vsock {

using Metrics = std::map<std::string, double>;

// Runs one iteration of one point: the whole transfer, every connection.
// Throws std::logic_error when a model invariant is violated.
Metrics simulate(const Params& params, std::uint32_t iteration);

// Bytes of struct virtio_vsock_hdr on the wire.
inline constexpr std::uint32_t kHeaderBytes = 44;

}  // namespace vsim::virtio_vsock
