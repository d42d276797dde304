// The program as users run it: the built `vsocksim` binary (VSIM_BINARY) is
// started as a child process from each test case, in a fresh temporary
// directory, and its exit status, stdout and stderr are checked against the
// command-line contract (../shared/spec/interface.md).
//
// Simulated runs use tests/data/cli/tiny.yaml (2 points x 2 iterations of
// 200 kB), so the whole file runs in about a second.
#include <catch2/catch.hpp>

#include <functional>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

const std::string kBinary = VSIM_BINARY;
const std::string kSource = VSIM_SOURCE_DIR;
const std::string kData = kSource + "/tests/data/cli";
const std::string kTiny = kData + "/tiny.yaml";

// The hint CLI11 parse errors add under their one-line message.
const std::string kUsageHint = "(run 'vsocksim --help' for usage)";

// Keeps every simulated run tiny even when a case is (wrongly) accepted.
const std::vector<std::string> kTinySets = {"--set", "workload.total_bytes=200kB", "--set", "iterations=2"};

std::string read_file(const std::string& path)
{
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text)
{
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f)
    throw std::runtime_error("cannot write " + path);
}

// A fresh directory under /tmp, removed with everything in it at scope exit.
// `ws` is the working directory of the program; outputs go there. stdout and
// stderr are captured next to it, so a snapshot of `ws` sees only what the
// program made.
struct TempDir {
  std::string root;
  std::string ws;

  TempDir()
  {
    char pattern[] = "/tmp/vsim-cli-XXXXXX";
    if (!mkdtemp(pattern))
      throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    root = pattern;
    ws = root + "/ws";
    fs::create_directory(ws);
  }
  ~TempDir()
  {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string in_ws(const std::string& name) const { return ws + "/" + name; }
};

struct Run {
  int status = -1;  // exit status; 128 + signal if killed
  bool killed = false;  // ended by a signal (status is then 128 + signal)
  std::string out;
  std::string err;
  double sent_ms = -1;  // when the signal was sent, in ms after the start; -1: not sent
  double gone_ms = -1;  // from the signal until the program and every process it started were gone
};

std::string command_text(const std::vector<std::string>& words)
{
  std::string s;
  for (const std::string& w : words)
    s += (s.empty() ? "" : " ") + w;
  return s;
}

// Processes whose parent is this test process: after a run, the orphans its
// program left (this process is a child subreaper, so they come here).
std::vector<pid_t> children_of_this_process()
{
  std::vector<pid_t> out;
  const std::string self = std::to_string(getpid());
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream f(e.path() / "stat");
    std::string line;
    if (!std::getline(f, line))
      continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid == self)
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

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
            int sig = 0, bool background_job = false)
{
  static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  REQUIRE(subreaper);
  const std::string out_path = dir.root + "/stdout", err_path = dir.root + "/stderr";
  std::vector<std::string> words;
  words.push_back(kBinary);
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);

  // Emptied here, not only by the child: a signal may end the child before it opens them.
  write_file(out_path, "");
  write_file(err_path, "");
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  // Every signal blocked across fork: a signal sent before the child has its
  // own dispositions must not run this test process's handlers (Catch2's) in
  // the child; it waits, and meets the program's.
  // A close-on-exec pipe tells when the child has become the program: no
  // signal is sent before (a shell's background job would lose a SIGINT sent
  // then, before vsocksim exists).
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  sigset_t all, before;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &before);
  const pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &before, nullptr);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(exec_pipe[0]);
    setpgid(0, 0);  // its own group, so a hung run can be killed with its children
    for (int s = 1; s < NSIG; ++s)
      if (s != SIGKILL && s != SIGSTOP)
        signal(s, SIG_DFL);
    sigset_t mask = before;
    if (background_job) {
      signal(SIGINT, SIG_IGN);
      signal(SIGQUIT, SIG_IGN);
      for (int s : {SIGINT, SIGTERM, SIGHUP})
        sigaddset(&mask, s);
    }
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
        chdir(dir.ws.c_str()) != 0)
      _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  close(exec_pipe[1]);
  for (char c; read(exec_pipe[0], &c, 1) != 0 && errno == EINTR;) {
  }
  close(exec_pipe[0]);

  auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  Run r;
  Clock::time_point sent_at;
  auto give_up = [&](const std::string& what) {
    kill(-pid, SIGKILL);
    for (pid_t child : children_of_this_process())
      kill(child, SIGKILL);
    while (waitpid(-1, nullptr, 0) > 0) {
    }
    FAIL(what << ": " << command_text(words) << "; "
              << (r.sent_ms < 0 ? std::string("no signal was sent")
                                : fmt::format("signal {} was sent {:.0f} ms after the start", sig, r.sent_ms)));
  };
  int status = 0;
  const auto deadline = started + std::chrono::minutes(2);
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR)
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    if (when && r.sent_ms < 0 && when()) {
      kill(sig == SIGKILL ? -pid : pid, sig);
      sent_at = Clock::now();
      r.sent_ms = ms_since(started);
    }
    if (Clock::now() > deadline)
      give_up("vsocksim did not finish within two minutes");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Orphans of the program (there should be none) are reaped here.
  for (;;) {
    const pid_t w = waitpid(-1, nullptr, WNOHANG);
    if (w < 0 && errno == ECHILD)
      break;
    if (w == 0) {
      if (Clock::now() > deadline)
        give_up("processes started by vsocksim outlived it by two minutes");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (r.sent_ms >= 0)
    r.gone_ms = ms_since(sent_at);
  r.killed = WIFSIGNALED(status);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b)
{
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> lines_of(const std::string& text)
{
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    out.push_back(line);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Every file under DIR (relative path -> content; directories as "<dir>").
std::map<std::string, std::string> snapshot(const std::string& dir)
{
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    out[rel] = e.is_directory() ? "<dir>" : read_file(e.path().string());
  }
  return out;
}

// "LINE:COL" (1-based) of the n-th (0-based) occurrence of NEEDLE in TEXT.
std::string where(const std::string& text, const std::string& needle, int n = 0)
{
  std::size_t pos = text.find(needle);
  for (int i = 0; i < n && pos != std::string::npos; ++i)
    pos = text.find(needle, pos + 1);
  if (pos == std::string::npos)
    throw std::logic_error("test bug: '" + needle + "' not in the input");
  const std::size_t newline = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
  const std::size_t col = newline == std::string::npos ? pos + 1 : pos - newline;
  const long line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n');
  return std::to_string(line) + ":" + std::to_string(col);
}

// The contract for bad input: exit status 2, nothing on stdout, exactly one
// message line on stderr (CLI11 parse errors may add the usage hint as a
// second line). Returns the message line.
std::string bad_input_message(const Run& r)
{
  INFO("stdout: " << r.out);
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  REQUIRE(!r.err.empty());
  CHECK(r.err.back() == '\n');
  const std::vector<std::string> lines = lines_of(r.err);
  REQUIRE(!lines.empty());
  if (lines.size() == 2)
    CHECK(lines[1] == kUsageHint);
  else
    CHECK(lines.size() == 1);
  CHECK(!lines[0].empty());
  return lines[0];
}

// Runs `run ARGS --output DIR` twice: DIR new (must not be created), then DIR
// existing with a file in it (must stay exactly as it was). Checks the
// bad-input contract for both and returns the message.
std::string bad_run_leaves_output_alone(const std::vector<std::string>& run_args)
{
  TempDir dir;
  const std::string fresh = dir.in_ws("fresh-out");
  const std::string existing = dir.in_ws("old-out");
  fs::create_directory(existing);
  write_file(existing + "/keep.txt", "results of an earlier run\n");
  const auto before = snapshot(dir.ws);

  const Run a = run_cli(dir, run_args + std::vector<std::string>{"--output", fresh});
  const std::string message = bad_input_message(a);
  CHECK_FALSE(fs::exists(fresh));
  CHECK(snapshot(dir.ws) == before);

  const Run b = run_cli(dir, run_args + std::vector<std::string>{"--output", existing});
  CHECK(bad_input_message(b) == message);
  CHECK(snapshot(dir.ws) == before);
  CHECK(read_file(existing + "/keep.txt") == "results of an earlier run\n");
  return message;
}

ojson parse_json(const std::string& text)
{
  INFO("text: " << text.substr(0, 2000));
  ojson j;
  REQUIRE_NOTHROW(j = ojson::parse(text));
  return j;
}

// Parameter paths listed by `vsocksim describe` (lines that are not indented,
// before the platform section).
std::set<std::string> described_paths()
{
  TempDir dir;
  const Run r = run_cli(dir, {"describe"});
  REQUIRE(r.status == 0);
  std::set<std::string> paths;
  for (const std::string& line : lines_of(r.out)) {
    if (starts_with(line, "Platforms"))
      break;
    if (!line.empty() && line[0] != ' ')
      paths.insert(line);
  }
  return paths;
}

const char* const kRequiredMetrics[] = {
    "throughput_MBps",    "writer_sys_seconds", "writer_user_seconds", "reader_sys_seconds",
    "reader_user_seconds", "guest_cpu_percent", "host_cpu_percent",
};

// The tiny run with extra arguments; must succeed.
Run tiny_run(const TempDir& dir, const std::vector<std::string>& extra)
{
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny} + kTinySets + extra);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  return r;
}

}  // namespace

// ---------------------------------------------------------------------------
// 1. Bad input: exit 2, one precise line on stderr, nothing on stdout, nothing
//    created or changed under --output.

TEST_CASE("cli: bad experiment files exit 2 naming FILE:LINE:COL, the key path and what is allowed", "[cli]")
{
  struct Case {
    const char* what;
    std::string yaml;
    std::string needle;  // where the error must point: this text's n-th occurrence
    int occurrence;
    std::string key;                     // the key path in the message ("" = none)
    std::vector<std::string> fragments;  // also in the message
  };
  const std::vector<Case> cases = {
      // yaml-cpp gives up at the ':' of the next mapping line when a flow map
      // is not closed.
      {"YAML syntax error", "workload: {message_size: 4KiB\nseed: 3\n", ": 3", 0, "", {"invalid YAML"}},
      {"unknown nested key", "workload:\n  message_size: 4KiB\n  msg_size: 4KiB\n", "msg_size", 0,
       "workload.msg_size", {"unknown key (allowed: app, connections, message_size, start_interval, total_bytes)"}},
      {"unknown top-level key", "seed: 3\nseeed: 4\n", "seeed", 0, "seeed",
       {"unknown key (allowed: ", "iterations", "seed", "workload"}},
      {"duplicate key", "seed: 1\niterations: 3\nseed: 2\n", "seed", 1, "seed",
       {"duplicate key (first given at line 1, column 1)"}},
      {"duplicate nested key", "workload:\n  connections: 1\n  connections: 2\n", "connections", 1,
       "workload.connections", {"duplicate key (first given at line 2, column 3)"}},
      {"wrong type: text for an integer", "iterations: many\n", "many", 0, "iterations",
       {"expected an integer, got 'many'", "(allowed: 1 .. 1000"}},
      {"wrong type: scalar for a group", "workload: 5\n", "5", 0, "workload", {"expected a map of keys, got '5'"}},
      {"wrong type: yes for a boolean", "hv_sock:\n  send_loop: yes\n", "yes", 0, "hv_sock.send_loop",
       {"expected true or false, got 'yes' (allowed: true, false)"}},
      {"unknown unit", "workload:\n  message_size: 12 KB\n", "12 KB", 0, "workload.message_size",
       {"unknown unit 'KB' in '12 KB' (allowed: B, KiB, MiB, GiB, kB, MB, GB)"}},
      {"out-of-range value", "workload:\n  connections: 65\n", "65", 0, "workload.connections",
       {"65 is out of range (allowed: 1 .. 64"}},
      {"out-of-range sweep element", "sweep:\n  grid:\n    workload.message_size: [4KiB, 2GiB]\n", "2GiB", 0,
       "workload.message_size", {"2GiB is out of range (allowed: 1B .. 1GiB)"}},
      {"choice not allowed", "direction: sideways\n", "sideways", 0, "direction",
       {"'sideways' is not one of the choices (allowed: guest_to_host, host_to_guest)"}},
      {"platform not allowed", "platform: hyperv-2025\n", "hyperv-2025", 0, "platform",
       {"'hyperv-2025' is not one of the choices (allowed: ", "hyperv-2019"}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.what)
    {
      TempDir files;
      const std::string file = files.in_ws("bad.yaml");
      write_file(file, c.yaml);
      std::string prefix = file + ":" + where(c.yaml, c.needle, c.occurrence) + ": error: ";
      if (!c.key.empty())
        prefix += c.key + ": ";
      INFO("input:\n" << c.yaml);
      INFO("expected prefix: " << prefix);

      TempDir dir;
      const Run checked = run_cli(dir, {"check", file});
      const std::string message = bad_input_message(checked);
      CHECK(starts_with(message, prefix));
      for (const std::string& f : c.fragments)
        CHECK_THAT(message, Catch::Contains(f));

      // `run` refuses it with the same message and leaves --output alone.
      CHECK(bad_run_leaves_output_alone(std::vector<std::string>{"run", file} + kTinySets) == message);
    }
  }
}

TEST_CASE("cli: bad --set entries exit 2 naming the entry, the key and what is allowed", "[cli]")
{
  struct Case {
    const char* what;
    std::string entry;
    std::string key;  // key path after "error: " ("" = none)
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"missing '='", "seed", "seed", {"missing '='", "(allowed: KEY=VALUE"}},
      {"missing key", "=3", "", {"missing key before '='"}},
      {"unknown key", "hv_sock.sndbufz=32KiB", "hv_sock.sndbufz", {"unknown key (allowed: ", "sndbuf", "rcvbuf"}},
      {"bad integer", "seed=x", "seed", {"expected an integer, got 'x'", "(allowed: 0 .. "}},
      {"unknown unit", "hv_sock.sndbuf=32KB", "hv_sock.sndbuf",
       {"unknown unit 'KB' in '32KB' (allowed: B, KiB, MiB, GiB, kB, MB, GB)"}},
      {"out of range", "iterations=0", "iterations", {"0 is out of range (allowed: 1 .. 1000"}},
      {"choice not allowed", "direction=up", "direction", {"'up' is not one of the choices"}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.what)
    {
      std::string prefix = "--set '" + c.entry + "': error: ";
      if (!c.key.empty())
        prefix += c.key + ": ";
      INFO("expected prefix: " << prefix);
      TempDir dir;
      const std::string message = bad_input_message(run_cli(dir, {"check", kTiny, "--set", c.entry}));
      CHECK(starts_with(message, prefix));
      for (const std::string& f : c.fragments)
        CHECK_THAT(message, Catch::Contains(f));
      CHECK(bad_run_leaves_output_alone({"run", kTiny, "--set", c.entry}) == message);
    }
  }
}

TEST_CASE("cli: bad run options exit 2 and leave --output alone", "[cli]")
{
  SECTION("--format xml")
  {
    const std::string m = bad_run_leaves_output_alone({"run", kTiny, "--format", "xml"});
    CHECK_THAT(m, Catch::Contains("--format") && Catch::Contains("xml") && Catch::Contains("table") &&
                      Catch::Contains("json") && Catch::Contains("csv"));
  }
  SECTION("--jobs 0")
  {
    const std::string m = bad_run_leaves_output_alone({"run", kTiny, "--jobs", "0"});
    CHECK_THAT(m, Catch::Contains("--jobs") && Catch::Contains("0") && Catch::Contains("1"));
  }
  SECTION("--jobs not a number")
  {
    const std::string m = bad_run_leaves_output_alone({"run", kTiny, "--jobs", "two"});
    CHECK_THAT(m, Catch::Contains("--jobs") && Catch::Contains("two"));
  }
  SECTION("missing experiment file")
  {
    TempDir files;
    const std::string missing = files.in_ws("nosuch.yaml");
    const std::string m = bad_run_leaves_output_alone({"run", missing});
    CHECK(m == missing + ": error: cannot read the file: No such file or directory");
  }
  SECTION("experiment file is a directory")
  {
    TempDir files;
    const std::string m = bad_run_leaves_output_alone({"run", files.ws});
    CHECK(m == files.ws + ": error: cannot read the file: it is a directory");
  }
  SECTION("measurements file with an unknown column")
  {
    const std::string csv = kData + "/unknown-column.csv";
    const std::string text = read_file(csv);
    const std::string m = bad_run_leaves_output_alone(std::vector<std::string>{"run", kTiny, "-q"} + kTinySets +
                                                      std::vector<std::string>{"--set", "validation.measurements=unknown-column.csv"});
    // The path is the experiment file's directory joined with the setting.
    const std::string shown = (fs::path(kTiny).parent_path() / "unknown-column.csv").lexically_normal().string();
    // The header cell (the comment above it names the key too, followed by ')').
    CHECK_THAT(m, Catch::StartsWith(shown + ":" + where(text, "hv_sock.sndbufz,") +
                                    ": error: unknown column 'hv_sock.sndbufz'"));
    CHECK_THAT(m, Catch::Contains("(allowed: experiment keys, metric, min, max, mean, median, source, unit)"));
  }
  SECTION("missing measurements file")
  {
    const std::string m = bad_run_leaves_output_alone(std::vector<std::string>{"run", kTiny, "-q"} + kTinySets +
                                                      std::vector<std::string>{"--set", "validation.measurements=nosuch.csv"});
    CHECK_THAT(m, Catch::StartsWith(kData + "/nosuch.csv: error: "));
  }
  SECTION("unknown metric in report.metrics")
  {
    const std::string m = bad_run_leaves_output_alone(std::vector<std::string>{"run", kTiny, "-q"} + kTinySets +
                                                      std::vector<std::string>{"--set", "report.metrics=throughput_MBps,speed"});
    CHECK_THAT(m, Catch::Contains("report.metrics: unknown metric 'speed' (allowed: ") &&
                      Catch::Contains("throughput_MBps"));
  }
}

