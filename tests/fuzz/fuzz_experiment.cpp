// libFuzzer target over what `vsocksim check` does without simulating:
// loading and validating an experiment, applying --set entries, expanding
// the sweep, reading and matching the validation measurements, and the
// size/time estimate. Built by -DVSIM_FUZZ=ON (clang), run by scripts/fuzz.sh.
//
// Input: leading lines that start with "--set " are --set entries (the rest
// of the line, "KEY=VALUE"); everything after them is the YAML text.
//
// A bad experiment must end in InputError (exit 2 in vsocksim); any other
// exception, a crash, a sanitizer report or a hang is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "app/experiment/estimate.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/registry.hpp"
#include "app/validation/measurements.hpp"

namespace fs = std::filesystem;
using namespace vsim::app;

namespace {

constexpr std::string_view kSetMarker = "--set ";

// The directory the fuzzed experiment pretends to live in, with copies of
// the repository's measurement CSVs where experiments look for them, so
// validation.measurements reads real files and nothing outside it.
fs::path g_root;
std::string g_file; // <root>/experiments/fuzz.yaml (never created)

bool g_remove_root = false;

void copy_csvs(const fs::path& from, const fs::path& to)
{
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    if (e.path().extension() == ".csv")
      fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
}

void remove_root()
{
  std::error_code ec;
  if (g_remove_root)
    fs::remove_all(g_root, ec);
}

// Whether a measurements path stays in the fixture root. vsocksim reads any
// path; here absolute paths and ".." out of the root (/dev/zero, /dev/stdin)
// would read the machine's files instead of fuzzing the loader.
bool inside_root(const fs::path& p)
{
  const std::string s = p.string(), root = g_root.string() + "/";
  return s.rfind(root, 0) == 0;
}

// What `vsocksim check` does after loading, minus printing: a copy of
// prepare() in app/cli/main.cpp (measurements read and matched to the points),
// then the estimate line.
void check_like_main(const Experiment& ex)
{
  if (const std::string& rel = ex.base.text("validation.measurements"); !rel.empty()) {
    const fs::path file = (fs::path(g_file).parent_path() / rel).lexically_normal();
    if (inside_root(file)) {
      std::vector<Measurement> m = load_measurements(file.string(), registry());
      match_measurements(ex, m, file.string());
    }
  }
  (void)ex.base.text("report.metrics");
  for (unsigned jobs : {1u, 7u})
    (void)describe_estimate(estimate(ex), jobs);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
  // scripts/fuzz.sh gives a directory it removes itself; a bare run (say,
  // reproducing a crash) makes one and removes it at exit.
  if (const char* dir = std::getenv("VSIM_FUZZ_DIR"); dir && *dir) {
    g_root = fs::path(dir);
  } else {
    char pattern[] = "/tmp/vsim-fuzz-XXXXXX";
    if (!mkdtemp(pattern))
      std::abort();
    g_root = pattern;
    g_remove_root = true;
    std::atexit(remove_root);
  }
  g_root = fs::absolute(g_root).lexically_normal();
  const fs::path src = VSIM_SOURCE_DIR;
  copy_csvs(src / "experiments/validation", g_root / "experiments/validation");
  copy_csvs(src / "experiments/validation", g_root / "validation");
  copy_csvs(src / "tests/data/cli", g_root / "experiments");
  g_file = (g_root / "experiments/fuzz.yaml").string();
  (void)registry(); // built once, outside the measured runs
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  while (in.substr(0, kSetMarker.size()) == kSetMarker) {
    const std::size_t nl = in.find('\n');
    sets.emplace_back(in.substr(kSetMarker.size(), nl == std::string_view::npos ? nl : nl - kSetMarker.size()));
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  }
  try {
    const Experiment ex = load_experiment_text(std::string(in), g_file, sets, registry());
    check_like_main(ex);
  } catch (const InputError&) {
    // A bad experiment, reported as vsocksim reports it: expected.
  }
  return 0;
}
