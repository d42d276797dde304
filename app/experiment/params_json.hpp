// A point's resolved parameters as JSON, as results and point files hold
// them ("params"): each value as its own JSON type, keys in order.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/params.hpp"

namespace vsim::app {

nlohmann::ordered_json value_json(const Value& v);
nlohmann::ordered_json params_json(const Params& params);

} // namespace vsim::app