TEST_CASE("cli: --output naming an existing regular file exits 2 and leaves the file unchanged", "[cli]")
{
  TempDir dir;
  const std::string file = dir.in_ws("results.txt");
  write_file(file, "not a directory\n");
  const auto before = snapshot(dir.ws);
  const std::string m = bad_input_message(run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--output", file} + kTinySets));
  CHECK(m == "--output '" + file + "': error: exists and is not a directory");
  CHECK(snapshot(dir.ws) == before);
}

TEST_CASE("cli: bad commands exit 2 with one message and nothing on stdout", "[cli]")
{
  TempDir dir;
  SECTION("no subcommand")
  {
    const std::string m = bad_input_message(run_cli(dir, {}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: ") && Catch::Contains("subcommand"));
  }
  SECTION("unknown subcommand")
  {
    const std::string m = bad_input_message(run_cli(dir, {"frobnicate", kTiny}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: "));
  }
  SECTION("unknown option")
  {
    const std::string m = bad_input_message(run_cli(dir, {"run", kTiny, "--fromat", "json"}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: ") && Catch::Contains("--fromat"));
  }
  SECTION("run without a file")
  {
    const std::string m = bad_input_message(run_cli(dir, {"run"}));
    CHECK_THAT(m, Catch::StartsWith("vsocksim: error: ") && Catch::Contains("file"));
  }
  SECTION("describe nosuchtopic")
  {
    const std::string m = bad_input_message(run_cli(dir, {"describe", "nosuchtopic"}));
    CHECK_THAT(m, Catch::StartsWith("describe 'nosuchtopic': error: unknown topic (allowed: ") &&
                      Catch::Contains("hv_sock") && Catch::Contains("platforms") && Catch::Contains("workload"));
  }
  SECTION("check of a missing file")
  {
    const std::string missing = dir.in_ws("nosuch.yaml");
    const std::string m = bad_input_message(run_cli(dir, {"check", missing}));
    CHECK(m == missing + ": error: cannot read the file: No such file or directory");
  }
  CHECK(snapshot(dir.ws).empty());
}

// ---------------------------------------------------------------------------
// 2-3. check and describe.

TEST_CASE("cli: check accepts every experiment under experiments/", "[cli]")
{
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kSource + "/experiments"))
    if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml"))
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 3);
  CHECK(std::count(files.begin(), files.end(), kSource + "/experiments/calibration/hyperv-2019.yaml") == 1);
  TempDir dir;
  for (const std::string& file : files) {
    INFO(file);
    const Run r = run_cli(dir, {"check", file});
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::StartsWith(file + ": ok"));
    CHECK(lines_of(r.out).size() == 1);
  }
  CHECK(snapshot(dir.ws).empty());
}

TEST_CASE("cli: --version prints the version, the git commit and SimGrid's version", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"--version"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::StartsWith("vsocksim 0.") && Catch::Contains(" (git ") && Catch::Contains("), SimGrid 3."));
}

TEST_CASE("cli: describe lists every parameter with type, unit and default, the platforms and Markdown", "[cli]")
{
  TempDir dir;
  SECTION("all parameters")
  {
    const Run r = run_cli(dir, {"describe"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const std::vector<std::string> lines = lines_of(r.out);
    auto it = std::find(lines.begin(), lines.end(), "hv_sock.sndbuf");
    REQUIRE(it != lines.end());
    REQUIRE(lines.end() - it >= 5);
    CHECK(it[1] == "  type:    size (bytes)");
    CHECK(it[2] == "  default: default");
    CHECK_THAT(it[3], Catch::StartsWith("  allowed: ") && Catch::Contains("default"));
    for (const char* key : {"workload.message_size", "workload.total_bytes", "costs.clock_ghz", "seed", "iterations",
                            "platform", "transport", "direction", "hv_sock.rcvbuf", "hv_sock.send_loop",
                            "hv_sock.pending_send_size"})
      CHECK(std::count(lines.begin(), lines.end(), key) == 1);
    CHECK_THAT(r.out, Catch::Contains("hyperv-2019"));
  }
  SECTION("one topic")
  {
    const Run r = run_cli(dir, {"describe", "hv_sock"});
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::StartsWith("hv_sock.") && Catch::Contains("hv_sock.sndbuf\n  type:"));
    CHECK_THAT(r.out, !Catch::Contains("workload.message_size"));
  }
  SECTION("platforms")
  {
    const Run r = run_cli(dir, {"describe", "platforms"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const std::vector<std::string> lines = lines_of(r.out);
    CHECK(std::count(lines.begin(), lines.end(), "hyperv-2019") == 1);
    CHECK_THAT(r.out, Catch::Contains("transport: hv_sock") && Catch::Contains("costs.clock_ghz"));
  }
  SECTION("--markdown")
  {
    const Run r = run_cli(dir, {"describe", "--markdown"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::StartsWith("# "));
    CHECK_THAT(r.out, Catch::Contains("| `hv_sock.sndbuf` |") && Catch::Contains("hyperv-2019"));
  }
}

// ---------------------------------------------------------------------------
// 4. Determinism.

TEST_CASE("cli: the same run twice gives byte-identical JSON apart from manifest.wall", "[cli]")
{
  TempDir dir;
  // Without -q: progress goes to stderr and must not disturb stdout.
  const Run a = tiny_run(dir, {"--format", "json"});
  const Run b = tiny_run(dir, {"--format", "json"});
  ojson ja = parse_json(a.out), jb = parse_json(b.out);
  // The parsed document prints back to exactly what the program wrote, so
  // comparing dumps compares the bytes.
  CHECK(ja.dump(2) + "\n" == a.out);
  REQUIRE(ja["manifest"].contains("wall"));
  ja["manifest"].erase("wall");
  jb["manifest"].erase("wall");
  CHECK(ja.dump(2) == jb.dump(2));
}

TEST_CASE("cli: --jobs 1 and --jobs 2 give identical JSON", "[cli]")
{
  TempDir dir;
  ojson one = parse_json(tiny_run(dir, {"--format", "json", "-q", "--jobs", "1"}).out);
  ojson two = parse_json(tiny_run(dir, {"--format", "json", "-q", "--jobs", "2"}).out);
  REQUIRE(one["points"].size() == 2);
  CHECK(one["manifest"]["command_line"] != two["manifest"]["command_line"]);
  for (ojson* j : {&one, &two}) {
    (*j)["manifest"].erase("wall");
    (*j)["manifest"].erase("command_line");
  }
  CHECK(one.dump(2) == two.dump(2));
}

// ---------------------------------------------------------------------------
// 5. JSON contract.

TEST_CASE("cli: JSON result has the documented manifest, params and metrics", "[cli]")
{
  TempDir dir;
  const Run r = tiny_run(dir, {"--format", "json", "-q"});
  CHECK(r.err.empty());
  const ojson j = parse_json(r.out);
  REQUIRE(j.is_object());
  CHECK(j["experiment"] == "cli-tiny");

  REQUIRE(j.contains("manifest"));
  const ojson& m = j["manifest"];
  for (const char* key : {"version", "git_commit", "config_sha256", "simgrid_version"}) {
    INFO(key);
    REQUIRE(m.contains(key));
    REQUIRE(m[key].is_string());
    CHECK(!m[key].get<std::string>().empty());
  }
  const std::string sha = m["config_sha256"];
  CHECK(sha.size() == 64);
  CHECK(sha.find_first_not_of("0123456789abcdef") == std::string::npos);
  REQUIRE(m.contains("seed"));
  CHECK(m["seed"] == 11);
  REQUIRE(m.contains("wall"));

  // The config hash is the one `check` reports.
  const Run checked = run_cli(dir, std::vector<std::string>{"check", kTiny} + kTinySets);
  REQUIRE(checked.status == 0);
  CHECK_THAT(checked.out, Catch::Contains("config sha256 " + sha));

  // Every key of the hv_sock transport the tiny run uses (virtio_vsock's
  // keys, costs and workload.app are not part of its points).
  std::set<std::string> every_key;
  for (const std::string& path : described_paths())
    if (!starts_with(path, "virtio_vsock.") && !starts_with(path, "costs.virtio_") && path != "workload.app")
      every_key.insert(path);
  REQUIRE(every_key.size() > 20);
  REQUIRE(j.contains("points"));
  REQUIRE(j["points"].size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("point " << i);
    const ojson& p = j["points"][i];
    REQUIRE(p.contains("params"));
    const ojson& params = p["params"];
    std::set<std::string> keys;
    for (const auto& item : params.items())
      keys.insert(item.key());
    CHECK(keys == every_key);
    CHECK(params["workload.message_size"] == 16384);
    CHECK(params["workload.total_bytes"] == 200000);
    CHECK(params["iterations"] == 2);
    CHECK(params["hv_sock.sndbuf"] == "default");
    CHECK(params["costs.clock_ghz"] == 2.5);
    CHECK(params["costs.host_tx_copy_bytes_per_cycle"] == 0.3);
    CHECK(params["hv_sock.send_loop"] == (i == 1));

    REQUIRE(p.contains("metrics"));
    for (const char* metric : kRequiredMetrics) {
      INFO(metric);
      REQUIRE(p["metrics"].contains(metric));
      const ojson& s = p["metrics"][metric];
      for (const char* stat : {"min", "max", "mean", "median"}) {
        INFO(stat);
        REQUIRE(s.contains(stat));
        REQUIRE(s[stat].is_number());
      }
      const double lo = s["min"], hi = s["max"], mean = s["mean"], median = s["median"];
      CHECK(lo >= 0);
      CHECK(lo <= mean);
      CHECK(mean <= hi);
      CHECK(lo <= median);
      CHECK(median <= hi);
    }
    CHECK(p["metrics"]["throughput_MBps"]["min"].get<double>() > 0);
    CHECK(p["metrics"]["writer_sys_seconds"]["min"].get<double>() > 0);
    CHECK(p["metrics"]["guest_cpu_percent"]["min"].get<double>() > 0);
    CHECK(p["metrics"]["host_cpu_percent"]["min"].get<double>() > 0);
  }
}

TEST_CASE("cli: --set replaces a swept key by one value", "[cli]")
{
  TempDir dir;
  const ojson j = parse_json(tiny_run(dir, {"--format", "json", "-q", "--set", "hv_sock.send_loop=true",
                                            "--set", "hv_sock.sndbuf=32KiB"})
                                 .out);
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["params"]["hv_sock.send_loop"] == true);
  CHECK(j["points"][0]["params"]["hv_sock.sndbuf"] == 32768);
}

// ---------------------------------------------------------------------------
// 6. --output.

TEST_CASE("cli: --output writes result.json, manifest.json and one point file per point", "[cli]")
{
  TempDir dir;
  const std::string out = dir.in_ws("results");
  const Run r = tiny_run(dir, {"--format", "json", "-q", "--output", out});
  REQUIRE(fs::is_directory(out));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) {
    names.insert(e.path().filename().string());
    CHECK(e.is_regular_file());
  }
  CHECK(names == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  for (const std::string& n : names)
    CHECK_FALSE(n.ends_with(".tmp"));

  const std::string result = read_file(out + "/result.json");
  CHECK(result == r.out);
  const ojson j = parse_json(result);
  CHECK(parse_json(read_file(out + "/manifest.json")) == j["manifest"]);
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("point " << i);
    ojson p = parse_json(read_file(out + "/point-000" + std::to_string(i) + ".json"));
    // The point as in the result, plus the code that made it, the
    // experiment and the hash of its parameters (the key it is reused by).
    for (const char* key : {"version", "git_commit"})
      CHECK(p["run"][key] == j["manifest"][key]);
    CHECK(p["run"]["experiment"] == "cli-tiny");
    CHECK(p["run"]["params_sha256"].get<std::string>().size() == 64);
    p.erase("run");
    CHECK(p == j["points"][i]);
  }
  // Nothing else appears next to the output directory.
  std::set<std::string> ws;
  for (const auto& e : fs::directory_iterator(dir.ws))
    ws.insert(e.path().filename().string());
  CHECK(ws == std::set<std::string>{"results"});
}

TEST_CASE("cli: --output into an existing directory writes the same files", "[cli]")
{
  TempDir dir;
  const std::string out = dir.in_ws("results");
  fs::create_directory(out);
  const Run r = tiny_run(dir, {"--format", "csv", "-q", "--output", out});
  CHECK_THAT(r.out, Catch::StartsWith("index,"));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(out))
    names.insert(e.path().filename().string());
  CHECK(names == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  const ojson j = parse_json(read_file(out + "/result.json"));
  CHECK(j["points"].size() == 2);
}

// ---------------------------------------------------------------------------
// 7. csv and table.

TEST_CASE("cli: csv has an index column and one row per point and metric", "[cli]")
{
  TempDir dir;
  const Run r = tiny_run(dir, {"--format", "csv", "-q"});
  CHECK(r.err.empty());
  const std::vector<std::string> lines = lines_of(r.out);
  REQUIRE(lines.size() > 1);
  CHECK_THAT(lines[0], Catch::StartsWith("index,"));
  const auto commas = std::count(lines[0].begin(), lines[0].end(), ',');
  std::set<std::string> point0, point1;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(std::count(lines[i].begin(), lines[i].end(), ',') == commas);
    if (starts_with(lines[i], "0,"))
      point0.insert(lines[i]);
    else if (starts_with(lines[i], "1,"))
      point1.insert(lines[i]);
    else
      FAIL("row of no point");
  }
  for (const char* metric : kRequiredMetrics) {
    INFO(metric);
    auto has = [&](const std::set<std::string>& rows) {
      return std::any_of(rows.begin(), rows.end(), [&](const std::string& row) {
        return row.find("," + std::string(metric) + ",") != std::string::npos;
      });
    };
    CHECK(has(point0));
    CHECK(has(point1));
  }
}

TEST_CASE("cli: table shows min/max/avg/median cells and with measurements ends with the mean absolute error",
          "[cli]")
{
  TempDir dir;
  SECTION("table is the default format")
  {
    const Run r = tiny_run(dir, {"-q"});
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("min/max/avg/median"));
    CHECK_THAT(r.out, Catch::Contains("throughput_MBps") && Catch::Contains("writer_sys_seconds"));
    CHECK_THAT(r.out, !Catch::Contains("mean absolute error"));
    const Run explicit_table = tiny_run(dir, {"-q", "--format", "table"});
    CHECK(explicit_table.out == r.out);
  }
  SECTION("with validation.measurements")
  {
    const Run r = tiny_run(dir, {"-q", "--set", "validation.measurements=tiny-measurements.csv"});
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("min/max/avg/median"));
    const std::vector<std::string> lines = lines_of(r.out);
    REQUIRE(!lines.empty());
    CHECK_THAT(lines.back(), Catch::StartsWith("mean absolute error:") && Catch::Contains("over 2 row(s)"));

    const ojson j = parse_json(
        tiny_run(dir, {"-q", "--format", "json", "--set", "validation.measurements=tiny-measurements.csv"}).out);
    REQUIRE(j.contains("validation"));
    CHECK(j["validation"]["rows"].size() == 2);
    CHECK(j["validation"]["unmatched_rows"] == 0);
  }
}

// ---------------------------------------------------------------------------
// Known program bugs (see the report that came with this file): these state
// the contract and are allowed to fail until the program is fixed.

TEST_CASE("cli: check refuses what run refuses before simulating", "[cli]")
{
  TempDir dir;
  for (const char* entry : {"report.metrics=speed", "validation.measurements=unknown-column.csv",
                            "validation.measurements=nosuch.csv"}) {
    INFO(entry);
    const Run ran = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--set", entry} + kTinySets);
    CHECK(ran.status == 2);
    const Run checked = run_cli(dir, std::vector<std::string>{"check", kTiny, "--set", entry} + kTinySets);
    CHECK(checked.status == 2);
    CHECK(checked.err == ran.err);
  }
}

TEST_CASE("cli: --output below a regular file is bad usage (exit 2, before simulating)", "[cli]")
{
  TempDir dir;
  write_file(dir.in_ws("file.txt"), "x\n");
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--output", dir.in_ws("file.txt/sub")} +
                                 kTinySets);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::StartsWith("--output '" + dir.in_ws("file.txt/sub") + "': error: "));
}

TEST_CASE("cli: an unknown subcommand is named in the message", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"frobnicate"});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("frobnicate"));
}

TEST_CASE("cli: report.metrics errors point at FILE:LINE:COL or the --set entry", "[cli]")
{
  TempDir dir;
  const std::string file = dir.in_ws("metrics.yaml");
  const std::string yaml = "iterations: 2\nworkload:\n  total_bytes: 200kB\nreport:\n  metrics: speed\n";
  write_file(file, yaml);
  const Run in_file = run_cli(dir, {"run", file, "-q"});
  CHECK(in_file.status == 2);
  CHECK_THAT(in_file.err, Catch::StartsWith(file + ":" + where(yaml, "speed") + ": error: report.metrics: "));
  const Run in_set = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--set", "report.metrics=speed"} +
                                      kTinySets);
  CHECK(in_set.status == 2);
  CHECK_THAT(in_set.err, Catch::StartsWith("--set 'report.metrics=speed': error: report.metrics: "));
}

TEST_CASE("cli: run --list prints the expanded points with their indices and simulates nothing", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "--list", "--output", dir.ws + "/out"});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 2);  // tiny.yaml has two points
  CHECK(starts_with(lines[0], "    0  "));
  CHECK(starts_with(lines[1], "    1  "));
  CHECK(lines[0] != lines[1]);
  CHECK(r.err.empty());
  CHECK_FALSE(std::filesystem::exists(dir.ws + "/out"));
  // Indices are a pure function of the file and the --set entries.
  const Run again = run_cli(dir, std::vector<std::string>{"run", kTiny, "--list"});
  CHECK(again.out == r.out);
}

TEST_CASE("cli: progress goes to stderr only, ending with every simulation and point done", "[cli]")
{
  TempDir dir;
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "--format", "json"} + kTinySets);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const auto lines = lines_of(r.err);
  REQUIRE_FALSE(lines.empty());
  CHECK(starts_with(lines.back(), "[4/4 simulations, 2/2 points] "));
  CHECK(lines.back().find("GB simulated, elapsed") != std::string::npos);
  CHECK_NOTHROW(parse_json(r.out));  // nothing but the result on stdout
}

