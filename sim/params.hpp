// Parameter declarations and resolved parameter values.
//
// Every component declares each of its parameters once, as a ParamSpec. The
// experiment loader validates YAML against these declarations, `vsocksim
// describe` prints them and docs/parameters.md is generated from them; the
// component then reads its resolved, typed values from a Params map.
// Nothing here knows YAML or any transport.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace vsim {

enum class ParamKind {
  Integer, // whole number, unit in ParamSpec::unit (e.g. "iterations", "cycles")
  Size,    // bytes: integer or string with B/KiB/MiB/GiB/kB/MB/GB
  Number,  // real number
  Boolean, // true / false
  Choice,  // one of ParamSpec::choices
  Text,    // free text (labels)
};

const char* to_string(ParamKind k);

// A knob whose default is its transport's kernel preset's value (the
// `<transport>.preset` key) carries this as its default text.
inline const char* kFromPreset = "(preset)";

// A kernel preset: the value it gives each knob that defaults to it.
struct Preset {
  std::string name;
  std::string doc;
  std::map<std::string, std::string> values; // key path -> value as written in YAML
};

// " (linux-4.19: 4KiB, linux-5.4: 64KiB)": each preset's value of the knob
// `path`, in the presets' order, for the end of the knob's documentation.
std::string preset_values_doc(const std::vector<Preset>& presets, const std::string& path);

// A declaration: built with Param below, read by the loader, describe and
// the docs.
// The transports of a scope, in order.
inline std::vector<std::string> split_scope(std::string_view scope)
{
  std::vector<std::string> out;
  while (!scope.empty()) {
    const std::size_t comma = scope.find(',');
    out.emplace_back(scope.substr(0, comma));
    if (comma == std::string_view::npos)
      break;
    scope.remove_prefix(comma + 1);
  }
  return out;
}

// A scope in words: "virtio_vsock and firecracker_vsock".
inline std::string scope_text(std::string_view scope)
{
  std::string out;
  for (const std::string& t : split_scope(scope))
    out += (out.empty() ? "" : " and ") + t;
  return out;
}

// Whether a key or cost of `scope` (transports, comma-separated; "" = every
// transport) applies to `transport`.
inline bool scope_applies(std::string_view scope, std::string_view transport)
{
  if (scope.empty())
    return true;
  for (;;) {
    const std::size_t comma = scope.find(',');
    if (scope.substr(0, comma) == transport)
      return true;
    if (comma == std::string_view::npos)
      return false;
    scope.remove_prefix(comma + 1);
  }
}

struct ParamSpec {
  std::string path; // dotted key path, e.g. "hv_sock.sndbuf"
  ParamKind kind = ParamKind::Integer;
  std::string unit;                                      // "bytes", "cycles", "ns", "" ...
  std::string default_text;                              // default as the user would write it ("" = required)
  double min = -std::numeric_limits<double>::infinity(); // inclusive range, numeric kinds
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices; // Choice: allowed words; Size: extra words (e.g. "default")
  std::string doc;                  // one line
  // The transports the key applies to, comma-separated ("" = every
  // transport; scope_applies). A point keeps only the keys of its own
  // transport.
  std::string scope;
  // Costs: the physically plausible range (NaN when none is declared), what
  // it rests on and its sources. Values outside it are accepted (what-if
  // studies) but reported; calibration stays inside it.
  double plausible_min = std::numeric_limits<double>::quiet_NaN();
  double plausible_max = std::numeric_limits<double>::quiet_NaN();
  std::string plausible_basis;
  std::string plausible_sources;
  // Costs: the value of a profile that does not give it (NaN: required).
  double absent = std::numeric_limits<double>::quiet_NaN();
  // Extra validation beyond kind and range: returns "" when the value is
  // acceptable, else what is wrong and what is allowed (one line).
  std::function<std::string(const std::string& text)> check;
  // What a text parameter with a check accepts, as messages and describe
  // show it ("" for free text).
  std::string allowed_text;
  // Where the kernel implements what the key sets (file: function or
  // constant), when one place does; "" when none is named. Not printed.
  std::string kernel_source;
  // The keys the default comes from (e.g. virtio_vsock.preset, platform),
  // when it is not a value of its own. Not printed.
  std::vector<std::string> derives_from;
};

