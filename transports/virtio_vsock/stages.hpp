// The stages of a virtio-vsock round trip as the simulation stamps their
// starts (sim/round_trips.hpp): a message guest to host in six stages, one
// host to guest in seven; a round trip is one of each, in the order of
// `direction` (the initiator's message first). Only data packets stamp: a
// credit update sent between a request and its response does not move a
// round trip on.
#pragma once

#include <array>
#include <cstddef>

namespace vsim::virtio_vsock {

enum class Stage : std::size_t {
  // Guest to host.
  GuestSend,     // vsock_stream_sendmsg .. virtio_transport_send_pkt (the 6.12 fast path's add and kick included)
  GuestSendWork, // virtio_transport_send_pkt_work: the queued packet onto the tx queue
  KickToVhost,   // virtqueue_notify's exit, the ioeventfd and the vhost worker's wake-up
  VhostTx,       // vhost_vsock_handle_tx_kick: the packet copied out and delivered to the host socket
  HostWakeup,    // sk_data_ready .. the host reader running again
  HostRecv,      // virtio_transport_stream_do_dequeue .. the host recv() returning
  // Host to guest.
  HostSend,         // the host's vsock_stream_sendmsg .. vhost_transport_send_pkt
  VhostWakeup,      // vhost_work_queue .. the vhost worker running the send work
  VhostRx,          // vhost_transport_do_send_pkt: the packet into a guest rx buffer
  InterruptToGuest, // vhost_signal .. the guest's interrupt, vring_interrupt, the rx work's start
  GuestRxWork,      // virtio_transport_rx_work: the buffer to the guest socket
  GuestWakeup,      // sk_data_ready .. the guest reader running again
  GuestRecv,        // virtio_transport_stream_do_dequeue .. the guest recv() returning
  Count
};

inline constexpr std::array<const char*, static_cast<std::size_t>(Stage::Count)> kStageNames = {
    "guest send()",  "guest send work",      "kick to vhost", "vhost tx", "host reader wake-up",
    "host recv()",   "host send()",          "vhost wake-up", "vhost rx", "guest interrupt",
    "guest rx work", "guest reader wake-up", "guest recv()",
};

} // namespace vsim::virtio_vsock