TEST_CASE("cli: sharded runs merged give the unsharded result", "[cli][shard]")
{
  TempDir dir;
  const std::vector<std::string> base = std::vector<std::string>{"run", kTiny, "-q"} + kTinySets;
  for (const char* shard : {"0/2", "1/2"}) {
    const Run r = run_cli(dir, base + std::vector<std::string>{"--shard", shard, "--output",
                                                              dir.ws + "/shard" + std::string(1, shard[0])});
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
  }
  const Run whole = run_cli(dir, base + std::vector<std::string>{"--output", dir.ws + "/whole"});
  REQUIRE(whole.status == 0);
  const Run merged = run_cli(dir, {"merge", dir.ws + "/shard0", dir.ws + "/shard1", "--output", dir.ws + "/merged"});
  INFO("stderr: " << merged.err);
  REQUIRE(merged.status == 0);
  ojson a = parse_json(read_file(dir.ws + "/merged/result.json"));
  ojson b = parse_json(read_file(dir.ws + "/whole/result.json"));
  CHECK(parse_json(merged.out) == a);
  for (ojson* r : {&a, &b}) {
    (*r)["manifest"].erase("wall");
    (*r)["manifest"].erase("command_line");
  }
  CHECK(a.dump() == b.dump());

  // A missing shard, a shard given twice, and a directory that is not a result are bad input.
  const Run missing = run_cli(dir, {"merge", dir.ws + "/shard0"});
  CHECK(missing.status == 2);
  CHECK(missing.err.find("point 1 is in none of the directories") != std::string::npos);
  const Run twice = run_cli(dir, {"merge", dir.ws + "/shard0", dir.ws + "/shard0", dir.ws + "/shard1"});
  CHECK(twice.status == 2);
  CHECK(twice.err.find("point 0 is also in another directory") != std::string::npos);
  const Run notdir = run_cli(dir, {"merge", dir.ws});
  CHECK(notdir.status == 2);
  const Run badshard = run_cli(dir, base + std::vector<std::string>{"--shard", "2/2"});
  CHECK(badshard.status == 2);
  CHECK(badshard.err.find("--shard '2/2': error:") == 0);
}

TEST_CASE("cli: a shard compares its own points with the published figures", "[cli][shard]")
{
  // Point 1 alone: its row is compared with point 1's prediction, the other
  // row matches no point of the shard.
  TempDir dir;
  const std::vector<std::string> args = std::vector<std::string>{
      "run", kTiny, "-q", "--format", "json", "--set", "validation.measurements=tiny-measurements.csv"} + kTinySets;
  const Run shard = run_cli(dir, args + std::vector<std::string>{"--shard", "1/2"});
  INFO("stderr: " << shard.err);
  REQUIRE(shard.status == 0);
  const Run whole = run_cli(dir, args);
  REQUIRE(whole.status == 0);
  const ojson s = parse_json(shard.out), w = parse_json(whole.out);
  REQUIRE(s["validation"]["rows"].size() == 1);
  CHECK(s["validation"]["unmatched_rows"] == 1);
  CHECK(s["validation"]["rows"][0]["point"] == 1);
  CHECK(s["validation"]["rows"][0] == w["validation"]["rows"][1]);
}

TEST_CASE("cli: the shard comes from Slurm's array variables when --shard is not given", "[cli][shard]")
{
  TempDir dir;
  ::setenv("SLURM_ARRAY_TASK_ID", "4", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "3", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--format", "json"} + kTinySets);
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  ojson j = parse_json(r.out);
  CHECK(j["manifest"]["shard"] == "1/2");
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["index"] == 1);
}

namespace {

// A sweep long enough to interrupt: tiny.yaml's 2 points x 4 x 2 = 16 points of 2 iterations.
const std::vector<std::string> kSweep = {"--set", "workload.total_bytes=3MB", "--set", "iterations=2", "--set",
                                         "sweep.grid.workload.message_size=[1KiB,4KiB,16KiB,64KiB]", "--set",
                                         "sweep.grid.hv_sock.sndbuf=[default,64KiB]"};

ojson without_run_facts(ojson r)
{
  r["manifest"].erase("wall");
  r["manifest"].erase("command_line");
  return r;
}

std::size_t point_files(const std::string& dir)
{
  std::size_t n = 0;
  if (std::filesystem::exists(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      n += e.path().filename().string().rfind("point-", 0) == 0 && e.path().extension() == ".json";
  return n;
}

}  // namespace

TEST_CASE("cli: a sweep killed or interrupted resumes into the uninterrupted result", "[cli][resume]")
{
  TempDir dir;
  const std::vector<std::string> base = std::vector<std::string>{"run", kTiny, "-q", "--jobs", "1",
                                                                  "--format", "json"} + kSweep;
  const Run whole = run_cli(dir, base + std::vector<std::string>{"--output", dir.ws + "/whole"});
  INFO("stderr: " << whole.err);
  REQUIRE(whole.status == 0);
  REQUIRE(point_files(dir.ws + "/whole") == 16);
  const ojson expected = without_run_facts(parse_json(whole.out));

  SECTION("kill -9 after the first finished point")
  {
    const std::string out = dir.ws + "/killed";
    const Run killed = run_cli(dir, base + std::vector<std::string>{"--output", out},
                               [&] { return point_files(out) >= 1; }, SIGKILL);
    REQUIRE(killed.status == 128 + SIGKILL);
    const std::size_t kept = point_files(out);
    CHECK(kept >= 1);
    CHECK(kept < 16);
    const Run resumed = run_cli(dir, std::vector<std::string>{"run", kTiny, "--jobs", "1", "--format", "json",
                                                              "--output", out} + kSweep);
    INFO("stderr: " << resumed.err);
    REQUIRE(resumed.status == 0);
    CHECK(resumed.err.find(fmt::format("reusing {} finished point(s) of 16", kept)) != std::string::npos);
    CHECK(without_run_facts(parse_json(resumed.out)).dump() == expected.dump());
  }
  SECTION("Ctrl-C (SIGINT) stops cleanly, keeping finished points")
  {
    const std::string out = dir.ws + "/interrupted";
    const Run stopped = run_cli(dir, base + std::vector<std::string>{"--output", out},
                                [&] { return point_files(out) >= 1; }, SIGINT);
    INFO("stderr: " << stopped.err);
    REQUIRE(stopped.status == 130);
    CHECK(stopped.out.empty());
    CHECK(stopped.err.find("interrupted by SIGINT;") != std::string::npos);
    CHECK(point_files(out) >= 1);
    const Run resumed = run_cli(dir, base + std::vector<std::string>{"--output", out});
    REQUIRE(resumed.status == 0);
    CHECK(without_run_facts(parse_json(resumed.out)).dump() == expected.dump());
  }
  SECTION("a finished directory is reused whole; another configuration reuses nothing")
  {
    const Run again = run_cli(dir, std::vector<std::string>{"run", kTiny, "--format", "json", "--output",
                                                            dir.ws + "/whole"} + kSweep);
    REQUIRE(again.status == 0);
    CHECK(again.err.find("reusing 16 finished point(s) of 16") != std::string::npos);
    CHECK(without_run_facts(parse_json(again.out)).dump() == expected.dump());
    const Run other = run_cli(dir, std::vector<std::string>{"run", kTiny, "--format", "json", "--output",
                                                            dir.ws + "/whole", "--set", "seed=99"} + kSweep);
    REQUIRE(other.status == 0);
    CHECK(other.err.find("reusing") == std::string::npos);
  }
}

namespace {

// The moments of the stop test: every 10 ms over the first second, then
// three inside the run wherever it ends (30%, 60% and 90% of the
// uninterrupted run's wall time, `run_ms`), so that some points are done
// before the signal however fast the build. VSIM_STOP_MOMENTS=N keeps every
// k-th of the first second so that N remain (the sanitizer suite, whose runs
// are several times slower, uses fewer).
std::vector<double> stop_moments_ms(double run_ms)
{
  std::vector<double> first;
  for (int i = 0; i < 100; ++i)
    first.push_back(10.0 * i);
  std::size_t keep = first.size();
  if (const char* e = std::getenv("VSIM_STOP_MOMENTS"))
    keep = std::clamp<std::size_t>(std::strtoul(e, nullptr, 10), 1, first.size());
  std::vector<double> out;
  for (std::size_t i = 0; i < keep; ++i)
    out.push_back(first[i * first.size() / keep]);
  for (double share : {0.3, 0.6, 0.9})
    out.push_back(share * run_ms);
  return out;
}

}  // namespace

TEST_CASE("cli: a stop request at any moment stops the whole run, keeps complete files and resumes exactly",
          "[cli][resume][stop]")
{
  TempDir dir;
  // 16 points x 2 iterations of 150 MB: about a second and a half with 2
  // jobs (the moments below need a run longer than their first second).
  const std::vector<std::string> base = std::vector<std::string>{"run", kTiny, "-q", "--jobs", "2", "--format",
                                                                  "json", "--set", "workload.total_bytes=150MB",
                                                                  "--set", "sim.run_length=full",
                                                                  "--set", "iterations=2", "--set",
                                                                  "sweep.grid.workload.message_size=[1KiB,4KiB,16KiB,64KiB]",
                                                                  "--set", "sweep.grid.hv_sock.sndbuf=[default,64KiB]"};
  const std::string whole_dir = dir.ws + "/whole";
  const auto whole_started = std::chrono::steady_clock::now();
  const Run whole = run_cli(dir, base + std::vector<std::string>{"--output", whole_dir});
  const double run_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - whole_started).count();
  INFO("stderr: " << whole.err);
  REQUIRE(whole.status == 0);
  const std::string expected = without_run_facts(parse_json(whole.out)).dump();
  const auto reference = snapshot(whole_dir);
  REQUIRE(point_files(whole_dir) == 16);

  const int signals[] = {SIGINT, SIGTERM, SIGINT, SIGTERM, SIGHUP};
  const std::vector<double> moments = stop_moments_ms(run_ms);
  std::size_t stopped_count = 0, finished_count = 0, partial_count = 0, early_kills = 0;
  double slowest_ms = 0;
  for (std::size_t k = 0; k < moments.size(); ++k) {
    const int sig = signals[k % 5];
    const double at = moments[k];
    const std::string out = dir.ws + fmt::format("/out{}", k);
    const auto t0 = std::chrono::steady_clock::now();
    const Run r = run_cli(
        dir, base + std::vector<std::string>{"--output", out},
        [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >= at; },
        sig, /*background_job=*/true);
    INFO("signal " << sig << " at " << at << " ms (sent " << r.sent_ms << " ms); stderr: " << r.err);
    // The program and everything it started gone within a second.
    if (r.sent_ms >= 0) {
      CHECK(r.gone_ms < 1000);
      slowest_ms = std::max(slowest_ms, r.gone_ms);
    }
    if (r.status == 0) {
      // The signal came after the last point's check, while the results were
      // written (milliseconds), or the run had finished: it is complete. A
      // lost request would show as a run going on long after the signal.
      ++finished_count;
      CHECK(r.gone_ms < std::max(300.0, 0.05 * run_ms));
      CHECK(without_run_facts(parse_json(r.out)).dump() == expected);
    } else {
      CHECK(r.status == 128 + sig);
      CHECK(r.out.empty());
      ++stopped_count;
      early_kills += r.killed;  // before the program's handler existed (the loader's first milliseconds)
    }
    // Every file under --output is complete: a point file is the reference's,
    // byte for byte; no temporary is left; result.json only once complete.
    if (fs::exists(out)) {
      for (const auto& [name, content] : snapshot(out)) {
        INFO(name);
        CHECK(name.find(".tmp") == std::string::npos);
        if (name.rfind("point-", 0) == 0) {
          REQUIRE(reference.count(name) == 1);
          CHECK(content == reference.at(name));
        } else if (name == "result.json") {
          CHECK(without_run_facts(parse_json(content)).dump() == expected);
        }
      }
      const std::size_t kept = point_files(out);
      partial_count += kept > 0 && kept < 16;
    }
    // A resume gives the uninterrupted result.
    const Run resumed = run_cli(dir, base + std::vector<std::string>{"--output", out});
    INFO("resume stderr: " << resumed.err);
    REQUIRE(resumed.status == 0);
    CHECK(without_run_facts(parse_json(resumed.out)).dump() == expected);
    fs::remove_all(out);
  }
  // The moments did hit every phase: runs stopped before any point and with
  // some points kept (late moments may find the run finished).
  INFO(stopped_count << " stopped, " << finished_count << " finished, " << partial_count
                     << " stopped with some points kept, " << early_kills
                     << " ended by the signal's default action; slowest end " << slowest_ms << " ms");
  CHECK(stopped_count >= moments.size() / 2);
  CHECK(partial_count >= 1);
  WARN(stopped_count << " stopped, " << finished_count << " finished, " << partial_count
                     << " with some points kept; slowest end " << slowest_ms << " ms");
}

TEST_CASE("cli: plot draws report.metrics, CPU per GB and predicted against measured as SVG and PNG", "[cli][plot]")
{
  TempDir dir;
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--format", "json", "--output",
                                                      dir.ws + "/out", "--set",
                                                      "validation.measurements=tiny-measurements.csv"} + kTinySets);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const Run p = run_cli(dir, {"plot", dir.ws + "/out/result.json", "--output", dir.ws + "/figs"});
  INFO("plot stderr: " << p.err);
  REQUIRE(p.status == 0);
  // tiny.yaml's report.metrics: throughput_MBps,writer_sys_seconds.
  for (const char* stem : {"throughput_MBps", "writer_sys_seconds", "cpu_per_GB", "predicted_vs_measured"}) {
    INFO(stem);
    const std::string svg = read_file(dir.ws + "/figs/" + stem + ".svg");
    CHECK(svg.find("<svg") != std::string::npos);
    const std::string png = read_file(dir.ws + "/figs/" + stem + ".png");
    REQUIRE(png.size() > 8);
    CHECK(png.substr(1, 3) == "PNG");
    CHECK(p.out.find(std::string(stem) + ".png") != std::string::npos);
  }
  CHECK(std::filesystem::exists(dir.ws + "/figs/plot.gp"));
  // The swept key on x, y from 0 (the values span less than 20x), the
  // spread over the iterations as error bars, the CPU bars labelled by the
  // swept values.
  const std::string gp = read_file(dir.ws + "/figs/plot.gp");
  CHECK(gp.find("set xlabel \"hv_sock.send_loop\"") != std::string::npos);
  CHECK(gp.find("set xtics (\"false\" 0, \"true\" 1)") != std::string::npos);
  CHECK(gp.find("set yrange [0:*]") != std::string::npos);
  CHECK(gp.find("with yerrorlines") != std::string::npos);
  CHECK(read_file(dir.ws + "/figs/cpu_per_GB.dat").rfind("\"false\"\t", 0) == 0);
  const Run log = run_cli(dir, {"plot", dir.ws + "/out/result.json", "--output", dir.ws + "/figs-log", "--log"});
  REQUIRE(log.status == 0);
  CHECK(read_file(dir.ws + "/figs-log/plot.gp").find("set logscale y") != std::string::npos);
  CHECK(bad_input_message(run_cli(dir, {"plot", dir.ws + "/out/result.json", "--x", "seed"})) ==
        dir.ws + "/out/result.json: error: --x seed: not a swept key of this result (allowed: hv_sock.send_loop)");
  const Run bad = run_cli(dir, {"plot", dir.ws + "/nosuch.json"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("nosuch.json: error: cannot read the result") != std::string::npos);
}

namespace {

// A result as `run --format json` writes it, made by hand for the plot
// tests: experiment "hand", a point per row with its swept values and the
// means of its metrics (min and max 5% around the mean, two iterations).
struct Swept {
  std::string key;
  ojson value;       // in params
  std::string text;  // in the label
};
struct HandPoint {
  std::vector<Swept> swept;
  std::map<std::string, double> means;
};

std::string hand_result(const TempDir& dir, const std::string& file, const std::string& description,
                        const std::string& report_metrics, const std::vector<HandPoint>& points)
{
  ojson r;
  r["experiment"] = "hand";
  r["points"] = ojson::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    ojson p;
    p["index"] = i;
    p["params"] = {{"description", description}, {"iterations", 2}};
    if (!report_metrics.empty())
      p["params"]["report.metrics"] = report_metrics;
    p["label"] = ojson::object();
    for (const Swept& s : points[i].swept) {
      p["params"][s.key] = s.value;
      p["label"][s.key] = s.text;
    }
    p["metrics"] = ojson::object();
    for (const auto& [m, mean] : points[i].means)
      p["metrics"][m] = {{"min", mean * 0.95}, {"max", mean * 1.05}, {"mean", mean}, {"median", mean}};
    r["points"].push_back(p);
  }
  write_file(dir.in_ws(file), r.dump(1));
  return file;
}

// hvsock-sndbuf-2019's shape: 128 B to 64 KiB, guest to host (64 KiB
// SO_SNDBUF) 114 to 1609 MB/s, host to guest 71 to 509 MB/s: 22.7x in all.
std::string wide_sweep(const TempDir& dir, const std::string& file = "wide.json")
{
  const std::vector<std::pair<std::int64_t, std::string>> sizes = {
      {128, "128"}, {1024, "1KiB"}, {4096, "4KiB"}, {65536, "64KiB"}};
  const std::array<std::array<double, 4>, 2> mbps = {{{114, 684, 1154, 1609}, {71, 298, 447, 509}}};
  const std::array<std::array<double, 4>, 2> guest = {{{100, 98, 60, 40}, {95, 90, 70, 50}}};
  const std::array<std::array<double, 4>, 2> host = {{{20, 30, 25, 15}, {60, 55, 40, 30}}};
  const std::array<std::array<double, 4>, 2> sleeps = {{{0, 3, 2, 1}, {5, 4, 3, 2}}};
  std::vector<HandPoint> points;
  for (std::size_t d = 0; d < 2; ++d)
    for (std::size_t k = 0; k < sizes.size(); ++k)
      points.push_back({{{"direction", d ? "host_to_guest" : "guest_to_host", d ? "host_to_guest" : "guest_to_host"},
                         {"workload.message_size", sizes[k].first, sizes[k].second}},
                        {{"throughput_MBps", mbps[d][k]},
                         {"guest_cpu_percent", guest[d][k]},
                         {"host_cpu_percent", host[d][k]},
                         {"writer_sys_seconds", 1.0 / static_cast<double>(k + 1)},
                         {"copies_per_MB", 1e6 / static_cast<double>(sizes[k].first)},
                         {"reader_sleeps_per_MB", sleeps[d][k]},
                         {"ring_full_stalls_per_MB", 0}}});
  return hand_result(dir, file, "a sweep over message sizes", "throughput_MBps", points);
}

