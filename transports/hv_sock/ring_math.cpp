// See ring_math.hpp. Each function names the kernel code it models.
#include "transports/hv_sock/ring_math.hpp"

#include <algorithm>
#include <climits>

namespace vsim::hv_sock {

// hvs_channel_writable_bytes() (net/vmw_vsock/hyperv_transport.c).
std::uint32_t writable_bytes(std::uint32_t bytes_to_write)
{
  if (bytes_to_write <= kWritableHeadroom)
    return 0;
  return (bytes_to_write - kWritableHeadroom) & ~7u; // round_down(, 8)
}

// The to_write computation at the top of hvs_stream_enqueue().
std::uint32_t enqueue_payload(std::uint64_t remaining, std::uint32_t bytes_to_write)
{
  const std::uint64_t w = std::min<std::uint64_t>(remaining, writable_bytes(bytes_to_write));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(w, kSendBufPayload));
}

std::uint32_t host_room_needed(std::uint32_t want, bool fill)
{
  const std::uint32_t packet = models::hvs_packet_len(want);
  return fill ? std::max(packet, kWritableHeadroom) : packet;
}

// sock_setsockopt() cases SO_SNDBUF / SO_RCVBUF (net/core/sock.c), and
// hvs_sock_init() for the unset case.
std::uint32_t socket_buffer_value(std::optional<std::uint64_t> setsockopt_value, std::uint64_t sysctl_max,
                                  SocketBuffer which)
{
  if (!setsockopt_value)
    return kRingDefaultSize; // hvs_sock_init: sk_sndbuf = RINGBUFFER_HVS_SND_SIZE, sk_rcvbuf = ..._RCV_SIZE
  // val = min_t(u32, val, sysctl_[wr]mem_max); sysctl values are u32.
  std::uint64_t val = std::min<std::uint64_t>(*setsockopt_value, std::min<std::uint64_t>(sysctl_max, UINT32_MAX));
  // val = min_t(int, val, INT_MAX / 2): val * 2 must fit an int.
  val = std::min<std::uint64_t>(val, INT_MAX / 2);
  const std::uint64_t floor = which == SocketBuffer::Send ? kSockMinSndbuf : kSockMinRcvbuf;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(val * 2, floor));
}

// hvs_open_connection(): the sndbuf / rcvbuf computation before vmbus_open().
std::uint32_t ring_size_for(std::uint32_t sk_buf, bool sockopt_sizing)
{
  if (!sockopt_sizing)
    return kRingDefaultSize; // vmbus_proto_version < VERSION_WIN10_V5, or the pre-patch constants
  std::uint32_t v = std::max(sk_buf, kRingDefaultSize);
  v = std::min(v, kRingMaxSize);
  return (v + models::kPageSize - 1) / models::kPageSize * models::kPageSize; // ALIGN(, PAGE_SIZE)
}

} // namespace vsim::hv_sock
