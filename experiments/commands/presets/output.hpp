// `spmdsim presets`' reporters: the console table and JSON.
#pragma once

#include <ostream>
#include <vector>

#include "commands/presets/catalog.hpp"

namespace spmdsim::cli::presets {

void write_table(std::ostream& out, const std::vector<Section>& sections);
void write_json(std::ostream& out, const std::vector<Section>& sections);

}  // namespace spmdsim::cli::presets
