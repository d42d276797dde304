#include "app/experiment/experiment.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "app/experiment/describe.hpp"
#include "app/experiment/key_tree.hpp"
#include "app/experiment/origin.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/profile_file.hpp"
#include "app/experiment/scalar.hpp"
#include "app/experiment/search_spec.hpp"
#include "app/experiment/sha256.hpp"
#include "app/experiment/text.hpp"
#include "app/experiment/units.hpp"
#include "transports/hv_sock/params.hpp"
#include "transports/transport.hpp"
#include "transports/virtio_vsock/params.hpp"

namespace vsim::app {

namespace {

using namespace load;

// Upper bound on the points of one sweep: a typo such as a 1000-value list
// in a 4-axis grid should be an error, not an out-of-memory.
constexpr std::size_t kMaxPoints = 100000;

bool is_cost(const std::string& path)
{
  return path.rfind("costs.", 0) == 0;
}

// ---------------------------------------------------------------------------
// The loader: collects explicit values and sweep axes from the file and the
// --set entries, then resolves and expands.

enum class AxisKind { Grid, Zip };

const char* axis_name(AxisKind k)
{
  return k == AxisKind::Grid ? "sweep.grid" : "sweep.zip";
}

struct Axis {
  std::string key;
  std::vector<Given> values;
  Origin at;     // the list
  Origin key_at; // the key
};

class Loader {
public:
  Loader(const ParamRegistry& reg, std::string file) : tree_(reg), reg_(reg), file_(std::move(file)) {}

  void read_file(const std::string& text)
  {
    const YAML::Node root = read_document(text, file_, "a map of experiment keys, see 'vsocksim describe'");
    walk_map(root, "");
    check_zip_lengths();
  }

  void apply_set(const std::string& entry)
  {
    const Origin at = in_set(entry);
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos)
      fail(at, entry, "missing '=' (allowed: KEY=VALUE, e.g. workload.message_size=4KiB)");
    const std::string key = trim(entry.substr(0, eq));
    if (key.empty())
      fail(at, "", "missing key before '=' (allowed: KEY=VALUE, e.g. workload.message_size=4KiB)");
    YAML::Node value;
    try {
      value = YAML::Load(entry.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      fail(at, key, "invalid YAML value: " + e.msg);
    }
    if (auto kind = axis_kind_of(key)) {
      set_axis(*kind, key.substr(std::strlen(axis_name(*kind)) + 1), value, at, at);
    } else if (key == "search" || key.rfind("search.", 0) == 0) {
      fail(at, key, "the search section is set in the file (allowed: `vsocksim search` options --budget and --seed)");
    } else if (key == "sweep" || key == "sweep.grid" || key == "sweep.zip") {
      fail(at, key, "set one sweep axis at a time (allowed: sweep.grid.KEY=[v1, v2], sweep.zip.KEY=[v1, v2])");
    } else if (const ParamSpec* spec = tree_.param(key)) {
      given_[key] = value_of(*spec, value, at);
      remove_axis(grid_, key);
      remove_axis(zip_, key);
    } else if (tree_.is_group(key)) {
      fail(at, key, with_allowed("a group of keys, not a key; set one of them", tree_.children(key)));
    } else {
      fail(at, key, tree_.unknown_key(key));
    }
  }

  Experiment finish(const std::string& display_name)
  {
    Experiment ex;
    ex.file = display_name;
    stem_ = std::filesystem::path(display_name).stem().string();
    ex.base = resolve(given_);
    ex.name = ex.base.text("name");
    for (const auto& a : grid_)
      ex.grid_keys.push_back(a.key);
    for (const auto& a : zip_)
      ex.zip_keys.push_back(a.key);
    for (const auto& [key, g] : given_)
      ex.given.push_back(key);
    expand(ex);
    if (search_) {
      if (!grid_.empty() || !zip_.empty())
        fail(search_->at, "search",
             with_allowed("a search cannot also have a sweep: its knobs are search.space",
                          "remove sweep, or put its keys in search.space"));
      if (search_->rank != "central" && !ex.base.boolean("sim.ensemble"))
        fail(search_->rank_at, "search.rank",
             with_allowed(fmt::format("ranking by the members ('{}') needs them run", search_->rank),
                          "central, or sim.ensemble: true (`vsocksim search --ensemble`) with a profile that has "
                          "an ensemble"));
      search_->given = given_;
      ex.search = std::make_shared<const SearchSpec>(std::move(*search_));
    }
    if (const std::int64_t b = ex.base.integer("report.baseline"); b >= static_cast<std::int64_t>(ex.points.size()))
      fail(with_file(origin_of(given_, "report.baseline")), "report.baseline",
           with_allowed(fmt::format("point {} does not exist", b),
                        fmt::format("-1 for none, or 0 to {}; `run --list` gives the indices", ex.points.size() - 1)));
    ex.canonical = canonical(ex.base, ex.search.get());
    ex.config_sha256 = sha256_hex(ex.canonical);
    return ex;
  }

