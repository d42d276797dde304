#include "app/validation/import.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/experiment/scalar.hpp"
#include "app/report/stats.hpp"
#include "transports/simulate.hpp"

namespace vsim::app {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what)
{
  throw InputError(fmt::format("{}: error: {}", where, what));
}

// "LINE:COLUMN" of byte `offset` (1-based, as nlohmann's parse_error counts).
std::string line_column(const std::string& text, std::size_t offset)
{
  int line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}", line, col);
}

json parse_json(const std::string& file, const std::string& text)
{
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail(fmt::format("{}:{}", file, line_column(text, e.byte)),
         "not JSON (expected the output of iperf3 --json, one run per file)");
  }
}

// The member at a dotted path, or nullptr when a part is absent.
const json* find_path(const json& doc, const std::string& path)
{
  const json* at = &doc;
  std::stringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '.')) {
    if (!at->is_object() || !at->contains(part))
      return nullptr;
    at = &(*at)[part];
  }
  return at;
}

// Where iperf3 writes each figure read here, for messages.
const char* why_iperf3(const std::string& path)
{
  if (path.rfind("start.test_start", 0) == 0)
    return "iperf3 --json writes it when the test starts";
  if (path.rfind("end.cpu_utilization_percent", 0) == 0)
    return "iperf3 --json writes it at the end of every test";
  return "iperf3 --json writes it at the end of a TCP or VSOCK test";
}

double number_at(const std::string& file, const json& doc, const std::string& path)
{
  const json* v = find_path(doc, path);
  if (v == nullptr)
    fail(file, fmt::format("{}: missing (expected a number: {})", path, why_iperf3(path)));
  if (!v->is_number() || !std::isfinite(v->get<double>()))
    fail(file, fmt::format("{}: expected a number, got {}", path, v->dump()));
  return v->get<double>();
}

double positive_rate(const std::string& file, const json& doc, const std::string& path)
{
  const double v = number_at(file, doc, path);
  if (v <= 0)
    fail(file, fmt::format("{}: {} (expected a rate above 0: the run moved no data)", path, v));
  return v;
}

std::optional<double> optional_number(const std::string& file, const json& doc, const std::string& path)
{
  if (find_path(doc, path) == nullptr)
    return std::nullopt;
  return number_at(file, doc, path);
}

std::int64_t integer_at(const std::string& file, const json& doc, const std::string& path, std::int64_t min)
{
  const json* v = find_path(doc, path);
  if (v == nullptr)
    fail(file, fmt::format("{}: missing (expected an integer: {})", path, why_iperf3(path)));
  if (!v->is_number_integer() || v->get<std::int64_t>() < min)
    fail(file, fmt::format("{}: expected an integer >= {}, got {}", path, min, v->dump()));
  return v->get<std::int64_t>();
}

// A vsock CID as iperf-vsock prints it (a decimal number), else nullopt (an
// IP address, a Unix socket path, a sibling "s<cid>").
std::optional<long> cid_of(const std::string& host)
{
  if (host.empty() || host.size() > 10 || !std::all_of(host.begin(), host.end(), ::isdigit))
    return std::nullopt;
  return std::stol(host);
}

// Whether the side that ran this output is the guest, from its peer's CID:
// the host is CID 2 (VMADDR_CID_HOST), a guest 3 or more. nullopt when the
// peer is not a CID.
std::optional<bool> local_in_guest(const std::string& file, const std::string& field, const std::string& host)
{
  std::optional<long> cid = cid_of(host);
  if (!cid)
    return std::nullopt;
  if (*cid < 2)
    fail(file, fmt::format("{}: CID {} is {}, not a guest and its host (expected 2, the host, or a guest's CID)", field,
                           *cid, *cid == 1 ? "the local loopback (vsock_loopback)" : "the hypervisor"));
  return *cid == 2;
}

const char* direction_of(bool sender_in_guest)
{
  return sender_in_guest ? "guest_to_host" : "host_to_guest";
}

