#include "transports/profiles.hpp"

namespace vsim {

namespace {

struct CostDecl {
  const char* name;
  const char* unit;
  double min;
  double max;
  const char* doc;
};

// Every cost parameter, declared once. Units: "cycles" of the platform clock
// (CPU time charged to a CPU in a category), "cycles latency" (time that
// passes without any CPU of the model being busy: hardware, hypervisor or
// scheduler delays), "bytes/cycle" (copy bandwidth).
const CostDecl kCosts[] = {
    {"clock_ghz", "GHz", 0.1, 10, "platform clock: every cycle figure below counts cycles of this clock"},
    // Linux guest, hv_sock send path
    {"guest_user_per_call", "cycles", 0, 1e7, "user-space cost of one send()/recv() in the benchmark loop"},
    {"guest_send_syscall", "cycles", 0, 1e7, "sendmsg entry/exit + vsock_stream_sendmsg fixed work (lock_sock, wait setup)"},
    {"guest_space_check", "cycles", 0, 1e7, "one hvs_stream_has_space() evaluation (hv_get_bytes_to_write)"},
    {"guest_pending_send_sz_write", "cycles", 0, 1e7, "one set/clear of pending_send_sz with its barrier (per_check protocol)"},
    {"guest_enqueue_call", "cycles", 0, 1e7, "hvs_stream_enqueue fixed work: kmalloc+kfree of the 4 KiB send buffer"},
    {"guest_ring_write", "cycles", 0, 1e7, "hv_ringbuffer_write fixed work: spinlock irqsave, descriptor, trailer, barriers"},
    {"guest_copy_fixed", "cycles", 0, 1e7, "fixed cost of one kernel copy (memcpy_from_msg, ring copy, memcpy_to_msg)"},
    {"guest_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "guest kernel copy bandwidth"},
    {"guest_signal_host", "cycles", 0, 1e7, "HvSignalEvent hypercall: VM exit and re-entry, charged to the vCPU as hypervisor time"},
    // Linux guest, hv_sock receive path
    {"guest_recv_syscall", "cycles", 0, 1e7, "recvmsg entry/exit + vsock_stream_recvmsg fixed work"},
    {"guest_dequeue_packet", "cycles", 0, 1e7, "hvs_stream_dequeue per packet: hv_pkt_iter_first/next, header checks"},
    {"guest_iter_close", "cycles", 0, 1e7, "hv_pkt_iter_close: publish read_index, pending_send_sz check"},
    // Linux guest, interrupts and scheduling
    {"guest_irq_exit", "cycles", 0, 1e7, "synthetic interrupt injection: exit/entry cost on the target vCPU (hypervisor time)"},
    {"guest_isr", "cycles", 0, 1e7, "vmbus_isr: interrupt entry, SynIC message/event page scan, tasklet schedule (irq time)"},
    {"guest_tasklet", "cycles", 0, 1e7, "vmbus_on_event tasklet + hvs_channel_cb for one channel (softirq time)"},
    {"guest_wakeup_latency", "cycles latency", 0, 1e8, "from wake_up() in the callback until the woken thread runs (IPI, scheduler)"},
    {"guest_context_switch", "cycles", 0, 1e7, "schedule() out and back in, charged to the thread that slept (sys time)"},
    // Windows host
    {"host_signal_latency", "cycles latency", 0, 1e8, "guest signal (hypercall or monitor page) until the host's channel DPC runs"},
    {"host_dpc", "cycles", 0, 1e7, "host DPC fixed cost per run (entry, interrupt_mask set/clear, re-check)"},
    {"host_rx_packet", "cycles", 0, 1e7, "host per packet read from a guest-to-host ring and delivered to the reader"},
    {"host_recv_call", "cycles", 0, 1e7, "host reader's recv() per call"},
    {"host_send_call", "cycles", 0, 1e7, "host writer's send() per call"},
    {"host_tx_packet", "cycles", 0, 1e7, "host per packet written into a host-to-guest ring (besides the copy)"},
    {"host_rx_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host receive path: bytes per cycle moved from the ring to the reading application"},
    {"host_tx_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host send path: bytes per cycle moved from the writing application into the ring"},
    {"host_signal_guest", "cycles", 0, 1e7, "host CPU cost of signalling the guest (interrupt injection request)"},
    {"host_interrupt_latency", "cycles latency", 0, 1e8, "host signal until the synthetic interrupt is delivered on guest vCPU 0"},
    {"host_wakeup_latency", "cycles latency", 0, 1e8, "a blocked host thread's wake-up latency once its wait is satisfied"},
    // Run-to-run variability
    {"latency_jitter", "fraction", 0, 0.9, "each latency is drawn uniformly in [1-j, 1+j] times its value"},
    {"iteration_jitter", "fraction", 0, 0.5, "per iteration, host costs are scaled by a factor drawn in [1-j, 1+j]"},
};

}  // namespace

const std::vector<PlatformProfile>& platform_profiles()
{
  // Values fitted as described in docs/calibration.md.
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
    reg.declare(s);
  }
}

}  // namespace vsim
