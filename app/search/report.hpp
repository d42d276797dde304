// What a search writes besides its result (app/search/search.hpp): the
// objective-space figures.
#pragma once

#include <string>

#include "app/search/search.hpp"

namespace vsim::app::search {

// The figures of the objective space into DIR (search-objectives*.svg and
// .png, their data and script): "" when written, else a warning line (no
// gnuplot, say; the search's results stand without them).
std::string write_figures(const SearchResult& r, const std::string& dir);

} // namespace vsim::app::search