void reject_iperf3_failure(const std::string& file, const json& doc)
{
  if (!doc.is_object())
    fail(file, "not an iperf3 result (expected a JSON object with start, intervals and end, as iperf3 --json writes)");
  if (doc.contains("error"))
    fail(file, fmt::format("\"error\": iperf3 reported {} (the run failed; measure it again)", doc["error"].dump()));
  if (!doc.contains("start") || !doc.contains("end"))
    fail(file, "not an iperf3 result (expected the members start and end, as iperf3 --json writes)");
  const json* protocol = find_path(doc, "start.test_start.protocol");
  if (protocol == nullptr || !protocol->is_string())
    fail(file, "start.test_start.protocol: missing (expected \"VSOCK\" or \"TCP\": iperf3 --json writes it when the "
               "test starts)");
  const std::string p = protocol->get<std::string>();
  if (p != "VSOCK" && p != "TCP")
    fail(file, fmt::format("start.test_start.protocol: \"{}\" (allowed: VSOCK, TCP: a stream test)", p));
  const json* bidir = find_path(doc, "start.test_start.bidir");
  if ((bidir != nullptr && bidir->is_number() && bidir->get<double>() != 0) ||
      find_path(doc, "end.sum_sent_bidir_reverse") != nullptr)
    fail(file, "start.test_start.bidir: a --bidir test (expected one direction per run)");
}

// Direction and CPU roles of an iperf3 output. The client's output has
// start.connecting_to, the server's start.accepted_connection; the client
// sends unless reverse (-R). host_total is this process's CPU,
// remote_total its peer's.
void iperf3_roles(const std::string& file, const json& doc, ImportedRun& run)
{
  const bool client = find_path(doc, "start.connecting_to") != nullptr;
  const std::string field = client ? "start.connecting_to.host" : "start.accepted_connection.host";
  const json* host = find_path(doc, field);
  if (host == nullptr || !host->is_string())
    fail(file, "start: expected connecting_to.host (a client's output) or accepted_connection.host (a server's)");
  const bool local_sends = client != (run.reverse == 1);
  const std::optional<double> local_cpu = optional_number(file, doc, "end.cpu_utilization_percent.host_total");
  const std::optional<double> peer_cpu = optional_number(file, doc, "end.cpu_utilization_percent.remote_total");
  run.sender_cpu = local_sends ? local_cpu : peer_cpu;
  run.receiver_cpu = local_sends ? peer_cpu : local_cpu;
  const std::string protocol = find_path(doc, "start.test_start.protocol")->get<std::string>();
  std::optional<bool> in_guest;
  if (protocol == "VSOCK")
    in_guest = local_in_guest(file, field, host->get<std::string>());
  if (!in_guest)
    return;
  run.direction = direction_of(local_sends == *in_guest);
  run.evidence =
      fmt::format("{} {}, {}; start.test_start.reverse {}", field, host->get<std::string>(),
                  *in_guest ? "the host: this side is the guest" : "a guest: this side is the host", run.reverse);
}

// ---- vsock_perf ----

struct VsockPerfSide {
  int line = 0; // of its "Run as" line; 0 = absent
  std::optional<double> gbps;
  std::optional<std::int64_t> buffer; // TX buffer (sender)
  std::optional<long> cid;            // Connect to (sender)
};

bool starts_with(const std::string& s, const std::string& prefix)
{
  return s.rfind(prefix, 0) == 0;
}

