// virtio-vsock's user-facing parameters (the `virtio_vsock.*` experiment
// keys) and the kernel presets that give every knob its default.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/params.hpp"

namespace vsim::virtio_vsock {

void declare_params(ParamRegistry& reg);

// Knobs whose default comes from `virtio_vsock.preset` carry this as their
// default text.
inline const char* kFromPreset = "(preset)";

struct Preset {
  std::string name;
  std::string doc;
  std::map<std::string, std::string> values; // key path -> value as written in YAML
};
const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);

} // namespace vsim::virtio_vsock
