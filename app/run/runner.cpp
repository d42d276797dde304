#include "app/run/runner.hpp"

#include "app/experiment/estimate.hpp"
#include "app/run/stop.hpp"
#include "sim/world.hpp"
#include "transports/simulate.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
// ASan builds: g++ defines __SANITIZE_ADDRESS__, clang (the project's
// compiler) says so through __has_feature only.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VSIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(VSIM_ASAN)
#define VSIM_ASAN 1
#endif
#if defined(VSIM_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace vsim::app {
namespace {

// ---- wire format child -> parent ------------------------------------------
// 'M' then, per metric: u64 name length, name bytes, the 8 bytes of the double
// (same machine, so native byte order). Or 'E' then the error message.

void put_u64(std::string& out, std::uint64_t v)
{
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out.append(b, sizeof v);
}

} // namespace

std::string encode_metrics(const Metrics& m)
{
  std::string out(1, 'M');
  for (const auto& [name, value] : m) {
    put_u64(out, name.size());
    out += name;
    char b[sizeof(double)];
    std::memcpy(b, &value, sizeof value);
    out.append(b, sizeof b);
  }
  return out;
}

bool decode_metrics(const std::string& in, Metrics& m)
{
  if (in.empty() || in[0] != 'M')
    return false;
  std::size_t pos = 1;
  while (pos < in.size()) {
    std::uint64_t len;
    if (in.size() - pos < sizeof len)
      return false;
    std::memcpy(&len, in.data() + pos, sizeof len);
    pos += sizeof len;
    if (in.size() - pos < len || in.size() - pos - len < sizeof(double))
      return false;
    std::string name = in.substr(pos, len);
    pos += len;
    double v;
    std::memcpy(&v, in.data() + pos, sizeof v);
    pos += sizeof v;
    m[std::move(name)] = v;
  }
  return true;
}

namespace {

bool write_all(int fd, const std::string& s)
{
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

std::string signal_text(int sig)
{
  const char* abbrev = ::sigabbrev_np(sig);
  const char* descr = ::sigdescr_np(sig);
  std::string s = abbrev ? fmt::format("killed by signal SIG{}", abbrev) : fmt::format("killed by signal {}", sig);
  if (descr)
    s += fmt::format(" ({})", descr);
  return s;
}

// ---- child ------------------------------------------------------------------

// fn's result, or 'E' (or 'I' for an InputError, 'H' for a ModelledHang)
// and the message.
[[noreturn]] void child_main(int fd, const std::function<std::string()>& fn)
{
  // Whatever the simulation prints must not reach the parent's stdout, which
  // may carry the results.
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  std::string out;
  int code = 0;
  try {
    out = fn();
  } catch (const InputError& e) {
    out = std::string("I") + e.what();
    code = 1;
  } catch (const ModelledHang& e) {
    out = std::string("H") + e.what();
    code = 1;
  } catch (const std::exception& e) {
    out = std::string("E") + e.what();
    code = 1;
  } catch (...) {
    out = "Eunknown exception";
    code = 1;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (!write_all(fd, out) && code == 0)
    code = 3;
#if defined(VSIM_ASAN)
  // _exit skips LeakSanitizer's check at exit: run it here, so that the
  // sanitizer suite checks the simulations for leaks too (a leak fails the run).
  __lsan_do_leak_check();
#endif
  ::_exit(code); // never the parent's atexit handlers or static destructors
}

// The threads of this process (the entries of /proc/self/task), or 0 if it
// cannot be read.
std::size_t threads_of_this_process()
{
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr)
    return 0;
  std::size_t n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.')
      ++n;
  ::closedir(d);
  return n;
}

// A child process in its own process group, tracked for stop requests,
// writing to a pipe: it runs `in_child` with the pipe's write end (which
// must not return: child_main exits). The parent gets its pid and the
// pipe's read end.
std::pair<pid_t, int> fork_child(const std::function<void(int)>& in_child)
{
  // fork() copies only the calling thread: a lock another thread held (the
  // allocator's, a sanitizer's) stays held in the child for ever. A library
  // that starts threads of its own (oneTBB's workers, under pagmo2) must be
  // kept from doing so before anything here forks (app/search/search.cpp).
  if (const std::size_t threads = threads_of_this_process(); threads > 1)
    throw std::logic_error(fmt::format("invariant violated: a simulation would be forked from a process of {} "
                                       "threads (its child could wait for ever on a lock another thread held)",
                                       threads));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(nullptr); // the child must not inherit (and later repeat) buffered output
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(err)));
  }
  if (pid == 0) {
    stop::enter_child(parent);
    ::close(fds[0]);
    in_child(fds[1]);
    std::_Exit(1); // in_child does not return
  }
  ::setpgid(pid, pid); // as the child does: whichever runs first, the group exists from here on
  stop::track(pid);
  ::close(fds[1]);
  return {pid, fds[0]};
}

