// Byte sizes as users write them: an integer number of bytes, or a number
// followed (optionally after spaces) by B, KiB, MiB, GiB (powers of 2) or
// kB, MB, GB (powers of 10). Decimals are allowed when the result is a whole
// number of bytes ("1.5KiB" = 1536, "0.5B" is an error).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vsim::app {

// Bytes, or nullopt with *why (if given) set to "WHAT (allowed: ...)" naming
// the text. Negative sizes, unknown units, fractions of a byte and values
// above INT64_MAX bytes are errors.
std::optional<std::int64_t> parse_size(std::string_view text, std::string* why = nullptr);

// The shortest exact spelling: 65536 -> "64KiB", 10^12 -> "1000GB", 1000 -> "1kB", 7 -> "7B".
std::string format_size(std::int64_t bytes);

// "B, KiB, MiB, GiB, kB, MB, GB"
const std::string& size_units_list();

// A span of simulated time in microseconds: a non-negative number,
// optionally followed by ns, us, ms or s (none: us): "50us", "1.5ms", "200".
// nullopt with *why set as parse_size does.
std::optional<double> parse_duration_us(std::string_view text, std::string* why = nullptr);

} // namespace vsim::app
