// `vsocksim merge DIR... [--output DIR]`: the --output directories of a
// sharded run (run --shard I/N) combined into the one result the unsharded
// run gives.
#include <iostream>
#include <memory>

#include "app/cli/command.hpp"
#include "app/report/merge.hpp"
#include "app/run/output_dir.hpp"

namespace vsim::app::cli {

namespace {

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string output;
};

int merge(const MergeArgs& a)
{
  if (!a.output.empty())
    check_output_dir(a.output);
  nlohmann::ordered_json merged = merge_results(a.dirs);
  if (!a.output.empty())
    write_output_dir(a.output, merged);
  std::cout << merged.dump(2) << '\n';
  return 0;
}

} // namespace

Command add_merge(CLI::App& app)
{
  auto a = std::make_shared<MergeArgs>();
  auto* sub = app.add_subcommand("merge", "combine the --output directories of a sharded run into one result");
  sub->add_option("dirs", a->dirs, "result directories (of run --shard I/N --output DIR)")->required();
  sub->add_option("--output", a->output, "also write the merged result to this directory");
  return {sub, [a] { return merge(*a); }};
}

} // namespace vsim::app::cli
