#include "app/experiment/scalar.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "app/experiment/describe.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/units.hpp"

namespace vsim::app::load {

namespace {

// Plain-scalar classification (YAML 1.2 core schema, decimal only).

bool all_digits(std::string_view s)
{
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

std::string_view unsigned_part(std::string_view s)
{
  if (!s.empty() && (s.front() == '-' || s.front() == '+'))
    s.remove_prefix(1);
  return s;
}

bool looks_integer(std::string_view s)
{
  return all_digits(unsigned_part(s));
}

// [-+]? ( .digits | digits ( . digits? )? ) ( [eE] [-+]? digits )?
bool looks_float(std::string_view s)
{
  s = unsigned_part(s);
  const std::size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos && !looks_integer(s.substr(e + 1)))
    return false;
  const std::size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos)
    return all_digits(mantissa);
  const std::string_view whole = mantissa.substr(0, dot), frac = mantissa.substr(dot + 1);
  return (whole.empty() || all_digits(whole)) && (frac.empty() || all_digits(frac)) && !(whole.empty() && frac.empty());
}

std::optional<std::int64_t> to_int64(std::string_view s)
{
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

} // namespace

std::size_t invalid_utf8_at(std::string_view s)
{
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF; // allowed range of the second byte
    if (b < 0x80)
      len = 1;
    else if (b >= 0xC2 && b <= 0xDF)
      len = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      lo = b == 0xE0 ? 0xA0 : 0x80;
      hi = b == 0xED ? 0x9F : 0xBF;
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      lo = b == 0xF0 ? 0x90 : 0x80;
      hi = b == 0xF4 ? 0x8F : 0xBF;
    } else
      return i;
    if (i + len > s.size())
      return i;
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF))
        return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

namespace {

std::string got(const Scalar& s)
{
  return s.plain ? fmt::format("'{}'", s.text) : fmt::format("quoted text \"{}\"", s.text);
}

// Converting one scalar against its declaration.

class Converter {
public:
  Converter(const ParamSpec& spec, const Scalar& in, const Origin& at) : spec_(spec), in_(in), at_(at) {}

  Value convert() const
  {
    Value v = convert_kind();
    if (spec_.check) {
      std::string why = spec_.check(value_to_string(v));
      if (!why.empty())
        fail(at_, spec_.path, why);
    }
    return v;
  }

private:
  Value convert_kind() const
  {
    switch (spec_.kind) {
    case ParamKind::Integer:
      return integer();
    case ParamKind::Size:
      return size();
    case ParamKind::Number:
      return number();
    case ParamKind::Boolean:
      return boolean();
    case ParamKind::Choice:
      return choice();
    case ParamKind::Text:
      return text();
    }
    throw std::logic_error("unknown parameter kind");
  }

  [[noreturn]] void error(const std::string& what) const
  {
    fail(at_, spec_.path, with_allowed(what, allowed_values(spec_)));
  }

  void check_range(long double v) const
  {
    if (v < spec_.min || v > spec_.max)
      error(fmt::format("{} is out of range", in_.text));
  }

  Value integer() const
  {
    if (!in_.plain || !looks_integer(in_.text))
      error("expected an integer, got " + got(in_));
    auto v = to_int64(in_.text);
    if (!v)
      error(fmt::format("{} is out of range", in_.text));
    check_range(static_cast<long double>(*v));
    return *v;
  }

  Value size() const
  {
    for (const auto& word : spec_.choices)
      if (in_.text == word)
        return in_.text;
    std::int64_t bytes = 0;
    if (in_.plain && looks_integer(in_.text)) {
      auto v = to_int64(in_.text);
      if (!v || *v < 0)
        error(fmt::format("{} is out of range", in_.text));
      bytes = *v;
    } else {
      const char first = in_.text.empty() ? ' ' : in_.text.front();
      if (!(first >= '0' && first <= '9') && first != '.')
        error("expected a size such as 64KiB, got " + got(in_));
      std::string why;
      auto v = parse_size(in_.text, &why);
      if (!v)
        fail(at_, spec_.path, why);
      bytes = *v;
    }
    check_range(static_cast<long double>(bytes));
    return bytes;
  }

  Value number() const
  {
    if (!in_.plain || !(looks_integer(in_.text) || looks_float(in_.text)))
      error("expected a number, got " + got(in_));
    std::string_view s = in_.text;
    if (s.front() == '+')
      s.remove_prefix(1);
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
      error(fmt::format("{} is out of range", in_.text));
    check_range(v);
    return v;
  }

  Value boolean() const
  {
    if (in_.plain && (in_.text == "true" || in_.text == "false"))
      return in_.text == "true";
    error("expected true or false, got " + got(in_));
  }

