// Text helpers of the reports: columns, point names, metric units.
#pragma once

#include <string>
#include <vector>

#include "app/experiment/experiment.hpp"

namespace vsim::app {

// Left-aligned columns, three spaces apart, no trailing blanks (UTF-8 aware).
std::string render_columns(const std::vector<std::vector<std::string>>& rows);

// text in lines of at most `width` characters, cut at spaces (a word
// longer than `width` stands alone on its line); no final newline.
std::string wrap(const std::string& text, std::size_t width);

// Display width of UTF-8 text: code points.
std::size_t text_width(const std::string& s);

// "point K (key=value, ...)": a point by its index and swept values (just
// "point K" when nothing is swept), as failures name it.
std::string point_name(const Point& p);

// "a,b,,c" -> {"a", "b", "c"} (metric lists, --points).
std::vector<std::string> split_commas(const std::string& text);

// The note that names a profile's caveats (transports/profiles.hpp
// profile_caveats; a result's manifest.platforms.NAME.caveats) where its
// predicted changes are read (run's table, compare); "" for none.
std::string profile_caveat_note(const std::string& name, const std::vector<std::string>& caveats);
// The notes of the profiles the experiment's points run on, each profile
// once, in name order, each after a blank line ("" for none).
std::string caveat_notes(const Experiment& ex);

// Unit shown for a metric in the table header ("" when unknown).
std::string metric_unit(const std::string& metric);

} // namespace vsim::app
