// virtio-vsock over virtqueues with vhost: a Linux guest's virtio transport
// (net/vmw_vsock/virtio_transport.c, virtio_transport_common.c) and the
// host's vhost-vsock device (drivers/vhost/vsock.c, vhost.c) exchanging a
// stream per connection over one device's rx and tx virtqueues.
//
// Threads (transports/virtio_vsock/internal.hpp), by file:
//   virtio_transport_common.cpp  AppThread: one end's send()/recv() loop over
//                the socket layer and credit both ends run; GuestApp and
//                HostApp are its guest and host kinds (guest_writerN,
//                guest_readerN, host_writerN, host_readerN)
//   virtio_transport.cpp  the guest driver: the send_pkt_work item a guest
//                syscall queues runs on its vCPU's worker pool (a Kworker,
//                not the thread; another kworker of the pool takes over
//                while one blocks on a socket lock); GuestIrq on vCPU 0
//                (irq_vcpu) takes the virtqueue interrupt (irqfd MSI, one
//                shared vector by default), then the pool runs the rx and
//                tx work items the callbacks queue
//   vhost_vsock.cpp  Vhost: the device's single vhost worker, handle_tx_kick
//                and send_pkt_work (which also serves rx kicks)
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <vector>

#include "sim/params.hpp"
#include "sim/trace.hpp"
#include "transports/transport.hpp"

namespace vsim::virtio_vsock {

// The point's effective packet, buffer and queue sizes, credit window and
// interrupt vCPU, with what became of knobs the combination ignores.
std::vector<Effective> effective(const Params& p);
// What one connection holds in memory, part by part (memory.cpp): its share
// of the virtqueue rings and posted rx buffers, and its sockets' buf_alloc;
// their sum is memory_bytes_per_connection.
std::vector<Effective> memory(const Params& p);

using Metrics = std::map<std::string, double>;

// The metrics virtio_vsock reports besides the shared ones
// (transports/simulate.hpp): its figures and its counter table (internal.hpp).
std::vector<MetricDecl> metrics();
// firecracker_vsock's: virtio_vsock's and the VMM thread's (firecracker.hpp).
std::vector<MetricDecl> firecracker_metrics();

// Runs one iteration of one point: the whole transfer, every connection.
// Throws std::logic_error when a model invariant is violated.
// trace: a timeline recorder to attach to the run (sim/trace.hpp), or nullptr.
Metrics simulate(const Params& params, std::uint32_t iteration, Trace* trace = nullptr);

// Bytes of struct virtio_vsock_hdr on the wire.
inline constexpr std::uint32_t kHeaderBytes = 44;
// The 2018 mergeable-rx proposal ("VSOCK: support fill mergeable rx buffer
// in guest": "it will fill a page everytime") puts the packet header and
// struct virtio_vsock_mrg_rxbuf_hdr (__le16 num_buffers) at the start of the
// first page-sized buffer: that buffer holds this much less payload.
inline constexpr std::uint32_t kMrgHeaderBytes = kHeaderBytes + 2;

} // namespace vsim::virtio_vsock