// The lines of plot.gp drawing DIR/STEM.svg (the PNG's are the same).
std::string figure_script(const std::string& gp, const std::string& dir, const std::string& stem)
{
  const std::size_t start = gp.find("set output \"" + dir + "/" + stem + ".svg\"\n");
  if (start == std::string::npos)
    return "";
  return gp.substr(start, gp.find("unset output\n", start) - start);
}

}  // namespace

TEST_CASE("cli: plot chooses each y axis's scale from the data, and --log and --linear force it", "[cli][plot]")
{
  TempDir dir;
  const std::string wide = wide_sweep(dir);
  const Run p = run_cli(dir, {"plot", wide, "--output", "figs"});
  INFO("stderr: " << p.err);
  REQUIRE(p.status == 0);
  // report.metrics (throughput_MBps), then the CPU cost.
  CHECK(p.out == "figs/throughput_MBps.svg\nfigs/throughput_MBps.png\nfigs/cpu_per_GB.svg\nfigs/cpu_per_GB.png\n");
  CHECK(p.err == "vsocksim plot: x axis: workload.message_size, log (its values span 512x, more than 20x)\n"
                 "vsocksim plot: throughput_MBps: y axis log (the values span 22.7x, more than 20x; --linear forces "
                 "linear)\n"
                 "vsocksim plot: cpu_per_GB: y axis log (the values span 144x, more than 20x; --linear forces "
                 "linear)\n");
  const std::string gp = read_file(dir.in_ws("figs/plot.gp"));
  const std::string t = figure_script(gp, "figs", "throughput_MBps");
  // Log y from below 71 x 0.95 to above 1609 x 1.05, ticks at 1, 2, 5 x 10^k;
  // log x, a tick per size.
  CHECK_THAT(t, Catch::Contains("set logscale y\nset yrange [44.96666666666667:2534.175]\n"
                                "set ytics (50, 100, 200, 500, 1000, 2000)\n"));
  CHECK_THAT(t, Catch::Contains("set logscale x 2\nset xtics (\"128B\" 128, \"1KiB\" 1024, \"4KiB\" 4096, "
                                "\"64KiB\" 65536)\n"));
  // Title from the experiment, the metric's unit and meaning, the legend
  // outside the plot, a line per direction.
  CHECK_THAT(t, Catch::Contains("set label 1 \"hand: a sweep over message sizes\\nthroughput_MBps (MB/s): payload "
                                "bytes delivered to readers / elapsed time, all connections (MB = 10^6 B)\" at "
                                "screen 0.5, screen 0.965 center\n"));
  CHECK_THAT(t, Catch::Contains("set key outside right top vertical\n"));
  CHECK_THAT(t, Catch::Contains("set key title \"direction\"\n"));
  CHECK_THAT(t, Catch::Contains("set ylabel \"throughput_MBps (MB/s); mean, bars: min to max over the "
                                "iterations\"\n"));
  CHECK_THAT(t, Catch::Contains("title \"guest_to_host\", \"figs/throughput_MBps.dat\" index 1"));
  CHECK(read_file(dir.in_ws("figs/throughput_MBps.dat")) ==
        "# guest_to_host: x, mean, min, max over the iterations\n"
        "128\t114\t108.3\t119.7\n1024\t684\t649.8\t718.2\n4096\t1154\t1096.3\t1211.7\n65536\t1609\t1528.55\t1689.45\n"
        "\n\n"
        "# host_to_guest: x, mean, min, max over the iterations\n"
        "128\t71\t67.45\t74.55\n1024\t298\t283.09999999999997\t312.90000000000003\n4096\t447\t424.65\t469.35\n"
        "65536\t509\t483.54999999999995\t534.45\n\n\n");
  // The CPU bars side by side on a log axis (stacked bars mislead there).
  const std::string c = figure_script(gp, "figs", "cpu_per_GB");
  CHECK_THAT(c, Catch::Contains("set logscale y\n"));
  CHECK_THAT(c, Catch::Contains("set style histogram clustered gap 1\n"));
  CHECK_THAT(c, Catch::Contains("set ylabel 'CPU time per GB moved (s/GB)'\n"));

  // --linear: from 0, stacked bars; -q: no notes.
  const Run lin = run_cli(dir, {"plot", wide, "--output", "lin", "--linear"});
  REQUIRE(lin.status == 0);
  CHECK_THAT(lin.err, Catch::Contains("vsocksim plot: throughput_MBps: y axis linear (--linear)\n"));
  const std::string lgp = read_file(dir.in_ws("lin/plot.gp"));
  CHECK(lgp.find("set logscale y") == std::string::npos);
  CHECK_THAT(figure_script(lgp, "lin", "throughput_MBps"), Catch::Contains("set yrange [0:*]\n"));
  CHECK_THAT(figure_script(lgp, "lin", "cpu_per_GB"), Catch::Contains("set style histogram rowstacked\n"));
  CHECK(run_cli(dir, {"plot", wide, "--output", "lin", "--linear", "-q"}).err.empty());

  // A narrow sweep (16-64 KiB, 640-760 MB/s): linear x and y, y from 0.
  std::vector<HandPoint> narrow;
  for (const auto& [size, text, mbps] : std::vector<std::tuple<int, std::string, double>>{
           {16384, "16KiB", 640}, {32768, "32KiB", 700}, {65536, "64KiB", 760}})
    narrow.push_back({{{"workload.message_size", size, text}}, {{"throughput_MBps", mbps}}});
  const std::string n = hand_result(dir, "narrow.json", "narrow", "throughput_MBps", narrow);
  const Run np = run_cli(dir, {"plot", n, "--output", "narrow"});
  REQUIRE(np.status == 0);
  CHECK(np.out == "narrow/throughput_MBps.svg\nnarrow/throughput_MBps.png\n");  // no CPU figures in the result
  CHECK(np.err == "vsocksim plot: x axis: workload.message_size, linear (its values span 4x, at most 20x)\n"
                  "vsocksim plot: throughput_MBps: y axis linear (the values span 1.19x, at most 20x; --log forces "
                  "log)\n");
  const std::string ngp = read_file(dir.in_ws("narrow/plot.gp"));
  CHECK(ngp.find("logscale") == std::string::npos);
  CHECK_THAT(ngp, Catch::Contains("set yrange [0:*]\n"));
  CHECK_THAT(ngp, Catch::Contains("set key title \"\"\n"));  // one line: "all points"
  // --log: a log axis for it too (ticks at every digit: 1, 2, 5 give two).
  const Run nl = run_cli(dir, {"plot", n, "--output", "narrow-log", "--log"});
  REQUIRE(nl.status == 0);
  CHECK(nl.err == "vsocksim plot: x axis: workload.message_size, linear (its values span 4x, at most 20x)\n"
                  "vsocksim plot: throughput_MBps: y axis log (--log)\n");
  CHECK_THAT(read_file(dir.in_ws("narrow-log/plot.gp")),
             Catch::Contains("set logscale y\nset yrange [405.3333333333333:1197]\nset ytics (500, 600, 700, 800, "
                             "900, 1000)\n"));
  CHECK(bad_input_message(run_cli(dir, {"plot", n, "--log", "--linear"})) ==
        "vsocksim: error: --log excludes --linear");
}

TEST_CASE("cli: plot --metrics draws any metric in its unit, and refuses one the result has not got", "[cli][plot]")
{
  TempDir dir;
  const std::string wide = wide_sweep(dir);
  const Run p = run_cli(dir, {"plot", wide, "--output", "figs", "-q", "--metrics", "writer_sys_seconds,copies_per_MB"});
  INFO("stderr: " << p.err);
  REQUIRE(p.status == 0);
  CHECK(p.out ==
        "figs/writer_sys_seconds.svg\nfigs/writer_sys_seconds.png\nfigs/copies_per_MB.svg\nfigs/copies_per_MB.png\n");
  CHECK(p.err.empty());
  CHECK(!fs::exists(dir.in_ws("figs/throughput_MBps.svg")));
  const std::string gp = read_file(dir.in_ws("figs/plot.gp"));
  const std::string w = figure_script(gp, "figs", "writer_sys_seconds");
  CHECK_THAT(w, Catch::Contains("set ylabel \"writer_sys_seconds (s); mean, bars: min to max over the "
                                "iterations\"\n"));
  // The meaning as declared; its `time` in backquotes is not run by gnuplot.
  CHECK_THAT(w, Catch::Contains("\\nwriter_sys_seconds (s): kernel (and hypercall) CPU time of the writer threads, as "
                                "'time' reports it\""));
  CHECK_THAT(w, Catch::Contains("set yrange [0:*]\n"));  // 1 to 0.25 s: 4x
  const std::string c = figure_script(gp, "figs", "copies_per_MB");
  CHECK_THAT(c, Catch::Contains("set ylabel \"copies_per_MB (1/MB); mean, bars: min to max over the iterations\"\n"));
  CHECK_THAT(c, Catch::Contains("set logscale y\n"));  // 7812.5 to 15.3: 512x
  CHECK(read_file(dir.in_ws("figs/writer_sys_seconds.dat")).find("128\t1\t0.95\t1.05\n") != std::string::npos);
  // The CPU cost by its name, alone.
  const Run cpu = run_cli(dir, {"plot", wide, "--output", "cpu", "-q", "--metrics", "cpu_per_GB"});
  REQUIRE(cpu.status == 0);
  CHECK(cpu.out == "cpu/cpu_per_GB.svg\ncpu/cpu_per_GB.png\n");

  // Not a metric of the result: exit 2, the list of those it has.
  CHECK(bad_input_message(run_cli(dir, {"plot", wide, "--metrics", "throughput_MBps,throughput_Gbps"})) ==
        "wide.json: error: --metrics: 'throughput_Gbps' is not a metric of this result (allowed: cpu_per_GB, "
        "copies_per_MB, guest_cpu_percent, host_cpu_percent, reader_sleeps_per_MB, ring_full_stalls_per_MB, "
        "throughput_MBps, writer_sys_seconds)");
  const std::string no_cpu =
      hand_result(dir, "no-cpu.json", "", "", {{{{"direction", "guest_to_host", "guest_to_host"}}, {{"x_per_MB", 1}}}});
  CHECK(bad_input_message(run_cli(dir, {"plot", no_cpu, "--metrics", "cpu_per_GB"})) ==
        "no-cpu.json: error: --metrics cpu_per_GB: needs throughput_MBps, guest_cpu_percent and host_cpu_percent in "
        "every point");
  CHECK(bad_input_message(run_cli(dir, {"plot", no_cpu, "--metrics", "nosuch"})) ==
        "no-cpu.json: error: --metrics: 'nosuch' is not a metric of this result (allowed: x_per_MB)");
  // Without report.metrics: throughput_MBps, which this one has not got
  // either: nothing to draw.
  const Run nothing = run_cli(dir, {"plot", no_cpu});
  CHECK(nothing.status == 2);
  CHECK(nothing.err == "vsocksim plot: warning: report.metrics names throughput_MBps, which this result has not got: "
                       "no figure of it\n"
                       "no-cpu.json: error: nothing to draw: the result has none of its report.metrics (use "
                       "--metrics)\n");

  // --log leaves out the values not above 0, with a warning; none left: exit 2.
  const Run some = run_cli(dir, {"plot", wide, "--output", "log", "-q", "--log", "--metrics", "reader_sleeps_per_MB"});
  REQUIRE(some.status == 0);
  CHECK(some.err == "vsocksim plot: warning: reader_sleeps_per_MB: --log leaves out 1 value(s) not above 0, which a "
                    "log axis cannot show (point 0)\n");
  const std::string sleeps = read_file(dir.in_ws("log/reader_sleeps_per_MB.dat"));  // without point 0's 128 B
  CHECK(sleeps.rfind("# guest_to_host: x, mean, min, max over the iterations\n1024\t3\t", 0) == 0);
  const Run auto_scale = run_cli(dir, {"plot", wide, "--output", "auto", "--metrics", "reader_sleeps_per_MB"});
  REQUIRE(auto_scale.status == 0);
  CHECK_THAT(auto_scale.err, Catch::Contains("vsocksim plot: reader_sleeps_per_MB: y axis linear (a value is 0, which "
                                             "a log axis cannot show)\n"));
  CHECK(bad_input_message(run_cli(dir, {"plot", wide, "-q", "--log", "--metrics", "ring_full_stalls_per_MB"})) ==
        "wide.json: error: --log: ring_full_stalls_per_MB has no value above 0 to draw on a log axis (use --linear)");
}

TEST_CASE("cli: plot draws a result in its own units: Gbit/s stays Gbit/s", "[cli][plot]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"run", kData + "/tiny-virtio.yaml", "-q", "--format", "json", "--output", "out", "--set",
                              "report.metrics=throughput_Gbps"});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const Run p = run_cli(dir, {"plot", "out/result.json", "--output", "figs", "-q"});
  INFO("plot stderr: " << p.err);
  REQUIRE(p.status == 0);
  CHECK(p.out == "figs/throughput_Gbps.svg\nfigs/throughput_Gbps.png\nfigs/cpu_per_GB.svg\nfigs/cpu_per_GB.png\n");
  const std::string t = figure_script(read_file(dir.in_ws("figs/plot.gp")), "figs", "throughput_Gbps");
  CHECK_THAT(t, Catch::Contains("set ylabel \"throughput_Gbps (Gbit/s); mean, bars: min to max over the "
                                "iterations\"\n"));
  CHECK_THAT(t, Catch::Contains("\\nthroughput_Gbps (Gbit/s): throughput in 10^9 bits/s (virtio_vsock)\""));
  // The figures drawn are the result's, in Gbit/s: a place per direction.
  const ojson result = parse_json(read_file(dir.in_ws("out/result.json")));
  const std::vector<std::string> rows = lines_of(read_file(dir.in_ws("figs/throughput_Gbps.dat")));
  REQUIRE(rows.size() >= 3);
  for (std::size_t i = 0; i < 2; ++i) {
    std::istringstream row(rows[i + 1]);
    double x = -1, mean = -1;
    row >> x >> mean;
    CHECK(x == static_cast<double>(i));
    CHECK(mean == result["points"][i]["metrics"]["throughput_Gbps"]["mean"].get<double>());
    CHECK(mean < 100);  // not MB/s
  }
}

TEST_CASE("cli: plot gives the same script and figures for the same result, byte for byte", "[cli][plot]")
{
  TempDir dir;
  const std::string wide = wide_sweep(dir);
  const std::vector<std::string> files = {"plot.gp",         "throughput_MBps.dat", "throughput_MBps.svg",
                                          "throughput_MBps.png", "cpu_per_GB.dat",  "cpu_per_GB.svg",
                                          "cpu_per_GB.png"};
  REQUIRE(run_cli(dir, {"plot", wide, "--output", "figs", "-q"}).status == 0);
  std::map<std::string, std::string> first;
  for (const auto& f : files)
    first[f] = read_file(dir.in_ws("figs/" + f));
  fs::remove_all(dir.in_ws("figs"));
  REQUIRE(run_cli(dir, {"plot", wide, "--output", "figs", "-q"}).status == 0);
  for (const auto& f : files) {
    INFO(f);
    CHECK(read_file(dir.in_ws("figs/" + f)) == first[f]);
  }
}

TEST_CASE("cli: plot draws a key zipped with the x axis's along it, and runs nothing a title holds", "[cli][plot]")
{
  TempDir dir;
  // direction x (message_size zipped with total_bytes): two lines, not four.
  std::vector<HandPoint> points;
  for (const std::string d : {"guest_to_host", "host_to_guest"})
    for (const auto& [size, total] : std::vector<std::pair<int, int>>{{32, 480000}, {4096, 25165824}})
      points.push_back({{{"direction", d, d},
                         {"workload.message_size", size, size == 32 ? "32" : "4KiB"},
                         {"workload.total_bytes", total, std::to_string(total)}},
                        {{"throughput_MBps", size / 10.0}}});
  const std::string r = hand_result(dir, "zip.json", "`touch ran` $(touch ran2)", "throughput_MBps", points);
  const Run p = run_cli(dir, {"plot", r, "--output", "figs", "-q"});
  INFO("stderr: " << p.err);
  REQUIRE(p.status == 0);
  const std::string gp = read_file(dir.in_ws("figs/plot.gp"));
  CHECK_THAT(gp, Catch::Contains("set key title \"direction\"\n"));
  CHECK_THAT(gp, Catch::Contains("set xlabel \"workload.message_size (workload.total_bytes swept with it)\"\n"));
  CHECK_THAT(gp, Catch::Contains("index 1 using 1:2:3:4 with yerrorlines lt 2 dt 1 title \"host_to_guest\"\n"));
  CHECK(gp.find("index 2") == std::string::npos);
  CHECK_THAT(gp, Catch::Contains("set label 1 \"hand: 'touch ran' $(touch ran2)\\n"));
  CHECK(!fs::exists(dir.in_ws("ran")));
  CHECK(!fs::exists(dir.in_ws("ran2")));
}

TEST_CASE("cli: every file of the bad-input catalogue exits 2 with exactly its expected line", "[cli][catalogue]")
{
  TempDir dir;
  const std::string bad = std::string(VSIM_SOURCE_DIR) + "/tests/data/bad";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(bad))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 30);
  for (const std::string& f : files) {
    INFO(f);
    const std::string text = read_file(f);
    const std::string head = text.substr(0, text.find('\n'));
    REQUIRE(starts_with(head, "# expect: "));
    const Run r = run_cli(dir, {"check", f});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == f + ":" + head.substr(10) + "\n");
  }
}

