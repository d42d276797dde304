#include "app/experiment/origin.hpp"

#include <fmt/format.h>

#include "app/experiment/experiment.hpp"

namespace vsim::app::load {

std::string Origin::prefix() const
{
  if (!set_text.empty())
    return fmt::format("--set '{}': error: ", set_text);
  if (line > 0)
    return fmt::format("{}:{}:{}: error: ", file, line, column);
  if (!file.empty())
    return fmt::format("{}: error: ", file);
  return "error: ";
}

Origin in_file(const std::string& file, int line, int column)
{
  Origin o;
  o.file = file;
  o.line = line;
  o.column = column;
  return o;
}

Origin in_set(const std::string& entry)
{
  Origin o;
  o.set_text = entry;
  return o;
}

[[noreturn]] void fail(const Origin& at, const std::string& key, const std::string& what)
{
  throw InputError(at.prefix() + (key.empty() ? "" : key + ": ") + what);
}

std::string with_allowed(const std::string& what, const std::string& allowed)
{
  return allowed.empty() ? what : what + " (allowed: " + allowed + ")";
}

} // namespace vsim::app::load
