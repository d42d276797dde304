// model_fuzz: fuzzes the models themselves (the simulation, not the loader).
//
// It generates random valid experiments from the parameter declarations
// (app::registry().all(): every key with its kind, range, allowed words,
// size words and transport scope; no hand list of keys, so a newly declared
// key is fuzzed as soon as it exists), writes each as YAML text, loads it
// with the loader `vsocksim check` uses, and simulates every iteration of
// every point in a forked child (SimGrid allows one simulation per process)
// with a wall-clock timeout. Each experiment ends as one of:
//   ok       every simulation returned its figures;
//   refused  the loader (or a simulation) threw InputError: a bad input
//            refused with a reason, as `vsocksim` exits 2; counted, with the
//            most common reasons, so a generator that mostly makes refused
//            inputs shows;
//   hangs    a simulation threw vsim::ModelledHang (sim/world.hpp): the
//            simulated system hangs as the kernel it models would, by a rule
//            the transport names; a result, not a defect: counted, with the
//            most common reasons;
//   FAILURE  anything else: another exception (std::logic_error from a
//            violated invariant, ...), a crash by a signal, a sanitizer
//            report, a non-zero exit, or no result within --timeout (a hang).
// Each failure is saved as DIR/fail-<seed>-<n>.yaml: the failing point as a
// plain experiment (sweep values in place), with comment lines holding the
// error, which `vsocksim run FILE` reproduces and `model_fuzz --replay FILE`
// re-runs.
//
// Experiment n of seed S is a function of (S, n) only: the same experiments
// in the same order whatever --jobs is (the summary's input digest shows it).
//
// The only hand-written knowledge is what keeps runs short: iterations 1..2,
// workload.total_bytes 1 B..4 MB, workload.message_size 1 B..1 MiB, at most
// 50 000 messages per connection (--max-messages), workload.connections 1..4,
// sim.run_length mostly auto; report.* keys (they shape printed tables only,
// no simulation reads them) and text keys (labels, file paths) are left at
// their defaults; transport comes first and platform among the profiles
// calibrated for it, as `check` requires.
//
//   model_fuzz [--seed S] [--runs N] [--jobs J] [--time-limit SECONDS] [--timeout SECONDS] [--out DIR] [-q|-v]
//              [--max-messages N]
//   model_fuzz --replay FILE... [--jobs J] [--timeout SECONDS]
//   model_fuzz --list [--seed S] [--runs N]      # print the generated experiments, run nothing
//   model_fuzz --minimize FILE...                 # drop the keys a saved failure does not need: FILE.min.yaml
//   --inject-failure throw|crash|hang|leak        # tests: every simulation fails that way (leak: under ASan)
// Exit status: 0 no failure, 1 at least one failure, 2 bad arguments.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <yaml-cpp/yaml.h>

#include "app/experiment/experiment.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/registry.hpp"
#include "app/experiment/sha256.hpp"
#include "sim/world.hpp"
#include "transports/simulate.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MODEL_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(MODEL_FUZZ_ASAN)
#define MODEL_FUZZ_ASAN 1
#endif
#if defined(MODEL_FUZZ_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace fs = std::filesystem;
using vsim::ParamKind;
using vsim::ParamSpec;
using vsim::app::Experiment;
using vsim::app::InputError;

namespace {

// ---- what keeps runs short (the only hand-written knowledge) ---------------

constexpr double kMaxTotalBytes = 4e6;      // workload.total_bytes: 1 B .. 4 MB
constexpr double kMaxMessageSize = 1 << 20; // workload.message_size: 1 B .. 1 MiB
double max_messages = 50000;                // messages per connection, at most (--max-messages)
constexpr std::int64_t kMaxConnections = 4; // workload.connections: 1 .. 4
constexpr std::int64_t kMaxIterations = 2;  // iterations: 1 .. 2
const std::set<std::string> kOverridden = {
    "iterations", "workload.total_bytes", "workload.message_size", "workload.connections", "sim.run_length",
    "sim.ensemble", // runs the same point again per member: refused on
                    // profiles without an ensemble, so never drawn
    "workload.pattern", "workload.transactions", "workload.request_size", "workload.response_size",
    "workload.outstanding", "workload.think_time", "workload.think_time_distribution"};

// ---- random numbers: splitmix64, the same sequence on every machine ---------

class Rng {
public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next()
  {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } // [0, 1)
  bool chance(double p) { return uniform() < p; }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  double log_uniform(double lo, double hi) // lo > 0
  {
    return std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo)));
  }

private:
  std::uint64_t state_;
};

// The stream of experiment n of seed S.
Rng experiment_rng(std::uint64_t seed, std::uint64_t n)
{
  Rng mix(seed ^ 0x6d6f64656c66757aull); // "modelfuz"
  const std::uint64_t a = mix.next();
  Rng mix2(a ^ (n * 0xd1342543de82ef95ull + 1));
  return Rng(mix2.next());
}

// ---- value texts ---------------------------------------------------------------