TEST_CASE("cli: runs estimated at days are refused unless --allow-large, and check prints the estimate", "[cli][limits]")
{
  TempDir dir;
  // Every byte simulated: under sim.run_length auto the same run is small.
  const std::vector<std::string> huge = {"--set", "iterations=1000", "--set", "workload.total_bytes=1000GB", "--set",
                                         "sim.run_length=full"};
  const Run c = run_cli(dir, std::vector<std::string>{"check", kTiny} + huge);
  REQUIRE(c.status == 0);
  CHECK(c.out.find("simulation(s)") != std::string::npos);
  CHECK(c.out.find(" h with ") != std::string::npos);
  const Run refused =
      run_cli(dir, std::vector<std::string>{"run", kTiny, "--output", dir.ws + "/out"} + huge);
  CHECK(refused.status == 2);
  CHECK(refused.err.find("error: this run is large:") != std::string::npos);
  CHECK(refused.err.find("--allow-large") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.ws + "/out"));
  // With --allow-large it starts (and is interrupted once it runs).
  const auto started = std::chrono::steady_clock::now();
  const Run allowed = run_cli(
      dir, std::vector<std::string>{"run", kTiny, "-q", "--allow-large"} + huge,
      [&] { return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(300); }, SIGINT);
  CHECK(allowed.status == 130);
  // The default experiments are far from the limit.
  const Run small = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q"} + kTinySets);
  CHECK(small.status == 0);
}

// ---------------------------------------------------------------------------
// validate: the validation experiments against their published figures.

namespace {

const std::string kValidate = kSource + "/tests/data/validate";

// Cells of a report line: columns are separated by three or more spaces.
std::vector<std::string> cells_of(const std::string& line)
{
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    std::size_t gap = line.find("   ", pos);
    out.push_back(line.substr(pos, gap == std::string::npos ? std::string::npos : gap - pos));
    if (gap == std::string::npos)
      break;
    pos = line.find_first_not_of(' ', gap);
  }
  return out;
}

// The number of "..., mean absolute error X%, ..." in a line.
double mae_of(const std::string& line)
{
  const std::string tag = "mean absolute error ";
  const std::size_t at = line.find(tag);
  REQUIRE(at != std::string::npos);
  return std::stod(line.substr(at + tag.size()));
}

// A copy of a tiny validation study under dir.ws, edited: `edit` turns the
// experiment's and the figures' text into the copies'. Returns the copy of
// the experiment.
std::string tiny_study_copy(const TempDir& dir, const std::string& stem,
                            const std::function<void(std::string& yaml, std::string& csv)>& edit)
{
  std::string yaml = read_file(kValidate + "/" + stem + ".yaml");
  std::string csv = read_file(kValidate + "/" + stem + ".csv");
  edit(yaml, csv);
  fs::create_directories(dir.ws + "/study");
  write_file(dir.ws + "/study/" + stem + ".yaml", yaml);
  write_file(dir.ws + "/study/" + stem + ".csv", csv);
  return dir.ws + "/study/" + stem + ".yaml";
}

void replace_once(std::string& text, const std::string& from, const std::string& to)
{
  const std::size_t at = text.find(from);
  if (at == std::string::npos)
    throw std::logic_error("test bug: '" + from + "' not in the text");
  text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("cli: validate prints every row with its error, each study's mean absolute error and the overall one",
          "[cli][validate]")
{
  TempDir dir;
  const Run r = run_cli(dir, {"validate", kValidate, "-q", "--jobs", "2"});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  INFO("stdout:\n" << r.out);

  // The run's own means, to check the prediction against.
  const ojson run = parse_json(run_cli(dir, {"run", kValidate + "/tiny-loop.yaml", "-q", "--format", "json"}).out);
  const double run_mean0 = run["points"][0]["metrics"]["throughput_MBps"]["mean"].get<double>();

  std::map<std::string, std::vector<double>> errors;  // study -> printed errors
  std::vector<double> predicted_column;
  std::vector<std::string> summaries, overall;
  for (const std::string& line : lines_of(r.out)) {
    const std::vector<std::string> c = cells_of(line);
    if (c.empty())
      continue;
    if (starts_with(line, "overall: "))
      overall.push_back(line);
    else if (starts_with(line, "tiny-loop: ") || starts_with(line, "tiny-units: "))
      summaries.push_back(line);
    else if ((c[0] == "tiny-loop" || c[0] == "tiny-units") && c.size() >= 8) {
      const double measured = std::stod(c[c.size() - 3]);
      const double predicted = std::stod(c[c.size() - 2]);
      const double error = std::stod(c.back());
      INFO(line);
      CHECK(c.back().back() == '%');
      // predicted is printed to 4 significant digits, the error to 0.1%.
      CHECK(std::fabs(error - (predicted / measured - 1) * 100) <= 0.05 + 0.05 * predicted / measured + 1e-9);
      errors[c[0]].push_back(error);
      predicted_column.push_back(predicted);
    }
  }
  REQUIRE(errors["tiny-loop"].size() == 3);
  REQUIRE(errors["tiny-units"].size() == 2);

  // The first row is point 0's mean throughput, as `run` reports it.
  CHECK(predicted_column.at(0) == Approx(run_mean0).epsilon(5e-4));

  // Each study's line and the overall line: rows, mean of |error|, the worst.
  REQUIRE(summaries.size() == 2);
  REQUIRE(overall.size() == 1);
  std::vector<double> all;
  for (const std::string& s : summaries) {
    const std::string study = s.substr(0, s.find(':'));
    const std::vector<double>& e = errors[study];
    double sum = 0, worst = 0;
    for (double x : e) {
      sum += std::fabs(x);
      worst = std::fabs(x) > std::fabs(worst) ? x : worst;
      all.push_back(x);
    }
    INFO(s);
    CHECK_THAT(s, Catch::StartsWith(fmt::format("{}: {} row(s), mean absolute error ", study, e.size())));
    CHECK(std::fabs(mae_of(s) - sum / static_cast<double>(e.size())) <= 0.1);
    CHECK_THAT(s, Catch::Contains(fmt::format(", worst {:+.1f}% (", worst)));
  }
  double sum = 0;
  for (double x : all)
    sum += std::fabs(x);
  CHECK_THAT(overall[0], Catch::StartsWith("overall: 5 row(s) in 2 studies, mean absolute error "));
  CHECK(std::fabs(mae_of(overall[0]) - sum / 5) <= 0.1);
  const std::vector<std::string> out_lines = lines_of(r.out);
  REQUIRE(out_lines.size() >= 2);
  CHECK(out_lines[out_lines.size() - 2] == overall[0]);
  CHECK_THAT(out_lines.back(), Catch::StartsWith("overall design effects: 1 design effect(s), 1 larger than 10%: "));

  // Results do not depend on --jobs; progress goes to stderr only.
  const Run one = run_cli(dir, {"validate", kValidate, "--jobs", "1"});
  CHECK(one.status == 0);
  CHECK(one.out == r.out);
  CHECK_THAT(one.err, Catch::StartsWith("validate: 2 studies, 6 simulation(s)"));
  CHECK(snapshot(dir.ws).empty());
}

TEST_CASE("cli: validate --markdown prints the same rows as a document, --plot draws the figures", "[cli][validate]")
{
  TempDir dir;
  const Run md = run_cli(dir, {"validate", kValidate, "-q", "--markdown", "--plot", dir.ws + "/figs"});
  INFO("stderr: " << md.err);
  REQUIRE(md.status == 0);
  CHECK_THAT(md.out, Catch::StartsWith("<!-- Generated by `vsocksim validate --markdown`"));
  CHECK_THAT(md.out,
             Catch::Contains("\n    build/vsocksim validate --markdown " + kValidate + " > docs/validation.md\n"));
  const Run text = run_cli(dir, {"validate", kValidate, "-q"});
  REQUIRE(text.status == 0);
  // Every row and summary of the text report is in the document.
  std::size_t rows = 0;
  for (const std::string& line : lines_of(md.out))
    if (starts_with(line, "| ") && line.back() == '|' && line.find("%") != std::string::npos)
      ++rows;
  CHECK(rows == 5 + 2 + 1);  // the rows, the summary table's line per study, the design effect (tiny-loop)
  CHECK_THAT(md.out, Catch::Contains("\n## tiny-loop\n") && Catch::Contains("\n## tiny-units\n"));
  CHECK_THAT(md.out, Catch::Contains("`throughput_MBps*0.008`"));
  CHECK_THAT(md.out, Catch::Contains("\noverall: 5 row(s) in 2 studies, mean absolute error "));

  for (const char* stem : {"validation-all", "validation-tiny-loop", "validation-tiny-units"}) {
    INFO(stem);
    CHECK(read_file(dir.ws + "/figs/" + stem + ".svg").find("<svg") != std::string::npos);
    CHECK(read_file(dir.ws + "/figs/" + stem + ".png").substr(1, 3) == "PNG");
  }
  CHECK(fs::exists(dir.ws + "/figs/validation.gp"));
}

TEST_CASE("cli: validate refuses bad input with exit 2 and file:line:column before simulating", "[cli][validate]")
{
  TempDir dir;
  SECTION("default directory missing")
  {
    const std::string m = bad_input_message(run_cli(dir, {"validate"}));
    CHECK_THAT(m, Catch::StartsWith("experiments/validation: error: no such file or directory (allowed: ") &&
                      Catch::Contains("run validate from the repository's top directory"));
  }
  SECTION("named path missing")
  {
    const std::string m = bad_input_message(run_cli(dir, {"validate", dir.ws + "/nosuch"}));
    CHECK(starts_with(m, dir.ws + "/nosuch: error: no such file or directory (allowed: "));
  }
  SECTION("directory without experiments")
  {
    fs::create_directory(dir.ws + "/empty");
    const std::string m = bad_input_message(run_cli(dir, {"validate", dir.ws + "/empty"}));
    CHECK(starts_with(m, dir.ws + "/empty: error: no validation experiments in this directory (allowed: "));
  }
  SECTION("experiment without validation.measurements")
  {
    std::string yaml;
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string& y, std::string&) {
      replace_once(y, "validation:\n  measurements: tiny-loop.csv\n", "");
      yaml = y;
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == file + ":" + where(yaml, "name:") +
                   ": error: validation.measurements: missing; validate compares each experiment with published "
                   "figures (allowed: the path of a CSV of figures, relative to the experiment file)");
  }
  SECTION("a row with a value no point has")
  {
    std::string csv;
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string&, std::string& c) {
      replace_once(c, "hv_sock.send_loop,metric", "hv_sock.send_loop,workload.message_size,metric");
      replace_once(c, "false,throughput_MBps", "false,16384,throughput_MBps");
      replace_once(c, "true,throughput_MBps", "true,4096,throughput_MBps");
      replace_once(c, "true,writer_sys", "true,,writer_sys");
      csv = c;
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == dir.ws + "/study/tiny-loop.csv:" + where(csv, "4096") + ": error: workload.message_size: no point of " +
                   file + " has the value '4096' (its points have: 16384); the row matches no point");
  }
  SECTION("a row whose values each exist but not together")
  {
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string& y, std::string& c) {
      replace_once(y, "  message_size: 16KiB\n", "");
      replace_once(y, "  grid:\n    hv_sock.send_loop: [false, true]\n",
                   "  zip:\n    hv_sock.send_loop: [false, true]\n    workload.message_size: [4096, 16384]\n");
      c = "hv_sock.send_loop,workload.message_size,metric,mean\nfalse,4096,throughput_MBps,500\n"
          "true,16384,throughput_MBps,500\ntrue,4096,throughput_MBps,500\n";
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == dir.ws + "/study/tiny-loop.csv:4:1: error: no point of " + file +
                   " has this combination (hv_sock.send_loop=true, workload.message_size=4096); the row matches no "
                   "point");
  }
  SECTION("malformed metric expression")
  {
    const std::string file = tiny_study_copy(dir, "tiny-units", [&](std::string&, std::string& c) {
      replace_once(c, "throughput_MBps*0.008", "throughput_MBps*(0.008");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK(m == dir.ws + "/study/tiny-units.csv:4:37: error: metric: expected ')'");
  }
  SECTION("unknown metric in an expression")
  {
    const std::string file = tiny_study_copy(dir, "tiny-units", [&](std::string&, std::string& c) {
      replace_once(c, "(host_cpu_percent +", "(host_cpu_prcent +");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK_THAT(m, Catch::StartsWith(dir.ws + "/study/tiny-units.csv:5:38: error: metric: unknown metric "
                                             "'host_cpu_prcent' (allowed: throughput_MBps, "));
  }
  SECTION("unit not the metric's")
  {
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string&, std::string& c) {
      replace_once(c, "true,throughput_MBps,MB/s", "true,throughput_MBps,Gbit/s");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file}));
    CHECK_THAT(m, Catch::StartsWith(dir.ws + "/study/tiny-loop.csv:5:22: error: unit: throughput_MBps is in MB/s, "
                                             "not 'Gbit/s' (allowed: MB/s; for another unit convert in the metric "
                                             "column"));
  }
  SECTION("an experiment key without a numeric value, found once the points ran")
  {
    const std::string file = tiny_study_copy(dir, "tiny-loop", [&](std::string&, std::string& c) {
      replace_once(c, "false,throughput_MBps,,", "false,throughput_MBps/hv_sock.sndbuf,,");
    });
    const std::string m = bad_input_message(run_cli(dir, {"validate", file, "-q", "--plot", dir.ws + "/figs"}));
    CHECK(m == dir.ws + "/study/tiny-loop.csv:4:7: error: metric: hv_sock.sndbuf is 'default' at point 0 of " + file +
                   ", not a number (allowed: keys with numeric values at every matched point)");
    CHECK_FALSE(fs::exists(dir.ws + "/figs"));
  }
  SECTION("a bad --set entry")
  {
    const std::string m = bad_input_message(run_cli(dir, {"validate", kValidate, "--set", "iterations=0"}));
    CHECK_THAT(m, Catch::StartsWith("--set 'iterations=0': error: iterations: 0 is out of range"));
  }
}

TEST_CASE("cli: validate stops on SIGTERM or SIGINT at any moment, its simulations with it", "[cli][validate][stop]")
{
  TempDir dir;
  // The validation studies made long enough to be stopped while they run.
  const std::vector<std::string> args = {"validate", kValidate, "-q", "--jobs", "2", "--set",
                                         "workload.total_bytes=4GB", "--set", "sim.run_length=full"};
  for (double at : {0.0, 5.0, 20.0, 60.0, 150.0, 400.0}) {
    for (int sig : {SIGTERM, SIGINT}) {
      const auto t0 = std::chrono::steady_clock::now();
      const Run r = run_cli(
          dir, args,
          [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >= at; },
          sig, /*background_job=*/true);
      INFO("signal " << sig << " at " << at << " ms; stderr: " << r.err);
      REQUIRE(r.sent_ms >= 0);
      CHECK(r.status == 128 + sig);
      CHECK(r.out.empty());
      CHECK(r.gone_ms < 1000);
    }
  }
}

TEST_CASE("cli: show re-prints a result with other metrics and formats, without simulating", "[cli][show]")
{
  TempDir dir;
  const std::string out_dir = dir.ws + "/out";
  const Run table = run_cli(dir, {"run", kTiny, "-q", "--output", out_dir});
  REQUIRE(table.status == 0);
  const Run json = run_cli(dir, {"run", kTiny, "-q", "--format", "json"});
  const Run csv = run_cli(dir, {"run", kTiny, "-q", "--format", "csv"});
  // The same tables as the run printed, from the directory or its result.json.
  const Run shown = run_cli(dir, {"show", out_dir});
  REQUIRE(shown.status == 0);
  CHECK(shown.out == table.out);
  CHECK(run_cli(dir, {"show", out_dir + "/result.json", "--format", "csv"}).out == csv.out);
  // JSON: the run's, apart from the wall-clock facts.
  const Run shown_json = run_cli(dir, {"show", out_dir, "--format", "json"});
  CHECK(without_run_facts(parse_json(shown_json.out)) == without_run_facts(parse_json(json.out)));
  // Another metric, with its unit in the header.
  const Run other = run_cli(dir, {"show", out_dir, "--metrics", "syscalls_per_MB"});
  CHECK(other.out.find("syscalls_per_MB (1/MB), min/max/avg/median over 2 iterations") != std::string::npos);
  CHECK(other.out.find("throughput_MBps") == std::string::npos);
  // Errors: a metric the result lacks, a file that is not a result.
  CHECK_THAT(bad_input_message(run_cli(dir, {"show", out_dir, "--metrics", "speed"})),
             Catch::StartsWith(out_dir + "/result.json: error: --metrics: 'speed' is not in this result (allowed: all, "));
  CHECK(bad_input_message(run_cli(dir, {"show", kTiny})) ==
        kTiny + ": error: not valid JSON (allowed: the JSON of `vsocksim run --format json`, or a `run --output` "
                "directory)");
}

TEST_CASE("cli: compare prints each metric side by side with the change and whether it is beyond the spread",
          "[cli][compare]")
{
  TempDir dir;
  const std::string out_dir = dir.ws + "/out";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", out_dir}).status == 0);
  const Run two = run_cli(dir, {"compare", out_dir, "--points", "0,1", "--metrics", "throughput_MBps,writer_sys_seconds"});
  REQUIRE(two.status == 0);
  const std::vector<std::string> lines = lines_of(two.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "A: cli-tiny point 0 (hv_sock.send_loop=false)");
  CHECK(lines[1] == "B: cli-tiny point 1 (hv_sock.send_loop=true)");
  CHECK(lines[2].rfind("metric ", 0) == 0);
  CHECK(lines[3].rfind("throughput_MBps ", 0) == 0);
  CHECK(lines[4].rfind("writer_sys_seconds ", 0) == 0);
  // The send loop cuts the writer's sys time by more than its spread.
  CHECK(lines[4].find("%") != std::string::npos);
  CHECK(lines[4].substr(lines[4].size() - 3) == "yes");
  // A result against itself: no change, nothing beyond the spread.
  const Run same = run_cli(dir, {"compare", out_dir, out_dir + "/result.json"});
  REQUIRE(same.status == 0);
  CHECK(same.out.find("+0.00%") != std::string::npos);
  CHECK(same.out.find(" yes") == std::string::npos);
  CHECK(bad_input_message(run_cli(dir, {"compare", out_dir, "--points", "0,7"})) ==
        out_dir + "/result.json: error: --points: point 7 does not exist (allowed: 0 to 1)");
  CHECK(bad_input_message(run_cli(dir, {"compare", out_dir})) ==
        "compare: error: give two results, or one result and --points I,J");
  CHECK(bad_input_message(run_cli(dir, {"compare", out_dir, "--points", "x"})) ==
        "--points 'x': error: needs two point indices (allowed: I,J, e.g. 0,3)");
}

