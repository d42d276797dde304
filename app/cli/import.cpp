// `vsocksim import iperf3|vsock_perf FILE... [--direction D] [--key KEY=VALUE]...
// [--metrics M,...] [--throughput received|sent] [--source NAME]
// [--output FILE.csv [--append]]`: benchmark outputs from a real host and
// guest as a measurements CSV (app/validation/import.hpp), for calibrate and
// validate (docs/your-machine.md). Every file is read and checked before
// anything is written; --output is written whole, atomically.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "app/cli/command.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/run/output_dir.hpp"
#include "app/validation/import.hpp"

namespace vsim::app::cli {

namespace {

struct ImportArgs {
  std::string tool;
  std::vector<std::string> files, keys, metrics;
  std::string direction, throughput = "received", source, output;
  bool append = false;
};

std::string read_whole(const std::string& path)
{
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw InputError(fmt::format("{}: error: cannot read the file", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::pair<std::string, std::string> key_entry(const std::string& entry)
{
  const std::size_t eq = entry.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--key '{}': error: expected KEY=VALUE (an experiment key and its value, e.g. "
                                 "virtio_vsock.preset=linux-5.4)",
                                 entry));
  return {entry.substr(0, eq), entry.substr(eq + 1)};
}

int run_import(const ImportArgs& a)
{
  if (a.append && a.output.empty())
    throw InputError("--append: error: needs --output FILE.csv (the file to add the rows to)");
  ImportOptions opt;
  opt.tool = a.tool == "iperf3" ? ImportTool::Iperf3 : ImportTool::VsockPerf;
  opt.direction = a.direction;
  for (const std::string& k : a.keys)
    opt.keys.push_back(key_entry(k));
  opt.metrics = a.metrics;
  opt.sent = a.throughput == "sent";
  opt.source = a.source;
  std::vector<ImportedRun> runs;
  for (const std::string& f : a.files) {
    const std::string text = read_whole(f);
    runs.push_back(opt.tool == ImportTool::Iperf3 ? parse_iperf3(f, text) : parse_vsock_perf(f, text));
  }
  const ImportTable table = import_rows(runs, opt, registry());
  std::string csv = import_csv(table, opt.tool, opt.sent);
  if (a.append)
    csv = append_csv(a.output, read_whole(a.output), table, opt.tool, opt.sent);
  if (a.output.empty()) {
    std::cout << csv;
    return 0;
  }
  write_file_atomic(a.output, csv);
  std::cerr << fmt::format("wrote {} row(s) to {}\n", table.rows.size(), a.output);
  return 0;
}

} // namespace

Command add_import(CLI::App& app)
{
  auto a = std::make_shared<ImportArgs>();
  auto* sub = app.add_subcommand("import", "turn benchmark outputs of a real host and guest (iperf3 --json, "
                                           "vsock_perf) into a measurements CSV for calibrate and validate");
  sub->add_option("tool", a->tool, "the benchmark that wrote the files: iperf3 (also iperf-vsock) or vsock_perf")
      ->required()
      ->check(CLI::IsMember({"iperf3", "vsock_perf"}));
  sub->add_option("files", a->files,
                  "one run per file (iperf3: its --json output; vsock_perf: the sender's output, the receiver's, "
                  "or both concatenated); runs of the same message size and connections are iterations of one row")
      ->required();
  sub->add_option("--direction", a->direction,
                  "the runs' direction, for outputs that do not say (a vsock CID tells); checked against those that do")
      ->check(CLI::IsMember({"guest_to_host", "host_to_guest", "bidirectional"}));
  sub->add_option("--key", a->keys,
                  "an experiment key every row names, KEY=VALUE, e.g. virtio_vsock.preset=linux-5.4 or "
                  "workload.message_size=65536 for a vsock_perf receiver's output alone (repeatable)");
  sub->add_option("--metrics", a->metrics,
                  "the figures to write, comma-separated (iperf3 default: throughput_Gbps,app_cpu_percent_guest,"
                  "app_cpu_percent_host,efficiency; vsock_perf: throughput_Gbps; also throughput_MBps)")
      ->delimiter(',');
  sub->add_option("--throughput", a->throughput,
                  "whose figure is the throughput: the receiver's (iperf3 end.sum_received, vsock_perf rx "
                  "performance) or the sender's")
      ->check(CLI::IsMember({"received", "sent"}))
      ->capture_default_str();
  sub->add_option("--source", a->source, "the rows' source column (default: the tool's name)");
  sub->add_option("--output", a->output, "write the CSV to this file (whole, at the end) instead of stdout");
  sub->add_flag("--append", a->append,
                "add the rows to the --output file (same header; a row already there is an "
                "error): one file for both directions");
  return Command{sub, [a] { return run_import(*a); }};
}

} // namespace vsim::app::cli