// ---- parent -----------------------------------------------------------------

struct Task {
  std::size_t point; // position in ex.points
  std::uint32_t iteration;
  // kOwn: the point's own iteration; else the ensemble member
  // (Point::members) simulated, with iteration 0's random streams.
  std::size_t member = kOwn;
  static constexpr std::size_t kOwn = static_cast<std::size_t>(-1);
  bool is_member() const { return member != kOwn; }
};

struct Child {
  pid_t pid;
  int fd;
  Task task;
  std::string data;
};

int wait_for(pid_t pid)
{
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return -1;
  }
  return status;
}

// Kills and reaps every child still running when the run ends early (error or
// exception); no zombie is left behind.
struct Children {
  std::vector<Child> running;
  ~Children()
  {
    for (auto& c : running) {
      if (c.pid <= 0) // already reaped (never kill(-1, ...): every process)
        continue;
      ::kill(-c.pid, SIGKILL); // its process group (stop::enter_child)
      ::kill(c.pid, SIGKILL);
      stop::untrack(c.pid);
    }
    for (auto& c : running) {
      if (c.fd >= 0)
        ::close(c.fd);
      if (c.pid > 0)
        wait_for(c.pid);
    }
  }
};

// Why a child's iteration failed: the message (or the signal) and its kind.
struct Failure {
  std::string why;
  FailureKind kind = FailureKind::Internal;
};

// A reaped child's outcome from its wait status and what it wrote
// (child_main): its result bytes, or why it failed; a ModelledHang's
// message comes without kHangPrefix.
struct Outcome {
  std::string data; // the result, when `failure` is empty
  std::optional<Failure> failure;
};

Outcome decode_outcome(int status, std::string data)
{
  if (WIFSIGNALED(status))
    return {{}, Failure{signal_text(WTERMSIG(status))}};
  if (!WIFEXITED(status))
    return {{}, Failure{"child ended abnormally"}};
  if (WEXITSTATUS(status) == 0)
    return {std::move(data), std::nullopt};
  const char tag = data.empty() ? '\0' : data[0];
  const std::string message = data.empty() ? "" : data.substr(1);
  switch (tag) {
  case 'I':
    return {{}, Failure{message, FailureKind::BadInput}};
  case 'H':
    return {{}, Failure{message, FailureKind::Hang}};
  case 'E':
    return {{}, Failure{message, FailureKind::Internal}};
  default:
    return {{}, Failure{fmt::format("child exited with status {}", WEXITSTATUS(status))}};
  }
}

// The point indices VSOCKSIM_TEST_FAIL_POINTS names (tests only; see
// run_points in runner.hpp).
std::set<std::size_t> injected_failures()
{
  std::set<std::size_t> out;
  const char* text = std::getenv("VSOCKSIM_TEST_FAIL_POINTS");
  if (text == nullptr || *text == '\0')
    return out;
  const std::string list = text;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(fmt::format(
          "VSOCKSIM_TEST_FAIL_POINTS='{}': not a comma-separated list of point indices (a switch for tests)", list));
    out.insert(std::stoul(item));
    start = comma + 1;
  }
  return out;
}