// A number with 4 significant digits, plainly written (no exponent).
std::string number_text(double v)
{
  if (v == 0 || !std::isfinite(v))
    return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  const int decimals = std::max(0, 3 - magnitude);
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

// Bytes as the user would write them: 64KiB when exact, else plain bytes.
std::string size_text(std::int64_t bytes)
{
  if (bytes > 0 && bytes % (1 << 20) == 0)
    return fmt::format("{}MiB", bytes >> 20);
  if (bytes > 0 && bytes % 1024 == 0)
    return fmt::format("{}KiB", bytes >> 10);
  return fmt::format("{}", bytes);
}

bool is_integral(ParamKind k)
{
  return k == ParamKind::Integer || k == ParamKind::Size;
}

std::string value_text(ParamKind kind, double v)
{
  if (kind == ParamKind::Size)
    return size_text(static_cast<std::int64_t>(v));
  if (kind == ParamKind::Integer)
    return fmt::format("{}", static_cast<std::int64_t>(v));
  return number_text(v);
}

// YAML scalar: plain when it is a simple word or number, else double-quoted.
std::string yaml_scalar(const std::string& s)
{
  const bool plain = !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                       "0123456789_.+-") == std::string::npos;
  if (plain)
    return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

// ---- the generated experiment ---------------------------------------------------

struct Input {
  std::vector<std::pair<std::string, std::string>> keys; // dotted path -> value text, in declaration order
  std::vector<std::pair<std::string, std::vector<std::string>>> grid, zip;

  std::string* find(const std::string& path)
  {
    for (auto& [k, v] : keys)
      if (k == path)
        return &v;
    return nullptr;
  }
  void set(const std::string& path, const std::string& text)
  {
    if (std::string* v = find(path))
      *v = text;
    else
      keys.emplace_back(path, text);
  }
  void erase(const std::string& path)
  {
    std::erase_if(keys, [&](const auto& kv) { return kv.first == path; });
  }
};

// Nested YAML maps from the dotted paths (first appearance order), then the
// sweep with dotted keys.
std::string to_yaml(const Input& in)
{
  struct Node {
    std::string name, value;
    std::vector<Node> children;
    Node& child(const std::string& key)
    {
      for (Node& c : children)
        if (c.name == key)
          return c;
      children.push_back(Node{key, "", {}});
      return children.back();
    }
  };
  Node root;
  for (const auto& [path, value] : in.keys) {
    Node* n = &root;
    std::size_t start = 0;
    for (;;) {
      const std::size_t dot = path.find('.', start);
      n = &n->child(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos)
        break;
      start = dot + 1;
    }
    n->value = value;
  }
  std::string out;
  auto emit = [&](auto&& self, const Node& node, int depth) -> void {
    for (const Node& c : node.children) {
      out += std::string(static_cast<std::size_t>(depth) * 2, ' ') + c.name + ":";
      if (c.children.empty()) {
        out += " " + yaml_scalar(c.value) + "\n";
      } else {
        out += "\n";
        self(self, c, depth + 1);
      }
    }
  };
  emit(emit, root, 0);
  auto axes = [&](const char* kind, const auto& list) {
    if (list.empty())
      return;
    out += fmt::format("  {}:\n", kind);
    for (const auto& [key, values] : list) {
      std::string items;
      for (const auto& v : values)
        items += (items.empty() ? "" : ", ") + yaml_scalar(v);
      out += fmt::format("    {}: [{}]\n", key, items);
    }
  };
  if (!in.grid.empty() || !in.zip.empty()) {
    out += "sweep:\n";
    axes("grid", in.grid);
    axes("zip", in.zip);
  }
  return out;
}

// ---- the generator ------------------------------------------------------------------

const vsim::ParamRegistry& reg()
{
  return vsim::app::registry();
}

// Every key's resolved default for a transport and platform (costs from the
// profile, preset knobs from the default preset): the loader's own answer.
const std::map<std::string, vsim::Value>& defaults_for(const std::string& transport, const std::string& platform)
{
  static std::map<std::pair<std::string, std::string>, std::map<std::string, vsim::Value>> cache;
  auto key = std::make_pair(transport, platform);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  std::map<std::string, vsim::Value> values;
  try {
    Experiment ex = vsim::app::load_experiment_text(fmt::format("platform: {}\ntransport: {}\n", platform, transport),
                                                    "defaults.yaml", {}, reg());
    values = ex.base.all();
  } catch (const InputError&) {
    // No defaults: the draws skip the default's weight.
  }
  return cache.emplace(key, std::move(values)).first->second;
}

std::optional<double> numeric_default(const std::map<std::string, vsim::Value>& defaults, const std::string& path)
{
  auto it = defaults.find(path);
  if (it == defaults.end())
    return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(&it->second))
    return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&it->second))
    return *d;
  return std::nullopt;
}

// A value inside [lo, hi]: the range ends, the default and values near it
// weighted up, else log-uniform over the range (from 1, or 1e-6 of the top,
// when the range starts at or below 0).
double draw_number(Rng& rng, ParamKind kind, double lo, double hi, std::optional<double> def)
{
  if (!std::isfinite(hi))
    hi = std::max(1e6, def ? std::fabs(*def) * 1000 : 0.0);
  if (!std::isfinite(lo))
    lo = -hi;
  if (def && (*def < lo || *def > hi))
    def.reset();
  double v;
  const double r = rng.uniform();
  if (r < 0.1) {
    v = lo;
  } else if (r < 0.2) {
    v = hi;
  } else if (r < 0.3 && def) {
    v = *def;
  } else if (r < 0.45 && def && *def > 0) {
    v = *def * std::exp2(rng.uniform() * 8 - 4); // within 16x of the default
  } else {
    const double bottom = std::max(lo, is_integral(kind) ? 1.0 : std::max(hi * 1e-6, 1e-12));
    v = bottom < hi && bottom > 0 ? rng.log_uniform(bottom, hi) : lo + rng.uniform() * (hi - lo);
  }
  if (is_integral(kind))
    v = std::round(v);
  else if (std::stod(number_text(v)) >= lo && std::stod(number_text(v)) <= hi)
    v = std::stod(number_text(v));
  return std::clamp(v, lo, hi);
}

std::string draw_unchecked(Rng& rng, const ParamSpec& spec, const std::map<std::string, vsim::Value>& defaults);

// A value of a declared key, as YAML text; one the key's own extra check
// (ParamSpec::check, e.g. a power of 2) accepts, when a few draws find one.
std::string draw_value(Rng& rng, const ParamSpec& spec, const std::map<std::string, vsim::Value>& defaults)
{
  std::string text = draw_unchecked(rng, spec, defaults);
  for (int tries = 0; spec.check && !spec.check(text).empty() && tries < 30; ++tries)
    text = draw_unchecked(rng, spec, defaults);
  return text;
}

std::string draw_unchecked(Rng& rng, const ParamSpec& spec, const std::map<std::string, vsim::Value>& defaults)
{
  switch (spec.kind) {
  case ParamKind::Boolean:
    return rng.chance(0.5) ? "true" : "false";
  case ParamKind::Choice:
    return spec.choices.empty() ? spec.default_text : spec.choices[rng.below(spec.choices.size())];
  case ParamKind::Text:
    return spec.default_text;
  case ParamKind::Size:
    if (!spec.choices.empty() && rng.chance(0.15))
      return spec.choices[rng.below(spec.choices.size())];
    [[fallthrough]];
  case ParamKind::Integer:
  case ParamKind::Number: {
    const bool cost = spec.path.starts_with("costs.");
    // Costs: sometimes inside their physically plausible range.
    if (cost && std::isfinite(spec.plausible_min) && std::isfinite(spec.plausible_max) && rng.chance(0.3)) {
      const double lo = std::max(spec.min, spec.plausible_min), hi = std::min(spec.max, spec.plausible_max);
      if (lo > 0 && lo < hi)
        return value_text(spec.kind, std::clamp(rng.log_uniform(lo, hi), lo, hi));
    }
    return value_text(spec.kind, draw_number(rng, spec.kind, spec.min, spec.max, numeric_default(defaults, spec.path)));
  }
  }
  return spec.default_text;
}

