// The results model of `spmdsim presets`: each preset as rows of (figure, value, source), by kind, apart from
// how they are written (output.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spmdsim::cli::presets {

struct Row {
  std::string key;              // JSON key
  std::string label;            // table label
  std::string text;             // the value as the table shows it, with its unit
  std::optional<double> value;  // SI, for JSON
  std::string unit;             // of value
  std::string source;
};

struct Entry {
  std::string name;
  std::string title;
  std::vector<Row> rows;
};

struct Section {
  std::string name;  // "devices", as --kind takes it
  std::vector<Entry> entries;
};

// A kind of preset (--kind) and how to list its presets.
struct Kind {
  std::string_view name;
  Section (*make)();
};

// Devices, links, nodes and slices, in the order they are listed.
const std::vector<Kind>& kinds();

}  // namespace spmdsim::cli::presets