// Progress on stderr: simulations and points done, simulated bytes, elapsed
// time and an estimate of the time left (from the share of the expected
// work done, by the cost model of app/experiment/estimate.hpp). One \r-updated line on a
// terminal, a plain line at most every few seconds otherwise.
class Progress {
public:
  Progress(bool enabled, const Experiment& ex, const std::vector<Task>& tasks)
      : enabled_(enabled && !tasks.empty()), tty_(::isatty(STDERR_FILENO) == 1), total_(tasks.size()),
        left_in_point_(ex.points.size(), 0)
  {
    for (const Point& point : ex.points) {
      Estimate e = point_estimate(point.params); // the cost model `check` uses
      bytes_.push_back(e.bytes);
      weight_.push_back(e.core_seconds);
    }
    for (const Task& t : tasks) {
      total_weight_ += weight_[t.point];
      ++left_in_point_[t.point];
    }
    start_ = last_ = std::chrono::steady_clock::now();
  }

  // A simulation ended. simulated_bytes: what it reported it simulated
  // (sim.run_length), or < 0 for the estimate. point_failed: its point has
  // failed (counted as failed, not done, once its last simulation ends).
  void done(const Task& task, double simulated_bytes, bool point_failed)
  {
    ++done_;
    done_bytes_ += simulated_bytes >= 0 ? simulated_bytes : bytes_[task.point];
    done_weight_ += weight_[task.point];
    point_ended(task, point_failed);
  }

  // A simulation of a failed point that is not run: out of the count.
  void skipped(const Task& task)
  {
    --total_;
    total_weight_ -= weight_[task.point];
    point_ended(task, true);
  }

  // Ends a pending \r line, so an error message starts on its own line.
  void abandon()
  {
    if (open_) {
      std::fputc('\n', stderr);
      std::fflush(stderr);
      open_ = false;
    }
  }

private:
  void point_ended(const Task& task, bool point_failed)
  {
    if (--left_in_point_[task.point] == 0)
      ++(point_failed ? points_failed_ : points_done_);
    if (!enabled_)
      return;
    auto now = std::chrono::steady_clock::now();
    bool final = done_ == total_;
    if (!final && now - last_ < (tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000)))
      return;
    last_ = now;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    std::string line =
        fmt::format("[{}/{} simulations, {}/{} points{}] {:.3g} GB simulated, elapsed {}", done_, total_, points_done_,
                    left_in_point_.size(), points_failed_ ? fmt::format(", {} failed", points_failed_) : "",
                    done_bytes_ / 1e9, duration(elapsed));
    if (!final && done_weight_ > 0)
      line += ", about " + duration(elapsed * (total_weight_ - done_weight_) / done_weight_) + " left";
    if (tty_) {
      std::string text = "\r" + line;
      if (line.size() < width_)
        text.append(width_ - line.size(), ' ');
      width_ = line.size();
      open_ = !final;
      if (final)
        text += '\n';
      std::fputs(text.c_str(), stderr);
    } else {
      std::fputs((line + "\n").c_str(), stderr);
    }
    std::fflush(stderr);
  }

  static std::string duration(double s)
  {
    if (s < 60)
      return fmt::format("{:.1f} s", s);
    long m = static_cast<long>(s / 60);
    return fmt::format("{}m{:02d}s", m, static_cast<int>(s - 60.0 * static_cast<double>(m)));
  }

  bool enabled_;
  bool tty_;
  std::size_t total_;
  std::vector<std::size_t> left_in_point_;
  std::vector<double> bytes_, weight_;
  double total_weight_ = 0, done_weight_ = 0, done_bytes_ = 0;
  std::size_t done_ = 0, points_done_ = 0, points_failed_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  std::size_t width_ = 0;
  bool open_ = false;
};

} // namespace

