// The sweep's reporters: the table (streamed as rows finish), CSV and JSON, over one row model
// (common/rows.hpp).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "commands/collectives/row_run.hpp"
#include "common/rows.hpp"

namespace spmdsim::cli::collectives {

// What the header and the JSON say of the sweep.
struct SweepInfo {
  std::string platform;  // its description
  const ChosenPlatform* chosen;
  std::vector<std::pair<std::string, std::string>> simgrid;  // settings in force
  std::string simgrid_source;                                // where they come from
  std::vector<std::string> simgrid_args;                     // --cfg / --log as given
  DType dtype;
  ByteCount abstract_above;
  std::string abstract_source;
  bool check;
  std::string sizes;
  std::string devices;
  bool aggregate;
  std::vector<std::string> dimension_algorithms;
  int channels = 0;  // --channels, 0 when not given
  std::string protocol;  // --protocol, empty when not given
};

// The columns of a row: the table's, CSV's and JSON's. `algorithm_width` fits the longest algorithm name.
std::vector<Column> sweep_columns(std::size_t algorithm_width);
// A row's cells, under sweep_columns.
std::vector<Cell> row_cells(const RowResult& r, DType dtype);

// The table on stdout, written as the sweep goes: a header, then a section per collective with its rows and
// its notes.
class TableWriter {
 public:
  TableWriter(std::ostream& out, std::vector<Column> columns) : out_(out), columns_(std::move(columns)) {}

  void header(const SweepInfo& info);
  void section(const Collective& c);
  void row(const std::vector<Cell>& cells);
  void note(const std::string& text);

 private:
  std::ostream& out_;
  std::vector<Column> columns_;
};

// The whole sweep as JSON: its settings, `notes` (rows left out, and why), and `rows`.
void write_json(std::ostream& out, const SweepInfo& info, const Rows& rows,
                const std::vector<std::string>& notes, double wall_seconds, Seconds simulated);

}  // namespace spmdsim::cli::collectives