  // A search's point: the file's values with the knobs' put in
  // (search_point()).
  Point search_point(const Experiment& ex, const std::vector<std::size_t>& choice, std::size_t index)
  {
    stem_ = std::filesystem::path(ex.file).stem().string();
    std::map<std::string, Given> given = ex.search->given;
    Point point{index, {}, {}};
    for (std::size_t k = 0; k < ex.search->space.size(); ++k) {
      const SearchKnob& knob = ex.search->space[k];
      const Given& g = knob.values.at(choice.at(k));
      given[knob.key] = g;
      point.label.emplace_back(knob.key, g.raw);
    }
    point.params = resolve(given);
    check_point(point.params, given);
    attach_members(point, given);
    return point;
  }

private:
  static std::string trim(const std::string& s)
  {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
  }

  Origin mark(const YAML::Mark& m) const
  {
    if (m.is_null())
      return in_file(file_);
    return in_file(file_, m.line + 1, m.column + 1);
  }

  // A null value has no useful mark of its own: point at its key instead.
  Origin mark_of(const YAML::Node& value, const Origin& key_at) const
  {
    return value.IsNull() || value.Mark().is_null() ? key_at : mark(value.Mark());
  }

  static std::optional<AxisKind> axis_kind_of(const std::string& path)
  {
    for (AxisKind k : {AxisKind::Grid, AxisKind::Zip}) {
      const std::string prefix = std::string(axis_name(k)) + ".";
      if (path.size() > prefix.size() && path.rfind(prefix, 0) == 0)
        return k;
    }
    return std::nullopt;
  }

  Given value_of(const ParamSpec& spec, const YAML::Node& node, const Origin& at) const
  {
    if (node.IsNull())
      fail(at, spec.path,
           with_allowed(fmt::format("expected {}, got no value", expected_kind(spec.kind)), allowed_values(spec)));
    Given g = convert_node(spec, node, at);
    if (spec.path == "platform")
      g.value = platform_name(g, at);
    return g;
  }

  // A `platform` that is a profile file's path, relative to the experiment
  // file (as validation.measurements is): the file is read and checked, and
  // the point names the profile it holds.
  std::string platform_name(const Given& g, const Origin& at) const
  {
    const std::string& v = std::get<std::string>(g.value);
    if (!is_profile_path(v))
      return v;
    const std::filesystem::path path = std::filesystem::path(file_).parent_path() / v;
    return load_profile_file(path.string(), at).name;
  }

  // Each pair of a map; reports the second of two equal keys in one map.
  template <class F> void for_each_pair(const YAML::Node& map, const std::string& prefix, F&& f)
  {
    std::map<std::string, Origin> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first; // a copy: yaml-cpp's iterator hands out a temporary proxy
      const Origin key_at = mark(k.Mark());
      const std::string shown_prefix = prefix.empty() ? "" : prefix + ".";
      if (!k.IsScalar() || k.Scalar().empty())
        fail(key_at, prefix, fmt::format("keys must be words, got {}", k.IsScalar() ? "an empty key" : node_kind(k)));
      const std::string path = shown_prefix + k.Scalar();
      auto [first, fresh] = seen.emplace(k.Scalar(), key_at);
      if (!fresh)
        fail(key_at, path, duplicate(first->second));
      f(path, k.Scalar(), key_at, it->second);
    }
  }

  static std::string duplicate(const Origin& first)
  {
    return fmt::format("duplicate key (first given at line {}, column {})", first.line, first.column);
  }

  void walk_map(const YAML::Node& map, const std::string& prefix)
  {
    const bool outer = in_flow_map_;
    in_flow_map_ = map.Style() == YAML::EmitterStyle::Flow;
    for_each_pair(map, prefix,
                  [&](const std::string& path, const std::string&, const Origin& key_at, const YAML::Node& value) {
                    take(path, key_at, value);
                  });
    in_flow_map_ = outer;
  }

  void expect_map(const std::string& path, const Origin& key_at, const YAML::Node& value, const std::string& allowed)
  {
    if (!value.IsMap())
      fail(mark_of(value, key_at), path,
           with_allowed(fmt::format("expected a map of keys, got {}", node_kind(value)), allowed));
  }

