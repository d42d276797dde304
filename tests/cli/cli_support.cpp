// The helpers of the command-line tests (cli_support.hpp says what each does).
#include "cli_support.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace cli_test {

namespace {

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

} // namespace

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

TempDir::TempDir()
{
  char pattern[] = "/tmp/vsim-cli-XXXXXX";
  if (!mkdtemp(pattern))
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  root = pattern;
  ws = root + "/ws";
  fs::create_directory(ws);
}

TempDir::~TempDir()
{
  std::error_code ec;
  fs::remove_all(root, ec);
}

std::string command_text(const std::vector<std::string>& words)
{
  std::string s;
  for (const std::string& w : words)
    s += (s.empty() ? "" : " ") + w;
  return s;
}

Run run_cli(const TempDir& dir, const std::vector<std::string>& args, const std::function<bool()>& when, int sig,
            bool background_job)
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
    setpgid(0, 0); // its own group, so a hung run can be killed with its children
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

  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
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

Run tiny_run(const TempDir& dir, const std::vector<std::string>& extra)
{
  const Run r = run_cli(dir, std::vector<std::string>{"run", kTiny} + kTinySets + extra);
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
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

bool starts_with(const std::string& s, const std::string& prefix)
{
  return s.rfind(prefix, 0) == 0;
}

std::map<std::string, std::string> snapshot(const std::string& dir)
{
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    out[rel] = e.is_directory() ? "<dir>" : read_file(e.path().string());
  }
  return out;
}

std::set<std::string> names_in(const std::string& dir)
{
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

std::size_t point_files(const std::string& dir)
{
  std::size_t n = 0;
  if (std::filesystem::exists(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      n += e.path().filename().string().rfind("point-", 0) == 0 && e.path().extension() == ".json";
  return n;
}

std::string where(const std::string& text, const std::string& needle, int n)
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

ojson parse_json(const std::string& text)
{
  INFO("text: " << text.substr(0, 2000));
  ojson j;
  REQUIRE_NOTHROW(j = ojson::parse(text));
  return j;
}

ojson without_run_facts(ojson r)
{
  r["manifest"].erase("wall");
  r["manifest"].erase("command_line");
  return r;
}

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

ScopedEnv::ScopedEnv(const std::string& n, const std::string& value) : name(n)
{
  setenv(n.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv()
{
  unsetenv(name.c_str());
}

ScopedUnset::ScopedUnset(const std::string& n) : name(n)
{
  if (const char* v = getenv(n.c_str()))
    before = v;
  unsetenv(n.c_str());
}

ScopedUnset::~ScopedUnset()
{
  if (before)
    setenv(name.c_str(), before->c_str(), 1);
}

} // namespace cli_test
