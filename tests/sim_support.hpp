// What the tests that drive simulated threads directly share: a thread whose
// body is a lambda, and a way to run a World in a forked child (SimGrid
// allows one engine per process) and bring numbers back.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace vsim::testing {

class Scripted : public SimThread {
public:
  Scripted(World& w, std::string name, Cpu& cpu, std::function<Task<>(Scripted&)> f)
      : SimThread(w, std::move(name), cpu), f_(std::move(f))
  {
  }

protected:
  Task<> body() override { return f_(*this); }

private:
  std::function<Task<>(Scripted&)> f_;
};

// Runs f in a child process; returns the numbers it returned ({-1} if it
// threw).
inline std::vector<double> in_child(const std::function<std::vector<double>()>& f)
{
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::vector<double> out;
    try {
      out = f();
    } catch (const std::exception&) {
      out = {-1};
    }
    const std::size_t bytes = out.size() * sizeof(double);
    _exit(write(fds[1], out.data(), bytes) == static_cast<ssize_t>(bytes) ? 0 : 1);
  }
  close(fds[1]);
  std::vector<double> in(256);
  const ssize_t n = read(fds[0], in.data(), in.size() * sizeof(double));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  in.resize(static_cast<std::size_t>(std::max<ssize_t>(n, 0)) / sizeof(double));
  return in;
}

} // namespace vsim::testing