  void take(const std::string& path, const Origin& key_at, const YAML::Node& value)
  {
    if (path == "search") {
      SearchReader r;
      r.file = file_;
      r.param = [this](const std::string& p) { return tree_.param(p); };
      r.parameters_near = [this](const std::string& p) { return tree_.sweepable_near(p); };
      r.value_of = [this](const ParamSpec& spec, const YAML::Node& node, const Origin& at) {
        return value_of(spec, node, at);
      };
      r.registry = &reg_;
      search_ = read_search(value, key_at, r);
    } else if (path == "sweep") {
      expect_map(path, key_at, value, tree_.children(path));
      walk_map(value, path);
    } else if (path == "sweep.grid" || path == "sweep.zip") {
      const AxisKind kind = path == "sweep.grid" ? AxisKind::Grid : AxisKind::Zip;
      expect_map(path, key_at, value, "parameter paths mapped to lists of values");
      for_each_pair(value, path,
                    [&](const std::string&, const std::string& key, const Origin& at, const YAML::Node& list) {
                      add_axis(kind, key, list, at);
                    });
    } else if (auto kind = axis_kind_of(path)) {
      add_axis(*kind, path.substr(std::strlen(axis_name(*kind)) + 1), value, key_at);
    } else if (const ParamSpec* spec = tree_.param(path)) {
      auto [first, fresh] = leaf_seen_.emplace(path, key_at);
      if (!fresh)
        fail(key_at, path, duplicate(first->second));
      given_[path] = value_of(*spec, value, mark_of(value, key_at));
    } else if (tree_.is_group(path)) {
      expect_map(path, key_at, value, tree_.children(path));
      walk_map(value, path);
    } else if (in_flow_map_ && value.IsNull()) {
      // `report: {metrics: a,b}`: in a flow mapping a comma ends an entry,
      // so `b` became a key of its own, without a value.
      fail(key_at, path,
           with_allowed(fmt::format("unknown key: in a mapping written {{...}} a comma ends an entry, so '{}' "
                                    "became a key of its own (a value with commas split in two?)",
                                    path.substr(path.rfind('.') + 1)),
                        "quote the value, {metrics: 'a,b'}, or write the mapping one key per line"));
    } else {
      fail(key_at, path, tree_.unknown_key(path));
    }
  }

  // The parameter a sweep key names, or an error at the key.
  const ParamSpec& sweep_param(AxisKind kind, const std::string& key, const Origin& key_at) const
  {
    const std::string shown = std::string(axis_name(kind)) + "." + key;
    const ParamSpec* spec = tree_.param(key);
    if (!spec)
      fail(key_at, shown, with_allowed(fmt::format("'{}' is not a parameter", key), tree_.sweepable_near(key)));
    return *spec;
  }

  Axis make_axis(AxisKind kind, const std::string& key, const YAML::Node& list, const Origin& key_at,
                 const Origin& list_at) const
  {
    const ParamSpec& spec = sweep_param(kind, key, key_at);
    const std::string shown = std::string(axis_name(kind)) + "." + key;
    if (!list.IsSequence())
      fail(list_at, shown, fmt::format("expected a list of values, got {}", node_kind(list)));
    if (list.size() == 0)
      fail(list_at, shown, "the list is empty (allowed: one or more values)");
    Axis axis{key, {}, list_at, key_at};
    for (const auto& element : list)
      axis.values.push_back(value_of(spec, element, list_at.set_text.empty() ? mark_of(element, list_at) : list_at));
    return axis;
  }

  // From the file: each key may appear once over grid and zip together.
  void add_axis(AxisKind kind, const std::string& key, const YAML::Node& list, const Origin& key_at)
  {
    sweep_param(kind, key, key_at);
    for (AxisKind other : {AxisKind::Grid, AxisKind::Zip})
      for (const auto& a : axes(other))
        if (a.key == key)
          fail(key_at, std::string(axis_name(kind)) + "." + key,
               other == kind ? duplicate(a.key_at)
                             : fmt::format("already swept in {} at line {}, column {} (a key can be swept only once)",
                                           axis_name(other), a.key_at.line, a.key_at.column));
    axes(kind).push_back(make_axis(kind, key, list, key_at, mark_of(list, key_at)));
  }

  // From --set: replaces the axis in place, or appends it; removes the key
  // from the other kind of axis.
  void set_axis(AxisKind kind, const std::string& key, const YAML::Node& list, const Origin& key_at,
                const Origin& list_at)
  {
    Axis axis = make_axis(kind, key, list, key_at, list_at);
    if (kind == AxisKind::Zip)
      for (const auto& other : zip_)
        if (other.key != key)
          check_zip_length(axis, other);
    remove_axis(axes(kind == AxisKind::Grid ? AxisKind::Zip : AxisKind::Grid), key);
    auto& mine = axes(kind);
    for (auto& a : mine)
      if (a.key == key) {
        a = std::move(axis);
        return;
      }
    mine.push_back(std::move(axis));
  }

