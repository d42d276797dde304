// What one hv_sock connection holds in memory (memory_bytes_per_connection,
// each part in `effective`): the pages of its VMBus channel's two rings,
// which hvs_open_connection() sizes from SO_SNDBUF / SO_RCVBUF and
// vmbus_open() allocates in the guest (the host maps the same pages through
// the channel's GPADL, so they are counted once), and the send buffer
// hvs_stream_enqueue() allocates for the packet it is writing.
//
// hv_sock queues no data in the socket's own buffers: a sender writes into
// the outbound ring, a reader reads the inbound ring in place
// (hvs_stream_dequeue), so SO_SNDBUF / SO_RCVBUF bound memory only through
// the ring sizes they give. The Windows host's socket buffers are not
// public and are not counted.
#include "transports/hv_sock/params.hpp"

namespace vsim::hv_sock {

namespace {

// struct hvs_send_buf (net/vmw_vsock/hyperv_transport.c): the pipe header and
// HVS_SEND_BUF_SIZE bytes of payload, kmalloc'd by hvs_stream_enqueue() for
// the call and freed before it returns: 4096 bytes, one kmalloc-4k object.
constexpr double kHvsSendBufBytes = models::kPipeHeaderBytes + kSendBufPayload;
static_assert(models::kPipeHeaderBytes + kSendBufPayload == 4096);

} // namespace

std::vector<Effective> memory(const Params& p)
{
  // vmbus_open() -> __vmbus_open(): alloc_pages of each ring's size, the
  // struct hv_ring_buffer header page included (hv_ringbuffer_init).
  const double out = ring_size(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send);
  const double in = ring_size(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive);
  return {
      {"memory_hv_ring_buffer_guest_to_host", out, "bytes", "hv_sock.sndbuf", ""},
      {"memory_hv_ring_buffer_host_to_guest", in, "bytes", "hv_sock.rcvbuf", ""},
      {"memory_hvs_send_buf", kHvsSendBufBytes, "bytes", "transport", ""},
  };
}

} // namespace vsim::hv_sock