// Log-uniform whole number in [lo, hi] (lo >= 1), the ends weighted up.
std::int64_t draw_count(Rng& rng, double lo, double hi)
{
  hi = std::max(lo, hi);
  const double r = rng.uniform();
  double v = r < 0.1 ? lo : r < 0.2 ? hi : rng.log_uniform(lo, hi);
  return static_cast<std::int64_t>(std::clamp(std::round(v), lo, hi));
}

struct Workload {
  std::int64_t total_bytes, message_size;
  bool full;
};

// A round-trip workload's keys (workload.pattern ping_pong or
// request_response): sizes, round trips within the byte budget, and for
// request_response sometimes several in flight and a think time.
void draw_round_trips(Rng& rng, Input& in, Workload& w, const std::string& pattern)
{
  in.set("workload.pattern", pattern);
  const std::int64_t request = draw_count(rng, 1, kMaxMessageSize);
  const std::int64_t response = pattern == "ping_pong" ? request : draw_count(rng, 1, kMaxMessageSize);
  if (pattern == "ping_pong") {
    in.set("workload.message_size", size_text(request));
  } else {
    in.set("workload.request_size", size_text(request));
    in.set("workload.response_size", size_text(response));
    if (rng.chance(0.5))
      in.set("workload.outstanding", fmt::format("{}", 1 + rng.below(8)));
    if (rng.chance(0.3))
      in.set("workload.think_time", fmt::format("{:.3g}", rng.log_uniform(0.1, 100)));
    if (rng.chance(0.3))
      in.set("workload.think_time_distribution", rng.chance(0.5) ? "exponential" : "fixed");
  }
  const double budget = std::min(kMaxTotalBytes, static_cast<double>(request) * max_messages);
  const std::int64_t transactions = draw_count(rng, 1, std::max(1.0, budget / static_cast<double>(request + response)));
  in.set("workload.transactions", fmt::format("{}", transactions));
  w.message_size = request;
  w.total_bytes = transactions * (request + response);
}

// The run-length keys (overridden: the only hand-written knowledge), with
// the workload's pattern.
void draw_run_length(Rng& rng, Input& in, Workload& w)
{
  const double p = rng.uniform();
  const std::string pattern = p < 0.7 ? "stream" : p < 0.85 ? "ping_pong" : "request_response";
  if (pattern != "stream") {
    draw_round_trips(rng, in, w, pattern);
    w.full = rng.chance(0.15);
    in.set("iterations", fmt::format("{}", rng.chance(0.7) ? 1 : kMaxIterations));
    in.set("workload.connections",
           fmt::format("{}", rng.chance(0.5) ? 1 : 1 + static_cast<std::int64_t>(rng.below(kMaxConnections))));
    if (reg().find("sim.run_length"))
      in.set("sim.run_length", w.full ? "full" : "auto");
    return;
  }
  const std::int64_t a = draw_count(rng, 1, kMaxMessageSize), b = draw_count(rng, 1, kMaxTotalBytes);
  w.message_size = std::min(a, b);
  w.total_bytes = std::min<std::int64_t>(std::max(a, b), static_cast<std::int64_t>(w.message_size * max_messages));
  w.full = rng.chance(0.15);
  in.set("iterations", fmt::format("{}", rng.chance(0.7) ? 1 : kMaxIterations));
  in.set("workload.total_bytes", size_text(w.total_bytes));
  in.set("workload.message_size", size_text(w.message_size));
  in.set("workload.connections",
         fmt::format("{}", rng.chance(0.5) ? 1 : 1 + static_cast<std::int64_t>(rng.below(kMaxConnections))));
  if (reg().find("sim.run_length"))
    in.set("sim.run_length", w.full ? "full" : "auto");
}

Input generate(std::uint64_t seed, std::uint64_t n)
{
  Rng rng = experiment_rng(seed, n);
  Input in;
  // The transport first (scoped keys follow it), then a platform calibrated
  // for it (check refuses the others).
  const ParamSpec* transport_spec = reg().find("transport");
  const std::string transport = transport_spec->choices[rng.below(transport_spec->choices.size())];
  std::vector<std::string> platforms, shipped;
  for (const vsim::PlatformProfile& profile : vsim::app::platform_profiles()) {
    shipped.push_back(profile.name);
    if (profile.transport == transport)
      platforms.push_back(profile.name);
  }
  if (platforms.empty())
    platforms = shipped; // refused, and the refusal counted
  const std::string platform = platforms[rng.below(platforms.size())];
  const auto& defaults = defaults_for(transport, platform);

  // How many keys this experiment sets: sparse ones and dense ones.
  const double density = 0.1 + 0.6 * rng.uniform();
  const bool with_costs = rng.chance(0.35);
  const double cost_density = 0.05 + 0.35 * rng.uniform();
  Workload w{};
  std::vector<std::string> sweepable;
  for (const ParamSpec& spec : reg().all()) {
    if (spec.path == "platform") {
      in.set("platform", platform);
      continue;
    }
    if (spec.path == "transport") {
      in.set("transport", transport);
      continue;
    }
    if (spec.path == "iterations") {
      draw_run_length(rng, in, w);
      continue;
    }
    if (kOverridden.count(spec.path) || spec.kind == ParamKind::Text || spec.path.starts_with("report."))
      continue;
    if (!vsim::scope_applies(spec.scope, transport))
      continue;
    const bool cost = spec.path.starts_with("costs.");
    if (!(cost ? with_costs && rng.chance(cost_density) : rng.chance(density)))
      continue;
    in.set(spec.path, draw_value(rng, spec, defaults));
    sweepable.push_back(spec.path);
  }
  if (w.total_bytes == 0) // no "iterations" key declared: still keep runs short
    draw_run_length(rng, in, w);

  // Sometimes a small sweep: a grid of one or two keys, or a zip of two.
  if (rng.chance(0.2)) {
    sweepable.push_back("workload.message_size");
    sweepable.push_back("workload.total_bytes");
    const std::size_t keys = 1 + rng.below(2);
    const bool zip = keys == 2 && rng.chance(0.3);
    const std::size_t zip_len = 2 + rng.below(2);
    std::set<std::string> used;
    for (std::size_t k = 0; k < keys; ++k) {
      const std::string path = sweepable[rng.below(sweepable.size())];
      // One of message size and total bytes at most: each is drawn against the other's base value.
      const bool workload = path == "workload.message_size" || path == "workload.total_bytes";
      if ((workload && (used.count("workload.message_size") || used.count("workload.total_bytes"))) ||
          !used.insert(path).second)
        continue;
      const ParamSpec& spec = *reg().find(path);
      std::vector<std::string> values;
      const std::size_t count = zip ? zip_len : 2 + rng.below(2);
      for (std::size_t v = 0; v < count; ++v) {
        if (path == "workload.message_size")
          values.push_back(size_text(draw_count(rng, std::max(1.0, w.total_bytes / max_messages),
                                                std::min<double>(kMaxMessageSize, w.total_bytes))));
        else if (path == "workload.total_bytes")
          values.push_back(
              size_text(draw_count(rng, w.message_size, std::min(kMaxTotalBytes, w.message_size * max_messages))));
        else {
          // Distinct values when a few draws find them (booleans have two).
          std::string value = draw_value(rng, spec, defaults);
          for (int tries = 0; tries < 10 && std::find(values.begin(), values.end(), value) != values.end(); ++tries)
            value = draw_value(rng, spec, defaults);
          values.push_back(value);
        }
      }
      in.erase(path);
      (zip ? in.zip : in.grid).emplace_back(path, std::move(values));
    }
  }
  return in;
}