  static void remove_axis(std::vector<Axis>& axes, const std::string& key)
  {
    std::erase_if(axes, [&](const Axis& a) { return a.key == key; });
  }

  std::vector<Axis>& axes(AxisKind k) { return k == AxisKind::Grid ? grid_ : zip_; }
  const std::vector<Axis>& axes(AxisKind k) const { return k == AxisKind::Grid ? grid_ : zip_; }

  // Every zip list must be as long as the first one; a --set list is checked
  // against the others when it is set, so the error names the entry.
  void check_zip_lengths() const
  {
    for (const auto& a : zip_)
      check_zip_length(a, zip_.front());
  }

  static void check_zip_length(const Axis& a, const Axis& reference)
  {
    if (a.values.size() != reference.values.size())
      fail(a.at, std::string("sweep.zip.") + a.key,
           fmt::format("the list has {} value{} but sweep.zip.{} has {} (zip lists must have equal lengths)",
                       a.values.size(), a.values.size() == 1 ? "" : "s", reference.key, reference.values.size()));
  }

  // A key's declaration with the transport's own default, if it has one.
  static ParamSpec transport_default(const ParamSpec& spec, const std::string& transport)
  {
    const Transport* t = find_transport(transport);
    if (t == nullptr || !t->defaults.count(spec.path))
      return spec;
    ParamSpec own = spec;
    own.default_text = t->defaults.at(spec.path);
    return own;
  }

  // Every declared key: the given value, else its default; costs.* default
  // to the value in the point's platform profile.
  Params resolve(const std::map<std::string, Given>& given) const
  {
    // The transport first: a point keeps only the keys of its own transport.
    const std::string transport = given.count("transport")
                                      ? std::get<std::string>(given.at("transport").value)
                                      : std::get<std::string>(default_value(*reg_.find("transport")));
    Params p;
    for (const auto& spec : reg_.all()) {
      if (auto it = given.find(spec.path); it != given.end())
        p.set(spec.path, it->second.value);
      else if (!scope_applies(spec.scope, transport))
        continue;
      else if (!is_cost(spec.path) && spec.default_text != kFromPreset)
        p.set(spec.path, default_value(transport_default(spec, transport)));
    }
    if (!given.count("platform")) // the transport's own (issue 51, item 5)
      p.set("platform", default_platform(transport));
    const PlatformProfile* profile = find_profile(p.text("platform"));
    if (!profile)
      throw std::logic_error("platform '" + p.text("platform") + "' is a choice without a profile");
    for (const auto& spec : reg_.all()) {
      if (p.has(spec.path) || (!scope_applies(spec.scope, transport)))
        continue;
      if (spec.default_text == kFromPreset) {
        // A knob the user did not set: the value of the point's preset (its
        // transport's `<transport>.preset`).
        const Preset* preset = spec.scope == "hv_sock" ? hv_sock::find_preset(p.text("hv_sock.preset"))
                                                       : virtio_vsock::find_preset(p.text("virtio_vsock.preset"));
        if (!preset || !preset->values.count(spec.path))
          throw std::logic_error("preset has no value for " + spec.path);
        ParamSpec from_preset = spec;
        from_preset.default_text = preset->values.at(spec.path);
        p.set(spec.path, default_value(from_preset));
        continue;
      }
      if (!is_cost(spec.path))
        continue;
      auto it = profile->costs.find(spec.path.substr(6));
      if (it == profile->costs.end()) {
        if (profile->transport != transport)
          continue; // check_point reports the platform/transport mismatch
        throw std::logic_error("platform profile '" + profile->name + "' has no value for " + spec.path);
      }
      p.set(spec.path, it->second);
    }
    if (p.text("name").empty()) {
      if (invalid_utf8_at(stem_) != std::string::npos)
        fail(in_file(file_), "name",
             "the file name is not UTF-8 text, so it cannot be the default name (allowed: set name to UTF-8 text)");
      p.set("name", stem_);
    }
    return p;
  }

  // Where the point's value of KEY came from (no position for a default).
  static Origin origin_of(const std::map<std::string, Given>& given, const std::string& key)
  {
    auto it = given.find(key);
    return it == given.end() ? Origin{} : it->second.at;
  }

