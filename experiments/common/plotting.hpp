// `--plot PREFIX`: a subcommand writes its results as JSON and hands them to one of the python3 +
// matplotlib scripts beside it (plot_collectives.py, plot_train.py, plot_memory.py), which writes
// PREFIX.png and PREFIX.svg. Plots are never needed for a command's table.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace spmdsim::cli {

class OutputFiles;

// The first python3 that imports matplotlib: $SPMDSIM_PYTHON, python3 on PATH, /usr/bin/python3. Throws
// std::runtime_error saying what was tried and how to install matplotlib. Call it before the work starts, so
// that a missing matplotlib fails early.
std::string find_plotting_python();

// Runs `script` (a file name: found in the installed share/spmdsim, else in the source tree) on the JSON
// `write_json` writes into a temporary file, for the PREFIX.png and PREFIX.svg of `outputs`, which its
// commit() puts in place. Throws std::runtime_error when the script cannot be found or fails.
void write_plots(const std::string& python, std::string_view script, OutputFiles& outputs,
                 const std::function<void(std::ostream&)>& write_json);

}  // namespace spmdsim::cli
