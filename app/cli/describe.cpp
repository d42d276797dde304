// `vsocksim describe [TOPIC] [--markdown]`, `vsocksim describe platforms FILE`: every declared parameter (or
// those under a key prefix, the platforms, the metrics), generated from the
// declarations (app/experiment/describe.hpp).
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/cli/command.hpp"
#include <fmt/format.h>

#include "app/experiment/describe.hpp"
#include "app/experiment/experiment.hpp"
#include "app/experiment/origin.hpp"
#include "app/experiment/platforms.hpp"
#include "app/experiment/registry.hpp"

namespace vsim::app::cli {

namespace {

struct DescribeArgs {
  std::string topic;
  std::string file; // with topic "platforms": a profile file
  bool markdown = false;
};

} // namespace

Command add_describe(CLI::App& app)
{
  auto a = std::make_shared<DescribeArgs>();
  auto* sub = app.add_subcommand("describe", "list every parameter: path, type, unit, default, allowed, meaning");
  sub->add_option("topic", a->topic, "a key prefix (hv_sock, workload, costs, ...) or 'platforms'");
  sub->add_option(
      "file", a->file,
      "with 'platforms': a profile file to check and show against the plausible ranges, or a shipped profile's name");
  sub->add_flag("--markdown", a->markdown, "Markdown reference (docs/parameters.md is made with this)");
  return {sub, [a] {
            if (!a->file.empty()) {
              if (a->topic != "platforms")
                throw InputError(fmt::format("describe {} {}: error: a file goes with the topic 'platforms' only "
                                             "(allowed: vsocksim describe platforms FILE.yaml)",
                                             a->topic, a->file));
              // A shipped profile's name (no such file here): that profile.
              if (const PlatformProfile* shipped = find_profile(a->file);
                  shipped && shipped->origin == "shipped" && !std::filesystem::exists(a->file)) {
                std::cout << describe_profile(registry(), *shipped);
                return 0;
              }
              std::cout << describe_profile(registry(), load_profile_file(a->file, load::in_file(a->file)));
              return 0;
            }
            std::cout << (a->markdown ? describe_markdown(registry()) : describe_text(registry(), a->topic));
            return 0;
          }};
}

} // namespace vsim::app::cli
