// The committed parameter reference is the one the declarations generate.
#include <catch2/catch.hpp>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/experiment/describe.hpp"
#include "app/experiment/registry.hpp"

TEST_CASE("docs/parameters.md matches the parameter declarations", "[docs]")
{
  std::ifstream f(std::string(VSIM_SOURCE_DIR) + "/docs/parameters.md");
  REQUIRE(f);
  std::stringstream ss;
  ss << f.rdbuf();
  INFO("regenerate with: build/vsocksim describe --markdown > docs/parameters.md");
  CHECK(ss.str() == vsim::app::describe_markdown(vsim::app::registry()));
}

// CTest splits a discovered test's name at ';': such a test would run no
// assertion and still be reported as passed.
TEST_CASE("no test case name contains a semicolon", "[docs]")
{
  std::size_t names = 0;
  const std::string opener = std::string("TEST_CASE") + "("; // not spelled out: this line is no test case
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(VSIM_SOURCE_DIR) + "/tests")) {
    if (entry.path().extension() != ".cpp")
      continue;
    std::ifstream f(entry.path());
    std::string line;
    bool name_next = false; // the line before ended in TEST_CASE( (clang-format puts a long name on the next)
    for (int n = 1; std::getline(f, line); ++n) {
      std::size_t quote = std::string::npos; // the name's opening quote
      if (name_next)
        quote = line.find('"');
      else if (const auto at = line.find(opener + '"'); at != std::string::npos)
        quote = at + 10;
      name_next = line.ends_with(opener);
      if (quote == std::string::npos)
        continue;
      std::string name = line.substr(quote + 1, line.find('"', quote + 1) - (quote + 1));
      INFO(entry.path().lexically_relative(VSIM_SOURCE_DIR).string() << ":" << n << ": " << name);
      CHECK(name.find(';') == std::string::npos);
      ++names;
    }
  }
  CHECK(names > 250); // the walk found the test sources, tests/cli/ too (293 at its writing)
}
