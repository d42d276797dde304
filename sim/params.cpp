#include "sim/params.hpp"

#include <fmt/format.h>

namespace vsim {

const char* to_string(ParamKind k)
{
  switch (k) {
    case ParamKind::Integer: return "integer";
    case ParamKind::Size: return "size";
    case ParamKind::Number: return "number";
    case ParamKind::Boolean: return "boolean";
    case ParamKind::Choice: return "choice";
    case ParamKind::Text: return "text";
  }
  return "?";
}

std::string value_to_string(const Value& v)
{
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, v);
}

const Value& Params::get(const std::string& path) const
{
  auto it = values_.find(path);
  if (it == values_.end())
    throw ParamError("parameter '" + path + "' is not set");
  return it->second;
}

std::int64_t Params::integer(const std::string& path) const
{
  if (auto* i = std::get_if<std::int64_t>(&get(path)))
    return *i;
  throw ParamError("parameter '" + path + "' is not an integer");
}

double Params::number(const std::string& path) const
{
  const Value& v = get(path);
  if (auto* d = std::get_if<double>(&v))
    return *d;
  if (auto* i = std::get_if<std::int64_t>(&v))
    return static_cast<double>(*i);
  throw ParamError("parameter '" + path + "' is not a number");
}

bool Params::boolean(const std::string& path) const
{
  if (auto* b = std::get_if<bool>(&get(path)))
    return *b;
  throw ParamError("parameter '" + path + "' is not a boolean");
}

const std::string& Params::text(const std::string& path) const
{
  if (auto* s = std::get_if<std::string>(&get(path)))
    return *s;
  throw ParamError("parameter '" + path + "' is not text");
}

bool Params::is_word(const std::string& path, const std::string& word) const
{
  auto* s = std::get_if<std::string>(&get(path));
  return s != nullptr && *s == word;
}

void ParamRegistry::declare(ParamSpec spec)
{
  if (index_.count(spec.path))
    throw ParamError("parameter '" + spec.path + "' declared twice");
  index_[spec.path] = specs_.size();
  specs_.push_back(std::move(spec));
}

const ParamSpec* ParamRegistry::find(const std::string& path) const
{
  auto it = index_.find(path);
  return it == index_.end() ? nullptr : &specs_[it->second];
}

}  // namespace vsim