// ---- simulations in children ------------------------------------------------------

enum class Inject { None, Throw, Crash, Hang, Leak };

std::string demangle(const char* name)
{
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

void write_all(int fd, const std::string& s)
{
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    off += static_cast<std::size_t>(n);
  }
}

// In the child: the simulation, then "O<simulated bytes>", "I<message>"
// (InputError), "H<message>" (ModelledHang) or "E<exception type>\n<message>"
// on the result pipe.
[[noreturn]] void child_main(int result_fd, int err_fd, const vsim::Params& params, std::uint32_t iteration,
                             Inject inject)
{
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::setpgid(0, 0);
  const int null = ::open("/dev/null", O_WRONLY);
  ::dup2(null, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  std::string out;
  int code = 1;
  try {
    if (inject == Inject::Throw)
      throw std::logic_error("injected failure (--inject-failure throw)");
    if (inject == Inject::Crash)
      std::abort();
    if (inject == Inject::Hang)
      for (;;)
        ::pause();
    if (inject == Inject::Leak) { // found where LeakSanitizer runs (the ASan build), else harmless
      [[maybe_unused]] static char* volatile block;
      block = new char[4096];
      block = nullptr;
    }
    std::map<std::string, double> m = vsim::simulate_iteration(params, iteration);
    auto it = m.find("run_length.simulated_bytes");
    out = fmt::format("O{}", it == m.end() ? -1.0 : it->second);
    code = 0;
  } catch (const InputError& e) {
    out = std::string("I") + e.what();
  } catch (const vsim::ModelledHang& e) {
    out = std::string("H") + e.what();
  } catch (const std::exception& e) {
    out = "E" + demangle(typeid(e).name()) + "\n" + e.what();
  } catch (...) {
    out = "Eunknown exception\n(not derived from std::exception)";
  }
  std::fflush(stdout);
  std::fflush(stderr);
  write_all(result_fd, out);
#if defined(MODEL_FUZZ_ASAN)
  __lsan_do_leak_check(); // _exit skips LeakSanitizer's check: a leak is a finding too
#endif
  ::_exit(code);
}

struct Child {
  pid_t pid = -1;
  int result_fd = -1, err_fd = -1;
  std::string result, err;
  std::size_t experiment = 0, point = 0;
  std::uint32_t iteration = 0;
  std::chrono::steady_clock::time_point started, deadline;
};

Child spawn(const vsim::Params& params, std::uint32_t iteration, Inject inject)
{
  int rp[2], ep[2];
  if (::pipe2(rp, O_CLOEXEC) != 0 || ::pipe2(ep, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::close(rp[0]);
    ::close(ep[0]);
    child_main(rp[1], ep[1], params, iteration, inject);
  }
  ::setpgid(pid, pid);
  ::close(rp[1]);
  ::close(ep[1]);
  ::fcntl(rp[0], F_SETFL, O_NONBLOCK);
  ::fcntl(ep[0], F_SETFL, O_NONBLOCK);
  Child c;
  c.pid = pid;
  c.result_fd = rp[0];
  c.err_fd = ep[0];
  return c;
}

// Reads what is there; false at end of file.
bool drain(int fd, std::string& into, std::size_t keep)
{
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      if (into.size() < keep)
        into.append(buf, std::min(static_cast<std::size_t>(n), keep - into.size()));
      continue;
    }
    if (n == 0)
      return false;
    return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? false : true;
  }
}

// Reads what a child's result and stderr pipes hold, closing each at end of
// file (result kept up to 1 MiB, stderr up to 64 KiB).
void drain_pipes(Child& c)
{
  if (c.result_fd >= 0 && !drain(c.result_fd, c.result, 1 << 20)) {
    ::close(c.result_fd);
    c.result_fd = -1;
  }
  if (c.err_fd >= 0 && !drain(c.err_fd, c.err, 1 << 16)) {
    ::close(c.err_fd);
    c.err_fd = -1;
  }
}

int reap(pid_t pid)
{
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return status;
}

void kill_child(Child& c)
{
  ::kill(-c.pid, SIGKILL);
  ::kill(c.pid, SIGKILL);
  if (c.result_fd >= 0)
    ::close(c.result_fd);
  if (c.err_fd >= 0)
    ::close(c.err_fd);
  c.result_fd = c.err_fd = -1;
  reap(c.pid);
}

// ---- outcomes -------------------------------------------------------------------------

struct Outcome {
  enum Status { Ok, Hang, Refused, Failed } status = Ok; // from best to worst
  std::string kind;    // failures: "hang", "exception std::logic_error", "signal SIGSEGV", "sanitizer ...", ...
  std::string message; // one line
  double simulated_bytes = 0;
};

std::string one_line(std::string s)
{
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  std::string out;
  for (char c : s)
    out += c == '\n' ? std::string(" | ") : std::string(1, c);
  if (out.size() > 600)
    out = out.substr(0, 600) + "...";
  return out;
}

