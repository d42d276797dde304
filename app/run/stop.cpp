#include "app/run/stop.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace vsim::app::stop {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Written by the handler, read by the program: only sig_atomic_t objects
// and the pipe's descriptors, as async-signal safety requires.
volatile std::sig_atomic_t g_first = 0;
volatile std::sig_atomic_t g_pipe_read = -1;
volatile std::sig_atomic_t g_pipe_write = -1;
volatile std::sig_atomic_t g_children[kMaxTracked] = {};
char g_tmp[4096];
volatile std::sig_atomic_t g_tmp_set = 0;

void on_signal(int sig)
{
  const int saved = errno;
  if (g_first == 0) {
    g_first = sig;
    if (g_pipe_write >= 0) {
      const char byte = 's';
      [[maybe_unused]] ssize_t n = ::write(g_pipe_write, &byte, 1);
    }
    errno = saved;
    return;
  }
  // A second request: end now.
  for (int i = 0; i < kMaxTracked; ++i)
    if (const pid_t pgid = g_children[i]; pgid > 0)
      ::kill(-pgid, SIGKILL);
  if (g_tmp_set)
    ::unlink(g_tmp);
  ::_exit(128 + g_first);
}

sigset_t stop_set()
{
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals)
    sigaddset(&set, s);
  return set;
}

} // namespace

void install()
{
  if (g_pipe_read < 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      g_pipe_read = fds[0];
      g_pipe_write = fds[1];
    }
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals)
    sigaddset(&sa.sa_mask, s); // the handler runs alone: no second request inside the first
  sa.sa_flags = 0;             // no SA_RESTART: a blocking call returns EINTR
  for (int s : kSignals)
    ::sigaction(s, &sa, nullptr);
  const sigset_t set = stop_set();
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

void restore_default()
{
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals)
    ::sigaction(s, &sa, nullptr);
  if (g_first != 0)
    ::raise(g_first);
}

int requested()
{
  return g_first;
}

int exit_status()
{
  return g_first == 0 ? 0 : 128 + g_first;
}

int wake_fd()
{
  return g_pipe_read;
}

void enter_child(pid_t parent)
{
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals)
    ::sigaction(s, &sa, nullptr);
  for (int i = 0; i < kMaxTracked; ++i)
    g_children[i] = 0;
  g_tmp_set = 0;
  if (g_pipe_read >= 0)
    ::close(g_pipe_read);
  if (g_pipe_write >= 0)
    ::close(g_pipe_write);
  g_pipe_read = -1;
  g_pipe_write = -1;
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) // the parent died before prctl took effect
    ::_exit(1);
  const sigset_t set = stop_set();
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

void track(pid_t pgid)
{
  for (int i = 0; i < kMaxTracked; ++i)
    if (g_children[i] == 0) {
      g_children[i] = pgid;
      return;
    }
}

void untrack(pid_t pgid)
{
  for (int i = 0; i < kMaxTracked; ++i)
    if (g_children[i] == pgid)
      g_children[i] = 0;
}

void writing(const char* tmp_path)
{
  g_tmp_set = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (tmp_path == nullptr || std::strlen(tmp_path) >= sizeof g_tmp)
    return;
  std::strcpy(g_tmp, tmp_path);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g_tmp_set = 1;
}

} // namespace vsim::app::stop
