// The layers' dependencies point one way (docs/architecture.md): every
// #include of a project header in a layer's sources names its own layer or
// one below it, in this order:
//   sim <- models <- transports <- app/experiment <- app/run <- app/report
//   <- app/validation <- app/calibrate <- app/search <- app/cli
// CMake links the layers as libraries in the same order; this test catches
// an include that the link order would only catch once a symbol is used.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::vector<std::string>& layers()
{
  static const std::vector<std::string> order = {"sim",        "models",     "transports",     "app/experiment",
                                                 "app/run",    "app/report", "app/validation", "app/calibrate",
                                                 "app/search", "app/cli"};
  return order;
}

// The layer a path (relative to the source tree) belongs to, -1 for none.
int layer_of(const std::string& path)
{
  const auto& order = layers();
  for (std::size_t i = 0; i < order.size(); ++i)
    if (path.rfind(order[i] + "/", 0) == 0)
      return static_cast<int>(i);
  return -1;
}

// The project headers a source file includes ("dir/.../x.hpp" with a
// directory; generated headers such as "vsim_git.hpp" have none).
std::vector<std::string> project_includes(const fs::path& file)
{
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#include \"", 0) != 0)
      continue;
    std::string target = line.substr(10, line.find('"', 10) - 10);
    if (target.find('/') != std::string::npos)
      out.push_back(target);
  }
  return out;
}

std::vector<std::string> sources_under(const std::string& dir)
{
  std::vector<std::string> out;
  const fs::path root(VSIM_SOURCE_DIR);
  for (const auto& e : fs::recursive_directory_iterator(root / dir))
    if (e.is_regular_file() && (e.path().extension() == ".cpp" || e.path().extension() == ".hpp"))
      out.push_back(fs::relative(e.path(), root).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("every include of a project header points down the layers", "[docs][layers]")
{
  std::size_t checked = 0;
  for (const std::string top : {"sim", "models", "transports", "app"})
    for (const auto& file : sources_under(top)) {
      const int own = layer_of(file);
      INFO(file);
      REQUIRE(own >= 0); // no source directly in app/: each is in a layer's folder
      for (const auto& target : project_includes(fs::path(VSIM_SOURCE_DIR) / file)) {
        INFO("includes " << target);
        const int theirs = layer_of(target);
        CHECK(theirs >= 0);
        CHECK(theirs <= own);
        ++checked;
      }
    }
  CHECK(checked > 200); // the walk found the sources (251 at its writing)
}

// Columns as a reader counts them: UTF-8 code points, not bytes.
std::size_t columns(const std::string& line)
{
  return static_cast<std::size_t>(
      std::count_if(line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

TEST_CASE("no line of the C++ sources is over 120 columns", "[docs][layers]")
{
  std::size_t files = 0;
  for (const std::string top : {"sim", "models", "transports", "app", "tests", "bench"})
    for (const auto& file : sources_under(top)) {
      std::ifstream in(fs::path(VSIM_SOURCE_DIR) / file);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        INFO(file << ":" << n);
        CHECK(columns(line) <= 120);
      }
      ++files;
    }
  CHECK(files > 150); // the walk found the sources
  CHECK(columns("a\u2014b") == 3);
}

TEST_CASE("the layer order ranks paths as docs/architecture.md says", "[docs][layers]")
{
  CHECK(layer_of("sim/world.hpp") == 0);
  CHECK(layer_of("transports/hv_sock/hv_sock.hpp") == 2);
  CHECK(layer_of("app/report/results.hpp") > layer_of("app/run/runner.hpp"));
  CHECK(layer_of("app/cli/main.cpp") > layer_of("app/validation/validate.hpp"));
  CHECK(layer_of("app/main.cpp") == -1);
  CHECK(layer_of("simulator/x.hpp") == -1);
}