  void check_point(const Params& p, const std::map<std::string, Given>& given) const
  {
    const std::string& transport = p.text("transport");
    const Origin transport_at = origin_of(given, "transport");
    if (!find_transport(transport))
      fail(with_file(transport_at), "transport",
           with_allowed(transport + " is not implemented yet", join(transport_names())));
    check_socket_keys(p, given, transport);
    // A key of another transport set for this point (e.g. hv_sock.sndbuf
    // with transport: virtio_vsock) would be silently meaningless.
    for (const auto& [path, g] : given) {
      const ParamSpec* spec = reg_.find(path);
      if (spec && !scope_applies(spec->scope, transport))
        fail(with_file(g.at), path,
             with_allowed(fmt::format("applies to transport {} only, and this point's transport is {}",
                                      scope_text(spec->scope), transport),
                          "keys of " + transport + " (see `vsocksim describe " + transport + "`)"));
    }
    // Combinations that cannot mean what they say.
    check_pattern(p, given);
    // Combinations of valid values the transport does not model.
    if (const Transport* t = find_transport(transport); t->refusal != nullptr) {
      const auto [key, why] = t->refusal(p);
      if (!key.empty())
        fail(with_file(origin_of(given, key)), key, why);
    }
    if (p.text("workload.pattern") == "stream" &&
        p.integer("workload.message_size") > p.integer("workload.total_bytes")) {
      // Blame the key the user set (the message size when both were).
      if (given.count("workload.message_size") || !given.count("workload.total_bytes"))
        fail(with_file(origin_of(given, "workload.message_size")), "workload.message_size",
             with_allowed(fmt::format("{} bytes is more than workload.total_bytes ({} bytes): not one whole "
                                      "message would be sent",
                                      p.integer("workload.message_size"), p.integer("workload.total_bytes")),
                          "at most workload.total_bytes"));
      fail(with_file(origin_of(given, "workload.total_bytes")), "workload.total_bytes",
           with_allowed(fmt::format("{} bytes is less than workload.message_size ({} bytes): not one whole message "
                                    "would be sent",
                                    p.integer("workload.total_bytes"), p.integer("workload.message_size")),
                        "at least workload.message_size"));
    }
    // A threshold the user set above the buffer (the kernel's constant above
    // a buffer shrunk with SO_VM_SOCKETS_BUFFER_SIZE is real behaviour:
    // a credit update on every read).
    if (transport == "virtio_vsock" && given.count("virtio_vsock.credit_threshold") &&
        p.text("virtio_vsock.credit_update") != "every_read" &&
        p.integer("virtio_vsock.credit_threshold") > p.integer("virtio_vsock.buf_alloc"))
      fail(with_file(origin_of(given, "virtio_vsock.credit_threshold")), "virtio_vsock.credit_threshold",
           with_allowed(fmt::format("{} bytes is more than virtio_vsock.buf_alloc ({} bytes): the free space the "
                                    "peer sees is always below it, so the threshold would change nothing",
                                    p.integer("virtio_vsock.credit_threshold"), p.integer("virtio_vsock.buf_alloc")),
                        "at most virtio_vsock.buf_alloc"));
    if (transport == "virtio_vsock")
      check_virtio_kernel(p, given);
    // A tick that would take its whole period (or more) leaves no time to run.
    for (const char* side : {"guest", "host"}) {
      const std::string hz = fmt::format("costs.{}_tick_hz", side), cost = fmt::format("costs.{}_tick", side);
      const double f = p.number(hz);
      if (f > 0 && p.number(cost) >= p.number("costs.clock_ghz") * 1e9 / f / 2) {
        const std::string key = given.count(cost) || !given.count(hz) ? cost : hz;
        fail(with_file(origin_of(given, key)), key,
             with_allowed(
                 fmt::format("a tick of {:g} cycles {:g} times a second takes half the CPU or more at {:g} "
                             "GHz",
                             p.number(cost), f, p.number("costs.clock_ghz")),
                 fmt::format("{} below {:g} cycles at this rate", cost, p.number("costs.clock_ghz") * 1e9 / f / 2)));
      }
    }
    const PlatformProfile* profile = find_profile(p.text("platform"));
    if (profile->transport == transport) {
      // The L2 modelled needs the rate of a copy out of the L3 (models/cache_reuse.hpp).
      if (p.has("costs.virtio_l2_bytes") && p.number("costs.virtio_l2_bytes") > 0 &&
          (!p.has("costs.virtio_l3_copy_bytes_per_cycle") || p.number("costs.virtio_l3_copy_bytes_per_cycle") <= 0)) {
        const std::string key =
            given.count("costs.virtio_l2_bytes") ? "costs.virtio_l2_bytes" : "costs.virtio_l3_copy_bytes_per_cycle";
        fail(with_file(origin_of(given, key)), key,
             with_allowed(fmt::format("virtio_l2_bytes {:g} models each core's L2, but the platform has no "
                                      "virtio_l3_copy_bytes_per_cycle: evicted lines would copy at no rate",
                                      p.number("costs.virtio_l2_bytes")),
                          "costs.virtio_l3_copy_bytes_per_cycle above 0 with it (4-18 bytes/cycle plausible), or "
                          "costs.virtio_l2_bytes 0"));
      }
      return;
    }
    std::vector<std::string> compatible;
    for (const auto& prof : platform_profiles())
      if (prof.transport == transport)
        compatible.push_back(prof.name);
    Origin at = origin_of(given, "platform");
    if (!at.positioned())
      at = transport_at;
    fail(with_file(at), "platform",
         with_allowed(
             fmt::format("{} is calibrated for transport {}, not {}", profile->name, profile->transport, transport),
             "with " + transport + ": " + (compatible.empty() ? "none yet" : join(compatible))));
  }

