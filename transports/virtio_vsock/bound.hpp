// virtio-vsock's platform plan for the analytic bound: its threads, their
// CPUs (the pinning virtio_vsock.cpp's simulate() uses) and the cycles each
// spends per MB of payload, from the costs and the mechanisms of docs/model.md.
#pragma once

#include <string>
#include <utility>

#include "transports/simulate.hpp"

namespace vsim::virtio_vsock {

// Costs that depend on waiting (kicks, interrupts, wake-ups) are left out
// and per-run costs (work item runs, interrupt entry) are spread over a
// full queue, so each figure is a lower bound on the cycles per MB. Credit
// updates are counted at their least frequent (one per recv() with
// every_read; one per buf_alloc - credit_threshold bytes otherwise).
PlatformPlan platform_plan(const Params& p);
// firecracker_vsock's plan, with the VMM thread for vhost.
PlatformPlan firecracker_plan(const Params& p);
// Combinations of valid values firecracker_vsock does not model ({key,
// why}; empty key: none).
std::pair<std::string, std::string> firecracker_refusal(const Params& p);

} // namespace vsim::virtio_vsock
