#include "commands/presets/output.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace spmdsim::cli::presets {
namespace {

constexpr const char* kLegend =
    "# sources: §x.y = section of REFERENCES.md (../shared/REFERENCES.md) with its provenance tags: [V] "
    "vendor or\n"
    "#          primary source, [P] paper, [S] secondary compilation, [M] third-party measurement;\n"
    "#          derived = computed from such figures; assumed = no published figure (the reason follows);\n"
    "#          left out / not modelled = no published figure, so spmdsim does not use one\n"
    "# units:   TFLOP/s = 1e12 FLOP/s, dense; GiB = 2^30 bytes (vendors' \"GB\" of HBM); GB/s = 1e9 B/s, "
    "per\n"
    "#          direction; us = 1e-6 s\n";

// The value column; a longer value puts its source on the next line, under the sources of the other rows.
constexpr std::size_t kTextWidth = 40;

}  // namespace

void write_table(std::ostream& out, const std::vector<Section>& sections) {
  out << "# spmdsim presets: devices, links, nodes and TPU slices with their published figures\n" << kLegend;
  for (const auto& section : sections) {
    out << "\n" << section.name << "\n";
    for (const auto& e : section.entries) {
      out << fmt::format("  {}: {}\n", e.name, e.title);
      for (const auto& r : e.rows) {
        if (r.source.empty())
          out << fmt::format("    {:<18}{}\n", r.label, r.text);
        else if (r.text.size() < kTextWidth)
          out << fmt::format("    {:<18}{:<{}}{}\n", r.label, r.text, kTextWidth, r.source);
        else
          out << fmt::format("    {:<18}{}\n    {:<18}{:<{}}{}\n", r.label, r.text, "", "", kTextWidth,
                             r.source);
      }
    }
  }
}

void write_json(std::ostream& out, const std::vector<Section>& sections) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["command"] = "spmdsim presets";
  j["references"] = "../shared/REFERENCES.md";
  for (const auto& section : sections) {
    auto& list = j[section.name] = nlohmann::ordered_json::array();
    for (const auto& e : section.entries) {
      nlohmann::ordered_json entry;
      entry["name"] = e.name;
      entry["title"] = e.title;
      auto& figures = entry["figures"] = nlohmann::ordered_json::array();
      for (const auto& r : e.rows) {
        nlohmann::ordered_json f;
        f["key"] = r.key;
        f["text"] = r.text;
        f["value"] = r.value ? nlohmann::ordered_json(*r.value) : nlohmann::ordered_json(nullptr);
        f["unit"] = r.unit;
        f["source"] = r.source;
        figures.push_back(std::move(f));
      }
      list.push_back(std::move(entry));
    }
  }
  out << j.dump(2) << "\n";
}

}  // namespace spmdsim::cli::presets
