#include "app/experiment/params_json.hpp"

#include <variant>

namespace vsim::app {

nlohmann::ordered_json value_json(const Value& v)
{
  return std::visit([](const auto& x) { return nlohmann::ordered_json(x); }, v);
}

nlohmann::ordered_json params_json(const Params& params)
{
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, value] : params.all())
    j[key] = value_json(value);
  return j;
}

} // namespace vsim::app
