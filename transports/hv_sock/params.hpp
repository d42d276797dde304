// hv_sock's user-facing parameters (the `hv_sock.*` experiment keys).
#pragma once
#include <cstdint>

#include "sim/params.hpp"
#include "transports/hv_sock/ring_math.hpp"

namespace vsim::hv_sock {
void declare_params(ParamRegistry& reg);
// The size of one of a point's rings: SO_SNDBUF/SO_RCVBUF (`key`, capped by
// `sysctl`) through the sizing rule hv_sock.ring_sizing names (ring_math).
std::uint32_t ring_size(const Params& p, const char* key, const char* sysctl, SocketBuffer which);
}