// One parameter's declaration, field by field (in the spirit of ns-3's
// AddAttribute chain and gem5's Param.Unsigned(default, "doc")):
//
//   reg.declare(Param("hv_sock.sndbuf").size().unit("bytes").def("default").range(1, 1ll << 30)
//                   .words({"default"}).doc("...").scope("hv_sock"));
//
// Each declaration names its kind; a field it does not name keeps
// ParamSpec's default. range() is for the numeric kinds (integer, size,
// number), words() for choice and size; ParamRegistry::declare rejects
// anything else.
class Param {
public:
  explicit Param(std::string path);

  // The kind (one of these, once).
  Param& integer() { return kind(ParamKind::Integer); }
  Param& size() { return kind(ParamKind::Size); }
  Param& number() { return kind(ParamKind::Number); }
  Param& boolean() { return kind(ParamKind::Boolean); }
  Param& choice() { return kind(ParamKind::Choice); }
  Param& text() { return kind(ParamKind::Text); }

  Param& unit(std::string u);
  Param& def(std::string default_text);     // as the user would write it; none: required
  Param& range(double min, double max);     // inclusive
  Param& words(std::vector<std::string> w); // choice: the allowed words; size: words besides sizes
  Param& doc(std::string d);
  Param& kernel(std::string where); // ParamSpec::kernel_source
  Param& derives_from(std::vector<std::string> keys);
  Param& check(std::function<std::string(const std::string& text)> f);
  Param& allowed(std::string text); // ParamSpec::allowed_text
  Param& scope(std::string transport);
  // Costs: the physically plausible range, what it rests on, its sources.
  Param& plausible(double min, double max);
  Param& absent(double v)
  {
    spec_.absent = v;
    return *this;
  }
  Param& basis(std::string b);
  Param& sources(std::string s);

  const ParamSpec& spec() const { return spec_; }
  bool kind_named() const { return kind_named_; }

private:
  Param& kind(ParamKind k);

  ParamSpec spec_;
  bool kind_named_ = false;
};

// A resolved value. Sizes and integers are int64_t, booleans bool, numbers
// double, choices/text/size-words std::string.
using Value = std::variant<bool, std::int64_t, double, std::string>;

std::string value_to_string(const Value& v);

// Fully resolved parameters of one run point, keyed by dotted path. Ordered
// map: iteration order is deterministic.
class Params {
public:
  void set(const std::string& path, Value v) { values_[path] = std::move(v); }
  bool has(const std::string& path) const { return values_.count(path) != 0; }
  const Value& get(const std::string& path) const;

  std::int64_t integer(const std::string& path) const; // Integer or Size
  double number(const std::string& path) const;        // Number (or Integer, converted)
  bool boolean(const std::string& path) const;
  const std::string& text(const std::string& path) const;               // Choice, Text, or Size word
  bool is_word(const std::string& path, const std::string& word) const; // value is that string

  const std::map<std::string, Value>& all() const { return values_; }

private:
  std::map<std::string, Value> values_;
};

// Thrown when a component asks for a parameter that is missing or of another
// type: a programming error (exit 1), never a user error.
struct ParamError : std::logic_error {
  using std::logic_error::logic_error;
};

// All declarations, in declaration order, unique by path.
class ParamRegistry {
public:
  // Throws ParamError on a duplicate path, a declaration naming no kind, or a
  // range or words its kind does not take.
  void declare(const Param& param);
  const ParamSpec* find(const std::string& path) const;
  const std::vector<ParamSpec>& all() const { return specs_; }

private:
  std::vector<ParamSpec> specs_;
  std::map<std::string, std::size_t> index_;
};

} // namespace vsim
