#include "transports/virtio_vsock/params.hpp"

#include <string>

namespace vsim::virtio_vsock {

const std::vector<Preset>& presets()
{
  // linux-4.19: net/vmw_vsock/virtio_transport*.c and drivers/vhost/vsock.c
  // as of 4.14-4.19 (2018). linux-5.4: after Stefano Garzarella's 2019
  // throughput series (v4, merged for 5.4): small-packet copy on receive
  // ("limit the memory used per-socket"), credit updates only below the
  // threshold ("reduce credit update messages"), the host splitting packets
  // over several rx buffers, 64 KiB packets; and vhost's weights (5.2).
  static const std::vector<Preset> list = {
      {"linux-4.19", "Linux 4.14-4.19 guest and vhost (2018)",
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
        {"virtio_vsock.vhost_weight_bytes", "0"}}},
      {"linux-5.4", "Linux 5.4 guest and vhost, after the 2019 throughput series",
       {{"virtio_vsock.rx_buf_size", "4KiB"},
        {"virtio_vsock.max_pkt_size", "64KiB"},
        {"virtio_vsock.mergeable_rx", "false"},
        {"virtio_vsock.host_split", "true"},
        {"virtio_vsock.credit_update", "threshold"},
        {"virtio_vsock.small_pkt_copy", "true"},
        {"virtio_vsock.batch_used", "true"},
        {"virtio_vsock.queue_size", "128"},
        {"virtio_vsock.event_idx", "true"},
        {"virtio_vsock.vhost_weight_packets", "256"},
        {"virtio_vsock.vhost_weight_bytes", "512KiB"}}},
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

namespace {

// "linux-4.19: 4KiB, linux-5.4: 64KiB" for a knob's documentation.
std::string preset_doc(const std::string& path)
{
  std::string out;
  for (const auto& p : presets())
    out += (out.empty() ? "" : ", ") + p.name + ": " + p.values.at(path);
  return " (" + out + ")";
}

}  // namespace

void declare_params(ParamRegistry& reg)
{
  std::vector<std::string> names;
  for (const auto& p : presets())
    names.push_back(p.name);
  auto add = [&](ParamSpec s) {
    s.scope = "virtio_vsock";
    if (s.default_text == kFromPreset)
      s.doc += preset_doc(s.path);
    reg.declare(std::move(s));
  };
  auto knob = [&](const char* path, ParamKind kind, const char* unit, const char* doc) {
    ParamSpec s{path, kind, unit, kFromPreset};
    s.doc = doc;
    return s;
  };

  ParamSpec preset{"virtio_vsock.preset", ParamKind::Choice, "", "linux-4.19"};
  preset.choices = names;
  preset.doc = "kernel whose behaviour every knob below defaults to; each knob can then be set alone";
  add(preset);

  ParamSpec rx = knob("virtio_vsock.rx_buf_size", ParamKind::Size, "bytes",
                      "payload bytes of one guest rx buffer (VIRTIO_VSOCK_DEFAULT_RX_BUF_SIZE)");
  rx.min = 256;
  rx.max = 64 * 1024;
  add(rx);
  ParamSpec mp = knob("virtio_vsock.max_pkt_size", ParamKind::Size, "bytes",
                      "largest payload a sender puts in one packet; the host's packets are cut to rx_buf_size "
                      "unless host_split or mergeable_rx");
  mp.min = 64;
  mp.max = 64 * 1024;
  add(mp);
  add(knob("virtio_vsock.mergeable_rx", ParamKind::Boolean, "",
           "one host packet may span several guest rx buffers under one header (2018 proposal, never merged)"));
  add(knob("virtio_vsock.host_split", ParamKind::Boolean, "",
           "vhost splits a big packet over several guest rx buffers, a header each (5.4)"));
  ParamSpec cu = knob("virtio_vsock.credit_update", ParamKind::Choice, "",
                      "`every_read`: a CREDIT_UPDATE after every recv() that returned data; `threshold`: only when "
                      "the free space the peer can see drops below credit_threshold");
  cu.choices = {"every_read", "threshold"};
  add(cu);
  add(knob("virtio_vsock.small_pkt_copy", ParamKind::Boolean, "",
           "on receive, a packet of at most small_pkt_copy_max bytes is copied into the tail of the previous "
           "queued packet's buffer and freed at once"));
  add(knob("virtio_vsock.batch_used", ParamKind::Boolean, "",
           "vhost signals the guest once per batch of rx buffers (false: vhost_add_used_and_signal per buffer)"));
  ParamSpec qs = knob("virtio_vsock.queue_size", ParamKind::Integer, "entries", "entries per virtqueue");
  qs.min = 2;
  qs.max = 32768;
  qs.check = [](const std::string& text) -> std::string {
    long v = std::stol(text);
    if ((v & (v - 1)) != 0)
      return text + " is not a power of 2 (virtio 1.1 section 2.6; allowed: 2, 4, 8, ..., 32768)";
    return "";
  };
  add(qs);
  add(knob("virtio_vsock.event_idx", ParamKind::Boolean, "",
           "VIRTIO_RING_F_EVENT_IDX: notifications suppressed with used_event/avail_event (else with the flags)"));
  ParamSpec wp = knob("virtio_vsock.vhost_weight_packets", ParamKind::Integer, "packets",
                      "vhost yields its worker after this many packets in one run (0: no limit)");
  wp.min = 0;
  wp.max = 1 << 20;
  add(wp);
  ParamSpec wb = knob("virtio_vsock.vhost_weight_bytes", ParamKind::Size, "bytes",
                      "vhost yields its worker after this many payload bytes in one run (0: no limit)");
  wb.min = 0;
  wb.max = 1 << 30;
  add(wb);

  // On by default: vhost-vsock offers VIRTIO_RING_F_INDIRECT_DESC, QEMU 2.12-4.1
  // passes it through (no feature filter for vhost-vsock) and the guest's
  // virtqueue_add_sgs uses an indirect table for its 2-part chains
  // (docs/kernel-notes.md, item 7).
  ParamSpec ind{"virtio_vsock.indirect_desc", ParamKind::Boolean, "", "true"};
  ind.doc = "VIRTIO_RING_F_INDIRECT_DESC (negotiated by QEMU 2.12-4.1): a header+payload chain takes one ring "
            "descriptor instead of two";
  add(ind);
  ParamSpec ba{"virtio_vsock.buf_alloc", ParamKind::Size, "bytes", "256KiB"};
  ba.min = 4096;
  ba.max = 1 << 30;
  ba.doc = "receive buffer each socket advertises to its peer (buf_alloc, SO_VM_SOCKETS_BUFFER_SIZE)";
  add(ba);
  ParamSpec th{"virtio_vsock.credit_threshold", ParamKind::Size, "bytes", "64KiB"};
  th.min = 0;
  th.max = 1 << 30;
  th.doc = "with credit_update=threshold: send a credit update when the free space the peer knows of is below this "
           "(VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)";
  add(th);
  ParamSpec iv{"virtio_vsock.irq_vcpu", ParamKind::Integer, "vCPU", "0"};
  iv.min = 0;
  iv.max = 63;
  iv.doc = "the guest vCPU the device's MSI-X vectors land on, whose kworker runs the rx and tx work (taken "
           "modulo guest.vcpus); connection i's guest thread stays on vCPU (1+i) mod vcpus";
  add(iv);
  ParamSpec sc{"virtio_vsock.small_pkt_copy_max", ParamKind::Size, "bytes", "128"};
  sc.min = 1;
  sc.max = 64 * 1024;
  sc.doc = "with small_pkt_copy: largest packet copied into the previous one (GOOD_COPY_LEN)";
  add(sc);
}

}  // namespace vsim::virtio_vsock
