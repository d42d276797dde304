// Reading a result back (show, compare, explain, plot, merge): the JSON of
// `run --format json`, or an --output directory (its result.json).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.hpp"
#include "app/run/runner.hpp"

namespace vsim::app {

// A result that could not be read as JSON. what() is show's and compare's
// wording; the other commands word it their own way from kind, file and
// detail (the JSON parser's message).
struct ResultFileError : InputError {
  enum class Kind { Unreadable, NotJson };
  ResultFileError(Kind kind, std::string file, std::string detail);
  Kind kind;
  std::string file, detail;
};

// The JSON document at PATH (PATH/result.json when PATH is a directory), and
// the file it was read from. Throws ResultFileError.
struct ResultJson {
  std::string file;
  nlohmann::ordered_json doc;
};
ResultJson read_result_json(const std::string& path);

// A result read back: the experiment as far as the result records it
// (name, points with their parameters and swept labels) and each point's
// iterations. Bad files throw InputError (ResultFileError when not JSON).
// The points that failed ("failed_points") come back as PointResults with
// `failed` set, in the order of the indices with the others.
struct ResultFile {
  std::string path; // the file read
  Experiment ex;
  std::vector<PointResult> results;
  nlohmann::ordered_json doc;
  std::vector<nlohmann::ordered_json> effective; // each point's recorded "effective" values, as ex.points
};
ResultFile read_result(const std::string& path);

} // namespace vsim::app
