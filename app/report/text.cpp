#include "app/report/text.hpp"
#include "app/experiment/text.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

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
