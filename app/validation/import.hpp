// Measurement rows from benchmark outputs (`vsocksim import`): a user's own
// runs on a real host and guest turned into the measurements CSV that
// load_measurements reads (measurements.hpp), to calibrate or validate a
// profile against (docs/your-machine.md).
//
// iperf3 (and iperf-vsock, the vsock fork, which writes the same JSON):
// one `--json` output per file, read as src/iperf_api.c writes it:
//   start.test_start.{protocol, num_streams, blksize, reverse, bidir}
//   start.connecting_to.host (a client's output) or
//   start.accepted_connection.host (a server's): the peer's CID
//   end.sum_received / end.sum_sent .bits_per_second
//   end.cpu_utilization_percent.{host_total, remote_total}: the CPU time of
//   this iperf3 process and of its peer (getrusage over the test), in %
//   "error" at the top: the run failed.
// vsock_perf (the kernel's tools/testing/vsock/vsock_perf.c): one run per
// file, the sender's output, the receiver's, or both concatenated:
//   sender:   "Run as sender", "Connect to CID:PORT", "TX buffer N bytes"
//             (the size of each send()), "tx performance: X Gbits/s"
//             (bytes over the time spent inside send() only)
//   receiver: "Run as receiver", "total bytes received: N",
//             "rx performance: X Gbits/s" (bytes over the time from accept()
//             to the end of the stream)
//
// The direction of a run is taken from the output where it says it (a vsock
// CID: 2 is the host, so a peer of CID 2 means this side ran in the guest),
// else from the user; CPU figures are mapped to guest and host by it. Runs
// of the same message size and connections are iterations of one point:
// each row holds their min, max, mean and median.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/params.hpp"

namespace vsim::app {

enum class ImportTool { Iperf3, VsockPerf };

// One run's figures, as one file gives them.
struct ImportedRun {
  std::string file;
  std::string run_id;    // iperf3's start.cookie: the same on both sides' outputs of one test
  std::string direction; // "" when the output does not say
  std::string evidence;  // why `direction` (the fields read), for messages
  std::optional<std::int64_t> message_size;
  std::int64_t connections = 1;
  int reverse = -1; // iperf3's start.test_start.reverse; -1 for vsock_perf
  std::optional<double> received_bps, sent_bps;
  std::optional<double> sender_cpu, receiver_cpu; // % (iperf3 only)
};

// Both throw InputError "FILE[:LINE[:COL]]: error: ..." (or the JSON path)
// on a file that is not that tool's result, a failed run, or a figure
// missing.
ImportedRun parse_iperf3(const std::string& file, const std::string& text);
ImportedRun parse_vsock_perf(const std::string& file, const std::string& text);

struct ImportOptions {
  ImportTool tool = ImportTool::Iperf3;
  std::string direction;                                 // "" = from the files
  std::vector<std::pair<std::string, std::string>> keys; // --key KEY=VALUE, as given
  std::vector<std::string> metrics;                      // empty: the tool's defaults
  bool sent = false;                                     // throughput from the sender's figure
  std::string source;                                    // "" = the tool's name
};

// The metrics a tool's import writes by default, and all it can write.
std::vector<std::string> default_import_metrics(ImportTool tool);
std::vector<std::string> importable_metrics();
const char* tool_name(ImportTool tool);

// A throughput in bit/s in the unit a metric declares (Gbit/s, MB/s);
// throws std::logic_error for a unit that is not a throughput's.
double throughput_in(double bits_per_second, const std::string& unit);

struct ImportRow {
  std::vector<std::pair<std::string, std::string>> keys; // experiment key -> value text
  std::string metric, unit;
  double min = 0, max = 0, mean = 0, median = 0;
  std::vector<std::string> files; // the runs summarised
};

struct ImportTable {
  std::vector<std::string> key_columns; // in header order
  std::vector<ImportRow> rows;
  std::string source;
};

// The rows of the runs: checks the --key entries against the registry (an
// experiment key, a valid value), fills what a file does not say from them,
// and throws InputError on a disagreement (mixed directions, a --key that a
// file contradicts), a run whose direction or message size is unknown, or a
// metric the tool cannot give.
ImportTable import_rows(const std::vector<ImportedRun>& runs, const ImportOptions& opt, const ParamRegistry& reg);

// The measurements CSV: comment lines naming the tool and each row's files,
// the header, the rows.
std::string import_csv(const ImportTable& table, ImportTool tool, bool sent);

// `text` (an existing measurements CSV) with the table's rows appended;
// throws InputError when its header differs or a row is already in it.
std::string append_csv(const std::string& file, const std::string& text, const ImportTable& table, ImportTool tool,
                       bool sent);

} // namespace vsim::app