// The number after `prefix` and before `suffix` on a line that starts with
// prefix; throws at its column when it is not one.
double number_between(const std::string& where, const std::string& line, const std::string& prefix,
                      const std::string& suffix)
{
  const std::size_t end =
      line.size() >= suffix.size() && line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0
          ? line.size() - suffix.size()
          : std::string::npos;
  const std::string cell = end == std::string::npos ? "" : line.substr(prefix.size(), end - prefix.size());
  std::size_t used = 0;
  double d = 0;
  try {
    d = std::stod(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (cell.empty() || used != cell.size() || !std::isfinite(d) || d < 0)
    fail(fmt::format("{}:{}", where, prefix.size() + 1),
         fmt::format("expected '{}NUMBER{}' as vsock_perf prints it, got '{}'", prefix, suffix, line));
  return d;
}

void read_sender_line(const std::string& where, const std::string& line, VsockPerfSide& s)
{
  if (starts_with(line, "Connect to ")) {
    const std::size_t colon = line.find(':');
    const std::string cid = line.substr(11, colon == std::string::npos ? std::string::npos : colon - 11);
    if (!cid_of(cid))
      fail(fmt::format("{}:12", where), fmt::format("expected 'Connect to CID:PORT', got '{}'", line));
    s.cid = *cid_of(cid);
  } else if (starts_with(line, "TX buffer ")) {
    s.buffer = static_cast<std::int64_t>(number_between(where, line, "TX buffer ", " bytes"));
  } else if (starts_with(line, "tx performance: ")) {
    s.gbps = number_between(where, line, "tx performance: ", " Gbits/s");
  }
}

void read_receiver_line(const std::string& where, const std::string& line, VsockPerfSide& r)
{
  if (starts_with(line, "rx performance: "))
    r.gbps = number_between(where, line, "rx performance: ", " Gbits/s");
}

// A side's "Run as" line; throws on a second one of the same side.
void start_side(const std::string& file, int lineno, VsockPerfSide& side, const char* name)
{
  if (side.line != 0)
    fail(fmt::format("{}:{}:1", file, lineno),
         fmt::format("a second {} output (the first at line {}; expected one run per file)", name, side.line));
  side.line = lineno;
}

void check_vsock_perf_side(const std::string& file, const VsockPerfSide& s, const char* name, const char* perf)
{
  if (s.line != 0 && !s.gbps)
    fail(fmt::format("{}:{}:1", file, s.line),
         fmt::format("the {} output has no '{}: X Gbits/s' line (the run did not finish; measure it again)", name,
                     perf));
}

struct ImportKey {
  std::string key, text; // the canonical value text, as a point's value prints
};

// "--key 'KEY=VALUE'" checked against the registry: the value converted as
// an experiment file's would be and printed as a point's value is.
ImportKey checked_key(const std::string& key, const std::string& value, const ParamRegistry& reg)
{
  const std::string entry = fmt::format("--key '{}={}'", key, value);
  const ParamSpec* spec = reg.find(key);
  if (spec == nullptr || starts_with(key, "sweep.") || starts_with(key, "validation.") || starts_with(key, "report."))
    fail(entry, fmt::format("{}: not an experiment key (allowed: the keys `vsocksim describe` lists, such as "
                            "virtio_vsock.preset or workload.app)",
                            key));
  if (value.find_first_of(",\n\r\"") != std::string::npos)
    fail(entry, "the value has a comma, quote or line break (a measurements cell cannot hold one)");
  // An Origin naming the --key entry as a file would be named: "--key '...': error: ...".
  const Value v = load::convert_scalar(*spec, load::Scalar{value, true}, load::in_file(entry));
  return {key, value_to_string(v)};
}

const std::vector<std::string> kDerivedKeys = {"direction", "workload.message_size", "workload.connections"};

bool is_derived(const std::string& key)
{
  return std::find(kDerivedKeys.begin(), kDerivedKeys.end(), key) != kDerivedKeys.end();
}

struct GivenKeys {
  std::vector<ImportKey> extra;                // the columns the files do not give
  std::map<std::string, std::string> derived;  // direction, message size, connections given by the user
  std::map<std::string, std::string> entry_of; // key -> "--key 'K=V'" or "--direction D"
};

GivenKeys given_keys(const ImportOptions& opt, const ParamRegistry& reg)
{
  GivenKeys g;
  std::vector<std::pair<std::string, std::string>> all = opt.keys;
  if (!opt.direction.empty())
    all.insert(all.begin(), {"direction", opt.direction});
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& [key, value] = all[i];
    const bool from_direction = i == 0 && !opt.direction.empty();
    const std::string entry =
        from_direction ? fmt::format("--direction {}", value) : fmt::format("--key '{}={}'", key, value);
    if (g.entry_of.count(key))
      fail(entry, fmt::format("{}: given twice (also as {})", key, g.entry_of[key]));
    ImportKey k = checked_key(key, value, reg);
    g.entry_of[key] = entry;
    if (is_derived(key))
      g.derived[key] = k.text;
    else
      g.extra.push_back(k);
  }
  return g;
}

// A run's value of a derived key: the file's, else the user's; the two must
// agree.
std::string derived_value(const ImportedRun& run, const std::string& key, const std::string& from_file,
                          const std::string& evidence, const GivenKeys& g)
{
  auto given = g.derived.find(key);
  if (!from_file.empty() && given != g.derived.end() && given->second != from_file)
    fail(run.file, fmt::format("{}: the file says {} ({}), {} says {}", key, from_file, evidence, g.entry_of.at(key),
                               given->second));
  if (!from_file.empty())
    return from_file;
  if (given != g.derived.end())
    return given->second;
  if (key == "direction")
    fail(run.file, "direction: the output does not say where each side ran (not a vsock CID, or a receiver's output "
                   "alone): give --direction guest_to_host or host_to_guest");
  fail(run.file, fmt::format("{}: the output does not say it (a vsock_perf receiver prints no message size: include "
                             "the sender's output, or give --key workload.message_size=BYTES)",
                             key));
}

// Each run once: a file given twice, or both sides' outputs of one iperf3
// test (the client's and the server's share start.cookie), would count one
// run as two iterations.
void check_runs_distinct(const std::vector<ImportedRun>& runs)
{
  std::map<std::string, std::string> file_of, cookie_of;
  for (const ImportedRun& r : runs) {
    if (auto [at, fresh] = file_of.emplace(r.file, r.file); !fresh)
      fail(r.file, "given twice (each file is one run)");
    if (r.run_id.empty())
      continue;
    if (auto [at, fresh] = cookie_of.emplace(r.run_id, r.file); !fresh)
      fail(r.file, fmt::format("start.cookie: the same test as {} (the client's and the server's outputs of one run "
                               "share it; import one side's output per run)",
                               at->second));
  }
}

// The direction the user gave applies to runs whose output does not say:
// iperf3 runs that differ in -R then cannot all be of that direction.
void check_reverse_consistent(const std::vector<ImportedRun>& runs)
{
  const ImportedRun* first = nullptr;
  for (const ImportedRun& r : runs) {
    if (!r.direction.empty() || r.reverse < 0)
      continue;
    if (first == nullptr)
      first = &r;
    else if (r.reverse != first->reverse)
      fail(r.file, fmt::format("direction: mixed directions: start.test_start.reverse is {} here, {} in {}, and the "
                               "outputs do not say where each side ran (import each direction on its own)",
                               r.reverse, first->reverse, first->file));
  }
}

// A run's value of a metric, nullopt when the run lacks a figure it needs.
std::optional<double> metric_value(const ImportedRun& run, const std::string& metric, const std::string& direction,
                                   bool sent)
{
  const std::optional<double> bps = sent ? run.sent_bps : run.received_bps;
  const bool g2h = direction == "guest_to_host";
  const std::optional<double> guest = g2h ? run.sender_cpu : run.receiver_cpu;
  const std::optional<double> host = g2h ? run.receiver_cpu : run.sender_cpu;
  if (metric == "throughput_Gbps" || metric == "throughput_MBps")
    return bps ? std::optional(throughput_in(*bps, find_metric(metric)->unit)) : std::nullopt;
  if (metric == "app_cpu_percent_guest")
    return guest;
  if (metric == "app_cpu_percent_host")
    return host;
  if (metric == "efficiency" && bps && guest && host && *guest + *host > 0)
    return *bps / 1e6 / (*guest + *host); // Mbit/s per %CPU of both applications, as the metric declares
  return std::nullopt;
}

std::string what_lacks(const std::string& metric, bool sent, ImportTool tool)
{
  if (tool == ImportTool::VsockPerf && metric.find("throughput") == std::string::npos)
    return fmt::format("{}: vsock_perf reports no CPU use (allowed with vsock_perf: throughput_Gbps, throughput_MBps; "
                       "measure CPU with mpstat or pidstat)",
                       metric);
  if (metric.find("throughput") != std::string::npos)
    return tool == ImportTool::VsockPerf
               ? (sent ? "no sender output ('tx performance' line): include it, or leave out --throughput sent"
                       : "no receiver output ('rx performance' line; the sender's 'tx performance' counts only the "
                         "time inside send()): include the receiver's output, or give --throughput sent")
               : (sent ? "end.sum_sent.bits_per_second: missing" : "end.sum_received.bits_per_second: missing");
  return fmt::format("{}: end.cpu_utilization_percent.host_total and remote_total: missing or zero", metric);
}

using GroupKey = std::tuple<std::int64_t, std::int64_t>; // message size, connections (numeric order)

std::string number_text(double v)
{
  return fmt::format("{:.6g}", v);
}

std::string header_line(const ImportTable& t)
{
  std::string h;
  for (const std::string& k : t.key_columns)
    h += k + ",";
  return h + "metric,min,max,mean,median,unit,source";
}

std::string row_line(const ImportTable& t, const ImportRow& r)
{
  std::string line;
  for (const auto& [key, text] : r.keys)
    line += text + ",";
  return line + fmt::format("{},{},{},{},{},{},{}", r.metric, number_text(r.min), number_text(r.max),
                            number_text(r.mean), number_text(r.median), r.unit, t.source);
}

// The cells of a row that name what it measures: its keys and its metric.
std::string identity_of(const std::string& line, std::size_t key_columns)
{
  std::size_t at = 0;
  for (std::size_t cells = 0; cells <= key_columns; ++cells) {
    at = line.find(',', cells == 0 ? 0 : at + 1);
    if (at == std::string::npos)
      return line;
  }
  return line.substr(0, at);
}

std::string comment_lines(const ImportTable& t, ImportTool tool, bool sent)
{
  std::set<std::string> files;
  for (const ImportRow& r : t.rows)
    files.insert(r.files.begin(), r.files.end());
  std::string figure = tool == ImportTool::Iperf3
                           ? (sent ? "end.sum_sent.bits_per_second" : "end.sum_received.bits_per_second")
                           : (sent ? "the sender's 'tx performance'" : "the receiver's 'rx performance'");
  std::string out =
      fmt::format("# vsocksim import {}: {} run(s); throughput from {}", tool_name(tool), files.size(), figure);
  if (tool == ImportTool::Iperf3)
    out += "; CPU: end.cpu_utilization_percent (each iperf3 process's own CPU time)";
  out += "\n";
  std::string last;
  for (const ImportRow& r : t.rows) {
    std::string list;
    for (const std::string& f : r.files)
      list += " " + f;
    std::string keys;
    for (const auto& [k, v] : r.keys)
      if (is_derived(k))
        keys += (keys.empty() ? "" : " ") + k + "=" + v;
    if (keys + list != last)
      out += fmt::format("# {}:{}\n", keys, list);
    last = keys + list;
  }
  return out;
}

} // namespace