TEST_CASE("cli: --output reuses every point of a changed sweep and refuses another experiment's directory",
          "[cli][resume]")
{
  TempDir dir;
  const std::string out = dir.ws + "/out";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", out}).status == 0);
  // A value added to the sweep: the two points already done are reused, at their new indices.
  const Run grown = run_cli(dir, {"run", kTiny, "--output", out, "--set", "sweep.grid.workload.message_size=[4KiB,16KiB]"});
  REQUIRE(grown.status == 0);
  CHECK(grown.err.find("reusing 2 finished point(s) of 4 from " + out) != std::string::npos);
  CHECK(point_files(out) == 4);
  // Back to the first sweep: everything reused, the extra point files removed.
  const Run back = run_cli(dir, {"run", kTiny, "--output", out, "--format", "json"});
  CHECK(back.err.find("reusing 2 finished point(s) of 2") != std::string::npos);
  CHECK(point_files(out) == 2);
  // Another experiment: refused, nothing changed; --force replaces.
  const std::string other = dir.ws + "/other.yaml";
  {
    std::string text = read_file(kTiny);
    text.replace(text.find("name: cli-tiny"), 14, "name: other-tiny");
    std::ofstream f(other);
    f << text;
  }
  const auto before = snapshot(out);
  CHECK(bad_input_message(run_cli(dir, {"run", other, "-q", "--output", out})) ==
        "--output '" + out + "': error: holds the results of experiment 'cli-tiny', not 'other-tiny' (allowed: an "
        "empty or new directory, one of experiment 'other-tiny', or --force to replace them)");
  CHECK(snapshot(out) == before);
  CHECK(run_cli(dir, {"run", other, "-q", "--output", out, "--force"}).status == 0);
  CHECK(parse_json(read_file(out + "/result.json"))["experiment"] == "other-tiny");
}

TEST_CASE("cli: show and compare print exactly these tables for a fixed result (golden)", "[cli][show][compare]")
{
  TempDir dir;
  const std::string result = kData + "/result-small.json";  // hand-made: the figures below are worked by hand
  const Run shown = run_cli(dir, {"show", result, "--stat", "ci"});
  REQUIRE(shown.status == 0);
  // 100, 104, 96: mean 100, s = 4, t(0.975, 2) = 4.3027: +- 9.94; 150, 160, 155: s = 5: +- 12.4.
  CHECK(shown.out ==
        "golden — throughput_MBps (MB/s), mean +- half-width of the 95% confidence interval over 3 iterations\n"
        "hv_sock.sndbuf   throughput_MBps\n"
        "default          100 +- 9.94\n"
        "64KiB            155 +- 12.4\n"
        "\n"
        "golden — writer_sys_seconds (s), mean +- half-width of the 95% confidence interval over 3 iterations\n"
        "hv_sock.sndbuf   writer_sys_seconds\n"
        "default          2 +- 0.248\n"
        "64KiB            2 +- 0.124\n"
        "\n"
        "What the transport used where the points differ (effective values):\n"
        "point   effective.ring_bytes_guest_to_host\n"
        "0       24576\n"
        "1       131072\n"
        "\n"
        "MB = 10^6 bytes; CPU percentages sum over CPUs (200% is two CPUs busy); `vsocksim describe metrics` says "
        "what each metric is.\n");
  const Run compared = run_cli(dir, {"compare", result, "--points", "0,1"});
  REQUIRE(compared.status == 0);
  // +55%: 155 / 100; spreads (max - min) / mean: 8/100, 10/155; the ranges
  // 96-104 and 150-160 do not overlap; 1.9-2.1 and 1.95-2.05 do.
  CHECK(compared.out ==
        "A: golden point 0 (hv_sock.sndbuf=default)\n"
        "B: golden point 1 (hv_sock.sndbuf=64KiB)\n"
        "metric               unit   A mean   B mean   change    A spread   B spread   beyond the spread\n"
        "throughput_MBps      MB/s   100      155      +55.00%   8.00%      6.45%      yes\n"
        "writer_sys_seconds   s      2        2        +0.00%    10.00%     5.00%      no\n");
}

TEST_CASE("cli: check and run warn about swept values the transport clamps, and name identical points", "[cli][effective]")
{
  TempDir dir;
  const std::vector<std::string> sweep = {"--set", "sweep.grid.hv_sock.rcvbuf=[64KiB,1MiB,4MiB]", "--set",
                                          "direction=host_to_guest", "--set", "workload.total_bytes=200kB"};
  const Run c = run_cli(dir, std::vector<std::string>{"check", kTiny} + sweep);
  REQUIRE(c.status == 0);
  CHECK(c.out.find(kTiny + ": warning: hv_sock.rcvbuf=1048576: capped by hv_sock.sysctl_rmem_max at 212992; the "
                           "kernel's 425984 exceeds the largest ring, 262144 bytes: the ring is 262144 bytes (points "
                           "1 and 4)") != std::string::npos);
  // send_loop false and true, each with 1 MiB and 4 MiB: the same 256 KiB ring.
  CHECK(c.out.find(kTiny + ": note: points 1 and 2 are the same run") != std::string::npos);
  CHECK(c.out.find(kTiny + ": note: points 4 and 5 are the same run") != std::string::npos);
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q"} + sweep);
  REQUIRE(r.status == 0);
  CHECK(r.err.find(kTiny + ": warning: hv_sock.rcvbuf=4194304: ") != std::string::npos);
  CHECK(r.out.find("effective.ring_bytes_host_to_guest") != std::string::npos);
}

// ---------------------------------------------------------------------------
// run --trace: the timeline (sim/trace.hpp, app/run/timeline.hpp, docs/trace.md).

namespace {

const std::string kTinyVirtio = kData + "/tiny-virtio.yaml";

long long ns_of(const ojson& ts) { return std::llround(ts.get<double>() * 1000); }

// What is wrong with a trace, against the Trace Event Format and what
// docs/trace.md promises (empty: nothing). Every event well formed for its
// ph; every track and process named by metadata; events in time order per
// track; slices on a track disjoint or properly nested; every flow (a
// bind_id on a flow_out slice) with exactly one flow_in slice, not earlier;
// counters numeric; everything inside the window the metadata states.
std::vector<std::string> trace_problems(const ojson& t)
{
  std::vector<std::string> bad;
  auto add = [&](const std::string& what, const ojson& e) { bad.push_back(what + ": " + e.dump()); };
  if (!t.is_object() || !t.contains("traceEvents") || !t["traceEvents"].is_array())
    return {"no traceEvents array"};
  if (t.value("displayTimeUnit", "") != "ns")
    bad.push_back("displayTimeUnit is not ns");
  const ojson meta = t.value("metadata", ojson::object());
  if (!meta.contains("window_start_us") || !meta.contains("window_end_us"))
    return {"metadata without the window"};
  const long long w0 = ns_of(meta["window_start_us"]), w1 = ns_of(meta["window_end_us"]);
  std::set<long long> named_pids;
  std::map<long long, long long> pid_of_tid;
  std::set<std::pair<long long, long long>> named_tracks, used_tracks;
  std::map<std::pair<long long, long long>, long long> last_ts;
  std::map<std::pair<long long, long long>, std::vector<std::pair<long long, long long>>> slices;
  std::map<long long, long long> flow_start, flow_end;
  std::map<long long, int> starts, ends;
  static const std::set<std::string> cats = {"user", "sys", "irq", "hypervisor"};
  for (const ojson& e : t["traceEvents"]) {
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string() || !e.contains("name") ||
        !e["name"].is_string() || e["name"].get<std::string>().empty() || !e.contains("pid") ||
        !e["pid"].is_number_integer() || !e.contains("tid") || !e["tid"].is_number_integer()) {
      add("missing ph, name, pid or tid", e);
      continue;
    }
    const std::string ph = e["ph"];
    const auto track = std::make_pair(e["pid"].get<long long>(), e["tid"].get<long long>());
    // Perfetto reads tid 0 as the pid, and keys threads by tid: a tid
    // must belong to one process.
    if (track.second == 0)
      add("tid 0 (Perfetto would take the pid for it)", e);
    if (auto [it, fresh] = pid_of_tid.emplace(track.second, track.first); !fresh && it->second != track.first)
      add("a tid used by two processes", e);
    if (ph == "M") {
      const std::string n = e["name"];
      const ojson a = e.value("args", ojson::object());
      if ((n == "process_name" || n == "thread_name") && !(a.contains("name") && a["name"].is_string()))
        add("metadata without a name", e);
      else if (n == "process_name")
        named_pids.insert(track.first);
      else if (n == "thread_name")
        named_tracks.insert(track);
      else if (n != "process_sort_index" && n != "thread_sort_index")
        add("unknown metadata event", e);
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number()) {
      add("no numeric ts", e);
      continue;
    }
    const long long ts = ns_of(e["ts"]);
    used_tracks.insert(track);
    if (last_ts.count(track) && ts < last_ts[track])
      add("out of time order on its track", e);
    last_ts[track] = ts;
    if (ts < w0 || ts >= w1)
      add("outside the window", e);
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0)
        add("slice without a duration", e);
      else if (ts + ns_of(e["dur"]) > w1)
        add("slice ending past the window", e);
      else
        slices[track].emplace_back(ts, ts + ns_of(e["dur"]));
      if (e.contains("bind_id")) {
        // A wake-up arrow's end: a zero-length wake_up slice.
        if (!e["bind_id"].is_number_integer() || e.value("cat", "") != "wakeup" || e["name"] != "wake_up" ||
            e.value("dur", -1.0) != 0 || e.value("flow_out", false) == e.value("flow_in", false)) {
          add("malformed flow slice", e);
          continue;
        }
        const long long id = e["bind_id"];
        if (e.value("flow_out", false)) {
          ++starts[id];
          flow_start[id] = ts;
        } else {
          ++ends[id];
          flow_end[id] = ts;
        }
      } else if (!cats.count(e.value("cat", ""))) {
        add("slice category not user, sys, irq or hypervisor", e);
      }
    } else if (ph == "i") {
      if (e.value("s", "") != "t" || !e.contains("args") || !e["args"].contains("thread"))
        add("instant without thread scope or thread", e);
    } else if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty())
        add("counter without values", e);
      else
        for (const auto& [k, v] : e["args"].items())
          if (!v.is_number())
            add("counter value not a number", e);
    } else {
      add("unknown ph", e);
    }
  }
  for (const auto& [id, n] : starts)
    if (n != 1 || ends[id] != 1 || flow_end[id] < flow_start[id])
      bad.push_back(fmt::format("flow {}: {} start(s), {} finish(es), start {} ns, finish {} ns", id, n, ends[id],
                                flow_start[id], flow_end[id]));
  for (const auto& [id, n] : ends)
    if (!starts.count(id))
      bad.push_back(fmt::format("flow {}: a finish without a start", id));
  for (const auto& tr : used_tracks) {
    if (!named_pids.count(tr.first))
      bad.push_back(fmt::format("process {} has no process_name", tr.first));
    if (!named_tracks.count(tr))
      bad.push_back(fmt::format("track {}/{} has no thread_name", tr.first, tr.second));
  }
  for (auto& [tr, s] : slices) {
    std::sort(s.begin(), s.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<long long> open;  // ends of the enclosing slices
    for (const auto& [s0, s1] : s) {
      while (!open.empty() && open.back() <= s0)
        open.pop_back();
      if (!open.empty() && s1 > open.back())
        bad.push_back(fmt::format("track {}/{}: slice [{}, {}) ns overlaps an enclosing one ending at {}", tr.first,
                                  tr.second, s0, s1, open.back()));
      open.push_back(s1);
    }
  }
  return bad;
}

// The names of the events of phase ph.
std::set<std::string> names_of(const ojson& t, const std::string& ph)
{
  std::set<std::string> out;
  for (const ojson& e : t["traceEvents"])
    if (e.value("ph", "") == ph)
      out.insert(e["name"].get<std::string>());
  return out;
}

ojson traced(const TempDir& dir, const std::vector<std::string>& args, const std::string& name)
{
  const Run r = run_cli(dir, args + std::vector<std::string>{"-q", "--trace", dir.in_ws(name)});
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  return parse_json(read_file(dir.in_ws(name)));
}

}  // namespace

TEST_CASE("trace: the validator finds what is wrong in a trace", "[cli][trace]")
{
  // A valid little trace, then one fault at a time: the checks below can fail.
  const ojson good = ojson::parse(R"({"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "guest"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "vcpu0"}},
    {"ph": "X", "name": "w", "cat": "sys", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0, "args": {}},
    {"ph": "X", "name": "i", "cat": "irq", "pid": 1, "tid": 1, "ts": 1.5, "dur": 0.5, "args": {}},
    {"ph": "X", "name": "wake_up", "cat": "wakeup", "pid": 1, "tid": 1, "ts": 2.0, "dur": 0, "bind_id": 1, "flow_out": true},
    {"ph": "X", "name": "wake_up", "cat": "wakeup", "pid": 1, "tid": 1, "ts": 2.5, "dur": 0, "bind_id": 1, "flow_in": true},
    {"ph": "i", "name": "k", "pid": 1, "tid": 1, "ts": 2.6, "s": "t", "args": {"thread": "w"}}],
    "displayTimeUnit": "ns", "metadata": {"window_start_us": 0, "window_end_us": 10}})");
  CHECK(trace_problems(good).empty());
  auto broken = [&](const std::function<void(ojson&)>& f) {
    ojson t = good;
    f(t["traceEvents"]);
    return trace_problems(t).size();
  };
  CHECK(broken([](ojson& ev) { ev[3]["dur"] = 2.0; }) > 0);            // overlaps its parent's end
  CHECK(broken([](ojson& ev) { ev.erase(5); }) > 0);                  // a flow without its finish
  CHECK(broken([](ojson& ev) { ev[5]["ts"] = 1.9; }) > 0);            // finish before start (and out of order)
  CHECK(broken([](ojson& ev) { ev[5]["flow_out"] = true; }) > 0);     // both ends flow_out
  CHECK(broken([](ojson& ev) { ev.erase(1); }) > 0);                  // an unnamed track
  CHECK(broken([](ojson& ev) { ev[6]["ts"] = 20.0; }) > 0);           // outside the window
  CHECK(broken([](ojson& ev) { ev[2]["cat"] = "busy"; }) > 0);        // unknown category
  CHECK(broken([](ojson& ev) { ev[0]["tid"] = 0; }) > 0);             // tid 0
  CHECK(broken([](ojson& ev) { ev[6]["pid"] = 2; }) > 0);             // tid 1 in two processes
  CHECK(broken([](ojson& ev) { ev.push_back({{"ph", "C"}, {"name", "c"}, {"pid", 1}, {"tid", 1}, {"ts", 3.0},
                                            {"args", {{"value", "x"}}}}); }) > 0);
}