  // sim.ensemble: the point's parameters for each member of its profile's
  // ensemble: the member's costs, but those the experiment sets (given or
  // swept). A profile without an ensemble is refused.
  void attach_members(Point& point, const std::map<std::string, Given>& given) const
  {
    if (!point.params.boolean("sim.ensemble"))
      return;
    const PlatformProfile* profile = find_profile(point.params.text("platform"));
    if (!has_ensemble(*profile)) {
      Origin at = origin_of(given, "sim.ensemble");
      fail(with_file(at), "sim.ensemble",
           with_allowed(fmt::format("platform {} has no ensemble to run", profile->name),
                        "false, or a profile written by `vsocksim calibrate --ensemble N` (`vsocksim describe "
                        "platforms` says which have one)"));
    }
    for (const EnsembleMember& m : profile->ensemble->members) {
      MemberPoint mp{m.weight, point.params};
      for (const auto& [cost, value] : m.costs)
        if (!given.count("costs." + cost))
          mp.params.set("costs." + cost, value);
      point.members.push_back(std::move(mp));
    }
  }

  // workload.socket_type and workload.zerocopy: what the kernel refuses
  // before the benchmark sends anything.
  void check_socket_keys(const Params& p, const std::map<std::string, Given>& given, const std::string& transport) const
  {
    const bool seqpacket = p.has("workload.socket_type") && p.text("workload.socket_type") == "seqpacket";
    const bool zerocopy = p.has("workload.zerocopy") && p.boolean("workload.zerocopy");
    if (transport != "virtio_vsock") {
      // af_vsock.c: vsock_assign_transport() refuses SOCK_SEQPACKET with
      // ESOCKTNOSUPPORT without seqpacket_allow; vsock_connectible_sendmsg()
      // refuses MSG_ZEROCOPY with EOPNOTSUPP without msgzerocopy_allow.
      if (seqpacket)
        fail(with_file(origin_of(given, "workload.socket_type")), "workload.socket_type",
             with_allowed(fmt::format("seqpacket: {} has no SOCK_SEQPACKET (its transport has no seqpacket_allow, "
                                      "so connect() fails with ESOCKTNOSUPPORT)",
                                      transport),
                          "stream (leave it unset), or seqpacket with transport virtio_vsock"));
      if (zerocopy)
        fail(with_file(origin_of(given, "workload.zerocopy")), "workload.zerocopy",
             with_allowed(fmt::format("true: {} has no MSG_ZEROCOPY (its transport has no msgzerocopy_allow, so "
                                      "sendmsg(MSG_ZEROCOPY) fails with EOPNOTSUPP)",
                                      transport),
                          "false (leave it unset), or true with transport virtio_vsock"));
      return;
    }
    if (p.text("workload.app") == "iperf3" && (seqpacket || zerocopy)) {
      const char* key = seqpacket ? "workload.socket_type" : "workload.zerocopy";
      fail(with_file(origin_of(given, key)), key,
           with_allowed(fmt::format("{}: the iperf3 model writes a SOCK_STREAM socket with plain write()s",
                                    seqpacket ? "seqpacket" : "true"),
                        "with workload.app iperf3: stream and false; otherwise workload.app loop"));
    }
    // virtio_transport_seqpacket_enqueue(): -EMSGSIZE for a message larger
    // than the peer's buf_alloc.
    // The messages are message_size bytes, or under request_response the
    // requests and responses.
    const char* message_key = "workload.message_size";
    if (p.text("workload.pattern") == "request_response")
      message_key = p.integer("workload.request_size") >= p.integer("workload.response_size")
                        ? "workload.request_size"
                        : "workload.response_size";
    if (seqpacket && p.integer(message_key) > p.integer("virtio_vsock.buf_alloc")) {
      const bool blame_buffer = given.count("virtio_vsock.buf_alloc") && !given.count(message_key);
      const char* key = blame_buffer ? "virtio_vsock.buf_alloc" : message_key;
      fail(with_file(origin_of(given, key)), key,
           with_allowed(
               fmt::format("a message of {} bytes is more than the peer's buffer, virtio_vsock.buf_alloc ({} "
                           "bytes): virtio_transport_seqpacket_enqueue refuses it with EMSGSIZE",
                           p.integer(message_key), p.integer("virtio_vsock.buf_alloc")),
               fmt::format("with workload.socket_type seqpacket, {} at most virtio_vsock.buf_alloc", message_key)));
    }
    // MSG_ZEROCOPY (6.7) sends skbs whose data are the pinned pages as
    // fragments: no kernel has it with struct virtio_vsock_pkt (before 6.3).
    if (zerocopy && p.text("virtio_vsock.packet_type") != "sk_buff") {
      const bool blame_type = given.count("virtio_vsock.packet_type") && !given.count("workload.zerocopy");
      if (blame_type)
        fail(with_file(origin_of(given, "virtio_vsock.packet_type")), "virtio_vsock.packet_type",
             with_allowed("virtio_vsock_pkt cannot go with workload.zerocopy true: MSG_ZEROCOPY (Linux 6.7) sends "
                          "sk_buffs with the pinned pages as fragments (Linux 6.3)",
                          "sk_buff while workload.zerocopy is true"));
      fail(with_file(origin_of(given, "workload.zerocopy")), "workload.zerocopy",
           with_allowed("true needs virtio_vsock.packet_type sk_buff: MSG_ZEROCOPY (Linux 6.7) sends sk_buffs with "
                        "the pinned pages as fragments, and this point's packets are virtio_vsock_pkt (before Linux "
                        "6.3)",
                        "false, or true with a preset from linux-6.6 on (or packet_type sk_buff)"));
    }
  }