// The first line of a sanitizer report in the child's stderr, if any.
std::optional<std::pair<std::string, std::string>> sanitizer_report(const std::string& err)
{
  std::istringstream lines(err);
  std::string line;
  while (std::getline(lines, line)) {
    for (const char* tool :
         {"AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "ThreadSanitizer", "MemorySanitizer"})
      if (const std::size_t at = line.find(std::string("ERROR: ") + tool); at != std::string::npos)
        return std::make_pair(std::string("sanitizer ") + tool, line.substr(at)); // without "==pid=="
    if (line.find("runtime error:") != std::string::npos)
      return std::make_pair(std::string("sanitizer UndefinedBehaviorSanitizer"), line);
  }
  return std::nullopt;
}

// The last lines of the child's stderr (context for a crash or a hang).
std::string err_tail(const std::string& err)
{
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      lines.push_back(line);
  std::string out;
  for (std::size_t k = lines.size() > 3 ? lines.size() - 3 : 0; k < lines.size(); ++k)
    out += (out.empty() ? "" : "\n") + lines[k];
  return one_line(out);
}

Outcome classify(const Child& c, int status)
{
  Outcome o;
  o.status = Outcome::Failed;
  if (auto report = sanitizer_report(c.err)) {
    o.kind = report->first;
    o.message = one_line(report->second);
    return o;
  }
  if (status < 0) {
    o.kind = "waitpid failed";
    o.message = std::strerror(errno);
    return o;
  }
  if (WIFSIGNALED(status)) {
    const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
    o.kind = abbrev ? fmt::format("signal SIG{}", abbrev) : fmt::format("signal {}", WTERMSIG(status));
    o.message = fmt::format("killed by {}", o.kind);
    if (const std::string tail = err_tail(c.err); !tail.empty())
      o.message += "; stderr: " + tail;
    return o;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!c.result.empty() && (c.result[0] == 'I' || c.result[0] == 'H') && code != 0) {
    o.status = c.result[0] == 'I' ? Outcome::Refused : Outcome::Hang;
    o.message = one_line(c.result.substr(1));
    return o;
  }
  if (!c.result.empty() && c.result[0] == 'E') {
    const std::size_t nl = c.result.find('\n');
    o.kind = "exception " + c.result.substr(1, nl == std::string::npos ? std::string::npos : nl - 1);
    o.message = one_line(nl == std::string::npos ? "" : c.result.substr(nl + 1));
    return o;
  }
  if (code == 0 && !c.result.empty() && c.result[0] == 'O') {
    o.status = Outcome::Ok;
    o.simulated_bytes = std::max(0.0, std::strtod(c.result.c_str() + 1, nullptr));
    return o;
  }
  o.kind = code == 0 ? "no result" : fmt::format("exit status {}", code);
  o.message = o.kind;
  if (const std::string tail = err_tail(c.err); !tail.empty())
    o.message += "; stderr: " + tail;
  return o;
}

// Digits to N, the file:line:column prefix and the allowed list cut: what a
// family of messages has in common.
std::string normalize(const std::string& message)
{
  std::string s = message;
  if (const std::size_t e = s.find(": error: "); e != std::string::npos)
    s = s.substr(e + 9);
  if (const std::size_t a = s.find(" (allowed"); a != std::string::npos)
    s = s.substr(0, a);
  static const std::regex number("0x[0-9a-fA-F]+|[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?");
  std::string out = std::regex_replace(s, number, "N");
  if (out.size() > 140)
    out = out.substr(0, 140) + "...";
  return out;
}

// ---- the fuzz ---------------------------------------------------------------------------

std::atomic<int> g_stop{0};
void on_signal(int sig)
{
  g_stop = sig;
}

struct Options {
  std::uint64_t seed = 1;
  std::uint64_t runs = 1000;
  unsigned jobs = 0;
  double time_limit = 0; // 0: none
  double timeout = 60;
  std::string out = "model-fuzz-findings";
  std::vector<std::string> replay;
  std::vector<std::string> minimize;
  bool list = false;
  int verbosity = 1; // 0 -q, 2 -v
  Inject inject = Inject::None;
};

struct ExperimentRun {
  std::size_t n = 0;
  std::string name; // the generated file name, or the replayed path
  std::string yaml;
  Input input;
  bool generated = true;
  std::optional<Experiment> ex;
  std::deque<std::pair<std::size_t, std::uint32_t>> tasks; // (point position, iteration) not started yet
  std::size_t running = 0;
  Outcome outcome; // the worst so far
  std::size_t fail_point = 0;
  std::uint32_t fail_iteration = 0;
  std::size_t simulations = 0;
  double simulated_bytes = 0, simulated_messages = 0;
  double longest = 0;
  bool done() const { return tasks.empty() && running == 0; }
};

struct Failure {
  std::size_t n;
  std::string name, kind, message, file;
  std::string where;
};

class Fuzz {
public:
  explicit Fuzz(Options opt) : opt_(std::move(opt)) {}

  int run()
  {
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    auto last_progress = start;
    std::vector<Child> children;
    const unsigned jobs = std::max(1u, opt_.jobs);
    bool out_of_time = false;

    for (;;) {
      if (g_stop)
        break;
      if (opt_.time_limit > 0 && elapsed() >= opt_.time_limit)
        out_of_time = true;
      // Fill the free job slots: the started experiments' simulations
      // first, in order, then new experiments.
      while (children.size() < jobs) {
        ExperimentRun* from = nullptr;
        for (auto& e : active_)
          if (!e->tasks.empty()) {
            from = e.get();
            break;
          }
        if (!from) {
          if (out_of_time || next_ >= total())
            break;
          start_experiment();
          continue;
        }
        auto [p, i] = from->tasks.front();
        from->tasks.pop_front();
        Child c = spawn(from->ex->points[p].params, i, opt_.inject);
        c.experiment = from->n;
        c.point = p;
        c.iteration = i;
        c.started = std::chrono::steady_clock::now();
        c.deadline = c.started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(opt_.timeout));
        ++from->running;
        children.push_back(std::move(c));
      }
      finish_experiments();
      if (children.empty() && (out_of_time || next_ >= total()))
        break;

      // Wait for output, an end or the nearest deadline (at most 250 ms,
      // to see the time limit and signals).
      std::vector<pollfd> pfds;
      auto now = std::chrono::steady_clock::now();
      auto wait = std::chrono::milliseconds(250);
      for (const Child& c : children) {
        pfds.push_back(pollfd{c.result_fd, POLLIN, 0});
        pfds.push_back(pollfd{c.err_fd, POLLIN, 0});
        wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now) +
                                  std::chrono::milliseconds(1));
      }
      ::poll(pfds.data(), pfds.size(), static_cast<int>(std::max<long>(0, wait.count())));
      now = std::chrono::steady_clock::now();
      std::vector<Child> still;
      for (Child& c : children) {
        drain_pipes(c);
        ExperimentRun& e = *find(c.experiment);
        const double seconds = std::chrono::duration<double>(now - c.started).count();
        if (c.result_fd < 0 && c.err_fd < 0) {
          const int status = reap(c.pid);
          record(e, c, classify(c, status), seconds);
        } else if (now >= c.deadline) {
          kill_child(c);
          Outcome o;
          o.status = Outcome::Failed;
          o.kind = "hang";
          o.message = fmt::format("no result after {} s (wall clock)", number_text(opt_.timeout));
          if (const std::string tail = err_tail(c.err); !tail.empty())
            o.message += "; stderr: " + tail;
          record(e, c, o, seconds);
        } else {
          still.push_back(std::move(c));
        }
      }
      children = std::move(still);
      finish_experiments();
      if (opt_.verbosity > 0 && now - last_progress > std::chrono::seconds(10)) {
        last_progress = now;
        std::cerr << fmt::format("model_fuzz: {} runs ({} ok, {} refused, {} hangs, {} failed), {:.0f} s\n", finished_,
                                 ok_, refused_, hangs_, failures_.size(), elapsed());
      }
    }
    for (Child& c : children)
      kill_child(c);
    const double wall = elapsed();
    print_summary(wall);
    if (g_stop)
      return 128 + g_stop;
    return failures_.empty() ? 0 : 1;
  }

  // --list: the generated experiments, each loaded (ok or the refusal).
  int list()
  {
    for (std::uint64_t n = 0; n < opt_.runs; ++n) {
      Input in = generate(opt_.seed, n);
      const std::string name = fmt::format("fuzz-{}-{}.yaml", opt_.seed, n);
      const std::string yaml = to_yaml(in);
      std::string status = "ok";
      try {
        Experiment ex = vsim::app::load_experiment_text(yaml, name, {}, reg());
        status = fmt::format("ok, {} point(s)", ex.points.size());
      } catch (const InputError& e) {
        status = "refused: " + one_line(e.what());
      }
      std::cout << fmt::format("# {}: {}\n{}---\n", name, status, yaml);
    }
    return 0;
  }

