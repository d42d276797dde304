#include "transports/virtio_vsock/costs.hpp"

namespace vsim::virtio_vsock::detail {

namespace {

// MSG_ZEROCOPY's costs are the same operations on either side: each basis
// serves the guest's declaration and the host's.
constexpr const char* kPinPageBasis =
    "(derived) A page-table walk of a recently touched buffer (cached, no fault) and an atomic page "
    "reference (tens of cycles uncontended, as the irq save/restore and SLUB fast paths [R20]); the "
    "kernel's own note says pinning replaces the per-byte copy with per-page accounting [R51].";
constexpr const char* kUnpinPageBasis =
    "(derived) One atomic decrement of the page's reference per fragment and the fragment walk; no free "
    "of the page (the user still maps it) [R51], [R20].";
constexpr const char* kNotifyBasis =
    "(derived) A spinlock with irq save/restore (37 cycles [R20]), an skb queued or a range extended, a "
    "wake-up call that finds no poller, and the locked_vm accounting; the kernel calls this the "
    "notification overhead [R51].";
constexpr const char* kErrqueueBasis =
    "(derived) A syscall's entry/exit as for recvmsg (190-240 ns with KPTI), one skb dequeued under the "
    "queue lock, a control message copied out and the skb freed.";

} // namespace

const std::vector<CostField<Costs>>& Costs::fields()
{
  static const std::vector<CostField<Costs>> t = {
      // virtio-vsock: Linux guest driver (net/vmw_vsock/virtio_transport*.c)
      {
          VSIM_COST_NAME(Costs, virtio_guest_send_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "sendmsg entry/exit + vsock_stream_sendmsg fixed work",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {300, 3000},
          .basis = "Same composition as guest_send_syscall (entry/exit 190-240 ns with KPTI, socket lock, lookups, "
                   "cache misses).",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_recv_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "recvmsg entry/exit + vsock_stream_recvmsg fixed work",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {300, 3000},
          .basis = "Same as above for recvmsg; per-packet dequeue and credit-update packets are separate parameters.",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_poll_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "select() on the benchmark's sockets (workload.app iperf3): entry/exit, vsock_poll under the "
                 "socket lock, the loop's timers",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {300, 4000},
          .basis = "(derived) A syscall entry/exit as for recvmsg (190-240 ns with KPTI), a poll callback and "
                   "wait-queue set-up per descriptor (iperf3 polls its control socket and the stream), vsock_poll's "
                   "lock_sock, and iperf3's timer check (gettimeofday in the vDSO).",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_iperf3_user_per_call),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "iperf3's own user-space work in the guest (workload.app iperf3): once per block of its client "
                 "(a pass of iperf_send's multisend loop, however many write()s its Nwrite makes), once per block "
                 "of its server (iperf_run_server; its select() is virtio_guest_poll_syscall)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {50, 5000},
          .basis = "(derived) More than the plain loop's (guest_user_per_call): iperf3 keeps per-stream byte "
                   "counts, checks its timers and rate limit (gettimeofday in the vDSO) and rebuilds its select() "
                   "descriptor sets each pass, up to ~1-2 us per call, the cost of a syscall's entry/exit (190-240 "
                   "ns with KPTI) and more.",
          .sources = "[R1], [R2]; no direct source for iperf3's user time",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_alloc),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one kernel allocation from a slab cache (kzalloc of a packet struct or an sk_buff, kmalloc of a "
                 "buffer or skb head up to KMALLOC_MAX_CACHE_SIZE, 8 KiB); larger ones are "
                 "virtio_guest_page_alloc",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {20, 3000},
          .basis = "A SLUB fast-path allocation is ~20-25 cycles (42-47 for alloc+free) plus zeroing of a small "
                   "struct; the range's top allows for a slow path refilling the per-CPU slab.",
          .sources = "[R20], [R22]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_page_alloc),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one kmalloc above KMALLOC_MAX_CACHE_SIZE (8 KiB), which SLUB passes to the page allocator "
                 "(kmalloc_large, order get_order(size)): a 64 KiB packet buffer (order 4), a 64 KiB packet's skb "
                 "head (order 5)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {200, 5000},
          .basis = "(derived) A buddy allocation of order 2-5: before 5.13 every allocation above order 0 takes "
                   "zone->lock with interrupts off (irq save/restore 37 cycles) and, from 5.13, those above "
                   "PAGE_ALLOC_COSTLY_ORDER (3) still do; the time under the lock is dominated by cache misses on "
                   "struct page (free-list removal, splitting, compound-page set-up of 16-32 pages); no cycle "
                   "figure found, ~2 us taken as the top.",
          .sources = "[R23], [R24], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_page_alloc_pcp),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one kmalloc of 8-32 KiB (order 1-3) taken from the page allocator's per-CPU lists "
                 "(rmqueue_pcplist), with virtio_vsock.pcp_high_order (Linux 5.13 and later)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {100, 2000},
          .basis = "(derived) A pop from the CPU's list of that order with interrupts off (irq save/restore 37 "
                   "cycles) and no zone->lock, then the compound-page set-up of 2-8 struct pages "
                   "(prep_new_page); below the zone->lock path of virtio_guest_page_alloc, above a SLUB fast "
                   "path (20-25 cycles); the per-CPU lists exist to take this work off zone->lock.",
          .sources = "[R23], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_free),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "freeing one packet (struct and buffer)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {15, 1500},
          .basis = "Mirror of virtio_guest_alloc (SLUB fast-path free, buddy free with merging under the zone lock "
                   "for high orders).",
          .sources = "[R20], [R23], [R24]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "virtio_transport_send_pkt_info per packet: credit, header, send list, queue_work",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {150, 3000},
          .basis = "(derived) Credit arithmetic under spinlocks (irq save/restore 37 cycles), list insertion and "
                   "queue_work, which wakes the local vCPU's idle kworker (try_to_wake_up; no IPI on the same vCPU).",
          .sources = "[R20], [R11]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_vq_add),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "virtqueue_add_sgs for one chain",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {50, 600},
          .basis = "(derived) Two 16-byte descriptors and an avail entry, with cross-core misses when vhost's core "
                   "last touched those lines.",
          .sources = "[R26]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_kick),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "virtqueue_notify: the notify write's VM exit and re-entry (ioeventfd, in the kernel), hypervisor "
                 "time; plus virtio_host_wake_ipi when it wakes the sleeping vhost worker",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {1500, 6000},
          .basis = "A PIO or fast-MMIO ioeventfd write exits to a kernel handler (world switch ~1350-2000 cycles, "
                   "fast-MMIO eventfd as fast as PIO) and signals the eventfd; an exit handled in QEMU costs ~5800 "
                   "and serves as upper reference.",
          .sources = "[R5], [R16], [R14], [R7]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_work_run),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one workqueue item run (process_one_work); the kworker's switches in and out are "
                 "guest_context_switch each",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {200, 6000},
          .basis = "(derived) Dispatch by a running kworker (pool lock, work list, the item's own set-up such as "
                   "tx_lock or rx_lock) is cheap; a cold cache after another thread ran costs up to a context "
                   "switch (1.2-2.5 us in VMs).",
          .sources = "[R17], [R49]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_rx_buf),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "rx work per used rx buffer (virtqueue_get_buf, length checks)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {80, 600},
          .basis = "(derived) Used-ring entry written by vhost on another core (one miss) plus detach_buf "
                   "bookkeeping.",
          .sources = "[R26]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_rx_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "virtio_transport_recv_pkt per packet: socket lookup, lock, credit fields, enqueue",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {150, 2000},
          .basis = "(derived) Connected-socket hash lookup (likely a miss), bh lock, credit fields, queueing and "
                   "sk_data_ready.",
          .sources = "[R26], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_tx_done),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "tx work per completed tx chain (virtqueue_get_buf)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {50, 600},
          .basis = "(derived) Same as virtio_guest_rx_buf for a completed tx chain.",
          .sources = "[R26]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_irq_exit),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSI injection into the vCPU: exit/entry cost there (hypervisor time)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {100, 6000},
          .basis = "With APICv posted interrupts (Skylake-SP) a running vCPU takes the MSI without an exit (cost a "
                   "few hundred cycles at most, derived); without them, exit, injection and entry as for timers "
                   "(~3200) plus an EOI exit unless PV EOI.",
          .sources = "[R7], [R8], [R13], [R6]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_isr),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "vring_interrupt: interrupt entry, callback, queue_work (irq time)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {300, 2500},
          .basis = "(derived) Interrupt entry/exit (syscall entry/exit as proxy), vring_interrupt and queue_work.",
          .sources = "[R1], [R2]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_dequeue_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "virtio_transport_stream_do_dequeue per packet touched",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {50, 600},
          .basis = "(derived) Spinlock, list walk and length bookkeeping per packet touched (copy and free are "
                   "separate).",
          .sources = "[R20], [R26]",
      },
      // virtio-vsock: host (drivers/vhost/vsock.c, vhost.c, the host socket)
      {
          VSIM_COST_NAME(Costs, virtio_host_user_per_call),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "user-space cost of one send()/recv() of the host's plain loop (workload.app loop); iperf3 has its "
                 "own, virtio_host_iperf3_user_per_call",
          .scope = "virtio_vsock",
          .plausible = {20, 600},
          .basis = "Same as guest_user_per_call (a tight loop around blocking calls, and the refill after each).",
          .sources = "[R2], [R25], [R50]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_iperf3_user_per_call),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "iperf3's own user-space work on the host (workload.app iperf3): once per block of its client and "
                 "of its server (its select() is virtio_host_poll_syscall)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {50, 5000},
          .basis = "Same as virtio_guest_iperf3_user_per_call.",
          .sources = "[R1], [R2]; no direct source for iperf3's user time",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_send_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host sendmsg entry/exit + vsock_stream_sendmsg fixed work",
          .scope = "virtio_vsock",
          .plausible = {300, 3000},
          .basis = "Same composition as guest_send_syscall on the host kernel (KPTI and retpolines on Skylake-SP "
                   "hosts of 2018-19).",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_recv_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host recvmsg entry/exit + vsock_stream_recvmsg fixed work",
          .scope = "virtio_vsock",
          .plausible = {300, 3000},
          .basis = "Same as above for recvmsg.",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_poll_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host select() on the benchmark's sockets (workload.app iperf3)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {300, 4000},
          .basis = "Same as virtio_guest_poll_syscall on the host kernel.",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_alloc),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one host kernel allocation from a slab cache (packet struct or sk_buff, buffer or skb head up to "
                 "8 KiB); larger ones are virtio_host_page_alloc",
          .scope = "virtio_vsock",
          .plausible = {20, 3000},
          .basis = "Same as virtio_guest_alloc.",
          .sources = "[R20], [R22]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_page_alloc),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one host kmalloc above 8 KiB, from the page allocator (a 64 KiB packet's buffer or skb head, in "
                 "the host's send path and vhost's tx kick)",
          .scope = "virtio_vsock",
          .plausible = {200, 5000},
          .basis = "Same as virtio_guest_page_alloc.",
          .sources = "[R23], [R24], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_page_alloc_pcp),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one host kmalloc of 8-32 KiB from the page allocator's per-CPU lists, with "
                 "virtio_vsock.pcp_high_order",
          .scope = "virtio_vsock",
          .plausible = {100, 2000},
          .basis = "Same as virtio_guest_page_alloc_pcp.",
          .sources = "[R23], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_free),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "freeing one host packet",
          .scope = "virtio_vsock",
          .plausible = {15, 1500},
          .basis = "Same as virtio_guest_free.",
          .sources = "[R20], [R23]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host virtio_transport_send_pkt_info per packet (credit, header, send list)",
          .scope = "virtio_vsock",
          .plausible = {150, 3000},
          .basis = "(derived) As virtio_guest_pkt; queueing vhost work wakes the vhost worker (try_to_wake_up; its "
                   "IPI is virtio_host_wake_ipi).",
          .sources = "[R20], [R11]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_copy_fixed),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "fixed cost of one host kernel copy",
          .scope = "virtio_vsock",
          .plausible = {30, 300},
          .basis = "Same as guest_copy_fixed.",
          .sources = "[R30], [R32]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "the host writer's copy of its buffer into new packets (memcpy_from_msg); the reader's copy out is "
                 "virtio_host_rx_copy_bytes_per_cycle",
          .scope = "virtio_vsock",
          .plausible = {1.0, 32},
          .basis = "Same copy physics as guest_copy_bytes_per_cycle.",
          .sources = "[R31], [R29], [R27], [R28]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_dequeue_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "host virtio_transport_stream_do_dequeue per packet touched",
          .scope = "virtio_vsock",
          .plausible = {50, 600},
          .basis = "Same as virtio_guest_dequeue_pkt.",
          .sources = "[R20], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_worker_run),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "vhost worker: one work item run (handle_tx_kick or send_pkt_work) fixed cost",
          .scope = "virtio_vsock",
          .plausible = {300, 3000},
          .basis = "(derived) Worker loop, vq mutex, disabling and re-enabling notification with a barrier; every "
                   "guest-memory access is a copy_user with access_ok and (unless nosmap) stac/clac, costly enough "
                   "that a 2019 RFC bypassing them gained 24% tx packets per second.",
          .sources = "[R33], [R32]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_tx_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "vhost per guest tx chain: vhost_get_vq_desc, header copy, recv_pkt, add_used",
          .scope = "virtio_vsock",
          .plausible = {500, 5000},
          .basis = "(derived) vhost_get_vq_desc (avail index, ring entry and descriptors read through copy_user, "
                   "misses on guest-written lines), a 44-byte header copy, delivery to the socket with a reader "
                   "wake-up, add_used and a barrier.",
          .sources = "[R33], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_rx_buf),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "vhost per guest rx buffer filled: vhost_get_vq_desc, header copy, add_used",
          .scope = "virtio_vsock",
          .plausible = {300, 3000},
          .basis = "(derived) As virtio_host_tx_pkt without socket delivery: descriptor fetch, header write, "
                   "add_used.",
          .sources = "[R33], [R26]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_guest_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "vhost copy bandwidth to and from guest memory (copy_to_iter/copy_from_iter)",
          .scope = "virtio_vsock",
          .plausible = {1.0, 32},
          .basis = "Same copy physics; per-segment copy_user overhead (access_ok, stac/clac, address translation) "
                   "is a fixed cost per segment, not a per-byte one.",
          .sources = "[R31], [R27], [R33], [R32]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_signal),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "vhost_signal: eventfd_signal into irqfd and MSI injection request, on the worker's CPU",
          .scope = "virtio_vsock",
          .plausible = {500, 4000},
          .basis = "(derived) Reading used_event from guest memory, eventfd_signal into irqfd and MSI injection: a "
                   "posted-interrupt descriptor update plus notification IPI for a running vCPU, or a kick and "
                   "wake-up of a halted one.",
          .sources = "[R15], [R11], [R47]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_wake_ipi),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "waking a sleeping thread on another vCPU: the reschedule IPI's ICR write, a VM exit, charged to "
                 "the waker (hypervisor time)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {1500, 6000},
          .basis = "(derived) Without PV IPIs every guest IPI is one VM exit [R12]: an exit and re-entry cost "
                   "~1350-2500 cycles [R16], [R5], plus KVM's x2APIC ICR emulation (its 2019 fastpath saved 200+ "
                   "cycles [R11]); a halted target vCPU adds kvm_vcpu_kick's wake-up of its thread (a trip through "
                   "the host scheduler [R18]).",
          .sources = "[R12], [R16], [R5], [R11], [R18]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_halted_wakeup),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "added to guest_wakeup_latency when the woken thread's vCPU had halted (nothing to run): the host "
                 "brings the vCPU back (kvm_vcpu_kick, host scheduler, C-state exit, VM entry)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {2500, 30000},
          .basis = "A halted vCPU caught by KVM's halt polling needs only the exit and re-entry (~1 us, derived "
                   "from [R16], [R5]); past the poll, a trip through the host scheduler (\"a few micro-seconds\" "
                   "[R18]; 1.2-2.5 us per cross-vCPU switch measured [R17]) and the physical CPU's C-state exit (C1 "
                   "2 us, C1E 10 us on Skylake-SP [R41]); deep C6 (133 us) excluded as untuned.",
          .sources = "[R18], [R17], [R41], [R16], [R5]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_halt_poll_wakeup),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "added to guest_wakeup_latency instead of virtio_guest_halted_wakeup when the woken thread's vCPU "
                 "had halted and KVM was still polling for it (kvm_vcpu_halt within the vCPU's halt_poll_ns window): "
                 "the wake event seen by the poll loop and the VM entry, no host scheduler trip",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {1000, 10000},
          .basis = "The exit and re-entry of a halted vCPU caught by polling, ~1 us (KVM_RUN 2528-2576 cycles "
                   "with ~1350 in VMRUN [R16]; a direct exit ~2000 cycles [R5]); the halt-polling documentation says "
                   "polling saves the scheduler trip of \"a few micro-seconds\" [R18]; the top allows a posted "
                   "interrupt's notification and the guest's idle exit (derived).",
          .sources = "[R16], [R5], [R18]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_kvm_halt_poll_ns),
          .unit = "ns",
          .range = {0, 1e9},
          .doc = "the host KVM module's halt_poll_ns: the most a halted vCPU polls for a wake event before its "
                 "thread sleeps (kvm_vcpu_halt; each vCPU's window grows from 10 us by x2 after a short halt it "
                 "missed and shrinks, by virtio_kvm_halt_poll_ns_shrink, after one longer than this); 0 turns halt "
                 "polling off",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {0, 500000},
          .basis = "KVM_HALT_POLL_NS_DEFAULT is 200000 ns on x86 (arch/x86/include/asm/kvm_host.h), with "
                   "halt_poll_ns_grow 2 and halt_poll_ns_grow_start 10000 (virt/kvm/kvm_main.c); the shrink is "
                   "virtio_kvm_halt_poll_ns_shrink. The module parameter is writable, and [R18] describes tuning it.",
          .sources = "[R18]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_kvm_halt_poll_ns_shrink),
          .unit = "factor",
          .range = {0, 64},
          .doc = "the host KVM module's halt_poll_ns_shrink: after a halt longer than virtio_kvm_halt_poll_ns "
                 "the vCPU's polling window is divided by it (and closed below 10 us); 0 closes it at once "
                 "(shrink_halt_poll_ns: Linux before 6.11), 2 halves it (6.11 on; absent: 2)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {0, 8},
          .absent = 2,
          .basis = "virt/kvm/kvm_main.c: halt_poll_ns_shrink was 0 (\"Default resets per-vcpu halt_poll_ns\") "
                   "until the KVM generic pull for 6.11 enabled halving by default (\"KVM: enable halt polling "
                   "shrink parameter by default\", Intel, posted 2023-11-02): a host kernel's version gives it.",
          .sources = "[R78]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_wake_ipi),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "waking a sleeping host thread on another CPU (vhost worker, application): try_to_wake_up's remote "
                 "enqueue and reschedule IPI, charged to the waker (for a guest kick's ioeventfd wake-up of vhost, "
                 "the kicking vCPU)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {300, 3000},
          .basis = "(derived) Native x2APIC ICR write and the remote wake-up path (ttwu_queue, rq lock); no VM exit.",
          .sources = "[R20], [R11]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_kick_latency),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "guest notify write until its ioeventfd queues the vhost work (exit handling, eventfd; the "
                 "worker's own wake-up is host_wakeup_latency)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {1000, 7500},
          .basis = "Exit to the in-kernel handler (world switch ~1350-2000 cycles), fast-MMIO ioeventfd match and "
                   "eventfd_signal into the vhost poll queue (worker wake-up excluded).",
          .sources = "[R5], [R16], [R14]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_interrupt_latency),
          .unit = "cycles latency",
          .range = {0, 1e8},
          .doc = "vhost_signal until the interrupt runs on guest vCPU 0",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {1500, 50000},
          .basis = "A running vCPU with posted interrupts takes the notification IPI in ~0.5-1 us (derived); a "
                   "halted vCPU needs its thread woken and re-entered (1.2-2.5 us per cross-vCPU switch measured) "
                   "plus C-state exit; ~20 us upper bound excludes deep C6.",
          .sources = "[R17], [R18], [R8], [R41]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_zcopy_pin_page),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (guest sender, workload.zerocopy): pinning one user page and adding it as a packet "
                 "fragment (__zerocopy_sg_from_iter: get_user_pages_fast, skb_fill_page_desc), instead of copying it",
          .scope = "virtio_vsock",
          .plausible = {30, 1000},
          .basis = kPinPageBasis,
          .sources = "[R51], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_zcopy_unpin_page),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (guest): releasing one pinned page when its packet is freed (skb_release_data: put_page "
                 "of each fragment), in the tx work after the device used the packet",
          .scope = "virtio_vsock",
          .plausible = {10, 500},
          .basis = kUnpinPageBasis,
          .sources = "[R51], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_zcopy_notify),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (guest): the completion of one enqueue call when its last packet is freed "
                 "(msg_zerocopy_callback: the notification queued on the error queue or merged into its tail, "
                 "sk_error_report, the pinned-memory accounting undone)",
          .scope = "virtio_vsock",
          .plausible = {200, 4000},
          .basis = kNotifyBasis,
          .sources = "[R51], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_errqueue_recv),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (guest): the benchmark's recvmsg(MSG_ERRQUEUE) reading one notification (entry/exit, "
                 "sock_recv_errqueue: dequeue, put_cmsg, free)",
          .scope = "virtio_vsock",
          .plausible = {500, 5000},
          .basis = kErrqueueBasis,
          .sources = "[R1], [R2], [R3], [R51]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_zcopy_pin_page),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (host sender, workload.zerocopy): pinning one user page and adding it as a packet "
                 "fragment (__zerocopy_sg_from_iter: get_user_pages_fast, skb_fill_page_desc), instead of copying it",
          .scope = "virtio_vsock",
          .plausible = {30, 1000},
          .basis = kPinPageBasis,
          .sources = "[R51], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_zcopy_unpin_page),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (host): releasing one pinned page when its packet is freed (skb_release_data: put_page "
                 "of each fragment), in the vhost worker after it copied the packet into guest buffers",
          .scope = "virtio_vsock",
          .plausible = {10, 500},
          .basis = kUnpinPageBasis,
          .sources = "[R51], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_zcopy_notify),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (host): the completion of one enqueue call when its last packet is freed "
                 "(msg_zerocopy_callback: the notification queued on the error queue or merged into its tail, "
                 "sk_error_report, the pinned-memory accounting undone)",
          .scope = "virtio_vsock",
          .plausible = {200, 4000},
          .basis = kNotifyBasis,
          .sources = "[R51], [R20]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_errqueue_recv),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "MSG_ZEROCOPY (host): the benchmark's recvmsg(MSG_ERRQUEUE) reading one notification (entry/exit, "
                 "sock_recv_errqueue: dequeue, put_cmsg, free)",
          .scope = "virtio_vsock",
          .plausible = {500, 5000},
          .basis = kErrqueueBasis,
          .sources = "[R1], [R2], [R3], [R51]",
      },
      // init_on_alloc (mm/page_alloc.c want_init_on_alloc): a kernel
      // setting, not a cost; it lives in the profile because it is a fact of
      // the measured machine's kernels, as virtio_kvm_halt_poll_ns is.
      {
          VSIM_COST_NAME(Costs, virtio_guest_init_on_alloc),
          .unit = "flag",
          .range = {0, 1},
          .doc = "1: the guest kernel zeroes every allocation (init_on_alloc=1, CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y): "
                 "each packet's buffer or skb head is zeroed whole as kmalloc rounded it (a 64 KiB packet's skb head "
                 "is 128 KiB) at virtio_zero_bytes_per_cycle; 0: not (the upstream default)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {0, 1},
          .basis = "A boot option and Kconfig default since Linux 5.3 (6471384af2a6): y in Ubuntu's kernels since "
                   "19.10, Debian's since 11, Arch's, and Fedora's from about 6.9-6.11; not set in RHEL 8-10 and "
                   "SUSE. post_alloc_hook() zeroes all 2^order pages of a page allocation, SLUB the whole object.",
          .sources = "[R53], [R56]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_init_on_alloc),
          .unit = "flag",
          .range = {0, 1},
          .doc = "1: the host kernel zeroes every allocation (init_on_alloc=1): vhost's skb for each guest packet "
                 "(128 KiB for a 64 KiB packet), the host sender's packets; 0: not",
          .scope = "virtio_vsock",
          .plausible = {0, 1},
          .basis = "As virtio_guest_init_on_alloc; host and guest kernels are configured apart.",
          .sources = "[R53], [R56]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_guest_rx_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "the guest reader's copy out of a received packet (memcpy_to_msg; and the rx worker's copy of a "
                 "small packet into the previous one), whose data the vhost worker wrote on another core",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {1.0, 32},
          .basis = "As guest_copy_bytes_per_cycle, with the source lines in another core's cache (tie "
                   "copy_remote: 2.5-16 B/cycle).",
          .sources = "[R26], [R57], [R59]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_host_rx_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "the host reader's copy out of a received packet (memcpy_to_msg), whose data the vhost worker "
                 "wrote on another core",
          .scope = "virtio_vsock",
          .plausible = {1.0, 32},
          .basis = "As virtio_guest_rx_copy_bytes_per_cycle.",
          .sources = "[R26], [R57], [R59]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_zero_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "the rate at which init_on_alloc zeroes a block just allocated (clear_page_erms, memset: rep "
                 "stosb), guest and host alike (the same cores under KVM)",
          .scope = "virtio_vsock,firecracker_vsock",
          .plausible = {2, 32},
          .basis = "A store stream: at most one 32-byte store per cycle from L1/L2 on Skylake-class cores; a block "
                   "just freed is cache-resident and nearer the top, a DRAM-resident clear_page runs 4.1 GB/s on "
                   "Broadwell (about 1.7-2 B/cycle) and 8.8-12 GB/s on Icelake-X (2.3-3.4 B/cycle), the bottom.",
          .sources = "[R54], [R55], [R31]",
      },
      {
          VSIM_COST_NAME(Costs, virtio_l2_bytes),
          .unit = "bytes",
          .range = {0, 64 << 20},
          .doc = "each core's private L2 (its size): a line a core wrote is read out of that L2 by another core "
                 "until as many bytes have come into it since, then out of the shared L3 at "
                 "virtio_l3_copy_bytes_per_cycle (models/cache_reuse.hpp); 0: not modelled (every copy of another "
                 "core's data at its copy_remote rate)",
          .scope = "virtio_vsock",
          .plausible = {128 << 10, 2 << 20},
          .basis = "A fact of the CPU: 256 KiB per core on Skylake and Comet Lake desktops, 1 MiB on Skylake-SP and "
                   "Cascade Lake, 1.25 MiB on Ice Lake-SP, 2 MiB on Sapphire Rapids (Intel's product pages).",
          .sources = "[R75]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(Costs, virtio_l3_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0, 1e3},
          .doc = "a copy whose source lines another core wrote and its L2 has since evicted to the shared L3 "
                 "(virtio_l2_bytes): a reader's copy out of a packet vhost filled long enough ago, vhost's copy of "
                 "a packet written long enough ago; guest and host alike",
          .scope = "virtio_vsock",
          .plausible = {4, 18},
          .basis = "An L3-resident copy on one core: Skylake client parts sustain about 18 B/cycle of L3 loads, "
                   "Skylake-SP about 15 (Intel's optimization manual); likwid's single-core L3 copy on a Xeon Gold "
                   "6148 moved 24.3 GB/s read and written at 2.4 GHz, about 5 B/cycle copied (the mesh's floor).",
          .sources = "[R57], [R58]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(Costs, fc_loop_iter),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker's VMM thread: one pass of its event loop (EventManager::run: the epoll_wait syscall "
                 "returning ready fds, the dispatch to the device's handler under its mutex), besides the handlers' "
                 "own work",
          .scope = "firecracker_vsock",
          .plausible = {600, 8000},
          .basis = "(derived) A syscall entry/exit (190-240 ns with KPTI) plus seccomp (fc_seccomp, apart), epoll's "
                   "ready-list walk and copy-out, a Rust dispatch through the subscriber map and an uncontended mutex: "
                   "0.3-2.5 us at 3 GHz.",
          .sources = "[R1], [R2], [R67]",
      },
      {
          VSIM_COST_NAME(Costs, fc_eventfd_read),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: the queue eventfd's read() in handle_txq_event / handle_rxq_event (EventFd::read)",
          .scope = "firecracker_vsock",
          .plausible = {300, 4000},
          .basis = "(derived) A syscall entry/exit (190-240 ns with KPTI) and an eventfd counter read under its "
                   "wait-queue lock.",
          .sources = "[R1], [R2], [R67]",
      },
      {
          VSIM_COST_NAME(Costs, fc_muxer_epoll),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: the muxer's nested epoll_wait(0) in VsockMuxer::notify (one per backend event), before "
                 "the per-connection handling",
          .scope = "firecracker_vsock",
          .plausible = {300, 4000},
          .basis =
              "(derived) As fc_eventfd_read: a syscall, and epoll's ready list of the nested fd (up to 32 events).",
          .sources = "[R1], [R2], [R67]",
      },
      {
          VSIM_COST_NAME(Costs, fc_epoll_ctl),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: one epoll_ctl(EPOLL_CTL_MOD) of a connection's socket when its polled events change "
                 "(VsockMuxer::apply_conn_mutation: IN dropped at zero peer credit and restored, OUT while its TxBuf "
                 "holds data)",
          .scope = "firecracker_vsock",
          .plausible = {300, 4000},
          .basis = "(derived) A syscall entry/exit and ep_modify's poll of the file under the epoll mutex.",
          .sources = "[R1], [R2], [R67]",
      },
      {
          VSIM_COST_NAME(Costs, fc_tx_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: one tx chain (Queue::pop, VsockPacket::from_tx_virtq_head's descriptor checks and "
                 "header copy, VsockMuxer::send_pkt's lookup and VsockConnection::send_pkt's credit fields, add_used), "
                 "its write() apart",
          .scope = "firecracker_vsock",
          .plausible = {200, 4000},
          .basis = "(derived) Guest-memory reads of the avail ring, the descriptor and the 44-byte header with Rust's "
                   "bounds checks (vm-memory), a BTreeMap/HashMap lookup and the used-ring writes with a fence: some "
                   "hundreds of cycles, at most ~1 us with cache misses on the guest's lines.",
          .sources = "[R67]",
      },
      {
          VSIM_COST_NAME(Costs, fc_rx_probe),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: an rx queue pop that finds no guest buffer (Queue::pop returning None, or a pop and "
                 "undo_pop when the backend has nothing)",
          .scope = "firecracker_vsock",
          .plausible = {50, 1500},
          .basis = "(derived) An avail-index read of guest memory, a compare, and the handler's bookkeeping.",
          .sources = "[R67]",
      },
      {
          VSIM_COST_NAME(Costs, fc_rx_pkt),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: one rx chain filled (Queue::pop, VsockPacket::from_rx_virtq_head, VsockMuxer::recv_pkt "
                 "and VsockConnection::recv_pkt's choice of packet, commit_hdr's 44-byte header write, add_used), its "
                 "read() apart",
          .scope = "firecracker_vsock",
          .plausible = {200, 4000},
          .basis = "(derived) As fc_tx_pkt: ring and descriptor accesses in guest memory, the muxer's rx queue, a "
                   "header write.",
          .sources = "[R67]",
      },
      {
          VSIM_COST_NAME(Costs, fc_irq),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: one interrupt to the guest on the VMM thread (IrqTrigger::trigger_irq: the "
                 "interrupt-status atomic and a write() to the irqfd: eventfd_signal, irqfd_wakeup); with "
                 "fc_irqfd_inject above 0 the injection itself is a kworker's, else it is included here",
          .scope = "firecracker_vsock",
          .plausible = {400, 6000},
          .basis = "(derived) A syscall entry/exit (190-240 ns with KPTI), the eventfd's wake-up of the irqfd and "
                   "schedule_work() waking a kworker on the same core; with the injection inline, KVM's kvm_set_irq "
                   "through the IOAPIC route and a kick of the target vCPU (an IPI of 3200-4200 cycles when it runs).",
          .sources = "[R1], [R2], [R64], [R65]",
      },
      {
          VSIM_COST_NAME(Costs, fc_irqfd_inject),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker on x86: KVM's injection of the device's interrupt, run by a kworker on the VMM's core "
                 "(irqfd_inject: kvm_set_irq up and down through the IOAPIC route, the kick of the target vCPU), "
                 "not the VMM thread's CPU time; 0: inline in fc_irq (the model before)",
          .scope = "firecracker_vsock",
          .plausible = {1000, 8000},
          .basis = "(derived) Firecracker's devices sit on legacy GSIs (5-23) routed to the in-kernel IOAPIC, which "
                   "kvm_arch_set_irq_inatomic (arch/x86/kvm/irq_comm.c) does not inject from the eventfd's wake-up "
                   "(MSI and Hyper-V SINT only), so irqfd_wakeup (virt/kvm/eventfd.c) schedule_work()s it: two "
                   "kvm_set_irq calls under the IOAPIC's lock, the LAPIC's delivery and a kick (an IPI of 3200-4200 "
                   "cycles when the vCPU runs), and process_one_work around them.",
          .sources = "[R64], [R65], [R77]",
          .absent = 0,
      },
      {
          VSIM_COST_NAME(Costs, fc_seccomp),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: the seccomp BPF filter the VMM thread runs on each of its syscalls (epoll_wait, read, "
                 "write, epoll_ctl), added to each",
          .scope = "firecracker_vsock",
          .plausible = {20, 2000},
          .basis = "(derived) Firecracker installs a BPF filter of a few dozen to a few hundred instructions per "
                   "thread; classic BPF runs ~1 instruction per cycle with the JIT, and the kernel's seccomp entry "
                   "adds tens of cycles.",
          .sources = "[R67], [R68]",
      },
      {
          VSIM_COST_NAME(Costs, fc_unix_syscall),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one read() or write() on an AF_UNIX stream socket besides its skbs and copies (syscall entry/exit, "
                 "unix_stream_sendmsg / unix_stream_read_generic's locks, peer lookup and accounting, the peer's "
                 "wake-up call): the VMM's and the host application's",
          .scope = "firecracker_vsock",
          .plausible = {400, 5000},
          .basis =
              "(derived) A syscall entry/exit (190-240 ns with KPTI) and the socket's state and queue lock work, as a "
              "vsock sendmsg/recvmsg's fixed part (virtio_guest_send_syscall: 300-3000 cycles) with the wake-up.",
          .sources = "[R1], [R2], [R3]",
      },
      {
          VSIM_COST_NAME(Costs, fc_unix_skb),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "one AF_UNIX skb: allocated by the writer (sock_alloc_send_pskb / alloc_skb_with_frags: a head and up "
                 "to 32 KiB of page fragments) and freed by the reader once consumed (consume_skb, sock_wfree)",
          .scope = "firecracker_vsock",
          .plausible = {200, 5000},
          .basis = "(derived) An skb head from SLUB (20-50 cycles fast path) plus an order-3 page allocation for the "
                   "fragments (zone->lock or the per-CPU lists; a few hundred to ~2000 cycles) and their release.",
          .sources = "[R20], [R23], [R24]",
      },
      {
          VSIM_COST_NAME(Costs, fc_vcpu_mmio_exit),
          .unit = "cycles",
          .range = {0, 1e7},
          .doc = "Firecracker: one guest MMIO access handled in the VMM (KVM_EXIT_MMIO to the vCPU thread, the MMIO "
                 "bus lookup and MmioTransport's register, KVM_RUN again), charged to the guest's vCPU; virtio-mmio's "
                 "vm_interrupt makes two per interrupt",
          .scope = "firecracker_vsock",
          .plausible = {1500, 15000},
          .basis = "(derived) A VM exit and entry round trip is 1000-1800 cycles [R61]-[R63]; an exit to user space "
                   "adds the ioctl return and re-entry (a syscall each way, 190-240 ns with KPTI) and the VMM's own "
                   "lookup: 0.5-5 us.",
          .sources = "[R61], [R62], [R63], [R1]",
      },
      {
          VSIM_COST_NAME(Costs, fc_host_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "the host application's copy of its own buffer into an AF_UNIX skb (skb_copy_datagram_from_iter in "
                 "unix_stream_sendmsg), hot in its core's cache",
          .scope = "firecracker_vsock",
          .plausible = {1, 32},
          .basis = "As guest_copy_bytes_per_cycle: the same cores and copy routine (tie copy_hot).",
          .sources = "[R31], [R57], [R58]",
      },
      {
          VSIM_COST_NAME(Costs, fc_host_rx_copy_bytes_per_cycle),
          .unit = "bytes/cycle",
          .range = {0.01, 1e3},
          .doc = "a copy whose source another core has just written, on Firecracker's host side: the VMM's write() "
                 "from guest memory into an skb, its read() from an skb into a guest rx buffer, the host reader's "
                 "read() out of the skbs the VMM filled",
          .scope = "firecracker_vsock",
          .plausible = {1, 32},
          .basis = "As virtio_guest_rx_copy_bytes_per_cycle (tie copy_remote).",
          .sources = "[R26], [R57], [R59]",
      },
  };
  return t;
}

Costs Costs::from(const Params& p)
{
  return fill_costs(p, fields());
}

// The copies by situation. Under KVM the guest runs on the host's cores, and
// both kernels copy with the same routine (copy_user_generic: rep movsb with
// ERMS), so a copy's rate follows where its source's lines are, not which
// side copies; each situation's range is for Skylake-class cores (Skylake-SP
// servers of 2017-2019, Comet Lake desktops).
const std::vector<CostTie>& Costs::ties()
{
  static const std::vector<CostTie> t = {
      {"copy_hot",
       "virtio_vsock",
       {"guest_copy_bytes_per_cycle", "virtio_host_copy_bytes_per_cycle"},
       {8, 32},
       "a writer's copy of its own buffer, hot in its core's L1/L2, into a new packet (memcpy_from_msg in "
       "virtio_transport_send_pkt_info), guest and host",
       "The same cores and copy routine on both sides. An L1/L2-resident copy is bounded by one 32-byte store per "
       "cycle; Skylake-class cores sustain about 29 B/cycle of L2 loads (Intel's optimization manual) and "
       "single-core likwid copies of L2-resident data ran about 14.6 B/cycle copied on a Xeon Gold 6148.",
       "[R31], [R57], [R58]"},
      {"copy_remote",
       "virtio_vsock",
       {"virtio_guest_rx_copy_bytes_per_cycle", "virtio_host_rx_copy_bytes_per_cycle",
        "virtio_host_guest_copy_bytes_per_cycle"},
       {2.5, 16},
       "a copy whose source another core has just written: a reader's copy out of a packet the vhost worker "
       "filled, vhost's copy of the guest's or the host writer's packet (copy_from_iter / copy_to_iter)",
       "Every source line is pulled from another core's cache through the shared L3, the same on both sides. "
       "Above: Skylake-class L3 loads sustain 15-18 B/cycle; below: the in-kernel vhost-vsock backend alone moved "
       "about 93 Gbit/s host to guest at 64 KiB on a 2026 machine, at least ~2.5 B/cycle of copy, and the "
       "modified-line transfer latency (40 ns) with ~10 lines in flight gives ~4-5 B/cycle.",
       "[R26], [R57], [R59]"},
  };
  return t;
}

// The same situations on Firecracker's host side: its host application and
// VMM copy with the host kernel's routine on the guest's cores' neighbours.
const std::vector<CostTie>& Costs::firecracker_ties()
{
  static const std::vector<CostTie> t = {
      {"copy_hot",
       "firecracker_vsock",
       {"guest_copy_bytes_per_cycle", "fc_host_copy_bytes_per_cycle"},
       {8, 32},
       "a writer's copy of its own buffer, hot in its core's L1/L2, into a new packet or skb (the guest's "
       "memcpy_from_msg, the host application's write() on its AF_UNIX socket)",
       "As virtio_vsock's copy_hot: the same cores and copy routine on both sides.",
       "[R31], [R57], [R58]"},
      {"copy_remote",
       "firecracker_vsock",
       {"virtio_guest_rx_copy_bytes_per_cycle", "fc_host_rx_copy_bytes_per_cycle"},
       {2.5, 16},
       "a copy whose source another core has just written: the guest reader's copy out of an rx buffer the VMM "
       "filled, the VMM's copies between guest memory and AF_UNIX skbs, the host reader's copy out of them",
       "As virtio_vsock's copy_remote: every source line comes from another core's cache through the shared L3.",
       "[R26], [R57], [R59]"},
  };
  return t;
}

std::vector<CostDecl> Costs::decls()
{
  return decls_of(fields());
}

} // namespace vsim::virtio_vsock::detail
