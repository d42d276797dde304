#include "transports/hv_sock/costs.hpp"

namespace vsim::hv_sock {

const std::vector<CostField<Costs>>& Costs::fields()
{
  static const std::vector<CostField<Costs>> t = {
      // Linux guest, hv_sock send path
      {
          VSIM_COST_NAME(Costs, guest_send_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "sendmsg entry/exit + vsock_stream_sendmsg fixed work (lock_sock, wait setup)",
          .scope = "hv_sock",
          .plausible = {300, 3000},
          .basis = "Syscall entry/exit costs 190-240 ns with KPTI and retpolines on Skylake (475-600 cycles; ~140 "
                   "ns less without page-table isolation), and sendmsg adds fd lookup, the LSM hook, "
                   "lock_sock/release_sock and a few cache misses on the socket (40-100 ns each).",
          .sources = "[R1], [R2], [R3], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, guest_space_check),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one hvs_stream_has_space() evaluation (hv_get_bytes_to_write)",
          .scope = "hv_sock",
          .plausible = {20, 400},
          .basis = "hv_get_bytes_to_write reads read/write indices from a header line the host also writes: 20-50 "
                   "cycles when cached, one cross-core transfer (40-100 ns = 100-250 cycles) otherwise.",
          .sources = "[R26], [R25], [R2]",
      },
      {
          VSIM_COST_NAME(Costs, guest_pending_send_sz_write),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one set/clear of pending_send_sz with its barrier (per_check protocol)",
          .scope = "hv_sock",
          .plausible = {30, 500},
          .basis = "(derived) A store plus full barrier on a host-shared line: the barrier is tens of cycles (no "
                   "direct source found) and the cross-core line transfer 100-250 cycles.",
          .sources = "[R26]",
      },
      {
          VSIM_COST_NAME(Costs, guest_enqueue_call),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "hvs_stream_enqueue fixed work: kmalloc+kfree of the 4 KiB send buffer",
          .scope = "hv_sock",
          .plausible = {60, 1500},
          .basis = "kmalloc+kfree of the 4 KiB send buffer is a SLUB fast path (42-47 cycles alloc+free; SLAB 87) "
                   "while the per-CPU slab has objects; refills from the buddy allocator (kmalloc-4096 uses "
                   "multi-page slabs, zone lock before 5.13, time dominated by struct-page misses) and cold lines "
                   "push the amortised cost into the hundreds.",
          .sources = "[R20], [R21], [R22], [R23], [R24]",
      },
      {
          VSIM_COST_NAME(Costs, guest_ring_write),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "hv_ringbuffer_write fixed work: spinlock irqsave, descriptor, trailer, barriers",
          .scope = "hv_sock",
          .plausible = {100, 1000},
          .basis = "spin_lock_irqsave/irqrestore (local_irq_save/restore alone 37 cycles), descriptor, trailer, a "
                   "full barrier, and reads of host-written header fields (100-250 cycles per cross-core miss).",
          .sources = "[R20], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, guest_signal_host),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "HvSignalEvent hypercall: VM exit and re-entry, charged to the vCPU as hypervisor time",
          .scope = "hv_sock",
          .plausible = {1200, 6000},
          .basis = "One fast hypercall is an exit, handling and entry: the direct world switch was ~2000 cycles "
                   "(Nehalem), a trivial L2 MSR exit handled by Hyper-V costs ~1300 cycles (inferred: 1300 vs 120 "
                   "cycles per rdmsr with and without the physical exit), an exit handled in KVM user space ~5800; "
                   "HvSignalEvent also posts an event to the root partition, and 2018-19 speculation mitigations "
                   "add to each exit (no Hyper-V figure found).",
          .sources = "[R5], [R10], [R9], [R7], [R37], [R36], [R42]",
      },
      // Linux guest, hv_sock receive path
      {
          VSIM_COST_NAME(Costs, guest_recv_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "recvmsg entry/exit + vsock_stream_recvmsg fixed work",
          .scope = "hv_sock",
          .plausible = {300, 3000},
          .basis = "Same composition as guest_send_syscall (entry/exit 190-240 ns with KPTI, socket lock and "
                   "lookups).",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, guest_dequeue_packet),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "hvs_stream_dequeue per packet: hv_pkt_iter_first/next, header checks",
          .scope = "hv_sock",
          .plausible = {50, 600},
          .basis = "(derived) Descriptor and pipe header sit in host-written lines (one or two cross-core misses) "
                   "plus header checks.",
          .sources = "[R26], [R25]",
      },
      {
          VSIM_COST_NAME(Costs, guest_iter_close),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "hv_pkt_iter_close: publish read_index, pending_send_sz check",
          .scope = "hv_sock",
          .plausible = {50, 600},
          .basis = "(derived) A barrier, the read_index store to a host-read line and a read of host-written "
                   "pending_send_sz.",
          .sources = "[R26]",
      },
      // Linux guest, interrupts and scheduling
      {
          VSIM_COST_NAME(Costs, guest_irq_exit),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "synthetic interrupt injection: exit/entry cost on the target vCPU (hypervisor time)",
          .scope = "hv_sock",
          .plausible = {500, 8000},
          .basis = "Delivering an interrupt to a running vCPU costs an external-interrupt exit, injection and entry "
                   "(KVM timer-injection latency ~3200 cycles, ~2400 best case) plus possibly an EOI exit "
                   "(paravirtual EOI removes up to half the exits per interrupt); hardware-virtualised delivery "
                   "removes exits entirely.",
          .sources = "[R8], [R13], [R5], [R6]",
      },
      {
          VSIM_COST_NAME(Costs, guest_isr),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "vmbus_isr: interrupt entry, SynIC message/event page scan, tasklet schedule (irq time)",
          .scope = "hv_sock",
          .plausible = {400, 3000},
          .basis = "(derived) Kernel entry/exit with KPTI (~500 cycles, syscall as proxy), a scan of the "
                   "hypervisor-written SynIC event page (misses of 100-250 cycles each) and tasklet_schedule.",
          .sources = "[R1], [R2], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, guest_tasklet),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "vmbus_on_event tasklet + hvs_channel_cb for one channel (softirq time)",
          .scope = "hv_sock",
          .plausible = {500, 8000},
          .basis = "(derived) Tasklet dispatch, channel callback and wake_up of the sleeping thread; if that "
                   "thread's vCPU is another one, the guest sends an IPI, i.e. an ICR-write VM exit costing "
                   "thousands of cycles like any exit (KVM's 2019 fastpath saved only ~200 of them).",
          .sources = "[R11], [R12], [R5], [R17]",
      },
      // Windows host
      {
          VSIM_COST_NAME(Costs, host_signal_latency),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "guest signal (hypercall or monitor page) until the host's channel DPC runs",
          .scope = "hv_sock",
          .plausible = {2500, 40000},
          .basis = "Hypercall path: the hypervisor sets the root VP's SynIC event, the root ISR queues a DPC "
                   "(Windows interrupt-to-DPC averages 1.2-2.7 us), plus an IPI or idle exit (C1E 10 us); the "
                   "monitor-page path would add up to ~100 us (250,000 cycles) and lies outside this range.",
          .sources = "[R39], [R41], [R34], [R35]",
      },
      {
          VSIM_COST_NAME(Costs, host_dpc),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host DPC fixed cost per run (entry, interrupt_mask set/clear, re-check)",
          .scope = "hv_sock",
          .plausible = {1000, 12500},
          .basis = "(derived) DPC dispatch plus setting and clearing interrupt_mask with barriers and re-reading "
                   "guest-written indices (cross-core misses); no public per-DPC cost exists for vmbus/hvsocket, "
                   "only duration distributions.",
          .sources = "[R40], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, host_rx_packet),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host per packet read from a guest-to-host ring and delivered to the reader",
          .scope = "hv_sock",
          .plausible = {100, 3000},
          .basis = "(derived) At least one cross-core miss on the descriptor and pipe header plus handing the "
                   "payload to the socket layer.",
          .sources = "[R26]",
      },
      {
          VSIM_COST_NAME(Costs, host_recv_call),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host reader's recv() per call",
          .scope = "hv_sock",
          .plausible = {1000, 7500},
          .basis = "Windows hvsocket loopback moved 8-byte messages at 23-34 Mbit/s, i.e. 1.9-2.8 us per send+recv "
                   "pair including wake-ups (bounding each call at ~5000-7000 cycles), and a Windows syscall with "
                   "KVA shadow is taken as costing about what Linux KPTI does (~500-1000 cycles, derived).",
          .sources = "[R38], [R1]",
      },
      {
          VSIM_COST_NAME(Costs, host_send_call),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host writer's send() per call",
          .scope = "hv_sock",
          .plausible = {1000, 7500},
          .basis = "Same bound as host_recv_call (loopback per-message cost 1.9-2.8 us for the pair).",
          .sources = "[R38], [R1]",
      },
      {
          VSIM_COST_NAME(Costs, host_tx_packet),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host per packet written into a host-to-guest ring (besides the copy)",
          .scope = "hv_sock",
          .plausible = {100, 3000},
          .basis = "(derived) Ring write work as in guest_ring_write: lock, descriptor, barrier, signal decision, "
                   "cross-core misses.",
          .sources = "[R20], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, host_rx_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "host receive path: bytes per cycle moved from the ring to the reading application",
          .scope = "hv_sock",
          .plausible = {0.5, 32},
          .basis = "One copy runs 1-32 B/cycle (see guest_copy_bytes_per_cycle); the lower bound allows two "
                   "DRAM-bound copies (ring, kernel buffer, user); Windows hvsocket loopback sustained 31 Gbit/s at "
                   "16 KiB, i.e. at least ~1.5 B per 2.5 GHz cycle for the whole send+receive path.",
          .sources = "[R38], [R31], [R27]",
      },
      {
          VSIM_COST_NAME(Costs, host_tx_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "host send path: bytes per cycle moved from the writing application into the ring",
          .scope = "hv_sock",
          .plausible = {0.5, 32},
          .basis = "Same as host_rx_copy_bytes_per_cycle (one or two copies, user buffer to ring).",
          .sources = "[R38], [R31], [R27]",
      },
      {
          VSIM_COST_NAME(Costs, host_signal_guest),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host CPU cost of signalling the guest (interrupt injection request)",
          .scope = "hv_sock",
          .plausible = {1000, 8000},
          .basis = "The root partition issues a signal hypercall (an exit round trip as in guest_signal_host) and "
                   "the hypervisor may IPI the pCPU of the target VP.",
          .sources = "[R5], [R10], [R37]",
      },
      {
          VSIM_COST_NAME(Costs, host_interrupt_latency),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "host signal until the synthetic interrupt is delivered on guest vCPU 0",
          .scope = "hv_sock",
          .plausible = {2500, 50000},
          .basis = "Signal to guest ISR: IPI, exit, injection and entry take ~1-3 us for a running vCPU (KVM "
                   "timer-injection latency ~3200 cycles), and waking a halted VP adds scheduler and C1E time (a "
                   "few us to 10 us); deep C6 (133 us) is excluded.",
          .sources = "[R8], [R18], [R41], [R17]",
      },
  };
  return t;
}

Costs Costs::from(const Params& p)
{
  return fill_costs(p, fields());
}

std::vector<CostDecl> Costs::decls()
{
  return decls_of(fields());
}

} // namespace vsim::hv_sock