void split_prefixed(Metrics& metrics, const std::string& prefix, Metrics& out)
{
  for (auto it = metrics.lower_bound(prefix); it != metrics.end() && it->first.starts_with(prefix);) {
    out[it->first.substr(prefix.size())] = it->second;
    it = metrics.erase(it);
  }
}

namespace {

// run_points' state and steps: the tasks (one per iteration of a point), the
// children running, each point's lowest failed iteration, and the loop that
// starts children up to `jobs` at once and files each as it ends.
class PointRunner {
public:
  PointRunner(const Experiment& ex, const IterationFn& fn, const RunOptions& opt)
      : ex_(ex), fn_(fn), opt_(opt), jobs_(std::max(1u, opt.jobs)), injected_(injected_failures())
  {
    results_.reserve(ex.points.size());
    for (std::size_t p = 0; p < ex.points.size(); ++p) {
      const Point& point = ex.points[p];
      std::int64_t n = point.params.integer("iterations");
      if (n < 0)
        throw std::invalid_argument(fmt::format("point {}: negative iteration count {}", point.index, n));
      PointResult r;
      r.index = point.index;
      r.iterations.resize(static_cast<std::size_t>(n));
      r.run_length.resize(static_cast<std::size_t>(n));
      r.rtt_histograms.resize(static_cast<std::size_t>(n));
      r.rtt_stages.resize(static_cast<std::size_t>(n));
      results_.push_back(std::move(r));
      for (std::int64_t i = 0; i < n; ++i)
        tasks_.push_back(Task{p, static_cast<std::uint32_t>(i)});
    }
    // The ensembles' members after every point's own iterations: a point's
    // figures come as early as without them.
    for (std::size_t p = 0; p < ex.points.size(); ++p) {
      const Point& point = ex.points[p];
      for (std::size_t m = 0; m < point.members.size(); ++m) {
        results_[p].members.push_back(MemberResult{point.members[m].weight, {}, {}});
        tasks_.push_back(Task{p, 0, m});
      }
    }
    left_.assign(results_.size(), 0);
    for (const Task& t : tasks_)
      ++left_[t.point];
    failed_at_.resize(results_.size());
  }

  std::vector<PointResult> run()
  {
    Progress progress(opt_.progress, ex_, tasks_);
    progress_ = &progress;
    try {
      while (done_ < tasks_.size()) {
        check_stop();
        start_children();
        if (children_.running.empty()) // the rest was skipped
          continue;
        wait_and_read();
      }
    } catch (...) {
      progress.abandon();
      throw;
    }
    return std::move(results_);
  }

private:
  void check_stop() const
  {
    if (opt_.stop && opt_.stop())
      throw Interrupted("interrupted");
  }

  // Up to `jobs` children, skipping the iterations of points that failed at
  // a lower iteration.
  void start_children()
  {
    while (children_.running.size() < jobs_ && next_ < tasks_.size()) {
      const Task& task = tasks_[next_++];
      if (failed_at_[task.point] && (task.is_member() || task.iteration > *failed_at_[task.point])) {
        task_ended(task, std::nullopt); // its point has failed already
        continue;
      }
      spawn(task);
      check_stop(); // a request during the fork
    }
  }

  void spawn(const Task& task)
  {
    const Point& point = ex_.points[task.point];
    const bool inject = injected_.count(point.index) > 0;
    const Params& params = task.is_member() ? point.members.at(task.member).params : point.params;
    const auto [pid, fd] = fork_child([&](int out) {
      for (const auto& c : children_.running)
        ::close(c.fd);
      child_main(out, [&] {
        if (inject)
          throw std::logic_error(kInjectedFailure);
        return encode_metrics(fn_(params, task.iteration));
      });
    });
    children_.running.push_back(Child{pid, fd, task, {}});
  }