  // Knobs no kernel has together: the guest tx fast path (efcd71af38be,
  // 6.12) sends sk_buffs; it came after the sk_buff conversion (71dc9ec9ac7d,
  // 6.3). Blames the key the user set (the fast path when both were).
  void check_virtio_kernel(const Params& p, const std::map<std::string, Given>& given) const
  {
    if (!p.boolean("virtio_vsock.tx_fast_path") || p.text("virtio_vsock.packet_type") != "virtio_vsock_pkt")
      return;
    if (given.count("virtio_vsock.tx_fast_path") || !given.count("virtio_vsock.packet_type"))
      fail(with_file(origin_of(given, "virtio_vsock.tx_fast_path")), "virtio_vsock.tx_fast_path",
           with_allowed("true needs virtio_vsock.packet_type sk_buff: the guest tx fast path (Linux 6.12) sends "
                        "sk_buffs, and this point's packets are virtio_vsock_pkt (before Linux 6.3)",
                        "false with packet_type virtio_vsock_pkt"));
    fail(with_file(origin_of(given, "virtio_vsock.packet_type")), "virtio_vsock.packet_type",
         with_allowed("virtio_vsock_pkt cannot go with tx_fast_path true: the guest tx fast path (Linux 6.12) sends "
                      "sk_buffs (Linux 6.3)",
                      "sk_buff while tx_fast_path is true"));
  }

  // workload.pattern against the keys that belong to another pattern, and
  // the transports that model it.
  void check_pattern(const Params& p, const std::map<std::string, Given>& given) const
  {
    const std::string& pattern = p.text("workload.pattern");
    if (pattern != "stream" && p.text("transport") == "virtio_vsock" && p.text("workload.app") == "iperf3") {
      Origin at = origin_of(given, "workload.pattern");
      fail(with_file(at.positioned() ? at : origin_of(given, "workload.app")), "workload.pattern",
           with_allowed(fmt::format("workload.pattern {}: iperf3 only streams (its request/response counterpart "
                                    "is another benchmark)",
                                    pattern),
                        "stream with workload.app iperf3; otherwise workload.app loop"));
    }
    // Each key and the patterns it belongs to.
    static const std::vector<std::pair<std::string, std::vector<std::string>>> belongs = {
        {"workload.total_bytes", {"stream"}},
        {"workload.message_size", {"stream", "ping_pong"}},
        {"workload.transactions", {"ping_pong", "request_response"}},
        {"workload.request_size", {"request_response"}},
        {"workload.response_size", {"request_response"}},
        {"workload.outstanding", {"request_response"}},
        {"workload.think_time", {"request_response"}},
        {"workload.think_time_distribution", {"request_response"}},
    };
    for (const auto& [key, patterns] : belongs) {
      if (!given.count(key) || std::find(patterns.begin(), patterns.end(), pattern) != patterns.end())
        continue;
      const bool both = key == "workload.total_bytes" && given.count("workload.transactions");
      fail(with_file(origin_of(given, key)), key,
           with_allowed(both ? fmt::format("set with workload.transactions, which counts the round trips of "
                                           "workload.pattern {}: total_bytes is for stream",
                                           pattern)
                             : fmt::format("has no meaning under workload.pattern {}", pattern),
                        "with workload.pattern " + join(patterns, " or ")));
    }
  }

