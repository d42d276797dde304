#include "transports/profiles.hpp"

#include <algorithm>

namespace vsim {

namespace {

struct CostDecl {
  const char* name;
  const char* unit;
  double min;
  double max;
  const char* doc;
  const char* scope;  // the transport whose algorithms charge it ("" = both)
};

// Every cost parameter, declared once. Units: "cycles" of the platform clock
// (CPU time charged to a CPU in a category), "cycles latency" (time that
// passes without any CPU of the model being busy: hardware, hypervisor or
// scheduler delays), "bytes/cycle" (copy bandwidth).
const CostDecl kCosts[] = {
    {"clock_ghz", "GHz", 0.1, 10, "platform clock: every cycle figure below counts cycles of this clock", ""},
    // Linux guest, hv_sock send path
    {"guest_user_per_call", "cycles", 0, 1e7, "user-space cost of one send()/recv() in the benchmark loop", ""},
    {"guest_send_syscall", "cycles", 0, 1e7, "sendmsg entry/exit + vsock_stream_sendmsg fixed work (lock_sock, wait setup)", "hv_sock"},
    {"guest_space_check", "cycles", 0, 1e7, "one hvs_stream_has_space() evaluation (hv_get_bytes_to_write)", "hv_sock"},
    {"guest_pending_send_sz_write", "cycles", 0, 1e7, "one set/clear of pending_send_sz with its barrier (per_check protocol)", "hv_sock"},
    {"guest_enqueue_call", "cycles", 0, 1e7, "hvs_stream_enqueue fixed work: kmalloc+kfree of the 4 KiB send buffer", "hv_sock"},
    {"guest_ring_write", "cycles", 0, 1e7, "hv_ringbuffer_write fixed work: spinlock irqsave, descriptor, trailer, barriers", "hv_sock"},
    {"guest_copy_fixed", "cycles", 0, 1e7, "fixed cost of one kernel copy (memcpy_from_msg, ring copy, memcpy_to_msg)", ""},
    {"guest_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "guest kernel copy bandwidth", ""},
    {"guest_signal_host", "cycles", 0, 1e7, "HvSignalEvent hypercall: VM exit and re-entry, charged to the vCPU as hypervisor time", "hv_sock"},
    // Linux guest, hv_sock receive path
    {"guest_recv_syscall", "cycles", 0, 1e7, "recvmsg entry/exit + vsock_stream_recvmsg fixed work", "hv_sock"},
    {"guest_dequeue_packet", "cycles", 0, 1e7, "hvs_stream_dequeue per packet: hv_pkt_iter_first/next, header checks", "hv_sock"},
    {"guest_iter_close", "cycles", 0, 1e7, "hv_pkt_iter_close: publish read_index, pending_send_sz check", "hv_sock"},
    // Linux guest, interrupts and scheduling
    {"guest_irq_exit", "cycles", 0, 1e7, "synthetic interrupt injection: exit/entry cost on the target vCPU (hypervisor time)", "hv_sock"},
    {"guest_isr", "cycles", 0, 1e7, "vmbus_isr: interrupt entry, SynIC message/event page scan, tasklet schedule (irq time)", "hv_sock"},
    {"guest_tasklet", "cycles", 0, 1e7, "vmbus_on_event tasklet + hvs_channel_cb for one channel (softirq time)", "hv_sock"},
    {"guest_wakeup_latency", "cycles latency", 0, 1e8, "from wake_up() in the callback until the woken thread runs (IPI, scheduler)", ""},
    {"guest_context_switch", "cycles", 0, 1e7, "schedule() out and back in, charged to the thread that slept (sys time)", ""},
    // Windows host
    {"host_signal_latency", "cycles latency", 0, 1e8, "guest signal (hypercall or monitor page) until the host's channel DPC runs", "hv_sock"},
    {"host_dpc", "cycles", 0, 1e7, "host DPC fixed cost per run (entry, interrupt_mask set/clear, re-check)", "hv_sock"},
    {"host_rx_packet", "cycles", 0, 1e7, "host per packet read from a guest-to-host ring and delivered to the reader", "hv_sock"},
    {"host_recv_call", "cycles", 0, 1e7, "host reader's recv() per call", "hv_sock"},
    {"host_send_call", "cycles", 0, 1e7, "host writer's send() per call", "hv_sock"},
    {"host_tx_packet", "cycles", 0, 1e7, "host per packet written into a host-to-guest ring (besides the copy)", "hv_sock"},
    {"host_rx_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host receive path: bytes per cycle moved from the ring to the reading application", "hv_sock"},
    {"host_tx_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host send path: bytes per cycle moved from the writing application into the ring", "hv_sock"},
    {"host_signal_guest", "cycles", 0, 1e7, "host CPU cost of signalling the guest (interrupt injection request)", "hv_sock"},
    {"host_interrupt_latency", "cycles latency", 0, 1e8, "host signal until the synthetic interrupt is delivered on guest vCPU 0", "hv_sock"},
    {"host_wakeup_latency", "cycles latency", 0, 1e8, "a blocked host thread's wake-up latency once its wait is satisfied", ""},
    // Run-to-run variability
    {"latency_jitter", "fraction", 0, 0.9, "each latency is drawn uniformly in [1-j, 1+j] times its value", ""},
    {"iteration_jitter", "fraction", 0, 0.5, "per iteration, host costs are scaled by a factor drawn in [1-j, 1+j]", ""},
    // virtio-vsock: Linux guest driver (net/vmw_vsock/virtio_transport*.c)
    {"virtio_guest_send_syscall", "cycles", 0, 1e7, "sendmsg entry/exit + vsock_stream_sendmsg fixed work", "virtio_vsock"},
    {"virtio_guest_recv_syscall", "cycles", 0, 1e7, "recvmsg entry/exit + vsock_stream_recvmsg fixed work", "virtio_vsock"},
    {"virtio_guest_alloc", "cycles", 0, 1e7, "one kernel allocation (kzalloc of a packet, kmalloc of its buffer)", "virtio_vsock"},
    {"virtio_guest_free", "cycles", 0, 1e7, "freeing one packet (struct and buffer)", "virtio_vsock"},
    {"virtio_guest_pkt", "cycles", 0, 1e7, "virtio_transport_send_pkt_info per packet: credit, header, send list, queue_work", "virtio_vsock"},
    {"virtio_guest_vq_add", "cycles", 0, 1e7, "virtqueue_add_sgs for one chain", "virtio_vsock"},
    {"virtio_guest_kick", "cycles", 0, 1e7, "virtqueue_notify: the notify write's VM exit and re-entry (ioeventfd, in the kernel), hypervisor time", "virtio_vsock"},
    {"virtio_guest_work_run", "cycles", 0, 1e7, "one workqueue item run: kworker switch-in and dispatch", "virtio_vsock"},
    {"virtio_guest_rx_buf", "cycles", 0, 1e7, "rx work per used rx buffer (virtqueue_get_buf, length checks)", "virtio_vsock"},
    {"virtio_guest_rx_pkt", "cycles", 0, 1e7, "virtio_transport_recv_pkt per packet: socket lookup, lock, credit fields, enqueue", "virtio_vsock"},
    {"virtio_guest_tx_done", "cycles", 0, 1e7, "tx work per completed tx chain (virtqueue_get_buf)", "virtio_vsock"},
    {"virtio_guest_irq_exit", "cycles", 0, 1e7, "MSI injection into the vCPU: exit/entry cost there (hypervisor time)", "virtio_vsock"},
    {"virtio_guest_isr", "cycles", 0, 1e7, "vring_interrupt: interrupt entry, callback, queue_work (irq time)", "virtio_vsock"},
    {"virtio_guest_dequeue_pkt", "cycles", 0, 1e7, "virtio_transport_stream_do_dequeue per packet touched", "virtio_vsock"},
    // virtio-vsock: host (drivers/vhost/vsock.c, vhost.c, the host socket)
    {"virtio_host_user_per_call", "cycles", 0, 1e7, "user-space cost of one send()/recv() of the host application", "virtio_vsock"},
    {"virtio_host_send_syscall", "cycles", 0, 1e7, "host sendmsg entry/exit + vsock_stream_sendmsg fixed work", "virtio_vsock"},
    {"virtio_host_recv_syscall", "cycles", 0, 1e7, "host recvmsg entry/exit + vsock_stream_recvmsg fixed work", "virtio_vsock"},
    {"virtio_host_alloc", "cycles", 0, 1e7, "one host kernel allocation (packet struct or buffer)", "virtio_vsock"},
    {"virtio_host_free", "cycles", 0, 1e7, "freeing one host packet", "virtio_vsock"},
    {"virtio_host_pkt", "cycles", 0, 1e7, "host virtio_transport_send_pkt_info per packet (credit, header, send list)", "virtio_vsock"},
    {"virtio_host_copy_fixed", "cycles", 0, 1e7, "fixed cost of one host kernel copy", "virtio_vsock"},
    {"virtio_host_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host copy bandwidth between the application and kernel packets", "virtio_vsock"},
    {"virtio_host_dequeue_pkt", "cycles", 0, 1e7, "host virtio_transport_stream_do_dequeue per packet touched", "virtio_vsock"},
    {"virtio_host_worker_run", "cycles", 0, 1e7, "vhost worker: one work item run (handle_tx_kick or send_pkt_work) fixed cost", "virtio_vsock"},
    {"virtio_host_tx_pkt", "cycles", 0, 1e7, "vhost per guest tx chain: vhost_get_vq_desc, header copy, recv_pkt, add_used", "virtio_vsock"},
    {"virtio_host_rx_buf", "cycles", 0, 1e7, "vhost per guest rx buffer filled: vhost_get_vq_desc, header copy, add_used", "virtio_vsock"},
    {"virtio_host_guest_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "vhost copy bandwidth to and from guest memory (copy_to_iter/copy_from_iter)", "virtio_vsock"},
    {"virtio_host_signal", "cycles", 0, 1e7, "vhost_signal: eventfd_signal into irqfd and MSI injection request, on the worker's CPU", "virtio_vsock"},
    {"virtio_host_kick_latency", "cycles latency", 0, 1e8, "guest notify write until its ioeventfd queues the vhost work (exit handling, eventfd; the worker's own wake-up is host_wakeup_latency)", "virtio_vsock"},
    {"virtio_host_interrupt_latency", "cycles latency", 0, 1e8, "vhost_signal until the interrupt runs on guest vCPU 0", "virtio_vsock"},
};

}  // namespace

static std::map<std::string, double> with_overrides(std::map<std::string, double> base,
                                             const std::map<std::string, double>& overrides)
{
  for (const auto& [k, v] : overrides)
    base[k] = v;
  return base;
}

const std::vector<PlatformProfile>& platform_profiles()
{
  // Values fitted as described in docs/calibration.md.
  // kvm-2019: fitted on the 60 "before" rows of the 2019 series.
  static const std::map<std::string, double> kvm_2019 = {
      {"clock_ghz", 2.5},
      {"guest_user_per_call", 8963},
      {"guest_copy_fixed", 60},
      {"guest_copy_bytes_per_cycle", 1.89},
      {"guest_wakeup_latency", 3033},
      {"guest_context_switch", 2000},
      {"host_wakeup_latency", 5000},
      {"latency_jitter", 0.2},
      {"iteration_jitter", 0.03},
      {"virtio_guest_send_syscall", 1472},
      {"virtio_guest_recv_syscall", 6595},
      {"virtio_guest_alloc", 150},
      {"virtio_guest_free", 100},
      {"virtio_guest_pkt", 513.6},
      {"virtio_guest_vq_add", 150},
      {"virtio_guest_kick", 2500},
      {"virtio_guest_work_run", 1000},
      {"virtio_guest_rx_buf", 300},
      {"virtio_guest_rx_pkt", 111.6},
      {"virtio_guest_tx_done", 200},
      {"virtio_guest_irq_exit", 1500},
      {"virtio_guest_isr", 700},
      {"virtio_guest_dequeue_pkt", 200},
      {"virtio_host_user_per_call", 36.63},
      {"virtio_host_send_syscall", 5136},
      {"virtio_host_recv_syscall", 541.3},
      {"virtio_host_alloc", 150},
      {"virtio_host_free", 100},
      {"virtio_host_pkt", 32.83},
      {"virtio_host_copy_fixed", 60},
      {"virtio_host_copy_bytes_per_cycle", 8},
      {"virtio_host_dequeue_pkt", 200},
      {"virtio_host_worker_run", 800},
      {"virtio_host_tx_pkt", 824.4},
      {"virtio_host_rx_buf", 54.13},
      {"virtio_host_guest_copy_bytes_per_cycle", 1.104},
      {"virtio_host_signal", 1000},
      {"virtio_host_kick_latency", 5000},
      {"virtio_host_interrupt_latency", 6351},
  };
  static const std::vector<PlatformProfile> profiles = {
      {"hyperv-2019", "hv_sock",
       "Hyper-V (Windows host, build not published) with a Linux 5.x guest, as measured for the 2019 hv_sock patches",
       {
           {"clock_ghz", 2.5},
           {"guest_user_per_call", 300},
           {"guest_send_syscall", 236},
           {"guest_space_check", 150},
           {"guest_pending_send_sz_write", 150},
           {"guest_enqueue_call", 989},
           {"guest_ring_write", 400},
           {"guest_copy_fixed", 60},
           {"guest_copy_bytes_per_cycle", 2.1},
           {"guest_signal_host", 4494},
           {"guest_recv_syscall", 261},
           {"guest_dequeue_packet", 300},
           {"guest_iter_close", 200},
           {"guest_irq_exit", 2000},
           {"guest_isr", 1000},
           {"guest_tasklet", 1500},
           {"guest_wakeup_latency", 12500},
           {"guest_context_switch", 2833},
           {"host_signal_latency", 36370},
           {"host_dpc", 8963},
           {"host_rx_packet", 23},
           {"host_recv_call", 1500},
           {"host_send_call", 3000},
           {"host_tx_packet", 687},
           {"host_rx_copy_bytes_per_cycle", 2.266},
           {"host_tx_copy_bytes_per_cycle", 0.27},
           {"host_signal_guest", 1500},
           {"host_interrupt_latency", 14160},
           {"host_wakeup_latency", 10000},
           {"latency_jitter", 0.2},
           {"iteration_jitter", 0.04},
       }},
      {"kvm-2018", "virtio_vsock",
       "KVM/QEMU with vhost-vsock, Linux ~4.19 host and guest, 128-entry virtqueues, as measured for the 2018 "
       "mergeable-rx series (CPU not published)",
       with_overrides(kvm_2019,
                      {
                          // fitted on the 2018 study's rows (docs/calibration.md); the rest as kvm-2019
                          {"guest_copy_bytes_per_cycle", 5.138},
                          {"virtio_host_tx_pkt", 16560},
                          {"virtio_host_guest_copy_bytes_per_cycle", 0.7588},
                      })},
      {"kvm-2019", "virtio_vsock",
       "KVM/QEMU with vhost-vsock, host and guest booted with nosmap, as measured with iperf3 for the 2019 "
       "throughput series (CPU not published)",
       kvm_2019},
  };
  return profiles;
}

const PlatformProfile* find_profile(const std::string& name)
{
  for (const auto& p : platform_profiles())
    if (p.name == name)
      return &p;
  return nullptr;
}

void declare_cost_params(ParamRegistry& reg)
{
  for (const auto& c : kCosts) {
    ParamSpec s{std::string("costs.") + c.name, ParamKind::Number, c.unit, "(platform)"};
    s.min = c.min;
    s.max = c.max;
    s.doc = c.doc;
    s.scope = c.scope;
    reg.declare(s);
  }
}

std::string cost_source(const PlatformProfile& profile, const std::string& key)
{
  // The fitted costs of each profile, as docs/calibration.md lists them.
  static const std::map<std::string, std::vector<std::string>> fitted = {
      {"hyperv-2019",
       {"guest_send_syscall", "guest_enqueue_call", "guest_copy_bytes_per_cycle", "guest_signal_host",
        "guest_context_switch", "host_signal_latency", "host_interrupt_latency", "guest_wakeup_latency", "host_dpc",
        "host_rx_packet", "host_rx_copy_bytes_per_cycle", "host_send_call", "host_tx_packet",
        "host_tx_copy_bytes_per_cycle", "guest_recv_syscall"}},
      {"kvm-2019",
       {"guest_user_per_call", "virtio_guest_send_syscall", "virtio_guest_recv_syscall", "virtio_host_user_per_call",
        "virtio_host_send_syscall", "virtio_host_recv_syscall", "guest_copy_bytes_per_cycle",
        "virtio_host_guest_copy_bytes_per_cycle", "virtio_guest_pkt", "virtio_host_pkt", "virtio_host_tx_pkt",
        "virtio_host_rx_buf", "virtio_guest_rx_pkt", "virtio_guest_kick", "guest_wakeup_latency",
        "host_wakeup_latency", "virtio_host_interrupt_latency"}},
      {"kvm-2018",
       {"virtio_host_tx_pkt", "virtio_host_guest_copy_bytes_per_cycle", "guest_copy_bytes_per_cycle",
        "virtio_host_recv_syscall"}},
  };
  auto in = [&](const std::string& profile_name) {
    auto it = fitted.find(profile_name);
    return it != fitted.end() && std::find(it->second.begin(), it->second.end(), key) != it->second.end();
  };
  if (in(profile.name))
    return "fitted";
  if (profile.name == "kvm-2018" && in("kvm-2019"))
    return "kvm-2019 fit";
  if ((profile.name == "kvm-2019" || profile.name == "kvm-2018") && key == "virtio_host_copy_bytes_per_cycle")
    return "set";
  return "prior";
}

}  // namespace vsim
