// Small text helpers every layer above uses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vsim::app {

// The items with `sep` between them ("a, b, c").
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

} // namespace vsim::app