const char* tool_name(ImportTool tool)
{
  return tool == ImportTool::Iperf3 ? "iperf3" : "vsock_perf";
}

std::vector<std::string> default_import_metrics(ImportTool tool)
{
  if (tool == ImportTool::VsockPerf)
    return {"throughput_Gbps"};
  return {"throughput_Gbps", "app_cpu_percent_guest", "app_cpu_percent_host", "efficiency"};
}

std::vector<std::string> importable_metrics()
{
  return {"throughput_Gbps", "throughput_MBps", "app_cpu_percent_guest", "app_cpu_percent_host", "efficiency"};
}

double throughput_in(double bits_per_second, const std::string& unit)
{
  if (unit == "Gbit/s")
    return bits_per_second / 1e9;
  if (unit == "MB/s")
    return bits_per_second / 8e6; // MB = 10^6 bytes
  throw std::logic_error("throughput_in: '" + unit + "' is not a throughput unit");
}

ImportedRun parse_iperf3(const std::string& file, const std::string& text)
{
  const json doc = parse_json(file, text);
  reject_iperf3_failure(file, doc);
  ImportedRun run;
  run.file = file;
  run.message_size = integer_at(file, doc, "start.test_start.blksize", 1);
  run.connections = integer_at(file, doc, "start.test_start.num_streams", 1);
  run.reverse = static_cast<int>(integer_at(file, doc, "start.test_start.reverse", 0));
  if (run.reverse > 1)
    fail(file, fmt::format("start.test_start.reverse: expected 0 or 1, got {}", run.reverse));
  run.received_bps = positive_rate(file, doc, "end.sum_received.bits_per_second");
  run.sent_bps = positive_rate(file, doc, "end.sum_sent.bits_per_second");
  if (const json* cookie = find_path(doc, "start.cookie"); cookie != nullptr && cookie->is_string())
    run.run_id = cookie->get<std::string>();
  iperf3_roles(file, doc, run);
  return run;
}

