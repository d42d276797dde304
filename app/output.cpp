#include "app/output.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "transports/simulate.hpp"

namespace fs = std::filesystem;

namespace vsim::app {

void check_output_dir(const std::string& dir)
{
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(fmt::format("--output '{}': error: exists and is not a directory", dir));
  if (dir.empty())
    throw InputError("--output '': error: needs a directory path");
  fs::path parent = fs::absolute(dir, ec).parent_path();
  if (!fs::exists(parent, ec))
    throw InputError(fmt::format("--output '{}': error: parent directory '{}' does not exist", dir, parent.string()));
  if (!fs::is_directory(parent, ec))
    throw InputError(fmt::format("--output '{}': error: '{}' is not a directory", dir, parent.string()));
}

void write_file_atomic(const std::string& path, const std::string& content)
{
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << content;
    f.flush();
    if (!f)
      throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path);
}

void write_output_dir(const std::string& dir, const nlohmann::ordered_json& all)
{
  fs::create_directories(dir);
  for (const auto& point : all["points"])
    write_file_atomic(fmt::format("{}/point-{:04}.json", dir, point["index"].get<std::size_t>()),
                      point.dump(2) + "\n");
  write_file_atomic(dir + "/manifest.json", all["manifest"].dump(2) + "\n");
  write_file_atomic(dir + "/result.json", all.dump(2) + "\n");
}

std::string known_metrics_list()
{
  std::string s;
  for (const auto& d : metric_docs()) {
    if (!s.empty())
      s += ", ";
    s += d.name;
  }
  return s;
}

}  // namespace vsim::app
