// Simulated time: a double counting cycles of the platform clock (every
// cost is a whole number of cycles, so sums of costs are exact).
#pragma once

namespace vsim {

using Time = double;

} // namespace vsim