ImportedRun parse_vsock_perf(const std::string& file, const std::string& text)
{
  VsockPerfSide sender, receiver;
  VsockPerfSide* side = nullptr;
  std::stringstream lines(text);
  std::string line;
  for (int lineno = 1; std::getline(lines, line); ++lineno) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    const std::string where = fmt::format("{}:{}", file, lineno);
    if (line == "Run as sender" || line == "Run as sender MSG_ZEROCOPY") {
      start_side(file, lineno, sender, "sender");
      side = &sender;
    } else if (line == "Run as receiver") {
      start_side(file, lineno, receiver, "receiver");
      side = &receiver;
    } else if (side == &sender) {
      read_sender_line(where, line, sender);
    } else if (side == &receiver) {
      read_receiver_line(where, line, receiver);
    }
  }
  if (sender.line == 0 && receiver.line == 0)
    fail(file + ":1:1", "not a vsock_perf output (expected a 'Run as sender' or 'Run as receiver' line, as "
                        "tools/testing/vsock/vsock_perf prints first)");
  check_vsock_perf_side(file, sender, "sender", "tx performance");
  check_vsock_perf_side(file, receiver, "receiver", "rx performance");
  ImportedRun run;
  run.file = file;
  run.message_size = sender.buffer;
  if (sender.gbps)
    run.sent_bps = *sender.gbps * 1e9;
  if (receiver.gbps)
    run.received_bps = *receiver.gbps * 1e9;
  if (sender.cid) {
    const bool sender_in_guest = local_in_guest(file, "Connect to", std::to_string(*sender.cid)).value();
    run.direction = direction_of(sender_in_guest);
    run.evidence = fmt::format("the sender connected to CID {}, {}", *sender.cid,
                               sender_in_guest ? "the host: it ran in the guest" : "a guest: it ran on the host");
  }
  return run;
}