private:
  std::uint64_t total() const { return opt_.replay.empty() ? opt_.runs : opt_.replay.size(); }

  ExperimentRun* find(std::size_t n)
  {
    for (auto& e : active_)
      if (e->n == n)
        return e.get();
    throw std::logic_error("model_fuzz: no experiment " + std::to_string(n));
  }

  void start_experiment()
  {
    auto e = std::make_unique<ExperimentRun>();
    e->n = next_++;
    if (opt_.replay.empty()) {
      e->input = generate(opt_.seed, e->n);
      e->name = fmt::format("fuzz-{}-{}.yaml", opt_.seed, e->n);
      e->yaml = to_yaml(e->input);
    } else {
      e->generated = false;
      e->name = opt_.replay[e->n];
      std::ifstream f(e->name, std::ios::binary);
      if (!f)
        throw std::runtime_error("cannot read " + e->name);
      std::ostringstream text;
      text << f.rdbuf();
      e->yaml = text.str();
    }
    digest_ += vsim::app::sha256_hex(e->yaml) + "\n";
    try {
      e->ex = vsim::app::load_experiment_text(e->yaml, e->name, {}, reg());
      for (std::size_t p = 0; p < e->ex->points.size(); ++p) {
        const std::int64_t iterations = e->ex->points[p].params.integer("iterations");
        for (std::int64_t i = 0; i < iterations; ++i)
          e->tasks.emplace_back(p, static_cast<std::uint32_t>(i));
      }
    } catch (const InputError& err) {
      e->outcome.status = Outcome::Refused;
      e->outcome.message = one_line(err.what());
    }
    active_.push_back(std::move(e));
  }

  void record(ExperimentRun& e, const Child& c, const Outcome& o, double seconds)
  {
    --e.running;
    ++e.simulations;
    ++simulations_;
    e.longest = std::max(e.longest, seconds);
    if (seconds > longest_) {
      longest_ = seconds;
      longest_name_ = fmt::format("{} point {} iteration {}", e.name, e.ex->points[c.point].index, c.iteration);
    }
    if (o.status == Outcome::Ok) {
      e.simulated_bytes += o.simulated_bytes;
      const std::int64_t message = e.ex->points[c.point].params.integer("workload.message_size");
      e.simulated_messages += std::ceil(o.simulated_bytes / static_cast<double>(std::max<std::int64_t>(1, message)));
      return;
    }
    // The worst outcome, the first (point, iteration) among equals.
    const bool worse = o.status > e.outcome.status ||
                       (o.status == e.outcome.status &&
                        std::make_pair(c.point, c.iteration) < std::make_pair(e.fail_point, e.fail_iteration));
    if (worse) {
      e.outcome = o;
      e.fail_point = c.point;
      e.fail_iteration = c.iteration;
    }
    if (o.status == Outcome::Failed)
      e.tasks.clear(); // the experiment has its finding: the rest of it is not run
  }

  // Files the experiments that are done, in order.
  void finish_experiments()
  {
    while (!active_.empty() && active_.front()->done()) {
      std::unique_ptr<ExperimentRun> e = std::move(active_.front());
      active_.pop_front();
      ++finished_;
      simulated_bytes_ += e->simulated_bytes;
      simulated_messages_ += e->simulated_messages;
      switch (e->outcome.status) {
      case Outcome::Ok:
        ++ok_;
        if (opt_.verbosity > 1)
          std::cerr << fmt::format("model_fuzz: {}: ok ({} simulation(s), {:.2f} s longest)\n", e->name, e->simulations,
                                   e->longest);
        break;
      case Outcome::Refused:
        ++refused_;
        ++refusals_[normalize(e->outcome.message)];
        if (opt_.replay.size() || opt_.verbosity > 1)
          std::cerr << fmt::format("model_fuzz: {}: refused: {}\n", e->name, e->outcome.message);
        break;
      case Outcome::Hang:
        ++hangs_;
        ++hang_reasons_[normalize(e->outcome.message)];
        if (opt_.replay.size() || opt_.verbosity > 1)
          std::cerr << fmt::format("model_fuzz: {}: the simulated system hangs: {}\n", e->name, e->outcome.message);
        break;
      case Outcome::Failed:
        save_failure(*e);
        break;
      }
    }
  }

  void save_failure(const ExperimentRun& e)
  {
    Failure f;
    f.n = e.n;
    f.name = e.name;
    f.kind = e.outcome.kind;
    f.message = e.outcome.message;
    f.where = fmt::format("point {} iteration {}", e.ex->points[e.fail_point].index, e.fail_iteration);
    if (e.generated) {
      // The failing point as a plain experiment: its swept values in place.
      Input flat = e.input;
      flat.grid.clear();
      flat.zip.clear();
      for (const auto& [key, value] : e.ex->points[e.fail_point].label)
        flat.set(key, value);
      f.file = (fs::path(opt_.out) / fmt::format("fail-{}-{}.yaml", opt_.seed, e.n)).string();
      fs::create_directories(opt_.out);
      std::ofstream out(f.file);
      out << fmt::format("# model_fuzz --seed {}: experiment {}, {}: {}: {}\n", opt_.seed, e.n, f.where, f.kind,
                         f.message);
      if (opt_.inject != Inject::None)
        out << "# (a failure injected with --inject-failure: vsocksim run does not reproduce it)\n";
      out << fmt::format("# reproduce: vsocksim run {}    (or: model_fuzz --replay {})\n",
                         fs::path(f.file).filename().string(), fs::path(f.file).filename().string());
      out << to_yaml(flat);
      if (!out.flush())
        throw std::runtime_error("cannot write " + f.file);
    } else {
      f.file = e.name;
    }
    if (opt_.verbosity > 0)
      std::cerr << fmt::format("model_fuzz: FAILURE {} {}: {}: {}{}\n", e.name, f.where, f.kind, f.message,
                               e.generated ? " (saved as " + f.file + ")" : "");
    failures_.push_back(std::move(f));
  }

  void print_summary(double wall)
  {
    std::string s;
    s += fmt::format("model_fuzz: {}{} run(s) in {:.1f} s: {:.1f} runs/s, {} simulation(s), {:.1f} simulations/s{}\n",
                     opt_.replay.empty() ? fmt::format("seed {}, ", opt_.seed) : "replay, ", finished_, wall,
                     wall > 0 ? finished_ / wall : 0.0, simulations_, wall > 0 ? simulations_ / wall : 0.0,
                     g_stop ? " (interrupted)" : "");
    auto share = [&](std::size_t k) { return finished_ ? 100.0 * static_cast<double>(k) / finished_ : 0.0; };
    s += fmt::format("  ok:       {} ({:.1f}%)\n", ok_, share(ok_));
    // The commonest reasons, numbers aside.
    auto top = [&](const std::map<std::string, std::size_t>& counts) {
      std::vector<std::pair<std::size_t, std::string>> reasons;
      for (const auto& [why, count] : counts)
        reasons.emplace_back(count, why);
      std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      for (std::size_t k = 0; k < reasons.size() && k < 5; ++k)
        s += fmt::format("    {:>6}  {}\n", reasons[k].first, reasons[k].second);
    };
    s += fmt::format("  refused:  {} ({:.1f}%)\n", refused_, share(refused_));
    top(refusals_);
    s += fmt::format("  hangs:    {} ({:.1f}%; the simulated system hangs as its kernel would: a result)\n", hangs_,
                     share(hangs_));
    top(hang_reasons_);
    s += fmt::format("  FAILED:   {} ({:.1f}%)\n", failures_.size(), share(failures_.size()));
    // By kind (first message of each), then by family (kind and message
    // with the numbers taken out).
    std::map<std::string, std::vector<const Failure*>> kinds, families;
    std::vector<std::string> kind_order, family_order;
    for (const Failure& f : failures_) {
      if (kinds[f.kind].empty())
        kind_order.push_back(f.kind);
      kinds[f.kind].push_back(&f);
      const std::string family = f.kind + ": " + normalize(f.message);
      if (families[family].empty())
        family_order.push_back(family);
      families[family].push_back(&f);
    }
    for (const std::string& k : kind_order) {
      const Failure& first = *kinds[k].front();
      s += fmt::format("    {:>6}  {}; first: {} {}: {}\n", kinds[k].size(), k, first.name, first.where, first.message);
    }
    if (!failures_.empty()) {
      s += "  failure families (kind and message, numbers as N), with the first saved input:\n";
      for (const std::string& fam : family_order)
        s += fmt::format("    {:>6}  {}\n            {}\n", families[fam].size(), fam, families[fam].front()->file);
    }
    s += fmt::format("  simulated: {:.4g} bytes, {:.4g} messages; longest simulation {:.2f} s ({})\n", simulated_bytes_,
                     simulated_messages_, longest_, longest_name_.empty() ? "none" : longest_name_);
    s += fmt::format("  inputs: sha256 {}\n", vsim::app::sha256_hex(digest_).substr(0, 16));
    std::cout << s << std::flush;
  }

  Options opt_;
  std::deque<std::unique_ptr<ExperimentRun>> active_;
  std::uint64_t next_ = 0;
  std::size_t finished_ = 0, ok_ = 0, refused_ = 0, hangs_ = 0, simulations_ = 0;
  double simulated_bytes_ = 0, simulated_messages_ = 0, longest_ = 0;
  std::string longest_name_;
  std::map<std::string, std::size_t> refusals_, hang_reasons_;
  std::vector<Failure> failures_;
  std::string digest_;
};

