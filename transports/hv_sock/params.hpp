// hv_sock's user-facing parameters (the `hv_sock.*` experiment keys).
#pragma once
#include "sim/params.hpp"

namespace vsim::hv_sock {
void declare_params(ParamRegistry& reg);
}
