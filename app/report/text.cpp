#include "app/report/text.hpp"
#include "app/experiment/text.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "app/experiment/platforms.hpp"
#include "transports/profiles.hpp"
#include "transports/simulate.hpp"

namespace vsim::app {

std::string wrap(const std::string& text, std::size_t width)
{
  std::string out, line, word;
  std::istringstream words(text);
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += (out.empty() ? "" : "\n") + line;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + (out.empty() || line.empty() ? "" : "\n") + line;
}

// Display width of UTF-8 text: code points.
std::size_t text_width(const std::string& s)
{
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string profile_caveat_note(const std::string& name, const std::vector<std::string>& caveats)
{
  if (caveats.empty())
    return "";
  return fmt::format("platform {} {}: its fit stands in for a mechanism the model lacks, so a change that moves "
                     "those costs' share of the work is predicted less surely than its interval says (`vsocksim "
                     "describe platforms {}`; docs/calibration.md, \"Refused fits\")\n",
                     name, fmt::join(caveats, "; "), name);
}

std::string caveat_notes(const Experiment& ex)
{
  std::set<std::string> names;
  for (const Point& p : ex.points)
    if (p.params.has("platform"))
      names.insert(p.params.text("platform"));
  std::string out;
  for (const std::string& name : names)
    if (const PlatformProfile* prof = find_profile(name))
      if (const std::string note = profile_caveat_note(name, profile_caveats(*prof)); !note.empty())
        out += "\n" + note;
  return out;
}

std::string metric_unit(const std::string& metric)
{
  // The unit the metric's declaration gives (transports/simulate.cpp);
  // for a name nothing declares, what its suffix says.
  if (const MetricDoc* d = find_metric(metric))
    return d->unit;
  auto ends_with = [&](const std::string& suffix) {
    return metric.size() >= suffix.size() && metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("_MBps"))
    return "MB/s";
  if (ends_with("_seconds"))
    return "s";
  if (ends_with("_percent"))
    return "%";
  return "";
}

// Left-aligned columns, three spaces apart, no trailing blanks.
std::string render_columns(const std::vector<std::vector<std::string>>& rows)
{
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c)
        width.resize(c + 1, 0);
      width[c] = std::max(width[c], text_width(row[c]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c)
        line += "   ";
      line += row[c];
      if (c + 1 < row.size())
        line.append(width[c] - text_width(row[c]), ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string point_name(const Point& p)
{
  std::vector<std::string> values;
  for (const auto& [key, value] : p.label)
    values.push_back(key + "=" + value);
  return fmt::format("point {}{}", p.index, values.empty() ? "" : " (" + join(values, ", ") + ")");
}

std::vector<std::string> split_commas(const std::string& text)
{
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

} // namespace vsim::app
