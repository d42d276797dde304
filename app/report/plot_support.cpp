#include "app/report/plot_support.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "app/experiment/experiment.hpp"

extern char** environ;

namespace vsim::app::plotting {

using json = nlohmann::ordered_json;

// A gnuplot string in double quotes (which expand `command` as the shell
// would: a backquote becomes a quote too).
std::string quote(std::string s)
{
  for (auto& c : s)
    if (c == '"' || c == '`')
      c = '\'';
  return "\"" + s + "\"";
}

// A gnuplot string of free text (titles, labels, as quote): a backslash
// stays one, a newline starts a line.
std::string quote_text(const std::string& text)
{
  std::string s = "\"";
  for (char c : text)
    s += c == '"' || c == '`' ? std::string("'")
         : c == '\\'          ? std::string("\\\\")
         : c == '\n'          ? std::string("\\n")
                              : std::string(1, c);
  return s + "\"";
}

// gnuplot's terminal for a figure format ("svg" or "png").
std::string terminal(const std::string& ext)
{
  return ext == "svg" ? "set terminal svg size 960,640 dynamic noenhanced font 'sans,11'\n"
                      : "set terminal pngcairo size 960,640 noenhanced font 'sans,10'\n";
}

void run_gnuplot(const std::string& script)
{
  pid_t pid = 0;
  std::string prog = "gnuplot";
  std::vector<char*> argv = {prog.data(), const_cast<char*>(script.c_str()), nullptr};
  if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ) != 0)
    throw std::runtime_error("gnuplot not found: install it (scripts/setup.sh installs gnuplot-nox)");
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("gnuplot failed on " + script);
}

// The JSON document at path (`what`: result or trace, for the messages).
json read_json(const std::string& path, const char* what)
{
  std::ifstream f(path);
  if (!f)
    throw InputError(fmt::format("{}: error: cannot read the {}", path, what));
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: error: not a JSON {}: {}", path, what, e.what()));
  }
}

} // namespace vsim::app::plotting