// ---- --minimize: the fewest keys that still fail the same way ------------------------------

// The keys of a saved experiment, nested maps flattened to dotted paths.
Input read_input(const std::string& path)
{
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
  if (!root.IsMap())
    throw InputError(path + ": not an experiment (a YAML map)");
  Input in;
  auto walk = [&](auto&& self, const YAML::Node& node, const std::string& prefix) -> void {
    for (const auto& kv : node) {
      const std::string key = prefix + kv.first.as<std::string>();
      if (kv.second.IsMap())
        self(self, kv.second, key + ".");
      else if (kv.second.IsScalar())
        in.set(key, kv.second.Scalar());
      else
        throw InputError(path + ": " + key + ": --minimize takes an experiment without lists (a saved failure)");
    }
  };
  walk(walk, root, "");
  return in;
}

// Every iteration of every point, one child at a time, until one does not
// end ok.
Outcome run_in_order(const Experiment& ex, double timeout, Inject inject)
{
  for (const vsim::app::Point& point : ex.points)
    for (std::int64_t i = 0; i < point.params.integer("iterations"); ++i) {
      Child c = spawn(point.params, static_cast<std::uint32_t>(i), inject);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
      Outcome o;
      for (;;) {
        pollfd pfds[2] = {{c.result_fd, POLLIN, 0}, {c.err_fd, POLLIN, 0}};
        ::poll(pfds, 2, 250);
        drain_pipes(c);
        if (c.result_fd < 0 && c.err_fd < 0) {
          o = classify(c, reap(c.pid));
          break;
        }
        if (g_stop || std::chrono::steady_clock::now() >= deadline) {
          kill_child(c);
          o.status = Outcome::Failed;
          o.kind = "hang";
          o.message = fmt::format("no result after {} s (wall clock)", number_text(timeout));
          break;
        }
      }
      if (o.status != Outcome::Ok || g_stop)
        return o;
    }
  return Outcome{};
}

