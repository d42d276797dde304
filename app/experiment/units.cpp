#include "app/experiment/units.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

namespace vsim::app {

namespace {

struct Unit {
  std::string_view name;
  std::int64_t bytes;
};

// Largest multiplier first within each family; format_size relies on it.
constexpr std::array<Unit, 7> kUnits = {{
    {"B", 1},
    {"KiB", 1ll << 10},
    {"MiB", 1ll << 20},
    {"GiB", 1ll << 30},
    {"kB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
}};

bool is_digit(char c)
{
  return c >= '0' && c <= '9';
}
bool is_space(char c)
{
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s)
{
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> fail(std::string* why, std::string message)
{
  if (why)
    *why = std::move(message);
  return std::nullopt;
}

} // namespace

const std::string& size_units_list()
{
  static const std::string list = [] {
    std::string s;
    for (const auto& u : kUnits)
      s += (s.empty() ? "" : ", ") + std::string(u.name);
    return s;
  }();
  return list;
}

std::optional<std::int64_t> parse_size(std::string_view text, std::string* why)
{
  const std::string shown(text);
  const std::string_view s = trim(text);
  const std::string expected =
      "(allowed: a whole number of bytes, or <number><unit> with unit " + size_units_list() + ")";
  if (s.empty())
    return fail(why, "empty size " + expected);
  if (s.front() == '-')
    return fail(why, fmt::format("'{}' is negative {}", shown, expected));

  // Digits, optionally '.' and more digits, kept exactly as an integer
  // mantissa scaled by 10^-decimals so no floating point rounding happens.
  // Fraction zeros are only taken in when a non-zero digit follows them, so
  // "1.000KiB" costs nothing and the mantissa stays small.
  const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 90; // x 2^30 (GiB) still fits
  unsigned __int128 mantissa = 0;
  int decimals = 0;
  int pending_zeros = 0;
  bool any_digit = false;
  bool too_large = false;
  auto push = [&](int digit) {
    mantissa = mantissa * 10 + static_cast<unsigned>(digit);
    too_large = too_large || mantissa > cap;
  };
  std::size_t i = 0;
  for (; i < s.size() && is_digit(s[i]) && !too_large; ++i, any_digit = true)
    push(s[i] - '0');
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && is_digit(s[i]) && !too_large; ++i, any_digit = true) {
      if (s[i] == '0') {
        ++pending_zeros;
        continue;
      }
      for (; pending_zeros > 0 && !too_large; --pending_zeros, ++decimals)
        push(0);
      push(s[i] - '0');
      ++decimals;
    }
  }
  if (!any_digit)
    return fail(why, fmt::format("'{}' is not a size {}", shown, expected));
  if (too_large)
    return fail(why, fmt::format("'{}' is too large (allowed: at most {} bytes)", shown,
                                 std::numeric_limits<std::int64_t>::max()));

  const std::string_view unit_text = trim(s.substr(i));
  std::int64_t multiplier = 1;
  if (!unit_text.empty()) {
    const Unit* unit = nullptr;
    for (const auto& u : kUnits)
      if (u.name == unit_text)
        unit = &u;
    if (!unit)
      return fail(why, fmt::format("unknown unit '{}' in '{}' (allowed: {})", unit_text, shown, size_units_list()));
    multiplier = unit->bytes;
  }

  // With decimals the mantissa ends in a non-zero digit, so mantissa x
  // multiplier is non-zero and below 2^120 < 10^37: no multiple of 10^37.
  if (decimals > 36)
    return fail(why, fmt::format("'{}' is not a whole number of bytes", shown));
  unsigned __int128 scale = 1;
  for (int d = 0; d < decimals; ++d)
    scale *= 10;
  const unsigned __int128 product = mantissa * static_cast<unsigned __int128>(multiplier);
  if (product % scale != 0)
    return fail(why, fmt::format("'{}' is not a whole number of bytes", shown));
  const unsigned __int128 bytes = product / scale;
  if (bytes > static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()))
    return fail(why, fmt::format("'{}' is too large (allowed: at most {} bytes)", shown,
                                 std::numeric_limits<std::int64_t>::max()));
  return static_cast<std::int64_t>(bytes);
}

std::string format_size(std::int64_t bytes)
{
  const Unit* best = &kUnits[0];
  if (bytes != 0)
    for (const auto& u : kUnits)
      if (bytes % u.bytes == 0 && u.bytes > best->bytes)
        best = &u;
  return fmt::format("{}{}", bytes / best->bytes, best->name);
}

std::optional<double> parse_duration_us(std::string_view text, std::string* why)
{
  const std::string_view t = trim(text);
  std::size_t end = 0;
  while (end < t.size() && (is_digit(t[end]) || t[end] == '.'))
    ++end;
  const std::string number(t.substr(0, end));
  const std::string_view unit = trim(t.substr(end));
  auto bad = [&](const std::string& what) -> std::optional<double> {
    if (why)
      *why = fmt::format("'{}': {} (allowed: a number of ns, us, ms or s, e.g. 50us, 1.5ms; no unit: us)", text, what);
    return std::nullopt;
  };
  if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1)
    return bad("expected a non-negative number");
  const double v = std::stod(number);
  static constexpr std::array<std::pair<std::string_view, double>, 4> kTime = {
      {{"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}}};
  if (unit.empty())
    return v;
  for (const auto& [name, us] : kTime)
    if (unit == name)
      return v * us;
  return bad(fmt::format("unknown unit '{}'", unit));
}

} // namespace vsim::app
