#include "app/experiment/text.hpp"

#include <fmt/format.h>

namespace vsim::app {

std::string join(const std::vector<std::string>& items, std::string_view sep)
{
  return fmt::format("{}", fmt::join(items, sep));
}

} // namespace vsim::app