  // Waits until a child's pipe (or the stop descriptor) is ready, reads
  // what is there, and files every child whose pipe reached end of file.
  void wait_and_read()
  {
    std::vector<pollfd> pfds;
    pfds.reserve(children_.running.size() + 1);
    for (const auto& c : children_.running)
      pfds.push_back(pollfd{c.fd, POLLIN, 0});
    if (opt_.stop_fd >= 0) // last, so pfds[k] is children_.running[k]
      pfds.push_back(pollfd{opt_.stop_fd, POLLIN, 0});
    if (::poll(pfds.data(), pfds.size(), -1) < 0) {
      if (errno == EINTR)
        return;
      throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
    }
    check_stop();
    // Handle ready children in the order they were started; erase the
    // finished ones afterwards. Whatever throws below, the finished entries
    // (closed and reaped) are dropped first, so that ~Children kills and
    // reaps only the rest.
    std::vector<bool> ended(children_.running.size(), false);
    try {
      for (std::size_t k = 0; k < children_.running.size(); ++k)
        if (pfds[k].revents != 0)
          ended[k] = read_child(children_.running[k]);
    } catch (...) {
      drop(ended);
      throw;
    }
    drop(ended);
  }

  // Reads from a ready child; at end of file files it and returns true.
  bool read_child(Child& c)
  {
    char buf[65536];
    ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN)
        return false;
      throw std::runtime_error(fmt::format("read from child: {}", std::strerror(errno)));
    }
    if (n > 0) {
      c.data.append(buf, static_cast<std::size_t>(n));
      return false;
    }
    // End of file: the child is done (or dead).
    Child finished = std::move(c);
    c.fd = -1;
    c.pid = -1;
    const Task& task = finished.task;
    Metrics info; // the run_length.* entries of what it reported
    const std::optional<Failure> failure = finish(finished, info);
    if (failure && task.is_member())
      results_[task.point].members.at(task.member).failed = failure->why;
    else if (failure)
      point_failed(task, *failure);
    auto simulated = info.find("simulated_bytes");
    task_ended(task, failure ? 0.0 : simulated == info.end() ? -1.0 : simulated->second);
    return true;
  }

  // Reaps a child whose pipe reached end of file and files its metrics
  // (its run_length.* entries also in `info`), or returns why it failed.
  std::optional<Failure> finish(Child& c, Metrics& info)
  {
    ::close(c.fd);
    stop::untrack(c.pid);
    int status = wait_for(c.pid);
    if (status < 0)
      throw std::runtime_error(fmt::format("point {} iteration {}: waitpid: {}", ex_.points[c.task.point].index,
                                           c.task.iteration, std::strerror(errno)));
    check_stop();
    Outcome out = decode_outcome(status, std::move(c.data));
    if (out.failure && out.failure->kind == FailureKind::Hang)
      out.failure->why = kHangPrefix + out.failure->why;
    if (out.failure)
      return out.failure;
    Metrics m;
    if (!decode_metrics(out.data, m))
      return Failure{"child exited without a valid result"};
    if (c.task.is_member()) { // its metrics alone
      Metrics histogram, stages;
      split_prefixed(m, "run_length.", info);
      split_prefixed(m, kRttHistogramPrefix, histogram);
      split_prefixed(m, kRttStagePrefix, stages);
      results_[c.task.point].members.at(c.task.member).metrics = std::move(m);
      return std::nullopt;
    }
    split_prefixed(m, "run_length.", results_[c.task.point].run_length[c.task.iteration]);
    info = results_[c.task.point].run_length[c.task.iteration];
    split_prefixed(m, kRttHistogramPrefix, results_[c.task.point].rtt_histograms[c.task.iteration]);
    split_prefixed(m, kRttStagePrefix, results_[c.task.point].rtt_stages[c.task.iteration]);
    results_[c.task.point].iterations[c.task.iteration] = std::move(m);
    return std::nullopt;
  }

  // A simulation ended (simulated_bytes as Progress::done) or was skipped
  // (nullopt); after a point's last one, the point is filed.
  void task_ended(const Task& task, std::optional<double> simulated_bytes)
  {
    ++done_;
    const bool failed = failed_at_[task.point].has_value();
    if (simulated_bytes)
      progress_->done(task, *simulated_bytes, failed);
    else
      progress_->skipped(task);
    if (--left_[task.point] > 0)
      return;
    PointResult& r = results_[task.point];
    if (failed) {
      r.iterations.clear();
      r.run_length.clear();
      r.rtt_histograms.clear();
      r.rtt_stages.clear();
      r.members.clear();
    } else if (opt_.on_point) {
      opt_.on_point(r);
    }
  }

  // Files a failure of `task`: the point's failure when it is its lowest
  // failed iteration so far; its later iterations still running are killed.
  // (Each point's lowest failed iteration so far: its later iterations are
  // not run, killed when running, their outcome ignored; its earlier ones
  // run on, and one failing becomes the lowest: the failure reported is the
  // lowest failing iteration's, whatever the order children end in.)
  void point_failed(const Task& task, const Failure& f)
  {
    std::optional<std::uint32_t>& at = failed_at_[task.point];
    if (at && *at < task.iteration)
      return;
    at = task.iteration;
    results_[task.point].failed = fmt::format("iteration {}: {}", task.iteration, f.why);
    results_[task.point].kind = f.kind;
    for (const Child& c : children_.running)
      if (c.pid > 0 && c.task.point == task.point && (c.task.is_member() || c.task.iteration > task.iteration)) {
        ::kill(-c.pid, SIGKILL);
        ::kill(c.pid, SIGKILL);
      }
  }

  void drop(const std::vector<bool>& ended)
  {
    std::vector<Child> rest;
    for (std::size_t j = 0; j < children_.running.size(); ++j)
      if (!ended[j])
        rest.push_back(std::move(children_.running[j]));
    children_.running = std::move(rest);
  }

  const Experiment& ex_;
  const IterationFn& fn_;
  const RunOptions& opt_;
  const unsigned jobs_;
  const std::set<std::size_t> injected_;
  std::vector<PointResult> results_;
  std::vector<Task> tasks_;
  std::vector<std::size_t> left_; // per point: iterations not yet ended
  std::vector<std::optional<std::uint32_t>> failed_at_;
  Children children_;
  Progress* progress_ = nullptr;
  std::size_t next_ = 0, done_ = 0;
};

} // namespace

