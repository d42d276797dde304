#include "sim/params.hpp"

#include <cmath>

#include <fmt/format.h>

namespace vsim {

std::string preset_values_doc(const std::vector<Preset>& presets, const std::string& path)
{
  std::string out;
  for (const Preset& p : presets)
    out += (out.empty() ? "" : ", ") + p.name + ": " + p.values.at(path);
  return " (" + out + ")";
}

const char* to_string(ParamKind k)
{
  switch (k) {
  case ParamKind::Integer:
    return "integer";
  case ParamKind::Size:
    return "size";
  case ParamKind::Number:
    return "number";
  case ParamKind::Boolean:
    return "boolean";
  case ParamKind::Choice:
    return "choice";
  case ParamKind::Text:
    return "text";
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

Param::Param(std::string path)
{
  spec_.path = std::move(path);
}

Param& Param::kind(ParamKind k)
{
  if (kind_named_)
    throw ParamError("parameter '" + spec_.path + "' names its kind twice");
  spec_.kind = k;
  kind_named_ = true;
  return *this;
}

Param& Param::unit(std::string u)
{
  spec_.unit = std::move(u);
  return *this;
}

Param& Param::def(std::string default_text)
{
  spec_.default_text = std::move(default_text);
  return *this;
}

Param& Param::range(double min, double max)
{
  spec_.min = min;
  spec_.max = max;
  return *this;
}

Param& Param::words(std::vector<std::string> w)
{
  spec_.choices = std::move(w);
  return *this;
}

Param& Param::doc(std::string d)
{
  spec_.doc = std::move(d);
  return *this;
}

Param& Param::kernel(std::string where)
{
  spec_.kernel_source = std::move(where);
  return *this;
}

Param& Param::derives_from(std::vector<std::string> keys)
{
  spec_.derives_from = std::move(keys);
  return *this;
}

Param& Param::check(std::function<std::string(const std::string& text)> f)
{
  spec_.check = std::move(f);
  return *this;
}

Param& Param::scope(std::string transport)
{
  spec_.scope = std::move(transport);
  return *this;
}

Param& Param::plausible(double min, double max)
{
  spec_.plausible_min = min;
  spec_.plausible_max = max;
  return *this;
}

Param& Param::basis(std::string b)
{
  spec_.plausible_basis = std::move(b);
  return *this;
}

Param& Param::allowed(std::string text)
{
  spec_.allowed_text = std::move(text);
  return *this;
}

Param& Param::sources(std::string s)
{
  spec_.plausible_sources = std::move(s);
  return *this;
}

void ParamRegistry::declare(const Param& param)
{
  const ParamSpec& spec = param.spec();
  auto bad = [&](const char* what) { return ParamError("parameter '" + spec.path + "' " + what); };
  if (!param.kind_named())
    throw bad("names no kind");
  const bool numeric =
      spec.kind == ParamKind::Integer || spec.kind == ParamKind::Size || spec.kind == ParamKind::Number;
  if (!numeric && (std::isfinite(spec.min) || std::isfinite(spec.max)))
    throw bad("has a range but is not a number");
  if (!spec.choices.empty() && spec.kind != ParamKind::Choice && spec.kind != ParamKind::Size)
    throw bad("has words but is neither a choice nor a size");
  if (index_.count(spec.path))
    throw bad("declared twice");
  index_[spec.path] = specs_.size();
  specs_.push_back(spec);
}

const ParamSpec* ParamRegistry::find(const std::string& path) const
{
  auto it = index_.find(path);
  return it == index_.end() ? nullptr : &specs_[it->second];
}

} // namespace vsim