  Value text() const
  {
    if (const std::size_t at = invalid_utf8_at(in_.text); at != std::string::npos)
      fail(at_, spec_.path, fmt::format("invalid UTF-8 at byte {} of the text (allowed: UTF-8 text)", at + 1));
    return in_.text;
  }

  Value choice() const
  {
    for (const auto& c : spec_.choices)
      if (in_.text == c)
        return in_.text;
    error(fmt::format("'{}' is not one of the choices", in_.text));
  }

  const ParamSpec& spec_;
  const Scalar& in_;
  const Origin& at_;
};

} // namespace

Value convert_scalar(const ParamSpec& spec, const Scalar& in, const Origin& at)
{
  return Converter(spec, in, at).convert();
}

std::string node_kind(const YAML::Node& n)
{
  switch (n.Type()) {
  case YAML::NodeType::Map:
    return "a map";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Scalar:
    return fmt::format("'{}'", n.Scalar());
  default:
    return "no value";
  }
}

const char* expected_kind(ParamKind k)
{
  switch (k) {
  case ParamKind::Integer:
    return "an integer";
  case ParamKind::Size:
    return "a size";
  case ParamKind::Number:
    return "a number";
  case ParamKind::Boolean:
    return "true or false";
  case ParamKind::Choice:
    return "one of the choices";
  case ParamKind::Text:
    return "text";
  }
  return "a value";
}

namespace {

// Where each YAML document and its root node start; nothing else of the
// parse is kept.
struct DocumentMarks : YAML::EventHandler {
  std::vector<YAML::Mark> starts, roots;
  void node(const YAML::Mark& m)
  {
    if (roots.size() < starts.size())
      roots.push_back(m);
  }
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { node(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override
  {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override
  {
    node(m);
  }
  void OnMapEnd() override {}
};

// The marks of at most the first three documents of TEXT (throws
// YAML::Exception). Not YAML::LoadAll: yaml-cpp 0.7 leaves a stray token such
// as a ',' after a block unconsumed and then returns empty documents at it
// forever, allocating until memory runs out.
DocumentMarks document_marks(const std::string& text)
{
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentMarks h;
  while (h.starts.size() < 3 && parser.HandleNextDocument(h)) {
  }
  return h;
}

} // namespace

YAML::Node read_document(const std::string& text, const std::string& file, const std::string& allowed)
{
  auto mark = [&](const YAML::Mark& m) {
    return m.is_null() ? in_file(file) : in_file(file, m.line + 1, m.column + 1);
  };
  DocumentMarks docs;
  YAML::Node root;
  try {
    docs = document_marks(text);
    root = YAML::Load(text); // the first document
  } catch (const YAML::Exception& e) {
    fail(mark(e.mark), "", "invalid YAML: " + e.msg);
  }
  // A document starting where the previous one did: the parser could not
  // take the token there.
  const std::vector<YAML::Mark>& starts = docs.starts;
  for (std::size_t i = 1; i < starts.size(); ++i)
    if (starts[i].pos == starts[i - 1].pos)
      fail(mark(starts[i]), "",
           fmt::format("invalid YAML: unexpected '{}'",
                       static_cast<std::size_t>(starts[i].pos) < text.size() ? text.substr(starts[i].pos, 1) : ""));
  if (starts.empty() || (starts.size() == 1 && root.IsNull()))
    fail(in_file(file, 1, 1), "", "the file is empty (allowed: " + allowed + ")");
  if (starts.size() > 1)
    fail(mark(docs.roots.size() > 1 ? docs.roots[1] : starts[1]), "",
         "expected one YAML document, found another one here");
  if (!root.IsMap())
    fail(mark(root.Mark()), "",
         fmt::format("the top level must be a map of keys, got {} (allowed: {})", node_kind(root), allowed));
  return root;
}

Given convert_node(const ParamSpec& spec, const YAML::Node& node, const Origin& at)
{
  if (!node.IsScalar())
    fail(at, spec.path,
         with_allowed(fmt::format("expected {}, got {}", expected_kind(spec.kind), node_kind(node)),
                      allowed_values(spec)));
  Scalar in{node.Scalar(), node.Tag() == "?"};
  return Given{convert_scalar(spec, in, at), in.text, at};
}

Value default_value(const ParamSpec& spec)
{
  if (spec.kind == ParamKind::Text)
    return spec.default_text;
  if (spec.default_text.empty())
    throw std::logic_error("parameter '" + spec.path + "' has no default");
  try {
    Scalar in{spec.default_text, true};
    return convert_scalar(spec, in, Origin{});
  } catch (const InputError& e) {
    throw std::logic_error(fmt::format("bad default for '{}': {}", spec.path, e.what()));
  }
}

} // namespace vsim::app::load
