#include "transports/virtio_vsock/params.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

namespace vsim::virtio_vsock {

namespace {

// The transports a key applies to: both (the guest's driver), or vhost-vsock's only.
constexpr const char* kBoth = "virtio_vsock,firecracker_vsock";
constexpr const char* kVhost = "virtio_vsock";

// A virtqueue's size: a power of 2 (virtio 1.1 section 2.6), from `least`.
std::string power_of_two(const std::string& text, int least)
{
  const long v = std::stol(text);
  if ((v & (v - 1)) != 0)
    return fmt::format("{} is not a power of 2 (virtio 1.1 section 2.6; allowed: {}, {}, {}, ..., 32768)", text, least,
                       2 * least, 4 * least);
  return "";
}

// A kernel after the 2019 throughput series (5.4 onwards): its knobs are
// 5.4's but for the packet representation and the guest tx fast path.
Preset since_5_4(std::string name, std::string doc, std::string credit_update, std::string packet_type,
                 bool tx_fast_path, bool pcp_high_order = true, bool credit_locked = true)
{
  return {std::move(name),
          std::move(doc),
          {{"virtio_vsock.rx_buf_size", "4KiB"},
           {"virtio_vsock.max_pkt_size", "64KiB"},
           {"virtio_vsock.mergeable_rx", "false"},
           {"virtio_vsock.host_split", "true"},
           {"virtio_vsock.credit_update", std::move(credit_update)},
           {"virtio_vsock.small_pkt_copy", "true"},
           {"virtio_vsock.batch_used", "true"},
           {"virtio_vsock.queue_size", "128"},
           {"virtio_vsock.event_idx", "true"},
           {"virtio_vsock.vhost_weight_packets", "256"},
           {"virtio_vsock.vhost_weight_bytes", "512KiB"},
           {"virtio_vsock.packet_type", std::move(packet_type)},
           {"virtio_vsock.tx_fast_path", tx_fast_path ? "true" : "false"},
           {"virtio_vsock.pcp_high_order", pcp_high_order ? "true" : "false"},
           {"virtio_vsock.credit_locked", credit_locked ? "true" : "false"}}};
}

// A kernel before the 2019 throughput series (4.14 to 4.19): 4 KiB
// packets, a credit update on every read, no vhost weights.
Preset before_5_4(std::string name, std::string doc)
{
  return {std::move(name),
          std::move(doc),
          {{"virtio_vsock.rx_buf_size", "4KiB"},
           {"virtio_vsock.max_pkt_size", "4KiB"},
           {"virtio_vsock.mergeable_rx", "false"},
           {"virtio_vsock.host_split", "false"},
           {"virtio_vsock.credit_update", "every_read"},
           {"virtio_vsock.small_pkt_copy", "false"},
           {"virtio_vsock.batch_used", "true"},
           {"virtio_vsock.queue_size", "128"},
           {"virtio_vsock.event_idx", "true"},
           {"virtio_vsock.vhost_weight_packets", "0"},
           {"virtio_vsock.vhost_weight_bytes", "0"},
           {"virtio_vsock.packet_type", "virtio_vsock_pkt"},
           {"virtio_vsock.tx_fast_path", "false"},
           {"virtio_vsock.pcp_high_order", "false"},
           {"virtio_vsock.credit_locked", "false"}}};
}

} // namespace

const std::vector<Preset>& presets()
{
  // linux-4.19: net/vmw_vsock/virtio_transport*.c and drivers/vhost/vsock.c
  // as of 4.14-4.19 (2018). linux-5.4: after Stefano Garzarella's 2019
  // throughput series (v4, merged for 5.4): small-packet copy on receive
  // ("limit the memory used per-socket"), credit updates only below the
  // threshold ("reduce credit update messages"), the host splitting packets
  // over several rx buffers, 64 KiB packets; and vhost's weights (5.2).
  // The 6.x presets keep 5.4's knobs (unchanged to 6.12: buffer sizes,
  // weights, the credit threshold) and add the packet representation
  // (sk_buff: 71dc9ec9ac7d, 6.3) and the guest tx fast path (efcd71af38be,
  // 6.12), and their kernels' page allocator keeps high orders on its per-CPU
  // lists (44042b449872, 5.13) and their recv path takes a packet's credit
  // fields under the socket lock (ce7536bc7398, 5.12). linux-6.2 and linux-6.9 are the kernels the 2023 sk_buff and the
  // 2024 fast-path series measured their baselines on.
  static const std::vector<Preset> list = {
      before_5_4("linux-4.14", "Linux 4.14 guest and vhost: the data path of 4.19 (4.15's sk_state constants only; "
                               "docs/kernel-notes.md, \"Linux 4.14 and 5.10\")"),
      before_5_4("linux-4.19", "Linux 4.14-4.19 guest and vhost (2018)"),
      since_5_4("linux-5.4", "Linux 5.4 guest and vhost, after the 2019 throughput series", "threshold",
                "virtio_vsock_pkt", false, false, false),
      since_5_4("linux-5.10",
                "Linux 5.10 guest and vhost: the data path of 5.4 (5.5's multi-transport, MSG_PEEK and buffer-size "
                "changes move no packet; docs/kernel-notes.md, \"Linux 4.14 and 5.10\")",
                "threshold", "virtio_vsock_pkt", false, false, false),
      since_5_4("linux-6.1",
                "Linux 6.1.0 guest and vhost (struct virtio_vsock_pkt; 6.1.63 backported the sk_buff conversion)",
                "threshold", "virtio_vsock_pkt", false),
      since_5_4("linux-6.2", "Linux 6.2-rc3, the baseline of the 2023 sk_buff series (struct virtio_vsock_pkt)",
                "threshold", "virtio_vsock_pkt", false),
      since_5_4("linux-6.6",
                "Linux 6.6.0 guest and vhost: sk_buff packets (6.3), no tx fast path (6.6.y later took the 6.8 "
                "credit rule)",
                "threshold", "sk_buff", false),
      since_5_4("linux-6.9",
                "Linux 6.9.8, the baseline of the 2024 tx fast-path series: sk_buff packets, the 6.8 credit rule, no "
                "tx fast path",
                "threshold_rcvlowat", "sk_buff", false),
      since_5_4("linux-6.12",
                "Linux 6.12 guest and vhost: sk_buff packets, the 6.8 credit rule, the guest tx fast path",
                "threshold_rcvlowat", "sk_buff", true),
  };
  return list;
}

const Preset* find_preset(const std::string& name)
{
  for (const auto& p : presets())
    if (p.name == name)
      return &p;
  return nullptr;
}

void declare_params(ParamRegistry& reg)
{
  std::vector<std::string> names;
  for (const auto& p : presets())
    names.push_back(p.name);
  // A knob: its default is the preset's value, which its documentation ends
  // with.
  // A knob of the guest driver applies to firecracker_vsock too (kBoth);
  // one of vhost's device or of features Firecracker's device does not
  // offer, to virtio_vsock only.
  auto knob = [](const char* path, const char* scope = kBoth) {
    return Param(path).def(kFromPreset).derives_from({"virtio_vsock.preset"}).scope(scope);
  };
  auto declare = [&](Param& p) {
    if (p.spec().default_text == kFromPreset)
      p.doc(p.spec().doc + preset_values_doc(presets(), p.spec().path));
    reg.declare(p);
  };

  declare(Param("virtio_vsock.preset")
              .choice()
              .def("linux-6.12")
              .words(names)
              .doc("kernel whose behaviour every knob below defaults to; each knob can then be set alone (the "
                   "default is the newest modelled kernel; until December 2026 it was linux-4.19; with "
                   "transport firecracker_vsock linux-5.10, the newest guest its 2023 device takes)")
              .scope(kBoth));
  declare(knob("virtio_vsock.rx_buf_size")
              .size()
              .unit("bytes")
              .range(256, 64 * 1024)
              .doc("payload bytes of one guest rx buffer (VIRTIO_VSOCK_DEFAULT_RX_BUF_SIZE)")
              .kernel("include/linux/virtio_vsock.h: VIRTIO_VSOCK_DEFAULT_RX_BUF_SIZE"));
  declare(knob("virtio_vsock.max_pkt_size")
              .size()
              .unit("bytes")
              .range(64, 64 * 1024)
              .doc("largest payload a sender puts in one packet; the host's packets are cut to rx_buf_size "
                   "unless host_split or mergeable_rx")
              .kernel("net/vmw_vsock/virtio_transport_common.c: virtio_transport_send_pkt_info"));
  declare(knob("virtio_vsock.mergeable_rx", kVhost)
              .boolean()
              .doc("one host packet may span several guest rx buffers under one header (2018 proposal, never "
                   "merged)"));
  declare(knob("virtio_vsock.host_split", kVhost)
              .boolean()
              .doc("vhost splits a big packet over several guest rx buffers, a header each (5.4)")
              .kernel("drivers/vhost/vsock.c: vhost_transport_do_send_pkt"));
  declare(knob("virtio_vsock.credit_update")
              .choice()
              .words({"every_read", "threshold", "threshold_rcvlowat"})
              .doc("`every_read`: a CREDIT_UPDATE after every recv() that returned data; `threshold`: only when "
                   "the free space the peer can see drops below credit_threshold (5.4); `threshold_rcvlowat` "
                   "(commits 93b808876682, 0fe179896811, Linux 6.8): when fwd_cnt moved and either the free space "
                   "is below credit_threshold or fewer bytes than SO_RCVLOWAT (1, its default) remain queued")
              .kernel("net/vmw_vsock/virtio_transport_common.c: virtio_transport_stream_do_dequeue"));
  declare(knob("virtio_vsock.small_pkt_copy")
              .boolean()
              .doc("on receive, a packet of at most small_pkt_copy_max bytes is copied into the tail of the "
                   "previous queued packet's buffer and freed at once")
              .kernel("net/vmw_vsock/virtio_transport_common.c: virtio_transport_recv_enqueue"));
  declare(knob("virtio_vsock.batch_used", kVhost)
              .boolean()
              .doc("vhost signals the guest once per batch of rx buffers (false: vhost_add_used_and_signal per "
                   "buffer)"));
  declare(knob("virtio_vsock.queue_size", kVhost)
              .integer()
              .unit("entries")
              .range(2, 32768)
              .doc("entries per virtqueue")
              .check([](const std::string& text) { return power_of_two(text, 2); }));
  declare(knob("virtio_vsock.event_idx", kVhost)
              .boolean()
              .doc("VIRTIO_RING_F_EVENT_IDX: notifications suppressed with used_event/avail_event (else with the "
                   "flags)"));
  declare(knob("virtio_vsock.vhost_weight_packets", kVhost)
              .integer()
              .unit("packets")
              .range(0, 1 << 20)
              .doc("vhost yields its worker after this many packets in one run (0: no limit)")
              .kernel("drivers/vhost/vhost.c: vhost_exceeds_weight"));
  declare(knob("virtio_vsock.vhost_weight_bytes", kVhost)
              .size()
              .unit("bytes")
              .range(0, 1 << 30)
              .doc("vhost yields its worker after this many payload bytes in one run (0: no limit)")
              .kernel("drivers/vhost/vhost.c: vhost_exceeds_weight"));
  declare(knob("virtio_vsock.packet_type", kVhost)
              .choice()
              .words({"virtio_vsock_pkt", "sk_buff"})
              .doc("how a packet is held: `virtio_vsock_pkt`, a kzalloc'd struct and a kmalloc'd payload buffer, "
                   "guest rx buffers of two scatter-gather entries (header, payload); `sk_buff` (commit "
                   "71dc9ec9ac7d, Linux 6.3), a linear skb whose one kmalloc'd head holds the 44-byte header, the "
                   "payload and skb_shared_info, guest rx buffers of one entry")
              .kernel("include/linux/virtio_vsock.h: virtio_vsock_alloc_skb; net/vmw_vsock/virtio_transport.c: "
                      "virtio_vsock_rx_fill"));
  declare(knob("virtio_vsock.tx_fast_path", kVhost)
              .boolean()
              .doc("guest tx fast path (commit efcd71af38be, Linux 6.12): a sender that finds send_pkt_queue empty "
                   "and takes tx_lock with mutex_trylock adds its packet to the tx queue and kicks itself, instead "
                   "of queueing the send work; needs packet_type sk_buff")
              .kernel("net/vmw_vsock/virtio_transport.c: virtio_transport_send_pkt, "
                      "virtio_transport_send_skb_fast_path"));

  declare(knob("virtio_vsock.credit_locked")
              .boolean()
              .doc("virtio_transport_recv_pkt takes the credit fields of a received packet "
                   "(virtio_transport_space_update) under the socket lock, as since commit ce7536bc7398 (\"update "
                   "credit only if socket is not closed\", Linux 5.12, and the stable lines of "
                   "February 2021): a writer inside sendmsg, which holds the lock, sees a credit update only after it "
                   "sleeps for credit and the rx work gets the lock; false (the mainline releases before 5.12): "
                   "they are taken before lock_sock, so a writer inside sendmsg sees them at once")
              .kernel("net/vmw_vsock/virtio_transport_common.c: virtio_transport_recv_pkt"));

  declare(knob("virtio_vsock.pcp_high_order")
              .boolean()
              .doc("the page allocator of both kernels keeps blocks up to PAGE_ALLOC_COSTLY_ORDER (3, 32 KiB) on its "
                   "per-CPU lists (commit 44042b449872, Linux 5.13): a kmalloc of 8-32 KiB (a packet buffer or skb "
                   "head of 8-32 KiB) costs virtio_*_page_alloc_pcp instead of taking zone->lock "
                   "(virtio_*_page_alloc); larger blocks take zone->lock either way")
              .kernel("mm/page_alloc.c: rmqueue, pcp_allowed_order, rmqueue_pcplist"));

  // On by default: vhost-vsock offers VIRTIO_RING_F_INDIRECT_DESC, QEMU 2.12-4.1
  // passes it through (no feature filter for vhost-vsock) and the guest's
  // virtqueue_add_sgs uses an indirect table for its 2-part chains
  // (docs/kernel-notes.md, item 7).
  declare(Param("virtio_vsock.indirect_desc")
              .boolean()
              .def("true")
              .doc("VIRTIO_RING_F_INDIRECT_DESC (negotiated by QEMU 2.12-4.1): a header+payload chain takes one "
                   "ring descriptor instead of two")
              .scope("virtio_vsock"));
  declare(Param("virtio_vsock.buf_alloc")
              .size()
              .unit("bytes")
              .def("256KiB")
              .range(4096, 1 << 30)
              .doc("receive buffer each socket advertises to its peer (buf_alloc, SO_VM_SOCKETS_BUFFER_SIZE)")
              .kernel("include/linux/virtio_vsock.h: VIRTIO_VSOCK_DEFAULT_BUF_SIZE")
              .scope(kBoth));
  declare(Param("virtio_vsock.credit_threshold")
              .size()
              .unit("bytes")
              .def("64KiB")
              .range(0, 1 << 30)
              .doc("with credit_update=threshold or threshold_rcvlowat: send a credit update when the free space "
                   "the peer knows of is "
                   "below this (VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)")
              .kernel("include/linux/virtio_vsock.h: VIRTIO_VSOCK_MAX_PKT_BUF_SIZE")
              .scope(kBoth));
  declare(Param("virtio_vsock.irq_vcpu")
              .integer()
              .unit("vCPU")
              .def("0")
              .range(0, 63)
              .doc("the guest vCPU the device's MSI-X vectors land on, whose worker pool runs the rx and tx work "
                   "(taken modulo guest.vcpus; an assumption: the vectors are not managed, so their affinity is "
                   "the default mask, irqbalance's or the administrator's); connection i's guest thread stays on "
                   "vCPU (1+i) mod vcpus (with workload.app: iperf3 every stream's on vCPU 1)")
              .scope(kBoth));
  // QEMU's choice, not the kernel's: no preset sets it.
  declare(
      Param("virtio_vsock.msix_vectors")
          .choice()
          .def("shared")
          .words({"shared", "per_vq"})
          .doc("the guest's MSI-X vectors for the virtqueues. `shared` (default): QEMU's vhost-vsock-pci offers "
               "3 MSI-X entries (its `vectors` property: hw/virtio/vhost-vsock-pci.c in QEMU 4.1, "
               "hw/virtio/virtio-pci.c in 2.12 and 3.1), fewer than the 4 per-vq vectors need (config + rx, "
               "tx, event), so vp_find_vqs falls back to one vector for every queue (VP_MSIX_VQ_VECTOR) whose handler "
               "vp_vring_interrupt runs vring_interrupt on each: one interrupt queues the rx and the tx work "
               "when both queues have used entries, and a signal of either queue merges with a pending one "
               "of the other. `per_vq`: a vector per queue (QEMU with vectors=4 or more)")
          .kernel("drivers/virtio/virtio_pci_common.c: vp_find_vqs, vp_vring_interrupt; "
                  "drivers/virtio/virtio_ring.c: vring_interrupt")
          .scope("virtio_vsock"));
  declare(Param("virtio_vsock.small_pkt_copy_max")
              .size()
              .unit("bytes")
              .def("128")
              .range(1, 64 * 1024)
              .doc("with small_pkt_copy: largest packet copied into the previous one (GOOD_COPY_LEN)")
              .kernel("net/vmw_vsock/virtio_transport_common.c: virtio_transport_recv_enqueue")
              .scope(kBoth));
}

void declare_firecracker_params(ParamRegistry& reg)
{
  constexpr const char* kFc = "firecracker_vsock";
  reg.declare(Param("firecracker_vsock.tx_buf_size")
                  .size()
                  .unit("bytes")
                  .def("64KiB")
                  .range(4096, 1 << 24)
                  .doc("each connection's TxBuf, and the buf_alloc the device tells the guest: the guest sends at "
                       "most this much before the device has written it to the host stream")
                  .kernel("firecracker src/vmm/src/devices/virtio/vsock/csm/mod.rs: CONN_TX_BUF_SIZE")
                  .scope(kFc));
  reg.declare(Param("firecracker_vsock.credit_threshold")
                  .size()
                  .unit("bytes")
                  .def("4KiB")
                  .range(1, 1 << 24)
                  .doc("the device sends the guest a credit update once tx_buf_size minus the bytes forwarded since "
                       "it last told the guest is below this")
                  .kernel("firecracker csm/mod.rs: CONN_CREDIT_UPDATE_THRESHOLD; csm/connection.rs: "
                          "peer_needs_credit_update")
                  .scope(kFc));
  reg.declare(Param("firecracker_vsock.unix_sndbuf")
                  .size()
                  .unit("bytes")
                  .def("212992")
                  .range(4608, 1 << 28)
                  .doc("sk_sndbuf of the host's AF_UNIX stream sockets (net.core.wmem_default): a writer takes "
                       "new skbs while its bytes in flight are below it, and may write again once they are at "
                       "most a quarter of it")
                  .kernel("net/unix/af_unix.c: unix_stream_sendmsg, unix_writable")
                  .scope(kFc));
  reg.declare(Param("firecracker_vsock.queue_size")
                  .integer()
                  .unit("entries")
                  .def("256")
                  .range(4, 32768)
                  .doc("entries of each of the device's virtqueues (the guest's virtio-mmio driver takes the "
                       "device's QueueNumMax)")
                  .kernel("firecracker src/vmm/src/devices/virtio/queue.rs: FIRECRACKER_MAX_QUEUE_SIZE")
                  .check([](const std::string& text) { return power_of_two(text, 4); })
                  .scope(kFc));
  reg.declare(Param("firecracker_vsock.rx_per_wakeup")
                  .choice()
                  .def("one")
                  .words({"one", "drain"})
                  .doc("`one` (2023): a readable connection gives one rx packet per wake-up of the VMM (PendingRx::Rw "
                       "is set again only by the next epoll notification); `drain`: as many as its socket and the "
                       "guest's buffers and credit allow (Firecracker's later full drain, commit 048128270)")
                  .kernel("firecracker csm/connection.rs: notify, recv_pkt")
                  .scope(kFc));
}

} // namespace vsim::virtio_vsock