  Origin with_file(Origin at) const
  {
    if (at.set_text.empty() && at.file.empty())
      at.file = file_;
    return at;
  }

  void expand(Experiment& ex) const
  {
    const std::size_t zip_len = zip_.empty() ? 1 : zip_.front().values.size();
    std::size_t total = 1;
    auto multiply = [&](const Axis& a, std::size_t n, const char* kind) {
      total *= n;
      if (total > kMaxPoints)
        fail(a.key_at, fmt::format("{}.{}", kind, a.key),
             fmt::format("the sweep has more than {} points (allowed: at most {})", kMaxPoints, kMaxPoints));
    };
    if (!zip_.empty())
      multiply(zip_.front(), zip_len, "sweep.zip");
    for (const auto& a : grid_)
      multiply(a, a.values.size(), "sweep.grid");
    std::vector<std::size_t> pos(grid_.size(), 0); // odometer over the grid, last key fastest
    for (std::size_t index = 0; index < total; ++index) {
      const std::size_t z = index / (total / zip_len);
      std::size_t rest = index % (total / zip_len);
      for (std::size_t g = grid_.size(); g-- > 0;) {
        pos[g] = rest % grid_[g].values.size();
        rest /= grid_[g].values.size();
      }
      std::map<std::string, Given> given = given_;
      Point point{index, {}, {}};
      for (const auto& a : zip_) {
        given[a.key] = a.values[z];
        point.label.emplace_back(a.key, a.values[z].raw);
      }
      for (std::size_t g = 0; g < grid_.size(); ++g) {
        given[grid_[g].key] = grid_[g].values[pos[g]];
        point.label.emplace_back(grid_[g].key, grid_[g].values[pos[g]].raw);
      }
      point.params = resolve(given);
      check_point(point.params, given);
      attach_members(point, given);
      ex.points.push_back(std::move(point));
    }
  }

  static nlohmann::json to_json(const Value& v)
  {
    return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
  }

  std::string canonical(const Params& base, const SearchSpec* search) const
  {
    nlohmann::json j;
    j["params"] = nlohmann::json::object();
    for (const auto& [k, v] : base.all())
      j["params"][k] = to_json(v);
    for (AxisKind kind : {AxisKind::Grid, AxisKind::Zip}) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& a : axes(kind)) {
        nlohmann::json values = nlohmann::json::array();
        for (const auto& g : a.values)
          values.push_back(to_json(g.value));
        list.push_back({{"key", a.key}, {"values", values}});
      }
      j["sweep"][kind == AxisKind::Grid ? "grid" : "zip"] = list;
    }
    if (search != nullptr)
      j["search"] = search_canonical(*search);
    return j.dump();
  }

  KeyTree tree_;
  const ParamRegistry& reg_;
  std::string file_;
  std::string stem_;
  std::map<std::string, Given> given_;      // explicit values from the file and --set
  std::map<std::string, Origin> leaf_seen_; // parameter paths given in the file
  bool in_flow_map_ = false;                // walk_map: the map being read is written {...}
  std::vector<Axis> grid_, zip_;
  std::optional<SearchSpec> search_;
};

} // namespace

Experiment load_experiment_text(const std::string& text, const std::string& display_name,
                                const std::vector<std::string>& sets, const ParamRegistry& reg)
{
  Loader loader(reg, display_name);
  loader.read_file(text);
  for (const auto& entry : sets)
    loader.apply_set(entry);
  return loader.finish(display_name);
}

Point search_point(const Experiment& ex, const std::vector<std::size_t>& choice, std::size_t index,
                   const ParamRegistry& reg)
{
  if (!ex.search)
    throw std::logic_error("search_point: the experiment has no search section");
  Loader loader(reg, ex.file);
  return loader.search_point(ex, choice, index);
}

Experiment load_experiment(const std::string& path, const std::vector<std::string>& sets, const ParamRegistry& reg)
{
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: error: cannot read the file: it is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(fmt::format("{}: error: cannot read the file: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw InputError(fmt::format("{}: error: cannot read the file", path));
  return load_experiment_text(text.str(), path, sets, reg);
}

} // namespace vsim::app
