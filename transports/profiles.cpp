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
  // The physically plausible range on the modelled hardware (2017-2019
  // two-socket Xeon servers at the 2.5 GHz clock), what it rests on, and its
  // sources ([Rn]: docs/cost-sources.md). Calibration searches only inside
  // it; a profile value outside it is reported (describe platforms).
  double plausible_min;
  double plausible_max;
  const char* basis;
  const char* sources;
};

// Every cost parameter, declared once. Units: "cycles" of the platform clock
// (CPU time charged to a CPU in a category), "cycles latency" (time that
// passes without any CPU of the model being busy: hardware, hypervisor or
// scheduler delays), "bytes/cycle" (copy bandwidth).
const CostDecl kCosts[] = {
    {"clock_ghz", "GHz", 0.1, 10, "platform clock: every cycle figure below counts cycles of this clock", "",
     2.0, 3.8, "Two-socket Xeons of the era run 2.0-2.7 GHz nominal (e.g. E5-2660 v4 2.0 GHz, 3.0 turbo) with single-core turbo up to ~3.5-3.8 GHz; every cycle range below assumes 2.5 GHz and scales with it.",
     "[R26], [R27]"},
    // Linux guest, hv_sock send path
    {"guest_user_per_call", "cycles", 0, 1e7, "user-space cost of one send()/recv() in the benchmark loop", "",
     50, 5000, "(derived) A libc send()/recv() wrapper in a tight loop costs tens of cycles; an iperf3-style loop that also checks timers and calls select() each iteration can reach ~1-2 us, since select() alone is a syscall of ~190-240 ns entry/exit plus its polling work.",
     "[R1], [R2]; no direct source for iperf3's user time"},
    {"guest_send_syscall", "cycles", 0, 1e7, "sendmsg entry/exit + vsock_stream_sendmsg fixed work (lock_sock, wait setup)", "hv_sock",
     300, 3000, "Syscall entry/exit costs 190-240 ns with KPTI and retpolines on Skylake (475-600 cycles; ~140 ns less without page-table isolation), and sendmsg adds fd lookup, the LSM hook, lock_sock/release_sock and a few cache misses on the socket (40-100 ns each).",
     "[R1], [R2], [R3], [R26]"},
    {"guest_space_check", "cycles", 0, 1e7, "one hvs_stream_has_space() evaluation (hv_get_bytes_to_write)", "hv_sock",
     20, 400, "hv_get_bytes_to_write reads read/write indices from a header line the host also writes: 20-50 cycles when cached, one cross-core transfer (40-100 ns = 100-250 cycles) otherwise.",
     "[R26], [R25], [R2]"},
    {"guest_pending_send_sz_write", "cycles", 0, 1e7, "one set/clear of pending_send_sz with its barrier (per_check protocol)", "hv_sock",
     30, 500, "(derived) A store plus full barrier on a host-shared line: the barrier is tens of cycles (no direct source found) and the cross-core line transfer 100-250 cycles.",
     "[R26]"},
    {"guest_enqueue_call", "cycles", 0, 1e7, "hvs_stream_enqueue fixed work: kmalloc+kfree of the 4 KiB send buffer", "hv_sock",
     60, 1500, "kmalloc+kfree of the 4 KiB send buffer is a SLUB fast path (42-47 cycles alloc+free; SLAB 87) while the per-CPU slab has objects; refills from the buddy allocator (kmalloc-4096 uses multi-page slabs, zone lock before 5.13, time dominated by struct-page misses) and cold lines push the amortised cost into the hundreds.",
     "[R20], [R21], [R22], [R23], [R24]"},
    {"guest_ring_write", "cycles", 0, 1e7, "hv_ringbuffer_write fixed work: spinlock irqsave, descriptor, trailer, barriers", "hv_sock",
     100, 1000, "spin_lock_irqsave/irqrestore (local_irq_save/restore alone 37 cycles), descriptor, trailer, a full barrier, and reads of host-written header fields (100-250 cycles per cross-core miss).",
     "[R20], [R26]"},
    {"guest_copy_fixed", "cycles", 0, 1e7, "fixed cost of one kernel copy (memcpy_from_msg, ring copy, memcpy_to_msg)", "",
     30, 300, "rep-movs start-up is ~40 cycles (measured for REP MOVSD on Nehalem; ERMSB from Ivy Bridge), and each copy call adds access_ok, iov_iter bookkeeping and (with SMAP) stac/clac, which Linus measured as the dominant part of a short user copy.",
     "[R30], [R32], [R33]"},
    {"guest_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "guest kernel copy bandwidth", "",
     1.0, 32, "L1/L2-resident copies run 16-32 B/cycle (peak read+write 32 B/cycle to Ivy Bridge, 64 on Haswell+); DRAM-bound single-core copy on many-core Xeons is latency/concurrency-limited (~90 ns DRAM, ~20 GB/s single-thread STREAM on Haswell-EP, worse on Skylake-SP) giving ~2-4 B/cycle; ~1 B/cycle when lines come from the remote socket's memory (higher latency than the ~90 ns local figure; no remote figure found in this search) or are pulled from another core's cache.",
     "[R31], [R29], [R27], [R28], [R25], [R26]"},
    {"guest_signal_host", "cycles", 0, 1e7, "HvSignalEvent hypercall: VM exit and re-entry, charged to the vCPU as hypervisor time", "hv_sock",
     1200, 6000, "One fast hypercall is an exit, handling and entry: the direct world switch was ~2000 cycles (Nehalem), a trivial L2 MSR exit handled by Hyper-V costs ~1300 cycles (inferred: 1300 vs 120 cycles per rdmsr with and without the physical exit), an exit handled in KVM user space ~5800; HvSignalEvent also posts an event to the root partition, and 2018-19 speculation mitigations add to each exit (no Hyper-V figure found).",
     "[R5], [R10], [R9], [R7], [R37], [R36], [R42]"},
    // Linux guest, hv_sock receive path
    {"guest_recv_syscall", "cycles", 0, 1e7, "recvmsg entry/exit + vsock_stream_recvmsg fixed work", "hv_sock",
     300, 3000, "Same composition as guest_send_syscall (entry/exit 190-240 ns with KPTI, socket lock and lookups).",
     "[R1], [R2], [R3]"},
    {"guest_dequeue_packet", "cycles", 0, 1e7, "hvs_stream_dequeue per packet: hv_pkt_iter_first/next, header checks", "hv_sock",
     50, 600, "(derived) Descriptor and pipe header sit in host-written lines (one or two cross-core misses) plus header checks.",
     "[R26], [R25]"},
    {"guest_iter_close", "cycles", 0, 1e7, "hv_pkt_iter_close: publish read_index, pending_send_sz check", "hv_sock",
     50, 600, "(derived) A barrier, the read_index store to a host-read line and a read of host-written pending_send_sz.",
     "[R26]"},
    // Linux guest, interrupts and scheduling
    {"guest_irq_exit", "cycles", 0, 1e7, "synthetic interrupt injection: exit/entry cost on the target vCPU (hypervisor time)", "hv_sock",
     500, 8000, "Delivering an interrupt to a running vCPU costs an external-interrupt exit, injection and entry (KVM timer-injection latency ~3200 cycles, ~2400 best case) plus possibly an EOI exit (paravirtual EOI removes up to half the exits per interrupt); hardware-virtualised delivery removes exits entirely.",
     "[R8], [R13], [R5], [R6]"},
    {"guest_isr", "cycles", 0, 1e7, "vmbus_isr: interrupt entry, SynIC message/event page scan, tasklet schedule (irq time)", "hv_sock",
     400, 3000, "(derived) Kernel entry/exit with KPTI (~500 cycles, syscall as proxy), a scan of the hypervisor-written SynIC event page (misses of 100-250 cycles each) and tasklet_schedule.",
     "[R1], [R2], [R26]"},
    {"guest_tasklet", "cycles", 0, 1e7, "vmbus_on_event tasklet + hvs_channel_cb for one channel (softirq time)", "hv_sock",
     500, 8000, "(derived) Tasklet dispatch, channel callback and wake_up of the sleeping thread; if that thread's vCPU is another one, the guest sends an IPI, i.e. an ICR-write VM exit costing thousands of cycles like any exit (KVM's 2019 fastpath saved only ~200 of them).",
     "[R11], [R12], [R5], [R17]"},
    {"guest_wakeup_latency", "cycles latency", 0, 1e8, "from wake_up() in the callback until the woken thread runs (IPI, scheduler)", "",
     1500, 30000, "In-guest cross-vCPU wake-up plus switch measured 1.16-2.5 us per context switch on KVM (2900-6200 cycles, lower with guest polling); a polling idle target needs no IPI (~0.6 us floor, derived); a halted vCPU adds a host scheduler trip (\"a few microseconds\") and C1E exit (10 us on SKX); deep C6 (133 us) is excluded as untuned.",
     "[R17], [R18], [R47], [R41]"},
    {"guest_context_switch", "cycles", 0, 1e7, "schedule() out and back in, charged to the thread that slept (sys time)", "",
     1500, 7500, "schedule() out and back in costs ~0.6-3 us on 2017-2019 kernels: VM context-switch benchmarks give 1.2-2.5 us per switch (including wake-up), and KPTI adds a syscall-like cost (CR3 switch, TLB refill) to every switch.",
     "[R17], [R4], [R44], [R43]"},
    // Windows host
    {"host_signal_latency", "cycles latency", 0, 1e8, "guest signal (hypercall or monitor page) until the host's channel DPC runs", "hv_sock",
     2500, 40000, "Hypercall path: the hypervisor sets the root VP's SynIC event, the root ISR queues a DPC (Windows interrupt-to-DPC averages 1.2-2.7 us), plus an IPI or idle exit (C1E 10 us); the monitor-page path would add up to ~100 us (250,000 cycles) and lies outside this range.",
     "[R39], [R41], [R34], [R35]"},
    {"host_dpc", "cycles", 0, 1e7, "host DPC fixed cost per run (entry, interrupt_mask set/clear, re-check)", "hv_sock",
     1000, 12500, "(derived) DPC dispatch plus setting and clearing interrupt_mask with barriers and re-reading guest-written indices (cross-core misses); no public per-DPC cost exists for vmbus/hvsocket, only duration distributions.",
     "[R40], [R26]"},
    {"host_rx_packet", "cycles", 0, 1e7, "host per packet read from a guest-to-host ring and delivered to the reader", "hv_sock",
     100, 3000, "(derived) At least one cross-core miss on the descriptor and pipe header plus handing the payload to the socket layer.",
     "[R26]"},
    {"host_recv_call", "cycles", 0, 1e7, "host reader's recv() per call", "hv_sock",
     1000, 7500, "Windows hvsocket loopback moved 8-byte messages at 23-34 Mbit/s, i.e. 1.9-2.8 us per send+recv pair including wake-ups (bounding each call at ~5000-7000 cycles), and a Windows syscall with KVA shadow is taken as costing about what Linux KPTI does (~500-1000 cycles, derived).",
     "[R38], [R1]"},
    {"host_send_call", "cycles", 0, 1e7, "host writer's send() per call", "hv_sock",
     1000, 7500, "Same bound as host_recv_call (loopback per-message cost 1.9-2.8 us for the pair).",
     "[R38], [R1]"},
    {"host_tx_packet", "cycles", 0, 1e7, "host per packet written into a host-to-guest ring (besides the copy)", "hv_sock",
     100, 3000, "(derived) Ring write work as in guest_ring_write: lock, descriptor, barrier, signal decision, cross-core misses.",
     "[R20], [R26]"},
    {"host_rx_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host receive path: bytes per cycle moved from the ring to the reading application", "hv_sock",
     0.5, 32, "One copy runs 1-32 B/cycle (see guest_copy_bytes_per_cycle); the lower bound allows two DRAM-bound copies (ring, kernel buffer, user); Windows hvsocket loopback sustained 31 Gbit/s at 16 KiB, i.e. at least ~1.5 B per 2.5 GHz cycle for the whole send+receive path.",
     "[R38], [R31], [R27]"},
    {"host_tx_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host send path: bytes per cycle moved from the writing application into the ring", "hv_sock",
     0.5, 32, "Same as host_rx_copy_bytes_per_cycle (one or two copies, user buffer to ring).",
     "[R38], [R31], [R27]"},
    {"host_signal_guest", "cycles", 0, 1e7, "host CPU cost of signalling the guest (interrupt injection request)", "hv_sock",
     1000, 8000, "The root partition issues a signal hypercall (an exit round trip as in guest_signal_host) and the hypervisor may IPI the pCPU of the target VP.",
     "[R5], [R10], [R37]"},
    {"host_interrupt_latency", "cycles latency", 0, 1e8, "host signal until the synthetic interrupt is delivered on guest vCPU 0", "hv_sock",
     2500, 50000, "Signal to guest ISR: IPI, exit, injection and entry take ~1-3 us for a running vCPU (KVM timer-injection latency ~3200 cycles), and waking a halted VP adds scheduler and C1E time (a few us to 10 us); deep C6 (133 us) is excluded.",
     "[R8], [R18], [R41], [R17]"},
    {"host_wakeup_latency", "cycles latency", 0, 1e8, "a blocked host thread's wake-up latency once its wait is satisfied", "",
     2500, 50000, "A blocked host thread runs 1-20 us after its wait is satisfied: Windows LatencyMon reports average interrupt-to-user-process latency of 3.3-9.1 us, SKX C1/C1E exit costs 2/10 us, and KVM's halt-poll documentation puts one scheduler trip at a few microseconds.",
     "[R39], [R41], [R18]"},
    // Run-to-run variability
    {"latency_jitter", "fraction", 0, 0.9, "each latency is drawn uniformly in [1-j, 1+j] times its value", "",
     0.05, 0.5, "(derived) Repeated public hvsock runs vary by +-5-30% per point, and wake-up latency distributions are long-tailed (average ~3 us, maxima 160 us+); no source gives a uniform-jitter width directly.",
     "[R38], [R39]"},
    {"iteration_jitter", "fraction", 0, 0.5, "per iteration, host costs are scaled by a factor drawn in [1-j, 1+j]", "",
     0.02, 0.15, "(derived) Run-to-run spread of repeated hvsock bulk transfers is about +-7% for stable points (e.g. 2934-3359 Mbit/s at 4 KiB) and +-15-30% for unstable ones; the 2019 published min-max rows are about +-4-11%.",
     "[R38]; project rows in docs/calibration.md (not a public source)"},
    // virtio-vsock: Linux guest driver (net/vmw_vsock/virtio_transport*.c)
    {"virtio_guest_send_syscall", "cycles", 0, 1e7, "sendmsg entry/exit + vsock_stream_sendmsg fixed work", "virtio_vsock",
     300, 3000, "Same composition as guest_send_syscall (entry/exit 190-240 ns with KPTI, socket lock, lookups, cache misses).",
     "[R1], [R2], [R3]"},
    {"virtio_guest_recv_syscall", "cycles", 0, 1e7, "recvmsg entry/exit + vsock_stream_recvmsg fixed work", "virtio_vsock",
     300, 3000, "Same as above for recvmsg; per-packet dequeue and credit-update packets are separate parameters.",
     "[R1], [R2], [R3]"},
    {"virtio_guest_alloc", "cycles", 0, 1e7, "one kernel allocation (kzalloc of a packet, kmalloc of its buffer)", "virtio_vsock",
     20, 3000, "A SLUB fast-path allocation is ~20-25 cycles (42-47 for alloc+free) plus zeroing of a small struct; a 64 KiB kmalloc (5.4 tx packets) is an order-4 buddy allocation that before 5.13 takes the zone lock with no per-CPU cache (no cycle figure found; upper bound ~1 us derived).",
     "[R20], [R23], [R24], [R22]"},
    {"virtio_guest_free", "cycles", 0, 1e7, "freeing one packet (struct and buffer)", "virtio_vsock",
     15, 1500, "Mirror of virtio_guest_alloc (SLUB fast-path free, buddy free with merging under the zone lock for high orders).",
     "[R20], [R23], [R24]"},
    {"virtio_guest_pkt", "cycles", 0, 1e7, "virtio_transport_send_pkt_info per packet: credit, header, send list, queue_work", "virtio_vsock",
     150, 3000, "(derived) Credit arithmetic under spinlocks (irq save/restore 37 cycles), list insertion and queue_work, which wakes an idle kworker (try_to_wake_up, possibly an IPI exit).",
     "[R20], [R11]"},
    {"virtio_guest_vq_add", "cycles", 0, 1e7, "virtqueue_add_sgs for one chain", "virtio_vsock",
     50, 600, "(derived) Two 16-byte descriptors and an avail entry, with cross-core misses when vhost's core last touched those lines.",
     "[R26]"},
    {"virtio_guest_kick", "cycles", 0, 1e7, "virtqueue_notify: the notify write's VM exit and re-entry (ioeventfd, in the kernel), hypervisor time", "virtio_vsock",
     1500, 6000, "A PIO or fast-MMIO ioeventfd write exits to a kernel handler (world switch ~1350-2000 cycles, fast-MMIO eventfd as fast as PIO) and signals the eventfd; an exit handled in QEMU costs ~5800 and serves as upper reference.",
     "[R5], [R16], [R14], [R7]"},
    {"virtio_guest_work_run", "cycles", 0, 1e7, "one workqueue item run: kworker switch-in and dispatch", "virtio_vsock",
     200, 6000, "(derived) Dispatch by an already running kworker is cheap; switching the kworker in costs a context switch (1.2-2.5 us in VMs).",
     "[R17], [R49]"},
    {"virtio_guest_rx_buf", "cycles", 0, 1e7, "rx work per used rx buffer (virtqueue_get_buf, length checks)", "virtio_vsock",
     80, 600, "(derived) Used-ring entry written by vhost on another core (one miss) plus detach_buf bookkeeping.",
     "[R26]"},
    {"virtio_guest_rx_pkt", "cycles", 0, 1e7, "virtio_transport_recv_pkt per packet: socket lookup, lock, credit fields, enqueue", "virtio_vsock",
     150, 2000, "(derived) Connected-socket hash lookup (likely a miss), bh lock, credit fields, queueing and sk_data_ready.",
     "[R26], [R20]"},
    {"virtio_guest_tx_done", "cycles", 0, 1e7, "tx work per completed tx chain (virtqueue_get_buf)", "virtio_vsock",
     50, 600, "(derived) Same as virtio_guest_rx_buf for a completed tx chain.",
     "[R26]"},
    {"virtio_guest_irq_exit", "cycles", 0, 1e7, "MSI injection into the vCPU: exit/entry cost there (hypervisor time)", "virtio_vsock",
     100, 6000, "With APICv posted interrupts (Skylake-SP) a running vCPU takes the MSI without an exit (cost a few hundred cycles at most, derived); without them, exit, injection and entry as for timers (~3200) plus an EOI exit unless PV EOI.",
     "[R7], [R8], [R13], [R6]"},
    {"virtio_guest_isr", "cycles", 0, 1e7, "vring_interrupt: interrupt entry, callback, queue_work (irq time)", "virtio_vsock",
     300, 2500, "(derived) Interrupt entry/exit (syscall entry/exit as proxy), vring_interrupt and queue_work.",
     "[R1], [R2]"},
    {"virtio_guest_dequeue_pkt", "cycles", 0, 1e7, "virtio_transport_stream_do_dequeue per packet touched", "virtio_vsock",
     50, 600, "(derived) Spinlock, list walk and length bookkeeping per packet touched (copy and free are separate).",
     "[R20], [R26]"},
    // virtio-vsock: host (drivers/vhost/vsock.c, vhost.c, the host socket)
    {"virtio_host_user_per_call", "cycles", 0, 1e7, "user-space cost of one send()/recv() of the host application", "virtio_vsock",
     50, 5000, "Same as guest_user_per_call (tight loop tens of cycles; iperf3 with timers and select() up to ~2 us).",
     "[R1], [R2]"},
    {"virtio_host_send_syscall", "cycles", 0, 1e7, "host sendmsg entry/exit + vsock_stream_sendmsg fixed work", "virtio_vsock",
     300, 3000, "Same composition as guest_send_syscall on the host kernel (KPTI and retpolines on Skylake-SP hosts of 2018-19).",
     "[R1], [R2], [R3]"},
    {"virtio_host_recv_syscall", "cycles", 0, 1e7, "host recvmsg entry/exit + vsock_stream_recvmsg fixed work", "virtio_vsock",
     300, 3000, "Same as above for recvmsg.",
     "[R1], [R2], [R3]"},
    {"virtio_host_alloc", "cycles", 0, 1e7, "one host kernel allocation (packet struct or buffer)", "virtio_vsock",
     20, 3000, "Same as virtio_guest_alloc.",
     "[R20], [R23], [R24]"},
    {"virtio_host_free", "cycles", 0, 1e7, "freeing one host packet", "virtio_vsock",
     15, 1500, "Same as virtio_guest_free.",
     "[R20], [R23]"},
    {"virtio_host_pkt", "cycles", 0, 1e7, "host virtio_transport_send_pkt_info per packet (credit, header, send list)", "virtio_vsock",
     150, 3000, "(derived) As virtio_guest_pkt; queueing vhost work wakes the vhost worker (try_to_wake_up plus a host IPI, no VM exit).",
     "[R20], [R11]"},
    {"virtio_host_copy_fixed", "cycles", 0, 1e7, "fixed cost of one host kernel copy", "virtio_vsock",
     30, 300, "Same as guest_copy_fixed.",
     "[R30], [R32]"},
    {"virtio_host_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "host copy bandwidth between the application and kernel packets", "virtio_vsock",
     1.0, 32, "Same copy physics as guest_copy_bytes_per_cycle.",
     "[R31], [R29], [R27], [R28]"},
    {"virtio_host_dequeue_pkt", "cycles", 0, 1e7, "host virtio_transport_stream_do_dequeue per packet touched", "virtio_vsock",
     50, 600, "Same as virtio_guest_dequeue_pkt.",
     "[R20], [R26]"},
    {"virtio_host_worker_run", "cycles", 0, 1e7, "vhost worker: one work item run (handle_tx_kick or send_pkt_work) fixed cost", "virtio_vsock",
     300, 3000, "(derived) Worker loop, vq mutex, disabling and re-enabling notification with a barrier; every guest-memory access is a copy_user with access_ok and (unless nosmap) stac/clac, costly enough that a 2019 RFC bypassing them gained 24% tx packets per second.",
     "[R33], [R32]"},
    {"virtio_host_tx_pkt", "cycles", 0, 1e7, "vhost per guest tx chain: vhost_get_vq_desc, header copy, recv_pkt, add_used", "virtio_vsock",
     500, 5000, "(derived) vhost_get_vq_desc (avail index, ring entry and descriptors read through copy_user, misses on guest-written lines), a 44-byte header copy, delivery to the socket with a reader wake-up, add_used and a barrier.",
     "[R33], [R26]"},
    {"virtio_host_rx_buf", "cycles", 0, 1e7, "vhost per guest rx buffer filled: vhost_get_vq_desc, header copy, add_used", "virtio_vsock",
     300, 3000, "(derived) As virtio_host_tx_pkt without socket delivery: descriptor fetch, header write, add_used.",
     "[R33], [R26]"},
    {"virtio_host_guest_copy_bytes_per_cycle", "bytes/cycle", 0.01, 1e3, "vhost copy bandwidth to and from guest memory (copy_to_iter/copy_from_iter)", "virtio_vsock",
     1.0, 32, "Same copy physics; per-segment copy_user overhead (access_ok, stac/clac, address translation) is a fixed cost per segment, not a per-byte one.",
     "[R31], [R27], [R33], [R32]"},
    {"virtio_host_signal", "cycles", 0, 1e7, "vhost_signal: eventfd_signal into irqfd and MSI injection request, on the worker's CPU", "virtio_vsock",
     500, 4000, "(derived) Reading used_event from guest memory, eventfd_signal into irqfd and MSI injection: a posted-interrupt descriptor update plus notification IPI for a running vCPU, or a kick and wake-up of a halted one.",
     "[R15], [R11], [R47]"},
    {"virtio_host_kick_latency", "cycles latency", 0, 1e8, "guest notify write until its ioeventfd queues the vhost work (exit handling, eventfd; the worker's own wake-up is host_wakeup_latency)", "virtio_vsock",
     1000, 7500, "Exit to the in-kernel handler (world switch ~1350-2000 cycles), fast-MMIO ioeventfd match and eventfd_signal into the vhost poll queue (worker wake-up excluded).",
     "[R5], [R16], [R14]"},
    {"virtio_host_interrupt_latency", "cycles latency", 0, 1e8, "vhost_signal until the interrupt runs on guest vCPU 0", "virtio_vsock",
     1500, 50000, "A running vCPU with posted interrupts takes the notification IPI in ~0.5-1 us (derived); a halted vCPU needs its thread woken and re-entered (1.2-2.5 us per cross-vCPU switch measured) plus C-state exit; ~20 us upper bound excludes deep C6.",
     "[R17], [R18], [R8], [R41]"},
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
           {"guest_send_syscall", 300},
           {"guest_space_check", 150},
           {"guest_pending_send_sz_write", 150},
           {"guest_enqueue_call", 872.8},
           {"guest_ring_write", 400},
           {"guest_copy_fixed", 60},
           {"guest_copy_bytes_per_cycle", 2.1},
           {"guest_signal_host", 4494},
           {"guest_recv_syscall", 385.2},
           {"guest_dequeue_packet", 600},
           {"guest_iter_close", 73.58},
           {"guest_irq_exit", 2000},
           {"guest_isr", 1000},
           {"guest_tasklet", 1500},
           {"guest_wakeup_latency", 9343},
           {"guest_context_switch", 2833},
           {"host_signal_latency", 36370},
           {"host_dpc", 3297},
           {"host_rx_packet", 100},
           {"host_recv_call", 1500},
           {"host_send_call", 4077},
           {"host_tx_packet", 133.9},
           {"host_rx_copy_bytes_per_cycle", 2},
           {"host_tx_copy_bytes_per_cycle", 1.5},
           {"host_signal_guest", 1500},
           {"host_interrupt_latency", 17000},
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

std::vector<ImplausibleCost> implausible_costs(const PlatformProfile& profile)
{
  std::vector<ImplausibleCost> out;
  for (const auto& c : kCosts) {
    auto it = profile.costs.find(c.name);
    if (it == profile.costs.end())
      continue;
    if (it->second < c.plausible_min || it->second > c.plausible_max)
      out.push_back({c.name, it->second, c.plausible_min, c.plausible_max, c.unit});
  }
  return out;
}

void declare_cost_params(ParamRegistry& reg)
{
  for (const auto& c : kCosts) {
    ParamSpec s{std::string("costs.") + c.name, ParamKind::Number, c.unit, "(platform)"};
    s.min = c.min;
    s.max = c.max;
    s.doc = c.doc;
    s.scope = c.scope;
    s.plausible_min = c.plausible_min;
    s.plausible_max = c.plausible_max;
    s.plausible_basis = c.basis;
    s.plausible_sources = c.sources;
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
        "host_tx_copy_bytes_per_cycle", "guest_recv_syscall", "guest_dequeue_packet", "guest_iter_close"}},
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