ImportTable import_rows(const std::vector<ImportedRun>& runs, const ImportOptions& opt, const ParamRegistry& reg)
{
  const GivenKeys g = given_keys(opt, reg);
  std::vector<std::string> metrics = opt.metrics.empty() ? default_import_metrics(opt.tool) : opt.metrics;
  for (const std::string& m : metrics) {
    const std::vector<std::string> ok = importable_metrics();
    if (std::find(ok.begin(), ok.end(), m) == ok.end())
      fail("--metrics", fmt::format("'{}' is not a figure an import gives (allowed: {})", m,
                                    fmt::format("{}", fmt::join(ok, ", "))));
  }
  check_runs_distinct(runs);
  check_reverse_consistent(runs);
  std::string direction;
  const ImportedRun* first = nullptr;
  std::map<GroupKey, std::vector<const ImportedRun*>> groups;
  for (const ImportedRun& r : runs) {
    const std::string d = derived_value(r, "direction", r.direction, r.evidence, g);
    if (first != nullptr && d != direction)
      fail(r.file, fmt::format("direction: mixed directions: {} here ({}), {} in {} (import each direction on its "
                               "own; --append adds to a file)",
                               d, r.evidence.empty() ? "as given" : r.evidence, direction, first->file));
    direction = d;
    first = first == nullptr ? &r : first;
    const std::string size = derived_value(r, "workload.message_size",
                                           r.message_size ? std::to_string(*r.message_size) : "", "its send() size", g);
    const std::string conns =
        derived_value(r, "workload.connections", std::to_string(r.connections), "its parallel streams", g);
    groups[{std::stoll(size), std::stoll(conns)}].push_back(&r);
  }
  ImportTable t;
  t.source = opt.source.empty() ? tool_name(opt.tool) : opt.source;
  if (t.source.find_first_of(",\n\r\"") != std::string::npos)
    fail("--source", "the name has a comma, quote or line break (a measurements cell cannot hold one)");
  t.key_columns.push_back("direction");
  for (const ImportKey& k : g.extra)
    t.key_columns.push_back(k.key);
  t.key_columns.push_back("workload.message_size");
  t.key_columns.push_back("workload.connections");
  for (const auto& [gk, members] : groups)
    for (const std::string& m : metrics) {
      std::vector<double> values;
      ImportRow row;
      for (const ImportedRun* r : members) {
        std::optional<double> v = metric_value(*r, m, direction, opt.sent);
        if (!v)
          fail(r->file, what_lacks(m, opt.sent, opt.tool));
        values.push_back(*v);
        row.files.push_back(r->file);
      }
      const Stats s = summarize(values);
      row.keys.emplace_back("direction", direction);
      for (const ImportKey& k : g.extra)
        row.keys.emplace_back(k.key, k.text);
      row.keys.emplace_back("workload.message_size", std::to_string(std::get<0>(gk)));
      row.keys.emplace_back("workload.connections", std::to_string(std::get<1>(gk)));
      row.metric = m;
      row.unit = find_metric(m)->unit;
      std::tie(row.min, row.max, row.mean, row.median) = std::tie(s.min, s.max, s.mean, s.median);
      t.rows.push_back(std::move(row));
    }
  return t;
}

