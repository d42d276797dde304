// hv_sock's user-facing parameters (the `hv_sock.*` experiment keys).
#pragma once
#include <cstdint>

#include <string>
#include <vector>

#include "sim/params.hpp"
#include "transports/hv_sock/ring_math.hpp"
#include "transports/transport.hpp"

namespace vsim::hv_sock {
void declare_params(ParamRegistry& reg);
// The kernels `hv_sock.preset` names (the Linux side's hyperv_transport.c):
// before and after the 2019 hv_sock series.
const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);
// The size of one of a point's rings: SO_SNDBUF/SO_RCVBUF (`key`, capped by
// `sysctl`) through the sizing rule hv_sock.ring_sizing names (ring_math).
std::uint32_t ring_size(const Params& p, const char* key, const char* sysctl, SocketBuffer which);
// The point's effective ring sizes and host packet size, with what became
// of SO_SNDBUF / SO_RCVBUF on the way (capped by the sysctl, raised to the
// default ring, limited to the largest ring, ignored by fixed sizing).
std::vector<Effective> effective(const Params& p);
// What one connection holds in memory, part by part (memory.cpp): the
// VMBus ring pages each way and the send buffer; their sum is
// memory_bytes_per_connection.
std::vector<Effective> memory(const Params& p);
// Where connection i's threads run (the simulation and the bound): guest
// vCPU (1 + i) mod vcpus (vCPU 0 takes the channel interrupts), host CPU
// i mod host CPUs.
inline int guest_cpu_of(int i, int vcpus)
{
  return (1 + i) % vcpus;
}
inline int host_cpu_of(int i, int host_cpus)
{
  return i % host_cpus;
}
} // namespace vsim::hv_sock
