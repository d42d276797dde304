// `vsocksim describe [TOPIC] [--markdown]`: every declared parameter (or
// those under a key prefix, the platforms, the metrics), generated from the
// declarations (app/experiment/describe.hpp).
#include <iostream>
#include <memory>

#include "app/cli/command.hpp"
#include "app/experiment/describe.hpp"
#include "app/experiment/registry.hpp"

namespace vsim::app::cli {

namespace {

struct DescribeArgs {
  std::string topic;
  bool markdown = false;
};

} // namespace

Command add_describe(CLI::App& app)
{
  auto a = std::make_shared<DescribeArgs>();
  auto* sub = app.add_subcommand("describe", "list every parameter: path, type, unit, default, allowed, meaning");
  sub->add_option("topic", a->topic, "a key prefix (hv_sock, workload, costs, ...) or 'platforms'");
  sub->add_flag("--markdown", a->markdown, "Markdown reference (docs/parameters.md is made with this)");
  return {sub, [a] {
            std::cout << (a->markdown ? describe_markdown(registry()) : describe_text(registry(), a->topic));
            return 0;
          }};
}

} // namespace vsim::app::cli
