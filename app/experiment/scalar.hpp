// Loading an experiment (app/experiment/experiment.cpp), its internals: one
// scalar (from YAML or a --set entry) converted against its parameter's
// declaration, with the YAML 1.2 core schema's plain-scalar rules (decimal
// only), and the messages that say what was expected.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "app/experiment/given.hpp"
#include "app/experiment/origin.hpp"
#include "sim/params.hpp"

namespace vsim::app::load {

// A scalar to convert: the text and whether it was a plain (unquoted) YAML
// scalar, which decides whether `12` is a number and `true` a boolean.
struct Scalar {
  std::string text;
  bool plain = true;
};

// Offset of the first invalid UTF-8 sequence in S, or npos when S is
// all UTF-8 (no overlong forms, surrogates or code points above U+10FFFF):
// the results are JSON, which holds only UTF-8.
std::size_t invalid_utf8_at(std::string_view s);

// The scalar converted and checked (kind, range, the declaration's own
// check); throws InputError at `at`.
Value convert_scalar(const ParamSpec& spec, const Scalar& in, const Origin& at);
// The same for a YAML node, which must be a scalar.
Given convert_node(const ParamSpec& spec, const YAML::Node& node, const Origin& at);
// The declared default, converted (a logic_error if the declaration's is bad).
Value default_value(const ParamSpec& spec);

// The one YAML document of a file's TEXT, whose top level must be a map;
// throws InputError (FILE:LINE:COLUMN) for invalid YAML, an empty file, a
// second document or another top level ("allowed: ALLOWED").
YAML::Node read_document(const std::string& text, const std::string& file, const std::string& allowed);

// "a map", "a list", "'text'", "no value": what a node is, for messages.
std::string node_kind(const YAML::Node& n);
// "an integer", "a size", ...: what a kind expects, for messages.
const char* expected_kind(ParamKind k);

} // namespace vsim::app::load