std::vector<PointResult> run_points(const Experiment& ex, const IterationFn& fn, const RunOptions& opt)
{
  return PointRunner(ex, fn, opt).run();
}

std::string run_in_child(const std::function<std::string()>& fn)
{
  const auto [pid, fd] = fork_child([&](int out) { child_main(out, fn); });
  std::string data;
  char buf[65536];
  for (;;) {
    // A stop request ends the child at once (as run_points does).
    pollfd pfds[2] = {{fd, POLLIN, 0}, {stop::wake_fd(), POLLIN, 0}};
    const int ready = ::poll(pfds, stop::wake_fd() >= 0 ? 2 : 1, -1);
    if (stop::requested()) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::close(fd);
      stop::untrack(pid);
      wait_for(pid);
      throw Interrupted("interrupted");
    }
    if (ready < 0 && errno == EINTR)
      continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  stop::untrack(pid);
  const int status = wait_for(pid);
  if (status < 0)
    throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
  Outcome out = decode_outcome(status, std::move(data));
  if (!out.failure)
    return out.data;
  switch (out.failure->kind) {
  case FailureKind::BadInput:
    throw InputError(out.failure->why);
  case FailureKind::Hang:
    throw ModelledHang(out.failure->why);
  case FailureKind::Internal:
    break;
  }
  throw std::runtime_error(out.failure->why);
}

} // namespace vsim::app
