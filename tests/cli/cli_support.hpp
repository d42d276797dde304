// What the command-line tests share (tests/cli/test_*.cpp). The program as
// users run it: the built `vsocksim` binary (VSIM_BINARY) is started as a
// child process from each test case, in a fresh temporary directory, and its
// exit status, stdout and stderr are checked against the command-line
// contract (../shared/spec/interface.md).
//
// Simulated runs use tests/data/cli/tiny.yaml (2 points x 2 iterations of
// 200 kB), so most cases run in about a second.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cli_test {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

inline const std::string kBinary = VSIM_BINARY;
inline const std::string kSource = VSIM_SOURCE_DIR;
inline const std::string kData = kSource + "/tests/data/cli";
inline const std::string kTiny = kData + "/tiny.yaml";
// The tiny validation studies of the `validate` tests.
inline const std::string kValidate = kSource + "/tests/data/validate";

// The hint CLI11 parse errors add under their one-line message.
inline const std::string kUsageHint = "(run 'vsocksim --help' for usage)";

// Keeps every simulated run tiny even when a case is (wrongly) accepted.
inline const std::vector<std::string> kTinySets = {"--set", "workload.total_bytes=200kB", "--set", "iterations=2"};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

// A fresh directory under /tmp, removed with everything in it at scope exit.
// `ws` is the working directory of the program; outputs go there. stdout and
// stderr are captured next to it, so a snapshot of `ws` sees only what the
// program made.
struct TempDir {
  std::string root;
  std::string ws;

  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string in_ws(const std::string& name) const { return ws + "/" + name; }
};

// How many times slower this build starts and ends the program than a
// Release build: under AddressSanitizer (scripts/sanitize.sh) the start
// alone (shadow memory, the runtime's set-up) took 0.5-0.8 s for
// `vsocksim --version` on the 2-core machine beside another job, and the
// end adds the leak check, so a bound on how soon the program is gone after
// a signal sent in its first milliseconds scales with it (a CI run on
// 2026-12-05 took 1018-1361 ms under ASan for signals at 0-5 ms).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr double kBuildSlowdown = 3.0;
#else
inline constexpr double kBuildSlowdown = 1.0;
#endif
#else
inline constexpr double kBuildSlowdown = 1.0;
#endif

struct Run {
  int status = -1;     // exit status; 128 + signal if killed
  bool killed = false; // ended by a signal (status is then 128 + signal)
  std::string out;
  std::string err;
  double sent_ms = -1; // when the signal was sent, in ms after the start; -1: not sent
  double gone_ms = -1; // from the signal until the program and every process it started were gone
};

std::string command_text(const std::vector<std::string>& words);

// Runs VSIM_BINARY with ARGS (no shell) in dir.ws; stdin is /dev/null.
// When `when` first returns true during the run, `sig` is sent to the
// program (SIGKILL: to its whole process group, as a crash would end it).
// The run is over when the program and every process it started are gone:
// this test process is a child subreaper, so simulations the program left
// behind come back here and are waited for (and counted in gone_ms).
// A run that outlives two minutes is killed with its whole tree and the
// test fails naming the command and when the signal was sent.
// `background_job`: started as a non-interactive shell starts `cmd &`, with
// SIGINT and SIGQUIT ignored; SIGINT, SIGTERM and SIGHUP are also blocked
// until the program unblocks them, so a signal sent before it runs (while
// this process forks and execs) waits for it instead of meeting the
// launcher's dispositions.
Run run_cli(const TempDir& dir, const std::vector<std::string>& args, const std::function<bool()>& when = {},
            int sig = 0, bool background_job = false);

// The tiny run with extra arguments; must succeed.
Run tiny_run(const TempDir& dir, const std::vector<std::string>& extra);

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b);

std::vector<std::string> lines_of(const std::string& text);

bool starts_with(const std::string& s, const std::string& prefix);

// Every file under DIR (relative path -> content; directories as "<dir>").
std::map<std::string, std::string> snapshot(const std::string& dir);

// The names of the entries of DIR (not recursive).
std::set<std::string> names_in(const std::string& dir);

// The number of point-*.json files in DIR (0 if DIR does not exist).
std::size_t point_files(const std::string& dir);

// "LINE:COL" (1-based) of the n-th (0-based) occurrence of NEEDLE in TEXT.
std::string where(const std::string& text, const std::string& needle, int n = 0);

// The contract for bad input: exit status 2, nothing on stdout, exactly one
// message line on stderr (CLI11 parse errors may add the usage hint as a
// second line). Returns the message line.
std::string bad_input_message(const Run& r);

ojson parse_json(const std::string& text);

// A result without what differs between two runs of it (wall clock, command line).
ojson without_run_facts(ojson r);

// Cells of a report line: columns are separated by three or more spaces.
std::vector<std::string> cells_of(const std::string& line);

// Sets an environment variable (inherited by the program run_cli starts)
// for a scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const std::string& n, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

// Unsets an environment variable for a scope, restoring it after.
struct ScopedUnset {
  std::string name;
  std::optional<std::string> before;
  explicit ScopedUnset(const std::string& n);
  ~ScopedUnset();
  ScopedUnset(const ScopedUnset&) = delete;
  ScopedUnset& operator=(const ScopedUnset&) = delete;
};

} // namespace cli_test
