// hv_sock over VMBus: a Linux guest and a Windows (Hyper-V) host exchanging a
// stream over one VMBus channel per connection.
//
// Guest (Linux v5.2-era, net/vmw_vsock/af_vsock.c + hyperv_transport.c;
// transports/hv_sock/hyperv_transport.cpp):
//   LinuxWriter  vsock_stream_sendmsg -> hvs_stream_has_space /
//                hvs_stream_enqueue -> hv_ringbuffer_write + hv_signal_on_write
//   LinuxReader  vsock_stream_recvmsg -> hvs_stream_dequeue -> hv_pkt_iter_*
//   GuestIrq     vmbus_isr -> tasklet (vmbus_on_event) -> hvs_channel_cb,
//                all on vCPU 0
// Host (Windows: not public, modelled as a DPC-driven reader and a writer;
// transports/hv_sock/windows_host.cpp):
//   HostReader   DPC drains the guest-to-host ring with interrupt_mask set
//   HostWriter   writes packets of up to hv_sock.host_packet_size
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/params.hpp"
#include "sim/trace.hpp"
#include "transports/simulate.hpp"

namespace vsim::hv_sock {

using Metrics = std::map<std::string, double>;

// The metrics hv_sock reports besides the shared ones (transports/simulate.hpp):
// its figures and its counter table (internal.hpp).
std::vector<MetricDecl> metrics();

// Runs one iteration of one point: the whole transfer, every connection.
// Throws std::logic_error when a model invariant is violated.
// trace: a timeline recorder to attach to the run (sim/trace.hpp), or nullptr.
Metrics simulate(const Params& params, std::uint32_t iteration, Trace* trace = nullptr);

} // namespace vsim::hv_sock