TEST_CASE("trace: a traced run of each transport and direction is a well-formed timeline", "[cli][trace]")
{
  struct Case {
    std::vector<std::string> args;
    std::set<std::string> kernel_fns;  // instants it must show
    std::string counter;
  };
  const std::vector<Case> cases = {
      {{"run", kTiny, "--set", "direction=guest_to_host", "--set", "iterations=1"},
       {"hv_ringbuffer_write", "vmbus_setevent", "hv_pkt_iter_close"},
       "vmbus_ring0 guest_to_host"},
      {{"run", kTiny, "--set", "direction=host_to_guest", "--set", "iterations=1"},
       {"hv_ringbuffer_write", "host_signal_guest", "hvs_channel_cb", "hv_pkt_iter_close"},
       "vmbus_ring0 host_to_guest"},
      {{"run", kTinyVirtio, "--point", "0"},
       {"virtio_transport_send_pkt_info", "virtqueue_kick: tx", "vhost_vsock_handle_tx_kick",
        "virtio_transport_send_credit_update"},
       "credit0 guest writer"},
      // Host to guest: since the plain loop pays its own small user cost
      // (issue 31 item 8) the run's rx interrupts (two) come in its first
      // 24 us, before the default window; the tx interrupts of the reader's
      // credit updates fall in it.
      {{"run", kTinyVirtio, "--point", "1"},
       {"virtio_transport_send_pkt_info", "vhost_transport_do_send_pkt", "vring_interrupt: tx",
        "virtio_transport_send_credit_update"},
       "credit0 host writer"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    INFO(command_text(c.args));
    const ojson t = traced(dir, c.args, "t.json");
    const std::vector<std::string> problems = trace_problems(t);
    INFO("first problems: " << (problems.empty() ? "" : problems[0]) << (problems.size() > 1 ? "; " + problems[1] : ""));
    CHECK(problems.empty());
    // Not empty: slices on guest and host CPUs, the kernel functions, flows, counters.
    std::set<long long> pids;
    for (const ojson& e : t["traceEvents"])
      if (e["ph"] == "X")
        pids.insert(e["pid"].get<long long>());
    CHECK(pids == std::set<long long>{1, 2});
    const std::set<std::string> instants = names_of(t, "i");
    for (const std::string& fn : c.kernel_fns)
      CHECK(instants.count(fn) == 1);
    std::size_t outs = 0, ins = 0;
    for (const ojson& e : t["traceEvents"]) {
      outs += e.value("flow_out", false);
      ins += e.value("flow_in", false);
    }
    CHECK(outs > 0);
    CHECK(ins == outs);
    CHECK(names_of(t, "C").count(c.counter) == 1);
    CHECK(t["metadata"]["capped"] == false);
    CHECK(t["metadata"]["window_end_us"].get<double>() - t["metadata"]["window_start_us"].get<double>() ==
          Approx(200).margin(0.01));
  }
}

TEST_CASE("trace: tracing changes no result, and the same traced run gives the same bytes", "[cli][trace]")
{
  for (const std::string& file : {kTiny, kTinyVirtio}) {
    TempDir dir;
    const std::vector<std::string> args = {"run", file, "--format", "json", "-q"};
    const Run plain = run_cli(dir, args + std::vector<std::string>{"--jobs", "2"});
    const Run a = run_cli(dir, args + std::vector<std::string>{"--jobs", "2", "--trace", dir.in_ws("a.json"), "--point", "1"});
    const Run b = run_cli(dir, args + std::vector<std::string>{"--jobs", "1", "--trace", dir.in_ws("b.json"), "--point", "1"});
    REQUIRE(plain.status == 0);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    ojson jp = parse_json(plain.out), ja = parse_json(a.out);
    for (ojson* j : {&jp, &ja}) {
      (*j)["manifest"].erase("wall");
      (*j)["manifest"].erase("command_line");
    }
    // The traced run simulates only the traced point: the plain run's point 1, and the manifest says so.
    jp["points"] = ojson::array({jp["points"][1]});
    ojson units = ojson::object();  // of the metrics that point has
    for (const auto& [name, unit] : jp["units"].items())
      if (jp["points"][0]["metrics"].contains(name))
        units[name] = unit;
    jp["units"] = units;
    jp["manifest"]["traced_point"] = 1;
    jp["manifest"]["points_total"] = 2;
    CHECK(jp.dump(2) == ja.dump(2));
    const std::string ta = read_file(dir.in_ws("a.json")), tb = read_file(dir.in_ws("b.json"));
    CHECK(ta.size() > 1000);
    CHECK(ta == tb);
    // Nothing else written beside the traces (no temporaries).
    std::set<std::string> names;
    for (const auto& [name, content] : snapshot(dir.ws))
      names.insert(name);
    CHECK(names == std::set<std::string>{"a.json", "b.json"});
  }
}

TEST_CASE("trace: an explicit window is the one traced, with units", "[cli][trace]")
{
  TempDir dir;
  const ojson t = traced(dir, {"run", kTiny, "--set", "iterations=1", "--trace-window", "0.1ms:50us"}, "t.json");
  CHECK(trace_problems(t).empty());
  CHECK(t["metadata"]["window_start_us"] == 100.0);
  CHECK(t["metadata"]["window_end_us"] == 150.0);
  CHECK(names_of(t, "X").count("linux_writer0") == 1);
}

TEST_CASE("trace: bad trace options exit 2 with a clear message and write nothing", "[cli][trace]")
{
  struct Case {
    std::vector<std::string> extra;
    std::string message;  // a part of the one message line
  };
  const std::vector<Case> cases = {
      {{"--trace", "t.json", "--trace-window", "10s:100us"}, "at or after the end of the run"},
      {{"--trace", "t.json", "--point", "2"}, "--point 2: error: no such point"},
      {{"--trace", "t.json", "--iteration", "2"}, "--iteration 2: error: point 0 has 2 iteration(s)"},
      {{"--trace", "t.json", "--iteration", "-1"}, "--iteration -1"},
      {{"--trace", "nosuch/t.json"}, "does not exist"},
      {{"--trace", "."}, "is a directory"},
      {{"--trace", "t.json", "--trace-window", "100us"}, "expected START:LENGTH"},
      {{"--trace", "t.json", "--trace-window", "1ms:0"}, "LENGTH must be above 0"},
      {{"--trace", "t.json", "--trace-window", "5xs:1us"}, "unknown unit 'xs'"},
      {{"--trace", "t.json", "--trace-window", ":-3us"}, "expected a non-negative number"},
      {{"--trace", "t.json", "--trace-max-events", "0"}, "--trace-max-events 0"},
      {{"--trace-window", "0:100us"}, "--trace"},
      {{"--point", "1"}, "--trace"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q"} + kTinySets + c.extra);
    INFO(command_text(c.extra));
    const std::string message = bad_input_message(r);
    CHECK_THAT(message, Catch::Contains(c.message));
    CHECK(snapshot(dir.ws).empty());
  }
}

TEST_CASE("trace: the event cap stops the recording, and says so", "[cli][trace]")
{
  TempDir dir;
  const std::vector<std::string> args = {"run", kTiny, "--set", "iterations=1", "-q", "--trace", dir.in_ws("t.json")};
  const Run full = run_cli(dir, args);
  REQUIRE(full.status == 0);
  const ojson whole = parse_json(read_file(dir.in_ws("t.json")));
  REQUIRE(whole["metadata"]["events"].get<long long>() > 100);
  CHECK(whole["metadata"]["capped"] == false);
  CHECK(full.err.find("event cap") == std::string::npos);

  const Run capped = run_cli(dir, args + std::vector<std::string>{"--trace-max-events", "100"});
  REQUIRE(capped.status == 0);
  CHECK_THAT(capped.err, Catch::Contains("warning: --trace: the event cap (100, --trace-max-events) was reached"));
  const ojson t = parse_json(read_file(dir.in_ws("t.json")));
  CHECK(trace_problems(t).empty());
  CHECK(t["metadata"]["capped"] == true);
  CHECK_THAT(t["metadata"]["note"].get<std::string>(), Catch::Contains("cap"));
  CHECK(t["metadata"]["window_end_us"].get<double>() < whole["metadata"]["window_end_us"].get<double>());
  long long events = 0;
  for (const ojson& e : t["traceEvents"])
    events += e["ph"] != "M";
  // The cap, plus the slices running at the cut (one per CPU at most).
  CHECK(events <= 100 + 8);
  CHECK(events >= 90);
}

TEST_CASE("trace: plot --timeline draws a trace, and the pictures of docs/trace.md are its drawings of the shipped traces",
          "[cli][trace][plot]")
{
  TempDir dir;
  const ojson t = traced(dir, {"run", kTinyVirtio, "--point", "1"}, "t.json");
  const Run p = run_cli(dir, {"plot", "--timeline", "t.json", "--output", "fig.png"});
  INFO("plot stderr: " << p.err);
  REQUIRE(p.status == 0);
  CHECK(p.out == "fig.png\n");
  CHECK(read_file(dir.in_ws("fig.png")).substr(1, 3) == "PNG");
  CHECK(!fs::exists(dir.in_ws("fig.svg")));
  // A row per busy CPU, a block per thread, the counters below.
  const std::string gp = read_file(dir.in_ws("fig.gp"));
  for (const char* part : {"\"guest vcpu0\"", "\"host hcpu0\"", "title \"vhost\"", "title \"guest_reader0\"",
                           "title \"category: hypervisor\"", "credit0 host writer bytes", "virtio_rx in flight chains",
                           "with steps"})
    CHECK_THAT(gp, Catch::Contains(part));
  const Run both = run_cli(dir, {"plot", "--timeline", "t.json"});
  REQUIRE(both.status == 0);
  CHECK(both.out == "t.svg\nt.png\n");

  // Bad input: exit 2, one line, nothing drawn.
  write_file(dir.in_ws("bad.json"), "{\"traceEvents\": 3}");
  CHECK_THAT(bad_input_message(run_cli(dir, {"plot", "--timeline", "bad.json"})),
             Catch::Contains("bad.json: error: not a trace of `vsocksim run --trace`"));
  CHECK_THAT(bad_input_message(run_cli(dir, {"plot", "--timeline", "nosuch.json"})),
             Catch::Contains("nosuch.json: error: cannot read the trace"));
  CHECK_THAT(bad_input_message(run_cli(dir, {"plot", "--timeline", "t.json", "--output", "nodir/f.png"})),
             Catch::Contains("does not exist"));
  CHECK(!fs::exists(dir.in_ws("bad.svg")));

  // docs/figures/trace-*: drawn by plot --timeline from the traces in
  // docs/trace (the commands in docs/trace.md): the same data and script.
  fs::create_directories(dir.in_ws("docs/trace"));
  fs::create_directories(dir.in_ws("docs/figures"));
  for (const std::string& name : {"hvsock-4KiB-host_to_guest", "vsock-128B-guest_to_host"}) {
    INFO(name);
    fs::copy_file(kSource + "/docs/trace/" + name + ".json", dir.in_ws("docs/trace/" + name + ".json"));
    const ojson shipped = parse_json(read_file(dir.in_ws("docs/trace/" + name + ".json")));
    CHECK(trace_problems(shipped).empty());
    const Run d = run_cli(dir, {"plot", "--timeline", "docs/trace/" + name + ".json", "--output",
                                "docs/figures/trace-" + name});
    REQUIRE(d.status == 0);
    for (const char* ext : {".dat", ".gp"})
      CHECK(read_file(dir.in_ws("docs/figures/trace-" + name + ext)) ==
            read_file(kSource + "/docs/figures/trace-" + name + ext));
  }
}

TEST_CASE("trace: a stop request during the traced run ends it at once and writes no trace", "[cli][trace][stop]")
{
  TempDir dir;
  // An explicit window is traced before the sweep: a long full-length
  // iteration, interrupted while it runs.
  const auto started = std::chrono::steady_clock::now();
  const Run r = run_cli(
      dir,
      {"run", kTiny, "-q", "--allow-large", "--set", "workload.total_bytes=20GB", "--set", "sim.run_length=full",
       "--set", "iterations=1", "--trace", "t.json", "--trace-window", "10us:10us"},
      [&] { return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(300); }, SIGINT);
  CHECK(r.status == 130);
  CHECK(r.gone_ms < 2000);
  CHECK_THAT(r.err, Catch::Contains("interrupted by SIGINT"));
  CHECK(snapshot(dir.ws).empty());
}

// ---------------------------------------------------------------------------
// A failing point never costs the others (issue 30): run and validate carry
// on, print and keep what ran, mark and list the failed points, exit 1; a
// rerun into --output simulates only the failed ones. Failures are injected
// with VSOCKSIM_TEST_FAIL_POINTS (test-only; app/run/runner.hpp).

namespace {

// Sets an environment variable (inherited by the program run_cli starts)
// for a scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const std::string& n, const std::string& value) : name(n) { setenv(n.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

const std::string kInjected = "iteration 0: injected failure (VSOCKSIM_TEST_FAIL_POINTS)";

// tiny.yaml swept over three message sizes instead of the send loop: points
// 0 (4KiB), 1 (16KiB) and 2 (64KiB). Written under dir.root, not dir.ws.
std::string three_point_experiment(const TempDir& dir)
{
  std::string yaml = read_file(kTiny);
  const std::string axis = "hv_sock.send_loop: [false, true]";
  const std::size_t at = yaml.find(axis);
  if (at == std::string::npos)
    throw std::logic_error("test bug: tiny.yaml has no send_loop axis");
  yaml.replace(at, axis.size(), "workload.message_size: [4KiB, 16KiB, 64KiB]");
  const std::string file = dir.root + "/three.yaml";
  write_file(file, yaml);
  return file;
}

std::set<std::string> names_in(const std::string& dir)
{
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("cli: a failing point costs no other: printed results, kept files, listed failure, exit 1",
          "[cli][failed]")
{
  TempDir dir;
  const std::string file = three_point_experiment(dir);
  const std::string out = dir.in_ws("a/b/results");  // a and a/b do not exist
  const std::vector<std::string> base = std::vector<std::string>{"run", file, "-q"} + kTinySets;
  const std::string failed_line =
      "vsocksim: internal error: point 1 (workload.message_size=16KiB): " + kInjected;

  ojson failing;
  {
    ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "1");
    const Run r = run_cli(dir, base + std::vector<std::string>{"--format", "json", "--output", out});
    INFO("stderr: " << r.err);
    CHECK(r.status == 1);
    // stderr: the failed point (index, swept values, message), then what
    // became of the others.
    const std::vector<std::string> err = lines_of(r.err);
    REQUIRE(err.size() == 2);
    CHECK(err[0] == failed_line);
    CHECK(err[1] == "vsocksim: 1 of 3 point(s) failed; the results of the other 2 are printed and kept in " + out +
                        ", where a rerun simulates only the failed point(s)");
    // stdout: the two points that ran, the failed one listed without figures.
    failing = parse_json(r.out);
    REQUIRE(failing["points"].size() == 2);
    CHECK(failing["points"][0]["index"] == 0);
    CHECK(failing["points"][1]["index"] == 2);
    for (const auto& p : failing["points"]) {
      CHECK(p["iterations"].size() == 2);
      CHECK(p["metrics"]["throughput_MBps"]["mean"].get<double>() > 0);
    }
    REQUIRE(failing["failed_points"].size() == 1);
    const ojson& f = failing["failed_points"][0];
    CHECK(f["index"] == 1);
    CHECK(f["label"]["workload.message_size"] == "16KiB");
    CHECK(f["params"]["workload.message_size"] == 16384);
    CHECK(f["failed"] == kInjected);
    CHECK_FALSE(f.contains("metrics"));
    CHECK_FALSE(f.contains("iterations"));
    // --output: created with its parents, the finished points kept, result
    // and manifest with what there is; nothing for the failed point.
    REQUIRE(fs::is_directory(out));
    CHECK(names_in(out) == std::set<std::string>{"manifest.json", "point-0000.json", "point-0002.json", "result.json"});
    CHECK(read_file(out + "/result.json") == r.out);

    // The same for any --jobs.
    const Run one = run_cli(dir, base + std::vector<std::string>{"--format", "json", "--jobs", "1"});
    CHECK(one.status == 1);
    CHECK(without_run_facts(parse_json(one.out)).dump() == without_run_facts(failing).dump());

    // The table marks the failed point's cells and names it after the tables.
    const Run table = run_cli(dir, base);
    CHECK(table.status == 1);
    CHECK(lines_of(table.err) == std::vector<std::string>{failed_line, "vsocksim: 1 of 3 point(s) failed; the "
                                                                       "results of the other 2 are printed"});
    std::size_t failed_rows = 0, figure_rows = 0;
    for (const std::string& line : lines_of(table.out)) {
      INFO(line);
      const std::string cell = line.substr(line.find_last_of(' ') + 1);
      if (starts_with(line, "16KiB ")) {
        ++failed_rows;
        CHECK(cell == "failed");
      }
      if (starts_with(line, "4KiB ") || starts_with(line, "64KiB ")) {
        ++figure_rows;
        CHECK(std::count(cell.begin(), cell.end(), '/') == 3);  // min/max/avg/median
      }
    }
    CHECK(failed_rows == 2);  // in each metric's table (report.metrics names two)
    CHECK(figure_rows == 4);
    CHECK_THAT(table.out,
               Catch::Contains("\nfailed: 1 of 3 point(s), no figures: point 1 (workload.message_size=16KiB)\n"));

    // CSV: the failed point's one row says `failed`, with no unit or figures.
    const Run csv = run_cli(dir, base + std::vector<std::string>{"--format", "csv"});
    CHECK(csv.status == 1);
    std::vector<std::string> point1;
    std::size_t others = 0;
    for (const std::string& line : lines_of(csv.out)) {
      if (starts_with(line, "1,"))
        point1.push_back(line);
      others += starts_with(line, "0,4KiB,") || starts_with(line, "2,64KiB,");
    }
    CHECK(point1 == std::vector<std::string>{"1,16KiB,failed,,,,,"});
    CHECK(others > 10);
  }

  // The rerun (no failure now) simulates only the missing point and ends
  // with the complete result, the one a run without failure gives.
  const std::string point0 = read_file(out + "/point-0000.json");
  const Run rerun = run_cli(dir, std::vector<std::string>{"run", file, "--format", "json", "--output", out} +
                                     kTinySets);
  INFO("stderr: " << rerun.err);
  REQUIRE(rerun.status == 0);
  CHECK_THAT(rerun.err, Catch::Contains("reusing 2 finished point(s) of 3 from " + out));
  CHECK(starts_with(lines_of(rerun.err).back(), "[2/2 simulations, 1/1 points] "));  // point 1's two iterations
  const ojson complete = parse_json(rerun.out);
  CHECK(complete["points"].size() == 3);
  CHECK_FALSE(complete.contains("failed_points"));
  CHECK(names_in(out) == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json",
                                               "point-0002.json", "result.json"});
  CHECK(read_file(out + "/point-0000.json") == point0);
  const Run fresh = run_cli(dir, base + std::vector<std::string>{"--format", "json"});
  REQUIRE(fresh.status == 0);
  CHECK(without_run_facts(complete).dump() == without_run_facts(parse_json(fresh.out)).dump());
  // The points that ran in the failing run are those of the complete result.
  CHECK(complete["points"][0] == failing["points"][0]);
  CHECK(complete["points"][2] == failing["points"][1]);
}

TEST_CASE("cli: show re-prints a result with failed points, marked", "[cli][failed][show]")
{
  TempDir dir;
  const std::string file = three_point_experiment(dir);
  {
    ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "0,2");
    const Run r = run_cli(dir, std::vector<std::string>{"run", file, "-q", "--output", "out"} + kTinySets);
    REQUIRE(r.status == 1);
    CHECK(lines_of(r.err).size() == 3);  // two failed points, the summary
    const Run shown = run_cli(dir, {"show", "out"});
    INFO("stderr: " << shown.err);
    REQUIRE(shown.status == 0);
    // The table as the run printed it (same figures, same marks).
    CHECK(shown.out == r.out);
    CHECK_THAT(shown.out, Catch::Contains("no figures: point 0 (workload.message_size=4KiB), point 2 "
                                          "(workload.message_size=64KiB)\n"));
    const Run csv = run_cli(dir, {"show", "out", "--format", "csv"});
    REQUIRE(csv.status == 0);
    CHECK_THAT(csv.out, Catch::Contains("\n0,4KiB,failed,,,,,\n") && Catch::Contains("\n2,64KiB,failed,,,,,\n"));
    const Run json = run_cli(dir, {"show", "out", "--format", "json", "--metrics", "throughput_MBps"});
    REQUIRE(json.status == 0);
    const ojson j = parse_json(json.out);
    CHECK(j["points"].size() == 1);
    CHECK(j["points"][0]["iterations"][0].size() == 1);
    CHECK(j["failed_points"].size() == 2);
  }
}

TEST_CASE("cli: every point failing still writes the result and lists each failure", "[cli][failed]")
{
  TempDir dir;
  ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "0,1");
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--format", "json", "--output", "out"} +
                                 kTinySets);
  CHECK(r.status == 1);
  const ojson j = parse_json(r.out);
  CHECK(j["points"].empty());
  CHECK(j["failed_points"].size() == 2);
  CHECK(names_in(dir.in_ws("out")) == std::set<std::string>{"manifest.json", "result.json"});
  const std::vector<std::string> err = lines_of(r.err);
  REQUIRE(err.size() == 3);
  CHECK(err[0] == "vsocksim: internal error: point 0 (hv_sock.send_loop=false): " + kInjected);
  CHECK(err[1] == "vsocksim: internal error: point 1 (hv_sock.send_loop=true): " + kInjected);
  CHECK(err[2] == "vsocksim: 2 of 2 point(s) failed; no point ran to the end, nothing kept in out, where a rerun "
                  "simulates only the failed point(s)");
}

