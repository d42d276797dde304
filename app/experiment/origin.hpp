// Loading an experiment (app/experiment/experiment.cpp), its internals:
// where a value or key came from, for messages that name the file, line
// and column or the --set entry.
#pragma once

#include <string>

namespace vsim::app::load {

struct Origin {
  std::string file; // display name of the file (empty: not from a file)
  int line = 0;     // 1-based; 0 = no position
  int column = 0;
  std::string set_text; // the --set entry, when it came from the command line

  // "FILE:LINE:COLUMN: error: ", "--set 'ENTRY': error: ", ...
  std::string prefix() const;
  bool positioned() const { return !set_text.empty() || line > 0; }
};

// An Origin in FILE (at LINE:COLUMN when given), or in a --set ENTRY.
Origin in_file(const std::string& file, int line = 0, int column = 0);
Origin in_set(const std::string& entry);
// Throws the InputError "<where>: error: <key>: <what>".
[[noreturn]] void fail(const Origin& at, const std::string& key, const std::string& what);
// "WHAT (allowed: ALLOWED)", or WHAT alone when ALLOWED is empty.
std::string with_allowed(const std::string& what, const std::string& allowed);

} // namespace vsim::app::load
