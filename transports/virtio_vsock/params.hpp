// virtio-vsock's user-facing parameters (the `virtio_vsock.*` experiment
// keys) and the kernel presets that give every knob its default.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/params.hpp"

namespace vsim::virtio_vsock {

void declare_params(ParamRegistry& reg);
// firecracker_vsock's own keys (the guest's are virtio_vsock's).
void declare_firecracker_params(ParamRegistry& reg);

// The kernels `virtio_vsock.preset` names; knobs whose default comes from
// it carry kFromPreset (sim/params.hpp) as their default text.
const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);

} // namespace vsim::virtio_vsock