TEST_CASE("cli: validate with a failing point reports the other rows and exits 1", "[cli][validate][failed]")
{
  TempDir dir;
  const Run good = run_cli(dir, {"validate", kValidate, "-q"});
  REQUIRE(good.status == 0);
  // Point 1 of the pool: tiny-loop's second point (hv_sock.send_loop=true),
  // which two published rows need.
  ScopedEnv env("VSOCKSIM_TEST_FAIL_POINTS", "1");
  const Run r = run_cli(dir, {"validate", kValidate, "-q", "--jobs", "2"});
  INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
  CHECK(r.status == 1);
  CHECK(lines_of(r.err) ==
        std::vector<std::string>{"vsocksim: internal error: " + kValidate +
                                     "/tiny-loop.yaml: point 1 (hv_sock.send_loop=true): " + kInjected,
                                 "vsocksim: 1 of 3 point(s) failed; their 2 row(s) were not compared, the others are "
                                 "printed"});
  // The rows of the points that ran, as in the run without failure (cell by
  // cell: the columns' widths may differ).
  std::set<std::vector<std::string>> good_rows;
  for (const std::string& line : lines_of(good.out))
    good_rows.insert(cells_of(line));
  std::size_t rows = 0;
  for (const std::string& line : lines_of(r.out))
    if (starts_with(line, "tiny-loop   ") || starts_with(line, "tiny-units   ")) {
      INFO(line);
      ++rows;
      CHECK(line.find("true") == std::string::npos);  // no row of the failed point
      CHECK(good_rows.count(cells_of(line)) == 1);
    }
  CHECK(rows == 3);
  CHECK_THAT(r.out, Catch::Contains("\nnot compared, point 1 failed: hv_sock.send_loop=true: throughput_MBps\n"));
  CHECK_THAT(r.out, Catch::Contains("\noverall: 3 row(s) in 2 studies, mean absolute error "));
  CHECK_THAT(r.out, Catch::Contains("\noverall: 2 row(s) not compared: their points failed\n"));
  const Run md = run_cli(dir, {"validate", kValidate, "-q", "--markdown"});
  CHECK(md.status == 1);
  CHECK_THAT(md.out, Catch::Contains("\n- not compared, point 1 failed: hv_sock.send_loop=true: `throughput_MBps`\n"));
}

TEST_CASE("cli: --output creates its missing parent directories", "[cli][failed]")
{
  TempDir dir;
  const std::string out = dir.in_ws("no/such/dir");
  const Run r = tiny_run(dir, {"-q", "--format", "json", "--output", out});
  CHECK(names_in(out) == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  CHECK(read_file(out + "/result.json") == r.out);
  // A parent that is a regular file is still bad usage, before simulating.
  write_file(dir.in_ws("file.txt"), "x\n");
  const std::string below = dir.in_ws("file.txt/a/b");
  const std::string m = bad_input_message(
      run_cli(dir, std::vector<std::string>{"run", kTiny, "-q", "--output", below} + kTinySets));
  CHECK(m == "--output '" + below + "': error: '" + dir.in_ws("file.txt") + "' is not a directory");
}

TEST_CASE("cli: a point whose simulated system hangs as its kernel would is reported so, not as an internal error",
          "[cli][failed][hang]")
{
  // virtio-vsock with one rx buffer (queue_size 2, no indirect descriptors):
  // Linux's rx_work never refills it (virtio_vsock_rx_fill only below half the
  // most ever held), so host-to-guest traffic stops after one packet. The
  // point with indirect descriptors (two buffers) runs.
  TempDir dir;
  const std::string file = dir.root + "/hang.yaml";
  write_file(file, "platform: kvm-2019\ntransport: virtio_vsock\ndirection: host_to_guest\niterations: 1\n"
                   "workload: {total_bytes: 100kB, message_size: 4KiB}\nvirtio_vsock: {queue_size: 2}\n"
                   "sweep:\n  grid: {virtio_vsock.indirect_desc: [true, false]}\n");
  const Run r = run_cli(dir, {"run", file, "-q", "--format", "json"});
  INFO("stderr: " << r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.err.find("point 1 (virtio_vsock.indirect_desc=false): iteration 0: the simulated system hangs, as the "
                   "kernel it models would: connection 0 stopped after 4096 of 100000 bytes") != std::string::npos);
  const ojson j = parse_json(r.out);
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["index"] == 0);
  REQUIRE(j["failed_points"].size() == 1);
  CHECK(j["failed_points"][0]["hang"] == true);
  CHECK(j["failed_points"][0]["failed"].get<std::string>().find("rx_buf_nr < rx_buf_max_nr / 2") !=
        std::string::npos);
  const Run table = run_cli(dir, {"run", file, "-q"});
  CHECK(table.status == 1);
  CHECK(table.out.find("hangs") != std::string::npos);
}

// ---------------------------------------------------------------------------
// What a new user trips on (issue 31).

namespace {

// Unsets an environment variable for a scope, restoring it after.
struct ScopedUnset {
  std::string name;
  std::optional<std::string> before;
  explicit ScopedUnset(const std::string& n) : name(n)
  {
    if (const char* v = getenv(n.c_str()))
      before = v;
    unsetenv(n.c_str());
  }
  ~ScopedUnset()
  {
    if (before)
      setenv(name.c_str(), before->c_str(), 1);
  }
  ScopedUnset(const ScopedUnset&) = delete;
  ScopedUnset& operator=(const ScopedUnset&) = delete;
};

// The tables of a grouped `show`: per table its title and rows; and every
// metric name its columns stand for (the title's PREFIX<column>SUFFIX
// around each header, a header's " (unit)" left out).
struct Grouped {
  std::vector<std::string> titles;
  std::vector<std::vector<std::string>> tables;  // the lines of each table, header first
  std::set<std::string> metrics;
};

Grouped parse_grouped(const std::string& text)
{
  Grouped g;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!starts_with(lines[i + 1], "point   ") && lines[i + 1] != "point")
      continue;
    const std::string& title = lines[i];
    g.titles.push_back(title);
    std::string prefix, suffix;
    if (const std::size_t col = title.find("<column>"); col != std::string::npos) {
      prefix = title.substr(title.rfind(' ', col) + 1, col - title.rfind(' ', col) - 1);
      suffix = title.substr(col + 8, title.find_first_of(" ,", col) - col - 8);
    }
    std::vector<std::string> table;
    for (std::size_t k = i + 1; k < lines.size() && !lines[k].empty(); ++k)
      table.push_back(lines[k]);
    const std::vector<std::string> headers = cells_of(table[0]);
    for (std::size_t h = 1; h < headers.size(); ++h)
      g.metrics.insert(prefix + headers[h].substr(0, headers[h].find(" (")) + suffix);
    g.tables.push_back(std::move(table));
  }
  return g;
}

}  // namespace

TEST_CASE("cli: show --metrics all prints a table per group of metrics, points as rows, fitted to COLUMNS",
          "[cli][show]")
{
  TempDir dir;
  const std::string out_dir = dir.ws + "/out";
  const Run run = run_cli(dir, {"run", kTiny, "-q", "--output", out_dir, "--format", "json"});
  REQUIRE(run.status == 0);
  std::set<std::string> metrics;
  const ojson result = parse_json(run.out);
  for (const auto& [name, unit] : result["units"].items())
    metrics.insert(name);
  REQUIRE(metrics.size() > 60);

  for (const int columns : {100, 200}) {
    ScopedEnv env("COLUMNS", std::to_string(columns));
    const Run all = run_cli(dir, {"show", out_dir, "--metrics", "all"});
    INFO("COLUMNS=" << columns << "\n" << all.out);
    REQUIRE(all.status == 0);
    CHECK(starts_with(all.out, fmt::format("cli-tiny — {} metrics in 10 groups, min/max/avg/median over 2 "
                                           "iterations\na row per point (index: hv_sock.send_loop)\n\n"
                                           "throughput (MB/s)\n",
                                           metrics.size())));
    const Grouped g = parse_grouped(all.out);
    // Every metric once, in far fewer tables than one per metric.
    CHECK(g.metrics == metrics);
    CHECK(g.tables.size() < metrics.size() / 2);
    CHECK(std::find(g.titles.begin(), g.titles.end(), "CPU (%)") != g.titles.end());
    std::size_t widest = 0;
    for (const auto& table : g.tables) {
      // A row per point, the point column first.
      REQUIRE(table.size() == 3);
      CHECK(starts_with(table[1], "0: false   "));
      CHECK(starts_with(table[2], "1: true    "));
      for (const std::string& line : table) {
        CHECK(line.size() <= static_cast<std::size_t>(columns));
        widest = std::max(widest, line.size());
      }
    }
    // The width is used: 200 columns hold lines 100 could not.
    CHECK((columns == 100 ? widest > 80 : widest > 100));
    // The same inputs, the same bytes.
    CHECK(run_cli(dir, {"show", out_dir, "--metrics", "all"}).out == all.out);
  }
  {
    // Not on a terminal and no COLUMNS: 100.
    ScopedUnset unset("COLUMNS");
    const Run plain = run_cli(dir, {"show", out_dir, "--metrics", "all"});
    ScopedEnv env("COLUMNS", "100");
    CHECK(plain.out == run_cli(dir, {"show", out_dir, "--metrics", "all"}).out);
  }
  // More than three metrics are grouped; three or fewer keep a table per metric.
  ScopedEnv env("COLUMNS", "100");
  const Run four = run_cli(dir, {"show", out_dir, "--metrics",
                                 "throughput_MBps,writer_sys_seconds,syscalls_per_MB,guest_cpu_percent"});
  REQUIRE(four.status == 0);
  const Grouped g4 = parse_grouped(four.out);
  CHECK(starts_with(four.out, "cli-tiny — 4 metrics in 4 groups, "));
  CHECK(g4.titles == std::vector<std::string>{"throughput (MB/s)", "time: <column>_seconds (s)", "CPU (%)",
                                              "counts per MB: <column>_per_MB (1/MB)"});
  const Run three = run_cli(dir, {"show", out_dir, "--metrics", "throughput_MBps,writer_sys_seconds,syscalls_per_MB"});
  CHECK(starts_with(three.out, "cli-tiny — throughput_MBps (MB/s), min/max/avg/median over 2 iterations\n"
                               "hv_sock.send_loop   throughput_MBps\n"));
  // --stat still chooses the cells.
  const Run mean = run_cli(dir, {"show", out_dir, "--metrics", "all", "--stat", "mean"});
  CHECK(mean.out.find("mean over 2 iterations\n") != std::string::npos);
  for (const auto& table : parse_grouped(mean.out).tables)
    for (std::size_t row = 1; row < table.size(); ++row)
      CHECK(table[row].find('/') == std::string::npos);  // no min/max/avg/median cell
}

TEST_CASE("cli: compare says what differs between two results (parameters, code), or that nothing does",
          "[cli][compare]")
{
  TempDir dir;
  const std::string a = dir.ws + "/a", b = dir.ws + "/b";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", a}).status == 0);
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", b, "--set", "costs.host_dpc=3000", "--set",
                        "report.metrics=throughput_MBps"}).status == 0);
  // A result against itself: each pair says so.
  const Run same = run_cli(dir, {"compare", a, a + "/result.json", "--metrics", "throughput_MBps"});
  REQUIRE(same.status == 0);
  std::vector<std::string> lines = lines_of(same.out);
  REQUIRE(lines.size() == 11);
  CHECK(lines[2] == "same parameters, same code");
  CHECK(lines[3].rfind("metric ", 0) == 0);
  CHECK(lines[8] == "same parameters, same code");
  // A cost set on B: each pair names it (report.* changes no figure: not named).
  const Run cost = run_cli(dir, {"compare", a, b, "--metrics", "throughput_MBps"});
  REQUIRE(cost.status == 0);
  lines = lines_of(cost.out);
  REQUIRE(lines.size() == 13);
  CHECK(lines[0] == "A: " + a + "/result.json point 0 (hv_sock.send_loop=false)");
  CHECK(lines[2] == "what differs (A -> B):");
  CHECK(lines[3] == "  costs.host_dpc: 2000 -> 3000");
  CHECK(lines[4].rfind("metric ", 0) == 0);
  CHECK(lines[9] == "what differs (A -> B):");
  CHECK(lines[10] == "  costs.host_dpc: 2000 -> 3000");
  // The code that made them (the manifest), then the platform: its costs counted in one line, and the
  // sections only one side has (another transport's keys).
  ojson doc = parse_json(read_file(kData + "/result-small.json"));
  const std::string old_file = dir.in_ws("old.json"), new_file = dir.in_ws("new.json");
  for (ojson& p : doc["points"]) {
    p["params"]["platform"] = "hyperv-2019";
    p["params"]["costs.host_dpc"] = 2000;
    p["params"]["costs.clock_ghz"] = 2.5;
  }
  write_file(old_file, doc.dump(2));
  doc["manifest"]["version"] = "0.2.0";
  doc["manifest"]["git_commit"] = "fedcba9876543210";
  for (ojson& p : doc["points"]) {
    p["params"]["platform"] = "kvm-2019";
    p["params"]["transport"] = "virtio_vsock";
    p["params"]["costs.host_dpc"] = 1000;
    p["params"].erase("hv_sock.sndbuf");
    p["params"]["virtio_vsock.queue_size"] = 128;
    p["params"]["virtio_vsock.event_idx"] = true;
    p["params"]["report.metrics"] = "throughput_MBps";
  }
  write_file(new_file, doc.dump(2));
  const Run code = run_cli(dir, {"compare", old_file, new_file, "--metrics", "throughput_MBps"});
  REQUIRE(code.status == 0);
  const std::string head = "what differs (A -> B):\n"
                           "  version: 0.1.0 -> 0.2.0\n"
                           "  git_commit: 0123456789abcdef -> fedcba9876543210\n"
                           "  platform: hyperv-2019 -> kvm-2019\n"
                           "  transport: hv_sock -> virtio_vsock\n"
                           "  costs.*: 1 value(s) differ (the platforms' profiles: `vsocksim describe platforms`)\n"
                           "  hv_sock.*: 1 key(s) -> (absent)\n"
                           "  virtio_vsock.*: (absent) -> 2 key(s)\n"
                           "metric ";
  CHECK(code.out.rfind("A: " + old_file + " point 0 (hv_sock.sndbuf=default)\nB: " + new_file +
                           " point 0 (hv_sock.sndbuf=default)\n" + head,
                       0) == 0);
  CHECK(code.out.find("B: " + new_file + " point 1 (hv_sock.sndbuf=64KiB)\n" + head) != std::string::npos);
  // Two points of one result: as before, their swept values say what differs.
  const Run points = run_cli(dir, {"compare", a, "--points", "0,1", "--metrics", "throughput_MBps"});
  CHECK(lines_of(points.out).size() == 4);
}

TEST_CASE("trace: only the traced point is simulated, every iteration of it, and the run says so", "[cli][trace]")
{
  TempDir dir;
  const Run plain = run_cli(dir, {"run", kTiny, "-q", "--format", "json"});
  const Run traced_run = run_cli(dir, {"run", kTiny, "--format", "json", "--trace", "t.json", "--point", "1"});
  INFO("stderr: " << traced_run.err);
  REQUIRE(plain.status == 0);
  REQUIRE(traced_run.status == 0);
  CHECK_THAT(traced_run.err, Catch::StartsWith("--trace: simulating point 1 only (of 2)\n"));
  CHECK_THAT(traced_run.err, Catch::Contains("[2/2 simulations, 1/1 points]"));
  const ojson p = parse_json(plain.out), t = parse_json(traced_run.out);
  REQUIRE(t["points"].size() == 1);
  CHECK(t["points"][0].dump() == p["points"][1].dump());  // both iterations, as the whole run has them
  CHECK(t["manifest"]["traced_point"] == 1);
  CHECK(t["manifest"]["points_total"] == 2);
  CHECK(parse_json(read_file(dir.in_ws("t.json")))["metadata"]["point"] == 1);
  // -q: no note.
  CHECK(run_cli(dir, {"run", kTiny, "-q", "--trace", "t.json", "--point", "1"}).err.empty());

  // --output: the traced point's file, and a result of that point; the other points' files of an earlier run
  // are kept, and a later run without --trace reuses them all.
  const std::string out = dir.ws + "/out";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", out}).status == 0);
  const std::string point0 = read_file(out + "/point-0000.json");
  const Run into = run_cli(dir, {"run", kTiny, "--output", out, "--trace", "t.json", "--point", "1"});
  REQUIRE(into.status == 0);
  CHECK(names_in(out) == std::set<std::string>{"manifest.json", "point-0000.json", "point-0001.json", "result.json"});
  CHECK(read_file(out + "/point-0000.json") == point0);
  CHECK(parse_json(read_file(out + "/result.json"))["points"].size() == 1);
  const Run later = run_cli(dir, {"run", kTiny, "--output", out});
  CHECK_THAT(later.err, Catch::Contains("reusing 2 finished point(s) of 2 from " + out));
  // Into a new directory: that point alone.
  const std::string fresh = dir.ws + "/fresh";
  REQUIRE(run_cli(dir, {"run", kTiny, "-q", "--output", fresh, "--trace", "t.json", "--point", "1"}).status == 0);
  CHECK(names_in(fresh) == std::set<std::string>{"manifest.json", "point-0001.json", "result.json"});
  // Without --point the whole sweep runs, as without --trace, and point 0 is traced.
  const Run whole = run_cli(dir, {"run", kTiny, "--format", "json", "--trace", "t0.json"});
  REQUIRE(whole.status == 0);
  CHECK(whole.err.find("--trace: simulating point") == std::string::npos);
  const ojson w = parse_json(whole.out);
  CHECK(w["points"].size() == 2);
  CHECK(w["points"].dump() == p["points"].dump());
  CHECK_FALSE(w["manifest"].contains("traced_point"));
  CHECK(parse_json(read_file(dir.in_ws("t0.json")))["metadata"]["point"] == 0);
}
