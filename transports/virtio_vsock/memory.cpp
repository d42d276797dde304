// What one virtio-vsock connection holds in memory (memory_bytes_per_connection,
// each part in `effective`).
//
// The device's parts, shared by every connection and so divided by
// workload.connections: the three virtqueues' rings (rx, tx, event), each a
// split ring (virtio 1.1 section 2.6: descriptor table, available ring, used
// ring) in guest pages that vhost maps, and the rx buffers the guest keeps
// posted on the rx queue (virtio_vsock_rx_fill fills it). The connection's
// own: the socket buffer limits of its two sockets, buf_alloc each (struct
// virtio_vsock_sock): the most received payload each end queues before the
// peer's credit runs out, so what the connection can pin in the guest and
// in the host, one direction each. The limits count payload, not the
// sk_buff or virtio_vsock_pkt structures around queued packets.
#include <cstdint>

#include "transports/virtio_vsock/internal.hpp"
#include "transports/virtio_vsock/virtio_vsock.hpp"

namespace vsim::virtio_vsock {

namespace {

using detail::Knobs;

constexpr std::uint64_t kPage = 4096;
// vring_create_virtqueue()'s vring_align under virtio_pci_modern: SMP_CACHE_BYTES.
constexpr std::uint64_t kVringAlign = 64;
// The skbuff_head_cache object: sizeof(struct sk_buff), 232 bytes on a
// typical x86-64 6.x kernel, cache-line aligned (SLAB_HWCACHE_ALIGN).
constexpr std::uint64_t kSkBuffBytes = 256;
// kzalloc(sizeof(struct virtio_vsock_pkt)) (4.19 .. 6.2): the 44-byte
// header, list, vsk, buf, buf_len, len, off and reply, 93 bytes: a
// kmalloc-96 object.
constexpr std::uint64_t kVirtioVsockPktBytes = 96;
// struct vring_desc.
constexpr std::uint64_t kVringDescBytes = 16;

std::uint64_t align_up(std::uint64_t x, std::uint64_t a)
{
  return (x + a - 1) / a * a;
}

// vring_size() (include/uapi/linux/virtio_ring.h): the descriptor table
// (16 bytes an entry) and the available ring (flags, idx, an entry each,
// used_event), aligned, then the used ring (flags, idx, 8 bytes an entry,
// avail_event); vring_alloc_queue() takes whole pages (alloc_pages_exact /
// dma_alloc_coherent of PAGE_ALIGN(size)).
std::uint64_t vring_pages_bytes(std::uint64_t num)
{
  const std::uint64_t size = align_up(kVringDescBytes * num + 2 * (3 + num), kVringAlign) + 2 * 3 + 8 * num;
  return align_up(size, kPage);
}

// One posted rx buffer (virtio_vsock_rx_fill): with sk_buff (6.3) one skb,
// its struct and its kmalloc'd head (header, payload, skb_shared_info);
// before, a kzalloc'd struct virtio_vsock_pkt and its kmalloc'd payload
// buffer, plus the indirect descriptor table virtqueue_add_sgs() kmallocs
// for the two-entry chain when VIRTIO_RING_F_INDIRECT_DESC is on
// (alloc_indirect_split).
std::uint64_t rx_buffer_bytes(const Knobs& kn)
{
  if (kn.skb)
    return kSkBuffBytes + detail::kmalloc_size_roundup(detail::pkt_kmalloc_bytes(true, kn.rx_buf_size));
  const std::uint16_t sgs = detail::rx_buffer_sgs(kn);
  const std::uint64_t indirect = kn.indirect && sgs > 1 ? detail::kmalloc_size_roundup(kVringDescBytes * sgs) : 0;
  return kVirtioVsockPktBytes + detail::kmalloc_size_roundup(kn.rx_buf_size) + indirect;
}

} // namespace

std::vector<Effective> memory(const Params& p)
{
  const Knobs kn = detail::read_knobs(p);
  const auto connections = static_cast<double>(p.integer("workload.connections"));
  const auto shared = [&](std::uint64_t bytes) { return static_cast<double>(bytes) / connections; };
  const std::uint64_t ring = vring_pages_bytes(kn.queue_size);
  const std::uint64_t buffers =
      kn.queue_size / models::Virtqueue::descriptors_for(detail::rx_buffer_sgs(kn), kn.indirect);
  return {
      {"memory_vring_rx", shared(ring), "bytes", "virtio_vsock.queue_size", ""},
      {"memory_vring_tx", shared(ring), "bytes", "virtio_vsock.queue_size", ""},
      {"memory_vring_event", shared(ring), "bytes", "virtio_vsock.queue_size", ""},
      {"memory_rx_buffers", shared(buffers * rx_buffer_bytes(kn)), "bytes", "virtio_vsock.rx_buf_size", ""},
      {"memory_buf_alloc_guest", static_cast<double>(kn.buf_alloc), "bytes", "virtio_vsock.buf_alloc", ""},
      {"memory_buf_alloc_host", static_cast<double>(kn.buf_alloc), "bytes", "virtio_vsock.buf_alloc", ""},
  };
}

} // namespace vsim::virtio_vsock
