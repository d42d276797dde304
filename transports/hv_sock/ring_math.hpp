// hv_sock's arithmetic on ring space and socket buffer sizes, as in
// net/vmw_vsock/hyperv_transport.c and net/core/sock.c of Linux v5.2/v5.3
// (the ring sizing is the 2019 patch "hv_sock: Allow the socket buffer size
// options to influence the actual socket buffers", commit ac383f58f3c9).
#pragma once

#include <cstdint>
#include <optional>

#include "models/vmbus_ring.hpp"

namespace vsim::hv_sock {

// Payload of one full packet sent by Linux: HVS_SEND_BUF_SIZE = 4 KiB minus
// the pipe header (struct vmpipe_proto_header).
inline constexpr std::uint32_t kSendBufPayload = 4096 - models::kPipeHeaderBytes; // 4088
static_assert(kSendBufPayload == 4088);

// Largest payload the host may put in one packet: HVS_MTU_SIZE (16 KiB).
inline constexpr std::uint32_t kMtuSize = 16 * 1024;

// Headroom hvs_channel_writable_bytes keeps: HVS_PKT_LEN(1) + HVS_PKT_LEN(0)
// (one 1-byte packet, so the ring is never exactly full, and one FIN).
inline constexpr std::uint32_t kWritableHeadroom = models::hvs_packet_len(1) + models::hvs_packet_len(0);
static_assert(kWritableHeadroom == 72);

// pending_send_sz Linux advertises on its outbound ring:
// hvs_set_channel_pending_send_size() = HVS_PKT_LEN(HVS_SEND_BUF_SIZE).
inline constexpr std::uint32_t kPendingSendSize = models::hvs_packet_len(kSendBufPayload);
static_assert(kPendingSendSize == 4120);

// RINGBUFFER_HVS_SND_SIZE / RINGBUFFER_HVS_RCV_SIZE (6 pages) and
// RINGBUFFER_HVS_MAX_SIZE (64 pages).
inline constexpr std::uint32_t kRingDefaultSize = 6 * models::kPageSize; // 24 KiB
inline constexpr std::uint32_t kRingMaxSize = 64 * models::kPageSize;    // 256 KiB

// SOCK_MIN_SNDBUF = 2 * TCP_SKB_MIN_TRUESIZE and SOCK_MIN_RCVBUF =
// TCP_SKB_MIN_TRUESIZE, TCP_SKB_MIN_TRUESIZE = 2048 + SKB_DATA_ALIGN(sizeof
// (struct sk_buff)). sizeof(struct sk_buff) is config-dependent; 232 bytes on
// a typical x86-64 4.x/5.x kernel, aligned to 64 -> 256, so 2304 and 4608.
inline constexpr std::uint32_t kSockMinRcvbuf = 2048 + 256;
inline constexpr std::uint32_t kSockMinSndbuf = 2 * kSockMinRcvbuf;

// Default net.core.wmem_max / rmem_max (SK_WMEM_MAX / SK_RMEM_MAX) on x86-64.
inline constexpr std::uint64_t kDefaultSysctlMemMax = 212992;

// hvs_channel_writable_bytes(): 0 if bytes_to_write <= 72, else
// round_down(bytes_to_write - 72, 8).
std::uint32_t writable_bytes(std::uint32_t bytes_to_write);

// Payload of the next packet hvs_stream_enqueue() writes for a message with
// `remaining` bytes left: min(remaining, writable_bytes, HVS_SEND_BUF_SIZE).
std::uint32_t enqueue_payload(std::uint64_t remaining, std::uint32_t bytes_to_write);

// The model's Windows host writer (windows_host.cpp), not Linux: the free
// ring bytes it needs before it writes a packet of `want` payload bytes, and
// so the pending_send_sz it advertises when it sleeps. hv_pkt_iter_close()
// signals it once bytes_to_write > pending_send_sz, so the value must be at
// least the free space at which the writer still cannot write: whole packets
// only (fill = false): a packet is accepted when bytes_to_write >
// hvs_packet_len(want) (hv_ringbuffer_write); writing what fits (fill =
// true): something fits once writable_bytes() > 0, i.e. bytes_to_write > 72
// (the headroom), which is more than hvs_packet_len(want) for want <= 39.
// Advertising only the packet length there was a lost wake-up (a model bug, since fixed):
// the writer slept with 72 free bytes, pending_send_sz 40, and the reader's
// iter_close saw "not blocked before" (72 - bytes_read > 40) and never signalled.
std::uint32_t host_room_needed(std::uint32_t want, bool fill);

enum class SocketBuffer { Send, Receive };

// Socket buffer value as sock_setsockopt(SO_SNDBUF / SO_RCVBUF, v) stores it:
// val = min(v, sysctl_max), val = min(val, INT_MAX / 2), sk_buf =
// max(2 * val, SOCK_MIN_SNDBUF / SOCK_MIN_RCVBUF). nullopt = option not set:
// the value hvs_sock_init() gives the socket (24 KiB, after the 2019 patch).
// (A negative int passed to setsockopt would be capped by sysctl_max; the
// uint64 argument cannot express it.)
std::uint32_t socket_buffer_value(std::optional<std::uint64_t> setsockopt_value, std::uint64_t sysctl_max,
                                  SocketBuffer which = SocketBuffer::Send);

// Ring size (bytes, header page included) hvs_open_connection() passes to
// vmbus_open() for one direction.
//  sockopt_sizing (after the patch, VMBus >= VERSION_WIN10_V5):
//      ALIGN(min(max(sk_buf, 24 KiB), 256 KiB), PAGE_SIZE)
//  fixed (before the patch, or older hosts): 24 KiB whatever sk_buf.
std::uint32_t ring_size_for(std::uint32_t sk_buf, bool sockopt_sizing);

} // namespace vsim::hv_sock