std::string import_csv(const ImportTable& table, ImportTool tool, bool sent)
{
  std::string out = comment_lines(table, tool, sent) + header_line(table) + "\n";
  for (const ImportRow& r : table.rows)
    out += row_line(table, r) + "\n";
  return out;
}

std::string append_csv(const std::string& file, const std::string& text, const ImportTable& table, ImportTool tool,
                       bool sent)
{
  std::stringstream lines(text);
  std::string line, header;
  std::set<std::string> present;
  for (int lineno = 1; std::getline(lines, line); ++lineno) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    if (header.empty()) {
      header = line;
      if (header != header_line(table))
        fail(fmt::format("{}:{}:1", file, lineno),
             fmt::format("--append: the header is '{}', this import's is '{}' (give the same --key entries, or "
                         "write another file)",
                         header, header_line(table)));
    } else {
      present.insert(identity_of(line, table.key_columns.size()));
    }
  }
  if (header.empty())
    fail(file, "--append: the file has no header (expected a measurements CSV written by vsocksim import)");
  std::string out = text;
  if (!out.empty() && out.back() != '\n')
    out += '\n';
  out += comment_lines(table, tool, sent);
  for (const ImportRow& r : table.rows) {
    const std::string l = row_line(table, r);
    if (present.count(identity_of(l, table.key_columns.size())))
      fail(file, fmt::format("--append: the file already has a row for {}", identity_of(l, table.key_columns.size())));
    out += l + "\n";
  }
  return out;
}

} // namespace vsim::app