// For each FILE: drops its keys one at a time (never transport, platform or
// the keys that keep runs short), keeping each drop after which the
// experiment still fails in the same family (kind and message, numbers
// aside); writes what is left as FILE.min.yaml.
int minimize(const Options& opt)
{
  for (const std::string& file : opt.minimize) {
    Input in = read_input(file);
    auto run = [&](const Input& candidate) {
      try {
        const Experiment ex = vsim::app::load_experiment_text(to_yaml(candidate), file, {}, reg());
        return run_in_order(ex, opt.timeout, opt.inject);
      } catch (const InputError& e) {
        Outcome o;
        o.status = Outcome::Refused;
        o.message = one_line(e.what());
        return o;
      }
    };
    const Outcome first = run(in);
    if (first.status != Outcome::Failed) {
      std::cout << fmt::format("model_fuzz: {}: does not fail ({}), nothing to minimize\n", file,
                               first.status == Outcome::Ok     ? "ok"
                               : first.status == Outcome::Hang ? "the simulated system hangs: " + first.message
                                                               : "refused: " + first.message);
      continue;
    }
    const std::string family = first.kind + ": " + normalize(first.message);
    const std::size_t before = in.keys.size();
    for (std::size_t k = 0; k < in.keys.size() && !g_stop;) {
      const std::string key = in.keys[k].first;
      if (key == "transport" || key == "platform" || kOverridden.count(key)) {
        ++k;
        continue;
      }
      Input candidate = in;
      candidate.erase(key);
      const Outcome o = run(candidate);
      if (o.status == Outcome::Failed && o.kind + ": " + normalize(o.message) == family)
        in = std::move(candidate);
      else
        ++k;
    }
    std::string out = file;
    if (out.ends_with(".yaml"))
      out.resize(out.size() - 5);
    out += ".min.yaml";
    std::ofstream f(out);
    f << fmt::format("# model_fuzz --minimize {}: {}: {}\n", fs::path(file).filename().string(), first.kind,
                     first.message);
    f << to_yaml(in);
    std::string keys;
    for (const auto& [k, v] : in.keys)
      if (k != "transport" && k != "platform" && !kOverridden.count(k))
        keys += fmt::format(" {}={}", k, v);
    std::cout << fmt::format("model_fuzz: {}: {} of {} keys left ({}:{}); written to {}\n", file, in.keys.size(),
                             before, in.find("transport") ? *in.find("transport") : "?", keys, out);
  }
  return g_stop ? 128 + g_stop : 0;
}

// ---- command line -------------------------------------------------------------------------

[[noreturn]] void usage_error(const std::string& why)
{
  std::cerr << "model_fuzz: error: " << why << "\n"
            << "usage: model_fuzz [--seed S] [--runs N] [--jobs J] [--time-limit SECONDS] [--timeout SECONDS]\n"
               "                  [--max-messages N] [--out DIR] [-q|-v] [--inject-failure throw|crash|hang|leak]\n"
               "       model_fuzz --replay FILE... [--jobs J] [--timeout SECONDS]\n"
               "       model_fuzz --list [--seed S] [--runs N]\n"
               "       model_fuzz --minimize FILE... [--timeout SECONDS]\n";
  std::exit(2);
}

std::uint64_t parse_count(const std::string& opt, const std::string& text)
{
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    usage_error(fmt::format("{} needs a whole number, got '{}'", opt, text));
  return std::stoull(text);
}

double parse_seconds(const std::string& opt, const std::string& text)
{
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    usage_error(fmt::format("{} needs a positive number of seconds, got '{}'", opt, text));
  return v;
}

Options parse(int argc, char** argv)
{
  Options o;
  bool replay = false, minimizing = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seed")
      o.seed = parse_count(a, value());
    else if (a == "--runs")
      o.runs = parse_count(a, value());
    else if (a == "--jobs") {
      const std::uint64_t j = parse_count(a, value());
      if (j < 1 || j > 1024)
        usage_error("--jobs must be 1 .. 1024");
      o.jobs = static_cast<unsigned>(j);
    } else if (a == "--time-limit")
      o.time_limit = parse_seconds(a, value());
    else if (a == "--timeout")
      o.timeout = parse_seconds(a, value());
    else if (a == "--max-messages") {
      max_messages = static_cast<double>(parse_count(a, value()));
      if (max_messages < 1)
        usage_error("--max-messages must be at least 1");
    } else if (a == "--out") {
      o.out = value();
      if (o.out.empty())
        usage_error("--out needs a directory");
    } else if (a == "--replay")
      replay = true;
    else if (a == "--minimize")
      minimizing = true;
    else if (a == "--list")
      o.list = true;
    else if (a == "-q" || a == "--quiet")
      o.verbosity = 0;
    else if (a == "-v" || a == "--verbose")
      o.verbosity = 2;
    else if (a == "--inject-failure") {
      const std::string k = value();
      if (k == "throw")
        o.inject = Inject::Throw;
      else if (k == "crash")
        o.inject = Inject::Crash;
      else if (k == "hang")
        o.inject = Inject::Hang;
      else if (k == "leak")
        o.inject = Inject::Leak;
      else
        usage_error("--inject-failure takes throw, crash, hang or leak, got '" + k + "'");
    } else if (a == "-h" || a == "--help") {
      std::cout << "model_fuzz: random valid experiments from the parameter declarations, each simulated in a "
                   "child with a timeout;\nfailures saved as replayable experiments (see the top of "
                   "tests/fuzz/model_fuzz.cpp)\n";
#if defined(MODEL_FUZZ_ASAN)
      std::cout << "built with AddressSanitizer: a leak in a simulation is a failure\n";
#endif
      std::exit(0);
    } else if ((replay || minimizing) && !a.starts_with("-"))
      (replay ? o.replay : o.minimize).push_back(a);
    else
      usage_error("unknown argument '" + a + "'");
  }
  if (replay && o.replay.empty())
    usage_error("--replay needs at least one FILE");
  if (minimizing && o.minimize.empty())
    usage_error("--minimize needs at least one FILE");
  if (static_cast<int>(replay) + static_cast<int>(minimizing) + static_cast<int>(o.list) > 1)
    usage_error("--replay, --minimize and --list do not go together");
  if (o.jobs == 0)
    o.jobs = std::max(1u, std::thread::hardware_concurrency());
  return o;
}

} // namespace

int main(int argc, char** argv)
{
  Options opt = parse(argc, argv);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  try {
    Fuzz fuzz(opt);
    if (!opt.minimize.empty())
      return minimize(opt);
    return opt.list ? fuzz.list() : fuzz.run();
  } catch (const std::exception& e) {
    std::cerr << "model_fuzz: error: " << e.what() << "\n";
    return 2;
  }
}
