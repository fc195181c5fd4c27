#include "commands/presets/run.hpp"

#include <iostream>

#include "commands/presets/catalog.hpp"
#include "commands/presets/options.hpp"
#include "commands/presets/output.hpp"
#include "common/command_line.hpp"
#include "common/output_files.hpp"

namespace spmdsim::cli::presets {

int run(const std::string& program, const std::vector<std::string>& args) {
  const auto split = split_simgrid_arguments(program, args);
  const auto parsed = parse(split.ours);
  if (!parsed) return 0;
  OutputFiles outputs({{"--json", parsed->json_path}});
  std::vector<Section> sections;
  for (const auto* kind : parsed->kinds) sections.push_back(kind->make());
  write_table(std::cout, sections);
  if (!parsed->json_path.empty())
    outputs.write(parsed->json_path, [&](std::ostream& out) { write_json(out, sections); });
  outputs.commit();
  return 0;
}

}  // namespace spmdsim::cli::presets
